"""The runner's verdicts, case by case: PASS / FAIL / ERROR / NOT_SUPPORTED, with the broken
backends of tests/support/broken_backends.py on the documented cases and on small cases built here,
and the results document (conformance.results) written from them."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from backends.numpy_reference import NumpyReferenceBackend
from conformance import __version__, results
from conformance.backend import Capabilities
from conformance.casefile import Case, load_cases, load_text
from conformance.levels import FeatureLevel
from conformance.ops import OperatorCall
from conformance.results import Status, mustpass
from conformance.session import case_run
from conformance.tensors import DataType
from tests.support import BELOW_5_1_CASE, DOCUMENTED
from tests.support import broken_backends as bb

D2S = "documented/depth_to_space/example"  # DEPTH_TO_SPACE, UINT32, 2_1
D2S1_DCR = "documented/depth_to_space1/example-1-depth-column-row"
D2S1_CRD = "documented/depth_to_space1/example-2-column-row-depth"
S2D1_DCR = "documented/space_to_depth1/example-1-depth-column-row"
ROW_MAJOR = "documented/strides/2d-row-major"  # explicit packed strides, UINT8 x 6 in 8 bytes
COLUMN_MAJOR = "documented/strides/2d-column-major"  # strided input
PADDED = "documented/strides/padded-height-stride-5"  # strided input, 12-byte buffer
LINEAR_RESAMPLE = "documented/resample1/remark-linear-resample"  # RESAMPLE, 2_0
NEAREST_RESAMPLE1 = "documented/resample1/remark-nearest-resample1"  # offsets 0.5 / -0.5
EQUIVALENCE = "documented/resample1/remark-equivalence-nearest"  # two calls and a relation

SPEC = "spec: {page: NOTES, section: '2'}"


def lists(cases: Iterable[Case]) -> mustpass.Mustpass:
    """The mustpass lists of these cases alone: what a run of exactly them must cover."""
    return mustpass.from_cases(cases, results.VERDICT_LEVELS)


@pytest.fixture(scope="module")
def documented() -> dict[str, Case]:
    return {c.id: c for c in load_cases([DOCUMENTED])}


def one(text: str) -> Case:
    """The one case of a case file's text."""
    cases = load_text(text, "<test>")
    assert len(cases) == 1
    return cases[0]


def identity_case(data_type: str, values: list, *, case_id: str = "t/identity",
                  output_extra: str = "", level: str = "2_1") -> Case:
    """DEPTH_TO_SPACE1 with BlockSize 1 (the identity) on a [1, 1, 1, n] tensor, expecting the
    input values back."""
    n = len(values)
    return one(f"""
cases:
  - id: {case_id}
    operator: DEPTH_TO_SPACE1
    feature_level: "{level}"
    {SPEC}
    attributes: {{BlockSize: 1, Order: DEPTH_COLUMN_ROW}}
    tensors:
      InputTensor: {{DataType: {data_type}, Sizes: [1, 1, 1, {n}]}}
      OutputTensor: {{DataType: {data_type}, Sizes: [1, 1, 1, {n}]{output_extra}}}
    inputs:
      InputTensor: {{values: [[[{values}]]]}}
    expected:
      OutputTensor: {{values: [[[{values}]]]}}
""")


def rejected_case(extra: str = "", *, case_id: str = "t/rejected", channels: int = 2,
                  block: int = 2, level: str = "2_1") -> Case:
    """DEPTH_TO_SPACE1 whose InputChannelCount is not divisible by BlockSize^2: must be
    rejected (rule depth_space.channels_divisible)."""
    return one(f"""
cases:
  - id: {case_id}
    operator: DEPTH_TO_SPACE1
    feature_level: "{level}"
    {extra}
    spec: {{page: DML_DEPTH_TO_SPACE1_OPERATOR_DESC, section: OutputTensor}}
    attributes: {{BlockSize: {block}, Order: DEPTH_COLUMN_ROW}}
    tensors:
      InputTensor: {{DataType: FLOAT32, Sizes: [1, {channels}, 2, 2]}}
      OutputTensor: {{DataType: FLOAT32, Sizes: [1, 1, 4, 4]}}
    expected: rejected
""")


def limited(**changes: object) -> NumpyReferenceBackend:
    """The reference backend with some of its capability claims changed."""

    class Limited(NumpyReferenceBackend):
        name = "limited"

        @property
        def capabilities(self) -> Capabilities:
            return replace(super().capabilities, **changes)

    return Limited()


class Counting(NumpyReferenceBackend):
    """The reference backend, counting its executes."""

    def __init__(self, feature_level: FeatureLevel | None = None) -> None:
        super().__init__(feature_level)
        self.executes = 0

    def execute(self, call: OperatorCall, bindings: Mapping[str, np.ndarray]) -> None:
        self.executes += 1
        super().execute(call, bindings)


# -- PASS -------------------------------------------------------------------------------------
def test_reference_passes_every_documented_case(documented: dict[str, Case]) -> None:
    found = case_run.run_cases(documented.values(), NumpyReferenceBackend())
    assert len(found) == len(documented) >= 18
    bad = [(r.id, r.status, r.message) for r in found if r.status != "PASS"]
    assert bad == []
    assert all(r.message == "" and r.info == [] and r.mismatches == [] for r in found)
    assert all(r.duration_s >= 0 for r in found)


def test_run_cases_reports_each_result_as_it_comes(documented: dict[str, Case]) -> None:
    seen: list[str] = []
    found = case_run.run_cases([documented[D2S], documented[ROW_MAJOR]],
                             NumpyReferenceBackend(), lambda r: seen.append(r.id))
    assert seen == [D2S, ROW_MAJOR] == [r.id for r in found]


