"""The C compiler and the builds of the C checker (conformance/export/c) that the export tests
share: dmlconf_check as a harness builds it (warnings as errors, C99, the C library only), and
under AddressSanitizer and UndefinedBehaviorSanitizer, built as its fuzz builds it
(conformance.export.c.fuzz.build)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from conformance.export.c import fuzz
from tests.support import ROOT

C_DIR = ROOT / "conformance" / "export" / "c"


def _in_ci() -> bool:
    return os.environ.get("CI", "").lower() == "true"


@pytest.fixture(scope="session")
def cc() -> str:
    found = fuzz.compiler()
    if found is None:
        if _in_ci():
            pytest.fail("CI=true and no C compiler (cc, gcc, clang): CI must judge the exported "
                        "vectors in C")
        pytest.skip("no C compiler (cc, gcc, clang) on this machine")
    return found


@pytest.fixture(scope="session")
def checker(cc: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """dmlconf_check built with warnings as errors, C99, nothing but the C library."""
    exe = tmp_path_factory.mktemp("c") / "dmlconf_check"
    subprocess.run([cc, "-std=c99", "-Wall", "-Wextra", "-pedantic", "-Werror", "-O1", "-o",
                    str(exe), str(C_DIR / "dmlconf_check.c"), str(C_DIR / "dmlconf_vectors.c")],
                   check=True, capture_output=True, text=True)
    return exe


@pytest.fixture(scope="session")
def sanitizers(cc: str, tmp_path_factory: pytest.TempPathFactory) -> str:
    """The compiler, once it has built a program under the sanitizers (CI's gcc has their
    runtimes; elsewhere their absence skips, saying so)."""
    folder = tmp_path_factory.mktemp("sanitizers")
    (folder / "empty.c").write_text("int main(void) { return 0; }\n", encoding="utf-8")
    try:
        fuzz.build(folder / "empty", [folder / "empty.c"], cc)
    except fuzz.BuildError as exc:
        if _in_ci():
            pytest.fail(f"CI=true and {cc} cannot build under the sanitizers: {exc}")
        pytest.skip(f"{cc} cannot build under the sanitizers here: {exc}")
    return cc


@pytest.fixture(scope="session")
def sanitized_checker(sanitizers: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """dmlconf_check under AddressSanitizer and UndefinedBehaviorSanitizer (no recovery)."""
    return fuzz.build(tmp_path_factory.mktemp("asan") / "dmlconf_check", cc=sanitizers)
