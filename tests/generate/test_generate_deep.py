"""The deep tier (conformance/generate/deep.py, docs/families.md "Deep tier"): deterministic
bytes, a manifest that catches an edited, missing or extra file, a cache regenerated when stale,
`dmlconf run --tier deep` running it, and none of it in the mustpass lists. The default run
generates small slices; the whole tier is a certification test."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conformance import cli
from conformance.casefile import load_cases
from conformance.generate import deep
from conformance.results import mustpass

#: A small slice: one depth/space slice and one resample slice (about 700 cases).
SLICE = ("blocks/space_to_depth_int8", "sampling/resample_uint8")


@pytest.fixture
def small_tier(monkeypatch: pytest.MonkeyPatch) -> None:
    """The tier narrowed to SLICE, so that ensure() and the CLI work on it quickly."""
    table = deep.builders()
    monkeypatch.setattr(deep, "builders", lambda: {k: table[k] for k in SLICE})


def test_a_slice_is_the_same_bytes_every_time(tmp_path: Path) -> None:
    one = deep.write(tmp_path / "one", SLICE)
    two = deep.write(tmp_path / "two", SLICE)
    assert one == two and one["cases"] > 500
    for rel in one["files"]:
        assert (tmp_path / "one" / rel).read_bytes() == (tmp_path / "two" / rel).read_bytes()
    assert one["set_sha256"] == deep.set_hash(one["files"])
    assert one["generator"] == deep.fingerprint()


def test_the_slice_loads_tagged_and_outside_the_mustpass_lists(tmp_path: Path) -> None:
    manifest = deep.write(tmp_path, SLICE)
    cases = load_cases([tmp_path])
    assert len(cases) == manifest["cases"]
    assert all(c.id.startswith("deep/") and deep.TAG in c.tags for c in cases)
    listed = set().union(*mustpass.committed().lists.values())
    assert not listed & {c.id for c in cases}
    # a nearest call on a tie is kept, marked ambiguous (never mandatory)
    assert any(c.open for c in cases) and not all(c.open for c in cases)


def test_the_manifest_catches_an_edited_missing_or_extra_file(tmp_path: Path) -> None:
    manifest = deep.write(tmp_path, SLICE)
    assert deep.problems(tmp_path, whole=False) == []
    first = tmp_path / next(iter(manifest["files"]))
    text = first.read_text(encoding="utf-8")
    first.write_text(text.replace("InputTensor", "InputTensor ", 1), encoding="utf-8")
    assert any("was changed" in p for p in deep.problems(tmp_path, whole=False))
    first.unlink()
    assert any("is missing" in p for p in deep.problems(tmp_path, whole=False))
    first.write_text(text, encoding="utf-8")
    (tmp_path / "blocks" / "planted.yaml").write_text("cases: []\n", encoding="utf-8")
    assert deep.problems(tmp_path, whole=False) == ["blocks/planted.yaml is not in the manifest"]
    (tmp_path / "blocks" / "planted.yaml").unlink()
    doc = json.loads((tmp_path / deep.MANIFEST).read_text(encoding="utf-8"))
    doc["generator"] = "0" * 64
    (tmp_path / deep.MANIFEST).write_text(json.dumps(doc), encoding="utf-8")
    assert any("other generator code" in p for p in deep.problems(tmp_path, whole=False))
    (tmp_path / deep.MANIFEST).unlink()
    assert "never generated" in deep.problems(tmp_path, whole=False)[0]


def test_a_slice_is_not_the_whole_tier(tmp_path: Path) -> None:
    deep.write(tmp_path, SLICE[:1])
    assert deep.problems(tmp_path, whole=False) == []
    assert "another set of files" in deep.problems(tmp_path)[0]


def test_ensure_generates_then_verifies_then_regenerates(small_tier: None,
                                                        tmp_path: Path) -> None:
    said: list[str] = []
    folder = deep.ensure(tmp_path / "c", said.append)
    assert "first use" in said[0] and deep.problems(folder) == []
    said.clear()
    before = {p: p.stat().st_mtime_ns for p in folder.rglob("*.yaml")}
    assert deep.ensure(folder, said.append) == folder and said == []
    assert {p: p.stat().st_mtime_ns for p in folder.rglob("*.yaml")} == before
    victim = sorted(before)[0]
    victim.write_bytes(victim.read_bytes() + b"# edited\n")
    deep.ensure(folder, said.append)
    assert "stale or tampered" in said[0] and "was changed" in said[0]
    assert deep.problems(folder) == []


def test_dmlconf_run_tier_deep(small_tier: None, tmp_path: Path,
                               monkeypatch: pytest.MonkeyPatch,
                               capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("DMLCONF_CACHE", str(tmp_path / "cache"))
    folder = deep.cache_folder()
    assert folder == tmp_path / "cache" / "deep" / deep.__version__
    status = cli.main(["run", "--tier", "deep", "-k", "deep/blocks/*/b8/*", "--no-isolate",
                       "-q", "--json", str(tmp_path / "r.json")])
    err = capsys.readouterr().err
    assert status == 0 and "first use" in err
    doc = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert len(doc["results"]) == 20
    assert {r["status"] for r in doc["results"]} == {"PASS"}
    assert cli.main(["generate", "--tier", "deep", "--check"]) == 0
    victim = sorted(folder.rglob("*.yaml"))[0]
    victim.write_text(victim.read_text(encoding="utf-8") + "# edited\n", encoding="utf-8")
    assert cli.main(["generate", "--tier", "deep", "--check"]) == 1
    assert "was changed" in capsys.readouterr().err


@pytest.mark.certification
def test_the_whole_tier(tmp_path: Path) -> None:
    manifest = deep.write(tmp_path)
    assert manifest["cases"] >= 50_000
    assert deep.problems(tmp_path) == []
    cases = load_cases([tmp_path])
    assert len({c.id for c in cases}) == manifest["cases"]
    again = deep.write(tmp_path / "again")
    assert again["set_sha256"] == manifest["set_sha256"]
