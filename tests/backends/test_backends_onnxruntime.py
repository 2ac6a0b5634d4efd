"""The ONNX Runtime adapters: the one-node ONNX models they build (field by field), the calls
that have no ONNX model and why, the probed claims, NOT_SUPPORTED everywhere without
onnxruntime, and a certification run on the documented cases and a sample of the generated ones
(docs/peer-onnxruntime.md reports the whole suite)."""

from __future__ import annotations

import sys
from typing import Any

import numpy as np
import pytest

from backends import onnx_model
from backends.onnx_backend import INSTALL_ONNX
from backends.onnxruntime_backend import (
    INSTALL,
    OnnxRuntimeBackend,
    OnnxRuntimeDirectMLBackend,
    OnnxRuntimeWebGpuBackend,
    short_error,
)
from conformance import ops
from conformance.casefile import load_cases
from conformance.judge.compare import judge
from conformance.levels import HIGHEST
from conformance.ops import OperatorCall
from conformance.session.case_run import run_cases
from conformance.tensors import DataType, TensorDesc
from tests.support import DOCUMENTED, GENERATED

SAMPLE = [DOCUMENTED] + [GENERATED / p for p in (
    "bitlevel", "equivalence/resample.yaml", "equivalence/identity.yaml", "invalid/resample1.yaml",
    "layouts/depth_to_space1.yaml", "offsets/single_axis.yaml", "offsets/ties.yaml",
    "roundtrip/space_depth.yaml", "tables/resample1.yaml", "tables/space_to_depth1.yaml")]


def call(operator: str, sizes_in: tuple[int, ...], sizes_out: tuple[int, ...],
         data_type: DataType = DataType.FLOAT32, **attrs: Any) -> OperatorCall:
    tensors = {"InputTensor": TensorDesc(data_type, sizes_in),
               "OutputTensor": TensorDesc(data_type, sizes_out)}
    return ops.get(operator).make_call(tensors, attrs)


def resample1(scales: list[float], ins: list[float], outs: list[float], sizes_in: tuple[int, ...],
              sizes_out: tuple[int, ...], mode: str = "NEAREST_NEIGHBOR",
              data_type: DataType = DataType.FLOAT32) -> OperatorCall:
    return call("RESAMPLE1", sizes_in, sizes_out, data_type, InterpolationMode=mode,
                Scales=scales, InputPixelOffsets=ins, OutputPixelOffsets=outs)


def fields(c: OperatorCall) -> dict[str, Any]:
    """The model of a call as plain values."""
    from onnx import helper, numpy_helper

    model = onnx_model.build_model(c)
    (node,) = model.graph.node
    shape = [[d.dim_value for d in v.type.tensor_type.shape.dim] for v in
             (*model.graph.input, *model.graph.output)]
    return {
        "ir_version": model.ir_version,
        "opset": [(o.domain, o.version) for o in model.opset_import],
        "op_type": node.op_type, "inputs": list(node.input), "outputs": list(node.output),
        "attributes": {a.name: helper.get_attribute_value(a) for a in node.attribute},
        "elem_types": [v.type.tensor_type.elem_type for v in
                       (*model.graph.input, *model.graph.output)],
        "shapes": shape,
        "initializers": {t.name: numpy_helper.to_array(t) for t in model.graph.initializer},
    }


# -- the models --------------------------------------------------------------------------------
def test_depth_to_space_v0_is_dcr() -> None:
    pytest.importorskip("onnx")
    from onnx import TensorProto

    f = fields(call("DEPTH_TO_SPACE", (1, 8, 2, 3), (1, 2, 4, 6), DataType.UINT8, BlockSize=2))
    assert f["ir_version"] == 7 and f["opset"] == [("", 13)]
    assert f["op_type"] == "DepthToSpace" and f["inputs"] == ["x"] and f["outputs"] == ["y"]
    assert f["attributes"] == {"blocksize": 2, "mode": b"DCR"}
    assert f["elem_types"] == [TensorProto.UINT8, TensorProto.UINT8]
    assert f["shapes"] == [[1, 8, 2, 3], [1, 2, 4, 6]] and f["initializers"] == {}