# -- FAIL: the bound buffers --------------------------------------------------------------------
def test_write_past_the_output_buffer_fails_naming_the_tensor(
        documented: dict[str, Case]) -> None:
    r = case_run.run_case(documented[D2S], bb.OverrunBackend())
    assert r.status == "FAIL"
    assert r.message == ("OutputTensor: the backend wrote outside its buffer (guard bytes "
                         "around the 192-byte binding changed)")


def test_write_past_the_buffer_in_a_multi_call_case_names_the_call(
        documented: dict[str, Case]) -> None:
    r = case_run.run_case(documented[EQUIVALENCE], bb.OverrunBackend())
    assert r.status == "FAIL"
    assert r.message.startswith("resample1.OutputTensor: the backend wrote outside its buffer")


def test_write_before_the_buffer_fails_too(documented: dict[str, Case]) -> None:
    class Underrun(NumpyReferenceBackend):
        def execute(self, call: OperatorCall, bindings: Mapping[str, np.ndarray]) -> None:
            super().execute(call, bindings)
            base, start = bb._offset_in_base(bindings["OutputTensor"])
            base[start - 1] = bb.BAD_BYTE

    r = case_run.run_case(documented[ROW_MAJOR], Underrun())
    assert r.status == "FAIL"
    assert "OutputTensor: the backend wrote outside its buffer" in r.message
    assert "8-byte binding" in r.message


def test_changed_input_fails_naming_tensor_and_byte(documented: dict[str, Case]) -> None:
    r = case_run.run_case(documented[D2S], bb.InputWriterBackend())
    assert r.status == "FAIL"
    assert r.message == "InputTensor: the backend changed 1 byte of its input, first at byte 0"


def test_changed_input_padding_byte_fails(documented: dict[str, Case]) -> None:
    class PaddingInputWriter(NumpyReferenceBackend):
        def execute(self, call: OperatorCall, bindings: Mapping[str, np.ndarray]) -> None:
            super().execute(call, bindings)
            bindings["InputTensor"][-1] = bb.BAD_BYTE  # byte 11: padding, not an element

    r = case_run.run_case(documented[PADDED], PaddingInputWriter())
    assert r.status == "FAIL"
    assert r.message == ("InputTensor: the backend changed 1 byte of its input, first at "
                         "byte 11")


# -- FAIL: the outputs --------------------------------------------------------------------------
def test_swapped_depth_space_orders_fail_with_element_expected_got(
        documented: dict[str, Case]) -> None:
    r = case_run.run_case(documented[D2S1_CRD], bb.SwappedOrderBackend())
    assert r.status == "FAIL"
    assert r.message.startswith("OutputTensor: 36 of 48 elements differ (bit-exact, the case's "
                                "values): [0, 0, 0, 1] expected 9, got 18;")
    assert "; and 31 more | diagnosis: " in r.message
    assert r.diagnosis and "other-order" in r.diagnosis["readings"], r.diagnosis
    assert r.mismatches[0] == {"tensor": "OutputTensor", "index": [0, 0, 0, 1],
                               "expected": "9", "got": "18"}
    assert len(r.mismatches) == 5
    for case_id in (D2S1_DCR, S2D1_DCR):
        assert case_run.run_case(documented[case_id], bb.SwappedOrderBackend()).status == "FAIL"


def test_swapped_orders_are_invisible_where_the_order_does_not_matter(
        documented: dict[str, Case]) -> None:
    # DEPTH_TO_SPACE has no Order; BlockSize 1 makes the two orders the same layout.
    for case_id in (D2S, ROW_MAJOR, PADDED):
        assert case_run.run_case(documented[case_id], bb.SwappedOrderBackend()).status == "PASS"


def test_unwritten_output_element_fails(documented: dict[str, Case]) -> None:
    r = case_run.run_case(documented[D2S], bb.UnwrittenElementBackend())
    assert r.status == "FAIL"
    # 3452816845 is 0xCDCDCDCD: the runner's first fill pattern, never written over.
    assert r.message.startswith("OutputTensor: 1 of 48 elements differ (bit-exact, the case's "
                                "values): [0, 0, 0, 0] expected 0, got 3452816845 | diagnosis: ")
    # No catalogued reading leaves an element unwritten; the diagnosis says what happened.
    assert r.diagnosis is not None and r.diagnosis["readings"] == []
    assert "left unwritten" in r.diagnosis["text"]
    assert r.mismatches == [{"tensor": "OutputTensor", "index": [0, 0, 0, 0],
                             "expected": "0", "got": "3452816845"}]


@pytest.mark.parametrize(("data_type", "fill_value", "second_fill_value"), [
    ("UINT8", 0xCD, 0x32),
    ("UINT16", 0xCDCD, 0x3232),
    ("UINT32", 0xCDCDCDCD, 0x32323232),
])
def test_unwritten_element_equal_to_the_first_fill_is_caught_by_the_second(
        data_type: str, fill_value: int, second_fill_value: int) -> None:
    assert case_run.OUTPUT_FILLS == (0xCD, 0x32)
    case = identity_case(data_type, [fill_value, 1, 2, 3])
    r = case_run.run_case(case, bb.UnwrittenElementBackend())
    assert r.status == "FAIL"
    assert f"[0, 0, 0, 0] expected {fill_value}, got {second_fill_value}" in r.message
    assert case_run.run_case(case, NumpyReferenceBackend()).status == "PASS"


