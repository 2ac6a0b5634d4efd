"""Messages are sanitised once, where results are made (results.safe_text): a backend whose
exception holds a lone surrogate or control characters gets the exit status its results say
(1 for an ERROR, not 2 from a writer that could not encode the text), and the journal, the
results JSON, JUnit, Markdown, HTML and the terminal summary all carry the same text."""

from __future__ import annotations

import dataclasses
import html
import json
import os
import pickle
import re
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pytest

from backends.numpy_reference import NumpyReferenceBackend
from conformance import results
from conformance.cli import main
from conformance.levels import FeatureLevel
from conformance.ops import OperatorCall
from conformance.report.common import md_cell
from conformance.results import Result, safe_text, sanitise
from conformance.session import journal
from tests.support import DOCUMENTED

HERE = Path(__file__).resolve()
#: Every kind of character no writer can carry as it is, and a surrogate pair (one emoji).
NASTY = ("lone \ud800 and \udcff, NUL \x00 BEL \x07 ESC \x1b[31mred\x1b[0m CR \r VT \x0b "
         "FF \x0c FS \x1c DEL \x7f NEL \x85 CSI \x9b LS \u2028 PS \u2029 U+FFFE \ufffe "
         "U+FFFF \uffff pair \ud83d\ude00 tab \t end")
NASTY_SAFE = ("lone \\ud800 and \\udcff, NUL \\x00 BEL \\x07 ESC \\x1b[31mred\\x1b[0m CR \\x0d "
              "VT \\x0b FF \\x0c FS \\x1c DEL \\x7f NEL \\x85 CSI \\x9b LS \\u2028 PS \\u2029 "
              "U+FFFE \\ufffe U+FFFF \\uffff pair \U0001f600 tab \t end")
#: XML 1.0's Char production: what may appear in a document at all.
XML_CHAR = re.compile("^[\t\n\r\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]*$")
#: Every line break Python's str.splitlines knows but LF.
OTHER_BREAKS = "\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"


class ControlBackend(NumpyReferenceBackend):
    """TEST DOUBLE: the NumPy reference, except that DEPTH_TO_SPACE raises NASTY, and, in an
    isolated worker (`crash` set), SPACE_TO_DEPTH writes undecodable bytes and terminal
    escapes to its stderr and exits."""

    name = "control-characters"
    crash = False

    def execute(self, call: OperatorCall, bindings: Mapping[str, np.ndarray]) -> None:
        if call.operator == "DEPTH_TO_SPACE":
            raise RuntimeError(NASTY)
        if call.operator == "SPACE_TO_DEPTH" and self.crash:
            os.write(2, b"\xff\xfe bytes \x1b[2J\x00 cleared\r\nlast line\n")
            os._exit(3)
        super().execute(call, bindings)


class CrashingControlBackend(ControlBackend):
    native = True
    crash = True


# -- the rule -------------------------------------------------------------------------------------
def test_safe_text_escapes_what_no_writer_carries_and_keeps_the_rest() -> None:
    assert safe_text(NASTY) == NASTY_SAFE
    assert safe_text("a\r\nb\rc\n") == "a\nb\\x0dc\n"  # CRLF is a line end, a lone CR is not
    clean = "plain text, tabs\tand lines\n, accents é, CJK 漢字, emoji \U0001f600"
    assert safe_text(clean) is clean
    assert safe_text(NASTY_SAFE) == NASTY_SAFE  # idempotent


def test_every_code_point_comes_out_writable_everywhere() -> None:
    every = "".join(map(chr, range(0x110000)))
    safe = safe_text(every)
    safe.encode("utf-8")  # strict: no surrogate is left
    assert XML_CHAR.match(safe)
    assert "\r" not in safe and not any(c in safe for c in OTHER_BREAKS)
    assert safe.splitlines() == safe.split("\n")  # LF is the only line break left
    assert safe_text(safe) == safe
    # one at a time: the unsafe ones become their escapes, the others stay as they are
    changed = {c: safe_text(chr(c)) for c in range(0x110000) if safe_text(chr(c)) != chr(c)}
    assert changed == {c: f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}"
                       for c in [*range(0x09), *range(0x0b, 0x20), *range(0x7f, 0xa0),
                                 0x2028, 0x2029, *range(0xd800, 0xe000), 0xfffe, 0xffff]}


