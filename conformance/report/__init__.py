"""Reports rendered from a results document (the dict `conformance.results.document` makes,
or `conformance.results.read` reads back from its JSON): JUnit XML for CI test views and a
Markdown summary for a GitHub Actions job summary, and a self-contained HTML report. The
templates ship inside the package, in templates/. Reports know the results package only.

JUnit mapping (docs/results-format.md, "Reports"): one <testcase> per result; FAIL is a
<failure> (its diagnosis, when the catalogue of misreadings recognised the output, on a line of
its own), ERROR and TIMEOUT an <error>, NOT_SUPPORTED a <skipped> with its reason; a
QUALITY_WARNING passes, with "QUALITY_WARNING: <message>" in <system-out>; what is known of a
crashed worker goes to <system-err>; each case's margin is a <property>. An ambiguous case
never fails the suite: its FAIL, ERROR or TIMEOUT is rendered as <skipped message="ambiguous
region of the spec: ..."> with the full message in <system-out>, and every ambiguous case
carries an `ambiguous` <property>. Case files that could not be loaded are one <testcase
classname="load"> per file, with an <error> per problem.

The HTML report (`render_html`, templates/report.html.j2) is one file with inline CSS and JS,
and an inline SVG histogram of the margins drawn here (`margin_histogram`), not by a script. It
opens on the failures (SECTIONS), lists NOT_SUPPORTED cases by reason and PASS cases as
collapsed lists of ids (no row each: a run of 60,000 cases stays light), its filters move every
section's count, and its matrices have the operators as columns, to fit a 1,280 px window.

A level whose every mandatory case is NOT_SUPPORTED reads "not claimed: <reasons>" in every
report (`not_claimed`, `unclaimed_reasons`), never "NOT conformant"; zero counts are neutral
(`count_class`); every count takes its noun's number (results.counted).

Every report lists QUALITY_WARNING cases apart (they pass: results.PASSING), states the run's
execution flags ("NONE" when none), the margins closest to the legal bound and a diagnosis
summary of the FAILs (`diagnosis_summary`), and labels a run whose judge shared the backend's
process NOT_TAMPER_PROOF (`tamper_proof`: the JUnit property, a headline in the Markdown and
HTML).
"""

from __future__ import annotations

import math
import re
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup, escape

from conformance.results import (
    FAILING,
    NOT_RECOGNISED,
    STATUSES,
    FeatureLevel,
    chosen_level,
    conformant_text,
    counted,
    mustpass,
    reading_words,
    reproduce_command,
    write_atomic,
)

TEMPLATES = Path(__file__).resolve().parent / "templates"
DEFAULT_MAX_FAILURES = 50
#: Statuses from worst to best: a matrix cell is coloured by the first one it holds. A
#: QUALITY_WARNING passes (results.PASSING) but is worth a look: after NOT_SUPPORTED, which
#: denies a verdict, before PASS.
WORST_FIRST = ("ERROR", "TIMEOUT", "FAIL", "XPASS", "XFAIL", "NOT_SUPPORTED", "QUALITY_WARNING",
               "PASS")
WARNING = "QUALITY_WARNING"
#: Short names of long statuses in the matrices' cells (their title gives the full name).
SHORT = {"NOT_SUPPORTED": "N/S", WARNING: "Q/W"}
#: The margin histogram: bins of half a decade from MARGIN_LOW to 1 (log-scaled).
MARGIN_LOW = 1e-6
MARGIN_EDGES = tuple(10.0 ** (k / 2) for k in range(-12, 1))
#: The key of results.diagnoses counting the FAILs no misreading was recognised in.
#: The cases closest to the bound listed in the HTML report and the Markdown summary.
CLOSEST_HTML, CLOSEST_MARKDOWN = 20, 10

# Characters XML 1.0 does not allow anywhere, not even as character references.
_XML_FORBIDDEN = re.compile("[^\t\n\r\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


_CONTROL = re.compile("[\x00-\x1f\x7f]")


def xml_text(value: Any) -> str:
    """`value` as text with the characters XML 1.0 forbids removed."""
    return _XML_FORBIDDEN.sub("", "" if value is None else str(value))


def _xml_attr(value: Any) -> Markup:
    """Escaped for an attribute value; tabs and line ends kept (as character references) so
    that a parser does not normalize them to spaces."""
    text = str(escape(xml_text(value)))
    return Markup(text.replace("\t", "&#9;").replace("\n", "&#10;").replace("\r", "&#13;"))


def _xml(value: Any) -> Markup:
    """Escaped for element text."""
    return escape(xml_text(value))


def md_cell(value: Any, limit: int = 200) -> str:
    """The first line of `value`, shortened to `limit` characters, safe in a Markdown table
    cell: control characters dropped, pipes escaped, HTML's <, > and & as entities, backticks
    and brackets escaped (no code span, no link)."""
    lines = ("" if value is None else str(value)).splitlines()
    text = _CONTROL.sub("", (lines[0] if lines else "").replace("\t", " "))
    if len(text) > limit:
        text = text[:limit - 1] + "…"
    text = text.replace("\\", "\\\\").replace("&", "&amp;").replace("<", "&lt;")
    text = text.replace(">", "&gt;").replace("|", "\\|").replace("`", "\\`")
    return text.replace("[", "\\[").replace("]", "\\]")


_WEB_URL = re.compile(r"https?://", re.IGNORECASE)


def web_url(value: Any) -> str | None:
    """`value` when it is an http(s) address, the only kind the HTML report puts in an href;
    None for anything else (a `javascript:` or `data:` URL, a relative path, not text)."""
    return value if isinstance(value, str) and _WEB_URL.match(value) else None


def _env(autoescape: bool) -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATES)),
                             autoescape=autoescape,
                             trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)
    env.filters.update(xattr=_xml_attr, xml=_xml, md=md_cell, counted=counted)
    return env


