"""The HTML report (`render_html`, templates/report.html.j2): one file with inline CSS and JS,
and an inline SVG histogram of the margins drawn here (`histogram_svg`), not by a script. It
opens on the failures (SECTIONS), lists NOT_SUPPORTED cases by reason and PASS cases as
collapsed lists of ids (no row each: a run of 60,000 cases stays light), its filters move every
section's count, and its matrices have the operators as columns, to fit a 1,280 px window; at
800 px and below each table scrolls sideways in a box of its own, never the page, and what the
page scrolls to stops below the sticky filter bar. Zero counts are neutral (`count_class`). A
banner opens it with the run's outcome and exit status (report.headline); a failing output
shows its heat map (report.heat_map) and a grid left out says why.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from markupsafe import Markup, escape

from conformance.present import not_claimed, verdict_words
from conformance.report.common import (
    NO_DATA_TYPE,
    WARNING,
    case_data_type,
    closest,
    crash_line,
    crash_output,
    diagnosis_of,
    diagnosis_summary,
    environment,
    execution_text,
    expectations_line,
    flags_text,
    incomplete_line,
    integrity_line,
    largest_margin,
    load_errors,
    margin_histogram,
    margin_of,
    margin_text,
    repro_command,
    resumed,
    resumed_ids,
    shard_line,
)
from conformance.report.headline import (
    backend_class,
    backend_name,
    claim,
    outcome,
    scope_text,
)
from conformance.report.heat_map import grid_notes, picture
from conformance.results import STATUSES, Result, ResultsDocument, Status, case_family

#: Statuses from worst to best: a matrix cell is coloured by the first one it holds. A
#: QUALITY_WARNING passes (results.PASSING) but is worth a look: after NOT_SUPPORTED, which
#: denies a verdict, before PASS.
WORST_FIRST = (Status.ERROR, Status.TIMEOUT, Status.FAIL, Status.XPASS, Status.XFAIL,
               Status.NOT_SUPPORTED, Status.QUALITY_WARNING, Status.PASS)
#: Short names of long statuses in the matrices' cells (their title gives the full name).
SHORT = {Status.NOT_SUPPORTED: "N/S", WARNING: "Q/W"}
#: The cases closest to the bound the report lists.
CLOSEST_HTML = 20

_WEB_URL = re.compile(r"https?://", re.IGNORECASE)


def web_url(value: Any) -> str | None:
    """`value` when it is an http(s) address, the only kind the HTML report puts in an href;
    None for anything else (a `javascript:` or `data:` URL, a relative path, not text)."""
    return value if isinstance(value, str) and _WEB_URL.match(value) else None


def histogram_svg(h: dict[str, Any], width: int = 520, height: int = 180) -> dict[str, Any]:
    """The geometry of the histogram's picture (rendered by the template as an inline SVG,
    whose text is escaped like the rest): one bar per bin, its height proportional to its
    count; the x axis labelled at each decade."""
    left, right, top, bottom = 40, 10, 16, 30
    plot_w, plot_h = width - left - right, height - top - bottom
    most = max((b["count"] for b in h["bins"]), default=0) or 1
    step = plot_w / len(h["bins"])
    bars = []
    for k, b in enumerate(h["bins"]):
        bar_h = round(plot_h * b["count"] / most, 1)
        bars.append({**b, "x": round(left + k * step + 1, 1), "w": round(step - 2, 1),
                     "y": round(top + plot_h - bar_h, 1), "h": bar_h,
                     "label_x": round(left + (k + 0.5) * step, 1),
                     "range": f"{b['low']:.2g} to {b['high']:.2g}",
                     "low": f"{b['low']:.3g}", "high": f"{b['high']:.3g}"})
    ticks = [{"x": round(left + 2 * d * step, 1), "label": f"1e-{6 - d}" if d < 6 else "1"}
             for d in range(7)]
    return {"width": width, "height": height, "bars": bars, "ticks": ticks, "most": most,
            "left": left, "base": top + plot_h, "top": top, "right": width - right}


def _matrix(results: list[Result], row: Callable[[Result], str]) -> dict[str, Any]:
    """Row (data type or family) x operator: per cell the count of each status, and the worst
    status in it. The operators are the columns: there are fewer of them than data types or
    families, so the table fits a 1,280 px window (tests/report/test_report_browser.py)."""
    cells: dict[tuple[str, str], dict[str, int]] = {}
    rows: set[str] = set()
    cols: set[str] = set()
    for r in results:
        key = row(r)
        rows.add(key)
        for op in r.operators or [NO_DATA_TYPE]:
            cols.add(str(op))
            cell = cells.setdefault((key, str(op)), dict.fromkeys(STATUSES, 0))
            cell[r.status] += 1
    worst = {key: next(s for s in WORST_FIRST if c[s]) for key, c in cells.items()}
    return {"rows": sorted(rows, key=lambda c: (c == NO_DATA_TYPE, c)), "cols": sorted(cols),
            "cells": cells, "worst": worst}


#: The sections of the HTML report's case list, in the order it shows them (failures first):
#: (name, title). NOT_SUPPORTED and PASS cases are not rows: they are listed by id in
#: collapsed groups (NOT_SUPPORTED by reason), which a run of 60,000 cases keeps light.
SECTIONS = (("failures", "Failures: FAIL, ERROR, TIMEOUT"),
            ("xpass", "Unexpected passes: XPASS"),
            ("warnings", "Quality warnings: inside the legal envelope, outside the strict "
                         "reading"),
            ("waived", "Waived failures: XFAIL under a waiver (each with its reason and "
                       "expiry: they do not deny the verdict)"),
            ("xfail", "Expected failures: XFAIL (the baseline's)"),
            ("ambiguous", "Ambiguous cases that do not pass"),
            ("unsupported", "Not supported: NOT_SUPPORTED, by reason"),
            ("passing", "Passing: PASS"))
#: The order of the statuses in the failures section and in the status filter.
LIST_ORDER = (Status.FAIL, Status.ERROR, Status.TIMEOUT, Status.XPASS, WARNING, Status.XFAIL,
              Status.NOT_SUPPORTED, Status.PASS)


def _section(r: Result) -> str:
    status = r.status
    if status in (Status.NOT_SUPPORTED, Status.PASS):
        return {Status.NOT_SUPPORTED: "unsupported", Status.PASS: "passing"}[status]
    if status == WARNING:  # every warned case in one list, ambiguous ones too
        return "warnings"
    if r.ambiguous:
        return "ambiguous"
    if status == Status.XFAIL and r.waiver:
        return "waived"
    return {Status.XFAIL: "xfail", Status.XPASS: "xpass"}.get(status, "failures")


def _id_groups(doc: ResultsDocument, status: Status, op_index: dict[str, str],
               taken: frozenset[str] = frozenset()) -> list[dict[str, Any]]:
    """The results of a status as groups of ids for the HTML report: NOT_SUPPORTED by reason
    (the most frequent first), PASS as one group; in each group one block of ids (one a line)
    per operators, data type and whether --resume took them from the journal (`taken`: marked
    "resumed"), which the filters show or hide whole, and the command that reruns the group's
    first case alone (one that holds below the claimed level runs at its own level)."""
    groups: dict[str, dict[tuple[str, str, bool], list[str]]] = {}
    first: dict[str, Result] = {}
    for r in doc.results:
        if r.status != status:
            continue
        reason = str(r.message or "") if status == Status.NOT_SUPPORTED else ""
        first.setdefault(reason, r)
        ops = " ".join(op_index[str(op)] for op in r.operators or [])
        # one id a line: a line end inside an id (none is loaded so) would split it
        case_id = " ".join(str(r.id).splitlines())
        key = (ops, case_data_type(r), r.id in taken)
        groups.setdefault(reason, {}).setdefault(key, []).append(case_id)
    out = []
    for reason, blocks in groups.items():
        out.append({"reason": reason, "count": sum(map(len, blocks.values())),
                    "repro": repro_command(doc, first[reason]),
                    "blocks": [{"ops": ops, "dtype": dtype, "n": len(ids),
                                "ids": "\n".join(ids), "resumed": was}
                               for (ops, dtype, was), ids in sorted(blocks.items())]})
    return sorted(out, key=lambda g: (-g["count"], g["reason"]))


def count_class(status: str, n: Any) -> str:
    """The CSS class of a count of a status: "zero" (neutral) for none, else the status's
    colour: only counts that are there are coloured, alarms (FAIL, ERROR...) included."""
    return f"st-{status}" if n else "zero"


_WORD_BREAK = Markup("_<wbr>")


def breakable(value: Any) -> Markup:
    """Escaped text that a narrow column may wrap after each underscore (an operator's name,
    QUALITY_WARNING)."""
    return escape(value).replace("_", _WORD_BREAK)


def _unit(value: Any) -> float:
    """`value` clamped to [0, 1]; 1 for anything that is not a finite number."""
    try:
        x = float(value)
    except (TypeError, ValueError):
        return 1.0
    return min(max(x, 0.0), 1.0) if x == x else 1.0


def grid_rows(g: dict[str, Any]) -> dict[str, Any]:
    """A kept tensor (compare.grid) as rows of its last dimension, each labelled by the
    indices before it; differing cells carry the expected value and a shade (the relative
    error for float outputs, full for the others)."""
    shape = g.get("shape") or [len(g["got"])]
    width = shape[-1] if shape else 1
    lead = shape[:-1]
    rows = []
    for start in range(0, len(g["got"]), max(width, 1)):
        index: list[int] = []
        rest = start // max(width, 1)
        for size in reversed(lead):
            index.insert(0, rest % size)
            rest //= size
        cells = []
        for k in range(start, min(start + width, len(g["got"]))):
            bad = bool(g.get("bad", [0] * len(g["got"]))[k])
            error = (g.get("error") or [1.0] * len(g["got"]))[k]
            cells.append({"got": g["got"][k], "bad": bad,
                          "expected": g["expected"][k] if "expected" in g else "",
                          "shade": round(0.15 + 0.7 * _unit(error), 3)})
        rows.append((", ".join(map(str, index)) + (", :" if index else ":"), cells))
    return {"tensor": g["tensor"], "shape": shape, "rows": rows, "outputs": "bad" in g,
            "heat": "error" in g}


def render_html(doc: ResultsDocument, comparison: Any = None) -> str:
    """One self-contained HTML page (inline CSS and JS, no external asset), failures first:
    the verdict per level (a level not claimed with its reasons), the counts, the diagnosis
    summary, then the cases by section (SECTIONS: FAIL/ERROR/TIMEOUT, XPASS, QUALITY_WARNING,
    XFAIL, ambiguous: one expandable row each; NOT_SUPPORTED summarised per reason and PASS,
    collapsed, as lists of ids), with filters (status, operator, data type, text) that every
    section's count follows (and, in a resumed run, a filter of the cases --resume took from
    the journal, each marked "resumed", under a headline that counts them); then the data type
    x operator and family x operator matrices,
    the margins (an inline SVG histogram and the cases closest to the bound), the notes and
    the provenance (execution flags included). Everything from the document is escaped by
    Jinja's autoescape; the script only reads data attributes and text and writes with
    textContent. comparison: a conformance.results.diff.Diff against an earlier run, shown as
    its own section."""
    results = doc.results
    operators = sorted({str(op) for r in results for op in r.operators or []})
    # the operator filter matches option indices: a name may hold spaces
    op_index = {op: str(i) for i, op in enumerate(operators)}
    rank = {s: k for k, s in enumerate(LIST_ORDER)}
    taken = resumed_ids(doc)
    rows: list[dict[str, Any]] = []
    for k, r in enumerate(results):
        section = _section(r)
        if section in ("unsupported", "passing"):
            continue
        heat_maps = r.heat_maps if isinstance(r.heat_maps, list) else []
        rows.append({"r": r, "dtype": case_data_type(r), "family": case_family(r),
                     "anchor": f"case-{k}",
                     "ops": " ".join(op_index[str(op)] for op in r.operators or []),
                     "section": section, "repro": repro_command(doc, r),
                     "crash": crash_line(r.crash),
                     "crash_output": crash_output(r.crash),
                     "mismatches": [m for m in r.mismatches or [] if isinstance(m, dict)],
                     "grids": [grid_rows(g) for g in r.grids or []
                               if isinstance(g, dict) and g.get("got")],
                     "heat_maps": [p for h in heat_maps if (p := picture(h))],
                     "grid_notes": grid_notes(r.grids, heat_maps),
                     "margin": margin_of(r),
                     "diagnosis": diagnosis_of(r), "resumed": r.id in taken})
    rows.sort(key=lambda x: rank.get(x["r"].status, len(rank)))  # stable: run order kept
    sections = {name: [x for x in rows if x["section"] == name] for name, _ in SECTIONS}
    unsupported = _id_groups(doc, Status.NOT_SUPPORTED, op_index, taken)
    passing = _id_groups(doc, Status.PASS, op_index, taken)
    totals = {name: len(rows) for name, rows in sections.items()}
    totals.update(unsupported=sum(g["count"] for g in unsupported),
                  passing=sum(g["count"] for g in passing))
    # passing ambiguous cases have no row in the ambiguous section (a warned one is listed
    # with the warnings)
    ambiguous_pass = sum(1 for r in results
                         if r.ambiguous and r.status in (Status.PASS, WARNING))
    histogram = margin_histogram(results)
    info = [r for r in results if r.info]
    backend = doc.backend or {}
    present = {r.status for r in results}
    env = environment(True)
    env.filters["fmt_index"] = lambda v: ", ".join(str(i) for i in v) \
        if isinstance(v, list) else str(v)
    env.filters.update(web_url=web_url, margin=margin_text, breakable=breakable)
    return env.get_template("report.html.j2").render(
        doc=doc, outcome=outcome(doc), backend_title=backend_name(backend), claim=claim(doc),
        scope=scope_text(doc),
        backend_class=backend_class(backend),
        statuses=STATUSES, verdicts=doc.verdict, words=verdict_words(doc),
        not_claimed=not_claimed, count_class=count_class,
        backend=backend, capabilities=backend.get("capabilities") or {},
        platform=doc.platform or {}, section_titles=SECTIONS, sections=sections,
        unsupported=unsupported, passing=passing, totals=totals, ambiguous_pass=ambiguous_pass,
        info=info, total=len(results),
        by_dtype=_matrix(results, case_data_type), by_family=_matrix(results, case_family),
        operators=operators,
        dtypes=sorted({case_data_type(r) for r in results},
                      key=lambda c: (c == NO_DATA_TYPE, c)),
        present=[s for s in LIST_ORDER if s in present],
        comparison=comparison, incomplete=incomplete_line(doc), shard=shard_line(doc),
        integrity=integrity_line(doc), resumed=resumed(doc),
        expectations=expectations_line(doc),
        load_errors=load_errors(doc), execution=execution_text(doc.execution),
        flags=flags_text(doc), short=SHORT, histogram=histogram,
        svg=histogram_svg(histogram) if histogram["judged"] else None,
        closest=closest(results, CLOSEST_HTML), largest=largest_margin(results),
        diagnoses=diagnosis_summary(doc))