def test_depth_to_space1_orders_and_space_to_depth1() -> None:
    pytest.importorskip("onnx")
    from onnx import TensorProto

    crd = fields(call("DEPTH_TO_SPACE1", (2, 27, 1, 2), (2, 3, 3, 6), DataType.FLOAT16,
                      BlockSize=3, Order="COLUMN_ROW_DEPTH"))
    assert crd["attributes"] == {"blocksize": 3, "mode": b"CRD"}
    assert crd["elem_types"] == [TensorProto.FLOAT16] * 2
    dcr = fields(call("DEPTH_TO_SPACE1", (1, 4, 1, 1), (1, 1, 2, 2), BlockSize=2,
                      Order="DEPTH_COLUMN_ROW"))
    assert dcr["attributes"]["mode"] == b"DCR"
    s2d = fields(call("SPACE_TO_DEPTH1", (1, 2, 4, 6), (1, 8, 2, 3), DataType.FLOAT64,
                      BlockSize=2, Order="DEPTH_COLUMN_ROW"))
    assert s2d["op_type"] == "SpaceToDepth" and s2d["attributes"] == {"blocksize": 2}
    assert s2d["elem_types"] == [TensorProto.DOUBLE] * 2
    assert s2d["shapes"] == [[1, 2, 4, 6], [1, 8, 2, 3]]


def test_resample_v0_is_half_pixel_round_prefer_ceil() -> None:
    pytest.importorskip("onnx")
    f = fields(call("RESAMPLE", (1, 1, 2, 3), (1, 1, 4, 1), InterpolationMode="NEAREST_NEIGHBOR",
                    Scales=[1, 1, 2, 1 / 3]))
    assert f["op_type"] == "Resize" and f["inputs"] == ["x", "", "scales"]
    assert f["attributes"] == {"mode": b"nearest", "coordinate_transformation_mode": b"half_pixel",
                               "nearest_mode": b"round_prefer_ceil"}
    scales = f["initializers"]["scales"]
    assert scales.dtype == np.float32
    assert scales.tolist() == np.float32([1, 1, 2, 1 / 3]).tolist()
    assert f["shapes"] == [[1, 1, 2, 3], [1, 1, 4, 1]]


def test_resample1_offsets_choose_the_coordinate_mode() -> None:
    pytest.importorskip("onnx")
    from onnx import TensorProto

    asym = fields(resample1([1, 1, 1.5, 0.5], [0] * 4, [0] * 4, (1, 2, 4, 6), (1, 2, 6, 3),
                            mode="LINEAR", data_type=DataType.INT8))
    assert asym["attributes"] == {"mode": b"linear", "coordinate_transformation_mode":
                                  b"asymmetric"}  # no nearest_mode for linear
    assert asym["elem_types"] == [TensorProto.INT8] * 2
    assert asym["initializers"]["scales"].tolist() == [1, 1, 1.5, 0.5]
    # A dimension scaled by 1 reads c = o under either pair: it goes with the others' mode.
    mixed = fields(resample1([1, 2], [0, 0.5], [0, -0.5], (3, 2), (3, 4)))
    assert mixed["attributes"]["coordinate_transformation_mode"] == b"half_pixel"
    one_d = fields(resample1([3], [0], [0], (2,), (6,)))
    assert one_d["attributes"]["coordinate_transformation_mode"] == b"asymmetric"
    assert one_d["shapes"] == [[2], [6]]


def resample23(operator: str, direction: str, scales: list[float], ins: list[float],
               outs: list[float], sizes_in: tuple[int, ...], sizes_out: tuple[int, ...],
               mode: str = "NEAREST_NEIGHBOR", data_type: DataType = DataType.FLOAT32,
               **extra: Any) -> OperatorCall:
    return call(operator, sizes_in, sizes_out, data_type, InterpolationMode=mode,
                RoundingDirection=direction, Scales=scales, InputPixelOffsets=ins,
                OutputPixelOffsets=outs, **extra)


