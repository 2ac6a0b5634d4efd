"""Cases -> self-contained vectors (docs/vectors.md): per case a folder with a JSON desc per
call (DirectML's names and values: export.desc), its input buffers as raw bytes, and each
expected output's acceptance rule as data (export.expectfile), judged in C by
c/dmlconf_vectors.c without Python.

Nothing is judged or computed here that the runner does not compute itself: the case's calls
are materialised by the runner's own CaseRun (inputs written through their strides into buffers
pre-filled with its padding byte, outputs pre-filled with its fill byte) on the reference
backend, and the expectations are the runner's (expectations, relation_model), so an exported
vector holds a harness to exactly what `dmlconf run` holds a backend to.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformance import ops, suite
from conformance.backend import Backend, DescRejected, load_backend
from conformance.casefile import Case, case_set_hash
from conformance.export import desc as dml
from conformance.export import expectfile
from conformance.flags import ExecutionFlags
from conformance.levels import FeatureLevel
from conformance.results.mustpass import mandatory
from conformance.session import Session
from conformance.session.case_run import (
    CALL_FILL_STEP,
    INPUT_PADDING_BYTE,
    OUTPUT_FILLS,
    BindingError,
    CaseError,
    CaseRun,
    InProcess,
    covers_fill,
    expectations,
    relation_model,
)

FORMAT = "dmlconf-vectors"
FORMAT_VERSION = 2
C_SOURCES = ("dmlconf_vectors.h", "dmlconf_vectors.c", "dmlconf_check.c")
C_FOLDER = Path(__file__).resolve().parent / "c"
#: The reference backend whose outputs fill the chained inputs and the reference files.
REFERENCE = "numpy"
#: The flags the expectations are computed for (the harness compiles with none).
FLAGS = ExecutionFlags.NONE


class NotExportable(Exception):  # noqa: N818 - reads as what the case is
    """A case the vectors cannot state: the reason, in words, goes to index.json."""


def level(value: FeatureLevel) -> dict[str, Any]:
    return dml.enum(f"DML_FEATURE_LEVEL_{value}", int(value))


@dataclass
class Written:
    """The files of one case (relative to the export folder) and its entry in index.json."""

    entry: dict[str, Any]
    files: dict[str, bytes] = field(default_factory=dict)


def inside(out: Path, relative: str) -> Path:
    """out/relative, refused (ValueError) unless it lies inside out: no segment of relative is
    empty, '.' or '..' (a case id is such a path; the loader refuses such ids, and a Case made
    another way must not write outside the export folder or share another case's folder)."""
    parts = relative.split("/")
    if any(part in ("", ".", "..") for part in parts):
        raise ValueError(f"{relative!r} is not a path inside the export folder: a segment is "
                         "empty, '.' or '..'")
    return out.joinpath(*parts)


class _Exporter:
    def __init__(self) -> None:
        self.backends: dict[FeatureLevel, Backend] = {}

    def backend(self, at: FeatureLevel) -> Backend:
        """The reference backend claiming the case's own level (a case limited to levels below
        another is valid there)."""
        if at not in self.backends:
            self.backends[at] = load_backend(REFERENCE, at)
        return self.backends[at]

    def case(self, case: Case, folder: str) -> Written:
        calls = {}
        written = Written({})
        for named in case.calls:
            try:
                calls[named.name] = dml.operator_desc(named.call)
            except dml.Inexpressible as exc:
                raise NotExportable(f"no DirectML call can state this desc: {exc}") from exc
            written.files[f"{folder}/{named.name}.desc.json"] = _json(calls[named.name])
        doc: dict[str, Any] = {
            "id": case.id, "description": case.description,
            "feature_level": level(case.feature_level),
            "feature_level_below": (level(case.feature_level_below)
                                    if case.feature_level_below else None),
            "ambiguous": case.ambiguous, "tags": list(case.tags),
            "spec": [c.to_json() for c in case.spec],
            "execution_flags": dml.execution_flags(FLAGS),
        }
        if case.rejected:
            doc |= self._rejected(case, folder)
        else:
            doc |= self._valid(case, folder, written.files)
        written.files[f"{folder}/case.json"] = _json(doc)
        written.entry = {"id": case.id, "folder": folder, "expect": doc["expect"],
                         "operators": list(case.operators),
                         "feature_level": str(case.feature_level),
                         "files": sorted(written.files)}
        return written

    def _rejected(self, case: Case, folder: str) -> dict[str, Any]:
        """An invalid desc: the harness binds nothing; CreateOperator must fail."""
        broken = [str(v) for named in case.calls
                  for v in ops.get(named.call.operator).validate(named.call, case.feature_level)]
        return {"expect": "rejected", "violations": broken,
                "calls": [{"name": n.name, "desc": f"{n.name}.desc.json"} for n in case.calls],
                "relations": []}

    def _valid(self, case: Case, folder: str, files: dict[str, bytes]) -> dict[str, Any]:
        run = CaseRun(case, InProcess(self.backend(case.feature_level)), OUTPUT_FILLS[0])
        rejected = False  # a may_reject case: the reference takes the rejecting reading
        try:
            for named in case.calls:
                try:
                    run.execute(named.name, named.call)
                except DescRejected:
                    if not case.may_reject:
                        raise
                    rejected = True  # its inputs are bound: the expectations hold
            wanted = expectations(case, run, FLAGS)
        except (CaseError, BindingError, DescRejected) as exc:
            raise NotExportable(f"the reference cannot run it: {exc}") from exc
        again = any(covers_fill(exp, run.fill_of(ref.split(".", 1)[0]))
                    for ref, exp in wanted.items())
        runs = [run] + ([CaseRun(case, run.executor, OUTPUT_FILLS[1])] if again else [])
        out_calls = []
        for named in case.calls:
            name, call = named.name, named.call
            spec = ops.get(call.operator)
            inputs, outputs = {}, {}
            for t in spec.inputs:
                ref = f"{name}.{t}"
                path = f"{name}.{t}.bin"
                files[f"{folder}/{path}"] = run.bindings[ref].buffer.tobytes()
                source = case.inputs.get(ref)
                inputs[t] = {"file": path, "bytes": call.tensors[t].total_size,
                             "padding_fill": INPUT_PADDING_BYTE,
                             "from": source.params if source and source.kind == "from" else None}
            for t in spec.outputs:
                ref = f"{name}.{t}"
                fills = [r.fill_of(name) for r in runs]
                reference: str | None = None
                if not rejected:
                    reference = f"{name}.{t}.reference.bin"
                    files[f"{folder}/{reference}"] = run.bindings[ref].buffer.tobytes()
                expect = None
                if ref in wanted:
                    expect = f"{name}.{t}.expect"
                    files[f"{folder}/{expect}"] = expectfile.output(
                        case.show_ref(ref), call.tensors[t], wanted[ref], fills)
                outputs[t] = {"bytes": call.tensors[t].total_size, "fills": fills,
                              "expect": expect, "reference": reference}
            out_calls.append({"name": name, "desc": f"{name}.desc.json", "inputs": inputs,
                              "outputs": outputs})
        relations = []
        for k, relation in enumerate(case.relations, start=1):
            left, right = case.desc(relation.left), case.desc(relation.right)
            b = run.bindings[relation.right].read()
            if relation.take:
                b = relation.take.apply(b)
            if b.shape != left.sizes:
                raise NotExportable(f"relation {relation.left} == {relation.right}: the sides "
                                    f"differ in shape ({list(left.sizes)}, {list(b.shape)})")
            model = relation_model(case, run, relation.left, b, FLAGS)
            path = f"relation-{k}.expect"
            files[f"{folder}/{path}"] = expectfile.relation(
                f"{relation.left} == {relation.right}", left, right, relation.take, model)
            relations.append({"left": relation.left, "right": relation.right,
                              "left_reference": _reference_file(case, relation.left),
                              "right_reference": _reference_file(case, relation.right),
                              "take": ({"axis": relation.take.axis,
                                        "indices": list(relation.take.indices)}
                                       if relation.take else None),
                              "why": relation.why, "expect": path})
        return {"expect": "outputs", "may_reject": case.may_reject, "calls": out_calls,
                "relations": relations, "call_fill_step": CALL_FILL_STEP}


def _reference_file(case: Case, ref: str) -> str:
    """The file holding the reference's bytes of a tensor: an input's buffer as bound, or an
    output's as the reference wrote it."""
    name, tensor = ref.split(".", 1)
    spec = ops.get(case.call(name).operator)
    return f"{ref}.bin" if tensor in spec.inputs else f"{ref}.reference.bin"


def _json(doc: Any) -> bytes:
    return (json.dumps(doc, indent=1, ensure_ascii=False, allow_nan=False) + "\n").encode()


def _clear(out: Path) -> None:
    """Make out an empty folder, refusing to empty one that is not a previous export."""
    if out.exists() and any(out.iterdir()):
        try:
            previous = json.loads((out / "index.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            previous = None
        if not isinstance(previous, dict) or previous.get("format") != FORMAT:
            raise ValueError(f"{out} is not empty and holds no previous export (index.json of "
                             f"format {FORMAT}): give an empty or new folder")
        shutil.rmtree(out)
    out.mkdir(parents=True, exist_ok=True)


def export(cases: Sequence[Case], out: str | Path, selection: dict[str, Any],
           committed: dict[str, Any], on_case: Callable[[str, str | None], None] | None = None
           ) -> dict[str, Any]:
    """Write every case's vectors, the C reader/checker and index.json under out (emptied
    first when it holds a previous export). selection: how the cases were chosen (paths,
    patterns, level), recorded in the index; committed: the committed case set's hash (the
    suite version is this package's). on_case(id, reason): after each case, reason None when
    it was exported.
    Returns the index document. Deterministic: the same cases give the same bytes."""
    out = Path(out)
    _clear(out)
    exporter = _Exporter()
    exported, skipped = [], []
    for case in sorted(cases, key=lambda c: c.id):
        folder = f"cases/{case.id}"
        try:
            written = exporter.case(case, folder)
        except NotExportable as exc:
            skipped.append({"id": case.id, "reason": str(exc)})
            if on_case:
                on_case(case.id, str(exc))
            continue
        for path, data in written.files.items():
            target = inside(out, path)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        written.entry["sha256"] = hashlib.sha256(b"".join(
            p.encode() + b"\0" + hashlib.sha256(written.files[p]).digest()
            for p in written.entry["files"])).hexdigest()
        exported.append(written.entry)
        if on_case:
            on_case(case.id, None)
    for name in C_SOURCES:
        shutil.copyfile(C_FOLDER / name, out / name)
    index = {"format": FORMAT, "format_version": FORMAT_VERSION, "docs": "docs/vectors.md",
             "suite": {"version": suite.SUITE_VERSION, **committed},
             "selection": {**selection, "cases": len(cases),
                           "cases_sha256": case_set_hash(list(cases))},
             "reference_backend": REFERENCE, "c_sources": list(C_SOURCES),
             "cases": exported, "not_exportable": skipped}
    (out / "index.json").write_bytes(_json(index))
    return index


def applies(case: Case, claimed: FeatureLevel) -> bool:
    """Whether a run claiming `claimed` runs the case (the level rule of the mustpass lists,
    results.mustpass.mandatory, cases in ambiguous regions kept: they are run, and reported
    apart): it needs `claimed` or less and is not limited to levels below it."""
    return mandatory(case.feature_level, case.feature_level_below, False, claimed, claimed)


def export_session(session: Session, out: str | Path,
                   on_case: Callable[[str, str | None], None] | None = None) -> dict[str, Any]:
    """Export the cases a session selected (Session.select: case paths, -k patterns, shard),
    those a run claiming its options' level runs where a level is given."""
    o = session.options
    cases = session.cases
    if o.level is not None:
        cases = [c for c in cases if applies(c, o.level)]
    selection = {"case_paths": [str(p) for p in session.paths], "patterns": list(o.patterns),
                 "feature_level": str(o.level) if o.level is not None else None}
    return export(cases, out, selection, {"case_set_sha256": suite.case_set_sha256()}, on_case)


__all__ = ["C_SOURCES", "FORMAT", "FORMAT_VERSION", "NotExportable", "applies", "export",
           "export_session"]
