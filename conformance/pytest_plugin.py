"""A pytest plugin: the conformance cases as pytest items (`pytest --dml-backend NAME`).

Registered through the `pytest11` entry point, so installing the package makes the options
available; the plugin does nothing unless `--dml-backend` is given. Then every selected case
becomes one item (its node id is the case id) under a single collector, "dmlconf", which is
added to whatever else pytest collects, so it works in a folder with no test files at all.
The options become a conformance.session.Session, the one `dmlconf run` and `dmlconf explore`
use: it selects the cases, builds the backend once per process (once per pytest-xdist worker),
and running an item is the session's run_case: for a native backend, or with --dml-isolate, in
one worker process per pytest process, so that a crash or a hang of the backend fails one item
(ERROR, TIMEOUT) and the session goes on:

- PASS (and XPASS against a baseline) passes;
- QUALITY_WARNING (inside the legal envelope, outside the strict reading) passes and emits a
  DmlQualityWarning (a UserWarning) with the result's message, which pytest lists in its
  warnings summary under the item; the item also gets the user properties
  `dmlconf_quality_warning` (the message) and `dmlconf_margin`. `-W
  error::conformance.pytest_plugin.DmlQualityWarning` turns every warning into a failure;
- FAIL, ERROR and TIMEOUT (results.FAILING) fail with the result's message (no traceback);
- NOT_SUPPORTED is skipped with its reason;
- a failure a baseline expects (XFAIL) is an xfail with the baseline's reason;
- a FAIL, ERROR or TIMEOUT of a case in an ambiguous region of the spec is an xfail, never a
  failure.

`--dml-execution-flags ALLOW_HALF_PRECISION_COMPUTATION,...` compiles every operator with those
DML_EXECUTION_FLAGS (conformance.flags): the backend gets them and the judge widens the float16
envelope under ALLOW_HALF_PRECISION_COMPUTATION, as `dmlconf run --execution-flags`. The header
and the terminal summary state them ("execution flags: NONE" without), and the summary lists the
warned cases.

The header and the terminal summary also say whether the session was tamper-proof: only with
the backend in a worker process (isolated) is the judge, which runs in pytest's process, out of
its reach; an in-process session says "NOT tamper-proof" (docs/robustness.md).

Collection is deterministic (the case files in sorted order, as `dmlconf run` reads them) and
holds no state shared across processes, so every xdist worker collects the same items.
"""

from __future__ import annotations

import argparse
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conformance.casefile import Case, CaseFileError
from conformance.results import FAILING, Scope, Status, counted

COLLECTOR_NAME = "dmlconf"
#: The user property naming a warned case's message (read back by the terminal summary, also
#: under pytest-xdist, whose workers send the reports' user properties to the controller).
WARNING_PROPERTY = "dmlconf_quality_warning"


class DmlQualityWarning(UserWarning):
    """A case passed inside the legal envelope of the D3D12 arithmetic rules but outside the
    suite's strict one-rounding reading (status QUALITY_WARNING; docs/tolerances.md)."""


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("dmlconf", "DirectML conformance cases (dml-conformance)")
    group.addoption("--dml-backend", metavar="NAME", default=None,
                    help="run the conformance cases on this backend: a registered name, "
                         "package.module:Class or path/to/file.py:Class (activates the plugin)")
    group.addoption("--dml-cases", action="append", default=[], metavar="PATH",
                    help="case file or folder (repeatable; default: the cases/ folder that "
                         "`dmlconf run` uses)")
    group.addoption("--dml-k", action="append", default=[], metavar="PATTERN",
                    help="select case ids: a substring, or a glob with * ? [ (repeatable)")
    group.addoption("--dml-level", metavar="LEVEL", default=None,
                    help="the feature level claimed, e.g. 5_1 (default: the backend's highest)")
    group.addoption("--dml-baseline", metavar="PATH", default=None,
                    help="YAML file of known failures: matching FAIL/ERROR/TIMEOUT become xfail "
                         "(docs/baselines.md)")
    group.addoption("--dml-isolate", action=argparse.BooleanOptionalAction, default=None,
                    help="run the backend in a worker process, so that a crash or hang fails "
                         "one item, not the session (default: for native backends)")
    group.addoption("--dml-timeout", type=float, default=None, metavar="S",
                    help="seconds a case may run in the worker before it is a TIMEOUT "
                         "(default: as dmlconf run; 0: none)")
    group.addoption("--dml-execution-flags", metavar="FLAGS", default=None,
                    help="DML_EXECUTION_FLAGS to compile every operator with, e.g. "
                         "ALLOW_HALF_PRECISION_COMPUTATION,DISABLE_META_COMMANDS (as dmlconf "
                         "run --execution-flags; default NONE)")
    group.addoption("--dml-scope", action="append", default=[], metavar="OPERATOR[:TYPES]",
                    help="claim only these slices, as dmlconf run --scope: the cases outside "
                         "are skipped as not covered (repeatable)")
    group.addoption("--dml-strict", action="store_true", default=False,
                    help="with --dml-baseline: a case the baseline expects to fail that passes "
                         "(XPASS) fails its item (as `dmlconf run --strict`)")


