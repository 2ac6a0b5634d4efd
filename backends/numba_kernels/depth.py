"""DEPTH_TO_SPACE(1) and SPACE_TO_DEPTH(1) kernels: the row kernels and the cache-blocked ones
for any strides, then the fast paths for contiguous rows (rows, NHWC input: transposed in tiles
or woven in bands), every one moving bits (unsigned integers of the element's width)."""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from backends.numba_kernels.common import JIT, ROWS
from backends.numba_kernels.stores import (
    line_stream,
    split_line_store,
    split_line_stream,
    split_store,
    store_fence,
    transpose8,
    weave_store,
    weave_stream,
    woven1,
    woven1_stream,
    woven2,
    woven2_stream,
    woven4,
    woven4_stream,
)


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


# -- fast paths: rows contiguous (innermost stride 1 on both sides) -----------------------------
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
