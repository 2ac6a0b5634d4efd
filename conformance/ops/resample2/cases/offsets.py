"""RESAMPLE2's coordinates on every dimension: RESAMPLE1's offsets-family calls that scale every
dimension at once with seeded random scales, offsets and crops or clamps ('all-axes'), and those
of 1, 2 and 3 dimensions (conformance/ops/resample/cases/offsets.py), as RESAMPLE2 calls: nearest
in each RoundingDirection, linear in the directions in turn (the page repeats RESAMPLE1's
coordinate relation, notes §10). Judged against the reference with its tolerance model.
"""

from __future__ import annotations

from itertools import count

from conformance.ops.resample.cases import offsets
from conformance.ops.resample2.cases.sampling import with_directions

FAMILY = "offsets"
DESCRIPTION = ("RESAMPLE2 coordinates: RESAMPLE1's all-axes and 1-3 dimension calls with each "
               "RoundingDirection")
#: The RESAMPLE1 files of the offsets family restated here.
STEMS = ("all_axes", "fewer_dimensions")


def files() -> dict[str, list[dict]]:
    source = offsets.files()
    out = {}
    for stem in STEMS:
        turn = count()
        out[f"resample2_{stem}"] = [c for s in source[stem] if s["operator"] == "RESAMPLE1"
                                    for c in with_directions(s, turn)]
    return out
