"""The fixtures the tests share (tests/README.md). The paths, the stand-in backends and the
helpers that read a results document are in tests.support."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis.configuration import set_hypothesis_home_dir

from tests.support import Dmlconf, dmlconf_in

HERE = Path(__file__).resolve().parent

#: The unit tier (`python -m pytest -m unit`): the files of pure functions and small fixtures
#: (their paths under tests/, without .py), an engineer's loop between edits (well under a
#: minute on the 2-core machine kind). Every other test of the default run is the integration
#: tier (`-m integration`: whole runs, processes, backends, generation); `certification` marks
#: the whole-suite tier, CI's own step. A slow test in a unit file is marked `integration` where
#: it is defined.
UNIT = frozenset({
    "architecture/test_architecture_layers", "architecture/test_architecture_operators",
    "backends/test_backend_claims", "backends/test_backend_registry",
    "casefile/test_casefile_cache", "casefile/test_casefile_hostile",
    "casefile/test_casefile_loader", "certify/test_verify_caps",
    "docs/test_docs_ci_example", "docs/test_docs_readme",
    "docs/test_packaging", "judge/test_judge_diagnose", "judge/test_judge_envelope",
    "judge/test_judge_heat_map",
    "ops/test_ops_reference", "ops/test_ops_resample2", "ops/test_ops_resample3",
    "ops/test_ops_validation", "ops/test_tensors", "report/test_report",
    "report/test_report_headline",
    "results/test_results_baseline", "results/test_results_io", "results/test_results_reproduce",
    "results/test_results_sanitise", "session/test_flags", "session/test_session_journal_lock",
    "session/test_session_case_run",
})


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """`-m unit` does not import the other test files (torch, onnxruntime, Numba, the
    backends' fixtures): only UNIT's files can hold unit tests."""
    if config.option.markexpr != "unit" or collection_path.suffix != ".py" or (
            not collection_path.name.startswith("test_")):
        return None
    path = collection_path.resolve()
    if not path.is_relative_to(HERE):
        return None
    return True if path.relative_to(HERE).with_suffix("").as_posix() not in UNIT else None


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Each test of the default run gets its tier: unit or integration."""
    for item in items:
        if item.get_closest_marker("certification") or item.get_closest_marker("integration"):
            continue
        where = item.path.relative_to(HERE).with_suffix("").as_posix()
        item.add_marker("unit" if where in UNIT else "integration")


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
    user's ~/.cache. Under pytest-xdist the workers share one (the cache writes each entry
    atomically), so the committed case files are parsed once per run, not once per worker."""
    import os

    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):  # base is <the run's basetemp>/popen-gwN
        base = base.parent
    folder = base / "dmlconf-cache"
    folder.mkdir(exist_ok=True)
    before = os.environ.get("DMLCONF_CACHE")
    os.environ["DMLCONF_CACHE"] = str(folder)
    yield folder
    if before is None:
        os.environ.pop("DMLCONF_CACHE", None)
    else:
        os.environ["DMLCONF_CACHE"] = before


@pytest.fixture(scope="session", autouse=True)
def certify_anywhere() -> Iterator[None]:
    """Where the sandbox cannot be made (bubblewrap missing on a developer's machine), the tests'
    certifications run without it, as the recorded override lets them
    (docs/robustness.md, "The sandbox"); tests/session/test_session_sandbox.py checks the
    refusal itself."""
    import os

    from conformance.session import sandbox

    if isinstance(sandbox.find(), sandbox.Unavailable) and \
            "DMLCONF_CERTIFY_WITHOUT_SANDBOX" not in os.environ:
        os.environ["DMLCONF_CERTIFY_WITHOUT_SANDBOX"] = "1"
        yield
        os.environ.pop("DMLCONF_CERTIFY_WITHOUT_SANDBOX", None)
    else:
        yield
