"""The C checker's boundaries (issue 24; docs/robustness.md, "Boundaries"): crafted .expect files
whose Sizes and strides reach past 2^64 bytes, or whose other counts and fields are out of
range, are refused as input errors (exit status 3, a message naming the file and the field),
never read out of bounds. Before the fix the extent, (sum of (size - 1) * stride, + 1) * element
size, was computed in wrapping 64-bit arithmetic: the files with a `wrapped` tensor below passed
its check against TotalTensorSizeInBytes and the checker read 16 GiB past a 16-byte buffer
(SEGV). Each file is judged by the checker as a harness builds it and by the same checker under
AddressSanitizer and UndefinedBehaviorSanitizer, which must report nothing."""

from __future__ import annotations

import struct
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from conformance.export import expectfile
from conformance.export.c import fuzz

INT64, FLOAT32 = 11, 1
ELEMENT_SIZE = {INT64: 8, FLOAT32: 4}
#: The bytes of each buffer given (both outputs of a relation) and each tensor's default total.
BUFFER = 16


@dataclass(frozen=True)
class Tensor:
    data_type: int
    sizes: tuple[int, ...]
    strides: tuple[int, ...]
    total: int = BUFFER

    def encode(self) -> bytes:
        return (struct.pack("<IIQ", self.data_type, len(self.sizes), self.total)
                + b"".join(struct.pack("<I", v) for v in (*self.sizes, *self.strides)))

    def passed_the_unfixed_check(self) -> bool:
        """Whether the check before the fix, in its wrapping 64-bit arithmetic, let it by."""
        last = sum((s - 1) * t for s, t in zip(self.sizes, self.strides, strict=True))
        return ((last + 1) * ELEMENT_SIZE[self.data_type]) % 2**64 <= self.total


NAME = b"OutputTensor"
RULE = b"crafted"


def relation(left: Tensor, right: Tensor | None = None, axis: int = -1,
             take: tuple[int, ...] = ()) -> bytes:
    """A relation's .expect (conformance/export/expectfile.py's layout): left == right, bit
    for bit."""
    model = struct.pack("<III", expectfile.KINDS["exact"], 0, len(RULE)) + RULE + struct.pack(
        "<I", 0)
    return (expectfile.MAGIC + struct.pack("<II", expectfile.RELATION, len(NAME)) + NAME
            + left.encode() + (right or left).encode() + struct.pack("<iI", axis, len(take))
            + b"".join(struct.pack("<I", i) for i in take) + struct.pack("<II", 0, 1) + model
            + struct.pack("<I", 0))  # no other readings


def output(tensor: Tensor) -> bytes:
    """An output's .expect, up to its value array (the tensor is checked before)."""
    return (expectfile.MAGIC + struct.pack("<II", expectfile.OUTPUT, len(NAME)) + NAME
            + tensor.encode() + struct.pack("<IBI", 1, 0xCD, 1)
            + struct.pack("<IIII", expectfile.KINDS["exact"], 0, 0, 1))


@dataclass(frozen=True)
class Crafted:
    data: bytes
    says: str                      # in the message
    wrapped: Tensor | None = None  # the tensor the unfixed checker's check let by


SANE = Tensor(INT64, (2,), (1,))
#: (2^30) * 2^31 elements = 2^61, * 8 bytes = 2^64: wrapped to 8 <= 16
TERM = Tensor(INT64, (2**30 + 1,), (2**31,))
#: (2^31) * 2^31 = 2^62, * 4 bytes = 2^64
TERM32 = Tensor(FLOAT32, (2**31 + 1,), (2**31,))
#: each term fits; their sum, 2^61 elements, * 8 wraps to 8
SUM = Tensor(INT64, (2**30 + 1, 2), (2**31 - 1, 2**30))
#: the last element starts at byte 2^64 - 8, and offset + 8 wraps to 0
NEAR = Tensor(INT64, (2**30 + 1, 2), (2**31 - 1, 2**30 - 1))
LARGEST = 2**64 - 1

