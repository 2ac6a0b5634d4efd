"""`dmlconf verify BUNDLE`: is a certification bundle (bundle.py) complete, consistent and
intact? docs/certification.md says what that proves and what it cannot.

Checked, each problem one line a reviewer acts on:
- integrity: SHA256SUMS lists every file of the bundle, no more, each with its sha256;
- the results document reads with the strict reader (results.io) and environment.json agrees
  with it;
- the suite version is the installed one (else one line, and nothing that needs the lists);
- completeness: the results are those of a certification run (certify, tamper-proof, not a
  shard, not merged, no case file problem) of exactly the mustpass list of the claimed level;
- statuses: PASS and QUALITY_WARNING; NOT_SUPPORTED only for a case the level does not need
  (or, in a scoped claim, outside its scope: results.scope);
  XFAIL only for a case a waiver of the bundled baseline covers, with a reason and an expiry
  not before the run;
- consistency: the summary and the verdict recorded are those the results give, and the claimed
  level's verdict is conformant.

Before any of it, what verify reads is bounded (BundleError, a usage error, otherwise): every
file of a folder bundle a regular file within its cap (MEMBER_CAPS, MAX_MEMBER); a zip's
members checked from its directory (count, names, kinds, compression, the sizes said) and each
read through read_bounded, which stops at the member's cap and one byte whatever its header
says, all of them within MAX_UNZIPPED. `dmlconf verify --rerun` (rerun.py) then reruns a sample
of a valid bundle's cases.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformance import __version__
from conformance.certify.bundle import (
    BASELINE,
    ENVIRONMENT,
    ENVIRONMENT_FORMAT,
    PLACEHOLDER,
    REQUIRED,
    RESULTS,
    STATEMENT,
    SUMS,
    sha256_file,
)
from conformance.certify.unpack import plain_files, unpacked
from conformance.levels import FeatureLevel
from conformance.present import document_scope, verdict_line
from conformance.results import (
    Execution,
    MergedExecution,
    Result,
    ResultsDocument,
    Scope,
    Status,
    Verdict,
    counted,
    for_scope,
    mustpass,
    summary,
)
from conformance.results import baseline as baselines
from conformance.results.io import ResultsFileError, read
from conformance.results.verdicts import verdicts

#: The statuses a certification allows everywhere; NOT_SUPPORTED and XFAIL are allowed only
#: where their rules say (module docstring).
ALLOWED = (Status.PASS, Status.QUALITY_WARNING)
#: The most ids named in one problem line.
SHOWN = 3
_SUM_LINE = re.compile(r"^([0-9a-f]{64}) [ *](.+)$")


@dataclass
class Verification:
    """What verify found: problems (each one line; none: the bundle is valid) and notes (what
    a reviewer should know that does not make it invalid), and the claim it checked."""

    bundle: str
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    claim: str = ""
    #: The results document, where it read (a rerun samples its cases: rerun.py).
    document: ResultsDocument | None = field(default=None, repr=False)

    @property
    def valid(self) -> bool:
        return not self.problems


def _some(ids: Iterable[str]) -> str:
    ids = sorted(ids)
    more = f" and {len(ids) - SHOWN} more" if len(ids) > SHOWN else ""
    return ", ".join(ids[:SHOWN]) + more


def check_sums(folder: Path) -> list[str]:
    """Problems of the bundle's integrity: SHA256SUMS must list every file but itself, once,
    each with the sha256 the file has."""
    sums = folder / SUMS
    if not sums.is_file():
        return [f"{SUMS} is missing: nothing says what the bundle holds"]
    problems, listed = [], {}
    for number, line in enumerate(sums.read_text(encoding="utf-8", errors="replace")
                                  .splitlines(), 1):
        m = _SUM_LINE.match(line)
        if not m:
            problems.append(f"{SUMS} line {number} is not '<sha256>  <file>': {line[:80]!r}")
            continue
        digest, name = m.groups()
        if name in listed:
            problems.append(f"{SUMS} lists {name} twice")
        listed[name] = digest
    present = {p.relative_to(folder).as_posix() for p in folder.rglob("*")
               if (p.is_file() or p.is_symlink()) and p != sums}
    for name in sorted(present - set(listed)):
        problems.append(f"{name} is in the bundle but not in {SUMS}: added after certify")
    for name, digest in sorted(listed.items()):
        path = folder / name
        if name not in present:
            problems.append(f"{name} is listed in {SUMS} but not in the bundle: removed after "
                            "certify")
        elif path.is_symlink() or not path.is_file():
            problems.append(f"{name} is a link or not a plain file: a bundle holds files only")
        elif sha256_file(path) != digest:
            problems.append(f"{name} differs from the sha256 {SUMS} lists for it: changed "
                            "after certify")
    return problems


def waiver_problem(case_id: str, entries: Sequence[Any], run_date: dt.date) -> str | None:
    """Why an XFAIL of case_id is not allowed by the baseline's entries, or None: a waiver
    entry (a truthy `waiver`) covering the case, with a reason and an expiry not before the
    run's date. An expected failure that is no waiver does not do."""
    covering = [e for e in entries if e.covers(case_id)]
    waivers = [e for e in covering if getattr(e, "waiver", False)]
    if not waivers:
        if covering:
            return (f"XFAIL {case_id}: entry {covering[0].number} of {BASELINE} expects its "
                    "failure but is not a waiver: a certification allows only failures waived "
                    "with `waiver: true`, a reason and an expiry (docs/baselines.md)")
        return (f"XFAIL {case_id}: no entry of {BASELINE} covers it: an expected failure "
                "needs a waiver in the bundled baseline")
    why = []
    for e in waivers:
        reason = getattr(e, "reason", "")
        expires = getattr(e, "expires", None)
        if not (isinstance(reason, str) and reason.strip()):
            why.append(f"waiver entry {e.number} ({e.shown!r}) gives no reason")
        elif expires is None:
            why.append(f"waiver entry {e.number} ({e.shown!r}) has no expiry")
        elif expires < run_date:
            why.append(f"waiver entry {e.number} ({e.shown!r}) expired on "
                       f"{expires.isoformat()}, before the run of {run_date.isoformat()}")
        else:
            return None
    return f"XFAIL {case_id}: " + "; ".join(why)


