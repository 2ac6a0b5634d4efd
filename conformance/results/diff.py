"""`dmlconf compare OLD.json NEW.json`: what changed between two runs' results documents
(docs/baselines.md), read by conformance.results.io.read. Not to be confused with
conformance.judge.compare, the tolerance checks.

A case that newly FAILs, ERRORs or TIMES OUT is a regression, one that newly passes (PASS,
QUALITY_WARNING, XPASS) a fix (FAIL -> QUALITY_WARNING is a fix); PASS <-> QUALITY_WARNING is a
change of quality, listed apart, neither a regression nor a fix: both pass. A case NEW has and
OLD lacks that FAILs, ERRORs or TIMES OUT in NEW is newly failing too (its old status: ABSENT),
never hidden among the added ones: a run of one case compared with a full run with failures
exits 1.

NEW's failures that NEW's own baseline expected are XFAIL in NEW already (results.baseline.apply
at the run, where only entries whose `when:` tags match that run and that have not expired
apply): never newly failing. compare counts them, expected failures apart from waivers
(Result.waiver), and lists the waivers."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from conformance.results.document import ResultsDocument
from conformance.results.model import FAILING, PASSING, Status, counted

#: Top-level fields whose difference says the two runs are not of the same thing. The
#: execution flags change the judgement (the float16 envelope widens under
#: ALLOW_HALF_PRECISION_COMPUTATION); a document older than the field ran with none. A scoped
#: claim (results.scope) runs and judges other cases; a document older than scopes had none.
RUN_FIELDS = (("backend", "name"), ("backend", "class"), ("backend", "capabilities"),
              ("feature_level",), ("scope",), ("execution_flags",), ("case_set_sha256",),
              ("suite_version",))
#: A change between these two is one of quality, neither a regression nor a fix: both pass.
QUALITY = frozenset({Status.PASS, Status.QUALITY_WARNING})
#: The old status of a case OLD lacks.
ABSENT = "ABSENT"


@dataclass
class Change:
    id: str
    old_status: str
    new_status: str
    old_message: str
    new_message: str


@dataclass
class Diff:
    old_path: str
    new_path: str
    newly_failing: list[Change] = field(default_factory=list)
    newly_passing: list[Change] = field(default_factory=list)
    quality: list[Change] = field(default_factory=list)  # PASS <-> QUALITY_WARNING
    changed: list[Change] = field(default_factory=list)  # other status or message changes
    # (id, status in NEW) of the cases OLD lacks that do not fail in NEW (those that do are
    # newly failing, old status ABSENT)
    added: list[tuple[str, str]] = field(default_factory=list)
    removed: list[tuple[str, str]] = field(default_factory=list)  # (id, status in OLD)
    run: list[tuple[str, Any, Any]] = field(default_factory=list)  # (field, old, new)
    old_summary: dict[Status, int] = field(default_factory=dict)
    new_summary: dict[Status, int] = field(default_factory=dict)
    #: NEW's failures: how many FAIL, ERROR or TIMEOUT (its baseline did not expect them), the
    #: ids of its XFAILs that are no waiver, and (id, waiver) of the waived ones.
    failing: int = 0
    expected: list[str] = field(default_factory=list)
    waived: list[tuple[str, dict[str, Any]]] = field(default_factory=list)


def _get(doc: ResultsDocument, keys: tuple[str, ...]) -> Any:
    """The value of a RUN_FIELDS field (None where the document lacks it)."""
    value: Any = getattr(doc, keys[0]) if doc.has(keys[0]) else None
    for key in keys[1:]:
        value = value.get(key) if isinstance(value, dict) else None
    if keys == ("execution_flags",) and value is None:
        value = []
    if keys == ("backend", "class") and isinstance(value, str):
        # a backend loaded from a file gets a generated module name, different every run
        value = re.sub(r"^_dmlconf_backend_\w+?\.", "<file>.", value)
    return value


def compare(old: ResultsDocument, new: ResultsDocument, old_path: str = "OLD",
            new_path: str = "NEW") -> Diff:
    diff = Diff(str(old_path), str(new_path), old_summary=dict(old.summary),
                new_summary=dict(new.summary))
    for keys in RUN_FIELDS:
        a, b = _get(old, keys), _get(new, keys)
        if a != b:
            diff.run.append((".".join(keys), a, b))
    before = {r.id: r for r in old.results}
    after = {r.id: r for r in new.results}
    for case_id, r in after.items():
        if case_id not in before:
            if r.status in FAILING:
                diff.newly_failing.append(Change(case_id, ABSENT, r.status, "", r.message))
            else:
                diff.added.append((case_id, r.status))
            continue
        o = before[case_id]
        change = Change(case_id, o.status, r.status, o.message, r.message)
        if r.status in FAILING and o.status not in FAILING:
            diff.newly_failing.append(change)
        elif r.status in PASSING and o.status not in PASSING:
            diff.newly_passing.append(change)  # FAIL -> QUALITY_WARNING is a fix
        elif {o.status, r.status} == QUALITY:
            diff.quality.append(change)
        elif (o.status, change.old_message) != (r.status, change.new_message) and not (
                o.status in PASSING and r.status in PASSING):
            diff.changed.append(change)
    diff.removed = [(i, r.status) for i, r in before.items() if i not in after]
    diff.failing = sum(r.status in FAILING for r in after.values())
    for case_id, r in after.items():
        if r.status == Status.XFAIL and isinstance(r.waiver, dict):
            diff.waived.append((case_id, r.waiver))
        elif r.status == Status.XFAIL:
            diff.expected.append(case_id)
    return diff


def exit_status(diff: Diff) -> int:
    """1 when any case newly fails (FAIL, ERROR or TIMEOUT in NEW, anything else or absent in
    OLD), else 0."""
    return int(bool(diff.newly_failing))


#: The title of the PASS <-> QUALITY_WARNING changes (in the text form: "quality (...)").
QUALITY_TITLE = "Quality changes (PASS <-> QUALITY_WARNING: neither a regression nor a fix)"


def _first(message: str, width: int = 200) -> str:
    line = message.splitlines()[0] if message else ""
    return line if len(line) <= width else line[:width - 3] + "..."


def _counts(diff: Diff) -> str:
    keys = list(dict.fromkeys([*diff.old_summary, *diff.new_summary]))
    return ", ".join(f"{k} {diff.old_summary.get(k, 0)} -> {diff.new_summary.get(k, 0)}"
                     for k in keys)


def _headline(diff: Diff) -> str:
    if diff.newly_failing:
        n = len(diff.newly_failing)
        absent = sum(c.old_status == ABSENT for c in diff.newly_failing)
        return (f"{counted(n, 'case')} newly {'fails' if n == 1 else 'fail'}"
                + (f" ({absent} of them not in OLD)" if absent else ""))
    return "no case newly fails"


def failures_line(diff: Diff) -> str | None:
    """"NEW's failures: 6 (2 not expected, 3 expected by its baseline, 1 waived)", None when
    NEW has none."""
    total = diff.failing + len(diff.expected) + len(diff.waived)
    if not total:
        return None
    return (f"NEW's failures: {total} ({diff.failing} not expected, {len(diff.expected)} "
            f"expected by its baseline, {len(diff.waived)} waived)")


def _waiver(w: dict[str, Any]) -> str:
    return (f"{w.get('reason', '')} (waived until {w.get('expires')}"
            + (f"; {w['issue']}" if w.get("issue") else "") + ")")


def to_text(diff: Diff) -> str:
    lines = [f"compare {diff.old_path} -> {diff.new_path}: {_headline(diff)}",
             f"summary: {_counts(diff)}"]
    if failures_line(diff):
        lines.append(str(failures_line(diff)))
    for name, a, b in diff.run:
        lines.append(f"run differs: {name}: {json.dumps(a)} -> {json.dumps(b)}")
    for title, changes in (("newly failing", diff.newly_failing),
                           ("newly passing", diff.newly_passing),
                           ("quality" + QUALITY_TITLE.removeprefix("Quality changes"),
                            diff.quality),
                           ("changed (status or message)", diff.changed)):
        if changes:
            lines.append(f"{title} ({len(changes)}):")
        for c in changes:
            lines.append(f"  {c.id}: {c.old_status} -> {c.new_status}")
            if c.old_message != c.new_message:
                if c.old_message:
                    lines.append(f"    was: {_first(c.old_message)}")
                if c.new_message:
                    lines.append(f"    now: {_first(c.new_message)}")
    for title, ids in (("added (not failing)", diff.added), ("removed", diff.removed)):
        if ids:
            lines.append(f"{title} ({len(ids)}):")
            lines.extend(f"  {i} ({status})" for i, status in ids)
    if diff.waived:
        lines.append(f"waived in NEW ({len(diff.waived)}):")
        lines.extend(f"  {i}: {_waiver(w)}" for i, w in diff.waived)
    return "\n".join(lines) + "\n"


def _cell(text: Any) -> str:
    text = text if isinstance(text, str) else json.dumps(text)
    return _first(text).replace("\\", "\\\\").replace("|", "\\|") or " "


def to_markdown(diff: Diff) -> str:
    out = [f"## dmlconf compare: {_headline(diff)}", "",
           f"`{diff.old_path}` → `{diff.new_path}`", "",
           "| Status | Old | New |", "|---|---:|---:|"]
    for k in dict.fromkeys([*diff.old_summary, *diff.new_summary]):
        out.append(f"| {k} | {diff.old_summary.get(k, 0)} | {diff.new_summary.get(k, 0)} |")
    out.append("")
    if failures_line(diff):
        out += [str(failures_line(diff)), ""]
    if diff.run:
        out += ["### The runs differ", "", "| Field | Old | New |", "|---|---|---|"]
        out += [f"| `{name}` | {_cell(a)} | {_cell(b)} |" for name, a, b in diff.run]
        out.append("")
    for title, changes in (("Newly failing", diff.newly_failing),
                           ("Newly passing", diff.newly_passing),
                           (QUALITY_TITLE, diff.quality),
                           ("Changed (status or message)", diff.changed)):
        if not changes:
            continue
        out += [f"### {title} ({len(changes)})", "", "| Case | Old | New | Message now |",
                "|---|---|---|---|"]
        out += [f"| `{c.id}` | {c.old_status} | {c.new_status} | {_cell(c.new_message)} |"
                for c in changes]
        out.append("")
    for title, ids in (("Added (not failing)", diff.added), ("Removed", diff.removed)):
        if ids:
            out += [f"### {title} ({len(ids)})", ""]
            out += [f"- `{i}` ({status})" for i, status in ids]
            out.append("")
    if diff.waived:
        out += [f"### Waived in NEW ({len(diff.waived)})", "", "| Case | Waiver |", "|---|---|"]
        out += [f"| `{i}` | {_cell(_waiver(w))} |" for i, w in diff.waived]
        out.append("")
    return "\n".join(out)
