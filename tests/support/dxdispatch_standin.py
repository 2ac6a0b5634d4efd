#!/usr/bin/env python3
"""TEST DOUBLE ONLY: a stand-in for DxDispatch's `dxdispatch` executable. It is NOT DirectML and
certifies nothing; it lets the tests drive backends/dxdispatch.py end to end where no D3D12
adapter exists.

    python tests/support/dxdispatch_standin.py [-a NAME] [-d] model.json

It reads the DxDispatch JSON models that backends/dxdispatch.py writes, the way DxDispatch
does (DxDispatch/src/model/JsonParsers.cpp, JsonParsersGenerated.cpp in microsoft/DirectML),
but only the fields that module emits, and more strictly (an unknown desc field is an error):
- resources: buffers initialised from .npy files (`initialValues: {sourcePath}`), optional
  `initialValuesDataType` (must match the file's type), optional `sizeInBytes`;
- dispatchables: {"type": "DML_OPERATOR_<NAME>", "desc": {...}} for the operators in
  OPERATORS; enums by full name or suffix, strings only; BOOLs as JSON true / false only;
  FLOATs as numbers or "nan"/"inf"/"-inf",
  cast to float32; tensor descs with DataType, DimensionCount, Sizes, Strides,
  TotalTensorSizeInBytes (0 or absent: DMLCalcBufferTensorSize), GuaranteedBaseOffsetAlignment;
- commands: dispatch (bindings: bind point -> resource name), writeFile (.npy), print.

"Creating the operator" validates the desc with the suite's operator spec at the highest
feature level; a desc it breaks fails as DxDispatch reports a CreateOperator E_INVALIDARG
("Failed to execute the model: ERROR creating dispatchable 'op': ... 80070057 The parameter is
incorrect.", exit status the HRESULT, its low byte on POSIX); with -d it first prints each broken
rule, as the DirectML debug layer would. "Dispatching" runs the NumPy reference on the bound
bytes. Set DMLCONF_STANDIN_FAULT to make it misbehave for the tests: crash, hang, unsupported
(CreateOperator DXGI_ERROR_UNSUPPORTED), device-removed (at binding), no-write (writeFile
fails, logged only, exit 0 as in DxDispatch), write-input (changes a byte of an input buffer).
Its --help banner names a NuGet DirectML only when DMLCONF_STANDIN_DIRECTML gives a version.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from backends.numpy_reference import NumpyReferenceBackend  # noqa: E402
from conformance import ops  # noqa: E402
from conformance.levels import HIGHEST  # noqa: E402
from conformance.ops import OperatorCall  # noqa: E402
from conformance.tensors import DataType, TensorDesc, calc_buffer_tensor_size  # noqa: E402

ENV_FAULT = "DMLCONF_STANDIN_FAULT"
ENV_DIRECTML = "DMLCONF_STANDIN_DIRECTML"  # a version for the --help banner, e.g. 1.13.0
ADAPTER = "DxDispatch stand-in (NumPy reference, NOT DirectML)"
MESSAGES = {0x80070057: "The parameter is incorrect.",
            0x887A0004: "The specified device interface or feature level is not supported on "
                        "this system.",
            0x887A0005: "The GPU device instance has been suspended. Use GetDeviceRemovedReason "
                        "to determine the appropriate action.",
            0x8000FFFF: "Catastrophic failure"}
#: The operators whose desc the stand-in parses (the fields backends/dxdispatch.py writes for
#: them), by exact name: it refuses any other, as DxDispatch refuses a type it cannot parse.
OPERATORS = ("DEPTH_TO_SPACE", "DEPTH_TO_SPACE1", "SPACE_TO_DEPTH", "SPACE_TO_DEPTH1",
             "RESAMPLE", "RESAMPLE1", "RESAMPLE2", "RESAMPLE3")
ENUM_PREFIXES = {"Order": "DML_DEPTH_SPACE_ORDER_", "InterpolationMode": "DML_INTERPOLATION_MODE_",
                 "RoundingDirection": "DML_AXIS_DIRECTION_"}
TENSOR_FIELDS = {"DataType", "DimensionCount", "Sizes", "Strides", "TotalTensorSizeInBytes",
                 "GuaranteedBaseOffsetAlignment"}


class ParseError(Exception):
    """The model is malformed: DxDispatch's 'Failed to parse the model'."""


