"""Baselines: a YAML file of known failures and waivers (docs/baselines.md).

Applied to a run's results, a FAIL, ERROR or TIMEOUT that an entry expects becomes XFAIL (it
no longer fails the run, but still denies the verdict); a PASS or a QUALITY_WARNING (a pass
inside the legal envelope, outside the strict reading) that an entry covers becomes XPASS
(fails the run with --strict only): the failure the entry expected is gone, whatever the
quality of the pass. An entry cannot expect a QUALITY_WARNING: a warning passes, so it needs
none.

An entry's `when:` tags (os, backend, execution_flags, and what the backend reports of its
environment: vendor, adapter, driver, directml_version) say which runs it is for: it applies
only where every tag it gives matches the run (a tag the run cannot tell matches nothing).
A waiver (`waiver: true`, with a reason and an expiry) is an expected failure that a verdict
forgives: its XFAIL carries the waiver (Result.waiver), and a level whose every non-passing
mandatory case is waived is "conformant with N waivers" (results.verdicts).

Entries whose `expires` date is past apply to nothing and are stale, as are those that apply
here and cover no case; those that are not for this run are listed apart, never stale.
"""

from __future__ import annotations

import datetime as dt
import json
import platform
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from fnmatch import fnmatchcase
from functools import cached_property
from pathlib import Path
from typing import Any

import yaml

from conformance.casefile import id_matcher, id_matches
from conformance.flags import ExecutionFlags
from conformance.results.document import BaselineSummary
from conformance.results.model import FAILING, Result, Status

#: The statuses a baseline entry turns into XPASS: the passing statuses of a judged case
#: (XPASS itself is only made here).
PASSED = (Status.PASS, Status.QUALITY_WARNING)

#: The statuses an entry may expect: those that fail a run.
ENTRY_STATUSES = FAILING
KEYS = ("cases", "status", "reason", "issue", "expires", "when", "waiver")
#: The tags of the run a `when:` may name, in the order a mismatch is told: where it ran (os:
#: platform.system() lower-cased), what ran (the --backend value as given; the execution
#: flags by name joined with '|' in value order, NONE for none), and what the backend reports
#: of its environment (Backend.environment).
TAGS = ("os", "backend", "execution_flags", "vendor", "adapter", "driver", "directml_version")
#: The tags read from the backend's environment.
ENVIRONMENT_TAGS = ("vendor", "adapter", "driver", "directml_version")
GLOB = "*?["


class BaselineError(ValueError):
    """A malformed baseline file (a usage error: exit status 2)."""


@dataclass(frozen=True)
class Entry:
    number: int  # 1-based position in the file
    #: the id patterns (the -k syntax), any one of which covers a case: one finding may name
    #: many groups of cases
    cases: tuple[str, ...]
    status: str
    reason: str
    issue: str | None = None
    expires: dt.date | None = None
    #: tag -> the glob patterns one of which its value in the run must match
    when: tuple[tuple[str, tuple[str, ...]], ...] = ()
    waiver: bool = False

    @property
    def shown(self) -> str | list[str]:
        """The patterns as the file gives them: one pattern as text, several as a list."""
        return self.cases[0] if len(self.cases) == 1 else list(self.cases)

    @cached_property
    def covers(self) -> Callable[[str], bool]:
        """Whether one of the entry's patterns matches a case id (id_matcher)."""
        return id_matcher(self.cases)

    def to_json(self) -> dict[str, Any]:
        return {"cases": self.shown, "status": self.status, "reason": self.reason,
                "issue": self.issue,
                "expires": self.expires.isoformat() if self.expires else None,
                "when": {tag: list(patterns) for tag, patterns in self.when},
                "waiver": self.waiver}

    def not_here(self, tags: Mapping[str, str]) -> str | None:
        """Why the entry is not for a run of these tags (run_tags), in words ("vendor 'AMD*'
        (this run: 'NVIDIA'); driver (this run does not tell its driver)"); None where every
        tag of its `when:` matches. Matching is a glob over the whole value, case-insensitive."""
        why = []
        for tag, patterns in self.when:
            value = tags.get(tag)
            shown = " or ".join(repr(p) for p in patterns)
            if not value:
                why.append(f"{tag} {shown} (this run does not tell its {tag})")
            elif not any(fnmatchcase(value.lower(), p.lower()) for p in patterns):
                why.append(f"{tag} {shown} (this run: {value!r})")
        return "; ".join(why) or None

    def note(self) -> str:
        """The reason, the issue and a waiver's expiry, as a result's message gives them."""
        return (self.reason + (f"; {self.issue}" if self.issue else "")
                + (f"; waived until {self.expires.isoformat()}" if self.waiver and self.expires
                   else ""))

    def waiver_record(self) -> dict[str, Any]:
        """What a waived result carries (Result.waiver)."""
        assert self.expires is not None
        return {"cases": self.shown, "reason": self.reason, "issue": self.issue,
                "expires": self.expires.isoformat()}


