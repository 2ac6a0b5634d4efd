"""The DxDispatch route to DirectML (backends/dxdispatch.py), without DirectML: the JSON models
checked field by field against the spec and DxDispatch's documented format, the buffers byte for
byte, the decoding of results, the mapping of dxdispatch's outcomes, the lookup of the
executable, an end-to-end run against tests/support/dxdispatch_standin.py (a test double, NOT
DirectML), and a model built for every call of the committed suite."""

from __future__ import annotations

import json
import math
import os
import re
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from backends.dxdispatch import (
    ENV_COMMAND,
    DxDispatchBackend,
    DxDispatchError,
    InexpressibleError,
    build_model,
    classify,
    data_type_name,
    describe_exit,
    directml_level,
    float_json,
    input_file,
    output_file,
    read_results,
    write_model,
)
from backends.numpy_reference import NumpyReferenceBackend
from conformance import ops
from conformance.backend import DescRejected, load_backend
from conformance.casefile import Case, load_cases
from conformance.levels import HIGHEST, FeatureLevel
from conformance.ops import OperatorCall
from conformance.session.case_run import run_case, run_cases
from conformance.tensors import DataType, TensorDesc
from tests.support import DXDISPATCH_STANDIN, ROOT, SUPPORT
from tests.support import dxdispatch_standin as standin

STANDIN = [sys.executable, str(DXDISPATCH_STANDIN)]
#: DML_TENSOR_DATA_TYPE names DxDispatch parses (JsonParsersGenerated.cpp ParseDmlTensorDataType)
DXDISPATCH_TYPES = {f"DML_TENSOR_DATA_TYPE_{t}" for t in (
    "FLOAT32 FLOAT16 UINT32 UINT16 UINT8 INT32 INT16 INT8 FLOAT64 UINT64 INT64".split())}
D2S1_CRD = "documented/depth_to_space1/example-2-column-row-depth"
PADDED = "documented/strides/padded-height-stride-5"
NEAREST1 = "documented/resample1/remark-nearest-resample1"
LINEAR = "documented/resample1/remark-linear-resample"
INVALID = "generated/invalid/"


@pytest.fixture(scope="module")
def suite() -> list[Case]:
    return load_cases([ROOT / "cases"])


@pytest.fixture(scope="module")
def by_id(suite: list[Case]) -> dict[str, Case]:
    return {c.id: c for c in suite}


@pytest.fixture
def no_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("DMLCONF_DXDISPATCH", "DMLCONF_DXDISPATCH_ARGS", "DMLCONF_DXDISPATCH_TIMEOUT",
                 "DMLCONF_DXDISPATCH_WORKDIR", "DMLCONF_DXDISPATCH_KEEP", standin.ENV_FAULT,
                 standin.ENV_DIRECTML):
        monkeypatch.delenv(name, raising=False)


def call_of(case: Case) -> OperatorCall:
    return case.calls[0].call


