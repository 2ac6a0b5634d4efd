"""The shim library through ctypes: one operator call flattened into dmlshim.h's structs, and the
shim's answers mapped to what the harness understands.

flatten() is pure Python (tested everywhere); Shim loads the native library (only where the
layer is built, and only in the process that runs the cases); helper.Helper puts the same calls
to the Windows build of the shim under Wine.
"""

from __future__ import annotations

import ctypes
import os
import tempfile
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from backends.dxdispatch import HRESULTS
from conformance import ops
from conformance.backend import DescRejected
from conformance.ops import OperatorCall
from conformance.tensors import TensorDesc

ABI_VERSION = 2  # DMLSHIM_ABI_VERSION in dmlshim.h
UINT_MAX = 2**32 - 1

# enum dmlshim_result
OK, REJECTED_CREATE, REJECTED_COMPILE, FAILED, DEVICE_REMOVED, BAD_CALL = range(6)
MODE_COMPILE, MODE_EXECUTE = 0, 1
#: The operators whose desc the shim builds (the switch of dmlshim.c's build_desc over
#: DML_OPERATOR_TYPE), by exact name: the directml backends claim these and no others.
OPERATORS = ("DEPTH_TO_SPACE", "DEPTH_TO_SPACE1", "SPACE_TO_DEPTH", "SPACE_TO_DEPTH1",
             "RESAMPLE", "RESAMPLE1", "RESAMPLE2", "RESAMPLE3")
STAGES = ("", "creating the devices", "CreateOperator", "compiling", "the operator initializer",
          "creating the buffers", "binding", "recording", "executing", "reading back")


class DirectMLError(RuntimeError):
    """DirectML or the layer under it failed other than by refusing the desc: an ERROR."""


class InexpressibleError(ValueError):
    """A desc that no DML_BUFFER_TENSOR_DESC / operator desc can state."""


class Tensor(ctypes.Structure):
    _fields_ = [("data_type", ctypes.c_uint32), ("flags", ctypes.c_uint32),
                ("dimension_count", ctypes.c_uint32),
                ("guaranteed_base_offset_alignment", ctypes.c_uint32),
                ("sizes", ctypes.POINTER(ctypes.c_uint32)),
                ("strides", ctypes.POINTER(ctypes.c_uint32)),
                ("total_tensor_size_in_bytes", ctypes.c_uint64)]


class Call(ctypes.Structure):
    _fields_ = [("operator_type", ctypes.c_uint32), ("block_size", ctypes.c_uint32),
                ("order", ctypes.c_uint32), ("interpolation_mode", ctypes.c_uint32),
                ("dimension_count", ctypes.c_uint32), ("execution_flags", ctypes.c_uint32),
                ("scales", ctypes.POINTER(ctypes.c_float)),
                ("input_pixel_offsets", ctypes.POINTER(ctypes.c_float)),
                ("output_pixel_offsets", ctypes.POINTER(ctypes.c_float)),
                ("input", Tensor), ("output", Tensor),
                ("graph", ctypes.c_uint32), ("rounding_direction", ctypes.c_uint32),
                ("antialiased", ctypes.c_uint32), ("reserved", ctypes.c_uint32)]


class Status(ctypes.Structure):
    _fields_ = [("hr", ctypes.c_int32), ("removed_reason", ctypes.c_int32),
                ("stage", ctypes.c_uint32), ("guard_bytes_changed", ctypes.c_uint32),
                ("guard_tensor", ctypes.c_int32), ("guard_offset", ctypes.c_int32),
                ("seconds_compile", ctypes.c_double), ("seconds_execute", ctypes.c_double),
                ("message", ctypes.c_char * 2048)]


def hresult_name(hr: int) -> str:
    """0x80070057 (E_INVALIDARG): an HRESULT as a driver engineer reads it."""
    code = hr & 0xFFFFFFFF
    name = HRESULTS.get(code)
    return f"0x{code:08X}" + (f" ({name})" if name else "")


