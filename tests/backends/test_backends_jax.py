"""JAX as a backend (backends/jax_backend.py, docs/peer-jax.md): without jax every case is
NOT_SUPPORTED with the install line; the scale and translation it hands
jax.image.scale_and_translate give the page's coordinates; the nearest mappings it claims are
exactly those whose index jax.image.resize computes; its baseline names committed cases, each
under a cause its findings page explains. The whole-suite run is CI's (.ci/run, in
.venv-peers), and the certification test below where jax is installed."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from backends.jax_backend import INSTALL, JaxBackend, nearest_gap, scale_and_translation
from conformance import ops
from conformance.backend import load_backend
from conformance.casefile import id_matches, load_cases
from conformance.ops import OperatorCall
from conformance.results import baseline
from conformance.session.case_run import run_cases
from conformance.tensors import DataType, TensorDesc
from tests.support import DOCUMENTED, GENERATED, ROOT


def resample(operator: str, ins: tuple, outs: tuple, **attributes: object) -> OperatorCall:
    spec = ops.get(operator)
    return spec.make_call({"InputTensor": TensorDesc(DataType.FLOAT32, ins),
                           "OutputTensor": TensorDesc(DataType.FLOAT32, outs)}, attributes)


def test_not_supported_everywhere_without_jax(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "jax", None)  # import fails
    backend = load_backend("jax")
    assert isinstance(backend, JaxBackend) and backend.unavailable == INSTALL
    assert backend.environment == {} and INSTALL in backend.capabilities.notes
    results = run_cases(load_cases([DOCUMENTED]), backend)
    assert {(r.status, r.message) for r in results} == {("NOT_SUPPORTED", INSTALL)}


@pytest.mark.parametrize("offsets", [(0.5, -0.5), (0.0, 0.0), (0.25, 0.75), (-1.5, 2.0)])
@pytest.mark.parametrize("scale", [0.25, 0.6, 1.0, 1.5, 3.0])
def test_the_translation_gives_the_pages_coordinates(offsets: tuple, scale: float) -> None:
    i, o = offsets
    call = resample("RESAMPLE1", (1, 1, 5, 7), (1, 1, 9, 4), InterpolationMode="LINEAR",
                    Scales=[1, 1, scale, scale], InputPixelOffsets=[i] * 4,
                    OutputPixelOffsets=[o] * 4)
    scales, translation = scale_and_translation(call)
    for d, page in enumerate(ops.get("RESAMPLE1").unclamped(call)):
        out = np.arange(page.size)
        jax_sample = (out + 0.5 - translation[d]) / scales[d] - 0.5  # jax's sample_f
        np.testing.assert_allclose(jax_sample, page, rtol=0, atol=1e-12)


def test_nearest_is_claimed_only_where_jax_resize_computes_the_pages_index() -> None:
    half = {"InputPixelOffsets": [0.5] * 4, "OutputPixelOffsets": [-0.5] * 4}
    up = ((1, 1, 3, 5), (1, 1, 6, 10), [1, 1, 2, 2])
    assert nearest_gap(resample("RESAMPLE", *up[:2], InterpolationMode="NEAREST_NEIGHBOR",
                                Scales=up[2])) is None
    assert nearest_gap(resample("RESAMPLE1", *up[:2], InterpolationMode="NEAREST_NEIGHBOR",
                                Scales=up[2], **half)) is None
    asym = {"InputPixelOffsets": [0.0] * 4, "OutputPixelOffsets": [-0.5] * 4}
    assert nearest_gap(resample("RESAMPLE2", *up[:2], InterpolationMode="NEAREST_NEIGHBOR",
                                Scales=up[2], RoundingDirection="DECREASING", **asym)) is None
    assert "rounds up" in str(nearest_gap(resample(
        "RESAMPLE2", *up[:2], InterpolationMode="NEAREST_NEIGHBOR", Scales=up[2],
        RoundingDirection="INCREASING", **asym)))
    assert "pixel offsets" in str(nearest_gap(resample(
        "RESAMPLE1", *up[:2], InterpolationMode="NEAREST_NEIGHBOR", Scales=up[2],
        InputPixelOffsets=[0.0] * 4, OutputPixelOffsets=[0.0] * 4)))
    assert "Out / In" in str(nearest_gap(resample(
        "RESAMPLE1", (1, 1, 3, 5), (1, 1, 5, 10), InterpolationMode="NEAREST_NEIGHBOR",
        Scales=[1, 1, 2, 2], **half)))  # cropped


def test_the_baseline_lists_committed_cases_under_explained_causes() -> None:
    entries = baseline.load(ROOT / "backends/baseline-jax.yaml").entries
    ids = {c.id for c in load_cases([DOCUMENTED, GENERATED])}
    page = (ROOT / "docs/peer-jax.md").read_text()
    listed = [p for e in entries for p in e.cases]
    assert len(listed) == len(set(listed))  # each case under one cause
    for pattern in listed:  # each names exactly one committed case (a glob where the id
        # is a prefix of another's: '.../stretch-[4]' is not '.../stretch-4/height')
        assert sum(id_matches(i, pattern) for i in ids) == 1, pattern
    for entry in entries:
        assert entry.reason.endswith("docs/peer-jax.md")
        assert f"| {len(entry.cases)} |" in page  # the page counts each cause's cases
