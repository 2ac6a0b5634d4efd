"""The vector stores the data-movement kernels are built from, as Numba intrinsics that emit
LLVM IR: duplicating (nearest 2x), interleaving and splitting (depth/space of block 2),
transposing (8x8 tiles; woven with the block interleave) and whole-line copies, each with
non-temporal (streaming) stores where a kernel writes around the cache, and store_fence, with
which a streaming job ends."""

from __future__ import annotations

import platform
from typing import TYPE_CHECKING

from llvmlite import ir
from numba import types

from backends.numba_kernels.common import intrinsic

if TYPE_CHECKING:
    from collections.abc import Callable

    from numba.core.typing.context import BaseContext

    from backends.numba_kernels.common import Typed

X86 = platform.machine().lower() in ("x86_64", "amd64")


def _duplicating_store(streaming: bool, in_bytes: int = 8) -> Callable[..., None]:
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
    def dup(typingctx: BaseContext, src: types.Array, i: types.Integer, dst: types.Array,
            j: types.Integer) -> Typed:
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


def _nontemporal(builder: ir.IRBuilder, store: ir.StoreInstr) -> None:
    store.set_metadata("nontemporal", builder.module.add_metadata([ir.Constant(ir.IntType(32), 1)]))


def _interleaving_store(streaming: bool) -> Callable[..., None]:
    """An intrinsic weave(a, i, b, dst, j): dst[j:j + 2k] = a[i], b[i], a[i + 1], b[i + 1], ...
    (k elements, 8 bytes, from each): a depth-to-space row of block 2 built 16 bytes per store,
    non-temporal when streaming (dst[j] 16-byte aligned then)."""

    @intrinsic
    def weave(typingctx: BaseContext, a: types.Array, i: types.Integer, b: types.Array,
              dst: types.Array, j: types.Integer) -> Typed:
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


def _splitting_store(streaming: bool, width: int = 16) -> Callable[..., None]:
    """An intrinsic split(src, j, a, b, i): a[i:i + n] = src[j], src[j + 2], ...; b[i:i + n] =
    src[j + 1], src[j + 3], ..., n elements being `width` bytes (2 * width bytes read, width
    stored to each; 8-byte stores ran at a third of the copy, 16-byte ones below 64-byte ones):
    a space-to-depth row of block 2, non-temporal stores when streaming (a[i], b[i] then
    `width`-byte aligned)."""

    @intrinsic
    def split(typingctx: BaseContext, src: types.Array, j: types.Integer, a: types.Array,
              b: types.Array, i: types.Integer) -> Typed:
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


def _transposing_copy() -> Callable[..., None]:
    """An intrinsic transpose8(src, i, ld, dst, j, ldd): dst[j + q * ldd + r] = src[i + r * ld
    + q] for r, q < 8: an 8x8 tile of elements, 8 row loads, 24 two-input shuffles (the
    classic AVX 8x8 transpose: lane-local unpacks, 64-bit pair shuffles, then 128-bit halves
    exchanged), 8 row stores. Any element width; for 4-byte elements every row is one 32-byte
    register. The NHWC depth-to-space kernel turns channel-innermost input into channel rows
    with it."""

    @intrinsic
    def transpose8(typingctx: BaseContext, src: types.Array, i: types.Integer,
                   ld: types.Integer, dst: types.Array, j: types.Integer,
                   ldd: types.Integer) -> Typed:
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


def _weaving_transpose(block: int, streaming: bool) -> Callable[..., None]:
    """An intrinsic woven(src, i, ld, ld2, dst, j, ldd): dst[j + q * ldd + r] = src[i +
    (r // block) * ld + (r % block) * ld2 + q] for q < 8 and r < L, L = max(8, 64 // element
    size) (block dividing 8): L // 8 transposes of 8x8 tiles (as transpose8) whose rows are
    pixels' `block` channel runs, so each stored row is L consecutive elements, 64 bytes or
    more, of a depth-to-space output row (DCR: the bx runs of a pixel are C' apart) and no
    second pass weaves them. Each output row's elements are stored together (a whole cache line
    when dst[j + q * ldd] is 64-byte aligned). streaming: 16-byte non-temporal stores
    (dst[j + q * ldd] then 16-byte aligned)."""

    @intrinsic
    def woven(typingctx: BaseContext, src: types.Array, i: types.Integer, ld: types.Integer,
              ld2: types.Integer, dst: types.Array, j: types.Integer,
              ldd: types.Integer) -> Typed:
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
def line_stream(typingctx: BaseContext, src: types.Array, i: types.Integer, dst: types.Array,
                j: types.Integer) -> Typed:
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


@intrinsic
def store_fence(typingctx: BaseContext) -> Typed:
    """sfence: the non-temporal stores before it are visible before any store after it."""
    def codegen(context, builder, signature, args):
        if X86:
            builder.call(builder.module.declare_intrinsic(
                "llvm.x86.sse.sfence", fnty=ir.FunctionType(ir.VoidType(), [])), [])
        else:
            builder.fence("seq_cst")
        return context.get_dummy_value()

    return types.void(), codegen