def _uints(values: tuple[int, ...], what: str) -> ctypes.Array:
    if any(not 0 <= v <= UINT_MAX for v in values):
        raise InexpressibleError(f"{what} {list(values)} do not fit DirectML's UINT")
    return (ctypes.c_uint32 * max(len(values), 1))(*values)


def _floats(values: tuple[float, ...]) -> ctypes.Array:
    with np.errstate(over="ignore", invalid="ignore"):
        as32 = np.asarray(values, dtype=np.float32)  # the FLOATs the operator receives
    return (ctypes.c_float * max(len(values), 1))(*as32.tolist())


@dataclass
class Flat:
    """A flattened call: the struct, and the arrays it points into (kept alive with it)."""

    call: Call
    keep: list[ctypes.Array]


def _tensor(name: str, desc: TensorDesc, keep: list[ctypes.Array]) -> Tensor:
    if desc.strides is not None and len(desc.strides) != desc.dimension_count:
        raise InexpressibleError(
            f"{name} has {len(desc.strides)} Strides for {desc.dimension_count} Sizes; "
            "DML_BUFFER_TENSOR_DESC has one DimensionCount for both arrays")
    sizes = _uints(desc.sizes, f"{name} Sizes")
    keep.append(sizes)
    strides = None
    if desc.strides is not None:
        strides = _uints(desc.strides, f"{name} Strides")
        keep.append(strides)
    return Tensor(int(desc.data_type), 0, desc.dimension_count,
                  desc.guaranteed_base_offset_alignment, sizes,
                  ctypes.cast(strides, ctypes.POINTER(ctypes.c_uint32)) if strides else None,
                  desc.total_size)


def _enum(spec: ops.OperatorSpec, name: str, value: object) -> int:
    """An enum attribute's DirectML.h value (a raw int stays as it is: invalid descs too)."""
    if isinstance(value, str):
        return spec.attribute(name).values[value]
    number = int(value)  # type: ignore[call-overload]
    if not 0 <= number <= UINT_MAX:
        raise InexpressibleError(f"{name} {number} does not fit the enum's 32 bits")
    return number


def _bool(value: object) -> int:
    """A BOOL attribute's 32 bits: True / False as 1 / 0, an integer as it is (invalid descs)."""
    number = int(value)  # type: ignore[call-overload]
    if not -2**31 <= number <= UINT_MAX:
        raise InexpressibleError(f"BOOL {number} does not fit 32 bits")
    return number & UINT_MAX


def flatten(call: OperatorCall, execution_flags: int = 0, graph: bool = False) -> Flat:
    """Every field of the operator desc, as dmlshim_call. Raises InexpressibleError for a desc
    no DirectML call can state, NotImplementedError for an operator the shim has no desc of."""
    if call.operator not in OPERATORS:
        raise NotImplementedError(f"the DirectML shim builds no {call.operator} desc (it builds "
                                  f"{', '.join(OPERATORS)}: native/dmlshim.c)")
    spec = ops.get(call.operator)
    keep: list[ctypes.Array] = []
    a = call.attributes
    c = Call()
    c.operator_type = spec.type_value
    c.execution_flags = int(execution_flags)
    c.graph = int(graph)
    c.input = _tensor("InputTensor", call.tensors["InputTensor"], keep)
    c.output = _tensor("OutputTensor", call.tensors["OutputTensor"], keep)
    if "BlockSize" in a:
        c.block_size = a["BlockSize"]
        c.order = _enum(spec, "Order", a["Order"]) if "Order" in a else 0  # the *1 operators
    if "Scales" in a:
        c.interpolation_mode = _enum(spec, "InterpolationMode", a["InterpolationMode"])
        c.dimension_count = len(a["Scales"])
        if "RoundingDirection" in a:  # RESAMPLE2, RESAMPLE3
            c.rounding_direction = _enum(spec, "RoundingDirection", a["RoundingDirection"])
        if "Antialiased" in a:  # RESAMPLE3: BOOL, any 32-bit value as given
            c.antialiased = _bool(a["Antialiased"])
        for field_name, attr in (("scales", "Scales"), ("input_pixel_offsets", "InputPixelOffsets"),
                                 ("output_pixel_offsets", "OutputPixelOffsets")):
            if attr in a:
                array = _floats(a[attr])
                keep.append(array)
                setattr(c, field_name, ctypes.cast(array, ctypes.POINTER(ctypes.c_float)))
    return Flat(c, keep)


