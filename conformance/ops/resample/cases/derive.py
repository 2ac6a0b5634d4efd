"""RESAMPLE1's generated cases restated for the operators that keep RESAMPLE1's desc and add
attributes to it (RESAMPLE2's RoundingDirection, RESAMPLE3's Antialiased): the same call, tensors,
inputs and expectation, so that their families (conformance/ops/resample2/cases/ and
resample3/cases/) reuse RESAMPLE1's builders (this package) instead of copying them. Both pages
repeat RESAMPLE1's coordinate relation, Scales and offsets text (notes §10), so a citation of the
RESAMPLE1 page becomes one of theirs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from conformance import ops
from conformance.kit.build import case, cite
from conformance.ops.resample.pages import RESAMPLE1 as RESAMPLE1_PAGE
from conformance.tensors import TensorDesc


def restated(source: dict, operator: str, attributes: Mapping[str, Any], *, variant: str,
             cites: Sequence[dict] = (), tags: Sequence[str] = (), what: str = "",
             open_region: str | None = None) -> dict:
    """A single-call RESAMPLE1 case (a mandatory one) as the same call of `operator` with
    `attributes`: id <root>/<family>/<operator>/<variant>/<the rest of its id> (root: the
    source's, generated or the deep tier's deep), the RESAMPLE1 page's citations moved to the
    operator's page and `cites` added, `what` before its description; its feature level from the
    operator's tables; open_region: the open region it sits in for `operator`, if
    any."""
    if source.get("operator") != "RESAMPLE1" or "ambiguous" in source or "open" in source:
        raise ValueError(f"{source['id']}: only mandatory single-call RESAMPLE1 cases restate")
    family = source["tags"][0]
    root = source["id"].split("/", 1)[0]
    rest = source["id"].removeprefix(f"{root}/{family}/").removeprefix("resample1/")
    page = str(ops.get(operator).page)
    spec = [{**c, "page": page} if c["page"] == RESAMPLE1_PAGE else c for c in source["spec"]]
    description = "; ".join(t for t in (what, source.get("description", "")) if t)
    return case(f"{root}/{family}/{operator.lower()}/{variant}/{rest}", operator, attributes,
                source["tensors"], family=family, spec=[*spec, *cites, cite("NOTES", "10")],
                inputs=source["inputs"], expected=source.get("expected"),
                tags=[*tags, *source["tags"][2:]], description=description,
                open_region=open_region)


def tie_free(source: dict) -> dict:
    """A RESAMPLE1 case of the deep tier's sweep without its 'open' mark, to be restated:
    RESAMPLE1's ties are halves of the coordinate, where RESAMPLE2 and RESAMPLE3 (floor or ceil
    of the same coordinate) have none; their own near-ties, whole numbers, the reference takes
    either neighbour at (notes §10), so the restated call is mandatory like any other."""
    return {k: v for k, v in source.items() if k != "open"}


def decided(operator: str, tensors: Mapping[str, Mapping[str, Any]],
            attributes: Mapping[str, Any]) -> bool:
    """Whether the reference takes one output only for a nearest call: no coordinate at, or
    within float32 rounding of, a tie (RESAMPLE1: a half; RESAMPLE2: a whole number), where
    either neighbour is accepted."""
    spec = ops.get(operator)
    call = spec.make_call({n: TensorDesc.from_json(dict(d)) for n, d in tensors.items()},
                          attributes)
    x = np.zeros(call.tensors["InputTensor"].sizes, np.float32)
    return spec.expected(call, {"InputTensor": x})["OutputTensor"].kind != "one_of"
