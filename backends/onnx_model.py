"""One DirectML operator call as a one-node ONNX model (DepthToSpace, SpaceToDepth, Resize).

Shared by the ONNX Runtime adapters (backends/onnxruntime_backend.py: the CPU provider here, and
the DirectML execution provider of onnxruntime-directml); pure Python on `onnx` only, which is
imported when a model is built, so that why_not_expressible() works without it.

The mapping (spec-notes §3, §4, §5):
- DEPTH_TO_SPACE1: DepthToSpace, mode DCR (DEPTH_COLUMN_ROW) or CRD (COLUMN_ROW_DEPTH);
  DEPTH_TO_SPACE is DEPTH_TO_SPACE1 with DEPTH_COLUMN_ROW. blocksize = BlockSize.
- SPACE_TO_DEPTH1: SpaceToDepth, which has no mode attribute below opset 27 (DCR only), and
  onnxruntime 1.31 loads opset <= 26: COLUMN_ROW_DEPTH is not expressible.
- RESAMPLE1: Resize, mode nearest / linear, the Scales as a float32 `scales` initializer (no
  roi, no sizes). coordinate_transformation_mode from the (InputPixelOffset, OutputPixelOffset)
  pairs: (0.5, -0.5) is half_pixel, c = (o + 0.5) / Scale - 0.5; (0, 0) is asymmetric,
  c = o / Scale. A dimension with Scale 1 reads c = o under either pair, so it goes with any
  mode; others must agree. nearest_mode round_prefer_ceil, which is floor(c + 0.5).
  RESAMPLE is RESAMPLE1 with offsets 0.5 / -0.5 (half_pixel).
  ONNX derives the output size from the scales, floor(InputSize * Scale): a desc whose
  OutputTensor Sizes differ (cropping or clamping beyond the scaled input) is not expressible.
  The product is taken both exactly and in float32 (as onnxruntime evaluates it); they must
  both give the desc's size.
- RESAMPLE2 / RESAMPLE3: Resize again, mapped as ONNX Runtime's DirectML execution provider
  maps Resize to them (onnxruntime/core/providers/dml/DmlExecutionProvider/src/Operators/
  DmlOperatorResize.cpp; spec-notes §8), read backwards. The coordinate mode gives the pixel
  offsets (half_pixel 0.5 / -0.5, asymmetric 0 / 0); for NEAREST_NEIGHBOR the nearest_mode gives
  the RoundingDirection and a further InputPixelOffset: round_prefer_floor INCREASING + 0.5
  (ceil(x - 0.5)), round_prefer_ceil DECREASING - 0.5 (floor(x + 0.5)), floor DECREASING + 0,
  ceil INCREASING + 0 (NEAREST_ROUNDINGS). A dimension with Scale 1 whose every output reads
  its own index goes with any of them. LINEAR takes the coordinate mode alone (RoundingDirection
  "affects only DML_INTERPOLATION_MODE_NEAREST_NEIGHBOR"; the provider passes DECREASING).
  RESAMPLE3's Antialiased is Resize-18's `antialias` (the provider passes it straight through),
  so a model with antialias 1 is opset ANTIALIAS_OPSET. That is the desc the DirectML provider
  builds; what ONNX itself computes for it differs where the page's '1/Scales > 2' leaves a
  dimension unstretched that ONNX stretches (every Scale < 1): antialias_differs() says where,
  for providers that compute ONNX's semantics (the CPU provider).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from conformance import ops
from conformance.ops import OperatorCall
from conformance.ops.resample import ResampleFamily, nearest_index
from conformance.tensors import DataType

#: The opset the models import: DepthToSpace-13, SpaceToDepth-13, Resize-13 (roi optional).
#: Every onnxruntime since 1.7 and its DirectML provider take it.
OPSET = 13
#: The IR version of opset 13 (onnx 1.8); onnx 1.23 would write 14, beyond what ORT 1.31 loads.
IR_VERSION = 7
#: Resize with `antialias` (Resize-18, onnx 1.13, IR version 8): RESAMPLE3's Antialiased TRUE.
ANTIALIAS_OPSET, ANTIALIAS_IR_VERSION = 18, 8
INPUT, OUTPUT, SCALES = "x", "y", "scales"

#: DML_TENSOR_DATA_TYPE -> onnx.TensorProto.DataType name.
ONNX_TYPE_NAMES: dict[DataType, str] = {
    DataType.FLOAT32: "FLOAT",
    DataType.FLOAT16: "FLOAT16",
    DataType.FLOAT64: "DOUBLE",
    DataType.UINT8: "UINT8",
    DataType.UINT16: "UINT16",
    DataType.UINT32: "UINT32",
    DataType.UINT64: "UINT64",
    DataType.INT8: "INT8",
    DataType.INT16: "INT16",
    DataType.INT32: "INT32",
    DataType.INT64: "INT64",
}

#: (InputPixelOffset, OutputPixelOffset) -> coordinate_transformation_mode.
OFFSET_MODES: dict[tuple[float, float], str] = {(0.5, -0.5): "half_pixel", (0.0, 0.0): "asymmetric"}

_DEPTH_MODES = {"DEPTH_COLUMN_ROW": "DCR", "COLUMN_ROW_DEPTH": "CRD"}

#: The DirectML operators this module maps, by exact name, to the ONNX operator of their node:
#: the ONNX Runtime backends claim these and no others.
OPERATORS: dict[str, str] = {
    "DEPTH_TO_SPACE": "DepthToSpace", "DEPTH_TO_SPACE1": "DepthToSpace",
    "SPACE_TO_DEPTH": "SpaceToDepth", "SPACE_TO_DEPTH1": "SpaceToDepth",
    "RESAMPLE": "Resize", "RESAMPLE1": "Resize", "RESAMPLE2": "Resize", "RESAMPLE3": "Resize",
}
#: nearest_mode -> (RoundingDirection, what it adds to InputPixelOffsets): the DirectML execution
#: provider's mapping of Resize to RESAMPLE2/3 (DmlOperatorResize.cpp: "case 0:
#: /*round_prefer_floor*/ roundingDirection = DML_AXIS_DIRECTION_INCREASING; offsetAdjustment =
#: 0.5" and so on for round_prefer_ceil, floor, ceil).
NEAREST_ROUNDINGS: dict[str, tuple[str, float]] = {
    "round_prefer_floor": ("INCREASING", 0.5), "round_prefer_ceil": ("DECREASING", -0.5),
    "floor": ("DECREASING", 0.0), "ceil": ("INCREASING", 0.0)}
#: Every (InputPixelOffset, OutputPixelOffset) pair a node can carry: the coordinate modes', and
#: for RESAMPLE2/3 nearest those with a nearest_mode's input offset added.
OFFSET_PAIRS = frozenset(OFFSET_MODES) | {(i + shift, o) for i, o in OFFSET_MODES
                                          for _, shift in NEAREST_ROUNDINGS.values()}


def onnx_elem_type(data_type: DataType) -> int:
    """The onnx.TensorProto element type of a DML data type."""
    from onnx import TensorProto

    return int(getattr(TensorProto, ONNX_TYPE_NAMES[data_type]))


@dataclass(frozen=True)
class NodeSpec:
    """What the one node is: op_type, attributes, and the scales initializer (Resize only)."""

    op_type: str
    attributes: tuple[tuple[str, Any], ...]
    scales: tuple[float, ...] | None = None
    opset: int = OPSET

    @property
    def attribute_dict(self) -> dict[str, Any]:
        return dict(self.attributes)


def _float32(values: Sequence[float]) -> np.ndarray:
    with np.errstate(over="ignore"):
        return np.asarray(values, dtype=np.float32)


def onnx_output_size(in_size: int, scale: float) -> tuple[int, int]:
    """floor(InputSize * Scale) as ONNX states it, exactly and with a float32 product (how
    onnxruntime computes it: static_cast<int64_t>(scale * input_dim) in float)."""
    s = np.float32(scale)
    exact = math.floor(float(s) * in_size)
    with np.errstate(over="ignore"):
        single = int(np.floor(np.float32(in_size) * s))
    return exact, single


def coordinate_mode(call: OperatorCall) -> tuple[str | None, str]:
    """(coordinate_transformation_mode, "") for a RESAMPLE(1) call, or (None, why not)."""
    if call.operator == "RESAMPLE":
        return "half_pixel", ""
    a = call.attributes
    scales = _float32(a["Scales"])
    ins, outs = _float32(a["InputPixelOffsets"]), _float32(a["OutputPixelOffsets"])
    allowed = set(OFFSET_MODES.values())
    for d, (s, i, o) in enumerate(zip(scales, ins, outs, strict=True)):
        mode = OFFSET_MODES.get((float(i), float(o)))
        if mode is None:
            return None, (f"pixel offsets ({float(i):g}, {float(o):g}) in dimension {d}: ONNX "
                          "Resize takes (0.5, -0.5) (half_pixel) or (0, 0) (asymmetric) only")
        if s != 1:  # with Scale 1 both pairs read c = o
            allowed &= {mode}
    if not allowed:
        return None, ("the dimensions scaled by other than 1 mix pixel offsets (0.5, -0.5) and "
                      "(0, 0); ONNX Resize takes one coordinate_transformation_mode per node")
    return ("half_pixel" if "half_pixel" in allowed else "asymmetric"), ""


def _identity_dimension(call: OperatorCall, d: int) -> bool:
    """Whether dimension d has Scale 1 and the operator's nearest rounding maps every output
    index to the same input index (then any ONNX nearest mode reads it alike: x = o)."""
    spec = ops.get(call.operator)
    assert isinstance(spec, ResampleFamily)
    size = call.tensors["InputTensor"].sizes[d]
    if float(_float32(call.attributes["Scales"])[d]) != 1 or (
            call.tensors["OutputTensor"].sizes[d] != size):
        return False
    c, _ = spec.axes(call, call.tensors["InputTensor"].sizes)[d]
    rounding = spec.nearest_rounding(call)
    return bool(np.array_equal(nearest_index(c + rounding.shift, rounding.halves_up),
                               np.arange(size)))


def nearest_modes(call: OperatorCall) -> tuple[tuple[str, str] | None, str]:
    """((coordinate_transformation_mode, nearest_mode), "") for a RESAMPLE2/3 NEAREST_NEIGHBOR
    call, or (None, why not): the Resize node the DirectML provider maps back to this desc."""
    a = call.attributes
    direction = a["RoundingDirection"]
    ins, outs = _float32(a["InputPixelOffsets"]), _float32(a["OutputPixelOffsets"])
    choices = {(mode, nearest) for mode in OFFSET_MODES.values() for nearest in NEAREST_ROUNDINGS}
    for d, (i, o) in enumerate(zip(ins, outs, strict=True)):
        if _identity_dimension(call, d):  # read alike by every node
            continue
        fits = {(mode, nearest) for (base_in, base_out), mode in OFFSET_MODES.items()
                for nearest, (way, shift) in NEAREST_ROUNDINGS.items()
                if way == direction and (float(i), float(o)) == (base_in + shift, base_out)}
        if not fits:
            pairs = sorted({(bi + shift, bo) for (bi, bo) in OFFSET_MODES
                            for way, shift in NEAREST_ROUNDINGS.values() if way == direction})
            return None, (f"pixel offsets ({float(i):g}, {float(o):g}) with RoundingDirection "
                          f"{direction} in dimension {d}: the Resize nodes ONNX Runtime's DirectML "
                          f"provider maps to {direction} have offsets {pairs} only")
        choices &= fits
    if not choices:
        return None, ("the dimensions need different ONNX nearest modes or coordinate modes; "
                      "ONNX Resize takes one of each per node")
    order = [(m, n) for m in ("half_pixel", "asymmetric") for n in NEAREST_ROUNDINGS]
    return next(c for c in order if c in choices), ""


def antialias_differs(call: OperatorCall) -> str | None:
    """Why ONNX's own antialiased Resize computes other values than the page's RESAMPLE3 for
    this call (ONNX stretches the filter of every dimension with Scale < 1, "by a factor max(1,
    1 / scale)"; the page only where "1/Scales > 2"), or None where they agree."""
    a = call.attributes
    if not a.get("Antialiased") or a["InterpolationMode"] != "LINEAR":
        return None
    between = [d for d, s in enumerate(_float32(a["Scales"])) if 0.5 <= s < 1]
    if not between:
        return None
    return (f"Antialiased with Scale(s) in [0.5, 1) in dimension(s) {between}: ONNX Resize's "
            "antialias stretches their filter by 1 / Scale, the page's RESAMPLE3 only where "
            "1/Scale > 2 (it interpolates them linearly)")


