"""The pytest plugin (conformance/pytest_plugin.py): cases as items, statuses as outcomes."""

from __future__ import annotations

import importlib.util
from importlib.metadata import entry_points

import pytest

from conformance.casefile import load_cases
from tests.support import DOCUMENTED, HOSTILE, SWAPPED

pytest_plugins = ["pytester"]

#: How many documented cases there are (the reference passes each).
DOCUMENTED_COUNT = len(load_cases([DOCUMENTED]))
ORDER_CASES = [f"documented/{op}/example-{n}" for op in ("depth_to_space1", "space_to_depth1")
               for n in ("1-depth-column-row", "2-column-row-depth")]
# The plugin loads through its pytest11 entry point once the package is installed; name it
# with -p only where it is not (a -p of an already loaded plugin is an error).
PLUGIN = ([] if any(ep.name == "dmlconf" for ep in entry_points(group="pytest11"))
          else ["-p", "conformance.pytest_plugin"])
HAS_XDIST = importlib.util.find_spec("xdist") is not None


def run(pytester: pytest.Pytester, *args: str, cases: str = str(DOCUMENTED)) -> pytest.RunResult:
    # --rootdir: a path given as an option's value (--dml-cases PATH) would otherwise move
    # pytest's rootdir to a common ancestor, and the ids would be shown relative to it
    return pytester.runpytest(*PLUGIN, "-p", "no:cacheprovider", "--rootdir", str(pytester.path),
                              "--dml-cases", cases, *args)


def test_inactive_without_backend(pytester: pytest.Pytester) -> None:
    result = run(pytester)
    result.assert_outcomes()
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED


def test_items_are_the_case_ids(pytester: pytest.Pytester) -> None:
    result = run(pytester, "--dml-backend", "numpy", "--collect-only", "-q",
                 "--dml-k", "depth_to_space1")
    ids = [line for line in result.outlines if line.startswith("documented/")]
    assert ids == [
        "documented/depth_to_space1/example-1-depth-column-row",
        "documented/depth_to_space1/example-2-column-row-depth",
    ]


def test_numpy_passes_every_documented_case(pytester: pytest.Pytester) -> None:
    result = run(pytester, "--dml-backend", "numpy")
    result.assert_outcomes(passed=DOCUMENTED_COUNT)
    assert result.ret == pytest.ExitCode.OK


def test_broken_backend_fails_the_order_examples(pytester: pytest.Pytester) -> None:
    result = run(pytester, "--dml-backend", SWAPPED, "-rf")
    result.assert_outcomes(passed=DOCUMENTED_COUNT - 4, failed=4)
    for case_id in ORDER_CASES:
        result.stdout.fnmatch_lines([f"FAILED {case_id}*"])
    # the result's message and the command that reproduces it, no traceback
    result.stdout.fnmatch_lines(["FAIL documented/depth_to_space1/example-1-depth-column-row",
                                 "OutputTensor: 36 of 48 elements differ*",
                                 "reproduce: dmlconf run --json reports/repro-*.json --cases *"])
    result.stdout.no_fnmatch_line("*Traceback*")
    result.stdout.no_fnmatch_line("*runtest*")


def test_not_supported_is_skipped_with_reason(pytester: pytest.Pytester) -> None:
    result = run(pytester, "--dml-backend", "numpy", "--dml-level", "2_0", "-rs")
    result.assert_outcomes(passed=2, skipped=DOCUMENTED_COUNT - 2)
    result.stdout.fnmatch_lines(["SKIPPED [[]16[]] *needs feature level 2_1*"])


def test_baseline_failures_are_xfail(pytester: pytest.Pytester) -> None:
    baseline = pytester.path / "baseline.yaml"
    baseline.write_text("- cases: documented/depth_to_space1/*\n  status: FAIL\n"
                        "  reason: orders swapped\n")
    result = run(pytester, "--dml-backend", SWAPPED, "--dml-baseline", str(baseline), "-rx")
    result.assert_outcomes(passed=DOCUMENTED_COUNT - 4, failed=2, xfailed=2)
    result.stdout.fnmatch_lines(["XFAIL documented/depth_to_space1/* - *orders swapped*"])


