"""The case-file loader (conformance/casefile/, docs/case-format.md) and the input sources
(conformance/inputs.py).

Every malformed file must give CaseFileError, never another exception, with the text
'path:LINE: message': the line is asserted exactly and the message must name the problem.
"""

from __future__ import annotations

import functools
import json
import math
from pathlib import Path

import jsonschema
import numpy as np
import pytest
import yaml

from conformance import inputs as sources
from conformance.casefile import (
    SINGLE,
    CaseFileError,
    Expectation,
    Relation,
    Source,
    case_set_hash,
    load_cases,
    load_file,
    load_text,
    schema,
    select,
)
from conformance.levels import FeatureLevel
from conformance.tensors import DataType, TensorDesc
from tests.support import CASES, ROOT

SCHEMA = ROOT / "conformance" / "casefile" / "case.schema.json"

# A valid single-call case; the comments number the lines the tests below refer to.
VALID = """\
cases:                                                            # 1
  - id: t/one                                                     # 2
    description: a valid single-call case                         # 3
    operator: DEPTH_TO_SPACE1                                     # 4
    feature_level: "2_1"                                          # 5
    spec: {page: DML_DEPTH_TO_SPACE1_OPERATOR_DESC, section: E}   # 6
    attributes: {BlockSize: 1, Order: DEPTH_COLUMN_ROW}           # 7
    tensors:                                                      # 8
      InputTensor: {DataType: UINT8, Sizes: [1, 1, 2, 3]}         # 9
      OutputTensor: {DataType: UINT8, Sizes: [1, 1, 2, 3]}        # 10
    inputs:                                                       # 11
      InputTensor: {values: [1, 2, 3, 4, 5, 6]}                   # 12
    expected:                                                     # 13
      OutputTensor: reference                                     # 14
"""

# Two calls chained with 'from' (a's output is b's input).
CHAINED = """\
cases:                                                            # 1
  - id: t/chain                                                   # 2
    feature_level: "2_1"                                          # 3
    spec: {page: NOTES, section: "3"}                             # 4
    inputs:                                                       # 5
      a.InputTensor: {values: [0, 1, 2, 3]}                       # 6
      b.InputTensor: {from: a.OutputTensor}                       # 7
    calls:                                                        # 8
      - name: a                                                   # 9
        operator: DEPTH_TO_SPACE1                                 # 10
        attributes: {BlockSize: 2, Order: DEPTH_COLUMN_ROW}       # 11
        tensors:                                                  # 12
          InputTensor: {DataType: UINT8, Sizes: [1, 4, 1, 1]}     # 13
          OutputTensor: {DataType: UINT8, Sizes: [1, 1, 2, 2]}    # 14
      - name: b                                                   # 15
        operator: SPACE_TO_DEPTH1                                 # 16
        attributes: {BlockSize: 2, Order: DEPTH_COLUMN_ROW}       # 17
        tensors:                                                  # 18
          InputTensor: {DataType: UINT8, Sizes: [1, 1, 2, 2]}     # 19
          OutputTensor: {DataType: UINT8, Sizes: [1, 4, 1, 1]}    # 20
    expected:                                                     # 21
      b.OutputTensor: {values: [0, 1, 2, 3]}                      # 22
"""

RESAMPLE1 = """\
cases:                                                            # 1
  - id: t/resample1                                               # 2
    operator: RESAMPLE1                                           # 3
    feature_level: "2_1"                                          # 4
    spec: {page: DML_RESAMPLE1_OPERATOR_DESC}                     # 5
    attributes:                                                   # 6
      InterpolationMode: NEAREST_NEIGHBOR                         # 7
      Scales: [1, 1, 2, 2]                                        # 8
      InputPixelOffsets: [0.5, 0.5, 0.5, 0.5]                     # 9
      OutputPixelOffsets: [-0.5, -0.5, -0.5, -0.5]                # 10
    tensors:                                                      # 11
      InputTensor: {DataType: FLOAT32, Sizes: [1, 1, 1, 2]}       # 12
      OutputTensor: {DataType: FLOAT32, Sizes: [1, 1, 2, 4]}      # 13
    inputs:                                                       # 14
      InputTensor: {values: [1, 2]}                               # 15
    expected:                                                     # 16
      OutputTensor: reference                                     # 17
"""

# Defaults carry most keys; the case's line numbers then point into the defaults.
WITH_DEFAULTS = """\
defaults:                                                         # 1
  operator: DEPTH_TO_SPACE1                                       # 2
  feature_level: "2_1"                                            # 3
  tags: [from-defaults]                                           # 4
  attributes: {BlockSize: 1, Order: DEPTH_COLUMN_ROW}             # 5
  tensors:                                                        # 6
    InputTensor: {DataType: UINT8, Sizes: [1, 1, 1, 2]}           # 7
    OutputTensor: {DataType: UINT8, Sizes: [1, 1, 1, 2]}          # 8
  inputs:                                                         # 9
    InputTensor: {values: [7, 8]}                                 # 10
  expected: {OutputTensor: reference}                             # 11
cases:                                                            # 12
  - id: t/defaults/plain                                          # 13
    spec: {page: dml-strides}                                     # 14
  - id: t/defaults/override                                       # 15
    spec: {page: dml-strides}                                     # 16
    feature_level: "5_0"                                          # 17
    inputs: {InputTensor: {values: [[[[9, 10]]]]}}                # 18
"""

SHA = "a" * 64  # a well-formed sha256 (the loader checks its presence, the runner its value)


def edit(text: str, old: str, new: str) -> str:
    """text with the one occurrence of old replaced (a test typo fails loudly here)."""
    assert text.count(old) == 1, f"{old!r} occurs {text.count(old)} times"
    return text.replace(old, new)


def fault(text: str, line: int, old: str, new: str) -> str:
    """text with old replaced by new on the given line (1-based) only."""
    lines = text.splitlines(keepends=True)
    lines[line - 1] = edit(lines[line - 1], old, new)
    return "".join(lines)


