"""`judge/heat_map.py`: where a failing output's errors lie, per element relative to what its
model allows, pooled into at most 64 x 64 cells (each the largest of its elements); and what a
FAIL keeps of a tensor too large for a grid (compare.kept)."""

from __future__ import annotations

import json

import numpy as np

from conformance.expected import Expected
from conformance.judge import compare
from conformance.judge.heat_map import CAP, CELLS, element_errors, heat_map, pooled


def within(center: np.ndarray, bound: float) -> Expected:
    values = center.astype(np.float32)
    return Expected(values, kind="within", center=center.astype(np.float64),
                    bound=np.full(center.shape, bound), rule="within")


def test_errors_are_relative_to_the_bound_and_mismatches_are_one() -> None:
    center = np.zeros(6)
    got = np.array([0.0, 0.5, 1.0, 3.0, np.nan, 1e9], np.float32)
    exp = within(center, 1.0)
    bad = compare.mismatches(got, exp)
    assert bad.tolist() == [False, False, False, True, True, True]
    # inside the bound up to 1; beyond it above 1; no finite error outside it: the cap
    assert element_errors(got, exp, bad).tolist() == [0.0, 0.5, 1.0, 3.0, CAP, CAP]
    # a NaN where a NaN is expected is no error
    nan = within(np.array([np.nan]), 1.0)
    assert element_errors(np.array([np.nan], np.float32), nan, np.array([False])).tolist() == [0]
    # bit-exact: 1 where an element is not acceptable
    exact = Expected(np.array([[1, 2], [3, 4]], np.uint32))
    got_exact = np.array([[1, 7], [3, 4]], np.uint32)
    errors = element_errors(got_exact, exact, compare.mismatches(got_exact, exact))
    assert errors.astype(int).tolist() == [[0, 1], [0, 0]]


def test_pooling_keeps_the_largest_value_of_each_block() -> None:
    values = np.zeros((2, 130, 5))
    values[1, 129, 4] = 7.0  # the last row, cut short, and the last column
    values[0, 3, 0] = 2.0
    cells, block = pooled(values, cells=64)
    # 260 rows of 5: 5 rows a cell (ceil(260 / 64)), 52 cells; 5 columns: one each
    assert block == (5, 1) and cells.shape == (52, 5)
    assert cells[0, 0] == 2.0 and cells[51, 4] == 7.0
    assert cells.sum() == 9.0  # every other cell 0
    # small ones are not pooled; a vector is one row, a scalar one cell
    assert pooled(np.arange(6.0).reshape(2, 3))[1] == (1, 1)
    assert pooled(np.arange(300.0))[0].shape == (1, 60)  # 5 elements a cell
    assert pooled(np.arange(300.0))[0][0, :2].tolist() == [4.0, 9.0]
    assert pooled(np.float64(3.0))[0].tolist() == [[3.0]]


def test_a_large_failing_output_gets_a_bounded_heat_map_of_where_its_errors_lie() -> None:
    shape = (1, 1, 16, 20)  # 320 elements: too many for a grid
    center = np.linspace(0, 1, 320).reshape(shape)
    got = center.astype(np.float32).copy()
    got[0, 0, 10, 15] += 0.25  # 2.5 times the bound
    got[0, 0, 2, 3] += 0.05    # inside it
    exp = within(center, 0.1)
    judged = compare.judge(got, exp)
    assert judged.status == "FAIL"
    h = heat_map("OutputTensor", got, judged.model, judged.bad)
    assert h["tensor"] == "OutputTensor" and h["shape"] == list(shape)
    assert h["scale"] == "bound" and h["block"] == [1, 1] and h["bad"] == 1
    assert len(h["cells"]) == 16 and {len(row) for row in h["cells"]} == {20}
    assert h["cells"][10][15] == 2.5 and h["cells"][2][3] == 0.5 and h["largest"] == 2.5
    assert sum(v for row in h["cells"] for v in row if v > 1) == 2.5
    # a grid is left out, saying why
    assert compare.grid("OutputTensor", got, judged.model, judged.bad) is None
    assert compare.kept("OutputTensor", got, judged.model, judged.bad) == {
        "tensor": "OutputTensor", "shape": list(shape),
        "left_out": {"elements": 320, "limit": compare.GRID_LIMIT}}
    small = np.zeros((2, 3), np.float32)
    assert compare.kept("InputTensor", small) == compare.grid("InputTensor", small)


def test_a_very_large_output_is_pooled_into_at_most_64_by_64_cells() -> None:
    shape = (2, 3, 300, 500)
    want = np.zeros(shape, np.uint8)
    got = want.copy()
    got[1, 2, 299, 499] = 1  # the very last element
    got[0, 0, 0, 0] = 1
    exp = Expected(want)
    bad = compare.mismatches(got, exp)
    h = heat_map("OutputTensor", got, exp, bad)
    rows, cols = len(h["cells"]), len(h["cells"][0])
    assert rows <= CELLS and cols <= CELLS and h["block"] == [29, 8]
    assert h["scale"] == "mismatch" and h["bad"] == 2 and h["largest"] == 1
    assert h["cells"][0][0] == 1 and h["cells"][-1][-1] == 1
    assert sum(map(sum, h["cells"])) == 2
    assert len(json.dumps(h)) < 20_000  # bounded, whatever the output's size
    # rounded to 3 significant digits, and a value just above the bound stays above it
    center = np.zeros(3)
    got_f = np.array([0.123456, 1.0004, 2.0], np.float32)
    judged = compare.judge(got_f, within(center, 1.0))
    cells = heat_map("x", got_f, judged.model, judged.bad)["cells"]
    assert cells == [[0.123, 1.01, 2]]
