"""What `dmlconf verify` reads of a bundle is capped (issue 24; conformance/certify/unpack.py,
MEMBER_CAPS, MAX_MEMBER, MAX_UNZIPPED): a member whose header says more than its cap is refused
unread, one whose header lies is read no further than the cap allows, the zip as a whole is
bounded, and its memory stays small whatever a member inflates to. Crafted zips only (no
certification): the unit tier."""

from __future__ import annotations

import io
import struct
import tracemalloc
import zipfile
from pathlib import Path

import pytest

from conformance.certify import unpack as verifying
from conformance.certify.unpack import (
    MAX_MEMBER,
    MEMBER_CAPS,
    BundleError,
    member_cap,
    read_bounded,
)
from conformance.certify.verify import verify
from conformance.cli import main


class Endless(io.RawIOBase):
    """A stream of zeros without end, counting what was read of it."""

    def __init__(self) -> None:
        self.given = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        n = len(buffer)
        buffer[:n] = bytes(n)
        self.given += n
        return n


def _zeros_zip(path: Path, name: str, size: int) -> None:
    """A zip of one deflated member of `size` zero bytes (~1,000 times smaller), written in
    steps (the test holds no `size` bytes either)."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z, z.open(name, "w") as f:
        block = bytes(1 << 20)
        for _ in range(size >> 20):
            f.write(block)


def _lie_about_size(path: Path, size: int) -> None:
    """Patch the uncompressed size of the zip's one member in its local header and its central
    directory entry (as a hostile zip would): the CRC and the data are left as they are."""
    data = bytearray(path.read_bytes())
    assert data[:4] == b"PK\x03\x04"
    struct.pack_into("<I", data, 22, size)
    central = data.rfind(b"PK\x01\x02")
    struct.pack_into("<I", data, central + 24, size)
    path.write_bytes(bytes(data))
    with zipfile.ZipFile(path) as z:
        assert z.infolist()[0].file_size == size


def test_the_caps_are_what_each_file_is() -> None:
    assert member_cap("results.json") == member_cap("b/results.json") == 128 << 20
    assert member_cap("b/statement.md") == member_cap("b/SHA256SUMS") == 1 << 20
    assert member_cap("b/environment.json") == 1 << 20
    assert member_cap("b/baseline.yaml") == 16 << 20
    assert member_cap("b/report.html") == member_cap("b/run.log") == MAX_MEMBER == 512 << 20
    assert max(MEMBER_CAPS.values()) < MAX_MEMBER < verifying.MAX_UNZIPPED


def test_a_bounded_read_stops_at_the_cap_and_one_byte() -> None:
    endless, out = Endless(), io.BytesIO()
    assert read_bounded(io.BufferedReader(endless, 1), out, 100_000) == 100_001
    assert endless.given == 100_001  # not a byte more was asked for
    assert len(out.getvalue()) <= 100_000
    out = io.BytesIO()
    assert read_bounded(io.BytesIO(b"x" * 1000), out, 1000) == 1000
    assert out.getvalue() == b"x" * 1000


def test_a_member_whose_header_says_more_than_its_cap_is_refused_unread(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(MEMBER_CAPS, "results.json", 1 << 10)  # a stand-in small cap
    bad = tmp_path / "big.zip"
    with zipfile.ZipFile(bad, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("b/results.json", b"{}" * 2000)

    def never(*args: object, **kwargs: object) -> None:
        raise AssertionError("a member was read")

    monkeypatch.setattr(zipfile.ZipFile, "open", never)
    with pytest.raises(BundleError, match=r"member b/results\.json is larger than 1 KiB, the "
                                          r"cap on a bundle's results\.json: its header says "
                                          r"4,000 bytes \(refused unread\)"):
        verify(bad)
    assert main(["verify", str(bad)]) == 2


def test_a_member_inflating_past_what_its_header_says_is_refused_in_bounded_memory(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Its header says 1,000 bytes, it inflates to 64 MiB (over a stand-in cap of 16 MiB): read
    no further than the header says (zipfile stops there, and the CRC then fails), and
    verify's memory stays a few MiB."""
    monkeypatch.setitem(MEMBER_CAPS, "results.json", 16 << 20)
    bad = tmp_path / "bomb.zip"
    _zeros_zip(bad, "b/results.json", 64 << 20)
    assert bad.stat().st_size < 1 << 20
    _lie_about_size(bad, 1000)
    tracemalloc.start()
    try:
        with pytest.raises(BundleError, match=r"member 'b/results\.json' does not unpack \(Bad "
                                              r"CRC-32 .*\): the zip is damaged or was altered"):
            verify(bad)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 8 << 20, peak


def test_a_member_read_past_its_cap_is_refused_at_the_cap_and_one_byte(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Were the zip reader to believe a member's data over its header (a reader that inflates
    what is there), verify's own bounded read still stops at the cap and one byte."""
    monkeypatch.setitem(MEMBER_CAPS, "results.json", 1 << 20)
    bad = tmp_path / "liar.zip"
    with zipfile.ZipFile(bad, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("b/results.json", b"{}")
    endless = Endless()
    monkeypatch.setattr(zipfile.ZipFile, "open",
                        lambda self, *a, **k: io.BufferedReader(endless, 1 << 16))
    with pytest.raises(BundleError, match=r"member b/results\.json is larger than 1 MiB, the "
                                          r"cap on a bundle's results\.json, though its "
                                          r"header says 2 bytes: refused, read no further"):
        verify(bad)
    assert endless.given <= (1 << 20) + (1 << 16)  # the buffer's one read ahead at most


def test_the_zip_as_a_whole_is_capped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(verifying, "MAX_UNZIPPED", 64 << 10)
    many = tmp_path / "many.zip"
    with zipfile.ZipFile(many, "w", zipfile.ZIP_DEFLATED) as z:
        for i in range(3):  # each under its cap (MAX_MEMBER), together over the whole's
            z.writestr(f"b/extra{i}.txt", bytes(30 << 10))
    with pytest.raises(BundleError, match=r"many\.zip: unpacks to more than 64 KiB"):
        verify(many)
    (tmp_path / "huge.zip").write_bytes(bytes(65 << 10))
    with pytest.raises(BundleError, match=r"huge\.zip: larger than 64 KiB, more than any "
                                          r"bundle"):
        verify(tmp_path / "huge.zip")


def test_a_zip_of_too_many_members_or_another_compression_is_refused(tmp_path: Path) -> None:
    many = tmp_path / "many.zip"
    with zipfile.ZipFile(many, "w") as z:
        for i in range(verifying.MAX_MEMBERS + 1):
            z.writestr(f"b/{i}", "")
    with pytest.raises(BundleError, match=r"65 members, more than the 64 a bundle's zip may"):
        verify(many)
    for method in (zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA):
        packed = tmp_path / f"{method}.zip"
        with zipfile.ZipFile(packed, "w", method) as z:
            z.writestr("b/results.json", "{}")
        with pytest.raises(BundleError, match=rf"member 'b/results\.json' is compressed with "
                                              rf"method {method}: a bundle's zip holds deflated "
                                              r"or stored members only"):
            verify(packed)


def test_a_folder_bundles_file_over_its_cap_is_refused_unread(tmp_path: Path) -> None:
    b = tmp_path / "b"
    b.mkdir()
    with (b / "environment.json").open("wb") as f:
        f.truncate((1 << 20) + 1)  # sparse
    with pytest.raises(BundleError, match=r"environment\.json is larger than 1 MiB, the cap "
                                          r"on a bundle's environment\.json"):
        verify(b)
