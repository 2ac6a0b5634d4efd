"""Real DirectML on Linux: libdirectml.so (the DirectML runtime of PyPI's torch-directml wheel) on a
D3D12 device from vkd3d-proton (D3D12 on Vulkan) on Mesa's lavapipe (Vulkan on the CPU), driven
through a small native shim (backends/directml/native, built by `dmlconf directml setup`).

- DirectMLBackend ("directml"): IDMLDevice::CreateOperator, CompileOperator with the run's
  DML_EXECUTION_FLAGS, the operator initializer, one dispatch on buffers that hold exactly the
  bound bytes (padding included, between guard regions), and every buffer read back.
- DirectMLGraphBackend ("directml-graph"): the same operator compiled as a one-node graph
  through IDMLDevice1::CompileGraph (DirectML issue #481 reported other linear results there).

create_operator creates and compiles (E_INVALIDARG or DXGI_ERROR_UNSUPPORTED from either is a
rejection); execute reuses what it compiled. Claims come from DirectML itself, recorded by the
set-up: the highest feature level CheckFeatureSupport reports, and at that level every operator
with the data types of its table that the device supports (TENSOR_DATA_TYPE_SUPPORT). Without a
built layer every case is NOT_SUPPORTED, saying to run `dmlconf directml setup`.
docs/directml-linux.md has the whole story and the certification's findings.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from functools import cached_property
from pathlib import Path

import numpy as np

from backends.directml import layer as layers
from backends.directml.shim import (
    OPERATORS,
    DirectMLError,
    InexpressibleError,
    Shim,
    flatten,
)
from conformance import ops
from conformance.backend import Backend, Capabilities, DescRejected
from conformance.levels import FeatureLevel
from conformance.ops import OperatorCall
from conformance.tensors import DataType


class DirectMLBackend(Backend):
    name = "directml"
    native = True
    graph = False

    def __init__(self, feature_level: FeatureLevel | None = None) -> None:
        self.layer, self.missing = layers.load_layer()
        super().__init__(feature_level)

    @cached_property
    def capabilities(self) -> Capabilities:
        layer = getattr(self, "layer", None)
        if layer is None:  # claim all of its operators: each case then reaches unsupported_reason
            return Capabilities.full(OPERATORS, f"not available: {getattr(self, 'missing', '')}")
        level = FeatureLevel(layer.feature_level)
        device_types = {DataType.parse(t) for t in layer.data_types}
        operators = {}
        for name in OPERATORS:  # the operators the shim builds descs of, no others
            spec = ops.get(name)
            table = spec.table_at(level)
            if level >= spec.introduced and table is not None:
                operators[name] = frozenset(table.data_types & device_types)
        unsupported = sorted(t.name for t in DataType if t not in device_types)
        path = "CompileGraph (one-node graph)" if self.graph else "CompileOperator"
        return Capabilities(
            operators=operators, feature_level=level,
            notes=(f"real DirectML ({layer.info.get('directml', {}).get('wheel', '?')}) on "
                   f"vkd3d-proton {layer.info.get('vkd3d_proton', {}).get('version', '?')} on Mesa "
                   f"lavapipe, through {path}; feature level {level} and data types as "
                   "CheckFeatureSupport reports them"
                   + (f" (the device does not support {', '.join(unsupported)})"
                      if unsupported else "")))

    @property
    def environment(self) -> dict[str, str]:
        """What the set-up recorded of the layer in use (Backend.environment): the DirectML
        library (the pinned wheel it came from, its sha256 and path), the adapter (lavapipe
        through vkd3d-proton: the shim opens that ICD and no other) and the Vulkan driver (the
        ICD's API version and library). Empty without a built layer."""
        layer = getattr(self, "layer", None)
        if layer is None:
            return {}
        directml = layer.info.get("directml") or {}
        vkd3d = layer.info.get("vkd3d_proton") or {}
        return {
            "directml_version": f"libdirectml.so of {directml.get('wheel', '?')}",
            "directml_library": str(layer.libdir / "libdirectml.so"),
            "directml_sha256": str(directml.get("sha256", "?")),
            "adapter": f"Mesa lavapipe (Vulkan on the CPU) through vkd3d-proton "
                       f"{vkd3d.get('version', '?')}",
            "vendor": "Mesa",
            "driver": _icd_text(layer.icd),
        }

    @cached_property
    def shim(self) -> Shim:
        """The native library, loaded at the first call (in the process that runs cases)."""
        if self.layer is None:
            raise DirectMLError(self.missing or layers.MISSING)
        return Shim.get(self.layer.libdir, self.layer.icd)

    def unsupported_reason(self, call: OperatorCall) -> str | None:
        if self.layer is None:
            return self.missing
        for name, desc in call.tensors.items():
            if any(v > 2**32 - 1 for v in (*desc.sizes, *(desc.strides or ()))):
                return f"{name} has Sizes or Strides beyond DirectML's UINT"
        return None

    def create_operator(self, call: OperatorCall) -> None:
        """IDMLDevice::CreateOperator and CompileOperator (or CompileGraph); a refusal by
        either raises DescRejected. A desc no DirectML call can state (Strides of another
        length than Sizes: DML_BUFFER_TENSOR_DESC has one DimensionCount for both) is refused
        here without running DirectML."""
        try:
            flatten(call)
        except InexpressibleError as exc:
            raise DescRejected(f"refused without running DirectML: {exc}") from exc
        self.shim.run(call, None, int(self.execution_flags), self.graph)

    def execute(self, call: OperatorCall, bindings: Mapping[str, np.ndarray]) -> None:
        """Dispatch on copies of the bound bytes and copy every buffer back, inputs included
        (the harness then sees any change DirectML made to an input)."""
        buffers = {name: np.ascontiguousarray(bindings[name]) for name in call.tensors}
        self.shim.run(call, buffers, int(self.execution_flags), self.graph)
        for name, buffer in buffers.items():
            if buffer is not bindings[name]:
                bindings[name][:] = buffer


    @classmethod
    def command(cls, argv: Sequence[str]) -> int:
        """`dmlconf directml setup | status`: build or inspect the layer (setup.py)."""
        from backends.directml import setup

        return setup.main(argv)


def _icd_text(icd: Path) -> str:
    """The Vulkan driver an ICD file names: 'lavapipe ICD PATH (Vulkan 1.4.305,
    libvulkan_lvp.so)', or the path alone where the file does not say."""
    try:
        entry = json.loads(icd.read_text(encoding="utf-8"))["ICD"]
        return (f"lavapipe ICD {icd} (Vulkan {entry['api_version']}, "
                f"{entry['library_path']})")
    except (OSError, ValueError, KeyError, TypeError):
        return f"lavapipe ICD {icd}"


class DirectMLGraphBackend(DirectMLBackend):
    name = "directml-graph"
    graph = True