def _split_id(case_id: str) -> tuple[str, str]:
    folders, _, name = case_id.rpartition("/")
    return (folders.replace("/", ".") or "dmlconf"), name or case_id


def _mismatch_lines(r: dict[str, Any]) -> list[str]:
    return [f"{m.get('tensor')} {m.get('index')}: expected {m.get('expected')}, "
            f"got {m.get('got')}" for m in r.get("mismatches") or [] if isinstance(m, dict)]


def junit_outcome(r: dict[str, Any]) -> tuple[str, str]:
    """(element, its message) for a result: element is "failure", "error", "skipped" or ""
    (passed). An ambiguous case never fails: its FAIL, ERROR or TIMEOUT is skipped; an XFAIL (a
    failure a baseline expects) is skipped; an XPASS passes (noted in <system-out>)."""
    status, message = r["status"], r.get("message") or ""
    if r.get("ambiguous") and status in FAILING:
        return "skipped", f"ambiguous region of the spec: {r['ambiguous']} ({status}: {message})"
    return {"FAIL": ("failure", message), "ERROR": ("error", message),
            "TIMEOUT": ("error", message), "NOT_SUPPORTED": ("skipped", message),
            "XFAIL": ("skipped", f"{'waived' if r.get('waiver') else 'expected failure'} "
                                 f"(baseline): {message}")}.get(status, ("", ""))


def junit_counts(doc: dict[str, Any]) -> dict[str, int]:
    """The <testsuite> counts. They equal the JSON summary (errors: ERROR and TIMEOUT), except
    that ambiguous FAILs, ERRORs and TIMEOUTs (and XFAILs) count as skipped; each case file
    that could not be loaded adds one test and one error."""
    files = len(_load_error_files(doc))
    counts = {"tests": len(doc["results"]) + files, "failures": 0, "errors": files,
              "skipped": 0}
    plural = {"failure": "failures", "error": "errors", "skipped": "skipped"}
    for r in doc["results"]:
        element = junit_outcome(r)[0]
        if element:
            counts[plural[element]] += 1
    return counts


def crash_line(crash: Any) -> str:
    """What is known of a worker process that died or was killed in a case (Result.crash), in
    a few words: "worker process: signal SIGSEGV, exit code -11"; "" when there is no crash."""
    if not isinstance(crash, dict):
        return ""
    parts = []
    if crash.get("signal"):
        parts.append(f"signal {crash['signal']}")
    if crash.get("exit_code") is not None:
        parts.append(f"exit code {crash['exit_code']}")
    return "worker process: " + (", ".join(parts) or "no exit code known")


def crash_output(crash: Any) -> str:
    """The tail of a crashed worker's output ("" when none)."""
    output = crash.get("output") if isinstance(crash, dict) else None
    return "" if output is None else str(output)


def load_errors(doc: dict[str, Any]) -> list[dict[str, str]]:
    """The document's load errors (none in a document older than the field), each with
    "where" ("file:line", or the file when the line is unknown) and "file" and "message" as
    text."""
    out = []
    for e in doc.get("load_errors") or []:
        e = e if isinstance(e, dict) else {"message": e}
        file = "" if e.get("file") is None else str(e["file"])
        line = e.get("line")
        out.append({"file": file, "where": file if line is None else f"{file}:{line}",
                    "message": "" if e.get("message") is None else str(e["message"])})
    return out


def _load_error_files(doc: dict[str, Any]) -> dict[str, list[dict[str, str]]]:
    files: dict[str, list[dict[str, str]]] = {}
    for e in load_errors(doc):
        files.setdefault(e["file"], []).append(e)
    return files


def incomplete_line(doc: dict[str, Any]) -> str | None:
    """The headline of a run that could not load all its cases (None for a complete one):
    "INCOMPLETE: 2 case file problems — cases were not run, no verdict stands"."""
    problems = len(load_errors(doc))
    if doc.get("complete", True) is not False and not problems:
        return None
    what = (counted(problems, "case file problem") if problems
            else "some cases could not be loaded")
    return f"INCOMPLETE: {what} — cases were not run, no verdict stands"


