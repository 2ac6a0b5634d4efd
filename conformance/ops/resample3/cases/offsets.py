"""RESAMPLE3's coordinates in 1, 2 and 3 dimensions: RESAMPLE1's offsets-family calls of fewer
dimensions (conformance/ops/resample/cases/offsets.py: seeded random scales, offsets, crops and
clamps), and its LINEAR calls that keep a dimension's size under a Scale other than 1 (which
misreading kept-size-unscaled skips), as RESAMPLE3 calls with Antialiased FALSE, which the page
makes RESAMPLE2 (Remarks), the RoundingDirections in turn. The antialiased filter has its own family
(antialias); here the coordinate relation RESAMPLE3 repeats is what is checked.
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import count

from conformance.kit.build import cite
from conformance.ops.resample.cases import offsets
from conformance.ops.resample.cases.derive import restated
from conformance.ops.resample.examples import DIRECTIONS
from conformance.ops.resample.spec import Resample3

FAMILY = "offsets"
DESCRIPTION = ("RESAMPLE3 coordinates: RESAMPLE1's 1-3 dimension calls with Antialiased FALSE, "
               "the RoundingDirections in turn")
SPEC = Resample3()


def files() -> dict[str, list[dict]]:
    return {"resample3_fewer_dimensions": _restated(
                s for s in offsets.files()["fewer_dimensions"] if s["operator"] == "RESAMPLE1"),
            "resample3_kept_size": _restated(offsets.kept_size("RESAMPLE1"))}


def _restated(sources: Iterable[dict]) -> list[dict]:
    """RESAMPLE1 cases as RESAMPLE3 calls with Antialiased FALSE, the directions in turn."""
    turn = count()
    out = []
    for source in sources:
        direction = DIRECTIONS[next(turn) % 2]
        attributes = SPEC.stated(source["attributes"], direction, antialiased=0)
        out.append(restated(source, SPEC.name, attributes, variant=direction.lower(),
                            tags=[direction.lower()],
                            cites=[cite(SPEC.page, "RoundingDirection"),
                                   cite(SPEC.page, "Remarks")],
                            what=f"RoundingDirection {direction}, Antialiased FALSE"))
    return out
