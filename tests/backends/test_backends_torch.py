"""The PyTorch peer (backends/torch_backend.py): how DML calls map onto pixel_shuffle /
F.interpolate, the reasons for what torch cannot express, the data types found by probing, the
path without torch, and a certification run whose only FAILs are the torch behaviours explained
in docs/peer-torch.md."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from backends import load_backend
from backends import torch_backend as tb
from conformance import ops
from conformance.casefile import Case, load_cases, load_text
from conformance.judge.compare import judge
from conformance.ops import OperatorCall
from conformance.results import Result
from conformance.session import case_run
from conformance.tensors import DataType, TensorDesc
from tests.support import CASES

F32, F16, U8 = DataType.FLOAT32, DataType.FLOAT16, DataType.UINT8


def resample(sizes: tuple[int, ...], out: tuple[int, ...], scales: tuple[float, ...],
             mode: str = "LINEAR", pair: tuple[float, float] | None = (0.5, -0.5),
             dtype: DataType = F32, operator: str = "RESAMPLE1") -> OperatorCall:
    attributes: dict = {"InterpolationMode": mode, "Scales": scales}
    if operator == "RESAMPLE1":
        assert pair is not None
        attributes["InputPixelOffsets"] = (pair[0],) * len(sizes)
        attributes["OutputPixelOffsets"] = (pair[1],) * len(sizes)
    return OperatorCall(operator, {"InputTensor": TensorDesc(dtype, sizes),
                                   "OutputTensor": TensorDesc(dtype, out)}, attributes)


def depth(operator: str, order: str | None, dtype: DataType = F32) -> OperatorCall:
    attributes: dict = {"BlockSize": 2}
    if order:
        attributes["Order"] = order
    sizes, out = ((1, 4, 2, 2), (1, 1, 4, 4)) if operator.startswith("DEPTH") else \
        ((1, 1, 4, 4), (1, 4, 2, 2))
    return OperatorCall(operator, {"InputTensor": TensorDesc(dtype, sizes),
                                   "OutputTensor": TensorDesc(dtype, out)}, attributes)


# -- the mapping, without torch ------------------------------------------------------------------
@pytest.mark.parametrize("call, mode, shape, factors, out_shape", [
    # 4-D (N, C, H, W) scaling H and W: bilinear on the same shape
    (resample((2, 3, 4, 5), (2, 3, 8, 15), (1, 1, 2, 3)), "bilinear", (2, 3, 4, 5), (2.0, 3.0),
     (2, 3, 8, 15)),
    # only W scaled: still (N, C, H, W); H passes with factor 1
    (resample((2, 3, 4, 5), (2, 3, 4, 7), (1, 1, 1, 1.5)), "bilinear", (2, 3, 4, 5), (1.0, 1.5),
     (2, 3, 4, 7)),
    # C scaled, N not: C becomes a spatial dim, trilinear on (1, N, C, H, W)
    (resample((2, 3, 4, 5), (2, 6, 4, 10), (1, 2, 1, 2)), "trilinear", (1, 2, 3, 4, 5),
     (2.0, 1.0, 2.0), (1, 2, 6, 4, 10)),
    # 1-D and 3-D: leading (1, 1)
    (resample((5,), (10,), (2,)), "linear", (1, 1, 5), (2.0,), (1, 1, 10)),
    (resample((2, 3, 4), (4, 3, 12), (2, 1, 3)), "trilinear", (1, 1, 2, 3, 4), (2.0, 1.0, 3.0),
     (1, 1, 4, 3, 12)),
    # nearest: (0.5, 0) is 'nearest', (0.5, -0.5) 'nearest-exact'; RESAMPLE is half-pixel
    (resample((1, 1, 3, 3), (1, 1, 6, 6), (1, 1, 2, 2), "NEAREST_NEIGHBOR", (0.5, 0.0)),
     "nearest", (1, 1, 3, 3), (2.0, 2.0), (1, 1, 6, 6)),
    (resample((1, 1, 3, 3), (1, 1, 6, 6), (1, 1, 2, 2), "NEAREST_NEIGHBOR"),
     "nearest-exact", (1, 1, 3, 3), (2.0, 2.0), (1, 1, 6, 6)),
    (resample((1, 1, 3, 3), (1, 1, 6, 6), (1, 1, 2, 2), "NEAREST_NEIGHBOR", None,
              operator="RESAMPLE"), "nearest-exact", (1, 1, 3, 3), (2.0, 2.0), (1, 1, 6, 6)),
    # an unchanged dimension of size 1 may state any scale: it folds into the batch
    (resample((1, 2, 3, 3), (1, 2, 6, 6), (5, 1, 2, 2)), "bilinear", (1, 2, 3, 3), (2.0, 2.0),
     (1, 2, 6, 6)),
    # the case's float32 scale is the factor, not the size ratio
    (resample((1, 1, 4, 4), (1, 1, 5, 5), (1, 1, 1.3, 1.3)), "bilinear", (1, 1, 4, 4),
     (float(np.float32(1.3)),) * 2, (1, 1, 5, 5)),
])
def test_resample_calls_map_onto_interpolate(call: OperatorCall, mode: str,
                                             shape: tuple[int, ...], factors: tuple[float, ...],
                                             out_shape: tuple[int, ...]) -> None:
    plan = tb.plan_resample(call)
    assert isinstance(plan, tb.ResamplePlan), plan
    assert (plan.mode, plan.shape, plan.scale_factor, plan.out_shape) == (
        mode, shape, factors, out_shape)


def test_a_rank_torch_refuses_for_the_type_gives_way_to_a_larger_one() -> None:
    call = resample((5,), (10,), (2,), dtype=U8)
    plan = tb.plan_resample(call, lambda kind, rank: rank != 1)  # as UINT8 linear on the CPU
    assert isinstance(plan, tb.ResamplePlan)
    assert (plan.mode, plan.shape, plan.scale_factor) == ("bilinear", (1, 1, 1, 5), (1.0, 2.0))


@pytest.mark.parametrize("call, words", [
    (resample((2, 3, 4, 5), (4, 3, 8, 10), (2, 1, 2, 2)), "at most the three dimensions"),
    (resample((1, 1, 4, 4), (1, 1, 8, 8), (1, 1, 2, 2), pair=(0.5, 0.0)),
     "linear modes (align_corners=False) are half-pixel"),
    (resample((1, 1, 4, 4), (1, 1, 8, 8), (1, 1, 2, 2), pair=(0.0, 0.0)),
     "linear modes (align_corners=False) are half-pixel"),
    (resample((1, 1, 4, 4), (1, 1, 8, 8), (1, 1, 2, 2), "NEAREST_NEIGHBOR", (0.25, 0.0)),
     "nearest modes take offsets"),
    (resample((1, 1, 4, 4), (1, 1, 7, 8), (1, 1, 2, 2)), "floor(InputSize * Scale) = 8"),
    (resample((1, 1, 4, 4), (1, 1, 8, 8), (1, 1, 1.8, 2)), "floor(InputSize * Scale) = 7"),
])
def test_what_torch_cannot_express_gets_a_reason(call: OperatorCall, words: str) -> None:
    reason = tb.plan_resample(call)
    assert isinstance(reason, str) and words in reason


def test_one_nearest_mode_for_every_dimension() -> None:
    call = resample((1, 1, 4, 4), (1, 1, 8, 8), (1, 1, 2, 2), "NEAREST_NEIGHBOR")
    mixed = OperatorCall(call.operator, call.tensors, {
        **call.attributes, "OutputPixelOffsets": (-0.5, -0.5, -0.5, 0.0)})
    reason = tb.plan_resample(mixed)
    assert isinstance(reason, str) and "one nearest mode" in reason


def resample23(sizes: tuple[int, ...], out: tuple[int, ...], scales: tuple[float, ...],
               mode: str = "LINEAR", pair: tuple[float, float] = (0.5, -0.5),
               direction: str = "DECREASING", dtype: DataType = F32,
               antialiased: bool | None = None) -> OperatorCall:
    attributes: dict = {"InterpolationMode": mode, "RoundingDirection": direction,
                        "Scales": scales, "InputPixelOffsets": (pair[0],) * len(sizes),
                        "OutputPixelOffsets": (pair[1],) * len(sizes)}
    if antialiased is not None:
        attributes["Antialiased"] = antialiased
    return OperatorCall("RESAMPLE2" if antialiased is None else "RESAMPLE3",
                        {"InputTensor": TensorDesc(dtype, sizes),
                         "OutputTensor": TensorDesc(dtype, out)}, attributes)


@pytest.mark.parametrize("call, mode, antialias", [
    # RESAMPLE2 DECREASING is floor(c): 'nearest' at offsets (0, 0), 'nearest-exact' (0, -0.5)
    (resample23((1, 1, 3, 3), (1, 1, 6, 6), (1, 1, 2, 2), "NEAREST_NEIGHBOR", (0.0, 0.0)),
     "nearest", False),
    (resample23((1, 1, 3, 3), (1, 1, 6, 6), (1, 1, 2, 2), "NEAREST_NEIGHBOR", (0.0, -0.5)),
     "nearest-exact", False),
    # LINEAR ignores the direction
    (resample23((1, 1, 3, 3), (1, 1, 6, 6), (1, 1, 2, 2), direction="INCREASING"), "bilinear",
     False),
    # RESAMPLE3: antialias where the page stretches (1/Scale > 2), plain linear where it does not
    (resample23((1, 2, 16, 12), (1, 2, 4, 3), (1, 1, 0.25, 0.25), antialiased=True), "bilinear",
     True),
    (resample23((1, 2, 16, 3), (1, 2, 4, 6), (1, 1, 0.25, 2), antialiased=True), "bilinear",
     True),
    (resample23((1, 2, 3, 3), (1, 2, 6, 6), (1, 1, 2, 2), antialiased=True), "bilinear", False),
    (resample23((16,), (4,), (0.25,), antialiased=True), "bilinear", True),
    (resample23((1, 2, 16, 12), (1, 2, 4, 3), (1, 1, 0.25, 0.25), antialiased=False),
     "bilinear", False),
])
def test_resample2_and_resample3_map_onto_interpolate(call: OperatorCall, mode: str,
                                                      antialias: bool) -> None:
    plan = tb.plan_resample(call)
    assert isinstance(plan, tb.ResamplePlan), plan
    assert plan.mode == mode and (plan.kind == tb.ANTIALIAS) == antialias
    out = call.tensors["OutputTensor"].sizes
    assert plan.out_shape[-len(out):] == out


@pytest.mark.parametrize("call, words", [
    (resample23((1, 1, 3, 3), (1, 1, 6, 6), (1, 1, 2, 2), "NEAREST_NEIGHBOR", (0.0, 0.0),
                "INCREASING"), "RoundingDirection INCREASING is ceil(c)"),
    (resample23((1, 1, 3, 3), (1, 1, 6, 6), (1, 1, 2, 2), "NEAREST_NEIGHBOR", (0.5, -0.5)),
     "nearest modes take offsets [(0.0, -0.5), (0.0, 0.0)]"),
    (resample23((1, 1, 16, 8), (1, 1, 4, 6), (1, 1, 0.25, 0.75), antialiased=True),
     "a Scale in [0.5, 1) in dimension [3]"),
    (resample23((1, 1, 8, 8), (1, 1, 4, 2), (1, 1, 0.5, 0.25), antialiased=True),
     "a Scale in [0.5, 1) in dimension [2]"),
    (resample23((1, 8, 8, 8), (1, 2, 2, 2), (1, 0.25, 0.25, 0.25), antialiased=True),
     "antialiases 'bilinear' (two spatial dimensions) only"),
])
def test_what_torch_cannot_express_of_resample2_and_resample3(call: OperatorCall,
                                                              words: str) -> None:
    reason = tb.plan_resample(call)
    assert isinstance(reason, str) and words in reason, reason


# -- with torch ---------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def torch_backend() -> tb.TorchBackend:
    pytest.importorskip("torch")
    return tb.TorchBackend()


def test_probing_finds_what_torch_refuses(torch_backend: tb.TorchBackend) -> None:
    err = torch_backend.probe_error
    assert "UInt32" in (err("pixel_shuffle", DataType.UINT32) or "")
    assert "UInt32" in (err("pixel_unshuffle", DataType.UINT32) or "")
    for t in (F32, F16, U8, DataType.INT8, DataType.INT64, DataType.FLOAT64):
        assert err("pixel_shuffle", t) is None
    for kind in ("nearest", "nearest-exact", "linear"):
        for rank in (1, 2, 3):
            assert err(f"interpolate:{kind}:{rank}", F32) is None
            assert err(f"interpolate:{kind}:{rank}", F16) is None
            assert err(f"interpolate:{kind}:{rank}", DataType.INT8) is not None
    assert err("interpolate:linear:2", U8) is None  # torch's uint8 bilinear
    assert "Byte" in (err("interpolate:linear:1", U8) or "")
    assert tb.probe(torch_backend.torch, "cpu") is tb.probe(torch_backend.torch, "cpu")  # cached


def test_capabilities_are_honest(torch_backend: tb.TorchBackend) -> None:
    caps = torch_backend.capabilities
    assert set(caps.operators) == {"DEPTH_TO_SPACE1", "SPACE_TO_DEPTH1", "RESAMPLE1", "RESAMPLE",
                                   "RESAMPLE2", "RESAMPLE3"}
    assert DataType.UINT32 not in caps.operators["DEPTH_TO_SPACE1"]
    assert DataType.INT64 in caps.operators["SPACE_TO_DEPTH1"]
    for name in ("RESAMPLE1", "RESAMPLE2", "RESAMPLE3"):
        assert caps.operators[name] == {F32, F16, U8}  # no INT8 interpolate
    assert not caps.strided and not caps.arbitrary_offsets and not caps.rejects_invalid
    # RESAMPLE(1)'s floor(c + 0.5) pairs, RESAMPLE2/3's floor(c) pairs, half-pixel linear
    assert caps.offset_pairs == {(0.5, 0.0), (0.5, -0.5), (0.0, 0.0), (0.0, -0.5)}
    assert "not implemented for 'UInt32'" in caps.notes
    assert torch_backend.environment == {"version": f"torch {torch_backend.torch.__version__} cpu"}


def test_reasons_per_call(torch_backend: tb.TorchBackend) -> None:
    why = torch_backend.unsupported_reason
    assert why(depth("DEPTH_TO_SPACE1", "COLUMN_ROW_DEPTH")) is None
    assert why(depth("SPACE_TO_DEPTH1", "COLUMN_ROW_DEPTH", DataType.INT16)) is None
    assert why(depth("DEPTH_TO_SPACE1", "DEPTH_COLUMN_ROW")) == tb.NOT_CRD
    assert why(depth("SPACE_TO_DEPTH1", "DEPTH_COLUMN_ROW")) == tb.NOT_CRD
    assert "not implemented for 'UInt32'" in why(depth("DEPTH_TO_SPACE1", "COLUMN_ROW_DEPTH",
                                                       DataType.UINT32))
    assert why(resample((1, 1, 4, 4), (1, 1, 8, 8), (1, 1, 2, 2), dtype=U8)) is None
    assert why(resample((4,), (8,), (2,), dtype=U8)) is None  # runs as bilinear
    trilinear_u8 = why(resample((2, 2, 2), (4, 4, 4), (2, 2, 2), dtype=U8))
    assert "'trilinear'" in trilinear_u8 and "not implemented for 'Byte'" in trilinear_u8


@pytest.mark.parametrize("dtype", [F32, U8])
def test_resample2_nearest_and_linear_on_torch_match_the_reference(
        torch_backend: tb.TorchBackend, dtype: DataType) -> None:
    rng = np.random.default_rng(2)
    calls = [resample23((2, 3, 5, 4), (2, 3, 12, 6), (1, 1, 2.5, 1.5), "NEAREST_NEIGHBOR", pair,
                        dtype=dtype) for pair in ((0.0, 0.0), (0.0, -0.5))]
    calls.append(resample23((2, 3, 5, 4), (2, 3, 12, 6), (1, 1, 2.5, 1.5), dtype=dtype,
                            direction="INCREASING"))
    for call in calls:
        assert torch_backend.unsupported_reason(call) is None
        x, got = run_torch(torch_backend, call, rng)
        expected = ops.get("RESAMPLE2").expected(call, {"InputTensor": x})["OutputTensor"]
        assert judge(got, expected).status == "PASS", call.attributes


def test_torch_antialias_agrees_inside_and_drops_the_taps_beyond_the_edges(
        torch_backend: tb.TorchBackend) -> None:
    """torch's antialiased bilinear against the page's RESAMPLE3: by the suite's reading alone
    (strict) every output whose stretched filter stays inside the input agrees within the
    strict bound, and the others differ, since torch drops the taps beyond the edges and
    renormalises where the suite repeats the edge element; that is an admissible reading of the
    open region (notes §10, §11), so judged against every reading it PASSes, naming it."""
    rng = np.random.default_rng(3)
    call = resample23((1, 2, 24, 20), (1, 2, 6, 5), (1, 1, 0.25, 0.25), antialiased=True)
    spec = ops.get("RESAMPLE3")
    assert torch_backend.unsupported_reason(call) is None
    assert any("beyond the input's edge" in r for r in spec.silent_regions(call))
    x, got = run_torch(torch_backend, call, rng)
    strict = spec.expected(call, {"InputTensor": x}, strict=True)["OutputTensor"]
    edge = np.zeros(got.shape, bool)
    for d, axis in enumerate(spec.antialias_axes(call)):
        outside = (axis.c - axis.f < -1) | (axis.c + axis.f > axis.size)  # a tap beyond an edge
        edge |= outside.reshape([-1 if k == d else 1 for k in range(got.ndim)])
    verdict = judge(got, strict)
    assert verdict.status == "FAIL" and not (verdict.bad & ~edge).any()  # inside: all agree
    assert verdict.bad[edge].any()
    judged = judge(got, spec.expected(call, {"InputTensor": x})["OutputTensor"])
    assert judged.status == "PASS" and judged.reading is not None
    assert "taps beyond the edge dropped" in judged.reading.rule


def run_torch(backend: tb.TorchBackend, call: OperatorCall, rng: np.random.Generator
              ) -> tuple[np.ndarray, np.ndarray]:
    src, dst = call.tensors["InputTensor"], call.tensors["OutputTensor"]
    x = (rng.standard_normal(src.sizes) * 40 + 120).clip(0, 255).astype(src.data_type.numpy_dtype)
    out = np.zeros(dst.total_size, np.uint8)
    backend.execute(call, {"InputTensor": x.view(np.uint8).ravel().copy(), "OutputTensor": out})
    return x, out.view(dst.data_type.numpy_dtype).reshape(dst.sizes)


# -- certification runs -------------------------------------------------------------------------
def explained(case: Case, result: Result) -> str | None:
    """Which torch behaviour of docs/peer-torch.md a FAIL shows, or None."""
    for named in case.calls:
        call = named.call
        a, src = call.attributes, call.tensors["InputTensor"]
        if not call.operator.startswith("RESAMPLE"):
            continue
        if (call.operator == "RESAMPLE3" and result.ambiguous
                and "beyond the input's edge" in result.ambiguous):
            return "antialias drops the taps beyond the edges and renormalises (ambiguous)"
        out = call.tensors["OutputTensor"].sizes
        if a["InterpolationMode"] == "LINEAR":
            if any(i == o and np.float32(s) != 1 for i, o, s in zip(src.sizes, out, a["Scales"],
                                                                    strict=True)):
                return "linear ignores the scale where OutputSize == InputSize"
            if src.data_type == F16 and "legal envelope of float32 math" in result.message:
                return "float16 linear in half precision, beyond the float32 envelope"
    return None


SAMPLE = ["documented", "generated/bitlevel", "generated/offsets/fewer_dimensions.yaml",
          "generated/offsets/single_axis.yaml", "generated/equivalence", "generated/tables",
          "generated/roundtrip/depth_space.yaml"]
#: float16 signalling NaNs quieted by torch's 1-D/3-D nearest kernels: legal (nearest is not a
#: raw move; docs/tolerances.md), a QUALITY_WARNING since issue 11.
SAMPLE_WARNINGS = {
    "generated/bitlevel/resample/nearest/float16",
    "generated/bitlevel/resample1/nearest/float16",
    "generated/tables/resample1/3d/nearest_neighbor/float16",
}
SAMPLE_FAILS = {
    "generated/equivalence/resample1-half-pixel-is-resample/1d/linear/float16",
    "generated/equivalence/resample1-half-pixel-is-resample/3d/linear/float16",
    "generated/offsets/resample/linear/1d/float16/1",
    "generated/offsets/resample/linear/2d/float32/0",
    "generated/offsets/resample/linear/3d/float32/0",
    "generated/offsets/resample/linear/3d/float16/0",
    "generated/offsets/resample/linear/3d/float16/1",
    "generated/offsets/resample/linear/3d/float16/2",
}


def test_certification_sample(torch_backend: tb.TorchBackend) -> None:
    cases = load_cases([CASES / p for p in SAMPLE])
    results = case_run.run_cases(cases, torch_backend)
    by_id = {c.id: c for c in cases}
    statuses = {r.status for r in results}
    assert statuses <= {"PASS", "QUALITY_WARNING", "FAIL", "NOT_SUPPORTED"}
    assert sum(r.status == "PASS" for r in results) > 250
    fails = {r.id: explained(by_id[r.id], r) for r in results if r.status == "FAIL"}
    assert set(fails) == SAMPLE_FAILS
    assert None not in fails.values(), fails
    warned = [r for r in results if r.status == "QUALITY_WARNING"]
    assert {r.id for r in warned} == SAMPLE_WARNINGS
    assert all("a NaN may come back as any NaN" in r.message for r in warned)
    documented = [r for r in results if r.id.startswith("documented/") and not r.ambiguous]
    assert {r.status for r in documented} == {"PASS", "NOT_SUPPORTED"}


CASE = """
cases:
  - id: t/{name}
    operator: RESAMPLE1
    feature_level: "5_1"
    spec: {{page: NOTES, section: '4'}}
    attributes: {{InterpolationMode: {mode}, Scales: {scales}, InputPixelOffsets: {ins},
                  OutputPixelOffsets: {outs}}}
    tensors:
      InputTensor: {{DataType: FLOAT32, Sizes: {sizes}}}
      OutputTensor: {{DataType: FLOAT32, Sizes: {out}}}
    inputs:
      InputTensor: {{values: {values}}}
    expected: {{OutputTensor: reference}}
