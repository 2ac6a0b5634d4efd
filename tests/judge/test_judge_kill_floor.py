"""Issue 25's floor: every mandatory misreading of the catalogue, run as a backend that claims
one (operator, data type) slice at the lowest feature level whose table takes the type, FAILs
at least FLOOR mandatory cases of that slice (conformance/generate/kill_floor.py). One or two
cases per slice are one case edit away from letting a reading through; ten are not. The
validation class the same way: each rule dropped from the validation lets ten of every
slice's rejected cases through (LenientBackend).
"""

from __future__ import annotations

import pytest

from conformance.generate import kill_floor
from tests.judge.test_judge_misreadings import committed

#: (misreading, operator) pairs the floor does not hold for, each with why: none today.
EXEMPT: dict[tuple[str, str], str] = {}


@pytest.mark.certification  # every (slice, misreading) pair up to its floor: minutes
def test_every_misreading_fails_ten_mandatory_cases_of_every_slice() -> None:
    counts = list(kill_floor.counts(committed(), floor=kill_floor.FLOOR))
    assert len(counts) > 1000
    thin = [f"{c.operator} {c.data_type.name} {c.level}: {c.entry} {c.kills} of "
            f"{c.covered} covered" for c in counts
            if c.kills < kill_floor.FLOOR and (c.entry, c.operator) not in EXEMPT]
    assert not thin, f"{len(thin)} pairs below {kill_floor.FLOOR} FAILs: " + "; ".join(thin[:10])


@pytest.mark.certification  # every (slice, validation rule) pair: about 15 s
def test_every_validation_rule_fails_ten_rejected_cases_of_every_slice() -> None:
    counts = list(kill_floor.validation_counts(committed(), floor=kill_floor.FLOOR))
    assert len(counts) > 600
    thin = [f"{c.operator} {c.data_type.name} {c.level}: without {c.entry} {c.kills} of "
            f"{c.covered}" for c in counts if c.kills < kill_floor.FLOOR
            and not kill_floor.inapplicable(c.operator, c.entry, c.level)]
    assert not thin, f"{len(thin)} pairs below {kill_floor.FLOOR} FAILs: " + "; ".join(thin[:10])
    # a rule named inapplicable truly lets nothing through on its slice: no case breaks it alone
    named = [c for c in counts if kill_floor.inapplicable(c.operator, c.entry, c.level)]
    assert named and all(c.kills == 0 for c in named)


def test_lenient_backend_accepts_what_only_its_rule_refuses() -> None:
    from conformance.casefile import load_cases
    from conformance.session.case_run import run_case
    from conformance.suite import cases_root
    from conformance.tensors import DataType

    cases = {c.id: c for c in load_cases([cases_root() / "generated/invalid/resample1.yaml"])}
    level = kill_floor.lowest_level("RESAMPLE1", DataType.FLOAT32)
    lenient = kill_floor.LenientBackend("resample.mode", "RESAMPLE1", DataType.FLOAT32, level)
    assert run_case(cases["generated/invalid/resample1/mode-2"], lenient).status == "FAIL"
    # the same backend still refuses every other rule's case
    assert run_case(cases["generated/invalid/resample1/zero-size"], lenient).status == "PASS"
    assert "resample.mode" in kill_floor.validation_rules("RESAMPLE1")
    assert "operator.output_sizes" not in kill_floor.validation_rules("RESAMPLE1")
    assert "operator.output_sizes" in kill_floor.validation_rules("DEPTH_TO_SPACE1")
