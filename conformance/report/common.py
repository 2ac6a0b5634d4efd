"""What the reports share (conformance.report renders them): text made safe for XML and for a
Markdown table, the Jinja environment of the templates (templates/), and the document read as
words and numbers that more than one report shows: crash, load errors, tamper-proofness, shard,
the cases resumed from a journal, execution and its flags, margins and their histogram,
diagnoses, each case's data type and family, and the command that reruns a case alone.
"""

from __future__ import annotations

import math
import re
from bisect import bisect_right
from collections import Counter
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup, escape

from conformance.results import (
    NOT_RECOGNISED,
    Execution,
    LoadError,
    MergedExecution,
    Result,
    ResultsDocument,
    Shard,
    ShardRun,
    Status,
    chosen_level,
    counted,
    reading_words,
    reproduce_command,
)

TEMPLATES = Path(__file__).resolve().parent / "templates"
WARNING = Status.QUALITY_WARNING
#: The margin histogram: bins of half a decade from MARGIN_LOW to 1 (log-scaled).
MARGIN_LOW = 1e-6
MARGIN_EDGES = tuple(10.0 ** (k / 2) for k in range(-12, 1))

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


def environment(autoescape: bool) -> jinja2.Environment:
    """The templates' Jinja environment (autoescape: for the XML and HTML reports), with the
    filters every report uses."""
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATES)),
                             autoescape=autoescape,
                             trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)
    env.filters.update(xattr=_xml_attr, xml=_xml, md=md_cell, counted=counted)
    return env


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


def load_errors(doc: ResultsDocument) -> list[dict[str, str]]:
    """The document's load errors (none in a document older than the field), each with
    "where" ("file:line", or the file when the line is unknown) and "file" and "message" as
    text."""
    out = []
    for e in doc.load_errors or []:
        e = e if isinstance(e, LoadError) else LoadError(message=e)
        file = "" if e.file is None else str(e.file)
        line = e.line
        out.append({"file": file, "where": file if line is None else f"{file}:{line}",
                    "message": "" if e.message is None else str(e.message)})
    return out


def incomplete_line(doc: ResultsDocument) -> str | None:
    """The headline of a run that could not load all its cases (None for a complete one):
    "INCOMPLETE: 2 case file problems — cases were not run, no verdict stands"."""
    problems = len(load_errors(doc))
    if doc.complete is not False and not problems:
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


def _executed_tamper_proof(e: Any) -> bool:
    """Whether an execution was tamper-proof: a merged run's when every shard's was."""
    if isinstance(e, MergedExecution):
        return bool(e.merged) and all(isinstance(m, ShardRun)
                                      and _executed_tamper_proof(m.execution) for m in e.merged)
    return isinstance(e, Execution) and e.tamper_proof is True


def tamper_proof(doc: ResultsDocument) -> bool:
    """Whether the run's judge was out of the backend's reach (the backend in isolated worker
    processes, the judge in the harness): its execution says so; a merged run's when every
    shard's does; a document that does not say is not."""
    return _executed_tamper_proof(doc.execution)


def integrity_line(doc: ResultsDocument) -> str | None:
    """NOT_TAMPER_PROOF for a run that was not tamper-proof, else None."""
    return None if tamper_proof(doc) else NOT_TAMPER_PROOF


def given(record: Any, key: str, default: Any = None) -> Any:
    """A field of a part of the document (a results.Record, a Result) as the document gives
    it: `default` where the JSON it was read from lacks it."""
    return getattr(record, key) if record.has(key) else default


def shard_line(doc: ResultsDocument) -> str | None:
    """For one shard of a sharded run: "shard 2 of 4: 10 of 40 cases; the verdict covers this
    shard only (join shards with `dmlconf merge`)"; None for a whole run."""
    shard = doc.shard
    if not isinstance(shard, Shard):
        return None
    return (f"shard {given(shard, 'index', '?')} of {given(shard, 'count', '?')}: "
            f"{given(shard, 'cases', '?')} of {given(shard, 'of_cases', '?')} cases; the "
            "verdict covers this shard only (join shards with `dmlconf merge`)")