#: The label of a run whose judge shared a process with the backend (in-process: --no-isolate,
#: a non-native backend on one worker, the pytest plugin without --dml-isolate; or a results
#: file from before the judge left the workers), in every report.
NOT_TAMPER_PROOF = ("NOT tamper-proof: the backend ran in the judge's process, where it could "
                    "have changed its own verdict; certify with an isolated run (dmlconf run "
                    "--certify)")


def tamper_proof(doc: dict[str, Any]) -> bool:
    """Whether the run's judge was out of the backend's reach (the backend in isolated worker
    processes, the judge in the harness): its execution says so; a merged run's when every
    shard's does; a document that does not say is not."""
    e = doc.get("execution")
    if not isinstance(e, dict):
        return False
    merged = e.get("merged")
    if isinstance(merged, list):
        return bool(merged) and all(isinstance(m, dict) and tamper_proof(m) for m in merged)
    return e.get("tamper_proof") is True


def integrity_line(doc: dict[str, Any]) -> str | None:
    """NOT_TAMPER_PROOF for a run that was not tamper-proof, else None."""
    return None if tamper_proof(doc) else NOT_TAMPER_PROOF


def shard_line(doc: dict[str, Any]) -> str | None:
    """For one shard of a sharded run: "shard 2 of 4: 10 of 40 cases; the verdict covers this
    shard only (join shards with `dmlconf merge`)"; None for a whole run."""
    shard = doc.get("shard")
    if not isinstance(shard, dict):
        return None
    return (f"shard {shard.get('index', '?')} of {shard.get('count', '?')}: "
            f"{shard.get('cases', '?')} of {shard.get('of_cases', '?')} cases; the verdict "
            "covers this shard only (join shards with `dmlconf merge`)")


def _size(n: Any) -> str:
    if isinstance(n, bool) or not isinstance(n, (int, float)):
        return str(n)
    if n >= 2 ** 30:
        return f"{n / 2 ** 30:.4g} GiB"
    return f"{n / 2 ** 20:.4g} MiB"


def execution_text(execution: Any) -> str | None:
    """How the run was executed, in words: "4 workers; isolated: yes; per-case timeout 30 s;
    memory cap 2 GiB" (and any further field as "name value"); None when unknown."""
    if not isinstance(execution, dict):
        return None
    e = dict(execution)
    merged = e.pop("merged", None)
    if isinstance(merged, list):  # dmlconf merge: each shard's own execution
        shards = [f"shard {m.get('shard', '?')}: {execution_text(m.get('execution')) or '?'}"
                  for m in merged if isinstance(m, dict)]
        return f"merged from {counted(len(shards), 'shard')}: " + " | ".join(shards)
    threads = e.pop("thread_environment", None)
    e.pop("execution_flags", None)  # shown on a line of their own (flags_text)
    if not e.get("resumed_cases"):
        e.pop("resumed_cases", None)
    per_worker = e.pop("cases_per_worker", None)
    retries = e.pop("retries", None)
    isolated = e.pop("isolated", None)
    e.pop("tamper_proof", None)  # said on a line of its own (integrity_line)
    certify = e.pop("certify", None)
    timeout, cap = e.pop("timeout_s", None), e.pop("memory_cap_bytes", None)
    parts = [counted(e.pop("workers", "?"), "worker"),
             "isolated: " + ("?" if isolated is None else "yes" if isolated is True
                             else "no" if isolated is False else str(isolated)),
             "no per-case timeout" if timeout is None else f"per-case timeout {timeout} s",
             "no memory cap" if cap is None else f"memory cap {_size(cap)}"]
    if certify:
        parts.append("certification run (--certify)")
    if per_worker:
        parts.append("a fresh worker for every case" if per_worker == 1
                     else f"a fresh worker every {counted(per_worker, 'case')}")
    if retries:
        parts.append(f"failing cases retried {counted(retries, 'time')}")
    if isinstance(threads, dict) and threads:
        parts.append("workers' thread pools " + ", ".join(f"{k}={v}" for k, v in threads.items()))
    parts += [f"{key} {value}" for key, value in e.items()]
    return "; ".join(parts)


def execution_flags(doc: dict[str, Any]) -> list[str]:
    """The run's DML_EXECUTION_FLAGS by name: the document's `execution_flags`, else its
    execution's; [] for none, and in a document older than the field."""
    flags = doc.get("execution_flags")
    if flags is None and isinstance(doc.get("execution"), dict):
        flags = doc["execution"].get("execution_flags")
    if isinstance(flags, str):
        flags = [flags]
    return [str(f) for f in flags] if isinstance(flags, list) else []


def flags_text(doc: dict[str, Any]) -> str:
    """The execution flags as shown in reports and by `dmlconf run`: the names joined with "|"
    ("ALLOW_HALF_PRECISION_COMPUTATION|DISABLE_META_COMMANDS"), or "NONE"."""
    return "|".join(execution_flags(doc)) or "NONE"


def margin_of(r: dict[str, Any]) -> float | None:
    """A result's margin (largest |error| / legal bound) as a number, or None where it has none
    (bit-exact models, cases not judged, documents older than the field, a value that is not a
    non-negative number)."""
    m = r.get("margin")
    if isinstance(m, bool) or not isinstance(m, (int, float)) or math.isnan(m) or m < 0:
        return None
    return float(m)


