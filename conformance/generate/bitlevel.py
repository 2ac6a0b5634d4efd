"""Values that catch bit-level mistakes in pure data movement: NaN with payloads (quiet and
signalling, both signs), +-Inf, -0.0, subnormals, the largest and smallest finite values, and
integer extremes, through every depth/space operator and order, and through nearest-neighbour
resampling (a selection, so also a bit copy). A backend that routes integers through floats,
flushes subnormals or canonicalises NaNs fails these.

Spec: NOTES §3 (depth/space ops move bits exactly) and §4 (nearest selects an input element).
"""

from __future__ import annotations

import numpy as np

from conformance import ops
from conformance.generate.build import ALL_TYPES, case, cite, desc
from conformance.tensors import DataType

FAMILY = "bitlevel"
DESCRIPTION = "NaN payloads, infinities, -0.0, subnormals and extremes must move bit for bit"


def special_bits(data_type: DataType) -> list[int]:
    """The bit patterns that a value-changing path would alter, as unsigned integers."""
    bits = data_type.size * 8
    if data_type.is_float:
        exp_bits = {16: 5, 32: 8, 64: 11}[bits]
        man = bits - 1 - exp_bits
        sign = 1 << (bits - 1)
        inf = ((1 << exp_bits) - 1) << man
        quiet = 1 << (man - 1)
        one = ((1 << (exp_bits - 1)) - 1) << man
        patterns = [
            0, sign,                          # +0.0, -0.0
            inf, sign | inf,                  # +inf, -inf
            inf | quiet,                      # the canonical quiet NaN
            inf | quiet | 1,                  # quiet NaN with a payload
            sign | inf | quiet | 0x15,        # negative quiet NaN with a payload
            inf | 1,                          # signalling NaN (payload 1)
            inf | (quiet >> 1) | 0x3,         # signalling NaN, larger payload
            (1 << (bits - 1)) - 1,            # all-ones NaN, positive
            (1 << bits) - 1,                  # all-ones NaN, negative
            1, sign | 1,                      # smallest subnormals
            (1 << man) - 1,                   # largest subnormal
            1 << man,                         # smallest normal
            inf - 1, sign | (inf - 1),        # largest finite, most negative finite
            one, sign | one,                  # +-1.0
        ]
    else:
        signed = data_type.name.startswith("INT")
        top = 1 << (bits - 1)
        patterns = [0, 1, (1 << bits) - 1, top, top - 1, top + 1, 0x55 % (1 << bits),
                    (1 << bits) - 2]
        if not signed:
            patterns += [2, top >> 1]
    return patterns


def _tensor(data_type: DataType, sizes: list[int]) -> list:
    """A nested list of bit patterns of the given sizes, cycling through special_bits."""
    patterns = special_bits(data_type)
    count = int(np.prod(sizes))
    flat = [f"0x{patterns[(i * 7) % len(patterns)]:x}" for i in range(count)]
    return np.array(flat, dtype=object).reshape(sizes).tolist()


def files() -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {"depth_space": [], "resample": []}
    for name, sizes_in, sizes_out in (
            ("DEPTH_TO_SPACE", [2, 4, 3, 2], [2, 1, 6, 4]),
            ("DEPTH_TO_SPACE1", [2, 4, 3, 2], [2, 1, 6, 4]),
            ("SPACE_TO_DEPTH", [2, 1, 6, 4], [2, 4, 3, 2]),
            ("SPACE_TO_DEPTH1", [2, 1, 6, 4], [2, 4, 3, 2])):
        spec = ops.get(name)
        orders = ["DEPTH_COLUMN_ROW", "COLUMN_ROW_DEPTH"] if name.endswith("1") else [None]
        for order in orders:
            for data_type in ALL_TYPES:
                attrs: dict = {"BlockSize": 2}
                if order:
                    attrs["Order"] = order
                tensors = {"InputTensor": desc(data_type, sizes_in),
                           "OutputTensor": desc(data_type, sizes_out)}
                slug = f"{order.lower().replace('_', '-')}/" if order else ""
                out["depth_space"].append(case(
                    f"generated/bitlevel/{name.lower()}/{slug}{data_type.name.lower()}",
                    name, attrs, tensors, family=FAMILY,
                    spec=[cite(spec.page, "Description (copies the input)"), cite("NOTES", "3")],
                    inputs={"InputTensor": {"bits": _tensor(data_type, sizes_in)}}))
    for name in ("RESAMPLE", "RESAMPLE1"):
        spec = ops.get(name)
        for data_type in (DataType.FLOAT32, DataType.FLOAT16, DataType.INT8, DataType.UINT8):
            attrs = {"InterpolationMode": "NEAREST_NEIGHBOR", "Scales": [1, 2, 2, 3]}
            if name == "RESAMPLE1":
                attrs |= {"InputPixelOffsets": [0.5] * 4, "OutputPixelOffsets": [-0.5] * 4}
            tensors = {"InputTensor": desc(data_type, [1, 2, 3, 4]),
                       "OutputTensor": desc(data_type, [1, 4, 6, 12])}
            out["resample"].append(case(
                f"generated/bitlevel/{name.lower()}/nearest/{data_type.name.lower()}",
                name, attrs, tensors, family=FAMILY,
                spec=[cite(spec.page, "InterpolationMode (nearest chooses an input element)"),
                      cite("NOTES", "4")],
                inputs={"InputTensor": {"bits": _tensor(data_type, [1, 2, 3, 4])}}))
    return out
