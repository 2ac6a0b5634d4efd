"""How much --workers speeds up a whole certification run (issue 7).

For each backend, runs `dmlconf run` over the whole suite in each execution mode, round-robin
for --repeats rounds after one warm-up run per backend (Numba's kernel cache, the OS's file
cache), and reports the medians: the command's wall time (start to exit: loading, worker
starts, running, writing) and the time running the cases (the results' duration_s). The
baseline, measured in the same rounds, is the serial in-process run (--no-isolate); the
speed-up is its median over the mode's.

    python benchmarks/bench_workers.py --backend numpy --backend numba --repeats 3 \\
        --json benchmarks/workers.json --md table.md
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from conformance import results

ROOT = Path(__file__).resolve().parent.parent


def modes(cpus: int) -> dict[str, list[str]]:
    out = {"in-process (baseline)": ["--no-isolate"],
           "1 isolated worker": ["--workers", "1", "--isolate"]}
    for n in sorted({2, cpus}):
        out[f"{n} workers"] = ["--workers", str(n)]
    return out


def run_once(backend: str, options: list[str], cases: list[str]) -> tuple[float, float, int]:
    """(wall seconds, running seconds, cases) of one dmlconf run."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "r.json"
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "conformance.cli", "run", "-q", "--backend",
                        backend, "--json", str(out), *cases, *options], cwd=ROOT,
                       check=False, capture_output=True)
        wall = time.perf_counter() - t0
        doc = results.read(out)
    return wall, float(doc.duration_s), len(doc.results)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--backend", action="append", help="(repeatable; default: numpy)")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--cases", action="append", default=[], help="as for dmlconf run")
    p.add_argument("--json", help="write the rows here")
    p.add_argument("--md", help="write the Markdown table here")
    args = p.parse_args()
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (
        os.cpu_count() or 1)
    cases = [w for c in args.cases for w in ("--cases", c)]
    rows = []
    for backend in args.backend or ["numpy"]:
        run_once(backend, ["--no-isolate"], cases)  # warm-up
        times: dict[str, list[tuple[float, float]]] = {m: [] for m in modes(cpus)}
        count = 0
        for _ in range(args.repeats):
            for mode, options in modes(cpus).items():
                wall, running, count = run_once(backend, options, cases)
                times[mode].append((wall, running))
                print(f"{backend:12} {mode:24} wall {wall:6.2f} s, running {running:6.2f} s",
                      file=sys.stderr)
        base_wall = statistics.median(w for w, _ in times["in-process (baseline)"])
        base_run = statistics.median(r for _, r in times["in-process (baseline)"])
        for mode, samples in times.items():
            wall = statistics.median(w for w, _ in samples)
            running = statistics.median(r for _, r in samples)
            rows.append({"backend": backend, "mode": mode, "cases": count, "cpus": cpus,
                         "wall_s": round(wall, 3), "running_s": round(running, 3),
                         "speedup_wall": round(base_wall / wall, 2),
                         "speedup_running": round(base_run / running, 2),
                         "wall_samples": [round(w, 2) for w, _ in samples]})
    table = ["| backend | mode | cases | wall s | running s | speed-up (wall) | "
             "speed-up (running) |", "|---|---|---|---|---|---|---|"]
    table += [f"| {r['backend']} | {r['mode']} | {r['cases']} | {r['wall_s']} | "
              f"{r['running_s']} | {r['speedup_wall']} | {r['speedup_running']} |"
              for r in rows]
    text = "\n".join(table) + "\n"
    print(text, end="")
    if args.md:
        Path(args.md).write_text(text)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
