"""Certification integrity (issue 13): in an isolated run the judge is out of the backend's
reach. A backend that patches the judge in its own process, forges its answers, breaks its fds
0-2 or forks gets FAIL or ERROR on what it did, never PASS, costs at most its own case, and
leaves nothing running; a run that is not tamper-proof says so in every report; --certify
insists on isolation. The backends are tests/support/cheating_backends.py."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conformance.casefile import Case, load_cases
from conformance.cli import main
from conformance.report import common
from conformance.session import remote
from tests.support import CHEATS, DOCUMENTED, ROOT, Dmlconf, result_of, statuses
from tests.support.documents import typed

VICTIMS = ("documented/depth_to_space/example", "documented/space_to_depth/example")
DOCUMENTED_CASES = load_cases([DOCUMENTED])


def reads_inputs_back(case: Case) -> bool:
    """Whether the judge works from input bytes after the backend ran: an output judged against
    the reference of its input, or a call whose input is another call's (PatchesInputCheck
    inverts its inputs, so in-process it fails exactly these)."""
    return (any(e.kind == "reference" for e in (case.expected or {}).values())
            or any(s.kind == "from" for s in case.inputs.values()))


#: In-process, PASS for every documented case but those the cheat's scratch inputs show.
ALL = len(DOCUMENTED_CASES)
UNSPOILED = ALL - sum(map(reads_inputs_back, DOCUMENTED_CASES))

posix_only = pytest.mark.skipif(sys.platform == "win32", reason="POSIX fds, fork, signals")


def run(dmlconf: Dmlconf, backend: str, *args: str) -> tuple[int, dict]:
    """The documented cases on a cheating backend."""
    return dmlconf("--cases", str(DOCUMENTED), "--backend", f"{CHEATS}:{backend}", *args)


def run_elsewhere(tmp_path: Path, backend: str, *args: str) -> tuple[int, dict, str]:
    """dmlconf run in a process of its own (an in-process cheat patches the process it runs
    in: not this one's). Every expectation is computed there (no expectations cache): which
    cases a patched NumPy spoils depends on whether the judge's reference runs, and the counts
    below are of runs where it does."""
    out = tmp_path / "elsewhere.json"
    done = subprocess.run(
        [sys.executable, "-m", "conformance.cli", "run", "-q", "--cases", str(DOCUMENTED),
         "--json", str(out), "--backend", f"{CHEATS}:{backend}", *args],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
        env={**os.environ, "DMLCONF_EXPECTED_CACHE": "off"})
    return done.returncode, json.loads(out.read_text(encoding="utf-8")), done.stdout


def check_the_rest_passed(doc: dict) -> None:
    others = {i: s for i, s in statuses(doc).items() if i not in VICTIMS}
    assert len(others) == ALL - len(VICTIMS) and set(others.values()) == {"PASS"}, others


# -- cheating through the judge's own functions ---------------------------------------------------
@pytest.mark.parametrize(("backend", "caught"), [
    ("PatchesMismatches", "elements differ"),  # every output judged: unwritten
    ("PatchesInputCheck", "the backend changed"),  # bytes of its input
    ("PatchesGuards", "the backend wrote outside its buffer"),
])
def test_a_backend_that_patches_the_judge_fails_in_an_isolated_run(
        dmlconf: Dmlconf, backend: str, caught: str) -> None:
    code, doc = run(dmlconf, backend, "--certify")
    assert code == 1
    assert doc["execution"]["isolated"] is True and doc["execution"]["tamper_proof"] is True
    assert set(statuses(doc).values()) == {"FAIL"}, statuses(doc)
    assert all(caught in r["message"] for r in doc["results"]), \
        [r["message"][:200] for r in doc["results"] if caught not in r["message"]]
    assert not any("conformant" in v and v["conformant"] for v in doc["verdict"].values())


@posix_only
@pytest.mark.parametrize(("backend", "caught", "passed"), [
    ("PatchesMismatches", "elements differ", ALL),
    ("PatchesInputCheck", "the backend changed", UNSPOILED),  # cases reading inputs back
    ("PatchesGuards", "the backend wrote outside its buffer", ALL),
])
def test_in_process_the_same_cheat_is_not_caught_and_the_run_is_labelled(
        tmp_path: Path, backend: str, caught: str, passed: int) -> None:
    """Why the judge left the backend's process: in-process, the patched check never fires.
    Such a run is labelled not tamper-proof, and --certify refuses to make one."""
    code, doc, out = run_elsewhere(tmp_path, backend, "--no-isolate")
    assert UNSPOILED < ALL  # the chains reading another call's input, at least
    assert code == int(passed < ALL) and doc["summary"]["PASS"] == passed
    assert not any(caught in r["message"] for r in doc["results"])
    assert doc["execution"]["tamper_proof"] is False
    assert common.NOT_TAMPER_PROOF in out


# -- forged answers -------------------------------------------------------------------------------
def test_garbage_on_the_channel_is_an_error_and_the_worker_is_replaced(dmlconf: Dmlconf) -> None:
    code, doc = run(dmlconf, "GarbageAnswer")
    assert code == 1
    check_the_rest_passed(doc)
    for r in (result_of(doc, v) for v in VICTIMS):
        assert r["status"] == "ERROR"
        assert r["message"].startswith("the backend's worker sent an answer the harness cannot "
                                       "trust (a frame of 1,346,458,451 bytes announced")


def test_a_forged_ok_answer_still_gets_the_outputs_judged(dmlconf: Dmlconf) -> None:
    """A well-formed answer written by the backend itself, for the very request it serves, is
    taken for the worker's; the judge still reads the outputs, which are unwritten: FAIL. The
    worker's own answer, which follows, is something unasked for: the worker is replaced before
    the next case, which passes."""
    code, doc = run(dmlconf, "ForgedAnswer")
    assert code == 1
    check_the_rest_passed(doc)
    assert [result_of(doc, v)["status"] for v in VICTIMS] == ["FAIL", "FAIL"]


def test_an_answer_left_by_an_earlier_case_does_not_cost_the_next_case(dmlconf: Dmlconf) -> None:
    """An answer to an earlier case's request that arrives while the next case runs (a forged
    answer's real one, late) is the earlier case's doing: the next case runs again, whole, on a
    fresh worker, and its result says so. Deterministic twin of the forged-answer test above,
    whose worker answer may arrive before or after the next request."""
    code, doc = run(dmlconf, "LateAnswer")
    assert code == 0, statuses(doc)
    assert set(statuses(doc).values()) == {"PASS"}
    again = [r["id"] for r in doc["results"] if any("ran a second time" in i for i in r["info"])]
    after = [doc["results"][[r["id"] for r in doc["results"]].index(v) + 1]["id"]
             for v in VICTIMS]
    assert again == after
    note = next(i for i in result_of(doc, after[0])["info"] if "ran a second time" in i)
    assert "it sent something it was not asked for" in note


@pytest.mark.parametrize(("data", "why"), [
    (b"\xff\xfe", "not a JSON answer"),
    (b"[[[[" * 10000 + b"]]]]" * 10000, "not a JSON answer"),
    (b'{"kind": "ok"}', "not one of the answers"),
    (b'["PASS", 1, null]', "not one of the answers"),
    (b'["ok", 1]', "wrong number or types"),
    (b'["ok", true, null]', "wrong number or types"),
    (b'["ok", 1, 5]', "wrong number or types"),
    (b'["error", 1, "RuntimeError", "x"]', "wrong number or types"),
    (b'["ok", 2, null]', "an answer to request 2, not to request 1"),
    (json.dumps(["rejected", 1, "x" * (remote.TEXT_LIMIT + 1)]).encode(), "longer than"),
])
def test_an_answer_is_checked_field_by_field(data: bytes, why: str) -> None:
    with pytest.raises(remote._GarbledError, match=why):
        remote._parse_answer(data, 1)
    assert remote._parse_answer(b'["rejected", 1, "bad Sizes"]', 1) == ["rejected", 1,
                                                                       "bad Sizes"]


def test_an_answer_to_an_earlier_request_is_told_apart() -> None:
    """Well-formed but answering an earlier request: stale (whose case is to blame is the
    worker's to decide), not garbled."""
    with pytest.raises(remote._StaleError, match="an answer to request 3, not to request 5") as e:
        remote._parse_answer(b'["ok", 3, null]', 5)
    assert e.value.seq == 3


# -- fds 0-2 --------------------------------------------------------------------------------------
def check_still_heard(doc: dict) -> None:
    """The second victim printed and exited: its output reached the harness, so the worker's
    log survived what the first victim did to fds 0-2."""
    second = result_of(doc, VICTIMS[1])
    assert second["status"] == "ERROR" and "exited with code 7" in second["message"]
    assert second["crash"]["output"] == "still heard\n"


@posix_only
def test_a_backend_that_closes_fds_0_to_2_costs_its_case(dmlconf: Dmlconf) -> None:
    code, doc = run(dmlconf, "ClosesStdio")
    assert code == 1
    check_the_rest_passed(doc)
    first = result_of(doc, VICTIMS[0])
    assert first["status"] == "ERROR"
    assert first["message"].startswith("the backend raised OSError: [Errno 9] Bad file "
                                       "descriptor")
    check_still_heard(doc)


@posix_only
def test_a_backend_that_dup2s_dev_null_over_fds_0_to_2_costs_its_case(dmlconf: Dmlconf) -> None:
    code, doc = run(dmlconf, "NullStdio")
    assert code == 1
    check_the_rest_passed(doc)
    assert result_of(doc, VICTIMS[0])["status"] == "FAIL"  # it computed nothing
    check_still_heard(doc)


@posix_only
def test_a_backend_that_floods_stdout_costs_its_case(dmlconf: Dmlconf) -> None:
    """100 MB on stdout: the log is read from its end (a crash shows at most OUTPUT_TAIL
    characters of it) and emptied at the next case, never read whole."""
    code, doc = run(dmlconf, "FloodsStdout")
    assert code == 1
    check_the_rest_passed(doc)
    assert result_of(doc, VICTIMS[0])["status"] == "FAIL"
    check_still_heard(doc)


@posix_only
def test_a_backend_that_closes_every_fd_costs_its_case(dmlconf: Dmlconf) -> None:
    code, doc = run(dmlconf, "ClosesEveryFd")
    assert code == 1
    check_the_rest_passed(doc)
    first = result_of(doc, VICTIMS[0])
    assert first["status"] == "ERROR" and first["crash"] is not None


def test_a_backend_that_truncates_its_shared_buffers_costs_its_case(dmlconf: Dmlconf) -> None:
    """The harness never maps the arena: reading it back short is the case's ERROR, not a
    SIGBUS in the harness."""
    code, doc = run(dmlconf, "TruncatesArena")
    assert code == 1
    check_the_rest_passed(doc)
    for r in (result_of(doc, v) for v in VICTIMS):
        assert r["status"] == "ERROR" and "the shared buffer came back cut short" in r["message"]


# -- processes ------------------------------------------------------------------------------------
def gone(pid: int) -> bool:
    """Whether the process has ended (a zombie not yet reaped by its new parent counts)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return True
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        return False
    return "\nState:\tZ" in status


def check_all_gone(pids_file: Path, expected: int) -> None:
    pids = [int(line) for line in pids_file.read_text().split()]
    assert len(pids) == expected, pids
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not all(map(gone, pids)):
        time.sleep(0.05)
    assert all(map(gone, pids)), [p for p in pids if not gone(p)]


@posix_only
def test_what_a_backend_forks_ends_with_its_worker_at_the_end_of_the_run(
        tmp_path: Path, dmlconf: Dmlconf, monkeypatch: pytest.MonkeyPatch) -> None:
    pids = tmp_path / "pids"
    monkeypatch.setenv("DMLCONF_TEST_PIDS", str(pids))
    code, doc = run(dmlconf, "Forks", "--no-sandbox")  # process groups (the sandbox: elsewhere)
    assert code == 0 and set(statuses(doc).values()) == {"PASS"}
    check_all_gone(pids, 2)


@posix_only
def test_what_a_backend_forks_ends_with_its_worker_at_a_timeout(
        tmp_path: Path, dmlconf: Dmlconf, monkeypatch: pytest.MonkeyPatch) -> None:
    pids = tmp_path / "pids"
    monkeypatch.setenv("DMLCONF_TEST_PIDS", str(pids))
    code, doc = run(dmlconf, "ForksAndHangs", "--timeout", "2", "--workers", "2", "--no-sandbox")
    assert code == 1
    check_the_rest_passed(doc)
    assert [result_of(doc, v)["status"] for v in VICTIMS] == ["PASS", "TIMEOUT"]
    check_all_gone(pids, 2)


@posix_only
def test_what_a_backend_forks_ends_when_the_run_is_terminated(tmp_path: Path) -> None:
    """SIGTERM to a parallel run (a cancelled CI job): the judges kill their workers' groups."""
    pids = tmp_path / "pids"
    out = tmp_path / "r.json"
    proc = subprocess.Popen(
        [sys.executable, "-m", "conformance.cli", "run", "-q", "--cases", str(DOCUMENTED),
         "--json", str(out), "--backend", f"{CHEATS}:ForksSlowly", "--workers", "2",
         "--no-sandbox"],
        cwd=ROOT, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "DMLCONF_TEST_PIDS": str(pids)})
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and (not pids.exists()
                                           or len(pids.read_text().split()) < 2):
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    check_all_gone(pids, 2)


# -- labels and --certify -------------------------------------------------------------------------
def test_an_in_process_run_is_labelled_in_every_report(
        tmp_path: Path, dmlconf: Dmlconf, capsys: pytest.CaptureFixture[str]) -> None:
    paths = {k: tmp_path / f"r.{k}" for k in ("md", "html", "xml")}
    args = ["--cases", str(DOCUMENTED), "-k", "strides", "--markdown", str(paths["md"]),
            "--html", str(paths["html"]), "--junit", str(paths["xml"])]
    for isolate, proof in (("--no-isolate", False), ("--isolate", True)):
        code, doc = dmlconf(*args, isolate)
        assert code == 0
        assert doc["execution"]["tamper_proof"] is proof
        assert common.tamper_proof(typed(doc)) is proof
        out = capsys.readouterr().out
        junit = paths["xml"].read_text()
        assert f'<property name="tamper_proof" value="{str(proof).lower()}"/>' in junit
        labelled = [common.NOT_TAMPER_PROOF in out,
                    f"**{common.md_cell(common.NOT_TAMPER_PROOF)}**" in paths["md"].read_text(),
                    "NOT tamper-proof: the backend ran in the judge&#39;s process"
                    in paths["html"].read_text(),
                    '<property name="integrity" value="NOT tamper-proof' in junit]
        assert labelled == [not proof] * 4


def test_a_merged_run_is_tamper_proof_only_if_every_shard_was() -> None:
    proof = {"execution": {"tamper_proof": True}}
    assert common.tamper_proof(typed(proof))
    assert not common.tamper_proof(typed({"execution": {"isolated": True}}))  # older than the field
    assert not common.tamper_proof(typed({}))

    def merged(*shards: dict) -> dict:
        return {"execution": {"merged": [{"shard": f"{k + 1}/{len(shards)}", **s}
                                         for k, s in enumerate(shards)]}}

    assert common.tamper_proof(typed(merged(proof, proof)))
    assert not common.tamper_proof(typed(merged(proof, {"execution": {"tamper_proof": False}})))


def test_certify_forces_isolation_and_refuses_no_isolate(
        tmp_path: Path, dmlconf: Dmlconf, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "results.json"
    args = ["--cases", str(DOCUMENTED), "-k", "strides"]
    assert main(["run", "-q", "--json", str(out), *args, "--certify", "--no-isolate"]) == 2
    assert "--certify refuses --no-isolate" in capsys.readouterr().err
    assert not out.exists()
    code, doc = dmlconf(*args)
    assert code == 0  # numpy on 7 cases: in-process by default
    assert doc["execution"]["tamper_proof"] is False
    assert common.NOT_TAMPER_PROOF in capsys.readouterr().out
    code, doc = dmlconf(*args, "--certify")
    assert code == 0
    execution = doc["execution"]
    assert execution["isolated"] is True and execution["tamper_proof"] is True
    assert execution["certify"] is True and execution["workers"] == 1
    assert common.NOT_TAMPER_PROOF not in capsys.readouterr().out


IMPORT_TIME_CHEAT = '''
import numpy as np
import conformance.judge.compare
from backends.numpy_reference import NumpyReferenceBackend

# at import, wherever this module is imported: the judge finds no mismatch
conformance.judge.compare.mismatches = lambda got, exp: np.zeros(np.shape(got), dtype=bool)


class ImportTimeCheat(NumpyReferenceBackend):
    name = "import-time-cheat"

    def execute(self, call, bindings):  # computes nothing
        self.create_operator(call)
'''


def test_a_backend_by_path_is_not_imported_by_the_harness_to_decide_its_isolation(
        tmp_path: Path) -> None:
    """A small run (one worker) of a backend that is not built in is isolated without importing
    its module in the harness (its `native` flag is not read there): an import-time patch of
    the judge reaches only the worker. Before, the harness imported it to read `native`, and a
    run labelled tamper-proof passed every case."""
    (tmp_path / "cheat.py").write_text(IMPORT_TIME_CHEAT)
    out = tmp_path / "r.json"
    done = subprocess.run(
        [sys.executable, "-m", "conformance.cli", "run", "-q", "--cases", str(DOCUMENTED),
         "-k", "strides", "--json", str(out), "--backend",
         f"{tmp_path / 'cheat.py'}:ImportTimeCheat"],
        cwd=ROOT, capture_output=True, text=True, timeout=300)
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert done.returncode == 1, done.stderr
    assert doc["execution"]["isolated"] is True and doc["execution"]["workers"] == 1
    assert doc["execution"]["tamper_proof"] is True
    assert doc["results"] and {r["status"] for r in doc["results"]} == {"FAIL"}, statuses(doc)
