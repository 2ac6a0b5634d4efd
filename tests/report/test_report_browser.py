"""The HTML report in a real browser: the system Chromium driven by Playwright, headless, no
network. Skipped (with the reason) when /usr/bin/chromium or the playwright package is
missing; Playwright's own browser download is never used."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conformance import present, report
from conformance.report import common
from conformance.report import html as html_report
from tests.support.browser import launch
from tests.support.documents import (
    EVIL,
    EVIL_URL,
    LARGE_ID,
    MARKUP_ID,
    MARKUP_MESSAGE,
    PAYLOADS,
    WARNED_ID,
    as_result,
    full_document,
    hostile_document,
    large_failure,
    mixed_document,
    narrow_document,
    synthetic_document,
    typed,
)

#: The window the report must fit without scrolling sideways (issue 15: a 1,280 px one).
WINDOW = {"width": 1280, "height": 800}


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    yield from launch()


class Page:
    """A page of the report with its console errors and dialogs recorded."""

    def __init__(self, browser: Any, path: Path) -> None:
        self.errors: list[str] = []
        self.dialogs: list[str] = []
        self.page = browser.new_page(viewport=WINDOW)
        self.page.on("console",
                     lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))

        def dialog(d: Any) -> None:
            self.dialogs.append(d.message)
            d.dismiss()

        self.page.on("dialog", dialog)
        start = time.perf_counter()
        self.page.goto(path.as_uri(), wait_until="load")
        self.load_s = time.perf_counter() - start

    def visible_rows(self) -> list[str]:
        return self.page.evaluate(
            "() => Array.from(document.querySelectorAll('details.case'))"
            ".filter(r => r.offsetParent !== null).map(r => r.dataset.id)")

    def visible_ids(self) -> list[str]:
        """The ids the filters leave: the rows' and those listed in the NOT_SUPPORTED and PASS
        groups (whether a group is open or not)."""
        return self.visible_rows() + self.page.evaluate(
            "() => Array.from(document.querySelectorAll('details.group:not(.hidden) "
            "div.ids:not(.hidden)')).flatMap(b => b.textContent.split('\\n'))")

    def section_counts(self) -> dict[str, str]:
        """Each section heading's count as shown ("3", or "1 of 3" under a filter)."""
        return self.page.evaluate(
            "() => Object.fromEntries(Array.from(document.querySelectorAll('span.count'))"
            ".map(c => [c.dataset.section, c.textContent]))")


def open_report(browser: Any, tmp_path: Path, doc: dict) -> Page:
    path = tmp_path / "report.html"
    report.write(report.render_html(typed(doc)), path)
    return Page(browser, path)