@dataclass(frozen=True)
class Baseline:
    path: str
    entries: tuple[Entry, ...]


@dataclass
class Applied:
    results: list[Result]
    xpass: list[str]
    stale: list[dict[str, Any]]
    #: The entries that are not for this run (their `when:` does not match it), each with why.
    not_applying: list[dict[str, Any]] = field(default_factory=list)
    #: The run's tags the entries' `when:` were matched against (run_tags).
    tags: dict[str, str] = field(default_factory=dict)
    #: The entries (or patterns of a list) that cover no case of this run but cases the run
    #: did not select (a -k or --shard run): not stale, only outside the selection.
    outside: list[dict[str, Any]] = field(default_factory=list)

    @property
    def expected(self) -> list[str]:
        """The ids of the expected failures that no waiver forgives (XFAIL, no waiver)."""
        return [r.id for r in self.results if r.status == Status.XFAIL and r.waiver is None]

    @property
    def waived(self) -> list[str]:
        """The ids of the waived failures (XFAIL with a waiver)."""
        return [r.id for r in self.results if r.status == Status.XFAIL and r.waiver is not None]

    def summary(self, path: str) -> BaselineSummary:
        """What the results document says of the baseline applied (`path`: as given)."""
        return BaselineSummary(path=path, tags=self.tags, xpass=self.xpass,
                               expected=self.expected, waived=self.waived, stale=self.stale,
                               not_applying=self.not_applying, outside=self.outside)

    def to_json(self, path: str) -> dict[str, Any]:
        return self.summary(path).to_json()


def _patterns(where: str, tag: str, raw: Any) -> tuple[str, ...]:
    """A tag's value of a `when:`: one pattern or a list of them, each non-empty text. An
    execution_flags pattern without wildcards is read as flags (ExecutionFlags.parse) and
    written as the run's value is: names in value order joined with '|', NONE for none."""
    items = raw if isinstance(raw, list) else [raw]
    if not items:
        raise BaselineError(f"{where}: 'when: {tag}' must be a pattern or a non-empty list of "
                            f"them, not []")
    out = []
    for item in items:
        if not isinstance(item, str) or not item.strip():
            hint = (f" (YAML read {item!r} as a {type(item).__name__}: quote it, "
                    f"'{item}')" if isinstance(item, (int, float)) else "")
            raise BaselineError(f"{where}: 'when: {tag}' must be text or a list of text (glob "
                                f"patterns), not {item!r}{hint}")
        item = item.strip()
        if tag == "execution_flags" and not any(ch in item for ch in GLOB):
            try:
                item = "|".join(ExecutionFlags.parse(item).names) or "NONE"
            except ValueError as exc:
                raise BaselineError(f"{where}: 'when: execution_flags': {exc}") from None
        out.append(item)
    return tuple(out)


def _when(where: str, raw: Any) -> tuple[tuple[str, tuple[str, ...]], ...]:
    if not isinstance(raw, dict) or not raw:
        raise BaselineError(f"{where}: 'when' must be a mapping of tags ({', '.join(TAGS)}) to "
                            f"patterns, not {raw!r}")
    unknown = sorted(str(k) for k in raw if k not in TAGS)
    if unknown:
        raise BaselineError(f"{where}: unknown {'tag' if len(unknown) == 1 else 'tags'} in "
                            f"'when': {', '.join(unknown)}; "
                            f"allowed: {', '.join(TAGS)}")
    return tuple((tag, _patterns(where, tag, raw[tag])) for tag in TAGS if tag in raw)


