"""DirectML through DxDispatch: each operator call becomes a DxDispatch JSON model, run by the
`dxdispatch` executable on a D3D12 adapter (Windows, or WSL2 through /dev/dxg).

NOTHING HERE HAS RUN ON REAL DIRECTML: this workplace has no Windows or WSL2 GPU. The model
format, the command line and the failure output below were read from DxDispatch's documentation
and source (github.com/microsoft/DirectML, folder DxDispatch), and the backend is tested against
tests/support/dxdispatch_standin.py, a stand-in executable (a test double) that reads the same
models. docs/directml.md says how to certify real DirectML with it.

What was taken from where (paths in microsoft/DirectML):
- Model layout: `resources` (buffers: `initialValuesDataType`, `initialValues`
  {`sourcePath`: file.npy}, optional `sizeInBytes`), `dispatchables` ({"type":
  "DML_OPERATOR_...", "desc": {...}}), `commands` (`dispatch` with `bindings` from desc field names
  to resource names, `writeFile` with `resource` and `targetPath`): DxDispatch/doc/Guide.md
  (Models, Buffers, File Data Initializer, Dispatch, Write File) and the example
  DxDispatch/models/dml_element_wise_add_npy.json.
- Enum spellings: the full name or the name without its prefix, as strings only; an integer is
  refused ("... must be a string"): DxDispatch/src/model/JsonParsersGenerated.cpp
  (ParseDmlTensorDataType, ParseDmlDepthSpaceOrder, ...), Guide.md "Abbreviated Enum Values".
  We write full names (DML_TENSOR_DATA_TYPE_FLOAT32, DML_DEPTH_SPACE_ORDER_DEPTH_COLUMN_ROW).
- Desc fields: ParseDmlDepthToSpace1OperatorDesc (InputTensor, OutputTensor, BlockSize UINT,
  Order), ParseDmlResampleOperatorDesc (InterpolationMode, ScaleCount, Scales),
  ParseDmlResample1OperatorDesc (InterpolationMode, DimensionCount, Scales, InputPixelOffsets,
  OutputPixelOffsets), ParseDmlResample2OperatorDesc (InterpolationMode, RoundingDirection
  DML_AXIS_DIRECTION, DimensionCount, Scales, InputPixelOffsets, OutputPixelOffsets; commit
  3bf4bc7c) in JsonParsersGenerated.cpp. BOOL fields are JSON booleans: the generated parsers read
  them with ParseBoolField, and ParseBool (JsonParsers.cpp) throws "Expected a bool." for
  anything else. RESAMPLE3 (6_4) is written as RESAMPLE2's fields plus "Antialiased": true/false,
  the generator's pattern for a BOOL member (NormalizeVariance, IncludePadding); the stored
  DxDispatch sources stop at 6_2 (ParseDmlFeatureLevel knows up to DML_FEATURE_LEVEL_6_2), so
  no RESAMPLE3 parser was read: a DxDispatch older than DirectML 1.15 refuses its type name.
  FLOAT values are JSON numbers or the strings
  "nan", "inf", "-inf" (ParseFloatingPointNumber in DxDispatch/src/model/JsonParsers.cpp), read as
  double and cast to float: we write each value already rounded to float32, so the double the
  parser reads rounds back to exactly that float.
- Tensor descs: ParseDmlBufferTensorDesc in JsonParsers.cpp: DimensionCount defaults to the
  length of Sizes, Strides is optional, TotalTensorSizeInBytes 0 or absent means
  DMLCalcBufferTensorSize, GuaranteedBaseOffsetAlignment defaults to 0.
- Buffers from .npy: the data type comes from the file's descr ('|u1' -> UINT8, NpyReaderWriter.cpp
  MapNumPyArrayDataTypeToDml) and must match a stated initialValuesDataType; `sizeInBytes` when
  stated is used as is (else rounded up to 4); a dispatch binds the whole buffer
  (DmlDispatchable.cpp FillBindingData: SizeInBytes = sizeInBytes - offset). So every tensor is a
  UINT8 buffer holding EXACTLY its bound bytes (padding included), whatever the tensor's DataType:
  resources are untyped memory (Guide.md, Resources). writeFile of a UINT8 buffer writes a 1-D
  uint8 .npy of sizeInBytes elements (Executor.cpp, WriteFileCommand; NpyReaderWriter.cpp WriteNpy).
- Paths: sourcePath is resolved against the model's folder, then the current folder; targetPath
  against --output_path, by default the current folder (JsonParsers.cpp ResolveInputFilePath /
  ResolveOutputFilePath, dxDispatchWrapper.cpp). We write relative names and run dxdispatch in
  the model's folder, which satisfies older and newer versions alike.
- Failures: CreateOperator is THROW_IF_FAILED in the DmlDispatchable constructor; the Executor
  rethrows "ERROR creating dispatchable '<name>': <what>" (CompileOperator: "ERROR while
  initializing '<name>': ..."), and RunAll logs "Failed to execute the model: ..." to stderr and
  returns the HRESULT as the exit status (Executor.cpp, dxDispatchWrapper.cpp, exe/main.cpp,
  Logging.cpp). wil's exception text carries the HRESULT in hex (80070057 for E_INVALIDARG), as
  in the Guide's "Debugging DirectX API Usage" ("Exception(1) tid(50dc) 887A0005 The GPU
  device instance has been suspended."). Patterns: CREATION and REJECTION below. The Guide's
  older output ("ERROR creating dispatchable 'sum'" with no HRESULT) maps to ERROR, not to a
  rejection: we cannot tell why it failed.
- The DirectML version: the --help banner ("DirectML : NuGet (Microsoft.AI.DirectML.1.11.0)",
  Guide.md Running the Program); its feature level from the dml-feature-level-history page.
- Options: `-a/--adapter SUBSTRING`, `-d/--debug` (DirectML debug layer: says which rule a desc
  breaks) from DxDispatch/src/dxdispatch/CommandLineArgs.cpp; pass them with
  DMLCONF_DXDISPATCH_ARGS. DxDispatch has no timeout of its own; ours is a process timeout.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from conformance import ops
from conformance.backend import MAX_BUFFER_BYTES, Backend, Capabilities, DescRejected
from conformance.flags import ExecutionFlags
from conformance.levels import FeatureLevel
from conformance.ops import OperatorCall
from conformance.tensors import MAX_ELEMENTS, DataType, TensorDesc

ENV_COMMAND = "DMLCONF_DXDISPATCH"  # the executable's path, or a command line
ENV_ARGS = "DMLCONF_DXDISPATCH_ARGS"  # extra options, e.g. "-a NVIDIA" or "-d"
ENV_TIMEOUT = "DMLCONF_DXDISPATCH_TIMEOUT"  # seconds per dxdispatch run
ENV_WORKDIR = "DMLCONF_DXDISPATCH_WORKDIR"  # where the per-call folders are made
ENV_KEEP = "DMLCONF_DXDISPATCH_KEEP"  # "1": keep every per-call folder (for debugging)
DEFAULT_TIMEOUT_S = 120.0
DISPATCHABLE = "op"
MODEL_FILE = "model.json"
TAIL_LINES = 20

#: HRESULTs named in messages. The first two, in DxDispatch's operator-creation failure, mean
#: DirectML refused the desc: E_INVALIDARG (an invalid desc) or DXGI_ERROR_UNSUPPORTED (valid,
#: but not on this adapter or DirectML version).
HRESULTS = {0x80070057: "E_INVALIDARG", 0x887A0004: "DXGI_ERROR_UNSUPPORTED",
            0x8000FFFF: "E_UNEXPECTED", 0x80004005: "E_FAIL", 0x8007000E: "E_OUTOFMEMORY",
            0x8007023E: "ERROR_UNHANDLED_EXCEPTION", 0x887A0005: "DXGI_ERROR_DEVICE_REMOVED",
            0x887A0006: "DXGI_ERROR_DEVICE_HUNG", 0x887A0007: "DXGI_ERROR_DEVICE_RESET",
            0xC0000005: "STATUS_ACCESS_VIOLATION", 0xC0000409: "STATUS_STACK_BUFFER_OVERRUN"}
#: DirectML version -> the feature level it introduced (dml-feature-level-history page).
DIRECTML_LEVELS = {(1, 0): "1_0", (1, 1): "2_0", (1, 2): "2_1", (1, 4): "3_0", (1, 5): "3_1",
                   (1, 6): "4_0", (1, 7): "4_1", (1, 8): "5_0", (1, 9): "5_1", (1, 10): "5_2",
                   (1, 11): "6_0", (1, 12): "6_1", (1, 13): "6_2", (1, 15): "6_4"}
#: How the --help banner names a DirectML from NuGet (Guide.md, Running the Program; the banner
#: of CommandLineArgs.cpp prints "DirectML : <its configuration>").
DIRECTML_NUGET = re.compile(r"Microsoft\.AI\.DirectML\.(\d+)\.(\d+)\.(\d+)")
CREATION = re.compile(r"ERROR creating dispatchable|ERROR while initializing")
REJECTION = re.compile(r"\b(?:0x)?(80070057|887A0004)\b|E_INVALIDARG|DXGI_ERROR_UNSUPPORTED|"
                       r"The parameter is incorrect", re.IGNORECASE)


#: The operators whose DxDispatch desc this backend writes, by exact name (their fields as
#: JsonParsersGenerated.cpp parses them, "Desc fields" above): it claims these and no others.
OPERATORS = ("DEPTH_TO_SPACE", "DEPTH_TO_SPACE1", "SPACE_TO_DEPTH", "SPACE_TO_DEPTH1",
             "RESAMPLE", "RESAMPLE1", "RESAMPLE2", "RESAMPLE3")


class InexpressibleError(ValueError):
    """A desc that DxDispatch's model format cannot state."""


