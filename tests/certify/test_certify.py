"""dmlconf certify and dmlconf verify (docs/certification.md), and the backend environment a
bundle records (Backend.environment, carried from isolated workers).

The default run certifies on a small committed set (the documented cases of six files, ~30 of
them): the mustpass lists and the case paths are those of that set (monkeypatched), so the
whole path runs (hash check, isolated run, bundle, zip, verify) in a few seconds. The
certification marker runs the real thing on the whole suite."""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import shutil
import stat
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from conformance import __version__
from conformance.backend import BackendLoadError, environment_of, load_backend
from conformance.certify import CertifyError, verify
from conformance.certify.bundle import SUMS, sums_text
from conformance.certify.unpack import BundleError
from conformance.certify.verify import waiver_problem
from conformance.cli import main
from conformance.levels import FeatureLevel
from conformance.results import Result, mustpass, summary
from conformance.results import baseline as baselines
from conformance.results.verdicts import verdicts
from conformance.session import WorkerError
from conformance.session.remote import Claims
from tests.certify import small_suite
from tests.certify.small_suite import SWAPPED_BASELINE
from tests.support import BROKEN

ENV_BACKEND = '''
from backends.numpy_reference import NumpyReferenceBackend


class EnvBackend(NumpyReferenceBackend):
    name = "env-test"

    @property
    def environment(self):
        return {"adapter": "Test Adapter 9000", "vendor": "Testco", "driver": "1.2.3",
                "directml_version": "1.15.2"}
'''

#: A backend that computes nothing and patches the judge when its module is imported: in the
#: harness's process, were the harness to import it.
IMPORT_CHEAT = '''
import numpy as np

import conformance.judge.compare
import conformance.session.case_run
from backends.numpy_reference import NumpyReferenceBackend

conformance.judge.compare.mismatches = lambda got, exp: np.zeros(np.shape(got), dtype=bool)
conformance.session.case_run.compare.mismatches = conformance.judge.compare.mismatches
conformance.judge.compare.PATCHED_BY_A_BACKEND = True


class ImportCheat(NumpyReferenceBackend):
    def execute(self, call, bindings):
        return None  # computes nothing
'''

@dataclass
class Suite:
    folder: Path
    lists: mustpass.Mustpass
    env_backend: str
    good: Path  # a bundle folder of a conformant certification (EnvBackend)
    swapped: Path  # a bundle of the swapped-order backend with a (non-waiver) baseline


def _certify(*args: str) -> int:
    return main(["certify", *args])


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Suite]:
    """The small committed set, its lists in place of the suite's, and two bundles of it."""
    root = tmp_path_factory.mktemp("certify")
    (root / "env_backend.py").write_text(ENV_BACKEND, encoding="utf-8")
    with small_suite.committed(root) as (cases, lists):
        env = f"{root / 'env_backend.py'}:EnvBackend"
        assert _certify("--backend", env, "--out", str(root / "good")) == 0
        assert _certify("--backend", f"{BROKEN}:SwappedOrderBackend", "--baseline",
                        str(root / "baseline.yaml"), "--out", str(root / "swapped")) == 1
        yield Suite(cases, lists, env, root / "good", root / "swapped")


def _copy(bundle: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(bundle, tmp_path / bundle.name))


def _reseal(folder: Path) -> None:
    """What anyone can do: recompute SHA256SUMS after an edit."""
    (folder / SUMS).write_text(sums_text(folder), encoding="utf-8")


def _edit_results(folder: Path, edit) -> None:
    path = folder / "results.json"
    doc = json.loads(path.read_text(encoding="utf-8"))
    edit(doc)
    path.write_text(json.dumps(doc, indent=1), encoding="utf-8")


def _problems(bundle: Path) -> list[str]:
    return verify(bundle).problems