def pytest_configure(config: pytest.Config) -> None:
    if config.getoption("dml_backend"):
        config.pluginmanager.register(DmlConformance(config), "dmlconf-session")


class CaseFailedError(Exception):
    """A case ended FAIL, ERROR or TIMEOUT; shown as its message, without a traceback."""

    def __init__(self, status: str, message: str) -> None:
        super().__init__(f"{status}: {message}")
        self.status, self.message = status, message


class DmlConformance:
    """The active plugin: options read, cases loaded, the backend built at session start."""

    def __init__(self, config: pytest.Config) -> None:
        from conformance.flags import ExecutionFlags
        from conformance.levels import FeatureLevel
        from conformance.results import baseline as baselines
        from conformance.session import RunOptions, Session

        self.config = config
        self.backend_name: str = config.getoption("dml_backend")
        level = config.getoption("dml_level")
        try:
            self.level = FeatureLevel.parse(level) if level else None
        except ValueError as exc:
            raise pytest.UsageError(f"--dml-level: {exc}") from None
        try:
            self.flags = ExecutionFlags.parse(config.getoption("dml_execution_flags"))
        except ValueError as exc:
            raise pytest.UsageError(f"--dml-execution-flags: {exc}") from None
        try:
            scope = Scope.parse(config.getoption("dml_scope"))
        except ValueError as exc:
            raise pytest.UsageError(str(exc).replace("--scope", "--dml-scope", 1)) from None
        self.strict = bool(config.getoption("dml_strict"))
        baseline = config.getoption("dml_baseline")
        if self.strict and not baseline:
            raise pytest.UsageError("--dml-strict needs --dml-baseline")
        base = config.invocation_params.dir
        patterns = config.getoption("dml_k")
        options = RunOptions(
            backend=self.backend_name, cases=tuple(base / p for p in config.getoption("dml_cases")),
            patterns=tuple(patterns), level=self.level, execution_flags=self.flags,
            baseline=baseline, strict=self.strict, isolate=config.getoption("dml_isolate"),
            timeout_s=config.getoption("dml_timeout"), scope=scope)
        try:
            self.session = Session(options)
        except baselines.BaselineError as exc:
            raise pytest.UsageError(str(exc)) from None
        try:
            # a problem in a case file fails an item of its own; the other cases still run
            self.cases = self.session.select()
        except CaseFileError as exc:
            raise pytest.UsageError(f"dmlconf: {exc}") from None
        self.paths, self.load_errors = self.session.paths, self.session.load_errors
        if not self.cases and not self.load_errors:
            raise pytest.UsageError(
                "dmlconf: no case selected in " + ", ".join(str(p) for p in self.paths)
                + (f" by --dml-k {' '.join(patterns)}" if patterns else ""))
        self.warned: list[tuple[str, str]] = []  # (node id, message) of QUALITY_WARNING items

    @property
    def flags_text(self) -> str:
        """The execution flags as the reports show them: names joined with "|", or NONE."""
        return "|".join(self.flags.names) or "NONE"

    @property
    def integrity_text(self) -> str:
        """Whether the session is tamper-proof, in words (the backend isolated or not)."""
        if self.session.runner is not None and self.session.runner.tamper_proof:
            return ("tamper-proof: the backend runs in a worker process, out of the judge's "
                    "reach")
        return ("NOT tamper-proof: the backend runs in pytest's process, where it could change "
                "its own verdict (--dml-isolate for a tamper-proof session)")

    def pytest_report_header(self) -> str:
        return (f"dmlconf: backend {self.backend_name}, {len(self.cases)} cases from "
                + ", ".join(str(p) for p in self.paths)
                + f"; execution flags: {self.flags_text}")

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when == "call":
            for name, value in report.user_properties:
                if name == WARNING_PROPERTY:
                    self.warned.append((report.nodeid, str(value)))

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        tr = terminalreporter
        tr.section("dmlconf")
        tr.line(self.integrity_text)
        tr.line(f"execution flags: {self.flags_text}")
        tr.line(f"{counted(len(self.warned), 'QUALITY_WARNING case')} (passed: inside the legal "
                "envelope, outside the strict reading)" + (":" if self.warned else ""))
        for nodeid, message in self.warned:
            first = message.splitlines()[0] if message else ""
            tr.line(f"  {nodeid}: {first}")

    def pytest_sessionstart(self) -> None:
        from conformance.backend import BackendLoadError
        from conformance.session import WorkerError

        try:
            self.session.start(one_at_a_time=True)
        except (BackendLoadError, WorkerError) as exc:
            raise pytest.UsageError(f"--dml-backend {self.backend_name}: {exc}") from None

    def pytest_sessionfinish(self) -> None:
        self.session.close()

    @pytest.hookimpl(tryfirst=True)  # before -k / -m deselect the items
    def pytest_collection_modifyitems(self, session: pytest.Session,
                                      items: list[pytest.Item]) -> None:
        collector = CaseCollector.from_parent(session, name=COLLECTOR_NAME,
                                              nodeid=COLLECTOR_NAME)
        items.extend(collector.collect())


