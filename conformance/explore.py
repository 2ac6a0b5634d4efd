"""`dmlconf explore`: the generated case families as Hypothesis properties against one backend.

Each family is a strategy that draws the parameters of one case (every draw named and noted)
and builds the case dict as the family does for cases/generated/: the explore() of the family's
modules (conformance/kit/family.py), the generic ones asking each operator through its
hooks. An example is dumped to YAML, loaded back with load_text (so it is exactly what a
committed file would hold) and run through a conformance.session.Session (the one `dmlconf run`
and the pytest plugin use), one case at a time; the property is that the status is PASS or
NOT_SUPPORTED (cases marked ambiguous never fail it). When it fails, Hypothesis shrinks the
example, and the minimal failing case is written to <out>/<family>-<hash>.yaml, ready to commit
as a regression (docs/explore.md).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import textwrap
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

import hypothesis
from hypothesis import HealthCheck, Phase, Verbosity, settings
from hypothesis import strategies as st
from hypothesis.errors import FlakyFailure, Unsatisfiable

from conformance.backend import Backend
from conformance.casefile import Case, load_cases, load_text
from conformance.flags import ExecutionFlags
from conformance.generate import dump, family_modules
from conformance.kit.family import Example
from conformance.levels import FeatureLevel
from conformance.results import Result
from conformance.session import RunOptions, Session
from conformance.session.case_run import run_case

OK = ("PASS", "NOT_SUPPORTED")
DEFAULT_MAX_EXAMPLES = 100
#: With --seconds and no --max-examples, the example count is no limit.
UNLIMITED = 1_000_000
#: Shrinking may run past a family's time budget by this much (or by the budget, if longer).
SHRINK_GRACE_S = 10.0


def _strategies() -> dict[str, Callable[[], st.SearchStrategy[Example]]]:
    """Family name -> the strategy of its examples: the explore() of each of its modules that
    has one (a family several packages share draws from each of their parts)."""
    parts: dict[str, list[Callable[[], st.SearchStrategy[Example]]]] = {}
    for module in family_modules():
        if hasattr(module, "explore"):
            parts.setdefault(module.FAMILY, []).append(module.explore)
    return {family: _one_of(found) for family, found in parts.items()}


def _one_of(parts: list[Callable[[], st.SearchStrategy[Example]]]
            ) -> Callable[[], st.SearchStrategy[Example]]:
    """The strategy that draws from each of a family's parts."""
    return lambda: st.one_of(*(p() for p in parts))


#: family name (as in cases/generated/) -> the strategy of its examples
FAMILIES: dict[str, Callable[[], st.SearchStrategy[Example]]] = _strategies()


# -- the property -------------------------------------------------------------------------------
def run_on(target: Backend | Session, loaded: Case) -> Result:
    """The case's result on a backend (in this process) or through a started Session (isolated
    where it says so)."""
    return target.run_case(loaded) if isinstance(target, Session) else run_case(loaded, target)


def check(example: Example, backend: Backend | Session) -> Result | None:
    """Run an example as a committed file holds it; its result if it breaks the property."""
    (loaded,) = load_text(dump({"cases": [example.case]}), f"<explore {example.family}>")
    if loaded.ambiguous:
        return None
    result = run_on(backend, loaded)
    return None if result.status in OK else result


class _PropertyError(AssertionError):
    """The property broke: the example's case FAILed or ERRORed against the backend."""


class _OutOfTime(BaseException):
    """Ends a family's search when its time is up (not an Exception: Hypothesis lets it
    through instead of shrinking it)."""


@dataclass
class FamilyReport:
    """What exploring one family found."""

    family: str
    examples: int = 0  # examples run before the first failure
    shrink_steps: int = 0  # examples run after it
    seconds: float = 0.0
    out_of_time: bool = False
    example: Example | None = None  # the minimal failing example
    result: Result | None = None
    path: Path | None = None
    reproduced: bool | None = None  # the written file fails again
    reference_passes: bool | None = None  # ... and the reference backend passes it
    error: str | None = None  # the explorer itself broke

    @property
    def failed(self) -> bool:
        return self.result is not None or self.error is not None

    def line(self) -> str:
        head = f"{self.family}: {self.examples} examples, {self.seconds:.1f} s"
        if self.error:
            return f"{head}: INTERNAL ERROR {self.error}"
        if self.result is None:
            return f"{head}: nothing found" + (" (time budget spent)" if self.out_of_time
                                               else "")
        first = self.result.message.splitlines()[0] if self.result.message else ""
        cut = " (shrinking cut short: time budget)" if self.out_of_time else ""
        return (f"{head}, {self.shrink_steps} shrinking{cut}: {self.result.status} "
                f"{first[:200]}\n  minimal example: {self.example!r}")