def _entry(path: str, number: int, raw: Any) -> Entry:
    where = f"baseline {path}: entry {number}"
    if not isinstance(raw, dict):
        raise BaselineError(f"{where}: must be a mapping with keys cases, status, reason "
                            f"(issue, expires, when, waiver optional), not {type(raw).__name__}")
    unknown = sorted(str(k) for k in raw if k not in KEYS)
    if unknown:
        raise BaselineError(f"{where}: unknown {'key' if len(unknown) == 1 else 'keys'} "
                            f"{', '.join(unknown)}; "
                            f"allowed: {', '.join(KEYS)}")
    if isinstance(raw.get("cases"), str) and raw["cases"].strip():
        where = f"baseline {path}: entry {number} (cases {raw['cases']!r})"
    elif isinstance(raw.get("cases"), list) and raw["cases"]:
        where = f"baseline {path}: entry {number} (cases {raw['cases'][0]!r}, ...)"
    for key in ("cases", "status", "reason"):
        if key not in raw:
            raise BaselineError(f"{where}: missing required key {key!r}")
    cases, status, reason = raw["cases"], raw["status"], raw["reason"]
    patterns = cases if isinstance(cases, list) else [cases]
    if not patterns or not all(isinstance(p, str) and p.strip() for p in patterns):
        raise BaselineError(f"{where}: 'cases' must be a non-empty id pattern (as for -k) or a "
                            f"non-empty list of them, not {cases!r}")
    if len(set(patterns)) != len(patterns):
        twice = next(p for p in patterns if patterns.count(p) > 1)
        raise BaselineError(f"{where}: 'cases' lists {twice!r} twice")
    if status not in ENTRY_STATUSES:
        why = (" (a QUALITY_WARNING passes: it does not fail the run, so it needs no entry)"
               if status == "QUALITY_WARNING" else "")
        raise BaselineError(f"{where}: 'status' must be {', '.join(ENTRY_STATUSES[:-1])} or "
                            f"{ENTRY_STATUSES[-1]}, not {status!r}{why}")
    if not isinstance(reason, str) or not reason.strip():
        raise BaselineError(f"{where}: 'reason' must be non-empty text, not {reason!r}")
    issue = raw.get("issue")
    if issue is not None and (not isinstance(issue, str) or not issue.strip()):
        raise BaselineError(f"{where}: 'issue' must be a URL (text), not {issue!r}")
    expires = raw.get("expires")
    if isinstance(expires, str):
        try:
            expires = dt.date.fromisoformat(expires)
        except ValueError:
            raise BaselineError(f"{where}: 'expires' must be a date YYYY-MM-DD, "
                                f"not {expires!r}") from None
    if expires is not None and (not isinstance(expires, dt.date)
                                or isinstance(expires, dt.datetime)):
        raise BaselineError(f"{where}: 'expires' must be a date YYYY-MM-DD, not {expires!r}")
    when = _when(where, raw["when"]) if "when" in raw else ()
    waiver = raw.get("waiver", False)
    if not isinstance(waiver, bool):
        raise BaselineError(f"{where}: 'waiver' must be true or false, not {waiver!r}")
    if waiver and expires is None:
        raise BaselineError(f"{where}: a waiver needs 'expires' (YYYY-MM-DD): a waiver is "
                            f"granted until a date, then the failure counts again")
    return Entry(number, tuple(p.strip() for p in patterns), status, reason.strip(), issue,
                 expires, when, waiver)


def parse(text: str, path: str = "<baseline>") -> Baseline:
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise BaselineError(f"baseline {path}: not valid YAML ({first})") from None
    except ValueError as exc:  # e.g. an impossible date such as 2025-13-01
        raise BaselineError(f"baseline {path}: a value cannot be read ({exc}); dates are "
                            f"YYYY-MM-DD") from None
    if isinstance(data, dict):
        if set(data) != {"expected_failures"}:
            raise BaselineError(f"baseline {path}: the top level must be a list of entries, or "
                                f"a mapping with the one key 'expected_failures'; found keys "
                                f"{', '.join(sorted(map(str, data)))}")
        data = data["expected_failures"]
    if data is None:
        data = []
    if not isinstance(data, list):
        raise BaselineError(f"baseline {path}: expected a list of entries, not "
                            f"{type(data).__name__}")
    return Baseline(path, tuple(_entry(path, i, raw) for i, raw in enumerate(data, 1)))


def load(path: str | Path) -> Baseline:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise BaselineError(f"baseline {path}: cannot read it ({exc.strerror or exc})") from None
    return parse(text, str(path))


def run_tags(backend: str, execution_flags: Sequence[str] = (),
             environment: Mapping[str, Any] | None = None,
             os_name: str | None = None) -> dict[str, str]:
    """The tags of a run that entries' `when:` are matched against: os (os_name, else
    platform.system(), lower-cased), backend (the --backend value as given), execution_flags
    (the names joined with '|', NONE for none) and the backend's environment's vendor, adapter,
    driver and directml_version where it reports them as non-empty text (a tag it does not
    report is left out: the run cannot tell it)."""
    tags = {"os": (platform.system() if os_name is None else os_name).strip().lower(),
            "backend": backend, "execution_flags": "|".join(execution_flags) or "NONE"}
    for key in ENVIRONMENT_TAGS:
        value = (environment or {}).get(key)
        if isinstance(value, str) and value.strip():
            tags[key] = value.strip()
    return {k: v for k, v in tags.items() if v}


