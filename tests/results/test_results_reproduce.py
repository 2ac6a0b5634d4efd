"""The reproduce command is made in one place (conformance/results/reproduce.py): `dmlconf
explore`, `dmlconf show`, the reports of `dmlconf run` and the pytest plugin print the same
command for the same case and options, --level and --execution-flags included, and it reruns
the case into its own results file, never the full run's."""

from __future__ import annotations

import html
import json
import shlex
import textwrap
from importlib.metadata import entry_points
from pathlib import Path

import pytest

from conformance.cli import main
from conformance.report import common
from conformance.results import ResultsDocument
from conformance.results.reproduce import repro_json
from conformance.session import DEFAULT_JSON, chosen_level, reproduce_command
from tests.support import BELOW_5_1_CASE, DOCUMENTED, SWAPPED, dmlconf_in

pytest_plugins = ["pytester"]

FLAGS = "DISABLE_META_COMMANDS|ALLOW_HALF_PRECISION_COMPUTATION"
PLUGIN = ([] if any(ep.name == "dmlconf" for ep in entry_points(group="pytest11"))
          else ["-p", "conformance.pytest_plugin"])

pytestmark = pytest.mark.usefixtures("hypothesis_home")


def shown(capsys: pytest.CaptureFixture[str], case_id: str, *options: str) -> str:
    """The command `dmlconf show` prints for the case."""
    assert main(["show", case_id, *options]) == 0
    last = capsys.readouterr().out.splitlines()[-1]
    assert last.startswith("# reproduce: ")
    return last.removeprefix("# reproduce: ")


def reported(tmp_path: Path, case_id: str, *options: str) -> tuple[int, dict, str]:
    """Run the case: (exit status, results document, the command the report shows)."""
    page = tmp_path / "report.html"
    code, doc = dmlconf_in(tmp_path)("-k", case_id, *options, "--html", str(page))
    typed = ResultsDocument.from_json(doc)
    command = common.repro_command(typed, case_id)
    assert command == common.repro_command(typed, typed.results[0])
    if doc["results"][0]["status"] != "PASS":  # the HTML report has a row for it
        assert f'<code class="repro">{html.escape(command)}</code>' in page.read_text("utf-8")
    return code, doc, command


@pytest.mark.integration  # every face, a run each
def test_every_face_prints_the_same_command(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], pytester: pytest.Pytester) -> None:
    out = tmp_path / "regressions"
    assert main(["explore", "--backend", SWAPPED, "--family", "equivalence", "--max-examples",
                 "100", "--seed", "3", "--out", str(out), "--level", "5_1",
                 "--execution-flags", FLAGS]) == 1
    printed = capsys.readouterr().out.splitlines()
    (path,) = out.iterdir()
    case_id = f"regressions/equivalence/{path.stem.split('-', 1)[1]}"
    expected = shlex.join(["dmlconf", "run", "--json", repro_json(case_id), "--cases", str(path),
                           "-k", case_id,
                           "--backend", SWAPPED, "--level", "5_1", "--execution-flags",
                           "ALLOW_HALF_PRECISION_COMPUTATION,DISABLE_META_COMMANDS"])
    # the explorer: in the regression's header and in its summary
    assert f"# Reproduce: {expected}" in path.read_text(encoding="utf-8").splitlines()
    assert f"    reproduce: {expected}" in printed
    # dmlconf show, with the same options
    options = ["--cases", str(path), "--backend", SWAPPED, "--level", "5_1",
               "--execution-flags", FLAGS]
    assert shown(capsys, case_id, *options) == expected
    # the report of the run with those options (the level is below the backend's highest)
    code, doc, command = reported(tmp_path, case_id, *options)
    assert code == 1 and doc["results"][0]["status"] == "FAIL"
    assert command == expected
    # the pytest plugin
    result = pytester.runpytest(*PLUGIN, "-p", "no:cacheprovider", "--rootdir",
                                str(pytester.path), "--dml-backend", SWAPPED, "--dml-cases",
                                str(path), "--dml-level", "5_1", "--dml-execution-flags", FLAGS)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([f"reproduce: {expected}"])
    # and the command reruns the case as the run did
    argv = shlex.split(expected)[1:]
    rerun = tmp_path / "rerun.json"
    assert main([*argv, "-q", "--json", str(rerun)]) == 1
    again = json.loads(rerun.read_text(encoding="utf-8"))
    assert again["feature_level"] == "5_1" and again["execution_flags"] == doc["execution_flags"]
    assert [r["status"] for r in again["results"]] == ["FAIL"]


