"""The dependencies (pyproject.toml, constraints.txt, .ci/deps): CI's test environment installs
the known-good versions, every direct dependency pinned there; each runtime bound is one the
lowest-bound check can install exactly; CI runs that check and the newest-release one, each
reporting its versions by name."""

from __future__ import annotations

import re

import pytest

from tests.support import ROOT

tomllib = pytest.importorskip("tomllib")  # Python 3.11 and later (CI's)


def project() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def name_of(requirement: str) -> str:
    return re.split(r"[<>=!~; \[]", requirement, maxsplit=1)[0].lower().replace("_", "-")


def test_constraints_pin_every_direct_dependency_exactly() -> None:
    pins = {}
    for line in (ROOT / "constraints.txt").read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            name, version = line.split("==")
            pins[name.lower().replace("_", "-")] = version
    direct = project()["dependencies"] + project()["optional-dependencies"]["test"]
    missing = [d for d in direct if name_of(d) not in pins]
    assert not missing, f"constraints.txt pins none of {missing}: remake it (its header says how)"
    assert "dml-conformance" not in pins  # the project itself is never pinned


def test_every_runtime_dependency_states_a_lowest_bound() -> None:
    """.ci/deps lowest installs `name==bound` of each: a dependency without `>=` has none."""
    for requirement in project()["dependencies"]:
        assert re.fullmatch(r"[A-Za-z0-9_.-]+>=[0-9][^,;\s]*", requirement), requirement


def test_ci_installs_known_good_and_checks_newest_and_lowest() -> None:
    run = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    lines = run.splitlines()
    pinned = lines.index('export PIP_CONSTRAINT="$PWD/constraints.txt"')
    released = lines.index("unset PIP_CONSTRAINT")
    readme_test = next(i for i, line in enumerate(lines) if "pytest -q -n auto" in line)
    assert pinned < readme_test < released
    assert "bash .ci/deps newest" in lines and "bash .ci/deps lowest" in lines
    deps = (ROOT / ".ci" / "deps").read_text(encoding="utf-8")
    assert "pytest -q -m unit" in deps and "known good" in deps
