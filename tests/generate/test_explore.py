"""`dmlconf explore`: the reference backend survives a short exploration; broken backends are
caught, the failure is shrunk to a minimal case, written as a regression that loads and that
`dmlconf run` reproduces; runs are reproducible from their seed."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pytest

from backends import load_backend
from backends.numpy_reference import NumpyReferenceBackend
from conformance import explore
from conformance.casefile import load_cases
from conformance.cli import main
from conformance.generate import invalid
from conformance.ops import OperatorCall
from conformance.tensors import read_tensor, write_tensor
from tests.support import BROKEN, HOSTILE, SWAPPED, Dmlconf

ACCEPT_ALL = f"{BROKEN}:AcceptAllBackend"
BATCH_BLIND = f"{Path(__file__).resolve()}:BatchBlindBackend"


class BatchBlindBackend(NumpyReferenceBackend):
    """TEST DOUBLE: every batch of a 4-D output is a copy of the first (a batch stride
    ignored). Right whenever the batch size is 1, so the minimal failing case has batch 2."""

    name = "broken-batch-blind"

    def execute(self, call: OperatorCall, bindings: Mapping[str, np.ndarray]) -> None:
        super().execute(call, bindings)
        desc = call.tensors["OutputTensor"]
        if desc.dimension_count == 4 and desc.sizes[0] > 1:
            values = read_tensor(desc, bindings["OutputTensor"])
            values[1:] = values[0]
            write_tensor(desc, bindings["OutputTensor"], values)


pytestmark = pytest.mark.usefixtures("hypothesis_home")


def test_the_reference_backend_survives_every_family(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "regressions"
    code = main(["explore", "--backend", "numpy", "--max-examples", "25", "--out", str(out)])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert not out.exists()  # nothing found, nothing written
    lines = captured.err.splitlines()
    for family in explore.FAMILIES:  # a line per family
        assert any(line.startswith(f"{family}: 25 examples, ")
                   and line.endswith(": nothing found") for line in lines), lines
    assert "nothing found" in captured.out


def test_a_broken_backend_is_caught_shrunk_and_written_as_a_regression(
        tmp_path: Path, dmlconf: Dmlconf, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "regressions"
    code = main(["explore", "--backend", SWAPPED, "--family", "equivalence", "--max-examples",
                 "100", "--seed", "3", "--out", str(out)])
    captured = capsys.readouterr()
    assert code == 1
    (path,) = out.iterdir()
    assert path.name.startswith("equivalence-") and path.suffix == ".yaml"
    assert f"wrote {path} (reproduces; the reference passes it)" in captured.err
    (case,) = load_cases([path])
    assert case.id == f"regressions/equivalence/{path.stem.split('-', 1)[1]}"
    assert SWAPPED in case.description and "seed 3" in case.description
    assert "FAIL relation" in case.description
    assert "regression" in case.tags
    # Shrunk: the order swap shows from BlockSize 2 and two output channels, no further.
    call = case.calls[0].call
    assert call.attributes["BlockSize"] == 2
    assert call.tensors["OutputTensor"].sizes == (1, 2, 2, 2)
    # The file reproduces the failure through `dmlconf run`, and the reference passes it.
    code, doc = dmlconf("--cases", str(path), "--backend", SWAPPED)
    assert code == 1
    assert [r["status"] for r in doc["results"]] == ["FAIL"]
    assert dmlconf("--cases", str(path), "--backend", "numpy")[0] == 0


def test_the_same_seed_gives_the_same_regression(tmp_path: Path) -> None:
    written = []
    for attempt in ("a", "b"):
        code, reports = explore.explore(BATCH_BLIND, ["roundtrip"], max_examples=50, seed=11,
                                        out=tmp_path / attempt)
        assert code == 1
        (report,) = reports
        assert report.path is not None and report.reproduced
        text = report.path.read_text(encoding="utf-8")  # its folder is in the header
        written.append((report.path.name, text.replace(str(tmp_path / attempt), "OUT")))
        # the minimal example: batch 2 and the smallest of everything else
        params = report.example.params if report.example else {}
        assert params["batch"] == 2
        assert params["block"] == params["height"] == params["width"] == 1
        assert params["seed"] == 0
    assert written[0] == written[1]


def test_a_rejection_failure_and_its_regression(tmp_path: Path, dmlconf: Dmlconf) -> None:
    out = tmp_path / "regressions"
    code = main(["explore", "--backend", ACCEPT_ALL, "--family", "invalid", "--max-examples",
                 "50", "--out", str(out)])
    assert code == 1
    (path,) = out.glob("invalid-*.yaml")
    (case,) = load_cases([path])
    assert case.rejected and case.ambiguous is None
    assert dmlconf("--cases", str(path), "--backend", ACCEPT_ALL)[0] == 1
    assert dmlconf("--cases", str(path), "--backend", "numpy")[0] == 0


def test_ambiguous_cases_never_fail_the_property() -> None:
    backend = load_backend(ACCEPT_ALL)
    cases = {c["id"]: c for c in invalid.files()["resample1"]}
    ambiguous = cases["generated/invalid/resample1/scale-nan"]
    plain = cases["generated/invalid/resample1/zero-size"]
    assert "ambiguous" in ambiguous and "ambiguous" not in plain
    assert explore.check(explore.Example("invalid", {}, ambiguous), backend) is None
    result = explore.check(explore.Example("invalid", {}, plain), backend)
    assert result is not None and result.status == "FAIL"


def test_a_crashing_native_backend_is_explored_in_a_worker(
        tmp_path: Path, dmlconf: Dmlconf, capsys: pytest.CaptureFixture[str]) -> None:
    """A crash is a failing example like any other: shrunk (each crash costs a fresh worker),
    written, reproduced through a worker; the explorer survives it."""
    exiting = f"{HOSTILE}:ExitBackend"
    code = main(["explore", "--backend", exiting, "--family", "tables", "--max-examples", "40",
                 "--out", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 1
    assert "isolated in a worker process" in err
    assert "ERROR the backend crashed: its worker process exited with code 3" in err
    assert "operator='DEPTH_TO_SPACE'" in err or "operator='SPACE_TO_DEPTH'" in err
    assert "(reproduces; the reference passes it)" in err
    (path,) = tmp_path.glob("tables-*.yaml")
    assert dmlconf("--cases", str(path), "--backend", exiting)[0] == 1


def test_a_time_budget_ends_the_search(tmp_path: Path) -> None:
    code, reports = explore.explore("numpy", ["tables", "bitlevel"], seconds=0.6,
                                    out=tmp_path / "regressions")
    assert code == 0
    assert all(r.out_of_time and r.examples > 0 and r.seconds < 1.5 for r in reports)


@pytest.mark.parametrize("args", [["--family", "nope"], ["--max-examples", "0"],
                                  ["--seconds", "-1"], ["--backend", "no-such-backend"],
                                  ["--seconds", "soon"]])
def test_usage_errors_exit_2(tmp_path: Path, args: list[str]) -> None:
    try:
        code = main(["explore", "--out", str(tmp_path / "out"), *args])
    except SystemExit as exc:  # argparse's own errors
        code = int(exc.code or 0)
    assert code == 2
    assert not (tmp_path / "out").exists()