def why_not_expressible(call: OperatorCall) -> str | None:
    """Why this call has no exact one-node ONNX model (opset <= 26), or None when it has one."""
    tensors = call.tensors
    if call.operator not in OPERATORS:
        return (f"backends/onnx_model.py maps no ONNX operator to {call.operator} (it maps "
                f"{', '.join(OPERATORS)})")
    for name, desc in tensors.items():
        if desc.is_strided:
            return (f"ONNX tensors are packed; {name} has Strides {list(desc.element_strides)}, "
                    f"not the packed {list(desc.sizes)} layout")
    types = {d.data_type for d in tensors.values()}
    if len(types) > 1:
        return "ONNX's operators take one data type T for input and output; the desc mixes them"
    inp, out = tensors["InputTensor"].sizes, tensors["OutputTensor"].sizes
    if OPERATORS[call.operator] == "Resize":
        return _resample_reason(call, inp, out)
    return _depth_space_reason(call, inp, out)


def _depth_space_reason(call: OperatorCall, inp: tuple[int, ...], out: tuple[int, ...]
                        ) -> str | None:
    order = call.attributes.get("Order", "DEPTH_COLUMN_ROW")
    if order not in _DEPTH_MODES:
        return f"Order {order!r} has no ONNX mode (DCR, CRD)"
    if OPERATORS[call.operator] == "SpaceToDepth" and order != "DEPTH_COLUMN_ROW":
        return ("SpaceToDepth has no mode attribute below opset 27 (DCR only) and onnxruntime "
                "loads opset <= 26: COLUMN_ROW_DEPTH is not expressible")
    block = call.attributes["BlockSize"]
    if block < 1:
        return f"BlockSize {block}: ONNX blocksize is a positive integer"
    if len(inp) != 4 or len(out) != 4:
        return "ONNX DepthToSpace / SpaceToDepth take 4-D NCHW tensors"
    n, c, h, w = inp
    want: tuple[int, ...] | None = None
    if OPERATORS[call.operator] == "DepthToSpace" and c % (block * block) == 0:
        want = (n, c // (block * block), h * block, w * block)
    if OPERATORS[call.operator] == "SpaceToDepth" and h % block == 0 and w % block == 0:
        want = (n, c * block * block, h // block, w // block)
    if want != tuple(out):
        return (f"the ONNX operator's output for input {list(inp)} and blocksize {block} is "
                f"{list(want) if want else 'undefined'}, the desc has {list(out)}")
    return None


def _resample_reason(call: OperatorCall, inp: tuple[int, ...], out: tuple[int, ...]
                     ) -> str | None:
    a = call.attributes
    if a["InterpolationMode"] not in ("NEAREST_NEIGHBOR", "LINEAR"):
        return f"InterpolationMode {a['InterpolationMode']!r} has no ONNX Resize mode"
    scales = _float32(a["Scales"])
    if not all(math.isfinite(s) and s > 0 for s in scales):
        return f"Scales {list(a['Scales'])}: ONNX Resize scales are positive and finite"
    if not len(scales) == len(inp) == len(out):
        return "ONNX Resize takes one scale per dimension of the input and output"
    if "InputPixelOffsets" in a and not all(
            math.isfinite(v) for v in (*a["InputPixelOffsets"], *a["OutputPixelOffsets"])):
        return "non-finite pixel offsets have no ONNX coordinate_transformation_mode"
    if "RoundingDirection" in a and a["RoundingDirection"] not in ("INCREASING", "DECREASING"):
        return f"RoundingDirection {a['RoundingDirection']!r} has no ONNX nearest_mode"
    if "RoundingDirection" in a and a["InterpolationMode"] == "NEAREST_NEIGHBOR":
        modes, why = nearest_modes(call)
        if modes is None:
            return why
    else:
        mode, why = coordinate_mode(call)
        if mode is None:
            return why
    for d, (i, o, s) in enumerate(zip(inp, out, scales, strict=True)):
        exact, single = onnx_output_size(i, float(s))
        if exact != o or single != o:
            got = str(exact) if exact == single else (f"{exact} exactly, {single} with the "
                                                      "float32 product onnxruntime takes")
            return (f"ONNX Resize derives each output size as floor(InputSize * Scale): "
                    f"dimension {d}, floor({i} * {float(s):.9g}) = {got}, the desc has {o}")
    return None


def node_spec(call: OperatorCall) -> NodeSpec:
    """The node of an expressible call (why_not_expressible(call) is None)."""
    a = call.attributes
    op_type = OPERATORS[call.operator]
    if op_type == "Resize":
        nearest = a["InterpolationMode"] == "NEAREST_NEIGHBOR"
        mode: str | None
        if nearest and "RoundingDirection" in a:  # RESAMPLE2/3
            modes, why = nearest_modes(call)
            if modes is None:
                raise ValueError(why)
            mode, rounding = modes
        else:
            mode, why = coordinate_mode(call)
            rounding = "round_prefer_ceil"  # floor(c + 0.5): RESAMPLE(1)
        if mode is None:
            raise ValueError(why)
        attrs: list[tuple[str, Any]] = [
            ("mode", "nearest" if nearest else "linear"), ("coordinate_transformation_mode", mode)]
        if nearest:
            attrs.append(("nearest_mode", rounding))
        opset = OPSET
        if a.get("Antialiased"):  # RESAMPLE3: Resize-18's antialias, as the provider maps it
            attrs.append(("antialias", 1))
            opset = ANTIALIAS_OPSET
        return NodeSpec("Resize", tuple(attrs), tuple(float(s) for s in _float32(a["Scales"])),
                        opset)
    block = int(a["BlockSize"])
    if op_type == "SpaceToDepth":
        return NodeSpec("SpaceToDepth", (("blocksize", block),))
    mode = _DEPTH_MODES[a.get("Order", "DEPTH_COLUMN_ROW")]
    return NodeSpec("DepthToSpace", (("blocksize", block), ("mode", mode)))


def model_key(call: OperatorCall) -> tuple:
    """What identifies the model of a call: node, data type and shapes."""
    return (node_spec(call), call.tensors["InputTensor"].data_type,
            call.tensors["InputTensor"].sizes, call.tensors["OutputTensor"].sizes)


def build_model(call: OperatorCall) -> Any:
    """The one-node onnx.ModelProto of an expressible call: input "x", output "y" with the
    descs' data type and Sizes, opset OPSET, IR version IR_VERSION. Raises ValueError when
    the call is not expressible."""
    why = why_not_expressible(call)
    if why:
        raise ValueError(f"not expressible in ONNX: {why}")
    from onnx import checker, helper, numpy_helper

    spec = node_spec(call)
    inp, out = call.tensors["InputTensor"], call.tensors["OutputTensor"]
    elem = onnx_elem_type(inp.data_type)
    initializers = []
    inputs = [INPUT]
    if spec.scales is not None:
        inputs += ["", SCALES]  # no roi
        initializers.append(numpy_helper.from_array(np.array(spec.scales, np.float32), SCALES))
    node = helper.make_node(spec.op_type, inputs, [OUTPUT], name=call.operator.lower(),
                            **spec.attribute_dict)
    graph = helper.make_graph(
        [node], f"dml_{call.operator.lower()}",
        [helper.make_tensor_value_info(INPUT, elem, list(inp.sizes))],
        [helper.make_tensor_value_info(OUTPUT, elem, list(out.sizes))],
        initializer=initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", spec.opset)],
                              producer_name="dml-conformance")
    model.ir_version = ANTIALIAS_IR_VERSION if spec.opset == ANTIALIAS_OPSET else IR_VERSION
    checker.check_model(model)
    return model
