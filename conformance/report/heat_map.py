"""The HTML report's pictures of where a failing output's errors lie (Result.heat_maps: one per
failing output, at most 64 x 64 cells whatever its size; docs/results-format.md, "Heat maps"):
each drawn as a PNG, a pixel a cell (2 or 3 pixels across a cell of a narrow map, whose cells
are drawn longer), written here with zlib (no imaging library) and inlined as a data: URL,
which the page scales up without smoothing; and the notes that say why a
tensor's grid is left out ("grid left out: 320 elements ...").
"""

from __future__ import annotations

import base64
import math
import struct
import zlib
from typing import Any

import numpy as np

#: The colours of the cells. Scale "bound" (|error| / bound): 0 is ZERO; up to 1 (inside the
#: bound) from INSIDE_LOW to INSIDE_HIGH; above 1 (outside it, a FAIL) from OUTSIDE_LOW to
#: OUTSIDE_HIGH at TOP times the bound (log-scaled). Scale "mismatch": 0 ZERO, else WRONG.
ZERO = (247, 247, 247)
INSIDE_LOW, INSIDE_HIGH = (255, 240, 170), (245, 158, 11)
OUTSIDE_LOW, OUTSIDE_HIGH = (239, 68, 68), (110, 10, 10)
WRONG = (220, 38, 38)
TOP = 1000.0
#: The most cells a side drawn (a results file of this suite holds at most 64).
MOST = 256
#: The picture's longer side on the page, in CSS pixels (before max-width), of square cells
#: from 4 to 24 px; its shorter side is drawn at least LEAST px where cells up to 3 times as
#: long (at most 24 px) reach it.
SIDE, LEAST = 384, 192


def _finite(v: Any) -> float | None:
    """A number of the document as a finite float; None for anything else (text, a bool, NaN,
    an integer too large for a float)."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    try:
        x = float(v)
    except OverflowError:
        return None
    return x if math.isfinite(x) else None


def _value(v: Any) -> float:
    """A cell as a number: one that is not a non-negative finite number (a hand-made or
    damaged file's) counts as TOP, the worst."""
    x = _finite(v)
    return TOP if x is None or x < 0 else x


def _mix(low: tuple[int, int, int], high: tuple[int, int, int], t: np.ndarray) -> np.ndarray:
    t = np.clip(t, 0.0, 1.0)[..., None]
    return np.asarray(low) + (np.asarray(high) - np.asarray(low)) * t


def colours(values: np.ndarray, scale: str) -> np.ndarray:
    """The cells' colours (values' shape x 3, RGB, uint8): ZERO for 0; for scale "bound" amber
    up to the bound (1), red beyond it, darker to TOP (log-scaled); for "mismatch" WRONG for
    anything above 0."""
    v = np.asarray(values, np.float64)
    if scale == "bound":
        with np.errstate(divide="ignore"):
            beyond = np.log10(np.maximum(v, 1.0)) / math.log10(TOP)
        out = np.where((v > 1)[..., None], _mix(OUTSIDE_LOW, OUTSIDE_HIGH, beyond),
                       _mix(INSIDE_LOW, INSIDE_HIGH, v))
    else:
        out = np.broadcast_to(np.asarray(WRONG, np.float64), (*v.shape, 3))
    out = np.where((v <= 0)[..., None], np.asarray(ZERO, np.float64), out)
    return np.rint(out).astype(np.uint8)


def colour(value: float, scale: str) -> tuple[int, ...]:
    """One cell's colour (colours)."""
    return tuple(int(c) for c in colours(np.array([value]), scale)[0])


def png(pixels: np.ndarray) -> bytes:
    """An RGB PNG of an array of pixels (height x width x 3), 8 bits a channel."""
    height, width = pixels.shape[:2]

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))

    rows = pixels.astype(np.uint8).reshape(height, width * 3)
    raw = np.hstack([np.zeros((height, 1), np.uint8), rows]).tobytes()  # filter 0 a row
    return (b"\x89PNG\r\n\x1a\n"
            + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))


