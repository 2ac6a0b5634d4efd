"""Run in a fresh process by the set-up: open a runtime just built (its manifest, written to a
file), ask DirectML what it supports (CheckFeatureSupport) and run the documentation's
DEPTH_TO_SPACE1 example once. Prints one JSON object; exits 1 (with the reason in the object)
when anything fails.

    python -m backends.directml.probe LAYER.json
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np

from conformance import ops
from conformance.levels import FeatureLevel
from conformance.tensors import DataType, TensorDesc, read_tensor, write_tensor


def documented_depth_to_space1() -> tuple[ops.OperatorCall, np.ndarray]:
    """The DML_DEPTH_TO_SPACE1_OPERATOR_DESC page's example: input {1,8,2,3}, channel k holding
    9k + 3h + w, BlockSize 2, DEPTH_COLUMN_ROW."""
    call = ops.get("DEPTH_TO_SPACE1").make_call(
        {"InputTensor": TensorDesc(DataType.FLOAT32, (1, 8, 2, 3)),
         "OutputTensor": TensorDesc(DataType.FLOAT32, (1, 2, 4, 6))},
        {"BlockSize": 2, "Order": "DEPTH_COLUMN_ROW"})
    values = np.array([[[[9 * k + 3 * h + w for w in range(3)] for h in range(2)]
                        for k in range(8)]], dtype=np.float32)
    return call, values


def main(argv: list[str]) -> int:
    from backends.directml.backend import connect
    from backends.directml.layer import Layer

    out: dict = {}
    try:
        layer = Layer.from_json(json.loads(Path(argv[0]).read_text(encoding="utf-8")))
        started = time.perf_counter()
        shim = connect(layer)
        out["open_s"] = round(time.perf_counter() - started, 3)
        level = shim.max_feature_level([int(lv) for lv in FeatureLevel])
        out["feature_level"] = f"0x{level:04x}"
        out["data_types"] = [t.name for t in DataType if shim.data_type_supported(int(t))]
        call, values = documented_depth_to_space1()
        buffers = {n: np.zeros(d.total_size, np.uint8) for n, d in call.tensors.items()}
        write_tensor(call.tensors["InputTensor"], buffers["InputTensor"], values)
        started = time.perf_counter()
        shim.run(call, buffers)
        out["first_call_s"] = round(time.perf_counter() - started, 3)
        got = read_tensor(call.tensors["OutputTensor"], buffers["OutputTensor"])
        want = ops.get("DEPTH_TO_SPACE1").reference(call, {"InputTensor": values})["OutputTensor"]
        out["depth_to_space1_example"] = "bit-exact" if np.array_equal(
            got.view(np.uint32), want.view(np.uint32)) else f"WRONG: {got.ravel().tolist()}"
    except Exception as exc:  # the set-up reports it in words
        out["error"] = f"{type(exc).__name__}: {exc}"
    print(json.dumps(out))
    return 0 if "error" not in out and out.get("depth_to_space1_example") == "bit-exact" else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