class DxDispatchError(RuntimeError):
    """dxdispatch crashed, timed out or failed other than by refusing the desc: an ERROR."""


# -- the model ----------------------------------------------------------------------------------
def data_type_name(data_type: DataType) -> str:
    return f"DML_TENSOR_DATA_TYPE_{data_type.name}"


def tensor_desc_json(desc: TensorDesc) -> dict[str, Any]:
    """DML_BUFFER_TENSOR_DESC as DxDispatch reads it; TotalTensorSizeInBytes is the size bound."""
    out: dict[str, Any] = {"DataType": data_type_name(desc.data_type),
                           "DimensionCount": desc.dimension_count, "Sizes": list(desc.sizes)}
    if desc.strides is not None:
        out["Strides"] = list(desc.strides)
        total = (desc.total_tensor_size_in_bytes if len(desc.strides) != desc.dimension_count
                 else desc.total_size)  # a Strides count mismatch has no computable size
    else:
        total = desc.total_size
    if total is not None:
        out["TotalTensorSizeInBytes"] = total
    if desc.guaranteed_base_offset_alignment:
        out["GuaranteedBaseOffsetAlignment"] = desc.guaranteed_base_offset_alignment
    return out


def float_json(value: float) -> float | str:
    """A FLOAT as the operator receives it: rounded to float32; non-finite ones as strings
    (DxDispatch reads "nan" as a quiet NaN: a NaN's sign and payload are not kept)."""
    with np.errstate(over="ignore"):
        f = float(np.float32(value))
    if f != f:
        return "nan"
    if f in (float("inf"), float("-inf")):
        return "inf" if f > 0 else "-inf"
    return f


