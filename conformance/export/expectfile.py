"""The expectation file (.expect): one output's acceptance rule, or one relation's, in a small
binary format that a C reader parses in a few lines (c/dmlconf_vectors.c; docs/vectors.md says
the same). Little-endian throughout; `str` is a u32 byte count then UTF-8 bytes, no NUL.

    magic      8 bytes "DMLCEXP2"
    u32        what: 1 an output, 2 a relation (left == right)
    str        name: the tensor as messages name it ("OutputTensor", "b.OutputTensor")
    tensor     the output (a relation: its left side)
    relation only:
      tensor   the right side
      i32      take axis (-1: none): the right side's elements taken along one axis ...
      u32      take count, then u32 indices[count] ... in this order (numpy.take)
    u32        fill count (0 for a relation), then u8 fills[count]: the byte the output
               buffer is filled with before the dispatch, per run (a second run, with the
               second fill, where the first fill is itself an acceptable value somewhere)
    u32        model count: 1 (the strict model is also the legal envelope) or 2 (strict, then
               legal); then the models
    u32        reading count: the other admissible readings of an open region of the spec
               (Expected.readings; at most 16, 0 for a relation), then per reading its model
               count (1 or 2) and models, as above: an output outside the first envelope is
               judged by the first reading whose envelope holds it, and FAILs when none does
  tensor:
    u32 DML_TENSOR_DATA_TYPE, u32 DimensionCount, u64 TotalTensorSizeInBytes,
    u32 Sizes[DimensionCount], u32 element strides[DimensionCount] (packed ones where the
    desc omits Strides): element i of the logical tensor (row-major index) lives at byte
    dot(index, strides) * element size of the buffer
  model:
    u32 kind: 0 exact, 1 one_of, 2 within
    u32 any_nan: 1 where a NaN is expected any NaN is acceptable (exact, one_of)
    str rule: the words of the tolerance (docs/tolerances.md)
    u32 value arrays, then each: element count * element size bytes, the raw bits of each
        logical element in row-major order. exact: 1, one_of: 1 + alternatives (an element
        passes when it equals, bit for bit, the element of any); within: 0. A relation: 0,
        the right side's elements stand in their place.
    within only:
      u64 center count (the element count; 0 in a relation: the right side's elements,
          widened to float64), f64 center[count]
      u64 bound count (1: one bound for all; or the element count), f64 bound[count]
      u64 nan_ok count (0: none; 1 or the element count), u8 nan_ok[count]
      an element passes when |float64(got) - center| <= bound, or both are NaN, or the
      center is infinite and got equals it, or nan_ok and got is NaN (compare.mismatches).

The models are conformance.expected.Expected, written as conformance.judge.compare judges
them: FAIL outside the legal envelope, QUALITY_WARNING inside it but outside the strict model,
PASS otherwise. A relation's models are those the runner gives it (session.case_run's relation
model): bit for bit, and legally within the left output's envelope around the right side.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence

import numpy as np

from conformance.casefile import Take
from conformance.expected import Expected
from conformance.tensors import TensorDesc

MAGIC = b"DMLCEXP2"
#: The most admissible readings a file holds besides the suite's (DMLCONF_MAX_READINGS).
MAX_READINGS = 16
OUTPUT, RELATION = 1, 2
KINDS = {"exact": 0, "one_of": 1, "within": 2}


def _u32(v: int) -> bytes:
    return struct.pack("<I", v)


def _u64(v: int) -> bytes:
    return struct.pack("<Q", v)


def _str(text: str) -> bytes:
    data = text.encode("utf-8")
    return _u32(len(data)) + data


def _tensor(desc: TensorDesc) -> bytes:
    return (_u32(int(desc.data_type)) + _u32(desc.dimension_count) + _u64(desc.total_size)
            + b"".join(_u32(s) for s in desc.sizes)
            + b"".join(_u32(s) for s in desc.element_strides))


def _elements(values: np.ndarray, desc: TensorDesc) -> bytes:
    """The raw bits of each element (the dtypes are little-endian), row-major."""
    typed = np.ascontiguousarray(values, dtype=desc.data_type.numpy_dtype)
    return typed.view(desc.data_type.bits_dtype).tobytes()


def _per_element(array: np.ndarray | None, shape: tuple[int, ...], dtype: str) -> bytes:
    """u64 count, then the values: none (count 0), one shared by all elements (count 1), or one
    per element in row-major order."""
    if array is None:
        return _u64(0)
    full = np.ascontiguousarray(np.broadcast_to(np.asarray(array, dtype=dtype), shape).ravel())
    bits = full.view(f"<u{full.itemsize}")
    if full.size and np.all(bits == bits[0]):
        full = full[:1]
    return _u64(full.size) + full.tobytes()


def _model(exp: Expected, desc: TensorDesc, relation: bool) -> bytes:
    out = _u32(KINDS[exp.kind]) + _u32(int(exp.any_nan)) + _str(exp.rule)
    if exp.kind == "within" or relation:
        out += _u32(0)
    else:
        arrays = [exp.values, *(exp.alternatives if exp.kind == "one_of" else ())]
        out += _u32(len(arrays)) + b"".join(_elements(a, desc) for a in arrays)
    if exp.kind == "within":
        shape = desc.sizes
        out += _u64(0) if relation else _per_element(exp.center, shape, "<f8")
        out += _per_element(exp.bound, shape, "<f8")
        out += _per_element(exp.nan_ok, shape, "u1")
    return out


def _models(exp: Expected, desc: TensorDesc, relation: bool) -> bytes:
    models = [exp] if exp.legal is None else [exp, exp.legal]
    return _u32(len(models)) + b"".join(_model(m, desc, relation) for m in models)


def output(name: str, desc: TensorDesc, exp: Expected, fills: Sequence[int]) -> bytes:
    """The .expect file of one output judged against exp, filled with fills[k] in run k."""
    if len(exp.readings) > MAX_READINGS:
        raise ValueError(f"{len(exp.readings)} admissible readings: a file holds {MAX_READINGS}")
    return (MAGIC + _u32(OUTPUT) + _str(name) + _tensor(desc)
            + _u32(len(fills)) + bytes(fills) + _models(exp, desc, relation=False)
            + _u32(len(exp.readings))
            + b"".join(_models(r, desc, relation=False) for r in exp.readings))


def relation(name: str, left: TensorDesc, right: TensorDesc, take: Take | None,
             model: Expected) -> bytes:
    """The .expect file of a relation left == right (right's elements taken first, if take):
    model's kinds, rules and bounds; its values are the right side's, known only at run time."""
    taken = (struct.pack("<i", -1) + _u32(0) if take is None else
             struct.pack("<i", take.axis) + _u32(len(take.indices))
             + b"".join(_u32(i) for i in take.indices))
    return (MAGIC + _u32(RELATION) + _str(name) + _tensor(left) + _tensor(right) + taken
            + _u32(0) + _models(model, left, relation=True) + _u32(0))
