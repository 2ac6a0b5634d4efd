"""A backend claims the operators its execute dispatches on, and no others (conformance/backend.py).

An operator added to the suite must not be claimed by a backend written before it, or its cases
would be routed to a kernel written for another operator. The synthetic operator here is
RESAMPLE1's spec under another name, RESAMPLE_SYNTHETIC: any routing by a name's prefix
("RESAMPLE...") would take it to the RESAMPLE1 kernels and run it, where it must be refused. Only
the NumPy reference claims it, rightly: its execute runs the operator spec's own reference."""

from __future__ import annotations

import sys
from collections.abc import Iterator

import numpy as np
import pytest

from backends import dxdispatch as dxd
from backends import jax_backend, numba_backend, onnx_model, torch_backend
from backends.directml import shim
from conformance import ops
from conformance.backend import BUILTIN, Backend, BackendLoadError, Capabilities, load_backend
from conformance.ops import OperatorCall
from conformance.tensors import DataType, TensorDesc, read_tensor, write_tensor
from tests.support import DXDISPATCH_STANDIN

SYNTHETIC = "RESAMPLE_SYNTHETIC"
#: Each built-in backend's dispatch table: the operators its execute routes to a kernel.
DISPATCH = {
    "numpy": ops.OPERATORS,  # the reference: generic over every operator spec
    "numba": numba_backend.KERNELS,
    "onnxruntime": onnx_model.OPERATORS,
    "onnxruntime-directml": onnx_model.OPERATORS,
    "onnxruntime-webgpu": onnx_model.OPERATORS,
    "openvino": onnx_model.OPERATORS,
    "jax": jax_backend.OPERATORS,
    "torch": torch_backend.OPERATORS,
    "torch-cuda": torch_backend.OPERATORS,
    "dxdispatch": dxd.OPERATORS,
    "directml": shim.OPERATORS,
    "directml-graph": shim.OPERATORS,
    "directml-linux": shim.OPERATORS,
    "directml-linux-graph": shim.OPERATORS,
}


@pytest.fixture
def synthetic(monkeypatch: pytest.MonkeyPatch) -> Iterator[ops.OperatorSpec]:
    """A new operator in the suite: RESAMPLE1's spec under a name no backend was written for."""
    resample1 = type(ops.get("RESAMPLE1"))
    spec = type("SyntheticResample", (resample1,), {"name": SYNTHETIC, "type_value": 0xFFFF})()
    monkeypatch.setitem(ops.OPERATORS, SYNTHETIC, spec)
    yield spec


def build(name: str) -> Backend:
    """The built-in backend, the dxdispatch one on the stand-in executable (so that it runs)."""
    if name == "dxdispatch":
        return dxd.DxDispatchBackend(command=[sys.executable, str(DXDISPATCH_STANDIN)])
    try:
        return load_backend(name)
    except BackendLoadError as exc:
        pytest.skip(f"{name} cannot be built here: {exc}")


def nearest_call(operator: str) -> OperatorCall:
    """A 2x nearest-neighbour upscale with half-pixel offsets: one every resampling backend here
    can express (torch's nearest-exact, ONNX half_pixel)."""
    return ops.get(operator).make_call(
        {"InputTensor": TensorDesc(DataType.FLOAT32, (1, 1, 2, 2)),
         "OutputTensor": TensorDesc(DataType.FLOAT32, (1, 1, 4, 4))},
        {"InterpolationMode": "NEAREST_NEIGHBOR", "Scales": [1, 1, 2, 2],
         "InputPixelOffsets": [0.5] * 4, "OutputPixelOffsets": [-0.5] * 4})


def bound(call: OperatorCall) -> dict[str, np.ndarray]:
    """Buffers for the call: the input holding 1, 2, 3, 4, the output a fill pattern."""
    buffers = {n: np.full(d.total_size, 0xCD, np.uint8) for n, d in call.tensors.items()}
    desc = call.tensors["InputTensor"]
    values = np.arange(1, 5, dtype=np.float32).reshape(desc.sizes)
    write_tensor(desc, buffers["InputTensor"], values)
    return buffers


@pytest.mark.integration  # imports every backend (torch, numba)
@pytest.mark.parametrize("name", sorted(BUILTIN))
def test_a_backend_claims_only_operators_its_execute_dispatches_on(name: str) -> None:
    claimed = set(build(name).capabilities.operators)
    assert claimed <= set(DISPATCH[name]), (
        f"{name} claims {sorted(claimed - set(DISPATCH[name]))}, which its execute does not "
        "dispatch on")
    assert set(DISPATCH[name]) <= set(ops.OPERATORS), f"{name} dispatches on unknown operators"


@pytest.mark.parametrize("name", sorted(set(BUILTIN) - {"numpy"}))
def test_a_new_operator_is_neither_claimed_nor_routed(name: str, synthetic: ops.OperatorSpec
                                                      ) -> None:
    backend = build(name)
    assert SYNTHETIC not in backend.capabilities.operators, (
        f"{name} claims {SYNTHETIC}, an operator it was not written for")
    call = nearest_call(SYNTHETIC)
    buffers = bound(call)
    before = {n: b.copy() for n, b in buffers.items()}
    with pytest.raises(Exception) as refused:  # any refusal; its words are checked below
        backend.execute(call, buffers)
    for n, b in buffers.items():
        assert np.array_equal(b, before[n]), f"{name} wrote {n} of a call it does not run"
    runs_here = backend.unsupported_reason(nearest_call("RESAMPLE1")) is None
    if runs_here:  # refused for its operator, not for something else
        assert SYNTHETIC in str(refused.value), f"{name} refused with: {refused.value}"


def test_the_reference_claims_and_runs_a_new_operator(synthetic: ops.OperatorSpec) -> None:
    backend = load_backend("numpy")
    assert backend.capabilities.operators[SYNTHETIC] == backend.capabilities.operators["RESAMPLE1"]
    new, old = nearest_call(SYNTHETIC), nearest_call("RESAMPLE1")
    new_buffers, old_buffers = bound(new), bound(old)
    backend.execute(new, new_buffers)
    backend.execute(old, old_buffers)
    out = new.tensors["OutputTensor"]
    assert np.array_equal(read_tensor(out, new_buffers["OutputTensor"]),
                          read_tensor(out, old_buffers["OutputTensor"]))
    assert read_tensor(out, new_buffers["OutputTensor"])[0, 0, 0].tolist() == [1, 1, 2, 2]


def test_full_claims_exactly_the_named_operators() -> None:
    caps = Capabilities.full(["DEPTH_TO_SPACE1", "RESAMPLE1"], "notes")
    assert set(caps.operators) == {"DEPTH_TO_SPACE1", "RESAMPLE1"}
    for name, types in caps.operators.items():
        assert types == frozenset().union(*(t.data_types for t in ops.get(name).support))
    assert (caps.strided, caps.arbitrary_offsets, caps.rejects_invalid) == (True, True, True)
    assert caps.notes == "notes"
    with pytest.raises(KeyError, match="unknown operator 'NO_SUCH_OPERATOR'"):
        Capabilities.full(["NO_SUCH_OPERATOR"])