class HResultError(Exception):
    """A failed DirectX call, as wil's exception reports it (the HRESULT in hex)."""

    def __init__(self, hresult: int) -> None:
        self.hresult = hresult
        super().__init__(f"{__file__}(1)\\dxdispatch.exe!00007FF600001000: (caller: "
                         f"00007FF600002000) Exception(1) tid(1) {hresult:08X} "
                         f"{MESSAGES.get(hresult, '')}")


def exit_code(hresult: int) -> int:
    """main() returns the HRESULT: the whole value on Windows, its low byte on POSIX."""
    return hresult if os.name == "nt" else hresult & 0xFF


# -- parsing ------------------------------------------------------------------------------------
def _field(obj: Mapping[str, Any], name: str) -> Any:
    if name not in obj:
        raise ParseError(f"Field '{name}' is required.")
    return obj[name]


def _uint(value: Any, name: str, bits: int = 32) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 2**bits:
        raise ParseError(f"Error parsing field '{name}': Expected an unsigned integer.")
    return value


def _uints(value: Any, name: str) -> list[int]:
    if not isinstance(value, list):
        raise ParseError(f"Error parsing field '{name}': Expected an array.")
    return [_uint(v, name) for v in value]


def _float(value: Any, name: str) -> float:
    if isinstance(value, str) and value.lower() in ("nan", "inf", "-inf"):
        return float(np.float32(value.lower()))
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ParseError(f"Error parsing field '{name}': Expected a number or 'NaN', 'Inf', "
                         "or '-Inf'.")
    with np.errstate(over="ignore"):
        return float(np.float32(value))  # read as double, cast to float


def _enum(value: Any, prefix: str, name: str) -> str:
    if not isinstance(value, str):
        raise ParseError(f"Error parsing field '{name}': {prefix.rstrip('_')} must be a string.")
    return value.removeprefix(prefix)  # the spec's own parser refuses unknown names


def _bool(value: Any, name: str) -> bool:
    if not isinstance(value, bool):  # ParseBool: a JSON true / false, nothing else
        raise ParseError(f"Error parsing field '{name}': Expected a bool.")
    return value


def parse_tensor_desc(obj: Any, name: str) -> TensorDesc:
    if not isinstance(obj, dict):
        raise ParseError(f"Error parsing field '{name}': Expected a non-null JSON object.")
    unknown = set(obj) - TENSOR_FIELDS
    if unknown:
        raise ParseError(f"{name}: the stand-in takes no field {sorted(unknown)}")
    try:
        data_type = DataType.parse(_enum(_field(obj, "DataType"), "DML_TENSOR_DATA_TYPE_",
                                         "DataType"))
    except ValueError as exc:
        raise ParseError(f"{name}: {exc}") from None
    sizes = _uints(_field(obj, "Sizes"), "Sizes")
    strides = _uints(obj["Strides"], "Strides") if "Strides" in obj else None
    count = _uint(obj.get("DimensionCount", len(sizes)), "DimensionCount")
    if count != len(sizes):
        raise ParseError(f"{name}: DimensionCount {count} for {len(sizes)} Sizes (the stand-in "
                         "cannot model DirectML reading past the array)")
    total = _uint(obj.get("TotalTensorSizeInBytes", 0), "TotalTensorSizeInBytes", 64)
    if total == 0 and (strides is None or len(strides) == len(sizes)):
        total = calc_buffer_tensor_size(data_type, sizes, strides)
    return TensorDesc(data_type, tuple(sizes), None if strides is None else tuple(strides),
                      total, _uint(obj.get("GuaranteedBaseOffsetAlignment", 0),
                                   "GuaranteedBaseOffsetAlignment"))


