"""The fixtures the tests share (tests/README.md). The paths, the stand-in backends and the
helpers that read a results document are in tests.support."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis.configuration import set_hypothesis_home_dir

from tests.support import Dmlconf, dmlconf_in


@pytest.fixture
def dmlconf(tmp_path: Path) -> Dmlconf:
    """dmlconf(*args, name="results.json"): `dmlconf run -q ARGS --json TMP_PATH/NAME` in this
    process (its --json wins), giving (exit status, the results document it wrote)."""
    return dmlconf_in(tmp_path)


@pytest.fixture
def hypothesis_home(tmp_path: Path) -> Iterator[None]:
    """Hypothesis keeps its files (a constants cache) under tmp_path, not the project's
    .hypothesis (the explorer itself uses no example database)."""
    set_hypothesis_home_dir(tmp_path / ".hypothesis")
    yield
    set_hypothesis_home_dir(None)


@pytest.fixture(scope="session", autouse=True)
def suite_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The suite's cache folder (parse cache, deep tier: casefile.cache.root()) is a temporary
    one for the whole test run, shared by its tests and the commands they start, never the
    user's ~/.cache."""
    import os

    folder = tmp_path_factory.mktemp("dmlconf-cache")
    before = os.environ.get("DMLCONF_CACHE")
    os.environ["DMLCONF_CACHE"] = str(folder)
    yield folder
    if before is None:
        os.environ.pop("DMLCONF_CACHE", None)
    else:
        os.environ["DMLCONF_CACHE"] = before
