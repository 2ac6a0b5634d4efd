"""The benchmark starts and produces its table on a tiny size (a smoke test, not a timing)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.casefile import load_cases
from tests.support import DOCUMENTED, ROOT


#: The table with the NumPy backend in the default run; with Numba too (a JIT compile of every
#: workload's kernels with a clean clone's empty cache, ~10 s) in CI's certification step.
@pytest.mark.parametrize("backends", [
    ("numpy",), pytest.param(("numpy", "numba"), marks=pytest.mark.certification)],
    ids=["numpy", "numpy+numba"])
def test_the_benchmark_runs_and_writes_its_table(tmp_path: Path,
                                                 backends: tuple[str, ...]) -> None:
    out = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "bench.py"), "--tiny", "--repeats", "2",
         *[arg for name in backends for arg in ("--backend", name)],
         "--md", str(tmp_path / "t.md"), "--json", str(tmp_path / "rows.json")],
        capture_output=True, text=True, check=True, timeout=600).stdout
    assert "| workload | implementation | GB/s |" in out
    rows = json.loads((tmp_path / "rows.json").read_text())
    workloads = {r["workload"] for r in rows}
    assert {"DEPTH_TO_SPACE1 DCR", "SPACE_TO_DEPTH1 CRD", "RESAMPLE1 linear",
            "RESAMPLE1 nearest_neighbor", "DEPTH_TO_SPACE1 DCR, NHWC input"} <= workloads
    for w in workloads:
        mine = {r["implementation"]: r for r in rows if r["workload"] == w}
        copies = {k: r for k, r in mine.items() if r["kind"] == "baseline"}
        assert set(copies) == {"copy, np.copyto", "copy, 1 MiB pieces", "copy, 2 threads"}
        assert {f"{name} backend" for name in backends} <= set(mine)
        # the limit is the fastest copy of the run, named in every row of the workload
        best = max(copies.values(), key=lambda r: r["median"])
        assert {r["best_copy"] for r in mine.values()} == {best["implementation"]}
        assert best["vs_copy"] == 1.0 and all(r["vs_copy"] <= 1.0 for r in copies.values())
        for r in mine.values():
            assert r["median"] > 0 and r["min"] <= r["median"] <= r["max"]
    assert (tmp_path / "t.md").read_text().count("\n| ") == len(rows) + 1


def test_launches_are_summarised_with_their_spread(tmp_path: Path) -> None:
    """--launches runs fresh processes and reports, per row, the median and min-max over them
    of the launch medians and of the within-launch ratio to the best copy."""
    subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "bench.py"), "--tiny", "--repeats", "2",
         "--launches", "2", "--backend", "numba", "--no-peers", "-k", "NHWC",
         "--json", str(tmp_path / "rows.json")],
        capture_output=True, text=True, check=True, timeout=600)
    rows = json.loads((tmp_path / "rows.json").read_text())
    assert {r["workload"] for r in rows} == {"DEPTH_TO_SPACE1 DCR, NHWC input"}
    for r in rows:
        assert r["launches"] == 2
        assert r["min"] <= r["median"] <= r["max"]
        assert r["vs_copy_min"] <= r["vs_copy"] <= r["vs_copy_max"]
        assert sum(int(part.split()[-1].split("/")[0])
                   for part in r["best_copy"].split("; ")) == 2


def test_the_workers_benchmark_runs_and_writes_its_table(tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "bench_workers.py"), "--repeats", "1",
         "--cases", str(DOCUMENTED), "--json", str(tmp_path / "w.json")],
        capture_output=True, text=True, check=True, timeout=600).stdout
    assert "| backend | mode | cases | wall s |" in out
    rows = json.loads((tmp_path / "w.json").read_text())
    modes = [r["mode"] for r in rows]
    assert modes[:3] == ["in-process (baseline)", "1 isolated worker", "2 workers"]
    base = rows[0]
    assert base["speedup_wall"] == base["speedup_running"] == 1.0
    for r in rows:
        assert r["cases"] == len(load_cases([ROOT / "cases" / "documented"]))
        assert r["wall_s"] > r["running_s"] > 0
        assert r["speedup_wall"] > 0 and r["speedup_running"] > 0