def test_verdict_counts_filters_and_details(browser: Any, tmp_path: Path) -> None:
    doc = mixed_document()
    p = open_report(browser, tmp_path, doc)
    page = p.page
    for level, word in present.verdict_words(typed(doc)).items():
        shown = page.locator(f'#verdict tr[data-level="{level}"] td[data-verdict]').inner_text()
        assert shown == word
    for status, n in doc["summary"].items():
        assert page.locator(f'#counts td[data-status="{status}"]').inner_text() == str(n)

    rows = [r["id"] for r in doc["results"] if r["status"] not in ("PASS", "NOT_SUPPORTED")]
    assert sorted(p.visible_rows()) == sorted(rows)
    assert sorted(p.visible_ids()) == sorted(r["id"] for r in doc["results"])
    page.select_option("#f-status", "ERROR")
    assert p.visible_ids() == [r["id"] for r in doc["results"] if r["status"] == "ERROR"]
    page.select_option("#f-status", "QUALITY_WARNING")
    assert p.visible_ids() == [WARNED_ID]
    assert page.evaluate("() => Array.from(document.querySelectorAll('#warnings details.case'))"
                         ".map(r => r.dataset.id)") == [WARNED_ID]
    page.select_option("#f-status", "NOT_SUPPORTED")
    assert p.visible_ids() == ["generated/tables/z"]
    page.select_option("#f-status", "")
    assert sorted(p.visible_rows()) == sorted(rows)
    page.select_option("#f-dtype", "FLOAT16")
    assert sorted(p.visible_ids()) == ["generated/layouts/depth_to_space1/bad/float16",
                                       WARNED_ID]
    page.select_option("#f-dtype", "")
    page.fill("#f-text", "alert(1)")
    assert p.visible_ids() == [MARKUP_ID]
    page.fill("#f-text", "does not implement x")  # a reason: its cases
    assert p.visible_ids() == ["generated/tables/z"]
    page.fill("#f-text", "")

    row = page.locator("details.case", has_text="generated/layouts/depth_to_space1/bad/float16")
    table = row.locator("table.mismatches")
    assert not table.is_visible()
    row.locator("summary").click()
    assert table.is_visible()
    assert table.locator("tr").nth(1).inner_text().split("\t") == ["OutputTensor", "[0, 1]",
                                                                   "9", "18"]
    assert row.locator("a").get_attribute("href") == "https://learn.microsoft.com/x"

    # the margin histogram is drawn: 12 bars, the warned case's in the last, none elsewhere
    assert page.locator("#margin-histogram").is_visible()
    assert page.evaluate("() => Array.from(document.querySelectorAll('#margin-histogram "
                         "rect.bar')).map(r => Number(r.dataset.count))") == [0] * 11 + [1]
    assert page.locator('#closest td[data-margin]').inner_text() == "0.6"

    markup = page.evaluate(
        "id => { const r = Array.from(document.querySelectorAll('details.case'))"
        ".find(r => r.dataset.id === id); r.open = true;"
        " return [r.querySelector('.case-id').textContent, r.querySelector('.msg').textContent,"
        " r.querySelectorAll('script, b').length]; }", MARKUP_ID)
    assert markup == [MARKUP_ID, MARKUP_MESSAGE, 0]
    assert p.dialogs == []
    assert p.errors == []
    page.close()


def expected_counts(doc: dict, status: str = "", op: str = "", dtype: str = "",
                    text: str = "") -> dict[str, str]:
    """The section counts the page must show under these filters, counted here from the
    results: text matched against the ids and a NOT_SUPPORTED case's reason (the tests give
    texts no row's details hold)."""
    totals: Counter[str] = Counter()
    shown: Counter[str] = Counter()
    for r in doc["results"]:
        name = html_report._section(as_result(r))
        totals[name] += 1
        words = r["id"] + (" " + r["message"] if r["status"] == "NOT_SUPPORTED" else "")
        if ((not status or r["status"] == status) and (not op or op in r["operators"])
                and (not dtype or common.case_data_type(as_result(r)) == dtype)
                and text.lower() in words.lower()):
            shown[name] += 1
    return {name: str(n) if shown[name] == n else f"{shown[name]} of {n}"
            for name, n in totals.items()}