def test_ambiguous_failures_are_xfail(pytester: pytest.Pytester) -> None:
    text = (DOCUMENTED / "depth_to_space1.yaml").read_text()
    marker = "  - id: documented/depth_to_space1/example-1-depth-column-row\n"
    assert marker in text
    case_file = pytester.path / "d2s1.yaml"
    case_file.write_text(text.replace(marker, marker + "    ambiguous: a test reading\n"))
    result = run(pytester, "--dml-backend", SWAPPED, "-rx", cases=str(case_file))
    result.assert_outcomes(failed=1, xfailed=1)
    result.stdout.fnmatch_lines(["*ambiguous region of the spec: a test reading*"])


def test_strict_fails_a_case_the_baseline_expects_to_fail_that_passes(
        pytester: pytest.Pytester) -> None:
    baseline = pytester.path / "baseline.yaml"
    baseline.write_text("- cases: documented/strides/2d-row-major\n  status: FAIL\n"
                        "  reason: thought broken\n")
    result = run(pytester, "--dml-backend", "numpy", "--dml-baseline", str(baseline))
    result.assert_outcomes(passed=DOCUMENTED_COUNT)
    result = run(pytester, "--dml-backend", "numpy", "--dml-baseline", str(baseline),
                 "--dml-strict")
    result.assert_outcomes(passed=DOCUMENTED_COUNT - 1, failed=1)
    result.stdout.fnmatch_lines(["*XPASS documented/strides/2d-row-major*",
                                 "*passed, but the baseline expects FAIL (thought broken*"])
    result = run(pytester, "--dml-backend", "numpy", "--dml-strict")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--dml-strict needs --dml-baseline*"])


def test_a_bad_case_file_fails_an_item_and_the_other_cases_run(
        pytester: pytest.Pytester) -> None:
    cases = pytester.path / "cases"
    cases.mkdir()
    for name in ("depth_to_space1.yaml", "strides.yaml"):
        (cases / name).write_text((DOCUMENTED / name).read_text())
    (cases / "broken.yaml").write_text("cases: [unclosed\n")
    result = run(pytester, "--dml-backend", "numpy", cases=str(cases))
    result.assert_outcomes(passed=9, failed=1)
    result.stdout.fnmatch_lines(["*case file problem (its cases are not run): *broken.yaml:2: "
                                 "not valid YAML*"])


def test_a_native_backend_runs_isolated_and_a_crash_fails_one_item(
        pytester: pytest.Pytester) -> None:
    hostile = str(HOSTILE)

    def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
        # in a subprocess: an in-process pytester run re-imports multiprocessing's modules,
        # which the spawning of worker processes does not survive
        return pytester.runpytest_subprocess(*PLUGIN, "-p", "no:cacheprovider", "--rootdir",
                                             str(pytester.path), "--dml-cases", str(DOCUMENTED),
                                             *args)

    result = run(pytester, "--dml-backend", f"{hostile}:SegfaultBackend")
    result.assert_outcomes(passed=DOCUMENTED_COUNT - 2, failed=2)
    result.stdout.fnmatch_lines(["ERROR documented/depth_to_space/example",
                                 "the backend crashed: its worker process was killed by "
                                 "SIGSEGV (signal 11)*"])
    result = run(pytester, "--dml-backend", f"{hostile}:HangBackend", "--dml-timeout", "1",
                 "--dml-k", "documented/depth_to_space/", "--dml-k", "strides/2d")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(["TIMEOUT documented/depth_to_space/example"])
    # the reference in a worker on request: tamper-proof, the summary says
    result = run(pytester, "--dml-backend", "numpy", "--dml-isolate")
    result.assert_outcomes(passed=DOCUMENTED_COUNT)
    result.stdout.fnmatch_lines(["*dmlconf*", "tamper-proof: the backend runs in a worker "
                                 "process, out of the judge's reach"])


def test_usage_errors(pytester: pytest.Pytester) -> None:
    result = run(pytester, "--dml-backend", "no-such-backend")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--dml-backend no-such-backend*"])
    result = run(pytester, "--dml-backend", "numpy", "--dml-k", "no-such-case")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*no case selected*"])


@pytest.mark.skipif(not HAS_XDIST, reason="pytest-xdist is not installed")
def test_xdist_workers_collect_the_same_items(pytester: pytest.Pytester) -> None:
    result = run(pytester, "--dml-backend", SWAPPED, "-n", "2")
    result.assert_outcomes(passed=DOCUMENTED_COUNT - 4, failed=4)