def test_second_fill_run_is_made_only_when_needed() -> None:
    covering = Counting()
    assert case_run.run_case(identity_case("UINT8", [0xCD, 1]), covering).status == "PASS"
    assert covering.executes == 2
    plain = Counting()
    assert case_run.run_case(identity_case("UINT8", [7, 1]), plain).status == "PASS"
    assert plain.executes == 1


def test_unwritten_element_whose_tolerance_admits_the_fill_is_caught() -> None:
    # UINT8 LINEAR: either integer neighbour of the exact value passes. Outputs 204, 204.5,
    # 205.5, 206: no expected value is 0xCD = 205, but 205 is acceptable at [0, 0, 0, 1], so
    # an element left at the first fill would pass unless the runner runs again.
    case = one(f"""
cases:
  - id: t/linear-uint8
    operator: RESAMPLE1
    feature_level: "6_2"
    {SPEC}
    attributes: {{InterpolationMode: LINEAR, Scales: [1, 1, 1, 2],
                 InputPixelOffsets: [0.5, 0.5, 0.5, 0.5],
                 OutputPixelOffsets: [-0.5, -0.5, -0.5, -0.5]}}
    tensors:
      InputTensor: {{DataType: UINT8, Sizes: [1, 1, 1, 2]}}
      OutputTensor: {{DataType: UINT8, Sizes: [1, 1, 1, 4]}}
    inputs:
      InputTensor: {{values: [[[[204, 206]]]]}}
    expected:
      OutputTensor: reference
""")

    class SecondElementUnwritten(bb.UnwrittenElementBackend):
        SKIP = 1

    assert case_run.run_case(case, NumpyReferenceBackend()).status == "PASS"
    r = case_run.run_case(case, SecondElementUnwritten())
    assert r.status == "FAIL"
    assert "[0, 0, 0, 1] expected 204.5 ± 1, got 50" in r.message


def test_failed_relation_names_both_tensors_and_why() -> None:
    # DEPTH_TO_SPACE is DEPTH_TO_SPACE1 with DEPTH_COLUMN_ROW; the swapped backend runs the
    # latter as COLUMN_ROW_DEPTH. With two output channels the orders differ.
    case = one(f"""
cases:
  - id: t/relation
    feature_level: "2_1"
    {SPEC}
    inputs:
      old.InputTensor: {{values: [[[[0]], [[1]], [[2]], [[3]], [[4]], [[5]], [[6]], [[7]]]]}}
      new.InputTensor: {{from: old.InputTensor}}
    calls:
      - name: old
        operator: DEPTH_TO_SPACE
        attributes: {{BlockSize: 2}}
        tensors:
          InputTensor: {{DataType: FLOAT32, Sizes: [1, 8, 1, 1]}}
          OutputTensor: {{DataType: FLOAT32, Sizes: [1, 2, 2, 2]}}
      - name: new
        operator: DEPTH_TO_SPACE1
        attributes: {{BlockSize: 2, Order: DEPTH_COLUMN_ROW}}
        tensors:
          InputTensor: {{DataType: FLOAT32, Sizes: [1, 8, 1, 1]}}
          OutputTensor: {{DataType: FLOAT32, Sizes: [1, 2, 2, 2]}}
    relations:
      - equal: [new.OutputTensor, old.OutputTensor]
        why: the original operator is DEPTH_COLUMN_ROW
""")
    assert case_run.run_case(case, NumpyReferenceBackend()).status == "PASS"
    r = case_run.run_case(case, bb.SwappedOrderBackend())
    assert r.status == "FAIL"
    assert r.message.startswith("relation new.OutputTensor == old.OutputTensor (the original "
                                "operator is DEPTH_COLUMN_ROW): new.OutputTensor: ")
    assert "expected 2.0, got 1.0" in r.message


def test_outputs_left_unwritten_on_both_sides_of_a_relation_fail() -> None:
    class WritesNothing(NumpyReferenceBackend):
        def execute(self, call: OperatorCall, bindings: Mapping[str, np.ndarray]) -> None:
            return None

    case = one(f"""
cases:
  - id: t/relation-only
    feature_level: "2_1"
    {SPEC}
    inputs:
      a.InputTensor: {{values: [1, 2, 3, 4]}}
      b.InputTensor: {{from: a.InputTensor}}
    calls:
      - name: a
        operator: DEPTH_TO_SPACE1
        attributes: {{BlockSize: 1, Order: DEPTH_COLUMN_ROW}}
        tensors:
          InputTensor: {{DataType: UINT8, Sizes: [1, 1, 1, 4]}}
          OutputTensor: {{DataType: UINT8, Sizes: [1, 1, 1, 4]}}
      - name: b
        operator: DEPTH_TO_SPACE1
        attributes: {{BlockSize: 1, Order: COLUMN_ROW_DEPTH}}
        tensors:
          InputTensor: {{DataType: UINT8, Sizes: [1, 1, 1, 4]}}
          OutputTensor: {{DataType: UINT8, Sizes: [1, 1, 1, 4]}}
    relations:
      - equal: [a.OutputTensor, b.OutputTensor]
""")
    assert case_run.run_case(case, NumpyReferenceBackend()).status == "PASS"
    assert case_run.run_case(case, WritesNothing()).status == "FAIL"


# -- PASS with info: legal writes into output padding --------------------------------------------
def test_padding_writes_inside_total_size_pass_with_an_info_note(
        documented: dict[str, Case]) -> None:
    r = case_run.run_case(documented[ROW_MAJOR], bb.PaddingWriterBackend())
    assert r.status == "PASS"
    assert r.message == ""
    assert r.info == ["OutputTensor: wrote 2 padding bytes inside TotalTensorSizeInBytes "
                      "(legal: spec-notes §2)"]
    assert case_run.run_case(documented[ROW_MAJOR], NumpyReferenceBackend()).info == []


