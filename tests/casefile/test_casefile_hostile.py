"""Hostile case files (issue 7): whatever a file holds, loading gives cases or CaseFileErrors
('file:line: what is wrong'), never another exception, and never work or memory out of
proportion to the file.

A Hypothesis fuzz of the loader (arbitrary text and bytes; real case documents with one node
replaced or one key added, holding a hostile value), then one test per kind of hostile input,
then loading with an error list, where the good files and cases still load, and only regular
files are read (a FIFO, a device, a socket is refused without being opened).
"""

from __future__ import annotations

import copy
import json
import math
import os
import socket
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conformance.casefile import (
    MAX_DEPTH,
    MAX_FILE_BYTES,
    MAX_VALUES,
    UNEXPECTED,
    Case,
    CaseFileError,
    load_cases,
    load_file,
    load_text,
)
from tests.support import CASES

NAME = "fuzz.yaml"

# Reproducible in CI: a fixed sequence of examples, no example database. A longer search:
# DMLCONF_FUZZ_EXAMPLES=5000 DMLCONF_FUZZ_RANDOM=1 \
#     python -m pytest tests/casefile/test_casefile_hostile.py
FUZZ = settings(max_examples=int(os.environ.get("DMLCONF_FUZZ_EXAMPLES", "150")),
                derandomize=not os.environ.get("DMLCONF_FUZZ_RANDOM"), deadline=None, database=None,
                suppress_health_check=list(HealthCheck))

VALID = """\
cases:
  - id: t/one
    operator: DEPTH_TO_SPACE1
    feature_level: "2_1"
    spec: {page: DML_DEPTH_TO_SPACE1_OPERATOR_DESC}
    attributes: {BlockSize: 1, Order: DEPTH_COLUMN_ROW}
    tensors:
      InputTensor: {DataType: UINT8, Sizes: [1, 1, 2, 3]}
      OutputTensor: {DataType: UINT8, Sizes: [1, 1, 2, 3]}
    inputs:
      InputTensor: {values: [1, 2, 3, 4, 5, 6]}
    expected:
      OutputTensor: reference
"""  # line 7: attributes, 9: InputTensor, 11: inputs' InputTensor, 13: OutputTensor

RESAMPLE = """\
cases:
  - id: t/resample
    operator: RESAMPLE1
    feature_level: "2_1"
    spec: {page: DML_RESAMPLE1_OPERATOR_DESC}
    attributes:
      InterpolationMode: LINEAR
      Scales: [1, 1, 2, 2]
      InputPixelOffsets: [0.5, 0.5, 0.5, 0.5]
      OutputPixelOffsets: [-0.5, -0.5, -0.5, -0.5]
    tensors:
      InputTensor: {DataType: FLOAT32, Sizes: [1, 1, 1, 2]}
      OutputTensor: {DataType: FLOAT32, Sizes: [1, 1, 2, 4]}
    inputs:
      InputTensor: {values: [1, 2]}
    expected:
      OutputTensor: reference
"""  # line 8: Scales, 12: InputTensor, 15: inputs' InputTensor, 17: OutputTensor


def check(text: str, path: str = NAME) -> list[Case] | CaseFileError:
    """load_text's outcome, asserting it is one of the two allowed ones."""
    try:
        cases = load_text(text, path)
    except CaseFileError as exc:
        assert str(exc).startswith(f"{path}:") or str(exc).startswith(f"{path}: "), str(exc)
        assert exc.path == path and exc.message, str(exc)
        assert UNEXPECTED not in exc.message, f"a check let an exception escape: {exc}"
        return exc
    assert isinstance(cases, list) and all(isinstance(c, Case) for c in cases)
    for case in cases:
        assert len(case.digest()) == 64  # the cases can be hashed, shown and run
    errors: list[CaseFileError] = []
    assert [c.id for c in load_text(text, path, errors)] == [c.id for c in cases] and not errors
    return cases


def error_of(text: str, path: str = NAME) -> CaseFileError:
    got = check(text, path)
    assert isinstance(got, CaseFileError), f"loaded: {got}"
    return got