def random_bindings(call: OperatorCall, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {n: rng.integers(0, 256, d.total_size, dtype=np.uint8) for n, d in call.tensors.items()}


# -- the model, field by field --------------------------------------------------------------------
def test_depth_to_space1_desc_states_every_field(by_id: dict[str, Case]) -> None:
    # DML_DEPTH_TO_SPACE1_OPERATOR_DESC page, example 2: UINT32 {1, 8, 2, 3} -> {1, 2, 4, 6}.
    dispatchable = build_model(call_of(by_id[D2S1_CRD]))["dispatchables"]["op"]
    assert dispatchable["type"] == "DML_OPERATOR_DEPTH_TO_SPACE1"
    desc = dispatchable["desc"]
    assert desc["InputTensor"] == {"DataType": "DML_TENSOR_DATA_TYPE_UINT32", "DimensionCount": 4,
                                   "Sizes": [1, 8, 2, 3], "TotalTensorSizeInBytes": 192}
    assert desc["OutputTensor"] == {"DataType": "DML_TENSOR_DATA_TYPE_UINT32",
                                    "DimensionCount": 4, "Sizes": [1, 2, 4, 6],
                                    "TotalTensorSizeInBytes": 192}
    assert desc["BlockSize"] == 2 and type(desc["BlockSize"]) is int
    assert desc["Order"] == "DML_DEPTH_SPACE_ORDER_COLUMN_ROW_DEPTH"
    assert list(desc) == ["InputTensor", "OutputTensor", "BlockSize", "Order"]


def test_strides_and_stated_sizes_are_written_and_packed_descs_state_none(
        by_id: dict[str, Case]) -> None:
    # dml-strides: a {1,1,2,3} UINT8 input with height stride 5 in a 12-byte buffer.
    desc = build_model(call_of(by_id[PADDED]))["dispatchables"]["op"]["desc"]
    assert desc["InputTensor"]["Strides"] == [10, 10, 5, 1]
    assert desc["InputTensor"]["TotalTensorSizeInBytes"] == 12
    assert desc["InputTensor"]["DataType"] == "DML_TENSOR_DATA_TYPE_UINT8"
    assert "Strides" not in desc["OutputTensor"]
    assert desc["OutputTensor"]["TotalTensorSizeInBytes"] == 8  # 6 bytes, rounded up to 4
    assert "GuaranteedBaseOffsetAlignment" not in desc["InputTensor"]


def test_alignment_is_stated_when_nonzero(by_id: dict[str, Case]) -> None:
    call = call_of(by_id[INVALID + "depth_to_space1/alignment-not-power-of-two"])
    desc = build_model(call)["dispatchables"]["op"]["desc"]
    assert desc["InputTensor"]["GuaranteedBaseOffsetAlignment"] == 24
    assert "GuaranteedBaseOffsetAlignment" not in desc["OutputTensor"]


def test_resample1_and_resample_descs(by_id: dict[str, Case]) -> None:
    desc = build_model(call_of(by_id[NEAREST1]))["dispatchables"]["op"]["desc"]
    assert desc["InterpolationMode"] == "DML_INTERPOLATION_MODE_NEAREST_NEIGHBOR"
    assert desc["DimensionCount"] == 4
    assert desc["Scales"] == [1.0, 1.0, 2.0, 2.0]
    assert desc["InputPixelOffsets"] == [0.5] * 4 and desc["OutputPixelOffsets"] == [-0.5] * 4
    assert list(desc) == ["InputTensor", "OutputTensor", "InterpolationMode", "DimensionCount",
                          "Scales", "InputPixelOffsets", "OutputPixelOffsets"]
    model = build_model(call_of(by_id[LINEAR]))["dispatchables"]["op"]
    assert model["type"] == "DML_OPERATOR_RESAMPLE"
    assert model["desc"]["InterpolationMode"] == "DML_INTERPOLATION_MODE_LINEAR"
    assert model["desc"]["ScaleCount"] == 4 and "DimensionCount" not in model["desc"]
    assert "InputPixelOffsets" not in model["desc"]


def resample23(operator: str, direction: str = "DECREASING", antialiased: bool = True
               ) -> OperatorCall:
    attributes: dict[str, object] = {
        "InterpolationMode": "LINEAR" if operator == "RESAMPLE3" else "NEAREST_NEIGHBOR",
        "RoundingDirection": direction, "Scales": [1, 0.25, 3],
        "InputPixelOffsets": [0.5, 0.5, 0], "OutputPixelOffsets": [-0.5, -0.5, 0]}
    if operator == "RESAMPLE3":
        attributes["Antialiased"] = antialiased
    return ops.get(operator).make_call(
        {"InputTensor": TensorDesc(DataType.UINT8, (2, 8, 3), (32, 4, 1)),
         "OutputTensor": TensorDesc(DataType.UINT8, (2, 2, 9))}, attributes)


@pytest.mark.parametrize("operator", ["RESAMPLE2", "RESAMPLE3"])
def test_resample2_and_resample3_descs(operator: str) -> None:
    """ParseDmlResample2OperatorDesc's fields (JsonParsersGenerated.cpp): RoundingDirection as a
    DML_AXIS_DIRECTION name; RESAMPLE3 adds Antialiased as a JSON boolean (ParseBoolField)."""
    for direction in ("INCREASING", "DECREASING"):
        model = build_model(resample23(operator, direction))["dispatchables"]["op"]
        assert model["type"] == f"DML_OPERATOR_{operator}"
        desc = model["desc"]
        assert desc["RoundingDirection"] == f"DML_AXIS_DIRECTION_{direction}"
        assert desc["DimensionCount"] == 3 and desc["Scales"] == [1.0, 0.25, 3.0]
        assert desc["InputTensor"]["Strides"] == [32, 4, 1]
        fields = ["InputTensor", "OutputTensor", "InterpolationMode", "RoundingDirection",
                  "DimensionCount", "Scales", "InputPixelOffsets", "OutputPixelOffsets"]
        assert list(desc) == fields + (["Antialiased"] if operator == "RESAMPLE3" else [])
    if operator == "RESAMPLE3":
        for flag in (True, False):
            desc = build_model(resample23(operator, antialiased=flag))["dispatchables"]["op"]
            assert desc["desc"]["Antialiased"] is flag  # true / false, never 1 / 0
            assert f'"Antialiased": {str(flag).lower()}' in json.dumps(desc)


def test_the_stand_in_reads_booleans_as_dxdispatch_does() -> None:
    dispatchable = build_model(resample23("RESAMPLE3"))["dispatchables"]["op"]
    assert standin.parse_dispatchable(dispatchable).attributes["Antialiased"] is True
    dispatchable["desc"]["Antialiased"] = 1  # ParseBool: "Expected a bool."
    with pytest.raises(standin.ParseError, match="Expected a bool"):
        standin.parse_dispatchable(dispatchable)


@pytest.mark.parametrize("operator", ["RESAMPLE2", "RESAMPLE3"])
def test_resample2_and_resample3_run_through_the_stand_in(no_env: None, operator: str) -> None:
    """The model's round trip: the stand-in parses the JSON back into the same call and runs the
    reference, so the output equals the reference's byte for byte."""
    for direction in ("INCREASING", "DECREASING"):
        call = resample23(operator, direction)
        parsed = standin.parse_dispatchable(build_model(call)["dispatchables"]["op"])
        assert same_desc(call, parsed)
        bindings = random_bindings(call, 3)
        want = {n: b.copy() for n, b in bindings.items()}
        DxDispatchBackend(command=STANDIN).execute(call, bindings)
        NumpyReferenceBackend().execute(call, want)
        assert bindings["OutputTensor"].tobytes() == want["OutputTensor"].tobytes()


def test_float_attributes_are_the_float32_values_the_operator_receives(
        by_id: dict[str, Case]) -> None:
    assert float_json(0.1) == float(np.float32(0.1)) != 0.1
    assert float_json(-0.0) == 0.0 and math.copysign(1, float_json(-0.0)) == -1  # type: ignore
    assert (float_json(math.nan), float_json(math.inf), float_json(-math.inf)) == (
        "nan", "inf", "-inf")
    assert float_json(1e39) == "inf"  # beyond float32's range: the operator receives inf
    base = call_of(by_id[NEAREST1])  # the suite's values are all exact in float32; these not
    call = replace(base, attributes={**base.attributes, "Scales": (1.0, 1.0, 7 / 3, 2.1),
                                     "InputPixelOffsets": (1 / 3,) * 4,
                                     "OutputPixelOffsets": (-0.1,) * 4})
    desc = build_model(call)["dispatchables"]["op"]["desc"]
    for name in ("Scales", "InputPixelOffsets", "OutputPixelOffsets"):
        assert desc[name] == [float(np.float32(v)) for v in call.attributes[name]]
    for broken in ("scale-nan", "scale-infinite", "input-offset-infinite"):
        desc = build_model(call_of(by_id[f"{INVALID}resample1/{broken}"]))
        json.dumps(desc, allow_nan=False)  # rapidjson takes no NaN literal: strings instead
    assert desc["dispatchables"]["op"]["desc"]["InputPixelOffsets"][2] == "-inf"


@pytest.mark.parametrize("data_type", list(DataType))
def test_every_data_type_has_its_dxdispatch_name(data_type: DataType) -> None:
    assert data_type_name(data_type) in DXDISPATCH_TYPES


def test_buffers_hold_exactly_the_bound_bytes_and_every_tensor_is_bound_and_written(
        tmp_path: Path, by_id: dict[str, Case]) -> None:
    call = call_of(by_id[PADDED])
    bindings = random_bindings(call)
    model = json.loads(write_model(tmp_path, call, bindings).read_text())
    assert set(model["resources"]) == set(call.tensors)
    for name, desc in call.tensors.items():
        resource = model["resources"][name]
        assert resource == {"initialValuesDataType": "DML_TENSOR_DATA_TYPE_UINT8",
                            "initialValues": {"sourcePath": input_file(name)},
                            "sizeInBytes": desc.total_size}
        stored = np.load(tmp_path / input_file(name))
        assert stored.dtype.str == "|u1"  # DxDispatch's reader: '|u1' -> UINT8
        assert stored.tobytes() == bindings[name].tobytes()  # padding included, outputs too
    dispatch, *writes = model["commands"]
    assert dispatch == {"type": "dispatch", "dispatchable": "op",
                        "bindings": {"InputTensor": "InputTensor", "OutputTensor": "OutputTensor"}}
    assert {(w["type"], w["resource"], w["targetPath"]) for w in writes} == {
        ("writeFile", n, output_file(n)) for n in call.tensors}
    assert all(output_file(n).endswith(".npy") and output_file(n) != input_file(n)
               for n in call.tensors)


def test_a_create_only_model_has_the_dispatchable_alone(by_id: dict[str, Case]) -> None:
    model = build_model(call_of(by_id[D2S1_CRD]), dispatch=False)
    assert model["resources"] == {} and model["commands"] == []
    assert list(model["dispatchables"]) == ["op"]


def test_an_empty_tensor_gets_a_four_byte_buffer(tmp_path: Path, by_id: dict[str, Case]) -> None:
    call = call_of(by_id[INVALID + "depth_to_space1/zero-size"])
    model = json.loads(write_model(tmp_path, call, random_bindings(call)).read_text())
    assert model["resources"]["InputTensor"]["sizeInBytes"] == 4
    assert np.load(tmp_path / input_file("InputTensor")).size == 4


def test_named_enumerators_only(by_id: dict[str, Case]) -> None:
    call = call_of(by_id[INVALID + "depth_to_space1/order-2"])
    with pytest.raises(InexpressibleError, match="by name only"):
        build_model(call)


# -- results ------------------------------------------------------------------------------------
def test_results_are_copied_into_the_bindings(tmp_path: Path, by_id: dict[str, Case]) -> None:
    call = call_of(by_id[D2S1_CRD])
    bindings = random_bindings(call, 1)
    written = {n: np.arange(d.total_size + 4, dtype=np.uint32).astype(np.uint8)
               for n, d in call.tensors.items()}  # a buffer may come back longer
    for name, data in written.items():
        np.save(tmp_path / output_file(name), data)
    read_results(tmp_path, call, bindings)
    for name, desc in call.tensors.items():
        assert bindings[name].tobytes() == written[name][:desc.total_size].tobytes()


def test_missing_or_short_results_are_errors(tmp_path: Path, by_id: dict[str, Case]) -> None:
    call = call_of(by_id[D2S1_CRD])
    with pytest.raises(DxDispatchError, match=r"wrote no OutputTensor\.out\.npy"):
        read_results(tmp_path, call, random_bindings(call), "Running on 'x'")
    for name in call.tensors:
        np.save(tmp_path / output_file(name), np.zeros(8, np.uint8))
    with pytest.raises(DxDispatchError, match="holds 8 bytes, fewer than"):
        read_results(tmp_path, call, random_bindings(call))


# -- outcomes -----------------------------------------------------------------------------------
WIL = ("D:\\a\\DirectML\\DxDispatch\\src\\dxdispatch\\DmlDispatchable.cpp(16)\\dxdispatch.exe!"
       "00007FF7A1B2C3D4: (caller: 00007FF7A1B2C000) Exception(1) tid(4f2c) {} {}")
RUNNING = "Running on 'NVIDIA GeForce RTX 3090'\n"


@pytest.mark.parametrize("code, text, named", [
    ("80070057", "The parameter is incorrect.", "E_INVALIDARG"),
    ("887A0004", "The specified device interface or feature level is not supported on this "
                 "system.", "DXGI_ERROR_UNSUPPORTED"),
])
def test_an_operator_creation_failure_is_a_rejection(code: str, text: str, named: str) -> None:
    debug = "DML_OPERATOR_REDUCE: expected OutputTensor.Sizes[2] to be InputTensor.Sizes[2]\n"
    output = (RUNNING + debug + "Failed to execute the model: ERROR creating dispatchable 'op': "
              + WIL.format(code, text))
    with pytest.raises(DescRejected, match=f"CreateOperator \\({named}\\)") as info:
        classify(int(code, 16), output)
    assert "expected OutputTensor.Sizes[2]" in str(info.value)  # the debug layer's words (-d)
    split = output.replace(" Exception(1)", "\n    Exception(1)")  # wil's text on two lines
    with pytest.raises(DescRejected, match=named):
        classify(int(code, 16), split)
    compile_failure = output.replace("ERROR creating dispatchable", "ERROR while initializing")
    with pytest.raises(DescRejected, match="CompileOperator"):
        classify(87, compile_failure)


@pytest.mark.parametrize("returncode, output, words", [
    (None, RUNNING + "half a line", "did not finish within 5.0 s"),
    (-11, RUNNING, "killed by signal 11"),
    (0xC0000005, RUNNING, "0xC0000005 (STATUS_ACCESS_VIOLATION)"),
    (255, "Failed to parse the model: Field 'Sizes' is required.", "Field 'Sizes' is required"),
    (0x887A0005, RUNNING + "ERROR while binding resources: " + WIL.format("887A0005", "x"),
     "DXGI_ERROR_DEVICE_REMOVED"),
    (87, "Failed to execute the model: ERROR creating dispatchable 'op': "
         + WIL.format("8007000E", "Not enough memory resources"), "8007000E"),
    (1, "ERROR: failed to execute the model.\nERROR creating dispatchable 'sum'", "exit status 1"),
])
def test_other_failures_are_errors_carrying_the_output(returncode: int | None, output: str,
                                                       words: str) -> None:
    with pytest.raises(DxDispatchError, match=words.replace("(", r"\(").replace(")", r"\)")) as e:
        classify(returncode, output, 5.0)
    assert "dxdispatch output (last lines)" in str(e.value)
    classify(0, "anything")  # exit 0: success, the results decide


def test_exit_statuses_are_named() -> None:
    assert describe_exit(0x80070057) == "exit status 0x80070057 (E_INVALIDARG)"
    assert "E_INVALIDARG" in describe_exit(87)  # POSIX keeps the HRESULT's low byte
    assert describe_exit(-6) == "killed by signal 6"


@pytest.mark.parametrize("fault, status, words", [
    ("crash", "ERROR", "dxdispatch failed"),
    ("no-write", "ERROR", "wrote no"),
    ("device-removed", "ERROR", "DXGI_ERROR_DEVICE_REMOVED"),
    ("unsupported", "FAIL", "rejected a valid desc: DirectML refused the operator at "
                            "CreateOperator (DXGI_ERROR_UNSUPPORTED)"),
    ("write-input", "FAIL", "changed 1 byte of its input"),
])
def test_stand_in_faults_reach_the_runner(fault: str, status: str, words: str, no_env: None,
                                          monkeypatch: pytest.MonkeyPatch,
                                          by_id: dict[str, Case]) -> None:
    monkeypatch.setenv(standin.ENV_FAULT, fault)
    result = run_case(by_id[D2S1_CRD], DxDispatchBackend(command=STANDIN))
    assert result.status == status and words in result.message, result.message


def test_a_hang_is_killed_at_the_timeout(no_env: None, monkeypatch: pytest.MonkeyPatch,
                                         by_id: dict[str, Case]) -> None:
    monkeypatch.setenv(standin.ENV_FAULT, "hang")
    result = run_case(by_id[D2S1_CRD], DxDispatchBackend(command=STANDIN, timeout=1.5))
    assert result.status == "ERROR" and "did not finish within 1.5 s" in result.message
    assert "Running on 'DxDispatch stand-in" in result.message


def test_options_reach_dxdispatch_and_kept_folders_are_named(
        no_env: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
        by_id: dict[str, Case]) -> None:
    monkeypatch.setenv("DMLCONF_DXDISPATCH_ARGS", "-a NVIDIA -d")  # -d: the debug layer's words
    monkeypatch.setenv("DMLCONF_DXDISPATCH_WORKDIR", str(tmp_path))
    monkeypatch.setenv("DMLCONF_DXDISPATCH_KEEP", "1")
    backend = DxDispatchBackend(command=STANDIN)
    result = run_case(by_id[INVALID + "depth_to_space1/block-size-0"], backend)
    assert result.status == "PASS"
    assert "DML_OPERATOR_DEPTH_TO_SPACE1: BlockSize 0 must be at least 1" in result.message
    kept = list(tmp_path.glob("dmlconf-dxd-*/model.json"))
    assert len(kept) == 1 and (kept[0].parent / input_file("InputTensor")).is_file()
    monkeypatch.setenv(standin.ENV_FAULT, "no-write")
    assert "kept in" in run_case(by_id[D2S1_CRD], backend).message


# -- finding the executable ---------------------------------------------------------------------
def test_without_dxdispatch_every_case_is_not_supported(
        no_env: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, suite: list[Case]) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    backend = load_backend("backends.dxdispatch:DxDispatchBackend")
    assert backend.command_line is None
    results = run_cases(suite, backend)
    assert {r.status for r in results} == {"NOT_SUPPORTED"}
    assert all("no dxdispatch executable" in r.message for r in results)
    monkeypatch.setenv(ENV_COMMAND, str(tmp_path / "nowhere" / "dxdispatch.exe"))
    named = DxDispatchBackend()
    assert "nowhere" in (named.unsupported_reason(call_of(suite[0])) or "")


@pytest.mark.skipif(os.name == "nt", reason="a '#!' wrapper is a POSIX executable")
def test_the_executable_is_found_by_argument_variable_or_path(
        no_env: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
        by_id: dict[str, Case]) -> None:
    wrapper = tmp_path / "bin" / "dxdispatch"
    wrapper.parent.mkdir()
    wrapper.write_text(f"#!{sys.executable}\nimport runpy, sys\nsys.argv[0] = {STANDIN[1]!r}\n"
                       f"runpy.run_path({STANDIN[1]!r}, run_name='__main__')\n")
    wrapper.chmod(0o755)
    monkeypatch.setenv("PATH", str(wrapper.parent))
    assert DxDispatchBackend().command_line == [str(wrapper)]
    assert run_case(by_id[D2S1_CRD], DxDispatchBackend()).status == "PASS"
    monkeypatch.setenv(ENV_COMMAND, f"{sys.executable} {STANDIN[1]}")  # a command line
    assert DxDispatchBackend().command_line == STANDIN
    monkeypatch.chdir(SUPPORT)
    given = DxDispatchBackend(command=[sys.executable, "dxdispatch_standin.py"])
    assert given.command_line == STANDIN


@pytest.mark.parametrize("banner, expected", [
    ("  DirectML     : NuGet (Microsoft.AI.DirectML.1.11.0)", ("1.11.0", "6_0")),
    ("  DirectML       : NuGet (Microsoft.AI.DirectML.1.14.1)", ("1.14.1", "6_2")),
    ("  DirectML       : NuGet (Microsoft.AI.DirectML.1.15.2)", ("1.15.2", "6_4")),
    ("  DirectML       : NuGet (Microsoft.AI.DirectML.1.3.0)", ("1.3.0", "2_1")),
    ("  DirectML       : Windows SDK", None),
])
def test_the_banner_names_the_directml_and_its_feature_level(
        banner: str, expected: tuple[str, str] | None) -> None:
    # dml-feature-level-history: 6_0 came with DirectML 1.11, 6_2 with 1.13, 6_4 with 1.15.
    found = directml_level(banner)
    assert (found and (found[0], str(found[1]))) == expected


def test_the_claim_follows_the_directml_inside_dxdispatch(
        no_env: None, monkeypatch: pytest.MonkeyPatch) -> None:
    assert DxDispatchBackend(command=STANDIN).claimed_level == HIGHEST  # no version named
    monkeypatch.setenv(standin.ENV_DIRECTML, "1.13.0")
    backend = DxDispatchBackend(command=STANDIN)
    assert backend.capabilities.feature_level == FeatureLevel.FL_6_2
    assert "DirectML 1.13.0, feature level 6_2" in backend.capabilities.notes
    with pytest.raises(ValueError, match="claims feature level 6_2 at most"):
        DxDispatchBackend(feature_level=FeatureLevel.FL_6_4, command=STANDIN)


# -- end to end against the stand-in ------------------------------------------------------------
def family(case_id: str) -> str:
    return case_id.split("/")[1] if case_id.startswith("generated/") else "documented"


def sample(suite: list[Case]) -> list[Case]:
    """The documented cases, every rule broken in the invalid family's example DEPTH_TO_SPACE1
    and RESAMPLE1 calls (not their rebased copies: the same rules on other types and batches),
    and three cases of every other generated family."""
    picked = [c for c in suite if c.id.startswith("documented/") or (c.id.startswith(
        (INVALID + "depth_to_space1/", INVALID + "resample1/")) and c.id.count("/") == 3)]
    families = sorted({c.id.split("/")[1] for c in suite if c.id.startswith("generated/")})
    for family in families:
        members = [c for c in suite if c.id.startswith(f"generated/{family}/")]
        if family != "invalid":
            picked += members[:: max(1, len(members) // 3)][:3]
    return picked


# a sample of the suite through the stand-in: 25 s, CI's certification step
@pytest.mark.certification
def test_the_route_passes_a_sample_of_the_suite_against_the_stand_in(
        no_env: None, suite: list[Case]) -> None:
    cases = sample(suite)
    results = run_cases(cases, DxDispatchBackend(command=STANDIN))
    generated = {p.name for p in (ROOT / "cases" / "generated").iterdir() if p.is_dir()}
    assert {family(r.id) for r in results} == {"documented", *generated}
    bad = [(r.id, r.status, r.message[:300]) for r in results if r.status not in (
        "PASS", "NOT_SUPPORTED")]
    assert bad == []
    skipped = {r.id for r in results if r.status == "NOT_SUPPORTED"}
    assert skipped == {INVALID + "depth_to_space1/order-2", INVALID + "resample1/mode-2"}
    by = {r.id: r.message for r in results}
    assert "CreateOperator (E_INVALIDARG)" in by[INVALID + "depth_to_space1/block-size-0"]
    assert "rejected at create_operator: refused without running DirectML" in by[
        INVALID + "depth_to_space1/strides-count"]
    for unbindable in ("too-many-elements", "output-total-below-minimum"):
        assert "rejected at create_operator: DirectML refused" in by[
            f"{INVALID}depth_to_space1/{unbindable}"]


# -- the whole committed suite is expressible ----------------------------------------------------
def same_desc(a: OperatorCall, b: OperatorCall) -> bool:
    if a.operator != b.operator or set(a.tensors) != set(b.tensors):
        return False
    for name, x in a.tensors.items():
        y = b.tensors[name]
        if (x.data_type, x.sizes, x.strides, x.guaranteed_base_offset_alignment) != (
                y.data_type, y.sizes, y.strides, y.guaranteed_base_offset_alignment):
            return False
        if x.strides is None or len(x.strides) == x.dimension_count:
            if x.total_size != y.total_size:
                return False
    for key, value in a.attributes.items():
        other = b.attributes[key]
        if isinstance(value, tuple):  # the same float32 bits; any NaN for a NaN (its sign and
            # payload are lost: DxDispatch reads "nan" as quiet_NaN)
            def bits(values: tuple) -> list:
                return [None if v != v else int(np.float32(v).view(np.uint32)) for v in values]
            if bits(value) != bits(other):
                return False
        elif value != other:
            return False
    return True


def test_every_call_of_the_suite_has_a_dxdispatch_model(suite: list[Case]) -> None:
    seen: set[tuple[str, ...]] = set()
    refused = []
    for case in suite:
        for named in case.calls:
            call = named.call
            try:
                model = build_model(call)
            except InexpressibleError:
                refused.append(case.id)
                assert case.rejected
                continue
            text = json.dumps(model, allow_nan=False)
            parsed = json.loads(text)
            assert same_desc(call, standin.parse_dispatchable(parsed["dispatchables"]["op"])), (
                case.id)
            spec = ops.get(call.operator)
            desc = parsed["dispatchables"]["op"]["desc"]
            for name in call.tensors:
                resource = parsed["resources"][name]
                assert resource["sizeInBytes"] >= desc[name].get("TotalTensorSizeInBytes", 0)
            assert parsed["commands"][0]["bindings"] == {n: n for n, _ in spec.tensors}
            seen |= {("op", call.operator), ("family", family(case.id))}
            seen |= {("type", d.data_type.name) for d in call.tensors.values()}
    # an enum value outside the enum (the invalid family's, rebased too) has no JSON name
    assert sorted(refused) == sorted(c.id for c in suite if re.search(
        r"/(order|mode|rounding-direction)-2(/|$)", c.id))
    assert {k[1] for k in seen if k[0] == "op"} == set(ops.OPERATORS)
    assert {k[1] for k in seen if k[0] == "type"} == {t.name for t in DataType}
    generated = {p.name for p in (ROOT / "cases" / "generated").iterdir() if p.is_dir()}
    assert {k[1] for k in seen if k[0] == "family"} == {"documented", *generated}
