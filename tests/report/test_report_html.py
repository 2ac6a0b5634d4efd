"""conformance.report.render_html: the self-contained HTML report, without a browser (the
browser test is tests/report/test_report_browser.py), and `dmlconf report --html` / `dmlconf run
--html` end to end."""

from __future__ import annotations

import html
import re
import time
from html.parser import HTMLParser
from pathlib import Path

import pytest
from markupsafe import escape

from conformance import present, report
from conformance.cli import main
from conformance.report import common
from conformance.report import html as html_report
from conformance.results import NOT_RECOGNISED, STATUSES, case_family
from tests.support import DOCUMENTED, SWAPPED, Dmlconf
from tests.support.documents import (
    CRASH,
    EVIL,
    EVIL_URL,
    MARKUP,
    MARKUP_ID,
    MARKUP_MESSAGE,
    PAYLOADS,
    WARNED_ID,
    as_result,
    document,
    full_document,
    hostile_document,
    mixed_document,
    narrow_document,
    result,
    synthetic_document,
    typed,
)


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


def shown_counts(text: str) -> dict[str, int]:
    row = re.search(r'<table id="counts">.*?</table>', text, re.S).group(0)
    return {s: int(n) for s, n in re.findall(r'data-status="(\w+)">(\d+)<', row)}


def assert_self_contained(text: str) -> None:
    p = parse(text)
    links = {a.get("href") for tag, a in p.tags if tag == "a"}
    for url in re.findall(r"https?://[^\s\"'<>]+", text):
        assert html.unescape(url) in links, url
    for tag, attrs in p.tags:
        assert tag not in ("link", "iframe", "object", "embed"), tag
        if tag == "img":  # a heat map's picture, inlined: the only image
            assert attrs.get("class") is None and (attrs.get("src") or "").startswith(
                "data:image/png;base64,"), attrs
        if tag == "script":
            assert "src" not in attrs
        if tag == "a":
            assert (attrs.get("href") or "").startswith("https://")


@pytest.mark.parametrize("backend", ["numpy", SWAPPED])
def test_renders_documented_runs(dmlconf: Dmlconf, backend: str) -> None:
    _, doc = dmlconf("--cases", str(DOCUMENTED), "--backend", backend)
    text = report.render_html(typed(doc))
    assert_self_contained(text)
    assert shown_counts(text) == doc["summary"]
    assert f'data-total>{len(doc["results"])}<' in text
    rows = re.findall(r'<details class="case" data-section="\w+" data-status="(\w+)"', text)
    assert len(rows) == sum(r["status"] not in ("PASS", "NOT_SUPPORTED")
                            for r in doc["results"])
    for level, word in present.verdict_words(typed(doc)).items():
        assert f'<tr data-level="{level}"><td>{level}</td>' in text
        assert html.escape(word, quote=False) in text
    assert html.escape(doc["case_set_sha256"]) in text
    if backend == "numpy":
        assert not rows and "None: no decisive case FAILed, ERRORed or TIMED OUT." in text
    else:
        assert rows and set(rows) == {"FAIL"}
        bad = next(r for r in doc["results"] if r["status"] == "FAIL")
        m = bad["mismatches"][0]
        assert (f'<td class="mono">{m["expected"]}</td><td class="mono">{m["got"]}</td>'
                in text)
        assert f'href="{bad["spec"][0]["url"]}"' in text
        repro = html.escape(common.repro_command(typed(doc), bad["id"]))
        assert repro in text and "-k " + bad["id"] in repro
        assert "--backend " in repro


def test_markup_is_escaped() -> None:
    doc = mixed_document()
    text = report.render_html(typed(doc))
    assert MARKUP not in text and "alert(1)</script>" not in text
    assert str(escape(MARKUP_ID)) in text
    assert str(escape(MARKUP_MESSAGE)) in text
    # the only </script> is the one closing the inline script
    assert text.count("</script>") == 1
    assert_self_contained(text)


def section(text: str, name: str) -> str:
    """The HTML of a section of the case list: from its <div id=NAME> to the next heading."""
    return re.search(rf'<div id="{name}">(.*?)(?:<h2|<script>)', text, re.S).group(1)


