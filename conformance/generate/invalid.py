"""Invalid descs: each validation rule broken alone, for every operator it applies to. Each case
must be rejected (DirectML refuses it at CreateOperator). The generator checks, with the
operator spec, that the desc breaks exactly the one rule it is named for.

Rules that are readings rather than sentences of the spec (scales and offsets finite and
positive, the output-overlap rule, which count the 2^32 - 1 limit applies to), and a rule the
spec states for bound buffers that real DirectML does not enforce on the desc (the DWORD size,
spec-notes §9), are marked ambiguous: their results are reported apart and never decide a
verdict.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from conformance import ops
from conformance.generate.build import case, cite, desc
from conformance.levels import HIGHEST
from conformance.ops.base import OperatorSpec
from conformance.tensors import DataType, TensorDesc

FAMILY = "invalid"
DESCRIPTION = "each validation rule broken alone: the desc must be rejected"
F32 = DataType.FLOAT32
READING_SCALES = "NOTES §4: no page states that scales must be positive or finite (a reading)"
READING_OVERLAP = ("NOTES §2: the pages do not forbid an output whose elements share an address; "
                   "the suite reads the strides page's definition of a tensor as requiring it")
READING_COUNT = ("NOTES §2: the page limits a buffer tensor to 2^32 - 1 elements without saying "
                 "whether it counts logical elements or buffer elements; the suite counts logical")

READING_DWORD = ("NOTES §2 and §9: the helper-functions page requires bound buffers to be DWORD "
                 "multiples in size, but says nothing of refusing such a desc, and real DirectML "
                 "(the torch-directml 0.2.5 runtime) accepts it at CreateOperator and "
                 "CompileOperator and runs it; the suite reads the rule as a refusal")

Call = tuple[dict[str, dict[str, Any]], dict[str, Any]]


def base(spec: OperatorSpec) -> Call:
    """A valid FLOAT32 call of the operator (4-D, feature level of its introduction)."""
    if spec.name.startswith("RESAMPLE"):
        attrs: dict[str, Any] = {"InterpolationMode": "NEAREST_NEIGHBOR", "Scales": [1, 1, 2, 2]}
        if spec.name == "RESAMPLE1":
            attrs |= {"InputPixelOffsets": [0.5] * 4, "OutputPixelOffsets": [-0.5] * 4}
        return {"InputTensor": desc(F32, [1, 2, 2, 3]),
                "OutputTensor": desc(F32, [1, 2, 4, 6])}, attrs
    attrs = {"BlockSize": 2}
    if spec.name.endswith("1"):
        attrs["Order"] = "DEPTH_COLUMN_ROW"
    depth, space = desc(F32, [1, 4, 2, 3]), desc(F32, [1, 1, 4, 6])
    if spec.name.startswith("DEPTH"):
        return {"InputTensor": depth, "OutputTensor": space}, attrs
    return {"InputTensor": space, "OutputTensor": depth}, attrs


def _min(d: dict[str, Any]) -> int:
    return TensorDesc.from_json(d).minimum_size


def _set(tensor: str, **fields: Any) -> Callable[[Call], Call]:
    def change(call: Call) -> Call:
        tensors, attrs = call
        return {**tensors, tensor: {**tensors[tensor], **fields}}, attrs
    return change


def _attr(**fields: Any) -> Callable[[Call], Call]:
    def change(call: Call) -> Call:
        tensors, attrs = call
        return tensors, {**attrs, **fields}
    return change


def _sizes(inp: list[int], out: list[int]) -> Callable[[Call], Call]:
    def change(call: Call) -> Call:
        tensors, attrs = call
        return ({"InputTensor": {**tensors["InputTensor"], "Sizes": inp},
                 "OutputTensor": {**tensors["OutputTensor"], "Sizes": out}}, attrs)
    return change


def _total(tensor: str, delta: int) -> Callable[[Call], Call]:
    def change(call: Call) -> Call:
        tensors, attrs = call
        d = tensors[tensor]
        return {**tensors, tensor: {**d, "TotalTensorSizeInBytes": _min(d) + delta}}, attrs
    return change


def _type(tensor: str, data_type: DataType) -> Callable[[Call], Call]:
    return _set(tensor, DataType=data_type.name)


def variants(spec: OperatorSpec) -> list[tuple[str, str, Callable[[Call], Call], str | None,
                                               dict[str, str]]]:
    """(slug, rule, change, ambiguous, citation) for every rule that applies to the operator."""
    desc_page = "DML_BUFFER_TENSOR_DESC"
    v: list = []
    to_space = spec.name.startswith("DEPTH")
    resample = spec.name.startswith("RESAMPLE")
    if resample:
        v.append(("zero-size", "desc.zero_size", _sizes([1, 0, 2, 3], [1, 0, 4, 6]), None))
        v.append(("five-dimensions", "desc.dimension_count",
                  lambda c: _five_d(c), None))
    else:
        inp, out = ([1, 4, 0, 3], [1, 1, 0, 6]) if to_space else ([1, 1, 0, 6], [1, 4, 0, 3])
        v.append(("zero-size", "desc.zero_size", _sizes(inp, out), None))
        inp, out = ([4, 2, 3], [1, 4, 6]) if to_space else ([1, 4, 6], [4, 2, 3])
        v.append(("three-dimensions", "desc.dimension_count", _sizes(inp, out), None))
    v += [
        ("strides-count", "desc.strides_count", _set("InputTensor", Strides=[6, 3, 1]), None),
        ("input-total-below-minimum", "desc.total_size_below_minimum",
         _total("InputTensor", -4), None),
        ("output-total-below-minimum", "desc.total_size_below_minimum",
         _total("OutputTensor", -4), None),
        ("input-total-not-dword", "desc.total_size_not_dword_multiple",
         _total("InputTensor", 2), READING_DWORD),
        ("output-total-not-dword", "desc.total_size_not_dword_multiple",
         _total("OutputTensor", 6), READING_DWORD),
        ("alignment-not-power-of-two", "desc.alignment",
         _set("InputTensor", GuaranteedBaseOffsetAlignment=24), None),
        ("alignment-below-element-size", "desc.alignment",
         _set("OutputTensor", GuaranteedBaseOffsetAlignment=2), None),
        ("output-overlap", "desc.output_overlap",
         lambda c: _overlap(c), READING_OVERLAP),
        ("too-many-elements", "desc.too_many_elements", lambda c: _huge(c, spec), READING_COUNT),
        ("mixed-data-types", "operator.same_data_type", _type("OutputTensor", DataType.FLOAT16),
         None),
    ]
    if resample:
        v += [
            ("int32", "operator.data_type",
             lambda c: _type("OutputTensor", DataType.INT32)(_type("InputTensor",
                                                                   DataType.INT32)(c)), None),
            ("dimension-count-differs", "resample.dimension_count",
             lambda c: _shrink_arrays(c), None),
            ("mode-2", "resample.mode", _attr(InterpolationMode=2), None),
        ]
        for slug, value in (("zero", 0.0), ("negative", -2.0), ("nan", math.nan),
                            ("infinite", math.inf), ("float32-underflow", 1e-46)):
            v.append((f"scale-{slug}", "resample.scales",
                      lambda c, x=value: _scale(c, x), READING_SCALES))
        if spec.name == "RESAMPLE1":
            for slug, value in (("nan", math.nan), ("infinite", -math.inf)):
                v.append((f"input-offset-{slug}", "resample.offsets",
                          _attr(InputPixelOffsets=[0.5, 0.5, value, 0.5]), READING_SCALES))
                v.append((f"output-offset-{slug}", "resample.offsets",
                          _attr(OutputPixelOffsets=[-0.5, -0.5, -0.5, value]), READING_SCALES))
    else:
        v += [
            ("block-size-0", "depth_space.block_size", _attr(BlockSize=0), None),
            ("output-sizes", "operator.output_sizes",
             _set("OutputTensor", Sizes=[1, 1, 4, 7] if to_space else [1, 4, 2, 4]), None),
            ("output-sizes-transposed", "operator.output_sizes",
             _set("OutputTensor", Sizes=[1, 1, 6, 4] if to_space else [1, 4, 3, 2]), None),
        ]
        if to_space:
            v.append(("channels-not-divisible", "depth_space.channels_divisible",
                      _sizes([1, 6, 2, 3], [1, 1, 4, 6]), None))
        else:
            v.append(("height-not-divisible", "depth_space.spatial_divisible",
                      _sizes([1, 1, 5, 6], [1, 4, 2, 3]), None))
        if spec.name.endswith("1"):
            v.append(("order-2", "depth_space.order", _attr(Order=2), None))
    return [(slug, rule, change, amb, cite(desc_page if rule.startswith("desc.") else spec.page))
            for slug, rule, change, amb in v]


def _five_d(call: Call) -> Call:
    tensors, attrs = call
    five = {k: v for k, v in attrs.items() if k == "InterpolationMode"}
    for k in ("Scales", "InputPixelOffsets", "OutputPixelOffsets"):
        if k in attrs:
            five[k] = [attrs[k][0], *attrs[k]]
    return ({"InputTensor": {**tensors["InputTensor"], "Sizes": [1, 1, 2, 2, 3]},
             "OutputTensor": {**tensors["OutputTensor"], "Sizes": [1, 1, 2, 4, 6]}}, five)


def _shrink_arrays(call: Call) -> Call:
    tensors, attrs = call
    return tensors, {k: (v[1:] if isinstance(v, list) else v) for k, v in attrs.items()}


def _scale(call: Call, value: float) -> Call:
    tensors, attrs = call
    return tensors, {**attrs, "Scales": [1, 1, value, 2]}


def _overlap(call: Call) -> Call:
    tensors, attrs = call
    out = tensors["OutputTensor"]
    _, c, h, w = out["Sizes"]
    return {**tensors, "OutputTensor": {**out, "Strides": [c * h * w, h * w, 0, 1]}}, attrs


def _huge(call: Call, spec: OperatorSpec) -> Call:
    """A logical element count above 2^32 - 1: a tiny broadcast input, and an output whose
    buffer would be too large to bind, so a backend must refuse it at create_operator."""
    tensors, attrs = call
    if spec.name.startswith("RESAMPLE"):
        inp, out = [1, 1, 65536, 65536], [1, 1, 65536, 65536]
        attrs = {**attrs, "Scales": [1, 1, 1, 1]}
    elif spec.name.startswith("DEPTH"):
        inp, out = [1, 4, 32768, 65536], [1, 1, 65536, 131072]
    else:
        inp, out = [1, 1, 65536, 131072], [1, 4, 32768, 65536]
    return ({"InputTensor": {**tensors["InputTensor"], "Sizes": inp, "Strides": [0, 0, 0, 0]},
             "OutputTensor": {**tensors["OutputTensor"], "Sizes": out}}, attrs)


def files() -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for spec in ops.OPERATORS.values():
        cases = out.setdefault(spec.name.lower(), [])
        for slug, rule, change, ambiguous, citation in variants(spec):
            tensors, attrs = change(base(spec))
            call = spec.make_call({n: TensorDesc.from_json(d) for n, d in tensors.items()}, attrs)
            broken = {v.rule for v in spec.validate(call, HIGHEST)}
            if broken != {rule}:
                raise AssertionError(f"{spec.name} {slug}: breaks {sorted(broken)}, not {rule}")
            cases.append(case(
                f"generated/invalid/{spec.name.lower()}/{slug}", spec.name, attrs, tensors,
                family=FAMILY, spec=[citation], inputs={}, expected="rejected",
                level=spec.introduced, tags=["rejected", rule], ambiguous=ambiguous,
                description=f"breaks {rule} alone"))
    return out
