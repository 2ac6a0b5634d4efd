"""docs/backends.md, "Writing a backend" (once the README's "Certifying your own
implementation"), executed (issue 15): the backend it shows is written to a file and certified
by the installed `dmlconf` in a subprocess, as a newcomer would run it; a copy with a one-line
bug FAILs; every name the page puts in backticks exists in the code under that name (a field, a
method with those parameters, a command option), and every output it quotes is what the runs
print. The page's last section, the workflow from a pip install, is test_packaging.py's."""

from __future__ import annotations

import inspect
import json
import re
import shlex
import subprocess
from collections import Counter
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest
import tomllib

from conformance import backend as backend_module
from conformance import flags, levels, ops, tensors
from conformance.casefile import load_cases
from conformance.cli import parser
from conformance.results.model import STATUSES
from tests.support import CASES, DOCUMENTED, ROOT
from tests.support.console import dmlconf, outside_env

PAGE = ROOT / "docs" / "backends.md"
END = "\n## From a pip install to a verified certificate"
MARKER = re.compile(r"<!-- backend-example: (\S+\.py) .*?-->\n```python\n(.*?)```\n", re.S)
OPERATOR = "DEPTH_TO_SPACE1"
#: The one-line bug: the two Orders swapped.
RIGHT, WRONG = '== "DEPTH_COLUMN_ROW"', '== "COLUMN_ROW_DEPTH"'
#: What the good run loads besides the documented examples: the claimed operator's strided
#: layouts, invalid descs and bit-level values (with the original DEPTH_TO_SPACE's, which
#: `-k depth_to_space` selects too: NOT_SUPPORTED). A few files, to keep it fast.
GENERATED = ("layouts/depth_to_space1.yaml", "invalid/depth_to_space1.yaml",
             "bitlevel/depth_space.yaml")


def section() -> str:
    """The page up to its last section."""
    text = PAGE.read_text(encoding="utf-8")
    assert END in text
    return text.split(END, 1)[0]


def snippet() -> tuple[str, str]:
    """(file name, code) of the marked python block."""
    (found,) = MARKER.findall(section())
    return found


def prose() -> str:
    """The section without its fenced blocks, whitespace made single spaces."""
    return " ".join(re.sub(r"```.*?```", "", section(), flags=re.S).split())


def commands() -> list[str]:
    """The section's indented command lines."""
    return [line.strip() for line in section().splitlines() if re.match(r"^    dmlconf ", line)]


def backend_class_name(code: str) -> str:
    (name,) = re.findall(r"^class (\w+)\(Backend\):", code, re.M)
    return name


def run(tmp_path: Path, code: str, *args: str) -> tuple[subprocess.CompletedProcess[str], dict]:
    """`dmlconf run --backend FILE:Class ARGS --json ...` in a subprocess, FILE holding code."""
    file_name, _ = snippet()
    (tmp_path / file_name).write_text(code, encoding="utf-8")
    spec = f"{file_name}:{backend_class_name(code)}"
    proc = subprocess.run([dmlconf(), "run", "--backend", spec, *args, "--json", "results.json"],
                          cwd=tmp_path, env=outside_env(tmp_path), capture_output=True,
                          text=True, timeout=120, check=False)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc, json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))


def readme_command_args() -> list[str]:
    """The page's run command for the snippet: its arguments after `--backend FILE:Class`."""
    file_name, code = snippet()
    spec = f"{file_name}:{backend_class_name(code)}"
    (line,) = [c for c in commands() if f"--backend {spec}" in c]
    words = shlex.split(line)
    assert words[:4] == ["dmlconf", "run", "--backend", spec], line
    return words[4:]


def cases_args(*generated: str) -> list[str]:
    return ["--cases", str(DOCUMENTED),
            *[a for g in generated for a in ("--cases", str(CASES / "generated" / g))]]


