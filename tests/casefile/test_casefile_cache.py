"""The parse cache (conformance.casefile.cache): a file seen before is read from its entry, a
changed file is parsed again, a corrupt or foreign entry is ignored and written again, errors
are never cached, and -k / --shard build only the cases they select."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from conformance.casefile import (
    CaseFileError,
    build_indexed,
    cache,
    case_set_hash,
    index,
    load_cases,
    load_file,
    select_indexed,
)
from conformance.casefile import build as casefile_build
from conformance.session.run import RunOptions, Session
from tests.casefile.test_casefile_hostile import VALID


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("DMLCONF_CACHE", str(folder))
    return folder / "parse"


def entries(folder: Path) -> list[Path]:
    return sorted(folder.rglob("*.json")) if folder.exists() else []


def two_cases(first: str = "t/one", second: str = "t/two") -> str:
    body = VALID.split("\n", 1)[1]
    return "cases:\n" + body.replace("t/one", first) + body.replace("t/one", second)


def builds(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The ids of the cases build_case is asked to build, from now on."""
    built: list[str] = []
    real = casefile_build.build_case

    def counting(item, *args, **kwargs):  # type: ignore[no-untyped-def]
        built.append(item["id"])
        return real(item, *args, **kwargs)

    monkeypatch.setattr(casefile_build, "build_case", counting)
    return built


