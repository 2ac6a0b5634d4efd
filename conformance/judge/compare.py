"""How an output is judged: the expectation models (their data type, Expected, is
conformance/expected.py, which the operators build) and the mismatch messages.

Three kinds, each exact where the spec is exact and bounded where it is not:
- exact:  every element's bits equal the expected bits (NaN payloads and -0.0 included). Used for
          all data movement, for nearest-neighbour resampling and for inline expected values.
- one_of: each element equals, bit for bit, the element of one of several acceptable arrays
          (nearest-neighbour at a tie of the coordinate: spec-notes §4).
- within: |got - center| <= bound per element, computed in float64; a NaN center needs a NaN.
          Used for linear resampling (float outputs: error bound; integer outputs: either integer
          neighbour of the exact value, spec-notes §4).
any_nan on an exact or one_of model accepts any NaN where a NaN is expected (nearest
resampling's envelope: a NaN's bits need only survive a raw move, docs/tolerances.md).

Each output has a strict model and, where the platform's arithmetic rules allow more, a legal
envelope (Expected.legal): judge() tells PASS, QUALITY_WARNING (inside the envelope, outside the
strict model) and FAIL, and the margin (largest |error| / bound inside the envelope).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from conformance.expected import Expected

SHOWN = 5  # mismatching elements listed in a message


def _bits(a: np.ndarray) -> np.ndarray:
    return a.view(np.dtype(f"<u{a.dtype.itemsize}"))


def _differ(got: np.ndarray, want: np.ndarray, any_nan: bool) -> np.ndarray:
    bad = _bits(got) != _bits(want)
    if any_nan and np.issubdtype(want.dtype, np.floating):
        bad &= ~(np.isnan(want) & np.isnan(got))
    return bad


def mismatches(got: np.ndarray, exp: Expected) -> np.ndarray:
    """Boolean array: True where got is not acceptable under exp."""
    if got.shape != exp.values.shape:
        raise ValueError(f"shape {got.shape} against expected {exp.values.shape}")
    if exp.kind in ("exact", "one_of"):
        bad = _differ(got, exp.values, exp.any_nan)
        for alt in exp.alternatives:
            bad &= _differ(got, alt, exp.any_nan)
        return bad
    center, bound = exp.band
    center = center.astype(np.float64)
    value = got.astype(np.float64)
    with np.errstate(invalid="ignore"):
        ok = np.abs(value - center) <= bound
    ok |= np.isnan(center) & np.isnan(value)
    ok |= np.isinf(center) & (value == center)
    if exp.nan_ok is not None:
        ok |= exp.nan_ok & np.isnan(value)
    return ~ok


def others_taken(got: np.ndarray, exp: Expected) -> int:
    """How many elements of an acceptable output took another of a one_of model's values than
    its first (the other neighbour at a tie); 0 for the other kinds."""
    if exp.kind != "one_of":
        return 0
    return int(np.count_nonzero(_differ(got, exp.values, exp.any_nan)))


def recentred(values: np.ndarray, envelope: Expected, rule: str = "") -> Expected:
    """An envelope's judgement around other values of the same shape: their bits for exact and
    one-of models (any NaN for a NaN where the envelope allows that), the same bound (and NaN
    allowance) for 'within'. Used to judge a relation between two outputs, and a backend's
    output against a misreading's."""
    rule = rule or envelope.rule
    if envelope.kind == "within":
        return Expected(values, kind="within", center=values.astype(np.float64),
                        bound=envelope.bound, nan_ok=envelope.nan_ok, rule=rule)
    return Expected(values, any_nan=envelope.any_nan, rule=rule)


def margin(got: np.ndarray, exp: Expected) -> float | None:
    """The largest |got - center| / bound over the elements of a 'within' model whose error is
    finite (NaN and infinity matched as such count 0); None for the other kinds."""
    if exp.kind != "within":
        return None
    center, bound = exp.band
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        ratio = np.abs(got.astype(np.float64) - center) / bound
    ratio = ratio[np.isfinite(ratio)]
    return float(ratio.max()) if ratio.size else 0.0


@dataclass
class Judgement:
    """One output judged against its strict model and its legal envelope."""

    status: Literal["PASS", "QUALITY_WARNING", "FAIL"]
    bad: np.ndarray  # elements outside the envelope (FAIL) or the strict model (warning)
    model: Expected  # the model `bad` is relative to
    margin: float | None
    #: The admissible reading of an open region the output was judged by (one of
    #: Expected.readings), where it is not the suite's own.
    reading: Expected | None = None


