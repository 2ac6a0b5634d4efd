"""A certification bundle read within bounds (conformance.certify.verify checks what is in it):
every file of a folder bundle a regular file within its cap, checked before any is read; a zip's
members checked (plain relative names, each once, regular files, deflated or stored, their
headers within their caps) before any is opened, then each extracted through read_bounded, which
stops at the member's cap and one byte whatever its header says, all of them within
MAX_UNZIPPED (issue 24: a 3 GB statement.md ended verify in MemoryError).
"""

from __future__ import annotations

import os
import stat
import tempfile
import zipfile
import zlib
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path, PurePosixPath
from typing import IO

from conformance.certify.bundle import BASELINE, ENVIRONMENT, RESULTS, STATEMENT, SUMS

#: The caps on what verify reads of a bundle (issue 24), by what its files legitimately are.
#: Measured on the whole suite (6,997 cases): results.json is 6.5 MB all passing and 24 MB with
#: 6,398 cases failing (3.4 KB a result, 32 KB the largest); report.html 0.5 and 42 MB,
#: junit.xml 2 and 7 MB, report.md 3 and 40 KB; environment.json, statement.md and SHA256SUMS a
#: few KB. A file of a folder bundle is refused unread when larger than its cap; a zip's member
#: when its header says more, and its reading stops at cap + 1 bytes whatever the header says.
#:
#: Any file the caps below do not name: the reports and run.log are only hashed, streamed
#: (sha256_file), so their cap bounds verify's disk and time, not its memory: 12 times the
#: largest report measured.
MAX_MEMBER = 512 << 20
#: The files verify parses or reads whole, by name: results.json is parsed into memory (~8 times
#: its size: 24 MB takes 170 MB), so 128 MiB (5 times the largest measured, ~1 GiB to parse);
#: environment.json (the backend's environment alone is at most 64 entries of 2,000 characters),
#: statement.md (a page of prose) and SHA256SUMS (a line per file) 1 MiB; baseline.yaml 16 MiB
#: (even a pattern per case of the suite is under 1 MB).
MEMBER_CAPS: dict[str, int] = {RESULTS: 128 << 20, ENVIRONMENT: 1 << 20, STATEMENT: 1 << 20,
                               SUMS: 1 << 20, BASELINE: 16 << 20}
#: The most a zipped bundle may unpack to, all its members together, and the largest zip verify
#: opens: a bundle of the whole suite, everything failing, is ~80 MB unpacked.
MAX_UNZIPPED = 1 << 30
#: The most members a zip may have: a bundle has 9 files and its folder.
MAX_MEMBERS = 64
#: What a zip member is read in, so that no read holds more than this beyond the cap.
READ_CHUNK = 1 << 16


class BundleError(ValueError):
    """BUNDLE is no bundle at all (not found, not a folder or a zip): a usage error."""


def member_cap(name: str) -> int:
    """The most bytes verify reads of a bundle's file (its path in the bundle or the zip):
    MEMBER_CAPS by its file name, else MAX_MEMBER."""
    return MEMBER_CAPS.get(PurePosixPath(name).name, MAX_MEMBER)


def _size(n: int) -> str:
    """A cap in words: '128 MiB', '1 GiB', '300 bytes'."""
    for shift, unit in ((30, "GiB"), (20, "MiB"), (10, "KiB")):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift} {unit}"
    return f"{n:,} bytes"


def _over(where: str, cap: int) -> str:
    """'b/statement.md is larger than 1 MiB, the cap on a bundle's statement.md'."""
    name = PurePosixPath(where).name
    what = f"a bundle's {name}" if name in MEMBER_CAPS else "any file of a bundle"
    return f"{where} is larger than {_size(cap)}, the cap on {what}"


def plain_files(folder: Path) -> None:
    """BundleError unless everything in the bundle's folder is a folder or a regular file of at
    most its cap (member_cap), checked before any is read: a link could point verify at another
    file, a FIFO or device could hang it, a huge file exhaust its memory."""
    for top, folders, files in os.walk(folder, followlinks=False):
        for name in [*folders, *files]:
            entry = Path(top, name)
            mode = entry.lstat()
            where = entry.relative_to(folder)
            if stat.S_ISDIR(mode.st_mode):
                continue
            if not stat.S_ISREG(mode.st_mode):
                raise BundleError(f"{folder}: {where} is a link or special file, not a plain "
                                  "file: a bundle holds regular files only")
            if mode.st_size > member_cap(name):
                raise BundleError(f"{folder}: {_over(where.as_posix(), member_cap(name))}")


def read_bounded(src: IO[bytes], dst: IO[bytes], cap: int) -> int:
    """Copy src to dst, reading at most cap + 1 bytes (READ_CHUNK at a time): the number of
    bytes read, cap + 1 when src holds more than cap (the chunk that crosses the cap is not
    written: the caller refuses the member)."""
    got = 0
    while got <= cap:
        chunk = src.read(min(READ_CHUNK, cap + 1 - got))
        if not chunk:
            break
        got += len(chunk)
        if got > cap:
            break
        dst.write(chunk)
    return got