def assert_error(err: CaseFileError, line: int | None, *needles: str) -> None:
    assert err.line == line, str(err)
    for needle in needles:
        assert needle in err.message, str(err)


# -- fuzzing ---------------------------------------------------------------------------------------
TOKENS = [*"[]{}:,-?&*!|>'\"#%@`\\ \n\t.~<=0123456789abxyzIN", "cases", "defaults", "id",
          ".nan", "!!python/name:os.system", "<<", "&a", "*a", "- ", ": "]
YAMLISH = st.lists(st.sampled_from(TOKENS), max_size=80).map("".join)


@FUZZ
@given(st.one_of(st.text(max_size=300), YAMLISH))
def test_fuzz_any_text(text: str) -> None:
    check(text)


@FUZZ
@given(st.binary(max_size=300))
def test_fuzz_any_bytes(tmp_path_factory: pytest.TempPathFactory, data: bytes) -> None:
    path = tmp_path_factory.mktemp("bytes") / NAME
    path.write_bytes(data)
    try:
        cases = load_file(path)
    except CaseFileError as exc:
        assert str(exc).startswith(f"{path}"), str(exc)
        assert UNEXPECTED not in exc.message, str(exc)
    else:
        assert all(isinstance(c, Case) for c in cases)


def _documents() -> list[Any]:
    """Real case documents: each documented file, and each generated file cut to its first
    two cases (small, so that many mutations run)."""
    docs = []
    for path in sorted((CASES / "documented").glob("*.yaml")):
        docs.append(yaml.load(path.read_text(), Loader=SAFE))
    for path in sorted((CASES / "generated").rglob("*.yaml")):
        doc = yaml.load(path.read_text(), Loader=SAFE)
        doc["cases"] = doc["cases"][:2]
        docs.append(doc)
    return docs


SAFE = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
DOCUMENTS = _documents()


def _nested(depth: int) -> Any:
    out: Any = 0
    for _ in range(depth):
        out = [out]
    return out


HOSTILE = st.one_of(
    st.sampled_from([math.nan, math.inf, -math.inf, -1, 0, 1, 10**30, -(10**30), 2**64, 2**32,
                     2**63, -(2**63) - 1, 0.5, 2.0, 1e308, -0.0, "", "x" * 300, None, True, False,
                     [], {}, [[]], {"a": 1}, "nan", "-inf", "0x" + "f" * 40, "0xzz",
                     [0] * 3000, [[0, 1], [2]], _nested(12), _nested(MAX_DEPTH + 5),
                     ["a", None, 1.5], {"values": [1]}, {"from": "call.OutputTensor"}, "call.X",
                     "rejected", "reference", "DEPTH_TO_SPACE1", "RESAMPLE1", "5_1",
                     {"axis": 0, "indices": [0]}, {"seed": 1.0, "distribution": "integers"}]),
    st.integers(), st.floats(), st.text(max_size=8),
    st.lists(st.one_of(st.integers(), st.floats(), st.text(max_size=3)), max_size=8),
)


