"""Invalid descs: each validation rule broken alone, for every operator it applies to. Each case
must be rejected (DirectML refuses it at CreateOperator). The generator checks, with the
operator spec, that the desc breaks exactly the one rule it is named for.

Each operator's examples give a small valid call (invalid_example) and the changes that depend
on it: the sizes that break a desc rule, a call of too many elements, and its own rules broken
alone (breaking_sizes, too_many_elements, breaking_rules). The desc rules every operator shares are
broken here.

Each mandatory rule is broken in at least TARGET cases per operator (issue 25's kill floor: a
backend that skips one rule must FAIL ten cases of every slice it claims): the example call,
then the same breakage on the example rebased to each data type the operator takes at its
introduction level and to other batch sizes (rebase), round-robin over the rule's variants.

Rules that are readings rather than sentences of the spec (which count the 2^32 - 1 limit
applies to, and the operators' own readings) are marked ambiguous: their results are reported
apart and never decide a verdict. Two rules whose readings can be enumerated (spec-notes §11)
are open instead: a TotalTensorSizeInBytes that is not a DWORD multiple (stated for bound
buffers; real DirectML accepts such a desc and runs it) and an output whose elements share an
address. Their cases (OPEN_RULES) carry inputs and the reference's outputs and `may_reject`:
a rejection PASSes (the suite's reading), an accepted run is judged against the outputs, each
shared address holding any of the values written to it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hypothesis import assume
from hypothesis import strategies as st

from conformance import ops
from conformance.generate.family import operators
from conformance.kit.build import case, cite
from conformance.kit.family import Example, Picker, example_id
from conformance.levels import HIGHEST
from conformance.ops.base import OperatorSpec
from conformance.ops.examples import Breaking, Call, Change, set_fields
from conformance.tensors import DataType, TensorDesc

FAMILY = "invalid"
DESCRIPTION = "each validation rule broken alone: the desc must be rejected"
#: The hooks this family asks of every operator it applies to (its Examples).
HOOKS = ("invalid_example", "breaking_sizes", "too_many_elements", "breaking_rules")
READING_OVERLAP = ("NOTES §2: the pages do not forbid an output whose elements share an address; "
                   "the suite reads the strides page's definition of a tensor as requiring it")
READING_COUNT = ("NOTES §2: the page limits a buffer tensor to 2^32 - 1 elements without saying "
                 "whether it counts logical elements or buffer elements; the suite counts logical")

READING_DWORD = ("NOTES §2 and §9: the helper-functions page requires bound buffers to be DWORD "
                 "multiples in size, but says nothing of refusing such a desc, and real DirectML "
                 "(the torch-directml 0.2.5 runtime) accepts it at CreateOperator and "
                 "CompileOperator and runs it; the suite reads the rule as a refusal")
#: The rules whose cases admit a rejection or an accepted run judged by its outputs
#: (spec-notes §11), with why; their cases are mandatory.
OPEN_RULES = {"desc.total_size_not_dword_multiple": READING_DWORD,
              "desc.output_overlap": READING_OVERLAP}


#: Cases per mandatory rule and operator (conformance/generate/kill_floor.py holds the floor).
TARGET = 10
#: The batch sizes the rebased calls take (the example's N is 1).
BATCHES = tuple(range(1, TARGET + 1))


def _min(d: dict[str, Any]) -> int:
    return TensorDesc.from_json(d).minimum_size


def _total(tensor: str, delta: int) -> Change:
    def change(call: Call) -> Call:
        tensors, attrs = call
        d = tensors[tensor]
        return {**tensors, tensor: {**d, "TotalTensorSizeInBytes": _min(d) + delta}}, attrs
    return change


def variants(spec: OperatorSpec) -> list[tuple[str, str, Change, str | None, dict[str, str]]]:
    """(slug, rule, change, ambiguous, citation) for every rule that applies to the operator:
    its sizes that break a desc rule, the desc rules every operator shares, its own rules."""
    desc_page = "DML_BUFFER_TENSOR_DESC"
    examples = spec.examples
    v = [*examples.breaking_sizes()]
    v += [Breaking(slug, rule, change, ambiguous) for slug, rule, change, ambiguous in (
        ("strides-count", "desc.strides_count", set_fields("InputTensor", Strides=[6, 3, 1]),
         None),
        ("input-total-below-minimum", "desc.total_size_below_minimum",
         _total("InputTensor", -4), None),
        ("output-total-below-minimum", "desc.total_size_below_minimum",
         _total("OutputTensor", -4), None),
        ("input-total-not-dword", "desc.total_size_not_dword_multiple",
         _total("InputTensor", 2), READING_DWORD),
        ("output-total-not-dword", "desc.total_size_not_dword_multiple",
         _total("OutputTensor", 6), READING_DWORD),
        ("alignment-not-power-of-two", "desc.alignment",
         set_fields("InputTensor", GuaranteedBaseOffsetAlignment=24), None),
        ("alignment-below-element-size", "desc.alignment",
         set_fields("OutputTensor", GuaranteedBaseOffsetAlignment=2), None),
        ("output-overlap", "desc.output_overlap", _overlap, READING_OVERLAP),
        ("too-many-elements", "desc.too_many_elements", examples.too_many_elements,
         READING_COUNT),
        ("mixed-data-types", "operator.same_data_type",
         set_fields("OutputTensor", DataType=DataType.FLOAT16.name), None),
        ("mixed-data-types-input", "operator.same_data_type",
         set_fields("InputTensor", DataType=DataType.FLOAT16.name), None))]
    v += examples.breaking_rules()
    return [(b.slug, b.rule, b.change, b.ambiguous,
             cite(desc_page if b.rule.startswith("desc.") else spec.page)) for b in v]


def _overlap(call: Call) -> Call:
    tensors, attrs = call
    out = tensors["OutputTensor"]
    _, c, h, w = out["Sizes"]
    return {**tensors, "OutputTensor": {**out, "Strides": [c * h * w, h * w, 0, 1]}}, attrs


def invalid_case(spec: OperatorSpec, rule: str, call: Call, ambiguous: str | None,
                 citation: dict[str, str], cid: str, description: bool = True) -> dict:
    """The rejected case of a call that breaks one rule; for an open rule (OPEN_RULES), the
    case that admits its rejection or its outputs."""
    tensors, attrs = call
    said = f"breaks {rule} alone" if description else ""
    if rule in OPEN_RULES:
        return case(cid, spec.name, attrs, tensors, family=FAMILY,
                    spec=[citation, cite("NOTES", "11")],
                    tags=["may-reject", rule], may_reject=OPEN_RULES[rule],
                    description=f"{said}: rejected, or accepted and computed right"
                    if said else "")
    return case(cid, spec.name, attrs, tensors, family=FAMILY, spec=[citation], inputs={},
                expected="rejected", level=spec.introduced, tags=["rejected", rule],
                ambiguous=ambiguous, description=said)


def _broken(spec: OperatorSpec, call: Call) -> set[str]:
    """The rules the call breaks, at the highest feature level."""
    tensors, attrs = call
    parsed = spec.make_call({n: TensorDesc.from_json(d) for n, d in tensors.items()}, attrs)
    return {v.rule for v in spec.validate(parsed, HIGHEST)}


def rebase(call: Call, data_type: DataType, batch: int) -> Call:
    """The broken call with the example's FLOAT32 tensors in data_type and the batch (the
    outermost size, when nonzero) times `batch`; a stated TotalTensorSizeInBytes keeps its
    distance from the desc's minimum."""
    tensors, attrs = call
    out = {}
    for name, d in tensors.items():
        new = dict(d)
        if new["DataType"] == DataType.FLOAT32.name:
            new["DataType"] = data_type.name
        if new["Sizes"][0]:
            new["Sizes"] = [new["Sizes"][0] * batch, *new["Sizes"][1:]]
        if "TotalTensorSizeInBytes" in d:
            new["TotalTensorSizeInBytes"] = _min(new) + d["TotalTensorSizeInBytes"] - _min(d)
        out[name] = new
    return out, attrs


