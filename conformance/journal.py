"""The journal of a run in progress: each result is appended as one JSON line the moment it
is known, so that an interrupted run (Ctrl-C, a killed CI job, a crash of the harness) loses
nothing, and `dmlconf run --resume` runs only the cases the journal lacks.

The journal sits beside the results file (reports/results.json.journal). Its first line names
the run (backend, feature level, the exact case set); a resumed run must be the same run. A
torn last line (the harness killed mid-write) is ignored: that case runs again. The journal is
removed once the results file is written whole.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any, TextIO

from conformance import __version__
from conformance.results import STATUSES, Result

FORMAT = "dml-conformance-journal/1"
#: Seconds between flushes of the journal to the disk (each line is written to the OS at
#: once; fsync only bounds what a power cut could take).
SYNC_EVERY_S = 2.0
#: What must be equal for a journal to be resumed.
RUN_KEYS = ("suite_version", "backend", "feature_level", "execution_flags", "case_set_sha256",
            "shard")


class JournalError(Exception):
    """A journal that cannot be resumed by this run (the message says why and what to do)."""


def path_for(results_path: str | Path) -> Path:
    results_path = Path(results_path)
    return results_path.with_name(results_path.name + ".journal")


def _result(line: dict[str, Any]) -> Result | None:
    if not isinstance(line.get("id"), str) or line.get("status") not in STATUSES:
        return None
    return Result.from_json(line)


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
    interrupted session of the same run when resuming."""

    def __init__(self, path: str | Path, run: dict[str, Any], resume: bool = False) -> None:
        self.path = Path(path)
        self.run = {"format": FORMAT, "suite_version": __version__, **run}
        self.done: dict[str, Result] = {}
        self.replaced = False  # an unfinished journal was there and is started afresh
        self.added = 0  # results added by this session
        self._last_sync = time.monotonic()
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
        self.path.parent.mkdir(parents=True, exist_ok=True)
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
        if not self.file.closed:
            self._sync()
            self.file.close()

    def abandon(self) -> None:
        """The run failed (not interrupted): keep the journal only if it holds results."""
        self.close()
        if not self.done and not self.added:
            self.path.unlink(missing_ok=True)

    def finish(self) -> None:
        """The results file is written: the journal has served."""
        self.close()
        self.path.unlink(missing_ok=True)
