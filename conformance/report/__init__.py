"""Reports rendered from a results document (the dict `conformance.results.document` makes,
or `load` reads back from its JSON): JUnit XML for CI test views and a Markdown summary for a
GitHub Actions job summary, and a self-contained HTML report. The templates ship inside the
package, in templates/.

JUnit mapping (docs/results-format.md, "Reports"): one <testcase> per result; FAIL is a
<failure>, ERROR and TIMEOUT an <error>, NOT_SUPPORTED a <skipped> with its reason; what is
known of a crashed worker goes to <system-err>. An ambiguous case never fails the suite: its
FAIL, ERROR or TIMEOUT is rendered as <skipped message="ambiguous region of the spec: ...">
with the full message in <system-out>, and every ambiguous case carries an `ambiguous`
<property>. Case files that could not be loaded are one <testcase classname="load"> per file,
with an <error> per problem.

The HTML report (`render_html`, templates/report.html.j2) is one file with inline CSS and JS.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup, escape

from conformance.results import FAILING, FORMAT, STATUSES, write_atomic

TEMPLATES = Path(__file__).resolve().parent / "templates"
DEFAULT_MAX_FAILURES = 50
#: Statuses from worst to best: a matrix cell is coloured by the first one it holds.
WORST_FIRST = ("ERROR", "TIMEOUT", "FAIL", "XPASS", "XFAIL", "NOT_SUPPORTED", "PASS")

# Characters XML 1.0 does not allow anywhere, not even as character references.
_XML_FORBIDDEN = re.compile("[^\t\n\r\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


_CONTROL = re.compile("[\x00-\x1f\x7f]")


class ReportError(ValueError):
    """A results file that cannot be read as a results document."""


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
    env.filters.update(xattr=_xml_attr, xml=_xml, md=md_cell)
    return env


def load(path: str | Path) -> dict[str, Any]:
    """Read a results JSON; ReportError (one line) when it is missing or not one."""
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise ReportError(f"{path}: cannot read the results file: "
                          f"{exc.strerror or exc}") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ReportError(f"{path}: not a results JSON document: {exc}") from None
    problem = _problem(doc)
    if problem:
        raise ReportError(f"{path}: not a results JSON document ({FORMAT}): {problem}")
    return doc


def _problem(doc: Any) -> str | None:
    if not isinstance(doc, dict):
        return "the top level is not an object"
    if doc.get("format") != FORMAT:
        return f"format is {doc.get('format')!r}"
    for key, kind in (("summary", dict), ("ambiguous", dict), ("verdict", dict),
                      ("results", list)):
        if not isinstance(doc.get(key), kind):
            return f"{key!r} is missing or not a{'n object' if kind is dict else ' list'}"
    for i, r in enumerate(doc["results"]):
        if not isinstance(r, dict) or not isinstance(r.get("id"), str) \
                or r.get("status") not in STATUSES:
            return f"results[{i}] has no id or no known status"
    return None


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
            "XFAIL": ("skipped", f"expected failure (baseline): {message}")}.get(status, ("", ""))


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
    what = (f"{problems} case file problem{'s' if problems != 1 else ''}" if problems
            else "some cases could not be loaded")
    return f"INCOMPLETE: {what} — cases were not run, no verdict stands"


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
        return f"merged from {len(shards)} shard(s): " + " | ".join(shards)
    threads = e.pop("thread_environment", None)
    if not e.get("resumed_cases"):
        e.pop("resumed_cases", None)
    per_worker = e.pop("cases_per_worker", None)
    retries = e.pop("retries", None)
    isolated = e.pop("isolated", None)
    timeout, cap = e.pop("timeout_s", None), e.pop("memory_cap_bytes", None)
    parts = [f"{e.pop('workers', '?')} worker(s)",
             "isolated: " + ("?" if isolated is None else "yes" if isolated is True
                             else "no" if isolated is False else str(isolated)),
             "no per-case timeout" if timeout is None else f"per-case timeout {timeout} s",
             "no memory cap" if cap is None else f"memory cap {_size(cap)}"]
    if per_worker:
        parts.append(f"a fresh worker every {per_worker} case(s)")
    if retries:
        parts.append(f"failing cases retried {retries} time(s)")
    if isinstance(threads, dict) and threads:
        parts.append("workers' thread pools " + ", ".join(f"{k}={v}" for k, v in threads.items()))
    parts += [f"{key} {value}" for key, value in e.items()]
    return "; ".join(parts)


def _verdict_word(v: dict[str, Any]) -> str:
    if v.get("conformant") is None:
        return "no verdict (no mandatory case selected)"
    return "conformant" if v["conformant"] else "NOT conformant"


def render_junit(doc: dict[str, Any]) -> str:
    cases = []
    for r in doc["results"]:
        classname, name = _split_id(r["id"])
        element, message = junit_outcome(r)
        cases.append({"r": r, "classname": classname, "name": name,
                      "element": element, "message": message,
                      "time": float(r.get("duration_s") or 0.0),
                      "mismatches": _mismatch_lines(r), "crash": crash_line(r.get("crash")),
                      "crash_output": crash_output(r.get("crash"))})
    verdicts = {level: _verdict_word(v) for level, v in doc["verdict"].items()}
    backend = doc.get("backend") or {}
    return _env(True).get_template("junit.xml.j2").render(
        doc=doc, cases=cases, counts=junit_counts(doc), verdicts=verdicts,
        backend_name=backend.get("name", ""), backend_class=backend.get("class", ""),
        load_files=_load_error_files(doc), incomplete=incomplete_line(doc),
        shard=shard_line(doc), execution=execution_text(doc.get("execution")))


def render_markdown(doc: dict[str, Any], max_failures: int = DEFAULT_MAX_FAILURES) -> str:
    bad = [{**r, "crash": crash_line(r.get("crash"))}
           for r in doc["results"] if r["status"] in FAILING]
    problems = load_errors(doc)
    backend = doc.get("backend") or {}
    return _env(False).get_template("summary.md.j2").render(
        doc=doc, statuses=STATUSES, failing=FAILING, verdicts=doc["verdict"],
        word=_verdict_word,
        shown=bad[:max_failures], more=max(0, len(bad) - max_failures), total_bad=len(bad),
        any_ambiguous=any(doc["ambiguous"].get(k) for k in STATUSES),
        backend_name=backend.get("name", ""), backend_class=backend.get("class", ""),
        platform=doc.get("platform") or {}, incomplete=incomplete_line(doc),
        shard=shard_line(doc), execution=execution_text(doc.get("execution")),
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


def repro_command(doc: dict[str, Any], case_id: str) -> str:
    """The one command that reruns a case alone, with the run's case paths and backend."""
    import shlex

    words = ["dmlconf", "run"]
    for path in doc.get("case_paths") or ["cases"]:
        words += ["--cases", str(path)]
    words += ["-k", case_id, "--backend", str((doc.get("backend") or {}).get("name", "numpy"))]
    return shlex.join(words)


