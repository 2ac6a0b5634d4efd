"""Where a failing output's errors lie (Result.heat_maps, docs/results-format.md, "Heat maps"):
per element the error relative to what the model allows (`element_errors`: |error| / bound for
an output judged within a bound, 1 for an element that is not acceptable under an exact or
one-of model), laid out as the rows of the output's last dimension and pooled into at most
CELLS x CELLS cells, each cell the largest value of its elements (`heat_map`). A grid keeps a
small tensor whole (compare.grid); a heat map is bounded whatever the output's size, so that a
results file of many large FAILs stays small.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from conformance.expected import Expected

#: At most this many cells a side: a larger output is pooled, each cell the largest value of
#: the elements it covers.
CELLS = 64
#: The value of an element outside a bound by this much or more, or with no finite error (a NaN
#: where a number is expected): the heat map's values stay finite numbers (JSON has no
#: infinity).
CAP = 1000.0


def element_errors(got: np.ndarray, model: Expected, bad: np.ndarray) -> np.ndarray:
    """Per element (the output's shape): for a 'within' model |got - center| / bound, float64,
    at most CAP (0 where the element is acceptable with no finite error: NaN for NaN, a matched
    infinity; CAP where it is not acceptable with none); for exact and one_of models `bad`
    itself, as booleans (True: 1, the element is not acceptable; a bool array pools as cheaply
    as it is made)."""
    bad = np.asarray(bad, dtype=bool)
    if model.kind != "within":
        return bad
    center, bound = model.band
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        ratio = np.abs(got.astype(np.float64) - center) / bound
    endless = ~np.isfinite(ratio)
    ratio[endless] = 0.0
    ratio[endless & bad] = CAP  # outside the bound with no finite error
    return np.minimum(ratio, CAP, out=ratio)


def pooled(values: np.ndarray, cells: int = CELLS) -> tuple[np.ndarray, tuple[int, int]]:
    """`values` as rows of its last dimension (one row for a vector or a scalar), pooled into
    at most `cells` x `cells` cells: each cell the largest value of the block of elements it
    covers (rows x columns per cell, the second item; the last blocks may be cut short)."""
    width = values.shape[-1] if values.ndim else 1
    plane = values.reshape(-1, max(width, 1)) if values.size else np.zeros((1, 1))
    rows, cols = plane.shape
    block = (math.ceil(rows / cells), math.ceil(cols / cells))
    out_rows, out_cols = math.ceil(rows / block[0]), math.ceil(cols / block[1])
    if (out_rows * block[0], out_cols * block[1]) != plane.shape:  # the last blocks cut short
        padded = np.zeros((out_rows * block[0], out_cols * block[1]), plane.dtype)
        padded[:rows, :cols] = plane
        plane = padded
    pooled_cells = plane.reshape(out_rows, block[0], out_cols, block[1]).max(axis=(1, 3))
    return pooled_cells.astype(np.float64), block


def _number(v: float) -> float | int:
    """A cell's value as the results file keeps it: 3 significant digits, a whole one as an
    int (0, 1: an exact output's cells)."""
    rounded = float(f"{v:.3g}")
    if v > 1.0 >= rounded:  # outside the bound, by less than the rounding: still above 1
        rounded = 1.01
    return int(rounded) if rounded.is_integer() else rounded


def heat_map(name: str, got: np.ndarray, model: Expected, bad: np.ndarray) -> dict[str, Any]:
    """The heat map of a failing output: "tensor" and "shape"; "scale": "bound" (cells are
    |error| / bound: above 1 outside it) or "mismatch" (1 where an element is not acceptable);
    "block": [rows, columns] of elements per cell; "cells": the rows of cells (3 significant
    digits; a value above 1 stays above 1); "bad": how many elements are not acceptable;
    "largest": the largest value."""
    cells, block = pooled(element_errors(got, model, bad))
    return {"tensor": name, "shape": list(got.shape),
            "scale": "bound" if model.kind == "within" else "mismatch",
            "block": list(block), "cells": [[_number(v) for v in row] for row in cells],
            "bad": int(np.count_nonzero(bad)), "largest": _number(float(cells.max()))}