def test_padding_writes_in_stride_padding_are_noted_once_over_two_fills() -> None:
    # Strides [8, 8, 4, 1] on [1, 1, 2, 3]: bytes 3 and 7 are padding. The 0xCD element makes
    # the runner run twice; the note is not repeated.
    case = one(f"""
cases:
  - id: t/strided-output
    operator: DEPTH_TO_SPACE1
    feature_level: "2_1"
    {SPEC}
    attributes: {{BlockSize: 1, Order: DEPTH_COLUMN_ROW}}
    tensors:
      InputTensor: {{DataType: UINT8, Sizes: [1, 1, 2, 3]}}
      OutputTensor: {{DataType: UINT8, Sizes: [1, 1, 2, 3], Strides: [8, 8, 4, 1],
                     TotalTensorSizeInBytes: 8}}
    inputs:
      InputTensor: {{values: [[[[205, 1, 2], [3, 4, 5]]]]}}
    expected:
      OutputTensor: {{values: [[[[205, 1, 2], [3, 4, 5]]]]}}
""")
    r = case_run.run_case(case, bb.PaddingWriterBackend())
    assert r.status == "PASS"
    assert r.info == ["OutputTensor: wrote 2 padding bytes inside TotalTensorSizeInBytes "
                      "(legal: spec-notes §2)"]


def test_padding_notes_of_a_multi_call_case_name_the_call() -> None:
    # Three UINT8 elements in a 4-byte buffer: one padding byte per output.
    call = """
        operator: DEPTH_TO_SPACE1
        attributes: {BlockSize: 1, Order: DEPTH_COLUMN_ROW}
        tensors:
          InputTensor: {DataType: UINT8, Sizes: [1, 1, 1, 3]}
          OutputTensor: {DataType: UINT8, Sizes: [1, 1, 1, 3]}"""
    case = one(f"""
cases:
  - id: t/two-calls
    feature_level: "2_1"
    {SPEC}
    inputs:
      first.InputTensor: {{values: [1, 2, 3]}}
      second.InputTensor: {{from: first.OutputTensor}}
    calls:
      - name: first{call}
      - name: second{call}
    expected:
      second.OutputTensor: {{values: [1, 2, 3]}}
""")
    r = case_run.run_case(case, bb.PaddingWriterBackend())
    assert r.status == "PASS"
    assert r.info == [f"{name}.OutputTensor: wrote 1 padding byte inside "
                      "TotalTensorSizeInBytes (legal: spec-notes §2)"
                      for name in ("first", "second")]


# -- ERROR --------------------------------------------------------------------------------------
def test_backend_exception_is_an_error_with_type_message_and_place(
        documented: dict[str, Case]) -> None:
    r = case_run.run_case(documented[D2S], bb.RaisingBackend())
    assert r.status == "ERROR"
    assert r.message.startswith("the backend raised RuntimeError: simulated device removal at ")
    assert "broken_backends.py:" in r.message


def test_exception_in_create_operator_of_a_rejected_case_is_an_error() -> None:
    class CrashingCreate(NumpyReferenceBackend):
        def create_operator(self, call: OperatorCall) -> None:
            raise KeyError("Order")

    r = case_run.run_case(rejected_case(), CrashingCreate())
    assert r.status == "ERROR"
    assert r.message.startswith("the backend raised KeyError: 'Order' at ")


def test_drifted_generated_input_is_an_error_naming_the_input() -> None:
    case = one(f"""
cases:
  - id: t/drift
    operator: DEPTH_TO_SPACE1
    feature_level: "2_1"
    {SPEC}
    attributes: {{BlockSize: 1, Order: DEPTH_COLUMN_ROW}}
    tensors:
      InputTensor: {{DataType: UINT8, Sizes: [1, 1, 1, 4]}}
      OutputTensor: {{DataType: UINT8, Sizes: [1, 1, 1, 4]}}
    inputs:
      InputTensor: {{iota: {{start: 0}}, sha256: "{'0' * 64}"}}
    expected:
      OutputTensor: {{values: [0, 1, 2, 3]}}
""")
    r = case_run.run_case(case, NumpyReferenceBackend())
    assert r.status == "ERROR"
    assert r.message.startswith("the case cannot run: generated input InputTensor drifted")
    assert "0" * 64 in r.message


def test_harness_fault_is_an_error_asking_for_a_report(
        documented: dict[str, Case], monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: object) -> None:
        raise ZeroDivisionError("harness bug")

    monkeypatch.setattr(case_run, "expectations", broken)
    r = case_run.run_case(documented[D2S], NumpyReferenceBackend())
    assert r.status == "ERROR"
    assert r.message.startswith("internal error in the harness (please report): "
                                "ZeroDivisionError: harness bug")


# -- descs that must be rejected, and valid ones refused -----------------------------------------
def test_rejecting_every_desc_fails_valid_cases(documented: dict[str, Case]) -> None:
    r = case_run.run_case(documented[D2S], bb.RejectAllBackend())
    assert r.status == "FAIL"
    assert r.message == "the backend rejected a valid desc: E_INVALIDARG (rejects everything)"


def test_rejection_at_create_operator_passes() -> None:
    r = case_run.run_case(rejected_case(), bb.RejectAllBackend())
    assert (r.status, r.message) == ("PASS", "rejected at create_operator: E_INVALIDARG "
                                             "(rejects everything)")
    r = case_run.run_case(rejected_case(), NumpyReferenceBackend())
    assert r.status == "PASS"
    assert r.message.startswith("rejected at create_operator: InputChannelCount 2 is not "
                                "divisible by BlockSize * BlockSize 4")


