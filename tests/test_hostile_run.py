"""A run handed hostile case files: each problem is named (file and line) in the results
document and the reports, the other files' cases run, and the run says it is incomplete; a
case too large for the memory cap is refused before anything is allocated."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from backends.numpy_reference import NumpyReferenceBackend
from conformance import report, runner
from conformance.casefile import load_text
from conformance.cli import main, parse_size

resource = pytest.importorskip("resource")  # POSIX: the test measures the memory used

ROOT = Path(__file__).resolve().parent.parent
DOCUMENTED = ROOT / "cases" / "documented"

HUGE = """
cases:
  - id: hostile/huge
    feature_level: "2_1"
    spec: {page: DML_DEPTH_TO_SPACE1_OPERATOR_DESC}
    operator: DEPTH_TO_SPACE1
    attributes: {BlockSize: 2, Order: DEPTH_COLUMN_ROW}
    tensors:
      InputTensor: {DataType: UINT8, Sizes: [1, 4, 500000, 500000]}
      OutputTensor: {DataType: UINT8, Sizes: [1, 1, 1000000, 1000000]}
    inputs:
      InputTensor: {random: {seed: 1, distribution: bits}, sha256: "%s"}
    expected:
      OutputTensor: reference
""" % ("0" * 64)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """Good files, a file that is not YAML, an alias bomb, a Python tag, and a file with one
    bad case between good ones."""
    cases = tmp_path / "cases"
    shutil.copytree(DOCUMENTED, cases / "good")
    (cases / "bad").mkdir()
    (cases / "bad" / "not-yaml.yaml").write_text("cases: [unclosed\n")
    bomb = ['a0: &a0 ["x", "x", "x", "x", "x", "x", "x", "x", "x", "x"]']
    bomb += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 9)]
    (cases / "bad" / "bomb.yaml").write_text("\n".join(bomb) + "\ncases: *a8\n")
    (cases / "bad" / "python.yaml").write_text(
        "cases: !!python/object/apply:os.system ['touch /tmp/dmlconf-pwned']\n")
    text = (DOCUMENTED / "space_to_depth1.yaml").read_text()  # two cases
    broken = text.replace("BlockSize: 2", "BlockSize: .nan", 1)
    assert broken != text
    (cases / "bad" / "one-bad-case.yaml").write_text(
        broken.replace("documented/", "copy/"))
    return cases


def test_bad_files_are_listed_and_the_rest_runs(folder: Path, tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    out, html, junit = tmp_path / "r.json", tmp_path / "r.html", tmp_path / "r.xml"
    code = main(["run", "-q", "--cases", str(folder), "--json", str(out), "--html", str(html),
                 "--junit", str(junit)])
    assert code == 1  # every case that ran passed, but the run is incomplete
    doc = json.loads(out.read_text())
    assert doc["complete"] is False and doc["summary"]["PASS"] == len(doc["results"])
    assert {r["id"] for r in doc["results"]} >= {"documented/depth_to_space/example"}
    problems = {Path(e["file"]).name: e for e in doc["load_errors"]}
    assert set(problems) == {"not-yaml.yaml", "bomb.yaml", "python.yaml", "one-bad-case.yaml"}
    assert problems["not-yaml.yaml"]["line"] == 2
    assert "not valid YAML" in problems["not-yaml.yaml"]["message"]
    assert "alias" in problems["bomb.yaml"]["message"]
    assert "!!python/object/apply:os.system is not allowed" in problems["python.yaml"]["message"]
    assert not Path("/tmp/dmlconf-pwned").exists()
    # one case of the file is bad; the file's good cases ran
    assert "BlockSize" in problems["one-bad-case.yaml"]["message"]
    copies = [r for r in doc["results"] if r["id"].startswith("copy/")]
    assert [(r["id"], r["status"]) for r in copies] == [
        ("copy/space_to_depth1/example-2-column-row-depth", "PASS")]
    captured = capsys.readouterr()
    assert "INCOMPLETE: 4 case file problem(s)" in captured.out
    assert captured.err.count("case file problem (its cases are not run)") == 4
    page = html.read_text()
    assert "INCOMPLETE" in page and "bomb.yaml" in page
    assert "not-yaml.yaml" in junit.read_text()
    assert report.load(out)["load_errors"] == doc["load_errors"]


def test_list_names_the_problems_and_lists_the_rest(folder: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list", "--cases", str(folder)]) == 1
    captured = capsys.readouterr()
    assert "documented/depth_to_space/example" in captured.out
    assert "4 case file problem(s)" in captured.err


def test_a_huge_case_is_refused_before_any_allocation(tmp_path: Path) -> None:
    case, = load_text(HUGE, "huge.yaml")
    assert runner.case_bytes(case) == 2 * 10 ** 12
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    r = runner.run_case(case, NumpyReferenceBackend())
    assert r.status == "ERROR"
    assert r.message.startswith("the case cannot run: its buffers need 2,000,000,000,000 bytes")
    assert "over the memory cap" in r.message and "refused before allocating anything" in r.message
    assert "(huge.yaml:3)" in r.message
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 50_000  # KiB


def test_the_memory_cap_is_configurable(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    assert main(["run", "-q", "--cases", str(DOCUMENTED), "--json", str(out),
                 "-k", "depth_to_space/example", "--memory-cap", "1000"]) == 1
    doc = json.loads(out.read_text())
    r, = doc["results"]
    assert r["status"] == "ERROR" and "over the memory cap of 1,000 bytes" in r["message"]
    assert doc["execution"]["memory_cap_bytes"] == 1000
    assert main(["run", "-q", "--cases", str(DOCUMENTED), "--json", str(out),
                 "-k", "depth_to_space/example", "--memory-cap", "1M"]) == 0


def test_parse_size() -> None:
    assert parse_size("512") == 512 and parse_size("1k") == 1024
    assert parse_size("2G") == parse_size("2GiB") == parse_size("2 gb") == 2 << 30
    assert parse_size("1.5M") == 3 << 19
    for bad in ("", "two", "1X", "-1G"):
        with pytest.raises(ValueError, match="give a size such as 512M"):
            parse_size(bad)


@pytest.mark.parametrize("args, message", [
    (["--workers", "0"], "--workers must be 1 or more"),
    (["--timeout", "-1"], "--timeout must be 0 (none) or more seconds"),
    (["--shard", "3/2"], "give K/N with 1 <= K <= N"),
    (["--memory-cap", "lots"], "give a size such as 512M"),
    (["--timeout", "5", "--no-isolate"], "--timeout needs isolation"),
])
def test_execution_usage_errors(args: list[str], message: str, tmp_path: Path,
                                capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "-q", "--cases", str(DOCUMENTED), "--json", str(tmp_path / "r.json"),
                 *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("dmlconf: error: ") and message in err
    assert not (tmp_path / "r.json").exists()

