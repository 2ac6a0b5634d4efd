"""The known findings of real DirectML on this stack, as a baseline (docs/baselines.md), so that
CI certifies the directml backends (DirectML.dll 1.15.4 under Wine, `directml`, and
torch-directml's libdirectml.so, `directml-linux`) on the whole committed suite and fails on
anything new.

Every mandatory FAIL of a run is classified by its cause (docs/directml-linux.md, spec-notes
§9); a FAIL with no known cause is refused, so the baseline cannot swallow a new finding. A run
is one results file of one backend (build, path) on one Vulkan driver; the file is made from all
the runs measured, so that one file serves both builds, their graph paths, lavapipe and a GPU.
Each entry is one finding (a cause) and the runs it fails on (`when:` directml_version, and the
vendor or backends where it was measured absent on another one), its cases as patterns that
match those cases only among the committed ones, so a new FAIL elsewhere still fails the run.
The entries are checked to give back each run's failures exactly.

    python -m backends.directml.baseline RESULTS.json... [--out PATH] [--cases PATH]...
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path
from typing import Any

from conformance import results
from conformance.casefile import Case, id_matches, load_cases
from conformance.results import Result, ResultsDocument, Status
from conformance.results import baseline as baselines

HERE = Path(__file__).resolve().parent
DEFAULT = HERE / "baseline-lavapipe.yaml"
DOC = "docs/directml-linux.md"

#: cause -> the reason written into its entries
CAUSES = {
    "nearest-8bit": "INT8/UINT8 nearest resampling picks floor(c), not the nearest element "
                    "(FLOAT32/FLOAT16 round halves up): DirectML's, its 8-bit path binds the "
                    "InputPixelOffset without the FLOAT32 path's - 0.5; "
                    "docs/findings/resample1-nearest-8bit.md",
    "linear-edges": "linear resampling with an InputPixelOffset outside [0, 1) takes "
                    "floor(v) - [frc(v) < offset] for floor(v - offset): the index one or two "
                    "low, the weight extrapolated; DirectML's shaders; "
                    "docs/findings/resample1-linear-offsets.md",
    "nan-quieting": "float16 signalling NaNs come back quiet (payload kept) through the graph "
                    "path's NHWC-strided DEPTH_TO_SPACE1 / SPACE_TO_DEPTH1: DirectML's graph "
                    "path copies them through a float-typed view (a format conversion, no raw "
                    "move), which lavapipe's conversion quiets and NVIDIA's keeps; "
                    "docs/findings/graph-float16-nan-quieting.md",
    "antialias": "RESAMPLE3's antialiased linear downscale (1/Scale > 2) runs a chain of 2-tap "
                 "linear passes, not the stretched filter (one-hot weights, steps of 0.2, "
                 "negative weights): DirectML's; docs/findings/resample3-antialias.md",
}


def cause(case: Case) -> str | None:
    """The known cause a FAIL of this case is, or None (a new finding). 8-bit nearest is the
    RESAMPLE / RESAMPLE1 finding only: RESAMPLE2's 8-bit floor and ceil are right (a FAIL there
    would be new), though a case comparing RESAMPLE1 with RESAMPLE2 inherits RESAMPLE1's.
    RESAMPLE3's antialiased linear downscale is its own finding; RESAMPLE3's other linear calls
    are RESAMPLE2's bit for bit on DirectML 1.15.4 (measured), so they share its linear one.
    The graph path's float16 NaN quieting shows on lavapipe only (the entries' `when:` says
    where)."""
    modes = {named.call.attributes.get("InterpolationMode") for named in case.calls} - {None}
    types = {d.data_type.name for named in case.calls for d in named.call.tensors.values()}
    operators = {named.call.operator for named in case.calls}
    if any(named.call.operator == "RESAMPLE3" and named.call.attributes.get("Antialiased")
           and named.call.attributes.get("InterpolationMode") == "LINEAR"
           and any(s < 0.5 for s in named.call.attributes.get("Scales", ()))
           for named in case.calls):
        return "antialias"
    if (modes == {"NEAREST_NEIGHBOR"} and types <= {"INT8", "UINT8"}
            and operators & {"RESAMPLE", "RESAMPLE1"}):
        return "nearest-8bit"
    if modes == {"LINEAR"}:
        return "linear-edges"
    if types == {"FLOAT16"} and operators <= {"DEPTH_TO_SPACE1", "SPACE_TO_DEPTH1"}:
        return "nan-quieting"
    return None


def exact(case_id: str, all_ids: Sequence[str]) -> str:
    """A pattern that matches this id and no other: the id itself where it is in no other id,
    else a glob with its last character in brackets (a glob must match the whole id)."""
    if not any(case_id in other for other in all_ids if other != case_id):
        return case_id
    return f"{case_id[:-1]}[{case_id[-1]}]"


def patterns(group: set[str], all_ids: Sequence[str]) -> list[str]:
    """Patterns (the -k syntax) that together match exactly the group's ids among all_ids: each
    id under the widest folder `a/b/*` whose every case is in the group (else the id exactly),
    then patterns that differ in one folder merged into one with `*` there wherever the merged
    pattern still matches only the group's ids."""
    under: Counter[str] = Counter()
    mine: Counter[str] = Counter()
    for counts, ids in ((under, all_ids), (mine, group)):
        for case_id in ids:
            parts = case_id.split("/")
            counts.update("/".join(parts[:k]) for k in range(1, len(parts)))
    chosen = set()
    for case_id in group:
        parts = case_id.split("/")
        folder = next((f for f in ("/".join(parts[:k]) for k in range(1, len(parts)))
                       if under[f] == mine[f]), None)
        chosen.add(f"{folder}/*" if folder else exact(case_id, all_ids))

    def only_group(pattern: str) -> bool:
        return all(i in group for i in all_ids if id_matches(i, pattern))

    merged = True
    while merged:
        merged = False
        buckets: dict[tuple[int, tuple[str, ...]], list[str]] = {}
        for pattern in sorted(chosen):
            parts = pattern.split("/")
            for j in range(len(parts) - 1):
                if parts[j] != "*":
                    buckets.setdefault((j, (*parts[:j], "*", *parts[j + 1:])), []).append(pattern)
        for (_, merged_parts), members in buckets.items():
            wider = "/".join(merged_parts)
            if len(members) > 1 and set(members) <= chosen and only_group(wider):
                chosen = (chosen - set(members)) | {wider}
                merged = True
    return sorted(chosen)


