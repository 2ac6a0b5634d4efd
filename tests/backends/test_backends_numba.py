"""The Numba backend: certified on the whole committed suite, writes only logical elements, its
kernels are cached on disk for the next process, and RESAMPLE2 / RESAMPLE3 (RoundingDirection,
antialiased linear) agree with the NumPy reference on random shapes, types and layouts."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("numba")

from conformance import ops
from conformance.backend import Backend, load_backend
from conformance.casefile import load_cases
from conformance.judge.compare import judge
from conformance.kit.build import padded_strides, reversed_strides
from conformance.levels import HIGHEST
from conformance.ops import OperatorCall
from conformance.results import exit_status
from conformance.session.case_run import run_cases
from conformance.tensors import DataType, TensorDesc, footprint_mask, read_tensor, write_tensor
from tests.support import CASES, GENERATED, ROOT, execute_at


@pytest.mark.certification
def test_the_whole_committed_suite_passes_on_numba() -> None:
    cases = load_cases([CASES])
    results = run_cases(cases, load_backend("numba"))
    bad = [(r.id, r.status, r.message[:200]) for r in results if r.status != "PASS"]
    assert bad == []
    assert exit_status(results) == 0
    # Only logical elements are written: no padding byte of any output changed.
    assert not [r.id for r in results if any("padding" in i for i in r.info)]


CHILD = """
import sys
from conformance.backend import load_backend
from backends import numba_kernels as k
from conformance.casefile import load_cases
from conformance.session.case_run import run_cases
cases = load_cases([sys.argv[1]])
assert all(r.status == "PASS" for r in run_cases(cases, load_backend("numba")))
from numba.core.registry import CPUDispatcher
kernels = [f for f in vars(k).values() if isinstance(f, CPUDispatcher)]
hits = sum(sum(f.stats.cache_hits.values()) for f in kernels)
misses = sum(sum(f.stats.cache_misses.values()) for f in kernels)
print(hits, misses)
"""


# a second interpreter compiling nothing: 15-22 s, in CI's certification step
@pytest.mark.certification
def test_a_second_process_loads_the_compiled_kernels_from_disk(tmp_path: Path) -> None:
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache")}
    cases = str(GENERATED / "large" / "resample.yaml")  # compiles kernels; the rest is the same

    def child() -> tuple[int, int]:
        out = subprocess.run([sys.executable, "-c", CHILD, cases], env=env, cwd=ROOT,
                             capture_output=True, text=True, check=True).stdout
        hits, misses = out.split()
        return int(hits), int(misses)

    hits, misses = child()
    assert misses > 0 and hits == 0  # the first process compiles and stores
    assert any((tmp_path / "cache").rglob("*.nbi"))
    hits, misses = child()
    assert hits > 0 and misses == 0  # the second one only loads


# -- RESAMPLE2 / RESAMPLE3 against the NumPy reference, random calls -------------------------------
TYPES = (DataType.FLOAT32, DataType.FLOAT16, DataType.INT8, DataType.UINT8)  # their tables
LAYOUTS = ("packed", "padded", "reversed", "broadcast")


def strides_of(rng: np.random.Generator, sizes: list[int], kind: str) -> tuple[int, ...] | None:
    if kind == "packed":
        return None
    if kind == "reversed":
        return tuple(reversed_strides(sizes))
    strides = padded_strides(sizes)
    if kind == "broadcast":  # an input read through a stride-0 dimension
        strides[int(rng.integers(len(sizes)))] = 0
    return tuple(strides)


def random_call(rng: np.random.Generator, operator: str) -> OperatorCall:
    """A valid RESAMPLE2/3 call: 1-4 dimensions, a type of the tables, either mode and direction,
    scales below 0.5 (antialiased when RESAMPLE3 says so) to 3, half-pixel, zero or random
    offsets, output sizes floor(InputSize * Scale) or one off (cropping and clamping), packed,
    padded, reversed or (inputs) broadcast layouts."""
    dims = int(rng.integers(1, 5))
    data_type = TYPES[int(rng.integers(len(TYPES)))]
    scales = [float(rng.choice([0.2, 0.25, 0.3, 0.4, 0.45, 0.5, 0.75, 1, 1.5, 2, 3]))
              for _ in range(dims)]
    sizes_in = [int(rng.integers(1, 5)) if s >= 0.5 else int(rng.integers(4, 14)) for s in scales]
    sizes_out = [max(1, math.floor(i * np.float32(s)) + (int(rng.integers(-1, 2))
                                                         if rng.random() < 0.2 else 0))
                 for i, s in zip(sizes_in, scales, strict=True)]
    offsets = [((0.5, -0.5), (0.0, 0.0))[int(rng.integers(2))] if rng.random() < 0.6 else
               (float(rng.uniform(-1, 1)), float(rng.uniform(-1, 1))) for _ in range(dims)]
    attributes: dict[str, object] = {
        "InterpolationMode": ("NEAREST_NEIGHBOR", "LINEAR")[int(rng.integers(2))],
        "RoundingDirection": ("INCREASING", "DECREASING")[int(rng.integers(2))],
        "Scales": scales, "InputPixelOffsets": [a for a, _ in offsets],
        "OutputPixelOffsets": [b for _, b in offsets]}
    if operator == "RESAMPLE3":
        attributes["Antialiased"] = bool(rng.random() < 0.7)
    tensors = {"InputTensor": TensorDesc(data_type, tuple(sizes_in), strides_of(
                   rng, sizes_in, LAYOUTS[int(rng.integers(4))])),
               "OutputTensor": TensorDesc(data_type, tuple(sizes_out), strides_of(
                   rng, sizes_out, LAYOUTS[int(rng.integers(3))]))}
    call = ops.get(operator).make_call(tensors, attributes)
    assert ops.get(operator).validate(call, HIGHEST) == []
    return call


def run_numba(backend: Backend, call: OperatorCall, rng: np.random.Generator
              ) -> tuple[np.ndarray, np.ndarray]:
    """The call on random inputs: (the input, the output numba wrote). Asserts that no byte
    outside the output's logical elements changed."""
    src, dst = call.tensors["InputTensor"], call.tensors["OutputTensor"]
    inp = rng.integers(0, 256, src.total_size).astype(np.uint8)
    if src.data_type.is_float:
        values = (rng.standard_normal(src.sizes) * 10).astype(src.data_type.numpy_dtype)
    else:
        info = np.iinfo(src.data_type.numpy_dtype)
        values = rng.integers(info.min, info.max + 1, src.sizes).astype(info.dtype)
    write_tensor(src, inp, values)
    out = np.full(dst.total_size, 0xA5, np.uint8)
    backend.execute(call, {"InputTensor": inp, "OutputTensor": out})
    padding = ~footprint_mask(dst, out.size)
    assert (out[padding] == 0xA5).all(), f"{call.operator} wrote padding bytes"
    return read_tensor(src, inp), read_tensor(dst, out)


