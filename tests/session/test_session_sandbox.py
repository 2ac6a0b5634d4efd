"""The sandbox (conformance.session.sandbox; docs/robustness.md, "The sandbox"): what a backend
attacking the harness through the operating system from its worker gets, with the sandbox and,
for contrast, without it (where each attack worked before the sandbox existed). Backends in
tests/support/sandbox_backends.py."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from conformance.session import sandbox
from conformance.session.journal import FORMAT, path_for
from tests.support import DOCUMENTED, ROOT, Dmlconf, as_json

SANDBOX = sandbox.find()
BACKENDS = ROOT / "tests" / "support" / "sandbox_backends.py"
needs_sandbox = pytest.mark.skipif(
    not isinstance(SANDBOX, sandbox.Sandbox),
    reason=f"no sandbox here: {getattr(SANDBOX, 'reason', '')}")
pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux namespaces")


def run(dmlconf: Dmlconf, backend: str, *args: str) -> tuple[int, dict]:
    return dmlconf("--cases", str(DOCUMENTED), "--backend", f"{BACKENDS}:{backend}",
                   "--workers", "1", *args)


def seen_by(doc: dict) -> dict:
    """What the Prober saw: the JSON its first call raised, in that case's message."""
    (err,) = [r for r in doc["results"] if r["status"] == "ERROR"]
    text = err["message"].split("RuntimeError: ", 1)[1]
    return json.loads(text[:text.rindex("}") + 1])


@pytest.fixture
def bystander() -> Iterator[subprocess.Popen[bytes]]:
    """A process of the harness's user that is not the backend's."""
    proc = subprocess.Popen(["sleep", "300"])
    yield proc
    proc.kill()
    proc.wait()


@needs_sandbox
def test_the_sandbox_hides_the_harness_s_processes_and_files(
        dmlconf: Dmlconf, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        bystander: subprocess.Popen[bytes]) -> None:
    forged = tmp_path / "forged.txt"
    monkeypatch.setenv("DMLCONF_TEST_WRITE_CASES", str(DOCUMENTED / "forged.yaml"))
    monkeypatch.setenv("DMLCONF_TEST_TARGET", str(bystander.pid))
    monkeypatch.setenv("DMLCONF_TEST_WRITE", str(forged))
    code, doc = run(dmlconf, "Prober")
    assert code == 1
    seen = seen_by(doc)
    assert seen["visible"] is False, seen  # its own /proc: no process of the harness's
    assert seen["kill"] == "ESRCH" and seen["ptrace"] == "ESRCH", seen
    assert seen["write"] == "ENOENT", seen  # /tmp is the sandbox's own
    assert seen["write_cases"] in ("EROFS", "EACCES"), seen  # the rest is read-only
    assert bystander.poll() is None and not forged.exists()
    assert not (DOCUMENTED / "forged.yaml").exists()
    recorded = doc["execution"]["sandbox"]
    # another user for a root harness, unless what the worker needs is closed to other users
    # (a clone in a mktemp -d folder), which the results then say
    assert seen["uid"] == recorded["uid"]
    if os.geteuid() != 0:
        assert seen["uid"] == os.getuid()
    elif seen["uid"] != sandbox.SANDBOX_UID:
        assert "is not readable by other users" in recorded["user"], recorded
    assert recorded["pid_namespace"] is True and recorded["file_system"] == "read-only"


def test_without_the_sandbox_the_same_attack_works(
        dmlconf: Dmlconf, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        bystander: subprocess.Popen[bytes]) -> None:
    """The contrast: isolation alone (the worker a process of the harness's user)."""
    forged = tmp_path / "forged.txt"
    monkeypatch.setenv("DMLCONF_TEST_TARGET", str(bystander.pid))
    monkeypatch.setenv("DMLCONF_TEST_WRITE", str(forged))
    code, doc = run(dmlconf, "Prober", "--no-sandbox")
    assert code == 1
    seen = seen_by(doc)
    assert seen["visible"] is True and seen["kill"] == "done" and seen["write"] == "done"
    bystander.wait(10)
    assert forged.read_text() == "forged"
    assert doc["execution"]["sandbox"]["none"] == "not asked for (--no-sandbox)"


