"""Where a `dmlconf run` spends its time (issue 16, "a lean harness"): launches the command as
separate processes, process start included, N times per configuration, with cold caches
(a fresh DMLCONF_CACHE folder per launch: the parse cache and the expectations cache empty), warm
ones (filled by a first launch that is not counted), and warm with the expectations cache off
(DMLCONF_EXPECTED_CACHE=off: the judge computes every reference, as before that cache), and
reports the median and min-max of

  wall      the process, start to exit
  loading   Session.select(): finding, reading (or the parse cache), checking, building
            (the execution record's load_s, written with DMLCONF_TIMINGS set)
  running   Session.run() (the results document's duration_s)
  cpu       the CPU seconds (user and system) of the command and every process it started
            (on a shared machine the steadier figure: wall time stretches with the others' load)
  execute   the summed time inside the backend's execute(), in every process that runs cases
            (a sitecustomize put on PYTHONPATH for the launches only wraps the backend class's
            execute with a timer; the results are not changed)

and the ratios the issue sets targets for: loading / wall (at most 15%) and wall / execute
(at most 2x). Usage:

  python benchmarks/bench_harness.py --runs 5 [--backend numpy] [-k tables] [--json out.json]
  python benchmarks/bench_harness.py --runs 5 --tier deep --backend numba   # the deep tier only

--tier deep times `dmlconf run --tier deep` (the default execution) with warm caches only (the
deep tier's generated files, the parse and expectations caches; numba's JIT cache is the
backend's own, warm after the first launch).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from conformance import results

ROOT = Path(__file__).resolve().parent.parent

#: Wraps the benchmarked backend's execute() with a timer in every process of the run; at exit
#: each process appends its sum (seconds) to $DMLCONF_BENCH_EXECUTE_LOG.
SITECUSTOMIZE = '''
import atexit, os, time
_log = os.environ.get("DMLCONF_BENCH_EXECUTE_LOG")
if _log:
    from conformance.backend import backend_class
    _cls = backend_class(os.environ["DMLCONF_BENCH_BACKEND"])
    _real = _cls.execute
    _spent = [0.0]

    def execute(self, *args, **kwargs):
        t0 = time.perf_counter()
        try:
            return _real(self, *args, **kwargs)
        finally:
            _spent[0] += time.perf_counter() - t0

    _cls.execute = execute

    @atexit.register
    def _report():
        if _spent[0]:
            with open(_log, "a") as f:
                f.write(f"{_spent[0]!r}\\n")
'''


def launch(args: list[str], cache: Path, backend: str, work: Path, expected: bool = True
           ) -> dict[str, float]:
    """One `dmlconf run ARGS` in a process of its own: its figures. expected: False turns the
    expectations cache off (DMLCONF_EXPECTED_CACHE=off)."""
    out, log = work / "results.json", work / "execute.log"
    log.unlink(missing_ok=True)
    # Bytecode as an installed package has it (pip compiles it): with PYTHONDONTWRITEBYTECODE
    # set (this machine sets it) every process of a run compiled the suite's modules afresh,
    # 0.3 s of CPU each, five processes in an isolated run.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env = {**env, "DMLCONF_CACHE": str(cache), "DMLCONF_TIMINGS": "1",
           "DMLCONF_EXPECTED_CACHE": "on" if expected else "off",
           "DMLCONF_BENCH_EXECUTE_LOG": str(log), "DMLCONF_BENCH_BACKEND": backend,
           "PYTHONPATH": os.pathsep.join([str(work / "site"), str(ROOT),
                                          os.environ.get("PYTHONPATH", "")])}
    command = [sys.executable, "-m", "dmlconf", "run", "-q", "--backend", backend, *args,
               "--json", str(out)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    if done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(command)} exited {done.returncode}:\n{done.stderr}")
    doc = results.read(out)
    execute = sum(float(x) for x in log.read_text().split()) if log.exists() else float("nan")
    # load_s: not a field of the format (the execution's `extra`), written with DMLCONF_TIMINGS
    loading = doc.execution.extra.get("load_s", "nan") if doc.execution else "nan"
    return {"wall_s": wall, "loading_s": float(loading),
            "running_s": float(doc.duration_s), "execute_s": execute,
            "cpu_s": cpu, "cases": float(len(doc.results))}


def spread(values: list[float]) -> dict[str, float]:
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def measure(args: list[str], runs: int, warm: bool, backend: str, work: Path,
            expected: bool = True) -> dict[str, Any]:
    """runs launches of one configuration: each figure's spread, and the ratios per launch."""
    rows = []
    warm_cache = work / "warm-cache"
    if warm:
        launch(args, warm_cache, backend, work)  # fills the caches; not counted
    for i in range(runs):
        cache = warm_cache if warm else work / f"cold-cache-{len(args)}-{i}"
        row = launch(args, cache, backend, work, expected)
        row["loading_share"] = row["loading_s"] / row["wall_s"]
        row["wall_per_execute"] = row["wall_s"] / row["execute_s"]
        rows.append(row)
    return {key: spread([r[key] for r in rows]) for key in rows[0]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--backend", default="numpy")
    parser.add_argument("-k", action="append", default=[], help="also time a -k run")
    parser.add_argument("--tier", choices=("committed", "deep"), default="committed",
                        help="deep: time the deep tier alone, warm caches")
    parser.add_argument("--caches", default="cold,warm,off",
                        help="which of the committed suite's cache states to time, of "
                             "cold,warm,off (off: warm, the expectations cache off)")
    parser.add_argument("--json", help="write the figures here")
    given = parser.parse_args()
    if given.tier == "deep":
        configurations = [("--tier deep (the default execution)", ["--tier", "deep"])]
        modes = [("warm", True)]  # (the expectations cache off: the committed suite's table)
    else:
        configurations = [("in this process (--no-isolate)", ["--no-isolate"]),
                          ("isolated (the default)", [])]
        configurations += [(f"-k {k} (the default execution)", ["-k", k]) for k in given.k]
        named = {"cold": ("cold", True), "warm": ("warm", True),
                 "off": ("warm, expectations cache off", False)}
        modes = [named[m] for m in given.caches.split(",")]
    figures = []
    # the suite's bytecode, as an installed package has it (not a cache of the suite's own)
    subprocess.run([sys.executable, "-m", "compileall", "-q", *(str(ROOT / p) for p in (
        "conformance", "backends", "dmlconf"))], check=True)
    with tempfile.TemporaryDirectory(prefix="bench-harness-") as tmp:
        work = Path(tmp)
        (work / "site").mkdir()
        (work / "site" / "sitecustomize.py").write_text(SITECUSTOMIZE)
        for name, args in configurations:
            for mode, expected in modes:
                got = measure(args, given.runs, mode != "cold", given.backend, work, expected)
                figures.append({"run": name, "cache": mode, "args": args,
                                "launches": given.runs, **got})
    print(f"dmlconf run --backend {given.backend}: median (min-max) of {given.runs} launches")
    print(f"{'run':36} {'caches':28} {'cases':>5} {'wall s':>17} {'loading s':>17} "
          f"{'running s':>17} {'execute s':>17} {'cpu s':>17} {'load/wall':>9} {'wall/exec':>9}")
    for f in figures:
        def shown(key: str, f: dict[str, Any] = f) -> str:
            s = f[key]
            return f"{s['median']:.2f} ({s['min']:.2f}-{s['max']:.2f})"
        print(f"{f['run']:36} {f['cache']:28} {f['cases']['median']:5.0f} {shown('wall_s'):>17} "
              f"{shown('loading_s'):>17} {shown('running_s'):>17} {shown('execute_s'):>17} "
              f"{shown('cpu_s'):>17} "
              f"{f['loading_share']['median']:9.1%} {f['wall_per_execute']['median']:9.2f}")
    if given.json:
        Path(given.json).write_text(json.dumps(figures, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