def test_every_section_count_follows_the_filters(browser: Any, tmp_path: Path) -> None:
    """A narrow backend's report opens on its FAILs, its NOT_SUPPORTED cases summarised per
    reason; each filter (status, operator, data type, text) moves every section's count, each
    reason's count and the line of shown cases."""
    doc = narrow_document()
    p = open_report(browser, tmp_path, doc)
    page = p.page
    fails = [r["id"] for r in doc["results"] if r["status"] == "FAIL"]
    # on opening: the FAILs first, the only rows; every group closed
    assert p.visible_rows() == fails and fails
    first = page.evaluate("() => document.querySelector('#cases details').dataset.id")
    assert first == fails[0]
    assert page.evaluate("() => document.querySelectorAll('details[open]').length") == 0
    reasons = common.unsupported_reasons(typed(doc).results)
    assert page.locator("#unsupported details.group .group-text").all_inner_texts() == [
        reason for reason, _ in reasons]
    assert page.locator("#unsupported details.group .group-count").all_inner_texts() == [
        f"{n} cases" for _, n in reasons]
    assert p.section_counts() == expected_counts(doc)
    total = len(doc["results"])
    assert page.locator("#f-shown").inner_text() == f"{total} cases listed"

    for select, value, kwargs in (
            ("#f-status", "FAIL", {"status": "FAIL"}),
            ("#f-status", "NOT_SUPPORTED", {"status": "NOT_SUPPORTED"}),
            ("#f-op", "RESAMPLE", {"op": "RESAMPLE"}),
            ("#f-dtype", "UINT32", {"dtype": "UINT32"})):
        if select == "#f-op":
            page.select_option(select, label=value)
        else:
            page.select_option(select, value)
        want = expected_counts(doc, **kwargs)
        assert p.section_counts() == want, (value, want)
        page.select_option(select, "")
    assert p.section_counts() == expected_counts(doc)

    # text: a reason's words match its cases; an id's part matches those ids
    page.fill("#f-text", "implement RESAMPLE3")
    assert p.section_counts() == expected_counts(doc, text="implement RESAMPLE3")
    groups = page.evaluate("() => Array.from(document.querySelectorAll('details.group'))"
                           ".filter(g => !g.classList.contains('hidden'))"
                           ".map(g => g.querySelector('.group-count').textContent)")
    n = dict(reasons)["the backend does not implement RESAMPLE3"]
    assert groups == [f"{n} cases"]
    page.fill("#f-text", "uint64")
    want = expected_counts(doc, text="uint64")
    assert p.section_counts() == want and not want["unsupported"].startswith("0 ")
    shown = sum(int(v.split(" of ")[0]) for v in want.values())
    assert page.locator("#f-shown").inner_text() == f"{shown} of {total} cases shown"
    assert sorted(p.visible_ids()) == sorted(r["id"] for r in doc["results"]
                                             if "uint64" in r["id"].lower())
    page.fill("#f-text", "")
    assert p.section_counts() == expected_counts(doc)
    assert p.errors == [] and p.dialogs == []
    page.close()


GEOMETRY = """() => {
  const root = document.documentElement;
  return {page: [root.scrollWidth, root.clientWidth],
          matrices: Array.from(document.querySelectorAll('table.matrix')).map(
            m => [m.id, m.getBoundingClientRect().right, m.scrollWidth, m.clientWidth])};
}"""


@pytest.mark.parametrize("make", [narrow_document, full_document])
def test_the_report_fits_a_1280_px_window(browser: Any, tmp_path: Path, make: Any) -> None:
    """No horizontal scrolling at 1280 x 800: neither the page nor either matrix is wider than
    the window, for a narrow backend's run and for the widest matrices (every operator, data
    type, family and status); nor once every case and group is opened."""
    p = open_report(browser, tmp_path, make())
    page = p.page
    assert page.evaluate("() => window.innerWidth") == WINDOW["width"]
    for opened in (False, True):
        if opened:
            page.evaluate("() => document.querySelectorAll('details').forEach(d => d.open = true)")
        g = page.evaluate(GEOMETRY)
        width, client = g["page"]
        assert width <= client <= WINDOW["width"], (opened, g)
        assert [m[0] for m in g["matrices"]] == ["matrix-dtype", "matrix-family"]
        for name, right, scroll, inner in g["matrices"]:
            assert right <= client and scroll <= inner, (opened, name, right, scroll, inner)
    assert p.errors == []
    page.close()