def outcome(rc: int, status: Status, tensors: tuple[str, str] = ("InputTensor", "OutputTensor")
            ) -> None:
    """Map the shim's answer: return on success, DescRejected for a refusal, DirectMLError for
    anything else (the HRESULT, the stage, and the D3D12 layer's log lines)."""
    words = status.message.decode("utf-8", "replace").strip()
    if rc == OK:
        if status.guard_bytes_changed:
            tensor = tensors[status.guard_tensor] if status.guard_tensor in (0, 1) else "?"
            raise DirectMLError(
                f"DirectML wrote {status.guard_bytes_changed} "
                f"{'byte' if status.guard_bytes_changed == 1 else 'bytes'} outside the bound "
                f"range of {tensor} (the first at byte {status.guard_offset} relative to the "
                "binding's start), in the D3D12 buffer around the binding")
        return
    if rc in (REJECTED_CREATE, REJECTED_COMPILE):
        where = "CreateOperator" if rc == REJECTED_CREATE else "CompileOperator"
        raise DescRejected(f"DirectML refused the desc at {where}: {hresult_name(status.hr)}"
                           + (f" ({words})" if words else ""))
    stage = STAGES[status.stage] if status.stage < len(STAGES) else str(status.stage)
    what = {DEVICE_REMOVED: "the D3D12 device was removed",
            BAD_CALL: "the call cannot be put to DirectML"}.get(rc, "DirectML failed")
    removed = (f"; device removed reason {hresult_name(status.removed_reason)}"
               if status.removed_reason else "")
    raise DirectMLError(f"{what} while {stage}: HRESULT {hresult_name(status.hr)}{removed}"
                        + (f"; {words}" if words else ""))


class ShimBase(ABC):
    """What the backend calls: dmlshim.h's functions, in this process through ctypes (Shim, the
    Linux build) or in a Windows helper process under Wine (helper.Helper, DirectML.dll). Both
    take the same flattened call; this class holds what is common to them."""

    opened = False

    @abstractmethod
    def _open(self, status: Status) -> int:
        """dmlshim_open."""

    @abstractmethod
    def _close(self) -> None:
        """dmlshim_close."""

    @abstractmethod
    def _run(self, flat: Flat, buffers: Mapping[str, np.ndarray] | None, mode: int,
             status: Status) -> int:
        """dmlshim_run on the flattened call; the buffers are written back in place."""

    @abstractmethod
    def max_feature_level(self, levels: list[int]) -> int:
        """The highest of levels CheckFeatureSupport(FEATURE_LEVELS) reports."""

    @abstractmethod
    def data_type_supported(self, data_type: int) -> bool:
        """CheckFeatureSupport(TENSOR_DATA_TYPE_SUPPORT)."""

    def open(self) -> None:
        """Create the D3D12 and DirectML devices (again, after a device removal)."""
        status = Status()
        outcome(self._open(status), status)
        self.opened = True

    def run(self, call: OperatorCall, buffers: Mapping[str, np.ndarray] | None,
            execution_flags: int = 0, graph: bool = False) -> Status:
        """Compile the call (buffers None) or run it on the host buffers (each exactly
        TotalTensorSizeInBytes bytes, C-contiguous; all are written back)."""
        flat = flatten(call, execution_flags, graph)
        if not self.opened:
            self.open()
        if buffers is not None:
            for name in ("InputTensor", "OutputTensor"):
                buffer = buffers[name]
                desc = call.tensors[name]
                if buffer.dtype != np.uint8 or buffer.size != desc.total_size or not (
                        buffer.flags.c_contiguous and buffer.flags.writeable):
                    raise DirectMLError(f"{name}'s binding is not a writable contiguous "
                                        f"{desc.total_size}-byte buffer")
        status = Status()
        mode = MODE_COMPILE if buffers is None else MODE_EXECUTE
        rc = self._run(flat, buffers, mode, status)
        if rc == DEVICE_REMOVED:
            self._close()  # the next call starts from fresh devices
            self.opened = False
        outcome(rc, status)
        return status