def cells_of(h: dict[str, Any]) -> np.ndarray:
    """A heat map's cells as an array of rows (float64), at most MOST x MOST: each cell that is
    not a non-negative finite number (a hand-made or damaged file's) counted as TOP, the
    worst, short rows made as long as the longest with 0; an empty array where it has none."""
    rows = h.get("cells")
    if not isinstance(rows, list):
        return np.zeros((0, 0))
    rows = [row[:MOST] for row in rows[:MOST] if isinstance(row, list)]
    width = max((len(row) for row in rows), default=0)
    if not width:
        return np.zeros((0, 0))
    if all(len(row) == width and all(type(v) in (int, float) for v in row) for row in rows):
        try:  # a results file's: numbers, rows of one length
            cells = np.array(rows, np.float64)
        except OverflowError:  # an integer too large for a float: cell by cell
            pass
        else:
            cells[~np.isfinite(cells) | (cells < 0)] = TOP
            return cells
    return np.array([[_value(v) for v in row] + [0.0] * (width - len(row)) for row in rows])


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _shape(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def elements(shape: list[Any]) -> int | None:
    """How many elements a shape holds; None where it is not a list of counts."""
    sizes = [_count(s) for s in shape]
    return math.prod(s for s in sizes if s is not None) if None not in sizes else None


def legend(scale: str) -> list[tuple[str, str]]:
    """The colours of a heat map's scale, each with what it means: (label, CSS colour)."""
    keys = ([("0: the strict value", 0.0), ("inside the bound", 0.5), ("1: on the bound", 1.0),
             ("outside", 2.0), (f"{TOP:g} x the bound or more, or no number", TOP)]
            if scale == "bound" else [("acceptable", 0.0), ("not acceptable", 1.0)])
    return [(label, "rgb({}, {}, {})".format(*colour(v, scale))) for label, v in keys]


def picture(h: Any) -> dict[str, Any] | None:
    """What the template draws of a heat map: "tensor", "shape", "src" (a data: URL of its
    PNG), "width" and "height" on the page (SIDE and LEAST), "rows" and "cols" (of cells),
    "scale", the "caption" and the "legend"; None for one with no cells (a damaged file's)."""
    if not isinstance(h, dict):
        return None
    cells = cells_of(h)
    if not cells.size:
        return None
    scale = "bound" if h.get("scale") == "bound" else "mismatch"
    rows, cols = cells.shape
    side = min(max(SIDE // max(rows, cols), 4), 24)

    def longer(n: int) -> int:  # a cell's length across n cells: 1 to 3 times `side`
        return min(3, 24 // side, max(1, math.ceil(LEAST / (n * side))))

    across, down = longer(cols), longer(rows)
    data = png(colours(cells, scale).repeat(down, axis=0).repeat(across, axis=1))
    shape = _shape(h.get("shape"))
    return {"tensor": h.get("tensor", ""), "shape": shape, "scale": scale,
            "src": "data:image/png;base64," + base64.b64encode(data).decode("ascii"),
            "width": cols * across * side, "height": rows * down * side, "rows": rows,
            "cols": cols, "caption": caption(h, scale, shape), "legend": legend(scale)}


def caption(h: dict[str, Any], scale: str, shape: list[Any]) -> str:
    """What a heat map shows, in words: "|error| / bound, the largest 5.2; 120 of 320
    elements outside the bound; rows: every index but the last, columns: the last; each cell
    the largest of 1 x 5 elements"."""
    n, bad = elements(shape), _count(h.get("bad"))
    of = f" of {n:,}" if n is not None else ""
    largest = _finite(h.get("largest"))
    if scale == "bound":
        words = "|error| / bound (above 1: outside it)"
        if largest is not None:
            words += f", the largest {largest:g}" + (" or more" if largest >= TOP else "")
        if bad is not None:
            words += f"; {bad:,}{of} elements outside the bound"
    else:
        words = "the elements that are not acceptable"
        if bad is not None:
            words += f": {bad:,}{of}"
    words += ("; rows: every index but the last, columns: the last" if len(shape) > 1
              else "")
    block = h.get("block")
    if (isinstance(block, list) and len(block) == 2 and all(map(_count, block))
            and block != [1, 1]):
        words += f"; each cell the largest of {block[0]} x {block[1]} elements"
    return words


def grid_notes(r_grids: Any, heat_maps: Any) -> list[str]:
    """Why each tensor's grid that a result left out is missing (a grid holds a small tensor
    whole): "OutputTensor [1, 1, 16, 20]: grid left out: 320 elements (a grid holds 256 at
    most); the heat map shows where the errors lie" (the heat map's clause where the result
    has one of that tensor)."""
    drawn = {str(h.get("tensor")) for h in heat_maps or [] if isinstance(h, dict)}
    notes = []
    for g in r_grids or []:
        left = g.get("left_out") if isinstance(g, dict) else None
        if not isinstance(left, dict):
            continue
        n, limit = _count(left.get("elements")), _count(left.get("limit"))
        shape = ", ".join(map(str, _shape(g.get("shape"))))
        why = f"{n:,} elements" if n is not None else "too large"
        if limit is not None:
            why += f" (a grid holds {limit:,} at most)"
        heat = ("; the heat map shows where the errors lie" if str(g.get("tensor")) in drawn
                else "")
        notes.append(f"{g.get('tensor', '')} [{shape}]: grid left out: {why}{heat}")
    return notes