class CaseCollector(pytest.Collector):
    """The one collector of the conformance cases."""

    def collect(self) -> Iterator[CaseItem | LoadErrorItem]:
        plugin = self.config.pluginmanager.get_plugin("dmlconf-session")
        assert isinstance(plugin, DmlConformance)
        for n, error in enumerate(plugin.load_errors):
            yield LoadErrorItem.from_parent(self, name=f"load-error/{n + 1}",
                                            nodeid=f"load-error/{n + 1}", error=error)
        for case in plugin.cases:
            yield CaseItem.from_parent(self, name=case.id, nodeid=case.id, case=case,
                                       plugin=plugin)


class CaseItem(pytest.Item):
    """One conformance case."""

    def __init__(self, *, case: Case, plugin: DmlConformance, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.case, self.plugin = case, plugin
        self.extra_keyword_matches.update(case.operators)
        self.extra_keyword_matches.update(case.tags)

    def runtest(self) -> None:
        result = self.plugin.session.run_case(self.case)
        self.user_properties.append(("dmlconf_status", str(result.status)))
        if result.margin is not None:
            self.user_properties.append(("dmlconf_margin", result.margin))
        if result.status == Status.QUALITY_WARNING:
            self.user_properties.append((WARNING_PROPERTY, result.message))
            warnings.warn(DmlQualityWarning(f"QUALITY_WARNING {self.case.id}: {result.message}"),
                          stacklevel=1)
        if result.status == Status.NOT_SUPPORTED:
            pytest.skip(result.message)
        if result.status == Status.XFAIL:
            pytest.xfail(result.message)
        if result.status == Status.XPASS and self.plugin.strict:
            raise CaseFailedError(result.status, result.message)
        if result.status in FAILING:
            if self.case.ambiguous:
                first = result.message.splitlines()[0] if result.message else ""
                pytest.xfail(f"ambiguous region of the spec: {self.case.ambiguous} "
                             f"({result.status}: {first})")
            raise CaseFailedError(result.status, result.message)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException],
                     style: Any = None) -> str:
        if isinstance(excinfo.value, CaseFailedError):
            return (f"{excinfo.value.status} {self.case.id}\n{excinfo.value.message}\n"
                    f"case: {self.case.file}:{self.case.line}\n"
                    f"reproduce: {self.plugin.session.reproduce(self.case)}")
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[Path | str, int | None, str]:
        return self.case.file or self.path, max(self.case.line - 1, 0), self.case.id


class LoadErrorItem(pytest.Item):
    """A case file (or one case in it) that could not be loaded: a failing item, so that the
    session goes on with the other cases and still fails."""

    def __init__(self, *, error: CaseFileError, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.error = error

    def runtest(self) -> None:
        raise CaseFailedError("LOAD ERROR", str(self.error))

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException],
                     style: Any = None) -> str:
        return f"case file problem (its cases are not run): {self.error}"

    def reportinfo(self) -> tuple[str, int | None, str]:
        return self.error.path, max((self.error.line or 1) - 1, 0), f"load error: {self.error}"