#: ONNX Runtime's DirectML provider, DmlOperatorResize.cpp: coordinate mode -> offsets
#: (half_pixel 0.5 / -0.5, asymmetric 0 / 0), then nearest_mode -> RoundingDirection and the
#: input offset it adds ("round_prefer_floor ... INCREASING; offsetAdjustment = 0.5",
#: "round_prefer_ceil ... DECREASING ... -0.5", "floor ... DECREASING ... 0.0", "ceil ...
#: INCREASING ... 0.0"), written out: (direction, in, out) -> the node.
PROVIDER = {("DECREASING", 0.5, -0.5): ("half_pixel", "floor"),
            ("DECREASING", 0.0, 0.0): ("asymmetric", "floor"),
            ("DECREASING", 0.0, -0.5): ("half_pixel", "round_prefer_ceil"),
            ("DECREASING", -0.5, 0.0): ("asymmetric", "round_prefer_ceil"),
            ("INCREASING", 0.5, -0.5): ("half_pixel", "ceil"),
            ("INCREASING", 0.0, 0.0): ("asymmetric", "ceil"),
            ("INCREASING", 1.0, -0.5): ("half_pixel", "round_prefer_floor"),
            ("INCREASING", 0.5, 0.0): ("asymmetric", "round_prefer_floor")}


@pytest.mark.parametrize("operator", ["RESAMPLE2", "RESAMPLE3"])
def test_resample2_nearest_is_the_node_the_directml_provider_maps_back(operator: str) -> None:
    pytest.importorskip("onnx")
    extra = {"Antialiased": False} if operator == "RESAMPLE3" else {}
    for (direction, i, o), (mode, nearest) in PROVIDER.items():
        f = fields(resample23(operator, direction, [1, 1, 2, 3], [i] * 4, [o] * 4, (1, 2, 3, 2),
                              (1, 2, 6, 6), **extra))
        assert f["attributes"] == {"mode": b"nearest", "nearest_mode": nearest.encode(),
                                   "coordinate_transformation_mode": mode.encode()}, (direction, i)
        assert f["opset"] == [("", 13)] and f["ir_version"] == 7
    # the other direction's offsets have no node: DECREASING at (0.5, 0) would be ceil(x - 0.5)
    odd = resample23(operator, "DECREASING", [2], [0.5], [0], (3,), (6,), **extra)
    assert "offsets (0.5, 0) with RoundingDirection DECREASING in dimension 0" in (
        onnx_model.why_not_expressible(odd) or "")
    # one node, one nearest_mode: floor along one dimension, round_prefer_ceil along another
    mixed = resample23(operator, "DECREASING", [2, 2], [0.5, 0], [-0.5, -0.5], (3, 3), (6, 6),
                       **extra)
    assert "different ONNX nearest modes" in (onnx_model.why_not_expressible(mixed) or "")
    # a dimension of Scale 1 whose outputs read their own index goes with any node
    free = fields(resample23(operator, "DECREASING", [1, 2], [0.5, 0], [-0.5, 0], (3, 3),
                             (3, 6), **extra))
    assert (free["attributes"]["coordinate_transformation_mode"],
            free["attributes"]["nearest_mode"]) == (b"asymmetric", b"floor")


def test_resample2_linear_ignores_the_direction_and_resample3_antialias_is_resize_18() -> None:
    pytest.importorskip("onnx")
    for direction in ("INCREASING", "DECREASING"):
        f = fields(resample23("RESAMPLE2", direction, [1, 1, 2, 2], [0.5] * 4, [-0.5] * 4,
                              (1, 1, 2, 2), (1, 1, 4, 4), mode="LINEAR"))
        assert f["attributes"] == {"mode": b"linear",
                                   "coordinate_transformation_mode": b"half_pixel"}
    aa = fields(resample23("RESAMPLE3", "DECREASING", [1, 1, 0.25, 0.25], [0] * 4, [0] * 4,
                           (1, 1, 8, 8), (1, 1, 2, 2), mode="LINEAR", Antialiased=True))
    assert aa["attributes"] == {"mode": b"linear", "coordinate_transformation_mode":
                                b"asymmetric", "antialias": 1}
    assert aa["opset"] == [("", 18)] and aa["ir_version"] == 8
    plain = fields(resample23("RESAMPLE3", "DECREASING", [1, 1, 0.25, 0.25], [0] * 4, [0] * 4,
                              (1, 1, 8, 8), (1, 1, 2, 2), mode="LINEAR", Antialiased=False))
    assert "antialias" not in plain["attributes"] and plain["opset"] == [("", 13)]