def inexpressible_reason(call: OperatorCall) -> str | None:
    """Why DxDispatch's JSON cannot state this desc, or None."""
    if call.operator not in OPERATORS:
        return (f"this backend writes no DxDispatch desc for {call.operator} (it writes "
                f"{', '.join(OPERATORS)})")
    spec = ops.get(call.operator)
    for attr in spec.attributes:
        value = call.attributes[attr.name]
        if attr.kind == "enum" and not isinstance(value, str):
            return (f"{attr.name} {value} is not a named enumerator; DxDispatch's model format "
                    "takes enum values by name only (JsonParsersGenerated.cpp)")
    for name, desc in call.tensors.items():
        if any(not 0 <= v < 2**32 for v in (*desc.sizes, *(desc.strides or ()))):
            return f"{name} has Sizes or Strides outside UINT"
        if desc.total_tensor_size_in_bytes == 0 and (desc.strides is None or len(
                desc.strides) == desc.dimension_count) and desc.minimum_size:
            return (f"{name} states TotalTensorSizeInBytes 0, which DxDispatch replaces by "
                    "DMLCalcBufferTensorSize (JsonParsers.cpp ParseDmlBufferTensorDesc)")
    return None


def operator_desc_json(call: OperatorCall) -> dict[str, Any]:
    """The dispatchable: {"type": "DML_OPERATOR_<NAME>", "desc": {every field of the desc}}."""
    reason = inexpressible_reason(call)
    if reason:
        raise InexpressibleError(reason)
    spec = ops.get(call.operator)
    desc: dict[str, Any] = {name: tensor_desc_json(call.tensors[name]) for name, _ in spec.tensors}
    prefixes = {"Order": "DML_DEPTH_SPACE_ORDER_", "InterpolationMode": "DML_INTERPOLATION_MODE_",
                "RoundingDirection": "DML_AXIS_DIRECTION_"}
    for attr in spec.attributes:
        value = call.attributes[attr.name]
        if attr.kind == "enum":
            desc[attr.name] = prefixes[attr.name] + value
        elif attr.kind == "bool":
            desc[attr.name] = bool(value)  # a JSON true / false (ParseBoolField)
        elif attr.kind == "floats":
            for count in spec.derived_attributes:  # DimensionCount / ScaleCount, before arrays
                desc.setdefault(count, len(value))
            desc[attr.name] = [float_json(v) for v in value]
        else:
            desc[attr.name] = int(value)
    return {"type": f"DML_OPERATOR_{spec.name}", "desc": desc}