def apply(baseline: Baseline, found: list[Result], today: dt.date | None = None,
          tags: Mapping[str, str] | None = None,
          unselected: Sequence[str] = ()) -> Applied:
    """The results with the baseline's expectations applied, the ids that passed unexpectedly,
    the stale entries and those not for this run. tags: the run's (run_tags); an entry with a
    `when:` applies only where each of its tags matches them (with no tags given, no entry
    with a `when:` applies). An expired entry applies to nothing (its cases count as they
    are). A case is matched by the first entry of its status that applies, in file order.
    Staleness is per pattern: an entry that applies is stale where it covers no case, and so is
    each pattern of a list that matches no case (a group of the finding that no longer fails).
    unselected: the ids of the cases loaded but not run (a -k or --shard selection); an entry
    or pattern that matches one of them and no case run is outside the selection, not stale."""
    today = today or dt.date.today()
    tags = dict(tags or {})
    live = [e for e in baseline.entries if e.expires is None or e.expires >= today]
    here = [e for e in live if e.not_here(tags) is None]
    matched: set[tuple[int, str]] = set()  # (entry number, pattern) that matched a case
    out: list[Result] = []
    xpass: list[str] = []
    for r in found:
        entries = [e for e in here if e.covers(r.id)]
        matched.update((e.number, p) for e in entries for p in e.cases if id_matches(r.id, p))
        same = next((e for e in entries if e.status == r.status), None)
        if same is not None:
            word = "waived" if same.waiver else "expected"
            out.append(replace(r, status=Status.XFAIL,
                               message=f"{word} {r.status} ({same.note()}): {r.message}",
                               waiver=same.waiver_record() if same.waiver else None))
        elif r.status in PASSED and entries:
            e = entries[0]
            how = "passed" if r.status == Status.PASS else "passed with a QUALITY_WARNING"
            extra = f": {r.message}" if r.message else ""
            out.append(replace(r, status=Status.XPASS, message=(
                f"{how}, but the baseline {'waives' if e.waiver else 'expects'} {e.status} "
                f"({e.note()}){extra}")))
            xpass.append(r.id)
        else:
            out.append(r)
    stale, not_applying, outside = [], [], []
    for e in baseline.entries:
        if e.expires is not None and e.expires < today:
            stale.append({**e.to_json(), "why": f"expired on {e.expires.isoformat()}"})
        elif (why := e.not_here(tags)) is not None:
            not_applying.append({**e.to_json(), "why": f"not for this run: {why}"})
        else:
            for p in e.cases:
                if (e.number, p) in matched:
                    continue
                one = {**e.to_json(), **({"pattern": p} if len(e.cases) > 1 else {})}
                if unselected and any(map(id_matcher((p,)), unselected)):
                    outside.append({**one, "why": "covers only cases this run did not select"})
                else:
                    stale.append({**one, "why": "matches no case"})
    return Applied(out, xpass, stale, not_applying, tags, outside)


def join(records: Sequence[BaselineSummary]) -> BaselineSummary:
    """The baseline records (Applied.summary) of the shards of one run joined (`dmlconf
    merge`): every id XPASS, expected or waived in a shard; an entry stale when expired, or
    when it matched no case in any shard; the tags and the entries not for this run as the
    first shard's (the same run); a pattern of a list stale where it matched no case in any
    shard. Records from before tags and waivers lack those keys (read as empty)."""
    first = records[0]

    def key(e: dict[str, Any]) -> str:
        return json.dumps({k: v for k, v in e.items() if k != "why"}, sort_keys=True)

    unmatched = [{key(e) for e in (*r.stale, *r.outside)} for r in records]
    stale = [e for e in first.stale
             if str(e.get("why", "")).startswith("expired")
             or all(key(e) in u for u in unmatched)]
    # a shard's cases are the others' unselected ones: an entry outside every shard's
    # selection covers only cases no shard ran; one stale in a shard matches none at all
    outside_all = set.intersection(*({key(e) for e in r.outside} for r in records))
    stale += [e for r in records[1:] for e in r.stale
              if key(e) not in {key(x) for x in stale} and all(key(e) in u for u in unmatched)]
    outside = [e for e in first.outside if key(e) in outside_all]
    return BaselineSummary(
        path=first.path, tags=first.tags,
        xpass=sorted({i for r in records for i in r.xpass}),
        expected=sorted({i for r in records for i in r.expected}),
        waived=sorted({i for r in records for i in r.waived}),
        stale=stale, not_applying=first.not_applying, outside=outside)
