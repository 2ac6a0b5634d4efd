"""The Markdown summary (templates/summary.md.j2), for a GitHub Actions job summary."""

from __future__ import annotations

from conformance.present import verdict_words
from conformance.report import common, headline
from conformance.results import FAILING, STATUSES, ResultsDocument

DEFAULT_MAX_FAILURES = 50
#: The cases closest to the bound the summary lists.
CLOSEST_MARKDOWN = 10


def render_markdown(doc: ResultsDocument, max_failures: int = DEFAULT_MAX_FAILURES) -> str:
    """The summary; max_failures limits each list of cases (FAILING, QUALITY_WARNING, load
    errors, resumed cases). A resumed run (--resume) says so in a headline, marks the cases
    taken from the journal "(resumed)" and lists them."""
    resumed = common.resumed(doc)
    taken = common.resumed_ids(doc)
    bad = [{**r.to_json(), "crash": common.crash_line(r.crash),
            "diagnosis": common.diagnosis_of(r), "resumed": r.id in taken}
           for r in doc.results if r.status in FAILING]
    warned = [{**r.to_json(), "margin_text": common.margin_text(common.margin_of(r)),
               "resumed": r.id in taken}
              for r in common.warnings_of(doc)]
    problems = common.load_errors(doc)
    backend = doc.backend or {}
    return common.environment(False).get_template("summary.md.j2").render(
        doc=doc, statuses=STATUSES, failing=FAILING, verdicts=doc.verdict,
        words=verdict_words(doc), unsupported=common.unsupported_reasons(doc.results),
        max_failures=max_failures, shown=bad[:max_failures],
        more=max(0, len(bad) - max_failures), total_bad=len(bad),
        any_diagnosis=any(r["diagnosis"] for r in bad),
        warned=warned[:max_failures], more_warned=max(0, len(warned) - max_failures),
        total_warned=len(warned), flags=common.flags_text(doc),
        closest=common.closest(doc.results, CLOSEST_MARKDOWN),
        largest=common.largest_margin(doc.results),
        histogram=common.margin_histogram(doc.results), diagnoses=common.diagnosis_summary(doc),
        any_ambiguous=any(doc.ambiguous.get(k) for k in STATUSES),
        backend_name=headline.backend_name(backend), backend_given=str(backend.get("name", "")),
        backend_class=headline.backend_class(backend),
        outcome=headline.outcome(doc), claim=headline.claim(doc),
        scope=headline.scope_text(doc),
        platform=doc.platform or {}, incomplete=common.incomplete_line(doc),
        shard=common.shard_line(doc), execution=common.execution_text(doc.execution),
        integrity=common.integrity_line(doc), resumed=resumed,
        expectations=common.expectations_line(doc),
        resumed_shown=(resumed["ids"] or [])[:max_failures] if resumed else [],
        load_errors=problems[:max_failures], more_load_errors=max(0, len(problems) - max_failures))