@pytest.mark.parametrize("ambiguous", [False, True])
def test_a_timeout_fails_the_item_like_an_error(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, ambiguous: bool) -> None:
    from conformance.results import Result

    # the module whose run_case the plugin's CaseRunner calls. `from conformance import
    # workers` could give a stale attribute of the package, left by an earlier in-process
    # pytester run that removed the module from sys.modules when it restored its snapshot
    workers = importlib.import_module("conformance.session.workers")

    def timed_out(case: object, backend: object, *args: object, **kwargs: object) -> Result:
        return Result(id=case.id, status="TIMEOUT",  # type: ignore[attr-defined]
                      message="ran past the per-case timeout of 2 s")

    monkeypatch.setattr(workers, "run_case", timed_out)  # pytester runs in this process
    text = (DOCUMENTED / "depth_to_space1.yaml").read_text()
    marker = "  - id: documented/depth_to_space1/example-1-depth-column-row\n"
    case_file = pytester.path / "d2s1.yaml"
    case_file.write_text(text.replace(marker, marker + "    ambiguous: a test reading\n")
                         if ambiguous else text)
    result = run(pytester, "--dml-backend", "numpy", "-rfx", cases=str(case_file))
    if ambiguous:
        result.assert_outcomes(failed=1, xfailed=1)
        result.stdout.fnmatch_lines(["*ambiguous region of the spec: a test reading "
                                     "(TIMEOUT: ran past the per-case timeout of 2 s)*"])
    else:
        result.assert_outcomes(failed=2)
        result.stdout.fnmatch_lines(["TIMEOUT documented/depth_to_space1/example-1-*",
                                     "ran past the per-case timeout of 2 s",
                                     "reproduce: dmlconf run --json reports/repro-*.json "
                                     "--cases *"])


WARNED = "OutputTensor: 2 of 48 elements outside the strict reading, inside the legal envelope"


@pytest.fixture
def warned_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every case run by the plugin's CaseRunner (in this process) ends QUALITY_WARNING."""
    from conformance.results import Result

    workers = importlib.import_module("conformance.session.workers")  # see the TIMEOUT test

    def warned(case: object, backend: object, *args: object, **kwargs: object) -> Result:
        return Result(id=case.id, status="QUALITY_WARNING",  # type: ignore[attr-defined]
                      message=WARNED, margin=0.75)

    monkeypatch.setattr(workers, "run_case", warned)


@pytest.mark.usefixtures("warned_runs")
def test_a_quality_warning_passes_with_a_pytest_warning_and_user_properties(
        pytester: pytest.Pytester) -> None:
    junit = pytester.path / "junit.xml"
    result = run(pytester, "--dml-backend", "numpy", "--dml-k", "depth_to_space1",
                 f"--junitxml={junit}")
    result.assert_outcomes(passed=2)
    assert result.ret == pytest.ExitCode.OK
    # one warning per warned item (pytest may add its own, e.g. of its configuration)
    assert sum("DmlQualityWarning: QUALITY_WARNING " in line for line in result.outlines) == 2
    result.stdout.fnmatch_lines([
        "*DmlQualityWarning: QUALITY_WARNING documented/depth_to_space1/example-1-depth-column-"
        f"row: {WARNED}"])
    # the plugin's summary lists the warned cases and the flags
    result.stdout.fnmatch_lines([
        "*dmlconf*", "execution flags: NONE",
        "2 QUALITY_WARNING cases (passed: inside the legal envelope, outside the strict "
        "reading):",
        f"  documented/depth_to_space1/example-1-depth-column-row: {WARNED}",
        f"  documented/depth_to_space1/example-2-column-row-depth: {WARNED}"])
    import xml.etree.ElementTree as ET

    case = ET.parse(junit).getroot().find(".//testcase")
    props = {p.get("name"): p.get("value") for p in case.iter("property")}
    assert props == {"dmlconf_status": "QUALITY_WARNING", "dmlconf_margin": "0.75",
                     "dmlconf_quality_warning": WARNED}


@pytest.mark.usefixtures("warned_runs")
def test_warnings_as_errors_fail_the_warned_items(pytester: pytest.Pytester) -> None:
    result = run(pytester, "--dml-backend", "numpy", "--dml-k", "depth_to_space1",
                 "-W", "error::conformance.pytest_plugin.DmlQualityWarning")
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(["*DmlQualityWarning: QUALITY_WARNING documented/*"])