def input_file(tensor: str) -> str:
    return f"{tensor}.npy"


def output_file(tensor: str) -> str:
    return f"{tensor}.out.npy"


def resource_size(desc: TensorDesc) -> int:
    """sizeInBytes: TotalTensorSizeInBytes; 4 for an empty tensor (a buffer is never empty) or
    one whose size cannot be computed (a Strides count that differs from Sizes: never run)."""
    if desc.strides is not None and len(desc.strides) != desc.dimension_count:
        return desc.total_tensor_size_in_bytes or 4
    return desc.total_size or 4


def build_model(call: OperatorCall, dispatch: bool = True,
                flags: ExecutionFlags = ExecutionFlags.NONE) -> dict[str, Any]:
    """The DxDispatch model of one call: one UINT8 buffer per tensor (named as its desc member,
    initialised from <member>.npy), the dispatchable, a dispatch binding every member to its
    buffer, and a writeFile of every buffer (outputs, and inputs to see whether the GPU changed
    them). dispatch=False: the dispatchable alone, which makes DxDispatch create (and compile)
    the operator and nothing more. flags: the DML_EXECUTION_FLAGS it is compiled with, as the
    dispatchable's `executionFlags` (DxDispatch JsonParsers.cpp,
    ParseModelDmlDispatchableDesc: ParseDmlExecutionFlagsField(object, "executionFlags")); one
    flag as its name, several as a list of names."""
    dispatchable = operator_desc_json(call)
    names = [f"DML_EXECUTION_FLAG_{n}" for n in ExecutionFlags(flags).names]
    if names:
        dispatchable["executionFlags"] = names[0] if len(names) == 1 else names
    model: dict[str, Any] = {"resources": {}, "dispatchables": {DISPATCHABLE: dispatchable},
                             "commands": []}
    if not dispatch:
        return model
    spec = ops.get(call.operator)
    names = [n for n, _ in spec.tensors]
    for name in names:
        model["resources"][name] = {"initialValuesDataType": data_type_name(DataType.UINT8),
                                    "initialValues": {"sourcePath": input_file(name)},
                                    "sizeInBytes": resource_size(call.tensors[name])}
    model["commands"].append({"type": "dispatch", "dispatchable": DISPATCHABLE,
                              "bindings": {n: n for n in names}})
    for name in [*spec.outputs, *spec.inputs]:
        model["commands"].append({"type": "writeFile", "resource": name,
                                  "targetPath": output_file(name)})
    return model