def margin_text(m: float | None) -> str:
    return "-" if m is None else f"{m:.3g}"


def margin_histogram(results: list[dict[str, Any]]) -> dict[str, Any]:
    """The margins of a run in bins of half a decade from 1e-6 to 1 (`bins`: "low", "high" and
    "count" each; a margin on an edge counts in the bin above it, 1 in the last), and the
    results outside them: `none` (no margin: judged bit-exact or not judged), `zero` (on the
    strict value everywhere), `below` (between 0 and 1e-6) and `above` (beyond the legal
    bound: FAILs)."""
    counts = [0] * (len(MARGIN_EDGES) - 1)
    none = zero = below = above = 0
    for r in results:
        m = margin_of(r)
        if m is None:
            none += 1
        elif m == 0:
            zero += 1
        elif m < MARGIN_LOW:
            below += 1
        elif m > 1:
            above += 1
        else:
            counts[min(bisect_right(MARGIN_EDGES, m) - 1, len(counts) - 1)] += 1
    bins = [{"low": MARGIN_EDGES[k], "high": MARGIN_EDGES[k + 1], "count": n}
            for k, n in enumerate(counts)]
    return {"bins": bins, "none": none, "zero": zero, "below": below, "above": above,
            "judged": len(results) - none}


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


def closest(results: list[dict[str, Any]], n: int) -> list[dict[str, Any]]:
    """The n cases closest to the legal bound: those with a margin of at most 1, the largest
    first (then by id), each with its id, operators, data type, margin and status."""
    inside = [(m, r) for r in results if (m := margin_of(r)) is not None and m <= 1]
    inside.sort(key=lambda x: (-x[0], str(x[1].get("id"))))
    return [{"id": r["id"], "operators": ", ".join(map(str, r.get("operators") or [])),
             "dtype": case_data_type(r), "margin": m, "margin_text": margin_text(m),
             "status": r["status"]} for m, r in inside[:n]]


def largest_margin(results: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The result with the largest margin, FAILs beyond the bound included (None when no
    result has one): its id, status, margin and margin_text."""
    best = max(((m, r) for r in results if (m := margin_of(r)) is not None),
               key=lambda x: x[0], default=None)
    if best is None:
        return None
    m, r = best
    return {"id": r["id"], "status": r["status"], "margin": m, "margin_text": margin_text(m)}


def diagnosis_of(r: dict[str, Any]) -> dict[str, Any] | None:
    """A result's diagnosis as {"readings": [keys as text], "text": text}, or None when it has
    none (a case that passed, a FAIL nothing recognised with no sentence, an older document)."""
    d = r.get("diagnosis")
    if not isinstance(d, dict):
        return None
    readings = d.get("readings")
    keys = [str(k) for k in readings if k is not None] if isinstance(readings, list) else []
    text = "" if d.get("text") is None else str(d["text"])
    return {"readings": keys, "text": text} if keys or text else None


def diagnosis_summary(doc: dict[str, Any]) -> dict[str, Any]:
    """The run's FAILs by the misreading they were diagnosed as: `readings` (key, count and
    the reading's words, most frequent first), `failures` (FAIL results) and `unrecognised`
    (FAILs whose output matched no reading of the catalogue). The counts are the document's
    `diagnoses` when it has them (its NOT_RECOGNISED key gives `unrecognised`), else counted
    from the FAIL results' `diagnosis` (a FAIL that matches several readings counts under
    each)."""
    fails = [r for r in doc["results"] if r["status"] == "FAIL"]
    unrecognised = sum(1 for r in fails if not (diagnosis_of(r) or {}).get("readings"))
    given = doc.get("diagnoses")
    if isinstance(given, dict):
        counts = {str(k): v for k, v in given.items()
                  if isinstance(v, int) and not isinstance(v, bool) and v > 0}
        unrecognised = counts.pop(NOT_RECOGNISED, 0 if NOT_RECOGNISED in given else unrecognised)
    else:
        counts = dict(Counter(k for r in fails
                              for k in (diagnosis_of(r) or {}).get("readings", [])))
    readings = [{"key": k, "count": n, "reading": reading_words(k)}
                for k, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]
    return {"readings": readings, "failures": len(fails), "unrecognised": unrecognised}


def warnings_of(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """The QUALITY_WARNING results, in result order."""
    return [r for r in doc["results"] if r["status"] == WARNING]


def coverage(v: dict[str, Any]) -> str | None:
    """"N of M mustpass cases run" for a level whose run did not cover its mustpass list
    (docs/mustpass.md), "no mustpass list" where the document's suite version has none, None
    when covered (or for a document from before mustpass lists)."""
    if "mustpass" not in v:
        return None
    if v["mustpass"] is None:
        return "no mustpass list for this suite version"
    if v["mustpass_run"] < v["mustpass"]:
        return f"{v['mustpass_run']} of {v['mustpass']} mustpass cases run"
    return None


def not_claimed(v: dict[str, Any]) -> bool:
    """Whether every mandatory case of a level was NOT_SUPPORTED: the backend claims nothing
    that level needs (no operator, data type or capability of its cases), so none was judged.
    results.verdicts counts NOT_SUPPORTED as not passing (conformant False); the reports say
    "not claimed", with the backend's reasons, rather than "NOT conformant"."""
    n = v.get("mandatory")
    return isinstance(n, int) and n > 0 and v.get("NOT_SUPPORTED") == n


