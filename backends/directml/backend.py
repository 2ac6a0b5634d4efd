"""Real DirectML on Linux, two builds of it, each on a D3D12 device from vkd3d-proton (D3D12 on
Vulkan) on Mesa's lavapipe (Vulkan on the CPU) or another Vulkan driver, driven through one
small native shim (backends/directml/native, built by `dmlconf directml setup`):

- "directml": DirectML.dll 1.15.4 (the newest release, feature level 6_4) from PyPI's
  onnxruntime-directml wheel, under Wine, through dmlshim-helper.exe (the shim built with
  mingw-w64; helper.py feeds it through pipes, one long-lived helper per process);
- "directml-linux": libdirectml.so of PyPI's torch-directml 0.2.5 wheel (feature level 6_2),
  the shim loaded in-process through ctypes;
- "directml-graph" and "directml-linux-graph": the same operator compiled as a one-node graph
  through IDMLDevice1::CompileGraph (DirectML issue #481 reported other linear results there).

Each creates the operator, compiles it with the run's DML_EXECUTION_FLAGS, runs the operator
initializer and one dispatch on buffers that hold exactly the bound bytes (padding included,
between guard regions), and reads every buffer back. create_operator creates and compiles
(E_INVALIDARG or DXGI_ERROR_UNSUPPORTED from either is a rejection); execute reuses what it
compiled. Claims come from DirectML itself, recorded by the set-up: the highest feature level
CheckFeatureSupport reports, and at that level every operator with the data types of its table
that the device supports (TENSOR_DATA_TYPE_SUPPORT). Without a set-up runtime every case is
NOT_SUPPORTED, saying to run `dmlconf directml setup`. docs/directml-linux.md has the whole story
and the certifications' findings.
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
    ShimBase,
    flatten,
)
from conformance import ops
from conformance.backend import Backend, Capabilities, DescRejected
from conformance.levels import FeatureLevel
from conformance.ops import OperatorCall
from conformance.tensors import DataType


def connect(layer: layers.Layer) -> ShimBase:
    """The runtime's shim, opened once per process: in-process (Linux) or the helper (Wine)."""
    if layer.runtime == layers.WINE:
        from backends.directml.helper import Helper

        return Helper.get(layer)
    return Shim.get(layer.libdir, layer.icd)


class DirectMLBackend(Backend):
    name = "directml"
    native = True
    graph = False
    runtime = layers.WINE
    #: Each helper's private Wine prefix is made beside the runtime's, every file hard-linked
    #: to it (backends/directml/helper.py): in the sandbox the folder of both is written (a
    #: hard link cannot cross into another mount), by the prefix's owner (Linux's
    #: protected_hardlinks lets no other user link its files).
    sandbox_same_user = ("its Wine prefixes are hard links to the harness's user's files, which "
                         "only their owner may link")

    @classmethod
    def sandbox_writable(cls) -> list[Path]:
        layer, _ = layers.load_layer(cls.runtime)
        prefix = layer.info.get("prefix") if layer is not None else None
        return [Path(prefix).parent] if cls.runtime == layers.WINE and prefix else []

    @classmethod
    def sandbox_readable(cls) -> list[Path]:
        """The layer's manifest folder, its libraries and its Vulkan driver's ICD file."""
        layer, _ = layers.load_layer(cls.runtime)
        found = [layers.cache_root()]
        return found + ([layer.libdir, layer.icd] if layer is not None else [])

    def __init__(self, feature_level: FeatureLevel | None = None) -> None:
        self.layer, self.missing = layers.load_layer(self.runtime)
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
        env = self.environment
        return Capabilities(
            operators=operators, feature_level=level,
            notes=(f"real DirectML ({env['directml_version']}) on {env['adapter']}, through "
                   f"{path}; feature level {level} and data types as CheckFeatureSupport "
                   "reports them"
                   + (f" (the device does not support {', '.join(unsupported)})"
                      if unsupported else "")))

    @property
    def environment(self) -> dict[str, str]:
        """What the set-up recorded of the runtime in use (Backend.environment): the DirectML
        library (its version: the DLL's FileVersion resource, or the pinned wheel of the Linux
        build, which states none; its sha256 and path), the adapter (the Vulkan driver through
        vkd3d-proton: the shim opens that ICD and no other) and the driver (the ICD's API
        version and library). Empty without a set-up runtime."""
        layer = getattr(self, "layer", None)
        if layer is None:
            return {}
        directml = layer.info.get("directml") or {}
        vkd3d = layer.info.get("vkd3d_proton") or {}
        pin = layers.PINS[layer.runtime]
        version = (f"{directml['file_version']} (DirectML.dll of {directml.get('wheel', '?')}, "
                   "under Wine)" if directml.get("file_version")
                   else f"{pin.name} of {directml.get('wheel', '?')}")
        vendor, device, driver = _icd_driver(layer.icd)
        return {
            "directml_version": version,
            "directml_library": str(layer.libdir / pin.name),
            "directml_sha256": str(directml.get("sha256", "?")),
            "adapter": f"{vendor} {device} through vkd3d-proton {vkd3d.get('version', '?')}"
                       + "".join(f" + {Path(p).stem}" for p in vkd3d.get("patches", [])),
            "vendor": vendor,
            "driver": driver,
        }

    @cached_property
    def shim(self) -> ShimBase:
        """The runtime, opened at the first call (in the process that runs cases)."""
        if self.layer is None:
            raise DirectMLError(self.missing or layers.missing(self.runtime))
        return connect(self.layer)

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


def _icd_driver(icd: Path) -> tuple[str, str, str]:
    """The vendor, the device and the Vulkan driver an ICD file names: ('Mesa', 'lavapipe (Vulkan
    on the CPU)', 'lavapipe ICD PATH (Vulkan 1.4.305, libvulkan_lvp.so)'); the path alone where
    the file does not say."""
    try:
        entry = json.loads(icd.read_text(encoding="utf-8"))["ICD"]
        library, api = str(entry["library_path"]), str(entry["api_version"])
    except (OSError, ValueError, KeyError, TypeError):
        library, api = "", ""
    known = {"lvp": ("Mesa", "lavapipe (Vulkan on the CPU)", "lavapipe"),
             "nvidia": ("NVIDIA", "GPU", "NVIDIA Vulkan driver")}
    vendor, device, name = next(
        (v for k, v in known.items() if k in (library or icd.name).lower()),
        ("unknown", "a Vulkan device", "Vulkan driver"))
    return vendor, device, f"{name} ICD {icd}" + (f" (Vulkan {api}, {library})" if library else "")


class DirectMLGraphBackend(DirectMLBackend):
    name = "directml-graph"
    graph = True


class DirectMLLinuxBackend(DirectMLBackend):
    name = "directml-linux"
    runtime = layers.LINUX
    sandbox_same_user = ""


class DirectMLLinuxGraphBackend(DirectMLLinuxBackend):
    name = "directml-linux-graph"
    graph = True
