"""ONNX Runtime as a backend: each operator call becomes a one-node ONNX model
(backends/onnx_model.py, run the ONNX-model way of backends/onnx_backend.py) run by an execution
provider.

- OnnxRuntimeBackend: the CPU provider (CPUExecutionProvider), a peer implementation of the same
  operators (ONNX DepthToSpace / SpaceToDepth / Resize).
- OnnxRuntimeWebGpuBackend: the WebGPU provider of onnxruntime-webgpu (Dawn), another peer.
- OnnxRuntimeDirectMLBackend: the DirectML provider of onnxruntime-directml (Windows), a route to
  real DirectML (spec-notes §6). Without that provider every case is NOT_SUPPORTED, with why.
"""

from __future__ import annotations

import re
from typing import Any

from backends import onnx_model
from backends.onnx_backend import OnnxModelBackend
from conformance.flags import ExecutionFlags
from conformance.ops import OperatorCall

INSTALL = "onnxruntime is not installed: pip install onnxruntime"


def short_error(exc: BaseException) -> str:
    """ONNX Runtime's message without source paths, function names and repeated prefixes."""
    text = " ".join(str(exc).split())
    text = text.split("[ONNXRuntimeError] : ")[-1]
    text = re.sub(r"\S+\.(?:h|cc|cpp):\d+ (?:\S+::)*\S+(?:\([^)]*\))? ", "", text)
    text = re.sub(r"^\d+ : ", "", text)
    return text if len(text) <= 400 else text[:397] + "..."


class OnnxRuntimeBackend(OnnxModelBackend):
    name = "onnxruntime"
    provider = "CPUExecutionProvider"
    install_hint = INSTALL
    runtime = "ONNX Runtime"

    # -- availability -----------------------------------------------------------------------
    def runtime_missing(self) -> str | None:
        try:
            import onnxruntime as ort
        except ImportError:
            return INSTALL
        available = list(ort.get_available_providers())
        if self.provider not in available:
            return (f"onnxruntime {ort.__version__} here has no {self.provider} (it has "
                    f"{', '.join(available)}): {self.install_hint}")
        return None

    @property
    def version(self) -> str:
        import onnxruntime as ort

        return f"onnxruntime {ort.__version__} {self.provider}"

    def error_text(self, exc: BaseException) -> str:
        return short_error(exc)

    # -- running --------------------------------------------------------------------------------
    def _new_session(self, call: OperatorCall, threads: int = 0) -> Any:
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.log_severity_level = 4  # refusals come back as exceptions; no log lines
        options.intra_op_num_threads = threads
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        if self.provider != "CPUExecutionProvider":
            # The node must run on the provider under test, not fall back to the CPU.
            options.add_session_config_entry("session.disable_cpu_ep_fallback", "1")
            options.enable_mem_pattern = False
            options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        model = onnx_model.build_model(call)
        return ort.InferenceSession(model.SerializeToString(), options,
                                    providers=self.providers())

    def providers(self) -> list[Any]:
        """The session's providers: the provider under test, with the options that carry the
        run's execution flags where the provider has one (none for the CPU provider)."""
        return [self.provider]


class OnnxRuntimeDirectMLBackend(OnnxRuntimeBackend):
    """The same models on the DirectML execution provider (onnxruntime-directml, Windows)."""

    name = "onnxruntime-directml"
    provider = "DmlExecutionProvider"
    install_hint = "pip install onnxruntime-directml (Windows wheels only)"
    onnx_semantics = False  # the provider builds the RESAMPLE2/3 desc back from the node

    def providers(self) -> list[Any]:
        """DISABLE_META_COMMANDS reaches DirectML through the provider option
        `disable_metacommands`. The provider has no option for ALLOW_HALF_PRECISION_COMPUTATION:
        it compiles with its own flags, so a run with that flag is judged with the half-precision
        envelope whatever the provider does (only ever wider), and a run without it assumes the
        provider does not set it (docs/directml.md)."""
        if self.execution_flags & ExecutionFlags.DISABLE_META_COMMANDS:
            return [(self.provider, {"disable_metacommands": "true"})]
        return [self.provider]


class OnnxRuntimeWebGpuBackend(OnnxRuntimeBackend):
    """The same models on ONNX Runtime's WebGPU execution provider (onnxruntime-webgpu: Dawn,
    on Vulkan here; on a machine without a GPU, Mesa's lavapipe). A peer computing ONNX's
    Resize, as the CPU provider does; nodes it does not take are refused, not run on the CPU
    (session.disable_cpu_ep_fallback), so they are NOT_SUPPORTED with its words."""

    name = "onnxruntime-webgpu"
    provider = "WebGpuExecutionProvider"
    install_hint = ("pip install onnxruntime-webgpu, in an environment of its own: it installs "
                    "the same onnxruntime module as the onnxruntime package")