def explore_family(family: str, backend: Backend | Session, *, max_examples: int | None = None,
                   seconds: float | None = None, seed: int = 0) -> FamilyReport:
    """Search one family for a failing example; shrink the first one found."""
    report = FamilyReport(family)
    t0 = time.perf_counter()
    stop = t0 + seconds if seconds else None
    hard_stop = t0 + seconds + max(SHRINK_GRACE_S, seconds) if seconds else None

    def prop(example: Example) -> None:
        now = time.perf_counter()
        if report.example is None:
            if stop is not None and now > stop:
                report.out_of_time = True
                raise _OutOfTime
            report.examples += 1
        else:
            if hard_stop is not None and now > hard_stop:
                report.out_of_time = True
                raise _OutOfTime
            report.shrink_steps += 1
        result = check(example, backend)
        if result is not None:
            report.example, report.result = example, result
            raise _PropertyError(f"{result.status}: {result.message}")

    limit = max_examples or (UNLIMITED if seconds else DEFAULT_MAX_EXAMPLES)
    test = settings(max_examples=limit, deadline=None, database=None, derandomize=False,
                    phases=(Phase.explicit, Phase.generate, Phase.shrink),
                    report_multiple_bugs=False, suppress_health_check=list(HealthCheck),
                    verbosity=Verbosity.quiet, print_blob=False)(
        hypothesis.seed(seed)(hypothesis.given(FAMILIES[family]())(prop)))
    try:
        test()
    except (_PropertyError, _OutOfTime, Unsatisfiable):
        pass
    except FlakyFailure:
        pass  # the last failing example stands (reproduced says whether it fails again)
    except Exception as exc:  # the explorer built a case that does not load, or crashed
        if report.example is None:
            report.error = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
    report.seconds = time.perf_counter() - t0
    return report


# -- regressions --------------------------------------------------------------------------------
def regression_case(example: Example, result: Result, *, backend_name: str, seed: int
                    ) -> dict[str, Any]:
    """The failing case with its regression id (family and a hash of its content) and a
    description naming the backend, the seed and the failure."""
    content = {k: v for k, v in example.case.items() if k not in ("id", "description")}
    content["tags"] = [*content.get("tags", []), "regression"]
    digest = hashlib.sha256(json.dumps(content, sort_keys=True).encode()).hexdigest()[:12]
    first = result.message.splitlines()[0] if result.message else ""
    description = (f"Found by dmlconf explore against backend {backend_name} (seed {seed}): "
                   f"{result.status} {first[:200]}")
    return {"id": f"regressions/{example.family}/{digest}", "description": description,
            **content}


def write_regression(report: FamilyReport, out: Path, session: Session, *, seed: int) -> Path:
    """Write the minimal failing example as a regression case file; its header says how it was
    drawn and the command that reruns it (session.reproduce)."""
    assert report.example is not None and report.result is not None
    regression = regression_case(report.example, report.result,
                                 backend_name=session.options.backend, seed=seed)
    path = out / f"{report.family}-{regression['id'].rsplit('/', 1)[1]}.yaml"
    body = dump({"cases": [regression]})
    (case,) = load_text(body, path)
    drawn = textwrap.wrap(repr(report.example), 96, initial_indent="#   ",
                          subsequent_indent="#     ")
    header = "\n".join([
        "# Regression written by `dmlconf explore` (conformance/explore.py): the minimal failing",
        f"# example of family {report.family}, shrunk by Hypothesis. Drawn:", *drawn,
        f"# Reproduce: {session.reproduce(case)}", ""])
    out.mkdir(parents=True, exist_ok=True)
    path.write_text(header + body, encoding="utf-8")
    return path


