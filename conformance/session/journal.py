"""The journal of a run in progress: each result is appended as one JSON line the moment it
is known, so that an interrupted run (Ctrl-C, a killed CI job, a crash of the harness) loses
nothing, and `dmlconf run --resume` runs only the cases the journal lacks.

The journal sits beside the results file (reports/results.json.journal). Its first line names
the run (backend, feature level, the exact case set); a resumed run must be the same run. A
torn last line (the harness killed mid-write) is ignored: that case runs again. The journal is
removed once the results file is written whole.

One run per results file at a time: a Journal holds a lock on the journal's lock file
(reports/results.json.journal.lock, which names the holder: pid, host, command, start) from
before it reads or replaces the journal until it is closed, and a second run is refused with
the holder's name. Where fcntl exists the lock is flock(2), which the OS drops when the holder
dies however it dies (kill -9 included), so `--resume` after a crash just works. Elsewhere
(Windows) the lock file is created exclusively (O_EXCL) and is stale once the pid it names no
longer runs on this host.
"""

from __future__ import annotations

import errno
import json
import os
import shlex
import socket
import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, TextIO

from conformance import __version__
from conformance.results import Result
from conformance.results.io import result_problem

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None  # type: ignore[assignment]

FORMAT = "dml-conformance-journal/1"
#: Seconds between flushes of the journal to the disk (each line is written to the OS at
#: once; fsync only bounds what a power cut could take).
SYNC_EVERY_S = 2.0
#: What a resumed run must share with the journal's: the case set and the backend, the scoped
#: claim (the cases outside it are recorded NOT_SUPPORTED), and the mode (isolated: the judge
#: out of the backend's reach, tamper-proof; certify: no cache believed; sandboxed: the
#: backend's process out of the harness's reach), so that results judged in one mode never
#: count for a run that says it ran in another.
RUN_KEYS = ("suite_version", "backend", "feature_level", "execution_flags", "case_set_sha256",
            "shard", "isolated", "certify", "sandboxed", "scope")


class JournalError(Exception):
    """A journal that cannot be resumed by this run (the message says why and what to do)."""


def path_for(results_path: str | Path) -> Path:
    results_path = Path(results_path)
    return results_path.with_name(results_path.name + ".journal")


def lock_path_for(journal_path: str | Path) -> Path:
    journal_path = Path(journal_path)
    return journal_path.with_name(journal_path.name + ".lock")


def _owner() -> dict[str, Any]:
    """What the lock file says of the run holding it."""
    return {"pid": os.getpid(), "host": socket.gethostname(),
            "command": shlex.join([Path(sys.argv[0]).name, *sys.argv[1:]]) if sys.argv else "",
            "started_at": datetime.now(timezone.utc).isoformat(timespec="seconds")}


def read_owner(lock: Path) -> dict[str, Any] | None:
    """The holder a lock file names; None when it names none (being written, or not ours)."""
    try:
        owner = json.loads(lock.read_text(encoding="utf-8", errors="replace"))
    except (OSError, ValueError):
        return None
    return owner if isinstance(owner, dict) and isinstance(owner.get("pid"), int) else None


def pid_alive(pid: int) -> bool:
    """Whether a process with this id runs on this host (True when that cannot be told)."""
    if sys.platform == "win32":  # os.kill(pid, 0) would terminate it there
        import ctypes

        kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)
        handle = kernel32.OpenProcess(0x1000, False, pid)  # PROCESS_QUERY_LIMITED_INFORMATION
        if not handle:
            return ctypes.get_last_error() != 87  # ERROR_INVALID_PARAMETER: no such process
        try:
            code = ctypes.c_ulong()
            kernel32.GetExitCodeProcess(handle, ctypes.byref(code))
            return code.value == 259  # STILL_ACTIVE
        finally:
            kernel32.CloseHandle(handle)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # EPERM: it runs, as another user
        return True
    return True


def _alive(owner: dict[str, Any]) -> bool:
    return owner.get("host") != socket.gethostname() or pid_alive(owner["pid"])


def _held(journal: Path, lock: Path, owner: dict[str, Any] | None) -> JournalError:
    if owner is None:
        who = f"another run (it has not named itself in {lock} yet)"
    else:
        here = owner.get("host") == socket.gethostname()
        who = (f"another run: pid {owner['pid']}{'' if here else ' on ' + str(owner.get('host'))}"
               f", started {owner.get('started_at', '?')}, command: {owner.get('command', '?')}")
        if here and not pid_alive(owner["pid"]):
            who += (f" (pid {owner['pid']} has ended, but a process it started still holds the "
                    "lock, e.g. a child its backend forked: end that process)")
    return JournalError(f"{journal} is in use by {who}. One run per results file at a time: "
                        "two would replace each other's journal and results. Wait for that run "
                        "to end, or give this run another --json path")


def _lock(journal: Path) -> tuple[int, bool]:
    """Take the journal's lock: (the lock file's descriptor, whether it is an flock). Raises
    JournalError naming the holder when another run holds it."""
    lock = lock_path_for(journal)
    text = (json.dumps(_owner()) + "\n").encode("utf-8")
    for _ in range(100):  # each turn lost a race with a run releasing the lock
        fd = _flock(journal, lock) if fcntl else _create(journal, lock)
        if fd is not None:
            os.ftruncate(fd, 0)
            os.write(fd, text)
            return fd, fcntl is not None
    raise JournalError(f"cannot take the lock {lock}: other runs keep taking and releasing it")