def test_sections_and_matrices() -> None:
    doc = mixed_document()
    text = report.render_html(typed(doc))

    assert "generated/layouts/depth_to_space1/bad/float16" in section(text, "failures")
    assert "documented/resample1/boom" in section(text, "failures")
    assert "documented/resample1/unclear" not in section(text, "failures")
    assert "documented/resample1/unclear" in section(text, "ambiguous")
    assert 'data-status="XFAIL"' in section(text, "xfail")
    assert 'data-status="XPASS"' in section(text, "xpass")
    assert "generated/tables/z" in section(text, "unsupported")
    assert "generated/tables/z" not in section(text, "failures")
    assert "documented/depth_to_space1/ok" in section(text, "passing")
    assert WARNED_ID in section(text, "warnings")
    assert all(WARNED_ID not in section(text, name)
               for name in ("failures", "xpass", "xfail", "ambiguous"))
    assert "legal: spec-notes" in section(text, "info")
    assert common.case_data_type(typed(doc).results[1]) == "FLOAT16"
    assert common.case_data_type(as_result({"id": "generated/roundtrip/a/b1/float32-a"})) == \
        "FLOAT32"
    assert common.case_data_type(as_result({"id": "documented/resample1/boom"})) == "-"
    # the result's own data types win over the id (documented ids name none)
    assert common.case_data_type(as_result({"id": "documented/resample1/boom",
                                            "data_types": ["FLOAT32"]})) == "FLOAT32"
    assert common.case_data_type(as_result({"id": "x/float16",
                                            "data_types": ["FLOAT32", "UINT8"]})) == \
        "FLOAT32/UINT8"
    assert case_family(as_result({"id": "documented/x", "tags": ["documented"]})) == \
        "documented"
    assert case_family(as_result({"id": "generated/offsets/x", "tags": ["offsets"]})) == \
        "offsets"
    # the operators are the columns (fewer than data types or families), their names
    # breakable after an underscore, with the full name as the title; data types and
    # families are the rows
    dtype = re.search(r'<table class="matrix" id="matrix-dtype">.*?</table>', text, re.S)
    header = dtype.group(0).splitlines()[1]
    assert header == ('<tr><th>Data type \\ operator</th><th title="DEPTH_TO_SPACE1">DEPTH_<wbr>'
                      'TO_<wbr>SPACE1</th><th title="RESAMPLE1">RESAMPLE1</th></tr>')
    assert re.findall(r"<tr><th>([^<]*)</th><td", dtype.group(0)) == ["FLOAT16", "FLOAT32", "-"]
    family = re.search(r'<table class="matrix" id="matrix-family">.*?</table>', text, re.S)
    assert re.findall(r"<tr><th>([^<]*)</th><td", family.group(0)) == [
        "documented", "layouts", "offsets", "tables", "weird"]


def test_the_full_matrix_has_an_operator_a_column() -> None:
    """The widest matrices (every operator, data type and family; every status in a cell) have
    one column per operator of the suite and one row per data type or family, each cell a
    status a line; the browser test measures that they fit a 1,280 px window."""
    from conformance import ops

    text = report.render_html(typed(full_document()))
    dtype = re.search(r'<table class="matrix" id="matrix-dtype">.*?</table>', text, re.S).group(0)
    assert re.findall(r'<th title="([^"]*)">', dtype) == sorted(ops.OPERATORS)
    types = re.findall(r"<tr><th>([^<]*)</th><td", dtype)
    assert {"FLOAT16", "FLOAT32/FLOAT16", "UINT64", "-"} <= set(types) and len(types) == 13
    full = re.search(r'<td class="st-ERROR" title="PASS 1, QUALITY_WARNING 1, FAIL 1, ERROR 1, '
                     r'TIMEOUT 1, NOT_SUPPORTED 1, XFAIL 1, XPASS 1">((?:<span>[^<]*</span>)+)'
                     r'</td>', dtype)
    assert full and full.group(1).count("<span>") == 8 and "<span>N/S 1</span>" in full.group(1)