def write_model(folder: Path, call: OperatorCall, bindings: Mapping[str, np.ndarray] | None,
                flags: ExecutionFlags = ExecutionFlags.NONE) -> Path:
    """Write the model (and, with bindings, one .npy per tensor holding exactly its bound
    bytes, outputs included, so that bytes DirectML leaves alone keep the runner's fill)."""
    model = build_model(call, dispatch=bindings is not None, flags=flags)
    if bindings is not None:
        for name in model["resources"]:
            data = np.ascontiguousarray(bindings[name], dtype=np.uint8).reshape(-1)
            np.save(folder / input_file(name), data if data.size else np.zeros(4, np.uint8))
    path = folder / MODEL_FILE
    path.write_text(json.dumps(model, indent=1, allow_nan=False), encoding="utf-8")
    return path


def read_results(folder: Path, call: OperatorCall, bindings: Mapping[str, np.ndarray],
                 output: str = "") -> None:
    """Copy the first TotalTensorSizeInBytes bytes of every written buffer into its binding."""
    spec = ops.get(call.operator)
    for name in [*spec.outputs, *spec.inputs]:
        desc = call.tensors[name]
        path = folder / output_file(name)
        if not path.is_file():
            raise DxDispatchError(f"dxdispatch exited 0 but wrote no {path.name} (writeFile "
                                  f"failures are only logged){tail(output)}")
        data = np.load(path, allow_pickle=False)
        raw = np.ascontiguousarray(data).reshape(-1).view(np.uint8)
        total = desc.total_size
        if raw.size < total:
            raise DxDispatchError(f"{path.name} holds {raw.size} bytes, fewer than {name}'s "
                                  f"TotalTensorSizeInBytes {total}{tail(output)}")
        bindings[name][:] = raw[:total]


# -- outcomes -----------------------------------------------------------------------------------
def describe_exit(returncode: int) -> str:
    if returncode < 0:
        return f"killed by signal {-returncode}"
    code = returncode & 0xFFFFFFFF
    if code in HRESULTS:
        return f"exit status 0x{code:08X} ({HRESULTS[code]})"
    low = [n for h, n in HRESULTS.items() if h & 0xFF == code]
    guess = f" (on POSIX, the low byte of {' or '.join(low)}?)" if 0 < code < 256 and low else ""
    return f"exit status {returncode}{guess}"


def tail(output: str, lines: int = TAIL_LINES) -> str:
    kept = [line for line in output.splitlines() if line.strip()][-lines:]
    return ("\n--- dxdispatch output (last lines) ---\n" + "\n".join(kept)) if kept else ""


def classify(returncode: int | None, output: str, timeout: float | None = None) -> None:
    """Map a finished run: return on success; DescRejected when DirectML refused the operator
    (a creation failure carrying E_INVALIDARG or DXGI_ERROR_UNSUPPORTED); DxDispatchError for a
    timeout (returncode None), a crash or any other failure, with the output's last lines."""
    if returncode is None:
        raise DxDispatchError(f"dxdispatch did not finish within {timeout} s and was killed"
                              f"{tail(output)}")
    if returncode == 0:
        return
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    for i, line in enumerate(lines):
        # the creation failure, and wil's message on that line or the next two
        window = " ".join(lines[i:i + 3])
        if not (CREATION.search(line) and REJECTION.search(window)):
            continue
        unsupported = re.search(r"887A0004|DXGI_ERROR_UNSUPPORTED", window, re.IGNORECASE)
        what = "DXGI_ERROR_UNSUPPORTED" if unsupported else "E_INVALIDARG"
        where = "CompileOperator" if "initializing" in line else "CreateOperator"
        before = [b for b in lines[max(0, i - 5):i]  # the debug layer's own words, with -d
                  if not b.startswith(("Running on", "Failed to execute"))]
        raise DescRejected(f"DirectML refused the operator at {where} ({what}): "
                           + " | ".join([*before, line[:400]]))
    raise DxDispatchError(f"dxdispatch failed: {describe_exit(returncode)}{tail(output)}")


