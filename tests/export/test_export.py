"""dmlconf export and the C reader/checker (docs/vectors.md): the C judges exported vectors as
the Python judge does. A sample covering every operator and every expectation kind (exact,
one_of, within; any_nan, nan_ok; a legal envelope wider than the strict model; relations, with
a take; rejected and inexpressible descs) is exported once; the C checker, compiled with the
system compiler, gives PASS on the reference's output bytes, FAIL naming the element on a
corrupted one, QUALITY_WARNING inside the envelope but outside the strict model, and agrees
with conformance.judge.compare on each."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from conformance import ops
from conformance.backend import load_backend
from conformance.casefile import Case, load_cases
from conformance.cli import main
from conformance.expected import Expected
from conformance.export import export
from conformance.flags import ExecutionFlags
from conformance.judge import compare
from conformance.session.case_run import (
    OUTPUT_FILLS,
    CaseRun,
    InProcess,
    expectations,
    relation_model,
)
from conformance.tensors import TensorDesc, read_tensor, write_tensor
from tests.support import CASES, DOCUMENTED, GENERATED, ROOT

C_DIR = ROOT / "conformance" / "export" / "c"
STATUS = {0: "PASS", 1: "QUALITY_WARNING", 2: "FAIL", 3: "ERROR"}

#: A linear case whose one input tap of weight 0 is infinite: the weighted sum is NaN where
#: the exact value is not, legally (nan_ok). Its output has 16 bytes of padding.
NAN_OK_CASE = """\
cases:
  - id: t/linear-infinite-tap
    operator: RESAMPLE1
    feature_level: "2_1"
    spec: {page: NOTES, section: "4"}
    tensors:
      InputTensor: {DataType: FLOAT32, Sizes: [1, 1, 1, 2]}
      OutputTensor: {DataType: FLOAT32, Sizes: [1, 1, 1, 4], TotalTensorSizeInBytes: 32}
    attributes: {InterpolationMode: LINEAR, Scales: [1, 1, 1, 2],
                 InputPixelOffsets: [0, 0, 0, 0], OutputPixelOffsets: [0, 0, 0, 0]}
    inputs:
      InputTensor: {values: [[[[1, inf]]]]}
    expected:
      OutputTensor: reference
