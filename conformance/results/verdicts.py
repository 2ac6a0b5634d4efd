"""What a run's results say: the verdict per feature level, the exit status, and the FAILs
counted by the misreading they were diagnosed as (docs/results-format.md, "The verdict")."""

from __future__ import annotations

from collections import Counter
from typing import Any

from conformance import ops
from conformance.levels import FeatureLevel
from conformance.results.model import FAILING, PASSING, Result, decisive, summary

#: The levels at which an operator appears or its tables change: the levels a verdict is given
#: for. Derived from the operator specs, so that an operator package brings its own levels.
VERDICT_LEVELS: tuple[FeatureLevel, ...] = tuple(sorted(
    {spec.introduced for spec in ops.OPERATORS.values()}
    | {t.level for spec in ops.OPERATORS.values() for t in spec.support}))


def verdicts(results: list[Result], claimed: FeatureLevel) -> dict[str, dict[str, Any]]:
    """Per distinguished feature level up to the claimed one: conformant (True) when every
    mandatory case at that level (needing it or less, not ambiguous, not limited to levels
    below the claimed one) passed; None when no case is mandatory there (untested, no verdict).
    A case limited to levels below the claimed one is not run (NOT_SUPPORTED), so it decides
    no level of this run: a run claiming a lower level judges it."""
    out: dict[str, dict[str, Any]] = {}
    for level in VERDICT_LEVELS:
        if level > claimed:
            break
        mandatory = [r for r in decisive(results)
                     if FeatureLevel.parse(r.feature_level) <= level
                     and not (r.feature_level_below
                              and claimed >= FeatureLevel.parse(r.feature_level_below))]
        counts = summary(mandatory)
        out[str(level)] = {
            "conformant": (sum(counts[s] for s in PASSING) == len(mandatory)
                           if mandatory else None),
            "mandatory": len(mandatory),
            **counts,
        }
    return out


#: The key of results.diagnoses() that counts the FAILs no catalogued misreading explains.
NOT_RECOGNISED = "(not recognised)"


def diagnoses(results: list[Result]) -> dict[str, int]:
    """How many failing results each misreading of the catalogue was recognised in, most first
    (a result may name several); NOT_RECOGNISED counts the FAILs with no diagnosis. Given the
    results after a baseline is applied, an expected failure (XFAIL) is not counted."""
    counts: Counter[str] = Counter()
    for r in results:
        if r.status == "FAIL":
            counts.update((r.diagnosis or {}).get("readings") or [NOT_RECOGNISED])
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def exit_status(results: list[Result], strict: bool = False) -> int:
    """0 only when no decisive case FAILed, ERRORed or TIMED OUT (an XFAIL never fails the
    run); with strict, also when none unexpectedly passed (XPASS)."""
    failing = (*FAILING, "XPASS") if strict else FAILING
    return int(any(r.status in failing for r in decisive(results)))


def reading_words(key: str) -> str:
    """What the catalogue of misreadings says a reading of a diagnosis does ("Strides taken
    as ..."), or a note that this suite's catalogue does not hold the key (a document from another
    version)."""
    from conformance.judge.misreadings import CATALOGUE  # loaded only when a report names a reading

    entry = CATALOGUE.get(key)
    return entry.reading if entry is not None else "(not in this suite's catalogue)"
