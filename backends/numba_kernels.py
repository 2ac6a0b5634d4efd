"""Numba kernels for the numba backend. They work on flat element views of the bound byte
buffers and address every element through its desc's strides (in elements), as a GPU kernel
would: one parallel loop over output rows, the row itself walked in the inner loop.

Data movement works on unsigned integers of the element's width, so bits move unchanged (NaN
payloads, -0.0, subnormals). Resampling precomputes, per dimension, the two taps and the weight
of every output index (the coordinate formula is the operator spec's), and computes in float32.
Compiled kernels are cached on disk (numba `cache=True`): a second process loads them.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

JIT = {"cache": True, "nogil": True}


@njit(parallel=True, **JIT)
def depth_to_space(src: np.ndarray, dst: np.ndarray, sizes_out: np.ndarray, s_in: np.ndarray,
                   s_out: np.ndarray, block: int, crd: bool) -> None:
    """dst[n, c, y, x] = src[n, channel(c, y % b, x % b), y // b, x // b] (spec-notes §3)."""
    n_, c_, h_, w_ = sizes_out[0], sizes_out[1], sizes_out[2], sizes_out[3]
    w_in = w_ // block
    for row in prange(n_ * c_ * h_):
        n = row // (c_ * h_)
        c = (row // h_) % c_
        y = row % h_
        by = y % block
        out_base = n * s_out[0] + c * s_out[1] + y * s_out[2]
        for bx in range(block):
            if crd:
                channel = c * block * block + by * block + bx
            else:
                channel = (by * block + bx) * c_ + c
            in_base = n * s_in[0] + channel * s_in[1] + (y // block) * s_in[2]
            for ix in range(w_in):
                dst[out_base + (ix * block + bx) * s_out[3]] = src[in_base + ix * s_in[3]]


@njit(parallel=True, **JIT)
def space_to_depth(src: np.ndarray, dst: np.ndarray, sizes_in: np.ndarray, s_in: np.ndarray,
                   s_out: np.ndarray, block: int, crd: bool) -> None:
    """The inverse: dst[n, channel(c, by, bx), y // b, x // b] = src[n, c, y, x]."""
    n_, c_, h_, w_ = sizes_in[0], sizes_in[1], sizes_in[2], sizes_in[3]
    w_out = w_ // block
    for row in prange(n_ * c_ * h_):
        n = row // (c_ * h_)
        c = (row // h_) % c_
        y = row % h_
        by = y % block
        in_base = n * s_in[0] + c * s_in[1] + y * s_in[2]
        for bx in range(block):
            if crd:
                channel = c * block * block + by * block + bx
            else:
                channel = (by * block + bx) * c_ + c
            out_base = n * s_out[0] + channel * s_out[1] + (y // block) * s_out[2]
            for ox in range(w_out):
                dst[out_base + ox * s_out[3]] = src[in_base + (ox * block + bx) * s_in[3]]


@njit(parallel=True, **JIT)
def nearest(src: np.ndarray, dst: np.ndarray, sizes_out: np.ndarray, s_in: np.ndarray,
            s_out: np.ndarray, i0: np.ndarray, i1: np.ndarray, i2: np.ndarray,
            i3: np.ndarray) -> None:
    """dst[o] = src[index(o)]: the per-dimension indices are precomputed (a bit copy)."""
    n_, c_, h_, w_ = sizes_out[0], sizes_out[1], sizes_out[2], sizes_out[3]
    for row in prange(n_ * c_ * h_):
        n = row // (c_ * h_)
        c = (row // h_) % c_
        y = row % h_
        in_base = i0[n] * s_in[0] + i1[c] * s_in[1] + i2[y] * s_in[2]
        out_base = n * s_out[0] + c * s_out[1] + y * s_out[2]
        for x in range(w_):
            dst[out_base + x * s_out[3]] = src[in_base + i3[x] * s_in[3]]


@njit(parallel=True, fastmath=False, **JIT)
def linear(src: np.ndarray, dst: np.ndarray, sizes_out: np.ndarray, s_in: np.ndarray,
           s_out: np.ndarray, lo: np.ndarray, hi: np.ndarray, wt: np.ndarray, integer: bool,
           low: float, high: float) -> None:
    """Product-weighted sum of the 2^4 taps in float32. lo/hi: (4, max) tap indices per
    dimension; wt: (4, max) float32 weight of the hi tap. Taps of zero weight are skipped.
    integer: round to nearest (halves up) and clamp to [low, high]; else store the float."""
    n_, c_, h_, w_ = sizes_out[0], sizes_out[1], sizes_out[2], sizes_out[3]
    one = np.float32(1.0)
    for row in prange(n_ * c_ * h_):
        n = row // (c_ * h_)
        c = (row // h_) % c_
        y = row % h_
        out_base = n * s_out[0] + c * s_out[1] + y * s_out[2]
        wn, wc, wy = wt[0, n], wt[1, c], wt[2, y]
        for x in range(w_):
            wx = wt[3, x]
            acc = np.float32(0.0)
            for a in range(2):
                fa = (one - wn) if a == 0 else wn
                if fa == 0:
                    continue
                pa = (lo[0, n] if a == 0 else hi[0, n]) * s_in[0]
                for b in range(2):
                    fb = (one - wc) if b == 0 else wc
                    if fb == 0:
                        continue
                    pb = pa + (lo[1, c] if b == 0 else hi[1, c]) * s_in[1]
                    for d in range(2):
                        fd = (one - wy) if d == 0 else wy
                        if fd == 0:
                            continue
                        pd = pb + (lo[2, y] if d == 0 else hi[2, y]) * s_in[2]
                        v0 = np.float32(src[pd + lo[3, x] * s_in[3]])
                        v1 = np.float32(src[pd + hi[3, x] * s_in[3]])
                        acc += fa * fb * fd * (v0 + wx * (v1 - v0))
            if integer:
                acc = min(max(np.floor(acc + np.float32(0.5)), low), high)
            dst[out_base + x * s_out[3]] = acc
