"""What every operator spec has: tensors, attributes, support tables per feature level, the
rules common to all operators, and the interface each operator module implements."""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from conformance.expected import Expected
from conformance.flags import ExecutionFlags
from conformance.levels import FeatureLevel
from conformance.ops.examples import Examples
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
    doc: what the member holds, in a sentence (the operator reference, `dmlconf describe`).
    """

    name: str
    kind: Literal["uint", "enum", "floats", "bool"]
    values: Mapping[str, int] = field(default_factory=dict)
    prefix: str = ""
    doc: str = ""

    @property
    def python_type(self) -> str:
        """The type of its canonical value (parse()), as `call.attributes` holds it."""
        return PYTHON_TYPES[self.kind]

    @property
    def directml_type(self) -> str:
        """The member's type in the desc: UINT, BOOL, a FLOAT array, or the enum's type."""
        if self.kind == "enum":
            return self.prefix.removesuffix("_")
        return {"uint": "UINT", "bool": "BOOL", "floats": "FLOAT array"}[self.kind]

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


#: Attribute kind -> the Python type of its canonical value in `call.attributes`.
PYTHON_TYPES = {"uint": "int", "enum": "str", "floats": "tuple[float, ...]", "bool": "bool"}


@dataclass(frozen=True)
class Statement:
    """A sentence of what an operator computes, and where it is stated (the operator
    reference's formula, OperatorSpec.formula)."""

    text: str
    cite: Citation


@dataclass(frozen=True)
class ExampleKernel:
    """The computation of the operator reference's example backend (docs/operators/<NAME>.md),
    in plain NumPy, whose source the page shows and a test runs against the operator's cases.

    compute:     (logical input, the output's Sizes, call.attributes) -> the logical output,
                 in the input's dtype.
    helpers:     the functions compute calls, shown before it (their source, as written).
    unsupported: (call.attributes) -> why the example declines a call (its backend's
                 unsupported_reason), or None to run it; None where it takes every call.
    """

    compute: Callable[[np.ndarray, Sequence[int], Mapping[str, Any]], np.ndarray]
    helpers: tuple[Callable[..., Any], ...] = ()
    unsupported: Callable[[Mapping[str, Any]], str | None] | None = None


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
    """What every DirectML operator must answer: its identity and support tables, how its calls
    are built and validated, its reference and how its outputs are judged, and the few
    questions the harness asks about a call.

    Subclasses set the class attributes and implement check (operator-specific rules),
    infer_output_sizes and reference; expected() may add a tolerance model.

    The harness never tests an operator's name: it asks the spec (docs/operators.md, "Adding an
    operator", lists what each part of the harness asks).

    - About a call: selects_elements (diagnosis, the layouts family), capability_gap (the
      runner's NOT_SUPPORTED reasons), desc_fields (`dmlconf export`).
    - The example calls of the generic case families are no part of the spec: they are its
      `examples`, an instance of examples_type (a conformance.ops.examples.Examples subclass,
      whose hooks the families ask and whose not_applicable says which families do not apply).
    """

    name: str  # DML_OPERATOR_TYPE name without the DML_OPERATOR_ prefix
    type_value: int  # DML_OPERATOR_TYPE value (spec-notes §1)
    introduced: FeatureLevel
    page: str  # spec page key
    tensors: tuple[tuple[str, Kind], ...] = (("InputTensor", "input"), ("OutputTensor", "output"))
    attributes: tuple[Attribute, ...] = ()
    support: tuple[SupportTable, ...] = ()  # ascending by level
    #: The class of the operator's example calls for the generic families (the base: none, each
    #: hook raising NotImplementedError that names it).
    examples_type: type[Examples] = Examples

    @property
    def examples(self) -> Examples:
        """The operator's example calls for the generic case families (docs/operators.md)."""
        return self.examples_type(self)

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
        found = [level for level in levels if level is not None]
        if len(found) < len(levels):
            return None
        return max([self.introduced, *found])

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
            out += validate_desc(desc, name, sorted(t.dimension_counts),
                                 is_output=kind == "output")
            if desc.data_type not in t.data_types:
                listed = ", ".join(sorted(d.name for d in t.data_types))
                out.append(Violation(
                    "operator.data_type",
                    f"{name} DataType {desc.data_type.name} is not supported at feature level "
                    f"{level}; the table from {t.level} lists {listed}", t.cite))
        if len({call.tensors[n].data_type for n, _ in self.tensors}) > 1:
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

    def consistent_with(self, call: OperatorCall, x: np.ndarray, index: tuple[int, ...],
                        value: float) -> str | None:
        """For a computed output element the judge found wrong: which inputs and weights its
        value is consistent with, in words a reader acts on (the diagnosis of an output with
        no catalogued misreading); None where the operator has nothing to say. x: the logical
        input. Default: None (data movement is traced to its source element instead)."""
        return None

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

    # -- the operator reference (docs/operators/<NAME>.md, `dmlconf describe`) ----------------
    #: The example backend's computation, which the reference shows and a test runs; None: the
    #: reference shows no example backend.
    example_kernel: ExampleKernel | None = None

    def formula(self) -> list[Statement]:
        """What the operator computes and how its outputs are judged, sentence by sentence,
        each with where it is stated. Default: nothing said."""
        return []

    def tensor_doc(self, name: str) -> str:
        """What a tensor member holds (its layout, its Sizes), in a sentence; "" for nothing
        beyond its name and kind."""
        return ""

    def derived_doc(self, name: str) -> str:
        """What a derived attribute (derived_attributes) follows from, in a sentence."""
        return ""

    def capability_fields(self) -> tuple[str, ...]:
        """The fields of a backend's Capabilities that capability_gap reads for this operator,
        beyond the operators, feature level, strides and invalid descs that every operator's
        cases ask about. Default: none."""
        return ()

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