def judge(got: np.ndarray, exp: Expected) -> Judgement:
    """FAIL where an element is outside the legal envelope; QUALITY_WARNING where all are inside
    it but some are outside the strict model; PASS otherwise. In an open region of the spec
    (exp.readings) an output that FAILs the suite's reading is judged by the first admissible
    reading it fits; it FAILs only when it fits none (the judgement then shows the suite's)."""
    judged = _judge_one(got, exp)
    if judged.status != "FAIL":
        return judged
    for reading in exp.readings:
        other = _judge_one(got, reading)
        if other.status != "FAIL":
            other.reading = reading
            return other
    return judged


def _judge_one(got: np.ndarray, exp: Expected) -> Judgement:
    envelope = exp.envelope
    bad = mismatches(got, envelope)
    where = margin(got, envelope)
    if bad.any():
        return Judgement("FAIL", bad, envelope, where)
    if envelope is not exp:
        strict_bad = mismatches(got, exp)
        if strict_bad.any():
            return Judgement("QUALITY_WARNING", strict_bad, exp, where)
    return Judgement("PASS", bad, exp, where)


def format_value(v: np.generic) -> str:
    """A value as a reader wants it: the number, plus its bits where those matter."""
    if np.issubdtype(v.dtype, np.floating):
        bits = int(_bits(np.asarray(v)).item())
        width = v.dtype.itemsize * 2
        text = repr(float(v)) if not np.isnan(v) else "nan"
        if np.isnan(v) or (v == 0 and np.signbit(v)) or v.dtype == np.float16:
            return f"{text} (0x{bits:0{width}x})"
        return text
    return str(int(v))


def describe(got: np.ndarray, exp: Expected, bad: np.ndarray, name: str) -> str:
    """'OutputTensor: 3 of 48 elements differ (bit-exact): [0, 1, 0, 2] expected 5, got 7; ...'"""
    where = np.argwhere(bad)
    parts = []
    for index in where[:SHOWN]:
        idx = tuple(int(i) for i in index)
        want = format_value(exp.values[idx])
        if exp.kind == "one_of":
            others = {format_value(a[idx]) for a in exp.alternatives} - {want}
            if others:
                want += " or " + " or ".join(sorted(others))
        elif exp.kind == "within":
            center, bound = exp.band
            want = f"{float(center[idx])!r} ± {float(bound[idx]):.3g}"
        if exp.any_nan and want.startswith("nan "):
            want += " or any NaN"
        parts.append(f"{list(idx)} expected {want}, got {format_value(got[idx])}")
    more = f"; and {len(where) - SHOWN} more" if len(where) > SHOWN else ""
    return (f"{name}: {len(where)} of {bad.size} elements differ ({exp.rule}): "
            + "; ".join(parts) + more)


def fits_no_reading(exp: Expected) -> str:
    """What a FAIL in an open region adds to its message: the other admissible readings, none of
    which the output fits (empty outside open regions)."""
    if not exp.readings:
        return ""
    return ("; nor does it fit any other admissible reading of this open region: "
            + "; ".join(r.rule for r in exp.readings))


#: Tensors up to this many elements are kept whole in a failing result, for the report's grids.
GRID_LIMIT = 256


def grid(name: str, got: np.ndarray, exp: Expected | None = None,
         bad: np.ndarray | None = None) -> dict[str, Any] | None:
    """A small tensor as the report draws it: shape, values as text, and, for an output, the
    expected values, which elements differ and a relative error in [0, 1] per element (for a
    heat map of float outputs). None when the tensor is too large to keep."""
    if got.size > GRID_LIMIT:
        return None
    out: dict[str, Any] = {"tensor": name, "shape": list(got.shape),
                           "got": [format_value(v) for v in got.ravel()]}
    if exp is not None and bad is not None:
        out["expected"] = [format_value(v) for v in exp.values.ravel()]
        out["bad"] = [int(b) for b in bad.ravel()]
        if np.issubdtype(got.dtype, np.floating):
            with np.errstate(invalid="ignore", over="ignore"):
                err = np.abs(got.astype(np.float64) - exp.values.astype(np.float64))
            err = np.where(np.isfinite(err), err, np.inf)
            finite = err[np.isfinite(err)]
            top = float(finite.max()) if finite.size and finite.max() > 0 else 1.0
            out["error"] = [1.0 if not np.isfinite(e) else round(float(e) / top, 3)
                            for e in err.ravel()]
    return out


def kept(name: str, got: np.ndarray, exp: Expected | None = None,
         bad: np.ndarray | None = None) -> dict[str, Any]:
    """A tensor as a failing result keeps it for the report: its grid where it is small enough
    (grid), else its name and shape and why its grid is left out: "left_out": {"elements": its
    size, "limit": GRID_LIMIT}."""
    return grid(name, got, exp, bad) or {
        "tensor": name, "shape": list(got.shape),
        "left_out": {"elements": int(got.size), "limit": GRID_LIMIT}}