def test_the_readme_backend_passes_what_it_claims_and_the_rest_is_not_supported(
        tmp_path: Path) -> None:
    _, code = snippet()
    args = readme_command_args()
    assert "-k" in args  # the page selects its operator's cases
    proc, doc = run(tmp_path, code, *args, *cases_args(*GENERATED))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    by_status: Counter[tuple[tuple[str, ...], str]] = Counter(
        (tuple(r["operators"]), r["status"]) for r in doc["results"])
    claimed = sum(n for (operators, status), n in by_status.items() if operators == (OPERATOR,))
    assert claimed >= 100  # the examples, every layout, the invalid descs, the bit patterns
    assert by_status[((OPERATOR,), "PASS")] == claimed, by_status
    others = [r for r in doc["results"] if r["operators"] != [OPERATOR]]
    assert others, "the selection must hold cases of operators the backend does not claim"
    assert {r["status"] for r in others} == {"NOT_SUPPORTED"}
    # its invalid descs were judged (rejected), not left out
    assert any(r["id"].startswith("generated/invalid/") and r["status"] == "PASS"
               for r in doc["results"])
    # the reasons the page quotes are the ones the run gives
    reasons = {r["message"] for r in others}
    quoted = [s for s in quoted_outputs()
              if not s.startswith(("FAIL ", "judged by", "diagnoses of"))]
    assert quoted, "the page quotes no NOT_SUPPORTED reason"
    for reason in quoted:
        assert reason in reasons, f"`{reason}` is not what the run says: {sorted(reasons)}"


def test_a_copy_with_the_orders_swapped_fails_naming_the_case(tmp_path: Path) -> None:
    _, code = snippet()
    assert code.count(RIGHT) == 1, f"the snippet no longer tests the Order with {RIGHT}"
    buggy = code.replace(RIGHT, WRONG)
    proc, doc = run(tmp_path, buggy, *readme_command_args(), *cases_args())
    assert proc.returncode == 1, proc.stdout + proc.stderr
    failed = {r["id"]: r["message"] for r in doc["results"] if r["status"] == "FAIL"}
    assert set(failed) == {"documented/depth_to_space1/example-1-depth-column-row",
                           "documented/depth_to_space1/example-2-column-row-depth"}
    for case_id, message in failed.items():
        assert "diagnosis: the output equals the other Order" in message
        printed = [line.strip() for line in (proc.stdout + proc.stderr).splitlines()
                   if line.strip().startswith(f"FAIL {case_id}: ")]
        assert printed, proc.stdout  # the terminal names the case, its cause first
        cause, why = printed[0].split(": ", 1)[1].split(" | ", 1)
        assert cause == "diagnosis: other-order"
        assert message.startswith(why.split(" [1]")[0].removesuffix("..."))
    # what the page quotes of the run (with "..." for what it leaves out) is what it printed
    printed = " ".join((proc.stdout + proc.stderr).split())
    quoted = [s for s in quoted_outputs() if s.startswith(("FAIL ", "judged by", "diagnoses of"))]
    assert len(quoted) == 3, quoted
    for quote in quoted:
        position = 0
        for part in quote.removesuffix(" ...").split(" ... "):
            found = printed.find(part, position)
            assert found >= 0, f"the run did not print {part!r} (the page quotes it): {printed}"
            position = found + len(part)


def entry_points_table() -> dict[str, str]:
    """The entry points the page's pyproject.toml block registers: name -> "module:Class"."""
    (block,) = re.findall(r"```toml\n(.*?)```", section(), re.S)
    return tomllib.loads(block)["project"]["entry-points"][backend_module.ENTRY_POINT_GROUP]


@pytest.mark.parametrize("form", ["entry point", "import path"])
def test_the_snippet_in_a_package_runs_by_its_registered_name_and_its_import_path(
        tmp_path: Path, form: str) -> None:
    """The page's package forms, as pip would install them: its module on the path and, for
    the name, the entry_points.txt that pip writes from its pyproject.toml table."""
    _, code = snippet()
    ((name, target),) = entry_points_table().items()
    module, class_name = target.split(":")
    package = tmp_path.joinpath(*module.split(".")).with_suffix(".py")
    package.parent.mkdir(parents=True)
    package.parent.joinpath("__init__.py").write_text("", encoding="utf-8")
    package.write_text(f"{code}\n{class_name} = {backend_class_name(code)}\n", encoding="utf-8")
    dist = tmp_path / "mypackage-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: mypackage\nVersion: 1.0\n",
                                   encoding="utf-8")
    (dist / "entry_points.txt").write_text(
        f"[{backend_module.ENTRY_POINT_GROUP}]\n{name} = {target}\n", encoding="utf-8")
    spec = name if form == "entry point" else target
    (line,) = [c for c in commands() if shlex.split(c)[2:4] == ["--backend", spec]]
    proc = subprocess.run(
        [dmlconf(), *shlex.split(line)[1:], *cases_args(), "-k", "depth_to_space1",
         "--json", "results.json"],
        cwd=tmp_path, env=outside_env(tmp_path), capture_output=True, text=True, timeout=120,
        check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    doc = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))
    assert doc["backend"]["name"] == spec
    assert [r["status"] for r in doc["results"]] == ["PASS", "PASS"]
    if "--certify" in line:
        assert doc["execution"]["tamper_proof"] is True

