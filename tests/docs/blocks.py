"""The code blocks of the project's pages (README.md and docs/**/*.md) and the shell commands in
them, read by one rule (tests/docs/test_docs_commands.py and test_docs_snippets.py hold them
true):

- A fenced block is of the language its fence names, and every fence names one: `sh`, `bash`
  and `shell` hold commands, `console` commands on its `$ ` lines and their output on the
  others, `powershell` Windows commands; `python`, `yaml`, `toml`, `json` and `c` are code;
  `text`, `mermaid` and `llvm` are output, diagrams and quoted shader code (not checked).
- An indented block (lines indented by 4 spaces or more after a blank line, outside a fence) is
  `console` when its first line starts with `$ `, `powershell` when with `py -m venv`, `sh` when
  with a program of PROGRAMS (or a path ending in one, `.venv/bin/dmlconf`), and `text` (output,
  a diagram, a formula, a file layout) otherwise.
- A YAML block's `run:` values (a workflow's steps) are shell scripts.
- A line ending in a backslash continues on the next; in an indented block, so does a line
  indented past the block's own indent (a synopsis's wrapped options, a comment's). A line that
  then starts with a program of PROGRAMS (after any `NAME=value`) is a command. Any other line
  is output in an indented or console block, shell plumbing (`if`, `echo`, `set`) in a
  workflow's script, and an error in a fenced shell block: name its program in PROGRAMS.
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass
from pathlib import Path

import yaml

from tests.support import ROOT

#: The programs whose command lines the pages hold.
PROGRAMS = frozenset({
    "dmlconf", "pytest", "python", "python3", "py", "pip", "bash", "sh", "apt-get", "cc",
    "./dmlconf_check"})
SHELL = frozenset({"sh", "bash", "shell"})
CODE = frozenset({"python", "yaml", "toml", "json", "c"})
TEXT = frozenset({"text", "mermaid", "llvm"})
LANGUAGES = SHELL | CODE | TEXT | {"console", "powershell"}


@dataclass(frozen=True)
class Block:
    page: Path
    line: int  # of the block's first line, 1-based
    lang: str  # a LANGUAGE, or "script": a workflow's run: script
    text: str  # without the fences or the indent
    fenced: bool
    marker: str = ""  # the HTML comment right above the fence

    def where(self, line: int | None = None) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line if line is None else line}"


@dataclass(frozen=True)
class Command:
    block: Block
    line: int
    text: str  # the command line, its continuations joined
    output: tuple[str, ...] = ()  # in a console block, the lines shown after it

    def where(self) -> str:
        return self.block.where(self.line)


def pages() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def program(word: str) -> str | None:
    """The program of PROGRAMS a command's first word runs (`.venv/bin/dmlconf`: dmlconf)."""
    name = word.rsplit("/", 1)[-1]
    if word in PROGRAMS:
        return word
    return name if "/" in word and not word.startswith("./") and name in PROGRAMS else None


def assignment(word: str) -> bool:
    return bool(re.fullmatch(r"[A-Za-z_]\w*=\S*", word))


def first_word(line: str) -> str:
    """The first word of a command line that is no `NAME=value`."""
    words = [w for w in line.split() if not assignment(w)]
    return words[0] if words else ""


def _indented_lang(first: str) -> str:
    if first.startswith("$ "):
        return "console"
    if first.split()[:3] == ["py", "-m", "venv"]:
        return "powershell"
    return "sh" if program(first_word(first)) else "text"


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def blocks(page: Path) -> list[Block]:
    lines = page.read_text(encoding="utf-8").splitlines()
    found: list[Block] = []
    i, blank = 0, True
    while i < len(lines):
        fence = re.match(r"^ {0,3}```(\S*)", lines[i])
        if fence:
            end = next(j for j in range(i + 1, len(lines)) if lines[j].strip().startswith("```"))
            marker = lines[i - 1].strip() if i and lines[i - 1].startswith("<!--") else ""
            text = textwrap.dedent("\n".join(lines[i + 1:end]) + "\n")
            found.append(Block(page, i + 2, fence[1], text, True, marker))
            i, blank = end + 1, False
        elif blank and lines[i].startswith("    ") and lines[i].strip():
            indent, end = _indent(lines[i]), i
            while end < len(lines) and (not lines[end].strip() or _indent(lines[end]) >= indent):
                end += 1
            body = "\n".join(line[indent:] for line in lines[i:end]).rstrip() + "\n"
            found.append(Block(page, i + 1, _indented_lang(body), body, False))
            i, blank = end, False
        else:
            blank = not lines[i].strip()
            i += 1
    return found


def all_blocks() -> list[Block]:
    return [b for page in pages() for b in blocks(page)]


def scripts(block: Block) -> list[Block]:
    """The `run:` scripts of a YAML block, a GitHub expression `${{ ... }}` standing for 1."""
    found: list[str] = []

    def walk(node: object) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "run" and isinstance(value, str):
                    found.append(value)
                else:
                    walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(yaml.safe_load(block.text))
    return [Block(block.page, block.line, "script", re.sub(r"\$\{\{.*?\}\}", "1", s), False)
            for s in found]


def _lines(block: Block) -> list[tuple[int, str]]:
    """(line, text) of each line of block with its continuations joined."""
    joined: list[tuple[int, str]] = []
    continued = False
    for n, line in enumerate(block.text.splitlines()):
        if not line.strip():
            continued = False
            continue
        indented = block.lang in SHELL and not block.fenced and line[:1].isspace()
        if joined and (continued or indented):
            joined[-1] = (joined[-1][0], f"{joined[-1][1]} {line.strip()}")
        else:
            joined.append((block.line + n, line.strip()))
        continued = line.endswith("\\")
        if continued:
            joined[-1] = (joined[-1][0], joined[-1][1].removesuffix("\\").rstrip())
    return joined


def commands(block: Block) -> list[Command]:
    """The commands of a block (none in a block of code or text)."""
    found: list[Command] = []
    if block.lang == "yaml":
        return [c for script in scripts(block) for c in commands(script)]
    if block.lang not in SHELL | {"console", "powershell", "script"}:
        return found
    for line, text in _lines(block):
        if block.lang == "console":
            if text.startswith("$ "):
                found.append(Command(block, line, text[2:].strip()))
            elif found:
                last = found[-1]
                found[-1] = Command(block, last.line, last.text, (*last.output, text))
        elif block.lang == "powershell" or program(first_word(text)):
            found.append(Command(block, line, text))
        elif block.fenced:
            raise AssertionError(f"{block.where(line)}: `{text}` runs no program of PROGRAMS "
                                 "(tests/docs/blocks.py): name it there, or fence the block "
                                 "as text")
    return found


def all_commands() -> list[Command]:
    return [c for b in all_blocks() for c in commands(b)]
