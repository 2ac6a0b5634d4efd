"""What every operator spec has: tensors, attributes, support tables per feature level, the
rules common to all operators, and the interface each operator module implements."""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from conformance.compare import Expected
from conformance.flags import ExecutionFlags
from conformance.levels import FeatureLevel
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
    """

    name: str
    kind: Literal["uint", "enum", "floats", "bool"]
    values: Mapping[str, int] = field(default_factory=dict)

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
                name = value.upper()
                for prefix in _ENUM_PREFIXES:
                    name = name.removeprefix(prefix)
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


_ENUM_PREFIXES = ("DML_DEPTH_SPACE_ORDER_", "DML_INTERPOLATION_MODE_", "DML_AXIS_DIRECTION_")


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
    """

    name: str  # DML_OPERATOR_TYPE name without prefix, e.g. "DEPTH_TO_SPACE1"
    type_value: int  # DML_OPERATOR_TYPE value (spec-notes §1)
    introduced: FeatureLevel
    page: str  # spec page key
    tensors: tuple[tuple[str, Kind], ...] = (("InputTensor", "input"), ("OutputTensor", "output"))
    attributes: tuple[Attribute, ...] = ()
    support: tuple[SupportTable, ...] = ()  # ascending by level

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
        """Output Sizes must be the ones the spec states (shared by the depth/space ops)."""
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