# -- every name in backticks exists ---------------------------------------------------------------
IDENTIFIER = r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*"


def spans() -> list[str]:
    """The section's inline code spans (outside fenced blocks), whitespace made single."""
    return re.findall(r"`([^`]+)`", prose())


def is_code(span: str) -> bool:
    """A name, a call, an assignment, an option, a command or a file: not a quoted output."""
    return bool(span.endswith(".py") or span.startswith(("--", "dmlconf "))
                or re.fullmatch(rf"{IDENTIFIER}(?:\(.*\)| ?= ?.+)?", span))


def quoted_outputs() -> list[str]:
    """The spans that quote what a run prints (the tests running the snippet check them)."""
    return [s for s in spans() if not is_code(s)]


def example_objects() -> dict[str, Any]:
    """The objects the section's names are read on: the snippet's backend built, and a real
    call and desc of a documented case of its operator."""
    _, code = snippet()
    module = ModuleType("readme_backend")
    exec(compile(code, "readme_backend", "exec"), module.__dict__)  # the page's own code
    backend = getattr(module, backend_class_name(code))()
    case = load_cases([DOCUMENTED / "depth_to_space1.yaml"])[0]
    call = case.calls[0].call
    assert call.operator == OPERATOR
    bindings = {n: np.zeros(d.total_size, np.uint8) for n, d in call.tensors.items()}
    backend.execute(call, bindings)  # bindings as the harness makes them, which it takes
    return {"self": backend, "call": call, "bindings": bindings,
            "desc": call.tensors["InputTensor"]}


def vocabulary(objects: dict[str, Any]) -> dict[str, Any]:
    """Bare names the section may use, each to something that has it."""
    words: dict[str, Any] = {}
    for module in (np, tensors, levels, flags, ops, backend_module):  # later ones win
        words.update({k: getattr(module, k) for k in dir(module) if not k.startswith("_")})
    for obj in (tensors.DataType.FLOAT32, objects["desc"], objects["call"],
                objects["self"].capabilities, objects["self"]):
        words.update({k: getattr(obj, k) for k in dir(obj) if not k.startswith("_")})
    for spec in ops.OPERATORS.values():
        words[spec.name] = spec
        words.update({name: spec for name, _ in spec.tensors})
        for attribute in spec.attributes:
            words[attribute.name] = attribute
            words.update({value: attribute for value in attribute.values})
    words.update({status: "status" for status in STATUSES})
    words.update({v: "string" for k, v in vars(backend_module).items()  # ENTRY_POINT_GROUP
                  if isinstance(v, str) and not k.startswith("_")})
    return words


def resolve(name: str, words: dict[str, Any], objects: dict[str, Any]) -> Any:
    """The object a (dotted) name names; AssertionError saying which part is missing."""
    if name in words:  # a whole word, such as the entry-point group's dotted name
        return words[name]
    head, *rest = name.split(".")
    if head in objects:
        obj = objects[head]
    elif head in words:
        obj = words[head]
    else:
        for i in range(len(rest), -1, -1):  # the longest importable module prefix
            module = ".".join([head, *rest[:i]])
            try:
                obj = __import__(module, fromlist=["_"])
            except ImportError:
                continue
            rest = rest[i:]
            break
        else:
            raise AssertionError(f"`{name}`: no {head} in the code")
    for part in rest:
        assert hasattr(obj, part), f"`{name}`: {obj!r} has no {part}"
        obj = getattr(obj, part)
    return obj


def parameters(obj: Any) -> list[str]:
    names = list(inspect.signature(obj).parameters)
    return [n for n in names if n not in ("self", "cls")]


def run_options() -> set[str]:
    """Every option string of `dmlconf run` (read off argparse, which has no public way)."""
    run_parser = next(a for a in parser()._actions
                      if a.dest == "command").choices["run"]
    return set(run_parser._option_string_actions)