@dataclass(frozen=True, eq=False)  # one run is itself only: compared by identity
class Run:
    """One results file of a directml backend: the tags baseline entries match on, and the ids
    that failed (a mandatory FAIL, or an XFAIL of one) and passed there, and every id it ran."""
    backend: str
    environment: dict
    failing: frozenset[str]
    passing: frozenset[str]
    ran: frozenset[str] = frozenset()

    @cached_property
    def tags(self) -> dict[str, str]:
        return baselines.run_tags(self.backend, [], self.environment, os_name="Linux")

    @classmethod
    def of(cls, doc: ResultsDocument) -> Run:
        backend = doc.backend or {}
        environment = backend.get("environment") or {}
        if not environment.get("directml_version"):
            raise ValueError(f"a results file of backend {backend.get('name')!r} does not say "
                             "its directml_version: is it a directml run?")
        mandatory = [r for r in doc.results if not r.ambiguous]
        return cls(backend["name"], environment,
                   frozenset(r.id for r in mandatory if r.status == Status.FAIL or (
                       r.status == Status.XFAIL and r.message.startswith("expected FAIL"))),
                   frozenset(r.id for r in mandatory if r.status in baselines.PASSED),
                   frozenset(r.id for r in doc.results))


#: The tags an entry names besides directml_version, where the finding was measured absent on
#: a run of another value (a finding of one stack, or of one path, only).
NARROWING = ("vendor", "backend")


