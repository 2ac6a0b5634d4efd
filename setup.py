"""The build hook that ships the suite in the package (the rest is pyproject.toml).

The committed cases/ and mustpass/ stay top-level folders of the source tree; a built wheel
carries a copy of them as package data, conformance/suite_data/{cases,mustpass}, which
conformance.suite finds when the package is installed (docs/mustpass.md, "Where the suite
lives"). The sdist carries the top-level folders (MANIFEST.in), so a wheel built from it gets
the same copy. An editable install copies nothing: it runs from the source tree, whose
top-level folders conformance.suite uses.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

SOURCE = Path(__file__).resolve().parent
#: Top-level folders of the source tree -> where they go in the built package.
SUITE_DATA = {"cases": "conformance/suite_data/cases",
              "mustpass": "conformance/suite_data/mustpass"}


def suite_files(folder: Path) -> list[Path]:
    """Every file under folder, but caches and hidden files (an editor's, git's)."""
    return sorted(p for p in folder.rglob("*")
                  if p.is_file() and "__pycache__" not in p.parts
                  and not any(part.startswith(".") for part in p.relative_to(folder).parts))


class BuildPyWithSuite(build_py):
    """build_py, then the suite's folders copied into the built package."""

    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return  # the package runs from the source tree: its own cases/ and mustpass/
        for name, target in SUITE_DATA.items():
            source = SOURCE / name
            files = suite_files(source) if source.is_dir() else []
            if not files:
                raise SystemExit(f"error: {source} is missing or empty: a wheel without the "
                                 "committed suite cannot run it (is MANIFEST.in's graft of "
                                 f"{name}/ in the sdist?)")
            out = Path(self.build_lib) / target
            if out.exists():
                shutil.rmtree(out)  # a file removed from the source leaves no stale copy
            for f in files:
                self.mkpath(str((out / f.relative_to(source)).parent))
                self.copy_file(str(f), str(out / f.relative_to(source)))

    def get_outputs(self, include_bytecode: bool = True) -> list[str]:
        outputs = list(super().get_outputs(include_bytecode))
        if not getattr(self, "editable_mode", False):
            for name, target in SUITE_DATA.items():
                source = SOURCE / name
                if source.is_dir():
                    outputs += [str(Path(self.build_lib) / target / f.relative_to(source))
                                for f in suite_files(source)]
        return outputs


if __name__ == "__main__":  # as setuptools runs it; a test imports the hook alone
    setup(cmdclass={"build_py": BuildPyWithSuite})
