"""Numba kernels for the numba backend. They work on flat element views of the bound byte
buffers and address every element through its desc's strides (in elements), as a GPU kernel
would: one parallel loop over output rows, the row itself walked in the inner loop.

Data movement works on unsigned integers of the element's width, so bits move unchanged (NaN
payloads, -0.0, subnormals). Resampling precomputes, per dimension, the two taps and the weight
of every output index (the coordinate formula is the operator spec's), and computes in float32.
Compiled kernels are cached on disk (numba `cache=True`): a second process loads them.
"""

from __future__ import annotations

import platform

import numpy as np
from llvmlite import ir
from numba import njit, prange, types
from numba.extending import intrinsic

X86 = platform.machine().lower() in ("x86_64", "amd64")
JIT = {"cache": True, "nogil": True}


@njit(inline="always", **JIT)
def depth_row(s: np.ndarray, n: int, c: int, y: int, block: int, c_: int,
              crd: bool) -> tuple[int, int]:
    """Where the depth-form row of space-form row (n, c, y) starts for bx = 0, and the step
    between the rows of successive bx (one channel for CRD, C' channels for DCR): the channel
    formulas of spec-notes §3, with s the depth-form tensor's strides."""
    by = y % block
    if crd:
        first, step = c * block * block + by * block, s[1]
    else:
        first, step = by * block * c_ + c, c_ * s[1]
    return n * s[0] + first * s[1] + (y // block) * s[2], step



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
        out_base = n * s_out[0] + c * s_out[1] + y * s_out[2]
        a, step = depth_row(s_in, n, c, y, block, c_, crd)
        for bx in range(block):
            in_base = a + bx * step
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
        in_base = n * s_in[0] + c * s_in[1] + y * s_in[2]
        a, step = depth_row(s_out, n, c, y, block, c_, crd)
        for bx in range(block):
            out_base = a + bx * step
            for ox in range(w_out):
                dst[out_base + ox * s_out[3]] = src[in_base + (ox * block + bx) * s_in[3]]


#: Depth-form columns per tile of the blocked kernels: a tile of an NHWC row (TILE columns of
#: every channel, 4 KiB for 64 float32 channels) stays in L1 while it is transposed.
TILE = 16


@njit(parallel=True, **JIT)
def depth_to_space_blocked(src: np.ndarray, dst: np.ndarray, sizes_out: np.ndarray,
                           s_in: np.ndarray, s_out: np.ndarray, block: int, crd: bool) -> None:
    """depth_to_space for any strides, cache-blocked: one job per depth-form row (n, iy) moves
    every channel of it, so the job reads one contiguous block when the channels are innermost
    (NHWC) and writes `block` whole rows of every output channel: each input line is read once
    from memory and transposed in cache, where the row kernel above would read the input once
    per channel."""
    n_, c_, h_, w_ = sizes_out[0], sizes_out[1], sizes_out[2], sizes_out[3]
    h_in, w_in = h_ // block, w_ // block
    si3, so3 = s_in[3], s_out[3]
    for job in prange(n_ * h_in):
        n = job // h_in
        iy = job % h_in
        for x0 in range(0, w_in, TILE):
            x1 = min(x0 + TILE, w_in)
            for c in range(c_):
                for by in range(block):
                    y = iy * block + by
                    o = n * s_out[0] + c * s_out[1] + y * s_out[2]
                    a, step = depth_row(s_in, n, c, y, block, c_, crd)
                    if so3 == 1 and block == 2:  # output rows contiguous: pairs of stores
                        for ix in range(x0, x1):
                            dst[o + 2 * ix] = src[a + ix * si3]
                            dst[o + 2 * ix + 1] = src[a + step + ix * si3]
                    else:
                        for ix in range(x0, x1):
                            for bx in range(block):
                                dst[o + (ix * block + bx) * so3] = src[a + bx * step + ix * si3]


@njit(parallel=True, **JIT)
def space_to_depth_blocked(src: np.ndarray, dst: np.ndarray, sizes_in: np.ndarray,
                           s_in: np.ndarray, s_out: np.ndarray, block: int, crd: bool) -> None:
    """space_to_depth for any strides, cache-blocked as depth_to_space_blocked: one job per
    depth-form row (n, oy) reads `block` rows of every channel and fills that depth-form row."""
    n_, c_, h_, w_ = sizes_in[0], sizes_in[1], sizes_in[2], sizes_in[3]
    h_out, w_out = h_ // block, w_ // block
    si3, so3 = s_in[3], s_out[3]
    for job in prange(n_ * h_out):
        n = job // h_out
        oy = job % h_out
        for x0 in range(0, w_out, TILE):
            x1 = min(x0 + TILE, w_out)
            for c in range(c_):
                for by in range(block):
                    y = oy * block + by
                    i = n * s_in[0] + c * s_in[1] + y * s_in[2]
                    a, step = depth_row(s_out, n, c, y, block, c_, crd)
                    if si3 == 1 and block == 2:  # input rows contiguous: pairs of loads
                        for ox in range(x0, x1):
                            dst[a + ox * so3] = src[i + 2 * ox]
                            dst[a + step + ox * so3] = src[i + 2 * ox + 1]
                    else:
                        for ox in range(x0, x1):
                            for bx in range(block):
                                dst[a + bx * step + ox * so3] = src[i + (ox * block + bx) * si3]


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


# -- fast paths: rows contiguous (innermost stride 1 on both sides) -----------------------------

#: Output rows per parallel job of the plane kernels (planes are split so 2 cores share even a
#: single large plane).
ROWS = 32


@njit(parallel=True, **JIT)
def depth_to_space_rows(src: np.ndarray, dst: np.ndarray, sizes_out: np.ndarray,
                        s_in: np.ndarray, s_out: np.ndarray, block: int, crd: bool,
                        align: int, stream: bool) -> None:
    """depth_to_space for contiguous rows: each output row interleaves `block` input rows."""
    n_, c_, h_, w_ = sizes_out[0], sizes_out[1], sizes_out[2], sizes_out[3]
    w_in = w_ // block
    size = dst.itemsize
    chunks = (h_ + ROWS - 1) // ROWS
    for job in prange(n_ * c_ * chunks):
        plane = job // chunks
        n = plane // c_
        c = plane % c_
        for y in range((job % chunks) * ROWS, min((job % chunks) * ROWS + ROWS, h_)):
            o = n * s_out[0] + c * s_out[1] + y * s_out[2]
            d = dst[o:o + w_]
            a, step = depth_row(s_in, n, c, y, block, c_, crd)
            if block == 2:
                weave_row(src[a:a + w_in], src[a + step:a + step + w_in], d, w_in,
                          (align + o * size) % 16, stream)
            else:
                for bx in range(block):
                    s = src[a + bx * step:a + bx * step + w_in]
                    for ix in range(w_in):
                        d[ix * block + bx] = s[ix]
        if stream:
            store_fence()


@njit(inline="always", **JIT)
def weave_row(s0: np.ndarray, s1: np.ndarray, d: np.ndarray, count: int, align: int,
              stream: bool) -> None:
    """d[2 * x] = s0[x], d[2 * x + 1] = s1[x] for x < count, 16 bytes per store (weave);
    stream: non-temporal stores after an unaligned head (align: the byte address of d modulo
    16). The block-2 row of depth-to-space."""
    size = d.itemsize
    k = 8 // size  # elements of each input per store
    ix = 0
    if stream:
        while ix < count and (align + 2 * ix * size) % 16 != 0:
            d[2 * ix] = s0[ix]
            d[2 * ix + 1] = s1[ix]
            ix += 1
        while ix + k <= count:
            weave_stream(s0, ix, s1, d, 2 * ix)
            ix += k
    else:
        while ix + k <= count:
            weave_store(s0, ix, s1, d, 2 * ix)
            ix += k
    for x in range(ix, count):
        d[2 * x] = s0[x]
        d[2 * x + 1] = s1[x]


@njit(parallel=True, **JIT)
def depth_to_space_nhwc(src: np.ndarray, dst: np.ndarray, sizes_out: np.ndarray,
                        s_in: np.ndarray, s_out: np.ndarray, block: int, crd: bool,
                        tw: int, align: int, stream: bool) -> None:
    """depth_to_space for channel-innermost input (s_in[1] == 1, NHWC) and contiguous output
    rows: each job takes a tile of one depth-form row (every channel of up to `tw` columns,
    read contiguously), transposes it into channel rows in a small buffer (8x8 register tiles,
    transpose8; scalar at the ragged edges), then writes its `block` output rows of every
    output channel from the buffer as the row kernel does (weave_row for block 2)."""
    n_, c_, h_, w_ = sizes_out[0], sizes_out[1], sizes_out[2], sizes_out[3]
    h_in, w_in = h_ // block, w_ // block
    cin = c_ * block * block
    size = dst.itemsize
    tiles = (w_in + tw - 1) // tw
    si3 = s_in[3]
    packed = np.zeros(4, np.int64)  # strides of the buffer as a depth-form tensor of one row
    packed[1] = tw
    for job in prange(n_ * h_in * tiles):
        n = job // (h_in * tiles)
        iy = (job // tiles) % h_in
        x0 = (job % tiles) * tw
        m = min(tw, w_in - x0)
        buf = np.empty(cin * tw, dst.dtype)
        base = n * s_in[0] + iy * s_in[2] + x0 * si3
        ch = 0
        while ch + 8 <= cin:  # buf[ch * tw + x] = src[base + x * si3 + ch]
            x = 0
            while x + 8 <= m:
                transpose8(src, base + x * si3 + ch, si3, buf, ch * tw + x, tw)
                x += 8
            for q in range(8):
                for r in range(x, m):
                    buf[(ch + q) * tw + r] = src[base + r * si3 + ch + q]
            ch += 8
        for q in range(ch, cin):
            for r in range(m):
                buf[q * tw + r] = src[base + r * si3 + q]
        # block 2 apart: one loop nest with the weave alone ran 1.3x faster than a branch
        # inside it
        if block == 2:
            for c in range(c_):
                for by in range(2):
                    o = n * s_out[0] + c * s_out[1] + (iy * 2 + by) * s_out[2] + x0 * 2
                    a, step = depth_row(packed, 0, c, by, 2, c_, crd)
                    weave_row(buf[a:a + m], buf[a + step:a + step + m], dst[o:o + m * 2], m,
                              (align + o * size) % 16, stream)
        else:
            for c in range(c_):
                for by in range(block):
                    o = n * s_out[0] + c * s_out[1] + (iy * block + by) * s_out[2] + x0 * block
                    a, step = depth_row(packed, 0, c, by, block, c_, crd)
                    for bx in range(block):
                        for ix in range(m):
                            dst[o + ix * block + bx] = buf[a + bx * step + ix]
        if stream:
            store_fence()


@njit(parallel=True, **JIT)
def space_to_depth_rows(src: np.ndarray, dst: np.ndarray, sizes_in: np.ndarray,
                        s_in: np.ndarray, s_out: np.ndarray, block: int, crd: bool,
                        align: int, stream: bool) -> None:
    """space_to_depth for contiguous rows: each input row splits into `block` output rows.
    align: the byte address of dst modulo 64."""
    n_, c_, h_, w_ = sizes_in[0], sizes_in[1], sizes_in[2], sizes_in[3]
    w_out = w_ // block
    size = dst.itemsize
    k = 8 // size  # elements per 8 bytes
    chunks = (h_ + ROWS - 1) // ROWS
    for job in prange(n_ * c_ * chunks):
        plane = job // chunks
        n = plane // c_
        c = plane % c_
        for y in range((job % chunks) * ROWS, min((job % chunks) * ROWS + ROWS, h_)):
            i = n * s_in[0] + c * s_in[1] + y * s_in[2]
            s = src[i:i + w_]
            a, step = depth_row(s_out, n, c, y, block, c_, crd)
            if block == 2:
                d0 = dst[a:a + w_out]
                d1 = dst[a + step:a + step + w_out]
                ox = 0
                # 64 bytes to each row per split (whole cache lines where the rows are
                # 64-byte aligned): non-temporal only when both rows start on a line; at other
                # alignments ordinary stores (non-temporal 16-byte stores there straddled
                # lines and ran at 0.6-0.8 of the copy)
                lined = (align + a * size) % 64 == 0 and (align + (a + step) * size) % 64 == 0
                if stream and lined:
                    while ox + 8 * k <= w_out:
                        split_line_stream(s, 2 * ox, d0, d1, ox)
                        ox += 8 * k
                else:
                    while ox + 8 * k <= w_out:
                        split_line_store(s, 2 * ox, d0, d1, ox)
                        ox += 8 * k
                while ox + 2 * k <= w_out:
                    split_store(s, 2 * ox, d0, d1, ox)
                    ox += 2 * k
                for x in range(ox, w_out):
                    d0[x] = s[2 * x]
                    d1[x] = s[2 * x + 1]
            else:
                for bx in range(block):
                    d = dst[a + bx * step:a + bx * step + w_out]
                    for ox in range(w_out):
                        d[ox] = s[ox * block + bx]
        if stream:
            store_fence()


def _duplicating_store(streaming: bool, in_bytes: int = 8):
    """An intrinsic dup(src, i, dst, j): dst[j:j + 2k] = each of src[i:i + k] twice, k being
    `in_bytes` of elements: one load, a shuffle and stores of 2 * in_bytes (the loop Numba's
    scalar code does not vectorise: a nearest 2x upscale spent its time on instructions, not on
    memory). The output goes out in 32-byte pieces (AVX2's widest store), lowest address first.
    streaming: non-temporal stores (dst[j] aligned to 2 * in_bytes), which write around the
    cache as np.copyto does for large copies: no read of the destination line before it is
    written; with in_bytes 32 each store fills one whole 64-byte line (measured side by side on
    a 2x upscale of 128 MiB: whole aligned lines 1.2-2.0x the 16-byte stores when the memory
    was contended, equal otherwise; 64-byte stores at 32-byte aligned addresses, each across
    two lines, ran at a fifth). A caller that streams ends its job with `store_fence()`."""

    @intrinsic
    def dup(typingctx, src, i, dst, j):
        def codegen(context, builder, signature, args):
            s_ary = context.make_array(signature.args[0])(context, builder, args[0])
            d_ary = context.make_array(signature.args[2])(context, builder, args[2])
            element = context.get_data_type(signature.args[0].dtype)
            size = context.get_abi_sizeof(element)
            k = in_bytes // size
            half, whole = ir.VectorType(element, k), ir.VectorType(element, 2 * k)
            value = builder.load(builder.bitcast(builder.gep(s_ary.data, [args[1]]),
                                                 half.as_pointer()), align=1)
            mask = ir.Constant(ir.VectorType(ir.IntType(32), 2 * k), [m // 2 for m in range(2 * k)])
            pairs = builder.shuffle_vector(value, ir.Constant(half, ir.Undefined), mask)
            piece = min(2 * k, 32 // size)  # elements per store
            out = ir.VectorType(element, piece)
            for first in range(0, 2 * k, piece):
                part = pairs if piece == 2 * k else builder.shuffle_vector(
                    pairs, ir.Constant(whole, ir.Undefined),
                    ir.Constant(ir.VectorType(ir.IntType(32), piece),
                                list(range(first, first + piece))))
                at = builder.add(args[3], ir.Constant(args[3].type, first))
                store = builder.store(part, builder.bitcast(builder.gep(d_ary.data, [at]),
                                                            out.as_pointer()),
                                      align=piece * size if streaming else 1)
                if streaming:
                    _nontemporal(builder, store)
            return context.get_dummy_value()

        return types.void(src, i, dst, j), codegen

    return dup


dup_store = _duplicating_store(False)
dup_stream = _duplicating_store(True)
#: 32 bytes of input to 64 of output: one whole cache line per store (64-byte aligned when
#: streaming)
dup_line_store = _duplicating_store(False, 32)
dup_line_stream = _duplicating_store(True, 32)


def _nontemporal(builder, store) -> None:
    store.set_metadata("nontemporal", builder.module.add_metadata([ir.Constant(ir.IntType(32), 1)]))


def _interleaving_store(streaming: bool):
    """An intrinsic weave(a, i, b, dst, j): dst[j:j + 2k] = a[i], b[i], a[i + 1], b[i + 1], ...
    (k elements, 8 bytes, from each): a depth-to-space row of block 2 built 16 bytes per store,
    non-temporal when streaming (dst[j] 16-byte aligned then)."""

    @intrinsic
    def weave(typingctx, a, i, b, dst, j):
        def codegen(context, builder, signature, args):
            element = context.get_data_type(signature.args[0].dtype)
            k = 8 // context.get_abi_sizeof(element)
            half, whole = ir.VectorType(element, k), ir.VectorType(element, 2 * k)
            loads = []
            for n in (0, 2):
                ary = context.make_array(signature.args[n])(context, builder, args[n])
                loads.append(builder.load(builder.bitcast(builder.gep(ary.data, [args[1]]),
                                                          half.as_pointer()), align=1))
            mask = ir.Constant(ir.VectorType(ir.IntType(32), 2 * k),
                               [m // 2 + (m % 2) * k for m in range(2 * k)])
            d_ary = context.make_array(signature.args[3])(context, builder, args[3])
            store = builder.store(builder.shuffle_vector(loads[0], loads[1], mask),
                                  builder.bitcast(builder.gep(d_ary.data, [args[4]]),
                                                  whole.as_pointer()),
                                  align=16 if streaming else 1)
            if streaming:
                _nontemporal(builder, store)
            return context.get_dummy_value()

        return types.void(a, i, b, dst, j), codegen

    return weave


def _splitting_store(streaming: bool, width: int = 16):
    """An intrinsic split(src, j, a, b, i): a[i:i + n] = src[j], src[j + 2], ...; b[i:i + n] =
    src[j + 1], src[j + 3], ..., n elements being `width` bytes (2 * width bytes read, width
    stored to each; 8-byte stores ran at a third of the copy, 16-byte ones below 64-byte ones):
    a space-to-depth row of block 2, non-temporal stores when streaming (a[i], b[i] then
    `width`-byte aligned)."""

    @intrinsic
    def split(typingctx, src, j, a, b, i):
        def codegen(context, builder, signature, args):
            element = context.get_data_type(signature.args[0].dtype)
            count = width // context.get_abi_sizeof(element)
            half, whole = ir.VectorType(element, count), ir.VectorType(element, 2 * count)
            s_ary = context.make_array(signature.args[0])(context, builder, args[0])
            value = builder.load(builder.bitcast(builder.gep(s_ary.data, [args[1]]),
                                                 whole.as_pointer()), align=1)
            for n, first in ((2, 0), (3, 1)):
                mask = ir.Constant(ir.VectorType(ir.IntType(32), count),
                                   [2 * m + first for m in range(count)])
                ary = context.make_array(signature.args[n])(context, builder, args[n])
                store = builder.store(
                    builder.shuffle_vector(value, ir.Constant(whole, ir.Undefined), mask),
                    builder.bitcast(builder.gep(ary.data, [args[4]]), half.as_pointer()),
                    align=width if streaming else 1)
                if streaming:
                    _nontemporal(builder, store)
            return context.get_dummy_value()

        return types.void(src, j, a, b, i), codegen

    return split


weave_store, weave_stream = _interleaving_store(False), _interleaving_store(True)
split_store = _splitting_store(False)
split_line_store, split_line_stream = (_splitting_store(False, 64),
                                       _splitting_store(True, 64))


def _transposing_copy():
    """An intrinsic transpose8(src, i, ld, dst, j, ldd): dst[j + q * ldd + r] = src[i + r * ld
    + q] for r, q < 8: an 8x8 tile of elements, 8 row loads, 24 two-input shuffles (the
    classic AVX 8x8 transpose: lane-local unpacks, 64-bit pair shuffles, then 128-bit halves
    exchanged), 8 row stores. Any element width; for 4-byte elements every row is one 32-byte
    register. The NHWC depth-to-space kernel turns channel-innermost input into channel rows
    with it."""

    @intrinsic
    def transpose8(typingctx, src, i, ld, dst, j, ldd):
        def codegen(context, builder, signature, args):
            element = context.get_data_type(signature.args[0].dtype)
            row = ir.VectorType(element, 8)
            s_ary = context.make_array(signature.args[0])(context, builder, args[0])
            d_ary = context.make_array(signature.args[3])(context, builder, args[3])

            def at(ary, first, stride, k):
                index = builder.add(first, builder.mul(stride, ir.Constant(stride.type, k)))
                return builder.bitcast(builder.gep(ary.data, [index]), row.as_pointer())

            def shuffle(a, b, mask):
                return builder.shuffle_vector(a, b, ir.Constant(ir.VectorType(ir.IntType(32), 8),
                                                                mask))

            r = [builder.load(at(s_ary, args[1], args[2], k), align=1) for k in range(8)]
            lo, hi = [0, 8, 1, 9, 4, 12, 5, 13], [2, 10, 3, 11, 6, 14, 7, 15]
            t = [shuffle(r[k - k % 2], r[k - k % 2 + 1], hi if k % 2 else lo) for k in range(8)]
            # u[4h + q]: columns q and q + 4 of rows 4h..4h + 3
            even, odd = [0, 1, 8, 9, 4, 5, 12, 13], [2, 3, 10, 11, 6, 7, 14, 15]
            u = []
            for h in (0, 4):
                for q in range(4):
                    u.append(shuffle(t[h + q // 2], t[h + q // 2 + 2], odd if q % 2 else even))
            for q in range(8):
                mask = [0, 1, 2, 3, 8, 9, 10, 11] if q < 4 else [4, 5, 6, 7, 12, 13, 14, 15]
                builder.store(shuffle(u[q % 4], u[4 + q % 4], mask),
                              at(d_ary, args[4], args[5], q), align=1)
            return context.get_dummy_value()

        return types.void(src, i, ld, dst, j, ldd), codegen

    return transpose8


transpose8 = _transposing_copy()


def _weaving_transpose(block: int, streaming: bool):
    """An intrinsic woven(src, i, ld, ld2, dst, j, ldd): dst[j + q * ldd + r] = src[i +
    (r // block) * ld + (r % block) * ld2 + q] for q < 8 and r < L, L = max(8, 64 // element
    size) (block dividing 8): L // 8 transposes of 8x8 tiles (as transpose8) whose rows are
    pixels' `block` channel runs, so each stored row is L consecutive elements, 64 bytes or
    more, of a depth-to-space output row (DCR: the bx runs of a pixel are C' apart) and no
    second pass weaves them. Each output row's elements are stored together (a whole cache line
    when dst[j + q * ldd] is 64-byte aligned). streaming: 16-byte non-temporal stores
    (dst[j + q * ldd] then 16-byte aligned)."""

    @intrinsic
    def woven(typingctx, src, i, ld, ld2, dst, j, ldd):
        def codegen(context, builder, signature, args):
            element = context.get_data_type(signature.args[0].dtype)
            size = context.get_abi_sizeof(element)
            tiles = max(1, 64 // (8 * size))
            row = ir.VectorType(element, 8)
            s_ary = context.make_array(signature.args[0])(context, builder, args[0])
            d_ary = context.make_array(signature.args[4])(context, builder, args[4])
            i64 = args[1].type

            def at(ary, index, kind):
                return builder.bitcast(builder.gep(ary.data, [index]), kind.as_pointer())

            def shuffle(a, b, mask):
                return builder.shuffle_vector(a, b, ir.Constant(ir.VectorType(ir.IntType(32),
                                                                              len(mask)), mask))

            def transposed(first):  # the 8 columns of rows first..first + 7
                r = []
                for k in range(first, first + 8):
                    index = builder.add(args[1], builder.add(
                        builder.mul(args[2], ir.Constant(i64, k // block)),
                        builder.mul(args[3], ir.Constant(i64, k % block))))
                    r.append(builder.load(at(s_ary, index, row), align=1))
                lo, hi = [0, 8, 1, 9, 4, 12, 5, 13], [2, 10, 3, 11, 6, 14, 7, 15]
                t = [shuffle(r[k - k % 2], r[k - k % 2 + 1], hi if k % 2 else lo)
                     for k in range(8)]
                even, odd = [0, 1, 8, 9, 4, 5, 12, 13], [2, 3, 10, 11, 6, 7, 14, 15]
                u = []
                for h in (0, 4):
                    for q in range(4):
                        u.append(shuffle(t[h + q // 2], t[h + q // 2 + 2],
                                         odd if q % 2 else even))
                return [shuffle(u[q % 4], u[4 + q % 4], [0, 1, 2, 3, 8, 9, 10, 11] if q < 4
                                else [4, 5, 6, 7, 12, 13, 14, 15]) for q in range(8)]

            columns = [transposed(8 * n) for n in range(tiles)]
            per = min(8, 16 // size) if streaming else 8  # elements per store
            part = ir.VectorType(element, per)
            for q in range(8):
                first = builder.add(args[5], builder.mul(args[6], ir.Constant(i64, q)))
                for n in range(tiles):
                    out = columns[n][q]
                    for p in range(0, 8, per):
                        value = out if per == 8 else shuffle(out, out, list(range(p, p + per)))
                        store = builder.store(value, at(d_ary, builder.add(
                            first, ir.Constant(i64, 8 * n + p)), part),
                            align=16 if streaming else 1)
                        if streaming:
                            _nontemporal(builder, store)
            return context.get_dummy_value()

        return types.void(src, i, ld, ld2, dst, j, ldd), codegen

    return woven


woven1, woven2, woven4 = (_weaving_transpose(b, False) for b in (1, 2, 4))
woven1_stream, woven2_stream, woven4_stream = (_weaving_transpose(b, True) for b in (1, 2, 4))


@intrinsic
def line_stream(typingctx, src, i, dst, j):
    """dst[j:j + L] = src[i:i + L], L elements being 64 bytes: four 16-byte non-temporal stores
    (dst[j] 16-byte aligned)."""
    def codegen(context, builder, signature, args):
        element = context.get_data_type(signature.args[0].dtype)
        per = 16 // context.get_abi_sizeof(element)
        part = ir.VectorType(element, per)
        s_ary = context.make_array(signature.args[0])(context, builder, args[0])
        d_ary = context.make_array(signature.args[2])(context, builder, args[2])
        for p in range(0, 4 * per, per):
            value = builder.load(builder.bitcast(builder.gep(s_ary.data, [builder.add(
                args[1], ir.Constant(args[1].type, p))]), part.as_pointer()), align=1)
            store = builder.store(value, builder.bitcast(builder.gep(d_ary.data, [builder.add(
                args[3], ir.Constant(args[3].type, p))]), part.as_pointer()), align=16)
            _nontemporal(builder, store)
        return context.get_dummy_value()

    return types.void(src, i, dst, j), codegen


@njit(inline="always", **JIT)
def _woven_tile(src: np.ndarray, i: int, ld: int, ld2: int, dst: np.ndarray, j: int, ldd: int,
                block: int, stream: bool) -> None:
    """The woven transpose of `block` (1, 2 or 4), streaming or not."""
    if stream:
        if block == 2:
            woven2_stream(src, i, ld, ld2, dst, j, ldd)
        elif block == 4:
            woven4_stream(src, i, ld, ld2, dst, j, ldd)
        else:
            woven1_stream(src, i, ld, ld2, dst, j, ldd)
    elif block == 2:
        woven2(src, i, ld, ld2, dst, j, ldd)
    elif block == 4:
        woven4(src, i, ld, ld2, dst, j, ldd)
    else:
        woven1(src, i, ld, ld2, dst, j, ldd)


@njit(parallel=True, **JIT)
def depth_to_space_nhwc_bands(src: np.ndarray, dst: np.ndarray, sizes_out: np.ndarray,
                              s_in: np.ndarray, s_out: np.ndarray, block: int, band: int,
                              align: int, stream: bool) -> None:
    """depth_to_space DCR for channel-innermost input (s_in[1] == 1, NHWC) and packed output
    rows (s_out[2] == W, s_out[3] == 1), block 1, 2 or 4, C' a multiple of 8 and W / block a
    multiple of the woven call's pixels. One job per `band` depth-form rows; for each 8 output
    channels the band's rows are woven (woven*: the transpose and the block interleave in one)
    into a buffer of 8 channel runs, padded so its rows do not share cache sets (the output's
    channel planes do: woven straight into them ran 2-3x slower per call), then each channel's
    run, band * block output rows contiguous in the output, is written in one piece
    (non-temporal 64-byte pieces when streaming; align: the byte address of dst modulo 16)."""
    n_, c_, h_, w_ = sizes_out[0], sizes_out[1], sizes_out[2], sizes_out[3]
    h_in, w_in = h_ // block, w_ // block
    size = dst.itemsize
    si3, so1 = s_in[3], s_out[1]
    per = max(8, 64 // size) // block  # pixels per woven call
    line = 64 // size
    ld = band * block * w_ + line
    bands = (h_in + band - 1) // band
    for job in prange(n_ * bands):
        n = job // bands
        y0 = (job % bands) * band
        rows = min(band, h_in - y0)
        run = rows * block * w_
        buf = np.empty(8 * ld, dst.dtype)
        for c0 in range(0, c_, 8):
            for iy in range(y0, y0 + rows):
                for by in range(block):
                    base = n * s_in[0] + iy * s_in[2] + by * block * c_
                    r = ((iy - y0) * block + by) * w_
                    for x in range(0, w_in, per):
                        _woven_tile(src, base + x * si3 + c0, si3, c_, buf, r + x * block, ld,
                                    block, False)
            for c in range(8):
                o = n * s_out[0] + (c0 + c) * so1 + y0 * block * w_
                if stream:
                    e = (16 - (align + o * size) % 16) % 16 // size
                    for h in range(e):
                        dst[o + h] = buf[c * ld + h]
                    while e + line <= run:
                        line_stream(buf, c * ld + e, dst, o + e)
                        e += line
                    for t in range(e, run):
                        dst[o + t] = buf[c * ld + t]
                else:
                    dst[o:o + run] = buf[c * ld:c * ld + run]
        if stream:
            store_fence()


@intrinsic
def store_fence(typingctx):
    """sfence: the non-temporal stores before it are visible before any store after it."""
    def codegen(context, builder, signature, args):
        if X86:
            builder.call(builder.module.declare_intrinsic(
                "llvm.x86.sse.sfence", fnty=ir.FunctionType(ir.VoidType(), [])), [])
        else:
            builder.fence("seq_cst")
        return context.get_dummy_value()

    return types.void(), codegen


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
def lerp_pairs(typingctx, s, a0, a1, w0, w1, out, j):
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
def blend_store(typingctx, a, b, x, wy, d, j):
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
