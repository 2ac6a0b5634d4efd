"""The parse cache (conformance.casefile.cache): a file seen before is read from its entry, a
changed file is parsed again, a corrupt or foreign entry is ignored and written again, errors
are never cached, and -k / --shard build only the cases they select."""

from __future__ import annotations

import copy
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
from conformance.casefile import load as casefile_load
from conformance.session.run import RunOptions, Session
from tests.casefile.test_casefile_hostile import VALID
from tests.support import Dmlconf


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
    lambda b: (f'{{"format": "{cache.FORMAT}", "key": "another", "cases": []}}\n[]\n'
               .encode()),  # foreign
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


def split_entry(entry: Path) -> tuple[dict, list, list[bytes]]:
    """An entry's index (header), each case's key orders and the cases' texts."""
    head, meta, texts = entry.read_bytes().split(b"\n", 2)
    header, orders = json.loads(head), json.loads(meta)
    pieces, pos = [], 0
    for row in header["cases"]:
        pieces.append(texts[pos:pos + row[3]])
        pos += row[3]
    assert pos == len(texts)
    return header, [copy.deepcopy(orders["orders"][k]) for k in orders["of"]], pieces


def join_entry(entry: Path, header: dict, orders: list, texts: list[bytes]) -> None:
    """Write an entry back (each case's orders a list of its own)."""
    meta = {"orders": orders, "of": list(range(len(orders)))}
    entry.write_bytes(json.dumps(header).encode() + b"\n" + json.dumps(meta).encode() + b"\n"
                      + b"".join(texts))


def test_an_entry_is_json_data_each_case_its_canonical_text(cache_dir: Path,
                                                            tmp_path: Path) -> None:
    """Each case is stored as the text its digest is the sha256 of (keys sorted: what
    Case.digest hashes), so that the digest is checked against the very text the case is
    decoded from; the order its keys were written in is put back."""
    path = tmp_path / "c.yaml"
    path.write_text(two_cases())
    cases = load_file(path)
    (entry,) = entries(cache_dir)
    header, orders, texts = split_entry(entry)
    assert header["format"] == cache.FORMAT and header["key"] == entry.stem
    assert [row[0] for row in header["cases"]] == ["t/one", "t/two"]
    assert [row[2] for row in header["cases"]] == [2, 14]  # the lines of the cases
    assert [row[1] for row in header["cases"]] == [c.digest() for c in cases] == [
        hashlib.sha256(t).hexdigest() for t in texts]
    assert texts == [json.dumps(c.raw, sort_keys=True).encode() for c in cases]
    assert orders[0] == orders[1] and [[], list(cases[0].raw)] in orders[0]  # stored once
    assert json.loads(entry.read_bytes().split(b"\n")[1])["of"] == [0, 0]
    again = load_file(path)
    assert [list(c.raw) for c in again] == [list(c.raw) for c in cases]


def poison(folder: Path, case_id: str, keep_digest: bool = True,
           description: str = "POISONED") -> None:
    """Rewrite the entry holding case_id as a backend running as the same user could: the
    case's description changed in its stored text (still canonical JSON), and its index's
    digest (what the case-set hash is made from) kept, or recomputed from the changed text."""
    for entry in entries(folder):
        if json.loads(entry.read_bytes().split(b"\n", 1)[0])["format"] != cache.FORMAT:
            continue  # another version's
        header, orders, texts = split_entry(entry)
        ids = [row[0] for row in header["cases"]]
        if case_id not in ids:
            continue
        i = ids.index(case_id)
        case = json.loads(texts[i])
        case["description"] = description
        texts[i] = json.dumps(case, sort_keys=True).encode()
        for path, keys in orders[i]:  # the key's place in the written order, where it is new
            if path == [] and "description" not in keys:
                keys.append("description")
        header["cases"][i][3] = len(texts[i])
        if not keep_digest:
            header["cases"][i][1] = hashlib.sha256(texts[i]).hexdigest()
        join_entry(entry, header, orders, texts)
        return
    raise AssertionError(f"no entry holds {case_id}")


TARGET = "documented/depth_to_space1/example-1-depth-column-row"


def test_a_case_whose_text_is_not_its_digest_is_parsed_from_the_file(
        cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The cache folder is writable by the user the backend runs as. An entry rewritten with
    a case's content changed and its digest kept (so that the case-set hash would still name
    the committed case) is not believed by any run: the file is parsed again, the case run is
    the file's, and the entry is written back whole."""
    from tests.support import DOCUMENTED

    source = DOCUMENTED / "depth_to_space1.yaml"
    honest = load_cases([source])
    poison(cache_dir, TARGET)
    parsed = []
    real = casefile_load.parse
    monkeypatch.setattr(casefile_load, "parse", lambda *a: parsed.append(1) or real(*a))
    again = load_cases([source])
    assert parsed and {c.id: c.description for c in again} == {
        c.id: c.description for c in honest}
    assert case_set_hash(again) == case_set_hash(honest)
    assert [c.digest() for c in again] == [c.digest() for c in honest]
    parsed.clear()
    assert load_cases([source]) == honest and not parsed  # the entry is whole again