def test_rejection_at_execute_passes() -> None:
    r = case_run.run_case(rejected_case(), bb.LateRejectBackend())
    assert r.status == "PASS"
    assert r.message.startswith("rejected at execute: ")
    assert "depth_space.channels_divisible" in r.message


def test_accepting_an_invalid_desc_fails_naming_the_broken_rule(
        documented: dict[str, Case]) -> None:
    r = case_run.run_case(rejected_case(), bb.AcceptAllBackend())
    assert r.status == "FAIL"
    assert r.message.startswith("the backend accepted an invalid desc; it breaks: "
                                "InputChannelCount 2 is not divisible by BlockSize * BlockSize 4")
    assert "[depth_space.channels_divisible; DML_DEPTH_TO_SPACE1_OPERATOR_DESC § OutputTensor]" \
        in r.message
    # Accepting valid descs is no fault.
    assert case_run.run_case(documented[D2S1_DCR], bb.AcceptAllBackend()).status == "PASS"


def test_accepting_an_invalid_desc_and_overrunning_names_both() -> None:
    class AcceptAndOverrun(bb.AcceptAllBackend):
        def execute(self, call: OperatorCall, bindings: Mapping[str, np.ndarray]) -> None:
            base, start = bb._offset_in_base(bindings["OutputTensor"])
            base[start + bindings["OutputTensor"].size] = bb.BAD_BYTE

    r = case_run.run_case(rejected_case(), AcceptAndOverrun())
    assert r.status == "FAIL"
    assert r.message.startswith("the backend accepted an invalid desc and then: OutputTensor: "
                                "the backend wrote outside its buffer")
    assert r.message.endswith("[depth_space.channels_divisible; "
                              "DML_DEPTH_TO_SPACE1_OPERATOR_DESC § OutputTensor]")


def test_accepting_a_desc_too_large_to_dispatch_fails() -> None:
    case = one("""
cases:
  - id: t/huge
    operator: DEPTH_TO_SPACE1
    feature_level: "2_1"
    spec: {page: DML_DEPTH_TO_SPACE1_OPERATOR_DESC, section: BlockSize}
    attributes: {BlockSize: 0, Order: DEPTH_COLUMN_ROW}
    tensors:
      InputTensor: {DataType: UINT8, Sizes: [1, 4, 65536, 65536]}
      OutputTensor: {DataType: UINT8, Sizes: [1, 4, 65536, 65536]}
    expected: rejected
""")
    r = case_run.run_case(case, bb.AcceptAllBackend())
    assert r.status == "FAIL"
    assert r.message.startswith("the backend accepted an invalid desc at create_operator (too "
                                "large to dispatch here: a 17179869184-byte buffer is beyond "
                                "what the runner materialises")
    assert "; it breaks: " in r.message
    assert "depth_space.block_size" in r.message and "desc.too_many_elements" in r.message
    assert case_run.run_case(case, NumpyReferenceBackend()).status == "PASS"


# -- NOT_SUPPORTED ------------------------------------------------------------------------------
def test_case_above_the_claimed_level_is_not_supported(documented: dict[str, Case]) -> None:
    backend = NumpyReferenceBackend(feature_level=FeatureLevel.FL_2_0)
    r = case_run.run_case(documented[D2S], backend)
    assert r.status == "NOT_SUPPORTED"
    assert r.message == ("needs feature level 2_1; the backend claims 2_0 (not required of it)")
    assert case_run.run_case(documented[LINEAR_RESAMPLE], backend).status == "PASS"


def test_claiming_above_the_backends_highest_level_is_refused() -> None:
    backend = limited(feature_level=FeatureLevel.FL_2_1)
    assert backend.claimed_level == FeatureLevel.FL_2_1
    with pytest.raises(ValueError, match="claims feature level 2_1 at most, not 5_0"):
        type(backend)(feature_level=FeatureLevel.FL_5_0)


def test_undeclared_data_type_and_operator_are_not_supported(
        documented: dict[str, Case]) -> None:
    backend = limited(operators={"DEPTH_TO_SPACE1": frozenset({DataType.FLOAT32})})
    r = case_run.run_case(documented[D2S1_DCR], backend)
    assert r.status == "NOT_SUPPORTED"
    assert r.message == "the backend does not run DEPTH_TO_SPACE1 with UINT32 (InputTensor)"
    r = case_run.run_case(documented[D2S], backend)
    assert (r.status, r.message) == ("NOT_SUPPORTED",
                                     "the backend does not implement DEPTH_TO_SPACE")
    assert case_run.run_case(identity_case("FLOAT32", [1.5, 2.5]), backend).status == "PASS"


def test_strided_descs_are_not_supported_without_the_claim(documented: dict[str, Case]) -> None:
    backend = limited(strided=False)
    for case_id in (PADDED, COLUMN_MAJOR):
        r = case_run.run_case(documented[case_id], backend)
        assert r.status == "NOT_SUPPORTED", case_id
        assert r.message == "the backend declares no support for strided tensors"
    # Strides stated but equal to the packed ones are not "strided".
    assert case_run.run_case(documented[ROW_MAJOR], backend).status == "PASS"


