"""Baselines (`dmlconf run --baseline`) and `dmlconf compare`, end to end through
conformance.cli.main on the documented cases with broken test backends."""

from __future__ import annotations

import datetime as dt
import json
import platform
import re
import textwrap
from fnmatch import fnmatchcase
from pathlib import Path

import pytest

from conformance import results
from conformance.casefile import id_matches, load_cases
from conformance.cli import main
from conformance.results import BaselineSummary, Result, ResultsDocument, baseline
from conformance.results import diff as run_diff
from tests.support import BROKEN, DOCUMENTED, Dmlconf, dmlconf_in, statuses

#: How many documented cases there are (SwappedOrderBackend fails 4 of them).
DOCUMENTED_COUNT = len(load_cases([DOCUMENTED]))

D2S1_DCR = "documented/depth_to_space1/example-1-depth-column-row"
D2S1_CRD = "documented/depth_to_space1/example-2-column-row-depth"
S2D1_DCR = "documented/space_to_depth1/example-1-depth-column-row"
S2D1_CRD = "documented/space_to_depth1/example-2-column-row-depth"
ROW_MAJOR = "documented/strides/2d-row-major"
SWAPPED = {D2S1_DCR, D2S1_CRD, S2D1_DCR, S2D1_CRD}  # what SwappedOrderBackend FAILs


