"""The installed `dmlconf` console script and the environment a user's own modules run in, for
the tests that run the command line as a user does (tests/cli/test_cli.py,
tests/docs/test_docs_readme_backend.py)."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path


def dmlconf() -> str:
    """The installed console script, as a user runs it."""
    found = (shutil.which("dmlconf", path=str(Path(sys.executable).parent))
             or shutil.which("dmlconf"))
    assert found, "the dmlconf console script is not installed"
    return found


def outside_env(folder: Path) -> dict[str, str]:
    """The environment with folder first on PYTHONPATH (where a user's own modules are)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(folder), env.get("PYTHONPATH")) if p)
    return env
