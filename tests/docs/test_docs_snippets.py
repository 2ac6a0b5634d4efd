"""Every snippet of code in the pages (README.md, docs/**/*.md; issue 27), found by
tests/docs/blocks.py's rule: every fence names its language; a `python` block compiles, and one
that names nothing it does not define or import (a self-contained one) runs; a `yaml` block
loads with PyYAML's safe loader, and, unless it is a GitHub workflow (whose `on:` YAML reads as
a boolean key), with the case files' own loader (`casefile.safe_yaml`), a baseline with the
baseline reader, a whole case file (one that leaves nothing out with `...`) with the case
loader; `toml` and `json` load (`...` in JSON: what the page leaves out, dropped with its
comma); a `c` block is the
marked example tests/export/test_export.py compiles and runs. The shell blocks are
test_docs_commands.py's."""

from __future__ import annotations

import builtins
import json
import re
import symtable
from pathlib import Path

import pytest
import tomllib
import yaml

from conformance.casefile import load_cases, safe_yaml
from conformance.results import baseline
from tests.docs.blocks import LANGUAGES, Block, all_blocks
from tests.support import ROOT

BLOCKS = all_blocks()


def of(*langs: str) -> list[Block]:
    return [b for b in BLOCKS if b.lang in langs]


def test_every_fence_names_a_language_the_rule_knows() -> None:
    unknown = [f"{b.where()}: ```{b.lang}" for b in BLOCKS if b.fenced and b.lang not in LANGUAGES]
    assert unknown == [], f"name one of {sorted(LANGUAGES)} (tests/docs/blocks.py)"


def free_names(code: str) -> set[str]:
    """The names code uses at module level or as globals that it neither defines nor imports."""
    top = symtable.symtable(code, "<snippet>", "exec")
    defined = {s.get_name() for s in top.get_symbols() if s.is_assigned() or s.is_imported()}
    used: set[str] = set()

    def walk(table: symtable.SymbolTable) -> None:
        used.update(s.get_name() for s in table.get_symbols()
                    if s.is_referenced() and (table is top or s.is_global()))
        for child in table.get_children():
            walk(child)

    walk(top)
    return used - defined - set(dir(builtins))


@pytest.mark.parametrize("block", of("python"), ids=Block.where)
def test_python_compiles_and_a_self_contained_one_runs(block: Block) -> None:
    code = compile(block.text, block.where(), "exec")
    if not free_names(block.text):
        exec(code, {"__name__": "snippet"})  # defines what the page shows; nothing else runs


@pytest.mark.parametrize("block", of("yaml"), ids=Block.where)
def test_yaml_loads_with_the_loader_that_reads_it(block: Block, tmp_path: Path) -> None:
    data = yaml.safe_load(block.text)
    if isinstance(data, dict) and "jobs" in data:  # a GitHub workflow: GitHub reads it
        return
    safe_yaml.parse(block.text, block.where())
    if isinstance(data, dict) and "expected_failures" in data:
        assert baseline.parse(block.text, block.where()).entries
    if isinstance(data, dict) and "cases" in data and "..." not in block.text:  # a whole file
        (tmp_path / "page.yaml").write_text(block.text, encoding="utf-8")
        assert load_cases([tmp_path / "page.yaml"])


@pytest.mark.parametrize("block", of("toml", "json"), ids=Block.where)
def test_toml_and_json_load(block: Block) -> None:
    if block.lang == "toml":
        tomllib.loads(block.text)
    else:  # `...` marks what the page leaves out
        json.loads(re.sub(r",?\s*\.\.\.", "", block.text))


def test_the_c_example_is_the_one_the_export_tests_compile() -> None:
    test = (ROOT / "tests" / "export" / "test_export.py").read_text(encoding="utf-8")
    for block in of("c"):
        assert block.marker == "<!-- c-example -->", block.where()
        assert "c-example" in test and block.page.name in test