def _paths(node: Any, at: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """The paths to every node of a document (iteratively: documents are shallow, but still)."""
    out, todo = [], [(node, at)]
    while todo:
        node, at = todo.pop()
        out.append(at)
        if isinstance(node, dict):
            todo += [(v, (*at, k)) for k, v in node.items()]
        elif isinstance(node, list):
            todo += [(v, (*at, i)) for i, v in enumerate(node)]
    return out


@FUZZ
@given(st.data())
def test_fuzz_mutated_case_documents(data: st.DataObject) -> None:
    doc = copy.deepcopy(data.draw(st.sampled_from(DOCUMENTS), label="document"))
    for _ in range(data.draw(st.integers(1, 3), label="mutations")):
        paths = _paths(doc)
        at = data.draw(st.sampled_from(paths), label="path")
        value = copy.deepcopy(data.draw(HOSTILE, label="value"))  # later mutations may nest
        if not at:
            doc = value
            continue
        parent = doc
        for key in at[:-1]:
            parent = parent[key]
        target = parent[at[-1]]
        if isinstance(target, dict) and data.draw(st.booleans(), label="add a key"):
            key = data.draw(st.sampled_from(["Sizes", "Strides", "BlockSize", "Scales", "take",
                                             "sha256", "ulp", "extra", "TotalTensorSizeInBytes",
                                             "indices", "axis", "index", "offset", "seed"]))
            target[key] = value
        else:
            parent[at[-1]] = value
    check(yaml.safe_dump(doc, default_flow_style=None, sort_keys=False, width=120))


# -- one test per hostile kind ---------------------------------------------------------------------
def test_not_yaml() -> None:
    assert_error(error_of("cases:\n  - [1, 2\n"), 3, "not valid YAML")
    assert_error(error_of("a: b: c\n"), 1, "not valid YAML")


def test_wrong_schema() -> None:
    assert_error(error_of("cases: 3\n"), 1, "cases: 3 is not of type 'array'")
    assert_error(error_of("# a list\n- 1\n"), 2, "a case file is a mapping with a 'cases' list")
    # a huge value in a message is cut short
    err = error_of("cases: [" + ", ".join(["0"] * 5000) + "]\n")
    assert err.line == 1 and len(err.message) < 400, err.message


def test_empty_file_and_empty_documents() -> None:
    for text in ("", "\n\n", "# only a comment\n", "---\n", "--- # nothing\n...\n"):
        assert_error(error_of(text), 1, "a case file is a mapping with a 'cases' list")


def test_several_documents() -> None:
    assert_error(error_of("cases: []\n---\ncases: []\n"), 2, "a second YAML document",
                 "a case file holds one document")


@pytest.mark.parametrize("text", ["[" * 100_000, "{" * 100_000, "- " * 100_000 + "x\n",
                                  "a:\n" + "".join(" " * i + "a:\n" for i in range(1, 500)),
                                  "[" * 3_000 + "]" * 3_000],
                         ids=["flow lists", "flow mappings", "block lists", "block mappings",
                              "closed"])
def test_deep_nesting(text: str) -> None:
    err = error_of(text)
    assert f"nested more than {MAX_DEPTH} deep" in err.message, str(err)
    assert err.line is not None


def test_the_parsers_own_nesting_limit_reads_as_the_case_file_limit(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """libyaml 0.2.5 (PyYAML 6.0.4's wheels) refuses past 1,000 levels, and may do so before the
    composer has seen MAX_DEPTH of them: whichever parser is installed, the same message."""
    from conformance.casefile import safe_yaml

    class Refusing:
        def __init__(self, text: str) -> None:
            pass

        def get_event(self) -> Any:
            mark = yaml.Mark("<unicode string>", 1200, 2, 7, None, None)
            raise yaml.scanner.ScannerError("while increasing flow level", mark,
                                            "exceeded maximum nesting depth", mark)

        def dispose(self) -> None:
            pass

    monkeypatch.setattr(safe_yaml, "_Parser", Refusing)
    err = error_of("[" * 2_000)
    assert err.message == f"mappings and lists are nested more than {MAX_DEPTH} deep, the " \
                          "limit for a case file" and err.line == 3, str(err)


def test_deep_nesting_within_the_limit_is_checked_normally() -> None:
    deep = "[" * (MAX_DEPTH - 8) + "1" + "]" * (MAX_DEPTH - 8)
    err = error_of(VALID.replace("values: [1, 2, 3, 4, 5, 6]", f"values: {deep}"))
    assert_error(err, 11, "values")


@pytest.mark.parametrize(("tag", "shown"), [
    ("!!python/object/apply:os.system ['echo hostile']", "!!python/object/apply:os.system"),
    ("!!python/name:os.system", "!!python/name:os.system"),
    ("!!python/object:collections.OrderedDict {}", "!!python/object:collections.OrderedDict"),
    ("!!binary aGVsbG8=", "!!binary"),
    ("!!set {a, b}", "!!set"),
    ("!custom 3", "!custom"),
    ("!<tag:example.com,2000:app/foo> 3", "tag:example.com,2000:app/foo"),
])
def test_tags_that_construct_objects_are_refused(tag: str, shown: str) -> None:
    text = VALID.replace("{values: [1, 2, 3, 4, 5, 6]}", tag)
    assert_error(error_of(text), 11, f"YAML tag {shown} is not allowed: case files hold plain "
                                     "data")


def test_plain_data_tags_are_fine() -> None:
    text = VALID.replace("BlockSize: 1", "BlockSize: !!int '1'").replace("t/one", "!!str t/one")
    (case,) = check(text)  # type: ignore[misc]
    assert case.id == "t/one"
    assert_error(error_of(VALID.replace("BlockSize: 1", "BlockSize: !!int x")), 6,
                 "'x' is not a valid !!int")


def test_alias_bomb() -> None:
    """Billion laughs: nine levels of ten aliases each expand to 10^9 values."""
    lines = ["a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 10)]
    start = time.perf_counter()
    err = error_of("\n".join(lines) + "\ncases: [*a9]\n")
    assert time.perf_counter() - start < 2
    assert f"more than {MAX_VALUES:,} values" in err.message and "alias" in err.message
    assert err.line is not None and err.line <= 10
    # an alias inside its own anchor
    assert_error(error_of("a: &a [1, *a]\ncases: [*a]\n"), 1, "alias *a names no anchor")
    assert_error(error_of("cases: [*nowhere]\n"), 1, "alias *nowhere names no anchor")


def test_defaults_merged_into_many_cases_are_bounded() -> None:
    big = ", ".join(["a"] * 50_000)
    case = "  - {id: t/x, feature_level: '2_1', spec: {page: NOTES}}\n"
    err = error_of(f"defaults:\n  tags: [{big}]\ncases:\n" + case * 100)
    assert_error(err, 2, f"more than {MAX_VALUES:,} values")  # the line of defaults' mapping


def test_anchors_and_merge_keys_still_work() -> None:
    text = ("shared: &shared {BlockSize: 1, Order: DEPTH_COLUMN_ROW}\n" + VALID)
    err = error_of(text)
    assert_error(err, 1, "unknown key 'shared'")  # only defaults and cases at the top level
    merged = VALID.replace("attributes: {BlockSize: 1, Order: DEPTH_COLUMN_ROW}",
                           "attributes: {<<: {BlockSize: 2, Order: DEPTH_COLUMN_ROW}, "
                           "BlockSize: 1}")
    (case,) = check(merged)  # type: ignore[misc]
    assert case.calls[0].call.attributes["BlockSize"] == 1  # the mapping's own key wins
    assert_error(error_of(VALID.replace("BlockSize: 1", "<<: 3")), 6, "'<<' merges a mapping")


def test_non_utf8_nul_and_binary_junk(tmp_path: Path) -> None:
    path = tmp_path / "latin1.yaml"
    path.write_bytes(b"cases:\n  - id: caf\xe9\n")
    err = load_error_file(path)
    assert_error(err, 2, "not UTF-8 text: byte 0xe9 in column 12")
    assert_error(error_of("cases:\n  - id: a\x00b\n"), 2, "character #x0000 is not allowed")
    path.write_bytes(bytes(range(256)) * 4)
    assert isinstance(load_error_file(path), CaseFileError)
    assert_error(error_of("cases: [\x07]\n"), 1, "character #x0007 is not allowed")
    assert_error(error_of("cases: ['\udcff']\n"), 1, "not valid text")


def load_error_file(path: Path) -> CaseFileError:
    with pytest.raises(CaseFileError) as info:
        load_file(path)
    assert str(info.value).startswith(str(path))
    return info.value


def test_a_file_above_the_size_limit_is_refused_before_parsing(tmp_path: Path) -> None:
    path = tmp_path / "huge.yaml"
    with path.open("wb") as f:
        f.truncate(MAX_FILE_BYTES + 1)  # sparse: no disk used
    err = load_error_file(path)
    assert err.line is None and "larger than 64 MiB" in err.message


def test_keys_must_be_strings_and_integers_not_absurdly_long() -> None:
    assert_error(error_of(VALID.replace("BlockSize: 1", "1: 1")), 6,
                 "the key 1 is not a string (YAML reads it as a number): quote it")
    assert_error(error_of(VALID.replace("Order: ", "yes: 1, Order: ")), 6, "as a boolean")
    assert_error(error_of(VALID.replace("BlockSize: 1", f"BlockSize: {'1' * 5000}")), 6,
                 "has too many digits")
    assert_error(error_of("cases:\n  - ? [1]\n    : 2\n"), 2, "a mapping key must be a plain value")


# Sizes, counts, strides, indices, BlockSize and scales that are NaN, negative, fractional or
# huge: (where in VALID or RESAMPLE, replaced by what, the line, what the message must hold)
NUMBERS = [
    (VALID, "Sizes: [1, 1, 2, 3]}", "Sizes: [1, 1, 2, .nan]}", 8, ["nan is not of type 'integer'"]),
    (VALID, "Sizes: [1, 1, 2, 3]}", "Sizes: [1, 1, 2, -3]}", 8, ["-3 is less than the minimum"]),
    (VALID, "Sizes: [1, 1, 2, 3]}", "Sizes: [1, 1, 2, 2.5]}", 8, ["2.5 is not of type"]),
    (VALID, "Sizes: [1, 1, 2, 3]}", f"Sizes: [1, 1, 2, {10**30}]}}", 8, ["greater than the max"]),
    (VALID, "Sizes: [1, 1, 2, 3]}", f"Sizes: [1, 1, 2, {2**64}]}}", 8, ["greater than the max"]),
    (VALID, "Sizes: [1, 1, 2, 3]}", "Sizes: [1, 1, 2, 3], Strides: [.nan, 1, 1, 1]}", 8,
     ["nan is not of type 'integer'"]),
    (VALID, "Sizes: [1, 1, 2, 3]}", "Sizes: [1, 1, 2, 3], Strides: [-1, 1, 1, 1]}", 8,
     ["-1 is less than the minimum"]),
    (VALID, "Sizes: [1, 1, 2, 3]}", f"Sizes: [1, 1, 2, 3], TotalTensorSizeInBytes: {2**64}}}",
     None, []),  # legal to describe: the runner refuses to allocate it
    (VALID, "BlockSize: 1", "BlockSize: .nan", 6, ["BlockSize", "not valid under any"]),
    (VALID, "BlockSize: 1", "BlockSize: -1", 6, ["BlockSize is a UINT, got -1"]),
    (VALID, "BlockSize: 1", "BlockSize: 2.0", 6, ["BlockSize is a UINT, got 2.0"]),
    (VALID, "BlockSize: 1", f"BlockSize: {2**64}", 6, [f"BlockSize is a UINT, got {2**64}"]),
    (RESAMPLE, "Scales: [1, 1, 2, 2]", "Scales: [1, 1, 2, .nan]", None, []),  # the runner's
    (RESAMPLE, "Scales: [1, 1, 2, 2]", f"Scales: [1, 1, 2, {10**400}]", 6, ["too large"]),
    (RESAMPLE, "Scales: [1, 1, 2, 2]", "Scales: [1, 1, 2]", 6, ["Scales has 3"]),
    (RESAMPLE, "OutputTensor: reference",
     f"OutputTensor: {{values: [{', '.join(['1'] * 7)}, {10**400}]}}", 17,
     ["values", "too large"]),
    (VALID, "values: [1, 2, 3, 4, 5, 6]", f"values: [1, 2, 3, 4, 5, {10**30}]", 11,
     ["out of range for UINT8"]),
    (VALID, "values: [1, 2, 3, 4, 5, 6]", f"values: [1, 2, 3, 4, 5, '0x{'f' * 5000}']", 11,
     ["out of range for UINT8", "bits"]),
    (VALID, "values: [1, 2, 3, 4, 5, 6]", "random: {seed: 1, distribution: integers, "
     "low: .nan}", 11, ["random: low must be a finite number, not nan"]),
    (VALID, "values: [1, 2, 3, 4, 5, 6]", "random: {seed: -1, distribution: bits}", 11,
     ["seed", "less than the minimum"]),
    (VALID, "{values: [1, 2, 3, 4, 5, 6]}", "{from: call.OutputTensor, take: "
     "{axis: 3, indices: [0, 1, 99]}}", 11, ["take: indices must lie in [0, 3)"]),
    (VALID, "{values: [1, 2, 3, 4, 5, 6]}", "{from: call.OutputTensor, take: "
     f"{{axis: {2**64}, indices: [0]}}}}", 11, [f"take: axis {2**64} is not a dimension"]),
]


@pytest.mark.parametrize(("base", "old", "new", "line", "needles"), NUMBERS,
                         ids=[n[2][:48] for n in NUMBERS])
def test_hostile_numbers(base: str, old: str, new: str, line: int | None,
                         needles: list[str]) -> None:
    assert old in base
    got = check(base.replace(old, new, 1))  # the first: InputTensor's
    if line is None:  # loads: the desc is legal to describe
        assert isinstance(got, list) and len(got) == 1
        return
    assert isinstance(got, CaseFileError), got
    assert_error(got, line, *needles)


def test_absurd_sizes_allocate_nothing_in_proportion() -> None:
    """10^12 elements: describable (a rejected desc needs it), never generated or allocated."""
    huge = VALID.replace("Sizes: [1, 1, 2, 3]}", "Sizes: [1000000, 1000000, 1, 1]}", 1)
    text = huge.replace("{values: [1, 2, 3, 4, 5, 6]}", "{random: {seed: 1, distribution: bits}}")
    tracemalloc.start()
    try:
        err = error_of(text)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert_error(err, 11, "generated input too large", "1,000,000,000,000 UINT8 values")
    assert peak < 50 << 20, peak
    rejected = huge.replace("    expected:\n      OutputTensor: reference\n", "    expected: "
                            "rejected\n").replace("{values: [1, 2, 3, 4, 5, 6]}",
                                                  "{iota: {}, sha256: " + "a" * 64 + "}")
    (case,) = check(rejected)  # type: ignore[misc]
    assert case.rejected and case.desc("call.InputTensor").element_count == 10**12


def test_float_integers_are_ints_after_loading() -> None:
    text = VALID.replace("Sizes: [1, 1, 2, 3]}", "Sizes: [1, 1, 2, 3], "
                         "TotalTensorSizeInBytes: 8.0}", 1)
    (case,) = check(text)  # type: ignore[misc]
    assert type(case.desc("call.InputTensor").total_tensor_size_in_bytes) is int
    text = VALID + ("    relations:\n      - equal: [OutputTensor, InputTensor]\n"
                    "        take: {axis: 3.0, indices: [2.0, 1, 0]}\n")
    (case,) = check(text)  # type: ignore[misc]
    take = case.relations[0].take
    assert take is not None and take.axis == 3 and take.indices == (2, 1, 0)
    assert all(type(i) is int for i in take.indices)


# -- the run goes on: errors collected, good files and cases kept ----------------------------------
def test_errors_list_keeps_the_good_files_and_cases(tmp_path: Path) -> None:
    good = tmp_path / "a-good.yaml"
    good.write_text(VALID)
    unparsable = tmp_path / "b-unparsable.yaml"
    unparsable.write_text("cases: [\n")
    mixed = tmp_path / "c-mixed.yaml"  # case 1 good, case 2 fails its schema, 3 its checks
    body = VALID.split("\n", 1)[1]
    mixed.write_text("cases:\n" + body.replace("t/one", "t/two")
                     + body.replace("t/one", "t/bad-schema").replace("feature_level", "level")
                     + body.replace("t/one", "t/bad-values").replace("6]", "600]")
                     + body.replace("t/one", "t/four"))
    dup = tmp_path / "d-duplicate.yaml"
    dup.write_text("cases:\n" + body + body.replace("t/one", "t/five"))
    bomb = tmp_path / "e-binary.yaml"
    bomb.write_bytes(b"\xff\xfe junk")
    missing = tmp_path / "nowhere"

    errors: list[CaseFileError] = []
    cases = load_cases([tmp_path, missing], errors)
    assert [c.id for c in cases] == ["t/one", "t/two", "t/four", "t/five"]
    got = sorted((Path(e.path).name, e.line) for e in errors)
    assert got == sorted([("b-unparsable.yaml", 2), ("c-mixed.yaml", 14), ("c-mixed.yaml", 35),
                          ("d-duplicate.yaml", 2), ("e-binary.yaml", 1), ("nowhere", None)]), got
    by_file = {(Path(e.path).name, e.line): e.message for e in errors}
    assert "'feature_level' is a required property" in by_file[("c-mixed.yaml", 14)]
    assert "600 is out of range for UINT8" in by_file[("c-mixed.yaml", 35)]
    assert "case id 't/one' is already used at" in by_file[("d-duplicate.yaml", 2)]
    assert by_file[("nowhere", None)] == "no such file or folder"
    # without a list the first problem raises, as before
    with pytest.raises(CaseFileError) as info:
        load_cases([tmp_path])
    assert Path(info.value.path).name == "b-unparsable.yaml"
    # load_file and load_text take the list too
    errors = []
    assert [c.id for c in load_file(mixed, errors)] == ["t/two", "t/four"]
    assert [e.line for e in errors] == [14, 35]
    errors = []
    assert load_text("cases: [\n", "x.yaml", errors) == [] and len(errors) == 1
    assert str(errors[0]).startswith("x.yaml:2: not valid YAML")


# -- only regular files are read ------------------------------------------------------------------
#: Loads the paths in a child process, so that a loader that blocks opening a FIFO fails the
#: test at the timeout instead of hanging it.
LOAD_IN_A_CHILD = """
import json, sys, time
from conformance.casefile import load_cases
errors = []
started = time.perf_counter()
cases = load_cases(sys.argv[1:], errors)
print(json.dumps({"ids": [c.id for c in cases], "seconds": time.perf_counter() - started,
                  "errors": [[e.path, e.line, e.message] for e in errors]}))
"""


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_only_regular_files_are_read_as_case_files(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A FIFO named *.yaml hung the loader in open() for ever and the valid files never ran.
    FIFOs, devices and sockets, and links to them, are refused with what they are, without
    being opened; the regular files around them load."""
    folder = tmp_path / "cases"
    (folder / "sub").mkdir(parents=True)
    (folder / "a-good.yaml").write_text(VALID)
    os.mkfifo(folder / "b-fifo.yaml")
    (folder / "c-link.yaml").symlink_to(folder / "b-fifo.yaml")
    (folder / "d-null.yaml").symlink_to(os.devnull)
    monkeypatch.chdir(folder)  # a short relative path: AF_UNIX paths are short
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind("e-socket.yaml")
    (folder / "f-folder.yaml").mkdir()  # a folder named like a case file is searched, not read
    (folder / "f-folder.yaml" / "g-good.yaml").write_text(VALID.replace("t/one", "t/three"))
    (folder / "sub" / "z-good.yml").write_text(VALID.replace("t/one", "t/two"))
    alone = tmp_path / "alone.yaml"
    os.mkfifo(alone)

    done = subprocess.run([sys.executable, "-c", LOAD_IN_A_CHILD, str(folder), str(alone)],
                          capture_output=True, text=True, timeout=120, cwd=CASES.parent)
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout)
    assert got["ids"] == ["t/one", "t/three", "t/two"]
    assert got["seconds"] < 5, got["seconds"]
    refused = "not a regular file: it is {}; only regular files are read as case files (it was " \
              "not opened)"
    link = ", through a symbolic link"
    assert sorted(got["errors"]) == sorted([
        [str(folder / "b-fifo.yaml"), None, refused.format("a FIFO (named pipe)")],
        [str(folder / "c-link.yaml"), None, refused.format("a FIFO (named pipe)" + link)],
        [str(folder / "d-null.yaml"), None, refused.format("a character device" + link)],
        [str(folder / "e-socket.yaml"), None, refused.format("a socket")],
        [str(alone), None, refused.format("a FIFO (named pipe)")],
    ])
