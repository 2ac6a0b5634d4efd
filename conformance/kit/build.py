"""Builders for generated cases: plain dicts in the case-file format (docs/case-format.md), with
their feature level worked out from the operator spec and the sha256 of every generated input."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

from conformance import inputs as sources
from conformance import ops
from conformance.levels import FeatureLevel
from conformance.ops.examples import desc as desc  # re-exported: the one desc builder
from conformance.tensors import DataType, TensorDesc, packed_strides

ALL_TYPES = tuple(DataType)
FLOATS = (DataType.FLOAT32, DataType.FLOAT16, DataType.FLOAT64)


def seed_of(case_id: str) -> int:
    """A stable seed per case id (the same on every run and machine)."""
    return int(hashlib.sha256(case_id.encode()).hexdigest()[:8], 16)


def random_input(case_id: str, tensor_desc: Mapping[str, Any], distribution: str = "bits",
                 *, seed: int | None = None, **params: float) -> dict[str, Any]:
    """A seeded random source with its sha256 recorded. seed: default seed_of(case_id)."""
    rnd = {"seed": seed_of(case_id) if seed is None else seed, "distribution": distribution,
           **params}
    values = sources.generate("random", rnd, TensorDesc.from_json(dict(tensor_desc)))
    return {"random": rnd, "sha256": sources.sha256(values)}


def iota_input(tensor_desc: Mapping[str, Any], start: float = 0, step: float = 1
               ) -> dict[str, Any]:
    params = {"start": start, "step": step}
    values = sources.generate("iota", params, TensorDesc.from_json(dict(tensor_desc)))
    return {"iota": params, "sha256": sources.sha256(values)}


def values_for(case_id: str, tensor_desc: Mapping[str, Any], seed: int | None = None
               ) -> dict[str, Any]:
    """The default input of a case: random bit patterns for data movement of any type."""
    return random_input(case_id, tensor_desc, "bits", seed=seed)


def smooth_input(case_id: str, tensor_desc: Mapping[str, Any], seed: int | None = None
                 ) -> dict[str, Any]:
    """Finite values for arithmetic operators: uniform in [-8, 8] for floats, the whole range for
    the 8-bit integers."""
    data_type = DataType.parse(tensor_desc["DataType"])
    if data_type.is_float:
        return random_input(case_id, tensor_desc, "uniform", seed=seed, low=-8.0, high=8.0)
    return random_input(case_id, tensor_desc, "integers", seed=seed)


def level_of(operator: str, tensors: Mapping[str, Mapping[str, Any]],
             attributes: Mapping[str, Any]) -> FeatureLevel:
    """The lowest feature level at which this call is valid (the case's feature_level)."""
    spec = ops.get(operator)
    call = spec.make_call({n: TensorDesc.from_json(dict(d)) for n, d in tensors.items()},
                          attributes)
    level = spec.required_level(call)
    if level is None:
        raise ValueError(f"{operator} takes these tensors at no level: {dict(tensors)}")
    return level


def case(case_id: str, operator: str, attributes: Mapping[str, Any],
         tensors: Mapping[str, Mapping[str, Any]], *, family: str, spec: Sequence[dict],
         inputs: Mapping[str, Any] | None = None, expected: Any = "reference",
         level: FeatureLevel | None = None, tags: Sequence[str] = (), description: str = "",
         ambiguous: str | None = None, open_region: str | None = None,
         may_reject: str | None = None, **extra: Any) -> dict[str, Any]:
    """One single-call case dict. expected: "reference" (the default) for the reference,
    "rejected", a mapping of outputs, or None for a case judged by its relations alone.
    may_reject: why a rejection is also admissible (an open region of validation)."""
    if level is None:
        level = level_of(operator, tensors, attributes)
    out: dict[str, Any] = {"id": case_id}
    if description:
        out["description"] = description
    out["feature_level"] = str(level)
    out["tags"] = [family, operator.lower(), *tags]
    out["spec"] = list(spec)
    if ambiguous:
        out["ambiguous"] = ambiguous
    if open_region:
        out["open"] = open_region
    if may_reject:
        out["may_reject"] = may_reject
    out["operator"] = operator
    out["attributes"] = dict(attributes)
    out["tensors"] = {n: dict(d) for n, d in tensors.items()}
    if inputs is None:
        inputs = {"InputTensor": values_for(case_id, tensors["InputTensor"])}
    out["inputs"] = dict(inputs)
    if expected == "reference":
        out["expected"] = {"OutputTensor": "reference"}
    elif expected is not None:
        out["expected"] = expected
    out.update(extra)
    return out


def chain(case_id: str, calls: Sequence[dict[str, Any]], *, family: str, spec: Sequence[dict],
          inputs: Mapping[str, Any], relations: Sequence[dict[str, Any]],
          expected: Mapping[str, Any] | None = None, tags: Sequence[str] = (),
          description: str = "", ambiguous: str | None = None,
          open_region: str | None = None) -> dict[str, Any]:
    """A case of several calls judged by relations between their tensors."""
    level = max(level_of(c["operator"], c["tensors"], c["attributes"]) for c in calls)
    out: dict[str, Any] = {"id": case_id}
    if description:
        out["description"] = description
    out["feature_level"] = str(level)
    out["tags"] = [family, *dict.fromkeys(c["operator"].lower() for c in calls), *tags]
    out["spec"] = list(spec)
    if ambiguous:
        out["ambiguous"] = ambiguous
    if open_region:
        out["open"] = open_region
    out["calls"] = list(calls)
    out["inputs"] = dict(inputs)
    if expected:
        out["expected"] = dict(expected)
    if relations:
        out["relations"] = list(relations)
    return out


def cite(page: str, section: str = "") -> dict[str, str]:
    return {"page": str(page), "section": section} if section else {"page": page}


def nhwc_strides(sizes: Sequence[int]) -> list[int]:
    """NHWC layout of NCHW sizes (dml-helper-functions § CalculateStrides)."""
    _, c, h, w = sizes
    return [h * w * c, 1, w * c, c]


def reversed_strides(sizes: Sequence[int]) -> list[int]:
    """The dimension order reversed: the first dimension varies fastest."""
    return list(reversed(packed_strides(list(reversed(sizes)))))


def padded_strides(sizes: Sequence[int], pad: int = 3) -> list[int]:
    """Rows padded by `pad` elements and every higher dimension by one more row."""
    strides = [1]
    for i in range(len(sizes) - 1, 0, -1):
        strides.insert(0, strides[0] * sizes[i] + (pad if i == len(sizes) - 1 else strides[0]))
    return strides
