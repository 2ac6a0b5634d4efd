"""The memory of making a case's inputs (issue 13) is bounded by what the case file says, and
checked before anything is made.

Each generator makes its values chunk by chunk (inputs.CHUNK elements) into the result, so its
peak is the values plus one chunk's scratch: inputs.working_bytes, known from the desc and the
generator. A case whose input is over the limit is refused at load, naming the file and line,
before anything is allocated; the loader hashes a missing sha256 chunk by chunk, never holding
the values, and at most MAX_HASHED_BYTES of them per file.

Peaks are measured with tracemalloc, which sees NumPy's allocations. A small limit (LIMIT)
stands in for the real one (1 GiB + 4 MiB, which would take gigabytes to reach): the model, the
check and the chunking are the same.
"""

from __future__ import annotations

import time
import tracemalloc
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from conformance import inputs as sources
from conformance.casefile import CaseFileError, load_text, logical_values
from conformance.casefile import build as casefile_build
from conformance.tensors import DataType, TensorDesc

LIMIT = 8 << 20  # the test's stand-in for inputs.MAX_WORKING_BYTES
C = sources.CHUNK

#: Every generator, on a 1-byte type (the scratch weighs most) and on a wide one.
GENERATORS: list[tuple[str, Any, str]] = [
    ("iota", {"start": 3, "step": 2}, "UINT8"),
    ("iota", {"start": -5, "step": 7}, "INT64"),
    ("iota", {"start": 0.5, "step": 0.25}, "FLOAT32"),
    ("constant", 7, "UINT8"),
    ("constant", "-inf", "FLOAT64"),
    *[("random", {"seed": 3, "distribution": d}, t)
      for d in ("uniform", "normal", "integers", "bits") for t in ("UINT8", "FLOAT64")],
]
IDS = [f"{k}-{p['distribution'] if isinstance(p, dict) and 'distribution' in p else ''}-{t}"
       .replace("--", "-") for k, p, t in GENERATORS]


def peak_of(make: Callable[[], Any]) -> tuple[Any, int]:
    """make()'s result and the peak of the memory traced while it ran."""
    tracemalloc.start()
    tracemalloc.reset_peak()
    try:
        result = make()
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def refused(expected: type[Exception], make: Callable[[], Any]) -> tuple[Exception, int]:
    """The exception make() raises, and the peak of the memory traced until then."""
    tracemalloc.start()
    tracemalloc.reset_peak()
    try:
        with pytest.raises(expected) as info:
            make()
        return info.value, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def at_limit(kind: str, params: Any, type_name: str, limit: int) -> int:
    """The most elements an input of this generator and type may have under limit."""
    data_type = DataType.parse(type_name)
    scratch = sources.working_bytes(kind, params, TensorDesc(data_type, (C,))) - C * data_type.size
    n = (limit - scratch) // data_type.size
    assert sources.working_bytes(kind, params, TensorDesc(data_type, (n,))) <= limit
    assert sources.working_bytes(kind, params, TensorDesc(data_type, (n + 1,))) > limit
    return n


REFERENCE = "\n      OutputTensor: reference"


def case_text(source: str, type_name: str, n: int | str, expected: str = REFERENCE) -> str:
    """A case of one DEPTH_TO_SPACE1 call on Sizes [1, 1, 1, n] (or n, a text '[...]') of the
    type, its input from source (a flow mapping) on line 11."""
    sizes = n if isinstance(n, str) else f"[1, 1, 1, {n}]"
    return f"""\
cases:
  - id: t/memory
    operator: DEPTH_TO_SPACE1
    feature_level: "5_0"
    spec: {{page: DML_DEPTH_TO_SPACE1_OPERATOR_DESC}}
    attributes: {{BlockSize: 1, Order: DEPTH_COLUMN_ROW}}
    tensors:
      InputTensor: {{DataType: {type_name}, Sizes: {sizes}}}
      OutputTensor: {{DataType: {type_name}, Sizes: {sizes}}}
    inputs:
      InputTensor: {source}
    expected:{expected}
"""


def flow(kind: str, params: Any, sha256: str | None = None) -> str:
    import json

    return "{" + f"{kind}: {json.dumps(params)}" + (f", sha256: {sha256}" if sha256 else "") + "}"


@pytest.fixture(autouse=True, scope="module")
def _warm_loader() -> None:
    """The loader's one-time work (compiling the schema, importing the operators) is done
    before any peak is measured: the peaks are of a load, not of the first one."""
    load_text(case_text(flow("iota", {}, "a" * 64), "UINT8", 4), "warm.yaml")


