"""Reports rendered from a results document (the ResultsDocument `conformance.results.document`
makes, or `conformance.results.read` reads back from its JSON): JUnit XML for CI test views
(report/junit.py), a Markdown summary for a GitHub Actions job summary (report/markdown.py),
and a self-contained HTML report (report/html.py); what they share is in report/common.py. The
templates ship inside the package, in templates/. Reports know the results package (and the
wording of verdicts, conformance.present) only.

A level whose every mandatory case is NOT_SUPPORTED reads "not claimed: <reasons>" in every
report (conformance.present: `not_claimed`, `unclaimed_reasons`), never "NOT conformant"; zero
counts are neutral (html.count_class); every count takes its noun's number (results.counted).

Every report lists QUALITY_WARNING cases apart (they pass: results.PASSING), states the run's
execution flags ("NONE" when none), the margins closest to the legal bound and a diagnosis
summary of the FAILs (common.diagnosis_summary), and labels a run whose judge shared the backend's
process NOT_TAMPER_PROOF (common.tamper_proof: the JUnit property, a headline in the Markdown and
HTML). The HTML and Markdown reports open with a banner of the run's outcome and exit status,
and name the backend by the name it gives itself (report/headline.py).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from conformance.report.common import integrity_line
from conformance.report.html import render_html
from conformance.report.junit import render_junit
from conformance.report.markdown import render_markdown
from conformance.results import ResultsDocument, write_atomic

__all__ = ["RENDERERS", "integrity_line", "render_html", "render_junit", "render_markdown",
           "write", "write_reports"]


#: Output kind -> renderer.
RENDERERS: dict[str, Callable[[ResultsDocument], str]] = {
    "junit": render_junit,
    "markdown": render_markdown,
    "html": render_html,
}


def write(text: str, path: str | Path) -> None:
    """Atomically (results.write_atomic), creating missing parent folders. A lone surrogate
    (from a results JSON with an escaped one) cannot be encoded: it is written as "?"."""
    write_atomic(text.encode("utf-8", "replace").decode("utf-8"), path)


def write_reports(doc: ResultsDocument, outputs: dict[str, str | Path | None]) -> list[Path]:
    """Render `doc` to each {kind: path} given (None: skipped); the paths written."""
    written = []
    for kind, path in outputs.items():
        if path:
            write(RENDERERS[kind](doc), path)
            written.append(Path(path))
    return written