#: How many of a level's reasons a "not claimed" verdict names (the rest are counted).
CLAIM_REASONS = 3


def _parsed_level(text: Any, cache: dict[Any, FeatureLevel | None]) -> FeatureLevel | None:
    if text not in cache:
        try:
            cache[text] = FeatureLevel.parse(text)
        except (TypeError, ValueError):
            cache[text] = None
    return cache[text]


def unclaimed_reasons(doc: dict[str, Any]) -> dict[str, list[tuple[str, int]]]:
    """For each level of the verdict whose mandatory cases were all NOT_SUPPORTED
    (`not_claimed`), the reasons the backend's claims gave for them (the NOT_SUPPORTED messages,
    "the backend does not implement <an operator>"), each with its count, most frequent first. The
    cases are the level's mandatory ones by the verdict's own rule (results.mustpass.mandatory)
    in a run claiming the document's feature level; results whose levels do not parse are left
    out."""
    levels = [level for level, v in (doc.get("verdict") or {}).items() if not_claimed(v)]
    if not levels:
        return {}
    cache: dict[Any, FeatureLevel | None] = {}
    unsupported = []
    for r in doc["results"]:
        need = _parsed_level(r.get("feature_level"), cache)
        if r["status"] == "NOT_SUPPORTED" and need is not None:
            below = r.get("feature_level_below")
            unsupported.append((need, None if below is None else _parsed_level(below, cache),
                                bool(r.get("ambiguous")), str(r.get("message") or "")))
    out = {}
    for text in levels:
        level = _parsed_level(text, cache)
        claimed = _parsed_level(doc.get("feature_level"), cache) or level
        if level is None or claimed is None:
            continue
        reasons = Counter(message for need, below, ambiguous, message in unsupported
                          if mustpass.mandatory(need, below, ambiguous, level, claimed))
        out[text] = sorted(reasons.items(), key=lambda kv: (-kv[1], kv[0]))
    return out


def reasons_text(reasons: list[tuple[str, int]] | None) -> str:
    """The reasons of a level not claimed, in words: "the backend does not implement
    <an operator> (100 cases); ... ; and 2 other reasons" (the CLAIM_REASONS most frequent)."""
    if not reasons:
        return "every mandatory case is NOT_SUPPORTED"
    shown = [f"{reason or 'no reason given'} ({counted(n, 'case')})"
             for reason, n in reasons[:CLAIM_REASONS]]
    if len(reasons) > CLAIM_REASONS:
        shown.append(f"and {counted(len(reasons) - CLAIM_REASONS, 'other reason')}")
    return "; ".join(shown)


def _verdict_word(v: dict[str, Any], reasons: list[tuple[str, int]] | None = None) -> str:
    """A level's verdict in words; reasons: the level's `unclaimed_reasons` where known."""
    if not_claimed(v):
        return f"not claimed: {reasons_text(reasons)}"
    partial = coverage(v)
    if v.get("conformant") is None:
        return f"{partial}: no verdict" if partial else "no verdict (no mandatory case selected)"
    return conformant_text(v) if v["conformant"] else "NOT conformant"


def verdict_words(doc: dict[str, Any]) -> dict[str, str]:
    """Each level's verdict in words, as every report shows it (a level not claimed with its
    reasons)."""
    reasons = unclaimed_reasons(doc)
    return {level: _verdict_word(v, reasons.get(level)) for level, v in doc["verdict"].items()}


def verdict_line(v: dict[str, Any], reasons: list[tuple[str, int]] | None = None) -> str:
    """One level's verdict with its counts, as `dmlconf run` prints it: "conformant (...)"
    only for a run that covered the level's mustpass list; "N of M mustpass cases run: no
    verdict (...)" for a partial one; a NOT conformant partial run says what it covered; a
    level whose mandatory cases were all NOT_SUPPORTED "not claimed (N mandatory cases, all
    NOT_SUPPORTED): <reasons>" (`verdict_lines` gives the reasons)."""
    word = _verdict_word(v, reasons)
    if not v.get("mandatory"):
        return word
    if not_claimed(v):
        line = f"not claimed ({counted(v['mandatory'], 'mandatory case')}, all NOT_SUPPORTED)"
        return f"{line}: {reasons_text(reasons)}" if reasons else line
    xfail = (f", XFAIL {v['XFAIL']}" + (f" ({v['waivers']} waived)" if v.get("waivers") else "")
             if v.get("XFAIL") else "")
    xfail = (f", TIMEOUT {v['TIMEOUT']}" if v.get("TIMEOUT") else "") + xfail
    partial = coverage(v) if v.get("conformant") is False else None
    return (f"{word} ({v['PASS'] + v.get('XPASS', 0)}/{v['mandatory']} mandatory cases "
            f"{'run ' if v.get('conformant') is None else ''}pass; FAIL {v['FAIL']}, "
            f"ERROR {v['ERROR']}, NOT_SUPPORTED {v['NOT_SUPPORTED']}{xfail}"
            f"{'; ' + partial if partial else ''})")