def _matrix(results: list[dict[str, Any]], column: Callable[[dict[str, Any]], str],
            ) -> dict[str, Any]:
    """Operator x column: per cell the count of each status, and the worst status in it."""
    cells: dict[tuple[str, str], dict[str, int]] = {}
    rows: set[str] = set()
    cols: set[str] = set()
    for r in results:
        col = column(r)
        cols.add(col)
        for op in r.get("operators") or [NO_DATA_TYPE]:
            rows.add(op)
            cell = cells.setdefault((op, col), dict.fromkeys(STATUSES, 0))
            cell[r["status"]] += 1
    worst = {key: next(s for s in WORST_FIRST if c[s]) for key, c in cells.items()}
    return {"rows": sorted(rows), "cols": sorted(cols, key=lambda c: (c == NO_DATA_TYPE, c)),
            "cells": cells, "worst": worst}


def _section(r: dict[str, Any]) -> str:
    if r.get("ambiguous"):
        return "ambiguous"
    if r["status"] in ("XFAIL", "XPASS"):
        return "baseline"
    return "failures"


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
    """One self-contained HTML page (inline CSS and JS, no external asset): verdict and
    provenance, operator x data type and operator x family matrices, and one expandable row
    per non-PASS case (PASS cases are only counted), with filters. Everything from the
    document is escaped by Jinja's autoescape; the script only reads data attributes and
    writes with textContent. comparison: a compare_runs.Diff against an earlier run, shown as
    its own section."""
    results = doc["results"]
    operators = sorted({str(op) for r in results if r["status"] != "PASS"
                        for op in r.get("operators") or []})
    op_index = {op: str(i) for i, op in enumerate(operators)}
    rows = []
    for r in results:
        if r["status"] == "PASS":
            continue
        rows.append({"r": r, "dtype": case_data_type(r), "family": case_family(r),
                     # the operator filter matches option indices: a name may hold spaces
                     "ops": " ".join(op_index[str(op)] for op in r.get("operators") or []),
                     "section": _section(r), "repro": repro_command(doc, r["id"]),
                     "crash": crash_line(r.get("crash")),
                     "crash_output": crash_output(r.get("crash")),
                     "mismatches": [m for m in r.get("mismatches") or []
                                    if isinstance(m, dict)],
                     "grids": [grid_rows(g) for g in r.get("grids") or []
                               if isinstance(g, dict) and g.get("got")]})
    sections = {name: [x for x in rows if x["section"] == name]
                for name in ("failures", "baseline", "ambiguous")}
    ambiguous_pass = sum(1 for r in results if r.get("ambiguous") and r["status"] == "PASS")
    info = [r for r in results if r.get("info")]
    backend = doc.get("backend") or {}
    env = _env(True)
    env.filters["fmt_index"] = lambda v: ", ".join(str(i) for i in v) \
        if isinstance(v, list) else str(v)
    env.filters["web_url"] = web_url
    return env.get_template("report.html.j2").render(
        doc=doc, statuses=STATUSES, verdicts=doc["verdict"], word=_verdict_word,
        backend=backend, capabilities=backend.get("capabilities") or {},
        platform=doc.get("platform") or {}, sections=sections, ambiguous_pass=ambiguous_pass,
        info=info, total=len(results),
        by_dtype=_matrix(results, case_data_type), by_family=_matrix(results, case_family),
        operators=operators, dtypes=sorted({x["dtype"] for x in rows}),
        present=[s for s in STATUSES if s != "PASS" and doc["summary"].get(s)],
        comparison=comparison, incomplete=incomplete_line(doc), shard=shard_line(doc),
        load_errors=load_errors(doc), execution=execution_text(doc.get("execution")))


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
