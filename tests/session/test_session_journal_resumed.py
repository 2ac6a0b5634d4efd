"""Every report lists the resumed cases (issue 24): a run finished with --resume records which
cases it took from the journal of the interrupted run (execution.resumed, their ids in result
order, beside the count execution.resumed_cases), and the terminal summary, the Markdown, the
HTML and the JUnit report all say so; a run that resumed nothing shows nothing of it, and a
results file older than the field is rendered as before, counting what it cannot name.
(The interruption is test_session_journal_resume.py's: a backend that raises
KeyboardInterrupt at its 6th call, once per marker file.)"""

from __future__ import annotations

import contextlib
import io
import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from conformance import report, results
from conformance.cli import main
from tests.support import DOCUMENTED, HOSTILE


def _run(folder: Path, *extra: str) -> list[str]:
    """`dmlconf run` of the documented cases in this process, writing results.json and the
    three reports into folder."""
    return ["run", "--cases", str(DOCUMENTED), "--json", str(folder / "results.json"),
            "--junit", str(folder / "junit.xml"), "--markdown", str(folder / "summary.md"),
            "--html", str(folder / "report.html"), *extra]


@pytest.fixture(scope="module")
def resumed_run(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """A run interrupted after 5 cases, then finished with --resume: its folder, terminal
    output, document and the ids the interrupted run had done."""
    folder = tmp_path_factory.mktemp("resumed")
    args = _run(folder, "--backend", f"{HOSTILE}:InterruptingBackend", "--no-isolate")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("DMLCONF_TEST_MARKER", str(folder / "interrupted-once"))
        assert main(args) == 130
        journal_lines = (folder / "results.json.journal").read_text().splitlines()
        done = [json.loads(line)["id"] for line in journal_lines[1:]]
        assert len(done) == 5
        buffer = io.StringIO()
        with contextlib.redirect_stdout(buffer):
            assert main([*args, "--resume"]) == 0
    doc = json.loads((folder / "results.json").read_text())
    return {"folder": folder, "terminal": buffer.getvalue(), "doc": doc, "done": done}


@pytest.fixture(scope="module")
def plain_run(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """The same cases run whole, nothing resumed."""
    folder = tmp_path_factory.mktemp("plain")
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        assert main(_run(folder, "--resume")) == 0  # --resume without a journal: a whole run
    return {"folder": folder, "terminal": buffer.getvalue(),
            "doc": json.loads((folder / "results.json").read_text())}


def test_the_document_names_the_resumed_cases_in_result_order(resumed_run: dict) -> None:
    doc, done = resumed_run["doc"], resumed_run["done"]
    order = [r["id"] for r in doc["results"]]
    assert doc["execution"]["resumed_cases"] == 5
    assert doc["execution"]["resumed"] == sorted(done, key=order.index) == order[:5]
    typed = results.read(resumed_run["folder"] / "results.json")
    assert typed.execution.resumed == order[:5]


def test_every_report_names_the_resumed_cases(resumed_run: dict) -> None:
    folder, ids = resumed_run["folder"], resumed_run["doc"]["execution"]["resumed"]
    total = len(resumed_run["doc"]["results"])
    headline = (f"RESUMED: 5 of {total} results were taken from the journal of an interrupted "
                f"run (--resume), not run again; the other {total - 5} cases ran in the run "
                "that finished it")

    terminal = resumed_run["terminal"]
    assert f"  {headline}\n" in terminal
    assert [line.strip() for line in terminal.splitlines() if line.startswith("  RESUMED ")
            ] == [f"RESUMED {i}" for i in ids]

    markdown = (folder / "summary.md").read_text()
    assert f"**{report.common.md_cell(headline, 600)}**" in markdown
    section = markdown.split("### Resumed cases (5): results taken from the journal", 1)[1]
    assert [line[2:] for line in section.split("###")[0].splitlines()
            if line.startswith("- ")] == [report.common.md_cell(i) for i in ids]

    suite = ET.parse(folder / "junit.xml").getroot().find("testsuite")
    props = {p.get("name"): p.get("value") for p in suite.find("properties")}
    assert props["resumed_cases"] == "5" and props["resumed"] == headline
    marked = [f"{c.get('classname').replace('.', '/')}/{c.get('name')}"
              for c in suite.iter("testcase")
              if any(p.get("name") == "resumed" and p.get("value") == "true"
                     for p in c.iter("property"))]
    assert marked == ids

    html = (folder / "report.html").read_text()
    assert f'<p class="headline resumed" id="resumed">{headline}; they are marked' in html
    assert '<select id="f-resumed">' in html
    blocks = html.split('<div class="ids mono resumed"')[1:]  # every case PASSes: id blocks
    listed = [i for b in blocks for i in b.split(">", 1)[1].split("</div>", 1)[0].splitlines()]
    assert sorted(listed) == sorted(ids)
    assert all('data-resumed="1"' in b.split(">", 1)[0] for b in blocks)


def test_dmlconf_report_renders_the_same_reports_again(resumed_run: dict,
                                                       tmp_path: Path) -> None:
    folder = resumed_run["folder"]
    assert main(["report", str(folder / "results.json"), "--junit", str(tmp_path / "j.xml"),
                 "--markdown", str(tmp_path / "s.md"), "--html", str(tmp_path / "r.html")]) == 0
    for ours, theirs in [("j.xml", "junit.xml"), ("s.md", "summary.md"),
                         ("r.html", "report.html")]:
        assert (tmp_path / ours).read_bytes() == (folder / theirs).read_bytes()


def test_a_document_older_than_the_field_still_renders_and_round_trips(
        resumed_run: dict, tmp_path: Path) -> None:
    """A results file written before execution.resumed (its count only) is read, rendered
    (the count, no case named) and written back byte for byte; so is a new one."""
    old = json.loads((resumed_run["folder"] / "results.json").read_text())
    del old["execution"]["resumed"], old["execution"]["expectations_cache"]
    path = tmp_path / "old.json"
    results.write_atomic(json.dumps(old), path)
    doc = results.read(path)
    assert not doc.execution.has("resumed") and doc.execution.resumed_cases == 5
    for source in (path, resumed_run["folder"] / "results.json"):
        again = tmp_path / "again.json"
        results.write(results.read(source), again)
        assert json.loads(again.read_bytes()) == json.loads(source.read_bytes())
        results.write(results.read(again), tmp_path / "twice.json")
        assert (tmp_path / "twice.json").read_bytes() == again.read_bytes()
    written = results.read(resumed_run["folder"] / "results.json")
    results.write(written, tmp_path / "same.json")
    assert (tmp_path / "same.json").read_bytes() == (
        resumed_run["folder"] / "results.json").read_bytes()

    assert main(["report", str(path), "--junit", str(tmp_path / "j.xml"),
                 "--markdown", str(tmp_path / "s.md"), "--html", str(tmp_path / "r.html")]) == 0
    unnamed = "(this results file does not name the resumed cases)"
    for name in ("j.xml", "s.md", "r.html"):
        text = (tmp_path / name).read_text()
        assert "RESUMED: 5 of" in text and unnamed in text
    assert 'value="true"' not in (tmp_path / "j.xml").read_text().split("<testcase", 1)[1]
    html = (tmp_path / "r.html").read_text()
    assert not any(mark in html for mark in ('data-resumed', 'class="resumed-mark"',
                                             'class="ids mono resumed"', 'id="f-resumed"'))


def test_a_run_without_resume_shows_nothing_of_it(plain_run: dict) -> None:
    folder, doc = plain_run["folder"], plain_run["doc"]
    assert doc["execution"]["resumed_cases"] == 0 and doc["execution"]["resumed"] == []
    assert "RESUMED" not in plain_run["terminal"]
    assert "resumed" not in (folder / "summary.md").read_text().lower()
    assert "resumed" not in (folder / "junit.xml").read_text().lower()
    html = (folder / "report.html").read_text()
    assert "resumed" not in html.split("<script>")[0].split("</style>")[1].lower()
    assert not any(mark in html for mark in ('data-resumed', 'class="resumed-mark"',
                                             'class="ids mono resumed"', 'id="f-resumed"'))
