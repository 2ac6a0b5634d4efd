"""The HTML report's heat maps (report/heat_map.py): each failing output's heat map drawn as an
inline PNG whose pixels are its cells' colours, a note wherever a grid is left out saying why,
hostile or damaged heat maps drawn safely; and a real run's large failing outputs shown so."""

from __future__ import annotations

import base64
import re
import struct
import zlib
from pathlib import Path

import numpy as np
import pytest

from conformance import report
from conformance.report import heat_map as pictures
from conformance.report import html as html_report
from tests.support import DOCUMENTED, SUPPORT, Dmlconf
from tests.support.documents import (
    LARGE_ID,
    LARGE_WRONG,
    PAYLOADS,
    document,
    large_failure,
    mixed_document,
    typed,
)

NOTE = ("OutputTensor [1, 1, 16, 20]: grid left out: 320 elements (a grid holds 256 at most); "
        "the heat map shows where the errors lie")


def decode_png(src: str) -> np.ndarray:
    """The pixels (height x width x 3) of the report's data: URL of an RGB PNG, filter 0 on
    every row (as report.heat_map.png writes it)."""
    data = base64.b64decode(src.removeprefix("data:image/png;base64,"))
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    idat = data.index(b"IDAT")
    size = struct.unpack(">I", data[idat - 4:idat])[0]
    raw = np.frombuffer(zlib.decompress(data[idat + 4:idat + 4 + size]), np.uint8)
    rows = raw.reshape(height, 1 + width * 3)
    assert not rows[:, 0].any()
    return rows[:, 1:].reshape(height, width, 3)


def test_a_heat_map_is_a_png_of_its_cells_colours() -> None:
    h = large_failure()["heat_maps"][0]
    p = pictures.picture(h)
    assert p is not None and p["rows"] == 16 and p["cols"] == 20
    pixels = decode_png(p["src"])
    assert pixels.shape[0] % 16 == 0 and pixels.shape[1] % 20 == 0
    down, across = pixels.shape[0] // 16, pixels.shape[1] // 20
    cells = pixels[::down, ::across]
    for i, row in enumerate(h["cells"]):
        for j, v in enumerate(row):
            assert tuple(cells[i, j]) == pictures.colour(v, "bound"), (i, j, v)
    # one cell beyond the bound, in red; the others inside it, none white but exact zeros
    wrong = LARGE_WRONG[2:]
    assert tuple(cells[wrong]) == pictures.colour(2.5, "bound")
    assert pictures.colour(2.5, "bound")[0] > 150 > pictures.colour(2.5, "bound")[1]
    assert p["width"] / p["height"] == pytest.approx(20 / 16)
    assert "1 of 320 elements outside the bound" in p["caption"]
    assert "the largest 2.5" in p["caption"]
    assert [label for label, _ in p["legend"]][:3] == [
        "0: the strict value", "inside the bound", "1: on the bound"]


def test_the_colours_tell_inside_from_outside_the_bound() -> None:
    assert pictures.colour(0, "bound") == pictures.ZERO == pictures.colour(0, "mismatch")
    assert pictures.colour(1, "mismatch") == pictures.WRONG
    assert pictures.colour(1.0, "bound") == pictures.INSIDE_HIGH
    assert pictures.colour(1.01, "bound") != pictures.colour(1.0, "bound")
    assert pictures.colour(pictures.TOP, "bound") == pictures.OUTSIDE_HIGH
    assert pictures.colour(1e9, "bound") == pictures.OUTSIDE_HIGH


def test_a_narrow_map_is_drawn_with_longer_cells_and_a_large_one_stays_bounded() -> None:
    strip = {"tensor": "t", "shape": [1, 300], "scale": "mismatch", "block": [1, 5],
             "cells": [[0, 1] * 30]}
    p = pictures.picture(strip)
    assert p is not None and p["width"] == 60 * 6 and p["height"] == 18
    assert decode_png(p["src"]).shape[:2] == (3, 60)  # 1 row, 3 pixels high
    tall = {"scale": "bound", "cells": [[0.5] * 6] * 48}
    p = pictures.picture(tall)
    assert p is not None and (p["width"], p["height"]) == (6 * 24, 48 * 8)
    huge = {"scale": "bound", "cells": [[0.5] * 1000] * 1000}  # not this suite's: cut
    p = pictures.picture(huge)
    assert p is not None and p["rows"] == p["cols"] == pictures.MOST
    assert p["width"] == 4 * pictures.MOST  # 4 px a cell at least; the page scales it down


