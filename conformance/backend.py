"""The backend interface: what an implementation under test declares and does, and how one is
found by name. The harness owns it; backends/ imports it, never the reverse.

A backend sees exactly what a GPU operator sees: the operator desc (OperatorCall) and its bound
resources, one raw byte buffer per tensor (1-D uint8 NumPy arrays, TotalTensorSizeInBytes long,
16-byte aligned as DML_MINIMUM_BUFFER_TENSOR_ALIGNMENT requires). It reads the inputs through
their strides and writes the outputs' bytes in place. Nothing is handed over pre-gathered.

Two steps, as in DirectML: create_operator(call) is IDMLDevice::CreateOperator, where an invalid
desc is refused by raising DescRejected (E_INVALIDARG); execute(call, bindings) is the dispatch.
A backend may also refuse in execute; either way counts as a rejection, except for a desc whose
buffers cannot be bound at all (a Strides count that differs from Sizes, a tensor too large to
allocate: above MAX_BUFFER_BYTES): as in DirectML, such a desc must be refused at create_operator.

A backend is selected by
- a registered name: the built-in ones in BUILTIN, or one a package registers in the entry-point
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
import re
import sys
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

import numpy as np

from conformance import ops
from conformance.flags import ExecutionFlags
from conformance.kit.rejection import DescRejected
from conformance.levels import HIGHEST, FeatureLevel
from conformance.ops import OperatorCall
from conformance.tensors import MAX_BUFFER_BYTES, DataType

__all__ = ["BUILTIN", "ENTRY_POINT_GROUP", "ENVIRONMENT_KEYS", "MAX_BUFFER_BYTES", "Backend",
           "BackendLoadError", "Capabilities", "DescRejected", "backend_class", "environment_of",
           "environment_problem", "load_backend", "registered"]



@dataclass(frozen=True)
class Capabilities:
    """What a backend claims. The runner gives NOT_SUPPORTED, with the reason, to every case
    outside these claims, and judges every case inside them.

    operators:        operator name -> the data types the backend runs it with. Only operators
                      its execute dispatches on: a claim is never "whatever the suite knows".
    feature_level:    the highest DML_FEATURE_LEVEL it claims.
    strided:          whether it takes descs with stated non-packed strides (padding,
                      broadcasting, NHWC and other dimension orders).
    arbitrary_offsets: whether it takes any pixel offsets (of an operator that has them); when
                      False, only the (InputPixelOffset, OutputPixelOffset) pairs in
                      offset_pairs, per dimension.
    offset_pairs:     the (InputPixelOffset, OutputPixelOffset) pairs it takes when
                      arbitrary_offsets is False (default: half-pixel sampling's).
    rejects_invalid:  whether it validates descs and raises DescRejected for invalid ones.
    notes:            free text the results record with the claims.
    """

    operators: Mapping[str, frozenset[DataType]]
    feature_level: FeatureLevel
    strided: bool = True
    arbitrary_offsets: bool = True
    offset_pairs: frozenset[tuple[float, float]] = frozenset({(0.5, -0.5)})
    rejects_invalid: bool = True
    notes: str = ""

    @classmethod
    def full(cls, operators: Iterable[str], notes: str = "") -> Capabilities:
        """The named operators, each with every data type of its support tables, at the highest
        feature level, strided, any offsets, validating: the claims of a complete
        implementation of those operators. Name the operators the backend's execute dispatches
        on: an operator added to the suite later is not claimed (and so not routed to a kernel
        written for another) until the backend is written for it."""
        # the caller's own mapping
        return cls(operators=dict(_full_operators(tuple(operators))), feature_level=HIGHEST,
                   notes=notes)

    def to_json(self) -> dict[str, Any]:
        return {
            "operators": {op: sorted(t.name for t in types)
                          for op, types in sorted(self.operators.items())},
            "feature_level": str(self.feature_level),
            "strided": self.strided,
            "arbitrary_offsets": self.arbitrary_offsets,
            "offset_pairs": sorted([list(p) for p in self.offset_pairs]),
            "rejects_invalid": self.rejects_invalid,
            "notes": self.notes,
        }


@cache
def _full_operators(operators: tuple[str, ...]) -> Mapping[str, frozenset[DataType]]:
    """The operators of Capabilities.full, worked out once per argument (a backend may build
    its claims on every read of its `capabilities`)."""
    return {name: frozenset().union(*(t.data_types for t in ops.get(name).support))
            for name in operators}


class Backend(ABC):
    """Base class of every implementation under test. Subclasses set `name`, implement
    `capabilities` and `execute`, and usually `create_operator`.

    feature_level: the level this instance claims (at most capabilities' highest); backends
    that validate descs validate at this level. The runner passes it from `--level`.
    execution_flags: the DML_EXECUTION_FLAGS the run compiles every operator with
    (`--execution-flags`; conformance.flags). A backend on DirectML passes them to
    CompileOperator; any backend may read them (ALLOW_HALF_PRECISION_COMPUTATION permits float16
    arithmetic in half precision, and the judge then accepts it).
    """

    name: str = "backend"
    #: Whether the backend runs native code (a JIT, a GPU runtime, a C++ library) that can
    #: crash, hang or exhaust memory: `dmlconf run` then isolates it in worker processes by
    #: default (conformance.session.workers).
    native: bool = False
    #: Why a built-in backend's isolated workers must keep the harness's uid in the sandbox
    #: (in a user namespace of their own, with no capabilities) rather than run as another user
    #: ("": they need not; conformance.session.sandbox). Read for built-in backends only, as is
    #: sandbox_writable(): the harness never imports any other.
    sandbox_same_user: str = ""

    @classmethod
    def sandbox_writable(cls) -> list[Path]:
        """Folders a built-in backend's sandboxed workers must write (the rest of the file
        system is read-only to them, but their home and /tmp)."""
        return []

    @classmethod
    def sandbox_readable(cls) -> list[Path]:
        """What a built-in backend's sandboxed workers must read where the sandbox would hide
        it (under /tmp, or a folder closed to other users): its runtime's files, say."""
        return []

    def __init__(self, feature_level: FeatureLevel | None = None,
                 execution_flags: ExecutionFlags = ExecutionFlags.NONE) -> None:
        highest = self.capabilities.feature_level
        if feature_level is not None and feature_level > highest:
            raise ValueError(f"{self.name} claims feature level {highest} at most, "
                             f"not {feature_level}")
        self.feature_level = feature_level
        self.execution_flags = ExecutionFlags(execution_flags)

    @property
    @abstractmethod
    def capabilities(self) -> Capabilities:
        """The claims of this backend."""

    @property
    def claimed_level(self) -> FeatureLevel:
        return self.feature_level or self.capabilities.feature_level

    def create_operator(self, call: OperatorCall) -> None:  # noqa: B027 - optional hook
        """Validate the desc; raise DescRejected if it is invalid. Default: accept all."""

    def validate(self, call: OperatorCall) -> None:
        """Raise DescRejected with every rule the call breaks at the claimed level (the
        operator spec's rules): a complete create_operator for backends that validate."""
        violations = ops.get(call.operator).validate(call, self.claimed_level)
        if violations:
            raise DescRejected("; ".join(str(v) for v in violations))

    @abstractmethod
    def execute(self, call: OperatorCall, bindings: Mapping[str, np.ndarray]) -> None:
        """Run one operator call. bindings: tensor member name -> 1-D uint8 buffer of
        TotalTensorSizeInBytes bytes. Write the outputs in place; leave the inputs alone."""

    def unsupported_reason(self, call: OperatorCall) -> str | None:
        """A finer capability limit than Capabilities can say: a reason, or None to run."""
        return None

    @property
    def environment(self) -> dict[str, str]:
        """What the backend knows of what it runs on, as text, recorded with its results
        (`backend.environment` of the results document, environment.json of a certification
        bundle) and matched by baseline tags. Documented keys (give those you know):
        ENVIRONMENT_KEYS, e.g. {"adapter": "AMD Radeon RX 7900 XTX", "vendor": "AMD",
        "driver": "31.0.24033.1003", "directml_version": "1.15.2"}; other keys may be added.
        Default: nothing known."""
        return {}

    @classmethod
    def command(cls, argv: Sequence[str]) -> int:
        """The backend's own command line, `dmlconf <name> ARGS` (the directml backend builds
        and inspects its layer with it); the exit status. Default: it has none."""
        raise NotImplementedError(f"the {cls.name} backend has no command of its own")


#: The documented keys of Backend.environment: the GPU adapter's name, its vendor, the driver's
#: version, the DirectML library's version, and (for an implementation that is not DirectML,
#: e.g. ONNX Runtime's providers) its own name and version.
ENVIRONMENT_KEYS = ("adapter", "vendor", "driver", "directml_version", "version")
#: The most a backend's environment may hold: entries, and characters per key and per value.
ENVIRONMENT_LIMITS = (64, 100, 2000)


def environment_problem(value: Any) -> str | None:
    """What keeps `value` from being a backend environment (a dict of at most 64 entries of text
    keys of at most 100 characters to text values of at most 2,000), in words; None if it is
    one. The worker's report of it is checked with this too (session.remote)."""
    entries, key_chars, value_chars = ENVIRONMENT_LIMITS
    if not isinstance(value, dict):
        return f"it is {type(value).__name__}, not a dict of text to text"
    if len(value) > entries:
        return f"it has {len(value)} entries, more than {entries}"
    for k, v in value.items():
        if not isinstance(k, str) or not k or len(k) > key_chars:
            return f"key {k!r} is not text of 1 to {key_chars} characters"
        if not isinstance(v, str) or len(v) > value_chars:
            return f"the value of {k!r} is not text of at most {value_chars} characters"
    return None


def environment_of(backend: Backend) -> dict[str, str]:
    """backend.environment, checked (environment_problem); BackendLoadError, naming the class
    and what is wrong, if it raises or is not one."""
    name = type(backend).__name__
    try:
        value = backend.environment
    except Exception as exc:
        raise BackendLoadError(f"{name}.environment raised {exc!r}") from exc
    wrong = environment_problem(value)
    if wrong:
        raise BackendLoadError(f"{name}.environment is not what the harness records: {wrong}")
    return dict(value)


# -- the registry: a backend found by name ---------------------------------------------------
ENTRY_POINT_GROUP = "dml_conformance.backends"

#: The built-in backends, as "module:Class": imported only when one is asked for.
BUILTIN: dict[str, str] = {
    "numpy": "backends.numpy_reference:NumpyReferenceBackend",
    "numba": "backends.numba_backend:NumbaBackend",  # needs the 'numba' extra
    "onnxruntime": "backends.onnxruntime_backend:OnnxRuntimeBackend",  # the 'onnxruntime' extra
    # the 'webgpu' extra, in an environment of its own (onnxruntime-webgpu replaces onnxruntime)
    "onnxruntime-webgpu": "backends.onnxruntime_backend:OnnxRuntimeWebGpuBackend",
    "openvino": "backends.openvino_backend:OpenVinoBackend",  # the 'openvino' extra
    "jax": "backends.jax_backend:JaxBackend",  # the 'jax' extra
    # Windows only: the 'directml' extra (onnxruntime-directml)
    "onnxruntime-directml": "backends.onnxruntime_backend:OnnxRuntimeDirectMLBackend",
    "torch": "backends.torch_backend:TorchBackend",  # the 'torch' extra
    "torch-cuda": "backends.torch_backend:TorchCudaBackend",  # a CUDA build of torch
    "dxdispatch": "backends.dxdispatch:DxDispatchBackend",  # DirectML via DxDispatch
    # real DirectML on Linux through vkd3d-proton on lavapipe (`dmlconf directml setup` first):
    # DirectML.dll 1.15.4 under Wine, and torch-directml 0.2.5's libdirectml.so
    "directml": "backends.directml:DirectMLBackend",
    "directml-graph": "backends.directml:DirectMLGraphBackend",  # the same through CompileGraph
    "directml-linux": "backends.directml:DirectMLLinuxBackend",
    "directml-linux-graph": "backends.directml:DirectMLLinuxGraphBackend",
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
        raise BackendLoadError(_unknown(target))
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
        raise BackendLoadError(f"{target} is not a subclass of conformance.backend.Backend")
    if inspect.isfunction(inspect.getattr_static(cls, "capabilities", None)):
        raise BackendLoadError(
            f"{target}: capabilities must be a property, read as backend.capabilities: write "
            "@property on the line above def capabilities")
    return cls


def _unknown(target: str) -> str:
    """What to fix where a --backend value names no backend: the class a .py file needs, or
    the registered name it is closest to."""
    path = Path(target)
    if target.endswith(".py") and path.is_file():
        found = re.findall(r"^class\s+(\w+)\s*\(", path.read_text(encoding="utf-8",
                                                               errors="replace"), re.M)
        hint = f" (it defines {', '.join(found)})" if found else ""
        return (f"backend {target!r} names a file but not its class: write "
                f"{target}:ClassName{hint}")
    names = list(registered())
    mean = ops.did_you_mean(target, names)
    return (f"backend {target!r} is not a registered name: {mean}the names are "
            f"{', '.join(names)}; or give 'package.module:Class' or 'path/to/file.py:Class'")


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
