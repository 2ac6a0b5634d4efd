"""conformance.report.render_html: the self-contained HTML report, without a browser (the
browser test is tests/test_report_browser.py), and `dmlconf report --html` / `dmlconf run
--html` end to end."""

from __future__ import annotations

import html
import json
import re
import time
from html.parser import HTMLParser
from pathlib import Path

import pytest
from markupsafe import escape
from test_report import CRASH, EVIL_URL, PAYLOADS, document, hostile_document, result

from conformance import report
from conformance.cli import main
from conformance.results import STATUSES

ROOT = Path(__file__).resolve().parent.parent
DOCUMENTED = ROOT / "cases" / "documented"
SWAPPED = f"{ROOT / 'tests' / 'broken_backends.py'}:SwappedOrderBackend"

MARKUP = "<script>alert(1)</script>"
MARKUP_ID = f"generated/weird/{MARKUP}/</script>/float32"
MARKUP_MESSAGE = f"OutputTensor: {MARKUP} and </script><b>bold</b> & \"quotes\""

OPERATORS = ["DEPTH_TO_SPACE", "DEPTH_TO_SPACE1", "SPACE_TO_DEPTH", "SPACE_TO_DEPTH1",
             "RESAMPLE", "RESAMPLE1"]
TYPES = ["float32", "float16", "uint8", "uint32", "int8", "int32"]
FAMILIES = ["layouts", "offsets", "roundtrip", "tables", "bitlevel"]