def verdict_lines(doc: dict[str, Any]) -> dict[str, str]:
    """`verdict_line` of every level of the document, with the reasons of a level not
    claimed."""
    reasons = unclaimed_reasons(doc)
    return {level: verdict_line(v, reasons.get(level)) for level, v in doc["verdict"].items()}


def _diagnosis_line(r: dict[str, Any]) -> str:
    """"Diagnosis: <text>" for a diagnosed result ("" when none, or when its message already
    holds the sentence)."""
    d = diagnosis_of(r)
    if d is None:
        return ""
    text = d["text"] or (f"the output equals the reading{'s' if len(d['readings']) != 1 else ''} "
                         + ", ".join(d["readings"]))
    return "" if text in str(r.get("message") or "") else f"Diagnosis: {text}"


def render_junit(doc: dict[str, Any]) -> str:
    cases = []
    for r in doc["results"]:
        classname, name = _split_id(r["id"])
        element, message = junit_outcome(r)
        m, d = margin_of(r), diagnosis_of(r)
        cases.append({"r": r, "classname": classname, "name": name,
                      "element": element, "message": message,
                      "time": float(r.get("duration_s") or 0.0),
                      "mismatches": _mismatch_lines(r), "crash": crash_line(r.get("crash")),
                      "crash_output": crash_output(r.get("crash")),
                      "margin": None if m is None else repr(m),
                      "readings": ", ".join(d["readings"]) if d else "",
                      "diagnosis": _diagnosis_line(r)})
    verdicts = verdict_words(doc)
    backend = doc.get("backend") or {}
    return _env(True).get_template("junit.xml.j2").render(
        doc=doc, cases=cases, counts=junit_counts(doc), verdicts=verdicts,
        backend_name=backend.get("name", ""), backend_class=backend.get("class", ""),
        load_files=_load_error_files(doc), incomplete=incomplete_line(doc),
        shard=shard_line(doc), execution=execution_text(doc.get("execution")),
        tamper_proof=tamper_proof(doc), integrity=integrity_line(doc),
        flags=flags_text(doc), warnings=len(warnings_of(doc)),
        largest=largest_margin(doc["results"]))


def render_markdown(doc: dict[str, Any], max_failures: int = DEFAULT_MAX_FAILURES) -> str:
    """The summary; max_failures limits each list of cases (FAILING, QUALITY_WARNING, load
    errors)."""
    bad = [{**r, "crash": crash_line(r.get("crash")), "diagnosis": diagnosis_of(r)}
           for r in doc["results"] if r["status"] in FAILING]
    warned = [{**r, "margin_text": margin_text(margin_of(r))} for r in warnings_of(doc)]
    problems = load_errors(doc)
    backend = doc.get("backend") or {}
    return _env(False).get_template("summary.md.j2").render(
        doc=doc, statuses=STATUSES, failing=FAILING, verdicts=doc["verdict"],
        words=verdict_words(doc), unsupported=unsupported_reasons(doc["results"]),
        max_failures=max_failures, shown=bad[:max_failures],
        more=max(0, len(bad) - max_failures), total_bad=len(bad),
        any_diagnosis=any(r["diagnosis"] for r in bad),
        warned=warned[:max_failures], more_warned=max(0, len(warned) - max_failures),
        total_warned=len(warned), flags=flags_text(doc),
        closest=closest(doc["results"], CLOSEST_MARKDOWN), largest=largest_margin(doc["results"]),
        histogram=margin_histogram(doc["results"]), diagnoses=diagnosis_summary(doc),
        any_ambiguous=any(doc["ambiguous"].get(k) for k in STATUSES),
        backend_name=backend.get("name", ""), backend_class=backend.get("class", ""),
        platform=doc.get("platform") or {}, incomplete=incomplete_line(doc),
        shard=shard_line(doc), execution=execution_text(doc.get("execution")),
        integrity=integrity_line(doc),
        load_errors=problems[:max_failures], more_load_errors=max(0, len(problems) - max_failures))


_DATA_TYPE = re.compile(r"^(float16|float32|float64|u?int8|u?int16|u?int32|u?int64)(?:-|$)")
NO_DATA_TYPE = "-"


def case_data_type(r: dict[str, Any]) -> str:
    """The data type a case runs with: its `data_types` joined with "/" (`FLOAT16`,
    `FLOAT32/UINT8`); in older documents, which lack them, the last id part that is a data type
    name in lowercase (`.../float16`, `.../float32-a`), upper-cased, or "-" when none is."""
    types = r.get("data_types")
    if isinstance(types, list) and types and all(isinstance(t, str) for t in types):
        return "/".join(types)
    for part in reversed(str(r.get("id", "")).split("/")):
        m = _DATA_TYPE.match(part)
        if m:
            return m.group(1).upper()
    return NO_DATA_TYPE


