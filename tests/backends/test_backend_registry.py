"""Backends are found by registered name, including names third-party packages register in the
entry-point group."""

from __future__ import annotations

from importlib.metadata import EntryPoint

import pytest

from backends.numpy_reference import NumpyReferenceBackend
from conformance import backend as registry
from conformance.backend import BackendLoadError, Capabilities, load_backend
from conformance.levels import FeatureLevel


def test_numpy_is_registered_and_claims_the_highest_level() -> None:
    backend = load_backend("numpy")
    assert isinstance(backend, NumpyReferenceBackend)
    assert backend.claimed_level == FeatureLevel.FL_6_4


def test_entry_point_names_are_registered(monkeypatch: pytest.MonkeyPatch) -> None:
    ep = EntryPoint(name="vendor", value="backends.numpy_reference:NumpyReferenceBackend",
                    group=registry.ENTRY_POINT_GROUP)

    def fake(group: str) -> list[EntryPoint]:
        return [ep] if group == registry.ENTRY_POINT_GROUP else []

    monkeypatch.setattr(registry, "entry_points", fake)
    assert registry.registered()["vendor"] == ep.value
    assert isinstance(load_backend("vendor"), NumpyReferenceBackend)


def test_a_claimed_level_above_the_backend_highest_is_refused() -> None:
    class Low(NumpyReferenceBackend):
        @property
        def capabilities(self) -> Capabilities:
            caps = super().capabilities
            return Capabilities(operators=caps.operators, feature_level=FeatureLevel.FL_2_1)

    with pytest.raises(ValueError, match="claims feature level 2_1 at most"):
        Low(feature_level=FeatureLevel.FL_5_0)


@pytest.mark.parametrize("spec, words", [
    ("nonexistent", "not a registered name"),
    ("no_such_module_xyz:Backend", "importing no_such_module_xyz failed"),
    ("backends.numpy_reference:Missing", "has no Missing"),
    ("conformance.levels:FeatureLevel", "not a subclass"),
    ("/no/such/file.py:X", "does not exist"),
])
def test_bad_backend_specs_give_clear_errors(spec: str, words: str) -> None:
    with pytest.raises(BackendLoadError, match=words):
        load_backend(spec)