def test_onnx_antialias_differs_where_the_page_does_not_stretch() -> None:
    """ONNX stretches every Scale < 1; the page only 1/Scale > 2: Scales in [0.5, 1) differ.
    A provider that computes ONNX (the CPU one) refuses those calls; the DirectML provider
    passes the desc on (antialias -> Antialiased) and takes them."""
    def aa(scales: list[float], sizes_in: tuple[int, ...], sizes_out: tuple[int, ...],
           flag: bool = True) -> OperatorCall:
        return resample23("RESAMPLE3", "DECREASING", scales, [0.5] * 4, [-0.5] * 4, sizes_in,
                          sizes_out, mode="LINEAR", Antialiased=flag)

    differs = onnx_model.antialias_differs
    assert "dimension(s) [3]" in (differs(aa([1, 1, 0.25, 0.75], (1, 1, 8, 8), (1, 1, 2, 6)))
                                  or "")
    assert "dimension(s) [2]" in (differs(aa([1, 1, 0.5, 2], (1, 1, 8, 4), (1, 1, 4, 8))) or "")
    assert differs(aa([1, 1, 0.25, 0.3], (1, 1, 8, 10), (1, 1, 2, 3))) is None
    assert differs(aa([1, 1, 2, 1.5], (1, 1, 2, 2), (1, 1, 4, 3))) is None  # no Scale < 1
    assert differs(aa([1, 1, 0.5, 0.75], (1, 1, 8, 8), (1, 1, 4, 6), flag=False)) is None
    assert OnnxRuntimeBackend.onnx_semantics and not OnnxRuntimeDirectMLBackend.onnx_semantics


def test_the_cpu_provider_refuses_what_onnx_computes_otherwise() -> None:
    pytest.importorskip("onnxruntime")
    c = resample23("RESAMPLE3", "DECREASING", [1, 1, 0.25, 0.75], [0.5] * 4, [-0.5] * 4,
                   (1, 1, 8, 8), (1, 1, 2, 6), mode="LINEAR", Antialiased=True)
    assert onnx_model.why_not_expressible(c) is None  # the DirectML provider would take it
    reason = OnnxRuntimeBackend().unsupported_reason(c)
    assert reason and reason.startswith("ONNX's Resize computes another operator here")


@pytest.mark.parametrize("data_type", [DataType.FLOAT32, DataType.UINT8])
def test_resample2_and_resample3_run_on_onnxruntime(data_type: DataType) -> None:
    """Every nearest node of the provider's mapping and an antialiased downscale, run on the
    CPU provider and judged against the reference: all PASS."""
    pytest.importorskip("onnxruntime")
    backend = OnnxRuntimeBackend()
    rng = np.random.default_rng(5)
    calls = [resample23("RESAMPLE2", d, [1, 1, 2.5, 1.5], [i] * 4, [o] * 4, (1, 2, 4, 5),
                        (1, 2, 10, 7), data_type=data_type) for d, i, o in PROVIDER]
    calls.append(resample23("RESAMPLE3", "INCREASING", [1, 1, 0.25, 0.3], [0.5] * 4, [-0.5] * 4,
                            (1, 2, 16, 13), (1, 2, 4, 3), "LINEAR", data_type, Antialiased=True))
    for c in calls:
        assert backend.unsupported_reason(c) is None, c.attributes
        src, dst = c.tensors["InputTensor"], c.tensors["OutputTensor"]
        x = (rng.standard_normal(src.sizes) * 50 + 100).clip(0, 255).astype(data_type.numpy_dtype)
        out = np.zeros(dst.total_size, np.uint8)
        backend.execute(c, {"InputTensor": x.view(np.uint8).ravel().copy(), "OutputTensor": out})
        got = out.view(data_type.numpy_dtype).reshape(dst.sizes)
        expected = ops.get(c.operator).expected(c, {"InputTensor": x})["OutputTensor"]
        assert judge(got, expected).status == "PASS", (c.operator, c.attributes, expected.rule)