def _check_members(path: Path, members: list[zipfile.ZipInfo]) -> None:
    """BundleError for a zip verify does not unpack, decided from its directory alone: too many
    members, one named twice, a link or special file, a name out of the bundle, a compression
    other than deflate or none, encryption, or a size said over its cap or over MAX_UNZIPPED
    in all."""
    if len(members) > MAX_MEMBERS:
        raise BundleError(f"{path}: {len(members):,} members, more than the {MAX_MEMBERS} a "
                          "bundle's zip may have")
    if sum(m.file_size for m in members) > MAX_UNZIPPED:
        raise BundleError(f"{path}: unpacks to more than {_size(MAX_UNZIPPED)}")
    counts = Counter(m.filename.rstrip("/") for m in members)
    twice = sorted(n for n, k in counts.items() if k > 1)
    if twice:
        raise BundleError(f"{path}: member {twice[0]!r} is in the zip {counts[twice[0]]} "
                          "times: tools disagree on which one is the bundle's")
    for m in members:
        if stat.S_IFMT(m.external_attr >> 16) not in (0, stat.S_IFREG, stat.S_IFDIR):
            raise BundleError(f"{path}: member {m.filename!r} is a link or special "
                              "file, not a plain file")
        parts = PurePosixPath(m.filename).parts
        if m.filename.startswith(("/", "\\")) or ".." in parts or ":" in m.filename:
            raise BundleError(f"{path}: member {m.filename!r} is not a plain relative "
                              "path")
        if m.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            # bzip2 and LZMA members are inflated a whole compressed block at a time, with no
            # bound on what one block gives: only deflate is read in bounded steps
            raise BundleError(f"{path}: member {m.filename!r} is compressed with method "
                              f"{m.compress_type}: a bundle's zip holds deflated or stored "
                              "members only (certify writes deflated ones)")
        if m.flag_bits & 0x1:
            raise BundleError(f"{path}: member {m.filename!r} is encrypted")
        if not m.is_dir() and m.file_size > member_cap(m.filename):
            raise BundleError(f"{path}: member {_over(m.filename, member_cap(m.filename))}: "
                              f"its header says {m.file_size:,} bytes (refused unread)")


def _extract(path: Path, z: zipfile.ZipFile, m: zipfile.ZipInfo, into: Path,
             left: int) -> int:
    """Unpack one member (checked by _check_members) under `into` through read_bounded: at most
    its cap, and at most `left` bytes, the rest of MAX_UNZIPPED; the bytes it holds. BundleError
    when it holds more than either, or other than its header says, or does not inflate."""
    target = into.joinpath(*PurePosixPath(m.filename).parts)
    if m.is_dir():
        target.mkdir(parents=True, exist_ok=True)
        return 0
    cap = member_cap(m.filename)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        with z.open(m) as src, open(target, "xb") as dst:
            got = read_bounded(src, dst, min(cap, left))
    except OSError as exc:  # writing it (the disk full), or reading the zip
        raise BundleError(f"{path}: member {m.filename!r} does not unpack into {into}: "
                          f"{exc}") from None
    except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError,
            RuntimeError) as exc:
        raise BundleError(f"{path}: member {m.filename!r} does not unpack ({exc}): the zip is "
                          "damaged or was altered") from None
    if got > cap:
        raise BundleError(f"{path}: member {_over(m.filename, cap)}, though its header says "
                          f"{m.file_size:,} bytes: refused, read no further")
    if got > left:
        raise BundleError(f"{path}: unpacks to more than {_size(MAX_UNZIPPED)}, though its "
                          "headers say less: refused, read no further")
    if got != m.file_size:
        raise BundleError(f"{path}: member {m.filename!r} unpacks to {got:,} bytes, its header "
                          f"says {m.file_size:,}: the zip is damaged or was altered")
    return got


def _unzip(path: Path, into: Path) -> Path:
    """Unpack the zip into `into`, checked (_check_members) before anything is read and read
    through bounded readers (_extract); the bundle's folder: its one top-level folder, or
    `into`."""
    if path.stat().st_size > MAX_UNZIPPED:
        raise BundleError(f"{path}: larger than {_size(MAX_UNZIPPED)}, more than any bundle")
    try:
        with zipfile.ZipFile(path) as z:
            members = z.infolist()
            _check_members(path, members)
            left = MAX_UNZIPPED
            for m in members:
                left -= _extract(path, z, m, into, left)
    except zipfile.BadZipFile as exc:
        raise BundleError(f"{path}: not a zip file ({exc})") from None
    tops = list(into.iterdir())
    return tops[0] if len(tops) == 1 and tops[0].is_dir() else into


@contextmanager
def unpacked(bundle: str | Path) -> Iterator[tuple[Path, str]]:
    """The bundle's folder and its name as given: a folder as it is, a zip unpacked into a
    temporary folder (removed after). BundleError when it is neither, or a zip verify refuses
    to unpack (_unzip)."""
    path = Path(bundle)
    if path.is_dir():
        yield path, str(path)
        return
    if not path.is_file():
        raise BundleError(f"{path}: no such folder or file")
    with tempfile.TemporaryDirectory(prefix="dmlconf-verify-") as tmp:
        yield _unzip(path, Path(tmp)), str(path)
