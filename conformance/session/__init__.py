"""One run of cases against a backend, used by every face (`dmlconf run`, the pytest plugin,
`dmlconf explore`): selection, shards, isolation and workers, the journal, retries, the
baseline and the results document (run.py: RunOptions and the Session), and the command that
reruns one case (reproduce.py).

    run.py        RunOptions, Session: one run, options in, results out
    runner.py     one case: bindings, the backend's calls, the judgement -> Result
    workers.py    the backend in worker processes (isolation, parallel runs): CaseRunner
    remote.py     a worker process and the harness's handle on it
    journal.py    the journal of a run in progress (--resume)
    shards.py     --shard K/N and `dmlconf merge`
    reproduce.py  the reproduce command
"""

from conformance.results.reproduce import chosen_level, reproduce_command
from conformance.session.journal import JournalError
from conformance.session.run import (
    CASES_PER_WORKER,
    DEFAULT_JSON,
    RunOptions,
    Session,
    default_case_paths,
    default_workers,
)
from conformance.session.runner import is_flaky
from conformance.session.workers import DEFAULT_TIMEOUT_S, Execution, WorkerError

__all__ = ["CASES_PER_WORKER", "DEFAULT_JSON", "DEFAULT_TIMEOUT_S", "Execution", "JournalError",
           "RunOptions", "Session", "WorkerError", "chosen_level", "default_case_paths",
           "default_workers", "is_flaky", "reproduce_command"]
