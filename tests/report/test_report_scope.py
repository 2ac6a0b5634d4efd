"""The reports of a scoped claim and of cases not claimed (docs/certification.md, "Scoped
certification"): the verdict names the scope; a level whose cases were only not claimed reads
"not covered" in the neutral colour, a failing one "NOT conformant" in red."""

from __future__ import annotations

import re

import pytest

from conformance import report
from conformance.levels import FeatureLevel
from conformance.results import Result, ResultsDocument, Scope, document, mustpass


def _doc(found: list[Result], scope: Scope | None) -> ResultsDocument:
    return document(found, backend={"name": "t"}, case_set_sha256="",
                    claimed=FeatureLevel.parse("2_1"), started_at="2026-01-01T00:00:00+00:00",
                    finished_at="2026-01-01T00:00:01+00:00", duration_s=1.0,
                    command="dmlconf run", case_paths=[], scope=scope)


def _cells(html_text: str) -> dict[str, tuple[str, str]]:
    """level -> (the verdict cell's class, its words)."""
    return {level: (cls, words) for level, cls, words in re.findall(
        r'<tr data-level="(\w+)"><td>\w+</td><td class="([\w-]+)" data-verdict>([^<]*)</td>',
        html_text)}


def _results(*rows: tuple[str, str, str]) -> list[Result]:
    return [Result(id=f"t/{i}", status=status, feature_level="2_1", operators=[op],
                   data_types=[dtype]) for i, (status, op, dtype) in enumerate(rows)]


ONLY_RESAMPLE1 = _results(("PASS", "RESAMPLE1", "FLOAT32"),
                          ("NOT_SUPPORTED", "DEPTH_TO_SPACE1", "UINT8"))


def test_not_covered_is_neutral_and_fails_red(monkeypatch: pytest.MonkeyPatch) -> None:
    # the mustpass list of 2_1 is these cases' ids: the run covers it
    lists = mustpass.Mustpass("0", "", {lv: frozenset(r.id for r in ONLY_RESAMPLE1)
                                        for lv in ("1_0", "2_0", "2_1")})
    monkeypatch.setattr(mustpass, "committed", lambda: lists)
    unscoped = report.render_html(_doc(ONLY_RESAMPLE1, None))
    cls, words = _cells(unscoped)["2_1"]
    assert cls == "none" and words.startswith("not covered: 1 mandatory case NOT_SUPPORTED")
    scoped_doc = _doc(ONLY_RESAMPLE1, Scope.parse(["RESAMPLE1:FLOAT32"]))
    cls, words = _cells(report.render_html(scoped_doc))["2_1"]
    assert (cls, words) == ("yes", "conformant for RESAMPLE1 (FLOAT32)")
    md = report.render_markdown(scoped_doc)
    assert "conformant for RESAMPLE1 (FLOAT32)" in md
    assert md.splitlines()[0] == ("## DirectML conformance: t at feature level 2_1 for RESAMPLE1 "
                                  "(FLOAT32)")
    assert "| Scope | RESAMPLE1 (FLOAT32) (the cases outside it are not covered) |" in md
    assert ("<h1>DirectML conformance: t at feature level 2_1 for RESAMPLE1 (FLOAT32)</h1>"
            in report.render_html(scoped_doc))
    failing = _results(("FAIL", "RESAMPLE1", "FLOAT32"), ("NOT_SUPPORTED", "RESAMPLE1", "INT8"))
    lists.lists["2_1"] = frozenset(r.id for r in failing)
    cls, words = _cells(report.render_html(_doc(failing, None)))["2_1"]
    assert (cls, words) == ("no", "NOT conformant")
