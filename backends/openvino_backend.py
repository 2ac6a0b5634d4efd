"""OpenVINO's CPU plugin as a backend (PyPI `openvino`, the 'openvino' extra): each operator call
becomes the one-node ONNX model of backends/onnx_model.py, read by OpenVINO's ONNX front end,
which maps DepthToSpace to DepthToSpace-1 (blocks_first / depth_first), SpaceToDepth to
SpaceToDepth-1 and Resize to Interpolate-11 (mode, coordinate_transformation_mode, nearest_mode,
antialias), and compiled for the CPU. What a DML call cannot be as such a node is NOT_SUPPORTED
with why (backends/onnx_backend.py); what OpenVINO refuses is NOT_SUPPORTED in its words.

Interpolate-11 can say more than ONNX's Resize (pads_begin / pads_end); none of that expresses a
DML call that ONNX cannot: a pad is zeros, where DirectML clamps at the edges.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from backends import onnx_model
from backends.onnx_backend import OnnxModelBackend
from conformance.ops import OperatorCall

INSTALL = "openvino is not installed: pip install openvino (the 'openvino' extra)"
DEVICE = "CPU"


class _Compiled:
    """A compiled model answering run([OUTPUT], {INPUT: x}) like an ONNX Runtime session."""

    def __init__(self, compiled: Any) -> None:
        self.request = compiled.create_infer_request()

    def run(self, names: list[str], feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
        (x,) = feeds.values()
        result = self.request.infer([np.ascontiguousarray(x)])
        return [np.array(result[self.request.model_outputs[0]])]


class OpenVinoBackend(OnnxModelBackend):
    name = "openvino"
    runtime = "OpenVINO"

    def runtime_missing(self) -> str | None:
        try:
            import openvino
        except ImportError:
            return INSTALL
        devices = openvino.Core().available_devices
        if DEVICE not in devices:
            return f"openvino {openvino.__version__} here has no {DEVICE} device ({devices})"
        return None

    @property
    def version(self) -> str:
        import openvino

        return f"openvino {openvino.__version__.split('-')[0]} {DEVICE}"

    def error_text(self, exc: BaseException) -> str:
        """OpenVINO's message without its source paths and check boilerplate."""
        text = " ".join(str(exc).split())
        text = re.sub(r"(?:\S+/)+\S+\.(?:hpp|cpp|h|cc):\d+:?\s*", "", text)
        text = re.sub(r"\bException from\s*:?\s*", "", text)
        return text if len(text) <= 400 else text[:397] + "..."

    def _new_session(self, call: OperatorCall, threads: int = 0) -> Any:
        import openvino

        core = openvino.Core()
        model = core.read_model(onnx_model.build_model(call).SerializeToString(), b"")
        config: dict[str, Any] = {"INFERENCE_NUM_THREADS": threads} if threads else {}
        # f32 inference precision: the CPU plugin would otherwise run float32 models in bf16
        # or f16 where the CPU has them (a performance hint, not the model's arithmetic).
        config["INFERENCE_PRECISION_HINT"] = "f32"
        return _Compiled(core.compile_model(model, DEVICE, config))
