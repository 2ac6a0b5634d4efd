"""The open regions of validation (issue 25, spec-notes §11): a TotalTensorSizeInBytes that is
not a DWORD multiple, and an output whose elements share an address. Their readings are
"rejected" (the suite's) and "accepted and computed right", so their cases carry outputs and
`may_reject`, and are mandatory: a rejection PASSes, an accepted run is judged by its outputs
(each shared address may hold the value of any element written there), and anything else FAILs.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache

import numpy as np
import pytest

from backends.numpy_reference import NumpyReferenceBackend
from conformance import ops
from conformance.backend import DescRejected
from conformance.casefile import Case, load_cases, load_text
from conformance.generate.invalid import OPEN_RULES
from conformance.ops import OperatorCall
from conformance.session.case_run import run_case
from conformance.tensors import TensorDesc, read_tensor, sharers, strided_view
from tests.support import GENERATED, ROOT


@cache
def open_cases() -> tuple[Case, ...]:
    cases = [c for c in load_cases([GENERATED / "invalid"]) if c.may_reject]
    return tuple(cases)


class Accepting(NumpyReferenceBackend):
    """The other reading: the reference's validation without the open rules, and its outputs
    written through their strides, the last element at an address landing last (numpy's
    order) or, with first_lands, the first."""

    name = "accepting"

    def __init__(self, first_lands: bool = False) -> None:
        self.first_lands = first_lands
        super().__init__()

    def validate(self, call: OperatorCall) -> None:
        broken = [v for v in ops.get(call.operator).validate(call, self.claimed_level)
                  if v.rule not in OPEN_RULES]
        if broken:
            raise DescRejected("; ".join(str(v) for v in broken))

    def execute(self, call: OperatorCall, bindings: Mapping[str, np.ndarray]) -> None:
        self.create_operator(call)
        spec = ops.get(call.operator)
        inputs = {n: read_tensor(call.tensors[n], bindings[n]) for n in spec.inputs}
        for name, values in spec.reference(call, inputs).items():
            view = strided_view(call.tensors[name], bindings[name])
            if self.first_lands:  # the reversed order: the first writer of an address lands last
                view[(slice(None, None, -1),) * view.ndim] = values[(slice(None, None, -1),)
                                                                     * values.ndim]
            else:
                view[...] = values


class Garbage(Accepting):
    """Accepts the open rules' descs and writes 12345 at the output's first address, a value no
    element there has: neither reading."""

    def execute(self, call: OperatorCall, bindings: Mapping[str, np.ndarray]) -> None:
        super().execute(call, bindings)
        desc = call.tensors["OutputTensor"]
        view = strided_view(desc, bindings["OutputTensor"])
        view[(0,) * view.ndim] = 12345


def test_the_open_rules_have_cases_for_every_operator() -> None:
    found = {(c.operators[0], rule) for c in open_cases() for rule in OPEN_RULES
             if rule in c.tags}
    assert found == {(op, rule) for op in ops.OPERATORS for rule in OPEN_RULES}
    assert all(c.ambiguous is None and c.expected for c in open_cases())


def test_the_reference_rejects_them_and_passes_naming_the_reading() -> None:
    for case in open_cases():
        result = run_case(case, NumpyReferenceBackend())
        assert result.status == "PASS", (case.id, result.message)
        assert result.message.startswith("rejected, the suite's reading of an open region")


@pytest.mark.parametrize("first_lands", [False, True], ids=["last-lands", "first-lands"])
def test_accepting_and_computing_right_passes_naming_the_reading(first_lands: bool) -> None:
    for case in open_cases():
        result = run_case(case, Accepting(first_lands))
        assert result.status == "PASS", (case.id, result.message)
        assert any("accepted a desc the suite's reading rejects" in i for i in result.info)


def test_a_shared_address_admits_each_writer_and_nothing_else() -> None:
    overlap = [c for c in open_cases() if "desc.output_overlap" in c.tags]
    assert overlap
    for case in overlap:
        assert run_case(case, Accepting(first_lands=True)).status == "PASS"
        result = run_case(case, Garbage())
        assert result.status == "FAIL", (case.id, result.message)
        assert "12345" in result.message


def test_accepting_and_computing_wrong_fails() -> None:
    for case in open_cases():
        assert run_case(case, Garbage()).status == "FAIL", case.id


def test_sharers_groups_the_elements_of_each_address() -> None:
    desc = TensorDesc.from_json({"DataType": "FLOAT32", "Sizes": [1, 1, 3, 2],
                                 "Strides": [6, 6, 0, 1]})
    groups = sharers(desc)
    assert groups is not None
    assert [sorted(set(g)) for g in groups.tolist()] == [[0, 2, 4], [1, 3, 5]] * 3
    packed = TensorDesc.from_json({"DataType": "FLOAT32", "Sizes": [1, 1, 3, 2]})
    assert sharers(packed) is None


def test_the_format_docs_example_passes_both_readings() -> None:
    doc = (ROOT / "docs" / "case-format.md").read_text(encoding="utf-8")
    blocks = [b.split("```")[0] for b in doc.split("```yaml\n")[1:]]
    block = next(b for b in blocks if "may_reject" in b)
    case = one_case(block)
    assert run_case(case, NumpyReferenceBackend()).message.startswith("rejected")
    accepted = run_case(case, Accepting())
    assert accepted.status == "PASS" and accepted.info, accepted.message
    assert run_case(case, Garbage()).status == "FAIL"


def one_case(text: str) -> Case:
    (case,) = load_text(text, "<test>")
    return case


def test_may_reject_needs_outputs_and_one_call() -> None:
    text = """
cases:
  - id: t/may-reject-rejected
    feature_level: "2_1"
    spec: {page: NOTES, section: "11"}
    may_reject: a reading
    operator: DEPTH_TO_SPACE1
    attributes: {BlockSize: 1, Order: DEPTH_COLUMN_ROW}
    tensors:
      InputTensor: {DataType: FLOAT32, Sizes: [1, 1, 1, 2]}
      OutputTensor: {DataType: FLOAT32, Sizes: [1, 1, 1, 2]}
    expected: rejected
"""
    with pytest.raises(Exception, match="'may_reject' belongs to a single-call case"):
        load_text(text, "<test>")
