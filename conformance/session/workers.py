"""Isolated runs: the backend in worker processes, the judge in the harness.

A worker process holds the backend and nothing else of a run (conformance.session.remote: it answers
requests for the backend's calls over a channel of its own, on buffers the harness owns). The
harness runs every case itself, case_run.run_case with the worker as the runner's executor, so no
code of the backend runs where the guards, inputs and outputs are checked and judged:

    one worker (Pool):        harness thread: run_case, the judge --requests--> worker: backend
    N workers (ParallelPool): harness --cases--> judge process 1: Pool --requests--> worker 1
                                      <-results-  judge process N: Pool --requests--> worker N

With several workers each is driven by a judge process of the harness's own (harness code
only; never the backend's), so that the judging runs in parallel too; the judges receive cases
in chunks and send back Results (pickled: harness to harness). Results come back in the cases'
order, so a run with any number of workers gives the results of a serial run, apart from
timings.

What becomes of a case whose worker fails, after which a fresh worker replaces the lost one and
the run goes on:
- the worker dies (a segfault, an abort, an exit, the kernel's out-of-memory killer): ERROR,
  with the exit code or signal and the worker's output since the case began (Result.crash);
- the case runs past the per-case timeout: TIMEOUT; the worker is killed;
- the worker closes its channel or answers what the harness cannot trust: ERROR; it is killed;
- the backend raises MemoryError: ERROR, as any exception from the backend is; the worker is
  retired. On Linux each worker's data segment is capped (RLIMIT_DATA) at its size once the
  backend is built plus the memory cap, so an allocation without bound ends in MemoryError
  rather than in the out-of-memory killer.

Here: CaseRunner, which runs a Session's cases as its Execution says, and new_pool. The
Execution is conformance.session.execution; Pool (one worker) conformance.session.pool;
ParallelPool (several) conformance.session.parallel_pool; the worker process and the harness's
handle on it conformance.session.remote, worker_main and worker_handle.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from conformance.backend import Backend, environment_of, load_backend
from conformance.casefile import Case
from conformance.levels import FeatureLevel
from conformance.results import Result, sanitise
from conformance.session.case_run import run_case, run_cases
from conformance.session.execution import (
    DEFAULT_TIMEOUT_S,
    Execution,
    available_cpus,
    timeout_option,
)
from conformance.session.parallel_pool import ParallelPool
from conformance.session.pool import Pool
from conformance.session.remote import WorkerError
from conformance.session.worker_handle import describe_exit
from conformance.session.worker_main import data_segment_bytes

__all__ = ["DEFAULT_TIMEOUT_S", "CaseRunner", "Execution", "ParallelPool", "Pool", "WorkerError",
           "available_cpus", "data_segment_bytes", "describe_exit", "timeout_option"]


def new_pool(backend: str, level: FeatureLevel | None, execution: Execution,
             believe_caches: bool = True) -> Pool | ParallelPool:
    """The worker pool of an isolated execution (a Pool for one worker, a ParallelPool for
    several), its processes not started yet (launch(), or ready() to wait for them too).
    believe_caches: False for a certification: the judge processes of a ParallelPool read no
    cache entry (a Pool judges in this process, under the caller's casefile.cache.fresh())."""
    if execution.workers <= 1:
        return Pool(backend, level, execution)
    return ParallelPool(backend, level, execution, believe_caches)


class CaseRunner:
    """A backend built to run cases as an Execution says: in this process, or in worker
    processes (a Pool for one, a ParallelPool for several). A Session (conformance.session)
    builds one for its run: run_all() for a whole run, run() for one case at a time (the
    pytest plugin, dmlconf explore). What the backend says of itself: class_path, class_name,
    capabilities (as JSON), claimed_level, environment (Backend.environment; from a worker,
    checked like its capabilities)."""

    def __init__(self, backend: str, level: FeatureLevel | None, execution: Execution,
                 pool: Pool | ParallelPool | None = None, believe_caches: bool = True) -> None:
        """pool: the pool new_pool() made and launched for this execution (its processes
        started early); None: made here (believe_caches: new_pool's)."""
        self.execution = execution
        self.pool: Pool | ParallelPool | None = None
        self.backend: Backend | None = None
        if execution.isolated:
            self.pool = pool or new_pool(backend, level, execution, believe_caches)
            try:
                info = self.pool.ready()
            except BaseException:
                self.pool.close()
                raise
            self.class_path, self.class_name = info["class"], info["class_name"]
            self.capabilities = info["capabilities"]
            self.claimed_level = FeatureLevel.parse(info["claimed_level"])
            self.environment: dict[str, str] = info["environment"]
            self.name: str = info.get("name", "")
        else:
            self.backend = load_backend(backend, level, execution.execution_flags)
            cls = type(self.backend)
            self.class_path, self.class_name = f"{cls.__module__}.{cls.__qualname__}", cls.__name__
            self.capabilities = self.backend.capabilities.to_json()
            self.claimed_level = self.backend.claimed_level
            self.environment = environment_of(self.backend)
            self.name = sanitise(self.backend.name) if isinstance(self.backend.name, str) else ""

    @property
    def isolated(self) -> bool:
        return self.pool is not None

    @property
    def tamper_proof(self) -> bool:
        """Whether the judge is out of the backend's reach (the backend in worker processes)."""
        return self.isolated

    def run(self, case: Case) -> Result:
        if self.pool is not None:
            return self.pool.run([case])[0]
        assert self.backend is not None
        return run_case(case, self.backend, self.execution.memory_cap)

    def run_all(self, cases: Sequence[Case],
                on_result: Callable[[Result], None] | None = None) -> list[Result]:
        """Every case's result, in the cases' order."""
        if self.pool is not None:
            return self.pool.run(cases, on_result)
        assert self.backend is not None
        return run_cases(cases, self.backend, on_result, memory_cap=self.execution.memory_cap)

    def close(self) -> None:
        if self.pool is not None:
            self.pool.close()

    def __enter__(self) -> CaseRunner:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