# -- the backend --------------------------------------------------------------------------------
def directml_level(banner: str) -> tuple[str, FeatureLevel] | None:
    """The DirectML version named in dxdispatch's banner and the highest feature level it
    supports, or None when the banner names none (a DirectML from the Windows SDK, say)."""
    found = DIRECTML_NUGET.search(banner)
    if not found:
        return None
    version = (int(found.group(1)), int(found.group(2)))
    level = max((v, lv) for v, lv in DIRECTML_LEVELS.items() if v <= version)[1]
    return ".".join(found.groups()), FeatureLevel.parse(level)


def probe_banner(command: Sequence[str]) -> str:
    """dxdispatch --help (the banner names its DirectML); empty when it cannot be run."""
    try:
        done = subprocess.run([*command, "--help"], capture_output=True, timeout=60,
                              stdin=subprocess.DEVNULL, check=False)
    except (OSError, subprocess.SubprocessError):
        return ""
    return (done.stdout or b"").decode("utf-8", "replace")


def find_command(command: str | Sequence[str] | None = None) -> list[str] | None:
    """The command that runs dxdispatch: the argument (a path, or a command prefix such as
    [python, script]), else $DMLCONF_DXDISPATCH (a path, or a command line), else `dxdispatch`
    (or dxdispatch.exe) on PATH. None when there is none."""
    if command is None:
        command = os.environ.get(ENV_COMMAND) or None
    if isinstance(command, str):
        command = [command] if Path(command).is_file() else shlex.split(command,
                                                                        posix=os.name != "nt")
    if command:
        exe = shutil.which(command[0]) or (command[0] if Path(command[0]).is_file() else None)
        if exe is None:
            return None
        # dxdispatch runs in a folder of its own: paths given relative to here are made absolute
        return [os.path.abspath(a) if Path(a).is_file() else a for a in [exe, *command[1:]]]
    found = shutil.which("dxdispatch") or shutil.which("dxdispatch.exe")
    return [found] if found else None


