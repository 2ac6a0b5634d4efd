"""The expectations cache (conformance.session.expected_cache): a warm run judges every case as a
run computing every reference does, a changed key finds no entry, a bad entry is a miss, and a
certification believes no entry (the cache folder is writable by the backend's user)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from backends.numpy_reference import NumpyReferenceBackend
from conformance.casefile import load_cases
from conformance.expected import Expected
from conformance.flags import ExecutionFlags
from conformance.session import expected_cache
from conformance.session.case_run import run_case, run_cases
from conformance.session.parallel_pool import ParallelPool
from conformance.session.run import RunOptions, Session
from tests.support import CASES, DOCUMENTED, Dmlconf


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("DMLCONF_CACHE", str(folder))
    return folder / "expected"


def entries(folder: Path) -> list[Path]:
    return sorted(folder.rglob("*.bin")) if folder.exists() else []


def judged(results: list) -> list[dict]:
    """The results as a reader sees them, less the durations."""
    return [{k: v for k, v in r.to_json().items() if k != "duration_s"} for r in results]


def a_slice_of_every_family() -> list:
    """The first four and the last two cases of every committed case file (every family,
    chains and relations included)."""
    picked = []
    for path in sorted(CASES.rglob("*.yaml")):
        cases = load_cases([path])
        picked += cases[:4] + cases[-2:] if len(cases) > 6 else cases
    return picked


# the suite judged twice: 10-11 s, in CI's certification step
@pytest.mark.certification
def test_verdicts_are_the_same_with_and_without_the_cache(
        cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cases = a_slice_of_every_family()
    assert len({c.file for c in cases}) >= 70
    backend = NumpyReferenceBackend()
    computed = expected_cache.fresh()
    with computed:
        honest = judged(run_cases(cases, backend))  # every reference computed (entries written)
    stored = entries(cache_dir)
    assert len(stored) > len(cases) // 2
    hits = []
    real_read = expected_cache.read

    def counting(k: str) -> dict[str, Expected] | None:
        got = real_read(k)
        hits.append(got is not None)
        return got

    monkeypatch.setattr(expected_cache, "read", counting)
    warm = judged(run_cases(cases, backend))
    assert warm == honest
    assert hits and all(hits)  # every expectation came from the cache
    monkeypatch.setenv("DMLCONF_CACHE", "off")
    hits.clear()
    assert judged(run_cases(cases, backend)) == honest
    assert not any(hits)


def test_a_chain_fed_by_another_calls_output_is_computed_every_time(cache_dir: Path) -> None:
    """An input taken `from` another call's output is the backend's output: that call's
    expectations are never stored (they depend on what the backend returned)."""
    chains = [c for c in a_slice_of_every_family()
              if any(s.kind == "from" for s in c.inputs.values()) and not c.rejected]
    assert chains
    case = chains[0]
    run_case(case, NumpyReferenceBackend())
    fed = {ref.split(".", 1)[0] for ref, s in case.inputs.items() if s.kind == "from"}
    strict = case.ambiguous is not None
    for name in fed:
        k = expected_cache.key(case.digest(), name, strict, ExecutionFlags.NONE)
        assert expected_cache.read(k) is None


def test_the_key_changes_with_what_decides_an_expectation() -> None:
    base = expected_cache.key("d" * 64, "call", False, ExecutionFlags.NONE)
    assert len({base,
                expected_cache.key("e" * 64, "call", False, ExecutionFlags.NONE),
                expected_cache.key("d" * 64, "other", False, ExecutionFlags.NONE),
                expected_cache.key("d" * 64, "call", True, ExecutionFlags.NONE),
                expected_cache.key("d" * 64, "call", False,
                                   ExecutionFlags.ALLOW_HALF_PRECISION_COMPUTATION)}) == 5


def test_an_entry_round_trips_every_field_bit_for_bit(cache_dir: Path) -> None:
    values = np.array([[1.5, np.nan], [-0.0, 3.0]], dtype=np.float16)
    legal = Expected(values, kind="within", center=values.astype(np.float64),
                     bound=np.full((2, 2), 0.25), nan_ok=np.array([[False, True]] * 2),
                     rule="legal")
    exp = Expected(values, kind="one_of", alternatives=(values[::-1].copy(),), rule="strict",
                   legal=legal, any_nan=True)
    expected_cache.write("k1", {"OutputTensor": exp})
    got = expected_cache.read("k1")["OutputTensor"]
    assert (got.kind, got.rule, got.any_nan, got.legal.kind, got.legal.rule) == (
        "one_of", "strict", True, "within", "legal")
    for a, b in [(got.values, values), (got.alternatives[0], values[::-1]),
                 (got.legal.center, legal.center), (got.legal.bound, legal.bound),
                 (got.legal.nan_ok, legal.nan_ok)]:
        assert a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
    assert got.center is None and got.bound is None and got.nan_ok is None


def test_a_corrupt_or_foreign_entry_is_a_miss(cache_dir: Path) -> None:
    expected_cache.write("k2", {"OutputTensor": Expected(np.arange(4, dtype=np.int32))})
    path, = entries(cache_dir)
    good = path.read_bytes()
    head, payload = good.split(b"\n", 1)
    for bad in [good[:-3], b"garbage", head + b"\n" + payload[::-1],
                good.replace(b'"k2"', b'"k3"')]:
        path.write_bytes(bad)
        assert expected_cache.read("k2") is None
    path.write_bytes(good)
    assert expected_cache.read("k2") is not None
    assert expected_cache.read("k3") is None  # moved under another key: its key is checked


def poison(folder: Path, k: str) -> None:
    """Rewrite the entry of key k as a backend running as the same user could: every value
    changed, the payload's sha256 recomputed."""
    import hashlib

    path = expected_cache._path(folder, k)
    head, payload = path.read_bytes().split(b"\n", 1)
    payload = bytes((b + 1) & 0xFF for b in payload)
    header = json.loads(head)
    header["payload_sha256"] = hashlib.sha256(payload).hexdigest()
    path.write_bytes(json.dumps(header, separators=(",", ":")).encode() + b"\n" + payload)


