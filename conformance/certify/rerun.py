"""`dmlconf verify BUNDLE --rerun BACKEND`: does the bundle reproduce? A deterministic sample of
the bundle's cases is run again with the backend the reviewer gives, in the mode the bundle
records, and each result's status is compared with the bundle's (docs/certification.md,
"Rerun a sample").

    the bundle's results.json --sha256--> the seed (its first 16 hex digits; --seed: another)
      --> the sample: the N ids whose sha256("<seed>/<id>") is smallest (all: every id), of
          a scoped claim's covered cases only (results.scope: the rest were not run)
      --> a certification Session of those cases (bundle.select: the committed case set,
          checked; the bundle's feature level, execution flags and timeout; isolated, the
          sandbox as for certify; no baseline)
      --> each status compared with the bundle's (a waived XFAIL: with the failure it forgave)

A TIMEOUT on one side only is not compared: it says how long a case took on one machine, not
what the backend computed. It is reported, and it leaves the rerun inconclusive (not
reproduced) rather than differing.
"""

from __future__ import annotations

import hashlib
import re
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from conformance.certify.bundle import RESULTS, sandboxing, select, sha256_file
from conformance.flags import ExecutionFlags
from conformance.levels import FeatureLevel
from conformance.results import FAILING, Execution, Result, ResultsDocument, Scope, Status

#: Cases a rerun takes by default: enough that a bundle with a few percent of its results forged
#: is caught with high probability (1 - (1 - f)^50: 64% at f = 2%, 92% at 5%), few enough to
#: rerun in seconds to a minute with any backend (a whole-suite rerun: --sample all).
DEFAULT_SAMPLE = 50
#: How much of the bundle's results.json sha256 the seed keeps (hex digits: 64 bits).
SEED_DIGITS = 16
_SEED = re.compile(r"^(?:0x)?([0-9a-f]{1,64})$", re.IGNORECASE)
#: An XFAIL's message as results.baseline.apply writes it: the status the entry forgave.
_FORGIVEN = re.compile(r"^(?:waived|expected) ([A-Z_]+) \(")


@dataclass(frozen=True)
class Request:
    """What `--rerun` is asked for. sample: the number of cases (None: every case); seed: hex
    digits (None: from the bundle's results.json); timeout_s: seconds per case (None: the
    bundle's recorded timeout; 0: none); without_sandbox: run where the sandbox cannot be made
    (None: as $DMLCONF_CERTIFY_WITHOUT_SANDBOX says, like certify)."""

    backend: str
    sample: int | None = DEFAULT_SAMPLE
    seed: str | None = None
    timeout_s: float | None = None
    workers: int | None = None
    without_sandbox: bool | None = None


@dataclass(frozen=True)
class Comparison:
    """One sampled case whose rerun did not agree: the bundle's status as recorded, the status
    compared (an XFAIL's forgiven failure), the rerun's, and the first line of the rerun's
    message."""

    id: str
    bundle: Status
    compared: Status
    rerun: Status
    message: str

    def line(self) -> str:
        said = (f"{self.bundle} ({self.compared} waived)" if self.bundle != self.compared
                else str(self.bundle))
        tail = f": {self.message}" if self.message else ""
        return f"{self.id}: bundle {said}, rerun {self.rerun}{tail}"


@dataclass
class Outcome:
    """What the rerun found: the seed, how many cases it ran of how many, the cases whose status
    differs, those not compared for a TIMEOUT on one side, and notes (a message that differs
    where the status agrees, another backend class)."""

    seed: str
    sampled: int
    of: int
    differ: list[Comparison] = field(default_factory=list)
    timed_out: list[Comparison] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def reproduces(self) -> bool:
        """Every sampled case compared and agreeing."""
        return not self.differ and not self.timed_out

    def summary(self) -> str:
        """'rerun: 50 of 6,997 cases (seed 0x...), all agree' or '..., 3 differ: the bundle
        does not reproduce'."""
        which = "every case" if self.sampled == self.of else f"seed 0x{self.seed}"
        head = f"rerun: {self.sampled:,} of {self.of:,} case{'s' if self.of != 1 else ''} ({which})"
        if self.reproduces:
            return f"{head}, all agree"
        parts = []
        if self.differ:
            parts.append(f"{len(self.differ):,} differ")
        if self.timed_out:
            parts.append(f"{len(self.timed_out):,} timed out on one side (not compared)")
        verdict = ("the bundle does not reproduce" if self.differ else
                   "inconclusive: rerun with a longer --timeout (0: none)")
        return f"{head}, {' and '.join(parts)}: {verdict}"


def parse_seed(text: str) -> str:
    """A --seed: 1 to 64 hex digits, 0x optional; lower-cased, without the 0x."""
    m = _SEED.match(text.strip())
    if not m:
        raise ValueError(f"--seed {text!r}: give 1 to 64 hex digits, e.g. 0x5eed")
    return m.group(1).lower()