@pytest.mark.parametrize(("kind", "params", "type_name"), GENERATORS, ids=IDS)
def test_a_file_at_the_limit_makes_its_input_within_it_and_one_over_is_refused_at_load(
        monkeypatch: pytest.MonkeyPatch, kind: str, params: Any, type_name: str) -> None:
    monkeypatch.setattr(sources, "MAX_WORKING_BYTES", LIMIT)
    monkeypatch.setattr(casefile_build, "MAX_HASHED_BYTES", LIMIT)
    n = at_limit(kind, params, type_name, LIMIT)
    desc = TensorDesc(DataType.parse(type_name), (1, 1, 1, n))
    scratch = sources.working_bytes(kind, params, desc) - n * desc.data_type.size
    # without its sha256 the loader tells it, hashing chunk by chunk: the values never whole
    error, peak = refused(CaseFileError, lambda: load_text(case_text(flow(kind, params),
                                                                     type_name, n), "no.yaml"))
    digest = sources.generated_sha256(kind, params, desc)
    assert f"hash to {digest}" in str(error)
    assert peak <= scratch + (1 << 20) < n * desc.data_type.size + scratch // 2, peak

    (case,) = load_text(case_text(flow(kind, params, digest), type_name, n), "at-limit.yaml")
    source = case.inputs["call.InputTensor"]
    values, peak = peak_of(lambda: logical_values(source, desc))  # what the runner makes
    assert sources.sha256(values) == digest
    assert values.nbytes <= peak <= sources.working_bytes(kind, params, desc) <= LIMIT, (
        f"peak {peak:,} for {values.nbytes:,} bytes of values")

    over = case_text(flow(kind, params, digest), type_name, n + 1)
    started = time.perf_counter()
    error, peak = refused(CaseFileError, lambda: load_text(over, "over.yaml"))
    assert isinstance(error, CaseFileError)
    assert error.path == "over.yaml" and error.line == 11, str(error)
    assert "generated input too large" in error.message
    assert f"and {LIMIT:,} bytes of memory" in error.message
    assert peak < 1 << 20, "refused before the values were allocated"
    assert time.perf_counter() - started < 2
    # and generate() itself refuses, unallocated
    _, peak = refused(sources.TooLargeError, lambda: sources.generate(
        kind, params, TensorDesc(desc.data_type, (n + 1,))))
    assert peak < 1 << 20


@pytest.mark.parametrize("kind", ["values", "bits", "buffer"])
@pytest.mark.parametrize("type_name", ["UINT8", "FLOAT64"])
def test_inline_values_are_converted_within_their_model(kind: str, type_name: str) -> None:
    """Inline values (bounded by the file's MAX_VALUES): a reference to each, the values, and
    one chunk's scratch: float texts such as "nan" make new objects, chunk by chunk."""
    data_type = DataType.parse(type_name)
    n = 3 * C + 5
    numbers = ["nan", 1.5, "-inf"] if data_type.is_float and kind != "bits" else [1, 200, "0x7f"]
    params = [numbers[i % 3] for i in range(n)]
    desc = TensorDesc(data_type, (1, n))
    make = {"values": sources.from_values, "bits": sources.from_bits,
            "buffer": sources.buffer_image}[kind]
    values, peak = peak_of(lambda: make(params, desc))
    assert values.nbytes == n * data_type.size
    assert values.nbytes <= peak <= sources.working_bytes(kind, params, desc), peak
    _, peak = peak_of(lambda: sources.exact_values(params, desc))  # float64 values
    assert peak <= 16 * n + C * sources.INLINE_SCRATCH_PER_ELEMENT, peak


# -- the files ----------------------------------------------------------------------------
def test_the_700_byte_memory_bomb_is_refused_in_kilobytes() -> None:
    """UINT8 [1, 4, 16384, 16384] normal without sha256 took 81 s and 16.8 GB before failing
    with MemoryError as 'a loader bug'; a UINT32 bits input took 1.8 GB."""
    for type_name, (h, w), distribution in (("UINT8", (16384, 16384), "normal"),
                                            ("UINT32", (8192, 8192), "bits")):
        params = {"seed": 1, "distribution": distribution}
        text = case_text(flow("random", params), type_name, f"[1, 4, {h}, {w}]")
        assert len(text) < 700
        started = time.perf_counter()
        error, peak = refused(CaseFileError, lambda t=text: load_text(t, "b.yaml"))
        assert isinstance(error, CaseFileError) and error.line == 11, str(error)
        assert "needs its sha256" in error.message
        assert "1,073,741,824 bytes are too many to generate here" in error.message
        assert peak < 4 << 20 and time.perf_counter() - started < 2
        # with its sha256 it loads: the input is 1 GiB, within the limit (the runner's memory
        # cap then decides whether it runs), and is made in at most 1 GiB + 4 MiB
        text = case_text(flow("random", params, "a" * 64), type_name, f"[1, 4, {h}, {w}]")
        (case,) = load_text(text, "b.yaml")
        desc = case.desc("call.InputTensor")
        need = sources.working_bytes("random", params, desc)
        assert 1 << 30 < need <= sources.MAX_WORKING_BYTES == (1 << 30) + (4 << 20)
        # one element more than 1 GiB of values is refused at load, before anything is made
        over = case_text(flow("random", params, "a" * 64), type_name, f"[1, 4, {h}, {w + 1}]")
        error, peak = refused(CaseFileError, lambda t=over: load_text(t, "b.yaml"))
        assert isinstance(error, CaseFileError) and error.line == 11, str(error)
        assert "generated input too large" in error.message
        assert peak < 4 << 20