def test_large_report_loads_quickly(browser: Any, tmp_path: Path) -> None:
    """60,000 cases of a narrow backend (most NOT_SUPPORTED, 500 FAILs): the page loads and
    filters in well under the limits, the NOT_SUPPORTED ones in a few groups, not rows."""
    doc = synthetic_document(60000, 500)
    for r in doc["results"]:
        if r["status"] == "PASS" and r["operators"] != ["DEPTH_TO_SPACE1"]:
            r["status"] = "NOT_SUPPORTED"
            r["message"] = f"the backend does not implement {r['operators'][0]}"
    start = time.perf_counter()
    p = open_report(browser, tmp_path, doc)
    render_s = time.perf_counter() - start - p.load_s
    assert len(p.visible_rows()) == 500
    assert p.page.locator("details.group").count() == 6  # 5 reasons and PASS
    start = time.perf_counter()
    p.page.fill("#f-text", "case-12/")
    filtered = p.visible_ids()
    filter_s = time.perf_counter() - start
    assert filtered == [r["id"] for r in doc["results"] if "/case-12/" in r["id"]]
    assert p.errors == []
    print(f"60,000-case report: rendered in {render_s:.3f} s, loaded in {p.load_s:.3f} s, "
          f"text filter {filter_s:.3f} s")
    assert p.load_s < 10 and filter_s < 5
    p.page.close()


def test_hostile_payloads_stay_text(browser: Any, tmp_path: Path) -> None:
    """Every string of the document carries script, markup, template and javascript: URL
    payloads: none runs or becomes an element, each is shown literally, the filters work."""
    doc = hostile_document()
    p = open_report(browser, tmp_path, doc)
    page = p.page
    page.evaluate("() => document.querySelectorAll('details').forEach(d => d.open = true)")
    page.wait_for_timeout(300)  # time for any onerror / onload / onclick to fire
    assert page.evaluate("() => typeof window.__pwned") == "undefined"
    assert p.dialogs == [] and p.errors == []
    assert page.evaluate(
        "() => document.querySelectorAll('img, svg:not(#margin-histogram), iframe, object, "
        "embed, [onerror], [onload]').length") == 0
    assert page.evaluate("() => Array.from(new Set(Array.from(document.querySelectorAll("
                         "'#margin-histogram *')).map(e => e.tagName))).sort()") == [
        "line", "rect", "text", "title"]
    assert page.evaluate("() => document.scripts.length") == 1
    hrefs = page.evaluate(
        "() => Array.from(document.querySelectorAll('[href]')).map(e => e.getAttribute('href'))")
    assert hrefs and all(h.startswith("https://example.com/") for h in hrefs), hrefs

    # shown literally, where each field is rendered
    text = page.evaluate("() => document.body.innerText")
    for payload in PAYLOADS:
        assert payload in text, payload
    assert page.locator("h1").inner_text() == (f"DirectML conformance: {EVIL} at feature level "
                                               f"{EVIL}")
    assert page.locator("#incomplete").inner_text().startswith("INCOMPLETE: 2 case file problems")
    assert page.locator("#shard").inner_text().startswith(f"shard {EVIL} of {EVIL}: ")
    assert page.locator("#load-errors li code").all_inner_texts() == [f"{EVIL}:7", EVIL_URL]
    first = doc["results"][0]
    row = page.locator("details.case").first
    assert row.get_attribute("data-id") == first["id"]
    assert row.locator(".case-id").inner_text() == first["id"]
    assert row.locator(".msg").evaluate("e => e.textContent") == first["message"]
    assert row.locator("pre.crash-output").evaluate("e => e.textContent") == \
        first["crash"]["output"]
    assert row.locator(".crash p").inner_text() == \
        f"worker process: signal {EVIL}, exit code {PAYLOADS[0]}"
    assert row.locator("ul.spec li").first.inner_text() == f"{EVIL} ({EVIL_URL}) § {EVIL}"
    assert row.locator("table.mismatches td").first.inner_text() == EVIL
    assert row.locator("ul.info li").inner_text() == EVIL
    assert EVIL in page.locator("#provenance").inner_text()
    # the new fields: diagnosis, reading keys, execution flags, the diagnosis summary
    assert row.locator(".diagnosis-text").evaluate("e => e.textContent") == \
        f"the output equals {EVIL}"
    assert row.locator("summary .reading").all_inner_texts() == [PAYLOADS[0], EVIL]
    assert page.locator("#execution-flags").evaluate("e => e.textContent") == \
        f"{EVIL}|{PAYLOADS[1]}"
    assert page.locator("#diagnoses tr[data-reading] code").all_inner_texts() == [
        EVIL, PAYLOADS[1]]
    warned = page.locator("#warnings details.case")
    assert warned.get_attribute("data-id") == doc["results"][-1]["id"]
    assert warned.locator(".msg").evaluate("e => e.textContent") == doc["results"][-1]["message"]

    # the filters still work
    all_rows = sorted(r["id"] for r in doc["results"])
    assert sorted(p.visible_ids()) == all_rows
    page.select_option("#f-status", "TIMEOUT")
    assert p.visible_ids() == [r["id"] for r in doc["results"] if r["status"] == "TIMEOUT"]
    page.select_option("#f-status", "")
    page.select_option("#f-op", label=PAYLOADS[1])  # an operator name with spaces and quotes
    assert sorted(p.visible_ids()) == sorted(r["id"] for r in doc["results"]
                                             if PAYLOADS[1] in r["operators"])
    page.select_option("#f-op", "")
    page.fill("#f-text", '"><svg onload')
    assert sorted(p.visible_ids()) == all_rows  # every message (and reason) carries it
    page.fill("#f-text", "case-3/")
    assert doc["results"][3]["status"] == "NOT_SUPPORTED"  # listed in its reason's group
    assert p.visible_ids() == [doc["results"][3]["id"]]
    page.fill("#f-text", "case-2/")
    assert p.visible_ids() == [doc["results"][2]["id"]]
    page.fill("#f-text", "")
    assert page.evaluate("() => typeof window.__pwned") == "undefined"
    assert p.dialogs == [] and p.errors == []
    page.close()