def seed_of(results_sha256: str) -> str:
    """The seed of a bundle: the first SEED_DIGITS hex digits of its results.json's sha256 (the
    one SHA256SUMS lists): the same bundle, folder or zip, always samples the same cases; any
    other results document samples others."""
    return results_sha256[:SEED_DIGITS].lower()


def sample(ids: Iterable[str], seed: str, size: int | None) -> list[str]:
    """The `size` ids whose sha256 of "<seed>/<id>" (UTF-8, as hex) is smallest, sorted; every
    id when size is None, 0 or not below their number. Anyone can recompute it (no random
    generator whose algorithm a Python version may change)."""
    every = sorted(set(ids))
    if not size or size >= len(every):
        return every

    def rank(case_id: str) -> str:
        return hashlib.sha256(f"{seed}/{case_id}".encode()).hexdigest()

    return sorted(sorted(every, key=rank)[:size])


def forgiven(result: Result) -> Status:
    """The status a result is compared as: an XFAIL's the failure its baseline entry forgave
    (read from the message results.baseline wrote), any other its own."""
    if result.status != Status.XFAIL:
        return result.status
    m = _FORGIVEN.match(result.message)
    if m and m.group(1) in Status.__members__:
        return Status(m.group(1))
    return result.status


def _recorded_timeout(doc: ResultsDocument) -> float | None:
    """The per-case timeout the bundle's run had, as a --timeout option: its seconds, 0 for
    none, None (the default) where the document does not say."""
    execution = doc.execution
    if not isinstance(execution, Execution):
        return None
    return 0 if execution.timeout_s is None else float(execution.timeout_s)


def compare(recorded: Result, again: Result) -> Comparison | None:
    """None when the rerun agrees with the bundle on the case's status, else the comparison."""
    compared = forgiven(recorded)
    if again.status == compared:
        return None
    first = again.message.splitlines()[0][:200] if again.message else ""
    return Comparison(recorded.id, recorded.status, compared, again.status, first)


def rerun(folder: Path, doc: ResultsDocument, request: Request, out: TextIO) -> Outcome:
    """Rerun a sample of the bundle's cases (the bundle unpacked in folder, its results document
    doc, verified) with request.backend and compare (module docstring). out: where a terminal's
    progress goes. CertifyError (a usage error) when the installed cases are not the committed
    ones or the level has no list; the session's errors (ValueError, BackendLoadError,
    WorkerError) as a run raises them."""
    from conformance.session import RunOptions, Session

    level = FeatureLevel.parse(doc.feature_level)
    seed = request.seed or seed_of(sha256_file(folder / RESULTS))
    scope = Scope.from_json(doc.scope if doc.has("scope") else None)
    recorded = {r.id: r for r in doc.results
                if scope is None or scope.covers(r.operators, r.data_types)}
    chosen = sample(recorded, seed, request.sample)
    outcome = Outcome(seed, len(chosen), len(recorded))
    timeout = request.timeout_s if request.timeout_s is not None else _recorded_timeout(doc)
    with tempfile.TemporaryDirectory(prefix="dmlconf-rerun-") as tmp:
        session = Session(sandboxing(request.without_sandbox, RunOptions(
            backend=request.backend, level=level,
            execution_flags=ExecutionFlags.parse(doc.execution_flags), certify=True,
            workers=request.workers, timeout_s=timeout, json=Path(tmp) / RESULTS,
            scope=scope)))
        select(session, level)
        wanted = set(chosen)
        session.cases = [c for c in session.cases if c.id in wanted]
        lacking = wanted - {c.id for c in session.cases}
        if lacking:  # verify found the results to be the list's: cannot happen
            raise ValueError(f"{len(lacking)} sampled ids name no case of the mustpass list of "
                             f"{level}, e.g. {min(lacking)}")
        session.plan()
        with session:
            runner = session.start()
            session.run(_Counter(len(session.todo), out))
            assert session.journal is not None
            session.journal.finish()  # no results file: the journal has served
    if runner.class_path != doc.backend.get("class"):
        outcome.notes.append(f"the rerun's backend is {runner.class_path}, the bundle's "
                             f"{doc.backend.get('class')}")
    for again in session.results:
        before = recorded[again.id]
        differs = compare(before, again)
        if differs is None:
            if again.status in FAILING and again.message and (
                    again.message.splitlines()[0] not in before.message):
                outcome.notes.append(
                    f"{again.id}: {again.status} in both, but otherwise: the rerun says "
                    f"{again.message.splitlines()[0][:200]!r}")
            continue
        timing = Status.TIMEOUT in (differs.compared, differs.rerun)
        (outcome.timed_out if timing else outcome.differ).append(differs)
    return outcome


class _Counter:
    """The rerun's progress: on a terminal, 'rerun: 12/50 cases' rewritten in place."""

    def __init__(self, total: int, out: TextIO) -> None:
        self.total, self.out, self.done = total, out, 0
        self.tty = out.isatty()

    def __call__(self, result: Result) -> None:
        self.done += 1
        if self.tty:
            end = "\n" if self.done == self.total else ""
            self.out.write(f"\rrerun: {self.done}/{self.total} cases{end}")
            self.out.flush()