def test_data_type_mapping() -> None:
    onnx = pytest.importorskip("onnx")
    assert set(onnx_model.ONNX_TYPE_NAMES) == set(DataType)
    for dml, name in onnx_model.ONNX_TYPE_NAMES.items():
        elem = onnx_model.onnx_elem_type(dml)
        assert elem == getattr(onnx.TensorProto, name)
        assert onnx.helper.tensor_dtype_to_np_dtype(elem) == dml.numpy_dtype


# -- what ONNX cannot say ------------------------------------------------------------------------
def test_not_expressible_reasons() -> None:
    why = onnx_model.why_not_expressible
    crd = call("SPACE_TO_DEPTH1", (1, 1, 2, 2), (1, 4, 1, 1), BlockSize=2,
               Order="COLUMN_ROW_DEPTH")
    assert "SpaceToDepth has no mode attribute below opset 27" in why(crd)
    odd = resample1([2, 2], [0.25, 0.25], [0, 0], (2, 2), (4, 4))
    assert "pixel offsets (0.25, 0) in dimension 0" in why(odd)
    mixed = resample1([2, 2], [0.5, 0], [-0.5, 0], (2, 2), (4, 4))
    assert "mix pixel offsets" in why(mixed)
    crop = resample1([2, 2], [0.5] * 2, [-0.5] * 2, (3, 3), (3, 5))
    assert "floor(InputSize * Scale): dimension 0, floor(3 * 2) = 6, the desc has 3" in why(crop)
    # floor(10 * 0.7f) is 6 exactly, 7 with onnxruntime's float32 product: ambiguous in ONNX.
    f32 = resample1([1, 0.7], [0, 0], [0, 0], (1, 10), (1, 6))
    assert "6 exactly, 7 with the float32 product" in why(f32)
    strided = OperatorCall("DEPTH_TO_SPACE1", {
        "InputTensor": TensorDesc(DataType.FLOAT32, (1, 4, 1, 2), (8, 1, 8, 4)),
        "OutputTensor": TensorDesc(DataType.FLOAT32, (1, 1, 2, 4))},
        {"BlockSize": 2, "Order": "DEPTH_COLUMN_ROW"})
    assert "ONNX tensors are packed; InputTensor has Strides [8, 1, 8, 4]" in why(strided)
    packed = OperatorCall("DEPTH_TO_SPACE1", {
        "InputTensor": TensorDesc(DataType.FLOAT32, (1, 4, 1, 2), (8, 2, 2, 1)),
        "OutputTensor": TensorDesc(DataType.FLOAT32, (1, 1, 2, 4))},
        {"BlockSize": 2, "Order": "DEPTH_COLUMN_ROW"})
    assert why(packed) is None  # Strides stated, but the packed ones
    wrong = call("DEPTH_TO_SPACE1", (1, 4, 1, 1), (1, 2, 2, 1), BlockSize=2,
                 Order="DEPTH_COLUMN_ROW")
    assert "output for input [1, 4, 1, 1] and blocksize 2 is [1, 1, 2, 2]" in why(wrong)
    with pytest.raises(ValueError, match="not expressible"):
        onnx_model.build_model(crop)