"""

#: (case file, id patterns): small files whose cases cover every operator and kind.
SAMPLE = [
    (DOCUMENTED / "depth_to_space.yaml", ["example"]),
    (DOCUMENTED / "space_to_depth.yaml", ["example"]),
    (DOCUMENTED / "depth_to_space1.yaml", ["example-2"]),
    (DOCUMENTED / "space_to_depth1.yaml", ["example-1"]),
    (DOCUMENTED / "resample1.yaml", ["remark"]),
    (DOCUMENTED / "resample2.yaml", ["linear-equals-resample1"]),
    (DOCUMENTED / "resample3.yaml", ["antialiased-false-equals-resample2",
                                      "antialias-half-pixel-edges"]),
    (GENERATED / "bitlevel" / "resample2.yaml", ["nearest/increasing/float32",
                                                 "nearest/increasing/int8"]),
    (GENERATED / "bitlevel" / "resample.yaml", ["nearest/float32"]),
    (GENERATED / "bitlevel" / "depth_space.yaml", ["depth_to_space/float16",
                                                   "depth_to_space/float64",
                                                   "depth_to_space/int64"]),
    (GENERATED / "equivalence" / "depth_space.yaml", ["crd-is-permuted-dcr/b2/float16"]),
    (GENERATED / "invalid" / "space_to_depth.yaml", ["zero-size", "strides-count"]),
    (GENERATED / "tables" / "resample1.yaml", ["2d/linear/float16", "2d/linear/uint8"]),
]


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> list[Case]:
    extra = tmp_path_factory.mktemp("cases") / "nan_ok.yaml"
    extra.write_text(NAN_OK_CASE, encoding="utf-8")
    cases = load_cases([extra])
    for path, patterns in SAMPLE:
        cases += [c for c in load_cases([path]) if any(p in c.id for p in patterns)]
    return cases


@pytest.fixture(scope="module")
def out(sample: list[Case], tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("export") / "vectors"
    export(sample, folder, {"case_paths": [], "patterns": [], "feature_level": None},
           {"case_set_sha256": "test"})
    return folder


def check(exe: Path, *args: str | Path) -> tuple[str, str]:
    """(verdict, message) of dmlconf_check; its exit status must say the same verdict."""
    done = subprocess.run([str(exe), *map(str, args)], capture_output=True, text=True)
    line = done.stdout.splitlines()[0] if done.stdout else done.stderr.strip()
    verdict = STATUS[done.returncode]
    if verdict != "ERROR":
        assert line.startswith(f"{verdict}: "), (done.returncode, done.stdout)
    return verdict, line


class Python:
    """The Python side of a case: the runner's materialised bindings on the reference and the
    expectations it judges with (what dmlconf run holds a backend to)."""

    def __init__(self, case: Case) -> None:
        self.case = case
        self.run = CaseRun(case, InProcess(load_backend("numpy", case.feature_level)),
                        OUTPUT_FILLS[0])
        for named in case.calls:
            self.run.execute(named.name, named.call)
        self.expected = expectations(case, self.run)

    def relation_model(self, k: int, right: np.ndarray) -> Expected:
        relation = self.case.relations[k]
        if relation.take:
            right = relation.take.apply(right)
        return relation_model(self.case, self.run, relation.left, right, ExecutionFlags.NONE)


def corrupted(buffer: bytes, desc: TensorDesc, index: tuple[int, ...], value: Any) -> bytes:
    """The buffer with one logical element set to value (through the strides)."""
    data = np.frombuffer(buffer, dtype=np.uint8).copy()
    values = read_tensor(desc, data)
    values[index] = value
    write_tensor(desc, data, values)
    return data.tobytes()


def candidates(exp: Expected, index: tuple[int, ...]) -> list[Any]:
    """Values to put at one element that the legal envelope likely refuses."""
    dtype = exp.values.dtype
    want = exp.values[index]
    if np.issubdtype(dtype, np.floating):
        with np.errstate(invalid="ignore", over="ignore"):
            return [dtype.type(want * 2 + 7), dtype.type(-want - 3), dtype.type(1000)]
    info = np.iinfo(dtype)
    return [dtype.type(info.max if want < info.max // 2 else info.min), dtype.type(want ^ 1)]


# -- the sample covers what it must ---------------------------------------------------------
def test_the_sample_covers_every_operator_and_kind(sample: list[Case], out: Path) -> None:
    index = json.loads((out / "index.json").read_text())
    assert {op for c in sample for op in c.operators} == set(ops.OPERATORS)
    kinds: set[str] = set()
    for case in sample:
        if case.rejected:
            kinds.add("rejected")
            continue
        py = Python(case)
        for exp in py.expected.values():
            for m in (exp, exp.legal):
                if m is not None:
                    kinds.add(m.kind)
                    kinds |= {"any_nan"} if m.any_nan else set()
                    kinds |= {"nan_ok"} if m.nan_ok is not None and m.nan_ok.any() else set()
            kinds |= {"legal wider"} if exp.legal is not None else set()
        kinds |= {"relation"} if case.relations else set()
        kinds |= {"take"} if any(r.take for r in case.relations) else set()
    assert kinds >= {"exact", "one_of", "within", "any_nan", "nan_ok", "legal wider",
                     "relation", "take", "rejected"}
    assert index["not_exportable"] and all(
        "Strides" in e["reason"] for e in index["not_exportable"])


def test_index_names_every_case_and_file(sample: list[Case], out: Path) -> None:
    index = json.loads((out / "index.json").read_text())
    assert index["format"] == "dmlconf-vectors" and index["suite"]["version"]
    listed = {e["id"] for e in index["cases"]} | {e["id"] for e in index["not_exportable"]}
    assert listed == {c.id for c in sample}
    for entry in index["cases"]:
        for f in entry["files"]:
            assert (out / f).is_file(), f
        assert sorted(p.relative_to(out).as_posix() for p in (out / entry["folder"]).iterdir()
                      if p.is_file()) == entry["files"]
    for name in index["c_sources"]:
        assert (out / name).read_bytes() == (C_DIR / name).read_bytes()


def test_descs_use_directml_names_and_values(out: Path) -> None:
    folder = out / "cases" / "documented" / "depth_to_space1" / "example-2-column-row-depth"
    desc = json.loads((folder / "call.desc.json").read_text())
    assert desc["Type"] == {"name": "DML_OPERATOR_DEPTH_TO_SPACE1", "value": 113}
    assert desc["DescType"] == "DML_DEPTH_TO_SPACE1_OPERATOR_DESC"
    assert list(desc["Desc"]) == ["InputTensor", "OutputTensor", "BlockSize", "Order"]
    assert desc["Desc"]["Order"] == {"name": "DML_DEPTH_SPACE_ORDER_COLUMN_ROW_DEPTH", "value": 1}
    tensor = desc["Desc"]["InputTensor"]
    assert tensor["Type"] == {"name": "DML_TENSOR_TYPE_BUFFER", "value": 1}
    assert list(tensor["Desc"]) == ["DataType", "Flags", "DimensionCount", "Sizes", "Strides",
                                    "TotalTensorSizeInBytes", "GuaranteedBaseOffsetAlignment"]
    assert tensor["Desc"]["DataType"] == {"name": "DML_TENSOR_DATA_TYPE_UINT32", "value": 3}
    size = tensor["Desc"]["TotalTensorSizeInBytes"]
    assert (folder / "call.InputTensor.bin").stat().st_size == size
    resample = json.loads((out / "cases" / "documented" / "resample1" / "remark-linear-resample"
                           / "call.desc.json").read_text())["Desc"]
    assert list(resample) == ["InputTensor", "OutputTensor", "InterpolationMode", "ScaleCount",
                              "Scales"]
    assert resample["ScaleCount"] == 4 and resample["InterpolationMode"]["value"] == 1


def test_inputs_are_the_bound_bytes_padding_included(sample: list[Case], out: Path) -> None:
    padded = [c for c in sample if not c.rejected and any(
        d.is_strided for n in c.calls for d in n.call.tensors.values())]
    for case in padded or [c for c in sample if not c.rejected][:3]:
        py = Python(case)
        doc = json.loads((out / "cases" / case.id / "case.json").read_text())
        for call in doc["calls"]:
            for tensor, entry in call["inputs"].items():
                data = (out / "cases" / case.id / entry["file"]).read_bytes()
                assert len(data) == entry["bytes"]
                assert data == py.run.bindings[f"{call['name']}.{tensor}"].buffer.tobytes()


def test_export_is_deterministic(sample: list[Case], out: Path, tmp_path: Path) -> None:
    again = tmp_path / "again"
    export(sample, again, {"case_paths": [], "patterns": [], "feature_level": None},
           {"case_set_sha256": "test"})
    first = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    second = {p.relative_to(again): p.read_bytes() for p in again.rglob("*") if p.is_file()}
    assert first == second


# -- the C judge agrees with the Python judge -----------------------------------------------
def test_reference_outputs_pass_in_c(sample: list[Case], out: Path, checker: Path) -> None:
    judged = 0
    for case in sample:
        if case.rejected:
            continue
        folder = out / "cases" / case.id
        doc = json.loads((folder / "case.json").read_text())
        for call in doc["calls"]:
            for entry in call["outputs"].values():
                if entry["expect"]:
                    verdict, line = check(checker, folder / entry["expect"],
                                          folder / entry["reference"])
                    assert verdict == "PASS", (case.id, line)
                    judged += 1
        for rel in doc["relations"]:
            verdict, line = check(checker, folder / rel["expect"],
                                  folder / rel["left_reference"],
                                  folder / rel["right_reference"])
            assert verdict == "PASS", (case.id, line)
            judged += 1
    assert judged >= 20


def test_an_open_region_admits_its_readings_in_c_as_in_python(sample: list[Case], out: Path,
                                                             checker: Path,
                                                             tmp_path: Path) -> None:
    """An open case's .expect holds the other admissible readings (docs/vectors.md): the C
    checker PASSes an output that follows one, naming it, and FAILs one that fits none, as the
    Python judge does (issue 25)."""
    from conformance.judge.misreadings import CATALOGUE, admissible

    case = next(c for c in sample if c.id == "documented/resample3/antialias-half-pixel-edges")
    assert case.open and not case.ambiguous
    py = Python(case)
    call = case.calls[0].call
    folder = out / "cases" / case.id
    expect = folder / json.loads((folder / "case.json").read_text())["calls"][0]["outputs"][
        "OutputTensor"]["expect"]
    for entry, want in ((admissible()["antialias-edges-excluded"], "PASS"),
                        (CATALOGUE["antialias-zero-edges"], "FAIL")):
        bindings = {"InputTensor": py.run.bindings["call.InputTensor"].buffer.copy(),
                    "OutputTensor": np.full(call.tensors["OutputTensor"].total_size,
                                            OUTPUT_FILLS[0], dtype=np.uint8)}
        entry.run(call, bindings)
        got = read_tensor(call.tensors["OutputTensor"], bindings["OutputTensor"])
        assert compare.judge(got, py.expected["call.OutputTensor"]).status == want, entry.key
        path = tmp_path / f"{entry.key}.bin"
        path.write_bytes(bindings["OutputTensor"].tobytes())
        verdict, line = check(checker, expect, path)
        assert verdict == want, (entry.key, line)
        assert ("follows an admissible reading" in line) == (want == "PASS"), line
        assert ("nor does it fit any of the" in line) == (want == "FAIL"), line


def test_a_corrupted_element_fails_in_c_as_in_python(sample: list[Case], out: Path,
                                                     checker: Path, tmp_path: Path) -> None:
    failed_kinds = set()
    for case in sample:
        if case.rejected or case.id not in {e["id"] for e in json.loads(
                (out / "index.json").read_text())["cases"]}:
            continue
        py = Python(case)
        folder = out / "cases" / case.id
        for ref, exp in py.expected.items():
            desc = case.desc(ref)
            reference = (folder / f"{ref}.reference.bin").read_bytes()
            index = tuple(s // 2 for s in desc.sizes)
            for value in candidates(exp, index):
                data = corrupted(reference, desc, index, value)
                got = read_tensor(desc, np.frombuffer(data, dtype=np.uint8).copy())
                judged = compare.judge(got, exp)
                if judged.status != "FAIL":
                    continue
                bad = tmp_path / "bad.bin"
                bad.write_bytes(data)
                verdict, line = check(checker, folder / f"{ref}.expect", bad)
                first = [int(i) for i in np.argwhere(judged.bad)[0]]
                assert verdict == "FAIL", (case.id, line)
                assert f"{int(judged.bad.sum())} of {got.size} elements differ" in line, line
                assert f"[{', '.join(map(str, first))}] expected" in line, line
                assert first == list(index)
                failed_kinds.add(exp.envelope.kind)
                break
    assert failed_kinds == {"exact", "one_of", "within"}


def test_inside_the_envelope_outside_the_strict_model_warns(sample: list[Case], out: Path,
                                                            checker: Path,
                                                            tmp_path: Path) -> None:
    found = 0
    for case in sample:
        if case.rejected:
            continue
        py = Python(case)
        for ref, exp in py.expected.items():
            if exp.legal is None or exp.kind != "within" or exp.legal.kind != "within":
                continue
            desc = case.desc(ref)
            legal = np.broadcast_to(exp.legal.bound, exp.values.shape)
            strict = np.broadcast_to(exp.bound, exp.values.shape)
            wide = np.argwhere(np.isfinite(exp.center) & (legal > 1.5 * strict + 1e-30))
            if not wide.size:
                continue
            index = tuple(int(i) for i in wide[0])
            target = exp.center[index] + (strict[index] + legal[index]) / 2
            value = exp.values.dtype.type(target)
            folder = out / "cases" / case.id
            data = corrupted((folder / f"{ref}.reference.bin").read_bytes(), desc, index,
                             value)
            got = read_tensor(desc, np.frombuffer(data, dtype=np.uint8).copy())
            judged = compare.judge(got, exp)
            if judged.status != "QUALITY_WARNING":
                continue
            path = tmp_path / "warn.bin"
            path.write_bytes(data)
            verdict, line = check(checker, folder / f"{ref}.expect", path)
            assert verdict == "QUALITY_WARNING", (case.id, line)
            assert "inside the legal envelope" in line and f"[{', '.join(map(str, index))}]" in line
            found += 1
    assert found


def test_another_nan_payload_is_judged_as_in_python(sample: list[Case], out: Path,
                                                   checker: Path, tmp_path: Path) -> None:
    """A NaN with other bits where a NaN is expected: FAIL where the bits must survive (data
    movement), QUALITY_WARNING where any NaN is legal (nearest resampling's envelope)."""
    seen = set()
    for case in sample:
        if case.rejected:
            continue
        py = Python(case)
        folder = out / "cases" / case.id
        for ref, exp in py.expected.items():
            if exp.kind == "within" or not np.issubdtype(exp.values.dtype, np.floating):
                continue
            nans = np.argwhere(np.isnan(exp.values))
            if not nans.size:
                continue
            index = tuple(int(i) for i in nans[0])
            bits = exp.values.dtype.type(exp.values[index]).view(f"u{exp.values.itemsize}")
            other = (bits ^ 2).view(exp.values.dtype)  # another payload, still a NaN
            desc = case.desc(ref)
            data = corrupted((folder / f"{ref}.reference.bin").read_bytes(), desc, index, other)
            got = read_tensor(desc, np.frombuffer(data, dtype=np.uint8).copy())
            judged = compare.judge(got, exp)
            path = tmp_path / "nan.bin"
            path.write_bytes(data)
            verdict, line = check(checker, folder / f"{ref}.expect", path)
            assert verdict == judged.status, (case.id, line)
            assert f"[{', '.join(map(str, index))}] expected nan" in line, line
            seen.add(verdict)
    assert seen == {"FAIL", "QUALITY_WARNING"}


def test_relations_fail_in_c_as_in_python(sample: list[Case], out: Path, checker: Path,
                                          tmp_path: Path) -> None:
    judged = set()
    for case in sample:
        if case.rejected or not case.relations:
            continue
        py = Python(case)
        folder = out / "cases" / case.id
        doc = json.loads((folder / "case.json").read_text())
        for k, rel in enumerate(doc["relations"]):
            desc = case.desc(rel["left"])
            left = (folder / rel["left_reference"]).read_bytes()
            right_bytes = (folder / rel["right_reference"]).read_bytes()
            right = read_tensor(case.desc(rel["right"]),
                                np.frombuffer(right_bytes, dtype=np.uint8).copy())
            model = py.relation_model(k, right)
            index = tuple(s - 1 for s in desc.sizes)
            for value in candidates(model.envelope if model.envelope.kind != "within"
                                    else Expected(model.values), index):
                data = corrupted(left, desc, index, value)
                got = read_tensor(desc, np.frombuffer(data, dtype=np.uint8).copy())
                if compare.judge(got, model).status != "FAIL":
                    continue
                bad = tmp_path / "left.bin"
                bad.write_bytes(data)
                verdict, line = check(checker, folder / rel["expect"], bad,
                                      folder / rel["right_reference"])
                assert verdict == "FAIL" and line.startswith("FAIL: relation "), line
                assert f"[{', '.join(map(str, index))}] expected" in line, line
                judged.add((model.envelope.kind, rel["take"] is not None))
                break
    assert ("exact", True) in judged and ("within", False) in judged


def test_padding_writes_are_information_not_failures(sample: list[Case], out: Path,
                                                     checker: Path, tmp_path: Path) -> None:
    case = next(c for c in sample if not c.rejected and any(
        c.desc(ref).total_size > c.desc(ref).element_count * c.desc(ref).data_type.size
        for ref in (c.expected or {})))
    ref = next(r for r in case.expected or {}
               if case.desc(r).total_size > case.desc(r).element_count
               * case.desc(r).data_type.size)
    folder = out / "cases" / case.id
    data = bytearray((folder / f"{ref}.reference.bin").read_bytes())
    data[-1] ^= 0xFF  # the last byte: padding (DMLCalcBufferTensorSize rounds up to 4)
    path = tmp_path / "padded.bin"
    path.write_bytes(bytes(data))
    verdict, line = check(checker, folder / f"{ref}.expect", path)
    done = subprocess.run([str(checker), str(folder / f"{ref}.expect"), str(path)],
                          capture_output=True, text=True)
    assert verdict == "PASS", line
    assert "1 padding byte written" in done.stdout


def test_bad_files_and_buffers_are_errors(out: Path, checker: Path, tmp_path: Path) -> None:
    folder = out / "cases" / "documented" / "depth_to_space" / "example"
    expect = (folder / "call.OutputTensor.expect").read_bytes()
    truncated = tmp_path / "t.expect"
    truncated.write_bytes(expect[:-3])
    verdict, line = check(checker, truncated, folder / "call.OutputTensor.reference.bin")
    assert verdict == "ERROR" and "not a complete .expect file" in line
    short = tmp_path / "short.bin"
    short.write_bytes((folder / "call.OutputTensor.reference.bin").read_bytes()[:-4])
    verdict, line = check(checker, folder, short)  # a case folder stands for its output
    assert verdict == "ERROR" and "TotalTensorSizeInBytes" in line


# -- the documented C example and the command ----------------------------------------------
def test_the_documented_c_example_compiles_and_judges(out: Path, cc: str,
                                                      tmp_path: Path) -> None:
    text = (ROOT / "docs" / "vectors.md").read_text(encoding="utf-8")
    source = re.search(r"<!-- c-example -->\n```c\n(.*?)```\n<!-- /c-example -->", text,
                       re.S).group(1)
    (tmp_path / "example.c").write_text(source, encoding="utf-8")
    exe = tmp_path / "example"
    subprocess.run([cc, "-std=c99", "-Wall", "-Wextra", "-pedantic", "-Werror", "-I", str(out),
                    "-o", str(exe), str(tmp_path / "example.c"), str(out / "dmlconf_vectors.c")],
                   check=True, capture_output=True, text=True)
    folder = out / "cases" / "documented" / "depth_to_space" / "example"
    done = subprocess.run([str(exe), str(folder / "call.OutputTensor.expect"),
                           str(folder / "call.OutputTensor.reference.bin")],
                          capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout.startswith("PASS: OutputTensor: all ")


def test_the_command_selects_by_pattern_and_level(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "vectors"
    assert main(["export", str(target), "--cases", str(DOCUMENTED), "-k", "resample",
                 "--level", "2_1"]) == 0
    index = json.loads((target / "index.json").read_text())
    ids = [e["id"] for e in index["cases"]]
    assert ids and all("resample" in i for i in ids)
    # a run claiming 2_1 runs no RESAMPLE2 (5_1) nor RESAMPLE3 (6_4) case
    assert not any(op in e["operators"] for e in index["cases"]
                   for op in ("RESAMPLE2", "RESAMPLE3"))
    assert index["selection"]["feature_level"] == "2_1"
    assert f"exported {len(ids)} case" in capsys.readouterr().out
    # a folder that is no export is left alone
    other = tmp_path / "other"
    other.mkdir()
    (other / "keep.txt").write_text("mine")
    assert main(["export", str(other), "--cases", str(DOCUMENTED), "-k", "example"]) == 2
    assert (other / "keep.txt").read_text() == "mine"
    assert CASES.is_dir()


@pytest.mark.parametrize("case_id", ["../outside", "a/../../outside", "a/./b", "a//b", "/abs"])
def test_export_writes_nothing_outside_its_folder(sample: list[Case], tmp_path: Path,
                                                  case_id: str) -> None:
    """A Case made without the loader (which refuses such ids) still cannot make export write
    outside its folder, or into another case's folder (issue 24)."""
    from dataclasses import replace

    with pytest.raises(ValueError, match="is not a path inside the export folder"):
        export([replace(sample[0], id=case_id)], tmp_path / "out",
               {"case_paths": [], "patterns": [], "feature_level": None},
               {"case_set_sha256": "test"})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
    assert not any(p.is_file() for p in (tmp_path / "out").rglob("*"))
