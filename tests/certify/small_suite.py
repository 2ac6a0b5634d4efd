"""The small committed set the certification tests certify: a few documented case files, their
mustpass lists standing in for the suite's, and a baseline that expects the swapped-order
backend's failures (tests/certify/test_certify.py, test_verify_rerun.py)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from conformance.casefile import load_cases
from conformance.results import VERDICT_LEVELS, mustpass
from tests.support import DOCUMENTED

FILES = ("depth_to_space", "depth_to_space1", "space_to_depth", "space_to_depth1", "strides",
         "resample1")

#: Expects the swapped-order backend's failures (the four documented *1 cases whose Order matters).
SWAPPED_BASELINE = """\
- cases: "documented/depth_to_space1/*"
  status: FAIL
  reason: order swapped (a test double)
- cases: "documented/space_to_depth1/*"
  status: FAIL
  reason: order swapped (a test double)
"""


@contextmanager
def committed(root: Path) -> Iterator[tuple[Path, mustpass.Mustpass]]:
    """Within: the small set (its cases copied to root/cases) is the committed suite, and
    root/baseline.yaml holds SWAPPED_BASELINE; gives (the cases' folder, their lists)."""
    cases = root / "cases"
    cases.mkdir()
    for name in FILES:
        shutil.copy(DOCUMENTED / f"{name}.yaml", cases)
    lists = mustpass.from_cases(load_cases([cases]), VERDICT_LEVELS)
    (root / "baseline.yaml").write_text(SWAPPED_BASELINE, encoding="utf-8")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(mustpass, "committed", lambda: lists)
        mp.setattr("conformance.session.run.default_case_paths", lambda: [cases])
        yield cases, lists
