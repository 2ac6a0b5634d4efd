"""DML_EXECUTION_FLAGS as a run setting: parsed from text, reaching the backend in-process and
in isolated workers, recorded in the results and the journal, and carried by the DirectML
routes (DxDispatch's `executionFlags`, onnxruntime-directml's `disable_metacommands`)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pytest

from backends.dxdispatch import build_model
from backends.numpy_reference import NumpyReferenceBackend
from backends.onnxruntime_backend import OnnxRuntimeBackend, OnnxRuntimeDirectMLBackend
from conformance import __version__, ops
from conformance.backend import load_backend
from conformance.cli import main
from conformance.flags import ExecutionFlags
from conformance.ops import OperatorCall
from conformance.session import journal as journals
from conformance.tensors import DataType, TensorDesc
from tests.support import DOCUMENTED, Dmlconf

HALF = ExecutionFlags.ALLOW_HALF_PRECISION_COMPUTATION
NO_META = ExecutionFlags.DISABLE_META_COMMANDS
D2S1_CASES = DOCUMENTED / "depth_to_space1.yaml"


class NeedsHalfFlag(NumpyReferenceBackend):
    """TEST DOUBLE: the reference, but it raises unless it was built with
    ALLOW_HALF_PRECISION_COMPUTATION, so that a run shows whether the flags reached it."""

    name = "needs-half-flag"

    def execute(self, call: OperatorCall, bindings: Mapping[str, np.ndarray]) -> None:
        if not self.execution_flags & HALF:
            raise RuntimeError(f"built with execution flags {self.execution_flags!r}")
        super().execute(call, bindings)


@pytest.mark.parametrize(("text", "want"), [
    (None, ExecutionFlags.NONE),
    ("NONE", ExecutionFlags.NONE),
    ("", ExecutionFlags.NONE),
    ("ALLOW_HALF_PRECISION_COMPUTATION", HALF),
    ("dml_execution_flag_allow_half_precision_computation", HALF),
    ("ALLOW_HALF_PRECISION_COMPUTATION,DISABLE_META_COMMANDS", HALF | NO_META),
    ("DISABLE_META_COMMANDS | ALLOW_HALF_PRECISION_COMPUTATION", HALF | NO_META),
    ("0x3", HALF | NO_META),
    (4, ExecutionFlags.DESCRIPTORS_VOLATILE),
    (["DISABLE_META_COMMANDS"], NO_META),
])
def test_flags_parse_from_names_values_and_lists(text: object, want: ExecutionFlags) -> None:
    assert ExecutionFlags.parse(text) == want


@pytest.mark.parametrize("text", ["HALF", "ALLOW_HALF_PRECISION_COMPUTATION,FAST", "0x10", 8,
                                  -1, [3]])
def test_unknown_flags_are_refused_with_the_known_names(text: object) -> None:
    with pytest.raises(ValueError, match="ALLOW_HALF_PRECISION_COMPUTATION"):
        ExecutionFlags.parse(text)


def test_names_in_value_order() -> None:
    assert (NO_META | HALF).names == ["ALLOW_HALF_PRECISION_COMPUTATION",
                                      "DISABLE_META_COMMANDS"]
    assert ExecutionFlags.NONE.names == []


def test_load_backend_sets_the_flags_on_the_instance() -> None:
    backend = load_backend("numpy", execution_flags=HALF)
    assert backend.execution_flags == HALF
    assert load_backend("numpy").execution_flags == ExecutionFlags.NONE


@pytest.mark.integration  # runs, workers
@pytest.mark.parametrize("isolation", [["--no-isolate"], ["--workers", "2"]])
def test_the_flags_reach_the_backend_and_the_results(dmlconf: Dmlconf, isolation: list[str]
                                                     ) -> None:
    backend = f"{__file__}:NeedsHalfFlag"
    base = ["--cases", str(D2S1_CASES), "--backend", backend, *isolation]
    code, doc = dmlconf(*base, "--execution-flags", "ALLOW_HALF_PRECISION_COMPUTATION")
    assert code == 0
    assert doc["execution_flags"] == ["ALLOW_HALF_PRECISION_COMPUTATION"]
    assert doc["execution"]["execution_flags"] == ["ALLOW_HALF_PRECISION_COMPUTATION"]
    assert {r["status"] for r in doc["results"]} == {"PASS"}
    code, doc = dmlconf(*base)
    assert code == 1  # without the flag the double raises: ERROR
    assert doc["execution_flags"] == []
    assert {r["status"] for r in doc["results"]} == {"ERROR"}


def test_a_resume_with_other_flags_is_refused(tmp_path: Path, dmlconf: Dmlconf,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "r.json"
    journal = tmp_path / "r.json.journal"
    code, doc = dmlconf("--cases", str(D2S1_CASES), name=out.name)
    assert code == 0
    # an unfinished run with no flags, resumed with a flag
    header = {"format": journals.FORMAT, "suite_version": __version__, "backend": "numpy",
              "feature_level": "highest", "execution_flags": [],
              "case_set_sha256": doc["case_set_sha256"],
              "shard": None, "started_at": "2026-01-01T00:00:00+00:00"}
    journal.write_text(json.dumps(header) + "\n")
    assert main(["run", "-q", "--cases", str(D2S1_CASES), "--json", str(out), "--resume",
                 "--execution-flags", "ALLOW_HALF_PRECISION_COMPUTATION"]) == 2
    assert "execution_flags [] there" in capsys.readouterr().err


def test_bad_flags_on_the_command_line_are_a_usage_error(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "-q", "--cases", str(D2S1_CASES), "--execution-flags", "FAST"]) == 2
    assert "unknown execution flag 'FAST'" in capsys.readouterr().err


def call() -> OperatorCall:
    return ops.get("DEPTH_TO_SPACE1").make_call(
        {"InputTensor": TensorDesc(DataType.FLOAT32, (1, 4, 1, 1)),
         "OutputTensor": TensorDesc(DataType.FLOAT32, (1, 1, 2, 2))},
        {"BlockSize": 2, "Order": "DEPTH_COLUMN_ROW"})


def test_dxdispatch_models_carry_the_flags() -> None:
    assert "executionFlags" not in build_model(call())["dispatchables"]["op"]
    one = build_model(call(), flags=NO_META)["dispatchables"]["op"]
    assert one["executionFlags"] == "DML_EXECUTION_FLAG_DISABLE_META_COMMANDS"
    both = build_model(call(), flags=NO_META | HALF)["dispatchables"]["op"]
    assert both["executionFlags"] == ["DML_EXECUTION_FLAG_ALLOW_HALF_PRECISION_COMPUTATION",
                                      "DML_EXECUTION_FLAG_DISABLE_META_COMMANDS"]


def test_onnxruntime_directml_disables_meta_commands_through_its_provider_option() -> None:
    dml = OnnxRuntimeDirectMLBackend.__new__(OnnxRuntimeDirectMLBackend)
    dml.execution_flags = NO_META
    assert dml.providers() == [("DmlExecutionProvider", {"disable_metacommands": "true"})]
    dml.execution_flags = HALF
    assert dml.providers() == ["DmlExecutionProvider"]
    cpu = OnnxRuntimeBackend.__new__(OnnxRuntimeBackend)
    cpu.execution_flags = NO_META
    assert cpu.providers() == ["CPUExecutionProvider"]