def parse_dispatchable(obj: Any) -> OperatorCall:
    """A DML operator dispatchable -> the OperatorCall it describes."""
    if not isinstance(obj, dict):
        raise ParseError("Expected a non-null JSON object.")
    type_name = _field(obj, "type")
    name = str(type_name).removeprefix("DML_OPERATOR_")
    if name not in OPERATORS:
        raise ParseError(f"'{type_name}' is not a recognized value for DML_OPERATOR_TYPE "
                         f"(this stand-in parses {', '.join(OPERATORS)}).")
    spec = ops.get(name)
    desc = obj.get("desc", obj.get("Desc"))
    if not isinstance(desc, dict):
        raise ParseError("Field 'desc' is required.")
    known = {n for n, _ in spec.tensors} | {a.name for a in spec.attributes} | set(
        spec.derived_attributes)
    if set(desc) - known:
        raise ParseError(f"{spec.name}: the stand-in takes no field {sorted(set(desc) - known)}")
    tensors = {n: parse_tensor_desc(_field(desc, n), n) for n, _ in spec.tensors}
    attributes: dict[str, Any] = {}
    for attr in spec.attributes:
        value = _field(desc, attr.name)
        if attr.kind == "enum":
            attributes[attr.name] = _enum(value, ENUM_PREFIXES[attr.name], attr.name)
        elif attr.kind == "floats":
            if not isinstance(value, list):
                raise ParseError(f"Error parsing field '{attr.name}': Expected an array.")
            attributes[attr.name] = [_float(v, attr.name) for v in value]
        elif attr.kind == "bool":
            attributes[attr.name] = _bool(value, attr.name)
        else:
            attributes[attr.name] = _uint(value, attr.name)
    for name in spec.derived_attributes:
        attributes[name] = _uint(_field(desc, name), name)
    try:
        return spec.make_call(tensors, attributes)
    except ValueError as exc:
        raise ParseError(str(exc)) from None


def parse_buffer(obj: Any, folder: Path) -> tuple[np.ndarray, DataType]:
    """A buffer resource -> (its bytes, sizeInBytes long; the data type of its initializer)."""
    values = _field(obj, "initialValues")
    if not isinstance(values, dict) or set(values) != {"sourcePath"}:
        raise ParseError("the stand-in takes initialValues {sourcePath: file.npy} only")
    path = folder / values["sourcePath"]
    if not path.is_file():
        path = Path(values["sourcePath"]).absolute()
    try:
        array = np.load(path, allow_pickle=False)
    except (OSError, ValueError) as exc:
        raise ParseError(f"Given filename '{path}' could not be opened: {exc}") from None
    file_type = next((t for t in DataType if t.numpy_dtype == array.dtype.newbyteorder("<")),
                     None)
    if file_type is None:
        raise ParseError(f"'{path}': NumPy type {array.dtype} has no DML_TENSOR_DATA_TYPE")
    stated = obj.get("initialValuesDataType")
    if stated is not None and DataType.parse(_enum(stated, "DML_TENSOR_DATA_TYPE_",
                                                   "initialValuesDataType")) != file_type:
        raise ParseError(f"Data type from file '{path}' does not match field "
                         "'initialValuesDataType'.")
    data = np.ascontiguousarray(array).reshape(-1).view(np.uint8)
    if data.size == 0:
        raise ParseError("'initialValues' must be non-empty.")
    size = _uint(obj["sizeInBytes"], "sizeInBytes", 64) if "sizeInBytes" in obj else (
        data.size + 3) & ~3
    if size < data.size:
        raise ParseError(f"The buffer size ({size} bytes) is too small for the initialValues "
                         f"({data.size} bytes) at offset 0 bytes.")
    buffer = np.zeros(size, dtype=np.uint8)
    buffer[:data.size] = data
    return buffer, file_type