def when(case_id: str, runs: Sequence[Run]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """The `when:` of a case's entry: the DirectML builds it fails on, and the vendors or the
    backends (operator or graph path) it fails on where it passed on another one of a build it
    fails on."""
    fails = [r for r in runs if case_id in r.failing]
    versions = {r.tags["directml_version"] for r in fails}
    tags = [("directml_version", tuple(sorted(versions)))]
    for tag in NARROWING:
        failing = {r.tags.get(tag, "") for r in fails}
        if any(r.tags.get(tag, "") not in failing for r in runs
               if case_id in r.passing and r.tags["directml_version"] in versions):
            tags.append((tag, tuple(sorted(failing))))
    return tuple(tags)


def build(docs: Sequence[ResultsDocument | Mapping[str, Any]], cases: Sequence[Case]) -> str:
    """The baseline YAML for results documents of the directml backends (each build, each
    stack, each path where it was measured): one entry per finding and `when:`, its cases as
    patterns. The entries are checked to give back exactly each run's failures. A document
    may be given as its JSON (the parts this reads: the backend, the results)."""
    by_id = {c.id: c for c in cases}
    ids = list(by_id)
    runs = [Run.of(doc if isinstance(doc, ResultsDocument) else ResultsDocument.from_json(doc))
            for doc in docs]
    for run in runs:
        unknown = sorted(i for i in run.failing if i not in by_id or cause(by_id[i]) is None)
        if unknown:
            raise ValueError(f"{results.counted(len(unknown), 'FAIL')} with no known cause on "
                             f"{run.tags['directml_version']} ({run.backend}; a new finding: "
                             f"investigate, do not baseline): {', '.join(unknown[:10])}")
    groups: dict[tuple[str, tuple], set[str]] = {}
    for case_id in set().union(*(r.failing for r in runs)):
        groups.setdefault((cause(by_id[case_id]), when(case_id, runs)), set()).add(case_id)  # type: ignore
    lines = ["# GENERATED by `python -m backends.directml.baseline` from the results files of",
             "# the directml backends (DirectML.dll 1.15.4 under Wine; torch-directml",
             "# 0.2.5.dev240914's libdirectml.so; their graph paths) on vkd3d-proton 2.14.1, on",
             "# Mesa lavapipe and where measured an NVIDIA GPU (docs/directml-gpu.md): one entry",
             f"# per finding and the runs it is of, its cases as patterns. Why each fails: {DOC}.",
             "# A FAIL not listed here fails CI. `when:` names the DirectML builds a finding",
             "# FAILs on, and the vendor or backends only where it was measured absent elsewhere",
             "# (docs/baselines.md).",
             "expected_failures:"]
    # the narrower entries first (more `when:` tags), then by cause
    for (reason, tags), group in sorted(groups.items(),
                                        key=lambda g: (-len(g[0][1]), g[0][0], g[0][1])):
        lines += ["  - cases:", *(f"      - {json.dumps(p)}" for p in patterns(group, ids)),
                  "    status: FAIL",
                  f"    reason: {json.dumps(CAUSES[reason])}",
                  f"    # {results.counted(len(group), 'case')}",
                  "    when:", *(f"      {tag}: {json.dumps(list(values))}"
                                 for tag, values in tags)]
    text = "\n".join(lines) + "\n"
    check(baselines.parse(text), runs, ids)
    return text


def check(known: baselines.Baseline, runs: Sequence[Run], ids: Sequence[str] = ()) -> None:
    """Refuse a baseline that does not give back exactly each run's failures as XFAIL (none
    else: no XPASS, no stale pattern). A run measured before some cases existed (a recorded GPU
    run) says nothing of them: against it, the patterns that match none of its cases are left
    out, and an entry left with none (ids: the committed cases' ids; a pattern that matches only
    cases the run did not hold is one of those)."""
    for run in runs:
        found = [Result(i, Status.FAIL) for i in sorted(run.failing)] + [
            Result(i, Status.PASS) for i in sorted(run.passing)]
        missing = [i for i in ids if i not in run.ran]
        entries = [replace(e, cases=kept) for e in known.entries
                   if (kept := tuple(p for p in e.cases
                                     if not missing or any(id_matches(i, p) for i in run.ran)
                                     or not any(id_matches(i, p) for i in missing)))]
        applied = baselines.apply(replace(known, entries=tuple(entries)), found, tags=run.tags)
        wrong = sorted(set(applied.expected) ^ set(run.failing)) + applied.xpass
        if wrong or applied.stale:
            raise ValueError(f"the entries do not give back the failures of {run.backend} on "
                             f"{run.tags['directml_version']}: {', '.join(wrong[:10])} "
                             f"{applied.stale[:1]}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m backends.directml.baseline",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("results", nargs="+", help="results files of `dmlconf run --backend "
                        "directml` and `--backend directml-linux` (one per DirectML build)")
    parser.add_argument("--out", default=str(DEFAULT), help=f"(default: {DEFAULT})")
    parser.add_argument("--cases", action="append", help="case paths (default: cases)")
    args = parser.parse_args(argv)
    try:
        text = build([results.read(path) for path in args.results],
                     load_cases(args.cases or ["cases"]))
    except ValueError as exc:
        print(f"baseline: {exc}", file=sys.stderr)
        return 1
    Path(args.out).write_text(text, encoding="utf-8")
    print(f"wrote {args.out} ({text.count('- cases:')} entries)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