@pytest.mark.parametrize("workers", [1, 2])
def test_a_certification_believes_no_entry_a_backend_could_have_rewritten(
        cache_dir: Path, workers: int, tmp_path: Path) -> None:
    """An entry rewritten with its sha256 recomputed is believed by an ordinary run (that is what
    a cache is), never inside fresh(), which a certification (RunOptions(certify=True)) runs its
    cases in: it computes every reference itself, and the backend PASSes. With 2 workers the
    cases are judged in judge processes of their own (session.parallel_pool), started fresh:
    they believe no entry either (issue 24: a poisoned entry certified a wrong backend there)."""
    source = DOCUMENTED / "resample3.yaml"
    chosen = [c for c in load_cases([source]) if not c.rejected and len(c.calls) == 1
              and all(e.kind == "reference" for e in c.expected.values())][:2]
    backend = NumpyReferenceBackend()
    for case in chosen:
        assert run_case(case, backend).status == "PASS"  # writes the entry
        k = expected_cache.key(case.digest(), case.calls[0].name, case.ambiguous is not None,
                               ExecutionFlags.NONE)
        poison(cache_dir, k)
        assert run_case(case, backend).status == "FAIL"  # the ordinary run believes the entry
        with expected_cache.fresh():
            assert run_case(case, backend).status == "PASS"  # (and writes the good entry back)
        poison(cache_dir, k)
        assert run_case(case, backend).status == "FAIL"

    session = Session(RunOptions(cases=(source,), patterns=tuple(c.id for c in chosen),
                                 backend="numpy", certify=True, workers=workers,
                                 json=tmp_path / "r.json"))
    session.select()
    session.start()
    try:
        assert session.runner is not None
        assert isinstance(session.runner.pool, ParallelPool) == (workers > 1)
        certified = session.run()
    finally:
        session.close()
    assert [r.status for r in certified] == ["PASS", "PASS"]
    assert expected_cache.trusted()  # and the run after it reads the cache again


def test_an_ordinary_run_records_that_it_believed_the_cache_and_every_report_says_so(
        cache_dir: Path, tmp_path: Path, dmlconf: Dmlconf,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """No check of an entry can tell a forged one from a good one (whoever can write the
    folder can compute its key and sha256): only computing the expectation again can, which
    is what a certification does. So an ordinary run's results record that its judge believed
    the cache, and which (execution.expectations_cache: the folder; null where none was
    believed), and every report's execution line says so: a run whose verdict rests on a
    poisoned entry, in the harness's judge or in the judge processes of a parallel run, is
    never one that computed its expectations (a certification's, which verify requires)."""
    source = DOCUMENTED / "resample3.yaml"
    case = next(c for c in load_cases([source]) if not c.rejected and len(c.calls) == 1
                and all(e.kind == "reference" for e in c.expected.values()))
    pick = ("--cases", str(source), "-k", case.id, "--junit", str(tmp_path / "j.xml"),
            "--markdown", str(tmp_path / "s.md"), "--html", str(tmp_path / "r.html"))
    said = f"read from the cache, not recomputed ({cache_dir})"

    def run(*extra: str) -> tuple[str, str | None]:
        _, doc = dmlconf(*pick, *extra)
        (result,) = [r for r in doc["results"] if r["id"] == case.id]
        reports = [(tmp_path / name).read_text() for name in ("j.xml", "s.md", "r.html")]
        cached = doc["execution"]["expectations_cache"]
        assert all((said in text) == (cached is not None) for text in reports)
        return result["status"], cached

    assert run() == ("PASS", str(cache_dir))  # computed, and written
    poison(cache_dir, expected_cache.key(case.digest(), case.calls[0].name,
                                         case.ambiguous is not None, ExecutionFlags.NONE))
    assert run() == ("FAIL", str(cache_dir))  # believed, and said
    assert run("--workers", "2") == ("FAIL", str(cache_dir))  # by the judge processes too
    assert run("--certify") == ("PASS", None)  # computed: nothing believed
    monkeypatch.setenv("DMLCONF_EXPECTED_CACHE", "off")
    assert run() == ("PASS", None)
