"""The linear tolerance model of docs/tolerances.md, tried on the generated offsets cases
(cases/generated/offsets, the LINEAR ones) with independent float32 implementations of the
documented formula, as a GPU computes it:

    c = (o - OutputPixelOffset) * (1 / Scale) - InputPixelOffset     in float32, clamped,
    i0 = floor(c), i1 = min(i0 + 1, InputSize - 1), t = c - i0, weights 1 - t and t,
    the 2^D taps' product weights and the weighted sum accumulated in float32,

without and with fused multiply-add (fma(a, b, c) emulated as float32(float64(a) * float64(b)
+ float64(c))); FLOAT16 through float32 then rounded; INT8/UINT8 through float32 then rounded to
nearest or truncated. Every one must PASS every case. Then three wrong implementations (a pixel
off along one dimension, an input offset ignored, only H and W interpolated) must FAIL some.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from functools import cache

import numpy as np
import pytest

from backends.numpy_reference import NumpyReferenceBackend
from conformance import inputs as sources
from conformance import ops
from conformance.backend import Backend
from conformance.casefile import Case, load_cases, logical_values
from conformance.ops import OperatorCall
from conformance.results import Result
from conformance.session.case_run import run_cases
from conformance.tensors import read_tensor, write_tensor
from tests.support import GENERATED

OFFSETS = GENERATED / "offsets"
F32 = np.float32


def fma(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """Fused multiply-add in float32: one rounding of the exact a * b + c (the float64 product of
    two float32 values is exact)."""
    return (np.float64(a) * np.float64(b) + np.float64(c)).astype(F32)


class Float32LinearBackend(NumpyReferenceBackend):
    """RESAMPLE / RESAMPLE1 LINEAR computed in float32 from the formula, independently of the
    reference (which works in float64); everything else is the reference's.

    FMA:          fuse the coordinate's multiply-subtract and each multiply-accumulate.
    ROUNDING:     integer outputs: "nearest" (rint) or "truncate" (toward zero), then clamped.
    Faults, for the rejection tests (off in a faithful implementation):
    SHIFT:        pixels added to the coordinate of the innermost dimension (before clamping).
    INPUT_OFFSETS: False takes every InputPixelOffset as 0.
    INTERPOLATED: interpolate only this many innermost dimensions; the others read floor(c).
    """

    name = "float32-linear"
    FMA = False
    ROUNDING = "nearest"
    SHIFT = 0.0
    INPUT_OFFSETS = True
    INTERPOLATED: int | None = None

    def execute(self, call: OperatorCall, bindings: Mapping[str, np.ndarray]) -> None:
        if (not call.operator.startswith("RESAMPLE")
                or call.attributes["InterpolationMode"] != "LINEAR"):
            super().execute(call, bindings)
            return
        self.create_operator(call)
        x = read_tensor(call.tensors["InputTensor"], bindings["InputTensor"])
        write_tensor(call.tensors["OutputTensor"], bindings["OutputTensor"],
                     self.compute(call, x))

    # -- the float32 computation ----------------------------------------------------------------
    def _desc_floats(self, call: OperatorCall) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Scales and pixel offsets as the float32 values the desc holds (RESAMPLE: 0.5 / -0.5)."""
        a = call.attributes
        n = len(a["Scales"])
        scales = np.asarray(a["Scales"], dtype=F32)
        if "InputPixelOffsets" in a:  # RESAMPLE1, and RESAMPLE2 (whose LINEAR is RESAMPLE1's)
            in_off = np.asarray(a["InputPixelOffsets"], dtype=F32)
            out_off = np.asarray(a["OutputPixelOffsets"], dtype=F32)
        else:
            in_off, out_off = np.full(n, 0.5, dtype=F32), np.full(n, -0.5, dtype=F32)
        if not self.INPUT_OFFSETS:
            in_off = np.zeros(n, dtype=F32)
        return scales, in_off, out_off

    def _axis(self, out_size: int, in_size: int, scale: F32, in_off: F32, out_off: F32,
              interpolate: bool, shift: float
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(i0, i1, weight of i0, weight of i1) of every output index along one dimension."""
        o = np.arange(out_size, dtype=F32)
        reciprocal = F32(1) / scale
        if self.FMA:
            c = fma(o - out_off, np.full_like(o, reciprocal), np.full_like(o, -in_off))
        else:
            c = (o - out_off) * reciprocal - in_off
        c = np.clip(c + F32(shift), F32(0), F32(in_size - 1))
        floor = np.floor(c)
        t = (c - floor) if interpolate else np.zeros_like(c)
        i0 = floor.astype(np.int64)
        i1 = np.minimum(i0 + 1, in_size - 1)
        return i0, i1, F32(1) - t, t

    def compute(self, call: OperatorCall, x: np.ndarray) -> np.ndarray:
        out_desc = call.tensors["OutputTensor"]
        dims = x.ndim
        scales, in_off, out_off = self._desc_floats(call)
        keep = dims if self.INTERPOLATED is None else self.INTERPOLATED
        axes = [self._axis(out_desc.sizes[d], x.shape[d], scales[d], in_off[d], out_off[d],
                           interpolate=d >= dims - keep,
                           shift=self.SHIFT if d == dims - 1 else 0.0)
                for d in range(dims)]
        x32 = x.astype(F32)
        acc = np.zeros(out_desc.sizes, dtype=F32)
        for corner in itertools.product((0, 1), repeat=dims):
            weight = None
            for d, k in enumerate(corner):
                w = axes[d][2 + k].reshape([-1 if j == d else 1 for j in range(dims)])
                weight = w if weight is None else weight * w  # float32 products
            taps = x32[np.ix_(*(axes[d][k] for d, k in enumerate(corner)))]
            acc = fma(weight, taps, acc) if self.FMA else acc + weight * taps
        return self._convert(acc, out_desc.data_type.numpy_dtype)

    def _convert(self, y: np.ndarray, dtype: np.dtype) -> np.ndarray:
        if np.issubdtype(dtype, np.floating):
            return y.astype(dtype)  # float16: one rounding of the float32 result
        info = np.iinfo(dtype)
        whole = np.rint(y) if self.ROUNDING == "nearest" else np.trunc(y)
        return np.clip(whole, info.min, info.max).astype(dtype)


def _variant(name: str, **attrs: object) -> type[Float32LinearBackend]:
    return type(name, (Float32LinearBackend,), {"name": name, **attrs})


FAITHFUL = [
    _variant("Float32Linear", FMA=False, ROUNDING="nearest"),
    _variant("Float32LinearTruncating", FMA=False, ROUNDING="truncate"),
    _variant("Float32LinearFMA", FMA=True, ROUNDING="nearest"),
    _variant("Float32LinearFMATruncating", FMA=True, ROUNDING="truncate"),
]
#: The cases each faithful variant runs: truncation changes integer outputs only (the float
#: path is the same code), so the truncating variants run the INT8/UINT8 cases.
FAITHFUL_SUBSET = {b: "integer" if b.ROUNDING == "truncate" else "all" for b in FAITHFUL}
FAITHFUL_TYPES = {"all": {"FLOAT32", "FLOAT16", "INT8", "UINT8"}, "integer": {"INT8", "UINT8"}}
OFF_BY_ONE = _variant("OffByOnePixel", SHIFT=1.0)
NO_INPUT_OFFSET = _variant("IgnoresInputOffset", INPUT_OFFSETS=False)
HW_ONLY = _variant("InterpolatesHWOnly", INTERPOLATED=2)


# -- cases ----------------------------------------------------------------------------------------
@cache
def linear_cases() -> tuple[Case, ...]:
    cases = tuple(c for c in load_cases([OFFSETS])
                  if c.calls[0].call.attributes["InterpolationMode"] == "LINEAR")
    assert len(cases) > 300 and all(len(c.calls) == 1 for c in cases)
    return cases


@cache
def run(backend: type[Backend], subset: str = "all") -> tuple[tuple[Case, ...],
                                                               tuple[Result, ...]]:
    cases = tuple(c for c in linear_cases() if SUBSETS[subset](c))
    return cases, tuple(run_cases(cases, backend()))


def _ref(case: Case, tensor: str) -> str:
    return f"{case.calls[0].name}.{tensor}"


def _attrs(case: Case) -> Mapping[str, object]:
    return case.calls[0].call.attributes


SUBSETS = {
    "all": lambda case: True,
    "integer": lambda case: case.calls[0].call.tensors["OutputTensor"].data_type.name in (
        "INT8", "UINT8"),
    # a pixel off along the innermost dimension shows where that dimension has 2 pixels or more
    "innermost": lambda case: case.calls[0].call.tensors["InputTensor"].sizes[-1] > 1,
    # RESAMPLE's offsets are 0.5 / -0.5; RESAMPLE1's as stated
    "input-offset": lambda case: (case.operators == ("RESAMPLE",)
                                  or any(_attrs(case)["InputPixelOffsets"])),
    "outer-scaled": lambda case: (len(_attrs(case)["Scales"]) == 4
                                  and any(s != 1 for s in _attrs(case)["Scales"][:2])),
}


def _judged(case: Case, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(center, bound) of the case's output, as the runner judges it: the reference's model, or
    the case's exact values with the model's bound ('tolerance: model', the affine cases)."""
    call = case.calls[0].call
    model = ops.get(call.operator).expected(call, {"InputTensor": x})["OutputTensor"]
    exp = case.expected[_ref(case, "OutputTensor")]
    if exp.kind == "reference":
        return model.center, model.bound
    assert exp.model, case.id
    return sources.exact_values(exp.data, call.tensors["OutputTensor"]), model.bound


@cache
def error_ratios(backend: type[Float32LinearBackend], subset: str = "all"
                 ) -> dict[str, tuple[float, str]]:
    """Per output type, the largest |got - center| / bound over all elements of the cases, with
    where it was."""
    worst: dict[str, tuple[float, str]] = {}
    impl = backend()
    for case in filter(SUBSETS[subset], linear_cases()):
        call = case.calls[0].call
        desc = call.tensors["InputTensor"]
        x = logical_values(case.inputs[_ref(case, "InputTensor")], desc)
        got = impl.compute(call, x).astype(np.float64)
        center, bound = _judged(case, x)
        ratio = np.abs(got - center) / bound
        k = int(np.argmax(ratio))
        where = (f"{case.id} element {list(np.unravel_index(k, ratio.shape))}: "
                 f"error {abs(got.flat[k] - center.flat[k]):.3g}, bound {bound.flat[k]:.3g}")
        key = desc.data_type.name
        if key not in worst or ratio.flat[k] > worst[key][0]:
            worst[key] = (float(ratio.flat[k]), where)
    return worst


# -- faithful float32 implementations pass -------------------------------------------------------
@pytest.mark.parametrize("backend", FAITHFUL, ids=[b.__name__ for b in FAITHFUL])
def test_faithful_float32_implementation_passes(backend: type[Float32LinearBackend]) -> None:
    subset = FAITHFUL_SUBSET[backend]
    cases, results = run(backend, subset)
    bad = [f"{r.id}: {r.status} {r.message[:300]}" for r in results if r.status != "PASS"]
    assert not bad, f"{len(bad)} of {len(results)} linear cases not PASS: {bad[:3]}"
    types = {c.calls[0].call.tensors["OutputTensor"].data_type.name for c in cases}
    assert types == FAITHFUL_TYPES[subset]


@pytest.mark.parametrize("backend", FAITHFUL, ids=[b.__name__ for b in FAITHFUL])
def test_faithful_float32_error_within_bound(backend: type[Float32LinearBackend]) -> None:
    subset = FAITHFUL_SUBSET[backend]
    worst = error_ratios(backend, subset)
    assert set(worst) == FAITHFUL_TYPES[subset]
    over = {t: w for t, w in worst.items() if w[0] > 1}
    assert not over, f"error above the bound: {over}"


def test_float32_implementations_are_not_the_reference() -> None:
    """The float32 paths round differently from the float64 reference (and FMA from no FMA) on
    some FLOAT32 elements, so the passes above are a test of the bound, not of a copy."""
    plain, fused = FAITHFUL[0](), FAITHFUL[2]()
    differs = {"reference": 0, "fma": 0}
    for case in linear_cases():
        call = case.calls[0].call
        if call.tensors["InputTensor"].data_type.name != "FLOAT32":
            continue
        x = logical_values(case.inputs[_ref(case, "InputTensor")], call.tensors["InputTensor"])
        spec = ops.get(call.operator)
        ref = spec.reference(call, {"InputTensor": x})["OutputTensor"]
        a, b = plain.compute(call, x), fused.compute(call, x)
        differs["reference"] += int(np.count_nonzero(a != ref))
        differs["fma"] += int(np.count_nonzero(a != b))
    assert differs["reference"] > 0 and differs["fma"] > 0, differs


def test_truncation_differs_from_rounding_on_integers() -> None:
    """Truncating and rounding to nearest are both tried on real differences."""
    x_case = next(c for c in linear_cases()
                  if c.calls[0].call.tensors["InputTensor"].data_type.name == "INT8"
                  and c.expected[_ref(c, "OutputTensor")].kind == "reference")
    call = x_case.calls[0].call
    x = logical_values(x_case.inputs[_ref(x_case, "InputTensor")], call.tensors["InputTensor"])
    assert np.any(FAITHFUL[0]().compute(call, x) != FAITHFUL[1]().compute(call, x)), x_case.id


# -- wrong implementations fail -------------------------------------------------------------------
REJECTED = [
    (OFF_BY_ONE, "innermost", "a pixel off along the innermost dimension"),
    (NO_INPUT_OFFSET, "input-offset", "InputPixelOffsets ignored"),
    (HW_ONLY, "outer-scaled", "only H and W interpolated, batch/channel scaled"),
]


# each wrong implementation over its subset of the suite: 10-25 s each, CI's certification step
@pytest.mark.certification
@pytest.mark.parametrize(("backend", "subset", "what"), REJECTED,
                         ids=[b.__name__ for b, _, _ in REJECTED])
def test_wrong_implementation_fails(backend: type[Backend], subset: str, what: str) -> None:
    _, results = run(backend, subset)
    bad = [r for r in results if r.status == "FAIL"]
    errors = [r for r in results if r.status == "ERROR"]
    assert not errors, errors[0].message
    assert len(bad) >= len(results) // 2, (
        f"{what}: only {len(bad)} of {len(results)} {subset} linear cases FAIL")
    for r in bad:
        assert "elements differ" in r.message and "linear" in r.message, r.message