def test_without_options_and_for_a_case_that_holds_below_a_level(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """No level chosen: none in the command, except for a case whose expectation holds only
    below some level, which the backend's default level would never run: there show and the
    report both claim the case's own level, and the command runs it."""
    cases = tmp_path / "cases.yaml"
    cases.write_text("cases:\n" + BELOW_5_1_CASE + textwrap.indent(textwrap.dedent("""\
          - id: t/identity
            operator: DEPTH_TO_SPACE
            feature_level: "1_0"
            spec: {page: DML_DEPTH_TO_SPACE_OPERATOR_DESC, section: BlockSize}
            attributes: {BlockSize: 1}
            tensors:
              InputTensor: {DataType: FLOAT32, Sizes: [1, 1, 1, 2]}
              OutputTensor: {DataType: FLOAT32, Sizes: [1, 1, 1, 2]}
            inputs: {InputTensor: {values: [1, 2]}}
            expected: {OutputTensor: {values: [1, 2]}}
    """), "  "), encoding="utf-8")
    plain = ["--cases", str(cases), "--backend", "numpy"]
    below = shown(capsys, "t/resample-3d", *plain)
    assert below.endswith("-k t/resample-3d --backend numpy --level 2_0")
    code, doc, command = reported(tmp_path, "t/resample-3d", *plain)
    assert doc["results"][0]["status"] == "NOT_SUPPORTED" and command == below
    code, doc, command = reported(tmp_path, "t/resample-3d", *shlex.split(below)[2:])
    assert code == 0 and doc["results"][0]["status"] == "PASS"
    identity = shown(capsys, "t/identity", *plain)
    assert identity == shlex.join(["dmlconf", "run", "--json", "reports/repro-t-identity.json",
                                   "--cases", str(cases), "-k", "t/identity", "--backend",
                                   "numpy"])
    # a level equal to the backend's highest is its default: the report cannot tell it was
    # chosen, and the command without it reruns the same
    code, doc, command = reported(tmp_path, "t/identity", *plain, "--level", "6_4")
    assert code == 0 and command == identity


def test_the_command_writes_its_own_results_file(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Run as printed, in the folder of a full run, the command writes reports/repro-ID.json
    and leaves the full run's reports/results.json as it was (issue 15)."""
    case_id = "documented/depth_to_space1/example-1-depth-column-row"
    command = shown(capsys, case_id, "--cases", str(DOCUMENTED), "--backend", SWAPPED)
    target = shlex.split(command)[shlex.split(command).index("--json") + 1]
    assert target == repro_json(case_id) == (
        "reports/repro-documented-depth_to_space1-example-1-depth-column-row.json")
    assert Path(target) != Path(DEFAULT_JSON) and Path(target).parent == Path(DEFAULT_JSON).parent
    monkeypatch.chdir(tmp_path)
    full = tmp_path / DEFAULT_JSON
    full.parent.mkdir()
    full.write_text('{"the full run": "untouched"}', encoding="utf-8")
    assert main([*shlex.split(command)[1:], "-q"]) == 1
    assert full.read_text(encoding="utf-8") == '{"the full run": "untouched"}'
    doc = json.loads((tmp_path / target).read_text(encoding="utf-8"))
    assert [(r["id"], r["status"]) for r in doc["results"]] == [(case_id, "FAIL")]
    # every id gives a name of safe characters, never the full run's file
    for odd in ("a b/c", "../../results", "x;rm -rf", "résumé", "results"):
        name = repro_json(odd)
        assert name != DEFAULT_JSON and name.startswith("reports/repro-")
        assert "/" not in name.removeprefix("reports/") and " " not in name


def test_the_level_a_document_chose() -> None:
    doc = {"feature_level": "5_1", "backend": {"capabilities": {"feature_level": "6_4"}}}
    typed = ResultsDocument.from_json
    assert chosen_level(typed(doc)) == "5_1"
    assert chosen_level(typed({**doc, "feature_level": "6_4"})) is None
    assert chosen_level(typed({"feature_level": "5_1"})) is None  # the backend's highest unknown
    assert chosen_level(typed({**doc, "backend": "junk"})) is None
    assert reproduce_command("a/b", ["x y"], "numpy", level="5_1",
                             execution_flags=["DISABLE_META_COMMANDS"]) == (
        "dmlconf run --json reports/repro-a-b.json --cases 'x y' -k a/b --backend numpy "
        "--level 5_1 "
        "--execution-flags DISABLE_META_COMMANDS")
    # a chosen level stands even for a case that holds below another one (it reproduces the
    # NOT_SUPPORTED that run gave)
    assert reproduce_command("a/b", ["c"], "numpy", level="6_2", case_level="2_0",
                             case_level_below="5_1").endswith("--level 6_2")
