"""OpenVINO's CPU plugin as a backend (backends/openvino_backend.py, docs/peer-openvino.md):
without openvino every case is NOT_SUPPORTED with the install line; its refusals lose their
source paths; its baseline names committed cases, each under a cause its findings page
explains. The whole-suite run is CI's (.ci/run, in .venv-peers)."""

from __future__ import annotations

import sys

import pytest

from backends.openvino_backend import INSTALL, OpenVinoBackend
from conformance.backend import load_backend
from conformance.casefile import id_matches, load_cases
from conformance.results import baseline
from conformance.session.case_run import run_cases
from tests.support import DOCUMENTED, GENERATED, ROOT


def test_not_supported_everywhere_without_openvino(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "openvino", None)  # import fails
    backend = load_backend("openvino")
    assert isinstance(backend, OpenVinoBackend) and backend.unavailable == INSTALL
    assert backend.environment == {} and INSTALL in backend.capabilities.notes
    results = run_cases(load_cases([DOCUMENTED]), backend)
    assert {(r.status, r.message) for r in results} == {("NOT_SUPPORTED", INSTALL)}


def test_refusals_lose_their_source_paths() -> None:
    exc = RuntimeError("Exception from src/plugins/intel_cpu/src/nodes/interpolate.cpp:1234:\n"
                       "Interpolate node with name 'y' only supports resize on spatial "
                       "dimensions(depth, height and width)")
    assert OpenVinoBackend().error_text(exc) == (
        "Interpolate node with name 'y' only supports resize on spatial dimensions(depth, "
        "height and width)")


def test_the_baseline_lists_committed_cases_under_explained_causes() -> None:
    entries = baseline.load(ROOT / "backends/baseline-openvino.yaml").entries
    ids = {c.id for c in load_cases([DOCUMENTED, GENERATED])}
    page = (ROOT / "docs/peer-openvino.md").read_text()
    listed = [p for e in entries for p in e.cases]
    assert len(listed) == len(set(listed)) == 520  # each case under one cause
    for pattern in listed:  # each names exactly one committed case (a glob where the id
        # is a prefix of another's: '.../stretch-[4]' is not '.../stretch-4/height')
        assert sum(id_matches(i, pattern) for i in ids) == 1, pattern
    for entry in entries:
        assert entry.reason.endswith("docs/peer-openvino.md")
        assert f"| {len(entry.cases)} |" in page  # the page counts each cause's cases