# -- the backend ----------------------------------------------------------------------------------
def test_probed_capabilities() -> None:
    pytest.importorskip("onnxruntime")
    caps = OnnxRuntimeBackend().capabilities
    assert caps.feature_level == HIGHEST
    assert (caps.strided, caps.arbitrary_offsets, caps.rejects_invalid) == (False, False, False)
    # half_pixel and asymmetric, and for RESAMPLE2/3 nearest those plus a nearest_mode's shift
    assert caps.offset_pairs == {(0.5, -0.5), (0.0, 0.0), (0.0, -0.5), (-0.5, 0.0),
                                 (1.0, -0.5), (0.5, 0.0)}
    assert set(caps.operators) == set(onnx_model.OPERATORS)  # every operator it maps
    for name, types in caps.operators.items():
        assert {DataType.FLOAT32, DataType.FLOAT16, DataType.INT8, DataType.UINT8} <= types
        every = frozenset().union(*(t.data_types for t in ops.get(name).support))
        for refused in every - types:  # each refusal is in the notes, in ORT's words
            assert f"{name} {refused.name}" in caps.notes
    assert "Validates no desc" in caps.notes


def test_refusals_are_probed_once_per_pattern(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("onnxruntime")
    backend = OnnxRuntimeBackend()
    probes = []
    real = backend._probe
    monkeypatch.setattr(backend, "_probe", lambda c: probes.append(c) or real(c))
    one_d = resample1([2.5], [0.5], [-0.5], (4,), (10,), mode="LINEAR")
    reason = backend.unsupported_reason(one_d)
    assert reason and "refuses Resize(mode=linear, coordinate_transformation_mode=half_pixel) " \
                      "on 1-D FLOAT32 scaling dimension(s) [0]" in reason
    assert backend.unsupported_reason(resample1([3.5], [0.5], [-0.5], (2,), (7,),
                                                mode="LINEAR")) == reason
    nchw = resample1([1, 1, 2, 2], [0.5] * 4, [-0.5] * 4, (1, 3, 2, 2), (1, 3, 4, 4), "LINEAR")
    assert backend.unsupported_reason(nchw) is None
    assert len(probes) <= 2  # one per new pattern (none when an earlier test cached it)
    assert backend.unsupported_reason(call("SPACE_TO_DEPTH1", (1, 1, 2, 2), (1, 4, 1, 1),
                                           BlockSize=2, Order="COLUMN_ROW_DEPTH")).startswith(
        "not expressible as one ONNX node (opset 13): SpaceToDepth")


def test_execute_writes_through_the_desc() -> None:
    pytest.importorskip("onnxruntime")
    backend = OnnxRuntimeBackend()
    c = call("DEPTH_TO_SPACE1", (1, 4, 1, 2), (1, 1, 2, 4), BlockSize=2, Order="COLUMN_ROW_DEPTH")
    x = np.arange(8, dtype=np.float32)
    out = np.full(32 + 4, 0xCD, np.uint8)  # a padded binding: only the 32 logical bytes change
    backend.execute(c, {"InputTensor": x.view(np.uint8).copy(), "OutputTensor": out})
    want = ops.get("DEPTH_TO_SPACE1").reference(c, {"InputTensor": x.reshape(1, 4, 1, 2)})
    assert out[:32].view(np.float32).tolist() == want["OutputTensor"].ravel().tolist()
    assert out[32:].tolist() == [0xCD] * 4
    assert len(backend._sessions) == 1
    backend.execute(c, {"InputTensor": x.view(np.uint8).copy(), "OutputTensor": out})
    assert len(backend._sessions) == 1  # the session is reused


def test_short_error() -> None:
    exc = RuntimeError("[ONNXRuntimeError] : 1 : FAIL : Exception during initialization: "
                       "/src/upsamplebase.h:314 onnxruntime::UpsampleBase::UpsampleBase(const K&)"
                       " [ONNXRuntimeError] : 1 : FAIL : upsamplebase.h:553 ScalesValidation "
                       "'Linear' mode only\n  supports: 2-D")
    assert short_error(exc) == "FAIL : 'Linear' mode only supports: 2-D"


@pytest.mark.parametrize("missing, reason", [("onnxruntime", INSTALL), ("onnx", INSTALL_ONNX)])
def test_not_supported_everywhere_without_the_library(monkeypatch: pytest.MonkeyPatch,
                                                      missing: str, reason: str) -> None:
    monkeypatch.setitem(sys.modules, missing, None)  # import fails
    from conformance.backend import load_backend

    backend = load_backend("backends.onnxruntime_backend:OnnxRuntimeBackend")
    assert backend.unavailable == reason and reason in backend.capabilities.notes
    results = run_cases(load_cases(SAMPLE), backend)
    assert {(r.status, r.message) for r in results} == {("NOT_SUPPORTED", reason)}


def test_directml_provider_missing_is_not_supported() -> None:
    ort = pytest.importorskip("onnxruntime")
    if "DmlExecutionProvider" in ort.get_available_providers():
        pytest.skip("this machine has the DirectML provider")
    backend = OnnxRuntimeDirectMLBackend()
    assert backend.name == "onnxruntime-directml"
    results = run_cases(load_cases([DOCUMENTED]), backend)
    messages = {(r.status, r.message) for r in results}
    assert len(messages) == 1
    status, message = messages.pop()
    assert status == "NOT_SUPPORTED" and "no DmlExecutionProvider" in message
    assert "pip install onnxruntime-directml" in message


def test_webgpu_provider_missing_is_not_supported_with_its_install_line() -> None:
    ort = pytest.importorskip("onnxruntime")
    if "WebGpuExecutionProvider" in ort.get_available_providers():
        pytest.skip("this environment has the WebGPU provider (onnxruntime-webgpu)")
    from conformance.backend import load_backend

    backend = load_backend("onnxruntime-webgpu")
    assert isinstance(backend, OnnxRuntimeWebGpuBackend) and backend.environment == {}
    results = run_cases(load_cases([DOCUMENTED]), backend)
    (status, message), = {(r.status, r.message) for r in results}
    assert status == "NOT_SUPPORTED" and "no WebGpuExecutionProvider" in message
    assert "pip install onnxruntime-webgpu, in an environment of its own" in message


def test_the_webgpu_baseline_names_committed_cases_with_their_cause() -> None:
    from conformance.casefile.selection import id_matches
    from conformance.results import baseline
    from tests.support import ROOT

    entries = baseline.load(ROOT / "backends/baseline-onnxruntime-webgpu.yaml").entries
    ids = [c.id for c in load_cases([GENERATED / "offsets", GENERATED / "sampling"])]
    for entry in entries:
        assert "docs/peer-onnxruntime-webgpu.md" in entry.reason
        for pattern in entry.cases:
            matched = [i for i in ids if id_matches(i, pattern)]
            assert matched and all("/linear/" in i and "channel" in i for i in matched), pattern


def test_the_cpu_provider_records_its_version() -> None:
    pytest.importorskip("onnxruntime")
    assert OnnxRuntimeBackend().environment["version"].endswith(" CPUExecutionProvider")


# -- certification ---------------------------------------------------------------------------------
def test_certification_sample() -> None:
    pytest.importorskip("onnxruntime")
    results = run_cases(load_cases(SAMPLE), OnnxRuntimeBackend())
    by_id = {r.id: r for r in results}
    assert by_id["documented/resample1/remark-linear-resample1"].status == "PASS"
    assert by_id["documented/depth_to_space/example"].status == "NOT_SUPPORTED"  # UINT32
    assert not [r.id for r in results if r.status == "ERROR"]
    documented = [r for r in results if r.id.startswith("documented/")]
    assert {r.status for r in documented} <= {"PASS", "NOT_SUPPORTED"}
    assert sum(r.status == "PASS" for r in documented) >= 5
    # The one real discrepancy: ORT wraps its float16 kernels in Casts to float32 and back,
    # which quiet signalling NaNs and may drop NaN payloads (docs/peer-onnxruntime.md).
    for r in results:
        if r.status == "FAIL":
            assert "float16" in r.id and "nan (0x" in r.message, (r.id, r.message[:300])
            assert all(m["expected"].startswith("nan") and m["got"].startswith("nan")
                       for m in r.mismatches)
    assert sum(r.status == "PASS" for r in results) >= 150
