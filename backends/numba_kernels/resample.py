"""RESAMPLE family kernels: nearest (a bit copy through per-dimension index tables), linear
(float32, the taps and weights precomputed per dimension), their plane kernels for contiguous
rows (the float32 one vectorised by its own intrinsics), and the antialiased linear filter of
RESAMPLE3, one dimension per pass."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from llvmlite import ir
from numba import njit, prange, types

from backends.numba_kernels.common import JIT, ROWS, intrinsic
from backends.numba_kernels.stores import (
    dup_line_store,
    dup_line_stream,
    dup_store,
    dup_stream,
    store_fence,
)

if TYPE_CHECKING:
    from numba.core.typing.context import BaseContext

    from backends.numba_kernels.common import Typed


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


@njit(parallel=True, **JIT)
def nearest_planes(src: np.ndarray, dst: np.ndarray, sizes_out: np.ndarray, w_in: int,
                   s_in: np.ndarray, s_out: np.ndarray, i0: np.ndarray, i1: np.ndarray,
                   i2: np.ndarray, i3: np.ndarray, pair: np.ndarray, align: int,
                   stream: bool) -> None:
    """nearest for contiguous rows. The output rows reading the same input row (two for a 2x
    upscale) are written in one pass from the same loads; columns gather through the column
    index table i3, except in the range `pair` where each input column repeats twice: there
    32 bytes of input become 64 of output per store (dup_line_store), then 8 to 16 (dup_store)
    for the rest. stream: large outputs are written with non-temporal stores where the row is
    16-byte aligned (align: the byte address of dst modulo 64): 16-byte stores up to a line
    boundary, then whole aligned 64-byte lines (dup_line_stream; the line that two rows share
    is written by 16-byte stores from both, so no line takes an ordinary store); the edges and
    unaligned rows with ordinary stores."""
    n_, c_, h_, w_ = sizes_out[0], sizes_out[1], sizes_out[2], sizes_out[3]
    size = dst.itemsize
    k = 8 // size  # input elements per duplicating store
    chunks = (h_ + ROWS - 1) // ROWS
    for job in prange(n_ * c_ * chunks):
        plane = job // chunks
        n = plane // c_
        c = plane % c_
        ib = i0[n] * s_in[0] + i1[c] * s_in[1]
        ob = n * s_out[0] + c * s_out[1]
        y = (job % chunks) * ROWS
        end = min(y + ROWS, h_)
        while y < end:
            r = i2[y]
            reps = 1
            while y + reps < end and i2[y + reps] == r:
                reps += 1
            s = src[ib + r * s_in[2]:ib + r * s_in[2] + w_in]
            start, stop = pair[0], pair[1]
            a0 = i3[start] if stop > start else 0
            dup = stop > start and a0 == i3[start + 1]
            for t in range(reps):
                o = ob + (y + t) * s_out[2]
                d = dst[o:o + w_]
                for x in range(start):
                    d[x] = s[i3[x]]
                if stop > start and not dup:  # two interleaved input runs: contiguous loads
                    a1 = i3[start + 1]
                    for i in range((stop - start) // 2):
                        d[start + 2 * i] = s[a0 + i]
                        d[start + 2 * i + 1] = s[a1 + i]
                elif dup:
                    pairs = (stop - start) // 2
                    i = 0
                    if stream:  # scalar to 16 bytes, 16-byte stores to a line, whole lines
                        while i < pairs and (align + (o + start + 2 * i) * size) % 16 != 0:
                            d[start + 2 * i] = d[start + 2 * i + 1] = s[a0 + i]
                            i += 1
                        while i + k <= pairs and (align + (o + start + 2 * i) * size) % 64:
                            dup_stream(s, a0 + i, d, start + 2 * i)
                            i += k
                        while i + 4 * k <= pairs:
                            dup_line_stream(s, a0 + i, d, start + 2 * i)
                            i += 4 * k
                    else:
                        while i + 4 * k <= pairs:
                            dup_line_store(s, a0 + i, d, start + 2 * i)
                            i += 4 * k
                    while i + k <= pairs:
                        if stream:
                            dup_stream(s, a0 + i, d, start + 2 * i)
                        else:
                            dup_store(s, a0 + i, d, start + 2 * i)
                        i += k
                    while i < pairs:
                        d[start + 2 * i] = d[start + 2 * i + 1] = s[a0 + i]
                        i += 1
                for x in range(max(start, stop), w_):
                    d[x] = s[i3[x]]
            y += reps
        if stream:
            store_fence()


@njit(inline="always", **JIT)
def _lerp_row(s: np.ndarray, lo: np.ndarray, hi: np.ndarray, w: np.ndarray,
              out: np.ndarray, pair: np.ndarray) -> None:
    """out[x] = lerp(s[lo[x]], s[hi[x]], w[x]). pair = (start, stop): a range where the taps
    advance by one input every two outputs with two alternating weights (a 2x upscale away
    from the clamped edges): there the loads are contiguous and the loop vectorises."""
    start, stop = pair[0], pair[1]
    for x in range(start):
        v0 = np.float32(s[lo[x]])
        out[x] = v0 + w[x] * (np.float32(s[hi[x]]) - v0)
    if stop > start:
        a0, a1, w0, w1 = lo[start], lo[start + 1], w[start], w[start + 1]
        if a0 == a1:  # both outputs of a pair between the same two inputs
            for i in range((stop - start) // 2):
                u = np.float32(s[a0 + i])
                diff = np.float32(s[a0 + i + 1]) - u
                out[start + 2 * i] = u + w0 * diff
                out[start + 2 * i + 1] = u + w1 * diff
        else:
            for i in range((stop - start) // 2):
                u = np.float32(s[a0 + i])
                out[start + 2 * i] = u + w0 * (np.float32(s[a0 + i + 1]) - u)
                v = np.float32(s[a1 + i])
                out[start + 2 * i + 1] = v + w1 * (np.float32(s[a1 + i + 1]) - v)
    for x in range(max(start, stop), out.size):
        v0 = np.float32(s[lo[x]])
        out[x] = v0 + w[x] * (np.float32(s[hi[x]]) - v0)


@njit(parallel=True, **JIT)
def linear_planes(src: np.ndarray, dst: np.ndarray, sizes_out: np.ndarray, w_in: int,
                  s_in: np.ndarray, s_out: np.ndarray, pn: np.ndarray, pc: np.ndarray,
                  lo2: np.ndarray, hi2: np.ndarray, w2: np.ndarray, lo3: np.ndarray,
                  hi3: np.ndarray, w3: np.ndarray, pair: np.ndarray, integer: bool,
                  low: float, high: float) -> None:
    """Bilinear on planes, for calls whose batch and channel taps have zero weight (pn, pc: the
    input plane of each output batch and channel): input rows are interpolated along W once
    and kept while consecutive output rows need them, then blended along H. float32."""
    n_, c_, h_, w_ = sizes_out[0], sizes_out[1], sizes_out[2], sizes_out[3]
    chunks = (h_ + ROWS - 1) // ROWS
    for job in prange(n_ * c_ * chunks):
        plane = job // chunks
        n = plane // c_
        c = plane % c_
        ib = pn[n] * s_in[0] + pc[c] * s_in[1]
        ob = n * s_out[0] + c * s_out[1]
        ha = np.empty(w_, np.float32)
        hb = np.empty(w_, np.float32)
        ra = -1
        rb = -1
        y0 = (job % chunks) * ROWS
        for y in range(y0, min(y0 + ROWS, h_)):
            r0, r1, wy = lo2[y], hi2[y], w2[y]
            if ra != r0 and r0 == rb:  # the row below becomes the row above: swap
                ha, hb = hb, ha
                ra, rb = rb, ra
            if ra != r0:
                _lerp_row(src[ib + r0 * s_in[2]:ib + r0 * s_in[2] + w_in], lo3, hi3, w3, ha, pair)
                ra = r0
            if wy != 0 and rb != r1:
                _lerp_row(src[ib + r1 * s_in[2]:ib + r1 * s_in[2] + w_in], lo3, hi3, w3, hb, pair)
                rb = r1
            o = ob + y * s_out[2]
            d = dst[o:o + w_]
            if integer and wy == 0:
                for x in range(w_):
                    d[x] = min(max(np.floor(ha[x] + np.float32(0.5)), low), high)
            elif integer:
                for x in range(w_):
                    v = ha[x] + wy * (hb[x] - ha[x])
                    d[x] = min(max(np.floor(v + np.float32(0.5)), low), high)
            elif wy == 0:
                d[:] = ha
            else:
                for x in range(w_):
                    d[x] = ha[x] + wy * (hb[x] - ha[x])


# -- linear 2x on float32 planes: 8-wide horizontal pairs and vertical blends ------------------
def _splat8(builder, value):
    """value (float32) in each of 8 lanes."""
    v8 = ir.VectorType(ir.FloatType(), 8)
    one = builder.insert_element(ir.Constant(v8, ir.Undefined), value,
                                 ir.Constant(ir.IntType(32), 0))
    return builder.shuffle_vector(one, ir.Constant(v8, ir.Undefined),
                                  ir.Constant(ir.VectorType(ir.IntType(32), 8), [0] * 8))


@intrinsic
def lerp_pairs(typingctx: BaseContext, s: types.Array, a0: types.Integer, a1: types.Integer,
               w0: types.Float, w1: types.Float, out: types.Array, j: types.Integer) -> Typed:
    """out[j + 2m] = u + w0 * (s[a0 + m + 1] - u), u = s[a0 + m], and out[j + 2m + 1] likewise
    from a1 and w1, for m in 0..7: the pair loop of a 2x upscale along W (two taps per output,
    the weights repeating with period 2, as OpenCV's horizontal pass), 16 float32 outputs from
    unaligned 8-wide loads. Each operation rounds once in float32 (plain fsub, fmul, fadd: no
    contraction into an FMA), exactly the scalar loop's arithmetic, so the results are bit for
    bit those of _lerp_row."""
    def codegen(context, builder, signature, args):
        one = ir.Constant(ir.IntType(64), 1)
        s_ary = context.make_array(signature.args[0])(context, builder, args[0])
        v8 = ir.VectorType(ir.FloatType(), 8)
        halves = []
        for a, w in ((args[1], args[3]), (args[2], args[4])):
            lo = builder.load(builder.bitcast(builder.gep(s_ary.data, [a]), v8.as_pointer()),
                              align=1)
            hi = builder.load(builder.bitcast(builder.gep(s_ary.data, [builder.add(a, one)]),
                                              v8.as_pointer()), align=1)
            halves.append(builder.fadd(lo, builder.fmul(_splat8(builder, w),
                                                        builder.fsub(hi, lo))))
        mask = ir.Constant(ir.VectorType(ir.IntType(32), 16),
                           [m // 2 + (m % 2) * 8 for m in range(16)])
        o_ary = context.make_array(signature.args[5])(context, builder, args[5])
        builder.store(builder.shuffle_vector(halves[0], halves[1], mask),
                      builder.bitcast(builder.gep(o_ary.data, [args[6]]),
                                      ir.VectorType(ir.FloatType(), 16).as_pointer()), align=1)
        return context.get_dummy_value()

    return types.void(s, a0, a1, w0, w1, out, j), codegen


@intrinsic
def blend_store(typingctx: BaseContext, a: types.Array, b: types.Array, x: types.Integer,
                wy: types.Float, d: types.Array, j: types.Integer) -> Typed:
    """d[j:j + 8] = a[x:x + 8] + wy * (b[x:x + 8] - a[x:x + 8]) in float32, one rounding per
    operation as the scalar loop. Ordinary stores: non-temporal ones (tried, 16 and 32 bytes
    wide) made the linear 2x kernel 1.7-2x slower on the project's machine."""
    def codegen(context, builder, signature, args):
        ptr = ir.VectorType(ir.FloatType(), 8).as_pointer()
        at = []
        for n, i in ((0, 2), (1, 2), (4, 5)):
            ary = context.make_array(signature.args[n])(context, builder, args[n])
            at.append(builder.bitcast(builder.gep(ary.data, [args[i]]), ptr))
        va, vb = builder.load(at[0], align=1), builder.load(at[1], align=1)
        builder.store(builder.fadd(va, builder.fmul(_splat8(builder, args[3]),
                                                    builder.fsub(vb, va))), at[2], align=1)
        return context.get_dummy_value()

    return types.void(a, b, x, wy, d, j), codegen


@njit(inline="always", **JIT)
def _lerp_row_f32(s: np.ndarray, lo: np.ndarray, hi: np.ndarray, w: np.ndarray,
                  out: np.ndarray, pair: np.ndarray) -> None:
    """_lerp_row for float32 rows, its pair range 16 outputs at a time (lerp_pairs); the same
    arithmetic, so the same bits."""
    start, stop = pair[0], pair[1]
    for x in range(start):
        v0 = s[lo[x]]
        out[x] = v0 + w[x] * (s[hi[x]] - v0)
    if stop > start:
        a0, a1, w0, w1 = lo[start], lo[start + 1], w[start], w[start + 1]
        pairs = (stop - start) // 2
        i = 0
        while i + 8 <= pairs:  # reads s[a + i .. a + i + 8]: within the scalar loop's reach
            lerp_pairs(s, a0 + i, a1 + i, w0, w1, out, start + 2 * i)
            i += 8
        for m in range(i, pairs):
            u = s[a0 + m]
            out[start + 2 * m] = u + w0 * (s[a0 + m + 1] - u)
            v = s[a1 + m]
            out[start + 2 * m + 1] = v + w1 * (s[a1 + m + 1] - v)
    for x in range(max(start, stop), out.size):
        v0 = s[lo[x]]
        out[x] = v0 + w[x] * (s[hi[x]] - v0)


@njit(parallel=True, **JIT)
def linear_planes_f32(src: np.ndarray, dst: np.ndarray, sizes_out: np.ndarray, w_in: int,
                      s_in: np.ndarray, s_out: np.ndarray, pn: np.ndarray, pc: np.ndarray,
                      lo2: np.ndarray, hi2: np.ndarray, w2: np.ndarray, lo3: np.ndarray,
                      hi3: np.ndarray, w3: np.ndarray, pair: np.ndarray) -> None:
    """linear_planes for float32 in and out, vectorised: each input row is filtered along W
    once (8-wide pairs in the 2x range, _lerp_row_f32) into a two-row ring (ha: the row above,
    hb: the row below, swapped as the output walks down), and each output row blends the two
    8 floats at a time (blend_store). The arithmetic and its order are linear_planes': the
    same bits."""
    n_, c_, h_, w_ = sizes_out[0], sizes_out[1], sizes_out[2], sizes_out[3]
    chunks = (h_ + ROWS - 1) // ROWS
    for job in prange(n_ * c_ * chunks):
        plane = job // chunks
        n = plane // c_
        c = plane % c_
        ib = pn[n] * s_in[0] + pc[c] * s_in[1]
        ob = n * s_out[0] + c * s_out[1]
        ha = np.empty(w_, np.float32)
        hb = np.empty(w_, np.float32)
        ra = -1
        rb = -1
        y0 = (job % chunks) * ROWS
        for y in range(y0, min(y0 + ROWS, h_)):
            r0, r1, wy = lo2[y], hi2[y], w2[y]
            if ra != r0 and r0 == rb:  # the row below becomes the row above: swap
                ha, hb = hb, ha
                ra, rb = rb, ra
            if ra != r0:
                _lerp_row_f32(src[ib + r0 * s_in[2]:ib + r0 * s_in[2] + w_in], lo3, hi3, w3,
                              ha, pair)
                ra = r0
            if wy != 0 and rb != r1:
                _lerp_row_f32(src[ib + r1 * s_in[2]:ib + r1 * s_in[2] + w_in], lo3, hi3, w3,
                              hb, pair)
                rb = r1
            o = ob + y * s_out[2]
            d = dst[o:o + w_]
            if wy == 0:  # a copy of the row above (no blend: an inf or NaN below stays out)
                d[:] = ha
                continue
            x = 0
            while x + 8 <= w_:
                blend_store(ha, hb, x, wy, d, x)
                x += 8
            for t in range(x, w_):
                d[t] = ha[t] + wy * (hb[t] - ha[t])


# -- antialiased linear (RESAMPLE3): a separable filter, one dimension per pass ----------------
@njit(parallel=True, fastmath=False, **JIT)
def filter_pass(src: np.ndarray, dst: np.ndarray, sizes_out: np.ndarray, s_in: np.ndarray,
                s_out: np.ndarray, d: int, taps: np.ndarray, weights: np.ndarray, integer: bool,
                low: float, high: float) -> None:
    """One dimension d of a separable filter, in float32: dst[o] is the sum over k of
    weights[o_d, k] * src[o with o_d replaced by taps[o_d, k]]; the other dimensions index both
    sides alike. taps / weights: (outputs along d, taps) from the operator spec's filter (taps
    clamped, weights normalised, 0 on padding); a tap of weight 0 is skipped (not part of the
    value: a NaN there stays out). integer: round to nearest (halves up) and clamp to
    [low, high]; else store the float."""
    n_, c_, h_, w_ = sizes_out[0], sizes_out[1], sizes_out[2], sizes_out[3]
    step = s_in[d]
    for row in prange(n_ * c_ * h_):
        n = row // (c_ * h_)
        c = (row // h_) % c_
        y = row % h_
        out_base = n * s_out[0] + c * s_out[1] + y * s_out[2]
        for x in range(w_):
            od = n if d == 0 else (c if d == 1 else (y if d == 2 else x))
            base = n * s_in[0] + c * s_in[1] + y * s_in[2] + x * s_in[3] - od * step
            acc = np.float32(0.0)
            for k in range(taps.shape[1]):
                w = weights[od, k]
                if w != 0:
                    acc += w * np.float32(src[base + taps[od, k] * step])
            if integer:
                acc = min(max(np.floor(acc + np.float32(0.5)), low), high)
            dst[out_base + x * s_out[3]] = acc
