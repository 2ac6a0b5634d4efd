"""The README, the short front door (issue 27): its two set-up commands stay true (CI runs the
test command verbatim, and the main command runs the built `dmlconf run`), it stays short and
links every page of docs/; the synopsis of docs/usage.md and the layout of docs/development.md
(once the README's) name what exists."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.support import ROOT


def readme() -> str:
    return (ROOT / "README.md").read_text(encoding="utf-8")


def setup_commands() -> list[str]:
    text = readme()
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


def test_the_readme_is_short_and_links_every_page_of_docs() -> None:
    text = readme()
    assert len(text.splitlines()) <= 200
    headings = re.findall(r"^## (.+)$", text, re.M)
    assert headings[:3] == ["Set-up", "Vendor quick start", "Implementations"], headings
    linked = set(re.findall(r"\]\((docs/[^)#]+)", text))
    pages = {p.relative_to(ROOT).as_posix() for p in (ROOT / "docs").glob("*.md")}
    assert pages - linked == set(), "the README's Documentation section lists every page"
    assert {"docs/operators/README.md", "docs/findings/README.md"} <= linked
    missing = sorted(link for link in linked if not (ROOT / link).exists())
    assert missing == [], missing


def test_every_section_of_the_readme_a_page_names_is_there() -> None:
    """A page that sends the reader to `the README's "Section"` names a heading it has."""
    headings = set(re.findall(r"^#+ (.+)$", readme(), re.M))
    named = [(p.relative_to(ROOT).as_posix(), m[1]) for p in sorted((ROOT / "docs").rglob("*.md"))
             for m in re.finditer(r"README's \"([^\"]+)\"", p.read_text(encoding="utf-8"))]
    assert [(page, name) for page, name in named if name not in headings] == []


def test_the_vendor_quick_start_is_twenty_lines_at_most() -> None:
    """Its lines that are not blank: the backend, the certify command, the links on."""
    section = readme().split("## Vendor quick start", 1)[1].split("\n## ", 1)[0]
    assert len([line for line in section.splitlines() if line.strip()]) <= 20
    assert "dmlconf certify --backend my_backend.py:MyBackend" in section
    for page in ("docs/operators/README.md", "docs/certification.md", "docs/backends.md"):
        assert f"]({page})" in section, page


def usage_lines() -> list[list[str]]:
    """docs/usage.md's synopsis of the commands (once the README's "Using it"), one command per
    entry, its continuation lines joined: the words of each `dmlconf ...` command."""
    text = (ROOT / "docs" / "usage.md").read_text(encoding="utf-8")
    block = text.split("## The commands", 1)[1].split("\n\n", 2)[1]
    commands: list[str] = []
    for line in block.splitlines():
        if line.startswith("    dmlconf") or line.startswith("    pytest"):
            commands.append(line.strip())
        elif line.startswith("     ") and commands:
            commands[-1] += " " + line.strip()
    return [c.split() for c in commands if c.startswith("dmlconf")]


def test_every_command_and_option_of_the_usage_synopsis_exists() -> None:
    """Each `dmlconf` command docs/usage.md lists is a subcommand of the real parser and takes
    every option written beside it (a newcomer copies these lines)."""
    import argparse

    from conformance.cli import parser

    top = parser()
    (sub,) = [a for a in top._actions if isinstance(a, argparse._SubParsersAction)]
    listed = set()
    for words in usage_lines():
        options = {w.strip("[]|.").split("=")[0] for w in words if w.lstrip("[").startswith("-")}
        if words[1].startswith("-"):  # `dmlconf --version`
            known = {s for a in top._actions for s in a.option_strings}
        else:
            listed.add(words[1])
            assert words[1] in sub.choices, f"usage.md lists `dmlconf {words[1]}`: no such command"
            known = {s for a in sub.choices[words[1]]._actions for s in a.option_strings}
        missing = sorted(o for o in options if o and o not in known)
        assert not missing, f"usage.md's `{' '.join(words[:2])}` names options it lacks: {missing}"
    public = {name for name, p in sub.choices.items() if p.description != argparse.SUPPRESS}
    assert {"run", "certify", "verify", "export", "compare"} <= listed
    assert listed <= public


def test_the_unit_tier_names_test_files_that_exist() -> None:
    """tests/README.md's tiers: conftest's UNIT lists test files of this folder (a renamed file
    would silently leave the unit tier)."""
    from tests.conftest import UNIT

    tests = ROOT / "tests"
    files = {p.relative_to(tests).with_suffix("").as_posix() for p in tests.glob("*/test_*.py")}
    assert UNIT and UNIT <= files, sorted(UNIT - files)


def test_the_layout_names_every_page_of_docs() -> None:
    """docs/development.md's layout of the repository (once the README's)."""
    text = (ROOT / "docs" / "development.md").read_text(encoding="utf-8")
    layout = text[text.index("    docs/  "):text.index("    benchmarks/")]
    pages = sorted(p.name for p in (ROOT / "docs").glob("*.md"))
    assert [p for p in pages if p not in layout] == []


def test_a_partial_run_reads_no_verdict_and_a_failing_one_not_conformant(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """docs/usage.md: a partial run that fails nothing says "N of M mustpass cases run: no
    verdict"; one that fails a mandatory case "NOT conformant (... N of M mustpass cases run)"."""
    from conformance.cli import main

    one = "documented/depth_to_space1/example-1-depth-column-row"
    assert main(["run", "-q", "-k", one, "--no-isolate", "--json", str(tmp_path / "a.json")]) == 0
    out = capsys.readouterr().out
    assert re.search(r"feature level 2_1: 1 of \d+ mustpass cases run: no verdict", out), out
    broken = ROOT / "tests" / "support" / "broken_backends.py"
    assert main(["run", "-q", "-k", one, "--no-isolate", "--json", str(tmp_path / "b.json"),
                 "--backend", f"{broken}:SwappedOrderBackend"]) == 1
    out = capsys.readouterr().out
    assert re.search(r"feature level 2_1: NOT conformant \(.*1 of \d+ mustpass cases run\)",
                     out), out


def test_no_page_installs_the_suite_from_an_index_it_is_not_on() -> None:
    """dml-conformance is on no package index: a page installs it from a clone or a wheel."""
    wrong = re.compile(r"pip install (?:-\S+ )*dml-conformance(?![\w./-])")
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    found = [f"{p.name}: {m.group(0)}" for p in pages
             for m in wrong.finditer(p.read_text(encoding="utf-8"))]
    assert found == []