def test_failures_first_then_xpass_warnings_xfail_ambiguous_unsupported_passing() -> None:
    doc = document([
        result("a/pass", "PASS"), result("a/ns", "NOT_SUPPORTED", "the backend does not X"),
        result("a/xfail", "XFAIL", "known"), result("a/warned", "QUALITY_WARNING", "w"),
        result("a/timeout", "TIMEOUT", "ran past"), result("a/xpass", "XPASS", "passes"),
        result("a/error", "ERROR", "raised"), result("a/fail-1", "FAIL", "differs"),
        result("a/unclear", "FAIL", "differs", ambiguous="two readings"),
        result("a/fail-2", "FAIL", "differs")])
    doc["baseline"] = {"path": "b.yaml", "xpass": ["a/xpass"], "stale": []}
    text = report.render_html(typed(doc))
    headings = re.findall(r'<h2 id="h-(\w+)">', text)
    assert headings == ["failures", "xpass", "warnings", "xfail", "ambiguous", "unsupported",
                        "passing"]
    assert text.index('id="h-passing"') < text.index('id="matrix-dtype"')  # before the rest
    rows = re.findall(r'<details class="case" data-section="(\w+)" data-status="(\w+)"'
                      r'[^>]*data-id="([^"]*)"', text)
    assert rows == [("failures", "FAIL", "a/fail-1"), ("failures", "FAIL", "a/fail-2"),
                    ("failures", "ERROR", "a/error"), ("failures", "TIMEOUT", "a/timeout"),
                    ("xpass", "XPASS", "a/xpass"), ("warnings", "QUALITY_WARNING", "a/warned"),
                    ("xfail", "XFAIL", "a/xfail"), ("ambiguous", "FAIL", "a/unclear")]
    # PASS and NOT_SUPPORTED are no rows: ids in collapsed groups
    groups = re.findall(r'<details class="group" data-status="(\w+)" data-count="(\d+)">', text)
    assert groups == [("NOT_SUPPORTED", "1"), ("PASS", "1")]
    assert "<details open" not in text
    assert re.findall(r'<option value="(\w+)">', text)[:8] == list(html_report.LIST_ORDER)
    # empty sections are left out, failures excepted
    lean = report.render_html(typed(document([result("a/pass", "PASS")])))
    assert re.findall(r'<h2 id="h-(\w+)">', lean) == ["failures", "passing"]


def test_not_supported_cases_are_summarised_per_reason_with_their_ids() -> None:
    doc = narrow_document()
    text = report.render_html(typed(doc))
    unsupported = [r for r in doc["results"] if r["status"] == "NOT_SUPPORTED"]
    by_reason: dict[str, list[str]] = {}
    for r in unsupported:
        by_reason.setdefault(r["message"], []).append(r["id"])
    assert len(by_reason) > 10 and len(unsupported) > 600  # a narrow backend's run
    groups = re.findall(
        r'<details class="group" data-status="NOT_SUPPORTED" data-count="(\d+)">\n<summary>'
        r'<span class="badge st-NOT_SUPPORTED">NOT_SUPPORTED</span> <span class="group-count">'
        r'([^<]*)</span>: <span class="group-text">([^<]*)</span></summary>\n(.*?)</details>',
        section(text, "unsupported"), re.S)
    assert [(html.unescape(reason), int(n)) for n, _, reason, _ in groups] == \
        common.unsupported_reasons(typed(doc).results)
    assert sorted(int(n) for n, *_ in groups) == sorted(map(len, by_reason.values()))
    first = {}
    for r in unsupported:
        first.setdefault(r["message"], r)
    for n, words, reason, blocks in groups:
        assert words == f"{n} cases"
        # the command that reruns the reason's first case alone
        repro = common.repro_command(typed(doc), as_result(first[html.unescape(reason)]))
        assert f'<code class="repro">{html.escape(repro)}</code>' in blocks
        ids = [line for block in re.findall(r'<div class="ids mono"[^>]*>([^<]*)</div>', blocks)
               for line in block.split("\n")]
        assert sorted(ids) == sorted(by_reason[html.unescape(reason)])
    # the FAILs are the only rows: first, not among the NOT_SUPPORTED
    rows = re.findall(r'<details class="case" data-section="(\w+)" data-status="(\w+)"', text)
    assert rows == [("failures", "FAIL")] * doc["summary"]["FAIL"] and rows
    assert '<span class="count" data-section="unsupported" data-total="2129">2129</span>' in text
    assert f'data-section="failures" data-total="{len(rows)}">{len(rows)}</span>' in text
    assert len(text.encode("utf-8")) < 400_000


def test_a_level_whose_mandatory_cases_are_all_not_supported_reads_not_claimed() -> None:
    doc = narrow_document()
    text = report.render_html(typed(doc))
    verdict = dict(re.findall(r'<tr data-level="(\w+)"><td>\w+</td><td class="([\w-]+)" '
                              r'data-verdict>', text))
    words = {level: html.unescape(w) for level, w in
             re.findall(r'<tr data-level="(\w+)"><td>\w+</td><td [^>]*>([^<]*)</td>', text)}
    # 1_0 and 2_0 need DEPTH_TO_SPACE, SPACE_TO_DEPTH and RESAMPLE, which it does not implement
    for level, ops in (("1_0", ["DEPTH_TO_SPACE", "SPACE_TO_DEPTH"]),
                       ("2_0", ["RESAMPLE", "DEPTH_TO_SPACE", "SPACE_TO_DEPTH"])):
        v = doc["verdict"][level]
        assert v["NOT_SUPPORTED"] == v["mandatory"] > 0 and v["conformant"] is None
        assert verdict[level] == "not-claimed"
        needed = [r for r in doc["results"] if r["feature_level"] <= level
                  and not r["ambiguous"]]
        assert words[level] == "not claimed: " + "; ".join(
            f"the backend does not implement {op} "
            f"({sum(r['operators'] == [op] for r in needed)} cases)" for op in ops)
        assert "NOT conformant" not in words[level]
    # a level with FAILs among its NOT_SUPPORTED is not conformant
    assert words["2_1"] == "NOT conformant" and verdict["2_1"] == "no"
    assert doc["verdict"]["2_1"]["FAIL"] > 0