# -- the command --------------------------------------------------------------------------------
def explore(backend_name: str, families: Sequence[str] | None = None, *,
            max_examples: int | None = None, seconds: float | None = None, seed: int = 0,
            out: str | Path = "cases/regressions", level: FeatureLevel | None = None,
            stream: TextIO | None = None, isolate: bool | None = None,
            timeout_s: float | None = None,
            execution_flags: ExecutionFlags = ExecutionFlags.NONE
            ) -> tuple[int, list[FamilyReport]]:
    """Explore each family against the backend; write a regression per failing family.
    (exit status: 1 if any family failed, else 0; the reports). isolate: run the backend in a
    worker process (a crash or hang is then a failing example, ERROR or TIMEOUT, shrunk like
    any other); None: for native backends, as dmlconf run. timeout_s: as --timeout (None: the
    default; 0: none)."""
    stream = stream or sys.stderr
    names = list(families or FAMILIES)
    unknown = [f for f in names if f not in FAMILIES]
    if unknown:
        raise ValueError(f"unknown family {', '.join(unknown)}; known: {', '.join(FAMILIES)}")
    if max_examples is not None and max_examples < 1:
        raise ValueError("--max-examples must be at least 1")
    if seconds is not None and seconds <= 0:
        raise ValueError("--seconds must be positive")
    with Session(RunOptions(backend=backend_name, level=level, execution_flags=execution_flags,
                            isolate=isolate, timeout_s=timeout_s)) as session:
        session.start(one_at_a_time=True)
        return _explore(session, names, max_examples=max_examples, seconds=seconds, seed=seed,
                        out=out, stream=stream)


def _reference_passes(case: Case, level: FeatureLevel) -> bool:
    """Whether the reference backend (numpy, in this process) passes the case."""
    with Session(RunOptions(backend="numpy", level=level, isolate=False)) as reference:
        reference.start(one_at_a_time=True)
        return reference.run_case(case).status in OK


def _explore(session: Session, names: list[str], *, max_examples: int | None,
             seconds: float | None, seed: int, out: str | Path, stream: TextIO
             ) -> tuple[int, list[FamilyReport]]:
    runner, backend_name = session.runner, session.options.backend
    assert runner is not None
    isolated = ", isolated in a worker process" if runner.isolated else ""
    stream.write(f"dmlconf explore: backend {backend_name} ({runner.class_name}), feature "
                 f"level {runner.claimed_level}{isolated}, seed {seed}, families "
                 f"{', '.join(names)}\n")
    t0 = time.perf_counter()
    reports = []
    regressions: dict[str, Case] = {}
    for i, family in enumerate(names):
        share = None
        if seconds:  # what is left of the total, split over the families still to run
            share = max(0.01, (seconds - (time.perf_counter() - t0)) / (len(names) - i))
        report = explore_family(family, session, max_examples=max_examples, seconds=share,
                                seed=seed)
        if report.result is not None:
            report.path = write_regression(report, Path(out), session, seed=seed)
            (again,) = load_cases([report.path])
            regressions[family] = again
            report.reproduced = session.run_case(again).status not in OK
            report.reference_passes = _reference_passes(again, runner.claimed_level)
        reports.append(report)
        stream.write(report.line() + "\n")
        if report.path:
            stream.write(f"  wrote {report.path} ("
                         f"{'reproduces' if report.reproduced else 'DOES NOT reproduce'}; "
                         + ("the reference passes it)\n" if report.reference_passes else
                            "the reference FAILS it too: a bug of the suite?)\n"))
        stream.flush()
    total = sum(r.examples + r.shrink_steps for r in reports)
    failed = [r for r in reports if r.failed]
    families_ = f"{len(reports)} famil{'y' if len(reports) == 1 else 'ies'}"
    print(f"explored {families_} against {backend_name}: {total} examples in "
          f"{time.perf_counter() - t0:.1f} s; "
          + (f"{len(failed)} failed" if failed else "nothing found"))
    for r in failed:
        if r.path:
            print(f"  {r.family}: {r.path}\n    reproduce: "
                  f"{session.reproduce(regressions[r.family])}")
        else:
            print(f"  {r.family}: {r.error}")
    return int(bool(failed)), reports


def command(args: argparse.Namespace) -> int:
    """`dmlconf explore` (conformance/cli/explore.py parses the arguments)."""
    level = FeatureLevel.parse(args.level) if args.level else None
    status, _ = explore(args.backend, args.family, max_examples=args.max_examples,
                        seconds=args.seconds, seed=args.seed, out=args.out, level=level,
                        isolate=args.isolate, timeout_s=args.timeout,
                        execution_flags=ExecutionFlags.parse(args.execution_flags))
    return status