def case_family(r: dict[str, Any]) -> str:
    """"documented" for a documented case, else the generated case's first tag (its family)."""
    tags = r.get("tags") or []
    if str(r.get("id", "")).startswith("documented/") or (tags and tags[0] == "documented"):
        return "documented"
    return str(tags[0]) if tags else NO_DATA_TYPE


def repro_command(doc: dict[str, Any], case: str | dict[str, Any]) -> str:
    """The one command that reruns a case alone (conformance.results.reproduce, as every face
    prints it), from the document: the run's case paths, backend, chosen feature level and
    execution flags (which widen the float16 envelope: they change the judgement). case: a
    result of the document, or its id."""
    r = case if isinstance(case, dict) else next(
        (x for x in doc.get("results") or [] if isinstance(x, dict) and x.get("id") == case),
        {"id": case})

    def text(value: Any) -> str | None:
        return value if isinstance(value, str) else None

    return reproduce_command(
        str(r.get("id")), [str(p) for p in doc.get("case_paths") or ["cases"]],
        str((doc.get("backend") or {}).get("name", "numpy")), level=chosen_level(doc),
        execution_flags=execution_flags(doc), case_level=text(r.get("feature_level")),
        case_level_below=text(r.get("feature_level_below")))


def _matrix(results: list[dict[str, Any]], row: Callable[[dict[str, Any]], str],
            ) -> dict[str, Any]:
    """Row (data type or family) x operator: per cell the count of each status, and the worst
    status in it. The operators are the columns: there are fewer of them than data types or
    families, so the table fits a 1,280 px window (tests/test_report_browser.py)."""
    cells: dict[tuple[str, str], dict[str, int]] = {}
    rows: set[str] = set()
    cols: set[str] = set()
    for r in results:
        key = row(r)
        rows.add(key)
        for op in r.get("operators") or [NO_DATA_TYPE]:
            cols.add(str(op))
            cell = cells.setdefault((key, str(op)), dict.fromkeys(STATUSES, 0))
            cell[r["status"]] += 1
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
LIST_ORDER = ("FAIL", "ERROR", "TIMEOUT", "XPASS", WARNING, "XFAIL", "NOT_SUPPORTED", "PASS")


def _section(r: dict[str, Any]) -> str:
    status = r["status"]
    if status in ("NOT_SUPPORTED", "PASS"):
        return {"NOT_SUPPORTED": "unsupported", "PASS": "passing"}[status]
    if status == WARNING:  # every warned case in one list, ambiguous ones too
        return "warnings"
    if r.get("ambiguous"):
        return "ambiguous"
    if status == "XFAIL" and r.get("waiver"):
        return "waived"
    return {"XFAIL": "xfail", "XPASS": "xpass"}.get(status, "failures")


def unsupported_reasons(results: list[dict[str, Any]]) -> list[tuple[str, int]]:
    """The NOT_SUPPORTED results' reasons (their messages), each with its count, most frequent
    first."""
    counts = Counter(str(r.get("message") or "") for r in results
                     if r["status"] == "NOT_SUPPORTED")
    return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))


def _id_groups(doc: dict[str, Any], status: str, op_index: dict[str, str],
               ) -> list[dict[str, Any]]:
    """The results of a status as groups of ids for the HTML report: NOT_SUPPORTED by reason
    (the most frequent first), PASS as one group; in each group one block of ids (one a line)
    per operators and data type, which the filters show or hide whole, and the command that
    reruns the group's first case alone (one that holds below the claimed level runs at its
    own level)."""
    groups: dict[str, dict[tuple[str, str], list[str]]] = {}
    first: dict[str, dict[str, Any]] = {}
    for r in doc["results"]:
        if r["status"] != status:
            continue
        reason = str(r.get("message") or "") if status == "NOT_SUPPORTED" else ""
        first.setdefault(reason, r)
        ops = " ".join(op_index[str(op)] for op in r.get("operators") or [])
        # one id a line: a line end inside an id (none is loaded so) would split it
        case_id = " ".join(str(r["id"]).splitlines())
        groups.setdefault(reason, {}).setdefault((ops, case_data_type(r)), []).append(case_id)
    out = []
    for reason, blocks in groups.items():
        out.append({"reason": reason, "count": sum(map(len, blocks.values())),
                    "repro": repro_command(doc, first[reason]),
                    "blocks": [{"ops": ops, "dtype": dtype, "n": len(ids),
                                "ids": "\n".join(ids)}
                               for (ops, dtype), ids in sorted(blocks.items())]})
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
        index, rest = [], start // max(width, 1)
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