def files() -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for spec in operators(FAMILY):
        cases = out.setdefault(spec.name.lower(), [])
        found = variants(spec)
        count: dict[str, int] = {}
        seen: set[str] = set()
        for slug, rule, change, ambiguous, citation in found:
            call = change(spec.examples.invalid_example())
            broken = _broken(spec, call)
            if broken != {rule}:
                raise AssertionError(f"{spec.name} {slug}: breaks {sorted(broken)}, not {rule}")
            seen.add(repr(call))
            count[rule] = count.get(rule, 0) + 1
            cases.append(invalid_case(spec, rule, call, ambiguous, citation,
                                      f"generated/invalid/{spec.name.lower()}/{slug}"))
        table = spec.table_at(spec.introduced)
        assert table is not None, f"{spec.name} has no table at {spec.introduced}"
        types = sorted(table.data_types)
        for batch in BATCHES:
            for data_type in types:
                for slug, rule, change, ambiguous, citation in found:
                    if ambiguous or count[rule] >= TARGET:
                        continue
                    call = rebase(change(spec.examples.invalid_example()), data_type, batch)
                    if repr(call) in seen or _broken(spec, call) != {rule}:
                        continue
                    seen.add(repr(call))
                    count[rule] += 1
                    cases.append(invalid_case(
                        spec, rule, call, None, citation, f"generated/invalid/"
                        f"{spec.name.lower()}/{slug}/{data_type.name.lower()}-n{batch}"))
        short = sorted(r for r, n in count.items() if n < TARGET
                       and not any(a for _, q, _, a, _ in found if q == r))
        if short:
            raise AssertionError(f"{spec.name}: fewer than {TARGET} cases break {short}")
    return out


@st.composite
def explore(draw: Callable) -> Example:
    """One validation rule broken alone (checked with the operator spec): must be rejected.
    The base call takes any data type of the operator's tables."""
    pick, cid = Picker(draw), example_id(FAMILY)
    spec = ops.get(pick("operator", [s.name for s in operators(FAMILY)]))
    rules = {slug: (rule, change, ambiguous, citation)
             for slug, rule, change, ambiguous, citation in variants(spec)}
    slug = pick("rule", list(rules))
    data_type = pick("base_data_type", [t.name for t in spec.data_types])
    rule, change, ambiguous, citation = rules[slug]
    tensors, attrs = spec.examples.invalid_example()
    call = change(({n: {**d, "DataType": data_type} for n, d in tensors.items()}, attrs))
    assume(_broken(spec, call) == {rule})
    return Example(FAMILY, pick.params, invalid_case(spec, rule, call, ambiguous, citation, cid,
                                                     description=False))