def test_a_case_rewritten_with_its_digest_is_run_as_another_case_set(
        cache_dir: Path, tmp_path: Path) -> None:
    """An entry rewritten with the digest of its changed content is consistent: an ordinary
    run believes it (that is what a cache is), but its case-set hash is then that content's,
    never the honest one; a certification (cache.fresh()) reads the file itself."""
    from tests.support import DOCUMENTED

    source = DOCUMENTED / "depth_to_space1.yaml"
    honest = load_cases([source])
    poison(cache_dir, TARGET, keep_digest=False)
    believed = {c.id: c for c in load_cases([source])}
    assert believed[TARGET].description == "POISONED"
    assert case_set_hash(list(believed.values())) != case_set_hash(honest)
    ordinary = Session(RunOptions(cases=(source,)))
    assert case_set_hash(ordinary.select()) != case_set_hash(honest)

    session = Session(RunOptions(cases=(source,), certify=True))
    certified = {c.id: c for c in session.select()}
    assert certified[TARGET].description != "POISONED"
    assert case_set_hash(list(certified.values())) == case_set_hash(honest)
    # and the certification wrote the file's own entry back over the rewritten one
    assert {c.id: c.description for c in load_cases([source])}[TARGET] != "POISONED"


@pytest.mark.parametrize("damage", ["a key left out", "a key twice, another left out",
                                    "a path to nowhere", "a path to a list", "not steps"])
def test_an_entry_whose_key_orders_do_not_fit_is_parsed_again(
        cache_dir: Path, tmp_path: Path, damage: str) -> None:
    """The orders only put keys back in place: one that would drop a key (or leads nowhere,
    or to what is no mapping) makes the entry a miss, parsed again with the same cases."""
    path = tmp_path / "c.yaml"
    path.write_text(two_cases())
    first = load_file(path)
    (entry,) = entries(cache_dir)
    header, orders, texts = split_entry(entry)
    (keys,) = [keys for path, keys in orders[0] if path == []]
    orders[0] = {"a key left out": [[[], keys[:-1]]],
                 "a key twice, another left out": [[[], [*keys[:-1], keys[0]]]],
                 "a path to nowhere": [[["nowhere"], keys]], "a path to a list": [[["tags"], [0]]],
                 "not steps": [5]}[damage]
    join_entry(entry, header, orders, texts)
    errors: list[CaseFileError] = []
    got = load_file(path, errors)
    assert got == first and errors == [] and [c.raw for c in got] == [c.raw for c in first]
    assert [list(c.raw) for c in got] == [list(c.raw) for c in first]
    assert [keys for path, keys in split_entry(entry)[1][0] if path == []] == [keys]


def test_orders_can_change_the_order_of_keys_never_the_content(cache_dir: Path,
                                                               tmp_path: Path) -> None:
    """Whoever rewrites an entry's orders (no digest covers them) changes at most the order a
    case's keys are listed in, as the case file could: never a value, nor the digest (keys
    sorted) the case-set hash is made from."""
    path = tmp_path / "c.yaml"
    path.write_text(two_cases())
    first = load_file(path)
    (entry,) = entries(cache_dir)
    header, orders, texts = split_entry(entry)
    orders[0] = []  # the case's keys in sorted order
    join_entry(entry, header, orders, texts)
    got = load_file(path)
    assert list(got[0].raw) == sorted(first[0].raw) != list(first[0].raw)
    assert got[0].raw == first[0].raw and repr(got) == repr(first)
    assert [c.digest() for c in got] == [c.digest() for c in first]


@pytest.mark.integration  # the whole committed suite loaded: 5-15 s
def test_a_poisoned_entry_is_never_the_committed_suite(
        cache_dir: Path, suite_cache: Path, tmp_path: Path) -> None:
    """The whole committed suite loaded as an ordinary run loads it: with one case's entry
    rewritten and its digest kept, the case is the file's again (the committed case set, truly);
    with the digest recomputed, the run believes the entry, and its case-set hash is not the
    committed one: suite.check, and so any committed-suite claim, refuses it."""
    import shutil

    from conformance import suite

    if (suite_cache / "parse").is_dir():  # warm: the test run's own entries of the suite
        shutil.copytree(suite_cache / "parse", cache_dir)
    committed = Session(RunOptions()).select()
    assert suite.check(committed) is None
    target = committed[len(committed) // 2]

    poison(cache_dir, target.id)
    cases = Session(RunOptions()).select()
    assert suite.check(cases) is None
    assert {c.id: c.description for c in cases}[target.id] == target.description

    poison(cache_dir, target.id, keep_digest=False)
    cases = Session(RunOptions()).select()
    assert {c.id: c.description for c in cases}[target.id] == "POISONED"
    assert case_set_hash(cases) != suite.case_set_sha256()
    assert "are not the committed case set" in (suite.check(cases) or "")


@pytest.mark.integration  # three runs of the documented cases
def test_an_ordinary_run_records_the_hash_of_what_it_ran(
        cache_dir: Path, dmlconf: Dmlconf) -> None:
    """dmlconf run: the results' case_set_sha256 is made from the cases as run."""
    from tests.support import DOCUMENTED

    code, honest = dmlconf("--cases", str(DOCUMENTED), name="honest.json")
    assert code == 0
    poison(cache_dir, TARGET)
    code, doc = dmlconf("--cases", str(DOCUMENTED), name="kept.json")
    assert code == 0 and doc["case_set_sha256"] == honest["case_set_sha256"]
    poison(cache_dir, TARGET, keep_digest=False)
    code, doc = dmlconf("--cases", str(DOCUMENTED), name="poisoned.json")
    assert doc["case_set_sha256"] != honest["case_set_sha256"]
