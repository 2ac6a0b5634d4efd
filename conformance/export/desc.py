"""A call's operator desc as DirectML spells it: DML_OPERATOR_DESC's Type and the
DML_*_OPERATOR_DESC members in the order of the page's Syntax block (the operator's own hook,
OperatorSpec.desc_fields), each tensor a DML_TENSOR_DESC of Type DML_TENSOR_TYPE_BUFFER holding
a DML_BUFFER_TENSOR_DESC, each enum as {"name", "value"} with its DirectML.h value.

Values (docs/spec-notes.md §1, from DirectML.h): DML_TENSOR_DATA_TYPE (conformance.tensors.
DataType), DML_OPERATOR_TYPE (OperatorSpec.type_value), the operators' enums (Attribute.values),
DML_TENSOR_TYPE_BUFFER 1 and DML_TENSOR_FLAG_NONE 0 ("DML_TENSOR_TYPE: INVALID 0, BUFFER 1.
DML_TENSOR_FLAGS: NONE 0, OWNED_BY_DML 1."), DML_EXECUTION_FLAGS (conformance.flags). The
DML_BUFFER_TENSOR_DESC members (DataType, Flags, DimensionCount, Sizes, Strides,
TotalTensorSizeInBytes, GuaranteedBaseOffsetAlignment) are that page's Syntax block.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from conformance import ops
from conformance.flags import PREFIX as EXECUTION_FLAG_PREFIX
from conformance.flags import ExecutionFlags
from conformance.ops import OperatorCall
from conformance.ops.base import Attribute
from conformance.tensors import TensorDesc

UINT_MAX = 2**32 - 1
UINT64_MAX = 2**64 - 1
#: DML_TENSOR_TYPE_BUFFER and DML_TENSOR_FLAG_NONE (spec-notes §1).
TENSOR_TYPE = {"name": "DML_TENSOR_TYPE_BUFFER", "value": 1}
TENSOR_FLAGS = {"name": "DML_TENSOR_FLAG_NONE", "value": 0}


class Inexpressible(ValueError):  # noqa: N818 - what the desc is, said as the spec would
    """A desc that no DirectML call can state (the case file allows it to test a refusal)."""


def enum(name: str | None, value: int) -> dict[str, Any]:
    """An enum member as exported: its DirectML.h name (None for a raw value that names no
    enumerator: an invalid desc) and its value."""
    return {"name": name, "value": int(value)}


def data_type(desc: TensorDesc) -> dict[str, Any]:
    return enum(f"DML_TENSOR_DATA_TYPE_{desc.data_type.name}", int(desc.data_type))


def _uints(values: tuple[int, ...], what: str) -> list[int]:
    if any(not 0 <= v <= UINT_MAX for v in values):
        raise Inexpressible(f"{what} {list(values)} do not fit DirectML's UINT")
    return list(values)


def tensor_desc(name: str, desc: TensorDesc) -> dict[str, Any]:
    """DML_TENSOR_DESC {Type: DML_TENSOR_TYPE_BUFFER, Desc: DML_BUFFER_TENSOR_DESC}.
    TotalTensorSizeInBytes is the size bound (the desc's, or DMLCalcBufferTensorSize where the
    case leaves it out); Strides null where the desc omits them (packed)."""
    if desc.strides is not None and len(desc.strides) != desc.dimension_count:
        raise Inexpressible(f"{name} has {len(desc.strides)} Strides for "
                            f"{desc.dimension_count} Sizes; DML_BUFFER_TENSOR_DESC has one "
                            "DimensionCount for both arrays")
    total = desc.total_size
    if not 0 <= total <= UINT64_MAX:
        raise Inexpressible(f"{name} TotalTensorSizeInBytes {total} does not fit UINT64")
    align = desc.guaranteed_base_offset_alignment
    if not 0 <= align <= UINT_MAX:
        raise Inexpressible(f"{name} GuaranteedBaseOffsetAlignment {align} does not fit UINT")
    return {"Type": TENSOR_TYPE, "Desc": {
        "DataType": data_type(desc),
        "Flags": TENSOR_FLAGS,
        "DimensionCount": desc.dimension_count,
        "Sizes": _uints(desc.sizes, f"{name} Sizes"),
        "Strides": None if desc.strides is None else _uints(desc.strides, f"{name} Strides"),
        "TotalTensorSizeInBytes": total,
        "GuaranteedBaseOffsetAlignment": align,
    }}


def _float(value: float) -> float | str:
    """A FLOAT member as the operator receives it: rounded to float32 (then exact as a JSON
    number), or "nan" / "inf" / "-inf", which JSON has no number for."""
    with np.errstate(over="ignore"):
        f = float(np.float32(value))
    if math.isnan(f):
        return "nan"
    if math.isinf(f):
        return "inf" if f > 0 else "-inf"
    return f


def attribute(a: Attribute, value: Any) -> Any:
    """An attribute member: UINT as a number, an enum as {"name", "value"}, a FLOAT array as
    numbers, a BOOL as 1 or 0 (C's TRUE and FALSE)."""
    if a.kind == "enum":
        enum_type = a.prefix.rstrip("_")
        if isinstance(value, str):
            return enum(f"{a.prefix}{value}", a.values[value])
        if not 0 <= int(value) <= UINT_MAX:
            raise Inexpressible(f"{a.name} {value} does not fit {enum_type}'s 32 bits")
        return enum(None, int(value))
    if a.kind == "floats":
        return [_float(v) for v in value]
    if a.kind == "bool":
        return int(bool(value))
    return int(value)


def operator_desc(call: OperatorCall) -> dict[str, Any]:
    """DML_OPERATOR_DESC of a call: {"Type": {name, value}, "DescType": the struct's name,
    "Desc": its members in declaration order}."""
    spec = ops.get(call.operator)
    attributes = {a.name: a for a in spec.attributes}
    members: dict[str, Any] = {}
    for name, value in spec.desc_fields(call):
        if isinstance(value, TensorDesc):
            members[name] = tensor_desc(name, value)
        elif name in attributes:
            members[name] = attribute(attributes[name], value)
        else:  # a count that follows from an array
            members[name] = int(value)
    return {"Type": enum(f"DML_OPERATOR_{spec.name}", spec.type_value),
            "DescType": f"DML_{spec.name}_OPERATOR_DESC", "Desc": members}


def execution_flags(flags: ExecutionFlags) -> dict[str, Any]:
    """DML_EXECUTION_FLAGS as {"names", "value"} (DML_EXECUTION_FLAG_NONE for none)."""
    names = [f"{EXECUTION_FLAG_PREFIX}{n}" for n in flags.names] or [
        f"{EXECUTION_FLAG_PREFIX}NONE"]
    return {"names": names, "value": int(flags)}