def write_baseline(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "baseline.yaml"
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def run(dmlconf: Dmlconf, backend: str, *args: str, name: str = "results.json",
        k: tuple[str, ...] = ()) -> tuple[int, dict]:
    """The documented cases (those each -k of k selects) on a broken backend."""
    selection = [a for p in k for a in ("-k", p)]
    return dmlconf("--backend", f"{BROKEN}:{backend}", "--cases", str(DOCUMENTED), *selection,
                   *args, name=name)


# -- run --baseline -----------------------------------------------------------------------------
def test_known_failures_become_xfail_and_do_not_fail_the_run(
        tmp_path: Path, dmlconf: Dmlconf) -> None:
    path = write_baseline(tmp_path, """\
        expected_failures:
          - cases: "documented/*_to_*1/example-*"
            status: FAIL
            reason: orders swapped
            issue: https://example.com/issues/6
            expires: 2999-12-31
        """)
    code, doc = run(dmlconf, "SwappedOrderBackend", "--baseline", str(path), "--strict")
    assert code == 0  # strict too: no XPASS
    got = statuses(doc)
    assert {i for i, s in got.items() if s == "XFAIL"} == SWAPPED
    assert set(got.values()) == {"PASS", "XFAIL"}
    item = next(r for r in doc["results"] if r["id"] == D2S1_CRD)
    assert item["message"].startswith(
        "expected FAIL (orders swapped; https://example.com/issues/6): OutputTensor: 36 of 48")
    assert "expected 9, got 18" in item["message"]
    assert list(doc["summary"]) == list(results.STATUSES)
    assert list(doc["summary"])[:6] == ["PASS", "QUALITY_WARNING", "FAIL", "ERROR", "TIMEOUT",
                                        "NOT_SUPPORTED"]
    assert doc["summary"]["XFAIL"] == 4 and doc["summary"]["FAIL"] == 0
    assert doc["baseline"] == {
        "path": str(path), "xpass": [], "stale": [], "not_applying": [], "outside": [],
        "waived": [],
        "expected": [r["id"] for r in doc["results"] if r["id"] in SWAPPED],
        "tags": {"os": platform.system().lower(), "backend": f"{BROKEN}:SwappedOrderBackend",
                 "execution_flags": "NONE"}}
    assert item["waiver"] is None  # an expected failure, no waiver
    # a known failure is still not conformance
    assert doc["verdict"]["2_1"]["conformant"] is False
    assert doc["verdict"]["2_1"]["XFAIL"] == 4
    # 2_0's mandatory cases pass; a run of the documented cases covers a part of its mustpass
    # list (docs/mustpass.md), so no verdict there
    v = doc["verdict"]["2_0"]
    assert v["PASS"] == v["mandatory"] > 0 and v["conformant"] is None
    assert v["mustpass_run"] < v["mustpass"]


def test_status_must_match_and_errors_are_baselined_as_error(
        tmp_path: Path, dmlconf: Dmlconf) -> None:
    path = write_baseline(tmp_path, """\
        - {cases: depth_to_space1, status: FAIL, reason: not this status}
        - {cases: space_to_depth1, status: ERROR, reason: device removal}
        """)
    code, doc = run(dmlconf, "RaisingBackend", "--baseline", str(path),
                    k=("depth_to_space1", "space_to_depth1"))
    assert code == 1  # the depth_to_space1 ERRORs are not FAILs: not expected
    got = statuses(doc)
    assert {got[D2S1_DCR], got[D2S1_CRD]} == {"ERROR"}
    assert {got[S2D1_DCR], got[S2D1_CRD]} == {"XFAIL"}
    # the FAIL entry matched cases (with another status): not stale
    assert doc["baseline"]["stale"] == []


def test_xpass_is_reported_and_fails_only_with_strict(
        tmp_path: Path, dmlconf: Dmlconf, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_baseline(tmp_path, """\
        - cases: "documented/*_to_*1/example-*"
          status: FAIL
          reason: orders swapped
        - cases: strides/2d-row-major
          status: FAIL
          reason: thought broken
        """)
    code, doc = run(dmlconf, "SwappedOrderBackend", "--baseline", str(path))
    assert code == 0
    assert statuses(doc)[ROW_MAJOR] == "XPASS"
    assert doc["baseline"]["xpass"] == [ROW_MAJOR]
    item = next(r for r in doc["results"] if r["id"] == ROW_MAJOR)
    assert item["message"] == "passed, but the baseline expects FAIL (thought broken)"
    assert doc["summary"]["XPASS"] == 1
    v = doc["verdict"]["2_0"]  # no FAIL, and no verdict (a part of the mustpass list)
    assert v["PASS"] == v["mandatory"] and v["conformant"] is None
    assert v["mustpass_run"] < v["mustpass"]
    assert doc["verdict"]["2_1"]["XPASS"] == 1  # an XPASS is a pass: not counted as failing
    assert doc["verdict"]["2_1"]["PASS"] + 1 + doc["verdict"]["2_1"]["XFAIL"] == \
        doc["verdict"]["2_1"]["mandatory"]
    assert f"XPASS {ROW_MAJOR}" in capsys.readouterr().out
    code, _ = run(dmlconf, "SwappedOrderBackend", "--baseline", str(path), "--strict")
    assert code == 1


def test_stale_entries_by_no_match_and_by_expiry(
        tmp_path: Path, dmlconf: Dmlconf, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_baseline(tmp_path, """\
        - {cases: "documented/depth_to_space1/*", status: FAIL, reason: live}
        - {cases: no/such/case, status: ERROR, reason: fixed long ago}
        - {cases: space_to_depth1, status: FAIL, reason: old, expires: 2000-01-01}
        - {cases: ["documented/depth_to_space1/*", no/such/group], status: FAIL, reason: two}
        """)
    code, doc = run(dmlconf, "SwappedOrderBackend", "--baseline", str(path))
    assert code == 1  # an expired entry expects nothing: its cases FAIL again
    got = statuses(doc)
    assert {got[D2S1_DCR], got[D2S1_CRD]} == {"XFAIL"}
    assert {got[S2D1_DCR], got[S2D1_CRD]} == {"FAIL"}
    assert doc["baseline"]["stale"] == [
        {"cases": "no/such/case", "status": "ERROR", "reason": "fixed long ago", "issue": None,
         "expires": None, "when": {}, "waiver": False, "why": "matches no case"},
        {"cases": "space_to_depth1", "status": "FAIL", "reason": "old", "issue": None,
         "expires": "2000-01-01", "when": {}, "waiver": False,
         "why": "expired on 2000-01-01"},
        {"cases": ["documented/depth_to_space1/*", "no/such/group"], "pattern": "no/such/group",
         "status": "FAIL", "reason": "two", "issue": None, "expires": None, "when": {},
         "waiver": False, "why": "matches no case"},
    ]
    out = capsys.readouterr().out
    assert ("stale baseline pattern 'no/such/group' of the entry of 2 patterns (FAIL): "
            "matches no case") in out
    assert "stale baseline entry 'no/such/case' (ERROR): matches no case" in out
    assert "expired on 2000-01-01" in out


def test_one_finding_names_its_case_groups_and_each_group_goes_stale_alone() -> None:
    """docs/baselines.md: `cases` may be a list; a case is covered by any one pattern, and a
    pattern that matches no case is stale on its own (the group no longer fails)."""
    known = baseline.parse("- cases: [t/int8/*, t/uint8/*, gone/*]\n"
                           "  status: FAIL\n  reason: floor(c)\n")
    (entry,) = known.entries
    assert entry.cases == ("t/int8/*", "t/uint8/*", "gone/*")
    assert entry.covers("t/uint8/x") and not entry.covers("t/float32/x")
    found = [Result(id="t/int8/a", status="FAIL", message="m"),
             Result(id="t/uint8/a", status="FAIL", message="m"),
             Result(id="t/float32/a", status="FAIL", message="m")]
    applied = baseline.apply(known, found)
    assert [r.status for r in applied.results] == ["XFAIL", "XFAIL", "FAIL"]
    assert applied.results[0].message == "expected FAIL (floor(c)): m"
    assert [(s["cases"], s["pattern"], s["why"]) for s in applied.stale] == [
        (["t/int8/*", "t/uint8/*", "gone/*"], "gone/*", "matches no case")]
    # a pattern that matched a passing case (XPASS) is not stale: it matched
    fixed = baseline.apply(known, [Result(id="t/int8/a", status="PASS")])
    assert fixed.xpass == ["t/int8/a"]
    assert [s["pattern"] for s in fixed.stale] == ["t/uint8/*", "gone/*"]
    # across shards a pattern is stale only where it matched in none
    one = baseline.apply(known, found[:1]).to_json("b.yaml")
    two = baseline.apply(known, found[1:]).to_json("b.yaml")
    assert [s["pattern"] for s in one["stale"]] == ["t/uint8/*", "gone/*"]
    assert [s["pattern"] for s in two["stale"]] == ["t/int8/*", "gone/*"]
    joined = baseline.join([BaselineSummary.from_json(one), BaselineSummary.from_json(two)])
    assert [s["pattern"] for s in joined.stale] == ["gone/*"]


def test_expiry_is_compared_with_the_date_given() -> None:
    known = baseline.parse("- {cases: a, status: FAIL, reason: r, expires: 2025-06-30}")
    found = [Result(id="t/a", status="FAIL", message="wrong")]
    on_the_day = baseline.apply(known, found, today=dt.date(2025, 6, 30))
    assert [r.status for r in on_the_day.results] == ["XFAIL"] and on_the_day.stale == []
    after = baseline.apply(known, found, today=dt.date(2025, 7, 1))
    assert [r.status for r in after.results] == ["FAIL"]
    assert [s["why"] for s in after.stale] == ["expired on 2025-06-30"]
    assert results.exit_status(on_the_day.results) == 0
    assert results.exit_status(after.results) == 1


def test_a_timeout_entry_expects_a_timeout_only() -> None:
    known = baseline.parse("- {cases: t/slow, status: TIMEOUT, reason: hangs on big sizes}\n"
                           "- {cases: t/other, status: ERROR, reason: raises}\n")
    crash = {"exit_code": None, "signal": "SIGKILL", "output": "..."}
    found = [Result(id="t/slow", status="TIMEOUT", message="ran past 2 s", crash=crash),
             Result(id="t/slow-b", status="ERROR", message="crashed"),
             Result(id="t/other", status="TIMEOUT", message="ran past 2 s")]
    applied = baseline.apply(known, found)
    slow, slow_b, other = applied.results
    assert (slow.status, slow.message) == ("XFAIL", "expected TIMEOUT (hangs on big sizes): "
                                                    "ran past 2 s")
    assert slow.crash == crash
    assert slow_b.status == "ERROR" and other.status == "TIMEOUT"  # the status must match
    assert results.exit_status(applied.results) == 1
    assert results.exit_status(applied.results[:1]) == 0
    passed = baseline.apply(known, [Result(id="t/slow", status="PASS")])
    assert passed.results[0].message == "passed, but the baseline expects TIMEOUT " \
                                        "(hangs on big sizes)"
    assert baseline.ENTRY_STATUSES == results.FAILING


@pytest.mark.parametrize(("text", "error"), [
    ("- {cases: a, status: FAIL", "not valid YAML"),
    ("cases: a", "a mapping with the one key 'expected_failures'; found keys cases"),
    ("expected_failures: 3", "expected a list of entries, not int"),
    ("- just text", "entry 1: must be a mapping"),
    ("- {cases: a, status: FAIL}", "entry 1 (cases 'a'): missing required key 'reason'"),
    ("- {status: FAIL, reason: r}", "entry 1: missing required key 'cases'"),
    ("- {cases: '', status: FAIL, reason: r}", "'cases' must be a non-empty id pattern"),
    ("- {cases: [], status: FAIL, reason: r}", "or a non-empty list of them, not []"),
    ("- {cases: [a, 3], status: FAIL, reason: r}", "entry 1 (cases 'a', ...): 'cases' must be"),
    ("- {cases: [a, b, a], status: FAIL, reason: r}", "'cases' lists 'a' twice"),
    ("- {cases: a, status: FAIL, reason: r}\n- {cases: b, status: PASS, reason: r}",
     "entry 2 (cases 'b'): 'status' must be FAIL, ERROR or TIMEOUT, not 'PASS'"),
    ("- {cases: a, status: FAIL, reason: ''}", "'reason' must be non-empty text"),
    ("- {cases: a, status: FAIL, reason: r, expires: 2025-13-01}",
     "a value cannot be read (month must be in 1..12); dates are YYYY-MM-DD"),
    ("- {cases: a, status: FAIL, reason: r, expires: '2025-1-01'}",
     "'expires' must be a date YYYY-MM-DD, not '2025-1-01'"),
    ("- {cases: a, status: FAIL, reason: r, expires: soon}", "'expires' must be a date"),
    ("- {cases: a, status: FAIL, reason: r, issue: 5}", "'issue' must be a URL"),
    ("- {cases: a, status: FAIL, reason: r, owner: me}", "unknown key owner"),
    ("- {cases: a, status: QUALITY_WARNING, reason: r}",
     "'status' must be FAIL, ERROR or TIMEOUT, not 'QUALITY_WARNING' (a QUALITY_WARNING "
     "passes: it does not fail the run, so it needs no entry)"),
])
def test_malformed_baselines_are_usage_errors(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, error: str) -> None:
    path = write_baseline(tmp_path, text)
    out = tmp_path / "results.json"
    code = main(["run", "-q", "--cases", str(DOCUMENTED), "--json", str(out),
                 "--baseline", str(path)])
    assert code == 2
    assert not out.exists()  # nothing run, nothing written
    err = capsys.readouterr().err
    assert err.startswith(f"dmlconf: error: baseline {path}: ")
    assert error in err
    assert len(err.strip().splitlines()) == 1


def test_missing_baseline_and_strict_alone_are_usage_errors(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "results.json"
    base = ["run", "-q", "--cases", str(DOCUMENTED), "--json", str(out)]
    assert main([*base, "--baseline", str(tmp_path / "nope.yaml")]) == 2
    assert "cannot read it" in capsys.readouterr().err
    assert main([*base, "--strict"]) == 2
    assert "--strict needs --baseline" in capsys.readouterr().err
    assert not out.exists()


def test_empty_baseline_changes_nothing(tmp_path: Path, dmlconf: Dmlconf) -> None:
    path = write_baseline(tmp_path, "expected_failures: []\n")
    code, doc = run(dmlconf, "SwappedOrderBackend", "--baseline", str(path))
    assert code == 1 and doc["summary"]["FAIL"] == 4
    assert {k: v for k, v in doc["baseline"].items() if k != "tags"} == {
        "path": str(path), "xpass": [], "expected": [], "waived": [], "stale": [],
        "not_applying": [], "outside": []}


# -- compare ------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Results of the documented cases: the reference-like runs and broken ones."""
    tmp = tmp_path_factory.mktemp("runs")
    known = write_baseline(tmp, """\
        - {cases: "documented/depth_to_space1/*", status: FAIL, reason: orders swapped}
        """)
    out = {}
    for name, backend, args, k in [
        ("swapped", "SwappedOrderBackend", (), ()),
        ("swapped_known", "SwappedOrderBackend", ("--baseline", str(known)), ()),
        ("raising", "RaisingBackend", (), ()),
        ("late", "LateRejectBackend", (), ()),
        ("late_fewer", "LateRejectBackend", (), ("depth_to_space1", "strides")),
        ("late_one", "LateRejectBackend", (), (ROW_MAJOR,)),
    ]:
        run(dmlconf_in(tmp), backend, *args, name=f"{name}.json", k=k)
        out[name] = tmp / f"{name}.json"
    return out


def compare(capsys: pytest.CaptureFixture[str], old: Path, new: Path,
            *args: str) -> tuple[int, str]:
    capsys.readouterr()
    code = main(["compare", str(old), str(new), *args])
    return code, capsys.readouterr().out


@pytest.mark.integration  # two whole runs
def test_compare_newly_failing_exits_1(
        runs: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    old, new = results.read(runs["late"]), results.read(runs["swapped"])
    diff = run_diff.compare(old, new)
    assert {c.id for c in diff.newly_failing} == SWAPPED
    assert all((c.old_status, c.new_status) == ("PASS", "FAIL") for c in diff.newly_failing)
    assert not diff.newly_passing and not diff.changed and not diff.added and not diff.removed
    assert [name for name, _, _ in diff.run] == ["backend.name", "backend.class"]
    code, out = compare(capsys, runs["late"], runs["swapped"])
    assert code == 1
    assert out.startswith(f"compare {runs['late']} -> {runs['swapped']}: 4 cases newly fail\n")
    assert "newly failing (4):" in out
    assert f"  {D2S1_CRD}: PASS -> FAIL\n    was: rejected" not in out
    assert f"  {D2S1_CRD}: PASS -> FAIL\n    now: OutputTensor: 36 of 48" in out
    assert "run differs: backend.name:" in out
    assert (f"summary: PASS {DOCUMENTED_COUNT} -> {DOCUMENTED_COUNT - 4}, QUALITY_WARNING 0 -> "
            "0, FAIL 0 -> 4") in out


def test_compare_newly_passing_and_changed_exit_0(
        runs: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    code, out = compare(capsys, runs["raising"], runs["swapped_known"])
    assert code == 0
    assert out.splitlines()[0].endswith(": no case newly fails")
    diff = run_diff.compare(results.read(runs["raising"]), results.read(runs["swapped_known"]))
    assert len(diff.newly_passing) == DOCUMENTED_COUNT - 4
    # ERROR -> FAIL and ERROR -> XFAIL: still not passing, but changed
    changed = {c.id: (c.old_status, c.new_status) for c in diff.changed}
    assert changed == {D2S1_DCR: ("ERROR", "XFAIL"), D2S1_CRD: ("ERROR", "XFAIL"),
                       S2D1_DCR: ("ERROR", "FAIL"), S2D1_CRD: ("ERROR", "FAIL")}
    assert "changed (status or message) (4):" in out
    assert f"newly passing ({DOCUMENTED_COUNT - 4}):" in out
    assert f"  {D2S1_DCR}: ERROR -> XFAIL\n    was: the backend raised RuntimeError" in out


def test_compare_message_change_and_xfail_to_fail(
        runs: dict[str, Path], capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    old = json.loads(runs["swapped_known"].read_text())
    new = json.loads(runs["swapped"].read_text())
    for r in new["results"]:
        if r["id"] == S2D1_DCR:
            r["message"] = "another message"
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(new), encoding="utf-8")
    diff = run_diff.compare(typed(old), typed(new))
    # XFAIL -> FAIL (the baseline dropped) is newly failing
    assert {c.id for c in diff.newly_failing} == {D2S1_DCR, D2S1_CRD}
    assert [(c.id, c.old_status, c.new_status) for c in diff.changed] == [
        (S2D1_DCR, "FAIL", "FAIL")]
    code, out = compare(capsys, runs["swapped_known"], path)
    assert code == 1
    assert f"  {S2D1_DCR}: FAIL -> FAIL\n    was: OutputTensor:" in out
    assert "    now: another message" in out


def test_compare_added_removed_and_case_set(
        runs: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    code, out = compare(capsys, runs["late"], runs["late_fewer"])
    assert code == 0
    assert "run differs: case_set_sha256:" in out
    assert "run differs: backend" not in out  # same backend, same file: class name normalised
    left_out = DOCUMENTED_COUNT - len(json.loads(runs["late_fewer"].read_text())["results"])
    assert left_out > 0 and f"removed ({left_out}):" in out
    assert f"  {ROW_MAJOR} (PASS)" not in out.split("removed")[1]
    code, out = compare(capsys, runs["late_fewer"], runs["late"])
    assert code == 0 and f"added (not failing) ({left_out}):" in out
    assert "  documented/depth_to_space/example (PASS)" in out


def test_compare_markdown(runs: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    code, out = compare(capsys, runs["late_fewer"], runs["swapped"], "--markdown")
    assert code == 1
    lines = out.splitlines()
    # the space_to_depth1 FAILs are of cases late_fewer lacks: newly failing all the same
    assert lines[0] == "## dmlconf compare: 4 cases newly fail (2 of them not in OLD)"
    assert "| Status | Old | New |" in lines and "| FAIL | 0 | 4 |" in lines
    assert "### The runs differ" in lines and "### Newly failing (4)" in lines
    assert any(line.startswith(f"| `{D2S1_CRD}` | PASS | FAIL | OutputTensor: 36 of 48")
               for line in lines)
    assert any(line.startswith(f"| `{S2D1_CRD}` | ABSENT | FAIL | OutputTensor:")
               for line in lines)
    left_out = DOCUMENTED_COUNT - len(json.loads(runs["late_fewer"].read_text())["results"])
    assert f"### Added (not failing) ({left_out - 2})" in lines
    assert "- `documented/depth_to_space/example` (PASS)" in lines
    assert out.endswith("\n")


def test_compare_reports_failures_of_cases_old_lacks(
        runs: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    """A 1-case OLD against a NEW with FAILs: every FAIL of NEW is newly failing (old status
    ABSENT), not hidden among the added cases, and the compare exits 1 (issue 15)."""
    one, new = (results.read(runs[n]) for n in ("late_one", "swapped"))
    assert [r.id for r in one.results] == [ROW_MAJOR]
    diff = run_diff.compare(one, new)
    assert {(c.id, c.old_status, c.new_status) for c in diff.newly_failing} == {
        (i, run_diff.ABSENT, "FAIL") for i in SWAPPED}
    assert all(c.new_message.startswith("OutputTensor:") for c in diff.newly_failing)
    assert not {i for i, _ in diff.added} & SWAPPED
    assert len(diff.added) == DOCUMENTED_COUNT - 1 - 4
    assert run_diff.exit_status(diff) == 1
    code, out = compare(capsys, runs["late_one"], runs["swapped"])
    assert code == 1
    assert out.splitlines()[0].endswith(": 4 cases newly fail (4 of them not in OLD)")
    assert f"  {D2S1_DCR}: ABSENT -> FAIL\n    now: OutputTensor:" in out
    # a NEW whose cases OLD lacks and that all pass: nothing newly fails
    code, out = compare(capsys, runs["late_one"], runs["late"])
    assert code == 0 and out.splitlines()[0].endswith(": no case newly fails")
    assert f"added (not failing) ({DOCUMENTED_COUNT - 1}):" in out


def test_compare_same_file_and_bad_input(
        runs: dict[str, Path], capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out = compare(capsys, runs["swapped"], runs["swapped"])
    assert code == 0
    passed = DOCUMENTED_COUNT - 4
    assert out.splitlines()[1:] == [f"summary: PASS {passed} -> {passed}, QUALITY_WARNING 0 -> "
                                    "0, FAIL 4 -> 4, ERROR 0 -> 0, TIMEOUT 0 -> 0, "
                                    "NOT_SUPPORTED 0 -> 0, XFAIL 0 -> 0, XPASS 0 -> 0",
                                    "NEW's failures: 4 (4 not expected, 0 expected by its "
                                    "baseline, 0 waived)"]
    bad = tmp_path / "bad.json"
    bad.write_text('{"results": []}', encoding="utf-8")
    assert main(["compare", str(bad), str(runs["swapped"])]) == 2
    assert "not a dmlconf results document" in capsys.readouterr().err
    bad.write_text("{", encoding="utf-8")
    assert main(["compare", str(runs["swapped"]), str(bad)]) == 2
    assert "not JSON" in capsys.readouterr().err
    assert main(["compare", str(tmp_path / "missing.json"), str(runs["swapped"])]) == 2


def test_compare_a_timeout_is_a_failure() -> None:
    def doc(**statuses: str) -> dict:
        return {"format": results.FORMAT, "summary": {}, "results": [
            {"id": case_id, "status": status, "message": ""}
            for case_id, status in statuses.items()]}

    old = doc(a="PASS", b="TIMEOUT", c="TIMEOUT", d="XFAIL", e="NOT_SUPPORTED")
    new = doc(a="TIMEOUT", b="PASS", c="ERROR", d="TIMEOUT", e="TIMEOUT")
    diff = run_diff.compare(typed(old), typed(new))
    assert [(c.id, c.old_status, c.new_status) for c in diff.newly_failing] == [
        ("a", "PASS", "TIMEOUT"), ("d", "XFAIL", "TIMEOUT"), ("e", "NOT_SUPPORTED", "TIMEOUT")]
    assert [c.id for c in diff.newly_passing] == ["b"]
    assert [(c.id, c.old_status, c.new_status) for c in diff.changed] == [
        ("c", "TIMEOUT", "ERROR")]
    assert run_diff.exit_status(diff) == 1
    assert run_diff.FAILING is results.FAILING


# -- QUALITY_WARNING -------------------------------------------------------------------------------
def test_a_quality_warning_the_baseline_expects_to_fail_is_an_xpass() -> None:
    known = baseline.parse("- {cases: t/w, status: FAIL, reason: float16 off by 2 ulp}\n")
    warned = Result(id="t/w", status="QUALITY_WARNING", margin=0.8,
                    message="OutputTensor: 2 of 16 elements outside the strict reading")
    applied = baseline.apply(known, [warned])
    [r] = applied.results
    assert (r.status, r.margin) == ("XPASS", 0.8)
    assert r.message == ("passed with a QUALITY_WARNING, but the baseline expects FAIL (float16 "
                         "off by 2 ulp): OutputTensor: 2 of 16 elements outside the strict "
                         "reading")
    assert applied.xpass == ["t/w"] and applied.stale == []
    assert results.exit_status(applied.results) == 0
    assert results.exit_status(applied.results, strict=True) == 1  # the entry is obsolete
    # without an entry a warning stays a warning, and passes
    alone = baseline.apply(baseline.parse("[]"), [warned])
    assert alone.results == [warned] and results.exit_status(alone.results, strict=True) == 0


def typed(doc: dict) -> ResultsDocument:
    """A results document made here as its JSON, typed (as results.read gives it)."""
    return ResultsDocument.from_json(doc)


def doc_of(**statuses: str) -> dict:
    return {"format": results.FORMAT, "summary": {}, "results": [
        {"id": case_id, "status": status, "message": f"{status} message"}
        for case_id, status in statuses.items()]}


def test_compare_pass_and_quality_warning_changes_are_neither_regressions_nor_fixes() -> None:
    old = doc_of(a="PASS", b="QUALITY_WARNING", c="FAIL", d="QUALITY_WARNING",
                 e="QUALITY_WARNING", f="XPASS", g="ERROR")
    new = doc_of(a="QUALITY_WARNING", b="PASS", c="QUALITY_WARNING", d="FAIL",
                 e="QUALITY_WARNING", f="QUALITY_WARNING", g="QUALITY_WARNING")
    new["results"][4]["message"] = "another warning"
    diff = run_diff.compare(typed(old), typed(new))
    assert [(c.id, c.old_status, c.new_status) for c in diff.quality] == [
        ("a", "PASS", "QUALITY_WARNING"), ("b", "QUALITY_WARNING", "PASS")]
    assert [(c.id, c.old_status) for c in diff.newly_passing] == [("c", "FAIL"), ("g", "ERROR")]
    assert [(c.id, c.new_status) for c in diff.newly_failing] == [("d", "FAIL")]
    assert diff.changed == []  # e (another message) and f (XPASS): passes both times
    assert run_diff.exit_status(run_diff.compare(typed(old), typed(doc_of(
        a="QUALITY_WARNING", b="PASS", c="QUALITY_WARNING", d="QUALITY_WARNING")))) == 0
    text = run_diff.to_text(diff)
    assert ("quality (PASS <-> QUALITY_WARNING: neither a regression nor a fix) (2):\n"
            "  a: PASS -> QUALITY_WARNING\n    was: PASS message\n"
            "    now: QUALITY_WARNING message\n") in text
    md = run_diff.to_markdown(diff)
    assert ("### Quality changes (PASS <-> QUALITY_WARNING: neither a regression nor a fix) (2)"
            in md)
    assert "| `b` | QUALITY_WARNING | PASS | PASS message |" in md


def test_compare_execution_flags_are_a_run_difference() -> None:
    old, new = doc_of(a="PASS"), doc_of(a="PASS")
    new["execution_flags"] = []  # an older document (no field) ran with none: the same
    assert run_diff.compare(typed(old), typed(new)).run == []
    new["execution_flags"] = ["ALLOW_HALF_PRECISION_COMPUTATION"]
    assert run_diff.compare(typed(old), typed(new)).run == [
        ("execution_flags", [], ["ALLOW_HALF_PRECISION_COMPUTATION"])]
    assert 'run differs: execution_flags: [] -> ["ALLOW_HALF_PRECISION_COMPUTATION"]' in \
        run_diff.to_text(run_diff.compare(typed(old), typed(new)))


def test_compare_a_scope_is_a_run_difference() -> None:
    old, new = doc_of(a="PASS"), doc_of(a="PASS")
    new["scope"] = None  # an older document (no field) claimed the whole level: the same
    assert run_diff.compare(typed(old), typed(new)).run == []
    new["scope"] = {"RESAMPLE1": ["FLOAT32"]}
    assert run_diff.compare(typed(old), typed(new)).run == [
        ("scope", None, {"RESAMPLE1": ["FLOAT32"]})]


def test_compare_html_counts_the_quality_changes(tmp_path: Path) -> None:
    from conformance import report

    old = doc_of(a="PASS", b="FAIL")
    new = doc_of(a="QUALITY_WARNING", b="QUALITY_WARNING")
    for doc in (old, new):
        doc.update(summary={s: sum(r["status"] == s for r in doc["results"])
                            for s in results.STATUSES}, ambiguous={}, verdict={})
    text = report.render_html(typed(new),
                              comparison=run_diff.compare(typed(old), typed(new), "old.json"))
    assert 'data-compare="quality">1<' in text and 'data-compare="newly_passing">1<' in text
    quality = re.search(r"<summary>Quality changes \(1\)</summary>(.*?)</details>", text,
                        re.S).group(1)
    assert '<td>a</td><td class="st-PASS">PASS</td><td class="st-QUALITY_WARNING">' in quality


def test_an_entry_covers_a_case_exactly_where_one_of_its_patterns_matches_it() -> None:
    """Entry.covers reads its patterns as one expression (id_matcher); it must agree with the
    -k reading pattern by pattern: globs over the whole id (fnmatch), other text anywhere."""
    patterns = ["a/*/c", "b", "x[12]/y", "*/tail", "exact/id", "q?r", "a.b"]
    def entry_of(cases: object) -> baseline.Entry:
        text = f"- {{cases: {json.dumps(cases)}, status: FAIL, reason: r}}\n"
        return baseline.parse(text).entries[0]

    entry = entry_of(patterns)
    ids = ["a/b/c", "a/b/c/d", "xb", "x1/y", "x3/y", "some/tail", "tail", "exact/id",
           "pre/exact/id/post", "qzr", "qr", "a.b", "axb", "", "a/\nb/c"]
    for case_id in ids:
        assert entry.covers(case_id) == any(
            fnmatchcase(case_id, p) if any(ch in p for ch in "*?[") else p in case_id
            for p in patterns), case_id
        assert all(id_matches(case_id, p) == entry_of(p).covers(case_id) for p in patterns)


def test_entries_of_cases_a_partial_run_did_not_select_are_not_stale(
        tmp_path: Path, dmlconf: Dmlconf, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 27: `-k` picks some cases; a baseline entry whose cases were not selected is
    outside the selection (one summary line), not stale; one that matches no case loaded is."""
    path = write_baseline(tmp_path, """\
        - {cases: "documented/depth_to_space1/*", status: FAIL, reason: live}
        - {cases: "documented/space_to_depth1/*", status: FAIL, reason: not selected}
        - {cases: ["documented/resample1/*", no/such/group], status: FAIL, reason: two}
        - {cases: no/such/case, status: ERROR, reason: fixed long ago}
        """)
    code, doc = run(dmlconf, "SwappedOrderBackend", "--baseline", str(path),
                    "-k", "documented/depth_to_space1/")
    assert code == 0
    assert [(e["cases"], e.get("pattern")) for e in doc["baseline"]["stale"]] == [
        (["documented/resample1/*", "no/such/group"], "no/such/group"),
        ("no/such/case", None)]
    assert [(e["cases"], e.get("pattern")) for e in doc["baseline"]["outside"]] == [
        ("documented/space_to_depth1/*", None),
        (["documented/resample1/*", "no/such/group"], "documented/resample1/*")]
    out = capsys.readouterr().out
    assert "2 baseline entries cover only cases this run did not select (not stale)" in out
    assert "space_to_depth1" not in out and "stale baseline pattern 'no/such/group'" in out
    # shards: each shard's cases are the others' unselected ones; joined, nothing is outside
    shards = [baseline.apply(baseline.load(path), [Result(id=i, status="FAIL", message="m")],
                             unselected=[o for o in (D2S1_DCR, S2D1_DCR) if o != i]
                             ).summary("b.yaml") for i in (D2S1_DCR, S2D1_DCR)]
    joined = baseline.join(shards)
    assert joined.outside == []
    assert sorted(str(e.get("pattern", e["cases"])) for e in joined.stale) == [
        "documented/resample1/*", "no/such/case", "no/such/group"]
