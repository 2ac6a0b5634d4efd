"""JAX on its CPU backend (XLA) as a peer implementation (PyPI `jax`, the 'jax' extra).

Each call is one public JAX function, compiled by XLA for the call's shapes:
- LINEAR resampling: jax.image.scale_and_translate(method="linear"), whose output pixel o
  samples the input at (o + 0.5 - translation) / scale - 0.5. With scale = Scale and
  translation = 0.5 + OutputPixelOffset - Scale * (0.5 - InputPixelOffset) that is the page's
  coordinate (o - OutputPixelOffset) / Scale - InputPixelOffset (spec-notes §4), any offsets.
  JAX drops the taps outside the input and renormalises the others, which equals DirectML's
  edge clamp while the coordinate is within half a pixel of the input; beyond that JAX gives
  zero where DirectML clamps, so a call with such a coordinate is NOT_SUPPORTED. antialias=True
  where RESAMPLE3's Antialiased filter applies (JAX stretches every dimension whose Scale is
  below 1: the per-operator reading of spec-notes §11, its edges dropped and renormalised).
- NEAREST_NEIGHBOR: jax.image.resize(method="nearest"), index floor((o + 0.5) * In / Out): the
  page's index where the Scales are Out / In and the offsets make floor(c + 0.5) or the
  RoundingDirection's floor(c) that index (RESAMPLE, RESAMPLE1 with 0.5 / -0.5; RESAMPLE2/3
  DECREASING with 0 / -0.5); any other call is NOT_SUPPORTED.
- DEPTH_TO_SPACE(1) / SPACE_TO_DEPTH(1): jnp.reshape and jnp.transpose (XLA data movement),
  both orders, every data type (64-bit types with jax_enable_x64).

JAX returns floating output for integer images in LINEAR mode (the conversion back would be
this adapter's, not JAX's), so integer LINEAR is not claimed. No desc is validated
(rejects_invalid False: JAX knows nothing of DirectML's rules). Tensors are read and written
through their strides by the harness's helpers, so strided descs are claimed. Where JAX is not
installed the backend still loads, and every case is NOT_SUPPORTED with the reason.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cached_property
from typing import Any

import numpy as np

from conformance import ops
from conformance.backend import Backend, Capabilities
from conformance.levels import HIGHEST
from conformance.ops import OperatorCall
from conformance.ops.resample import ResampleFamily
from conformance.tensors import DataType, read_tensor, write_tensor

INSTALL = "jax is not installed: pip install -e '.[jax]' (the 'jax' extra)"
DEPTH_SPACE = ("DEPTH_TO_SPACE", "DEPTH_TO_SPACE1", "SPACE_TO_DEPTH", "SPACE_TO_DEPTH1")
RESAMPLES = ("RESAMPLE", "RESAMPLE1", "RESAMPLE2", "RESAMPLE3")
#: The operators execute dispatches on (and claims: no others).
OPERATORS = (*DEPTH_SPACE, *RESAMPLES)
FLOATS = frozenset({DataType.FLOAT32, DataType.FLOAT16, DataType.FLOAT64})
#: How far inside [-0.5, InputSize - 0.5] a LINEAR coordinate must lie (JAX compares it in
#: float32 to decide between its renormalised taps and zero).
EDGE_MARGIN = 1e-4


def _jax() -> Any:
    import jax

    jax.config.update("jax_enable_x64", True)  # FLOAT64, INT64, UINT64 as themselves
    jax.config.update("jax_platforms", "cpu")
    return jax


class JaxBackend(Backend):
    name = "jax"
    native = True

    @cached_property
    def unavailable(self) -> str | None:
        try:
            _jax()
        except ImportError:
            return INSTALL
        return None

    @property
    def version(self) -> str:
        jax = _jax()
        return f"jax {jax.__version__} ({jax.devices()[0].platform}, XLA)"

    @property
    def environment(self) -> dict[str, str]:
        return {} if self.unavailable else {"version": self.version}

    @cached_property
    def capabilities(self) -> Capabilities:
        if self.unavailable:
            return Capabilities.full({n: ops.get(n) for n in OPERATORS},
                                     f"{self.unavailable}; nothing runs")
        operators = {n: frozenset(ops.get(n).data_types) for n in OPERATORS}
        notes = (f"{self.version}: jax.image.scale_and_translate (LINEAR, any offsets, "
                 "antialias for RESAMPLE3), jax.image.resize (NEAREST_NEIGHBOR where the Scales "
                 "are Out / In and the offsets give its index), jnp.reshape / jnp.transpose "
                 "(depth/space). Not claimed: LINEAR coordinates beyond half a pixel outside "
                 "the input (JAX gives zero, DirectML clamps), integer LINEAR (JAX returns "
                 "floats), other nearest mappings. Validates no desc.")
        return Capabilities(operators=operators, feature_level=HIGHEST, strided=True,
                            arbitrary_offsets=True, rejects_invalid=False, notes=notes)

    # -- what JAX can express -------------------------------------------------------------------
    def unsupported_reason(self, call: OperatorCall) -> str | None:
        if self.unavailable:
            return self.unavailable
        if call.operator in DEPTH_SPACE:
            return None
        a = call.attributes
        spec = _resampler(call)
        if a["InterpolationMode"] == "LINEAR":
            if call.tensors["InputTensor"].data_type not in FLOATS:
                return ("jax.image returns floating output for an integer image in LINEAR "
                        "mode: the conversion back would be this adapter's, not JAX's")
            sizes = call.tensors["InputTensor"].sizes
            for d, (c, n) in enumerate(zip(spec.unclamped(call), sizes, strict=True)):
                if c.size and (c.min() < -0.5 + EDGE_MARGIN or c.max() > n - 0.5 - EDGE_MARGIN):
                    return (f"dimension {d} samples [{c.min():.4g}, {c.max():.4g}], beyond half "
                            f"a pixel outside its {n} elements: jax.image.scale_and_translate "
                            "gives zero there, where DirectML clamps to the edge")
            return None
        return nearest_gap(call)

    # -- running --------------------------------------------------------------------------------
    def execute(self, call: OperatorCall, bindings: Mapping[str, np.ndarray]) -> None:
        reason = self.unsupported_reason(call)
        if reason:
            raise RuntimeError(f"{self.name} cannot run this call: {reason}")
        inp, out = call.tensors["InputTensor"], call.tensors["OutputTensor"]
        x = read_tensor(inp, bindings["InputTensor"])
        if call.operator in DEPTH_SPACE:
            y = _depth_space(call, x)
        elif call.attributes["InterpolationMode"] == "LINEAR":
            y = _linear(call, x)
        else:
            y = np.asarray(_jax().image.resize(x, out.sizes, method="nearest"))
        if tuple(y.shape) != tuple(out.sizes) or y.dtype != out.data_type.numpy_dtype:
            raise RuntimeError(f"{self.version} returned {y.dtype} {list(y.shape)} for "
                               f"{out.data_type.name} {list(out.sizes)}")
        write_tensor(out, bindings["OutputTensor"], y)


def _resampler(call: OperatorCall) -> ResampleFamily:
    spec = ops.get(call.operator)
    assert isinstance(spec, ResampleFamily), call.operator
    return spec


def nearest_gap(call: OperatorCall) -> str | None:
    """Why jax.image.resize's nearest index floor((o + 0.5) * In / Out) is not this call's."""
    a = call.attributes
    spec = _resampler(call)
    ins, outs = call.tensors["InputTensor"].sizes, call.tensors["OutputTensor"].sizes
    scales = np.float32(a["Scales"])
    if any(n == 0 or s != np.float32(m / n) for s, n, m in zip(scales, ins, outs, strict=True)):
        return ("jax.image.resize's nearest takes its scale from the sizes (Out / In); these "
                f"Scales {list(map(float, scales))} are not {list(outs)} / {list(ins)}")
    direction = a.get("RoundingDirection")
    want = (0.0, -0.5) if direction == "DECREASING" else (0.5, -0.5) if direction is None else None
    if want is None:
        return ("jax.image.resize's nearest index is floor((o + 0.5) * In / Out); "
                f"RoundingDirection {direction} rounds up")
    inputs, outputs = spec.offsets(call)
    if any((float(i), float(o)) != want for i, o in zip(inputs, outputs, strict=True)):
        return (f"jax.image.resize's nearest index is the page's only with pixel offsets "
                f"{want[0]} / {want[1]} here")
    return None


def scale_and_translation(call: OperatorCall) -> tuple[np.ndarray, np.ndarray]:
    """jax.image.scale_and_translate's scale and translation per dimension that make its
    sample (o + 0.5 - translation) / scale - 0.5 the page's coordinate (o - OutputPixelOffset)
    / Scale - InputPixelOffset."""
    scales = np.float32(call.attributes["Scales"]).astype(np.float64)
    inputs, outputs = _resampler(call).offsets(call)
    return scales, 0.5 + outputs - scales * (0.5 - inputs)


def _linear(call: OperatorCall, x: np.ndarray) -> np.ndarray:
    jax = _jax()
    out = call.tensors["OutputTensor"]
    scales, translation = scale_and_translation(call)
    antialias = _resampler(call).antialias_axes(call) is not None
    y = jax.image.scale_and_translate(
        x, out.sizes, tuple(range(x.ndim)), jax.numpy.asarray(scales, np.float32),
        jax.numpy.asarray(translation, np.float32), method="linear", antialias=antialias)
    return np.asarray(y)


def _depth_space(call: OperatorCall, x: np.ndarray) -> np.ndarray:
    """NOTES §3 as JAX's reshape and transpose (the block and channel order of the Order)."""
    jnp = _jax().numpy
    b = call.attributes["BlockSize"]
    crd = call.attributes.get("Order") == "COLUMN_ROW_DEPTH"
    n, c, h, w = x.shape
    v = jnp.asarray(x)
    if call.operator.startswith("DEPTH_TO_SPACE"):
        k = c // (b * b)
        if crd:
            v = v.reshape(n, k, b, b, h, w).transpose(0, 1, 4, 2, 5, 3)
        else:
            v = v.reshape(n, b, b, k, h, w).transpose(0, 3, 4, 1, 5, 2)
        return np.asarray(v.reshape(n, k, h * b, w * b))
    v = v.reshape(n, c, h // b, b, w // b, b)
    if crd:
        v = v.transpose(0, 1, 3, 5, 2, 4)
    else:
        v = v.transpose(0, 3, 5, 1, 2, 4)
    return np.asarray(v.reshape(n, c * b * b, h // b, w // b))
