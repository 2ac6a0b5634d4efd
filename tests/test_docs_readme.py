"""The README's two set-up commands stay true: CI runs the test command verbatim, and the main
command runs the built `dmlconf run`."""

from __future__ import annotations

import re

from tests.support import ROOT


def setup_commands() -> list[str]:
    text = (ROOT / "README.md").read_text()
    section = text.split("## Set-up", 1)[1].split("\n## ", 1)[0]
    return [line.strip() for line in section.splitlines() if re.match(r"^    \S", line)]


def test_readme_has_exactly_two_setup_commands() -> None:
    commands = setup_commands()
    assert len(commands) == 2, commands
    main, tests = commands
    assert main.startswith("python3 -m venv") and " && dmlconf run " in main
    for option in ("--html reports/report.html", "--junit reports/junit.xml",
                   "--markdown reports/summary.md"):  # the main job writes the reports
        assert option in main
    assert tests.startswith("python3 -m venv") and "pytest" in tests


def test_ci_runs_the_readme_test_command() -> None:
    ci = (ROOT / ".ci" / "run").read_text()
    assert setup_commands()[1] in ci.splitlines()