# -- running ------------------------------------------------------------------------------------
def run(model_path: Path, debug: bool, fault: str) -> int:
    print(f"Running on '{ADAPTER}'", flush=True)
    folder = model_path.parent
    try:
        model = json.loads(model_path.read_text(encoding="utf-8"))
        buffers = {name: parse_buffer(obj, folder) for name, obj in _field(
            model, "resources").items()}
        calls = {name: parse_dispatchable(obj) for name, obj in _field(
            model, "dispatchables").items()}
        commands = _field(model, "commands")
    except (ParseError, json.JSONDecodeError) as exc:
        print(f"Failed to parse the model: {exc}", file=sys.stderr)
        print("DxDispatch::RunAll called before initialize", file=sys.stderr)
        return exit_code(0x8000FFFF)
    if fault == "crash":
        os.abort()
    if fault == "hang":
        time.sleep(3600)
    try:
        for name, call in calls.items():  # the Executor creates every dispatchable first
            broken = ops.get(call.operator).validate(call, HIGHEST)
            if broken or fault == "unsupported":
                if debug:
                    for v in broken:
                        print(f"DML_OPERATOR_{call.operator}: {v}", file=sys.stderr)
                hresult = 0x887A0004 if fault == "unsupported" else 0x80070057
                raise ValueError(f"ERROR creating dispatchable '{name}': "
                                 f"{HResultError(hresult)}")
        for command in commands:
            kind = _field(command, "type")
            if kind == "dispatch":
                dispatch(calls[command["dispatchable"]], command["dispatchable"],
                         command["bindings"], buffers, fault)
            elif kind == "writeFile":
                buffer, data_type = buffers[command["resource"]]
                if fault == "no-write":
                    print(f"Failed to write resource to file '{command['targetPath']}': "
                          "Could not open file", file=sys.stderr)
                    continue
                np.save(Path(command["targetPath"]), buffer.view(data_type.numpy_dtype))
                print(f"Resource '{command['resource']}' written to '{command['targetPath']}'")
            elif kind == "print":
                buffer, data_type = buffers[command["resource"]]
                values = ", ".join(str(v) for v in buffer.view(data_type.numpy_dtype))
                print(f"Resource '{command['resource']}': {values}")
    except HResultError as exc:
        print(f"Failed to execute the model: {exc}", file=sys.stderr)
        return exit_code(exc.hresult)
    except ValueError as exc:  # std::invalid_argument: wil's CATCH_RETURN gives E_INVALIDARG
        print(f"Failed to execute the model: {exc}", file=sys.stderr)
        return exit_code(0x80070057)
    return 0


def dispatch(call: OperatorCall, name: str, bindings: Mapping[str, str],
             buffers: Mapping[str, tuple[np.ndarray, DataType]], fault: str) -> None:
    views = {}
    for tensor, _ in ops.get(call.operator).tensors:
        if tensor not in bindings:
            raise ValueError(f"Nothing bound for required tensor '{tensor}'.")
        buffer = buffers[bindings[tensor]][0]
        total = call.tensors[tensor].total_size
        if buffer.size < total or fault == "device-removed":
            print(f"ERROR while binding resources: {HResultError(0x887A0005)}", file=sys.stderr)
            raise HResultError(0x887A0005)
        views[tensor] = buffer[:total]
    NumpyReferenceBackend().execute(call, views)
    if fault == "write-input":
        first = ops.get(call.operator).inputs[0]
        views[first][0] ^= 0xFF
    print(f"Dispatch '{name}': 1 iterations, 0.0100 ms median (CPU)")


def main(argv: list[str]) -> int:
    debug, model = False, None
    args = iter(argv)
    for arg in args:
        if arg in ("-d", "--debug"):
            debug = True
        elif arg in ("-h", "--help"):
            model = None
            break
        elif arg in ("-a", "--adapter"):
            next(args, None)
        elif arg.startswith("-"):
            print(f"Failed to parse command-line arguments: Option '{arg}' does not exist",
                  file=sys.stderr)
            return 1
        else:
            model = Path(arg)
    if model is None:  # the banner of --help, naming a DirectML only when a test asks
        directml = os.environ.get(ENV_DIRECTML)
        print("dxdispatch stand-in (a test double)\n  DirectML       : "
              + (f"NuGet (Microsoft.AI.DirectML.{directml})" if directml else "none, NumPy")
              + "\n\nUsage:\n  dxdispatch [OPTION...] <PATH_TO_MODEL>")
        return 1
    return run(model, debug, os.environ.get(ENV_FAULT, ""))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