def test_the_resumed_filter_shows_the_cases_taken_from_the_journal(browser: Any,
                                                                    tmp_path: Path) -> None:
    """A resumed run (--resume): a headline counts the cases taken from the journal, each is
    marked "resumed" (a row's mark, an id block's), and the Resumed filter shows them alone,
    or the others, every section's count following."""
    doc = mixed_document()
    ids = [r["id"] for r in doc["results"]]
    taken = [ids[0], ids[1], ids[7]]  # a PASS (an id block), a FAIL (a row), a NOT_SUPPORTED
    doc["execution"] = {"workers": 1, "isolated": True, "tamper_proof": True,
                        "resumed_cases": 3, "resumed": taken}
    p = open_report(browser, tmp_path, doc)
    page = p.page
    assert page.locator("#resumed").inner_text().startswith(
        f"RESUMED: 3 of {len(ids)} results were taken from the journal")
    assert page.locator(f'details.case[data-id="{ids[1]}"] .resumed-mark').inner_text() == (
        "resumed")
    page.select_option("#f-resumed", "1")
    assert sorted(p.visible_ids()) == sorted(taken)
    assert p.section_counts()["failures"] == "1 of 3"
    page.select_option("#f-resumed", "0")
    assert sorted(p.visible_ids()) == sorted(set(ids) - set(taken))
    page.select_option("#f-resumed", "")
    assert sorted(p.visible_ids()) == sorted(ids)
    assert p.errors == [] and p.dialogs == []
    page.close()


#: The page's width against the window's, and each table's box (the .scroll around it; tables
#: inside a table cell are their cell's): its right edge, how it overflows sideways, and its
#: content's width against its own.
FIT = """() => ({
  page: document.scrollingElement.scrollWidth, window: window.innerWidth,
  boxes: Array.from(document.querySelectorAll('table'))
    .filter(t => t.offsetParent !== null && !t.parentElement.closest('td'))
    .map(t => { const box = t.parentElement, r = box.getBoundingClientRect();
                return {id: t.id || t.className, box: box.className, right: r.right,
                        overflow: getComputedStyle(box).overflowX,
                        scroll: box.scrollWidth, client: box.clientWidth}; }),
  verdictLines: Array.from(document.querySelectorAll('#verdict td[data-verdict]')).map(
    td => (td.clientHeight - 4) / parseFloat(getComputedStyle(td).lineHeight))})"""
