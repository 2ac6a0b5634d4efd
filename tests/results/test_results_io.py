"""The results file's one reader (conformance.results.read, docs/results-format.md): what the
writer writes reads back as it was; a file of another format version, lacking a field every
version-1 document has, or holding a field of the wrong type is refused with one line naming
the file and what is wrong; every command that reads results files reads them through it."""

from __future__ import annotations

import ast
import copy
import json
from pathlib import Path
from typing import Any

import pytest

from conformance import results
from conformance.cli import main
from conformance.levels import FeatureLevel
from conformance.results import (
    FORMAT,
    BaselineSummary,
    Execution,
    LoadError,
    Result,
    ResultsDocument,
    ResultsFileError,
    Shard,
    read,
)
from tests.support import ROOT


def made(tmp_path: Path) -> ResultsDocument:
    """A document as `dmlconf run` makes it: a FAIL with every field of a result set, a PASS,
    an ambiguous TIMEOUT that crashed, one shard of two."""
    found = [
        Result(id="documented/a/fail", status="FAIL", message="OutputTensor: 1 of 4 differ",
               duration_s=0.01, operators=["DEPTH_TO_SPACE1"], data_types=["FLOAT32"],
               feature_level="2_1", tags=["documented"],
               spec=[{"page": "DML_DEPTH_TO_SPACE1_OPERATOR_DESC", "section": "Order",
                      "url": "https://example.com"}],
               info=["a note"], mismatches=[{"tensor": "OutputTensor", "index": [0, 1],
                                             "expected": "9", "got": "18"}],
               grids=[{"tensor": "OutputTensor", "shape": [1, 2], "got": ["1", "2"]}],
               heat_maps=[{"tensor": "OutputTensor", "shape": [1, 2], "scale": "mismatch",
                           "block": [1, 1], "cells": [[0, 1]], "bad": 1, "largest": 1}],
               margin=1.5, diagnosis={"readings": ["other-order"], "text": "the other Order"}),
        Result(id="documented/a/pass", status="PASS", feature_level="1_0"),
        Result(id="generated/b/slow", status="TIMEOUT", feature_level="1_0",
               feature_level_below="5_0", ambiguous="two readings",
               crash={"exit_code": None, "signal": "SIGKILL", "output": "tail"}),
    ]
    return results.document(
        found, backend={"name": "numpy", "class": "backends.X", "capabilities": {}},
        case_set_sha256="ab" * 32, claimed=FeatureLevel.parse("5_1"),
        started_at="2025-01-31T09:12:03+00:00", finished_at="2025-01-31T09:12:04+00:00",
        duration_s=0.5, command="dmlconf run", case_paths=["cases"],
        baseline=BaselineSummary.from_json({"path": "b.yaml", "xpass": [], "stale": []}),
        load_errors=[LoadError.from_json({"file": "cases/x.yaml", "line": 3,
                                          "message": "unknown key"})],
        execution=Execution.from_json({"workers": 2, "isolated": True}), execution_flags=[],
        shard=Shard.from_json({"index": 1, "count": 2, "cases": 3, "of_cases": 6,
                               "full_case_set_sha256": "cd" * 32}))


def written(tmp_path: Path, **extra: Any) -> dict[str, Any]:
    """made()'s document as its JSON, with `extra` fields set."""
    doc = made(tmp_path).to_json()
    doc.update(extra)
    return doc