class Shim(ShimBase):
    """libdmlshim.so, loaded once per process. Environment set before loading: lavapipe only
    (VK_ICD_FILENAMES), no vkd3d-proton shader cache in the current folder, its warnings and
    errors to a log file the shim quotes in failure messages."""

    _loaded: Shim | None = None

    def __init__(self, libdir: Path, icd: Path) -> None:
        os.environ.setdefault("VK_ICD_FILENAMES", str(icd))
        os.environ.setdefault("VK_DRIVER_FILES", os.environ["VK_ICD_FILENAMES"])
        os.environ.setdefault("VKD3D_SHADER_CACHE_PATH", "0")
        os.environ.setdefault("VKD3D_DEBUG", "warn")
        log = Path(tempfile.gettempdir()) / f"dmlconf-vkd3d-{os.getpid()}.log"
        os.environ["VKD3D_LOG_FILE"] = str(log)
        self.lib = ctypes.CDLL(str(libdir / "libdmlshim.so"))
        self.lib.dmlshim_abi_version.restype = ctypes.c_int
        version = self.lib.dmlshim_abi_version()
        if version != ABI_VERSION:
            raise DirectMLError(f"{libdir} holds shim ABI {version}, this code needs "
                                f"{ABI_VERSION}: run `dmlconf directml setup`")
        self.lib.dmlshim_open.argtypes = [ctypes.POINTER(Status)]
        self.lib.dmlshim_close.argtypes = []
        self.lib.dmlshim_run.argtypes = [ctypes.POINTER(Call), ctypes.POINTER(ctypes.c_void_p),
                                         ctypes.c_uint32, ctypes.POINTER(Status)]
        self.lib.dmlshim_max_feature_level.argtypes = [
            ctypes.POINTER(ctypes.c_uint32), ctypes.c_uint32, ctypes.POINTER(ctypes.c_uint32)]
        self.lib.dmlshim_max_feature_level.restype = ctypes.c_int32
        self.lib.dmlshim_data_type_supported.argtypes = [ctypes.c_uint32,
                                                         ctypes.POINTER(ctypes.c_int32)]
        self.lib.dmlshim_data_type_supported.restype = ctypes.c_int32
        self.open()

    @classmethod
    def get(cls, libdir: Path, icd: Path) -> Shim:
        if cls._loaded is None:
            cls._loaded = cls(libdir, icd)
        return cls._loaded

    def _open(self, status: Status) -> int:
        return self.lib.dmlshim_open(ctypes.byref(status))

    def _close(self) -> None:
        self.lib.dmlshim_close()

    def max_feature_level(self, levels: list[int]) -> int:
        requested = (ctypes.c_uint32 * len(levels))(*levels)
        highest = ctypes.c_uint32()
        hr = self.lib.dmlshim_max_feature_level(requested, len(levels), ctypes.byref(highest))
        if hr < 0:
            raise DirectMLError(f"CheckFeatureSupport(FEATURE_LEVELS): {hresult_name(hr)}")
        return highest.value

    def data_type_supported(self, data_type: int) -> bool:
        supported = ctypes.c_int32()
        hr = self.lib.dmlshim_data_type_supported(data_type, ctypes.byref(supported))
        if hr < 0:
            raise DirectMLError(f"CheckFeatureSupport(TENSOR_DATA_TYPE_SUPPORT {data_type}): "
                                f"{hresult_name(hr)}")
        return bool(supported.value)

    def _run(self, flat: Flat, buffers: Mapping[str, np.ndarray] | None, mode: int,
             status: Status) -> int:
        pointers = (ctypes.c_void_p * 2)()
        if buffers is not None:
            for i, name in enumerate(("InputTensor", "OutputTensor")):
                pointers[i] = buffers[name].ctypes.data
        return self.lib.dmlshim_run(ctypes.byref(flat.call), pointers, mode,
                                    ctypes.byref(status))
