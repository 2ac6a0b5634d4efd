"""conformance.report: JUnit XML and the Markdown summary from a results document, and
`dmlconf report` / `dmlconf run --junit --markdown` end to end."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from conformance import present, report
from conformance.cli import main
from conformance.report import common
from conformance.results import NOT_RECOGNISED, ResultsDocument, Verdict, execution_of
from tests.support import DOCUMENTED, SWAPPED, Dmlconf
from tests.support.documents import (
    CRASH,
    EVIL,
    PAYLOADS,
    document,
    full_document,
    hostile_document,
    mixed_document,
    narrow_document,
    result,
    typed,
)

NASTY_ID = 'weird/<script>alert("x")</script>/a&b \'q\' ]]> \x01end'
NASTY_MESSAGE = 'OutputTensor: <script>&amp; "quoted" \'single\' ]]> bell\x07 | pipe\nsecond line'


@pytest.fixture
def doc() -> dict:
    return document([
        result("documented/depth_to_space1/ok", "PASS", info=["OutputTensor: wrote padding"]),
        result("documented/depth_to_space1/bad", "FAIL", "OutputTensor: 1 of 4 elements differ",
               mismatches=[{"tensor": "OutputTensor", "index": [0, 1], "expected": "9",
                            "got": "18"}]),
        result(NASTY_ID, "FAIL", NASTY_MESSAGE),
        result("documented/resample1/boom", "ERROR", "the backend raised RuntimeError: x"),
        result("documented/resample1/strided", "NOT_SUPPORTED",
               "the backend declares no support for strided tensors"),
        result("documented/resample1/unclear", "FAIL", "differs", ambiguous="two readings"),
    ])


def parse(text: str) -> ET.Element:
    return ET.fromstring(text.encode("utf-8"))


def suite_counts(root: ET.Element) -> dict[str, int]:
    suite = root.find("testsuite")
    assert suite is not None
    return {k: int(suite.get(k)) for k in ("tests", "failures", "errors", "skipped")}


def test_junit_counts_equal_the_summary(doc: dict) -> None:
    root = parse(report.render_junit(typed(doc)))
    s, amb = doc["summary"], doc["ambiguous"]
    assert suite_counts(root) == {
        "tests": len(doc["results"]), "failures": s["FAIL"] - amb["FAIL"],
        "errors": s["ERROR"] - amb["ERROR"],
        "skipped": s["NOT_SUPPORTED"] + amb["FAIL"] + amb["ERROR"]}
    cases = root.findall("testsuite/testcase")
    assert len(cases) == len(doc["results"])
    assert len(root.findall("testsuite/testcase/failure")) == suite_counts(root)["failures"]
    assert len(root.findall("testsuite/testcase/error")) == 1
    props = {p.get("name"): p.get("value")
             for p in root.findall("testsuite/properties/property")}
    assert props["suite_version"] == "0.1.0"
    assert props["case_set_sha256"] == "ab" * 32
    assert props["backend"] == "x|y"
    assert props["feature_level"] == "2_1"
    assert props["verdict.2_1"] == "NOT conformant"


def test_junit_case_mapping(doc: dict) -> None:
    root = parse(report.render_junit(typed(doc)))
    by_name = {c.get("name"): c for c in root.findall("testsuite/testcase")}
    bad = by_name["bad"]
    assert bad.get("classname") == "documented.depth_to_space1"
    assert float(bad.get("time")) == pytest.approx(0.001)
    failure = bad.find("failure")
    assert failure.get("message") == "OutputTensor: 1 of 4 elements differ"
    assert "OutputTensor [0, 1]: expected 9, got 18" in failure.text
    skipped = by_name["strided"].find("skipped")
    assert skipped.get("message") == "the backend declares no support for strided tensors"
    assert by_name["boom"].find("error").get("message") == "the backend raised RuntimeError: x"
    unclear = by_name["unclear"]
    assert unclear.find("failure") is None
    assert unclear.find("skipped").get("message").startswith(
        "ambiguous region of the spec: two readings")
    props = {p.get("name"): p.get("value") for p in unclear.findall("properties/property")}
    assert props["ambiguous"] == "two readings"
    assert by_name["ok"].find("failure") is None and by_name["ok"].find("skipped") is None
    assert "wrote padding" in by_name["ok"].find("system-out").text


def test_junit_escapes_markup_quotes_and_control_characters(doc: dict) -> None:
    text = report.render_junit(typed(doc))
    root = parse(text)  # well-formed
    assert "\x01" not in text and "\x07" not in text
    [nasty] = [c for c in root.findall("testsuite/testcase") if "script" in c.get("classname")]
    classname, _, name = NASTY_ID.replace("\x01", "").rpartition("/")
    assert nasty.get("classname") == classname.replace("/", ".")
    assert nasty.get("name") == name
    failure = nasty.find("failure")
    assert failure.get("message") == NASTY_MESSAGE.replace("\x07", "")  # newline kept
    assert failure.text.startswith(NASTY_MESSAGE.replace("\x07", ""))


def test_junit_baseline_statuses() -> None:
    doc = document([result("a/known", "XFAIL", "expected FAIL (issue 1): differs"),
                    result("a/fixed", "XPASS", "passed, but the baseline expects FAIL")])
    root = parse(report.render_junit(typed(doc)))
    assert suite_counts(root) == {"tests": 2, "failures": 0, "errors": 0, "skipped": 1}
    known, fixed = root.findall("testsuite/testcase")
    assert known.find("skipped").get("message").startswith("expected failure (baseline)")
    assert fixed.find("skipped") is None and "baseline expects" in fixed.find("system-out").text


def test_markdown_summary(doc: dict) -> None:
    md = report.render_markdown(typed(doc))
    # verdict columns: mandatory, PASS, QUALITY_WARNING, FAIL, ERROR, TIMEOUT, NOT_SUPPORTED
    assert "| 2_1 | NOT conformant | 4 | 1 | 0 | 2 | 1 | 0 | 0 |" in md
    assert "| 2_0 | no verdict (no mandatory case selected) |" in md
    assert "PASS 1, QUALITY_WARNING 0, FAIL 3, ERROR 1, TIMEOUT 0, NOT_SUPPORTED 1" in md
    assert "ambiguous regions of the spec" in md and "FAIL 1" in md
    assert "ab" * 32 in md and "x\\|y" in md
    row = next(line for line in md.splitlines() if "&lt;script&gt;" in line)
    assert "\\| pipe" in row and "second line" not in row
    # four cells (case, status, message, diagnosis): the escaped pipe is text
    assert len(re.findall(r"(?<!\\)\|", row)) == 5
    assert "\x01" not in row and "\x07" not in row
    assert "documented/resample1/unclear | FAIL (ambiguous)" in md
    assert "more FAIL/ERROR" not in md
    assert "INCOMPLETE" not in md and "shard" not in md and "| Execution |" not in md


def md_section(md: str, title: str) -> str:
    """The text of the Markdown section `### <title>...` up to the next heading."""
    match = re.search(rf"^### {re.escape(title)}.*?\n(.*?)(?=^#|\Z)", md, re.S | re.M)
    assert match, title
    return match.group(1)


def table_rows(text: str) -> list[str]:
    """The body rows of the Markdown tables in `text` (no header, no delimiter row)."""
    lines = [line for line in text.splitlines() if line.startswith("|")]
    return [line for i, line in enumerate(lines)
            if not line.startswith("|---") and not (i + 1 < len(lines)
                                                    and lines[i + 1].startswith("|---"))]


def test_markdown_limits_the_table(doc: dict) -> None:
    md = report.render_markdown(typed(doc), max_failures=1)
    assert "documented/depth_to_space1/bad | FAIL" in md
    assert "documented/resample1/boom" not in md
    assert "… and 3 more FAIL/ERROR/TIMEOUT cases (4 in all)" in md


def test_run_writes_junit_and_markdown(tmp_path: Path, dmlconf: Dmlconf) -> None:
    junit, md = tmp_path / "r" / "junit.xml", tmp_path / "r" / "summary.md"
    code, doc = dmlconf("--cases", str(DOCUMENTED), "--backend", SWAPPED, "--junit", str(junit),
                        "--markdown", str(md))
    assert code == 1
    root = ET.parse(junit).getroot()
    counts = suite_counts(root)
    assert counts["tests"] == len(doc["results"])
    assert counts["failures"] == doc["summary"]["FAIL"] - doc["ambiguous"]["FAIL"] > 0
    assert counts["errors"] == doc["summary"]["ERROR"] - doc["ambiguous"]["ERROR"]
    text = md.read_text(encoding="utf-8")
    assert "NOT conformant" in text
    assert "documented/depth_to_space1/example-2-column-row-depth | FAIL" in text


def test_report_command(tmp_path: Path, dmlconf: Dmlconf) -> None:
    code, doc = dmlconf("--cases", str(DOCUMENTED), "--level", "2_0")
    assert code == 0
    junit, md = tmp_path / "j.xml", tmp_path / "s.md"
    assert main(["report", str(tmp_path / "results.json"), "--junit", str(junit),
                 "--markdown", str(md)]) == 0
    root = ET.parse(junit).getroot()
    assert suite_counts(root)["skipped"] == doc["summary"]["NOT_SUPPORTED"] > 0
    skipped = root.findall("testsuite/testcase/skipped")
    assert all(s.get("message").startswith("needs feature level") for s in skipped)
    # The documented cases are a part of the 2_0 mustpass list (docs/mustpass.md).
    v = doc["verdict"]["2_0"]
    assert v["PASS"] == v["mandatory"] > 0 and 0 < v["mustpass_run"] < v["mustpass"]
    assert (f"| 2_0 | {v['mustpass_run']} of {v['mustpass']} mustpass cases run: no verdict |"
            in md.read_text(encoding="utf-8"))


def test_report_command_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = tmp_path / "good.json"
    good.write_text(json.dumps(document([result("a/b", "PASS")])), encoding="utf-8")
    assert main(["report", str(good)]) == 2
    assert "give at least one output" in capsys.readouterr().err
    for name, content in (("missing.json", None), ("broken.json", "{"),
                          ("list.json", "[]"), ("other.json", '{"format": "x"}')):
        path = tmp_path / name
        if content is not None:
            path.write_text(content, encoding="utf-8")
        assert main(["report", str(path), "--junit", str(tmp_path / "j.xml")]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"dmlconf: error: {path}") and err.count("\n") == 1
    assert not (tmp_path / "j.xml").exists()


def test_junit_timeout_is_an_error_and_the_crash_goes_to_system_err() -> None:
    doc = document([
        result("a/slow", "TIMEOUT", "ran past the per-case timeout of 2 s",
               crash={"exit_code": None, "signal": "SIGKILL", "output": "still here\x00\x1b"}),
        result("a/segv", "ERROR", "the backend crashed", crash=CRASH),
        result("a/unclear", "TIMEOUT", "ran past", ambiguous="two readings"),
    ])
    root = parse(report.render_junit(typed(doc)))
    assert suite_counts(root) == {"tests": 3, "failures": 0, "errors": 2, "skipped": 1}
    slow, segv, unclear = root.findall("testsuite/testcase")
    error = slow.find("error")
    assert error.get("type") == "TIMEOUT"
    assert error.get("message") == "ran past the per-case timeout of 2 s"
    assert slow.find("system-err").text == "worker process: signal SIGKILL\nstill here"
    assert segv.find("error").get("type") == "ERROR"
    assert segv.find("system-err").text == ("worker process: signal SIGSEGV, exit code -11\n"
                                            + CRASH["output"])
    assert unclear.find("error") is None and unclear.find("system-err") is None
    assert unclear.find("skipped").get("message") == (
        "ambiguous region of the spec: two readings (TIMEOUT: ran past)")


def test_junit_load_errors_are_one_testcase_per_file() -> None:
    doc = document([result("a/ok", "PASS")])
    doc.update(complete=False, load_errors=[
        {"file": "cases/x.yaml", "line": 3, "message": "unknown key 'Sizes'"},
        {"file": "cases/x.yaml", "line": None, "message": "duplicate id a/b"},
        {"file": "cases/y.yaml", "line": 1, "message": "not valid YAML"}])
    root = parse(report.render_junit(typed(doc)))
    assert suite_counts(root) == {"tests": 3, "failures": 0, "errors": 2, "skipped": 0}
    x, y, ok = root.findall("testsuite/testcase")
    assert (x.get("classname"), x.get("name")) == ("load", "cases/x.yaml")
    assert [e.get("message") for e in x.findall("error")] == [
        "cases/x.yaml:3: unknown key 'Sizes'", "cases/x.yaml: duplicate id a/b"]
    assert [e.get("message") for e in y.findall("error")] == ["cases/y.yaml:1: not valid YAML"]
    assert ok.get("name") == "ok"
    props = {p.get("name"): p.get("value")
             for p in root.findall("testsuite/properties/property")}
    assert props["complete"] == "false"
    assert props["incomplete"].startswith("INCOMPLETE: 3 case file problems")


def test_markdown_timeout_crash_incomplete_shard_and_execution() -> None:
    doc = document([result("a/slow", "TIMEOUT", "ran past the per-case timeout of 2 s",
                           crash={"exit_code": None, "signal": "SIGKILL", "output": "x"}),
                    result("a/segv", "ERROR", "the backend crashed", crash=CRASH)])
    doc.update(complete=False,
               load_errors=[{"file": "cases/x.yaml", "line": 3, "message": "bad | key"}],
               shard={"index": 2, "count": 4, "cases": 10, "of_cases": 40,
                      "full_case_set_sha256": "cd" * 32},
               execution={"workers": 4, "isolated": True, "timeout_s": 30.0,
                          "memory_cap_bytes": 2 * 2 ** 30})
    md = report.render_markdown(typed(doc))
    assert ("**INCOMPLETE: 1 case file problem — cases were not run, no verdict stands**"
            in md)
    assert ("**shard 2 of 4: 10 of 40 cases; the verdict covers this shard only (join "
            "shards with \\`dmlconf merge\\`)**") in md
    assert "- cases/x.yaml:3: bad \\| key" in md
    assert ("| Execution | 4 workers; isolated: yes; per-case timeout 30.0 s; "
            "memory cap 2 GiB |") in md
    assert "### FAIL, ERROR, TIMEOUT cases" in md
    assert ("| a/slow | TIMEOUT | ran past the per-case timeout of 2 s "
            "(worker process: signal SIGKILL) |") in md
    assert "| a/segv | ERROR | the backend crashed (worker process: signal SIGSEGV, " \
           "exit code -11) |" in md


def test_execution_and_shard_lines() -> None:
    assert common.execution_text(None) is None
    assert common.execution_text(execution_of({"workers": 1, "isolated": False, "timeout_s": None,
                                  "memory_cap_bytes": None, "resumed_cases": 3})) == (
        "1 worker; isolated: no; no per-case timeout; no memory cap; 3 results taken from the "
        "journal (--resume)")
    assert common.execution_text(execution_of({"workers": 1, "isolated": False, "timeout_s": None,
                                  "memory_cap_bytes": None, "certify": False,
                                  "expectations_cache": "/c/expected", "resumed_cases": 1,
                                  "resumed": ["a/b"]})) == (
        "1 worker; isolated: no; no per-case timeout; no memory cap; 1 result taken from the "
        "journal (--resume)")
    assert common.execution_text(execution_of({"workers": 1, "isolated": True, "timeout_s": None,
                                  "memory_cap_bytes": None, "certify": True,
                                  "expectations_cache": None, "resumed_cases": 0,
                                  "resumed": []})) == (
        "1 worker; isolated: yes; no per-case timeout; no memory cap; certification run "
        "(--certify)")
    assert common.execution_text(execution_of({"workers": 2, "isolated": True, "timeout_s": 5,
                                  "memory_cap_bytes": 512 * 2 ** 20})) == (
        "2 workers; isolated: yes; per-case timeout 5 s; memory cap 512 MiB")
    assert common.execution_text(execution_of({"workers": 1, "isolated": False, "timeout_s": None,
                                  "memory_cap_bytes": None, "resumed_cases": 0,
                                  "cases_per_worker": None, "thread_environment": {}})) == (
        "1 worker; isolated: no; no per-case timeout; no memory cap")
    assert common.execution_text(execution_of({"workers": 2, "isolated": True, "timeout_s": 5,
                                  "memory_cap_bytes": None, "cases_per_worker": 1,
                                  "retries": 2, "thread_environment": {"OMP_NUM_THREADS": "1"}})
                                 ) == (
        "2 workers; isolated: yes; per-case timeout 5 s; no memory cap; a fresh worker for every "
        "case; failing cases retried 2 times; workers' thread pools OMP_NUM_THREADS=1")
    assert common.execution_text(execution_of({"workers": 1, "isolated": True, "timeout_s": 5,
                                  "memory_cap_bytes": None, "cases_per_worker": 50,
                                  "retries": 1})) == (
        "1 worker; isolated: yes; per-case timeout 5 s; no memory cap; a fresh worker every "
        "50 cases; failing cases retried 1 time")
    assert common.execution_text(execution_of({"merged": [
        {"shard": "1/2", "execution": {"workers": 2, "isolated": True, "timeout_s": 5,
                                       "memory_cap_bytes": None}},
        {"shard": "2/2", "execution": None}]})) == (
        "merged from 2 shards: shard 1/2: 2 workers; isolated: yes; per-case timeout 5 s; "
        "no memory cap | shard 2/2: ?")
    assert common.shard_line(typed({"shard": None})) is None
    assert common.shard_line(typed({})) is None
    assert common.incomplete_line(typed({"complete": True, "load_errors": []})) is None
    assert common.incomplete_line(typed({"complete": False})) == (
        "INCOMPLETE: some cases could not be loaded — cases were not run, no verdict stands")


def test_documents_without_the_newer_fields_still_render() -> None:
    """A document written before TIMEOUT, crash, complete, load_errors, execution and shard."""
    doc = document([result("a/bad", "FAIL", "differs"), result("a/boom", "ERROR", "raised")])
    for counts in (doc["summary"], doc["ambiguous"], *doc["verdict"].values()):
        counts.pop("TIMEOUT", None)
    assert not {"complete", "load_errors", "execution", "shard"} & set(doc)
    root = parse(report.render_junit(typed(doc)))
    assert suite_counts(root) == {"tests": 2, "failures": 1, "errors": 1, "skipped": 0}
    assert "TIMEOUT 0" in report.render_markdown(typed(doc))
    html = report.render_html(typed(doc))
    assert 'data-status="TIMEOUT">0<' in html and 'id="incomplete"' not in html


# -- hostile input: everything from a case file, a backend or a message is text -------------------
CONTROL = "\x00\x01\x07\x08\x0b\x0c\x1b\x7f\ufffe\ud800"


def test_junit_parses_with_hostile_payloads_and_control_characters() -> None:
    doc = hostile_document(CONTROL)
    text = report.render_junit(typed(doc))
    root = parse(text)  # well-formed XML 1.0
    for c in "\x00\x01\x07\x08\x0b\x0c\x1b\ufffe\ud800":
        assert c not in text
    cases = root.findall("testsuite/testcase")
    assert len(cases) == 2 + len(doc["results"])  # two load-error files
    assert cases[0].get("name") == EVIL + "\x7f"  # DEL is allowed in XML 1.0
    first = cases[2]
    assert first.find("failure").get("message").startswith(EVIL + "\x7f | pipe\n" + EVIL)
    assert first.find("system-err").text.endswith(EVIL + "\x7f\n" + EVIL + "\x7f")
    props = {p.get("name"): p.get("value")
             for p in root.findall("testsuite/properties/property")}
    assert props["backend"] == EVIL + "\x7f" and props["command"] == EVIL + "\x7f"
    assert props["execution_flags"] == f"{EVIL}\x7f|{PAYLOADS[1]}"
    # the diagnosis: a line of the failure's text and the readings as a property
    assert f"\nDiagnosis: the output equals {EVIL}\x7f\n" in first.find("failure").text
    case_props = {p.get("name"): p.get("value") for p in first.findall("properties/property")}
    assert case_props["diagnosis"] == f"{PAYLOADS[0]}, {EVIL}\x7f"
    assert case_props["margin"] == "0.9"
    warned = cases[-1]
    assert warned.find("failure") is None and warned.find("skipped") is None
    assert warned.find("system-out").text.startswith(f"QUALITY_WARNING: {EVIL}\x7f | pipe\n")


def test_markdown_escapes_hostile_payloads() -> None:
    md = report.render_markdown(typed(hostile_document(CONTROL)))
    for bad in ("<script", "<img", "<svg", "</pre", "](", "\x00", "\x1b", "\x7f"):
        assert bad not in md, bad
    rows = table_rows(md_section(md, "FAIL, ERROR, TIMEOUT cases"))
    assert len(rows) == 4  # FAIL, ERROR and the two TIMEOUTs
    for row in rows:
        assert len(re.findall(r"(?<!\\)\|", row)) == 5, row  # four cells; pipes escaped
        assert "&lt;script&gt;window.__pwned=1&lt;/script&gt;" in row
    [warned] = table_rows(md_section(md, "QUALITY_WARNING cases"))
    assert len(re.findall(r"(?<!\\)\|", warned)) == 4, warned  # three cells
    readings = table_rows(md_section(md, "Diagnosis summary"))
    assert len(readings) == 2  # the two numeric counts; "(not recognised)" is a sentence
    assert all(len(re.findall(r"(?<!\\)\|", row)) == 4 for row in readings), readings
    assert "1 of 1 FAIL matched no reading" in md  # from the document's diagnoses
    assert "**Execution flags: &lt;script&gt;" in md
    assert "{{7*7}}" in md  # Markdown does not evaluate it; nor did Jinja


# -- quality warnings, margins, diagnoses and execution flags -----------------------------------
DIAGNOSED = {"readings": ["other-order"],
             "text": "the output equals the other Order: DEPTH_COLUMN_ROW and COLUMN_ROW_DEPTH "
                     "swapped. Wrong elements: [0,0,0,1] holds input [0,2,0,0]; expected input "
                     "[0,1,0,0]"}
WARNED = ("OutputTensor: 3 of 48 elements outside the strict reading, inside the legal envelope: "
          "[0, 0, 1, 1] got 0.5, strict 0.4995 ± 0.0002")


def graded_document() -> dict:
    """A PASS within a bound, a PASS judged bit-exact, two QUALITY_WARNINGs (one without a
    margin), a diagnosed FAIL of data movement and an undiagnosed FAIL beyond the bound; run
    with ALLOW_HALF_PRECISION_COMPUTATION."""
    doc = document([
        result("generated/tables/resample1/a/float32", "PASS", operators=["RESAMPLE1"],
               data_types=["FLOAT32"], margin=0.002),
        result("documented/depth_to_space1/exact", "PASS", margin=None),
        result("generated/tables/resample1/b/float16", "QUALITY_WARNING", WARNED,
               operators=["RESAMPLE1"], data_types=["FLOAT16"], margin=0.75),
        result("generated/tables/resample1/c/float16", "QUALITY_WARNING",
               "OutputTensor: NaN payload changed at [0, 0, 0, 1] (allowed: not a raw move)",
               operators=["RESAMPLE1"], data_types=["FLOAT16"], margin=None),
        result("generated/orders/depth_to_space1/d/float32", "FAIL",
               "OutputTensor: 36 of 48 elements differ", data_types=["FLOAT32"],
               diagnosis=DIAGNOSED),
        result("generated/tables/resample1/e/float32", "FAIL",
               "OutputTensor: 1 of 4 elements outside the legal envelope",
               operators=["RESAMPLE1"], data_types=["FLOAT32"], margin=4.5),
    ])
    doc["execution_flags"] = ["ALLOW_HALF_PRECISION_COMPUTATION"]
    return doc


def case_properties(case: ET.Element) -> dict[str, str]:
    return {p.get("name"): p.get("value") for p in case.findall("properties/property")}


def test_junit_quality_warnings_pass_with_their_message_and_margins_are_properties() -> None:
    root = parse(report.render_junit(typed(graded_document())))
    assert suite_counts(root) == {"tests": 6, "failures": 2, "errors": 0, "skipped": 0}
    props = {p.get("name"): p.get("value")
             for p in root.findall("testsuite/properties/property")}
    assert props["execution_flags"] == "ALLOW_HALF_PRECISION_COMPUTATION"
    assert props["quality_warnings"] == "2"
    assert props["max_margin"] == "4.5"
    a, exact, b, c, d, e = root.findall("testsuite/testcase")
    for warned in (b, c):
        assert [child.tag for child in warned] == ["properties", "system-out"]  # passed
        assert case_properties(warned)["status"] == "QUALITY_WARNING"
    assert b.find("system-out").text == f"QUALITY_WARNING: {WARNED}\n"
    assert case_properties(b)["margin"] == "0.75"
    assert case_properties(a)["margin"] == "0.002"
    assert case_properties(e)["margin"] == "4.5"
    for no_margin in (exact, c, d):
        assert "margin" not in case_properties(no_margin)
    assert a.find("system-out") is None


def test_junit_failure_text_carries_the_diagnosis_once() -> None:
    doc = graded_document()
    root = parse(report.render_junit(typed(doc)))
    d, e = root.findall("testsuite/testcase")[4:]
    assert d.find("failure").get("message") == "OutputTensor: 36 of 48 elements differ"
    assert d.find("failure").text.splitlines() == ["OutputTensor: 36 of 48 elements differ",
                                                   f"Diagnosis: {DIAGNOSED['text']}"]
    assert case_properties(d)["diagnosis"] == "other-order"
    assert "Diagnosis" not in e.find("failure").text and "diagnosis" not in case_properties(e)
    # a message that already says it: not repeated
    doc["results"][4]["message"] += f" ({DIAGNOSED['text']})"
    d = parse(report.render_junit(typed(doc))).findall("testsuite/testcase")[4]
    assert d.find("failure").text.count(DIAGNOSED["text"]) == 1
    # a baselined FAIL (XFAIL) keeps its diagnosis, in <system-out>
    doc = graded_document()
    doc["results"][4]["status"] = "XFAIL"
    d = parse(report.render_junit(typed(doc))).findall("testsuite/testcase")[4]
    assert d.find("skipped") is not None and DIAGNOSED["text"] in d.find("system-out").text


def test_markdown_lists_quality_warnings_apart() -> None:
    md = report.render_markdown(typed(graded_document()))
    assert ("**Execution flags: ALLOW_HALF_PRECISION_COMPUTATION** · **Quality warnings: 2** "
            "(passing: inside the legal envelope, outside the strict reading; listed apart "
            "below)") in md
    assert "| Execution flags | ALLOW_HALF_PRECISION_COMPUTATION |" in md
    assert "PASS 2, QUALITY_WARNING 2, FAIL 2," in md
    warned = table_rows(md_section(md, "QUALITY_WARNING cases (passing, listed apart)"))
    assert warned == [
        "| generated/tables/resample1/b/float16 | 0.75 | " + common.md_cell(WARNED) + " |",
        "| generated/tables/resample1/c/float16 | - | OutputTensor: NaN payload changed at "
        "\\[0, 0, 0, 1\\] (allowed: not a raw move) |"]
    failures = md_section(md, "FAIL, ERROR, TIMEOUT cases")
    assert [row.split(" | ")[0] for row in table_rows(failures)] == [
        "| generated/orders/depth_to_space1/d/float32", "| generated/tables/resample1/e/float32"]
    assert "QUALITY_WARNING" not in failures and "resample1/b" not in failures


def test_markdown_limits_the_warnings_list() -> None:
    doc = document([result(f"w/{i}", "QUALITY_WARNING", f"outside the strict reading {i}",
                           margin=0.5) for i in range(4)])
    md = report.render_markdown(typed(doc), max_failures=3)
    assert len(table_rows(md_section(md, "QUALITY_WARNING cases"))) == 3
    assert "… and 1 more QUALITY_WARNING case (4 in all); see the results JSON." in md


def test_markdown_gives_the_largest_margin_and_the_ten_closest_to_the_bound() -> None:
    md = report.render_markdown(typed(graded_document()))
    margins = md_section(md, "Margins")
    assert ("3 cases judged within a bound, 3 without a margin (bit-exact or not judged); "
            "1 beyond the bound. Largest margin: 4.5 (generated/tables/resample1/e/float32, "
            "FAIL).") in margins
    assert table_rows(margins) == [
        "| generated/tables/resample1/b/float16 | RESAMPLE1 | FLOAT16 | 0.75 | QUALITY_WARNING |",
        "| generated/tables/resample1/a/float32 | RESAMPLE1 | FLOAT32 | 0.002 | PASS |"]
    many = document([result(f"m/{k:02d}", "PASS", margin=k / 16) for k in range(16)])
    rows = table_rows(md_section(report.render_markdown(typed(many)), "Margins"))
    assert [row.split(" | ")[0] for row in rows] == [f"| m/{k:02d}" for k in range(15, 5, -1)]
    assert "Largest margin: 0.938 (m/15, PASS)" in report.render_markdown(typed(many))
    assert "### Margins" not in report.render_markdown(typed(document([result("x/y", "PASS")])))


def test_markdown_diagnosis_column_and_summary() -> None:
    from conformance.judge.misreadings import CATALOGUE

    md = report.render_markdown(typed(graded_document()))
    d, e = table_rows(md_section(md, "FAIL, ERROR, TIMEOUT cases"))
    assert d.endswith(" | " + common.md_cell(DIAGNOSED["text"], 400) + " |")
    assert "holds input \\[0,2,0,0\\]" in d
    assert e.endswith(" |  |")  # nothing recognised: an empty cell
    summary = md_section(md, "Diagnosis summary")
    words = CATALOGUE["other-order"].reading
    assert table_rows(summary) == [f"| other-order | 1 | {common.md_cell(words, 400)} |"]
    assert "1 of 2 FAILs matched no reading of the catalogue of misreadings." in summary


def test_diagnosis_summary_from_the_document_or_the_results() -> None:
    from conformance.judge.misreadings import CATALOGUE

    doc = graded_document()
    computed = common.diagnosis_summary(typed(doc))
    assert computed == {"readings": [{"key": "other-order", "count": 1,
                                      "reading": CATALOGUE["other-order"].reading}],
                        "failures": 2, "unrecognised": 1}
    doc["diagnoses"] = {"other-order": 1, NOT_RECOGNISED: 1}  # as results.document
    assert common.diagnosis_summary(typed(doc)) == computed
    doc["diagnoses"] = {"no-such-reading": 3, "other-order": 5}  # another suite version's
    assert common.diagnosis_summary(typed(doc))["readings"] == [
        {"key": "other-order", "count": 5, "reading": CATALOGUE["other-order"].reading},
        {"key": "no-such-reading", "count": 3, "reading": "(not in this suite's catalogue)"}]
    assert "### Diagnosis summary" not in report.render_markdown(
        typed(document([result("a/b", "PASS"), result("a/c", "ERROR", "raised")])))


def test_execution_flags_none_and_from_an_older_document() -> None:
    doc = document([result("a/ok", "PASS")])
    assert "execution_flags" not in doc  # older than the field: run with none
    assert "**Execution flags: NONE** · **Quality warnings: 0**" in report.render_markdown(
        typed(doc))
    props = {p.get("name"): p.get("value") for p in parse(report.render_junit(
        typed(doc))).findall("testsuite/properties/property")}
    assert props["execution_flags"] == "NONE" and props["quality_warnings"] == "0"
    assert "max_margin" not in props
    doc["execution"] = {"workers": 1, "isolated": False, "timeout_s": None,
                        "memory_cap_bytes": None,
                        "execution_flags": ["ALLOW_HALF_PRECISION_COMPUTATION",
                                            "DISABLE_META_COMMANDS"]}
    assert common.flags_text(typed(doc)) == "ALLOW_HALF_PRECISION_COMPUTATION|DISABLE_META_COMMANDS"
    assert common.execution_text(execution_of(doc["execution"])) == (
        "1 worker; isolated: no; no per-case timeout; no memory cap")  # said apart
    assert "| Execution flags | ALLOW_HALF_PRECISION_COMPUTATION\\|DISABLE_META_COMMANDS |" in \
        report.render_markdown(typed(doc))
    assert common.repro_command(typed(doc), "a/ok").endswith(
        "--execution-flags ALLOW_HALF_PRECISION_COMPUTATION,DISABLE_META_COMMANDS")


# -- levels not claimed, NOT_SUPPORTED by reason, plurals ----------------------------------------
def test_a_level_all_not_supported_is_not_claimed_in_every_report() -> None:
    doc = narrow_document()
    words = present.verdict_words(typed(doc))
    reasons = present.unclaimed_reasons(typed(doc))
    assert sorted(reasons) == ["1_0", "2_0"]  # the levels it claims nothing of
    assert reasons["1_0"] == [("the backend does not implement DEPTH_TO_SPACE", 50),
                              ("the backend does not implement SPACE_TO_DEPTH", 50)]
    assert words["1_0"] == ("not claimed: the backend does not implement DEPTH_TO_SPACE "
                            "(50 cases); the backend does not implement SPACE_TO_DEPTH (50 cases)")
    assert words["2_1"] == "NOT conformant"
    assert present.verdict_lines(typed(doc))["1_0"] == (
        "not claimed (100 mandatory cases, all NOT_SUPPORTED): the backend does not implement "
        "DEPTH_TO_SPACE (50 cases); the backend does not implement SPACE_TO_DEPTH (50 cases)")
    assert present.verdict_lines(typed(doc))["2_1"].startswith(
        "NOT conformant (107/1018 mandatory cases pass; FAIL 2, ERROR 0, NOT_SUPPORTED 909")
    props = {p.get("name"): p.get("value") for p in parse(report.render_junit(
        typed(doc))).findall("testsuite/properties/property")}
    assert props["verdict.1_0"] == words["1_0"] and props["verdict.2_0"] == words["2_0"]
    assert props["verdict.2_1"] == "NOT conformant"
    md = report.render_markdown(typed(doc))
    assert f"| 1_0 | {common.md_cell(words['1_0'], 400)} | 100 | 0 | 0 | 0 | 0 | 0 | 100 |" in md
    assert "| 2_1 | NOT conformant | 1018 |" in md


def test_not_claimed_words_without_the_results_and_with_many_reasons() -> None:
    given = {"conformant": False, "mandatory": 5, "PASS": 0, "QUALITY_WARNING": 0, "FAIL": 0,
             "ERROR": 0, "TIMEOUT": 0, "NOT_SUPPORTED": 5, "XFAIL": 0, "XPASS": 0}
    v = Verdict.from_json(given)
    assert present.not_claimed(v)
    assert present._verdict_word(v) == "not claimed: every mandatory case is NOT_SUPPORTED"
    assert present.verdict_line(v) == "not claimed (5 mandatory cases, all NOT_SUPPORTED)"
    assert present.verdict_line(v, [("no A", 5)]) == (
        "not claimed (5 mandatory cases, all NOT_SUPPORTED): no A (5 cases)")
    many = [("no A", 2), ("no B", 1), ("no C", 1), ("no D", 1)]
    assert present._verdict_word(v, many) == ("not claimed: no A (2 cases); no B (1 case); "
                                             "no C (1 case); and 1 other reason")
    # a FAIL, or no NOT_SUPPORTED, or nothing mandatory: not "not claimed"
    assert not present.not_claimed(Verdict.from_json({**given, "NOT_SUPPORTED": 4, "FAIL": 1}))
    assert not present.not_claimed(Verdict.from_json({**given, "mandatory": 0,
                                                      "NOT_SUPPORTED": 0}))
    doc = document([result("documented/depth_to_space1/a", "NOT_SUPPORTED", "no X",
                           feature_level="2_1"),
                    result("documented/depth_to_space1/b", "NOT_SUPPORTED", "no Y",
                           feature_level="2_1", ambiguous="two readings"),
                    result("documented/depth_to_space1/c", "NOT_SUPPORTED", "no Z",
                           feature_level="not a level")])
    doc["verdict"]["2_1"] = {**given, "mandatory": 1, "NOT_SUPPORTED": 1}
    # the mandatory cases only (not the ambiguous one); a level that does not parse is skipped
    assert present.unclaimed_reasons(typed(doc)) == {"2_1": [("no X", 1)]}
    assert present.verdict_words(typed(doc))["2_1"] == "not claimed: no X (1 case)"


def test_markdown_counts_not_supported_cases_by_reason() -> None:
    doc = narrow_document()
    md = report.render_markdown(typed(doc))
    rows = table_rows(md_section(md, "NOT_SUPPORTED cases, by reason"))
    assert rows == [f"| {common.md_cell(reason, 400)} | {n} |"
                    for reason, n in common.unsupported_reasons(typed(doc).results)]
    assert sum(n for _, n in common.unsupported_reasons(typed(doc).results)) == \
        doc["summary"]["NOT_SUPPORTED"]
    short = report.render_markdown(typed(doc), max_failures=3)
    assert len(table_rows(md_section(short, "NOT_SUPPORTED cases, by reason"))) == 3
    assert "… and 11 more reasons; see the results JSON." in short
    assert "### NOT_SUPPORTED" not in report.render_markdown(
        typed(document([result("a/b", "PASS")])))


@pytest.mark.parametrize("make", [mixed_document, hostile_document, narrow_document,
                                  full_document, graded_document])
def test_no_report_counts_with_a_parenthesised_plural(make: object) -> None:
    """Every count in every report takes the noun's number (results.counted): "1 case",
    "2 workers", never "case(s)"."""
    doc = make()  # type: ignore[operator]
    # the results' own text is data, shown as it is: only the reports' words are checked
    doc = json.loads(json.dumps(doc).replace("(s)", ""))
    doc["execution"] = {"workers": 1, "isolated": True, "timeout_s": 5, "memory_cap_bytes": None,
                        "cases_per_worker": 3, "retries": 1}
    for render in report.RENDERERS.values():
        text = render(typed(doc))
        assert not re.search(r"\w\(s\)", text), re.search(r".{40}\w\(s\).{20}", text)


def test_the_resumed_cases_of_a_run_a_merged_run_and_an_older_document() -> None:
    """common.resumed: the headline every report shows and the ids it marks, from
    execution.resumed (a merged run's: every shard's); an older document's count names no
    case; a run that resumed nothing has none."""
    def doc(execution: object, n: int = 4) -> ResultsDocument:
        return ResultsDocument.from_json({"results": [{"id": f"c/{i}", "status": "PASS"}
                                                      for i in range(n)],
                                          "execution": execution})

    one = common.resumed(doc({"resumed_cases": 1, "resumed": ["c/2"]}))
    assert one == {"count": 1, "total": 4, "ids": ["c/2"], "line": (
        "RESUMED: 1 of 4 results was taken from the journal of an interrupted run (--resume), "
        "not run again; the other 3 cases ran in the run that finished it")}
    merged = doc({"merged": [{"shard": "1/2", "execution": {"resumed_cases": 2,
                                                            "resumed": ["c/0", "c/2"]}},
                             {"shard": "2/2", "execution": {"resumed_cases": 0,
                                                            "resumed": []}}]})
    assert common.resumed_ids(merged) == {"c/0", "c/2"}
    assert common.resumed(merged)["count"] == 2
    older = common.resumed(doc({"resumed_cases": 3}))
    assert older["ids"] is None and older["line"].endswith(
        "(this results file does not name the resumed cases)")
    assert common.resumed_ids(doc({"resumed_cases": 3})) == frozenset()
    for nothing in ({"resumed_cases": 0, "resumed": []}, {}, None, {"resumed": "c/1"}):
        assert common.resumed(doc(nothing)) is None and common.resumed_lines(doc(nothing)) == []
    lines = common.resumed_lines(doc({"resumed_cases": 3, "resumed": ["c/0", "c/1", "c/3"]}),
                                 limit=2)
    assert lines[1:] == ["RESUMED c/0", "RESUMED c/1",
                         "... and 1 more resumed cases (execution.resumed in the results)"]
    assert common.expectations_line(doc({"expectations_cache": "/c/expected"})).startswith(
        "read from the cache, not recomputed (/c/expected)")
    assert common.expectations_line(doc({"expectations_cache": None})) is None
    assert common.expectations_line(doc({})) is None
