"""Every command's --help (issue 27) shows examples and its exit codes; each example parses with
the real parser (`dmlconf directml`'s with its own, its actions stubbed out), so the examples stay
true; every exit status a command's cmd_ function returns as a number is one its --help lists;
and `run` is said to run cases (certifying is `certify`)."""

from __future__ import annotations

import argparse
import ast
import contextlib
import inspect
import io
import re
import shlex
from unittest import mock

import pytest

from conformance import cli
from conformance.cli import main, parser

#: Each command's module, by the command's name.
MODULES = {m.__name__.rsplit(".", 1)[-1].replace("list_cases", "list"): m for m in cli.COMMANDS}


def subparsers() -> dict[str, argparse.ArgumentParser]:
    (sub,) = [a for a in parser()._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(sub.choices)


def help_of(command: str | None) -> str:
    """What `dmlconf [COMMAND] --help` prints."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit) as done:
        main([*([command] if command else []), "--help"])
    assert done.value.code == 0
    return out.getvalue()


def section(text: str, title: str) -> str:
    """The lines of a help text from `title` to the next blank line followed by a heading."""
    return re.split(r"\n\n(?=\S)", text.split(f"\n{title}", 1)[1], maxsplit=1)[0]


def examples(text: str) -> list[list[str]]:
    """The example commands of a help text: the `  dmlconf ...` lines of its examples."""
    return [shlex.split(line) for line in section(text, "examples:").splitlines()
            if line.startswith("  dmlconf ")]


def exit_codes(text: str) -> set[int]:
    """The exit statuses a help text lists."""
    listed = section(text, "exit status")
    said = re.findall(r"^\s+(\d+)\s", listed, re.M) or re.findall(r"\b(\d+)\b", listed)
    return {int(n) for n in said}


def parses(words: list[str]) -> None:
    """An example command parses as written: with dmlconf's parser, or `dmlconf directml`'s own
    (setup.main, its actions stubbed)."""
    assert words[0] == "dmlconf"
    if words[1:2] == ["directml"]:
        from backends.directml import setup

        with mock.patch.multiple(setup, setup=mock.DEFAULT, register=mock.DEFAULT,
                                 status=mock.DEFAULT) as stubs:
            for stub in stubs.values():
                stub.return_value = 0
            assert setup.main(words[2:]) == 0
        return
    if "--help" in words:
        with contextlib.redirect_stdout(io.StringIO()), pytest.raises(SystemExit) as done:
            parser().parse_args(words[1:])
        assert done.value.code == 0
        return
    args = parser().parse_args(words[1:])
    assert args.command == words[1]


COMMANDS = sorted(subparsers())


def test_every_command_is_checked() -> None:
    assert set(COMMANDS) == set(MODULES) and len(COMMANDS) >= 14


@pytest.mark.parametrize("command", [None, *COMMANDS])
def test_help_shows_examples_that_parse_and_the_exit_codes(command: str | None) -> None:
    text = help_of(command)
    assert "\nexamples:\n" in text and "\nexit status" in text, text
    found = examples(text)
    assert found, f"dmlconf {command or ''} --help: no example command"
    for words in found:
        if command is not None:
            assert words[1] == command, words
        parses(words)
    codes = exit_codes(text)
    assert 2 in codes  # bad arguments, at least
    if command not in (None, "directml"):
        assert 0 in codes


@pytest.mark.parametrize("command", sorted(set(COMMANDS) - {"directml"}))
def test_every_exit_status_a_command_returns_is_listed(command: str) -> None:
    """The numbers a cmd_ function returns (`return 2`, `return 0 if ... else 1`) are exit
    statuses its --help lists (those it returns from elsewhere, e.g. results.exit_status, are
    0 or 1; main() adds 2 and 130)."""
    module = MODULES[command]
    tree = ast.parse(inspect.getsource(module))
    returned = {node.value for function in ast.walk(tree)
                if isinstance(function, ast.FunctionDef) and function.name.startswith("cmd_")
                for ret in ast.walk(function) if isinstance(ret, ast.Return) and ret.value
                for node in ast.walk(ret.value)
                if isinstance(node, ast.Constant) and type(node.value) is int}
    assert returned <= exit_codes(help_of(command)), (command, returned)


def test_run_runs_cases_and_certify_certifies() -> None:
    top = help_of(None)
    listed = {m[1]: m[2] for m in re.finditer(r"^    (\w+)\s+(.*)$", top, re.M)}
    assert listed["run"].startswith("run the selected cases"), listed["run"]
    assert "certify a backend" not in help_of("run").split("\n\n")[1]
    assert listed["certify"].startswith("certify a backend")
    assert listed["describe"].startswith("an operator's reference")