def test_sanitise_walks_lists_tuples_and_dicts_keys_included() -> None:
    value = {"a\x00": ["\x1b", ("\ud800", 1, None)], "n": 2.5, "d": {"k": "\x85"}}
    assert sanitise(value) == {"a\\x00": ["\\x1b", ("\\ud800", 1, None)], "n": 2.5,
                               "d": {"k": "\\x85"}}


# -- every way a result is made -------------------------------------------------------------------
def nasty_result() -> Result:
    return Result(
        id="a/\ud800", status="FAIL", message=NASTY, feature_level="2_1", info=[NASTY],
        tags=[NASTY],
        spec=[{"page": NASTY, "section": "\x1b"}],
        mismatches=[{"tensor": NASTY, "index": [0, 1], "expected": "\x00", "got": "\ud800"}],
        grids=[{"tensor": NASTY, "shape": [2], "got": ["\x00", "1"], "expected": ["1", "1"],
                "bad": [1, 0]}],
        crash={"exit_code": 3, "signal": None, "output": NASTY},
        diagnosis={"readings": ["\x1b"], "text": NASTY})


def assert_safe(r: Result) -> None:
    text = json.dumps(r.to_json(), ensure_ascii=False)
    text.encode("utf-8")
    assert XML_CHAR.match(text) and not any(c in text for c in OTHER_BREAKS)
    assert r.id == "a/\\ud800" and r.message == NASTY_SAFE


def test_a_result_is_sanitised_however_it_is_made() -> None:
    r = nasty_result()
    assert_safe(r)
    assert r.info == [NASTY_SAFE] and r.tags == [NASTY_SAFE]
    assert r.spec == [{"page": NASTY_SAFE, "section": "\\x1b"}]
    assert r.mismatches[0]["expected"] == "\\x00" and r.mismatches[0]["got"] == "\\ud800"
    assert r.grids[0]["got"] == ["\\x00", "1"] and r.grids[0]["bad"] == [1, 0]
    assert r.crash == {"exit_code": 3, "signal": None, "output": NASTY_SAFE}
    assert r.diagnosis == {"readings": ["\\x1b"], "text": NASTY_SAFE}
    # assigned after construction, as the runner does
    r2 = Result(id="a/\ud800", status="PASS")
    r2.status, r2.message = "ERROR", NASTY
    r2.crash = {"output": "\x00"}
    assert r2.message == NASTY_SAFE and r2.crash == {"output": "\\x00"}
    # dataclasses.replace (retries, baselines), from_json (journals, shards)
    assert dataclasses.replace(r2, message=NASTY).message == NASTY_SAFE
    assert_safe(Result.from_json({"id": "a/\ud800", "status": "FAIL", "message": NASTY}))
    # unpickled (a worker's result), even one whose text went past the sanitiser there
    raw = Result(id="x", status="FAIL")
    raw.__dict__.update(id="a/\ud800", message=NASTY)
    assert_safe(pickle.loads(pickle.dumps(raw)))


def test_results_read_back_from_json_are_sanitised(tmp_path: Path) -> None:
    """A JSON file may escape a lone surrogate (\\ud800) and any control character: read
    back from a journal, they are made safe like a new result's."""
    path = tmp_path / "r.json.journal"
    header = {"format": journal.FORMAT, "backend": "numpy"}
    line = {"id": "a/\ud800", "status": "FAIL", "message": NASTY}
    path.write_text(json.dumps(header) + "\n" + json.dumps(line) + "\n")  # ASCII, escaped
    assert "\\ud800" in path.read_text()
    _, done = journal.read(path)
    assert_safe(done["a/\\ud800"])


