"""Isolation (conformance/session/workers.py): a backend that segfaults, aborts, exits, hangs or
allocates without bound fails the case it does it in, with what is known, and the run goes on
with a fresh worker. The backends are tests/support/hostile_backends.py; each misbehaves on the 1st
and the 9th of the documented cases (DEPTH_TO_SPACE, SPACE_TO_DEPTH) and is the reference on the
others."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from conformance.cli import main
from conformance.results import FAILING
from conformance.session import journal, workers
from tests.support import DOCUMENTED, HOSTILE, Dmlconf

VICTIMS = ("documented/depth_to_space/example", "documented/space_to_depth/example")

posix_only = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")


def run(dmlconf: Dmlconf, backend: str, *args: str) -> tuple[int, dict]:
    """The documented cases on a hostile backend."""
    return dmlconf("--cases", str(DOCUMENTED), "--backend", f"{HOSTILE}:{backend}", *args)


def check_the_rest_passed(doc: dict) -> None:
    others = [r for r in doc["results"] if r["id"] not in VICTIMS]
    assert len(others) == len(documented_cases()) - len(VICTIMS) and all(
        r["status"] == "PASS" for r in others), \
        [(r["id"], r["status"], r["message"]) for r in others if r["status"] != "PASS"]
    assert doc["execution"]["isolated"] is True


def victims(doc: dict) -> list[dict]:
    found = [r for r in doc["results"] if r["id"] in VICTIMS]
    assert [r["id"] for r in found] == list(VICTIMS)
    return found


@posix_only
def test_a_segfault_is_an_error_with_the_signal_and_the_stack(dmlconf: Dmlconf) -> None:
    code, doc = run(dmlconf, "SegfaultBackend")
    assert code == 1
    check_the_rest_passed(doc)
    for r in victims(doc):
        assert r["status"] == "ERROR"
        assert r["message"].startswith("the backend crashed: its worker process was killed by "
                                       "SIGSEGV (signal 11) while running the case")
        assert r["crash"]["signal"] == "SIGSEGV" and r["crash"]["exit_code"] == -11
        out = r["crash"]["output"]
        # the backend's own last words, then faulthandler's stack of the crash site
        assert "about to write through a null pointer" in out
        assert "Fatal Python error: Segmentation fault" in out
        assert "hostile_backends.py" in out and "misbehave" in out
        assert r["feature_level"] == "2_1" and r["spec"]  # the case's fields are all there


@posix_only
def test_an_abort_and_an_exit(dmlconf: Dmlconf) -> None:
    code, doc = run(dmlconf, "AbortBackend")
    assert code == 1
    check_the_rest_passed(doc)
    for r in victims(doc):
        assert r["status"] == "ERROR" and "SIGABRT" in r["message"]
        assert r["crash"]["signal"] == "SIGABRT" and "Fatal Python error: Aborted" in \
            r["crash"]["output"]
    code, doc = run(dmlconf, "ExitBackend")
    check_the_rest_passed(doc)
    for r in victims(doc):
        assert r["status"] == "ERROR" and "exited with code 3" in r["message"]
        assert r["crash"] == {"exit_code": 3, "signal": None,
                              "output": "giving up on this one\n"}


def test_a_hang_is_a_timeout_and_the_worker_is_killed(dmlconf: Dmlconf) -> None:
    code, doc = run(dmlconf, "HangBackend", "--timeout", "1.5")
    assert code == 1
    check_the_rest_passed(doc)
    for r in victims(doc):
        assert r["status"] == "TIMEOUT" and "TIMEOUT" in FAILING
        assert "ran past the per-case timeout of 1.5 s" in r["message"]
        assert r["crash"]["signal"] == "SIGKILL"
        assert 1.5 <= r["duration_s"] < 10
    assert doc["execution"]["timeout_s"] == 1.5


@pytest.mark.skipif(workers.data_segment_bytes() is None, reason="Linux: RLIMIT_DATA")
def test_allocating_without_bound_ends_in_memory_error_under_the_cap(dmlconf: Dmlconf) -> None:
    code, doc = run(dmlconf, "HogBackend", "--memory-cap", "256M")
    assert code == 1
    check_the_rest_passed(doc)
    for r in victims(doc):
        assert r["status"] == "ERROR" and r["crash"] is None
        assert r["message"].startswith("the backend raised MemoryError")
    assert doc["execution"]["memory_cap_bytes"] == 256 << 20


def test_a_memory_error_retires_the_worker_and_the_run_goes_on(dmlconf: Dmlconf) -> None:
    code, doc = run(dmlconf, "LeakyBackend", "--workers", "2")
    assert code == 1
    check_the_rest_passed(doc)
    for r in victims(doc):
        assert r["status"] == "ERROR"
        assert r["message"].startswith("the backend raised MemoryError: cannot allocate")


@posix_only
def test_a_backend_that_crashes_while_built_stops_the_run_with_its_output(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["run", "-q", "--cases", str(DOCUMENTED), "--json", str(tmp_path / "r.json"),
                 "--backend", f"{HOSTILE}:SegfaultAtBuild"])
    err = capsys.readouterr().err
    assert code == 2
    assert "the worker process was killed by SIGSEGV (signal 11) while building backend" in err
    assert "Fatal Python error: Segmentation fault" in err
    assert not (tmp_path / "r.json").exists()


def test_a_backend_that_cannot_be_built_in_a_worker_is_a_load_error(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["run", "-q", "--cases", str(DOCUMENTED), "--json", str(tmp_path / "r.json"),
                 "--backend", f"{HOSTILE}:NoSuchBackend", "--isolate"])
    assert code == 2
    assert "has no NoSuchBackend" in capsys.readouterr().err


def test_a_timeout_asked_for_isolates_any_backend(dmlconf: Dmlconf) -> None:
    code, doc = dmlconf("--cases", str(DOCUMENTED), "-k", "strides", "--timeout", "30")
    assert code == 0
    execution = doc["execution"]
    assert execution["isolated"] is True and execution["timeout_s"] == 30


def test_native_backends_are_isolated_by_default_and_in_process_on_request(
        tmp_path: Path, dmlconf: Dmlconf) -> None:
    _, doc = run(dmlconf, "ExitBackend", "-k", "strides")  # native, no victim selected
    assert doc["execution"]["isolated"] is True and doc["execution"]["workers"] == 1
    code, doc = dmlconf("--cases", str(DOCUMENTED), name="r.json")
    assert code == 0
    assert doc["execution"]["isolated"] is False  # numpy, 18 cases
    assert main(["run", "-q", "--cases", str(DOCUMENTED), "--json", str(tmp_path / "r.json"),
                 "--workers", "2", "--no-isolate"]) == 2


def test_describe_exit() -> None:
    assert workers.describe_exit(-11) == ("was killed by SIGSEGV (signal 11)", "SIGSEGV")
    assert workers.describe_exit(5) == ("exited with code 5", None)
    how, name = workers.describe_exit(-9)
    assert name == "SIGKILL" and "out-of-memory killer" in how
    assert workers.describe_exit(0xC0000005)[0].startswith("died of an access violation")


def documented_cases() -> list:
    from conformance.casefile import load_cases

    return load_cases([DOCUMENTED])


@pytest.mark.parametrize("backend", ["SegfaultBackend", "LeakyBackend"])
def test_each_lost_or_retired_worker_is_replaced_once(backend: str) -> None:
    cases = documented_cases()
    execution = workers.Execution(workers=1, isolated=True, memory_cap=1 << 30)
    with workers.Pool(f"{HOSTILE}:{backend}", None, execution) as pool:
        found = pool.run(cases)
        started = pool.started
    assert [r.id for r in found] == [c.id for c in cases]  # in the cases' order
    assert [r.id for r in found if r.status != "PASS"] == list(VICTIMS)
    assert started == 3  # the first worker, and one for each victim


# hangs waited out: 10 s, in CI's certification step
@pytest.mark.certification
def test_the_timeout_is_per_case_not_per_chunk(dmlconf: Dmlconf) -> None:
    """The documented cases, 0.2 s or more each (a call; chains more) in one worker, sent in
    chunks: none reaches the 3 s timeout although the run takes longer."""
    code, doc = run(dmlconf, "SlowBackend", "--timeout", "3", "--workers", "1",
                    "--isolate")
    assert code == 0 and doc["summary"]["PASS"] == len(documented_cases())
    assert doc["duration_s"] > 3.6


def test_a_worker_that_dies_between_cases_is_not_blamed_on_a_case(tmp_path: Path) -> None:
    """The harness cannot know which case a worker that dies outside any case was at: the
    cases it was sent go to a fresh worker; workers that keep dying stop the run."""
    from conformance.session.case_run import new_result

    cases = documented_cases()[:3]
    execution = workers.Execution(workers=1, isolated=True, memory_cap=1 << 30)
    with workers.Pool("numpy", None, execution) as pool:
        pool.ready()
        worker = pool.slot.worker
        worker.process.kill()
        worker.process.join()
        found = pool.run(cases)
        assert pool.started == 2
    assert [r.status for r in found] == ["PASS"] * 3
    assert new_result(cases[0]).id == cases[0].id


def test_cases_per_worker_replaces_workers_and_keeps_the_results() -> None:
    cases = documented_cases()
    execution = workers.Execution(workers=1, isolated=True, memory_cap=1 << 30,
                                  cases_per_worker=5)
    with workers.Pool("numpy", None, execution) as pool:
        found = pool.run(cases)
        started = pool.started
    assert [r.id for r in found] == [c.id for c in cases]
    assert all(r.status == "PASS" for r in found)
    assert started == -(-len(cases) // 5)  # after 5, 10, 15, ... cases a fresh worker


def test_one_case_per_worker_isolates_cases_from_each_other(dmlconf: Dmlconf) -> None:
    """A backend whose first call leaves its state corrupted: reused workers fail every later
    case; one case per worker passes them all."""
    _, shared = run(dmlconf, "StickyBackend", "-k", "strides", "--workers", "1")
    assert [r["status"] for r in shared["results"]].count("FAIL") == 6
    code, fresh = run(dmlconf, "StickyBackend", "-k", "strides", "--cases-per-worker", "1",
                      "--workers", "2")
    assert code == 0 and fresh["summary"]["PASS"] == 7
    assert fresh["execution"]["cases_per_worker"] == 1


@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_run_that_stops_progressing_ends_at_the_run_timeout(
        tmp_path: Path, workers: str, capsys: pytest.CaptureFixture[str]) -> None:
    """No per-case timeout and a backend that hangs: --run-timeout ends the run, writing the
    results it has and keeping the journal for --resume (before: it waited for ever)."""
    out = tmp_path / "r.json"
    code = main(["run", "-q", "--cases", str(DOCUMENTED), "--backend", f"{HOSTILE}:HangBackend",
                 "--timeout", "0", "--run-timeout", "2", "--workers", workers,
                 "--json", str(out)])
    assert code == 1
    doc = json.loads(out.read_text())
    stopped = doc["execution"]["stopped"]
    assert stopped.startswith("no case finished in 2 s (--run-timeout): stopped after ")
    assert len(doc["results"]) < 38 and all(r["status"] == "PASS" for r in doc["results"])
    kept = journal.path_for(out).read_text().splitlines()[1:]
    assert len(kept) == len(doc["results"])
    assert "repeat the command with --resume" in capsys.readouterr().err
