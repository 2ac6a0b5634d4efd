"""Every RESAMPLE3 capability slice, readably: RESAMPLE1's sampling family (conformance/ops/
resample/cases/sampling.py: per data type, both modes, scales on each dimension in turn, offset
formulas, crops and clamps, layouts, 1 to 3 dimensions, on integer ramps) as RESAMPLE3 calls with
Antialiased TRUE, the RoundingDirections in turn. Where the page's conditions do not hold
(NEAREST_NEIGHBOR, every 1/Scale at most 2) the calls are RESAMPLE2's, whatever Antialiased says;
the few linear downscales they stretch (Scales 0.4 and 0.5) fall in the page's silent regions
(the threshold, the normalisation, the edges) and are marked open with the reasons
Resample3.silent_regions() gives (judged against every admissible reading). The antialias
family holds the stretched filter itself.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from itertools import count

from conformance.kit.build import cite
from conformance.ops.resample.cases import sampling
from conformance.ops.resample.cases.derive import restated, tie_free
from conformance.ops.resample.examples import DIRECTIONS
from conformance.ops.resample.spec import Resample3
from conformance.ops.resample3.cases.antialias import silence
from conformance.tensors import DataType

FAMILY = "sampling"
DESCRIPTION = ("RESAMPLE3 per data type on integer ramps: RESAMPLE1's sampling calls with "
               "Antialiased TRUE, the RoundingDirections in turn")
SPEC = Resample3()


def _restated(source: dict, direction: str) -> dict:
    attributes = SPEC.stated(source["attributes"], direction, antialiased=1)
    return restated(source, SPEC.name, attributes, variant=direction.lower(),
                    tags=[direction.lower(), "antialiased"],
                    cites=[cite(SPEC.page, "RoundingDirection"), cite(SPEC.page, "Antialiased")],
                    what=f"RoundingDirection {direction}, Antialiased TRUE",
                    open_region=silence(source["tensors"], attributes))


def deep_slice(data_type: DataType) -> list[dict]:
    """The deep tier of one slice: RESAMPLE1's sweep (sampling.deep_sweep) as RESAMPLE3 calls
    with Antialiased TRUE, the directions in turn, open where silent_regions() says; ids
    deep/sampling/resample3/..."""
    turn = count()
    return [_restated(tie_free(s), DIRECTIONS[next(turn) % 2])
            for s in sampling.deep_sweep("RESAMPLE1", data_type)]


def deep_files() -> dict[str, Callable[[], list[dict]]]:
    """The deep tier's files of this family: stem -> its cases' builder (one per slice)."""
    return {f"resample3_{t.name.lower()}": partial(deep_slice, t) for t in sampling.TYPES}


def files() -> dict[str, list[dict]]:
    source = sampling.files()
    out = {}
    for data_type in sampling.TYPES:
        turn = count()
        out[f"resample3_{data_type.name.lower()}"] = [
            _restated(s, DIRECTIONS[next(turn) % 2])
            for s in source[f"resample1_{data_type.name.lower()}"]]
    return out