def synthetic_document(cases: int = 6000, failures: int = 500) -> dict:
    """A results document of `cases` cases, `failures` of them FAILs with 5 mismatches each
    (the rest PASS), over 6 operators x 6 data types x 5 families."""
    results = []
    every = max(1, cases // failures) if failures else cases + 1
    failed = 0
    for i in range(cases):
        op, dtype = OPERATORS[i % len(OPERATORS)], TYPES[(i // 6) % len(TYPES)]
        family = FAMILIES[(i // 36) % len(FAMILIES)]
        case_id = f"generated/{family}/{op.lower()}/case-{i}/{dtype}"
        spec = [{"page": f"DML_{op}_OPERATOR_DESC", "section": "Remarks",
                 "url": f"https://learn.microsoft.com/windows/win32/api/directml/"
                        f"ns-directml-dml_{op.lower()}_operator_desc"}]
        if i % every == 0 and failed < failures:
            failed += 1
            mismatches = [{"tensor": "OutputTensor", "index": [0, 0, j, 1],
                           "expected": str(9 + j), "got": str(18 + j)} for j in range(5)]
            message = ("OutputTensor: 36 of 48 elements differ (bit-exact, the case's "
                       "values): " + "; ".join(f"[0, 0, {j}, 1] expected {9 + j}, got {18 + j}"
                                               for j in range(5)) + "; and 31 more")
            results.append(result(case_id, "FAIL", message, operators=[op],
                                  tags=[family, op.lower()], spec=spec,
                                  mismatches=mismatches))
        else:
            results.append(result(case_id, "PASS", operators=[op], tags=[family, op.lower()],
                                  spec=spec))
    return document(results)


def mixed_document() -> dict:
    """Every kind of row: a markup id and message, ambiguous, XFAIL, XPASS, info notes."""
    return document([
        result("documented/depth_to_space1/ok", "PASS",
               info=["OutputTensor: wrote 2 padding byte(s) inside TotalTensorSizeInBytes "
                     "(legal: spec-notes §2)"]),
        result("generated/layouts/depth_to_space1/bad/float16", "FAIL", "1 of 4 differ",
               tags=["layouts", "depth_to_space1"],
               spec=[{"page": "DML_DEPTH_TO_SPACE1_OPERATOR_DESC", "section": "Remarks",
                      "url": "https://learn.microsoft.com/x"}],
               mismatches=[{"tensor": "OutputTensor", "index": [0, 1], "expected": "9",
                            "got": "18"}]),
        result(MARKUP_ID, "FAIL", MARKUP_MESSAGE, tags=["weird"]),
        result("documented/resample1/boom", "ERROR", "the backend raised RuntimeError: x",
               operators=["RESAMPLE1"]),
        result("documented/resample1/unclear", "FAIL", "differs", ambiguous="two readings",
               operators=["RESAMPLE1"]),
        result("generated/offsets/x/float32/a", "XFAIL", "known", operators=["RESAMPLE1"],
               tags=["offsets", "resample1"]),
        result("generated/offsets/y/float32/b", "XPASS", "passes now", operators=["RESAMPLE1"],
               tags=["offsets", "resample1"]),
        result("generated/tables/z", "NOT_SUPPORTED", "the backend does not implement X",
               tags=["tables"]),
    ])


class _Collect(HTMLParser):
    """Tags and their attributes, the text, and every script's content."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.scripts: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag == "script":
            self._in_script = True
            self.scripts.append("")

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._in_script = False

    def handle_data(self, data: str) -> None:
        if self._in_script:
            self.scripts[-1] += data


def parse(text: str) -> _Collect:
    p = _Collect()
    p.feed(text)
    p.close()
    return p


def run_doc(tmp_path: Path, backend: str) -> dict:
    out = tmp_path / "r.json"
    main(["run", "-q", "--cases", str(DOCUMENTED), "--backend", backend, "--json", str(out)])
    return json.loads(out.read_text(encoding="utf-8"))


def shown_counts(text: str) -> dict[str, int]:
    row = re.search(r'<table id="counts">.*?</table>', text, re.S).group(0)
    return {s: int(n) for s, n in re.findall(r'data-status="(\w+)">(\d+)<', row)}


def assert_self_contained(text: str) -> None:
    p = parse(text)
    links = {a.get("href") for tag, a in p.tags if tag == "a"}
    for url in re.findall(r"https?://[^\s\"'<>]+", text):
        assert html.unescape(url) in links, url
    for tag, attrs in p.tags:
        assert tag not in ("link", "img", "iframe", "object", "embed"), tag
        if tag == "script":
            assert "src" not in attrs
        if tag == "a":
            assert (attrs.get("href") or "").startswith("https://")


@pytest.mark.parametrize("backend", ["numpy", SWAPPED])
def test_renders_documented_runs(tmp_path: Path, backend: str) -> None:
    doc = run_doc(tmp_path, backend)
    text = report.render_html(doc)
    assert_self_contained(text)
    assert shown_counts(text) == doc["summary"]
    assert f'data-total>{len(doc["results"])}<' in text
    rows = re.findall(r'<details class="case" data-status="(\w+)"', text)
    assert len(rows) == sum(r["status"] != "PASS" for r in doc["results"])
    for level, v in doc["verdict"].items():
        assert f'<tr data-level="{level}"><td>{level}</td>' in text
        assert html.escape(report._verdict_word(v), quote=False) in text
    assert html.escape(doc["case_set_sha256"]) in text
    if backend == "numpy":
        assert not rows and "every decisive case passed" in text
    else:
        assert rows and set(rows) == {"FAIL"}
        bad = next(r for r in doc["results"] if r["status"] == "FAIL")
        m = bad["mismatches"][0]
        assert (f'<td class="mono">{m["expected"]}</td><td class="mono">{m["got"]}</td>'
                in text)
        assert f'href="{bad["spec"][0]["url"]}"' in text
        repro = html.escape(report.repro_command(doc, bad["id"]))
        assert repro in text and "-k " + bad["id"] in repro
        assert "--backend " in repro


def test_markup_is_escaped() -> None:
    doc = mixed_document()
    text = report.render_html(doc)
    assert MARKUP not in text and "alert(1)</script>" not in text
    assert str(escape(MARKUP_ID)) in text
    assert str(escape(MARKUP_MESSAGE)) in text
    # the only </script> is the one closing the inline script
    assert text.count("</script>") == 1
    assert_self_contained(text)


def test_sections_and_matrices() -> None:
    doc = mixed_document()
    text = report.render_html(doc)

    def section(name: str) -> str:
        return re.search(rf'<div id="{name}">(.*?)(?:<h2>|<script>)', text, re.S).group(1)

    assert "generated/layouts/depth_to_space1/bad/float16" in section("failures")
    assert "documented/resample1/boom" in section("failures")
    assert "documented/resample1/unclear" not in section("failures")
    assert "documented/resample1/unclear" in section("ambiguous")
    assert "XFAIL" in section("baseline") and "XPASS" in section("baseline")
    assert "legal: spec-notes" in section("info")
    assert report.case_data_type(doc["results"][1]) == "FLOAT16"
    assert report.case_data_type({"id": "generated/roundtrip/a/b1/float32-a"}) == "FLOAT32"
    assert report.case_data_type({"id": "documented/resample1/boom"}) == "-"
    # the result's own data types win over the id (documented ids name none)
    assert report.case_data_type({"id": "documented/resample1/boom",
                                  "data_types": ["FLOAT32"]}) == "FLOAT32"
    assert report.case_data_type({"id": "x/float16", "data_types": ["FLOAT32", "UINT8"]}) == \
        "FLOAT32/UINT8"
    assert report.case_family({"id": "documented/x", "tags": ["documented"]}) == "documented"
    assert report.case_family({"id": "generated/offsets/x", "tags": ["offsets"]}) == "offsets"
    dtype = re.search(r'<table class="matrix" id="matrix-dtype">.*?</table>', text, re.S)
    assert ">FLOAT16<" in dtype.group(0) and ">-<" in dtype.group(0)
    family = re.search(r'<table class="matrix" id="matrix-family">.*?</table>', text, re.S)
    assert ">documented<" in family.group(0) and ">offsets<" in family.group(0)


def test_large_run_is_quick_and_small() -> None:
    doc = synthetic_document()
    start = time.perf_counter()
    text = report.render_html(doc)
    seconds = time.perf_counter() - start
    assert len(re.findall(r'<details class="case"', text)) == 500
    assert shown_counts(text)["PASS"] == 5500
    assert seconds < 10, seconds
    assert len(text.encode("utf-8")) < 3_000_000


def test_cli_report_html(tmp_path: Path) -> None:
    doc = run_doc(tmp_path, SWAPPED)
    results = tmp_path / "r.json"
    out = tmp_path / "deep" / "report.html"
    assert main(["report", str(results), "--html", str(out)]) == 0
    text = out.read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>")
    assert shown_counts(text) == doc["summary"]


def test_cli_run_html(tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    status = main(["run", "-q", "--cases", str(DOCUMENTED), "--json", str(tmp_path / "r.json"),
                   "--html", str(out)])
    assert status == 0
    doc = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert shown_counts(out.read_text(encoding="utf-8")) == doc["summary"]
    assert sum(doc["summary"][s] for s in STATUSES) == len(doc["results"])


def test_compare_writes_the_new_report_with_a_comparison_section(tmp_path: Path) -> None:
    from conformance.cli import main

    cases = str(Path(__file__).resolve().parent.parent / "cases" / "documented")
    old, new = tmp_path / "old.json", tmp_path / "new.json"
    assert main(["run", "-q", "--cases", cases, "--json", str(old)]) == 0
    broken = str(Path(__file__).resolve().parent / "broken_backends.py") + ":SwappedOrderBackend"
    assert main(["run", "-q", "--cases", cases, "--json", str(new), "--backend", broken]) == 1
    page = tmp_path / "compare.html"
    assert main(["compare", str(old), str(new), "--html", str(page)]) == 1
    html = page.read_text()
    assert f"Compared with {old}" in html
    assert 'data-compare="newly_failing">4<' in html
    assert "documented/depth_to_space1/example-1-depth-column-row" in html


def test_a_failure_shows_its_tensors_as_grids_with_the_differences_marked(tmp_path: Path) -> None:
    from conformance.cli import main

    cases = str(Path(__file__).resolve().parent.parent / "cases" / "documented")
    broken = str(Path(__file__).resolve().parent / "broken_backends.py") + ":SwappedOrderBackend"
    page = tmp_path / "r.html"
    assert main(["run", "-q", "--cases", cases, "--json", str(tmp_path / "r.json"),
                 "--backend", broken, "-k", "depth_to_space1/example-2", "--html",
                 str(page)]) == 1
    html = page.read_text()
    assert '<table class="grid">' in html
    assert "InputTensor [1, 8, 2, 3]" in html and "OutputTensor [1, 2, 4, 6]" in html
    # CRD example 2 run as DCR: element [0, 0, 0, 1] is 18 where 9 is expected
    assert 'title="expected 9">18<br><span class="exp">9</span>' in html
    assert "[0, 0, 0, :]" in html


def test_float_grids_carry_a_relative_error_for_the_heat_map() -> None:
    import numpy as np

    from conformance.compare import Expected, grid, mismatches
    from conformance.report import grid_rows

    want = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    got = np.array([[1.0, 2.5], [3.0, 6.0]], np.float32)
    exp = Expected(want)
    g = grid("OutputTensor", got, exp, mismatches(got, exp))
    assert g["bad"] == [0, 1, 0, 1] and g["error"] == [0.0, 0.25, 0.0, 1.0]
    rows = grid_rows(g)["rows"]
    assert [label for label, _ in rows] == ["0, :", "1, :"]
    assert rows[1][1][1]["shade"] == 0.85 and rows[0][1][1]["shade"] == 0.325
    assert grid("big", np.zeros(1000, np.float32)) is None  # only small tensors are kept


def test_timeout_rows_crash_details_and_the_worst_status_of_a_cell() -> None:
    assert sorted(report.WORST_FIRST) == sorted(STATUSES)
    doc = document([
        result("generated/layouts/a/float32", "FAIL", "differs", tags=["layouts"]),
        result("generated/layouts/b/float32", "TIMEOUT", "ran past the timeout of 2 s",
               tags=["layouts"], crash={"exit_code": None, "signal": "SIGKILL",
                                        "output": "last words </pre><b>x</b>"}),
        result("generated/layouts/c/float16", "ERROR", "crashed", tags=["layouts"],
               crash=CRASH),
        result("generated/layouts/d/float16", "TIMEOUT", "ran past", tags=["layouts"]),
    ])
    text = report.render_html(doc)
    dtype = re.search(r'<table class="matrix" id="matrix-dtype">.*?</table>', text, re.S)
    cells = dict(re.findall(r'<td class="st-(\w+)" title="([^"]*)"', dtype.group(0)))
    assert cells == {"TIMEOUT": "FAIL 1, TIMEOUT 1", "ERROR": "ERROR 1, TIMEOUT 1"}
    assert '<option value="TIMEOUT">TIMEOUT</option>' in text
    assert ".st-TIMEOUT {" in text
    failures = re.search(r'<div id="failures">(.*?)<h2>', text, re.S).group(1)
    assert failures.count('<details class="case" data-status="TIMEOUT"') == 2
    assert ('<p>worker process: signal SIGKILL</p><pre class="crash-output">last words '
            '&lt;/pre&gt;&lt;b&gt;x&lt;/b&gt;</pre>') in text
    assert "<p>worker process: signal SIGSEGV, exit code -11</p>" in text
    assert text.count('<pre class="crash-output">') == 2  # none for a TIMEOUT without crash


def test_incomplete_shard_and_execution_are_shown() -> None:
    doc = document([result("a/ok", "PASS")])
    doc.update(complete=False, load_errors=[
        {"file": "cases/x.yaml", "line": 3, "message": "unknown key 'Sizes'"},
        {"file": "cases/y.yaml", "line": None, "message": "not valid YAML"}],
               shard={"index": 1, "count": 3, "cases": 6, "of_cases": 18,
                      "full_case_set_sha256": "cd" * 32},
               execution={"workers": 2, "isolated": True, "timeout_s": 60.0,
                          "memory_cap_bytes": 3 * 2 ** 29})
    text = report.render_html(doc)
    assert ('<p class="headline incomplete" id="incomplete">INCOMPLETE: 2 case file problems '
            '— cases were not run, no verdict stands</p>') in text
    assert ('<p class="headline shard" id="shard">shard 1 of 3: 6 of 18 cases; the verdict '
            'covers this shard only (join shards with `dmlconf merge`)</p>') in text
    assert "<li><code>cases/x.yaml:3</code>: <span class=\"msg\">unknown key &#39;Sizes&#39;" \
           "</span></li>" in text
    assert "<li><code>cases/y.yaml</code>: " in text
    assert ('<td id="execution">2 worker(s); isolated: yes; per-case timeout 60.0 s; '
            'memory cap 1.5 GiB</td>') in text


def test_hostile_document_renders_as_text_with_no_unsafe_link() -> None:
    doc = hostile_document()
    text = report.render_html(doc)
    p = parse(text)
    assert [t for t, _ in p.tags if t in ("img", "svg", "iframe", "object", "embed")] == []
    assert len(p.scripts) == 1 and "__pwned" not in p.scripts[0]
    for tag, attrs in p.tags:
        assert not any(k.startswith("on") for k in attrs), (tag, attrs)
        if "href" in attrs:
            assert re.match(r"https?://", attrs["href"] or ""), attrs
    links = [a["href"] for t, a in p.tags if t == "a"]
    assert links and all(u.startswith("https://example.com/") for u in links)
    assert f'<code>{escape(EVIL_URL)}</code>' in text  # the javascript: URL, shown as text
    for payload in PAYLOADS:
        assert str(escape(payload)) in text
    assert "{{7*7}}" in text  # data, never a template
    assert report.web_url("JavaScript:alert(1)") is None and report.web_url(None) is None
    assert report.web_url(" https://x") is None and report.web_url("data:text/html,x") is None
    assert report.web_url("HTTPS://learn.microsoft.com/") == "HTTPS://learn.microsoft.com/"


def test_a_lone_surrogate_is_written_not_raised(tmp_path: Path) -> None:
    doc = document([result("a/\ud800", "FAIL", "bad \udcff byte")])
    path = tmp_path / "r.html"
    report.write(report.render_html(doc), path)
    assert "a/?" in path.read_text(encoding="utf-8")
