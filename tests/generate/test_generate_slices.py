"""Every capability slice is covered (issue 11, part 4): for each (operator, data type) a backend
may claim on its own, at each verdict feature level where the operator's tables take the type,
the generated suite holds at least FLOOR mandatory cases that backend can run, from every family
that applies to the operator. The counts are conformance.generate.slice_counts(), the data of
the per-slice table of docs/case-counts.md."""

from __future__ import annotations

from functools import cache

import pytest

from conformance import ops
from conformance.generate import slice_counts
from conformance.tensors import DataType

#: The least number of mandatory single-slice cases per slice and level.
FLOOR = 30

DEPTH_SPACE = ("DEPTH_TO_SPACE", "DEPTH_TO_SPACE1", "SPACE_TO_DEPTH", "SPACE_TO_DEPTH1")
RESAMPLE = ("RESAMPLE", "RESAMPLE1")
#: Operator -> the families every one of its slices must hold cases of, and why.
APPLICABLE: dict[str, dict[str, str]] = {
    **{op: {
        "blocks": "readable ramps: every BlockSize 1-6, both orders, every layout, per type",
        "layouts": "strided descs judged against the packed run, per type",
        "tables": "the type at the lowest level its table takes it",
        "bitlevel": "NaN payloads, -0.0, subnormals and integer extremes moved bit for bit "
                    "(every type: integer extremes too)",
    } for op in DEPTH_SPACE},
    **{op: {
        "equivalence": "COLUMN_ROW_DEPTH equals DEPTH_COLUMN_ROW after the channel "
                       "permutation: a chain of one operator, per type",
    } for op in ("DEPTH_TO_SPACE1", "SPACE_TO_DEPTH1")},
    **{op: {
        "sampling": "readable ramps per type and level: scales, offset formulas, crops, "
                    "clamps and layouts (every type, INT8 included)",
        "offsets": "the coordinate formula on each dimension, per type",
        "tables": "the type and dimension counts at the lowest level their tables take them",
        "bitlevel": "nearest selects an input element, special values included",
    } for op in RESAMPLE},
    "RESAMPLE2": {
        "sampling": "RESAMPLE1's readable ramps with each RoundingDirection, per type",
        "offsets": "the coordinate formula on every dimension, each RoundingDirection, per type",
        "tables": "the type and dimension counts at the lowest level their tables take them",
        "bitlevel": "nearest in each direction selects an input element, special values included",
    },
    "RESAMPLE3": {
        "antialias": "the stretched filter, the threshold and its conditions, per type",
        "sampling": "RESAMPLE1's readable ramps with Antialiased TRUE, per type",
        "tables": "the type and dimension counts at the lowest level their table takes them",
        "bitlevel": "nearest in each direction selects an input element, special values included",
    },
}
#: Families that apply to an operator but not to every one of its slices, and why.
NOT_PER_SLICE = {
    "large": "a few large tensors per operator, one type each: sizes, not types, are its point",
    "roundtrip": "chains of two operators: no single-operator backend runs them",
    "layouts (resample)": "the layouts family runs the resample operators with FLOAT32, FLOAT16 "
                          "and UINT8; the sampling (and antialias) family's layout cases cover "
                          "every type",
}


@cache
def counts() -> dict[tuple[str, DataType], dict]:
    return slice_counts()


def test_every_operator_and_type_of_the_tables_is_a_slice() -> None:
    want = {(name, t) for name, spec in ops.OPERATORS.items()
            for table in spec.support for t in table.data_types}
    assert set(counts()) == want
    assert set(APPLICABLE) == set(ops.OPERATORS)


@pytest.mark.parametrize("operator", sorted(ops.OPERATORS))
def test_each_slice_holds_the_floor_at_every_level(operator: str) -> None:
    low = [f"{t.name} at {lv}: {n}" for (op, t), row in counts().items() if op == operator
           for lv, n in row["levels"].items() if n < FLOOR]
    assert not low, (f"{operator} slices below {FLOOR} mandatory single-slice cases: "
                     + "; ".join(low))
    assert all(row["levels"] for (op, _), row in counts().items() if op == operator), \
        f"a {operator} slice exists at no verdict level"


@pytest.mark.parametrize("operator", sorted(ops.OPERATORS))
def test_each_slice_holds_every_applicable_family(operator: str) -> None:
    want = set(APPLICABLE[operator])
    missing = [f"{t.name} lacks {', '.join(sorted(want - set(row['families'])))}"
               for (op, t), row in counts().items()
               if op == operator and want - set(row["families"])]
    assert not missing, f"{operator}: " + "; ".join(missing)


def test_the_floor_can_fail() -> None:
    """The check counts what it says: a slice's count drops when its cases go."""
    from conformance.generate import collect

    full = collect()
    without = {rel: v for rel, v in full.items()
               if not rel.startswith(("blocks/", "bitlevel/", "layouts/"))}
    key = ("DEPTH_TO_SPACE", DataType.FLOAT32)
    before = counts()[key]["levels"]
    after = slice_counts(without)[key]["levels"]
    assert all(after[lv] < FLOOR <= before[lv] for lv in before), (before, after)
    assert "blocks" not in slice_counts(without)[key]["families"]
