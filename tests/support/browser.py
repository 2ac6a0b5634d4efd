"""The system Chromium driven by Playwright, headless, no network, for the browser tests of the
HTML faces (the report, the matrix): `launch()` skips the calling module (with the reason) when
/usr/bin/chromium or the playwright package is missing; Playwright's own browser download is
never used."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]


def launch() -> Iterator[Any]:
    """A browser for a module-scoped fixture (`yield from launch()`), or the module skipped."""
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} is missing (apt-get install -y chromium)")
    sync_api = pytest.importorskip("playwright.sync_api",
                                   reason="playwright is missing (pip install playwright)")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        yield b
        b.close()
