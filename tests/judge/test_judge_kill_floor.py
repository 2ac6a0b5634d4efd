"""Issue 25's floor: every mandatory misreading of the catalogue, run as a backend that claims
one (operator, data type) slice at the lowest feature level whose table takes the type, FAILs
at least FLOOR mandatory cases of that slice (conformance/generate/kill_floor.py). One or two
cases per slice are one case edit away from letting a reading through; ten are not.
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
