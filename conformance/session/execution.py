"""How a run executes its cases (Execution): in this process or isolated in worker processes,
how many, with what per-case timeout, memory cap, cases per worker, thread pools and execution
flags (conformance.session.workers runs them so).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from conformance.flags import ExecutionFlags
from conformance.session.sandbox import Sandbox

#: Seconds a case may run in an isolated worker before it is a TIMEOUT (--timeout).
DEFAULT_TIMEOUT_S = 120.0
#: The thread-pool sizes of the common native libraries. With several workers, each worker's
#: pools get the CPUs divided by the workers (unless set by the user): idle pool threads that
#: spin (OpenBLAS, OpenMP) otherwise take the CPUs the other workers need; measured on a
#: 2-core machine, two workers each with two spinning OpenBLAS threads ran every case 3x slower.
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                    "NUMBA_NUM_THREADS", "VECLIB_MAXIMUM_THREADS")


def available_cpus() -> int:
    """The CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def timeout_option(seconds: float | None) -> float | None:
    """The per-case timeout a --timeout option asks for: the default when not given, none
    for 0."""
    return DEFAULT_TIMEOUT_S if seconds is None else seconds or None


@dataclass(frozen=True)
class Execution:
    """How a run executes its cases: in this process (isolated False, workers 1) or in
    `workers` worker processes; timeout_s (None: none) and memory_cap (bytes per process);
    cases_per_worker: a worker is replaced after that many cases (None: never; 1: every case in
    a fresh process, so that no case can see what an earlier one left in the backend's memory)."""

    workers: int = 1
    isolated: bool = False
    timeout_s: float | None = DEFAULT_TIMEOUT_S
    memory_cap: int = 0
    cases_per_worker: int | None = None
    cpus: int = field(default_factory=available_cpus)
    #: The DML_EXECUTION_FLAGS the backend compiles with and the judge allows for
    #: (`--execution-flags`; conformance.flags).
    execution_flags: ExecutionFlags = ExecutionFlags.NONE
    #: The sandbox the isolated workers run in (conformance.session.sandbox); None: none, and
    #: sandbox_missing says why (recorded, as is an override that lets --certify run without).
    sandbox: Sandbox | None = None
    sandbox_missing: str = ""
    sandbox_override: bool = False

    @property
    def tamper_proof(self) -> bool:
        """Whether the judge runs out of the backend's reach: only isolated, where the backend
        runs in worker processes and the judge in the harness."""
        return self.isolated

    @property
    def thread_environment(self) -> dict[str, str]:
        """The thread-pool variables the workers get (THREAD_VARIABLES): none for one worker
        or where the user set them."""
        if not self.isolated or self.workers < 2:
            return {}
        threads = str(max(1, self.cpus // self.workers))
        return {v: threads for v in THREAD_VARIABLES if v not in os.environ}

    def to_json(self) -> dict[str, Any]:
        return {"workers": self.workers, "isolated": self.isolated,
                "tamper_proof": self.tamper_proof,
                "timeout_s": self.timeout_s if self.isolated else None,
                "memory_cap_bytes": self.memory_cap,
                "cases_per_worker": self.cases_per_worker if self.isolated else None,
                "thread_environment": self.thread_environment,
                "execution_flags": self.execution_flags.names,
                **({"sandbox": self.sandbox_json()} if self.isolated else {})}

    def sandbox_json(self) -> dict[str, Any] | None:
        """What the results record of the sandbox: its guarantees, or why there is none."""
        if self.sandbox is not None:
            return self.sandbox.to_json()
        return {"none": self.sandbox_missing or "not asked for (--no-sandbox)",
                "certify_override": self.sandbox_override}


