"""What every operator spec has: tensors, attributes, support tables per feature level, the
rules common to all operators, and the interface each operator module implements."""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from conformance.expected import Expected
from conformance.flags import ExecutionFlags
from conformance.levels import FeatureLevel
from conformance.ops.examples import Breaking, Call, ExampleCall, Pick
from conformance.spec import Citation, Violation
from conformance.tensors import DataType, TensorDesc, validate_desc

Kind = Literal["input", "output"]


@dataclass(frozen=True)
class SupportTable:
    """One 'DML_FEATURE_LEVEL_x and above' table of an operator page: the dimension counts and
    data types its tensors take from that level on (until a later table replaces it)."""

    level: FeatureLevel
    dimension_counts: frozenset[int]
    data_types: frozenset[DataType]
    cite: Citation


def table(level: str, dims: Sequence[int], types: str, page: str, section: str) -> SupportTable:
    """Build a SupportTable from the page's own words: table("2_1", [4], "FLOAT32, FLOAT16")."""
    return SupportTable(
        FeatureLevel.parse(level),
        frozenset(dims),
        frozenset(DataType.parse(t.strip()) for t in types.split(",")),
        Citation(page, section),
    )


@dataclass(frozen=True)
class Attribute:
    """A non-tensor member of the operator desc, named as on the spec page.

    kind: "uint" (UINT), "enum" (names in `values`, DirectML.h values), "floats" (FLOAT array
    whose length is the operator's DimensionCount/ScaleCount), "bool" (BOOL: true/false, or
    the C values 1/0).
    prefix: an enum's DirectML.h prefix (its type's name and "_"), which a case may write
    before the name and parse() removes.
    """

    name: str
    kind: Literal["uint", "enum", "floats", "bool"]
    values: Mapping[str, int] = field(default_factory=dict)
    prefix: str = ""

    def parse(self, value: Any) -> Any:
        """Canonical form: int for uint; the enum name (or the raw int when the value is not a
        known enumerator, so invalid descs stay expressible); a tuple of floats; a bool."""
        if self.kind == "bool":
            if isinstance(value, int) and value in (0, 1):  # true, false, or BOOL's 1 and 0
                return bool(value)
            raise ValueError(f"{self.name} is a BOOL (true or false), got {value!r}")
        if self.kind == "uint":
            if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 2**32:
                raise ValueError(f"{self.name} is a UINT, got {value!r}")
            return value
        if self.kind == "enum":
            if isinstance(value, str):
                name = value.upper().removeprefix(self.prefix)
                if name not in self.values:
                    raise ValueError(
                        f"{self.name} {value!r} is not one of {', '.join(self.values)}")
                return name
            if isinstance(value, int) and not isinstance(value, bool):
                names = [k for k, v in self.values.items() if v == value]
                return names[0] if names else value
            raise ValueError(f"{self.name} is an enum name or value, got {value!r}")
        if not isinstance(value, (list, tuple)):
            raise ValueError(f"{self.name} is a list of FLOAT, got {value!r}")
        return tuple(_float(self.name, v) for v in value)

    def to_json(self, value: Any) -> Any:
        return list(value) if self.kind == "floats" else value


def _float(name: str, v: Any) -> float:
    if isinstance(v, bool):
        raise ValueError(f"{name} holds FLOAT values, got {v!r}")
    if isinstance(v, (int, float)):
        return float(v)
    if isinstance(v, str) and v.strip().lower() in ("nan", "inf", "+inf", "-inf"):
        return float(v)
    raise ValueError(f"{name} holds FLOAT values, got {v!r}")


@dataclass(frozen=True)
class OperatorCall:
    """One operator desc: which operator, its tensor descs by member name, its attributes."""

    operator: str
    tensors: Mapping[str, TensorDesc]
    attributes: Mapping[str, Any]

    def to_json(self) -> dict[str, Any]:
        return {
            "operator": self.operator,
            "attributes": {k: list(v) if isinstance(v, tuple) else v
                           for k, v in self.attributes.items()},
            "tensors": {k: d.to_json() for k, d in self.tensors.items()},
        }


