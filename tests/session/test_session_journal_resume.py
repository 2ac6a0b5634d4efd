"""No lost results: the results file is written atomically; a run interrupted by Ctrl-C or
SIGTERM keeps what it finished in its journal and leaves the old results file alone; --resume
runs only the cases the journal lacks, and gives the document of an uninterrupted run. An
interrupted run releases the journal's lock (tests/session/test_session_journal_lock.py: the lock
itself)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conformance import results
from conformance.casefile import load_cases
from conformance.cli import main
from conformance.session import journal, sandbox
from tests.support import DOCUMENTED, HOSTILE, ROOT, Dmlconf, comparable, dmlconf_in

DOCUMENTED_COUNT = len(load_cases([DOCUMENTED]))


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory: pytest.TempPathFactory) -> dict:
    code, doc = dmlconf_in(tmp_path_factory.mktemp("whole"))("--cases", str(DOCUMENTED))
    assert code == 0
    return doc


def test_ctrl_c_keeps_the_journal_and_resume_finishes_the_run(
        tmp_path: Path, uninterrupted: dict, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("DMLCONF_TEST_MARKER", str(tmp_path / "interrupted-once"))
    out = tmp_path / "results.json"
    out.write_text("the previous run's results\n")
    # in this process (a backend that is not built in is isolated by default): the backend's
    # KeyboardInterrupt stands for a Ctrl-C in the harness
    args = ["run", "-q", "--cases", str(DOCUMENTED), "--json", str(out),
            "--backend", f"{HOSTILE}:InterruptingBackend", "--no-isolate"]
    assert main(args) == 130
    err = capsys.readouterr().err
    assert f"interrupted after 5 of {DOCUMENTED_COUNT} cases" in err and "--resume" in err
    assert out.read_text() == "the previous run's results\n"  # untouched
    header, done = journal.read(journal.path_for(out))
    assert header["backend"].endswith("InterruptingBackend") and len(done) == 5
    assert not journal.lock_path_for(journal.path_for(out)).exists()  # released

    # a resume in another mode is refused, the journal kept (issue 24: an in-process run's
    # results, judged where the backend could reach the judge, went into a tamper-proof one)
    isolated = [a for a in args if a != "--no-isolate"]
    # (where the sandbox cannot be made, --certify --resume is refused before the journal is
    # read: without the sandbox the backend's user could have written it)
    certify_refused = ("certify False there, True here" if isinstance(sandbox.find(),
                                                                      sandbox.Sandbox)
                       else "--certify --resume reads the journal, which without the sandbox")
    for other, said in [(isolated, "isolated False there, True here"),
                        ([*isolated, "--certify"], certify_refused)]:
        assert main([*other, "--resume"]) == 2
        assert said in capsys.readouterr().err
        assert len(journal.read(journal.path_for(out))[1]) == 5

    assert main([*args, "--resume"]) == 0
    err = capsys.readouterr().err
    assert f"5 cases done, {DOCUMENTED_COUNT - 5} to run" in err
    doc = json.loads(out.read_text())
    assert doc["execution"]["resumed_cases"] == 5
    assert not journal.path_for(out).exists()
    expected = comparable(uninterrupted)
    expected["backend"] = doc["backend"]
    assert comparable(doc) == expected


def test_a_torn_last_line_is_run_again(tmp_path: Path, dmlconf: Dmlconf, uninterrupted: dict,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "r.json"
    first = uninterrupted["results"][:3]
    lines = [json.dumps({"format": journal.FORMAT, "suite_version": uninterrupted[
        "suite_version"], "backend": "numpy", "feature_level": "highest",
        "execution_flags": [], "case_set_sha256": uninterrupted["case_set_sha256"], "shard": None,
        "isolated": False, "certify": False, "sandboxed": False,
        "started_at": "2026-01-01T00:00:00+00:00"})]
    lines += [json.dumps(r) for r in first[:2]]
    journal.path_for(out).write_text("\n".join(lines) + "\n" + json.dumps(first[2])[:40])
    code, doc = dmlconf("--cases", str(DOCUMENTED), "--resume", name=out.name)
    assert code == 0
    assert f"2 cases done, {DOCUMENTED_COUNT - 2} to run" in capsys.readouterr().err
    assert doc["started_at"] == "2026-01-01T00:00:00+00:00"  # the run began then
    assert comparable(doc) == comparable(uninterrupted)


def test_a_journal_of_another_run_is_not_resumed(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "r.json"
    journal.path_for(out).write_text(json.dumps({
        "format": journal.FORMAT, "suite_version": "0.1.0", "backend": "torch",
        "feature_level": "highest", "case_set_sha256": "ab" * 32, "shard": None}) + "\n")
    args = ["run", "-q", "--cases", str(DOCUMENTED), "--json", str(out)]
    assert main([*args, "--resume"]) == 2
    err = capsys.readouterr().err
    assert "cannot resume" in err and "backend 'torch' there, 'numpy' here" in err
    assert "run without --resume to start afresh" in err
    journal.path_for(out).write_text("not a journal\n")
    assert main([*args, "--resume"]) == 2
    assert "not a dmlconf journal" in capsys.readouterr().err
    # Without --resume the unfinished journal is replaced, and the user is told.
    assert main(args) == 0
    assert "the journal of an unfinished run" in capsys.readouterr().err
    assert not journal.path_for(out).exists()


def test_a_run_that_cannot_start_leaves_the_journal_alone(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DMLCONF_TEST_MARKER", str(tmp_path / "interrupted-once"))
    out = tmp_path / "r.json"
    args = ["run", "-q", "--cases", str(DOCUMENTED), "--json", str(out)]
    assert main([*args, "--backend", f"{HOSTILE}:InterruptingBackend", "--no-isolate"]) == 130
    before = journal.path_for(out).read_bytes()
    assert main([*args, "--backend", f"{HOSTILE}:NoSuchBackend"]) == 2  # a typo
    assert main([*args, "--backend", f"{HOSTILE}:NoSuchBackend", "--isolate"]) == 2
    assert journal.path_for(out).read_bytes() == before
    assert main([*args, "--backend", f"{HOSTILE}:InterruptingBackend", "--no-isolate",
                 "--resume"]) == 0


def test_resume_without_a_journal_runs_everything(dmlconf: Dmlconf, uninterrupted: dict) -> None:
    code, doc = dmlconf("--cases", str(DOCUMENTED), "--resume")
    assert code == 0
    assert comparable(doc) == comparable(uninterrupted)


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_to_an_isolated_parallel_run(tmp_path: Path, uninterrupted: dict,
                                              signum: int) -> None:
    """The command line as a user runs it: two workers, a backend slow enough to interrupt,
    then the signal a terminal's Ctrl-C or a cancelled CI job sends. The judges send results
    back a chunk at a time, so the first reach the journal well into the run: at 0.5 s a call
    (about 12 s in all) the signal comes seconds before its end even on a loaded machine (at
    0.2 s a loaded CI machine once sent it after the run had ended)."""
    out = tmp_path / "r.json"
    args = [sys.executable, "-m", "conformance.cli", "run", "-q", "--cases", str(DOCUMENTED),
            "--json", str(out), "--backend", f"{HOSTILE}:SlowBackend", "--workers", "2"]
    # SIGINT at its default, as a terminal starts a command: a pytest-xdist worker may have it
    # ignored, which a child inherits and Python keeps (CI lost the signal so, twice)
    proc = subprocess.Popen(args, cwd=ROOT, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "DMLCONF_TEST_SLOW_S": "0.5"},
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    path = journal.path_for(out)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and (not path.exists()
                                           or len(path.read_text().splitlines()) < 4):
        time.sleep(0.05)
    proc.send_signal(signum)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    word = "interrupted" if signum == signal.SIGINT else "terminated (SIGTERM)"
    assert f"dmlconf: {word} after" in err and not out.exists()
    _, done = journal.read(path)
    assert 3 <= len(done) < DOCUMENTED_COUNT
    assert not journal.lock_path_for(path).exists()  # the interrupted run released its lock
    resumed = subprocess.run([*args, "--resume"], cwd=ROOT, capture_output=True, text=True,
                             timeout=120)
    assert resumed.returncode == 0, resumed.stderr
    assert f"{len(done)} cases done, {DOCUMENTED_COUNT - len(done)} to run" in resumed.stderr
    doc = json.loads(out.read_text())
    expected = comparable(uninterrupted)
    expected["backend"] = doc["backend"]
    assert comparable(doc) == expected


def test_the_results_file_is_replaced_whole_or_not_at_all(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "results.json"
    results.write_atomic("old\n", path)
    assert path.read_text() == "old\n"
    with pytest.raises(TypeError):  # fails while making the text: nothing is touched
        results.write(results.ResultsDocument.from_json({"results": [object()]}), path)

    def crash(*args: object) -> None:
        raise OSError("disk gone")

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(OSError, match="disk gone"):
        results.write_atomic("new\n", path)
    assert path.read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results.json"]  # no temp left