CRAFTED = {
    "size-times-stride-overflows": Crafted(
        relation(TERM), "the left side's Sizes and strides: dimension 0 (size 1073741825, "
        "stride 2147483648, 8-byte elements) reaches past 2^64 bytes", TERM),
    "size-times-stride-overflows-float32": Crafted(
        relation(TERM32), "the left side's Sizes and strides: dimension 0 (size 2147483649, "
        "stride 2147483648, 4-byte elements) reaches past 2^64 bytes", TERM32),
    "sum-of-terms-overflows": Crafted(
        relation(SUM), "the left side's Sizes and strides: dimension 0 (size 1073741825, "
        "stride 2147483647) addresses byte 18446744065119617024, beyond "
        "TotalTensorSizeInBytes 16", SUM),
    "sum-of-terms-overflows-under-the-largest-total": Crafted(
        relation(Tensor(INT64, SUM.sizes, SUM.strides, LARGEST)),
        "the left side's Sizes and strides: the last element (element offset "
        "2305843009213693952, the sum of (size - 1) * stride; 8-byte elements) ends past 2^64 "
        "bytes"),
    "offset-near-2^64": Crafted(
        relation(NEAR), "the left side's Sizes and strides: dimension 0 (size 1073741825, "
        "stride 2147483647) addresses byte 18446744065119617024, beyond "
        "TotalTensorSizeInBytes 16", NEAR),
    "offset-near-2^64-under-the-largest-total": Crafted(
        relation(Tensor(INT64, NEAR.sizes, NEAR.strides, LARGEST)),
        "the left side's Sizes and strides: the last element (element offset "
        "2305843009213693951, the sum of (size - 1) * stride; 8-byte elements) ends past 2^64 "
        "bytes"),
    "right-side-overflows": Crafted(
        relation(Tensor(INT64, TERM.sizes, (0,)), TERM), "the right side's Sizes and strides: "
        "dimension 0 (size 1073741825, stride 2147483648, 8-byte elements) reaches past 2^64 "
        "bytes", TERM),
    "output-overflows": Crafted(
        output(Tensor(INT64, (1, 2**30 + 1), (1, 2**31))), "the output's Sizes and strides: "
        "dimension 1 (size 1073741825, stride 2147483648, 8-byte elements) reaches past 2^64 "
        "bytes"),
    "element-count-over-2^32": Crafted(
        relation(Tensor(INT64, (2**16, 2**16), (0, 0))),
        "the left side's Sizes: more than 2^32 - 1 elements"),
    "dimension-count-over-8": Crafted(
        relation(Tensor(INT64, (1,) * 9, (0,) * 9)),
        "the left side's dimension count 9 is not 1 to 8"),
    "take-axis-below-minus-1": Crafted(
        relation(SANE, axis=-5),
        "take axis -5 is neither -1 (none) nor a dimension of the right side"),
    "take-indices-without-an-axis": Crafted(
        relation(SANE, take=(0, 1)), "2 take indices without a take axis"),
    "take-index-beyond-the-right-side": Crafted(
        relation(SANE, axis=0, take=(0, 2**32 - 1)),
        "take index 4294967295 beyond the right side's size"),
    "name-longer-than-the-file": Crafted(
        relation(SANE).replace(struct.pack("<I", len(NAME)) + NAME,
                               struct.pack("<I", 2**32 - 1) + NAME),
        "the file ends inside the name (4294967295 bytes needed"),
}


def judge(exe: Path, folder: Path, name: str, data: bytes) -> subprocess.CompletedProcess[str]:
    """dmlconf_check FILE.expect LEFT RIGHT on one crafted file, both buffers 16 zero bytes."""
    expect = folder / f"{name}.expect"
    expect.write_bytes(data)
    buffer = folder / "buffer.bin"
    buffer.write_bytes(bytes(BUFFER))
    return subprocess.run([str(exe), str(expect), str(buffer), str(buffer)],
                          capture_output=True, text=True, timeout=120,
                          env=fuzz.sanitized_environment())


def test_the_crafted_files_differ_from_a_passing_one_only_where_they_say(
        checker: Path, tmp_path: Path) -> None:
    """The same writer with sane Sizes and strides makes a file the checker passes; the
    wrapped tensors passed the check before the fix (so they test its arithmetic)."""
    done = judge(checker, tmp_path, "sane", relation(SANE))
    assert done.returncode == 0, (done.stdout, done.stderr)
    assert done.stdout.startswith("PASS: relation OutputTensor: all 2 elements pass (crafted)")
    wrapped = [c.wrapped for c in CRAFTED.values() if c.wrapped is not None]
    assert len(wrapped) == 5 and all(t.passed_the_unfixed_check() for t in wrapped)


@pytest.mark.parametrize("name", sorted(CRAFTED))
def test_a_crafted_file_is_an_input_error_not_a_crash(name: str, checker: Path,
                                                      tmp_path: Path) -> None:
    done = judge(checker, tmp_path, name, CRAFTED[name].data)
    assert done.returncode == 3, (done.returncode, done.stdout, done.stderr)  # 3: not a signal
    assert not done.stdout, done.stdout
    assert done.stderr.startswith(f"dmlconf_check: {tmp_path / name}.expect: "), done.stderr
    assert CRAFTED[name].says in done.stderr, done.stderr


def test_a_total_size_near_2_64_is_a_buffer_error(checker: Path, tmp_path: Path) -> None:
    done = judge(checker, tmp_path, "total", relation(Tensor(INT64, (2,), (1,), LARGEST)))
    assert done.returncode == 3, (done.returncode, done.stdout, done.stderr)
    assert done.stdout.startswith("ERROR: relation OutputTensor: the buffers hold 16 and 16 "
                                  "bytes; TotalTensorSizeInBytes is 18446744073709551615 and")


@pytest.mark.parametrize("name", sorted(CRAFTED))
def test_a_crafted_file_gives_no_sanitizer_report(name: str, sanitized_checker: Path,
                                                  tmp_path: Path) -> None:
    done = judge(sanitized_checker, tmp_path, name, CRAFTED[name].data)
    assert not fuzz.sanitizer_report(done.stderr), done.stderr[-3000:]
    assert done.returncode == 3 and CRAFTED[name].says in done.stderr, done.stderr[-3000:]
