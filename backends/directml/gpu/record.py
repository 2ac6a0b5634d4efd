"""docs/directml-gpu.md from results files: real DirectML on a GPU beside the same build on
lavapipe, case by case (issue 22). The results files live in docs/gpu/ as
`<stack>-<backend>.json.xz` (stack: `lavapipe` or the GPU's, e.g. `nvidia-h200`), with
`<stack>.txt` holding what the machine said of itself (nvidia-smi's name and driver).

    python -m backends.directml.gpu.record [--records docs/gpu] [--out docs/directml-gpu.md]

Each GPU run is compared with the lavapipe run of the same backend: the statuses side by side,
every case whose status differs (grouped by the case family, with an example), the FAILs on both
whose values differ, and for each cause of the baseline where it reproduces. A FAIL or XFAIL is
compared by its message, the wrong values included, with the baseline's words taken off.
"""

from __future__ import annotations

import argparse
import json
import lzma
import re
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from conformance.results import Result, ResultsDocument, Status

HERE = Path(__file__).resolve().parents[3]
RECORDS = HERE / "docs" / "gpu"
OUT = HERE / "docs" / "directml-gpu.md"
#: The statuses in the order of the summary table.
STATUSES = (Status.PASS, Status.QUALITY_WARNING, Status.FAIL, Status.XFAIL, Status.XPASS,
            Status.ERROR, Status.TIMEOUT, Status.NOT_SUPPORTED)
_EXPECTED = re.compile(r"^(expected|waived) (FAIL|ERROR|TIMEOUT) \(", re.S)


def load(path: Path) -> ResultsDocument:
    with lzma.open(path, "rt", encoding="utf-8") as f:
        return ResultsDocument.from_json(json.load(f))


def family(case_id: str) -> str:
    return "/".join(case_id.split("/")[:3])


def reasons(doc: ResultsDocument) -> list[str]:
    """The reasons of the baseline a run was judged with, longest first (a reason may hold
    "): " itself, so the message is split where a whole reason ends)."""
    from conformance.results import baseline

    path = HERE / ((doc.baseline.path if doc.baseline else None) or "-")
    if not path.is_file():
        return []
    return sorted({e.reason for e in baseline.load(path).entries}, key=len, reverse=True)


def underlying(result: Result, known: Sequence[str] = ()) -> tuple[str, str, str]:
    """(status before the baseline, the message without the baseline's words, the cause);
    known: the baseline's reasons (reasons()), else the reason ends at the first "): "."""
    status, message = result.status, result.message or ""
    found = _EXPECTED.match(message)
    if status != Status.XFAIL or not found:
        return status, message, ""
    reason = next((r for r in known if message.startswith(r + "): ", found.end())),
                  message[found.end():].split("): ", 1)[0])
    rest = message[found.end() + len(reason) + len("): "):]
    return found.group(2), rest, reason.split(";")[0]


def compare(base: ResultsDocument, gpu: ResultsDocument) -> list[str]:
    """The markdown comparing one backend's lavapipe run (base) with its GPU run."""
    b = {r.id: r for r in base.results}
    g = {r.id: r for r in gpu.results}
    lines = []
    moved: Counter[tuple[str, str, str]] = Counter()
    example: dict[tuple[str, str, str], str] = {}
    values = []
    causes: dict[str, Counter[str]] = {}
    known_b, known_g = reasons(base), reasons(gpu)
    both = sorted(b.keys() & g.keys())
    same = 0
    for case_id in both:
        sb, mb, cause_b = underlying(b[case_id], known_b)
        sg, mg, cause_g = underlying(g[case_id], known_g)
        for cause, where in ((cause_b, "lavapipe"), (cause_g, "GPU")):
            if cause:
                causes.setdefault(cause, Counter())[where] += 1
        same += sb == sg
        if sb != sg:
            key = (family(case_id), sb, sg)
            moved[key] += 1
            example.setdefault(key, case_id)
        elif sb == Status.FAIL and mb != mg:
            values.append(case_id)
    lines.append(f"Same status on {same:,} of {len(both):,} cases.")
    lines.append("")
    if moved:
        lines += ["| family | lavapipe | GPU | cases | example |", "|---|---|---|---|---|"]
        for (fam, sb, sg), n in sorted(moved.items()):
            lines.append(f"| `{fam}` | {sb} | {sg} | {n} | `{example[(fam, sb, sg)]}` |")
        lines.append("")
    lines.append(f"FAIL on both with other values (the GPU's arithmetic, or another wrong "
                 f"element): {len(values):,}" + (f", e.g. `{values[0]}`." if values else "."))
    lines.append("")
    if causes:
        lines += ["| baseline cause | XFAIL on lavapipe | XFAIL on the GPU |", "|---|---|---|"]
        for cause, counts in sorted(causes.items()):
            lines.append(f"| {cause} | {counts['lavapipe']} | {counts['GPU']} |")
        lines.append("")
    return lines


def summary_row(name: str, doc: ResultsDocument) -> str:
    s = doc.summary
    cells = " | ".join(f"{s.get(k, 0):,}" for k in STATUSES)
    return f"| {name} | {cells} | {doc.duration_s:.0f} s |"


def build(records: Path) -> str:
    runs: dict[str, dict[str, Path]] = {}
    for path in sorted(records.glob("*.json.xz")):
        stack, _, backend = path.name[:-len(".json.xz")].partition("-directml")
        runs.setdefault("directml" + backend, {})[stack] = path
    out = ["# Real DirectML on a GPU, beside lavapipe",
           "",
           "GENERATED by `python -m backends.directml.gpu.record` from the results files in",
           "docs/gpu/ (issue 22). How the runs were made: `backends/directml/gpu/run.sh` (the",
           "runtimes built on the project's machine kind, carried to the GPU machine, registered",
           "there on NVIDIA's Vulkan driver with `dmlconf directml register`, the whole",
           "committed suite with the committed baseline). docs/directml-linux.md says what the",
           "findings are.",
           ""]
    for txt in sorted(records.glob("*.txt")):
        out.append(f"- `{txt.stem}`: {txt.read_text(encoding='utf-8').strip()}")
    out.append("")
    for backend, stacks in sorted(runs.items()):
        docs = {stack: load(path) for stack, path in stacks.items()}
        out += [f"## `{backend}`", ""]
        for stack, doc in docs.items():
            env = doc.backend.get("environment") or {}
            out.append(f"- {stack}: DirectML {env.get('directml_version', '?')}; "
                       f"{env.get('adapter', '?')}; {env.get('driver', '?')}")
        out += ["", "| run | " + " | ".join(STATUSES) + " | time |",
                "|---|" + "---|" * (len(STATUSES) + 1)]
        out += [summary_row(stack, doc) for stack, doc in docs.items()]
        out.append("")
        base = docs.get("lavapipe")
        for stack, doc in docs.items():
            if stack != "lavapipe" and base is not None:
                out += [f"### {stack} against lavapipe", "", *compare(base, doc)]
    return "\n".join(out).rstrip() + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m backends.directml.gpu.record",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", default=str(RECORDS))
    parser.add_argument("--out", default=str(OUT))
    args = parser.parse_args(argv)
    text = build(Path(args.records))
    Path(args.out).write_text(text, encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
