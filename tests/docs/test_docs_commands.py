"""Every command of the pages (README.md, docs/**/*.md; issue 27) is run or parsed. The commands
are found by tests/docs/blocks.py's rule (its docstring), split at `&&`, `||`, `;` and `|`, with
redirections and leading `NAME=value` dropped and `<name>` read as a placeholder.

- `dmlconf`: parsed by the real parser (`dmlconf directml` by that command's own), every option
  spelled in full as the parser has it (argparse would take an abbreviation); a synopsis (a line
  with `[`, ` | ` or `...`) names a real command and only its options. Each `-k` pattern selects
  a committed case; each path into the repository exists. The cheap, hermetic ones run for real
  (`runs_here`: --version, list, show, and run or explore on the NumPy reference or a stand-in
  of tests/support, selecting with -k), as the installed `dmlconf` in a temporary folder: they
  end with a verdict (exit 0 or 1), never a usage error or a crash, and print every output line
  a console block shows (a number or a hex run there stands for any, `...` for what is left
  out). Every other one is listed in NOT_RUN with the reason.
- `pytest`: its --dml- options are the plugin's. `python`, `pip`: `-m MODULE` imports, a script
  exists and takes the options given, `-c` code compiles, an extra `.[NAME]` is pyproject.toml's,
  a wheel of the suite is this version's. `bash`, `sh`: the script exists and names the options
  given. `apt-get install`: backends/directml/ci-install.sh installs the same packages. `cc`:
  the suite ships the sources.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import importlib.util
import io
import itertools
import pkgutil
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
import tomllib

from conformance import __version__, cli, pytest_plugin
from conformance.casefile import load_cases
from conformance.casefile.selection import id_matches
from tests.docs.blocks import Command, all_commands, assignment, program
from tests.support import CASES, ROOT
from tests.support.console import dmlconf

#: Why each `dmlconf` command that does not run here does not (a regex on the command).
NOT_RUN = {
    r"--backend[ =](directml|dxdispatch|onnxruntime-directml)|^dmlconf directml ":
        "real DirectML: `dmlconf directml setup` (Debian, root, minutes), or Windows and a GPU",
    r"--backend[ =](jax|openvino|onnxruntime-webgpu|backends\.(onnxruntime|torch)_backend:)":
        "a peer's optional packages, on the whole suite (minutes; CI runs them)",
    r"--backend[ =](mypkg|mypackage|mybackend|myname)\b":
        "a vendor's backend, of a package that is not here",
    r"--backend[ =]\w+\.py:":
        "a page's example backend, saved where the reader likes (test_docs_backends.py runs the "
        "README's and backends.md's, tests/cli/test_cli_describe.py the operator pages')",
    r"^dmlconf (verify|compare|merge) ": "it reads the results or the bundle of a whole run",
    r"^dmlconf run --html ": "the whole committed suite: the README's set-up, which CI runs",
}


def simple(command: Command) -> list[list[str]]:
    """The simple commands of a command line that run a program of PROGRAMS, program first."""
    if command.block.lang == "powershell":
        parts = [part.split() for part in command.text.split(";")]
    else:
        lexer = shlex.shlex(re.sub(r"<([\w -]+)>", r"{\1}", command.text), posix=True,
                            punctuation_chars=True)
        lexer.whitespace_split = True
        parts, skip = [[]], False
        for token in lexer:
            if skip or token in (">", ">>", "<"):
                skip = not skip
            elif token in ("&&", "||", ";", "|", "&", "(", ")"):
                parts.append([])
            else:
                parts[-1].append(token)
    found = []
    for words in parts:
        words = list(itertools.dropwhile(assignment, words))
        if words and program(words[0]):
            found.append([program(words[0]), *words[1:]])
    return found


def synopsis(command: Command) -> bool:
    return bool(re.search(r"\[-|\]|\.\.\.| \| ", command.text))


def placeholder(word: str) -> bool:
    return "{" in word or bool(re.fullmatch(r"[A-Z][A-Z_]+(\.json)?", word))


def value(words: list[str], option: str) -> str | None:
    for i, word in enumerate(words):
        if word == option and i + 1 < len(words):
            return words[i + 1]
        if word.startswith(option + "="):
            return word.split("=", 1)[1]
    return None


def runs_here(words: list[str]) -> bool:
    """--version, list, show and describe; run (selecting with -k) and explore on the NumPy
    reference or a stand-in of tests/support; nothing with a placeholder."""
    argv = words[1:]
    if argv == ["--version"]:
        return True
    if (argv[:1] not in (["list"], ["show"], ["describe"], ["run"], ["explore"])
            or any(map(placeholder, argv))):
        return False
    if argv[0] in ("list", "show", "describe"):
        return True
    backend = value(argv, "--backend") or "numpy"
    local = backend == "numpy" or backend.startswith("tests/support/")
    return local and "--tier" not in argv and (argv[0] == "explore" or "-k" in argv)


@functools.cache
def repository_tops() -> frozenset[str]:
    files = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True,
                           check=True).stdout.split()
    return frozenset(f.split("/")[0] for f in files) - {"reports"}  # reports/: the outputs


@functools.cache
def committed_ids() -> tuple[str, ...]:
    return tuple(c.id for c in load_cases([CASES]))


def options_of(command: str | None, top: argparse.ArgumentParser | None = None) -> set[str]:
    """The option strings of a command of top (`dmlconf`'s parser), or of top's own."""
    top = top or cli.parser()
    if command is None:
        return set(top._option_string_actions)
    (sub,) = [a for a in top._actions if isinstance(a, argparse._SubParsersAction)]
    assert command in sub.choices, f"no command `{top.prog} {command}`"
    return set(sub.choices[command]._option_string_actions)


@functools.cache
def plugin_options() -> frozenset[str]:
    names: set[str] = set()
    group = mock.Mock(addoption=lambda *opts, **kw: names.update(opts))
    pytest_plugin.pytest_addoption(mock.Mock(getgroup=lambda *a, **kw: group))
    return frozenset(names)


def dmlconf_commands() -> list[tuple[Command, list[str]]]:
    return [(c, w) for c in all_commands() for w in simple(c) if w[0] == "dmlconf"]


def other_commands() -> list[tuple[Command, list[str]]]:
    return [(c, w) for c in all_commands() for w in simple(c) if w[0] != "dmlconf"]


def ids(pairs: list[tuple[Command, list[str]]]) -> list[str]:
    return [f"{c.where()} {' '.join(w)[:60]}" for c, w in pairs]


def check_paths(words: list[str]) -> None:
    """Each word naming a path into the repository (a -k pattern is none) names one there."""
    for before, word in itertools.pairwise(["", *words]):
        path = word.split("=", 1)[-1].split(":")[0]
        if before != "-k" and "/" in path and not placeholder(path) and "*" not in path and (
                path.split("/")[0] in repository_tops()):
            assert (ROOT / path).exists(), f"{path}: not in the repository"


def check_directml(argv: list[str]) -> None:
    """`dmlconf directml ...` by that command's own parser, its actions stubbed out."""
    from backends.directml import setup

    parsers, parse_args = [], argparse.ArgumentParser.parse_args

    def spy(self: argparse.ArgumentParser, *args: Any) -> Any:
        parsers.append(self)
        return parse_args(self, *args)

    with mock.patch.multiple(setup, setup=mock.DEFAULT, register=mock.DEFAULT,
                             status=mock.DEFAULT) as stubs:
        for stub in stubs.values():
            stub.return_value = 0
        with mock.patch.object(argparse.ArgumentParser, "parse_args", spy):
            assert setup.main(argv) == 0
    spelled = {w.split("=")[0] for w in argv if w.startswith("--")}
    known = options_of(argv[0], parsers[0])
    assert spelled <= known, f"{sorted(spelled - known)}: not as `dmlconf directml` has it"


def check_dmlconf(command: Command, words: list[str]) -> None:
    argv = words[1:]
    if argv[0] == "directml":
        return check_directml(argv[1:])
    name = None if argv[0].startswith("-") else argv[0]
    known = options_of(name)
    if synopsis(command):
        options = {w.strip("[]|.").split("=")[0] for w in argv if w.lstrip("[").startswith("-")}
        assert options <= known, f"no {sorted(options - known)} in `dmlconf {name}`"
        return None
    exits = pytest.raises(SystemExit) if argv == ["--version"] else contextlib.nullcontext()
    with contextlib.redirect_stdout(io.StringIO()), exits:
        cli.parser().parse_args(argv)
    spelled = {w.split("=")[0] for w in argv if w.startswith("--")}
    assert spelled <= known, f"{sorted(spelled - known)}: not spelled as `dmlconf {name}` has it"
    for pattern in (argv[i + 1] for i, word in enumerate(argv[:-1]) if word == "-k"):
        assert any(id_matches(i, pattern) for i in committed_ids()), f"-k {pattern}: no case"
    check_paths(argv)
    return None


@pytest.mark.parametrize(("command", "words"), dmlconf_commands(), ids=ids(dmlconf_commands()))
def test_every_dmlconf_command_parses_as_written(command: Command, words: list[str]) -> None:
    check_dmlconf(command, words)


def test_every_dmlconf_command_runs_here_or_says_why_not() -> None:
    unexplained, used = [], set()
    for command, words in dmlconf_commands():
        if synopsis(command) or runs_here(words):
            continue
        reasons = [p for p in NOT_RUN if re.search(p, " ".join(words))]
        used.update(reasons)
        if not reasons:
            unexplained.append(f"{command.where()}: {' '.join(words)}")
    assert unexplained == [], "run these here, or say in NOT_RUN why not"
    assert used == set(NOT_RUN), f"reasons no command needs: {set(NOT_RUN) - used}"
    assert sum(runs_here(w) for _, w in dmlconf_commands()) >= 5


def shown(line: str) -> str:
    """The regex of an output line a page shows: numbers and hex runs any, `...` anything."""
    parts = [re.sub(r"[0-9a-f]{6,}|\d+", "\0", part) for part in line.strip().split("...")]
    return ".*?".join(re.escape(p).replace("\0", "[0-9a-f.]+") for p in parts)


RUN_HERE = [(c, w) for c, w in dmlconf_commands() if not synopsis(c) and runs_here(w)]


@pytest.mark.parametrize(("command", "words"), RUN_HERE, ids=ids(RUN_HERE))
def test_the_cheap_commands_run_as_written(tmp_path: Path, command: Command,
                                           words: list[str]) -> None:
    for top in {w.split("/")[0] for w in words} & repository_tops():
        (tmp_path / top).symlink_to(ROOT / top)  # a stand-in backend's file, by its path
    done = subprocess.run([dmlconf(), *words[1:]], cwd=tmp_path, capture_output=True,
                          text=True, timeout=300)
    printed = done.stdout + done.stderr
    assert done.returncode in (0, 1) and "Traceback" not in printed, printed[-3000:]
    for line in command.output:
        assert re.search(shown(line), printed), f"not printed: {line}\n{printed[-3000:]}"


def module_exists(name: str) -> bool:
    """Without importing it (find_spec("pip") would switch setuptools' distutils shim off)."""
    top, _, rest = name.partition(".")
    if not rest:
        return any(m.name == top for m in pkgutil.iter_modules()) or top in sys.builtin_module_names
    return importlib.util.find_spec(name) is not None


def check_python(words: list[str]) -> None:
    args = [w for w in words[1:] if w not in ("-q", "-u")]
    if args[0] == "-m":
        assert module_exists(args[1]), f"no module {args[1]}"
        if args[1] == "pip":
            check_pip(args[2:])
    elif args[0] == "-c":
        compile(args[1], "<python -c>", "exec")
    else:
        check_script(words[1:])


def check_pip(args: list[str]) -> None:
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"]
    for word in args[1:]:
        if m := re.fullmatch(r"\.\[([\w,-]+)\]", word):
            assert set(m[1].split(",")) <= set(extras), f"{word}: no such extra"
        if m := re.fullmatch(r"dml_conformance-(.+?)-py3-none-any\.whl", word):
            assert m[1] == __version__, f"{word}: the suite is {__version__}"


def check_script(args: list[str]) -> None:
    script = ROOT / args[0]
    assert script.is_file(), f"{args[0]}: no such script"
    text = script.read_text(encoding="utf-8")
    for option in (w.split("=")[0] for w in args[1:] if w.startswith("-")):
        assert option in text, f"{args[0]} takes no {option}"


def check_other(words: list[str]) -> None:
    name = words[0]
    if name in ("python", "python3", "py"):
        check_python(words)
    elif name == "pip":
        check_pip(words[1:])
    elif name in ("bash", "sh"):
        check_script(words[1:])
    elif name == "pytest":
        options = {w.strip("[]").split("=")[0] for w in words if w.lstrip("[").startswith("--dml")}
        assert options <= plugin_options(), f"the plugin has no {options - plugin_options()}"
    elif name == "apt-get" and "install" in words:
        ci = (ROOT / "backends" / "directml" / "ci-install.sh").read_text(encoding="utf-8").split()
        wanted = words[words.index("install") + 1:]
        packages = {w for before, w in itertools.pairwise(["", *wanted])
                    if not w.startswith("-") and before != "-t"}
        assert packages <= set(ci), f"ci-install.sh installs none of {packages - set(ci)}"
    elif name == "cc":
        shipped = {p.name for p in (ROOT / "conformance").rglob("*.[ch]")}
        assert {w for w in words if w.endswith((".c", ".h"))} <= shipped
    check_paths(words[1:])


@pytest.mark.parametrize(("command", "words"), other_commands(), ids=ids(other_commands()))
def test_every_other_command_names_what_exists(command: Command, words: list[str]) -> None:
    check_other(words)
