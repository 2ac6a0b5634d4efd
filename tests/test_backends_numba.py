"""The Numba backend: certified on the whole committed suite, writes only logical elements, and
its kernels are cached on disk for the next process."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("numba")

from conformance.backend import load_backend
from conformance.casefile import load_cases
from conformance.results import exit_status
from conformance.session.runner import run_cases

ROOT = Path(__file__).resolve().parent.parent


def test_the_whole_committed_suite_passes_on_numba() -> None:
    cases = load_cases([ROOT / "cases"])
    results = run_cases(cases, load_backend("numba"))
    bad = [(r.id, r.status, r.message[:200]) for r in results if r.status != "PASS"]
    assert bad == []
    assert exit_status(results) == 0
    # Only logical elements are written: no padding byte of any output changed.
    assert not [r.id for r in results if any("padding" in i for i in r.info)]


CHILD = """
import sys
from conformance.backend import load_backend
from backends import numba_kernels as k
from conformance.casefile import load_cases
from conformance.session.runner import run_cases
cases = load_cases([sys.argv[1]])
assert all(r.status == "PASS" for r in run_cases(cases, load_backend("numba")))
from numba.core.registry import CPUDispatcher
kernels = [f for f in vars(k).values() if isinstance(f, CPUDispatcher)]
hits = sum(sum(f.stats.cache_hits.values()) for f in kernels)
misses = sum(sum(f.stats.cache_misses.values()) for f in kernels)
print(hits, misses)
"""


def test_a_second_process_loads_the_compiled_kernels_from_disk(tmp_path: Path) -> None:
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache")}
    cases = str(ROOT / "cases" / "generated" / "large")

    def child() -> tuple[int, int]:
        out = subprocess.run([sys.executable, "-c", CHILD, cases], env=env, cwd=ROOT,
                             capture_output=True, text=True, check=True).stdout
        hits, misses = out.split()
        return int(hits), int(misses)

    hits, misses = child()
    assert misses > 0 and hits == 0  # the first process compiles and stores
    assert any((tmp_path / "cache").rglob("*.nbi"))
    hits, misses = child()
    assert hits > 0 and misses == 0  # the second one only loads