def write(tmp_path: Path, text: str, name: str = "case.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def load_error(path: Path) -> CaseFileError:
    with pytest.raises(CaseFileError) as info:  # any other exception fails the test
        load_file(path)
    return info.value


def assert_error(err: CaseFileError, path: Path, line: int, *needles: str) -> None:
    assert err.path == str(path)
    assert err.line == line, str(err)
    assert str(err) == f"{path}:{line}: {err.message}"
    for needle in needles:
        assert needle in err.message, str(err)


# -- the committed cases ------------------------------------------------------------------------
def committed_files() -> list[Path]:
    return sorted(p for p in CASES.rglob("*") if p.suffix in (".yaml", ".yml"))


@functools.cache
def committed() -> dict[Path, list]:
    """Every committed case file and its cases, loaded once for all the tests here."""
    return {p: load_file(p) for p in committed_files()}


@pytest.mark.integration  # every committed file
def test_every_committed_case_file_loads_with_unique_ids() -> None:
    assert committed_files(), "no case files under cases/"
    per_file = committed()
    for path, cases in per_file.items():
        assert cases, f"{path} holds no case"
        for case in cases:
            assert case.file == str(path)
            # ids name the folder under cases/ first (documented/<page or topic>/<example>)
            assert case.id.split("/")[0] == path.relative_to(CASES).parts[0], case.id
    ids = [c.id for cases in per_file.values() for c in cases]
    assert len(ids) == len(set(ids)), sorted(i for i in ids if ids.count(i) > 1)
    assert [c.id for c in load_cases([CASES])] == ids  # load_cases: the same, in file order


# every committed case file through jsonschema: 20-30 s, CI's certification step
@pytest.mark.certification
def test_every_committed_case_validates_against_the_schema_file() -> None:
    schema = json.loads(SCHEMA.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    whole = jsonschema.Draft202012Validator(schema)
    one = jsonschema.Draft202012Validator(
        {"$schema": schema["$schema"], "$defs": schema["$defs"], "$ref": "#/$defs/case"})
    checked = 0
    for path in committed_files():
        doc = yaml.load(path.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
        whole.validate(doc)
        for item in doc["cases"]:
            merged = {**doc.get("defaults", {}), **item}
            one.validate(merged)
            checked += 1
    assert checked == sum(len(cases) for cases in committed().values())
    assert checked > 0


def test_the_schema_exists_once_and_the_docs_link_to_it() -> None:
    copies = [str(p.relative_to(ROOT)) for p in ROOT.rglob("*.schema.json")
              if not any(part in (".git", "build") or part.startswith(".venv")
                         for part in p.relative_to(ROOT).parts)]
    assert copies == ["conformance/casefile/case.schema.json"]
    assert schema() == json.loads(SCHEMA.read_text())  # the loader's is that file
    page = (ROOT / "docs" / "case-format.md").read_text(encoding="utf-8")
    assert "](../conformance/casefile/case.schema.json)" in page
    assert (ROOT / "docs" / "../conformance/casefile/case.schema.json").resolve() == SCHEMA


@pytest.mark.integration  # every committed generated input made and hashed: 8 s
def test_committed_generated_inputs_hash_to_their_recorded_sha256() -> None:
    """Also made chunk by chunk: the committed inputs of several chunks, by each generator
    they use, give the bytes recorded when they were made in one pass."""
    generated = 0
    several_chunks: set[str] = set()
    for case in (c for cases in committed().values() for c in cases):
        for ref, source in case.inputs.items():
            if source.kind in sources.GENERATED:
                desc = case.desc(ref)
                values = sources.generate(source.kind, source.params, desc)
                assert sources.sha256(values) == source.sha256, f"{case.id} {ref}"
                generated += 1
                if desc.element_count > 2 * sources.CHUNK:
                    assert sources.generated_sha256(source.kind, source.params, desc) == (
                        source.sha256), f"{case.id} {ref}"
                    several_chunks.add(source.params["distribution"] if source.kind == "random"
                                       else source.kind)
    assert generated >= 1
    assert {"bits", "uniform", "integers"} <= several_chunks, several_chunks


def test_the_worked_example_of_the_format_doc_loads(tmp_path: Path) -> None:
    doc = (ROOT / "docs" / "case-format.md").read_text()
    blocks = [b.split("```")[0] for b in doc.split("```yaml\n")[1:]]
    examples = [b for b in blocks if b.startswith("cases:")]
    assert examples, "docs/case-format.md has no complete case file"
    for i, text in enumerate(examples):
        for case in load_file(write(tmp_path, text, f"doc{i}.yaml")):
            for ref, source in case.inputs.items():
                if source.sha256:
                    values = sources.generate(source.kind, source.params, case.desc(ref))
                    assert sources.sha256(values) == source.sha256, f"{case.id} {ref}"
    # and the page points to the one schema, the loader's
    assert "](../conformance/casefile/case.schema.json)" in doc


# -- malformed files: one CaseFileError each, at the right line ----------------------------------
LAYOUT = "    layout:\n      InputTensor:\n        minimum_size_bytes: 6\n"  # lines 15-17

MALFORMED = [
    # (name, text, line, words the message must hold)
    ("tab", fault(VALID, 4, "    operator", "\toperator"), 4, ["not valid YAML"]),
    ("indentation", fault(VALID, 4, "    operator", "      operator"), 4, ["not valid YAML"]),
    ("unclosed bracket", fault(VALID, 9, "[1, 1, 2, 3]}", "[1, 1, 2, 3}"), 9, ["not valid YAML"]),
    ("top level a list", "# a list is not a case file\n- id: t/x\n  spec: x\n", 2,
     ["mapping with a 'cases' list"]),
    ("top level a scalar", "just text\n", 1, ["mapping with a 'cases' list"]),
    ("empty file", "", 1, ["mapping with a 'cases' list"]),
    ("no cases", "defaults:\n  tags: [a]\n", 1, ["'cases' is a required property"]),
    ("unknown top-level key", "# one\ncases: []\ncasse: []\n", 3, ["unknown key 'casse'"]),
    ("case without id", fault(VALID, 2, "id: t/one", "tags: [x]"), 2,
     ["'id' is a required property"]),
    ("typo in a case key", fault(VALID, 7, "attributes", "atributes"), 7,
     ["unknown key 'atributes'", "allowed here", "attributes"]),
    ("typo in a source key", fault(VALID, 12, "values", "valeus"), 12, ["unknown key 'valeus'"]),
    ("typo in a desc key", fault(VALID, 9, "Sizes", "Size"), 9, ["'Sizes' is a required property"]),
    ("duplicate key", fault(VALID, 5, "feature_level", "description"), 5,
     ["duplicate key 'description'"]),
    ("unknown operator", fault(VALID, 4, "DEPTH_TO_SPACE1", "DEPTH_TO_SPACE7"), 4,
     ["unknown operator 'DEPTH_TO_SPACE7'"]),
    ("unknown DataType", fault(VALID, 9, "UINT8", "UINT9"), 9,
     ["DataType", "'UINT9' is not one of"]),
    ("values shaped unlike Sizes", fault(VALID, 12, "[1, 2, 3, 4, 5, 6]", "[[1, 2], [3, 4]]"), 12,
     ["values has shape [2, 2]", "Sizes are [1, 1, 2, 3]"]),
    ("values ragged", fault(VALID, 12, "[1, 2, 3, 4, 5, 6]", "[[[[1, 2, [3]], [4, 5, 6]]]]"), 12,
     ["values", "[3] is not an integer of UINT8"]),
    ("float values ragged", fault(RESAMPLE1, 15, "[1, 2]", "[[[[1, [2]]]]]"), 15,
     ["values", "cannot make FLOAT32 values", "sequence"]),
    ("integer out of range", fault(VALID, 12, "6]", "256]"), 12, ["256 is out of range for UINT8"]),
    ("integer not whole", fault(VALID, 12, "6]", "6.5]"), 12, ["6.5 is not an integer of UINT8"]),
    ("constant out of range", fault(VALID, 12, "values: [1, 2, 3, 4, 5, 6]",
                                    f"constant: -1, sha256: {SHA}"), 12,
     ["constant: -1 is out of range for UINT8"]),
    ("iota with a fractional step on an integer type",
     fault(VALID, 12, "values: [1, 2, 3, 4, 5, 6]", "iota: {start: 1, step: 0.5}"), 12,
     ["iota on UINT8 needs whole start and step"]),
    ("iota with a fractional start and a sha256",  # refused at load, not when it runs
     fault(VALID, 12, "values: [1, 2, 3, 4, 5, 6]", f"iota: {{start: 0.5}}, sha256: {SHA}"), 12,
     ["iota on UINT8 needs whole start and step"]),
    ("two sources for one input", fault(VALID, 12, "}", ", constant: 1}"), 12,
     ["(constant, values) is not one of the allowed forms"]),
    ("unknown random distribution", fault(VALID, 12, "values: [1, 2, 3, 4, 5, 6]",
                                          "random: {seed: 1, distribution: gauss}"), 12,
     ["distribution", "'gauss' is not one of"]),
    ("data type above the feature level", VALID.replace("UINT8", "UINT64"), 5,
     ["feature_level 2_1 is below the 5_0", "DEPTH_TO_SPACE1"]),
    ("no level takes the descs", fault(VALID, 9, "[1, 1, 2, 3]", "[1, 1, 1, 2, 3]"), 5,
     ["at no feature level", "'rejected'"]),
    ("unknown feature level", fault(VALID, 5, "2_1", "2_5"), 5, ["unknown feature level '2_5'"]),
    ("unquoted feature level", fault(VALID, 5, '"2_1"', "2_1"), 5,
     ["feature_level", "YAML reads an unquoted 2_1 as 21", 'feature_level: "2_1"']),
    ("unknown feature_level_below", fault(VALID, 3, "description: a valid single-call case",
                                          'feature_level_below: "7_7"'), 3,
     ["unknown feature level '7_7'"]),
    ("unknown attribute", fault(VALID, 7, "}", ", Mode: 1}"), 7,
     ["DEPTH_TO_SPACE1 has no attribute Mode"]),
    ("missing attribute", fault(VALID, 7, ", Order: DEPTH_COLUMN_ROW", ""), 7,
     ["needs attribute Order"]),
    ("unknown enum name", fault(VALID, 7, "DEPTH_COLUMN_ROW", "ROW_COLUMN"), 7,
     ["Order 'ROW_COLUMN' is not one of"]),
    ("scales and offsets of different lengths", fault(RESAMPLE1, 9, "0.5, 0.5]", "0.5]"), 6,
     ["Scales has 4", "InputPixelOffsets has 3"]),
    ("DimensionCount differing from Scales", fault(RESAMPLE1, 8, "[1, 1, 2, 2]",
                                                   "[1, 1, 2, 2]\n      DimensionCount: 3"), 6,
     ["DimensionCount 3 differs from the 4 Scales"]),
    ("unknown tensor name in a call", fault(VALID, 10, "OutputTensor", "OutTensor"), 7,
     ["unknown: OutTensor", "missing: OutputTensor"]),
    ("input ref naming no tensor", fault(VALID, 12, "InputTensor", "Input"), 12,
     ["'Input' names no tensor of this case"]),
    ("input without a source", fault(VALID, 12, "InputTensor: {values: [1, 2, 3, 4, 5, 6]}", "{}"),
     11, ["input InputTensor has no source in 'inputs'"]),
    ("expected naming an input", fault(VALID, 14, "OutputTensor", "InputTensor"), 14,
     ["'InputTensor' is an input tensor, not an output"]),
    ("expected values out of range", fault(VALID, 14, "reference", "{values: [1, 2, 3, 4, 5, -6]}"),
     14, ["-6 is out of range for UINT8"]),
    ("case expecting nothing", VALID.split("    expected:")[0], 2, ["the case expects nothing"]),
    ("layout contradicting the tensor model", VALID + LAYOUT, 16,
     ["layout of InputTensor", "DMLCalcBufferTensorSize gives 8, the spec states 6"]),
    ("layout offset contradicting the strides", VALID + LAYOUT.replace(
        "minimum_size_bytes: 6", "offsets: [{index: [0, 0, 1, 0], offset: 2}]"), 16,
     ["element [0, 0, 1, 0] is at offset 3, the spec states 2"]),
    ("layout of a desc whose Strides and Sizes differ in length",
     fault(VALID, 9, "[1, 1, 2, 3]", "[1, 1, 2, 3], Strides: [3, 1]")
     + LAYOUT.replace("minimum_size_bytes: 6", "packed: true"), 16,
     ["Strides has 2 entries for 4 Sizes"]),
    ("unknown spec page", fault(VALID, 6, "DML_DEPTH_TO_SPACE1_OPERATOR_DESC", "DML_NO_SUCH_DESC"),
     6, ["unknown spec page 'DML_NO_SUCH_DESC'", "known: "]),
    ("operator and calls both", fault(VALID, 3, "description: a valid single-call case",
                                      "calls: []"), 2, ["not one of the allowed forms"]),
    ("duplicate call names", fault(CHAINED, 15, "name: b", "name: a"), 15,
     ["two calls are named 'a'"]),
    ("from naming a later call", fault(CHAINED, 6, "values: [0, 1, 2, 3]", "from: b.OutputTensor"),
     6, ["'b.OutputTensor' is not a tensor of an earlier call"]),
    ("from naming a tensor of other Sizes", fault(CHAINED, 7, "a.OutputTensor", "a.InputTensor"),
     7, ["'a.InputTensor' gives Sizes [1, 4, 1, 1]", "b.InputTensor has [1, 1, 2, 2]"]),
    ("rejected case with two calls", fault(fault(
        CHAINED, 22, "b.OutputTensor: {values: [0, 1, 2, 3]}", ""), 21, "expected:",
        "expected: rejected"), 21, ["a rejected case has exactly one call"]),
    ("relation naming no tensor",
     CHAINED + "    relations:\n      - equal: [a.InputTensor, b.X]\n", 24,
     ["'b.X' names no tensor of this case"]),
    ("error inside the defaults", fault(WITH_DEFAULTS, 5, "Order", "Ordr"), 5,
     ["has no attribute Ordr"]),
    ("unknown key inside the defaults", fault(WITH_DEFAULTS, 4, "tags", "tag"), 4,
     ["unknown key 'tag'"]),
    ("level from the defaults too low", fault(WITH_DEFAULTS, 7, "UINT8", "UINT64"), 3,
     ["feature_level 2_1 is below the 5_0"]),
    ("block-style spec list", fault(VALID, 6, "spec: {page: DML_DEPTH_TO_SPACE1_OPERATOR_DESC, "
                                              "section: E}",
                                    "spec:\n      - {page: NOTES}\n      - {page: BAD_PAGE}"),
     8, ["unknown spec page 'BAD_PAGE'"]),
]


@pytest.mark.parametrize(("text", "line", "needles"), [m[1:] for m in MALFORMED],
                         ids=[m[0] for m in MALFORMED])
def test_malformed_file(tmp_path: Path, text: str, line: int, needles: list[str]) -> None:
    path = write(tmp_path, text)
    assert_error(load_error(path), path, line, *needles)


def test_the_malformed_files_differ_from_valid_ones_only_by_their_fault(tmp_path: Path) -> None:
    for text in (VALID, CHAINED, RESAMPLE1, WITH_DEFAULTS):
        assert load_file(write(tmp_path, text))


GENERATED_SOURCES = [
    ("random", "random: {seed: 3, distribution: uniform, low: 0, high: 9}"),
    ("iota", "iota: {start: 250, step: 1}"),
    ("constant", "constant: 5"),
]


@pytest.mark.parametrize(("kind", "spec"), GENERATED_SOURCES, ids=[k for k, _ in GENERATED_SOURCES])
def test_generated_input_without_sha256_gives_the_hash_to_record(
        tmp_path: Path, kind: str, spec: str) -> None:
    path = write(tmp_path, fault(VALID, 12, "values: [1, 2, 3, 4, 5, 6]", spec))
    err = load_error(path)
    params = yaml.safe_load(spec)[kind]
    want = sources.sha256(sources.generate(kind, params, TensorDesc(DataType.UINT8, (1, 1, 2, 3))))
    assert_error(err, path, 12, "generated input needs its sha256", f"hash to {want}")
    # recording that hash makes the file load
    fixed = fault(VALID, 12, "values: [1, 2, 3, 4, 5, 6]", f"{spec}, sha256: {want}")
    (case,) = load_file(write(tmp_path, fixed))
    assert case.inputs[f"{SINGLE}.InputTensor"] == Source(kind, params, want)


# VALID as a case whose desc must be rejected (no expected outputs; line 14 left empty).
REJECTED = fault(fault(VALID, 13, "expected:", "expected: rejected"), 14, "OutputTensor: reference",
                 "")


def test_generated_input_too_large_to_hash_is_an_error_not_a_crash(tmp_path: Path) -> None:
    huge = fault(REJECTED, 9, "[1, 1, 2, 3]", "[65536, 65536, 65536, 65536]")
    text = fault(huge, 12, "values: [1, 2, 3, 4, 5, 6]", "random: {seed: 1, distribution: bits}")
    path = write(tmp_path, text)
    assert_error(load_error(path), path, 12, "needs its sha256", "too many to generate")
    # with its sha256 recorded nothing is generated at load (the runner never makes it either)
    text = fault(huge, 12, "values: [1, 2, 3, 4, 5, 6]", f"constant: 1, sha256: {SHA}")
    (case,) = load_file(write(tmp_path, text))
    assert case.rejected and case.inputs["call.InputTensor"].sha256 == SHA


def test_python_tags_are_refused_and_never_run(tmp_path: Path) -> None:
    marker = tmp_path / "created-by-yaml"
    text = fault(VALID, 12, "{values: [1, 2, 3, 4, 5, 6]}",
                 f"!!python/object/apply:os.mkdir [{str(marker)!r}]")
    path = write(tmp_path, text)
    assert_error(load_error(path), path, 12, "YAML tag !!python/object/apply:os.mkdir is not "
                 "allowed: case files hold plain data")
    assert not marker.exists()
    path = write(tmp_path, "# a python object\ncases: !!python/object:collections.OrderedDict {}\n")
    assert_error(load_error(path), path, 2, "YAML tag !!python/object:collections.OrderedDict is "
                 "not allowed")


def test_duplicate_case_ids_across_two_files(tmp_path: Path) -> None:
    first = write(tmp_path, VALID, "a.yaml")
    second = write(tmp_path, "# the same id again\n" + VALID, "b.yaml")
    with pytest.raises(CaseFileError) as info:
        load_cases([tmp_path])
    assert_error(info.value, second, 3, "case id 't/one' is already used", f"{first}:2")
    # each file alone is fine
    assert len(load_file(first)) == len(load_file(second)) == 1


def test_duplicate_case_ids_in_one_file(tmp_path: Path) -> None:
    two = VALID + "".join(VALID.splitlines(keepends=True)[1:])
    path = write(tmp_path, two)
    with pytest.raises(CaseFileError) as info:
        load_cases([path])
    assert_error(info.value, path, 15, "case id 't/one' is already used", f"{path}:2")


def test_missing_and_unreadable_paths(tmp_path: Path) -> None:
    with pytest.raises(CaseFileError) as info:
        load_cases([tmp_path / "nowhere"])
    assert "no such file or folder" in str(info.value)
    path = tmp_path / "latin1.yaml"
    path.write_bytes(b"cases: [\xff]\n")
    assert_error(load_error(path), path, 1, "not UTF-8 text: byte 0xff in column 9")
    with pytest.raises(CaseFileError) as info:
        load_file(tmp_path)  # a folder
    assert info.value.message.startswith("not a regular file: it is a folder")
    (tmp_path / "broken.yaml").symlink_to(tmp_path / "gone.yaml")
    with pytest.raises(CaseFileError) as info:
        load_file(tmp_path / "broken.yaml")
    assert info.value.message.startswith("cannot read: ")


# -- the model the loader builds ------------------------------------------------------------------
def test_defaults_are_merged_and_a_case_key_wins(tmp_path: Path) -> None:
    plain, override = load_file(write(tmp_path, WITH_DEFAULTS))
    assert plain.id == "t/defaults/plain" and plain.line == 13
    assert plain.feature_level == FeatureLevel.FL_2_1
    assert plain.tags == ("from-defaults",)
    assert plain.calls[0].call.operator == "DEPTH_TO_SPACE1"
    assert plain.inputs[f"{SINGLE}.InputTensor"] == Source("values", [7, 8])
    assert override.feature_level == FeatureLevel.FL_5_0
    assert override.tags == ("from-defaults",)
    # the merge is shallow: the case's 'inputs' replaces the defaults' 'inputs' as a whole
    assert override.inputs == {f"{SINGLE}.InputTensor": Source("values", [[[[9, 10]]]])}
    assert override.raw["inputs"] == {"InputTensor": {"values": [[[[9, 10]]]]}}
    assert plain.raw["feature_level"] == "2_1" and override.raw["feature_level"] == "5_0"


def test_yaml_merge_keys_may_be_overridden_but_own_keys_not_repeated(tmp_path: Path) -> None:
    text = fault(VALID, 3, "description: a valid single-call case",
                 "<<: {description: merged, tags: [merged]}\n    description: own")
    (case,) = load_file(write(tmp_path, text))
    assert case.description == "own" and case.tags == ("merged",)
    path = write(tmp_path, text.replace("description: own", "description: own\n    tags: []\n"
                                        "    description: again"))
    assert_error(load_error(path), path, 6, "duplicate key 'description'")


def test_single_call_shorthand_is_the_calls_form_with_one_call_named_call(tmp_path: Path) -> None:
    (short,) = load_file(write(tmp_path, VALID))
    long_form = """\
cases:
  - id: t/one
    description: a valid single-call case
    feature_level: "2_1"
    spec: {page: DML_DEPTH_TO_SPACE1_OPERATOR_DESC, section: E}
    calls:
      - name: call
        operator: DEPTH_TO_SPACE1
        attributes: {BlockSize: 1, Order: DEPTH_COLUMN_ROW}
        tensors:
          InputTensor: {DataType: UINT8, Sizes: [1, 1, 2, 3]}
          OutputTensor: {DataType: UINT8, Sizes: [1, 1, 2, 3]}
    inputs:
      call.InputTensor: {values: [1, 2, 3, 4, 5, 6]}
    expected:
      call.OutputTensor: reference
"""
    (long,) = load_file(write(tmp_path, long_form, "long.yaml"))
    assert SINGLE == "call"
    assert [c.name for c in short.calls] == ["call"]
    assert short.calls == long.calls
    assert short.inputs == long.inputs == {"call.InputTensor": Source("values", [1, 2, 3, 4, 5, 6])}
    assert short.expected == long.expected == {"call.OutputTensor": Expectation("reference")}
    assert short.operators == ("DEPTH_TO_SPACE1",)
    assert short.show_ref("call.OutputTensor") == "OutputTensor"
    assert short.desc("call.InputTensor") == TensorDesc(DataType.UINT8, (1, 1, 2, 3))
    assert not short.rejected
    # in the shorthand a ref may also be written whole
    (whole,) = load_file(write(tmp_path, fault(VALID, 12, "InputTensor", "call.InputTensor")))
    assert whole.inputs == short.inputs


def test_calls_form_chains_with_from(tmp_path: Path) -> None:
    (case,) = load_file(write(tmp_path, CHAINED))
    assert [c.name for c in case.calls] == ["a", "b"]
    assert case.operators == ("DEPTH_TO_SPACE1", "SPACE_TO_DEPTH1")
    assert case.inputs["b.InputTensor"] == Source("from", "a.OutputTensor")
    assert case.inputs["a.InputTensor"] == Source("values", [0, 1, 2, 3])
    assert case.expected == {"b.OutputTensor": Expectation("values", [0, 1, 2, 3])}
    assert case.show_ref("b.OutputTensor") == "b.OutputTensor"  # two calls: refs stay whole
    assert case.call("b").tensors["InputTensor"].sizes == (1, 1, 2, 2)
    # unnamed calls are c0, c1, ...
    unnamed = fault(fault(CHAINED, 9, "- name: a", "-"), 15, "- name: b", "-")
    unnamed = unnamed.replace("a.", "c0.").replace("b.", "c1.")
    (case,) = load_file(write(tmp_path, unnamed, "unnamed.yaml"))
    assert [c.name for c in case.calls] == ["c0", "c1"]
    assert case.inputs["c1.InputTensor"] == Source("from", "c0.OutputTensor")


def test_expectations_rejected_relations_and_ulp(tmp_path: Path) -> None:
    (case,) = load_file(write(tmp_path, fault(REJECTED, 12, "InputTensor: {values: "
                                                            "[1, 2, 3, 4, 5, 6]}", "{}")))
    assert case.rejected and case.expected is None and case.inputs == {}

    floats = fault(RESAMPLE1, 17, "reference", "{values: [1, 1, 2, 2, 1, 1, 2, 2], ulp: 2}")
    (case,) = load_file(write(tmp_path, floats))
    assert case.expected == {
        "call.OutputTensor": Expectation("values", [1, 1, 2, 2, 1, 1, 2, 2], 2)}
    bits = fault(RESAMPLE1, 15, "values: [1, 2]", "bits: ['0x3f800000', 0x40000000]")
    (case,) = load_file(write(tmp_path, bits))
    assert sources.from_bits(case.inputs["call.InputTensor"].params,
                             case.desc("call.InputTensor")).ravel().tolist() == [1.0, 2.0]

    related = fault(CHAINED, 21, "    expected:", "    relations:\n"
                    "      - {equal: [a.InputTensor, b.OutputTensor], why: round trip}\n"
                    "    expected:")
    (case,) = load_file(write(tmp_path, related))
    assert case.relations == (Relation("a.InputTensor", "b.OutputTensor", "round trip"),)
    only_relations = related.split("    expected:")[0]
    (case,) = load_file(write(tmp_path, only_relations))
    assert case.expected == {} and len(case.relations) == 1


def test_feature_level_below_ambiguous_tags_and_spec_list(tmp_path: Path) -> None:
    text = fault(VALID, 3, "description: a valid single-call case",
                 'feature_level_below: "5_0"\n    ambiguous: the page is silent\n    tags: [a, b]')
    text = edit(text, "{page: DML_DEPTH_TO_SPACE1_OPERATOR_DESC, section: E}",
                "[{page: DML_DEPTH_TO_SPACE1_OPERATOR_DESC, section: E}, {page: NOTES}]")
    (case,) = load_file(write(tmp_path, text))
    assert case.feature_level_below == FeatureLevel.FL_5_0
    assert case.ambiguous == "the page is silent"
    assert case.tags == ("a", "b")
    assert [str(c) for c in case.spec] == ["DML_DEPTH_TO_SPACE1_OPERATOR_DESC § E", "NOTES"]


def test_layout_facts_that_hold_load(tmp_path: Path) -> None:
    text = fault(VALID, 9, "[1, 1, 2, 3]", "[1, 1, 2, 3], Strides: [6, 6, 3, 1]")
    text = fault(text, 12, "values: [1, 2, 3, 4, 5, 6]", "buffer: [65, 66, 67, 68, 69, 70]")
    text += ("    layout:\n"
             "      InputTensor:\n"
             "        strides: [6, 6, 3, 1]\n"
             "        packed: true\n"
             "        minimum_size_bytes: 8\n"
             "        offsets: [{index: [0, 0, 1, 0], offset: 3, value: D}]\n")
    (case,) = load_file(write(tmp_path, text))
    assert case.layout == {"InputTensor": {"strides": [6, 6, 3, 1], "packed": True,
                                           "minimum_size_bytes": 8, "offsets": [
                                               {"index": [0, 0, 1, 0], "offset": 3, "value": "D"}]}}
    path = write(tmp_path, text.replace("value: D", "value: E"))
    assert_error(load_error(path), path, 16, "offset 3 holds 68 in the buffer, the spec states 69")
    path = write(tmp_path, text.replace("packed: true", "packed: false"))
    assert_error(load_error(path), path, 16, "packed is True, the spec states False")


# -- selection and the case-set hash --------------------------------------------------------------
def cases_with_ids(tmp_path: Path, *ids: str) -> list:
    body = "".join(VALID.splitlines(keepends=True)[1:])
    text = "cases:\n" + "".join(body.replace("t/one", i) for i in ids)
    return load_file(write(tmp_path, text, "ids.yaml"))


def test_select_by_substring_and_glob(tmp_path: Path) -> None:
    cases = cases_with_ids(tmp_path, "documented/depth_to_space/example",
                           "documented/depth_to_space1/example-1", "documented/resample1/remark",
                           "regressions/resample1/issue-7")

    def ids(*patterns: str) -> list[str]:
        return [c.id for c in select(cases, list(patterns))]

    assert ids() == [c.id for c in cases]
    assert ids("depth_to_space") == ["documented/depth_to_space/example",
                                     "documented/depth_to_space1/example-1"]
    assert ids("depth_to_space/") == ["documented/depth_to_space/example"]
    assert ids("resample1") == ["documented/resample1/remark", "regressions/resample1/issue-7"]
    assert ids("documented/*/example") == ["documented/depth_to_space/example"]
    assert ids("*example*") == ["documented/depth_to_space/example",
                                "documented/depth_to_space1/example-1"]
    assert ids("documented/depth_to_space?/*") == ["documented/depth_to_space1/example-1"]
    assert ids("regressions/[r]*") == ["regressions/resample1/issue-7"]
    assert ids("issue-7", "remark") == ["documented/resample1/remark",
                                        "regressions/resample1/issue-7"]  # any, in case order
    assert ids("Depth_To_Space") == []  # case-sensitive
    assert ids("nothing-like-this") == []
    assert ids("depth_to_space/*") == []  # a glob matches the whole id, not a part


def test_case_set_hash_follows_content_not_order(tmp_path: Path) -> None:
    a = write(tmp_path, VALID, "a.yaml")
    b = write(tmp_path, CHAINED, "b.yaml")
    base = case_set_hash(load_cases([a, b]))
    assert len(base) == 64 and int(base, 16) >= 0
    assert case_set_hash(load_cases([b, a])) == base
    assert case_set_hash(list(reversed(load_cases([a, b])))) == base
    # comments, spacing, key order and flow or block style change nothing
    a.write_text("# a comment\n" + fault(VALID, 5, '"2_1"', '   "2_1"  # spaced'))
    assert case_set_hash(load_cases([a, b])) == base
    moved = fault(CHAINED, 6, "      a.InputTensor: {values: [0, 1, 2, 3]}", "")
    moved = fault(moved, 7, "{from: a.OutputTensor}",
                  "{from: a.OutputTensor}\n      a.InputTensor:\n        values: [0, 1, 2, 3]")
    b.write_text(moved)
    assert case_set_hash(load_cases([a, b])) == base

    changes = [
        (a, fault(VALID, 12, "6]", "7]")),
        (a, fault(VALID, 3, "a valid single-call case", "another description")),
        (a, fault(VALID, 6, "section: E", "section: F")),
        (a, fault(VALID, 14, "reference", "{values: [1, 2, 3, 4, 5, 6]}")),
        (b, fault(CHAINED, 22, "{values: [0, 1, 2, 3]}", "reference")),
        (b, fault(CHAINED, 2, "t/chain", "t/chain2")),
    ]
    seen = {base}
    for path, text in changes:
        original = path.read_text()
        path.write_text(text)
        changed = case_set_hash(load_cases([a, b]))
        assert changed not in seen, text
        seen.add(changed)
        path.write_text(original)
    assert case_set_hash(load_cases([a, b])) == base
    assert case_set_hash(load_cases([a])) != base  # a case fewer


def test_a_change_in_the_defaults_changes_the_hash(tmp_path: Path) -> None:
    path = write(tmp_path, WITH_DEFAULTS)
    before = case_set_hash(load_file(path))
    path.write_text(fault(WITH_DEFAULTS, 10, "[7, 8]", "[7, 9]"))
    assert case_set_hash(load_file(path)) != before


# -- input sources ---------------------------------------------------------------------------------
F32 = TensorDesc(DataType.FLOAT32, (2, 3))
I8 = TensorDesc(DataType.INT8, (2, 3))

#: Pinned: the bytes of seed 7 on a FLOAT32 [2, 3] tensor. A change here means NumPy's PCG64
#: streams (or the distributions built on them) drifted, and every recorded sha256 with them.
PINNED = [
    ({"seed": 7, "distribution": "uniform", "low": -1, "high": 1}, F32,
     "4c7226d31852b34be5323ec45e699f1aa28f8c42fb38285aefdf40bc9ee7d33d"),
    ({"seed": 7, "distribution": "normal", "mean": 1, "std": 2}, F32,
     "21b9c586d101773057f144ef2499eb0799e66f90b543b5ab76b3521c711f375f"),
    ({"seed": 7, "distribution": "bits"}, F32,
     "e0811cf1eff4701a8fb2451af23ebf12540864ab3a6c7a7df79ed51ada071b9c"),
    ({"seed": 7, "distribution": "integers", "low": -5, "high": 5}, F32,
     "661ecf1c87f9de3ee6de7e5387576e6cba12928162615efa5c0671a14d761fe6"),
    ({"seed": 7, "distribution": "integers"}, I8,
     "8ad51152c223b1c496e5744b5e5bff06aaf3066b968dfa542102d53134599b20"),
]


@pytest.mark.parametrize(("params", "desc", "digest"), PINNED,
                         ids=[f"{p['distribution']}-{d.data_type.name}" for p, d, _ in PINNED])
def test_random_sha256_is_pinned(params: dict, desc: TensorDesc, digest: str) -> None:
    values = sources.generate("random", params, desc)
    assert values.dtype == desc.data_type.numpy_dtype and values.shape == desc.sizes
    assert sources.sha256(values) == digest


def test_pinned_uniform_values() -> None:
    values = sources.generate("random", PINNED[0][0], F32)
    want = np.array([0.25019094347953796, 0.7944275736808777, 0.5513713955879211,
                     -0.5495856404304504, -0.3996674418449402, 0.7471069097518921],
                    dtype=np.float32).reshape(2, 3)
    assert values.tobytes() == want.tobytes()


@pytest.mark.parametrize("distribution", ["uniform", "normal", "integers", "bits"])
@pytest.mark.parametrize("desc", [F32, I8, TensorDesc(DataType.UINT16, (3, 1, 2))],
                         ids=["FLOAT32", "INT8", "UINT16"])
def test_random_is_deterministic_per_seed(distribution: str, desc: TensorDesc) -> None:
    params = {"seed": 11, "distribution": distribution}
    first = sources.generate("random", params, desc)
    again = sources.generate("random", dict(params), desc)
    assert first.tobytes() == again.tobytes()
    assert sources.sha256(first) == sources.sha256(again)
    other = sources.generate("random", {**params, "seed": 12}, desc)
    assert sources.sha256(other) != sources.sha256(first)


def test_random_distributions_are_computed_as_documented() -> None:
    """The formulas of docs/case-format.md, recomputed from the raw PCG64 stream."""
    n = 6
    u = np.random.default_rng(5).random(n)
    got = sources.generate("random", {"seed": 5, "distribution": "uniform", "low": 2, "high": 4},
                           F32)
    assert got.tobytes() == (2 + 2 * u).astype(np.float32).reshape(2, 3).tobytes()

    got = sources.generate("random", {"seed": 5, "distribution": "uniform", "low": -3, "high": 3},
                           I8)
    assert got.ravel().tolist() == np.clip(np.rint(-3 + 6 * u), -128, 127).astype(int).tolist()

    got = sources.generate("random", {"seed": 5, "distribution": "integers", "low": 0, "high": 9},
                           I8)
    assert got.ravel().tolist() == [math.floor(10 * x) for x in u]
    assert sources.generate("random", {"seed": 5, "distribution": "integers"}, F32).ravel(
        ).tolist() == [math.floor(-1000 + 2001 * x) for x in u]  # floats: [-1000, 1000]
    assert sources.generate("random", {"seed": 5, "distribution": "integers"}, I8).ravel(
        ).tolist() == [math.floor(-128 + 256 * x) for x in u]  # integers: the type's range

    u2 = np.random.default_rng(5).random(2 * n)
    normal = 1.5 + 0.5 * np.sqrt(-2 * np.log1p(-u2[:n])) * np.cos(2 * np.pi * u2[n:])
    got = sources.generate("random", {"seed": 5, "distribution": "normal", "mean": 1.5,
                                      "std": 0.5}, F32)
    assert got.tobytes() == normal.astype(np.float32).reshape(2, 3).tobytes()
    unit = np.sqrt(-2 * np.log1p(-u2[:n])) * np.cos(2 * np.pi * u2[n:])
    got = sources.generate("random", {"seed": 5, "distribution": "normal"}, F32)  # 0, 1
    assert got.tobytes() == unit.astype(np.float32).reshape(2, 3).tobytes()

    raw = np.random.default_rng(5).bytes(n * 4)
    got = sources.generate("random", {"seed": 5, "distribution": "bits"}, F32)
    assert got.tobytes() == raw


def test_iota_and_constant() -> None:
    assert sources.generate("iota", {}, I8).tolist() == [[0, 1, 2], [3, 4, 5]]
    got = sources.generate("iota", {"start": 0.5, "step": -0.25}, F32)
    assert got.ravel().tolist() == [0.5, 0.25, 0.0, -0.25, -0.5, -0.75]
    assert sources.generate("iota", {"start": 125}, I8).ravel().tolist() == [
        125, 126, 127, -128, -127, -126]  # integer types wrap
    u8 = TensorDesc(DataType.UINT8, (4,))
    assert sources.generate("iota", {"start": 254, "step": 1}, u8).tolist() == [254, 255, 0, 1]
    assert sources.generate("iota", {"start": 1, "step": 3}, u8).tolist() == [1, 4, 7, 10]
    for desc in (F32, I8, u8):
        for kind, params in (("iota", {"start": 3, "step": 2}), ("constant", 7)):
            once = sources.generate(kind, params, desc)
            assert once.dtype == desc.data_type.numpy_dtype and once.shape == desc.sizes
            assert sources.sha256(once) == sources.sha256(sources.generate(kind, params, desc))
    assert sources.generate("constant", -3, I8).tolist() == [[-3] * 3] * 2
    nan = sources.generate("constant", "nan", F32)
    assert np.isnan(nan).all()
    assert sources.generate("constant", "-0.0", F32).view(np.uint32).tolist() == [[2**31] * 3] * 2
    with pytest.raises(sources.SourceError, match="out of range for INT8"):
        sources.generate("constant", 128, I8)


def test_sha256_is_of_the_packed_little_endian_bytes() -> None:
    values = sources.generate("iota", {"start": 1}, TensorDesc(DataType.UINT16, (2, 2)))
    import hashlib
    assert sources.sha256(values) == hashlib.sha256(bytes([1, 0, 2, 0, 3, 0, 4, 0])).hexdigest()
    assert sources.sha256(values.T) == hashlib.sha256(bytes([1, 0, 3, 0, 2, 0, 4, 0])).hexdigest()


def test_values_bits_and_buffer_sources() -> None:
    desc = TensorDesc(DataType.FLOAT32, (1, 2))
    assert sources.from_values([[1, "inf"]], desc).tolist() == [[1.0, math.inf]]
    assert sources.from_values([1, "-inf"], desc).tolist() == [[1.0, -math.inf]]  # flat is fine
    assert sources.from_bits(["0x7fc00000", 0x3F800000], desc).view(np.uint32).tolist() == [
        [0x7FC00000, 0x3F800000]]
    with pytest.raises(sources.SourceError, match="shape"):
        sources.from_values([1, 2, 3], desc)
    strided = TensorDesc(DataType.UINT8, (1, 1, 2, 3), (10, 10, 5, 1), 12)
    assert sources.buffer_image([65, 66, 67, 120, 120, 68], strided).tolist() == [
        65, 66, 67, 120, 120, 68]
    with pytest.raises(sources.SourceError, match="TotalTensorSizeInBytes 12 holds 12"):
        sources.buffer_image([0] * 13, strided)


@pytest.mark.parametrize("case_id", ["t/../one", "../one", "./t", "t/.", "..", "t//one", "/t",
                                     "t/"])
def test_an_id_with_an_empty_dot_or_dotdot_segment_is_refused_at_its_line(case_id: str) -> None:
    """An id names the case's folder in `dmlconf export`: a '..' segment would write outside
    it, and 'a/./b' or 'a//b' would share the folder of 'a/b' (issue 24). The schema refuses
    them, naming the id and the rule, at the id's line."""
    with pytest.raises(CaseFileError) as caught:
        load_text(VALID.replace("id: t/one  ", f"id: {case_id}".ljust(len("id: t/one  "))),
                  "t.yaml")
    assert str(caught.value).startswith(f"t.yaml:2: cases/0/id: case id {case_id!r}: ")
    assert "none of them empty, '.' or '..'" in str(caught.value)


@pytest.mark.parametrize("case_id", ["t/..one", "t.x/one..", "a.b/c-d_e"])
def test_dots_inside_a_segment_are_an_ordinary_id(case_id: str) -> None:
    text = VALID.replace("id: t/one  ", f"id: {case_id}".ljust(len("id: t/one  ")))
    assert [c.id for c in load_text(text, "t.yaml")] == [case_id]
