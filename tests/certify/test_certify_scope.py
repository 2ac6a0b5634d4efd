"""Scoped certification end to end (docs/certification.md, "Scoped certification"): a backend
implementing RESAMPLE1 in FLOAT32 alone gets "conformant for RESAMPLE1 (FLOAT32)" from certify
and verify with --scope, and without it a neutral "not covered", never "NOT conformant"; a
scope edited in the bundle is caught. On the small committed set (tests/certify/small_suite)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from conformance.certify import verify
from conformance.certify.bundle import SUMS, sums_text
from conformance.cli import main
from tests.certify import small_suite

#: What a vendor writes in minutes: RESAMPLE1 in FLOAT32, nothing else (the reference computes).
RESAMPLE1_ONLY = '''
from dataclasses import replace

from backends.numpy_reference import NumpyReferenceBackend
from conformance.backend import Capabilities
from conformance.tensors import DataType


class Resample1Float32(NumpyReferenceBackend):
    name = "resample1-float32"

    @property
    def capabilities(self) -> Capabilities:
        return replace(super().capabilities, operators={"RESAMPLE1": frozenset({DataType.FLOAT32})})
'''

LEVEL = "6_2"


@pytest.fixture(scope="module")
def bundles(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Path]]:
    root = tmp_path_factory.mktemp("scoped")
    (root / "resample1.py").write_text(RESAMPLE1_ONLY, encoding="utf-8")
    backend = f"{root / 'resample1.py'}:Resample1Float32"
    with small_suite.committed(root):
        assert main(["certify", "--backend", backend, "--level", LEVEL, "--scope",
                     "RESAMPLE1:FLOAT32", "--out", str(root / "scoped")]) == 0
        assert main(["certify", "--backend", backend, "--level", LEVEL,
                     "--out", str(root / "whole")]) == 1
        yield {"scoped": root / "scoped", "whole": root / "whole", "backend": Path(backend)}


def test_a_scoped_certification_is_conformant_for_its_scope(bundles: dict[str, Path],
                                                             capsys: pytest.CaptureFixture
                                                             ) -> None:
    folder = bundles["scoped"]
    doc = json.loads((folder / "results.json").read_text())
    assert doc["scope"] == {"RESAMPLE1": ["FLOAT32"]}
    verdict = doc["verdict"][LEVEL]
    assert verdict["conformant"] is True and verdict["not_covered"] > 0
    assert verdict["NOT_SUPPORTED"] == 0  # every claimed case ran
    outside = [r for r in doc["results"] if r["operators"] != ["RESAMPLE1"]]
    assert outside and all(r["status"] == "NOT_SUPPORTED"
                           and r["message"].startswith("not covered: outside the claimed scope")
                           for r in outside)
    log = (folder / "run.log").read_text()
    assert f"feature level {LEVEL} for RESAMPLE1 (FLOAT32): the mustpass list" in log
    assert f"feature level {LEVEL}: conformant for RESAMPLE1 (FLOAT32)" in log
    assert f"DML_FEATURE_LEVEL_{LEVEL} for RESAMPLE1 (FLOAT32)" in (
        folder / "statement.md").read_text()
    junit = (folder / "junit.xml").read_text()
    assert '<property name="scope" value="RESAMPLE1 (FLOAT32)"/>' in junit
    assert "conformant for RESAMPLE1 (FLOAT32)" in (folder / "report.md").read_text()
    capsys.readouterr()
    assert main(["verify", str(folder)]) == 0
    err = capsys.readouterr().err
    assert f"feature level {LEVEL} for RESAMPLE1 (FLOAT32)" in err and "valid:" in err


def test_without_a_scope_the_level_is_not_covered_never_not_conformant(
        bundles: dict[str, Path]) -> None:
    folder = bundles["whole"]
    doc = json.loads((folder / "results.json").read_text())
    assert doc["scope"] is None
    verdict = doc["verdict"][LEVEL]
    assert verdict["conformant"] is None and verdict["FAIL"] == 0
    log = (folder / "run.log").read_text()
    assert f"feature level {LEVEL}: not covered: " in log and "none failed" in log
    assert "NOT conformant" not in log


def _edited(folder: Path, tmp_path: Path, scope: object) -> Path:
    copy = Path(shutil.copytree(folder, tmp_path / folder.name))
    path = copy / "results.json"
    doc = json.loads(path.read_text())
    doc["scope"] = scope
    path.write_text(json.dumps(doc), encoding="utf-8")
    (copy / SUMS).write_text(sums_text(copy), encoding="utf-8")  # resealed, as anyone can
    return copy


def test_a_scope_widened_in_the_bundle_is_caught(bundles: dict[str, Path],
                                                 tmp_path: Path) -> None:
    wider = _edited(bundles["scoped"], tmp_path, {"RESAMPLE1": ["FLOAT32"],
                                                  "DEPTH_TO_SPACE1": ["UINT32"]})
    problems = verify(wider).problems
    assert any(p.startswith("NOT_SUPPORTED:") and "the claimed level needs" in p
               for p in problems), problems
    assert any("is not the one its results give" in p for p in problems), problems


def test_a_scope_that_does_not_read_is_a_problem(bundles: dict[str, Path],
                                                 tmp_path: Path) -> None:
    problems = verify(_edited(bundles["scoped"], tmp_path, {"RESAMPLE9": ["FLOAT32"]})).problems
    assert any("its scope" in p and "did you mean" in p for p in problems), problems


@pytest.mark.parametrize("scope, said", [
    ("RESAMPLE3", "--scope claims what no case at feature level 6_2 covers: RESAMPLE3 "
                  "(introduced at 6_4)"),
    ("RESAMPEL1", "did you mean 'RESAMPLE1'"),
])
def test_certify_refuses_a_scope_it_cannot_judge(bundles: dict[str, Path], tmp_path: Path,
                                                 capsys: pytest.CaptureFixture, scope: str,
                                                 said: str) -> None:
    code = main(["certify", "--backend", str(bundles["backend"]), "--level", LEVEL, "--scope",
                 scope, "--out", str(tmp_path / "refused")])
    assert code == 2 and said in capsys.readouterr().err
    assert not (tmp_path / "refused").exists()


def test_a_scoped_bundle_reruns_its_covered_cases(bundles: dict[str, Path],
                                                  capsys: pytest.CaptureFixture) -> None:
    """--rerun samples the cases the scope covers (the rest were not run) and reruns them with
    the scope, so the reviewer's backend agrees; every covered case, here."""
    folder = bundles["scoped"]
    doc = json.loads((folder / "results.json").read_text())
    covered = [r for r in doc["results"] if r["operators"] == ["RESAMPLE1"]
               and r["data_types"] == ["FLOAT32"]]
    capsys.readouterr()
    assert main(["verify", str(folder), "--rerun", str(bundles["backend"]), "--sample",
                 "all"]) == 0
    err = capsys.readouterr().err
    assert f"rerun: {len(covered)} of {len(covered)} cases (every case)" in err, err
    assert "all agree" in err
