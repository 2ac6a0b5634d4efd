"""dmlconf verify --rerun (docs/certification.md, "Rerun a sample"): a deterministic sample of a
bundle's cases, run again with the reviewer's backend in the bundle's mode, must give the
statuses the bundle records.

As tests/certify/test_certify.py, on a small committed set (the documented cases of six files,
~30 of them: the mustpass lists and the case paths monkeypatched), so that a certification and
a rerun take seconds."""

from __future__ import annotations

import hashlib
import io
import json
import re
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from conformance.certify import verify
from conformance.certify.bundle import RESULTS, SUMS, sums_text
from conformance.certify.rerun import (
    DEFAULT_SAMPLE,
    Request,
    forgiven,
    parse_seed,
    rerun,
    sample,
    seed_of,
)
from conformance.cli import main
from conformance.levels import FeatureLevel
from conformance.results import Result, Status, mustpass, summary
from conformance.results.io import read
from conformance.results.verdicts import verdicts
from tests.certify import small_suite
from tests.support import BROKEN, HOSTILE, SWAPPED

SUMMARY = re.compile(r"^rerun: (\d+) of (\d+) cases \((seed 0x[0-9a-f]+|every case)\), (.*)$",
                     re.MULTILINE)


@dataclass
class Bundles:
    folder: Path  # the committed set's cases
    lists: mustpass.Mustpass
    numpy: Path  # a conformant certification of the NumPy reference (its .zip beside)
    swapped: Path  # the swapped-order backend with a (non-waiver) baseline: not valid


@pytest.fixture(scope="module")
def bundles(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bundles]:
    root = tmp_path_factory.mktemp("rerun")
    with small_suite.committed(root) as (cases, lists):
        assert main(["certify", "--backend", "numpy", "--out", str(root / "numpy")]) == 0
        assert main(["certify", "--backend", SWAPPED, "--baseline", str(root / "baseline.yaml"),
                     "--out", str(root / "swapped")]) == 1
    yield Bundles(cases, lists, root / "numpy", root / "swapped")


@pytest.fixture
def committed(bundles: Bundles, monkeypatch: pytest.MonkeyPatch) -> Bundles:
    """The small set is the committed one (verify's lists, the rerun's cases)."""
    monkeypatch.setattr(mustpass, "committed", lambda: bundles.lists)
    monkeypatch.setattr("conformance.session.run.default_case_paths", lambda: [bundles.folder])
    return bundles