def check_statuses(found: Sequence[Result], needed: frozenset[str],
                   baseline: baselines.Baseline | None, run_date: dt.date) -> list[str]:
    """Problems of the results' statuses (module docstring): one line per status for the
    plainly disallowed ones (FAIL: 24 cases, e.g. ...), one per XFAIL that no valid waiver
    covers."""
    bad: dict[str, list[str]] = defaultdict(list)
    problems = []
    for r in found:
        if r.status in ALLOWED or (r.status == Status.NOT_SUPPORTED and r.id not in needed):
            continue
        if r.status == Status.XFAIL:
            if baseline is None:
                bad["XFAIL (no baseline in the bundle)"].append(r.id)
                continue
            wrong = waiver_problem(r.id, baseline.entries, run_date)
            if wrong:
                problems.append(wrong)
            continue
        bad[r.status].append(r.id)
    for status, ids in bad.items():
        what = ("a case the claimed level needs: a certification allows it only for cases the "
                "level does not need" if status == Status.NOT_SUPPORTED else
                "a certification allows PASS, QUALITY_WARNING, NOT_SUPPORTED where the level "
                "does not need the case and XFAIL where a waiver covers it")
        problems.insert(0, f"{status}: {len(ids)} case{'s' if len(ids) != 1 else ''} "
                           f"({_some(ids)}); {what}")
    return problems


def _run_date(doc: ResultsDocument) -> dt.date | None:
    try:
        return dt.datetime.fromisoformat(doc.started_at).date()
    except ValueError:
        return None


