"""The presentation shared by the faces (the `dmlconf` command, the certification bundle and
its check, the reports): the progress lines of a run (`Progress`) and a feature level's verdict
in words (`verdict_line`, `verdict_lines`, `verdict_words`), a level whose every mandatory case
is NOT_SUPPORTED reading "not claimed: <reasons>" (`not_claimed`, `unclaimed_reasons`), never
"NOT conformant". Pure data in, text out: it knows the results package and the feature levels
only, below every face.
"""

from __future__ import annotations

import shutil
from collections import Counter
from typing import Any, TextIO

from conformance import results
from conformance.levels import FeatureLevel
from conformance.results import (
    FAILING,
    NOT_RECOGNISED,
    Result,
    ResultsDocument,
    Scope,
    Status,
    Verdict,
    conformant_text,
    counted,
    diagnoses,
    for_scope,
    mustpass,
)


class Progress:
    """A bar on a terminal; in CI (not a terminal) a plain line every 10% and per problem."""

    def __init__(self, total: int, stream: TextIO, quiet: bool = False) -> None:
        self.total, self.stream, self.quiet = total, stream, quiet
        self.tty = stream.isatty()
        self.done = 0
        self.counts = dict.fromkeys(results.STATUSES, 0)
        self.next_line = 0
        self.width = line_width(stream)
        #: The tolerance rules the FAIL lines referred to as [k], in order (failure_line).
        self.rules: list[str] = []

    def __call__(self, result: Result) -> None:
        self.done += 1
        self.counts[result.status] += 1
        if self.quiet:
            return
        if result.status in FAILING:
            self._clear()
            known = len(self.rules)
            line = failure_line(result, self.width, self.rules).lstrip()
            for text in rule_lines(self.rules, known):  # each rule once, before its first use
                self.stream.write(text + "\n")
            self.stream.write(line + "\n")
        if self.tty:
            width = 30
            filled = width * self.done // max(self.total, 1)
            counts = " ".join(f"{k} {v}" for k, v in self.counts.items() if v)
            self.stream.write(f"\r[{'#' * filled}{'.' * (width - filled)}] "
                              f"{self.done}/{self.total} {counts}")
            if self.done == self.total:
                self.stream.write("\n")
        elif self.done >= self.next_line or self.done == self.total:
            counts = ", ".join(f"{k} {v}" for k, v in self.counts.items() if v)
            self.stream.write(f"{self.done}/{self.total} cases: {counts}\n")
            self.next_line = self.done + max(1, self.total // 10)
        self.stream.flush()

    def _clear(self) -> None:
        if self.tty:
            self.stream.write("\r\033[K")


def coverage(v: Verdict) -> str | None:
    """"N of M mustpass cases run" for a level whose run did not cover its mustpass list
    (docs/mustpass.md), "no mustpass list" where the document's suite version has none, None
    when covered (or for a document from before mustpass lists)."""
    if not v.has("mustpass"):
        return None
    if v.mustpass is None:
        return "no mustpass list for this suite version"
    run: Any = v.mustpass_run
    if run < v.mustpass:
        return f"{run} of {v.mustpass} mustpass cases run"
    return None


def not_claimed(v: Verdict) -> bool:
    """Whether every mandatory case of a level was NOT_SUPPORTED and that denies nothing: the
    backend claims nothing that level needs (no operator, data type or capability of its
    cases), so none was judged. The reports say "not claimed", with the backend's reasons,
    never "NOT conformant". A scoped claim's NOT_SUPPORTED cases in its scope are a claim not
    kept (conformant False: results.verdicts); a document from before scopes counted every
    NOT_SUPPORTED case as not passing, and is read the same way."""
    n: Any = v.mandatory if v.has("mandatory") else None
    return (isinstance(n, int) and n > 0 and v.counts.get(Status.NOT_SUPPORTED) == n
            and (not v.has("not_covered") or v.conformant is not False))


#: How many of a level's reasons a "not claimed" verdict names (the rest are counted).
CLAIM_REASONS = 3


def _parsed_level(text: Any, cache: dict[Any, FeatureLevel | None]) -> FeatureLevel | None:
    if text not in cache:
        try:
            cache[text] = FeatureLevel.parse(text)
        except (TypeError, ValueError):
            cache[text] = None
    return cache[text]


def unclaimed_reasons(doc: ResultsDocument) -> dict[str, list[tuple[str, int]]]:
    """For each level of the verdict whose mandatory cases were all NOT_SUPPORTED
    (`not_claimed`), the reasons the backend's claims gave for them (the NOT_SUPPORTED messages,
    "the backend does not implement <an operator>"), each with its count, most frequent first. The
    cases are the level's mandatory ones by the verdict's own rule (results.mustpass.mandatory)
    in a run claiming the document's feature level; results whose levels do not parse are left
    out."""
    levels = [level for level, v in (doc.verdict or {}).items() if not_claimed(v)]
    if not levels:
        return {}
    cache: dict[Any, FeatureLevel | None] = {}
    unsupported = []
    for r in doc.results:
        need = _parsed_level(r.feature_level if r.has("feature_level") else None, cache)
        if r.status == Status.NOT_SUPPORTED and need is not None:
            below = r.feature_level_below
            unsupported.append((need, None if below is None else _parsed_level(below, cache),
                                bool(r.ambiguous), str(r.message or "")))
    out = {}
    for text in levels:
        level = _parsed_level(text, cache)
        claimed = _parsed_level(doc.feature_level if doc.has("feature_level") else None,
                                cache) or level
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


def _verdict_word(v: Verdict, reasons: list[tuple[str, int]] | None = None,
                  scope: Scope | None = None) -> str:
    """A level's verdict in words; reasons: the level's `unclaimed_reasons` where known;
    scope: the document's scoped claim ("conformant for <operator> (FLOAT32)")."""
    if not_claimed(v):
        return f"not claimed: {reasons_text(reasons)}"
    partial = coverage(v)
    claim = for_scope(scope)
    if v.conformant is None:
        if partial:
            return f"{partial}: no verdict"
        if not v.mandatory:
            return ("not covered: the scope claims no mandatory case of this level"
                    if scope is not None and v.not_covered
                    else "no verdict (no mandatory case selected)")
        if v.not_covered:
            return (f"not covered: {counted(v.not_covered, 'mandatory case')} NOT_SUPPORTED, "
                    "none failed (certify what the backend covers with --scope)")
        return "no verdict"
    return (conformant_text(v) if v.conformant else "NOT conformant") + claim


def document_scope(doc: ResultsDocument) -> Scope | None:
    """The document's scoped claim, or None (the whole level; a document from before scopes,
    or one whose scope this suite does not know)."""
    try:
        return Scope.from_json(doc.scope if doc.has("scope") else None)
    except ValueError:
        return None


def verdict_words(doc: ResultsDocument) -> dict[str, str]:
    """Each level's verdict in words, as every report shows it (a level not claimed with its
    reasons, a scoped claim's scope)."""
    reasons, scope = unclaimed_reasons(doc), document_scope(doc)
    return {level: _verdict_word(v, reasons.get(level), scope)
            for level, v in doc.verdict.items()}


def verdict_line(v: Verdict, reasons: list[tuple[str, int]] | None = None,
                 scope: Scope | None = None) -> str:
    """One level's verdict with its counts, as `dmlconf run` prints it: "conformant (...)"
    only for a run that covered the level's mustpass list; "N of M mustpass cases run: no
    verdict (...)" for a partial one; a NOT conformant partial run says what it covered; a
    level whose mandatory cases were all NOT_SUPPORTED "not claimed (N mandatory cases, all
    NOT_SUPPORTED): <reasons>" (`verdict_lines` gives the reasons); a scoped claim's
    verdict names its scope and counts the mandatory cases outside it as not covered."""
    word = _verdict_word(v, reasons, scope)
    if not v.mandatory:
        return word
    if not_claimed(v):
        line = f"not claimed ({counted(v.mandatory, 'mandatory case')}, all NOT_SUPPORTED)"
        return f"{line}: {reasons_text(reasons)}" if reasons else line
    n = v.count
    xfail = (f", XFAIL {n(Status.XFAIL)}" + (f" ({v.waivers} waived)" if v.waivers else "")
             if n(Status.XFAIL) else "")
    xfail = (f", TIMEOUT {n(Status.TIMEOUT)}" if n(Status.TIMEOUT) else "") + xfail
    partial = coverage(v) if v.conformant is False else None
    outside = (f"; {v.not_covered} outside the scope, not covered"
               if scope is not None and v.not_covered else "")
    return (f"{word} ({n(Status.PASS) + n(Status.XPASS)}/{v.mandatory} mandatory cases "
            f"{'run ' if v.conformant is None and coverage(v) else ''}pass; FAIL {n(Status.FAIL)}, "
            f"ERROR {n(Status.ERROR)}, NOT_SUPPORTED {n(Status.NOT_SUPPORTED)}{xfail}"
            f"{outside}{'; ' + partial if partial else ''})")


def verdict_lines(doc: ResultsDocument) -> dict[str, str]:
    """`verdict_line` of every level of the document, with the reasons of a level not
    claimed."""
    reasons, scope = unclaimed_reasons(doc), document_scope(doc)
    return {level: verdict_line(v, reasons.get(level), scope)
            for level, v in doc.verdict.items()}


def _split_rules(message: str, rules: list[str]) -> str:
    """The message with each "N of M elements differ (<rule>)" rule replaced by a reference
    [k] into rules (appended to where new): the rule is long and the same on many lines."""
    out, at = [], 0
    marker = "elements differ ("
    while (start := message.find(marker, at)) >= 0:
        depth, end = 0, start + len(marker) - 1
        for end in range(start + len(marker) - 1, len(message)):
            depth += {"(": 1, ")": -1}.get(message[end], 0)
            if depth == 0:
                break
        rule = message[start + len(marker):end]
        if rule not in rules:
            rules.append(rule)
        out.append(message[at:start] + f"elements differ [{rules.index(rule) + 1}]")
        at = end + 1
    return "".join(out) + message[at:]


def failure_line(r: Result, width: int, rules: list[str]) -> str:
    """One failing result in one line of the terminal: its cause first (the misreading its
    FAIL was diagnosed as, or that none matched), then its message, the tolerance rule as a
    reference [k] into rules (said once, after the lines), cut to width."""
    text = r.message.splitlines()[0] if r.message else ""
    text = text.split(" | diagnosis: ")[0]
    if r.status == "FAIL":
        readings = (r.diagnosis or {}).get("readings") or []
        cause = ("diagnosis: " + ", ".join(readings) if readings
                 else "diagnosis: none of the catalogue's misreadings matched")
        text = f"{cause} | {_split_rules(text, rules)}"
    line = f"  {r.status} {r.id}: {text}"
    return line if len(line) <= width else line[:max(width - 3, 20)] + "..."


def rule_lines(rules: list[str], start: int = 0) -> list[str]:
    """'judged by [k]: <rule>' for the rules failure_line referred to, from index start on."""
    return [f"judged by [{k}]: {rule}" for k, rule in enumerate(rules[start:], start=start + 1)]


def diagnosis_rollup(found: list[Result]) -> str:
    """'diagnoses of the 44 FAILs: nearest-floor 41, none matched 3', or "" without FAILs."""
    counts = diagnoses(found)
    total = sum(r.status == "FAIL" for r in found)
    if not total:
        return ""
    parts = [f"{'none matched' if k == NOT_RECOGNISED else k} {n}" for k, n in counts.items()]
    return f"diagnoses of the {counted(total, 'FAIL')}: " + ", ".join(parts)


def line_width(stream: TextIO) -> int:
    """The width a FAIL line keeps within: the terminal's where stream is one (COLUMNS where
    set), LOG_WIDTH where it is not (a CI log, a pipe)."""
    try:
        tty = stream.isatty()
    except (AttributeError, ValueError):
        tty = False
    return shutil.get_terminal_size((LOG_WIDTH, 24)).columns if tty else LOG_WIDTH


#: The width of a FAIL line where the output is not a terminal.
LOG_WIDTH = 200
