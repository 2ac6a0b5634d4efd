"""The checker fuzz's mutations of its seeds: format-blind (bits, bytes, words, cuts, copies,
splices) and format-aware (a field of the .expect, a reshape of every tensor at once, a size
and stride whose extent lands on a power of two of 2^32 to 2^64, TotalTensorSizeInBytes), and
of the buffers, --fill and the number of buffers given."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field

from conformance.export.c.fuzz.corpus import Layout, Seed

U32_EDGES = (0, 1, 2, 3, 4, 7, 8, 0x7F, 0x80, 0xFF, 0x100, 0x7FFF, 0x8000, 0xFFFF, 0x10000,
             0x7FFFFFFF, 0x80000000, 0x80000001, 0xFFFFFFFE, 0xFFFFFFFF)
U64_EDGES = (*U32_EDGES, 1 << 32, (1 << 32) + 1, 1 << 61, 1 << 62, (1 << 63) - 1, 1 << 63,
             (1 << 63) + 1, (1 << 64) - 8, (1 << 64) - 2, (1 << 64) - 1)


# -- mutations --------------------------------------------------------------------------------
@dataclass
class Input:
    """A mutated input: the .expect, the buffers (the seed's own objects where unchanged),
    --fill, and the mutations made (their names)."""

    seed: Seed
    expect: bytes
    buffers: list[bytes]
    fill: int | None = None
    made: list[str] = field(default_factory=list)


def _get(data: bytearray, offset: int, width: int) -> int:
    return int.from_bytes(data[offset:offset + width], "little")


def _put(data: bytearray, offset: int, width: int, value: int) -> None:
    data[offset:offset + width] = (value % (1 << (8 * width))).to_bytes(width, "little")


class Mutator:
    """Seeded mutations of a corpus's seeds (aware: the format-aware ones too)."""

    def __init__(self, seeds: Sequence[Seed], rng: random.Random, aware: bool = True) -> None:
        self.seeds = list(seeds)
        self.rng = rng
        self.aware = aware

    def edge(self, width: int, current: int) -> int:
        """A boundary value of a width-byte unsigned field: a listed edge, a neighbour of the
        current value (wrapping), or a power of two and its neighbours."""
        r, rng = self.rng.random(), self.rng
        if r < 0.6:
            return rng.choice(U32_EDGES if width == 4 else U64_EDGES)
        if r < 0.8:
            return (current + rng.choice((-2, -1, 1, 2))) % (1 << (8 * width))
        return ((1 << rng.randrange(8 * width)) + rng.choice((-1, 0, 1))) % (1 << (8 * width))

    def mutate(self) -> Input:
        rng = self.rng
        seed = rng.choice(self.seeds)
        data = bytearray(seed.expect)
        case = Input(seed, seed.expect, list(seed.buffers))
        count = 1
        while count < 8 and rng.random() < 0.5:
            count += 1
        aware = [rng.random() < 0.6 for _ in range(count)] if (
            self.aware and seed.layout.fields) else [False] * count
        for _ in range(sum(aware)):  # first: they need the seed's offsets
            case.made.append(self._aware(seed.layout, data, case))
        for _ in range(count - sum(aware)):
            case.made.append(self._blind(data))
        case.expect = bytes(data)
        if rng.random() < 0.1:
            case.made.append(self._buffer(case))
        if rng.random() < 0.1:
            case.fill = rng.choice((0, 0xFF, rng.randrange(256)))
            case.made.append("fill")
        if rng.random() < 0.02:
            if len(case.buffers) > 1 or rng.random() < 0.5:
                case.buffers = case.buffers[:-1] if len(case.buffers) > 1 else []
            else:
                case.buffers = [*case.buffers, case.buffers[-1]]
            case.made.append("arity")
        return case

    # format-aware mutations
    def _aware(self, lay: Layout, data: bytearray, case: Input) -> str:
        rng = self.rng
        r = rng.random()
        if not lay.tensors or r < 0.4:
            f = rng.choice(lay.fields)
            _put(data, f.offset, f.width, self.edge(f.width, _get(data, f.offset, f.width)))
            return f"field {f.name}"
        if r < 0.6:
            return self._reshape(lay, data)
        if r < 0.85:
            return self._extent(lay, data)
        t = rng.choice(lay.tensors)
        index = lay.tensors.index(t)
        length = len(case.buffers[index]) if index < len(case.buffers) else 0
        value = rng.choice((self.edge(8, _get(data, t.total, 8)), length,
                            length + t.element_size, length - t.element_size, 0))
        _put(data, t.total, 8, value)
        return f"{t.side}.total_size"

    def _reshape(self, lay: Layout, data: bytearray) -> str:
        """New sizes for every tensor of the file at once (a relation's sides agree), the take
        axis kept; and strides: kept, packed for the new sizes, or boundary values."""
        rng = self.rng
        dimensions = min(t.dimension_count for t in lay.tensors)
        sizes = []
        for d in range(dimensions):
            r = rng.random()
            sizes.append(None if r < 0.4 or d == lay.take_axis else 1 if r < 0.6 else
                         rng.randint(1, 16) if r < 0.8 else self.edge(4, 1))
        for t in lay.tensors:
            for d, size in enumerate(sizes):
                if size is not None:
                    _put(data, t.sizes + 4 * d, 4, size)
            choice = rng.random()
            if choice < 0.4:
                continue
            stride = 1
            for d in reversed(range(t.dimension_count)):
                value = stride if choice < 0.7 else self.edge(4, stride)
                _put(data, t.strides + 4 * d, 4, value)
                stride = (stride * _get(data, t.sizes + 4 * d, 4)) % (1 << 32)
        return "reshape"

    def _extent(self, lay: Layout, data: bytearray) -> str:
        """A size and a stride of one dimension, on every tensor, whose (size - 1) * stride *
        element size lands on 2^64 (or 2^63, 2^32), give or take a little: the wrap-around of
        the extent's arithmetic. Half of the time every other dimension becomes 1 (so that the
        element count stays under the reader's 2^32 - 1)."""
        rng = self.rng
        dimensions = min(t.dimension_count for t in lay.tensors)
        d = rng.randrange(dimensions)
        bits = rng.choice((64, 64, 64, 63, 32))
        shift = lay.tensors[0].element_size.bit_length() - 1
        low, high = max(0, bits - shift - 31), min(31, bits - shift)
        if low > high:
            return "extent (none)"
        k = rng.randint(low, high)
        size = (1 << k) + 1 + rng.choice((0, 0, 0, -1, 1, -2, 2))
        stride = max(1, (1 << (bits - shift - k)) + rng.choice((0, 0, -1, 1)))
        ones = rng.random() < 0.5
        for t in lay.tensors:
            if d != lay.take_axis:
                _put(data, t.sizes + 4 * d, 4, size)
            _put(data, t.strides + 4 * d, 4, stride)
            for other in range(t.dimension_count):
                if ones and other != d and other != lay.take_axis:
                    _put(data, t.sizes + 4 * other, 4, 1)
        return f"extent 2^{bits} dim {d}"

    # format-blind mutations
    def _blind(self, data: bytearray) -> str:
        rng = self.rng
        r = rng.random()
        if not data:
            data += bytes(rng.randrange(256) for _ in range(rng.randint(1, 16)))
            return "insert"
        at = rng.randrange(len(data))
        if r < 0.2:
            data[at] ^= 1 << rng.randrange(8)
            return "bit flip"
        if r < 0.35:
            data[at] = rng.choice((0, 0xFF, 0x7F, 0x80, rng.randrange(256)))
            return "byte"
        if r < 0.55:
            width = rng.choice((4, 8))
            if at + width <= len(data):
                _put(data, at, width, self.edge(width, _get(data, at, width)))
            return "word"
        if r < 0.65:
            del data[at:]
            return "truncate"
        if r < 0.75:
            del data[at:at + rng.randint(1, 64)]
            return "delete"
        if r < 0.85:
            chunk = data[at:at + rng.randint(1, 64)]
            where = rng.randrange(len(data) + 1)
            data[where:where] = chunk
            return "duplicate"
        if r < 0.95:
            other = rng.choice(self.seeds).expect
            data[at:] = other[rng.randrange(len(other)):]
            return "splice"
        data[at:at] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 16)))
        return "insert"

    def _buffer(self, case: Input) -> str:
        rng = self.rng
        if not case.buffers:
            return "buffer (none)"
        k = rng.randrange(len(case.buffers))
        buf = bytearray(case.buffers[k])
        r = rng.random()
        if r < 0.3 and buf:
            del buf[rng.randrange(len(buf)):]
        elif r < 0.5:
            buf += bytes(rng.randrange(256) for _ in range(rng.randint(1, 64)))
        else:
            for _ in range(rng.randint(1, 8)):
                if buf:
                    buf[rng.randrange(len(buf))] = rng.choice((0, 0xFF, 0x7F, 0x80, 0x7C))
        case.buffers[k] = bytes(buf)
        return f"buffer {k}"