def float32(values: Sequence[float]) -> np.ndarray:
    """FLOAT attributes as the operator receives them: rounded to float32, then widened."""
    with np.errstate(over="ignore"):  # beyond float32's range is inf: validate() reports it
        return np.asarray(values, dtype=np.float32).astype(np.float64)


class OperatorSpec(ABC):
    """Everything the suite knows about one DirectML operator.

    Subclasses set the class attributes and implement check (operator-specific rules),
    infer_output_sizes and reference; expected() may add a tolerance model.

    The harness never tests an operator's name: it asks the spec through the hooks below
    (docs/operators.md, "Adding an operator", lists them with what each family needs).

    - About a call: selects_elements (diagnosis, the layouts family), capability_gap (the
      runner's NOT_SUPPORTED reasons).
    - Example calls for the generic case families, as plain data (conformance.ops.examples):
      table_examples (tables), layout_examples (layouts), invalid_example, breaking_sizes,
      too_many_elements and breaking_rules (invalid), large_examples (large),
      bitlevel_examples (bitlevel), draw_call (the explorer's layouts and bitlevel families).
      A hook an operator does not implement raises NotImplementedError naming it; an operator
      to which a family does not apply lists it in not_applicable, with the reason, instead.
    """

    name: str  # DML_OPERATOR_TYPE name without the DML_OPERATOR_ prefix
    type_value: int  # DML_OPERATOR_TYPE value (spec-notes §1)
    introduced: FeatureLevel
    page: str  # spec page key
    tensors: tuple[tuple[str, Kind], ...] = (("InputTensor", "input"), ("OutputTensor", "output"))
    attributes: tuple[Attribute, ...] = ()
    support: tuple[SupportTable, ...] = ()  # ascending by level
    #: Generic family name -> why it does not apply to this operator (its hooks then go unasked).
    not_applicable: Mapping[str, str] = {}

    # -- tables ---------------------------------------------------------------------------------
    def table_at(self, level: FeatureLevel) -> SupportTable | None:
        """The support table in force at a level: the last one at or below it."""
        found = None
        for t in self.support:
            if t.level <= level:
                found = t
        return found

    def level_for(self, data_type: DataType, dimension_count: int) -> FeatureLevel | None:
        """The lowest feature level whose table takes this data type and dimension count."""
        for t in self.support:
            if data_type in t.data_types and dimension_count in t.dimension_counts:
                return t.level
        return None

    def required_level(self, call: OperatorCall) -> FeatureLevel | None:
        """The lowest level at which every tensor's type and dimension count is in the table;
        None if no level takes them."""
        levels = [self.level_for(d.data_type, d.dimension_count) for d in call.tensors.values()]
        if any(level is None for level in levels):
            return None
        return max([self.introduced, *levels])

    @property
    def data_types(self) -> tuple[DataType, ...]:
        """Every data type some table of the operator takes, in DML_TENSOR_DATA_TYPE order."""
        return tuple(sorted(frozenset().union(*(t.data_types for t in self.support))))

    @property
    def inputs(self) -> list[str]:
        return [n for n, k in self.tensors if k == "input"]

    @property
    def outputs(self) -> list[str]:
        return [n for n, k in self.tensors if k == "output"]

    def attribute(self, name: str) -> Attribute:
        for a in self.attributes:
            if a.name == name:
                return a
        raise KeyError(name)

    # -- building calls -------------------------------------------------------------------------
    def make_call(self, tensors: Mapping[str, TensorDesc], attributes: Mapping[str, Any]
                  ) -> OperatorCall:
        """Check the call's structure (member names, attribute types) and canonicalise it.
        Raises ValueError with a message naming the member; semantic rules are validate()'s."""
        names = [n for n, _ in self.tensors]
        unknown = sorted(set(tensors) - set(names))
        missing = [n for n in names if n not in tensors]
        if unknown or missing:
            raise ValueError(f"{self.name} takes tensors {', '.join(names)}"
                             + (f"; unknown: {', '.join(unknown)}" if unknown else "")
                             + (f"; missing: {', '.join(missing)}" if missing else ""))
        known = {a.name for a in self.attributes} | set(self.derived_attributes)
        unknown = sorted(set(attributes) - known)
        if unknown:
            raise ValueError(f"{self.name} has no attribute {', '.join(unknown)}; "
                             f"it takes {', '.join(a.name for a in self.attributes)}")
        missing = [a.name for a in self.attributes if a.name not in attributes]
        if missing:
            raise ValueError(f"{self.name} needs attribute {', '.join(missing)}")
        parsed = {a.name: a.parse(attributes[a.name]) for a in self.attributes}
        self.check_structure(parsed, attributes)
        return OperatorCall(self.name, {n: tensors[n] for n in names}, parsed)

    #: Attributes that a case may state but that follow from others (checked, not stored).
    derived_attributes: tuple[str, ...] = ()

    def check_structure(  # noqa: B027 - optional hook
        self, parsed: dict[str, Any], given: Mapping[str, Any]
    ) -> None:
        """Structural checks beyond single attributes (array lengths); raise ValueError."""

    # -- validation -----------------------------------------------------------------------------
    def validate(self, call: OperatorCall, level: FeatureLevel) -> list[Violation]:
        """All broken rules of this call at a feature level, common rules first."""
        page = Citation(self.page, "Availability")
        t = self.table_at(level)
        if level < self.introduced or t is None:
            return [Violation("operator.level",
                              f"{self.name} was introduced in DML_FEATURE_LEVEL_{self.introduced}; "
                              f"not available at {level}", page)]
        out: list[Violation] = []
        for name, kind in self.tensors:
            desc = call.tensors[name]
            out += validate_desc(desc, name, t.dimension_counts, is_output=kind == "output")
            if desc.data_type not in t.data_types:
                types = ", ".join(sorted(d.name for d in t.data_types))
                out.append(Violation(
                    "operator.data_type",
                    f"{name} DataType {desc.data_type.name} is not supported at feature level "
                    f"{level}; the table from {t.level} lists {types}", t.cite))
        types = {call.tensors[n].data_type for n, _ in self.tensors}
        if len(types) > 1:
            listed = ", ".join(f"{n} {call.tensors[n].data_type.name}" for n, _ in self.tensors)
            out.append(Violation(
                "operator.same_data_type",
                f"InputTensor and OutputTensor must have the same DataType; got {listed}",
                Citation(self.page, "Tensor constraints")))
        return out + self.check(call, level)

    @abstractmethod
    def check(self, call: OperatorCall, level: FeatureLevel) -> list[Violation]:
        """The operator's own rules (block sizes, output sizes, scales, ...)."""

    @abstractmethod
    def infer_output_sizes(self, input_sizes: Sequence[int], attributes: Mapping[str, Any]
                           ) -> tuple[int, ...]:
        """The output Sizes the spec states for an input."""

    def check_output_sizes(self, call: OperatorCall) -> list[Violation]:
        """Output Sizes must be the ones the spec states (for operators whose output sizes follow
        from the input and the attributes)."""
        inp = call.tensors["InputTensor"].sizes
        out = call.tensors["OutputTensor"].sizes
        try:
            want = self.infer_output_sizes(inp, call.attributes)
        except ValueError:
            return []  # the input itself is invalid; its own rule says why
        if tuple(out) != want:
            return [Violation("operator.output_sizes",
                              f"OutputTensor Sizes {list(out)} differ from the {list(want)} "
                              f"the spec states for InputTensor {list(inp)}",
                              Citation(self.page, "OutputTensor"))]
        return []

    # -- what the harness asks about a call (docs/operators.md) --------------------------------
    def selects_elements(self, call: OperatorCall) -> bool:
        """Whether every output element of this call is a copy of one input element (data
        movement, or a selection such as a nearest-neighbour sample) rather than a computed
        value. Diagnosis traces the wrong elements of such a call back to the input; the
        layouts family asks its strided run to equal the packed one bit for bit (a computed
        value is judged against the reference instead, as two arithmetic paths may differ).
        Default: True, as the default expected() is bit-exact data movement."""
        return True

    def capability_gap(self, call: OperatorCall, capabilities: Any) -> str | None:
        """Why a backend's declared capabilities (a backends Capabilities) exclude this valid
        call beyond its operator and data types, which the runner checks itself: a sentence
        for NOT_SUPPORTED, or None where nothing does. Default: None."""
        return None

    def desc_fields(self, call: OperatorCall) -> list[tuple[str, Any]]:
        """The members of the operator's DML_*_OPERATOR_DESC struct in the order its page's
        Syntax block declares them, each with its value: a TensorDesc for a tensor, the
        canonical value for an attribute (Attribute.parse), an int for a member that follows
        from others (derived_attributes: an array's count). `dmlconf export` writes a call's
        desc from it. Default: the tensors, then the attributes, in their declared order."""
        return ([(name, call.tensors[name]) for name, _ in self.tensors]
                + [(a.name, call.attributes[a.name]) for a in self.attributes])

    # -- example calls for the generic case families (docs/operators.md) -----------------------
    def _missing(self, hook: str, family: str) -> NotImplementedError:
        return NotImplementedError(
            f"{self.name} implements no {hook}(), which the {family} family asks for: implement "
            f"it, or list {family!r} in not_applicable with the reason (docs/operators.md)")

    def table_examples(self) -> Sequence[ExampleCall]:
        """tables: one valid call per dimension count (and per variant that changes what the
        tables allow, such as a mode), slugged "<D>d[/<variant>]". The family builds each in
        every data type: valid from the level whose table takes it, rejected where none does."""
        raise self._missing("table_examples", "tables")

    def layout_examples(self) -> Sequence[ExampleCall]:
        """layouts: valid 4-D calls, each with its data_types, slugged by variant ("" for
        one). The family runs each with its input or output padded, NHWC, reversed, broadcast
        or oversized against the packed call: bit-equal where selects_elements, else each
        against the reference."""
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
        """invalid: each of the operator's own rules (check(), and the tables' data types)
        broken alone on invalid_example(). Last in each file."""
        raise self._missing("breaking_rules", "invalid")

    def large_examples(self) -> Sequence[ExampleCall]:
        """large: a few larger calls, each with its operator, one data type and its citations,
        sized to cross vector, tile and thread-split sizes. The family writes a package's calls
        to large/<package>.yaml, each once, in the order given: the operators of a package may
        return one shared list."""
        raise self._missing("large_examples", "large")

    def bitlevel_examples(self) -> Sequence[ExampleCall]:
        """bitlevel: calls that move or select elements (selects_elements), each with its
        operator, data_types and citations, which NaN payloads, -0.0, subnormals and extremes
        must pass bit for bit. Written like large_examples, to bitlevel/<package>.yaml."""
        raise self._missing("bitlevel_examples", "bitlevel")

    def draw_call(self, pick: Pick, selecting: bool = False) -> ExampleCall:
        """The explorer's layouts and bitlevel families: a valid 4-D call drawn with pick
        (each parameter named), with its one data type; selecting: only calls that
        selects_elements, with the citations a bitlevel case gives."""
        raise self._missing("draw_call", "layouts" if not selecting else "bitlevel")

    # -- semantics ------------------------------------------------------------------------------
    @abstractmethod
    def reference(self, call: OperatorCall, inputs: Mapping[str, np.ndarray]
                  ) -> dict[str, np.ndarray]:
        """The reference outputs (logical arrays in each output's dtype) of a valid call."""

    def expected(self, call: OperatorCall, inputs: Mapping[str, np.ndarray],
                 strict: bool = False, flags: ExecutionFlags = ExecutionFlags.NONE
                 ) -> dict[str, Expected]:
        """How each output is judged. Default: bit-exact equality with the reference (data
        movement: the D3D rules keep every bit through "data movement ... that doesn't
        manipulate the data", so the strict model is also the legal envelope).
        strict: judge by the suite's reading alone where the spec is ambiguous (for cases
        marked ambiguous, which decide no verdict). flags: the run's DML_EXECUTION_FLAGS,
        which may widen the legal envelope (Expected.legal) of arithmetic operators."""
        return {name: Expected(values) for name, values in self.reference(call, inputs).items()}


def finite_positive(values: Sequence[float]) -> bool:
    return all(math.isfinite(v) and v > 0 for v in float32(values))
