"""Every RESAMPLE2 capability slice, readably: RESAMPLE1's sampling family (conformance/ops/
resample/cases/sampling.py: per data type, both modes, scales on each dimension in turn, every
dimension at once, offset formulas, crops and clamps, layouts, FLOAT32 beyond float16, 1 to 3
dimensions, on integer ramps) as RESAMPLE2 calls: each nearest call with RoundingDirection
DECREASING (floor(c)) and INCREASING (ceil(c)), each linear call once, the directions in turn
(RoundingDirection "affects only DML_INTERPOLATION_MODE_NEAREST_NEIGHBOR"). The levels are
RESAMPLE2's (FLOAT32 and FLOAT16 from 5_1, INT8 and UINT8 from 6_2).

RESAMPLE1's calls avoid its ties (halves); RESAMPLE2's own near-ties are whole-number coordinates,
where either neighbour is accepted (notes §10), so a few elements of some calls (an integer
coordinate) decide less; the rest of each call decides floor or ceil, and the catalogue of
RoundingDirection misreadings (conformance/ops/resample/misreadings_rounding.py) fails every
slice here.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from itertools import count

from conformance.kit.build import cite
from conformance.ops.resample.cases import sampling
from conformance.ops.resample.cases.derive import restated, tie_free
from conformance.ops.resample.examples import DIRECTIONS
from conformance.ops.resample.spec import Resample2
from conformance.tensors import DataType

FAMILY = "sampling"
DESCRIPTION = ("RESAMPLE2 per data type and feature level on integer ramps: RESAMPLE1's "
               "sampling calls, nearest in each RoundingDirection, linear in turn")
SPEC = Resample2()


def with_directions(source: dict, linear: count) -> list[dict]:
    """A RESAMPLE1 case as RESAMPLE2 calls: nearest in both directions, linear in the next one
    of `linear`'s turn."""
    nearest = source["attributes"]["InterpolationMode"] == "NEAREST_NEIGHBOR"
    directions = DIRECTIONS if nearest else (DIRECTIONS[next(linear) % 2],)
    return [restated(source, SPEC.name, SPEC.stated(source["attributes"], d),
                     variant=d.lower(), tags=[d.lower()],
                     cites=[cite(SPEC.page, "RoundingDirection")],
                     what=f"RoundingDirection {d}")
            for d in directions]


def deep_slice(data_type: DataType) -> list[dict]:
    """The deep tier of one slice: RESAMPLE1's sweep (sampling.deep_sweep) as RESAMPLE2 calls,
    nearest in both directions, linear in turn; ids deep/sampling/resample2/..."""
    turn = count()
    return [c for s in sampling.deep_sweep("RESAMPLE1", data_type)
            for c in with_directions(tie_free(s), turn)]


def deep_files() -> dict[str, Callable[[], list[dict]]]:
    """The deep tier's files of this family: stem -> its cases' builder (one per slice)."""
    return {f"resample2_{t.name.lower()}": partial(deep_slice, t) for t in sampling.TYPES}


def files() -> dict[str, list[dict]]:
    source = sampling.files()
    out = {}
    for data_type in sampling.TYPES:
        turn = count()
        out[f"resample2_{data_type.name.lower()}"] = [
            c for s in source[f"resample1_{data_type.name.lower()}"]
            for c in with_directions(s, turn)]
    return out
