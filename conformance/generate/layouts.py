"""Strided layouts: every operator with its input and output padded, NHWC, with the dimension
order reversed, with broadcast (stride 0) inputs, and with TotalTensorSizeInBytes above the
minimum. The result must equal the packed run: each case runs the strided call and a packed
call on the same logical input (the packed input is read back from the strided one) and asks
for equal outputs. A call that computes its outputs (not selects_elements) is judged against
the reference instead, with its tolerance, rather than by bit equality between the two runs (a
backend may take another arithmetic path). The calls are each operator's layout_examples.

Spec: the dml-strides page and DML_BUFFER_TENSOR_DESC (Strides, TotalTensorSizeInBytes).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hypothesis import strategies as st

from conformance import ops
from conformance.generate.family import operators
from conformance.kit.build import (
    chain,
    cite,
    nhwc_strides,
    padded_strides,
    reversed_strides,
    smooth_input,
    values_for,
)
from conformance.kit.family import SEEDS, Example, Picker, example_id
from conformance.ops.base import OperatorSpec
from conformance.ops.examples import ExampleCall
from conformance.tensors import DataType, TensorDesc

FAMILY = "layouts"
DESCRIPTION = "padded, NHWC, reversed, broadcast and oversized descs equal the packed run"
#: The hooks this family asks of every operator it applies to (its Examples); of the spec it asks
#: selects_elements, which every operator answers.
HOOKS = ("layout_examples", "draw_call")


def _broadcast(sizes: list[int]) -> list[int]:
    """Stride 0 on the batch and height dimensions, packed elsewhere (CalculateStrides with
    broadcast N and H, dml-helper-functions)."""
    _, c, _, w = sizes
    return [0, w, 0, 1] if c > 1 else [0, 0, 0, 1]


#: The other broadcast inputs: stride 0 on these dimensions (N, C, H, W = 0..3), packed over the
#: others, so that each slice has ten broadcast cases (issue 25's floor), not one.
BROADCASTS: dict[str, tuple[int, ...]] = {
    "w": (3,), "h": (2,), "c": (1,), "nc": (0, 1), "hw": (2, 3), "cw": (1, 3), "nhw": (0, 2, 3),
    "ch": (1, 2)}
#: TotalTensorSizeInBytes above the minimum by these bytes (input, output; 0: the minimum): a
#: few bytes, and enough that a reader taking the row pitch from the total size misaddresses.
TOTALS: dict[str, tuple[int, int]] = {
    "input": (2048, 0), "output": (0, 2048), "input-256": (256, 0), "output-256": (0, 256),
    "4": (4, 4), "100": (100, 100), "1000": (1000, 1000), "4096": (4096, 4096)}


def _broadcast_on(sizes: list[int], dims: tuple[int, ...]) -> list[int]:
    """Stride 0 on dims, the packed strides of the other dimensions elsewhere."""
    strides, step = [0] * len(sizes), 1
    for d in reversed(range(len(sizes))):
        if d not in dims:
            strides[d], step = step, step * sizes[d]
    return strides


LAYOUTS: dict[str, Callable[[list[int]], list[int]]] = {
    "padded": padded_strides,
    "nhwc": nhwc_strides,
    "reversed": reversed_strides,
}


def _variants(sizes_in: list[int], sizes_out: list[int]
              ) -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    """(slug, input desc fields, output desc fields) for each strided layout."""
    out: list[tuple[str, dict[str, Any], dict[str, Any]]] = []
    for name, strides in LAYOUTS.items():
        out.append((f"input-{name}", {"Strides": strides(sizes_in)}, {}))
        out.append((f"output-{name}", {}, {"Strides": strides(sizes_out)}))
    out.append(("input-broadcast", {"Strides": _broadcast(sizes_in)}, {}))
    out.append(("both-padded", {"Strides": padded_strides(sizes_in)},
                {"Strides": padded_strides(sizes_out)}))
    out.append(("total-above-minimum", {"extra": 64}, {"extra": 36}))
    out += [(f"input-broadcast-{name}", {"Strides": _broadcast_on(sizes_in, dims)}, {})
            for name, dims in BROADCASTS.items()]
    out += [(f"total-above-minimum-{name}", {"extra": a} if a else {}, {"extra": b} if b else {})
            for name, (a, b) in TOTALS.items()]
    return out


SLUGS = tuple(slug for slug, _, _ in _variants([1] * 4, [1] * 4))


def _with(base: dict, fields: dict) -> dict:
    d = {**base, **{k: v for k, v in fields.items() if k != "extra"}}
    if "extra" in fields:
        d["TotalTensorSizeInBytes"] = TensorDesc.from_json(d).minimum_size + fields["extra"]
    return d


def layout_case(spec: OperatorSpec, example: ExampleCall, data_type: DataType, slug: str,
                cid: str, seed: int | None = None) -> dict:
    """The strided call of one layout against the packed call, on one input."""
    packed = example.tensors(data_type)
    _, in_fields, out_fields = next(v for v in _variants(
        packed["InputTensor"]["Sizes"], packed["OutputTensor"]["Sizes"]) if v[0] == slug)
    strided = {"InputTensor": _with(packed["InputTensor"], in_fields),
               "OutputTensor": _with(packed["OutputTensor"], out_fields)}
    call = spec.make_call({n: TensorDesc.from_json(d) for n, d in packed.items()},
                          example.attributes)
    computed = not spec.selects_elements(call)
    source = (smooth_input if example.inputs == "smooth" else values_for)(
        cid, strided["InputTensor"], seed)
    return chain(
        cid, [
            {"name": "strided", "operator": spec.name, "attributes": example.attributes,
             "tensors": strided},
            {"name": "packed", "operator": spec.name, "attributes": example.attributes,
             "tensors": packed}],
        family=FAMILY,
        spec=[cite("dml-strides", "DirectML buffer tensor descriptions"),
              cite("DML_BUFFER_TENSOR_DESC", "Strides")],
        inputs={"strided.InputTensor": source,
                "packed.InputTensor": {"from": "strided.InputTensor"}},
        expected=({"strided.OutputTensor": "reference", "packed.OutputTensor": "reference"}
                  if computed else None),
        relations=[] if computed else [
            {"equal": ["strided.OutputTensor", "packed.OutputTensor"],
             "why": "a layout changes where elements live, not their values"}],
        tags=[slug.split("-", 1)[1]])


def files() -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for spec in operators(FAMILY):
        cases = out.setdefault(spec.name.lower(), [])
        for example in spec.examples.layout_examples():
            for data_type in example.data_types:
                for slug in SLUGS:
                    parts = [spec.name.lower(), example.slug, slug, data_type.name.lower()]
                    cid = "generated/layouts/" + "/".join(p for p in parts if p)
                    cases.append(layout_case(spec, example, data_type, slug, cid))
    return out


@st.composite
def explore(draw: Callable) -> Example:
    """A strided call (padded, NHWC, reversed, broadcast, oversized) equals the packed one: a
    call drawn by the operator (draw_call), then the layout."""
    pick, cid = Picker(draw), example_id(FAMILY)
    spec = ops.get(pick("operator", [s.name for s in operators(FAMILY)]))
    example = spec.examples.draw_call(pick)
    slug = pick("layout", SLUGS)
    seed = pick("seed", SEEDS)
    return Example(FAMILY, pick.params, layout_case(spec, example, example.data_types[0], slug,
                                                    cid, seed))