# -- a good bundle -----------------------------------------------------------------------------
def test_a_certification_bundle_holds_the_run_and_verifies(suite: Suite,
                                                           capsys: pytest.CaptureFixture) -> None:
    good = suite.good
    names = sorted(p.name for p in good.iterdir())
    assert names == ["SHA256SUMS", "environment.json", "junit.xml", "report.html", "report.md",
                     "results.json", "run.log", "statement.md"]
    listed = [line.split("  ", 1)[1] for line in (good / SUMS).read_text().splitlines()]
    assert listed == [n for n in names if n != SUMS]
    doc = json.loads((good / "results.json").read_text())
    required = suite.lists.lists[doc["feature_level"]]
    assert doc["feature_level"] == "6_4"  # the backend's highest, asked of an isolated worker
    assert sorted(r["id"] for r in doc["results"]) == sorted(required)
    assert doc["execution"]["certify"] and doc["execution"]["tamper_proof"]
    assert doc["verdict"]["6_4"]["conformant"] is True
    # the backend's environment came from its worker, through the handshake
    said = {"adapter": "Test Adapter 9000", "vendor": "Testco", "driver": "1.2.3",
            "directml_version": "1.15.2"}
    assert doc["backend"]["environment"] == said
    env = json.loads((good / "environment.json").read_text())
    assert env["backend"]["environment"] == said
    assert env["case_set_sha256"] == suite.lists.case_set_sha256
    assert env["suite_version"] == __version__ and env["execution_flags"] == []
    assert env["command"].startswith("dmlconf certify --backend ")
    assert "numpy" in env["packages"] and env["python"]["version"]
    assert env["git"] is None or set(env["git"]) >= {"commit", "dirty"}
    log = (good / "run.log").read_text()
    assert "certify: backend" in log and "feature level 6_4: conformant" in log
    assert f"dmlconf verify {good}.zip" in log
    assert f"results: {good / 'results.json'}" in log  # the file as the bundle holds it
    assert "<fill in" in (good / "statement.md").read_text()
    # the zip holds the folder, and both verify
    with zipfile.ZipFile(f"{good}.zip") as z:
        assert sorted(z.namelist()) == [f"good/{n}" for n in names]
    capsys.readouterr()
    for bundle in (good, Path(f"{good}.zip")):
        assert main(["verify", str(bundle)]) == 0
        out, err = capsys.readouterr()
        assert out == "" and "valid: backend" in err
        assert "note: statement.md is still the template" in err