def test_zero_counts_are_neutral_and_only_counts_there_are_coloured() -> None:
    doc = mixed_document()
    text = report.render_html(typed(doc))
    counts = re.search(r'<table id="counts">.*?</table>', text, re.S).group(0)
    classes = {status: cls for cls, status in
               re.findall(r'<td class="([\w-]+)" data-status="(\w+)">', counts)}
    assert classes == {s: "zero" if doc["summary"][s] == 0 else f"st-{s}"
                                 for s in STATUSES}
    assert classes["TIMEOUT"] == "zero" and classes["FAIL"] == "st-FAIL"
    ambiguous = dict((s, c) for c, s in
                     re.findall(r'<td class="([\w-]+)" data-ambiguous-status="(\w+)">', counts))
    assert ambiguous["FAIL"] == "st-FAIL" and ambiguous["ERROR"] == "zero"
    verdict = re.search(r'<tr data-level="2_1">.*?</tr>', text).group(0)
    # level, verdict, mandatory, then one count per status
    tds = re.findall(r'<td(?: class="([\w-]+)")?[^>]*>([^<]*)</td>', verdict)[3:]
    assert [c for c, _ in tds] == ["zero" if n == "0" else f"st-{s}"
                                   for s, (_, n) in zip(STATUSES, tds, strict=True)]
    assert ("st-FAIL", "2") in tds and ("zero", "0") in tds
    assert html_report.count_class("FAIL", 0) == "zero"
    assert html_report.count_class("FAIL", 3) == "st-FAIL"


def test_large_run_is_quick_and_small() -> None:
    doc = synthetic_document()
    start = time.perf_counter()
    text = report.render_html(typed(doc))
    seconds = time.perf_counter() - start
    assert len(re.findall(r'<details class="case"', text)) == 500
    assert shown_counts(text)["PASS"] == 5500
    assert seconds < 10, seconds
    assert len(text.encode("utf-8")) < 3_000_000


def test_cli_report_html(tmp_path: Path, dmlconf: Dmlconf) -> None:
    _, doc = dmlconf("--cases", str(DOCUMENTED), "--backend", SWAPPED)
    results = tmp_path / "results.json"
    out = tmp_path / "deep" / "report.html"
    assert main(["report", str(results), "--html", str(out)]) == 0
    text = out.read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>")
    assert shown_counts(text) == doc["summary"]


def test_cli_run_html(tmp_path: Path, dmlconf: Dmlconf) -> None:
    out = tmp_path / "report.html"
    status, doc = dmlconf("--cases", str(DOCUMENTED), "--html", str(out))
    assert status == 0
    assert shown_counts(out.read_text(encoding="utf-8")) == doc["summary"]
    assert sum(doc["summary"][s] for s in STATUSES) == len(doc["results"])


def test_compare_writes_the_new_report_with_a_comparison_section(
        tmp_path: Path, dmlconf: Dmlconf) -> None:
    old, new = tmp_path / "old.json", tmp_path / "new.json"
    assert dmlconf("--cases", str(DOCUMENTED), name="old.json")[0] == 0
    assert dmlconf("--cases", str(DOCUMENTED), "--backend", SWAPPED, name="new.json")[0] == 1
    page = tmp_path / "compare.html"
    assert main(["compare", str(old), str(new), "--html", str(page)]) == 1
    html = page.read_text()
    assert f"Compared with {old}" in html
    assert 'data-compare="newly_failing">4<' in html
    assert "documented/depth_to_space1/example-1-depth-column-row" in html