def check_command(line: str) -> None:
    """A `dmlconf run` command line parses, each option spelled out in full (argparse would
    take an abbreviation)."""
    words = shlex.split(line)
    assert words[:2] == ["dmlconf", "run"], line
    parser().parse_args(words[1:])
    for word in words:
        assert not word.startswith("--") or word in run_options(), f"{line}: no {word}"


def test_every_name_in_backticks_exists_as_the_section_spells_it() -> None:
    objects = example_objects()
    words = vocabulary(objects)
    file_name, _ = snippet()
    checked = 0
    for span in filter(is_code, spans()):
        if span.endswith(".py"):  # the file the page saves the backend in
            assert span == file_name
        elif call := re.fullmatch(rf"({IDENTIFIER})\((.*)\)", span):  # f(a, b): its parameters
            target = resolve(call[1], words, objects)
            named = [a.strip() for a in call[2].split(",")]
            if all(re.fullmatch(r"[A-Za-z_]\w*", a) for a in named):
                assert named == parameters(target), f"`{span}`: it takes {parameters(target)}"
        elif assign := re.fullmatch(rf"({IDENTIFIER}) ?= ?(.+)", span):  # native = True
            resolve(assign[1], words, objects)
        elif re.fullmatch(IDENTIFIER, span):
            resolve(span, words, objects)
        elif span.startswith("--"):
            assert span in run_options(), f"`{span}` is no option of dmlconf run"
        else:  # a command
            check_command(span)
        checked += 1
    assert checked >= 40, spans()
    for line in commands():  # the indented commands too
        check_command(line)


def test_the_names_the_issue_found_wrong_are_spelled_as_the_code_spells_them() -> None:
    names = set(spans())
    for name in ("data_type", "sizes", "strides", "total_tensor_size_in_bytes",
                 "read_tensor(desc, buffer)", "write_tensor(desc, buffer, values)",
                 "DescRejected", "unsupported_reason(call)", "execute(call, bindings)",
                 "create_operator(call)", backend_module.ENTRY_POINT_GROUP):
        assert name in names, f"the section does not name `{name}`"
    assert any(s.startswith("Capabilities(") for s in names)
    assert any(s.startswith("Capabilities.full(") for s in names)
    assert "is a **property**" in prose()
    _, code = snippet()
    assert "@property\n    def capabilities(self)" in code



# -- the README's quick start, the short form of the page -----------------------------------------
def quick_start() -> tuple[str, str, str]:
    """(file name, code, certify command) of the README's vendor quick start."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Vendor quick start", 1)[1].split("\n## ", 1)[0]
    (code,) = re.findall(r"```python\n(.*?)```", section, re.S)
    (file_name,) = re.findall(r"Save it as `(\S+\.py)`", section)
    (certify,) = [line.strip() for line in section.splitlines()
                  if line.startswith("    dmlconf certify ")]
    return file_name, code, certify


def test_the_quick_start_backend_passes_its_cases_and_is_the_one_certified(
        tmp_path: Path) -> None:
    file_name, code, certify = quick_start()
    spec = f"{file_name}:{backend_class_name(code)}"
    assert shlex.split(certify)[2:4] == ["--backend", spec]
    (tmp_path / file_name).write_text(code, encoding="utf-8")
    proc = subprocess.run(
        [dmlconf(), "run", "--backend", spec, "-k", "depth_to_space1", *cases_args(*GENERATED),
         "--json", "results.json"], cwd=tmp_path, env=outside_env(tmp_path),
        capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    doc = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))
    statuses = Counter(r["status"] for r in doc["results"] if r["operators"] == [OPERATOR])
    assert statuses["PASS"] >= 100 and set(statuses) == {"PASS"}, statuses


def test_the_quick_start_certify_command_gives_a_scoped_conformant(tmp_path: Path) -> None:
    """The README's certify command, as written (a bundle folder added), on the whole mustpass
    list: the backend implements DEPTH_TO_SPACE1 alone, and its scope is conformant."""
    file_name, code, certify = quick_start()
    (tmp_path / file_name).write_text(code, encoding="utf-8")
    proc = subprocess.run(
        [dmlconf(), *shlex.split(certify)[1:], "--out", "bundle"], cwd=tmp_path,
        env=outside_env(tmp_path), capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    level = shlex.split(certify)[shlex.split(certify).index("--level") + 1]
    assert f"feature level {level}: conformant for {OPERATOR} (" in proc.stdout
    assert "NOT conformant" not in proc.stdout
