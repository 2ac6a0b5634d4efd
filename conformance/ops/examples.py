"""What the generic case families ask of an operator: its Examples (the object its spec gives as
OperatorSpec.examples), whose hooks give example calls in case-file form, the changes that break
one rule of a valid call, and named draws for the explorer (docs/operators.md). They hold plain
data, so the operator packages build them without the case builders or Hypothesis.
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



# -- the hooks ------------------------------------------------------------------------------------
class Operator(Protocol):
    """What the base Examples asks of the spec it serves (an OperatorSpec answers it): its name.
    A package's Examples names what its hooks ask beyond it in a Protocol of its own, so that
    neither module imports the other's (the spec module names its Examples class)."""

    name: str


class Examples:
    """An operator's example calls for the generic case families: what each family asks of it
    (the families' HOOKS), apart from what every operator must answer (its OperatorSpec). The
    spec gives its instance as OperatorSpec.examples (examples_type(spec)); an operator package
    derives its own from this class, declaring `spec` with the Protocol of what its hooks ask.

    - tables: table_examples. layouts: layout_examples. invalid: invalid_example,
      breaking_sizes, too_many_elements, breaking_rules. large: large_examples. bitlevel:
      bitlevel_examples. The explorer's layouts and bitlevel families: draw_call.
    - A hook an operator does not implement raises NotImplementedError naming it; an operator to
      which a family does not apply lists it in not_applicable, with the reason, instead (the
      family then leaves the operator out and asks none of its hooks).
    """

    #: Generic family name -> why it does not apply to this operator (its hooks then go unasked).
    not_applicable: Mapping[str, str] = {}

    spec: Operator  # the operator whose calls these are

    def __init__(self, spec: Operator) -> None:
        self.spec = spec

    def _missing(self, hook: str, family: str) -> NotImplementedError:
        return NotImplementedError(
            f"{self.spec.name} implements no {hook}(), which the {family} family asks for: "
            f"implement it, or list {family!r} in not_applicable with the reason "
            "(docs/operators.md)")

    def table_examples(self) -> Sequence[ExampleCall]:
        """tables: one valid call per dimension count (and per variant that changes what the
        tables allow, such as a mode), slugged "<D>d[/<variant>]". The family builds each in
        every data type: valid from the level whose table takes it, rejected where none does."""
        raise self._missing("table_examples", "tables")

    def layout_examples(self) -> Sequence[ExampleCall]:
        """layouts: valid 4-D calls, each with its data_types, slugged by variant ("" for
        one). The family runs each with its input or output padded, NHWC, reversed, broadcast
        or oversized against the packed call: bit-equal where the spec's selects_elements, else
        each against the reference."""
        raise self._missing("layout_examples", "layouts")

    def invalid_example(self) -> Call:
        """invalid: a small valid FLOAT32 call at the operator's introduction level, which
        every invalid case changes (a rule of a buffer desc, or one of breaking_rules)."""
        raise self._missing("invalid_example", "invalid")

    def breaking_sizes(self) -> Sequence[Breaking]:
        """invalid: the Sizes (with the attributes that follow them) that break the buffer-desc
        rules whose shapes depend on the operator: a zero size ("zero-size", desc.zero_size) and
        a dimension count no table takes (desc.dimension_count). First in each file."""
        raise self._missing("breaking_sizes", "invalid")

    def too_many_elements(self, call: Call) -> Call:
        """invalid: invalid_example() with more than 2^32 - 1 logical elements (a broadcast
        input of stride 0, an output too large to bind: rule desc.too_many_elements)."""
        raise self._missing("too_many_elements", "invalid")

    def breaking_rules(self) -> Sequence[Breaking]:
        """invalid: each of the operator's own rules (its spec's check(), and the tables' data
        types) broken alone on invalid_example(). Last in each file."""
        raise self._missing("breaking_rules", "invalid")

    def large_examples(self) -> Sequence[ExampleCall]:
        """large: a few larger calls, each with its operator, one data type and its citations,
        sized to cross vector, tile and thread-split sizes. The family writes a package's calls
        to large/<package>.yaml, each once, in the order given: the operators of a package may
        return one shared list."""
        raise self._missing("large_examples", "large")

    def bitlevel_examples(self) -> Sequence[ExampleCall]:
        """bitlevel: calls that move or select elements (the spec's selects_elements), each with
        its operator, data_types and citations, which NaN payloads, -0.0, subnormals and
        extremes must pass bit for bit. Written like large_examples, to
        bitlevel/<package>.yaml."""
        raise self._missing("bitlevel_examples", "bitlevel")

    def draw_call(self, pick: Pick, selecting: bool = False) -> ExampleCall:
        """The explorer's layouts and bitlevel families: a valid 4-D call drawn with pick
        (each parameter named), with its one data type; selecting: only calls that
        selects_elements, with the citations a bitlevel case gives."""
        raise self._missing("draw_call", "layouts" if not selecting else "bitlevel")
