"""One run per results file at a time: a run holds the lock of its journal
(RESULTS.json.journal.lock) while it goes; a second run on the same --json is refused at once,
exit 2, naming the first one's pid and command, and touches neither its journal nor its results.
The OS drops the lock of a run killed with SIGKILL, so --resume after a crash still works."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conformance.casefile import load_cases
from conformance.cli import main
from conformance.session import journal
from tests.support import DOCUMENTED, HOSTILE, ROOT, Dmlconf, comparable

RUN = {"backend": "numpy", "feature_level": "highest", "execution_flags": [],
       "case_set_sha256": "ab" * 32, "shard": None, "started_at": "2026-01-01T00:00:00+00:00"}


def slow_run(out: Path) -> tuple[subprocess.Popen[str], list[str]]:
    """`dmlconf run` on the documented cases with a backend slow enough (0.2 s a call) to be
    caught running, started once it has journaled 3 results."""
    args = [sys.executable, "-m", "conformance.cli", "run", "-q", "--cases", str(DOCUMENTED),
            "--json", str(out), "--backend", f"{HOSTILE}:SlowBackend"]
    proc = subprocess.Popen(args, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    path = journal.path_for(out)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and (not path.exists()
                                           or len(path.read_text().splitlines()) < 4):
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.05)
    return proc, args


# two whole runs at once: 10 s, in CI's certification step
@pytest.mark.certification
def test_a_second_run_on_the_same_results_file_is_refused_naming_the_first(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "r.json"
    proc, _ = slow_run(out)
    path = journal.path_for(out)
    try:
        for extra in ([], ["--resume"]):
            before = path.read_text().splitlines()
            assert main(["run", "-q", "--cases", str(DOCUMENTED), "--json", str(out), *extra]) == 2
            err = capsys.readouterr().err
            assert f"dmlconf: error: {path} is in use by another run: pid {proc.pid}," in err
            assert f"--json {out} --backend {HOSTILE}:SlowBackend" in err  # its command
            assert "One run per results file at a time" in err and "another --json" in err
            # the first run's journal is its own: not replaced, still growing
            assert path.read_text().splitlines()[:len(before)] == before
            assert not out.exists()
    finally:
        _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 0, stderr
    doc = json.loads(out.read_text())
    count = len(load_cases([DOCUMENTED]))
    assert len(doc["results"]) == count and doc["summary"]["PASS"] == count
    assert doc["execution"]["resumed_cases"] == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json"]  # lock and journal gone


# a whole run killed and resumed: 20 s, in CI's certification step
@pytest.mark.certification
@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_a_run_killed_with_sigkill_releases_its_lock_and_resumes(
        tmp_path: Path, dmlconf: Dmlconf) -> None:
    out = tmp_path / "r.json"
    proc, args = slow_run(out)
    proc.send_signal(signal.SIGKILL)  # no handler runs: the lock file stays, naming it
    proc.communicate(timeout=60)
    lock = journal.lock_path_for(journal.path_for(out))
    assert journal.read_owner(lock)["pid"] == proc.pid and not journal.pid_alive(proc.pid)
    _, done = journal.read(journal.path_for(out))
    count = len(load_cases([DOCUMENTED]))
    assert 3 <= len(done) < count
    resumed = subprocess.run([*args, "--resume"], cwd=ROOT, capture_output=True, text=True,
                             timeout=120)
    assert resumed.returncode == 0, resumed.stderr
    assert f"{len(done)} cases done, {count - len(done)} to run" in resumed.stderr
    assert not lock.exists() and not journal.path_for(out).exists()
    code, whole = dmlconf("--cases", str(DOCUMENTED), "--backend", f"{HOSTILE}:SlowBackend",
                          name="whole.json")
    assert code == 0
    assert comparable(json.loads(out.read_text())) == comparable(whole)


def test_the_journal_api_holds_the_lock_until_it_closes(tmp_path: Path) -> None:
    path = tmp_path / "r.json.journal"
    lock = journal.lock_path_for(path)
    first = journal.Journal(path, RUN)
    owner = journal.read_owner(lock)
    assert owner["pid"] == os.getpid() and owner["host"] == socket.gethostname()
    held = path.read_bytes()
    for resume in (False, True):
        with pytest.raises(journal.JournalError, match=f"pid {os.getpid()}, started "):
            journal.Journal(path, RUN, resume=resume)
        assert path.read_bytes() == held  # not replaced, not appended to
    first.close()  # interrupted: the journal stays, the lock goes
    assert path.exists() and not lock.exists()
    # a resume refused for another run's journal releases the lock it took
    with pytest.raises(journal.JournalError, match="cannot resume"):
        journal.Journal(path, {**RUN, "backend": "torch"}, resume=True)
    second = journal.Journal(path, RUN, resume=True)
    second.finish()
    assert sorted(tmp_path.iterdir()) == []
    journal.Journal(path, RUN).abandon()  # nothing added: nothing left
    assert sorted(tmp_path.iterdir()) == []
    # a lock file removed by hand (and so taken by another run): its first holder's release
    # leaves the new holder's alone
    first = journal.Journal(path, RUN)
    lock.unlink()
    second = journal.Journal(path, RUN, resume=True)
    first.close()
    assert lock.exists()
    with pytest.raises(journal.JournalError, match="is in use by another run"):
        journal.Journal(path, RUN, resume=True)
    second.finish()
    assert sorted(tmp_path.iterdir()) == []


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork")
def test_a_lock_kept_by_a_forked_child_names_the_ended_run(tmp_path: Path) -> None:
    """A backend's forked child shares the run's open files, its lock too: the refusal says
    that the named run has ended and what still holds the lock."""
    path = tmp_path / "r.json.journal"
    script = (f"import os, time\nfrom conformance.session import journal\n"
              f"journal.Journal({str(path)!r}, {RUN!r})\n"
              "child = os.fork()\n"
              "if child == 0:\n    os.close(1)\n    os.close(2)\n    time.sleep(60)\n"
              "    os._exit(0)\n"
              "print(os.getpid(), child, flush=True)\nos._exit(0)\n")
    proc = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True,
                          text=True, timeout=60)
    run_pid, child = map(int, proc.stdout.split())
    try:
        with pytest.raises(journal.JournalError) as refused:
            journal.Journal(path, RUN, resume=True)
        assert (f"pid {run_pid} has ended, but a process it started still holds the lock"
                in str(refused.value))
    finally:
        os.kill(child, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while True:  # once the child is gone, the OS has released the lock
        try:
            journal.Journal(path, RUN, resume=True).finish()
            break
        except journal.JournalError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.01)


def test_without_fcntl_a_lock_file_naming_a_live_pid_is_held_and_a_dead_one_stale(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The lock of platforms without fcntl (Windows): created exclusively, naming its pid."""
    monkeypatch.setattr(journal, "fcntl", None)
    path = tmp_path / "r.json.journal"
    lock = journal.lock_path_for(path)
    first = journal.Journal(path, RUN)
    with pytest.raises(journal.JournalError, match=f"pid {os.getpid()},.*remove {lock}"):
        journal.Journal(path, RUN, resume=True)
    first.close()
    assert not lock.exists()
    ended = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                           capture_output=True, text=True, check=True)
    dead = int(ended.stdout)  # (a pid reused by now would be taken for the run: refused)
    host = socket.gethostname()
    lock.write_text(json.dumps({"pid": dead, "host": host, "command": "dmlconf run"}))
    journal.Journal(path, RUN, resume=True).close()  # stale: taken over
    lock.write_text(json.dumps({"pid": dead, "host": host + "-other", "command": "x"}))
    with pytest.raises(journal.JournalError, match=f"pid {dead} on {host}-other"):
        journal.Journal(path, RUN, resume=True)  # another host's pid cannot be checked
    lock.write_text("")
    with pytest.raises(journal.JournalError, match="has not named itself"):
        journal.Journal(path, RUN, resume=True)