def test_a_rejected_case_may_describe_a_huge_input_which_is_never_made() -> None:
    """A desc that must be rejected may be huge (issue 7): it loads; should a backend accept it,
    making its input is refused before allocating (the runner reports the acceptance)."""
    text = case_text(flow("random", {"seed": 1, "distribution": "normal"}, "a" * 64), "UINT8",
                     "[1000, 1000, 1000, 1000]", expected=" rejected")
    (case,) = load_text(text, "r.yaml")
    source, desc = case.inputs["call.InputTensor"], case.desc("call.InputTensor")
    error, peak = refused(sources.TooLargeError, lambda: logical_values(source, desc))
    assert "1,000,000,000,000 UINT8 values" in str(error) and peak < 1 << 20


def test_the_loader_hashes_at_most_its_budget_per_file(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(casefile_build, "MAX_HASHED_BYTES", 1000)
    one = case_text(flow("iota", {}), "UINT8", 600)
    body = one.split("\n", 1)[1]
    errors: list[CaseFileError] = []
    load_text(one + body.replace("t/memory", "t/second"), "two.yaml", errors)
    want = sources.generated_sha256("iota", {}, TensorDesc(DataType.UINT8, (1, 1, 1, 600)))
    assert [e.line for e in errors] == [11, 23]
    assert f"hash to {want}" in errors[0].message
    assert "600 bytes are too many to generate here" in errors[1].message
    errors = []  # the budget is per file: another file gets its own
    load_text(one, "three.yaml", errors)
    assert f"hash to {want}" in errors[0].message


# -- chunking changes no byte ---------------------------------------------------------------------
@pytest.mark.parametrize("type_name", ["FLOAT32", "FLOAT16", "UINT8", "INT16", "UINT64"])
def test_chunks_give_the_bytes_of_one_pass_over_the_documented_formulas(type_name: str) -> None:
    """Across chunk boundaries (n not a multiple of CHUNK), every generator gives the bytes of
    the formulas of docs/case-format.md computed in one pass, as the recorded sha256s were."""
    data_type = DataType.parse(type_name)
    dtype, n = data_type.numpy_dtype, 2 * C + 3
    desc = TensorDesc(data_type, (n,))

    def typed(x: np.ndarray, rint: bool = True) -> np.ndarray:
        if data_type.is_float:
            return x.astype(dtype)
        info = np.iinfo(dtype)
        return np.clip(np.rint(x) if rint else x, info.min, info.max).astype(dtype)

    u = np.random.default_rng(9).random(2 * n)
    low, high = (-1000, 1000) if data_type.is_float else (np.iinfo(dtype).min,
                                                         np.iinfo(dtype).max)
    want = {
        "uniform": typed(-3 + 8 * u[:n]),
        "normal": typed(2 + 3 * np.sqrt(-2.0 * np.log1p(-u[:n])) * np.cos(2.0 * np.pi * u[n:])),
        "integers": typed(np.minimum(np.floor(low + (high - low + 1) * u[:n]), high), rint=False),
        "bits": np.frombuffer(np.random.default_rng(9).bytes(n * dtype.itemsize), dtype=dtype),
    }
    params = {"seed": 9, "low": -3, "high": 5, "mean": 2, "std": 3}
    for dist, values in want.items():
        p = {**params, "distribution": dist}
        if dist == "integers":
            p = {"seed": 9, "distribution": dist}
        got = sources.generate("random", p, desc)
        assert got.tobytes() == values.tobytes(), dist
        assert sources.generated_sha256("random", p, desc) == sources.sha256(values), dist
    i = np.arange(n, dtype=np.uint64)
    iota = (0.5 + 0.25 * np.arange(n, dtype=np.float64)).astype(dtype) if data_type.is_float \
        else (np.uint64(250) + np.uint64(3) * i).astype(data_type.bits_dtype).view(dtype)
    params = {"start": 0.5, "step": 0.25} if data_type.is_float else {"start": 250, "step": 3}
    assert sources.generate("iota", params, desc).tobytes() == iota.tobytes()
    assert sources.generated_sha256("iota", params, desc) == sources.sha256(iota)
    assert sources.generate("constant", 5, desc).tobytes() == np.full(n, 5, dtype).tobytes()


def test_sha256_hashes_without_copying_packed_values() -> None:
    values = sources.generate("iota", {}, TensorDesc(DataType.UINT32, (1, 4, 512, 512)))
    digest, peak = peak_of(lambda: sources.sha256(values))
    assert digest == sources.generated_sha256("iota", {}, TensorDesc(DataType.UINT32,
                                                                     (1, 4, 512, 512)))
    assert peak < values.nbytes // 8, peak