def test_the_document_sanitises_what_the_backend_and_the_command_said() -> None:
    doc = results.document(
        [nasty_result()], backend={"name": "b\x1b", "capabilities": {"notes": NASTY}},
        case_set_sha256="ab" * 32, claimed=FeatureLevel.parse("6_2"), started_at="t",
        finished_at="t", duration_s=0.0, command="dmlconf \ud800", case_paths=["c\x00"],
        load_errors=[results.LoadError.from_json(
            {"file": "f\udcff.yaml", "line": 1, "message": NASTY})])
    text = json.dumps(doc.to_json(), ensure_ascii=False)
    text.encode("utf-8")
    assert XML_CHAR.match(text) and not any(c in text for c in OTHER_BREAKS)
    assert doc.backend["capabilities"]["notes"] == NASTY_SAFE
    assert doc.command == "dmlconf \\ud800" and doc.case_paths == ["c\\x00"]
    assert doc.load_errors[0].to_json() == {"file": "f\\udcff.yaml", "line": 1,
                                            "message": NASTY_SAFE}


# -- a run through the command line -----------------------------------------------------------
@pytest.mark.integration  # whole runs through the command line
@pytest.mark.parametrize("backend", ["ControlBackend", "CrashingControlBackend"])
def test_a_run_with_control_characters_writes_every_report_and_exits_1(
        tmp_path: Path, backend: str, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    journaled: list[str] = []
    finish = journal.Journal.finish

    def keep(self: journal.Journal) -> None:  # the journal, as it was before it served
        journaled.extend(self.path.read_text(encoding="utf-8").splitlines())
        finish(self)

    monkeypatch.setattr(journal.Journal, "finish", keep)
    out = {kind: tmp_path / name for kind, name in
           (("json", "r.json"), ("junit", "j.xml"), ("markdown", "s.md"), ("html", "r.html"))}
    code = main(["run", "--cases", str(DOCUMENTED), "--backend", f"{HERE}:{backend}",
                 *(x for kind, path in out.items() for x in (f"--{kind}", str(path)))])
    stdout, stderr = capsys.readouterr()
    assert code == 1, stderr
    text = {kind: path.read_bytes().decode("utf-8") for kind, path in out.items()}  # strict
    doc = json.loads(text["json"])
    bad = [r for r in doc["results"] if r["status"] != "PASS"]
    assert [r["status"] for r in bad] == ["ERROR"] * (2 if "Crashing" in backend else 1)
    raised = bad[0]
    assert NASTY_SAFE in raised["message"]
    message = raised["message"]

    # the journal: the same result, line for line
    lines = [json.loads(x) for x in journaled[1:]]
    assert {r["id"]: r["message"] for r in lines} == {r["id"]: r["message"]
                                                       for r in doc["results"]}
    # JUnit: well-formed XML 1.0 with the same message
    root = ET.fromstring(text["junit"])
    case = next(c for c in root.iter("testcase") if c.find("error") is not None
                and message == c.find("error").get("message"))
    assert case.find("error").text == message
    # Markdown: its table cell of the message
    assert md_cell(message) in text["markdown"]
    # HTML: the message, escaped
    assert f'<div class="msg">{html.escape(message, quote=True)}</div>' \
        in text["html"].replace("&#39;", "&#x27;")
    # the terminal: the progress and the summary's lines, no raw control character anywhere
    # each line within the width (LOG_WIDTH where no terminal), the escaped text as it is
    assert f"ERROR {raised['id']}: {message.splitlines()[0][:100]}" in stderr
    assert f"ERROR {raised['id']}: {message.splitlines()[0][:100]}" in stdout
    for stream in (stdout, stderr):
        assert not re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f]", stream)

    if "Crashing" in backend:  # the worker's output: undecodable bytes and escapes
        crashed = bad[1]
        output = crashed["crash"]["output"]
        assert "\ufffd\ufffd bytes \\x1b[2J\\x00 cleared\nlast line" in output
        err = next(c for c in root.iter("testcase") if c.find("system-err") is not None)
        assert err.find("system-err").text.endswith(output)
        assert html.escape(output, quote=False) in text["html"]
