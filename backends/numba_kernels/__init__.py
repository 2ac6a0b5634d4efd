"""Numba kernels for the numba backend. They work on flat element views of the bound byte
buffers and address every element through its desc's strides (in elements), as a GPU kernel
would: one parallel loop over output rows, the row itself walked in the inner loop.

Data movement works on unsigned integers of the element's width, so bits move unchanged (NaN
payloads, -0.0, subnormals). Resampling precomputes, per dimension, the two taps and the weight
of every output index (the coordinate formula is the operator spec's), and computes in float32.
Compiled kernels are cached on disk (numba `cache=True`): a second process loads them.

depth.py: DEPTH_TO_SPACE / SPACE_TO_DEPTH, for any strides and the fast paths (contiguous
rows, NHWC); resample.py: nearest, linear and the antialiased filter of the RESAMPLE family;
stores.py: the vector stores (duplicating, interleaving, splitting, transposing; non-temporal
when streaming) both are built from, as LLVM intrinsics; common.py: the JIT options, ROWS and
`intrinsic`.

Numba checks a cached kernel against its own module's file only: after changing stores.py or
common.py (an intrinsic, ROWS), touch depth.py and resample.py, or clear their __pycache__,
so that no kernel compiled with the old one is loaded.
"""

from __future__ import annotations

from backends.numba_kernels.common import JIT, ROWS
from backends.numba_kernels.depth import (
    TILE,
    depth_row,
    depth_to_space,
    depth_to_space_blocked,
    depth_to_space_nhwc,
    depth_to_space_nhwc_bands,
    depth_to_space_rows,
    space_to_depth,
    space_to_depth_blocked,
    space_to_depth_rows,
    weave_row,
)
from backends.numba_kernels.resample import (
    blend_store,
    filter_pass,
    lerp_pairs,
    linear,
    linear_planes,
    linear_planes_f32,
    nearest,
    nearest_planes,
)
from backends.numba_kernels.stores import X86, transpose8

__all__ = [
    "JIT", "ROWS", "TILE", "X86", "blend_store", "depth_row", "depth_to_space",
    "depth_to_space_blocked", "depth_to_space_nhwc", "depth_to_space_nhwc_bands",
    "depth_to_space_rows", "filter_pass", "lerp_pairs", "linear", "linear_planes",
    "linear_planes_f32", "nearest", "nearest_planes", "space_to_depth", "space_to_depth_blocked",
    "space_to_depth_rows", "transpose8", "weave_row",
]
