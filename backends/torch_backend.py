"""PyTorch as a peer: DEPTH_TO_SPACE1 / SPACE_TO_DEPTH1 through F.pixel_shuffle /
F.pixel_unshuffle, RESAMPLE1 / RESAMPLE through F.interpolate, on the CPU (`torch`) or a CUDA
device (`torch-cuda`). Only what torch itself can express runs; the rest is NOT_SUPPORTED with the
reason (docs/peer-torch.md, spec-notes §5):

- pixel_shuffle is COLUMN_ROW_DEPTH (pixel_unshuffle its inverse). DEPTH_COLUMN_ROW, and so the
  original DEPTH_TO_SPACE / SPACE_TO_DEPTH (DCR by definition), are not what it does.
- F.interpolate, per DML (InputPixelOffset, OutputPixelOffset) pair: 'nearest' is (0.5, 0)
  (index floor(o / Scale)), 'nearest-exact' is (0.5, -0.5) (floor((o + 0.5) / Scale)), and
  'linear' / 'bilinear' / 'trilinear' with align_corners=False are (0.5, -0.5). The scale is the
  case's float32 Scale (scale_factor, recompute_scale_factor=False), so the output size is
  floor(InputSize * Scale): DML's cropping and clamping to another OutputTensor size is not
  expressible. One mode applies to every resampled dimension.
- torch resamples the dimensions after (batch, channel), at most three. A DML dimension that the
  call leaves unchanged (the reference maps output index o to input index o) folds into the
  batch; the others must be the trailing ones. A 4-D call scaling H and W is (N, C, H, W)
  bilinear; one scaling C, H and W (not N) is trilinear on (1, N, C, H, W); a 1-, 2- or 3-D call
  is (1, 1, ...) with 1, 2 or 3 spatial dims; a call scaling N is not expressible.
- Data types: found by running each function (and interpolation mode and spatial rank) on a
  tiny tensor of every type once per device; torch's own error text is the reason for the
  types it refuses. Packed tensors only: torch is handed logical tensors, strides are not its.
- RESAMPLE2 / RESAMPLE3: NEAREST_NEIGHBOR with RoundingDirection DECREASING (floor(c)) only:
  'nearest' is offsets (0, 0) (floor(o / Scale)), 'nearest-exact' (0, -0.5) (floor((o + 0.5) /
  Scale)); torch has no ceil. LINEAR as above, whatever the direction ("affects only" nearest).
  RESAMPLE3's Antialiased, where the page stretches a dimension (1/Scale > 2), is 'bilinear' with
  antialias=True (torch antialiases bilinear and bicubic only, so two spatial dims), provided no
  dimension has a Scale in [0.5, 1): torch stretches every Scale < 1, the page only 1/Scale > 2.
  Where the page stretches nothing, an Antialiased call is plain linear. torch's filter drops the
  taps beyond the input's edges and renormalises (the suite repeats the edge element: a region
  the page leaves open, so such cases are ambiguous).
- torch validates no DirectML desc (rejects_invalid False).
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import numpy as np

from conformance import ops
from conformance.backend import Backend, Capabilities
from conformance.levels import HIGHEST, FeatureLevel
from conformance.ops import OperatorCall
from conformance.ops.resample import (
    NearestRounding,
    ResampleFamily,
    coordinates,
    nearest_index,
)
from conformance.tensors import DataType, read_tensor, write_tensor

#: DML data type -> torch dtype attribute name.
TORCH_DTYPES = {
    DataType.FLOAT32: "float32", DataType.FLOAT16: "float16", DataType.FLOAT64: "float64",
    DataType.UINT8: "uint8", DataType.UINT16: "uint16", DataType.UINT32: "uint32",
    DataType.UINT64: "uint64", DataType.INT8: "int8", DataType.INT16: "int16",
    DataType.INT32: "int32", DataType.INT64: "int64",
}
#: The F.interpolate nearest modes, by the DML (InputPixelOffset, OutputPixelOffset) pair:
#: RESAMPLE(1)'s floor(c + 0.5), and RESAMPLE2/3's floor(c) (RoundingDirection DECREASING).
NEAREST_MODES = {(0.5, 0.0): "nearest", (0.5, -0.5): "nearest-exact"}
FLOOR_NEAREST_MODES = {(0.0, 0.0): "nearest", (0.0, -0.5): "nearest-exact"}
#: The kind of a RESAMPLE3 call torch antialiases: 'bilinear' with antialias=True.
ANTIALIAS = "linear-antialias"
HALF_PIXEL = (0.5, -0.5)  # linear modes, align_corners=False
LINEAR_MODES = {1: "linear", 2: "bilinear", 3: "trilinear"}
OFFSET_PAIRS = frozenset(NEAREST_MODES) | frozenset(FLOOR_NEAREST_MODES) | {HALF_PIXEL}
SHUFFLES = {"DEPTH_TO_SPACE1": "pixel_shuffle", "SPACE_TO_DEPTH1": "pixel_unshuffle"}
RESAMPLES = ("RESAMPLE1", "RESAMPLE", "RESAMPLE2", "RESAMPLE3")
#: The operators execute dispatches on (to pixel_shuffle / pixel_unshuffle / F.interpolate), by
#: exact name: the backend claims these and no others.
OPERATORS = (*SHUFFLES, *RESAMPLES)
NOT_CRD = ("torch's pixel_shuffle / pixel_unshuffle order is COLUMN_ROW_DEPTH (depth channel "
           "c * B^2 + (y % B) * B + x % B); DEPTH_COLUMN_ROW is not expressible with them")
NOT_INSTALLED = "torch is not installed (pip install torch)"

_PROBES: dict[tuple[str, str], dict[tuple[str, str], str | None]] = {}


def import_torch() -> ModuleType | None:
    """torch, or None when it cannot be imported."""
    try:
        return importlib.import_module("torch")
    except ImportError:
        return None


def interpolate_mode(kind: str, rank: int) -> str:
    """The F.interpolate mode: kind is a nearest mode, "linear" or ANTIALIAS; rank the spatial
    dims."""
    return LINEAR_MODES[rank] if kind in ("linear", ANTIALIAS) else kind


def probe(torch: ModuleType, device: str) -> dict[tuple[str, str], str | None]:
    """(function, DML type name) -> None where torch runs it on a tiny tensor, else torch's
    error text. Functions: pixel_shuffle, pixel_unshuffle and interpolate:<kind>:<rank>.
    Run once per torch version and device."""
    key = (torch.__version__, device)
    if key in _PROBES:
        return _PROBES[key]
    f = torch.nn.functional
    trials: dict[str, Any] = {
        "pixel_shuffle": lambda x: f.pixel_shuffle(x, 2),
        "pixel_unshuffle": lambda x: f.pixel_unshuffle(x, 2)}
    shapes: dict[str, list[tuple[int, ...]]] = {"pixel_shuffle": [(1, 4, 2, 2)],
                                               "pixel_unshuffle": [(1, 1, 4, 4)]}
    for kind in (*NEAREST_MODES.values(), "linear", ANTIALIAS):
        for rank in LINEAR_MODES if kind != ANTIALIAS else (2,):  # bilinear's antialias only
            name = f"interpolate:{kind}:{rank}"
            trials[name] = (lambda m, aa: lambda x: f.interpolate(
                x, scale_factor=0.25 if aa else 2.0, mode=m, recompute_scale_factor=False,
                align_corners=False if m in LINEAR_MODES.values() else None, antialias=aa)
            )(interpolate_mode(kind, rank), kind == ANTIALIAS)
            size = 8 if kind == ANTIALIAS else 3
            shapes[name] = [(1, 1) + (size,) * rank, (2, 3) + (size,) * rank]
    found: dict[tuple[str, str], str | None] = {}
    for name, trial in trials.items():
        for dml, attr in TORCH_DTYPES.items():
            dtype = getattr(torch, attr, None)  # uint16/32/64 exist from torch 2.3 on
            error = None if dtype is not None else f"torch {torch.__version__} has no {attr}"
            for shape in shapes[name] if dtype is not None else ():
                try:
                    trial(torch.zeros(shape, dtype=dtype, device=device))
                except Exception as exc:  # torch's refusal: RuntimeError, NotImplementedError
                    error = f"{type(exc).__name__}: {str(exc).splitlines()[0]}"
                    break
            found[(name, dml.name)] = error
    _PROBES[key] = found
    return found


@dataclass(frozen=True)
class ResamplePlan:
    """One RESAMPLE(1) call as an F.interpolate call."""

    mode: str  # the F.interpolate mode
    kind: str  # "nearest", "nearest-exact", "linear" or ANTIALIAS (bilinear, antialias=True)
    rank: int  # spatial dimensions
    shape: tuple[int, ...]  # the torch input shape: (batch, channel, spatial...)
    scale_factor: tuple[float, ...]
    out_shape: tuple[int, ...]  # what torch must return


def _unchanged(out: int, size: int, scale: float, pair: tuple[float, float], linear: bool,
               rounding: NearestRounding) -> bool:
    """Whether the reference maps every output index o of this dimension to input index o."""
    if out != size:
        return False
    c, _ = coordinates(out, size, scale, *pair)
    o = np.arange(out)
    index = nearest_index(c + rounding.shift, rounding.halves_up)
    return bool(np.array_equal(c, o) if linear else np.array_equal(index, o))


def _antialias_reason(call: OperatorCall) -> str | None:
    """Why torch's antialias cannot express this antialiased call: a Scale in [0.5, 1), which
    torch stretches by 1 / Scale and the page leaves linear (it stretches 1/Scale > 2 only)."""
    between = [d for d, s in enumerate(np.asarray(call.attributes["Scales"], np.float32))
               if 0.5 <= s < 1]
    if between:
        which = "dimension" if len(between) == 1 else "dimensions"
        return (f"Antialiased with a Scale in [0.5, 1) in {which} {between}: torch's "
                "antialias stretches their filter by 1 / Scale, the page's RESAMPLE3 only "
                "where 1/Scale > 2")
    return None


def plan_resample(call: OperatorCall, runs: Callable[[str, int], bool] | None = None
                  ) -> ResamplePlan | str:
    """The F.interpolate call for a RESAMPLE(1) call, or why torch cannot express it.

    runs(kind, rank): whether torch takes the call's data type in that mode with that many
    spatial dims; the natural rank is taken where it does, else a larger one that does (a 1-D
    UINT8 linear call runs as bilinear on (1, 1, 1, W)). The data type is not judged here."""
    spec = ops.get(call.operator)
    assert isinstance(spec, ResampleFamily)
    a = call.attributes
    sizes = call.tensors["InputTensor"].sizes
    out = call.tensors["OutputTensor"].sizes
    scales = [float(s) for s in np.asarray(a["Scales"], dtype=np.float32)]
    in_off, out_off = spec.offsets(call)
    pairs = [(float(i), float(o)) for i, o in zip(in_off, out_off, strict=True)]
    linear = a["InterpolationMode"] == "LINEAR"
    rounding = spec.nearest_rounding(call)
    nearest_modes = NEAREST_MODES
    if "RoundingDirection" in a and not linear:  # RESAMPLE2/3: floor(c) or ceil(c)
        if a["RoundingDirection"] != "DECREASING":
            return (f"torch's nearest modes round down (floor); RoundingDirection "
                    f"{a['RoundingDirection']} is ceil(c)")
        nearest_modes = FLOOR_NEAREST_MODES
    # RESAMPLE3 where the page stretches a dimension (else it is linear, as RESAMPLE2)
    antialias = call.operator == "RESAMPLE3" and spec.antialias_axes(call) is not None
    refused = _antialias_reason(call) if antialias else None
    if refused:
        return refused
    linear_kind = ANTIALIAS if antialias else "linear"
    n = len(sizes)
    moving = [d for d in range(n)
              if not _unchanged(out[d], sizes[d], scales[d], pairs[d], linear, rounding)]
    needed = n - moving[0] if moving else 0
    if needed > 3:
        return (f"torch resamples at most the three dimensions after (batch, channel); this "
                f"call resamples dimensions {moving} of {n}, so {needed} trailing ones")
    if antialias and needed > 2:
        return (f"torch antialiases 'bilinear' (two spatial dimensions) only; this call "
                f"resamples dimension(s) {moving} of {n}")
    kinds = set()
    for d in moving:
        if linear and pairs[d] != HALF_PIXEL:
            return (f"torch's linear modes (align_corners=False) are half-pixel, offsets "
                    f"{HALF_PIXEL}; dimension {d} has {pairs[d]}")
        if not linear and pairs[d] not in nearest_modes:
            return (f"torch's nearest modes take offsets {sorted(nearest_modes)} ('nearest', "
                    f"'nearest-exact') for {rounding.words}; dimension {d} has {pairs[d]}")
        kinds.add(linear_kind if linear else nearest_modes[pairs[d]])
        expect = math.floor(sizes[d] * scales[d])
        if expect != out[d]:
            return (f"torch's output size is floor(InputSize * Scale) = {expect} along "
                    f"dimension {d}; this OutputTensor has {out[d]} (DML crops or clamps, "
                    "F.interpolate with the case's scale cannot)")
    if len(kinds) > 1:
        return f"torch applies one nearest mode to every dimension; this call needs {sorted(kinds)}"
    kind = kinds.pop() if kinds else ("linear" if linear else "nearest")
    preferred = n if n <= 3 else (2 if needed <= 2 else 3)
    if kind == ANTIALIAS:
        preferred = 2
    ranks = [preferred] + [r for r in LINEAR_MODES if r > preferred and kind != ANTIALIAS]
    rank = next((r for r in ranks if runs is None or runs(kind, r)), preferred)
    return _layout(kind, rank, sizes, out, scales, set(moving))


def _layout(kind: str, rank: int, sizes: tuple[int, ...], out: tuple[int, ...],
            scales: list[float], moving: set[int]) -> ResamplePlan:
    """The plan with `rank` spatial dims: the DML dims padded with leading 1s; those before the
    spatial ones fold into (batch, channel)."""
    pad = max(0, rank + 2 - len(sizes))
    padded = (1,) * pad + tuple(sizes)
    lead = padded[:-rank]
    lead2 = (math.prod(lead[:-1]), lead[-1])
    first = len(sizes) - rank  # DML index of the first spatial dim (negative: padding)
    factors = tuple(scales[d] if d in moving else 1.0 for d in range(first, len(sizes)))
    return ResamplePlan(
        mode=interpolate_mode(kind, rank), kind=kind, rank=rank, shape=lead2 + padded[-rank:],
        scale_factor=factors, out_shape=lead2 + (1,) * max(0, -first) + tuple(out)[max(first, 0):])


class TorchBackend(Backend):
    """torch on the CPU."""

    name = "torch"
    native = True
    device = "cpu"

    def __init__(self, feature_level: FeatureLevel | None = None) -> None:
        self.torch = import_torch()
        self.unavailable = self._unavailable()
        self._probes = {} if self.unavailable else probe(self._imported(), self.device)
        self._caps = self._claims()
        super().__init__(feature_level)

    def _unavailable(self) -> str | None:
        """Why nothing can run, or None."""
        return NOT_INSTALLED if self.torch is None else None

    @property
    def environment(self) -> dict[str, str]:
        """The torch that ran and its device (Backend.environment's `version`)."""
        if self.unavailable:
            return {}
        return {"version": f"torch {self._imported().__version__} {self.device}"}

    def _imported(self) -> ModuleType:
        """torch itself, once `unavailable` is known to be None (it is set wherever torch is)."""
        if self.torch is None:
            raise RuntimeError(NOT_INSTALLED)
        return self.torch

    def _claims(self) -> Capabilities:
        if self.unavailable:
            # Nothing runs. Claiming every feature of its operators lets each of their cases
            # reach unsupported_reason, so each one is NOT_SUPPORTED with this reason (not a
            # misleading partial one).
            return Capabilities.full(OPERATORS, f"{self.unavailable}: every case is "
                                                "NOT_SUPPORTED")
        functions = {**SHUFFLES, **{op: "interpolate" for op in RESAMPLES}}
        operators, refused = {}, []
        for op, fn in functions.items():
            table = frozenset().union(*(t.data_types for t in ops.get(op).support))
            runs = set()
            for t in sorted(table):
                errors = [e for (name, dt), e in self._probes.items()
                          if dt == t.name and name.split(":")[0] == fn]
                if any(e is None for e in errors):
                    runs.add(t)
                elif op in SHUFFLES or op == "RESAMPLE1":
                    refused.append(f"{fn} {t.name}: {errors[0]}")
            operators[op] = frozenset(runs)
        notes = (f"torch {self._imported().__version__} on {self.device}: pixel_shuffle / "
                 "pixel_unshuffle (COLUMN_ROW_DEPTH only; the DEPTH_COLUMN_ROW operators "
                 "DEPTH_TO_SPACE / SPACE_TO_DEPTH are not what they do) and F.interpolate "
                 "(nearest (0.5, 0), nearest-exact and linear (0.5, -0.5); output size "
                 "floor(InputSize * Scale)); logical tensors only. Types torch refuses: "
                 + "; ".join(refused))
        return Capabilities(operators=operators, feature_level=HIGHEST, strided=False,
                            arbitrary_offsets=False, offset_pairs=OFFSET_PAIRS,
                            rejects_invalid=False, notes=notes)

    @property
    def capabilities(self) -> Capabilities:
        return self._caps

    def probe_error(self, function: str, data_type: DataType) -> str | None:
        """torch's error for this function ('pixel_shuffle', 'interpolate:linear:2', ...) and
        data type on this device, or None when it runs."""
        return self._probes.get((function, data_type.name), "not probed")

    def _runs(self, data_type: DataType) -> Callable[[str, int], bool]:
        return lambda kind, rank: self.probe_error(f"interpolate:{kind}:{rank}", data_type) is None

    def unsupported_reason(self, call: OperatorCall) -> str | None:
        if self.unavailable:
            return self.unavailable
        dtype = call.tensors["InputTensor"].data_type
        where = f"torch {self._imported().__version__} ({self.device})"
        if call.operator in SHUFFLES:
            if call.attributes.get("Order", "DEPTH_COLUMN_ROW") != "COLUMN_ROW_DEPTH":
                return NOT_CRD
            error = self.probe_error(SHUFFLES[call.operator], dtype)
            return f"{where} {SHUFFLES[call.operator]} refuses {dtype.name}: {error}" if error \
                else None
        if call.operator in RESAMPLES:
            plan = plan_resample(call, self._runs(dtype))
            if isinstance(plan, str):
                return plan
            error = self.probe_error(f"interpolate:{plan.kind}:{plan.rank}", dtype)
            return (f"{where} F.interpolate mode {plan.mode!r} ({plan.rank} spatial dims) "
                    f"refuses {dtype.name}: {error}") if error else None
        return f"torch has no counterpart of {call.operator}"

    def execute(self, call: OperatorCall, bindings: Mapping[str, np.ndarray]) -> None:
        reason = self.unsupported_reason(call)
        if reason:
            raise RuntimeError(f"not expressible in torch: {reason}")
        torch = self._imported()
        f = torch.nn.functional
        src, dst = call.tensors["InputTensor"], call.tensors["OutputTensor"]
        x = torch.from_numpy(read_tensor(src, bindings["InputTensor"])).to(self.device)
        if call.operator in SHUFFLES:
            y = getattr(f, SHUFFLES[call.operator])(x, call.attributes["BlockSize"])
        else:
            plan = plan_resample(call, self._runs(src.data_type))
            assert isinstance(plan, ResamplePlan)
            linear = plan.kind in ("linear", ANTIALIAS)
            y = f.interpolate(x.reshape(plan.shape), scale_factor=list(plan.scale_factor),
                              mode=plan.mode, recompute_scale_factor=False,
                              align_corners=False if linear else None,
                              antialias=plan.kind == ANTIALIAS)
            if tuple(y.shape) != plan.out_shape:
                raise RuntimeError(f"F.interpolate returned {tuple(y.shape)}, the plan says "
                                   f"{plan.out_shape}")
        write_tensor(dst, bindings["OutputTensor"], y.reshape(dst.sizes).cpu().numpy())


class TorchCudaBackend(TorchBackend):
    """torch on the first CUDA device; every case NOT_SUPPORTED where torch sees none."""

    name = "torch-cuda"
    device = "cuda"

    def _unavailable(self) -> str | None:
        if self.torch is None:
            return NOT_INSTALLED
        if not self.torch.cuda.is_available():
            return (f"torch {self.torch.__version__} sees no CUDA device "
                    "(torch.cuda.is_available() is False)")
        return None