def _size(n: Any) -> str:
    if isinstance(n, bool) or not isinstance(n, (int, float)):
        return str(n)
    if n >= 2 ** 30:
        return f"{n / 2 ** 30:.4g} GiB"
    return f"{n / 2 ** 20:.4g} MiB"


#: The fields of an execution that execution_text words itself (or leaves out: the flags,
#: tamper-proofness and the resumed cases' ids have lines of their own); any other is shown as
#: "name value".
_WORDED = frozenset({"merged", "thread_environment", "execution_flags", "cases_per_worker",
                     "retries", "isolated", "tamper_proof", "certify", "timeout_s",
                     "memory_cap_bytes", "workers", "resumed_cases", "resumed",
                     "expectations_cache"})


def _count(value: Any) -> int:
    """A count as the document gives it: 0 for anything that is not a whole number."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _runs(execution: Any) -> list[Execution]:
    """The executions of the run's parts: a merged run's shards', else the run's own."""
    if isinstance(execution, MergedExecution):
        return [m.execution for m in execution.merged
                if isinstance(m, ShardRun) and isinstance(m.execution, Execution)]
    return [execution] if isinstance(execution, Execution) else []


def expectations_line(doc: ResultsDocument) -> str | None:
    """Where the run's judge took expectations from the expectations cache rather than
    computing them (execution.expectations_cache; a merged run's, any shard's): "read from the
    cache, not recomputed (FOLDER): ..."; None where it believed no entry (a certification, the
    cache off) or the document does not say (older than the field)."""
    folders = list(dict.fromkeys(str(f) for e in _runs(doc.execution)
                                 if (f := given(e, "expectations_cache"))))
    if not folders:
        return None
    return (f"read from the cache, not recomputed ({', '.join(folders)}): an entry there, "
            "which the backend's user can write, was believed; a certification (--certify) "
            "computes every one")


def resumed(doc: ResultsDocument) -> dict[str, Any] | None:
    """The cases whose results `dmlconf run --resume` took from the journal of an interrupted
    run, not run again (a merged run's: every shard's): None where there are none; else
    "count", "total" (the results), "ids" (in result order; None where the document only
    counts them: one older than execution.resumed) and "line", the headline every report
    shows: "RESUMED: 5 of 40 results were taken from the journal of an interrupted run
    (--resume); the other 35 cases ran in the run that finished it"."""
    count, ids = 0, []
    named = True
    for e in _runs(doc.execution):
        listed = given(e, "resumed")
        n = _count(given(e, "resumed_cases"))
        if isinstance(listed, list):
            ids += [str(i) for i in listed]
            n = max(n, len(listed))
        elif n:
            named = False
        count += n
    if not count:
        return None
    total = len(doc.results)
    line = (f"RESUMED: {count} of {counted(total, 'result')} {'was' if count == 1 else 'were'} "
            "taken from the journal of an interrupted run (--resume), not run again; the "
            f"other {counted(max(total - count, 0), 'case')} ran in the run that finished it")
    if not named:
        line += " (this results file does not name the resumed cases)"
    return {"count": count, "total": total, "ids": ids if named else None, "line": line}


def resumed_lines(doc: ResultsDocument, limit: int = 20) -> list[str]:
    """What a terminal summary says of the resumed cases: resumed()'s line, then "RESUMED
    <id>" for the first `limit` of them and how many more (none where nothing was resumed)."""
    found = resumed(doc)
    if not found:
        return []
    ids = found["ids"] or []
    lines = [found["line"], *(f"RESUMED {case_id}" for case_id in ids[:limit])]
    if len(ids) > limit:
        lines.append(f"... and {len(ids) - limit} more resumed cases (execution.resumed in the "
                     "results)")
    return lines


def resumed_ids(doc: ResultsDocument) -> frozenset[str]:
    """The ids of the resumed cases the document names (resumed()); empty where none."""
    found = resumed(doc)
    return frozenset(found["ids"] or ()) if found else frozenset()


