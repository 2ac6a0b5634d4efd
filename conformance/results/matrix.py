"""The cross-implementation matrix (issue 26, `dmlconf matrix`): several runs' results side by
side, one column per run, rows at every level a reader needs: the feature levels' verdicts,
operator x data type slices, families, single cases. Made from results documents alone
(what the runs recorded of their backend, its environment and flags is the column's head).

A group's cell (slice, family) summarises its mandatory cases in that run: FAIL where one
failed (FAIL, ERROR, TIMEOUT, or XFAIL: a known failure is still one against the spec), PASS
where every run case passed, NOT_SUPPORTED where none was run; with the counts. A case's cell
is its status, and the misreadings its FAIL was diagnosed as.

Interop (as wpt.fyi's Interop score): of a group's mandatory cases that every run holds, the
share that every run passes (PASSING). NOT_SUPPORTED is not passing there: interop asks what a
user can rely on everywhere, and a case one implementation cannot express is not that.

Findings: each catalogued misreading a FAIL (or known failure) was diagnosed as, and each
baseline finding (an XFAIL's reason), with the runs that show it and in how many cases.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from conformance.results.document import ResultsDocument
from conformance.results.model import FAILING, PASSING, Result, Status, decisive

#: The statuses that count as a failure against the spec in the matrix (a baseline's XFAIL
#: included: it is a known failure, not a pass).
AGAINST = frozenset({*FAILING, Status.XFAIL})
PASSED = frozenset(PASSING)
#: What stands for the case id in a column's reproduce command.
REPRO_CASE = "DMLCONF_MATRIX_CASE"
#: An XFAIL's message, as conformance.results.baseline.apply writes it: the entry's note.
_BASELINE = re.compile(r"^(?:expected|waived) (?:FAIL|ERROR|TIMEOUT) \((.+?)\): ", re.S)


@dataclass(frozen=True)
class Column:
    """One run: what its document says of the backend it ran, where, and how."""

    label: str  # unique among the matrix's columns
    backend: str
    version: str
    adapter: str
    flags: str
    level: str  # the claimed feature level
    path: str  # the results file
    cases: int
    repro: str = ""  # the command that reruns one case of the run, REPRO_CASE for its id


@dataclass(frozen=True)
class Cell:
    status: str  # a Status value, or "" where the run does not hold the case
    counts: dict[str, int] = field(default_factory=dict)  # group cells: status -> count
    readings: tuple[str, ...] = ()  # misreadings named by the FAILs
    note: str = ""  # a case's message (first line), a verdict's words


@dataclass(frozen=True)
class Row:
    kind: str  # "level", "slice", "family", "case"
    key: str
    cells: tuple[Cell, ...]
    interop: float | None = None  # share of the common mandatory cases every run passes
    common: int = 0  # how many mandatory cases every run holds
    operator: str = ""
    data_type: str = ""
    family: str = ""
    ambiguous: bool = False

    @property
    def disagree(self) -> bool:
        """Whether the runs that ran it differ on passing (a case or group)."""
        ran = {passing(c) for c in self.cells if c.status and c.status != Status.NOT_SUPPORTED}
        return len(ran) > 1

    @property
    def lone_failure(self) -> bool:
        """Whether exactly one run fails it while at least one other passes."""
        states = [passing(c) for c in self.cells if c.status and c.status != Status.NOT_SUPPORTED]
        return states.count(False) == 1 and True in states


@dataclass(frozen=True)
class Finding:
    kind: str  # "misreading" or "baseline"
    key: str  # the reading's key, or the baseline entry's note
    cases: tuple[int, ...]  # per column: how many cases show it


@dataclass(frozen=True)
class Matrix:
    columns: tuple[Column, ...]
    levels: tuple[Row, ...]
    slices: tuple[Row, ...]
    families: tuple[Row, ...]
    cases: tuple[Row, ...]
    findings: tuple[Finding, ...]
    #: per column: (reason, count) of its NOT_SUPPORTED cases, most frequent first
    unsupported: tuple[tuple[tuple[str, int], ...], ...]


def passing(cell: Cell) -> bool:
    """Whether a cell passes: a case that passed, a group none of whose cases failed."""
    if cell.counts:
        return not any(cell.counts.get(s, 0) for s in AGAINST)
    return cell.status in PASSED


def build(documents: Sequence[tuple[str, ResultsDocument]],
          repro: Callable[[ResultsDocument], str] | None = None,
          verdicts: Callable[[ResultsDocument], dict[str, tuple[str, str]]] | None = None
          ) -> Matrix:
    """The matrix of (path, document) runs, in the order given; repro(doc): the run's command
    that reruns the case REPRO_CASE (the reports' reproduce command); verdicts(doc): each
    level's (status, words) (plain_verdicts by default)."""
    if not documents:
        raise ValueError("the matrix needs at least one results file")
    columns = _columns(documents, repro)
    by_id = [{r.id: r for r in doc.results} for _, doc in documents]
    ids = list(dict.fromkeys(i for table in by_id for i in table))
    first: dict[str, Result] = {}
    for table in by_id:
        for i, r in table.items():
            first.setdefault(i, r)
    cases = tuple(_case_row(i, first[i], [t.get(i) for t in by_id]) for i in ids)
    return Matrix(
        columns=columns,
        levels=_level_rows(documents, verdicts or plain_verdicts),
        slices=_groups(cases, "slice", lambda r: f"{r.operator} {r.data_type}"),
        families=_groups(cases, "family", lambda r: r.family),
        cases=cases,
        findings=_findings(by_id),
        unsupported=tuple(_unsupported(doc.results) for _, doc in documents))


def _columns(documents: Sequence[tuple[str, ResultsDocument]],
             repro: Callable[[ResultsDocument], str] | None) -> tuple[Column, ...]:
    out: list[Column] = []
    seen: Counter[str] = Counter()
    for path, doc in documents:
        backend: dict[str, Any] = doc.backend if isinstance(doc.backend, dict) else {}
        given = backend.get("environment")
        env: dict[str, Any] = given if isinstance(given, dict) else {}
        name = str(backend.get("name") or "?")
        version = str(env.get("directml_version") or env.get("version") or "")
        adapter = " / ".join(str(env[k]) for k in ("adapter", "driver") if env.get(k))
        flags = ", ".join(str(f) for f in doc.execution_flags or []) or "NONE"
        seen[name] += 1
        label = name if seen[name] == 1 else f"{name} ({seen[name]})"
        out.append(Column(label, name, version, adapter, flags, str(doc.feature_level or ""),
                          path, len(doc.results), repro(doc) if repro else ""))
    return tuple(out)


def _case_row(case_id: str, any_result: Result, results: list[Result | None]) -> Row:
    cells = []
    for r in results:
        if r is None:
            cells.append(Cell(""))
            continue
        d = r.diagnosis if isinstance(r.diagnosis, dict) else {}
        readings = tuple(str(k) for k in d.get("readings") or () if k is not None)
        lines = str(r.message or "").splitlines()
        cells.append(Cell(str(r.status), readings=readings if r.status in AGAINST else (),
                          note=lines[0] if lines else ""))
    operator = "/".join(any_result.operators or []) or "-"
    data_type = "/".join(any_result.data_types or []) or "-"
    return Row("case", case_id, tuple(cells), operator=operator, data_type=data_type,
               family=case_family(any_result), ambiguous=bool(any_result.ambiguous))


def case_family(r: Result) -> str:
    """"documented" for a documented case, else the generated case's first tag (its family);
    "-" for a case with neither."""
    tags = r.tags or []
    if str(r.id).startswith("documented/") or (tags and tags[0] == "documented"):
        return "documented"
    return str(tags[0]) if tags else "-"


def _groups(cases: Iterable[Row], kind: str, key_of: Any) -> tuple[Row, ...]:
    grouped: dict[str, list[Row]] = defaultdict(list)
    for row in cases:
        if not row.ambiguous:
            grouped[key_of(row)].append(row)
    out = []
    for key in sorted(grouped):
        rows = grouped[key]
        n = len(rows[0].cells)
        cells = []
        for k in range(n):
            counts = Counter(r.cells[k].status for r in rows if r.cells[k].status)
            readings = Counter(x for r in rows for x in r.cells[k].readings)
            if any(counts.get(s, 0) for s in AGAINST):
                status = Status.FAIL.value
            elif sum(counts.get(s, 0) for s in PASSED):
                status = Status.PASS.value
            elif counts:
                status = Status.NOT_SUPPORTED.value
            else:
                status = ""
            cells.append(Cell(status, counts=dict(counts),
                              readings=tuple(x for x, _ in readings.most_common())))
        common = [r for r in rows if all(c.status for c in r.cells)]
        together = sum(all(c.status in PASSED for c in r.cells) for r in common)
        first = rows[0]
        out.append(Row(kind, key, tuple(cells),
                       interop=together / len(common) if common else None, common=len(common),
                       operator=first.operator if kind == "slice" else "",
                       data_type=first.data_type if kind == "slice" else "",
                       family=key if kind == "family" else ""))
    return tuple(out)


def plain_verdicts(doc: ResultsDocument) -> dict[str, tuple[str, str]]:
    """Each level's (status, words) from the document's verdicts alone: PASS "conformant",
    FAIL "NOT conformant", "" "no verdict". The reports pass their own wording (build's
    `verdicts`: a level not claimed reads NOT_SUPPORTED with its reasons there)."""
    return {level: ("PASS", "conformant") if v.conformant else
            ("FAIL", "NOT conformant") if v.conformant is False else ("", "no verdict")
            for level, v in doc.verdict.items()}


def _level_rows(documents: Sequence[tuple[str, ResultsDocument]],
                verdicts: Callable[[ResultsDocument], dict[str, tuple[str, str]]]
                ) -> tuple[Row, ...]:
    levels = sorted({lv for _, doc in documents for lv in doc.verdict},
                    key=lambda s: tuple(int(p) for p in s.split("_")))
    said = [verdicts(doc) for _, doc in documents]
    rows = []
    for level in levels:
        cells = []
        for (_, doc), words in zip(documents, said, strict=True):
            v = doc.verdict.get(level)
            if v is None:
                cells.append(Cell("", note="above the claimed level"))
                continue
            status, note = words[level]
            cells.append(Cell(status, counts={str(k): n for k, n in v.counts.items() if n},
                              note=note))
        rows.append(Row("level", level, tuple(cells)))
    return tuple(rows)


def _findings(by_id: list[dict[str, Result]]) -> tuple[Finding, ...]:
    counts: dict[tuple[str, str], list[int]] = {}
    for k, table in enumerate(by_id):
        for r in decisive(list(table.values())):
            if r.status not in AGAINST:
                continue
            d = r.diagnosis if isinstance(r.diagnosis, dict) else {}
            keys = [("misreading", str(x)) for x in d.get("readings") or () if x is not None]
            m = _BASELINE.match(str(r.message or "")) if r.status == Status.XFAIL else None
            if m:
                keys.append(("baseline", m.group(1)))
            for key in keys:
                counts.setdefault(key, [0] * len(by_id))[k] += 1
    ordered = sorted(counts.items(), key=lambda kv: (kv[0][0] != "misreading", -sum(kv[1]),
                                                      kv[0][1]))
    return tuple(Finding(kind, key, tuple(n)) for (kind, key), n in ordered)


def _unsupported(results: list[Result]) -> tuple[tuple[str, int], ...]:
    counts = Counter(str(r.message or "").splitlines()[0] if r.message else ""
                     for r in results if r.status == Status.NOT_SUPPORTED)
    return tuple(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))
