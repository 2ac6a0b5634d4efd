"""Values that catch bit-level mistakes in pure data movement: NaN with payloads (quiet and
signalling, both signs), +-Inf, -0.0, subnormals, the largest and smallest finite values, and
integer extremes, through the calls of each operator that move or select elements (its
bitlevel_examples, each citing why its outputs are copies). A backend that routes integers
through floats, flushes subnormals or canonicalises NaNs fails these. One file per operator
package.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from hypothesis import strategies as st

from conformance import ops
from conformance.generate.family import operators, package_examples
from conformance.kit.build import case, cite, values_for
from conformance.kit.family import SEEDS, Example, Picker, example_id
from conformance.tensors import DataType

FAMILY = "bitlevel"
DESCRIPTION = "NaN payloads, infinities, -0.0, subnormals and extremes must move bit for bit"
#: The hooks this family asks of every operator it applies to (its Examples).
HOOKS = ("bitlevel_examples", "draw_call")


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
    out: dict[str, list[dict]] = {}
    for package, examples in package_examples(FAMILY, "bitlevel_examples").items():
        cases = out.setdefault(package, [])
        for example in examples:
            for data_type in example.data_types:
                parts = [example.operator.lower(), example.slug, data_type.name.lower()]
                sizes = example.sizes["InputTensor"]
                cases.append(case(
                    "generated/bitlevel/" + "/".join(p for p in parts if p), example.operator,
                    example.attributes, example.tensors(data_type), family=FAMILY,
                    spec=[cite(c.page, c.section) for c in example.cites],
                    inputs={"InputTensor": {"bits": _tensor(data_type, list(sizes))}}))
    return out


@st.composite
def explore(draw: Callable) -> Example:
    """Random bit patterns (NaN payloads, -0.0, subnormals, ...) through a call that moves or
    selects elements, drawn by the operator (draw_call with selecting)."""
    pick, cid = Picker(draw), example_id(FAMILY)
    spec = ops.get(pick("operator", [s.name for s in operators(FAMILY)]))
    example = spec.examples.draw_call(pick, selecting=True)
    seed = pick("seed", SEEDS)
    (data_type,) = example.data_types
    tensors = example.tensors(data_type)
    return Example(FAMILY, pick.params, case(
        cid, spec.name, example.attributes, tensors, family=FAMILY,
        spec=[cite(c.page, c.section) for c in example.cites],
        inputs={"InputTensor": values_for(cid, tensors["InputTensor"], seed)}))