def test_no_warning_no_summary_entries(pytester: pytest.Pytester) -> None:
    result = run(pytester, "--dml-backend", "numpy", "--dml-k", "depth_to_space1")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["dmlconf: backend numpy, 2 cases from *; execution flags: NONE",
                                 "*dmlconf*",
                                 "NOT tamper-proof: the backend runs in pytest's process, where "
                                 "it could change its own verdict (--dml-isolate for a "
                                 "tamper-proof session)",
                                 "execution flags: NONE",
                                 "0 QUALITY_WARNING cases (passed: inside the legal envelope, "
                                 "outside the strict reading)"])
    result.stdout.no_fnmatch_line("*DmlQualityWarning*")


NEEDS_HALF = '''
from backends.numpy_reference import NumpyReferenceBackend
from conformance.flags import ExecutionFlags


class NeedsHalfBackend(NumpyReferenceBackend):
    """Runs only when compiled with ALLOW_HALF_PRECISION_COMPUTATION."""

    name = "needs-half"

    def execute(self, call, bindings):
        if ExecutionFlags.ALLOW_HALF_PRECISION_COMPUTATION not in self.execution_flags:
            raise RuntimeError(f"compiled with {self.execution_flags!r}")
        super().execute(call, bindings)
'''


@pytest.mark.parametrize("isolate", [False, True])
def test_execution_flags_reach_the_backend(pytester: pytest.Pytester, isolate: bool) -> None:
    backend = pytester.path / "needs_half.py"
    backend.write_text(NEEDS_HALF)
    args = ["--dml-backend", f"{backend}:NeedsHalfBackend", "--dml-k", "depth_to_space1",
            *(["--dml-isolate"] if isolate else [])]
    # isolated: in a subprocess (see test_a_native_backend_runs_isolated...)
    runner = pytester.runpytest_subprocess if isolate else pytester.runpytest
    base = [*PLUGIN, "-p", "no:cacheprovider", "--rootdir", str(pytester.path), "--dml-cases",
            str(DOCUMENTED)]
    result = runner(*base, *args)
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(["*the backend raised RuntimeError: compiled with "
                                 "<ExecutionFlags.NONE: 0>*"])
    result = runner(*base, *args, "--dml-execution-flags", "allow_half_precision_computation")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines([
        "dmlconf: backend *; execution flags: ALLOW_HALF_PRECISION_COMPUTATION",
        "*dmlconf*", "execution flags: ALLOW_HALF_PRECISION_COMPUTATION"])


def test_execution_flags_in_the_reproduce_command_and_usage_errors(
        pytester: pytest.Pytester) -> None:
    result = run(pytester, "--dml-backend", SWAPPED, "--dml-k", "depth_to_space1/example-1",
                 "--dml-execution-flags", "DISABLE_META_COMMANDS|ALLOW_HALF_PRECISION_COMPUTATION")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["reproduce: dmlconf run --json reports/repro-*.json --cases * "
                                 "--execution-flags "
                                 "ALLOW_HALF_PRECISION_COMPUTATION,DISABLE_META_COMMANDS"])
    result = run(pytester, "--dml-backend", "numpy", "--dml-execution-flags", "BOGUS")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--dml-execution-flags: unknown execution flag 'BOGUS'*"])
    result = run(pytester, "--dml-backend", "numpy", "--dml-level", "5.1")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--dml-level: unknown feature level '5.1': give it as 5_1, "
                                 "0x5100 or DML_FEATURE_LEVEL_5_1*"])


def test_a_scope_skips_the_cases_it_does_not_cover(pytester: pytest.Pytester) -> None:
    result = run(pytester, "--dml-backend", "numpy", "--dml-scope", "DEPTH_TO_SPACE1",
                 "-rs", cases=str(DOCUMENTED / "depth_to_space1.yaml"))
    result.assert_outcomes(passed=2)
    result = run(pytester, "--dml-backend", "numpy", "--dml-scope", "RESAMPLE1", "-rs",
                 cases=str(DOCUMENTED / "depth_to_space1.yaml"))
    result.assert_outcomes(skipped=2)
    result.stdout.fnmatch_lines(["*not covered: outside the claimed scope (RESAMPLE1)*"])
    result = run(pytester, "--dml-backend", "numpy", "--dml-scope", "RESAMPEL1")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--dml-scope: 'RESAMPEL1' is no operator: did you mean*"])