def _marked(mark: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and mark.encode() in (entry / "cmdline").read_bytes():
                found.append(int(entry.name))
        except OSError:
            pass
    return found


@needs_sandbox
def test_a_process_that_leaves_the_worker_s_group_dies_with_the_sandbox(
        dmlconf: Dmlconf, monkeypatch: pytest.MonkeyPatch) -> None:
    mark = f"300.{random.randrange(10**9):09d}"
    monkeypatch.setenv("DMLCONF_TEST_MARK", mark)
    code, doc = run(dmlconf, "Escapes")
    assert code == 0, doc["summary"]
    deadline = time.monotonic() + 10
    while _marked(mark) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _marked(mark) == []


def test_without_the_sandbox_it_outlives_the_run(
        dmlconf: Dmlconf, monkeypatch: pytest.MonkeyPatch) -> None:
    mark = f"300.{random.randrange(10**9):09d}"
    monkeypatch.setenv("DMLCONF_TEST_MARK", mark)
    try:
        code, _ = run(dmlconf, "Escapes", "--no-sandbox")
        assert code == 0
        time.sleep(0.5)
        assert _marked(mark)
    finally:
        for pid in _marked(mark):
            os.kill(pid, signal.SIGKILL)


@pytest.mark.skipif(not isinstance(SANDBOX, sandbox.Sandbox) or SANDBOX.cgroups is None,
                    reason="no memory cgroup the harness may make here")
def test_the_memory_cap_counts_shared_mappings(dmlconf: Dmlconf) -> None:
    code, doc = run(dmlconf, "SharedHog", "--memory-cap", "256M")
    assert code == 1
    (hog,) = [r for r in doc["results"] if r["status"] != "PASS"]
    assert hog["status"] == "ERROR" and "passed its memory cap" in hog["message"], hog
    assert hog["crash"]["signal"] == "SIGKILL"
    assert "shared mappings counted" in doc["execution"]["sandbox"]["memory"]


def test_without_the_cgroup_a_shared_mapping_passes_the_cap(dmlconf: Dmlconf) -> None:
    """The contrast: RLIMIT_DATA counts private memory only."""
    code, doc = run(dmlconf, "SharedHog", "--memory-cap", "256M", "--no-sandbox")
    assert code == 0, doc["summary"]


def test_certify_refuses_to_run_without_the_sandbox_unless_told(
        dmlconf: Dmlconf, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(sandbox, "find", lambda: sandbox.Unavailable("bubblewrap is gone"))
    monkeypatch.delenv("DMLCONF_CERTIFY_WITHOUT_SANDBOX", raising=False)
    with pytest.raises(FileNotFoundError):  # refused: no results written
        dmlconf("--cases", str(DOCUMENTED), "-k", "strides", "--certify")
    assert "--certify runs the backend in the sandbox, which is not made here: bubblewrap is " \
           "gone" in capsys.readouterr().err
    code, doc = dmlconf("--cases", str(DOCUMENTED), "-k", "strides", "--certify",
                        "--certify-without-sandbox")
    assert code == 0
    assert doc["execution"]["sandbox"] == {"none": "bubblewrap is gone",
                                           "certify_override": True}
    monkeypatch.setenv("DMLCONF_CERTIFY_WITHOUT_SANDBOX", "1")  # the same, for a CI config
    code, doc = dmlconf("--cases", str(DOCUMENTED), "-k", "strides", "--certify",
                        name="env.json")
    assert code == 0 and doc["execution"]["sandbox"]["certify_override"] is True
    capsys.readouterr()
    with pytest.raises(FileNotFoundError):
        dmlconf("--cases", str(DOCUMENTED), "-k", "strides", "--sandbox", name="s.json")
    assert "--sandbox: the sandbox cannot be made here: bubblewrap is gone" in \
        capsys.readouterr().err


@needs_sandbox
def test_resume_refuses_a_journal_of_another_sandbox_mode(
        dmlconf: Dmlconf, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, whole = dmlconf("--cases", str(DOCUMENTED), "--isolate", name="whole.json")
    assert code == 0 and whole["execution"]["sandbox"]["file_system"] == "read-only"
    out = tmp_path / "r.json"
    header = {"format": FORMAT, "suite_version": whole["suite_version"], "backend": "numpy",
              "feature_level": "highest", "execution_flags": [],
              "case_set_sha256": whole["case_set_sha256"], "shard": None, "isolated": True,
              "certify": False, "sandboxed": False, "started_at": whole["started_at"]}
    path_for(out).write_text(json.dumps(header) + "\n" + json.dumps(whole["results"][0]) + "\n")
    with pytest.raises(FileNotFoundError):
        dmlconf("--cases", str(DOCUMENTED), "--isolate", "--resume", name=out.name)
    assert "sandboxed" in capsys.readouterr().err


def test_a_log_replaced_by_a_fifo_does_not_hang_the_harness(tmp_path: Path) -> None:
    """The harness reads a worker's log through the descriptor it made it with: a backend that
    puts a FIFO at its log's path and crashes costs its case (before: the harness blocked for
    ever opening the FIFO). Without the sandbox, where the worker can reach the path."""
    out = tmp_path / "r.json"
    done = subprocess.run(
        [sys.executable, "-m", "conformance.cli", "run", "-q", "--cases", str(DOCUMENTED),
         "--backend", f"{ROOT / 'tests' / 'support' / 'cheating_backends.py'}:FifoLog",
         "--workers", "1", "--no-sandbox", "--json", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stderr
    doc = as_json(json.loads(out.read_text()))
    crashed = [r for r in doc["results"] if r["status"] == "ERROR"]
    assert crashed and all("SIGABRT" in r["message"] and "log replaced" in r["crash"]["output"]
                           for r in crashed)


def test_a_certification_without_the_sandbox_reads_no_journal(
        dmlconf: Dmlconf, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """Without the sandbox the backend's user can write the journal: --certify --resume, which
    would read it, is refused (with the sandbox the journal is out of the backend's reach)."""
    monkeypatch.setattr(sandbox, "find", lambda: sandbox.Unavailable("bubblewrap is gone"))
    with pytest.raises(FileNotFoundError):
        dmlconf("--cases", str(DOCUMENTED), "-k", "strides", "--certify",
                "--certify-without-sandbox", "--resume")
    assert "--certify --resume reads the journal" in capsys.readouterr().err


@pytest.mark.certification  # two `dmlconf certify` runs of numpy: 20 s, CI's own step
def test_dmlconf_certify_refuses_without_the_sandbox_unless_told(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    from conformance.cli import main

    monkeypatch.setattr(sandbox, "find", lambda: sandbox.Unavailable("bubblewrap is gone"))
    monkeypatch.delenv("DMLCONF_CERTIFY_WITHOUT_SANDBOX", raising=False)
    args = ["certify", "--backend", "numpy", "--level", "1_0"]
    assert main([*args, "--out", str(tmp_path / "refused")]) == 2
    assert "which is not made here: bubblewrap is gone" in capsys.readouterr().err
    assert main([*args, "--out", str(tmp_path / "b"), "--certify-without-sandbox"]) == 0
    doc = json.loads((tmp_path / "b" / "results.json").read_text())
    assert doc["execution"]["sandbox"] == {"none": "bubblewrap is gone",
                                           "certify_override": True}


@pytest.mark.skipif(not isinstance(SANDBOX, sandbox.Sandbox) or SANDBOX.uid is None,
                    reason="needs the sandbox as another user (a root harness)")
def test_what_a_worker_needs_is_reachable_inside_a_folder_closed_to_it(tmp_path: Path) -> None:
    """A clone made by `mktemp -d` (0700) with its venv inside: the closed folder becomes a
    tmpfs and the needed path inside it is bound back (before, a bind of the closed folder
    itself hid the venv, and the sandbox could not start its interpreter)."""
    assert isinstance(SANDBOX, sandbox.Sandbox)
    closed = tmp_path / "clone"
    (closed / "venv").mkdir(parents=True)
    (closed / "venv" / "python").write_text("reached\n")
    closed.chmod(0o700)
    (closed / "venv").chmod(0o755)
    done = subprocess.run(
        SANDBOX.command(["/bin/cat", str(closed / "venv" / "python")], [closed, closed / "venv"]),
        capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout) == (0, "reached\n"), done.stderr
