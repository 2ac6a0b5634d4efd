"""--retries: failing cases run again, and the result says whether the failure is flaky or the
same every time; the first result stands either way (a failure seen once is a failure)."""

from __future__ import annotations

import pytest

from conformance.casefile import load_cases
from conformance.results import Result
from conformance.session import case_run
from tests.support import BROKEN, DOCUMENTED, HOSTILE, Dmlconf


def test_retry_failures_tells_flaky_from_deterministic() -> None:
    cases = load_cases([DOCUMENTED])[:3]
    first = [case_run.new_result(cases[0], "FAIL", "wrong"), case_run.new_result(cases[1]),
             case_run.new_result(cases[2], "ERROR", "raised")]
    later = iter([{cases[0].id: "PASS", cases[2].id: "ERROR"},
                  {cases[0].id: "FAIL", cases[2].id: "ERROR"}])
    asked: list[list[str]] = []

    def rerun(again: list) -> list[Result]:
        asked.append([c.id for c in again])
        statuses = next(later)
        return [case_run.new_result(c, statuses[c.id]) for c in again]

    out = case_run.retry_failures(first, cases, rerun, 2)
    assert asked == [[cases[0].id, cases[2].id]] * 2  # only the failing ones, twice
    assert out[0].status == "FAIL"
    assert out[0].message == "FLAKY (FAIL, PASS, FAIL in 3 tries): wrong"
    assert out[0].info == ["3 tries: FAIL, PASS, FAIL (flaky)"] and case_run.is_flaky(out[0])
    assert out[1] is first[1]
    assert out[2].message == "raised" and not case_run.is_flaky(out[2])
    assert out[2].info == ["3 tries: ERROR, ERROR, ERROR (the same every time)"]
    assert case_run.retry_failures(first, cases, rerun, 0) is first


def test_a_flaky_backend_is_told_flaky(dmlconf: Dmlconf,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    code, doc = dmlconf("--cases", str(DOCUMENTED), "--backend", f"{HOSTILE}:FlakyBackend",
                        "-k", "strides", "--retries", "2")
    assert code == 1  # still failing: a failure seen once is a failure
    failing = [r for r in doc["results"] if r["status"] == "FAIL"]
    assert len(failing) == 3 and all(r["message"].startswith("FLAKY (FAIL, ") for r in failing)
    assert all(r["info"][-1].endswith("(flaky)") for r in failing)
    assert doc["execution"]["retries"] == 2
    assert "3 failing cases are FLAKY" in capsys.readouterr().out


def test_a_deterministic_failure_and_a_crash_are_the_same_every_time(dmlconf: Dmlconf) -> None:
    code, doc = dmlconf("--cases", str(DOCUMENTED), "--backend", f"{BROKEN}:SwappedOrderBackend",
                        "--retries", "1")
    failing = [r for r in doc["results"] if r["status"] == "FAIL"]
    assert code == 1 and len(failing) == 4
    assert all(r["info"] == ["2 tries: FAIL, FAIL (the same every time)"] for r in failing)
    assert not any(r["message"].startswith("FLAKY") for r in doc["results"])
    code, doc = dmlconf("--cases", str(DOCUMENTED), "--backend", f"{HOSTILE}:SegfaultBackend",
                        "--retries", "1", "-k", "depth_to_space/")
    (crashed,) = [r for r in doc["results"] if r["status"] == "ERROR"]
    assert crashed["info"] == ["2 tries: ERROR, ERROR (the same every time)"]
    assert crashed["crash"]["signal"] == "SIGSEGV"