@pytest.mark.parametrize(("offsets_in", "offsets_out", "odd"), [
    ([0, 0, 0, 0], [0, 0, 0, 0], "(0.0, 0.0)"),
    ([0.5, 0.5, 0.5, 0.25], [-0.5, -0.5, -0.5, -0.5], "(0.25, -0.5)"),
])
def test_pixel_offsets_outside_the_declared_pairs_are_not_supported(
        documented: dict[str, Case], offsets_in: list, offsets_out: list, odd: str) -> None:
    case = one(f"""
cases:
  - id: t/offsets
    operator: RESAMPLE1
    feature_level: "2_1"
    {SPEC}
    attributes: {{InterpolationMode: NEAREST_NEIGHBOR, Scales: [1, 1, 2, 2],
                 InputPixelOffsets: {offsets_in}, OutputPixelOffsets: {offsets_out}}}
    tensors:
      InputTensor: {{DataType: FLOAT32, Sizes: [1, 1, 2, 2]}}
      OutputTensor: {{DataType: FLOAT32, Sizes: [1, 1, 4, 4]}}
    inputs:
      InputTensor: {{values: [[[[1, 2], [3, 4]]]]}}
    expected:
      OutputTensor: reference
""")
    backend = limited(arbitrary_offsets=False)
    r = case_run.run_case(case, backend)
    assert r.status == "NOT_SUPPORTED"
    assert r.message == f"the backend takes pixel offset pairs [(0.5, -0.5)] only, not {odd}"
    # The declared pair runs; so does any pair with arbitrary_offsets.
    assert case_run.run_case(documented[NEAREST_RESAMPLE1], backend).status == "PASS"
    assert case_run.run_case(case, NumpyReferenceBackend()).status == "PASS"


def test_rejected_cases_are_not_supported_by_a_backend_that_does_not_validate() -> None:
    r = case_run.run_case(rejected_case(), limited(rejects_invalid=False))
    assert r.status == "NOT_SUPPORTED"
    assert r.message == "the backend declares that it does not validate descs"


def test_expectation_below_a_level_is_not_supported_at_or_above_it() -> None:
    case = one("cases:\n" + BELOW_5_1_CASE)
    r = case_run.run_case(case, NumpyReferenceBackend())
    assert r.status == "NOT_SUPPORTED"
    assert r.message == ("the expectation holds below feature level 5_1 only; the backend "
                         "claims 6_4")
    assert r.feature_level_below == "5_1"
    assert case_run.run_case(case, NumpyReferenceBackend(FeatureLevel.FL_5_0)).status == "PASS"
    r = case_run.run_case(case, bb.AcceptAllBackend(FeatureLevel.FL_5_0))
    assert r.status == "FAIL"
    assert "InputTensor has 3 dimensions; the operator takes 4 here [desc.dimension_count" \
        in r.message


def test_backend_specific_limit_is_not_supported_with_its_reason(
        documented: dict[str, Case]) -> None:
    class NoBigBlocks(NumpyReferenceBackend):
        def unsupported_reason(self, call: OperatorCall) -> str | None:
            return "BlockSize above 1 is not implemented" if call.attributes.get(
                "BlockSize", 1) > 1 else None

    r = case_run.run_case(documented[D2S1_DCR], NoBigBlocks())
    assert (r.status, r.message) == ("NOT_SUPPORTED", "BlockSize above 1 is not implemented")
    assert case_run.run_case(documented[ROW_MAJOR], NoBigBlocks()).status == "PASS"


