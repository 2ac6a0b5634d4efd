"""The results document, typed (docs/results-format.md): ResultsDocument, what `dmlconf run`
writes and `conformance.results.read` reads back, and its parts where the format fixes their
fields: the platform, the verdict of each level (Verdict), the mustpass lists judged against,
the baseline applied (BaselineSummary), the load errors, how the run was executed (Execution,
or MergedExecution for `dmlconf merge`) and the shard. Its results are Results
(results.model). The backend's self-description and its capabilities are free-form: dicts.

Every part is a Record: the documented fields as attributes; `extra`, the fields the format
does not document (a later suite's), kept and written back; `json_keys`, the keys of the JSON
it was read from (None: made here). `from_json` reads a part from its JSON and `to_json` gives
the JSON back: for a record read, exactly what was read (its keys in their order, the unknown
ones included, the missing ones left out); for one made here, every documented field in the
format's order. `has(key)` says whether a field was there: a field an older document lacks
holds its default, the format's reading of it where it gives one ("read it as []").

from_json trusts its input: read() checks the top level and every result before; a document
made by hand (the tests') may hold anything. A part that is not the JSON object the format
says is kept as it is, so the types here are the format's, and the reports stay careful with
what they show.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar, TypeVar

from conformance.results.model import STATUSES, Result, Status, shaped

R = TypeVar("R", bound="Record")


@dataclass
class Record:
    """A part of the results document (module docstring)."""

    #: The fields the format does not document, as read: written back after the others.
    extra: dict[str, Any] = field(default_factory=dict, kw_only=True, repr=False)
    #: The keys of the JSON the record was read from, in their order; None: made here.
    json_keys: tuple[str, ...] | None = field(default=None, kw_only=True, repr=False,
                                              compare=False)

    #: The documented keys of the JSON, in the format's order (per class: `names()`).
    _names: ClassVar[dict[type, tuple[str, ...]]] = {}

    @classmethod
    def names(cls) -> tuple[str, ...]:
        """The keys of the format's fields of this record, in the format's order."""
        if cls not in Record._names:
            Record._names[cls] = tuple(f.name for f in fields(cls)
                                       if f.name not in ("extra", "json_keys"))
        return Record._names[cls]

    def has(self, key: str) -> bool:
        """Whether the JSON the record was read from has the field `key` (a record made here
        has every field)."""
        return self.json_keys is None or key in self.json_keys

    @classmethod
    def from_json(cls: type[R], data: Mapping[str, Any]) -> R:
        """The record of its JSON (`data` is not copied: its lists and dicts are the record's
        own)."""
        names = cls.names()
        known = {k: v for k, v in data.items() if k in names}
        extra = {k: v for k, v in data.items() if k not in names}
        return cls(**cls._arguments(known, extra), extra=extra, json_keys=tuple(data))

    @classmethod
    def _arguments(cls, known: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
        """The constructor's arguments of the documented fields read (`extra`, the others,
        may be taken from). Parts with parts of their own convert them here."""
        return known

    def _known(self) -> dict[str, Any]:
        """The documented fields as JSON, in the format's order."""
        return {name: getattr(self, name) for name in self.names()}

    def to_json(self) -> dict[str, Any]:
        """The record's JSON: as read, for a record read (module docstring)."""
        return shaped(self._known(), self.extra, self.json_keys)


def _record(cls: type[R], value: Any) -> R | Any:
    """A part read from its JSON object; anything else (a hand-made document's) as it is."""
    return cls.from_json(value) if isinstance(value, Mapping) else value


def _json(value: Any) -> Any:
    """A part's JSON, or the value itself where it is no part."""
    return value.to_json() if isinstance(value, Record) else value


def _status_keys(counts: Any) -> Any:
    """Counts by status with Status keys (a key that is no status kept as it is)."""
    if not isinstance(counts, Mapping):
        return counts
    return {Status(k) if k in STATUSES else k: v for k, v in counts.items()}


@dataclass
class Platform(Record):
    """Where the run ran (Python's `platform` module and the versions)."""

    system: str = ""
    release: str = ""
    machine: str = ""
    python: str = ""
    numpy: str = ""


