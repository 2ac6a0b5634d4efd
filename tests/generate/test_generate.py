"""The property-generated cases: committed files equal a fresh generation (the CI check),
generation is deterministic, and the families hold what they claim."""

from __future__ import annotations

import functools
import shutil
from pathlib import Path

import numpy as np
import pytest
import yaml

from conformance import __version__, generate, ops
from conformance.casefile import Case, case_set_hash, load_cases
from conformance.cli import main
from conformance.generate import invalid
from conformance.levels import HIGHEST
from conformance.ops.resample.cases import offsets
from conformance.results import VERDICT_LEVELS, mustpass
from conformance.tensors import TensorDesc
from tests.support import CASES, GENERATED, ROOT

COUNTS = ROOT / "docs" / "case-counts.md"
MUSTPASS = ROOT / "mustpass"


@functools.cache
def rendered() -> dict[str, str]:
    return generate.render()


@functools.cache
def collected() -> dict[str, list[dict]]:
    return {rel: cases for rel, (_, cases) in generate.collect().items()}


def test_committed_generated_cases_equal_a_fresh_generation() -> None:
    # The CI check: `dmlconf generate` must have been run and its output committed.
    assert generate.stale(GENERATED, COUNTS, MUSTPASS) == []


@functools.cache
def committed_cases() -> list[Case]:
    return load_cases([CASES])


def test_mustpass_lists_equal_the_mandatory_cases_recomputed_from_the_committed_cases() -> None:
    # The verdict's rule, written out: not ambiguous, needing the level or less, not limited
    # to levels below it (docs/results-format.md, "The verdict").
    cases = committed_cases()
    folder = MUSTPASS / __version__
    assert sorted(p.stem for p in folder.glob("*.txt")) == [str(lv) for lv in VERDICT_LEVELS]
    for level in VERDICT_LEVELS:
        want = {c.id for c in cases if c.ambiguous is None and c.feature_level <= level
                and (c.feature_level_below is None or c.feature_level_below > level)}
        path = folder / f"{level}.txt"
        version, named, digest, ids = mustpass.parse(path.read_text(encoding="utf-8"), path)
        assert (version, named, digest) == (__version__, str(level), case_set_hash(cases))
        assert ids == want, level
    # The rule leaves the ambiguous cases out, and lower levels hold fewer: a check that
    # could not fail would not show these. (No committed case has feature_level_below yet;
    # tests/session/test_session_case_run.py holds the verdict's rule for one.)
    lists = mustpass.committed().lists
    ambiguous = [c for c in cases if c.ambiguous is not None]
    assert ambiguous and len(lists["6_4"]) == len(cases) - len(ambiguous)
    assert 0 < len(lists["1_0"]) < len(lists["2_1"]) < len(lists["6_4"])


# the mustpass lists generated again: 10-12 s, in CI's certification step
@pytest.mark.certification
def test_a_stale_mustpass_list_is_caught(tmp_path: Path) -> None:
    folder = tmp_path / __version__
    shutil.copytree(MUSTPASS / __version__, folder)
    edited = folder / "2_1.txt"
    lines = edited.read_text(encoding="utf-8").splitlines(keepends=True)
    edited.write_text("".join(lines[:-1]), encoding="utf-8")  # one id left out
    (folder / "9_9.txt").write_text("", encoding="utf-8")  # a level that does not exist
    assert generate.stale(GENERATED, None, tmp_path) == sorted([str(edited),
                                                                 str(folder / "9_9.txt")])
    # `dmlconf generate --check` reports it and exits 1.
    code = main(["generate", "--check", "--out", str(GENERATED), "--counts", str(COUNTS),
                 "--mustpass", str(tmp_path)])
    assert code == 1


@pytest.mark.certification  # a second whole generation (45 s); the committed files equal a fresh
def test_generation_is_deterministic() -> None:  # one in the default run
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
            tensors, attrs = change(spec.examples.invalid_example())
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


def test_ties_and_silent_regions_are_marked_open_or_ambiguous_and_only_they() -> None:
    # Besides the invalid family's readings: RESAMPLE1's ties (NOTES §4) are open (either
    # neighbour admissible) where a case judges outputs, and ambiguous in the equivalence
    # family, whose relations ask bit equality with one RESAMPLE2 call; the RESAMPLE2 remark
    # where it departs from the suite's reading is ambiguous; RESAMPLE3 where its page is
    # silent is open, with the reasons Resample3.silent_regions() gives.
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
            marks = {k for k in ("open", "ambiguous") if k in case}
            if "ties" in case["tags"] and case["tags"][0] == "equivalence":
                assert marks == {"ambiguous"} and "NOTES §4" in case["ambiguous"], case["id"]
            elif "ties" in case["tags"]:
                assert marks == {"open"} and "NOTES §4" in case["open"], case["id"]
            elif "remark" in case["tags"]:
                assert marks == {"ambiguous"} and "NOTES §10" in case["ambiguous"], case["id"]
            elif silent:
                assert marks == {"open"}, case["id"]
                assert case["open"] == "; ".join(silent) + " (NOTES §10)", case["id"]
            else:
                assert not marks, case["id"]


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