def test_a_failure_shows_its_tensors_as_grids_with_the_differences_marked(
        tmp_path: Path, dmlconf: Dmlconf) -> None:
    page = tmp_path / "r.html"
    assert dmlconf("--cases", str(DOCUMENTED), "--backend", SWAPPED,
                   "-k", "depth_to_space1/example-2", "--html", str(page))[0] == 1
    html = page.read_text()
    assert '<table class="grid">' in html
    assert "InputTensor [1, 8, 2, 3]" in html and "OutputTensor [1, 2, 4, 6]" in html
    # CRD example 2 run as DCR: element [0, 0, 0, 1] is 18 where 9 is expected
    assert 'title="expected 9">18<br><span class="exp">9</span>' in html
    assert "[0, 0, 0, :]" in html


def test_float_grids_carry_a_relative_error_for_the_heat_map() -> None:
    import numpy as np

    from conformance.expected import Expected
    from conformance.judge.compare import grid, mismatches
    from conformance.report.html import grid_rows

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
    assert sorted(html_report.WORST_FIRST) == sorted(STATUSES)
    doc = document([
        result("generated/layouts/a/float32", "FAIL", "differs", tags=["layouts"]),
        result("generated/layouts/b/float32", "TIMEOUT", "ran past the timeout of 2 s",
               tags=["layouts"], crash={"exit_code": None, "signal": "SIGKILL",
                                        "output": "last words </pre><b>x</b>"}),
        result("generated/layouts/c/float16", "ERROR", "crashed", tags=["layouts"],
               crash=CRASH),
        result("generated/layouts/d/float16", "TIMEOUT", "ran past", tags=["layouts"]),
    ])
    text = report.render_html(typed(doc))
    dtype = re.search(r'<table class="matrix" id="matrix-dtype">.*?</table>', text, re.S)
    cells = dict(re.findall(r'<td class="st-(\w+)" title="([^"]*)"', dtype.group(0)))
    assert cells == {"TIMEOUT": "FAIL 1, TIMEOUT 1", "ERROR": "ERROR 1, TIMEOUT 1"}
    assert '<option value="TIMEOUT">TIMEOUT</option>' in text
    assert ".st-TIMEOUT {" in text
    failures = section(text, "failures")
    assert failures.count('<details class="case" data-section="failures" '
                          'data-status="TIMEOUT"') == 2
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
    text = report.render_html(typed(doc))
    assert ('<p class="headline incomplete" id="incomplete">INCOMPLETE: 2 case file problems '
            '— cases were not run, no verdict stands</p>') in text
    assert ('<p class="headline shard" id="shard">shard 1 of 3: 6 of 18 cases; the verdict '
            'covers this shard only (join shards with `dmlconf merge`)</p>') in text
    assert "<li><code>cases/x.yaml:3</code>: <span class=\"msg\">unknown key &#39;Sizes&#39;" \
           "</span></li>" in text
    assert "<li><code>cases/y.yaml</code>: " in text
    assert ('<td id="execution">2 workers; isolated: yes; per-case timeout 60.0 s; '
            'memory cap 1.5 GiB</td>') in text


def test_hostile_document_renders_as_text_with_no_unsafe_link() -> None:
    doc = hostile_document()
    text = report.render_html(typed(doc))
    p = parse(text)
    # the one picture is the margin histogram, drawn here: no element comes from a payload
    assert [(t, a.get("id")) for t, a in p.tags
            if t in ("img", "svg", "iframe", "object", "embed")] == [("svg", "margin-histogram")]
    svg = text[text.index("<svg"):text.index("</svg>")]
    assert set(re.findall(r"<(\w+)", svg)) == {"svg", "line", "text", "rect", "title"}
    assert len(p.scripts) == 1 and "__pwned" not in p.scripts[0]
    # the new fields, escaped: diagnosis, reading keys, execution flags, the summary's keys
    assert (f'<p class="diagnosis">Diagnosis: <span class="diagnosis-text">the output equals '
            f'{escape(EVIL)}</span></p>') in text
    assert f'<span class="reading">{escape(EVIL)}</span>' in text
    assert f'<td id="execution-flags">{escape(EVIL)}|{escape(PAYLOADS[1])}</td>' in text
    assert f'<tr data-reading="{escape(EVIL)}"><td><code>{escape(EVIL)}</code></td><td>2</td>' \
        in text
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
    assert html_report.web_url("JavaScript:alert(1)") is None and html_report.web_url(None) is None
    assert html_report.web_url(" https://x") is None
    assert html_report.web_url("data:text/html,x") is None
    assert html_report.web_url("HTTPS://learn.microsoft.com/") == "HTTPS://learn.microsoft.com/"