def render_html(doc: dict[str, Any], comparison: Any = None) -> str:
    """One self-contained HTML page (inline CSS and JS, no external asset), failures first:
    the verdict per level (a level not claimed with its reasons), the counts, the diagnosis
    summary, then the cases by section (SECTIONS: FAIL/ERROR/TIMEOUT, XPASS, QUALITY_WARNING,
    XFAIL, ambiguous: one expandable row each; NOT_SUPPORTED summarised per reason and PASS,
    collapsed, as lists of ids), with filters (status, operator, data type, text) that every
    section's count follows; then the data type x operator and family x operator matrices,
    the margins (an inline SVG histogram and the cases closest to the bound), the notes and
    the provenance (execution flags included). Everything from the document is escaped by
    Jinja's autoescape; the script only reads data attributes and text and writes with
    textContent. comparison: a conformance.results.diff.Diff against an earlier run, shown as
    its own section."""
    results = doc["results"]
    operators = sorted({str(op) for r in results for op in r.get("operators") or []})
    # the operator filter matches option indices: a name may hold spaces
    op_index = {op: str(i) for i, op in enumerate(operators)}
    rank = {s: k for k, s in enumerate(LIST_ORDER)}
    rows = []
    for r in results:
        section = _section(r)
        if section in ("unsupported", "passing"):
            continue
        rows.append({"r": r, "dtype": case_data_type(r), "family": case_family(r),
                     "ops": " ".join(op_index[str(op)] for op in r.get("operators") or []),
                     "section": section, "repro": repro_command(doc, r),
                     "crash": crash_line(r.get("crash")),
                     "crash_output": crash_output(r.get("crash")),
                     "mismatches": [m for m in r.get("mismatches") or []
                                    if isinstance(m, dict)],
                     "grids": [grid_rows(g) for g in r.get("grids") or []
                               if isinstance(g, dict) and g.get("got")],
                     "margin": margin_of(r),
                     "diagnosis": diagnosis_of(r)})
    rows.sort(key=lambda x: rank.get(x["r"]["status"], len(rank)))  # stable: run order kept
    sections = {name: [x for x in rows if x["section"] == name] for name, _ in SECTIONS}
    unsupported = _id_groups(doc, "NOT_SUPPORTED", op_index)
    passing = _id_groups(doc, "PASS", op_index)
    totals = {name: len(rows) for name, rows in sections.items()}
    totals.update(unsupported=sum(g["count"] for g in unsupported),
                  passing=sum(g["count"] for g in passing))
    # passing ambiguous cases have no row in the ambiguous section (a warned one is listed
    # with the warnings)
    ambiguous_pass = sum(1 for r in results
                         if r.get("ambiguous") and r["status"] in ("PASS", WARNING))
    histogram = margin_histogram(results)
    info = [r for r in results if r.get("info")]
    backend = doc.get("backend") or {}
    present = {r["status"] for r in results}
    env = _env(True)
    env.filters["fmt_index"] = lambda v: ", ".join(str(i) for i in v) \
        if isinstance(v, list) else str(v)
    env.filters.update(web_url=web_url, margin=margin_text, breakable=breakable)
    return env.get_template("report.html.j2").render(
        doc=doc, statuses=STATUSES, verdicts=doc["verdict"], words=verdict_words(doc),
        not_claimed=not_claimed, count_class=count_class,
        backend=backend, capabilities=backend.get("capabilities") or {},
        platform=doc.get("platform") or {}, section_titles=SECTIONS, sections=sections,
        unsupported=unsupported, passing=passing, totals=totals, ambiguous_pass=ambiguous_pass,
        info=info, total=len(results),
        by_dtype=_matrix(results, case_data_type), by_family=_matrix(results, case_family),
        operators=operators,
        dtypes=sorted({case_data_type(r) for r in results},
                      key=lambda c: (c == NO_DATA_TYPE, c)),
        present=[s for s in LIST_ORDER if s in present],
        comparison=comparison, incomplete=incomplete_line(doc), shard=shard_line(doc),
        integrity=integrity_line(doc),
        load_errors=load_errors(doc), execution=execution_text(doc.get("execution")),
        flags=flags_text(doc), short=SHORT, histogram=histogram,
        svg=histogram_svg(histogram) if histogram["judged"] else None,
        closest=closest(results, CLOSEST_HTML), largest=largest_margin(results),
        diagnoses=diagnosis_summary(doc))


#: Output kind -> renderer.
RENDERERS: dict[str, Callable[[dict[str, Any]], str]] = {
    "junit": render_junit,
    "markdown": render_markdown,
    "html": render_html,
}


def write(text: str, path: str | Path) -> None:
    """Atomically (results.write_atomic), creating missing parent folders. A lone surrogate
    (from a results JSON with an escaped one) cannot be encoded: it is written as "?"."""
    write_atomic(text.encode("utf-8", "replace").decode("utf-8"), path)


def write_reports(doc: dict[str, Any], outputs: dict[str, str | Path | None]) -> list[Path]:
    """Render `doc` to each {kind: path} given (None: skipped); the paths written."""
    written = []
    for kind, path in outputs.items():
        if path:
            write(RENDERERS[kind](doc), path)
            written.append(Path(path))
    return written