def _flock(journal: Path, lock: Path) -> int | None:
    """The lock file, flocked; None when it was removed meanwhile (take the new one)."""
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        os.close(fd)
        if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
            raise _held(journal, lock, read_owner(lock)) from None
        raise JournalError(f"cannot lock {lock} ({exc.strerror}): its file system does not "
                           "lock files; give --json a path on another one") from None
    try:
        same = os.path.samestat(os.stat(lock), os.fstat(fd))
    except FileNotFoundError:
        same = False
    if not same:  # released and removed between our open and our flock
        os.close(fd)
        return None
    return fd


def _create(journal: Path, lock: Path) -> int | None:
    """The lock file, created here; None when a stale one was removed (try again)."""
    try:
        return os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        owner = read_owner(lock)
        if owner is None or _alive(owner):
            error = _held(journal, lock, owner)
            raise JournalError(f"{error} (if no run is going, remove {lock})") from None
        lock.unlink(missing_ok=True)  # stale: the run that took it has died
        return None


def _unlock(journal: Path, fd: int, flock: bool) -> None:
    """Release the lock and remove its file, unless the file is no longer ours (removed by
    hand, and taken by another run since)."""
    lock = lock_path_for(journal)
    try:
        ours = os.path.samestat(os.stat(lock), os.fstat(fd))
    except OSError:
        ours = False
    if flock and ours:  # removed while held: a run that opens it meanwhile sees it gone (_lock)
        lock.unlink(missing_ok=True)
    os.close(fd)
    if not flock and ours:  # closed first: Windows removes no open file
        lock.unlink(missing_ok=True)


def _result(line: dict[str, Any]) -> Result | None:
    """The result a journal line records, or None when it is not one as the results file holds
    them (results.io.result_problem: the same rules as the results file's reader)."""
    return None if result_problem(line) else Result.from_json(line)


def read(path: Path) -> tuple[dict[str, Any], dict[str, Result]]:
    """(the run it records, the results by case id). A line that cannot be read (the torn
    last line of a killed run) is skipped: its case has no result."""
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError as exc:
        raise JournalError(f"{path}: cannot read the journal: {exc.strerror or exc}") from None
    try:
        header = json.loads(lines[0]) if lines else None
    except json.JSONDecodeError:
        header = None
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise JournalError(f"{path}: not a dmlconf journal ({FORMAT}); remove it or run "
                           "without --resume")
    done: dict[str, Result] = {}
    for text in lines[1:]:
        try:
            line = json.loads(text)
        except json.JSONDecodeError:
            continue
        result = _result(line) if isinstance(line, dict) else None
        if result is not None:
            done[result.id] = result
    return header, done


class Journal:
    """Appends results to the journal of this run; `done` holds those of an earlier,
    interrupted session of the same run when resuming. Holds the journal's lock from before
    it reads or replaces the journal until close() (JournalError, touching nothing, when
    another run holds it)."""

    def __init__(self, path: str | Path, run: dict[str, Any], resume: bool = False) -> None:
        self.path = Path(path)
        self.run = {"format": FORMAT, "suite_version": __version__, **run}
        self.done: dict[str, Result] = {}
        self.replaced = False  # an unfinished journal was there and is started afresh
        self.added = 0  # results added by this session
        self._last_sync = time.monotonic()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock: tuple[int, bool] | None = _lock(self.path)
        try:
            self._open(resume)
        except BaseException:
            self._release()
            raise

    def _open(self, resume: bool) -> None:
        if resume and self.path.exists():
            header, self.done = read(self.path)
            differ = [k for k in RUN_KEYS if header.get(k) != self.run.get(k)]
            if differ:
                what = ", ".join(f"{k} {header.get(k)!r} there, {self.run.get(k)!r} here"
                                 for k in differ)
                raise JournalError(f"cannot resume {self.path}: it records another run "
                                   f"({what}); run without --resume to start afresh")
            self.run["started_at"] = header.get("started_at", self.run.get("started_at"))
            torn = self.path.read_bytes()[-1:] not in (b"\n", b"")
            self.file: TextIO = open(self.path, "a", encoding="utf-8")
            if torn:  # end the torn line, so that the next result starts a line of its own
                self.file.write("\n")
            return
        self.replaced = self.path.exists()
        self.file = open(self.path, "w", encoding="utf-8")
        self.file.write(json.dumps(self.run) + "\n")
        self._sync()

    def add(self, result: Result) -> None:
        self.added += 1
        self.file.write(json.dumps(result.to_json()) + "\n")
        self.file.flush()
        if time.monotonic() - self._last_sync > SYNC_EVERY_S:
            self._sync()

    def _sync(self) -> None:
        self.file.flush()
        os.fsync(self.file.fileno())
        self._last_sync = time.monotonic()

    def close(self) -> None:
        """Sync and close the journal, and release the lock (another run may take it)."""
        try:
            if not self.file.closed:
                self._sync()
                self.file.close()
        finally:
            self._release()

    def _release(self) -> None:
        if self._lock is not None:
            _unlock(self.path, *self._lock)
            self._lock = None

    def abandon(self) -> None:
        """The run failed (not interrupted): keep the journal only if it holds results."""
        if not self.done and not self.added:
            self._end()
        else:
            self.close()

    def finish(self) -> None:
        """The results file is written: the journal has served."""
        self._end()

    def _end(self) -> None:
        """Remove the journal, then release the lock: no other run sees it half gone."""
        try:
            if not self.file.closed:
                self.file.close()
            self.path.unlink(missing_ok=True)
        finally:
            self._release()
