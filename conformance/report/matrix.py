"""The cross-implementation matrix's faces (`dmlconf matrix`, conformance.results.matrix builds
it): Markdown (templates/matrix.md.j2: the runs, levels, families, slices, findings,
NOT_SUPPORTED reasons and the cases where the runs disagree) and a self-contained HTML page
(templates/matrix.html.j2: the same, every case, and filters)."""

from __future__ import annotations

import json
from typing import Any

from markupsafe import Markup

from conformance.present import not_claimed, verdict_words
from conformance.report.common import environment, repro_command
from conformance.results import PASSING, ResultsDocument, read, reading_words
from conformance.results import matrix as runs

#: The disagreeing cases the Markdown lists (the HTML holds them all).
MAX_CASES = 200
#: The NOT_SUPPORTED reasons the Markdown names per run.
MAX_REASONS = 8


def load(paths: list[str]) -> runs.Matrix:
    """The matrix of the results files, in the order given."""
    return runs.build([(p, read(p)) for p in paths],
                      lambda doc: repro_command(doc, runs.REPRO_CASE), verdicts)


def verdicts(doc: ResultsDocument) -> dict[str, tuple[str, str]]:
    """Each level's (status, words) as every report words it: a level whose mandatory cases
    were all NOT_SUPPORTED is "not claimed" (NOT_SUPPORTED), never NOT conformant."""
    words = verdict_words(doc)
    return {level: ("NOT_SUPPORTED" if not_claimed(v) else "PASS" if v.conformant
                    else "FAIL" if v.conformant is False else "", words[level])
            for level, v in doc.verdict.items()}


def interop(row: runs.Row) -> str:
    if row.interop is None:
        return "-"
    return f"{100 * row.interop:.1f}% of {row.common}"


def counts_text(cell: runs.Cell) -> str:
    """How many of a group's cases the run passed, and what else they were."""
    passed = sum(n for s, n in cell.counts.items() if s in PASSING)
    other = ", ".join(f"{s} {n}" for s, n in sorted(cell.counts.items()) if n and s not in PASSING)
    return f"{passed} of {sum(cell.counts.values())} pass" + (f", {other}" if other else "")


def group_text(cell: runs.Cell) -> str:
    """A slice's or family's cell: its status, counts_text, and the readings its FAILs were
    diagnosed as."""
    if not cell.status:
        return ""
    readings = f"; {', '.join(cell.readings[:3])}" if cell.readings else ""
    return f"{cell.status}: {counts_text(cell)}{readings}"


def case_text(cell: runs.Cell) -> str:
    if not cell.status:
        return "not run"
    return cell.status + (f": {', '.join(cell.readings)}" if cell.readings else "")


def finding_words(f: runs.Finding) -> str:
    if f.kind == "misreading":
        return "the output equals " + reading_words(f.key)
    return "a known failure of the run's baseline"


def render_markdown(m: runs.Matrix, max_cases: int = MAX_CASES) -> str:
    return environment(False).get_template("matrix.md.j2").render(
        m=m, interop=interop, group_text=group_text, case_text=case_text,
        finding_words=finding_words, disagree=[r for r in m.cases if r.disagree],
        max_cases=max_cases, max_reasons=MAX_REASONS)


def _script_json(value: Any) -> str:
    """JSON that is safe inside a <script> element: '<', '>' and '&' as \\u escapes (no
    '</script>' or '<!--' can close it), and U+2028/9 escaped."""
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    for ch, esc in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"),
                    ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        text = text.replace(ch, esc)
    return text


def data(m: runs.Matrix) -> dict[str, Any]:
    """What the HTML page's script renders: columns, rows (cells as [status, note, readings]),
    findings, reasons. Statuses and readings are numbered once (the cells hold indices) so 10
    runs of 7,000 cases stay a few megabytes."""
    statuses: dict[str, int] = {}
    readings: dict[str, int] = {}

    def num(table: dict[str, int], key: str) -> int:
        return table.setdefault(key, len(table))

    def cells(row: runs.Row, notes: bool) -> list[Any]:
        return [[num(statuses, c.status), c.note if notes else "",
                 [num(readings, x) for x in c.readings],
                 counts_text(c) if c.counts else ""] for c in row.cells]

    def rows(rs: tuple[runs.Row, ...], notes: bool) -> list[Any]:
        return [{"key": r.key, "op": r.operator, "type": r.data_type, "family": r.family,
                 "ambiguous": r.ambiguous, "interop": interop(r) if r.kind != "case" else "",
                 "disagree": r.disagree, "lone": r.lone_failure, "cells": cells(r, notes)}
                for r in rs]

    out = {
        "columns": [c.__dict__ for c in m.columns],
        "levels": rows(m.levels, True), "families": rows(m.families, False),
        "slices": rows(m.slices, False), "cases": rows(m.cases, True),
        "findings": [{"kind": f.kind, "key": f.key, "words": finding_words(f),
                      "cases": list(f.cases)} for f in m.findings],
        "unsupported": [list(map(list, u)) for u in m.unsupported],
    }
    out["statuses"] = list(statuses)
    out["readings"] = list(readings)
    return out


def render_html(m: runs.Matrix) -> str:
    return environment(True).get_template("matrix.html.j2").render(
        m=m, data=Markup(_script_json(data(m))), placeholder=runs.REPRO_CASE)