def _environment(folder: Path, doc: ResultsDocument) -> list[str]:
    """Problems of environment.json: readable, of its format, and saying what results.json
    says of the run."""
    try:
        env = json.loads((folder / ENVIRONMENT).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        return [f"{ENVIRONMENT} does not read as JSON ({exc})"]
    if not isinstance(env, dict) or env.get("format") != ENVIRONMENT_FORMAT:
        return [f"{ENVIRONMENT} is not a {ENVIRONMENT_FORMAT} document"]
    problems = []
    backend: dict[str, Any] = env["backend"] if isinstance(env.get("backend"), dict) else {}
    for key, theirs, ours in (
            ("suite_version", env.get("suite_version"), doc.suite_version),
            ("feature_level", env.get("feature_level"), doc.feature_level),
            ("execution_flags", env.get("execution_flags"), doc.execution_flags),
            ("backend.name", backend.get("name"), doc.backend.get("name")),
            ("backend.class", backend.get("class"), doc.backend.get("class"))):
        if theirs != ours:
            problems.append(f"{ENVIRONMENT} says {key} {theirs!r}, {RESULTS} {ours!r}: they "
                            "are not of the same run")
    committed = mustpass.committed().case_set_sha256
    if env.get("case_set_sha256") != committed:
        problems.append(f"{ENVIRONMENT} names case set sha256 {env.get('case_set_sha256')!r}, "
                        f"not the committed one of suite {__version__} ({committed})")
    return problems


def _completeness(doc: ResultsDocument, ids: list[str], required: frozenset[str],
                  level: str) -> list[str]:
    """Problems of what the run was and covered: a certification of exactly the list."""
    problems = []
    execution = doc.execution
    run = execution if isinstance(execution, Execution) else None
    if run is None or run.certify is not True:
        problems.append("the run was not a certification (execution.certify is not true): "
                        "made by dmlconf run, not dmlconf certify")
    if run is None or run.tamper_proof is not True:
        problems.append("the run was not tamper-proof (execution.tamper_proof is not true): the "
                        "backend ran in the judge's process")
    if doc.shard:
        sh = doc.shard
        problems.append(f"the results are shard {sh.index if sh.has('index') else None}/"
                        f"{sh.count if sh.has('count') else None} of a run: "
                        "a certification runs the whole list, unsharded")
    if isinstance(execution, MergedExecution) and execution.merged:
        problems.append("the results were merged from shards: a certification is one run")
    if doc.load_errors or doc.complete is False:
        problems.append(f"the run had {len(doc.load_errors or [])} case file "
                        "problem(s): incomplete")
    counts: dict[str, int] = defaultdict(int)
    for i in ids:
        counts[i] += 1
    twice = [i for i, n in counts.items() if n > 1]
    if twice:
        problems.append(f"{counted(len(twice), 'case')} with more than one result ({_some(twice)})")
    missing = required - counts.keys()
    if missing:
        problems.append(f"{len(missing)} of the {len(required)} cases of the mustpass list of "
                        f"{level} have no result ({_some(missing)}): the run did not cover the "
                        "list")
    extra = counts.keys() - required
    if extra:
        problems.append(f"{len(extra)} results are of cases not on the mustpass list of "
                        f"{level} ({_some(extra)}): a certification runs the list, nothing else")
    return problems


def _json(verdict: Verdict | None) -> Any:
    return verdict.to_json() if isinstance(verdict, Verdict) else verdict


def _consistency(doc: ResultsDocument, found: list[Result], claimed: FeatureLevel,
                 lists: mustpass.Mustpass, scope: Scope | None) -> list[str]:
    """Problems of what the document says against what its results give (as the JSON says
    them: a field missing or added is a difference)."""
    problems = []
    if doc.summary != summary(found):
        problems.append(f"the summary recorded ({_counts(doc.summary)}) is not the results' "
                        f"({_counts(summary(found))}): results or summary edited")
    recomputed = verdicts(found, claimed, lists, scope)
    for level in sorted(set(recomputed) | set(doc.verdict)):
        ours, theirs = recomputed.get(level), doc.verdict.get(level)
        if _json(ours) != _json(theirs):
            said = verdict_line(theirs, scope=scope) if isinstance(theirs, Verdict) else "none"
            given = verdict_line(ours, scope=scope) if ours else "none"
            problems.append(f"the verdict recorded at level {level} ({said}) is not the one "
                            f"its results give ({given}): results or verdict edited")
    mine = recomputed.get(str(claimed))
    if mine is None or mine.conformant is not True:
        problems.append(f"the claimed level {claimed} is not conformant by its results: "
                        f"{verdict_line(mine, scope=scope) if mine else 'no verdict'}")
    return problems


def _counts(counts: dict[Status, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in counts.items() if v) or "none"


def verify_folder(folder: Path, name: str | None = None) -> Verification:
    """Verify the bundle unpacked in folder (module docstring); BundleError when it holds
    anything but folders and regular files of a bounded size (plain_files)."""
    plain_files(folder)
    v = Verification(name or str(folder))
    v.problems += check_sums(folder)
    missing = [f for f in REQUIRED if not (folder / f).is_file()]
    v.problems += [f"{f} is missing from the bundle" for f in missing if f != SUMS]
    if RESULTS in missing:
        return v
    try:
        doc = read(folder / RESULTS)
    except ResultsFileError as exc:
        v.problems.append(str(exc).replace(str(folder / RESULTS), RESULTS, 1))
        return v
    v.document = doc
    v.claim = (f"backend {doc.backend.get('name')} ({doc.backend.get('class')}), "
               f"feature level {doc.feature_level}{for_scope(document_scope(doc))}, "
               f"suite {doc.suite_version}, "
               f"{len(doc.results)} results")
    if ENVIRONMENT not in missing:
        v.problems += _environment(folder, doc)
    if doc.suite_version != __version__:
        v.problems.append(f"the bundle is of suite version {doc.suite_version}, this is "
                          f"dml-conformance {__version__}: verify it with dmlconf "
                          f"{doc.suite_version} (pip install dml-conformance=="
                          f"{doc.suite_version})")
        return v
    lists = mustpass.committed()
    try:
        claimed = FeatureLevel.parse(doc.feature_level)
    except ValueError as exc:
        v.problems.append(f"{RESULTS}: feature_level {doc.feature_level!r}: {exc}")
        return v
    required = lists.lists.get(str(claimed))
    if required is None:
        v.problems.append(f"suite {__version__} has no mustpass list for the claimed level "
                          f"{claimed}")
        return v
    recorded = (doc.mustpass.case_set_sha256
                if doc.mustpass and doc.mustpass.has("case_set_sha256") else None)
    if recorded != lists.case_set_sha256:
        v.problems.append(f"the results name mustpass lists of case set {recorded!r}, not the "
                          f"committed {lists.case_set_sha256}")
    found = doc.results
    v.problems += _completeness(doc, [r.id for r in found], required, str(claimed))
    baseline = None
    if (folder / BASELINE).is_file():
        try:
            baseline = baselines.parse((folder / BASELINE).read_text(encoding="utf-8"),
                                       BASELINE)
        except (baselines.BaselineError, UnicodeDecodeError) as exc:
            v.problems.append(f"{BASELINE} does not read, so no XFAIL can be checked: {exc}")
    if doc.baseline and not (folder / BASELINE).is_file():
        v.problems.append(f"the run used the baseline {doc.baseline.path!r}, but "
                          f"the bundle has no {BASELINE}")
    run_date = _run_date(doc)
    if run_date is None:
        v.problems.append(f"{RESULTS}: started_at {doc.started_at!r} is not a date and time")
        run_date = dt.date.max
    try:
        scope = Scope.from_json(doc.scope if doc.has("scope") else None)
    except ValueError as exc:
        v.problems.append(f"{RESULTS}: its scope {doc.scope!r} does not read: {exc}")
        return v
    if scope is not None:  # the cases outside a scoped claim are not covered, not needed
        required = frozenset(r.id for r in found if r.id in required
                             and scope.covers(r.operators, r.data_types))
    v.problems += check_statuses(found, required, baseline, run_date)
    v.problems += _consistency(doc, found, claimed, lists, scope)
    if (folder / STATEMENT).is_file() and PLACEHOLDER in (folder / STATEMENT).read_text(
            encoding="utf-8", errors="replace"):
        v.notes.append(f"{STATEMENT} is still the template: who makes the claim is not filled "
                       "in")
    return v


def verify(bundle: str | Path) -> Verification:
    """Verify a bundle, a folder or its .zip. BundleError when it is neither."""
    with unpacked(bundle) as (folder, name):
        return verify_folder(folder, name)
