"""What a run's results say: the verdict per feature level, the exit status, and the FAILs
counted by the misreading they were diagnosed as (docs/results-format.md, "The verdict")."""

from __future__ import annotations

from collections import Counter

from conformance import ops
from conformance.levels import FeatureLevel
from conformance.results import mustpass as mustpass_lists
from conformance.results.document import Verdict
from conformance.results.model import (
    FAILING,
    PASSING,
    Result,
    Status,
    counted,
    decisive,
    summary,
)
from conformance.results.mustpass import Mustpass
from conformance.results.scope import Scope

#: The levels at which an operator appears or its tables change: the levels a verdict is given
#: for. Derived from the operator specs, so that an operator package brings its own levels.
VERDICT_LEVELS: tuple[FeatureLevel, ...] = tuple(sorted(
    {spec.introduced for spec in ops.OPERATORS.values()}
    | {t.level for spec in ops.OPERATORS.values() for t in spec.support}))


def verdicts(results: list[Result], claimed: FeatureLevel,
             mustpass: Mustpass | None = None, scope: Scope | None = None) -> dict[str, Verdict]:
    """Per distinguished feature level up to the claimed one. Mandatory at a level: the cases
    needing it or less, not ambiguous, not limited to levels below the claimed one
    (mustpass.mandatory: such a case is not run, NOT_SUPPORTED; a run claiming a lower level
    judges it). Of those, the claim covers the cases in `scope` (results.scope: a scoped
    claim), or without one every case but those NOT_SUPPORTED (not claimed by the backend's
    capabilities); "not_covered" counts the rest, and they decide nothing.
    conformant: False when a covered mandatory case did not pass (in a scoped claim a
    NOT_SUPPORTED case in the scope is a claim not kept, and denies); True only when every
    mandatory case passed (nothing not covered without a scope) AND the run covered every id
    of the level's mustpass list (docs/mustpass.md; `mustpass` None: this suite version's
    committed lists), whatever each one's status; None otherwise (a partial run, a shard, no
    mandatory case, cases not claimed: no verdict, never "NOT conformant"). A waived XFAIL
    (Result.waiver: docs/baselines.md, "Waivers") counts as passed here and in "waivers", the
    count a "conformant with N waivers" gives (conformant_text); an expected failure that is
    no waiver still denies the level. "mandatory" and the counts: the covered mandatory cases;
    "mustpass" / "mustpass_run": the list's size and how many of its ids were run (null where
    this suite version has no list)."""
    mp = mustpass_lists.committed() if mustpass is None else mustpass
    ran = {r.id for r in results}
    out: dict[str, Verdict] = {}
    for level in VERDICT_LEVELS:
        if level > claimed:
            break
        mandatory = [r for r in results
                     if mustpass_lists.mandatory(
                         FeatureLevel.parse(r.feature_level),
                         FeatureLevel.parse(r.feature_level_below)
                         if r.feature_level_below else None,
                         bool(r.ambiguous), level, claimed)]
        if scope is not None:
            covered = [r for r in mandatory if scope.covers(r.operators, r.data_types)]
            not_covered = len(mandatory) - len(covered)
        else:
            covered = mandatory
            not_covered = sum(r.status == Status.NOT_SUPPORTED for r in mandatory)
        counts = summary(covered)
        required = mp.required(level, claimed)
        complete = required is not None and required <= ran
        waivers = sum(r.status == Status.XFAIL and r.waiver is not None for r in covered)
        passing = sum(counts[s] for s in PASSING) + waivers
        denied = len(covered) - passing - (0 if scope is not None else not_covered)
        out[str(level)] = Verdict(
            conformant=(False if denied else True if complete and covered and not
                        (scope is None and not_covered) else None),
            mandatory=len(covered),
            mustpass=None if required is None else len(required),
            mustpass_run=None if required is None else len(required & ran),
            waivers=waivers,
            not_covered=not_covered,
            counts=counts)
    return out


def conformant_text(v: Verdict) -> str:
    """The words of a conformant level's verdict (`v`: one level of verdicts()):
    "conformant", or "conformant with 2 waivers" where waived failures are among its
    mandatory cases (a document from before waivers has none)."""
    n = v.waivers or 0
    return f"conformant with {counted(n, 'waiver')}" if n else "conformant"


#: The key of results.diagnoses() that counts the FAILs no catalogued misreading explains.
NOT_RECOGNISED = "(not recognised)"


def diagnoses(results: list[Result]) -> dict[str, int]:
    """How many failing results each misreading of the catalogue was recognised in, most first
    (a result may name several); NOT_RECOGNISED counts the FAILs with no diagnosis. Given the
    results after a baseline is applied, an expected failure (XFAIL) is not counted."""
    counts: Counter[str] = Counter()
    for r in results:
        if r.status == Status.FAIL:
            counts.update((r.diagnosis or {}).get("readings") or [NOT_RECOGNISED])
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def exit_status(results: list[Result], strict: bool = False) -> int:
    """0 only when no decisive case FAILed, ERRORed or TIMED OUT (an XFAIL never fails the
    run); with strict, also when none unexpectedly passed (XPASS)."""
    failing = (*FAILING, Status.XPASS) if strict else FAILING
    return int(any(r.status in failing for r in decisive(results)))


def reading_words(key: str) -> str:
    """What the catalogue of misreadings says a reading of a diagnosis does ("Strides taken
    as ..."), or a note that this suite's catalogue does not hold the key (a document from another
    version)."""
    from conformance.judge.misreadings import CATALOGUE  # loaded only when a report names a reading

    entry = CATALOGUE.get(key)
    return entry.reading if entry is not None else "(not in this suite's catalogue)"