def test_a_lone_surrogate_is_written_not_raised(tmp_path: Path) -> None:
    doc = document([result("a/\ud800", "FAIL", "bad \udcff byte")])
    path = tmp_path / "r.html"
    report.write(report.render_html(typed(doc)), path)
    assert "a/?" in path.read_text(encoding="utf-8")


# -- quality warnings, margins, diagnoses and execution flags -----------------------------------
def test_quality_warnings_have_their_section_badge_filter_and_matrix_colour() -> None:
    text = report.render_html(typed(mixed_document()))
    assert ('Quality warnings: <span data-warnings>1</span> (passing: inside the legal '
            'envelope, outside the strict reading; listed apart below)') in text
    warnings = section(text, "warnings")
    rows = re.findall(r'<details class="case" data-section="warnings" data-status="(\w+)"'
                      r'[^>]*data-id="([^"]*)"', warnings)
    assert rows == [("QUALITY_WARNING", WARNED_ID)]
    assert ('<span class="badge st-QUALITY_WARNING">QUALITY_WARNING</span>' in warnings)
    assert "outside the strict reading, inside the legal envelope" in warnings
    assert '<p class="margin">Margin: <span class="mono">0.6</span>' in warnings
    assert ".st-QUALITY_WARNING {" in text
    assert '<option value="QUALITY_WARNING">QUALITY_WARNING</option>' in text
    # a warning is worse than PASS, better than NOT_SUPPORTED, in a matrix cell
    dtype = re.search(r'<table class="matrix" id="matrix-dtype">.*?</table>', text, re.S)
    cells = re.findall(r'<td class="st-(\w+)" title="([^"]*)">(.*?)</td>', dtype.group(0))
    assert ("QUALITY_WARNING", "QUALITY_WARNING 1", "<span>Q/W 1</span>") in cells
    doc = document([result("a/p", "PASS", data_types=["FLOAT16"]),
                    result("a/w", "QUALITY_WARNING", "w", data_types=["FLOAT16"]),
                    result("a/n", "NOT_SUPPORTED", "n", data_types=["FLOAT32"]),
                    result("a/w2", "QUALITY_WARNING", "w", data_types=["FLOAT32"])])
    dtype = re.search(r'id="matrix-dtype">.*?</table>', report.render_html(typed(doc)),
                      re.S).group(0)
    assert dict(re.findall(r'<td class="st-(\w+)" title="([^"]*)"', dtype)) == {
        "QUALITY_WARNING": "PASS 1, QUALITY_WARNING 1",
        "NOT_SUPPORTED": "QUALITY_WARNING 1, NOT_SUPPORTED 1"}
    assert html_report.WORST_FIRST.index("NOT_SUPPORTED") < html_report.WORST_FIRST.index(
        "QUALITY_WARNING") < html_report.WORST_FIRST.index("PASS")


def test_an_ambiguous_warning_is_listed_with_the_warnings() -> None:
    doc = document([result("a/w", "QUALITY_WARNING", "w", ambiguous="two readings"),
                    result("a/p", "PASS", ambiguous="two readings")])
    text = report.render_html(typed(doc))
    assert 'data-id="a/w"' in section(text, "warnings")
    assert 'id="h-ambiguous"' not in text  # no ambiguous case that does not pass
    assert re.search(r'<td class="st-QUALITY_WARNING" data-ambiguous-status="QUALITY_WARNING">'
                     r'1</td>', text)
    text = report.render_html(typed(document([
        result("a/w", "QUALITY_WARNING", "w", ambiguous="two readings"),
        result("a/f", "FAIL", "x", ambiguous="two readings"),
        result("a/p", "PASS", ambiguous="two readings")])))
    assert 'data-id="a/f"' in section(text, "ambiguous")
    assert '<span id="ambiguous-pass">2 ambiguous cases</span> passed' in text


MARGINS = [None, 0.0, 5e-7, 1e-6, 2e-6, 1e-5, 0.05, 0.5, 0.5, 1.0, 1.5, "not a number"]
#: The half-decade bin of each margin of MARGINS inside [1e-6, 1].
EXPECTED_BINS = [2, 0, 1, 0, 0, 0, 0, 0, 0, 1, 0, 3]


def test_the_margin_histogram_counts_each_half_decade() -> None:
    results = [result(f"m/{i}", "PASS", margin=m) for i, m in enumerate(MARGINS)]
    h = common.margin_histogram([as_result(r) for r in results])
    assert [b["count"] for b in h["bins"]] == EXPECTED_BINS
    assert (h["none"], h["zero"], h["below"], h["above"], h["judged"]) == (2, 1, 1, 1, 10)
    assert h["bins"][0]["low"] == 1e-6 and h["bins"][-1]["high"] == 1.0
    assert h["bins"][9]["low"] == pytest.approx(10 ** -1.5)  # 0.05 sits in [0.0316, 0.1)