def test_a_grid_left_out_says_why() -> None:
    r = large_failure()
    assert pictures.grid_notes(r["grids"], r["heat_maps"]) == [NOTE]
    assert pictures.grid_notes(r["grids"], []) == [NOTE.split("; the heat map")[0]]
    assert pictures.grid_notes([{"tensor": "x", "shape": "?", "left_out": {}}], None) == [
        "x []: grid left out: too large"]
    assert pictures.grid_notes(None, None) == []


def test_the_report_shows_a_large_failures_heat_map_and_note() -> None:
    doc = document([*mixed_document()["results"], large_failure()])
    text = report.render_html(typed(doc))
    row = re.search(r'<details class="case"[^>]*data-id="' + LARGE_ID + '".*?</details>',
                    text, re.S).group(0)
    assert row.count('<figure class="heat-map"') == 1
    assert '<img src="data:image/png;base64,' in row
    assert f'<p class="grid-note">{NOTE}</p>' in row
    assert row.count('<table class="grid">') == 1  # the small input, whole
    assert "Heat map of <span class=\"mono\">OutputTensor [1, 1, 16, 20]</span>" in row
    # the other rows have none
    assert text.count('<figure class="heat-map"') == 1


@pytest.mark.parametrize("cells", [
    [["<script>", None, True, -1, float("nan")]], "<b>x</b>", [], [[]], [PAYLOADS, [1]],
    [[10 ** 400, 1]], [[0.5, 2], [1]]])
def test_damaged_or_hostile_heat_maps_are_drawn_safely(cells: object) -> None:
    h = {"tensor": PAYLOADS[0], "shape": [PAYLOADS[1]], "scale": PAYLOADS[2], "cells": cells,
         "block": PAYLOADS[3], "bad": PAYLOADS[4], "largest": PAYLOADS[5]}
    assert "largest" not in pictures.caption({**h, "largest": 10 ** 400}, "bound", [])
    r = {**large_failure(), "heat_maps": [h, PAYLOADS[0], None],
         "grids": [{"tensor": PAYLOADS[0], "shape": [1], "left_out": PAYLOADS[1]}]}
    text = report.render_html(typed(document([r])))
    assert "<script>window" not in text and "<img src=x" not in text
    drawn = pictures.picture(h)
    if drawn is not None:  # a value that is no number is drawn as the worst
        assert drawn["scale"] == "mismatch"
        assert tuple(decode_png(drawn["src"])[0, 0]) == pictures.colour(pictures.TOP, "x")
    assert html_report.render_html(typed(document([r]))) == text


def test_a_real_runs_large_failing_outputs_get_heat_maps_and_notes(
        tmp_path: Path, dmlconf: Dmlconf) -> None:
    """RESAMPLE with the input offsets ignored: a failing relation between two 288-element
    outputs (too many for a grid) shows a heat map each and says why its grid is left out."""
    page = tmp_path / "r.html"
    code, doc = dmlconf("--cases", str(DOCUMENTED), "-k", "remark-linear-equals-resample1",
                        "--backend", f"{SUPPORT / 'family_backends.py'}:IgnoresInputOffsetBackend",
                        "--html", str(page))
    assert code == 1
    (r,) = doc["results"]
    assert [h["tensor"] for h in r["heat_maps"]] == [
        "resample1.OutputTensor", "resample2.OutputTensor == resample1.OutputTensor"]
    assert all(h["shape"] == [3, 2, 8, 6] and h["scale"] == "bound" for h in r["heat_maps"])
    text = page.read_text()
    assert text.count('<figure class="heat-map"') == 2
    assert ("resample1.OutputTensor [3, 2, 8, 6]: grid left out: 288 elements (a grid holds "
            "256 at most); the heat map shows where the errors lie") in text
    assert 'id="outcome" data-exit="1">FAIL: 1 case failed (FAIL 1) — exit 1</p>' in text
    assert "<h1>DirectML conformance: family-ignores-input-offset at" in text
