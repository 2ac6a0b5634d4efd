"""The JUnit XML report (templates/junit.xml.j2), for CI test views.

The mapping (docs/results-format.md, "Reports"): one <testcase> per result; FAIL is a
<failure> (its diagnosis, when the catalogue of misreadings recognised the output, on a line of
its own), ERROR and TIMEOUT an <error>, NOT_SUPPORTED a <skipped> with its reason; a
QUALITY_WARNING passes, with "QUALITY_WARNING: <message>" in <system-out>; what is known of a
crashed worker goes to <system-err>; each case's margin is a <property>. An ambiguous case
never fails the suite: its FAIL, ERROR or TIMEOUT is rendered as <skipped message="ambiguous
region of the spec: ..."> with the full message in <system-out>, and every ambiguous case
carries an `ambiguous` <property>. Case files that could not be loaded are one <testcase
classname="load"> per file, with an <error> per problem. A case whose result `--resume` took
from the journal of an interrupted run carries a `resumed` <property> (and the suite the
properties resumed_cases and resumed). A scoped claim's suite has the property `scope`; its cases
outside the scope are skipped, "not covered: outside the claimed scope (...)".
"""

from __future__ import annotations

from conformance.present import verdict_words
from conformance.report import common, headline
from conformance.results import FAILING, Result, ResultsDocument, Status


def _split_id(case_id: str) -> tuple[str, str]:
    folders, _, name = case_id.rpartition("/")
    return (folders.replace("/", ".") or "dmlconf"), name or case_id


def _mismatch_lines(r: Result) -> list[str]:
    return [f"{m.get('tensor')} {m.get('index')}: expected {m.get('expected')}, "
            f"got {m.get('got')}" for m in r.mismatches or [] if isinstance(m, dict)]


def junit_outcome(r: Result) -> tuple[str, str]:
    """(element, its message) for a result: element is "failure", "error", "skipped" or ""
    (passed). An ambiguous case never fails: its FAIL, ERROR or TIMEOUT is skipped; an XFAIL (a
    failure a baseline expects) is skipped; an XPASS passes (noted in <system-out>)."""
    status, message = r.status, r.message or ""
    if r.ambiguous and status in FAILING:
        return "skipped", f"ambiguous region of the spec: {r.ambiguous} ({status}: {message})"
    return {Status.FAIL: ("failure", message), Status.ERROR: ("error", message),
            Status.TIMEOUT: ("error", message), Status.NOT_SUPPORTED: ("skipped", message),
            Status.XFAIL: ("skipped", f"{'waived' if r.waiver else 'expected failure'} "
                                      f"(baseline): {message}")}.get(status, ("", ""))


def junit_counts(doc: ResultsDocument) -> dict[str, int]:
    """The <testsuite> counts. They equal the JSON summary (errors: ERROR and TIMEOUT), except
    that ambiguous FAILs, ERRORs and TIMEOUTs (and XFAILs) count as skipped; each case file
    that could not be loaded adds one test and one error."""
    files = len(_load_error_files(doc))
    counts = {"tests": len(doc.results) + files, "failures": 0, "errors": files,
              "skipped": 0}
    plural = {"failure": "failures", "error": "errors", "skipped": "skipped"}
    for r in doc.results:
        element = junit_outcome(r)[0]
        if element:
            counts[plural[element]] += 1
    return counts


def _load_error_files(doc: ResultsDocument) -> dict[str, list[dict[str, str]]]:
    files: dict[str, list[dict[str, str]]] = {}
    for e in common.load_errors(doc):
        files.setdefault(e["file"], []).append(e)
    return files


def _diagnosis_line(r: Result) -> str:
    """"Diagnosis: <text>" for a diagnosed result ("" when none, or when its message already
    holds the sentence)."""
    d = common.diagnosis_of(r)
    if d is None:
        return ""
    text = d["text"] or (f"the output equals the reading{'s' if len(d['readings']) != 1 else ''} "
                         + ", ".join(d["readings"]))
    return "" if text in str(r.message or "") else f"Diagnosis: {text}"


def render_junit(doc: ResultsDocument) -> str:
    """The JUnit XML of the document (the module docstring gives the mapping). A resumed run
    (--resume) has the <properties> resumed_cases and resumed (its headline), and each case
    taken from the journal a `resumed` <property>."""
    cases = []
    taken = common.resumed_ids(doc)
    for r in doc.results:
        classname, name = _split_id(r.id)
        element, message = junit_outcome(r)
        m, d = common.margin_of(r), common.diagnosis_of(r)
        cases.append({"r": r, "classname": classname, "name": name,
                      "element": element, "message": message,
                      "time": float(r.duration_s or 0.0),
                      "mismatches": _mismatch_lines(r), "crash": common.crash_line(r.crash),
                      "crash_output": common.crash_output(r.crash),
                      "margin": None if m is None else repr(m),
                      "readings": ", ".join(d["readings"]) if d else "",
                      "diagnosis": _diagnosis_line(r), "resumed": r.id in taken})
    verdicts = verdict_words(doc)
    backend = doc.backend or {}
    return common.environment(True).get_template("junit.xml.j2").render(
        doc=doc, cases=cases, counts=junit_counts(doc), verdicts=verdicts,
        backend_name=backend.get("name", ""), backend_class=backend.get("class", ""),
        load_files=_load_error_files(doc), incomplete=common.incomplete_line(doc),
        shard=common.shard_line(doc), execution=common.execution_text(doc.execution),
        tamper_proof=common.tamper_proof(doc), integrity=common.integrity_line(doc),
        resumed=common.resumed(doc), expectations=common.expectations_line(doc),
        flags=common.flags_text(doc), warnings=len(common.warnings_of(doc)),
        largest=common.largest_margin(doc.results), scope=headline.scope_text(doc))
