"""The property-generated cases: committed files equal a fresh generation (the CI check),
generation is deterministic, and the families hold what they claim."""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np
import yaml

from conformance import generate, ops
from conformance.generate import invalid
from conformance.levels import HIGHEST
from conformance.ops.resample.cases import offsets
from conformance.tensors import TensorDesc
from tests.support import GENERATED, ROOT

COUNTS = ROOT / "docs" / "case-counts.md"


@functools.cache
def rendered() -> dict[str, str]:
    return generate.render()


@functools.cache
def collected() -> dict[str, list[dict]]:
    return {rel: cases for rel, (_, cases) in generate.collect().items()}


def test_committed_generated_cases_equal_a_fresh_generation() -> None:
    # The CI check: `dmlconf generate` must have been run and its output committed.
    assert generate.stale(GENERATED, COUNTS) == []


def test_generation_is_deterministic() -> None:
    assert generate.render() == rendered()


def test_the_suite_holds_at_least_3000_generated_cases() -> None:
    assert sum(len(cases) for cases in collected().values()) >= 3000


def test_write_reports_changes_and_removes_stale_files(tmp_path: Path) -> None:
    count, changed = generate.write(tmp_path, selected=["large"])
    files = sorted((tmp_path / "large").glob("*.yaml"))  # one per operator package
    assert {f.stem for f in files} >= {"depth_space", "resample"}
    assert count == sum(len(yaml.safe_load(f.read_text())["cases"]) for f in files)
    assert sorted(changed) == [str(f) for f in files]
    (tmp_path / "large" / "old.yaml").write_text("cases: []\n")
    _, changed = generate.write(tmp_path, selected=["large"])
    assert changed == [str(tmp_path / "large" / "old.yaml")]
    assert not (tmp_path / "large" / "old.yaml").exists()


def test_each_invalid_case_breaks_exactly_its_rule() -> None:
    for spec in ops.OPERATORS.values():
        for slug, rule, change, _, _ in invalid.variants(spec):
            tensors, attrs = change(spec.invalid_example())
            call = spec.make_call({n: TensorDesc.from_json(d) for n, d in tensors.items()},
                                  attrs)
            assert {v.rule for v in spec.validate(call, HIGHEST)} == {rule}, (spec.name, slug)


def test_affine_closed_form_is_hand_checkable() -> None:
    # iota(-3, 0.25) on sizes [1, 1, 1, 5] is -3, -2.75, ..., -2; 2x half-pixel along W reads
    # c = (o + 0.5) / 2 - 0.5 clamped to [0, 4]: 0, 0.25, 0.75, ..., 3.75, 4, 4 (o = 0..10)
    out = offsets.affine_output(-3.0, 0.25, [1, 1, 1, 5], [1, 1, 1, 11], [1, 1, 1, 2],
                                [(0.5, -0.5)] * 4)
    c = np.clip((np.arange(11) + 0.5) / 2 - 0.5, 0, 4)
    assert np.array_equal(out.ravel(), -3.0 + 0.25 * c)


def test_ties_and_silent_regions_are_marked_ambiguous_and_only_they() -> None:
    # Besides the invalid family's readings: RESAMPLE1's ties (NOTES §4), the RESAMPLE2 remark
    # where it departs from the suite's reading, and RESAMPLE3 where its page is silent, with
    # the reasons Resample3.silent_regions() gives.
    silent_spec = ops.get("RESAMPLE3")
    for rel, cases in collected().items():
        if rel.split("/")[0] == "invalid":
            continue
        for case in cases:
            silent = [reason for call in case.get("calls", [case])
                      if call["operator"] == silent_spec.name
                      for reason in silent_spec.silent_regions(silent_spec.make_call(
                          {n: TensorDesc.from_json(d) for n, d in call["tensors"].items()},
                          call["attributes"]))]
            if "ties" in case["tags"]:
                assert "NOTES §4" in case["ambiguous"], case["id"]
            elif "remark" in case["tags"]:
                assert "NOTES §10" in case["ambiguous"], case["id"]
            elif silent:
                assert case["ambiguous"] == "; ".join(silent) + " (NOTES §10)", case["id"]
            else:
                assert "ambiguous" not in case, case["id"]


def test_the_writer_reads_back_as_the_same_data() -> None:
    from conformance.generate.emit import dump

    doc = {"cases": [{"id": "x", "s": ["0x7f", "2_1", "yes", "a: b", "Description (x)", ""],
                      "f": [1.0, -0.0, 1e-46, 1e300, float("inf"), -float("inf"), 0.33333334],
                      "empty": {}, "nested": [[[1, 2], [3, 4]]], "none": None, "flag": True,
                      "deep": {"a": {"b": [{"c": 1}]}}}]}
    back = yaml.safe_load(dump(doc))
    assert back == doc
    nan = yaml.safe_load(dump({"v": [float("nan")]}))["v"][0]
    assert nan != nan
