"""One run of cases against a backend, used by every face (`dmlconf run`, the pytest plugin,
`dmlconf explore`): selection, shards, isolation and workers, the journal, retries, the
baseline and the results document (run.py: RunOptions and the Session), and the command that
reruns one case (reproduce.py).

    run.py            RunOptions, Session: one run, options in, results out
    case_run.py       one case: bindings, the backend's calls, the judgement -> Result
    bindings.py       a case's guarded buffers, the executors of the backend's calls
    judging.py        what each output is judged against, what a FAIL keeps
    claims.py         what the runner reads of a backend: is a case its to run
    workers.py        the backend in worker processes (isolation, parallel runs): CaseRunner
    execution.py      Execution: in process or isolated, workers, timeout, memory cap
    pool.py           Pool: one worker, driven from the calling thread
    parallel_pool.py  ParallelPool: several workers, each driven by a judge process
    remote.py         what crosses to a worker process: channel, answers, arena, claims
    worker_main.py    a worker process's life: the backend built, requests answered
    worker_handle.py  the harness's handle on a worker process (Worker, RemoteBackend)
    journal.py        the journal of a run in progress (--resume)
    shards.py         --shard K/N and `dmlconf merge`
    reproduce.py      the reproduce command
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from conformance.results.reproduce import chosen_level, reproduce_command
    from conformance.session.case_run import is_flaky
    from conformance.session.journal import JournalError
    from conformance.session.run import (
        CASES_PER_WORKER,
        DEFAULT_JSON,
        DEFAULT_RUN_TIMEOUT_S,
        RunOptions,
        Session,
        default_case_paths,
        default_workers,
    )
    from conformance.session.workers import DEFAULT_TIMEOUT_S, Execution, WorkerError

__all__ = ["CASES_PER_WORKER", "DEFAULT_JSON", "DEFAULT_RUN_TIMEOUT_S", "DEFAULT_TIMEOUT_S",
           "Execution", "JournalError", "RunOptions", "Session", "WorkerError", "chosen_level",
           "default_case_paths", "default_workers", "is_flaky", "reproduce_command"]

#: The module each name above comes from, imported when the name is first asked for: a worker
#: process imports session.worker_main, and so this package, and needs none of them (the run,
#: the judge, the results and case files: ~0.2 s of CPU at every worker start).
_FROM = {
    "chosen_level": "conformance.results.reproduce",
    "reproduce_command": "conformance.results.reproduce",
    "is_flaky": "conformance.session.case_run",
    "JournalError": "conformance.session.journal",
    **dict.fromkeys(["CASES_PER_WORKER", "DEFAULT_JSON", "DEFAULT_RUN_TIMEOUT_S", "RunOptions",
                     "Session",
                     "default_case_paths", "default_workers"], "conformance.session.run"),
    **dict.fromkeys(["DEFAULT_TIMEOUT_S", "Execution", "WorkerError"],
                    "conformance.session.workers"),
}


def __getattr__(name: str) -> Any:
    if name not in _FROM:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_FROM[name]), name)
    globals()[name] = value
    return value