class DxDispatchBackend(Backend):
    """DirectML, one dxdispatch process per operator call. Without a dxdispatch executable
    every case is NOT_SUPPORTED, with the reason."""

    name = "dxdispatch"

    def __init__(self, feature_level: FeatureLevel | None = None,
                 command: str | Sequence[str] | None = None, timeout: float | None = None,
                 extra_args: Sequence[str] | None = None,
                 workdir: str | Path | None = None, keep: bool | None = None) -> None:
        #: The argv prefix that runs dxdispatch (None: not found). Not `command`: that is
        #: Backend.command, the classmethod of a backend's own command line.
        self.command_line = find_command(command)
        self.given = command if command is not None else os.environ.get(ENV_COMMAND)
        self.timeout = float(timeout or os.environ.get(ENV_TIMEOUT) or DEFAULT_TIMEOUT_S)
        self.extra_args = list(extra_args) if extra_args is not None else shlex.split(
            os.environ.get(ENV_ARGS, ""), posix=os.name != "nt")
        self.workdir = workdir or os.environ.get(ENV_WORKDIR) or None
        self.keep = keep if keep is not None else os.environ.get(ENV_KEEP, "") == "1"
        self.directml = (directml_level(probe_banner(self.command_line)) if self.command_line
                         else None)
        super().__init__(feature_level)

    @property
    def capabilities(self) -> Capabilities:
        """Every feature of the operators it writes models for, up to the feature level of the
        DirectML inside dxdispatch when its banner names it (else the highest: claim the right
        one with --level)."""
        command = " ".join(getattr(self, "command_line", None) or ["(not found)"])
        directml = getattr(self, "directml", None)
        where = (f"DirectML {directml[0]}, feature level {directml[1]}" if directml else
                 "DirectML version not named by dxdispatch: claim its level with --level")
        caps = Capabilities.full(OPERATORS, f"DirectML through DxDispatch ({command}; {where}); "
                                            "every desc DxDispatch's model format can state")
        return replace(caps, feature_level=directml[1]) if directml else caps

    def missing_reason(self) -> str | None:
        if self.command_line:
            return None
        if self.given:
            return f"the dxdispatch command {self.given!r} was not found"
        return (f"no dxdispatch executable: put dxdispatch on PATH or set {ENV_COMMAND} "
                "(docs/directml.md)")

    def unsupported_reason(self, call: OperatorCall) -> str | None:
        return self.missing_reason() or inexpressible_reason(call)

    def create_operator(self, call: OperatorCall) -> None:
        """DirectML validates inside dxdispatch, at execute. Only a desc whose buffers the
        runner cannot bind is settled here (base.py): a Strides count that differs from Sizes
        is refused outright, since DML_BUFFER_TENSOR_DESC has one DimensionCount for both
        arrays and no DirectML call can state it; a huge or too small buffer is put to
        DirectML by a create-only model (no buffers, no dispatch)."""
        if unbindable_reason(call) is None:
            return
        for name, desc in call.tensors.items():
            if desc.strides is not None and len(desc.strides) != desc.dimension_count:
                raise DescRejected(
                    f"refused without running DirectML: {name} has {len(desc.strides)} Strides "
                    f"for {desc.dimension_count} Sizes; DML_BUFFER_TENSOR_DESC has one "
                    "DimensionCount for both arrays, so no DirectML call can state this desc")
        self._run(call, None)

    def execute(self, call: OperatorCall, bindings: Mapping[str, np.ndarray]) -> None:
        self._run(call, bindings)

    def _run(self, call: OperatorCall, bindings: Mapping[str, np.ndarray] | None) -> None:
        missing = self.missing_reason()
        if missing:
            raise DxDispatchError(missing)
        if self.keep:
            folder = Path(tempfile.mkdtemp(prefix="dmlconf-dxd-", dir=self.workdir))
            self._run_in(folder, call, bindings)
            return
        with tempfile.TemporaryDirectory(prefix="dmlconf-dxd-", dir=self.workdir,
                                         ignore_cleanup_errors=True) as name:
            self._run_in(Path(name), call, bindings)

    def _run_in(self, folder: Path, call: OperatorCall,
                bindings: Mapping[str, np.ndarray] | None) -> None:
        write_model(folder, call, bindings, self.execution_flags)
        argv = [*(self.command_line or []), *self.extra_args, MODEL_FILE]
        returncode: int | None
        out: bytes | None
        err: bytes | None
        try:
            done = subprocess.run(argv, cwd=folder, capture_output=True, timeout=self.timeout,
                                  stdin=subprocess.DEVNULL, check=False)
            returncode, out, err = done.returncode, done.stdout, done.stderr
        except subprocess.TimeoutExpired as exc:
            returncode, out, err = None, exc.stdout, exc.stderr
        output = "\n".join((b or b"").decode("utf-8", "replace") for b in (out, err))
        if self.keep:
            output += f"\n(model and buffers kept in {folder})"
        classify(returncode, output, self.timeout)
        if bindings is not None:
            read_results(folder, call, bindings, output)


def unbindable_reason(call: OperatorCall) -> str | None:
    """Why the runner cannot bind this call's buffers (then it must be refused at
    create_operator): a Strides count that differs from Sizes, a TotalTensorSizeInBytes below
    what the strides address, more than 2^32 - 1 elements, or a buffer beyond the runner's
    MAX_BUFFER_BYTES. These are validate_desc's rules that decide whether a buffer can exist."""
    for name, desc in call.tensors.items():
        if desc.strides is not None and len(desc.strides) != desc.dimension_count:
            return f"{name}: Strides count differs from Sizes"
        if desc.total_size > MAX_BUFFER_BYTES:
            return f"{name}: {desc.total_size}-byte buffer"
        if desc.total_size < desc.minimum_size:
            return f"{name}: TotalTensorSizeInBytes below DMLCalcBufferTensorSize"
        if desc.element_count > MAX_ELEMENTS:
            return f"{name}: more than 2^32 - 1 elements"
    return None
