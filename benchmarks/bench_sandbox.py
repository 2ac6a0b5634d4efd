"""What the sandbox costs (issue 24): per worker start and per case.

Each launch runs, side by side and in alternating order, the same `dmlconf run` with
`--sandbox` and with `--no-sandbox` (the baseline, measured in the same launch):

- **worker start**: the documented cases with `--cases-per-worker 1` (a fresh worker, in a
  fresh sandbox, for every case); the cost of a start is the difference of the wall times over
  the number of cases;
- **per case**: the whole committed suite on one isolated worker; the cost of a case is the
  difference of the running times (the results' duration_s) over the number of cases.

Reported: the median and min-max over the launches of those costs and of the ratios.

    python benchmarks/bench_sandbox.py --launches 5 --json benchmarks/sandbox.json
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_harness import spread
from bench_workers import ROOT, run_once

DOCUMENTED = str(ROOT / "cases" / "documented")
WORKLOADS = {
    "worker start": (["--cases", DOCUMENTED, "--cases-per-worker", "1", "--workers", "1"], 0),
    "per case": (["--workers", "1", "--isolate"], 1),
}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--backend", default="numpy")
    p.add_argument("--launches", type=int, default=5)
    p.add_argument("--json", help="write the rows here")
    args = p.parse_args()
    rows = {}
    for name, (options, field) in WORKLOADS.items():
        costs, ratios = [], []
        for launch in range(args.launches):
            order = ["--sandbox", "--no-sandbox"][:: 1 if launch % 2 else -1]
            got = {mode: run_once(args.backend, [*options, mode], []) for mode in order}
            cases = got["--sandbox"][2]
            with_, without = got["--sandbox"][field], got["--no-sandbox"][field]
            costs.append((with_ - without) / cases * 1000)
            ratios.append(with_ / without)
            print(f"{name} launch {launch + 1}: {with_:.2f} s sandboxed, {without:.2f} s not, "
                  f"{cases} cases", file=sys.stderr)
        ms, ratio = spread(costs), spread(ratios)
        rows[name] = {"ms": ms, "ratio": ratio, "launches": args.launches, "options": options}
        print(f"{name}: {ms['median']:+.1f} ms ({ms['min']:+.1f} .. {ms['max']:+.1f}), ratio "
              f"{ratio['median']:.3f} ({ratio['min']:.3f} .. {ratio['max']:.3f})")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