def _verify(capsys: pytest.CaptureFixture, *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(["verify", *args])
    out, err = capsys.readouterr()
    return code, out, err


def _summary(err: str) -> tuple[int, int, str, str]:
    m = SUMMARY.search(err)
    assert m, err
    return int(m.group(1)), int(m.group(2)), m.group(3), m.group(4)


def _results(folder: Path) -> dict[str, Any]:
    return json.loads((folder / RESULTS).read_text(encoding="utf-8"))


def _seed(folder: Path) -> str:
    return seed_of(hashlib.sha256((folder / RESULTS).read_bytes()).hexdigest())


def _forge(folder: Path, lists: mustpass.Mustpass, edit: Callable[[dict], None]) -> None:
    """Edit results.json, then do what a forger does: recompute the summary, the verdicts and
    SHA256SUMS, so that verify finds nothing (test_certify.py pins that it does not)."""
    doc = _results(folder)
    edit(doc)
    found = [Result.from_json(r) for r in doc["results"]]
    doc["summary"] = summary(found)
    doc["verdict"] = {level: v.to_json() for level, v in verdicts(
        found, FeatureLevel.parse(doc["feature_level"]), lists).items()}
    (folder / RESULTS).write_text(json.dumps(doc, indent=1), encoding="utf-8")
    (folder / SUMS).write_text(sums_text(folder), encoding="utf-8")


# -- the sample --------------------------------------------------------------------------------
def test_the_sample_is_deterministic_and_the_bundles_own() -> None:
    ids = [f"family/case-{i}" for i in range(1000)]
    first = sample(ids, "0123456789abcdef", 50)
    assert len(first) == 50 == len(set(first)) and first == sorted(first)
    assert sample(reversed(ids), "0123456789abcdef", 50) == first  # the ids' order is no input
    assert sample(ids, "0123456789abcdee", 50) != first
    assert sample(ids, "5eed", 0) == sample(ids, "5eed", None) == sample(ids, "5eed", 5000) \
        == sorted(ids)
    # anyone can recompute it: the ids whose sha256("<seed>/<id>") is smallest
    by_hand = sorted(ids, key=lambda i: hashlib.sha256(f"0123456789abcdef/{i}".encode())
                     .hexdigest())[:50]
    assert first == sorted(by_hand)
    assert seed_of("AB" * 32) == "ab" * 8
    assert parse_seed("0x5EED") == "5eed" and parse_seed("7") == "7"
    for bad in ("", "0x", "5eedz", "1" * 65):
        with pytest.raises(ValueError, match="--seed"):
            parse_seed(bad)
    assert DEFAULT_SAMPLE == 50


def test_the_same_bundle_samples_the_same_cases_another_bundle_others(committed: Bundles,
                                                                      tmp_path: Path) -> None:
    ids = [r["id"] for r in _results(committed.numpy)["results"]]
    seed = _seed(committed.numpy)
    assert sample(ids, seed, 10) == sample(ids, _seed(committed.numpy), 10)
    again = Path(shutil.copytree(committed.numpy, tmp_path / "again"))
    _forge(again, committed.lists, lambda doc: doc.update(command=doc["command"] + " "))
    assert sample(ids, _seed(again), 10) != sample(ids, seed, 10)


# -- a bundle that reproduces ------------------------------------------------------------------
def test_a_numpy_bundle_reruns_with_numpy_and_agrees(committed: Bundles,
                                                     capsys: pytest.CaptureFixture) -> None:
    n = len(_results(committed.numpy)["results"])
    for bundle in (committed.numpy, Path(f"{committed.numpy}.zip")):
        code, out, err = _verify(capsys, str(bundle), "--rerun", "numpy", "--sample", "10")
        assert code == 0 and out == "", (out, err)
        assert "valid: backend numpy" in err and "(rerunning a sample of its cases)" in err
        assert _summary(err) == (10, n, f"seed 0x{_seed(committed.numpy)}", "all agree")
    code, out, err = _verify(capsys, str(committed.numpy), "--rerun", "numpy", "--sample",
                             "all", "--seed", "0x5eed")
    assert code == 0 and _summary(err) == (n, n, "every case", "all agree"), err


def test_rerun_options_need_rerun_and_an_invalid_bundle_is_not_rerun(
        committed: Bundles, capsys: pytest.CaptureFixture) -> None:
    code, _, err = _verify(capsys, str(committed.numpy), "--sample", "3")
    assert code == 2 and "--sample without --rerun" in err
    code, _, err = _verify(capsys, str(committed.numpy), "--rerun", "numpy", "--seed", "xyz")
    assert code == 2 and "--seed 'xyz': give 1 to 64 hex digits" in err
    code, out, err = _verify(capsys, str(committed.swapped), "--rerun", SWAPPED)
    assert code == 1 and "XFAIL documented/" in out
    assert f"rerun: not run: {committed.swapped} is not a valid bundle" in err


# -- bundles that do not reproduce -------------------------------------------------------------
def test_a_result_edited_after_the_run_is_caught_by_the_rerun_alone(
        committed: Bundles, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """One PASS made QUALITY_WARNING, the summary, verdicts and sums redone: verify finds
    nothing; the rerun does, when the case is in the sample (which depends on the edited
    document: the edit is tried on case after case until one lands in its own sample), and
    not when it is not."""
    ids = sorted(r["id"] for r in _results(committed.numpy)["results"])

    def edited(case_id: str) -> Path:
        b = tmp_path / case_id.replace("/", "_")
        shutil.copytree(committed.numpy, b)
        _forge(b, committed.lists, lambda doc: [
            r.update(status="QUALITY_WARNING", message="within the envelope, off by one ulp")
            for r in doc["results"] if r["id"] == case_id])
        return b

    inside = outside = None
    for case_id in ids:
        b = edited(case_id)
        if case_id in sample(ids, _seed(b), 10):
            inside = inside or (case_id, b)
        else:
            outside = outside or (case_id, b)
        if inside and outside:
            break
    assert inside and outside
    case_id, b = inside
    assert verify(b).problems == []
    code, out, err = _verify(capsys, str(b), "--rerun", "numpy", "--sample", "10")
    assert code == 1
    assert out == f"{case_id}: bundle QUALITY_WARNING, rerun PASS\n"
    assert _summary(err)[3] == "1 differ: the bundle does not reproduce"
    code, out, err = _verify(capsys, str(outside[1]), "--rerun", "numpy", "--sample", "10")
    assert code == 0 and out == "" and _summary(err)[3] == "all agree"  # a sample's limit


def test_a_forged_pass_is_caught_when_the_failing_backend_reruns(
        committed: Bundles, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """The forgery verify cannot catch (test_certify.py: expected failures made PASS, the
    summary, verdicts and sums redone): its backend, rerun on every case, fails them again."""
    b = Path(shutil.copytree(committed.swapped, tmp_path / "forged"))
    forged = sorted(r["id"] for r in _results(b)["results"] if r["status"] == "XFAIL")
    assert len(forged) == 4
    _forge(b, committed.lists, lambda doc: [r.update(status="PASS", message="")
                                            for r in doc["results"] if r["status"] == "XFAIL"])
    assert verify(b).problems == []
    code, out, err = _verify(capsys, str(b), "--rerun", SWAPPED, "--sample", "all")
    assert code == 1
    lines = out.splitlines()
    assert [line.split(":", 1)[0] for line in lines] == forged
    assert all(": bundle PASS, rerun FAIL: " in line for line in lines), lines
    assert _summary(err)[3] == "4 differ: the bundle does not reproduce"


def test_a_wrong_backend_does_not_reproduce_a_numpy_bundle(
        committed: Bundles, capsys: pytest.CaptureFixture) -> None:
    """A backend that leaves one output element unwritten, rerun against the reference's
    bundle: every case it computes differs, and the rerun notes that it is another class."""
    wrong = f"{BROKEN}:UnwrittenElementBackend"
    code, out, err = _verify(capsys, str(committed.numpy), "--rerun", wrong, "--sample", "0")
    assert code == 1
    lines = out.splitlines()
    assert len(lines) >= 10 and all(": bundle PASS, rerun FAIL: " in line for line in lines)
    sampled, n, which, verdict = _summary(err)
    assert sampled == n and which == "every case"
    assert verdict == f"{len(lines)} differ: the bundle does not reproduce"
    [note] = [line for line in err.splitlines() if line.startswith("note: rerun: ")]
    assert note.startswith("note: rerun: the rerun's backend is ") and note.endswith(
        "UnwrittenElementBackend, the bundle's backends.numpy_reference.NumpyReferenceBackend")


def test_a_timeout_is_not_compared_and_leaves_the_rerun_inconclusive(
        committed: Bundles, capsys: pytest.CaptureFixture) -> None:
    """A case that times out on the reviewer's machine says how long it took there, not what
    the backend computes: reported, not counted as differing, and the rerun does not confirm
    the bundle (exit 1, 'inconclusive')."""
    ids = [r["id"] for r in _results(committed.numpy)["results"]]
    computed = [i for i in ids if "rejected" not in i and "invalid" not in i]
    seed = next(s for s in map(str, range(1, 100)) if set(sample(ids, s, 2)) <= set(computed))
    code, out, err = _verify(capsys, str(committed.numpy), "--rerun",
                             f"{HOSTILE}:SlowBackend", "--sample", "2", "--seed", seed,
                             "--timeout", "0.1")
    assert code == 1
    lines = out.splitlines()
    assert len(lines) == 2 and all(": bundle PASS, rerun TIMEOUT" in line and
                                   line.endswith("(a TIMEOUT: not compared)") for line in lines)
    assert _summary(err)[3] == ("2 timed out on one side (not compared): inconclusive: rerun "
                                "with a longer --timeout (0: none)")


# -- what is compared --------------------------------------------------------------------------
def test_a_waived_or_expected_failure_is_compared_as_the_failure(committed: Bundles) -> None:
    """An XFAIL is the failure its baseline entry forgave: a rerun (which applies no baseline:
    its date and tags are the reviewer's) that fails the same way agrees."""
    assert forgiven(Result("a/b", Status.XFAIL, "waived FAIL (driver bug; waived until "
                                                "2030-01-01): 3 of 8 elements")) == Status.FAIL
    assert forgiven(Result("a/b", Status.XFAIL, "expected ERROR (r): boom")) == Status.ERROR
    assert forgiven(Result("a/b", Status.XFAIL, "made by hand")) == Status.XFAIL
    assert forgiven(Result("a/b", Status.PASS)) == Status.PASS
    doc = read(committed.swapped / RESULTS)  # not a valid bundle: its XFAILs are no waivers
    outcome = rerun(committed.swapped, doc, Request(SWAPPED, sample=None), io.StringIO())
    assert outcome.reproduces and outcome.sampled == outcome.of == len(doc.results)
    assert outcome.notes == [], outcome.notes  # the same failures, the same first lines
