"""The top of the HTML and Markdown reports (report/headline.py): a banner with the run's
outcome and its exit status (results.exit_status), and the backend by the name it gives itself
(backend.declared_name), not a file's path or the internal module a backend file is loaded as."""

from __future__ import annotations

import re

import pytest

from conformance import report
from conformance.report import headline
from conformance.results import exit_status
from tests.support.documents import document, mixed_document, result, typed

FILE_BACKEND = {"name": "/home/me/gpu.py:MyBackend", "declared_name": "my-gpu",
                "class": "_dmlconf_backend_7b62fcd0a1b2c3d4.MyBackend", "capabilities": {}}


def banner(text: str) -> str:
    return re.search(r'<p class="banner [a-z]+" id="outcome" data-exit="\d">([^<]*)</p>',
                     text).group(1)


def test_the_banner_gives_the_outcome_and_the_exit_status() -> None:
    doc = mixed_document()  # FAIL 2 and ERROR 1 decisive; an ambiguous FAIL; an XPASS
    typed_doc = typed(doc)
    out = headline.outcome(typed_doc)
    assert out["exit"] == exit_status(typed_doc.results) == 1 and not out["passed"]
    assert out["text"] == "FAIL: 3 cases failed (FAIL 2, ERROR 1) — exit 1"
    text = report.render_html(typed_doc)
    assert banner(text) == out["text"]
    assert '<p class="banner fail" id="outcome" data-exit="1">' in text
    assert text.index('id="outcome"') < text.index('id="headline"')
    md = report.render_markdown(typed_doc)
    assert md.splitlines()[2] == "**FAIL: 3 cases failed (FAIL 2, ERROR 1) — exit 1**"

    doc["command"] += " --baseline b.yaml --strict"  # an XPASS fails it too
    assert headline.outcome(typed(doc))["text"] == (
        "FAIL: 3 cases failed (FAIL 2, ERROR 1); 1 unexpected pass (XPASS, --strict) — exit 1")


@pytest.mark.parametrize("statuses, complete, errors, words", [
    (["PASS", "QUALITY_WARNING", "NOT_SUPPORTED", "XFAIL"], True, [],
     "PASS: no decisive case failed — exit 0"),
    (["PASS", "TIMEOUT"], True, [], "FAIL: 1 case failed (TIMEOUT 1) — exit 1"),
    (["PASS"], False, [], "FAIL: some cases could not be loaded — exit 1"),
    (["PASS"], False, [{"file": "a.yaml", "line": 3, "message": "bad"}],
     "FAIL: 1 case file problem — exit 1"),
])
def test_the_banner_of_a_passing_failing_and_incomplete_run(
        statuses: list[str], complete: bool, errors: list[dict], words: str) -> None:
    doc = document([result(f"a/{k}", s) for k, s in enumerate(statuses)])
    doc.update(complete=complete, load_errors=errors)
    out = headline.outcome(typed(doc))
    assert out["text"] == words and out["passed"] is words.startswith("PASS")
    text = report.render_html(typed(doc))
    assert banner(text) == words
    assert f'class="banner {"pass" if out["passed"] else "fail"}"' in text


def test_the_backend_is_named_by_the_name_it_gives_itself() -> None:
    doc = mixed_document()
    doc["backend"] = dict(FILE_BACKEND)
    text = report.render_html(typed(doc))
    assert "<title>DirectML conformance: my-gpu at feature level 2_1</title>" in text
    assert "<h1>DirectML conformance: my-gpu at feature level 2_1</h1>" in text
    backend_row = re.search(r'<td id="backend">(.*?)</td>', text).group(1)
    assert re.sub("<[^>]+>", "", backend_row) == (
        "my-gpu (--backend /home/me/gpu.py:MyBackend): class MyBackend")
    assert "_dmlconf_backend_" not in text
    md = report.render_markdown(typed(doc))
    assert md.splitlines()[0] == "## DirectML conformance: my-gpu at feature level 2_1"
    assert ("| Backend | my-gpu (--backend /home/me/gpu.py:MyBackend, class MyBackend) |"
            in md)
    assert "_dmlconf_backend_" not in md


@pytest.mark.parametrize("declared", [None, "", "backend"])
def test_a_backend_that_names_itself_nothing_keeps_the_name_it_was_run_by(
        declared: str | None) -> None:
    backend = {"name": "numpy", "class": "backends.numpy_reference.NumpyReferenceBackend"}
    if declared is not None:
        backend["declared_name"] = declared
    assert headline.backend_name(backend) == "numpy"
    assert headline.backend_class(backend) == "backends.numpy_reference.NumpyReferenceBackend"
    assert headline.backend_name(None) == "" and headline.backend_class("x") == ""
    doc = mixed_document()
    doc["backend"] = backend
    assert "<h1>DirectML conformance: numpy at" in report.render_html(typed(doc))
    assert report.render_markdown(typed(doc)).startswith("## DirectML conformance: numpy at")