# CI's certification step (25 s of JIT compiles for the calls' many types and ranks, with a
# clean clone's empty cache): the default run keeps its time under 10 minutes, and the same
# step runs the whole committed suite on numba, RESAMPLE2 and RESAMPLE3 included.
@pytest.mark.certification
@pytest.mark.parametrize("operator", ["RESAMPLE2", "RESAMPLE3"])
def test_resample2_and_resample3_match_the_reference_on_random_calls(operator: str) -> None:
    rng = np.random.default_rng(14)
    backend = load_backend("numba")
    seen = Counter()
    for _ in range(150):
        call = random_call(rng, operator)
        spec = ops.get(operator)
        x, got = run_numba(backend, call, rng)
        expected = spec.expected(call, {"InputTensor": x})["OutputTensor"]
        verdict = judge(got, expected)
        assert verdict.status == "PASS", (call.to_json(), expected.rule, verdict.margin)
        mode = call.attributes["InterpolationMode"]
        if mode == "NEAREST_NEIGHBOR":  # the rounding itself, not only a tie's other neighbour
            strict = spec.expected(call, {"InputTensor": x}, strict=True)["OutputTensor"]
            assert got.tobytes() == strict.values.tobytes(), call.to_json()
        antialiased = operator == "RESAMPLE3" and spec.antialias_axes(call) is not None
        seen[mode, antialiased, call.tensors["InputTensor"].is_strided] += 1
    # every path was exercised: both modes, strided and packed, antialiased for RESAMPLE3
    assert all(seen[m, False, s] for m in ("NEAREST_NEIGHBOR", "LINEAR") for s in (True, False))
    assert (operator == "RESAMPLE3") == any(seen[m, True, s] for m, _, s in seen)


def test_the_rounding_direction_decides_nearest() -> None:
    """[0..4] scaled by 3 with zero offsets (c = o / 3): floor and ceil, notes' RESAMPLE2 reading
    (as real DirectML does it, docs/directml-linux.md)."""
    backend = load_backend("numba")
    got = {}
    for direction in ("INCREASING", "DECREASING"):
        call = ops.get("RESAMPLE2").make_call(
            {"InputTensor": TensorDesc(DataType.UINT8, (5,)),
             "OutputTensor": TensorDesc(DataType.UINT8, (13,))},
            {"InterpolationMode": "NEAREST_NEIGHBOR", "RoundingDirection": direction,
             "Scales": [3], "InputPixelOffsets": [0], "OutputPixelOffsets": [0]})
        inp = np.zeros(call.tensors["InputTensor"].total_size, np.uint8)
        inp[:5] = np.arange(5)
        out = np.zeros(call.tensors["OutputTensor"].total_size, np.uint8)
        backend.execute(call, {"InputTensor": inp, "OutputTensor": out})
        got[direction] = out[:13].tolist()
    assert got == {"INCREASING": [0, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4],
                   "DECREASING": [0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4]}