def write(tmp_path: Path, doc: Any, name: str = "r.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def refused(tmp_path: Path, doc: Any) -> str:
    """The message read() refuses `doc` with, after checking its form: one line, the path
    first, then what is not a results document."""
    path = write(tmp_path, doc)
    with pytest.raises(ResultsFileError) as info:
        read(path)
    message = str(info.value)
    assert "\n" not in message and message.startswith(f"{path}: ")
    return message.removeprefix(f"{path}: ")


NOT_RESULTS = f"not a dmlconf results document ({FORMAT}, docs/results-format.md): "


# -- what is written reads back ------------------------------------------------------------------
def test_a_written_document_reads_back_as_it_was(tmp_path: Path) -> None:
    doc = made(tmp_path)
    path = tmp_path / "deep" / "results.json"
    results.write(doc, path)
    assert read(path).to_json() == doc.to_json() == json.loads(path.read_text(encoding="utf-8"))
    assert read(path) == doc
    assert read(path).results == doc.results


def test_an_xz_compressed_document_reads_and_a_bomb_or_cut_one_is_refused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import lzma

    doc = made(tmp_path)
    results.write(doc, tmp_path / "results.json")
    packed = lzma.compress((tmp_path / "results.json").read_bytes())
    (tmp_path / "results.json.xz").write_bytes(packed)
    assert read(tmp_path / "results.json.xz") == doc
    (tmp_path / "cut.json.xz").write_bytes(packed[: len(packed) // 2])
    with pytest.raises(results.ResultsFileError, match=r"cut\.json\.xz: not a results document"):
        read(tmp_path / "cut.json.xz")
    monkeypatch.setattr("conformance.results.io.MAX_UNPACKED", 100)
    with pytest.raises(results.ResultsFileError, match="unpacks to more than"):
        read(tmp_path / "results.json.xz")


def test_an_older_document_without_the_newer_fields_reads(tmp_path: Path) -> None:
    doc = written(tmp_path)
    for key in ("execution_flags", "diagnoses", "baseline", "complete", "load_errors",
                "execution", "shard"):
        del doc[key]
    for r in doc["results"]:
        for key in ("data_types", "grids", "crash", "margin", "diagnosis"):
            del r[key]
    for counts in (doc["summary"], doc["ambiguous"]):
        del counts["TIMEOUT"], counts["QUALITY_WARNING"]
    assert read(write(tmp_path, doc)).to_json() == doc


def test_fields_the_format_does_not_list_are_kept(tmp_path: Path) -> None:
    doc = written(tmp_path, future={"x": 1})
    doc["results"][0]["later"] = [1, 2]
    back = read(write(tmp_path, doc))
    assert back.extra["future"] == {"x": 1} and back.results[0].extra["later"] == [1, 2]


def test_text_is_read_back_sanitised(tmp_path: Path) -> None:
    doc = written(tmp_path)
    doc["results"][0]["message"] = "bell\x07 and escape\x1b[31m"
    doc["command"] = "dmlconf run\r\n--x"
    back = read(write(tmp_path, doc))
    assert back.results[0].message == "bell\\x07 and escape\\x1b[31m"
    assert back.command == "dmlconf run\n--x"


# -- the format version ----------------------------------------------------------------------------
@pytest.mark.parametrize(("name", "words"), [
    ("dml-conformance-results/2", "format 'dml-conformance-results/2' is a version this suite "
                                  "does not read"),
    ("dml-conformance-results/0.9", "format 'dml-conformance-results/0.9' is a version this "
                                    "suite does not read"),
    ("dml-conformance-journal/1", "format is 'dml-conformance-journal/1'"),
    (1, "format is 1"),
    (None, "format is None"),
])
def test_another_format_or_version_is_refused_by_name(tmp_path: Path, name: Any,
                                                      words: str) -> None:
    assert refused(tmp_path, written(tmp_path, format=name)) == NOT_RESULTS + words


def test_a_document_without_a_format_is_refused(tmp_path: Path) -> None:
    doc = written(tmp_path)
    del doc["format"]
    assert refused(tmp_path, doc) == NOT_RESULTS + "format is missing"


# -- missing fields --------------------------------------------------------------------------------
@pytest.mark.parametrize("key", ["suite_version", "case_set_sha256", "case_paths", "command",
                                 "backend", "feature_level", "platform", "started_at",
                                 "finished_at", "duration_s", "summary", "ambiguous",
                                 "verdict", "results"])
def test_a_missing_field_of_every_version_1_document_is_refused(tmp_path: Path,
                                                                key: str) -> None:
    doc = written(tmp_path)
    del doc[key]
    assert refused(tmp_path, doc) == NOT_RESULTS + f"{key} is missing"


@pytest.mark.parametrize("key", ["id", "status"])
def test_a_result_without_its_id_or_status_is_refused(tmp_path: Path, key: str) -> None:
    doc = written(tmp_path)
    del doc["results"][1][key]
    words = refused(tmp_path, doc)
    assert words.startswith(NOT_RESULTS + f"results[1].{key} is missing")
    assert words.endswith("(case 'documented/a/pass')") == (key == "status")


# -- wrong types -----------------------------------------------------------------------------------
@pytest.mark.parametrize(("key", "value", "words"), [
    ("suite_version", 1, "suite_version is a number, not text"),
    ("case_paths", "cases", "case_paths is text, not a list of text"),
    ("case_paths", ["cases", 2], "case_paths[1] is a number, not text"),
    ("backend", "numpy", "backend is text, not an object"),
    ("duration_s", "0.5", "duration_s is text, not a number"),
    ("duration_s", True, "duration_s is true, not a number"),
    ("summary", [], "summary is a list, not an object of counts"),
    ("summary", {"PASS": -1}, "summary.PASS is a number, not a count (a whole number, 0 or "
                              "more)"),
    ("summary", {"PASS": 1.5}, "summary.PASS is a number, not a count (a whole number, 0 or "
                               "more)"),
    ("ambiguous", {"MAYBE": 1}, "ambiguous counts 'MAYBE', which is no status"),
    ("verdict", {"2_1": True}, "verdict.2_1 is true, not an object"),
    ("results", {}, "results is an object, not a list"),
    ("execution_flags", "NONE", "execution_flags is text, not a list of text"),
    ("complete", "yes", "complete is text, not true or false"),
    ("load_errors", ["cases/x.yaml: bad"], "load_errors[0] is text, not an object"),
    ("shard", [1, 2], "shard is a list, not an object or null"),
])
def test_a_top_level_field_of_the_wrong_type_is_refused(tmp_path: Path, key: str, value: Any,
                                                        words: str) -> None:
    assert refused(tmp_path, written(tmp_path, **{key: value})) == NOT_RESULTS + words


@pytest.mark.parametrize(("key", "value", "words"), [
    ("id", 7, "results[0].id is a number, not text"),
    ("status", "MAYBE", "results[0].status is 'MAYBE', none of PASS, QUALITY_WARNING, FAIL, "
                        "ERROR, TIMEOUT, NOT_SUPPORTED, XFAIL, XPASS (case 'documented/a/fail')"),
    ("status", None, "results[0].status is null, not text (case 'documented/a/fail')"),
    ("margin", "1.5", "results[0].margin is text, not a number or null (case "
                      "'documented/a/fail')"),
    ("tags", "documented", "results[0].tags is text, not a list of text (case "
                           "'documented/a/fail')"),
    ("mismatches", [[0, 1]], "results[0].mismatches[0] is a list, not an object (case "
                             "'documented/a/fail')"),
    ("heat_maps", {"cells": []}, "results[0].heat_maps is an object, not a list of objects "
                                 "(case 'documented/a/fail')"),
    ("crash", "SIGKILL", "results[0].crash is text, not an object or null (case "
                         "'documented/a/fail')"),
    ("feature_level_below", 5, "results[0].feature_level_below is a number, not text or null "
                               "(case 'documented/a/fail')"),
])
def test_a_result_field_of_the_wrong_type_is_refused(tmp_path: Path, key: str, value: Any,
                                                     words: str) -> None:
    doc = written(tmp_path)
    doc["results"][0][key] = value
    assert refused(tmp_path, doc) == NOT_RESULTS + words


def test_a_result_that_is_not_an_object_is_refused(tmp_path: Path) -> None:
    doc = written(tmp_path)
    doc["results"][2] = "generated/b/slow TIMEOUT"
    assert refused(tmp_path, doc) == NOT_RESULTS + "results[2] is text, not an object"


# -- not a results document at all ---------------------------------------------------------------
def test_a_file_that_is_no_results_json_is_refused_in_one_line(tmp_path: Path) -> None:
    assert refused(tmp_path, []) == NOT_RESULTS + "the top level is a list, not an object"
    bad = tmp_path / "bad.json"
    for content, words in ((b"{", "not a results document: not JSON (Expecting property name "
                                  "enclosed in double quotes: line 1 column 2 (char 1))"),
                           (b'{"a": "\xff"}', "not a results document: not UTF-8 text (byte "
                                              "0xff at offset 7)"),
                           (b"[" * 100_000 + b"]" * 100_000,
                            "not a results document: its JSON is nested too deeply to read")):
        bad.write_bytes(content)
        with pytest.raises(ResultsFileError) as info:
            read(bad)
        assert str(info.value) == f"{bad}: {words}"
    with pytest.raises(ResultsFileError, match=r"missing\.json: cannot read the results file: "
                                               r"No such file or directory$"):
        read(tmp_path / "missing.json")


def test_problem_and_result_problem_say_none_for_what_the_writer_makes(tmp_path: Path) -> None:
    doc = written(tmp_path)
    assert results.io.problem(copy.deepcopy(doc)) is None
    assert [results.io.result_problem(r) for r in doc["results"]] == [None] * 3


# -- every reader reads through it ---------------------------------------------------------------
@pytest.mark.parametrize("command", [["report", "{path}", "--junit", "{out}"],
                                     ["compare", "{path}", "{good}"],
                                     ["compare", "{good}", "{path}"],
                                     ["merge", "{path}", "--json", "{out}"]])
def test_report_compare_and_merge_refuse_a_bad_file_alike(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], command: list[str]) -> None:
    good = write(tmp_path, written(tmp_path), "good.json")
    doc = written(tmp_path)
    doc["results"][0]["margin"] = "1.5"
    path = write(tmp_path, doc, "bad.json")
    out = tmp_path / "out"
    argv = [a.format(path=path, good=good, out=out) for a in command]
    assert main(argv) == 2
    assert capsys.readouterr().err == (
        f"dmlconf: error: {path}: {NOT_RESULTS}results[0].margin is text, not a number or "
        "null (case 'documented/a/fail')\n")
    assert not out.exists()


def _imported(paths: list[Path]) -> set[str]:
    imported: set[str] = set()
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                imported.add(node.module)
            elif isinstance(node, ast.Import):
                imported.update(a.name for a in node.names)
    return {m for m in imported if m.split(".")[0] in ("conformance", "backends")}


def test_the_reports_import_nothing_of_the_suite_but_the_results_package() -> None:
    """The reports read the results package and the verdict wording (conformance.present, which
    itself reads the results package and the feature levels) and nothing else of the suite."""
    ours = _imported(list((ROOT / "conformance" / "report").rglob("*.py")))
    assert {m for m in ours if not m.startswith("conformance.report")} == {
        "conformance.results", "conformance.present"}, ours
    # ("conformance": its `from conformance import results`)
    assert _imported([ROOT / "conformance" / "present.py"]) <= {
        "conformance", "conformance.results", "conformance.results.mustpass", "conformance.levels"}


def test_no_other_module_checks_the_results_format() -> None:
    """The readers of results files (report, compare, merge, the DirectML baseline script) call
    results.read: no other module of the suite names the format to check it."""
    modules = [*(ROOT / "conformance").rglob("*.py"), *(ROOT / "backends").rglob("*.py")]
    naming = [str(path.relative_to(ROOT)) for path in modules
              if "dml-conformance-results" in path.read_text(encoding="utf-8")]
    assert naming == ["conformance/results/io.py"]


def test_the_journal_takes_a_result_line_by_the_same_rules(tmp_path: Path) -> None:
    """A journal (--resume) keeps results as the results file does: a line that is no result
    of the format is not taken, so its case runs again."""
    from conformance.session import journal

    doc = written(tmp_path)
    good, wrong_type, unknown = (copy.deepcopy(r) for r in doc["results"])
    wrong_type["margin"] = "1.5"
    unknown["status"] = "MAYBE"
    path = tmp_path / "run.journal"
    path.write_text("\n".join(json.dumps(x) for x in (
        {"format": journal.FORMAT}, good, wrong_type, unknown)) + "\n", encoding="utf-8")
    header, done = journal.read(path)
    assert header == {"format": journal.FORMAT}
    assert done == {good["id"]: Result.from_json(good)}