def test_the_html_draws_the_margins_as_an_inline_svg_with_counts_beside() -> None:
    doc = document([result(f"m/{i}", "PASS", margin=m) for i, m in enumerate(MARGINS)])
    text = report.render_html(typed(doc))
    svg = re.search(r'<svg class="histogram" id="margin-histogram".*?</svg>', text, re.S)
    assert svg and "<script" not in svg.group(0) and "href" not in svg.group(0)
    bars = re.findall(r'<rect class="bar" x="[\d.]+" y="([\d.]+)" width="[\d.]+" '
                      r'height="([\d.]+)" data-low="([^"]+)" data-high="([^"]+)" '
                      r'data-count="(\d+)"><title>margin ([^<]*)</title></rect>', svg.group(0))
    assert len(bars) == 12
    assert [int(b[4]) for b in bars] == EXPECTED_BINS
    heights = [float(b[1]) for b in bars]
    tallest = max(heights)
    for h, n in zip(heights, EXPECTED_BINS, strict=True):
        assert h == pytest.approx(tallest * n / 3, abs=0.1)  # proportional to the count
    assert (bars[0][2], bars[-1][3]) == ("1e-06", "1")
    assert bars[-1][5] == "0.32 to 1: 3 cases"
    assert bars[-3][5] == "0.032 to 0.1: 1 case"
    ticks = re.findall(r'<text class="tick"[^>]*>([^<]*)</text>', svg.group(0))
    assert re.findall(r'<text class="count"[^>]*>(\d+)</text>', svg.group(0)) == ["2", "1",
                                                                                   "1", "3"]
    assert ticks == ["1e-6", "1e-5", "1e-4", "1e-3", "1e-2", "1e-1", "1"]
    counts = dict(re.findall(r'data-margins="(\w+)">(\d+)<', text))
    assert counts == {"judged": "10", "none": "2", "zero": "1", "below": "1", "above": "1"}
    # a run with no margin draws nothing and says so
    plain = report.render_html(typed(document([result("a/b", "PASS"), result("a/c", "FAIL", "x")])))
    assert "<svg" not in plain and "No case in this run is judged within a bound" in plain


def test_the_twenty_cases_closest_to_the_bound() -> None:
    results = [result(f"generated/tables/resample1/c{k:02d}/float16", "PASS",
                      operators=["RESAMPLE1"], data_types=["FLOAT16"], margin=k / 32)
               for k in range(30)]
    results += [result("generated/tables/resample1/over/float32", "FAIL", "outside",
                       operators=["RESAMPLE1"], data_types=["FLOAT32"], margin=7.0),
                result("generated/tables/resample1/warned/float16", "QUALITY_WARNING", "w",
                       operators=["RESAMPLE1"], data_types=["FLOAT16"], margin=0.999)]
    text = report.render_html(typed(document(results)))
    table = re.search(r'<table id="closest">(.*?)</table>', text, re.S).group(1)
    rows = re.findall(r"<tr><td><code>([^<]*)</code></td><td>([^<]*)</td><td>([^<]*)</td>"
                      r'<td class="mono" data-margin="([^"]*)">([^<]*)</td>'
                      r'<td class="st-(\w+)">', table)
    assert len(rows) == 20
    assert rows[0] == ("generated/tables/resample1/warned/float16", "RESAMPLE1", "FLOAT16",
                       "0.999", "0.999", "QUALITY_WARNING")
    assert [r[0] for r in rows[1:]] == [f"generated/tables/resample1/c{k:02d}/float16"
                                        for k in range(29, 10, -1)]
    assert [float(r[3]) for r in rows] == sorted((float(r[3]) for r in rows), reverse=True)
    assert "over/float32" not in table  # beyond the bound: a FAIL, in the failures
    assert "<code>generated/tables/resample1/over/float32</code>, FAIL)" in text  # the largest