def test_a_second_load_reads_the_entry_and_makes_the_same_cases(
        cache_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(two_cases())
    monkeypatch.setenv("DMLCONF_CACHE", "off")
    uncached = load_file(path)
    monkeypatch.setenv("DMLCONF_CACHE", str(cache_dir.parent))
    first = load_file(path)
    assert len(entries(cache_dir)) == 1
    # the second load composes no YAML and checks no schema
    monkeypatch.setattr("conformance.casefile.load.parse", lambda *a: pytest.fail("parsed"))
    again = load_file(path)
    for cases in (first, again):
        assert cases == uncached and [c.raw for c in cases] == [c.raw for c in uncached]
        assert [c.digest() for c in cases] == [
            hashlib.sha256(json.dumps(c.raw, sort_keys=True).encode()).hexdigest()
            for c in uncached]
        assert [c.line for c in cases] == [2, 14]
        assert case_set_hash(cases) == case_set_hash(uncached)


def test_an_edited_file_is_parsed_again(cache_dir: Path, tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(two_cases())
    assert [c.id for c in load_file(path)] == ["t/one", "t/two"]
    path.write_text(two_cases(second="t/edited").replace("[1, 2, 3, 4, 5, 6]",
                                                          "[6, 5, 4, 3, 2, 1]"))
    cases = load_file(path)
    assert [c.id for c in cases] == ["t/one", "t/edited"]
    assert cases[1].inputs["call.InputTensor"].params == [6, 5, 4, 3, 2, 1]
    assert len(entries(cache_dir)) == 2  # one per content; the old one is harmless


@pytest.mark.parametrize("damage", [
    lambda b: b[: len(b) // 2],  # truncated
    lambda b: b.replace(b"t/two", b"t/xwo"),  # payload changed: its sha256 no longer matches
    lambda b: b"\x00\xff" + b,  # junk
    lambda b: b"",
    lambda b: b'{"format": "dmlconf-parse/1", "key": "another", "cases": []}\n[]\n',  # foreign
])
def test_a_corrupt_or_foreign_entry_is_ignored_and_written_again(
        cache_dir: Path, tmp_path: Path, damage) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "c.yaml"
    path.write_text(two_cases())
    first = load_file(path)
    (entry,) = entries(cache_dir)
    good = entry.read_bytes()
    entry.write_bytes(damage(good))
    errors: list[CaseFileError] = []
    assert load_file(path, errors) == first and errors == []
    assert entry.read_bytes() == good


def test_errors_are_never_cached(cache_dir: Path, tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(two_cases().replace("feature_level", "level", 1))
    for _ in range(2):
        errors: list[CaseFileError] = []
        assert [c.id for c in load_file(path, errors)] == ["t/two"]
        assert [(e.line, "'feature_level' is a required property" in e.message)
                for e in errors] == [(2, True)]
    assert entries(cache_dir) == []
    path.write_text("cases: [\n")
    for _ in range(2):
        with pytest.raises(CaseFileError, match=r"bad.yaml:2: not valid YAML"):
            load_file(path)
    assert entries(cache_dir) == []


def test_a_case_failing_its_checks_from_the_cache_keeps_its_exact_line(
        cache_dir: Path, tmp_path: Path) -> None:
    """The schema passes (the file is cached) but the operator's check fails: on every load,
    and with the line of the nested key, which the cache does not keep."""
    path = tmp_path / "c.yaml"
    path.write_text(two_cases().replace("6]}", "600]}", 1))
    seen = []
    for _ in range(2):
        errors: list[CaseFileError] = []
        assert [c.id for c in load_file(path, errors)] == ["t/two"]
        seen.append([str(e) for e in errors])
    assert len(entries(cache_dir)) == 1
    assert seen[0] == seen[1] and len(seen[0]) == 1
    assert seen[0][0].startswith(f"{path}:11: case t/one: ") and "600" in seen[0][0]


def test_the_cache_can_be_turned_off_or_unwritable(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(VALID)
    monkeypatch.setenv("DMLCONF_CACHE", "off")
    assert [c.id for c in load_file(path)] == ["t/one"]
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("DMLCONF_CACHE", str(blocker))  # parse/ cannot be made under a file
    assert [c.id for c in load_file(path)] == ["t/one"]
    assert not (tmp_path / "parse").exists()


def test_k_builds_only_the_cases_it_selects(cache_dir: Path, tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "a.yaml").write_text(two_cases("a/one", "a/two"))
    (tmp_path / "b.yaml").write_text(two_cases("b/one", "b/two"))
    load_cases([tmp_path])  # warms the cache
    built = builds(monkeypatch)
    assert [c.id for c in load_cases([tmp_path], patterns=["b/tw"])] == ["b/two"]
    assert built == ["b/two"]
    built.clear()
    chosen = select_indexed(index([tmp_path]), ["*/one"])
    assert [e.id for e in chosen] == ["a/one", "b/one"] and built == []
    assert [c.id for c in build_indexed(chosen)] == ["a/one", "b/one"]
    # the index's digests are the built cases' own: a shard names the whole selection
    assert case_set_hash(chosen) == case_set_hash(load_cases([tmp_path], patterns=["*/one"]))


def test_duplicate_ids_are_refused_from_the_index(cache_dir: Path, tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text(two_cases("x/same", "a/two"))
    (tmp_path / "b.yaml").write_text(two_cases("x/same", "b/two"))
    for _ in range(2):
        errors: list[CaseFileError] = []
        assert [c.id for c in load_cases([tmp_path], errors, ["two"])] == ["a/two", "b/two"]
        assert [str(e) for e in errors] == [
            f"{tmp_path / 'b.yaml'}:2: case id 'x/same' is already used at "
            f"{tmp_path / 'a.yaml'}:2"]


def test_a_shard_builds_only_its_own_cases(cache_dir: Path, tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "a.yaml").write_text(two_cases("a/one", "a/two"))
    (tmp_path / "b.yaml").write_text(two_cases("b/one", "b/two"))
    whole = load_cases([tmp_path])
    built = builds(monkeypatch)
    session = Session(RunOptions(cases=(tmp_path,), shard="2/3"))
    assert [c.id for c in session.select()] == ["a/two"] and built == ["a/two"]
    assert len(session.selected) == 4 and built == ["a/two"]
    assert session.shard == {"index": 2, "count": 3, "cases": 1, "of_cases": 4,
                             "full_case_set_sha256": case_set_hash(whole)}
    assert [c.id for c in session.selected] == [c.id for c in whole]  # built when read


def test_an_entry_is_json_data(cache_dir: Path, tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(two_cases())
    load_file(path)
    (entry,) = entries(cache_dir)
    head, payload = entry.read_bytes().split(b"\n")[:2]
    header = json.loads(head)
    assert header["format"] == cache.FORMAT and header["key"] == entry.stem
    assert [row[0] for row in header["cases"]] == ["t/one", "t/two"]
    assert [case["id"] for _, case in json.loads(payload)] == ["t/one", "t/two"]


def poison(folder: Path, case_id: str) -> None:
    """Rewrite the entry holding case_id as a backend running as the same user could: the
    case's description changed, the payload's sha256 recomputed, its index (and so the digest
    the case-set hash is made from) kept."""
    for path in entries(folder):
        head, payload = path.read_bytes().split(b"\n", 1)
        if case_id.encode() not in payload:
            continue
        cases = json.loads(payload)
        for _, case in cases:
            if case["id"] == case_id:
                case["description"] = "POISONED"
        payload = json.dumps(cases, separators=(",", ":")).encode()
        header = json.loads(head)
        header["payload_sha256"] = hashlib.sha256(payload).hexdigest()
        path.write_bytes(json.dumps(header).encode() + b"\n" + payload)
        return
    raise AssertionError(f"no entry holds {case_id}")


def test_a_certification_believes_no_entry_a_backend_could_have_rewritten(
        cache_dir: Path, tmp_path: Path) -> None:
    """The cache folder is writable by the user the backend runs as: an entry rewritten with
    its sha256 recomputed is believed by an ordinary run (that is what a cache is), never by
    a certification (RunOptions(certify=True): cache.fresh()), whose cases and case-set hash
    come from the files themselves (which a poisoned entry could otherwise fake: it keeps the
    index's digest)."""
    from tests.support import DOCUMENTED

    source = DOCUMENTED / "depth_to_space1.yaml"
    target = "documented/depth_to_space1/example-1-depth-column-row"
    honest = {c.id: c for c in load_cases([source])}
    poison(cache_dir, target)
    believed = {c.id: c for c in load_cases([source])}
    assert believed[target].description == "POISONED"  # the ordinary run reads the entry

    session = Session(RunOptions(cases=(source,), certify=True))
    certified = {c.id: c for c in session.select()}
    assert certified[target].description == honest[target].description != "POISONED"
    assert case_set_hash(list(certified.values())) == case_set_hash(list(honest.values()))
    # and the certification wrote the file's own entry back over the rewritten one
    assert {c.id: c.description for c in load_cases([source])}[target] != "POISONED"