@dataclass
class Verdict(Record):
    """The verdict of one feature level (docs/results-format.md, "The verdict"): in the JSON,
    the counts of the mandatory cases' statuses are fields of their own, one per status."""

    conformant: bool | None = None
    mandatory: int = 0
    #: The size of the level's mustpass list and how many of its ids the run ran; None where
    #: the suite version has no list (a document from before mustpass lists lacks them).
    mustpass: int | None = None
    mustpass_run: int | None = None
    waivers: int = 0
    #: The level's mandatory cases the claim does not cover (results.verdicts): outside a
    #: scoped claim's scope, or without one NOT_SUPPORTED; 0 in a document from before scopes.
    not_covered: int = 0
    #: The mandatory cases' statuses, counted (in the format's order, every status).
    counts: dict[Status, int] = field(default_factory=dict)

    @classmethod
    def names(cls) -> tuple[str, ...]:
        return ("conformant", "mandatory", "mustpass", "mustpass_run", "waivers",
                "not_covered", *STATUSES)

    @classmethod
    def _arguments(cls, known: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
        out = {k: v for k, v in known.items() if k not in STATUSES}
        out["counts"] = {Status(k): v for k, v in known.items() if k in STATUSES}
        return out

    def _known(self) -> dict[str, Any]:
        out: dict[str, Any] = {"conformant": self.conformant, "mandatory": self.mandatory,
                               "mustpass": self.mustpass, "mustpass_run": self.mustpass_run,
                               "waivers": self.waivers, "not_covered": self.not_covered}
        out.update({status: n for status, n in self.counts.items()})
        return out

    def count(self, status: Status) -> int:
        """How many mandatory cases got `status` (0 where the document does not say)."""
        return self.counts.get(status, 0)


@dataclass
class MustpassRef(Record):
    """The mustpass lists a verdict was judged against: those of a suite version, made from
    a committed case set (empty when the version has none)."""

    suite_version: str = ""
    case_set_sha256: str = ""


@dataclass
class BaselineSummary(Record):
    """The baseline a run applied (docs/results-format.md, `baseline`; results.baseline)."""

    path: str | None = None
    #: The run's tags the entries' `when:` were matched against.
    tags: dict[str, str] = field(default_factory=dict)
    #: Case ids: passed though expected to fail; expected failures; waived failures.
    xpass: list[str] = field(default_factory=list)
    expected: list[str] = field(default_factory=list)
    waived: list[str] = field(default_factory=list)
    #: The stale entries and those not for this run: each an entry's fields and `why`.
    stale: list[dict[str, Any]] = field(default_factory=list)
    not_applying: list[dict[str, Any]] = field(default_factory=list)
    #: The entries (or patterns) that cover only cases the run did not select (-k, --shard).
    outside: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class LoadError(Record):
    """A problem met loading the cases: its case file, line (None: not at one place) and
    message."""

    file: str = ""
    line: int | None = None
    message: str = ""


@dataclass
class Execution(Record):
    """How a run executed its cases (docs/robustness.md). Fields a benchmark adds (load_s)
    are `extra`. An older document lacks `expectations_cache` and `resumed` (has() tells):
    read them as unknown, and `resumed_cases` as the count that names no case."""

    workers: int = 1
    isolated: bool = False
    tamper_proof: bool = False
    timeout_s: float | None = None
    memory_cap_bytes: int | None = None
    cases_per_worker: int | None = None
    thread_environment: dict[str, str] = field(default_factory=dict)
    execution_flags: list[str] = field(default_factory=list)
    certify: bool = False
    #: The folder of the expectations cache the judge believed entries of (None: none
    #: believed: a certification, or the cache off).
    expectations_cache: str | None = None
    resumed_cases: int = 0
    #: The ids of the cases whose results --resume took from the journal, in result order.
    resumed: list[str] = field(default_factory=list)
    retries: int = 0


@dataclass
class ShardRun(Record):
    """One shard of a merged run: its results file, "K/N", its duration and execution."""

    path: str = ""
    shard: str = ""
    duration_s: float | None = None
    execution: Execution | MergedExecution | None = None

    @classmethod
    def _arguments(cls, known: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
        if "execution" in known:
            known = {**known, "execution": execution_of(known["execution"])}
        return known

    def _known(self) -> dict[str, Any]:
        return {**super()._known(), "execution": _json(self.execution)}


@dataclass
class MergedExecution(Record):
    """The execution of a merged run (`dmlconf merge`): each shard's."""

    merged: list[ShardRun] = field(default_factory=list)

    @classmethod
    def _arguments(cls, known: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
        return {"merged": [_record(ShardRun, m) for m in known["merged"]]}

    def _known(self) -> dict[str, Any]:
        return {"merged": [_json(m) for m in self.merged]}


def execution_of(value: Any) -> Execution | MergedExecution | Any:
    """The execution part of its JSON: a merged run's (its `merged` a list), or a run's."""
    if isinstance(value, Mapping) and isinstance(value.get("merged"), list):
        return MergedExecution.from_json(value)
    return _record(Execution, value)


@dataclass
class Shard(Record):
    """One shard of a sharded run: K (index, from 1) of N (count), its cases of the whole
    selection's, and the case-set hash of the whole selection."""

    index: int = 0
    count: int = 0
    cases: int = 0
    of_cases: int = 0
    full_case_set_sha256: str = ""


@dataclass
class ResultsDocument(Record):
    """The results document (docs/results-format.md, "Top level"), its fields in the format's
    order. Made by results.document, written by results.write, read by results.read. A field
    an older document lacks holds the format's reading of it: execution_flags [], complete
    True, load_errors [], waivers 0; `has` tells (the reports count the results' diagnoses
    where the document has no `diagnoses`)."""

    #: results.FORMAT, the version of the format (results.io, the one module that names it,
    #: sets and checks it: a document is made by results.document or read by results.read).
    format: str = ""
    suite_version: str = ""
    case_set_sha256: str = ""
    case_paths: list[str] = field(default_factory=list)
    command: str = ""
    #: The backend as run: name, class, capabilities (Capabilities.to_json), environment.
    backend: dict[str, Any] = field(default_factory=dict)
    feature_level: str = ""
    #: A scoped claim (results.scope, Scope.to_json: operator -> data type names); None: the
    #: whole of each level.
    scope: dict[str, list[str]] | None = None
    execution_flags: list[str] = field(default_factory=list)
    platform: Platform = field(default_factory=Platform)
    started_at: str = ""
    finished_at: str = ""
    duration_s: float = 0.0
    summary: dict[Status, int] = field(default_factory=dict)
    ambiguous: dict[Status, int] = field(default_factory=dict)
    #: Feature level ("2_1") -> its verdict, up to the claimed level.
    verdict: dict[str, Verdict] = field(default_factory=dict)
    mustpass: MustpassRef | None = None
    #: Reading key of the catalogue of misreadings -> the FAILs recognised as it.
    diagnoses: dict[str, int] = field(default_factory=dict)
    baseline: BaselineSummary | None = None
    complete: bool = True
    load_errors: list[LoadError] = field(default_factory=list)
    execution: Execution | MergedExecution | None = None
    shard: Shard | None = None
    results: list[Result] = field(default_factory=list)

    @classmethod
    def _arguments(cls, known: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
        out = dict(known)
        for key, part in (("platform", Platform), ("mustpass", MustpassRef),
                          ("baseline", BaselineSummary), ("shard", Shard)):
            if key in out:
                out[key] = _record(part, out[key])
        for key in ("summary", "ambiguous"):
            if key in out:
                out[key] = _status_keys(out[key])
        if isinstance(out.get("verdict"), Mapping):
            out["verdict"] = {k: _record(Verdict, v) for k, v in out["verdict"].items()}
        if isinstance(out.get("load_errors"), list):
            out["load_errors"] = [_record(LoadError, e) for e in out["load_errors"]]
        if "execution" in out:
            out["execution"] = execution_of(out["execution"])
        if isinstance(out.get("results"), list):
            out["results"] = [Result.from_json(r) if isinstance(r, Mapping) else r
                              for r in out["results"]]
        return out

    def _known(self) -> dict[str, Any]:
        out = super()._known()
        for key in ("platform", "mustpass", "baseline", "execution", "shard"):
            out[key] = _json(out[key])
        if isinstance(self.verdict, Mapping):
            out["verdict"] = {k: _json(v) for k, v in self.verdict.items()}
        if isinstance(self.load_errors, list):
            out["load_errors"] = [_json(e) for e in self.load_errors]
        if isinstance(self.results, list):
            out["results"] = [r.to_json() if isinstance(r, Result) else r
                              for r in self.results]
        return out