"""


def one(name: str, mode: str, sizes: list[int], out: list[int], scales: list[float],
        pair: tuple[float, float]) -> Case:
    n = len(sizes)
    values = (np.arange(np.prod(sizes)) * 1.5 - 3).reshape(sizes).tolist()
    return load_text(CASE.format(name=name, mode=mode, sizes=sizes, out=out, scales=scales,
                                 ins=[pair[0]] * n, outs=[pair[1]] * n, values=values),
                     "<test>")[0]


@pytest.mark.parametrize("args, status", [
    # torch's 2-D 'nearest' kernel copies where OutputSize == InputSize and takes o >> 1 where
    # OutputSize == 2 * InputSize, whatever the scale; its 1-D and 3-D kernels use the scale.
    (("nearest-2d-shortcut-2x", "NEAREST_NEIGHBOR", [1, 1, 1, 3], [1, 1, 1, 6],
         [1, 1, 1, 2.3], (0.5, 0.0)), "FAIL"),
    (("nearest-2d-shortcut-1x", "NEAREST_NEIGHBOR", [1, 1, 1, 3], [1, 1, 1, 3],
         [1, 1, 1, 1.25], (0.5, 0.0)), "FAIL"),
    (("nearest-1d-2x", "NEAREST_NEIGHBOR", [3], [6], [2.3], (0.5, 0.0)), "PASS"),
    (("nearest-exact-2d-2x", "NEAREST_NEIGHBOR", [1, 1, 1, 3], [1, 1, 1, 6],
         [1, 1, 1, 2.3], (0.5, -0.5)), "PASS"),
    # linear: a dimension whose size does not change is copied, whatever the scale
    (("linear-same-size", "LINEAR", [1, 1, 4, 2], [1, 1, 5, 2], [1, 1, 1.25, 1.25],
         (0.5, -0.5)), "FAIL"),
    (("linear", "LINEAR", [1, 1, 4, 4], [1, 1, 5, 5], [1, 1, 1.25, 1.25], (0.5, -0.5)),
     "PASS"),
])
def test_torch_departures_the_committed_suite_misses_or_shows(
        torch_backend: tb.TorchBackend, args: tuple, status: str) -> None:
    assert case_run.run_case(one(*args), torch_backend).status == status


# -- without torch, without CUDA -----------------------------------------------------------------
def test_without_torch_every_case_is_not_supported(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "torch", None)  # `import torch` raises ImportError
    for name in ("backends.torch_backend:TorchBackend", "backends.torch_backend:TorchCudaBackend"):
        backend = load_backend(name)
        assert backend.unavailable == tb.NOT_INSTALLED
        results = case_run.run_cases(load_cases([CASES / "documented",
                                               CASES / "generated/tables"]), backend)
        assert {r.status for r in results} == {"NOT_SUPPORTED"}
        # the operators it is written for: not installed; the others it never claims
        ours = [r for r in results if set(r.operators) <= set(tb.OPERATORS)]
        reasons = {r.message for r in ours if "feature level" not in r.message}
        assert reasons == {tb.NOT_INSTALLED}
        others = {r.message for r in results if r not in ours}
        assert others == {"the backend does not implement DEPTH_TO_SPACE",
                          "the backend does not implement SPACE_TO_DEPTH"}


def test_torch_cuda_without_a_device_supports_nothing() -> None:
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("a CUDA device is present")
    backend = tb.TorchCudaBackend()
    results = case_run.run_cases(load_cases([CASES / "documented"]), backend)
    assert {r.status for r in results} == {"NOT_SUPPORTED"}
    ours = [r for r in results if set(r.operators) <= set(tb.OPERATORS)]
    assert ours and all("torch.cuda.is_available() is False" in r.message for r in ours)
    assert all(r.message.startswith("the backend does not implement ")
               for r in results if r not in ours)
