"""docs/matrix.md and the script that makes it (.ci/matrix, docs/matrix-command.md): the
committed page puts at least eight implementations side by side, and the script, given a run of
each backend (--reuse), writes the matrix of them and the committed NVIDIA records."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from conformance.cli import main
from tests.support import DOCUMENTED, ROOT

BACKENDS = ("numpy", "numba", "onnxruntime", "torch", "directml-linux", "directml",
            "onnxruntime-webgpu", "openvino", "jax")


def runs_table(markdown: str) -> list[list[str]]:
    """The rows of the page's table of runs (Run, Backend, Version, ...)."""
    head = markdown.index("| Run | Backend |")
    rows = []
    for line in markdown[head:].splitlines()[2:]:
        if not line.startswith("|"):
            break
        rows.append([c.strip() for c in line.strip("|").split("|")])
    return rows


def test_the_committed_matrix_holds_eight_implementations_or_more() -> None:
    page = (ROOT / "docs" / "matrix.md").read_text(encoding="utf-8")
    rows = runs_table(page)
    implementations = {(r[1], r[3].split(" through ")[0]) for r in rows}  # backend, adapter
    assert len(implementations) >= 8, implementations
    assert {r[1] for r in rows} >= set(BACKENDS)
    assert "](docs/matrix.md)" in (ROOT / "README.md").read_text(encoding="utf-8")


def test_the_script_writes_the_matrix_of_the_runs_it_is_given(tmp_path: Path) -> None:
    dmlconf = ROOT / ".venv" / "bin" / "dmlconf"
    if not dmlconf.exists():
        pytest.skip("the script runs .venv's dmlconf: make .venv as the README says")
    one = tmp_path / "one.json"
    assert main(["run", "--cases", str(DOCUMENTED), "--backend", "numpy", "--no-isolate", "-q",
                 "--json", str(one)]) == 0
    runs = tmp_path / "runs"
    runs.mkdir()
    for backend in BACKENDS:
        shutil.copy(one, runs / f"{backend}.json")
    env = {**os.environ, "DMLCONF_MATRIX_DIR": str(runs),
           "DMLCONF_MATRIX_MD": str(tmp_path / "matrix.md")}
    done = subprocess.run(["bash", str(ROOT / ".ci" / "matrix"), "--reuse"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert re.search(r"matrix: 11 runs in \S+matrix\.md", done.stdout), done.stdout
    rows = runs_table((tmp_path / "matrix.md").read_text(encoding="utf-8"))
    assert len(rows) == 11 and rows[-1][1] == "directml-linux"  # the NVIDIA records last
    assert (runs / "matrix.html").stat().st_size > 0
