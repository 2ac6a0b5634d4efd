"""What the generic case families ask of an operator: example calls in case-file form, the
changes that break one rule of a valid call, and named draws for the explorer. These are the
types of the OperatorSpec hooks (docs/operators.md); they hold plain data, so the operator
packages build them without the case builders or Hypothesis.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from conformance.spec import Citation
from conformance.tensors import DataType

#: A call in case-file form: (tensor descs by member name, attributes).
Call = tuple[dict[str, dict[str, Any]], dict[str, Any]]
#: A change to a call (a new call; the given one is left as it was).
Change = Callable[[Call], Call]


def desc(data_type: DataType | str, sizes: Sequence[int], strides: Sequence[int] | None = None,
         total: int | None = None) -> dict[str, Any]:
    """A DML_BUFFER_TENSOR_DESC in case-file form (Strides and TotalTensorSizeInBytes only where
    given)."""
    out: dict[str, Any] = {"DataType": DataType.parse(data_type).name, "Sizes": list(sizes)}
    if strides is not None:
        out["Strides"] = list(strides)
    if total is not None:
        out["TotalTensorSizeInBytes"] = total
    return out


@dataclass(frozen=True)
class ExampleCall:
    """A valid call of an operator, for a generic family to build cases around.

    sizes:      tensor member -> Sizes (packed; the family chooses the layout).
    attributes: the call's attributes, as a case file writes them.
    slug:       its part of the case ids ("3d/linear"); "" for none.
    inputs:     "bits" (random bit patterns: the call moves or selects elements, any bits
                survive) or "smooth" (finite values: the call computes its outputs).
    data_types: the types to build it in; () where the family chooses (tables: every type).
    operator:   the operator it calls, where a package's operators share one list (large,
                bitlevel); "" for the operator asked.
    cites:      what the cases built from it cite besides the family's own citations.
    """

    sizes: Mapping[str, Sequence[int]]
    attributes: Mapping[str, Any]
    slug: str = ""
    inputs: Literal["bits", "smooth"] = "bits"
    data_types: tuple[DataType, ...] = ()
    operator: str = ""
    cites: tuple[Citation, ...] = field(default=())

    @property
    def dimension_count(self) -> int:
        """The dimension count of its first tensor (the operator's tensors share one)."""
        return len(next(iter(self.sizes.values())))

    def tensors(self, data_type: DataType) -> dict[str, dict[str, Any]]:
        """Its packed tensor descs in one data type."""
        return {member: desc(data_type, sizes) for member, sizes in self.sizes.items()}


@dataclass(frozen=True)
class Breaking:
    """A change of a valid call that breaks exactly one validation rule (the invalid family
    checks it with the operator's own validate()). ambiguous: why the rule is a reading rather
    than a sentence of the spec (the case is then marked ambiguous), or None."""

    slug: str
    rule: str
    change: Change
    ambiguous: str | None = None


class Pick(Protocol):
    """A named draw, as the explorer makes it (each value noted under its name): one integer of
    a range, one value of a sequence, or with count, a list of count such draws."""

    def __call__(self, name: str, choices: range | Sequence[Any], count: int | None = None
                 ) -> Any: ...


# -- changes --------------------------------------------------------------------------------------
def set_fields(tensor: str, **fields: Any) -> Change:
    """Set desc fields (DataType, Sizes, Strides, ...) of one tensor."""
    def change(call: Call) -> Call:
        tensors, attrs = call
        return {**tensors, tensor: {**tensors[tensor], **fields}}, attrs
    return change


def set_attributes(**attributes: Any) -> Change:
    """Set attributes of the call."""
    def change(call: Call) -> Call:
        tensors, attrs = call
        return tensors, {**attrs, **attributes}
    return change


def set_sizes(**sizes: Sequence[int]) -> Change:
    """Set the Sizes of tensors by member: set_sizes(InputTensor=[...], OutputTensor=[...])."""
    def change(call: Call) -> Call:
        tensors, attrs = call
        return {**tensors, **{m: {**tensors[m], "Sizes": list(s)} for m, s in sizes.items()}}, \
            attrs
    return change