# -- the results document -----------------------------------------------------------------------
def test_results_document_has_the_documented_fields(
        documented: dict[str, Case], tmp_path: Path) -> None:
    backend = bb.SwappedOrderBackend()
    found = case_run.run_cases(documented.values(), backend)
    doc = results.document(
        found, backend={"name": backend.name, "class": "broken_backends.SwappedOrderBackend",
                        "capabilities": backend.capabilities.to_json()},
        case_set_sha256="ab" * 32, claimed=backend.claimed_level,
        started_at="2024-01-01T00:00:00+00:00", finished_at="2024-01-01T00:00:01+00:00",
        duration_s=1.23456, command="dmlconf run", case_paths=[str(DOCUMENTED)])
    path = tmp_path / "deep" / "results.json"
    results.write(doc, path)
    back = json.loads(path.read_text(encoding="utf-8"))
    assert not path.with_suffix(".json.tmp").exists()

    assert back["format"] == results.FORMAT == "dml-conformance-results/1"
    assert back["suite_version"] == __version__
    assert back["case_set_sha256"] == "ab" * 32
    assert back["case_paths"] == [str(DOCUMENTED)]
    assert back["command"] == "dmlconf run"
    assert back["backend"]["name"] == "broken-swapped-order"
    caps = back["backend"]["capabilities"]
    assert set(caps) == {"operators", "feature_level", "strided", "arbitrary_offsets",
                         "offset_pairs", "rejects_invalid", "notes"}
    assert caps["feature_level"] == "6_4" and caps["offset_pairs"] == [[0.5, -0.5]]
    assert "UINT32" in caps["operators"]["DEPTH_TO_SPACE1"]
    assert back["feature_level"] == "6_4"
    assert set(back["platform"]) == {"system", "release", "machine", "python", "numpy"}
    assert back["started_at"] == "2024-01-01T00:00:00+00:00"
    assert back["finished_at"] == "2024-01-01T00:00:01+00:00"
    assert back["duration_s"] == 1.235

    assert list(back["summary"]) == ["PASS", "QUALITY_WARNING", "FAIL", "ERROR", "TIMEOUT",
                                     "NOT_SUPPORTED",
                                     "XFAIL", "XPASS"]
    assert back["summary"] == {"PASS": len(found) - 4, "FAIL": 4, "ERROR": 0, "TIMEOUT": 0,
                               "NOT_SUPPORTED": 0, "XFAIL": 0, "XPASS": 0,
                              "QUALITY_WARNING": 0}
    ambiguous = sum(c.ambiguous is not None for c in documented.values())
    assert ambiguous  # the documented RESAMPLE2/3 cases where the page is silent
    assert back["ambiguous"] == {"PASS": ambiguous, "FAIL": 0, "ERROR": 0, "TIMEOUT": 0,
                                 "NOT_SUPPORTED": 0, "XFAIL": 0, "XPASS": 0,
                                 "QUALITY_WARNING": 0}
    assert back["baseline"] is None
    assert back["complete"] is True and back["load_errors"] == []
    assert back["execution"] is None and back["shard"] is None

    assert len(back["results"]) == len(found)
    item = next(r for r in back["results"] if r["id"] == D2S1_CRD)
    assert item["data_types"] == ["UINT32"]
    assert set(item) == {"id", "status", "message", "duration_s", "operators", "data_types",
                         "feature_level", "feature_level_below", "tags", "spec", "ambiguous",
                         "info", "mismatches", "grids", "heat_maps", "crash", "margin",
                         "diagnosis", "waiver"}
    assert item["status"] == "FAIL" and "expected 9, got 18" in item["message"]
    assert isinstance(item["duration_s"], float)
    assert item["operators"] == ["DEPTH_TO_SPACE1"] and item["feature_level"] == "2_1"
    assert item["spec"][0]["page"] == "DML_DEPTH_TO_SPACE1_OPERATOR_DESC"
    assert item["spec"][0]["url"].startswith("https://learn.microsoft.com/")
    assert item["mismatches"][0] == {"tensor": "OutputTensor", "index": [0, 0, 0, 1],
                                     "expected": "9", "got": "18"}
    # Small tensors are kept whole for the report's grids: the input, and the output with its
    # expected values and which elements differ.
    inp, out = item["grids"]
    assert inp["tensor"] == "InputTensor" and inp["shape"] == [1, 8, 2, 3]
    assert inp["got"][:3] == ["0", "1", "2"] and "bad" not in inp
    assert out["tensor"] == "OutputTensor" and out["shape"] == [1, 2, 4, 6]
    assert out["expected"][1] == "9" and out["got"][1] == "18" and out["bad"][1] == 1
    assert out["bad"][0] == 0 and sum(out["bad"]) > 0 and "error" not in out  # UINT32
    # and a heat map of where the output's errors lie: bit-exact, so 1 where an element differs
    (heat,) = item["heat_maps"]
    assert heat["tensor"] == "OutputTensor" and heat["scale"] == "mismatch"
    assert heat["block"] == [1, 1] and len(heat["cells"]) == 8 and len(heat["cells"][0]) == 6
    assert sum(map(sum, heat["cells"])) == heat["bad"] == sum(out["bad"])

    assert list(back["verdict"]) == ["1_0", "2_0", "2_1", "5_0", "5_1", "6_2", "6_4"]
    assert back["verdict"]["1_0"] == {"conformant": None, "mandatory": 0, "PASS": 0, "FAIL": 0,
                                      "mustpass": len(mustpass.committed().lists["1_0"]),
                                      "mustpass_run": 0, "waivers": 0, "not_covered": 0,
                                      "ERROR": 0, "TIMEOUT": 0, "NOT_SUPPORTED": 0, "XFAIL": 0,
                                      "XPASS": 0, "QUALITY_WARNING": 0}
    # 2_0's 2 mandatory documented cases pass, a part of its mustpass list: no verdict
    assert back["verdict"]["2_0"]["conformant"] is None
    assert back["verdict"]["2_0"]["mandatory"] == back["verdict"]["2_0"]["PASS"] == 2
    assert back["verdict"]["2_0"]["mustpass_run"] == 2 < back["verdict"]["2_0"]["mustpass"]
    assert back["verdict"]["2_1"]["conformant"] is False
    assert back["verdict"]["2_1"]["FAIL"] == 4
    assert results.exit_status(found) == 1


def as_json(verdicts: dict[str, results.Verdict]) -> dict[str, dict]:
    """The verdict per level as the results document writes it."""
    return {level: v.to_json() for level, v in verdicts.items()}


def test_verdicts_stop_at_the_claimed_level_and_count_not_supported(
        documented: dict[str, Case]) -> None:
    found = case_run.run_cases(documented.values(), NumpyReferenceBackend(FeatureLevel.FL_2_0))
    # The mustpass list of these cases: the run covers it (docs/mustpass.md).
    verdict = as_json(results.verdicts(found, FeatureLevel.FL_2_0, lists(documented.values())))
    assert list(verdict) == ["1_0", "2_0"]
    assert verdict["2_0"]["conformant"] is True and verdict["2_0"]["mandatory"] == 2
    assert results.summary(found)["NOT_SUPPORTED"] == len(found) - 2
    assert results.exit_status(found) == 0
    # A mandatory case that is NOT_SUPPORTED is not covered: no verdict at its level, and not
    # "NOT conformant" (nothing failed; a scoped claim judges what the backend covers).
    strided_off = case_run.run_cases(documented.values(), limited(strided=False))
    v = results.verdicts(strided_off, FeatureLevel.FL_2_1, lists(documented.values()))["2_1"]
    assert v.conformant is None and v.not_covered == v.count(Status.NOT_SUPPORTED) > 0
    assert results.exit_status(strided_off) == 0


