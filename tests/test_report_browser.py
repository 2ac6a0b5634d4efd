"""The HTML report in a real browser: the system Chromium driven by Playwright, headless, no
network. Skipped (with the reason) when /usr/bin/chromium or the playwright package is
missing; Playwright's own browser download is never used."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conformance import report
from tests.support.documents import (
    EVIL,
    EVIL_URL,
    MARKUP_ID,
    MARKUP_MESSAGE,
    PAYLOADS,
    WARNED_ID,
    hostile_document,
    mixed_document,
    synthetic_document,
)

CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]

if not CHROMIUM.exists():
    pytest.skip(f"{CHROMIUM} is missing (apt-get install -y chromium)", allow_module_level=True)
sync_api = pytest.importorskip("playwright.sync_api",
                               reason="playwright is missing (pip install playwright)")


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        yield b
        b.close()


class Page:
    """A page of the report with its console errors and dialogs recorded."""

    def __init__(self, browser: Any, path: Path) -> None:
        self.errors: list[str] = []
        self.dialogs: list[str] = []
        self.page = browser.new_page()
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


def open_report(browser: Any, tmp_path: Path, doc: dict) -> Page:
    path = tmp_path / "report.html"
    report.write(report.render_html(doc), path)
    return Page(browser, path)


def test_verdict_counts_filters_and_details(browser: Any, tmp_path: Path) -> None:
    doc = mixed_document()
    p = open_report(browser, tmp_path, doc)
    page = p.page
    for level, v in doc["verdict"].items():
        shown = page.locator(f'#verdict tr[data-level="{level}"] td[data-verdict]').inner_text()
        assert shown == report._verdict_word(v)
    for status, n in doc["summary"].items():
        assert page.locator(f'#counts td[data-status="{status}"]').inner_text() == str(n)

    non_pass = [r["id"] for r in doc["results"] if r["status"] != "PASS"]
    assert sorted(p.visible_rows()) == sorted(non_pass)
    page.select_option("#f-status", "ERROR")
    assert p.visible_rows() == [r["id"] for r in doc["results"] if r["status"] == "ERROR"]
    page.select_option("#f-status", "QUALITY_WARNING")
    assert p.visible_rows() == [WARNED_ID]
    assert page.evaluate("() => Array.from(document.querySelectorAll('#warnings details.case'))"
                         ".map(r => r.dataset.id)") == [WARNED_ID]
    page.select_option("#f-status", "")
    assert sorted(p.visible_rows()) == sorted(non_pass)
    page.select_option("#f-dtype", "FLOAT16")
    assert sorted(p.visible_rows()) == ["generated/layouts/depth_to_space1/bad/float16",
                                        WARNED_ID]
    page.select_option("#f-dtype", "")
    page.fill("#f-text", "alert(1)")
    assert p.visible_rows() == [MARKUP_ID]
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


def test_large_report_loads_quickly(browser: Any, tmp_path: Path) -> None:
    doc = synthetic_document()
    p = open_report(browser, tmp_path, doc)
    assert len(p.visible_rows()) == 500
    start = time.perf_counter()
    p.page.fill("#f-text", "case-12/")
    filtered = len(p.visible_rows())
    filter_s = time.perf_counter() - start
    assert filtered == 1
    assert p.errors == []
    print(f"6,000-case report: loaded in {p.load_s:.3f} s, text filter {filter_s:.3f} s")
    assert p.load_s < 10
    p.page.close()


def test_hostile_payloads_stay_text(browser: Any, tmp_path: Path) -> None:
    """Every string of the document carries script, markup, template and javascript: URL
    payloads: none runs or becomes an element, each is shown literally, the filters work."""
    doc = hostile_document()
    p = open_report(browser, tmp_path, doc)
    page = p.page
    page.evaluate("() => document.querySelectorAll('details.case').forEach(d => d.open = true)")
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
    assert sorted(p.visible_rows()) == all_rows
    page.select_option("#f-status", "TIMEOUT")
    assert p.visible_rows() == [r["id"] for r in doc["results"] if r["status"] == "TIMEOUT"]
    page.select_option("#f-status", "")
    page.select_option("#f-op", label=PAYLOADS[1])  # an operator name with spaces and quotes
    assert p.visible_rows() == [r["id"] for r in doc["results"] if PAYLOADS[1] in r["operators"]]
    page.select_option("#f-op", "")
    page.fill("#f-text", '"><svg onload')
    assert sorted(p.visible_rows()) == all_rows  # every message carries it
    page.fill("#f-text", "case-3/")
    assert p.visible_rows() == [doc["results"][3]["id"]]
    page.fill("#f-text", "")
    assert page.evaluate("() => typeof window.__pwned") == "undefined"
    assert p.dialogs == [] and p.errors == []
    page.close()
