"""Baselines: a YAML file of known failures (docs/baselines.md).

Applied to a run's results, a FAIL, ERROR or TIMEOUT that an entry expects becomes XFAIL (it
no longer fails the run, but still denies the verdict); a PASS or a QUALITY_WARNING (a pass
inside the legal envelope, outside the strict reading) that an entry covers becomes XPASS
(fails the run with --strict only): the failure the entry expected is gone, whatever the
quality of the pass. Entries that cover no case, or whose `expires` date is past, are reported
as stale. An entry cannot expect a QUALITY_WARNING: a warning passes, so it needs none.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import yaml

from conformance.casefile import id_matches
from conformance.results.model import FAILING, Result

#: The statuses a baseline entry turns into XPASS: the passing statuses of a judged case
#: (XPASS itself is only made here).
PASSED = ("PASS", "QUALITY_WARNING")

#: The statuses an entry may expect: those that fail a run.
ENTRY_STATUSES = FAILING
KEYS = ("cases", "status", "reason", "issue", "expires")


class BaselineError(ValueError):
    """A malformed baseline file (a usage error: exit status 2)."""


@dataclass(frozen=True)
class Entry:
    number: int  # 1-based position in the file
    cases: str
    status: str
    reason: str
    issue: str | None = None
    expires: dt.date | None = None

    def to_json(self) -> dict[str, Any]:
        return {"cases": self.cases, "status": self.status, "reason": self.reason,
                "issue": self.issue,
                "expires": self.expires.isoformat() if self.expires else None}


@dataclass(frozen=True)
class Baseline:
    path: str
    entries: tuple[Entry, ...]


@dataclass
class Applied:
    results: list[Result]
    xpass: list[str]
    stale: list[dict[str, Any]]

    def to_json(self, path: str) -> dict[str, Any]:
        return {"path": path, "xpass": self.xpass, "stale": self.stale}


def _entry(path: str, number: int, raw: Any) -> Entry:
    where = f"baseline {path}: entry {number}"
    if not isinstance(raw, dict):
        raise BaselineError(f"{where}: must be a mapping with keys cases, status, reason "
                            f"(issue, expires optional), not {type(raw).__name__}")
    unknown = sorted(str(k) for k in raw if k not in KEYS)
    if unknown:
        raise BaselineError(f"{where}: unknown key(s) {', '.join(unknown)}; "
                            f"allowed: {', '.join(KEYS)}")
    if isinstance(raw.get("cases"), str) and raw["cases"].strip():
        where = f"baseline {path}: entry {number} (cases {raw['cases']!r})"
    for key in ("cases", "status", "reason"):
        if key not in raw:
            raise BaselineError(f"{where}: missing required key {key!r}")
    cases, status, reason = raw["cases"], raw["status"], raw["reason"]
    if not isinstance(cases, str) or not cases.strip():
        raise BaselineError(f"{where}: 'cases' must be a non-empty id pattern (as for -k), "
                            f"not {cases!r}")
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
    return Entry(number, cases, status, reason.strip(), issue, expires)


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


def _note(entry: Entry) -> str:
    return entry.reason + (f"; {entry.issue}" if entry.issue else "")


def apply(baseline: Baseline, found: list[Result], today: dt.date | None = None) -> Applied:
    """The results with the baseline's expectations applied, the ids that passed unexpectedly,
    and the stale entries. An expired entry applies to nothing (its cases count as they are)."""
    today = today or dt.date.today()
    live = [e for e in baseline.entries if e.expires is None or e.expires >= today]
    matched: set[int] = set()
    out: list[Result] = []
    xpass: list[str] = []
    for r in found:
        entries = [e for e in live if id_matches(r.id, e.cases)]
        matched.update(e.number for e in entries)
        same = next((e for e in entries if e.status == r.status), None)
        if same is not None:
            out.append(replace(r, status="XFAIL", message=f"expected {r.status} ({_note(same)}): "
                                                          f"{r.message}"))
        elif r.status in PASSED and entries:
            e = entries[0]
            how = "passed" if r.status == "PASS" else "passed with a QUALITY_WARNING"
            extra = f": {r.message}" if r.message else ""
            out.append(replace(r, status="XPASS", message=f"{how}, but the baseline expects "
                                                          f"{e.status} ({_note(e)}){extra}"))
            xpass.append(r.id)
        else:
            out.append(r)
    stale = []
    for e in baseline.entries:
        if e.expires is not None and e.expires < today:
            why = f"expired on {e.expires.isoformat()}"
        elif e.number not in matched:
            why = "matches no case"
        else:
            continue
        stale.append({**e.to_json(), "why": why})
    return Applied(out, xpass, stale)