def test_ambiguous_cases_decide_neither_verdict_nor_exit_status() -> None:
    ambiguous = identity_case("UINT8", [1, 2, 3, 4], case_id="t/ambiguous")
    ambiguous = replace(ambiguous, ambiguous="the spec says two things")
    clear = identity_case("UINT8", [1, 2, 3, 4], case_id="t/clear")
    backend = bb.UnwrittenElementBackend()
    found = case_run.run_cases([ambiguous, rejected_case()], backend)
    assert [r.status for r in found] == ["FAIL", "PASS"]
    assert results.exit_status(found) == 0  # the only FAIL is ambiguous
    verdict = as_json(results.verdicts(found, backend.claimed_level,
                                       lists([ambiguous, rejected_case()])))
    assert verdict["2_1"] == {"conformant": True, "mandatory": 1, "mustpass": 1,
                              "mustpass_run": 1, "waivers": 0, "not_covered": 0, "PASS": 1,
                              "FAIL": 0,
                              "ERROR": 0, "TIMEOUT": 0, "NOT_SUPPORTED": 0, "XFAIL": 0,
                              "XPASS": 0, "QUALITY_WARNING": 0}
    assert results.summary([r for r in found if r.ambiguous])["FAIL"] == 1
    found = case_run.run_cases([clear], backend)
    assert results.exit_status(found) == 1
    assert results.verdicts(found, backend.claimed_level,
                            lists([clear]))["2_1"].conformant is False


def test_case_limited_to_lower_levels_decides_only_runs_claiming_them(
        documented: dict[str, Case]) -> None:
    below = rejected_case('feature_level_below: "5_0"', case_id="t/below")
    cases = [*documented.values(), below]
    # The documented cases that decide 2_1: mandatory, at or below it.
    at_2_1 = [c for c in documented.values()
              if c.ambiguous is None and c.feature_level <= FeatureLevel.FL_2_1]
    # Claiming 6_4 the case is not run, and no level's verdict holds it against the backend.
    found = case_run.run_cases(cases, NumpyReferenceBackend())
    assert found[-1].status == "NOT_SUPPORTED"
    verdict = as_json(results.verdicts(found, FeatureLevel.FL_6_4))
    assert all(v["conformant"] is not False for v in verdict.values()), verdict
    assert verdict["2_1"]["mandatory"] == len(at_2_1)
    # Claiming 2_1 it is run, and decides 2_1: a backend accepting it is not conformant there.
    found = case_run.run_cases(cases, bb.AcceptAllBackend(FeatureLevel.FL_2_1))
    assert found[-1].status == "FAIL"
    verdict = as_json(results.verdicts(found, FeatureLevel.FL_2_1))
    assert verdict["2_1"]["mandatory"] == len(at_2_1) + 1
    assert verdict["2_1"]["conformant"] is False


# -- the runner's cheap paths (issue 16): each gives what the plain computation gives -----------

def test_made_inputs_are_made_once_and_are_what_the_generator_makes() -> None:
    from conformance import inputs
    from conformance.casefile import Source, logical_values
    from conformance.tensors import TensorDesc

    desc = TensorDesc(DataType.FLOAT32, (1, 2, 3, 5))
    source = Source("random", {"seed": 7, "distribution": "uniform", "low": -1.0, "high": 1.0})
    first, made = case_run._made(source, desc)
    again, made_again = case_run._made(Source(source.kind, dict(source.params)), desc)
    assert again is first and made_again == made  # an equal source: the kept array
    plain = logical_values(source, desc)
    assert first.tobytes() == plain.tobytes() and made == inputs.sha256(plain)
    assert not first.flags.writeable  # shared: nobody may write into it
    # 1 and 1.0 are different parameters (kept apart), and other sizes are other values
    whole = case_run._made(Source("iota", {"start": 1, "step": 1}), desc)[0]
    real = case_run._made(Source("iota", {"start": 1.0, "step": 1}), desc)[0]
    assert whole is not real and whole.tobytes() == real.tobytes()
    other = case_run._made(source, TensorDesc(DataType.FLOAT32, (1, 2, 5, 3)))[0]
    assert other is not first and other.shape == (1, 2, 5, 3)


def test_a_drifted_input_is_caught_when_its_values_were_made_for_an_earlier_case() -> None:
    cases = [c for c in load_cases([DOCUMENTED]) if not c.rejected and any(
        s.kind in ("iota", "random") for s in c.inputs.values())]
    case = cases[0]
    ref, source = next((r, s) for r, s in case.inputs.items() if s.kind in ("iota", "random"))
    backend = NumpyReferenceBackend()
    assert case_run.run_case(case, backend).status == "PASS"  # its values are kept now
    drifted = replace(case, inputs={**case.inputs, ref: replace(source, sha256="0" * 64)})
    result = case_run.run_case(drifted, backend)
    assert result.status == "ERROR" and "drifted" in result.message, result.message


@pytest.mark.parametrize("desc", [
    dict(sizes=(1, 1, 2, 3)),
    dict(sizes=(1, 1, 2, 3), total_tensor_size_in_bytes=64),
    dict(sizes=(1, 1, 2, 3), strides=(6, 6, 3, 1)),
    dict(sizes=(1, 1, 2, 3), strides=(16, 16, 8, 2)),
    dict(sizes=(1, 2, 2, 2), strides=(8, 1, 4, 2)),
    dict(sizes=(1, 1, 2, 3), strides=(0, 0, 0, 1)),
])
def test_padding_written_counts_what_the_footprint_mask_counts(desc: dict) -> None:
    from conformance.tensors import TensorDesc, footprint_mask

    d = TensorDesc(DataType.FLOAT16, **desc)
    rng = np.random.default_rng(5)
    for changed in (0, 1, 7, d.total_size):
        guarded = np.full(case_run.GUARD * 2 + d.total_size, 0xCD, dtype=np.uint8)
        b = case_run._Binding(d, guarded)
        b.buffer[rng.choice(d.total_size, changed, replace=False)] = 0x11
        expected = int((~footprint_mask(d) & (b.buffer != 0xCD)).sum())
        assert case_run.padding_written(b, 0xCD) == expected