#: The streaming tests take FLOAT32 (4-byte elements, the benchmark's) in the default run and
#: every other element size in CI's certification step: each size is a JIT compile of the
#: kernels (several seconds with a clean clone's empty Numba cache), as in
#: test_numba_depth_kernels.py.
def sizes(*data_types: DataType) -> list[DataType | object]:
    return [t if t is DataType.FLOAT32 else pytest.param(t, marks=pytest.mark.certification)
            for t in data_types]


@pytest.mark.parametrize("data_type", sizes(DataType.UINT8, DataType.FLOAT16, DataType.FLOAT32))
def test_nearest_2x_streams_bit_exact_at_any_alignment(data_type: DataType,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """The streaming path (non-temporal 16-byte stores, taken for large outputs) forced on for
    small ones: every element size, packed and padded rows, buffers starting at every element
    offset within 16 bytes (the kernel's unaligned head and tail), bit for bit the reference."""
    import backends.numba_backend as nb

    monkeypatch.setattr(nb, "STREAM_BYTES", 0)
    backend, spec = load_backend("numba"), ops.get("RESAMPLE1")
    rng = np.random.default_rng(16)
    size = np.dtype(data_type.numpy_dtype).itemsize
    for sizes_in, padded in (((2, 3, 5, 37), False), ((1, 2, 6, 40), True), ((1, 1, 3, 4), False)):
        sizes_out = (*sizes_in[:2], sizes_in[2] * 2, sizes_in[3] * 2)
        out_desc = TensorDesc(data_type, sizes_out,
                              tuple(padded_strides(list(sizes_out))) if padded else None)
        call = spec.make_call({"InputTensor": TensorDesc(data_type, sizes_in),
                               "OutputTensor": out_desc},
                              {"InterpolationMode": "NEAREST_NEIGHBOR", "Scales": [1, 1, 2, 2],
                               "InputPixelOffsets": [0.5] * 4, "OutputPixelOffsets": [-0.5] * 4})
        src = call.tensors["InputTensor"]
        for offset in range(0, 16, size):
            inp = rng.integers(0, 256, src.total_size).astype(np.uint8)
            out = execute_at(backend, call, inp, offset)
            expected = spec.expected(call, {"InputTensor": read_tensor(src, inp)},
                                     strict=True)["OutputTensor"]
            got = read_tensor(out_desc, out)
            assert got.tobytes() == expected.values.tobytes(), (sizes_in, padded, offset)


@pytest.mark.parametrize("operator", ["DEPTH_TO_SPACE1", "SPACE_TO_DEPTH1"])
@pytest.mark.parametrize("data_type", sizes(DataType.UINT8, DataType.FLOAT16, DataType.FLOAT32,
                                             DataType.UINT64))
def test_depth_space_rows_stream_bit_exact_at_any_alignment(
        operator: str, data_type: DataType, monkeypatch: pytest.MonkeyPatch) -> None:
    """The block-2 row kernels' vector paths (16-byte interleaving / splitting stores,
    non-temporal for large outputs) forced on for small ones, both orders, packed and padded
    rows, buffers at every element offset within 16 bytes: bit for bit the reference, no byte
    outside the output's elements written. Then the ordinary-store vector path alike."""
    import backends.numba_backend as nb

    backend, spec = load_backend("numba"), ops.get(operator)
    rng = np.random.default_rng(17)
    size = np.dtype(data_type.numpy_dtype).itemsize
    for threshold in (0, 1 << 62):
        monkeypatch.setattr(nb, "STREAM_BYTES", threshold)
        for space, padded in (((2, 3, 6, 42), False), ((1, 2, 4, 36), True), ((1, 1, 2, 6), False)):
            depth = (space[0], space[1] * 4, space[2] // 2, space[3] // 2)
            sizes_in, sizes_out = ((depth, space) if operator == "DEPTH_TO_SPACE1"
                                   else (space, depth))
            out_desc = TensorDesc(data_type, sizes_out,
                                  tuple(padded_strides(list(sizes_out))) if padded else None)
            for order in ("DEPTH_COLUMN_ROW", "COLUMN_ROW_DEPTH"):
                call = spec.make_call({"InputTensor": TensorDesc(data_type, sizes_in),
                                       "OutputTensor": out_desc},
                                      {"BlockSize": 2, "Order": order})
                src = call.tensors["InputTensor"]
                for offset in range(0, 16, size):
                    inp = rng.integers(0, 256, src.total_size).astype(np.uint8)
                    out = execute_at(backend, call, inp, offset)
                    expected = spec.expected(call, {"InputTensor": read_tensor(src, inp)},
                                             strict=True)["OutputTensor"]
                    got = read_tensor(out_desc, out).tobytes()
                    assert got == expected.values.tobytes(), (space, padded, order, offset)