def execution_text(execution: Execution | MergedExecution | None) -> str | None:
    """How the run was executed, in words: "4 workers; isolated: yes; per-case timeout 30 s;
    memory cap 2 GiB" (and any further field as "name value"); None when unknown."""
    if isinstance(execution, MergedExecution):  # dmlconf merge: each shard's own execution
        shards = [f"shard {given(m, 'shard', '?')}: {execution_text(m.execution) or '?'}"
                  for m in execution.merged if isinstance(m, ShardRun)]
        return f"merged from {counted(len(shards), 'shard')}: " + " | ".join(shards)
    if not isinstance(execution, Execution):
        return None
    e = execution
    threads = given(e, "thread_environment")
    per_worker, retries = given(e, "cases_per_worker"), given(e, "retries")
    isolated, certify = given(e, "isolated"), given(e, "certify")
    timeout, cap = given(e, "timeout_s"), given(e, "memory_cap_bytes")
    parts = [counted(given(e, "workers", "?"), "worker"),
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
    resumed_cases = _count(given(e, "resumed_cases"))
    if resumed_cases:
        parts.append(f"{counted(resumed_cases, 'result')} taken from the journal (--resume)")
    parts += [f"{key} {value}" for key, value in e.to_json().items() if key not in _WORDED]
    return "; ".join(parts)


def execution_flags(doc: ResultsDocument) -> list[str]:
    """The run's DML_EXECUTION_FLAGS by name: the document's `execution_flags`, else its
    execution's; [] for none, and in a document older than the field."""
    flags: Any = given(doc, "execution_flags")
    if flags is None and isinstance(doc.execution, Execution):
        flags = given(doc.execution, "execution_flags")
    if isinstance(flags, str):
        flags = [flags]
    return [str(f) for f in flags] if isinstance(flags, list) else []


def flags_text(doc: ResultsDocument) -> str:
    """The execution flags as shown in reports and by `dmlconf run`: the names joined with "|"
    ("ALLOW_HALF_PRECISION_COMPUTATION|DISABLE_META_COMMANDS"), or "NONE"."""
    return "|".join(execution_flags(doc)) or "NONE"


def margin_of(r: Result) -> float | None:
    """A result's margin (largest |error| / legal bound) as a number, or None where it has none
    (bit-exact models, cases not judged, documents older than the field, a value that is not a
    non-negative number)."""
    m: Any = r.margin
    if isinstance(m, bool) or not isinstance(m, (int, float)) or math.isnan(m) or m < 0:
        return None
    return float(m)


def margin_text(m: float | None) -> str:
    return "-" if m is None else f"{m:.3g}"


def margin_histogram(results: list[Result]) -> dict[str, Any]:
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


def closest(results: list[Result], n: int) -> list[dict[str, Any]]:
    """The n cases closest to the legal bound: those with a margin of at most 1, the largest
    first (then by id), each with its id, operators, data type, margin and status."""
    inside = [(m, r) for r in results if (m := margin_of(r)) is not None and m <= 1]
    inside.sort(key=lambda x: (-x[0], str(x[1].id)))
    return [{"id": r.id, "operators": ", ".join(map(str, r.operators or [])),
             "dtype": case_data_type(r), "margin": m, "margin_text": margin_text(m),
             "status": r.status} for m, r in inside[:n]]


def largest_margin(results: list[Result]) -> dict[str, Any] | None:
    """The result with the largest margin, FAILs beyond the bound included (None when no
    result has one): its id, status, margin and margin_text."""
    best = max(((m, r) for r in results if (m := margin_of(r)) is not None),
               key=lambda x: x[0], default=None)
    if best is None:
        return None
    m, r = best
    return {"id": r.id, "status": r.status, "margin": m, "margin_text": margin_text(m)}


def diagnosis_of(r: Result) -> dict[str, Any] | None:
    """A result's diagnosis as {"readings": [keys as text], "text": text}, or None when it has
    none (a case that passed, a FAIL nothing recognised with no sentence, an older document)."""
    d: Any = r.diagnosis
    if not isinstance(d, dict):
        return None
    readings = d.get("readings")
    keys = [str(k) for k in readings if k is not None] if isinstance(readings, list) else []
    text = "" if d.get("text") is None else str(d["text"])
    return {"readings": keys, "text": text} if keys or text else None


def diagnosis_summary(doc: ResultsDocument) -> dict[str, Any]:
    """The run's FAILs by the misreading they were diagnosed as: `readings` (key, count and
    the reading's words, most frequent first), `failures` (FAIL results) and `unrecognised`
    (FAILs whose output matched no reading of the catalogue). The counts are the document's
    `diagnoses` when it has them (its NOT_RECOGNISED key gives `unrecognised`), else counted
    from the FAIL results' `diagnosis` (a FAIL that matches several readings counts under
    each)."""
    fails = [r for r in doc.results if r.status == Status.FAIL]
    unrecognised = sum(1 for r in fails if not (diagnosis_of(r) or {}).get("readings"))
    diagnoses: Any = given(doc, "diagnoses")
    if isinstance(diagnoses, dict):
        counts = {str(k): v for k, v in diagnoses.items()
                  if isinstance(v, int) and not isinstance(v, bool) and v > 0}
        unrecognised = counts.pop(NOT_RECOGNISED,
                                  0 if NOT_RECOGNISED in diagnoses else unrecognised)
    else:
        counts = dict(Counter(k for r in fails
                              for k in (diagnosis_of(r) or {}).get("readings", [])))
    readings = [{"key": k, "count": n, "reading": reading_words(k)}
                for k, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]
    return {"readings": readings, "failures": len(fails), "unrecognised": unrecognised}


def warnings_of(doc: ResultsDocument) -> list[Result]:
    """The QUALITY_WARNING results, in result order."""
    return [r for r in doc.results if r.status == WARNING]


_DATA_TYPE = re.compile(r"^(float16|float32|float64|u?int8|u?int16|u?int32|u?int64)(?:-|$)")
NO_DATA_TYPE = "-"


def case_data_type(r: Result) -> str:
    """The data type a case runs with: its `data_types` joined with "/" (`FLOAT16`,
    `FLOAT32/UINT8`); in older documents, which lack them, the last id part that is a data type
    name in lowercase (`.../float16`, `.../float32-a`), upper-cased, or "-" when none is."""
    types: Any = r.data_types
    if isinstance(types, list) and types and all(isinstance(t, str) for t in types):
        return "/".join(types)
    for part in reversed(str(r.id).split("/")):
        m = _DATA_TYPE.match(part)
        if m:
            return m.group(1).upper()
    return NO_DATA_TYPE


def repro_command(doc: ResultsDocument, case: str | Result) -> str:
    """The one command that reruns a case alone (conformance.results.reproduce, as every face
    prints it), from the document: the run's case paths, backend, chosen feature level and
    execution flags (which widen the float16 envelope: they change the judgement). case: a
    result of the document, or its id."""
    r = case if isinstance(case, Result) else next(
        (x for x in doc.results or [] if isinstance(x, Result) and x.id == case), None)

    def text(value: Any) -> str | None:
        return value if isinstance(value, str) else None

    backend: Any = doc.backend or {}
    return reproduce_command(
        str(case if r is None else r.id), [str(p) for p in doc.case_paths or ["cases"]],
        str(backend.get("name", "numpy")), level=chosen_level(doc),
        execution_flags=execution_flags(doc),
        case_level=None if r is None else text(given(r, "feature_level")),
        case_level_below=None if r is None else text(given(r, "feature_level_below")))


def unsupported_reasons(results: list[Result]) -> list[tuple[str, int]]:
    """The NOT_SUPPORTED results' reasons (their messages), each with its count, most frequent
    first."""
    counts = Counter(str(r.message or "") for r in results
                     if r.status == Status.NOT_SUPPORTED)
    return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