def test_a_filled_statement_is_bundled_and_no_longer_noted(suite: Suite, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(mustpass, "committed", lambda: suite.lists)
    monkeypatch.setattr("conformance.session.run.default_case_paths", lambda: [suite.folder])
    statement = tmp_path / "filled.md"
    statement.write_text("# Conformance statement\n\n- **Organisation**: Testco\n")
    out = tmp_path / "b"
    assert _certify("--backend", "numpy", "--level", "5_1", "--statement", str(statement),
                    "--out", str(out)) == 0
    assert (out / "statement.md").read_text() == statement.read_text()
    v = verify(out)
    assert v.valid and not v.notes, v.problems
    assert json.loads((out / "results.json").read_text())["feature_level"] == "5_1"
    assert len(json.loads((out / "results.json").read_text())["results"]) == len(
        suite.lists.lists["5_1"])


# -- tampering ---------------------------------------------------------------------------------
def test_an_edited_file_is_caught(suite: Suite, tmp_path: Path) -> None:
    b = _copy(suite.good, tmp_path)
    with open(b / "report.md", "a") as f:
        f.write("\nAll good.\n")
    assert _problems(b) == ["report.md differs from the sha256 SHA256SUMS lists for it: "
                            "changed after certify"]


def test_an_added_or_removed_file_is_caught(suite: Suite, tmp_path: Path) -> None:
    b = _copy(suite.good, tmp_path)
    (b / "extra.txt").write_text("x")
    (b / "junit.xml").unlink()
    assert _problems(b) == [
        "extra.txt is in the bundle but not in SHA256SUMS: added after certify",
        "junit.xml is listed in SHA256SUMS but not in the bundle: removed after certify",
        "junit.xml is missing from the bundle"]
    _reseal(b)  # the hashes recomputed: the missing report is still missed
    assert _problems(b) == ["junit.xml is missing from the bundle"]


def test_a_removed_result_is_caught_even_with_the_hashes_recomputed(suite: Suite,
                                                                    tmp_path: Path) -> None:
    b = _copy(suite.good, tmp_path)
    _edit_results(b, lambda doc: doc["results"].pop(0))
    _reseal(b)
    problems = _problems(b)
    n = len(suite.lists.lists["6_4"])
    assert any(p.startswith(f"1 of the {n} cases of the mustpass list of 6_4 have no result ")
               and p.endswith("the run did not cover the list") for p in problems), problems
    assert any(p.startswith("the summary recorded (PASS ") for p in problems), problems


def test_a_failure_edited_to_pass_is_caught_unless_the_forger_redoes_the_verdict(
        suite: Suite, tmp_path: Path) -> None:
    """What verify can and cannot prove: a status edited by hand disagrees with the summary
    and the verdict recorded; a forger who recomputes those too (and the hashes) is not
    caught: verify proves completeness, consistency and integrity, not that the backend ran."""
    b = _copy(suite.swapped, tmp_path)

    def to_pass(doc: dict) -> None:
        for r in doc["results"]:
            if r["status"] == "XFAIL":
                r["status"], r["message"] = "PASS", ""

    _edit_results(b, to_pass)
    _reseal(b)
    problems = _problems(b)
    assert any(p.startswith("the summary recorded (PASS ") and "XFAIL" in p
               for p in problems), problems
    assert any(p.startswith("the verdict recorded at level 6_4 (NOT conformant")
               for p in problems), problems

    def forge(doc: dict) -> None:
        found = [Result.from_json(r) for r in doc["results"]]
        doc["summary"] = summary(found)
        doc["verdict"] = {level: v.to_json() for level, v in verdicts(
            found, FeatureLevel.parse(doc["feature_level"]), suite.lists).items()}

    _edit_results(b, forge)
    _reseal(b)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(mustpass, "committed", lambda: suite.lists)
        assert _problems(b) == []  # documented: docs/certification.md, "What verify proves"


def test_another_suite_version_is_one_line(suite: Suite, tmp_path: Path) -> None:
    b = _copy(suite.good, tmp_path)
    _edit_results(b, lambda doc: doc.update(suite_version="0.0.9"))
    env = json.loads((b / "environment.json").read_text())
    (b / "environment.json").write_text(json.dumps({**env, "suite_version": "0.0.9"}))
    _reseal(b)
    assert _problems(b) == [
        f"the bundle is of suite version 0.0.9, this is dml-conformance {__version__}: verify "
        "it with dmlconf 0.0.9 (pip install dml-conformance==0.0.9)"]


def test_a_malformed_results_document_is_refused_by_the_strict_reader(suite: Suite,
                                                                      tmp_path: Path) -> None:
    b = _copy(suite.good, tmp_path)
    _edit_results(b, lambda doc: doc["results"][0].update(status="GREAT"))
    _reseal(b)
    [problem] = _problems(b)
    assert problem.startswith("results.json: not a dmlconf results document")
    assert "results[0].status is 'GREAT'" in problem


def test_a_run_that_was_no_certification_is_caught(suite: Suite, tmp_path: Path) -> None:
    b = _copy(suite.good, tmp_path)

    def uncertified(doc: dict) -> None:
        doc["execution"].update(certify=False, tamper_proof=False)
        doc["shard"] = {"index": 1, "count": 2}

    _edit_results(b, uncertified)
    _reseal(b)
    problems = _problems(b)
    assert problems[:3] == [
        "the run was not a certification (execution.certify is not true): made by dmlconf "
        "run, not dmlconf certify",
        "the run was not tamper-proof (execution.tamper_proof is not true): the backend ran in "
        "the judge's process",
        "the results are shard 1/2 of a run: a certification runs the whole list, unsharded"]


def test_environment_json_must_agree_with_the_results(suite: Suite, tmp_path: Path) -> None:
    b = _copy(suite.good, tmp_path)
    env = json.loads((b / "environment.json").read_text())
    env["execution_flags"] = ["ALLOW_HALF_PRECISION_COMPUTATION"]
    (b / "environment.json").write_text(json.dumps(env))
    _reseal(b)
    assert _problems(b) == [
        "environment.json says execution_flags ['ALLOW_HALF_PRECISION_COMPUTATION'], "
        "results.json []: they are not of the same run"]


def test_a_zip_with_a_path_out_of_the_bundle_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / "bad.zip"
    with zipfile.ZipFile(bad, "w") as z:
        z.writestr("../evil.txt", "x")
    with pytest.raises(BundleError, match=r"member '\.\./evil\.txt' is not a plain relative"):
        verify(bad)
    assert main(["verify", str(tmp_path / "none")]) == 2


def test_a_zip_naming_one_member_twice_is_refused(tmp_path: Path) -> None:
    """Two members of one name: tools disagree on which is the bundle's (issue 24)."""
    bad = tmp_path / "twice.zip"
    with zipfile.ZipFile(bad, "w") as z, pytest.warns(UserWarning, match="Duplicate name"):
        z.writestr("b/results.json", "{}")
        z.writestr("b/results.json", "[]")
    with pytest.raises(BundleError, match=r"member 'b/results\.json' is in the zip 2 times"):
        verify(bad)


def test_a_zip_with_a_link_member_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / "link.zip"
    link = zipfile.ZipInfo("b/statement.md")
    link.external_attr = (stat.S_IFLNK | 0o777) << 16
    with zipfile.ZipFile(bad, "w") as z:
        z.writestr(link, "/etc/passwd")
    with pytest.raises(BundleError, match=r"member 'b/statement\.md' is a link or special"):
        verify(bad)


@pytest.mark.parametrize("kind", ["link", "fifo", "huge"])
def test_a_folder_bundle_holding_anything_but_plain_files_is_refused_unread(
        suite: Suite, tmp_path: Path, kind: str) -> None:
    """A link (verify reading another file), a FIFO (verify hanging on it) or a 3 GB file
    (verify's memory) in a folder bundle is refused before anything is read (issue 24)."""
    b = _copy(suite.good, tmp_path)
    statement = b / "statement.md"
    statement.unlink()
    if kind == "link":
        statement.symlink_to(b / "results.json")
        words = "statement.md is a link or special file"
    elif kind == "fifo":
        os.mkfifo(statement)
        words = "statement.md is a link or special file"
    else:
        with statement.open("wb") as f:
            f.truncate(3 << 30)  # sparse: no disk used
        words = "statement.md is larger than 1 MiB, the cap on a bundle's statement.md"
    with pytest.raises(BundleError, match=re.escape(words)):
        verify(b)
    assert main(["verify", str(b)]) == 2


# -- statuses and waivers ----------------------------------------------------------------------
def test_an_expected_failure_that_is_no_waiver_is_not_allowed(suite: Suite) -> None:
    doc = json.loads((suite.swapped / "results.json").read_text())
    xfail = sorted(r["id"] for r in doc["results"] if r["status"] == "XFAIL")
    assert xfail, "the swapped-order backend fails the column-row *1 cases"
    assert (suite.swapped / "baseline.yaml").read_text() == SWAPPED_BASELINE
    problems = _problems(suite.swapped)
    for case_id in xfail:
        entry = 1 if "depth_to_space1" in case_id else 2
        assert (f"XFAIL {case_id}: entry {entry} of baseline.yaml expects its failure but is "
                "not a waiver: a certification allows only failures waived with `waiver: "
                "true`, a reason and an expiry (docs/baselines.md)") in problems
    assert problems[-1].startswith("the claimed level 6_4 is not conformant by its results: "
                                   "NOT conformant")


def test_a_failure_is_one_line_per_status(suite: Suite, tmp_path: Path) -> None:
    b = _copy(suite.swapped, tmp_path)
    (b / "baseline.yaml").unlink()
    _edit_results(b, lambda doc: [r.update(status="FAIL") for r in doc["results"]
                                  if r["status"] == "XFAIL"])
    _edit_results(b, lambda doc: doc.update(baseline=None))
    _reseal(b)
    problems = _problems(b)
    assert problems[0].startswith("FAIL: 4 cases (documented/depth_to_space1/")
    assert problems[0].endswith("a certification allows PASS, QUALITY_WARNING, NOT_SUPPORTED "
                                "where the level does not need the case and XFAIL where a "
                                "waiver covers it")


def _entry(number: int, cases: str, reason: str = "driver bug 123",
           expires: dt.date | None = dt.date(2030, 1, 1)) -> baselines.Entry:
    """A waiver entry, made directly (so that it may break the rules a parsed one keeps)."""
    return baselines.Entry(number, (cases,), "FAIL", reason, expires=expires, waiver=True)


RUN = dt.date(2026, 6, 1)


@pytest.mark.parametrize(("entry", "problem"), [
    (_entry(1, "a/*"), None),
    (_entry(1, "a/*", expires=RUN), None),  # expiring on the run's day still covers it
    (_entry(1, "a/*", reason="  "), "XFAIL a/b: waiver entry 1 ('a/*') gives no reason"),
    (_entry(1, "a/*", expires=None), "XFAIL a/b: waiver entry 1 ('a/*') has no expiry"),
    (_entry(1, "a/*", expires=dt.date(2026, 5, 31)),
     "XFAIL a/b: waiver entry 1 ('a/*') expired on 2026-05-31, before the run of 2026-06-01"),
    (_entry(1, "z/*"), "XFAIL a/b: no entry of baseline.yaml covers it: an expected failure "
                       "needs a waiver in the bundled baseline"),
])
def test_a_waiver_needs_a_reason_and_an_expiry_not_before_the_run(entry: baselines.Entry,
                                                                  problem: str | None) -> None:
    assert waiver_problem("a/b", [entry], RUN) == problem


def test_a_valid_waiver_among_invalid_ones_covers_the_case() -> None:
    entries = [_entry(1, "a/*", expires=dt.date(2020, 1, 1)), _entry(2, "a/b")]
    assert waiver_problem("a/b", entries, RUN) is None
    old = baselines.parse(SWAPPED_BASELINE)  # today's entries: no waiver field, no waiver
    assert waiver_problem("documented/depth_to_space1/x", old.entries, RUN).startswith(
        "XFAIL documented/depth_to_space1/x: entry 1 of baseline.yaml expects its failure but "
        "is not a waiver")


def test_a_bundled_baseline_that_does_not_read_is_a_problem(suite: Suite,
                                                            tmp_path: Path) -> None:
    b = _copy(suite.swapped, tmp_path)
    (b / "baseline.yaml").write_text("- cases: 'documented/*'\n  status: FAIL\n")
    _reseal(b)
    problems = _problems(b)
    assert ("baseline.yaml does not read, so no XFAIL can be checked: baseline baseline.yaml: "
            "entry 1 (cases 'documented/*'): missing required key 'reason'") in problems


def test_a_waived_failure_verifies_once_baselines_have_waivers(suite: Suite, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch
                                                               ) -> None:
    """End to end with `waiver: true` entries (docs/baselines.md): skipped only while
    results.baseline does not know them yet."""
    text = SWAPPED_BASELINE.replace("  reason:", "  waiver: true\n  expires: 2099-01-01\n"
                                                "  reason:")
    try:
        baselines.parse(text)
    except baselines.BaselineError as exc:
        pytest.skip(f"this results.baseline has no waivers yet: {exc}")
    monkeypatch.setattr(mustpass, "committed", lambda: suite.lists)
    monkeypatch.setattr("conformance.session.run.default_case_paths", lambda: [suite.folder])
    (tmp_path / "waivers.yaml").write_text(text)
    out = tmp_path / "w"
    _certify("--backend", f"{BROKEN}:SwappedOrderBackend", "--baseline",
             str(tmp_path / "waivers.yaml"), "--out", str(out))
    assert verify(out).problems == []


def test_a_backend_module_never_runs_in_the_judges_process(suite: Suite, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Its import-time code patching the judge changes its worker only: every case it computes
    nothing for FAILs (before, Session.plan imported the module in the harness to ask whether
    it is native, and this backend passed a --certify run)."""
    import conformance.judge.compare as judge

    monkeypatch.setattr(mustpass, "committed", lambda: suite.lists)
    monkeypatch.setattr("conformance.session.run.default_case_paths", lambda: [suite.folder])
    (tmp_path / "cheat.py").write_text(IMPORT_CHEAT, encoding="utf-8")
    out = tmp_path / "b"
    assert _certify("--backend", f"{tmp_path / 'cheat.py'}:ImportCheat", "--out", str(out)) == 1
    assert not hasattr(judge, "PATCHED_BY_A_BACKEND")
    doc = json.loads((out / "results.json").read_text())
    valid = [r for r in doc["results"] if "rejected" not in r["id"] and "invalid" not in r["id"]]
    assert doc["summary"]["FAIL"] >= 10 and doc["summary"]["PASS"] < len(valid)
    assert verify(out).problems[0].startswith(f"FAIL: {doc['summary']['FAIL']} cases")


# -- certify refuses -------------------------------------------------------------------------
def test_certify_refuses_a_case_set_other_than_the_committed_one(
        suite: Suite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture) -> None:
    cases = Path(shutil.copytree(suite.folder, tmp_path / "cases"))
    path = cases / "strides.yaml"
    path.write_text(path.read_text().replace("(row-major)", "(edited)", 1))  # a case's text
    monkeypatch.setattr(mustpass, "committed", lambda: suite.lists)
    monkeypatch.setattr("conformance.session.run.default_case_paths", lambda: [cases])
    assert _certify("--backend", "numpy", "--level", "5_1", "--out", str(tmp_path / "b")) == 2
    err = capsys.readouterr().err
    assert f"are not the committed case set of suite {__version__} (sha256 " in err
    assert "a certification runs the committed cases unchanged" in err
    assert not (tmp_path / "b").exists() and not list(tmp_path.glob(".certify-*"))


@pytest.mark.parametrize("args", [["-k", "documented"], ["--shard", "1/2"], ["--cases", "x"],
                                  ["--no-isolate"], ["--resume"]])
def test_certify_refuses_a_partial_or_unisolated_run(args: list[str],
                                                     capsys: pytest.CaptureFixture) -> None:
    assert _certify("--backend", "numpy", *args) == 2
    err = capsys.readouterr().err
    assert f"{args[0]} refused: a certification runs the whole mustpass list" in err


def test_certify_never_writes_over_a_bundle(suite: Suite, capsys: pytest.CaptureFixture) -> None:
    assert _certify("--backend", "numpy", "--out", str(suite.good)) == 2
    assert "exists and is not an empty folder" in capsys.readouterr().err


def test_certify_refuses_a_level_without_a_list(suite: Suite, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    from conformance.certify import Request, certify
    from conformance.certify.bundle import Log

    lists = mustpass.Mustpass(__version__, suite.lists.case_set_sha256,
                              {k: v for k, v in suite.lists.lists.items() if k != "5_1"})
    monkeypatch.setattr(mustpass, "committed", lambda: lists)
    monkeypatch.setattr("conformance.session.run.default_case_paths", lambda: [suite.folder])
    log = Log()
    with pytest.raises(CertifyError, match="has no mustpass list for feature level 5_1"):
        certify(Request("numpy", level=FeatureLevel.parse("5_1"), out=tmp_path / "b"), log,
                log.tee(open(tmp_path / "out.txt", "w")), lambda *a: None)


# -- the backend environment -------------------------------------------------------------------
def test_the_environment_a_worker_reports_is_checked_like_its_capabilities() -> None:
    claims = Claims("m.C", "C", load_backend("numpy").capabilities,
                    load_backend("numpy").claimed_level, False, {"adapter": "x"}).to_json()
    assert Claims.parse({**claims, "asks_unsupported": False}).environment == {"adapter": "x"}
    for bad in ({"adapter": 1}, ["adapter"], {"": "x"}, {f"k{i}": "v" for i in range(65)},
                {"driver": "x" * 2001}, None):
        with pytest.raises(WorkerError, match="its environment: "):
            Claims.parse({**claims, "asks_unsupported": False, "environment": bad})


def test_a_backend_environment_that_is_not_text_is_refused_in_process(tmp_path: Path) -> None:
    backend = load_backend("numpy")
    assert environment_of(backend) == {"version": f"numpy {np.__version__}"}

    class Odd(type(backend)):  # type: ignore[misc]
        @property
        def environment(self) -> dict:
            return {"driver": 31}

    with pytest.raises(BackendLoadError, match=r"Odd.environment is not what the harness "
                                               r"records: the value of 'driver' is not text"):
        environment_of(Odd())


def test_the_directml_backends_report_their_runtime(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    from backends.directml import DirectMLBackend, DirectMLLinuxBackend
    from backends.directml.layer import WINE, Layer

    monkeypatch.setenv("DMLCONF_DIRECTML_CACHE", str(tmp_path / "none"))
    assert DirectMLBackend().environment == {}  # no runtime set up: nothing known
    backend = DirectMLLinuxBackend()
    assert backend.environment == {}
    icd = tmp_path / "lvp_icd.json"
    icd.write_text(json.dumps({"ICD": {"api_version": "1.4.305",
                                       "library_path": "libvulkan_lvp.so"}}))
    backend.layer = Layer(tmp_path / "lib", icd, 0x6200, ("FLOAT32",), "0" * 64, {
        "directml": {"wheel": "torch-directml==0.2.5.dev240914", "sha256": "ab" * 32},
        "vkd3d_proton": {"version": "2.14.1"}})
    assert environment_of(backend) == {
        "directml_version": "libdirectml.so of torch-directml==0.2.5.dev240914",
        "directml_library": str(tmp_path / "lib" / "libdirectml.so"),
        "directml_sha256": "ab" * 32,
        "adapter": "Mesa lavapipe (Vulkan on the CPU) through vkd3d-proton 2.14.1",
        "vendor": "Mesa",
        "driver": f"lavapipe ICD {icd} (Vulkan 1.4.305, libvulkan_lvp.so)"}
    # the Windows build: its version as its DLL's version resource says
    wine = DirectMLBackend()
    wine.layer = Layer(tmp_path / "run", icd, 0x6400, ("FLOAT32",), "0" * 64, {
        "directml": {"wheel": "onnxruntime-directml==1.24.4", "sha256": "cd" * 32,
                     "file_version": "1.15.4+241025-1615.1.dml-1.15.fac7597"},
        "vkd3d_proton": {"version": "2.14.1"}}, WINE)
    assert environment_of(wine) == {
        "directml_version": "1.15.4+241025-1615.1.dml-1.15.fac7597 (DirectML.dll of "
                            "onnxruntime-directml==1.24.4, under Wine)",
        "directml_library": str(tmp_path / "run" / "DirectML.dll"),
        "directml_sha256": "cd" * 32,
        "adapter": "Mesa lavapipe (Vulkan on the CPU) through vkd3d-proton 2.14.1",
        "vendor": "Mesa",
        "driver": f"lavapipe ICD {icd} (Vulkan 1.4.305, libvulkan_lvp.so)"}


# -- the whole suite ---------------------------------------------------------------------------
@pytest.mark.certification
def test_certify_the_reference_on_the_whole_suite_and_verify(tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch
                                                             ) -> None:
    monkeypatch.chdir(tmp_path)  # certification/ here; the cases beside the package
    assert _certify("--backend", "numpy") == 0
    [zipped] = Path("certification").glob("numpy-6_4-*.zip")
    assert main(["verify", str(zipped)]) == 0
    doc = json.loads((zipped.with_suffix("") / "results.json").read_text())
    assert len(doc["results"]) == len(mustpass.committed().lists["6_4"])


def test_the_bundle_and_statement_use_the_name_the_backend_gives_itself() -> None:
    """Issue 27: a backend from a file was named by its internal module
    (_dmlconf_backend_<hash>.Mine); the bundle's folder and the statement now use its `name`,
    then how it was given and its class."""
    from conformance.backend import Capabilities
    from conformance.certify.bundle import _slug, backend_title
    from conformance.levels import HIGHEST
    from conformance.session.remote import Claims, WorkerError

    doc = {"name": "mine.py:Mine", "declared_name": "my-backend",
           "class": "_dmlconf_backend_9b604c2722ea14e5.Mine"}
    assert backend_title(doc) == "`my-backend` (`mine.py:Mine`, class `Mine`)"
    assert backend_title({**doc, "declared_name": "backend"}) == "`mine.py:Mine`, class `Mine`"
    assert _slug("mine.py:Mine", "Mine", "my backend!") == "my-backend"
    assert _slug("mine.py:Mine", "Mine") == "Mine" and _slug("numpy", "X", "y") == "numpy"
    ready = {"class": "m.Mine", "class_name": "Mine", "asks_unsupported": False,
             "environment": {}, "claimed_level": "6_4",
             "capabilities": Capabilities(operators={}, feature_level=HIGHEST).to_json()}
    assert Claims.parse({**ready, "name": "my-backend"}).name == "my-backend"
    assert Claims.parse(ready).name == ""  # a worker of before the name
    with pytest.raises(WorkerError, match="its name is no short text"):
        Claims.parse({**ready, "name": ["x"]})