def test_a_failure_shows_its_diagnosis_and_the_run_a_diagnosis_summary() -> None:
    from conformance.judge.misreadings import CATALOGUE

    text_ = ("the output equals the other Order: DEPTH_COLUMN_ROW and COLUMN_ROW_DEPTH "
             "swapped. Wrong elements: [0,0,0,1] holds input [0,2,0,0]; expected input "
             "[0,1,0,0]")
    doc = document([
        result("documented/depth_to_space1/example-2", "FAIL", "OutputTensor: 36 of 48 differ",
               diagnosis={"readings": ["other-order"], "text": text_}),
        result("documented/depth_to_space1/other", "FAIL", "OutputTensor: 1 of 48 differ",
               diagnosis=None),
        result("documented/resample1/boom", "ERROR", "raised", operators=["RESAMPLE1"]),
    ])
    doc["diagnoses"] = {"other-order": 1, NOT_RECOGNISED: 1}
    text = report.render_html(typed(doc))
    row = re.search(r'<details class="case" data-section="failures" data-status="FAIL"'
                    r'[^>]*example-2.*?</details>', text, re.S).group(0)
    summary_line = re.search(r"<summary>(.*?)</summary>", row).group(1)
    assert '<span class="reading">other-order</span>' in summary_line  # seen unexpanded
    # the diagnosis comes first in the details, before the message
    assert row.index('<p class="diagnosis">Diagnosis: <span class="diagnosis-text">'
                     f'{escape(text_)}</span></p>') < row.index('<div class="msg">')
    assert row.count('class="diagnosis"') == 1
    other = re.search(r'<details class="case"[^>]*/other".*?</details>', text, re.S).group(0)
    assert 'class="diagnosis"' not in other
    section = re.search(r'<div id="diagnoses">(.*?</p>)\n</div>', text, re.S).group(1)
    assert re.findall(r'<tr data-reading="([^"]*)"><td><code>[^<]*</code></td><td>(\d+)</td>'
                      r"<td>([^<]*)</td></tr>", section) == [
        ("other-order", "1", str(escape(CATALOGUE["other-order"].reading)))]
    assert ('<span data-unrecognised>1</span> of 2 FAILs matched no reading of the catalogue'
            in section)
    assert 'id="diagnoses"' not in report.render_html(typed(document([result("a/b", "PASS")])))


def test_execution_flags_in_the_headline_provenance_and_reproduce_command() -> None:
    doc = mixed_document()
    text = report.render_html(typed(doc))
    assert '<p class="headline" id="headline">Execution flags: NONE · ' in text
    assert '<td id="execution-flags">NONE</td>' in text
    assert "--execution-flags" not in text
    doc["execution_flags"] = ["ALLOW_HALF_PRECISION_COMPUTATION", "DISABLE_META_COMMANDS"]
    text = report.render_html(typed(doc))
    flags = "ALLOW_HALF_PRECISION_COMPUTATION|DISABLE_META_COMMANDS"
    assert f'id="headline">Execution flags: {flags} · ' in text
    assert f'<td id="execution-flags">{flags}</td>' in text
    repros = re.findall(r'<code class="repro">([^<]*)</code>', text)
    assert repros and all(r.endswith(" --execution-flags ALLOW_HALF_PRECISION_COMPUTATION,"
                                     "DISABLE_META_COMMANDS") for r in repros)


def test_waived_failures_are_listed_apart_from_expected_failures_with_their_reason() -> None:
    """A waiver (docs/baselines.md) is not an expected failure: it does not deny the verdict,
    so the report lists waived cases in their own section, each with its reason, and JUnit
    says "waived"; the level reads "conformant with 1 waiver"."""
    waiver = {"cases": "a/waived", "reason": "driver bug 123 fixed in 31.0.2",
              "issue": None, "expires": "2027-01-31"}
    doc = document([
        result("a/waived", "XFAIL", "waived FAIL (driver bug 123 fixed in 31.0.2; waived "
                                    "until 2027-01-31): wrong", waiver=waiver),
        result("a/expected", "XFAIL", "expected FAIL (known): wrong", waiver=None),
        result("a/pass", "PASS", waiver=None)])
    doc["verdict"]["2_1"] = {"conformant": True, "mandatory": 2, "PASS": 1, "FAIL": 0,
                             "ERROR": 0, "TIMEOUT": 0, "NOT_SUPPORTED": 0, "XFAIL": 1,
                             "XPASS": 0, "waivers": 1}
    text = report.render_html(typed(doc))
    waived = text.split('id="waived"', 1)[1].split("</div>\n", 1)[0]
    expected = text.split('id="xfail"', 1)[1].split("</div>\n", 1)[0]
    assert "a/waived" in waived and "driver bug 123" in waived and "a/expected" not in waived
    assert "a/expected" in expected and "a/waived" not in expected
    assert "conformant with 1 waiver" in text
    junit = report.render_junit(typed(doc))
    assert "waived (baseline): waived FAIL" in junit
    assert "expected failure (baseline): expected FAIL" in junit
