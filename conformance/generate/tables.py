"""Data-type and dimension-count tables per feature level: for each operator, each of the 11
data types, and each dimension count it names (its table_examples: one call per dimension count,
and per variant such as a mode), a case at the lowest feature level whose table takes it, or a
rejected case where no level does. A type that a table adds at a later level is not required of
a backend claiming less (its case needs that level); a type no table lists must be rejected at
every level.

Spec: each operator page's "Tensor support" tables (cited per case by the operator spec).
"""

from __future__ import annotations

from collections.abc import Callable

from hypothesis import strategies as st

from conformance import ops
from conformance.generate.family import operators
from conformance.kit.build import ALL_TYPES, case, cite, smooth_input, values_for
from conformance.kit.family import SEEDS, Example, Picker, example_id
from conformance.ops.base import OperatorSpec
from conformance.ops.examples import ExampleCall
from conformance.tensors import DataType

FAMILY = "tables"
DESCRIPTION = "each data type and dimension count per operator, valid from its level or rejected"
#: The hooks this family asks of every operator it applies to (its Examples).
HOOKS = ("table_examples",)


def table_case(spec: OperatorSpec, example: ExampleCall, data_type: DataType, cid: str,
               seed: int | None = None, description: bool = True) -> dict:
    """The case of one example call in one data type: valid from the lowest level whose table
    takes the type and dimension count, rejected where none does."""
    tensors = example.tensors(data_type)
    dims = example.dimension_count
    level = spec.level_for(data_type, dims)
    source = (smooth_input if example.inputs == "smooth" else values_for)(
        cid, tensors["InputTensor"], seed)
    table_cite = [cite(spec.page, "Tensor support")]
    if level is None:
        return case(cid, spec.name, example.attributes, tensors, family=FAMILY, spec=table_cite,
                    inputs={"InputTensor": source}, expected="rejected", level=spec.introduced,
                    tags=["rejected"],
                    description=(f"{data_type.name} with {dims} dimensions is in no {spec.name} "
                                 "table at any feature level: must be rejected")
                    if description else "")
    return case(cid, spec.name, example.attributes, tensors, family=FAMILY, spec=table_cite,
                inputs={"InputTensor": source}, level=max(level, spec.introduced),
                description=(f"{data_type.name} with {dims} dimensions is in the {spec.name} "
                             f"table from feature level {level}") if description else "")


def files() -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for spec in operators(FAMILY):
        cases = out.setdefault(spec.name.lower(), [])
        for example in spec.examples.table_examples():
            for data_type in ALL_TYPES:
                cid = f"generated/tables/{spec.name.lower()}/{example.slug}/" \
                      f"{data_type.name.lower()}"
                cases.append(table_case(spec, example, data_type, cid))
    return out


@st.composite
def explore(draw: Callable) -> Example:
    """A data type and dimension count: valid from the level whose table lists it, or
    rejected where no table does."""
    pick, cid = Picker(draw), example_id(FAMILY)
    spec = ops.get(pick("operator", [s.name for s in operators(FAMILY)]))
    data_type = pick("data_type", [t.name for t in ALL_TYPES])
    examples = {e.slug: e for e in spec.examples.table_examples()}
    example = examples[pick("variant", list(examples))]
    seed = pick("seed", SEEDS)
    return Example(FAMILY, pick.params, table_case(spec, example, DataType.parse(data_type),
                                                   cid, seed, description=False))