#: Where a row's summary is against the filter bar's bottom edge (the bar is sticky).
UNDER_BAR = """id => { const row = document.getElementById(id);
  return {open: row.open, summary: row.querySelector('summary').getBoundingClientRect().top,
          bar: document.getElementById('filters').getBoundingClientRect().bottom,
          sticky: getComputedStyle(document.getElementById('filters')).position}; }"""


@pytest.mark.parametrize("width", [1280, 800])
def test_the_report_reads_at_1280_and_800_px(browser: Any, tmp_path: Path, width: int) -> None:
    """Issue 27. A narrow backend's run with a large failing output, at 1280 and 800 px: no
    page-wide horizontal scroll (closed, and with every row open); each table in a box of its
    own that scrolls sideways (at 800 px the verdict table does), the verdict column on a few
    lines; a row jumped to by its anchor, or opened under the sticky filter bar, is not under
    it; the large failing output shows its heat map and says why its grid is left out. A
    screenshot of each width is kept under tmp_path."""
    doc = narrow_document()
    doc["results"].append(large_failure())
    path = tmp_path / "report.html"
    report.write(report.render_html(typed(doc)), path)
    p = Page(browser, path)
    page = p.page
    page.set_viewport_size({"width": width, "height": 800})
    for opened in (False, True):
        if opened:
            page.evaluate("() => document.querySelectorAll('details').forEach(d => d.open = true)")
        g = page.evaluate(FIT)
        assert g["window"] == width and g["page"] <= width, (opened, g["page"])
        assert g["boxes"] and all(b["box"] == "scroll" and b["overflow"] == "auto"
                                  and b["right"] <= width for b in g["boxes"]), g["boxes"]
        scrolled = {b["id"] for b in g["boxes"] if b["scroll"] > b["client"]}
        assert ("verdict" in scrolled) is (width == 800), scrolled
        assert max(g["verdictLines"]) < 5, g["verdictLines"]
        shot = tmp_path / f"report-{width}{'-open' if opened else ''}.png"
        page.screenshot(path=str(shot))
        assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 1000

    # the large failure: a heat map, drawn, and the note of the grid left out
    anchor = page.evaluate("id => Array.from(document.querySelectorAll('details.case'))"
                           ".find(r => r.dataset.id === id).id", LARGE_ID)
    row = page.locator(f"#{anchor}")
    picture = row.locator("figure.heat-map img")
    assert picture.count() == 1 and picture.is_visible()
    assert picture.evaluate("i => i.complete && i.naturalWidth > 0 && i.naturalHeight > 0")
    box = picture.bounding_box()
    assert box and 0 < box["x"] and box["x"] + box["width"] <= width
    assert "grid left out: 320 elements" in row.locator("p.grid-note").inner_text()

    # the sticky bar covers no row: one jumped to by its anchor opens below it ...
    page.evaluate("() => document.querySelectorAll('details').forEach(d => d.open = false)")
    page.goto(f"{path.as_uri()}#{anchor}")
    page.wait_for_timeout(100)
    where = page.evaluate(UNDER_BAR, anchor)
    assert where["open"] and where["sticky"] == "sticky" and where["summary"] >= where["bar"]
    # ... and one opened while the bar covers it comes out from under it
    first = page.evaluate("() => document.querySelector('details.case').id")
    page.evaluate("id => { const r = document.getElementById(id); r.open = false;"
                  " window.scrollBy(0, r.getBoundingClientRect().top - 4); }", first)
    page.wait_for_timeout(100)
    where = page.evaluate(UNDER_BAR, first)
    assert where["summary"] < where["bar"]  # under the bar, as the test set it
    page.evaluate("id => { document.getElementById(id).open = true; }", first)
    page.wait_for_timeout(100)
    where = page.evaluate(UNDER_BAR, first)
    assert where["open"] and where["summary"] >= where["bar"], where
    assert p.errors == [] and p.dialogs == []
    page.close()
