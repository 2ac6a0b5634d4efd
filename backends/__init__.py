"""Backends under test, and how one is found by name.

A backend is selected by
- a registered name: the built-in ones below, or one a package registers in the entry-point
  group "dml_conformance.backends" (name = "package.module:Class");
- "package.module:Class", importable from the current environment;
- "path/to/file.py:Class", loaded from that file, so a vendor certifies their own
  implementation without touching this repository.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
import sys
from importlib.metadata import entry_points
from pathlib import Path

from backends.base import Backend, Capabilities, DescRejected
from conformance.flags import ExecutionFlags
from conformance.levels import FeatureLevel

__all__ = ["BUILTIN", "Backend", "BackendLoadError", "Capabilities", "DescRejected",
           "backend_class", "load_backend", "registered"]

ENTRY_POINT_GROUP = "dml_conformance.backends"

BUILTIN: dict[str, str] = {
    "numpy": "backends.numpy_reference:NumpyReferenceBackend",
    "numba": "backends.numba_backend:NumbaBackend",  # needs the 'numba' extra
    "onnxruntime": "backends.onnxruntime_backend:OnnxRuntimeBackend",  # the 'onnxruntime' extra
    # Windows only: the 'directml' extra (onnxruntime-directml)
    "onnxruntime-directml": "backends.onnxruntime_backend:OnnxRuntimeDirectMLBackend",
    "torch": "backends.torch_backend:TorchBackend",  # the 'torch' extra
    "torch-cuda": "backends.torch_backend:TorchCudaBackend",  # a CUDA build of torch
    "dxdispatch": "backends.dxdispatch:DxDispatchBackend",  # DirectML via DxDispatch
    # real DirectML on Linux through vkd3d-proton on lavapipe (`dmlconf directml setup` first)
    "directml": "backends.directml:DirectMLBackend",
    "directml-graph": "backends.directml:DirectMLGraphBackend",  # the same through CompileGraph
}


class BackendLoadError(Exception):
    """A backend could not be found or built; the message says what to fix."""


def registered() -> dict[str, str]:
    """Every registered name -> its "module:Class" target, built-ins first."""
    names = dict(BUILTIN)
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        names.setdefault(ep.name, ep.value)
    return names


def _load_class(target: str) -> type:
    module_part, sep, class_name = target.rpartition(":")
    if not sep or not module_part or not class_name:
        raise BackendLoadError(
            f"backend {target!r} is not a registered name ({', '.join(registered())}), "
            "'package.module:Class' or 'path/to/file.py:Class'")
    if module_part.endswith(".py") or "/" in module_part or "\\" in module_part:
        path = Path(module_part)
        if not path.is_file():
            raise BackendLoadError(f"backend file {path} does not exist")
        # named after the file's path, the same in every process (worker processes and the
        # shards of a run report the same class)
        digest = hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:16]
        mod_name = f"_dmlconf_backend_{digest}"
        spec = importlib.util.spec_from_file_location(mod_name, path)
        if spec is None or spec.loader is None:
            raise BackendLoadError(f"cannot load {path} as a Python module")
        module = importlib.util.module_from_spec(spec)
        sys.modules[mod_name] = module
        try:
            spec.loader.exec_module(module)
        except Exception as exc:
            raise BackendLoadError(f"importing {path} failed: {exc!r}") from exc
    else:
        try:
            module = importlib.import_module(module_part)
        except Exception as exc:
            raise BackendLoadError(f"importing {module_part} failed: {exc!r}") from exc
    cls = getattr(module, class_name, None)
    if cls is None:
        raise BackendLoadError(f"{module_part} has no {class_name}")
    if not (inspect.isclass(cls) and issubclass(cls, Backend)):
        raise BackendLoadError(f"{target} is not a subclass of backends.base.Backend")
    return cls


def backend_class(spec: str) -> type[Backend]:
    """The class a backend spec names, imported but not built (a backend's module imports
    its native libraries when the backend is built, not before)."""
    return _load_class(registered().get(spec, spec))


def load_backend(spec: str, feature_level: FeatureLevel | None = None,
                 execution_flags: ExecutionFlags = ExecutionFlags.NONE) -> Backend:
    """Build the backend named by spec, claiming feature_level (default: its highest), compiling
    with execution_flags. The flags are set on the built instance (not passed to its
    constructor), so a backend written before they existed still loads."""
    cls = backend_class(spec)
    try:
        backend = cls(feature_level=feature_level)
        backend.execution_flags = ExecutionFlags(execution_flags)
        return backend
    except ValueError as exc:
        raise BackendLoadError(str(exc)) from exc
    except Exception as exc:
        raise BackendLoadError(f"building backend {spec} failed: {exc!r}") from exc
