"""The cross-implementation matrix (conformance.results.matrix, conformance.report.matrix,
`dmlconf matrix`; issue 26): columns from each run's provenance, group cells and interop
counted by hand on a small set of runs, the disagreement filters' flags, findings, NOT_SUPPORTED
reasons, and hostile text in every face. The browser checks are in test_report_matrix_browser.py.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from conformance.cli import main
from conformance.report import matrix as face
from conformance.results import write
from conformance.results.matrix import REPRO_CASE, Matrix, build, passing
from tests.support.documents import EVIL, document, hostile_document, result, typed


def _run(name: str, statuses: dict[str, str], **backend: object) -> dict:
    """A run of `name` over the cases of `statuses` (id -> status), RESAMPLE1 FLOAT32 in the
    offsets family but for ids holding 'int8' (INT8, the tables family)."""
    results = []
    for case_id, status in statuses.items():
        int8 = "int8" in case_id
        extra: dict = {"operators": ["RESAMPLE1"], "data_types": ["INT8" if int8 else "FLOAT32"],
                       "tags": ["tables" if int8 else "offsets", "resample1"]}
        message = {"FAIL": "OutputTensor: 1 of 4 elements differ",
                   "NOT_SUPPORTED": f"{name} does not run INT8",
                   "XFAIL": "expected FAIL (floor at the 8-bit types; issue 7): 1 of 4 differ",
                   }.get(status, "")
        if status in ("FAIL", "XFAIL"):
            extra["diagnosis"] = {"readings": ["nearest-floor"], "text": "floor"}
        results.append(result(case_id, status, message, **extra))
    doc = document(results)
    doc["backend"] = {"name": name, "class": f"m.{name}", "capabilities": {},
                      "environment": {"version": f"{name} 1.0", **backend}}
    return doc


CASES = ["a/f32", "b/f32", "c/f32", "d/int8"]
RUNS = [
    ("one.json", _run("one", dict.fromkeys(CASES, "PASS"), adapter="GPU A")),
    ("two.json", _run("two", {"a/f32": "PASS", "b/f32": "FAIL", "c/f32": "PASS",
                              "d/int8": "NOT_SUPPORTED"})),
    ("three.json", _run("one", {"a/f32": "PASS", "b/f32": "XFAIL", "c/f32": "PASS",
                                "d/int8": "PASS"})),
]


@pytest.fixture
def m() -> Matrix:
    return build([(p, typed(d)) for p, d in RUNS], lambda doc: f"dmlconf run -k {REPRO_CASE}",
                 face.verdicts)


def test_columns_come_from_each_runs_provenance(m: Matrix) -> None:
    assert [c.label for c in m.columns] == ["one", "two", "one (2)"]  # unique labels
    assert m.columns[0].version == "one 1.0" and m.columns[0].adapter == "GPU A"
    assert m.columns[0].path == "one.json" and m.columns[0].cases == 4
    assert m.columns[1].repro == f"dmlconf run -k {REPRO_CASE}"


def test_cases_flag_disagreement_and_a_lone_failure(m: Matrix) -> None:
    rows = {r.key: r for r in m.cases}
    assert [c.status for c in rows["b/f32"].cells] == ["PASS", "FAIL", "XFAIL"]
    assert rows["b/f32"].disagree and not rows["b/f32"].lone_failure  # two runs fail it
    assert rows["b/f32"].cells[1].readings == ("nearest-floor",)
    assert not rows["a/f32"].disagree
    # NOT_SUPPORTED is no disagreement: the run did not judge the case
    assert not rows["d/int8"].disagree and not rows["d/int8"].lone_failure


def test_group_cells_and_interop_count_the_mandatory_cases(m: Matrix) -> None:
    families = {r.key: r for r in m.families}
    offsets = families["offsets"]  # a, b, c: every run holds them; b fails in two
    assert [c.status for c in offsets.cells] == ["PASS", "FAIL", "FAIL"]
    assert offsets.common == 3 and offsets.interop == pytest.approx(2 / 3)
    assert offsets.cells[1].counts == {"PASS": 2, "FAIL": 1}
    tables = families["tables"]  # d: NOT_SUPPORTED in one run is not passing
    assert tables.interop == 0.0 and tables.cells[1].status == "NOT_SUPPORTED"
    slices = {r.key: r for r in m.slices}
    assert set(slices) == {"RESAMPLE1 FLOAT32", "RESAMPLE1 INT8"}
    assert slices["RESAMPLE1 FLOAT32"].interop == offsets.interop
    assert passing(slices["RESAMPLE1 INT8"].cells[0])
    assert not passing(offsets.cells[2])  # an XFAIL is a known failure, not a pass


def test_findings_name_the_misreadings_and_the_baselines_causes(m: Matrix) -> None:
    found = {(f.kind, f.key): f.cases for f in m.findings}
    assert found[("misreading", "nearest-floor")] == (0, 1, 1)
    assert found[("baseline", "floor at the 8-bit types; issue 7")] == (0, 0, 1)
    assert m.findings[0].kind == "misreading"  # misreadings first


def test_not_supported_reasons_are_grouped_per_run(m: Matrix) -> None:
    assert m.unsupported == ((), (("two does not run INT8", 1),), ())


def test_levels_use_the_reports_wording(m: Matrix) -> None:
    levels = {r.key: r for r in m.levels}
    assert [c.note for c in levels["2_1"].cells] == ["NOT conformant"] * 3
    assert levels["2_1"].cells[0].status == "FAIL"
    assert [c.note for c in levels["2_0"].cells] == ["no verdict (no mandatory case selected)"] * 3
    # without the reports' wording, the verdicts' own
    plain = build([(p, typed(d)) for p, d in RUNS])
    assert [c.note for c in plain.levels[0].cells] == ["no verdict"] * 3


def test_markdown_has_every_section_and_the_disagreeing_cases(m: Matrix) -> None:
    text = face.render_markdown(m)
    for head in ("## Feature levels", "## Families", "## Operator and data type",
                 "## Findings", "## What each implementation cannot express",
                 "## Where implementations disagree"):
        assert head in text
    assert "| offsets | 66.7% of 3 |" in text
    assert "FAIL: 2 of 3 pass, FAIL 1; nearest-floor" in text
    assert "| b/f32 | PASS | FAIL: nearest-floor | XFAIL: nearest-floor |" in text
    assert "| a/f32 |" not in text  # agreed everywhere


def test_markdown_limits_the_disagreeing_cases(m: Matrix) -> None:
    text = face.render_markdown(m, max_cases=0)
    assert "the first 0 shown" in text and "| b/f32 |" not in text


def test_hostile_text_is_escaped_in_markdown_and_html() -> None:
    hostile = typed(hostile_document("\x1b[2J"))
    m = build([("evil.json", hostile), ("evil2.json", hostile)])
    text = face.render_markdown(m)
    assert "<script>" not in text and "<img" not in text and "\x1b" not in text
    page = face.render_html(m)
    # the data sits in one JSON script element that no payload can close
    assert page.count("</script>") == 2
    data = re.search(r'<script id="matrix-data" type="application/json">(.*?)</script>', page,
                     re.S)
    assert data and "<" not in data.group(1)
    assert EVIL.split()[0] in json.dumps(json.loads(data.group(1)), ensure_ascii=False)


def test_dmlconf_matrix_writes_both_faces(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                          ) -> None:
    paths = []
    for name, doc in RUNS:
        paths.append(str(tmp_path / name))
        write(typed(doc), paths[-1])
    code = main(["matrix", *paths, "--html", str(tmp_path / "m.html"),
                 "--markdown", str(tmp_path / "m.md")])
    assert code == 0
    assert "## Families" in (tmp_path / "m.md").read_text()
    assert 'id="matrix-data"' in (tmp_path / "m.html").read_text()
    assert "3 runs, 4 cases" in capsys.readouterr().err
    assert main(["matrix", *paths]) == 0  # no file named: the Markdown to stdout
    assert "# DirectML conformance matrix" in capsys.readouterr().out


def test_dmlconf_matrix_says_which_file_it_cannot_read(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    assert main(["matrix", str(bad)]) == 2
    assert f"{bad}: not a results document" in capsys.readouterr().err
