"""Loading case files: a file read (a regular file only, within the size limit, UTF-8),
parsed (safe_yaml), checked against the schema and built into Cases, every problem a
CaseFileError at its file and line."""

from __future__ import annotations

import gc
import os
import stat
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from conformance.casefile import build
from conformance.casefile.errors import CaseFileError, collect, mib
from conformance.casefile.model import Case
from conformance.casefile.safe_yaml import MAX_FILE_BYTES, MAX_VALUES, LineDict, parse
from conformance.casefile.schema_check import schema_error, validators
from conformance.casefile.selection import case_files


def load_cases(paths: Iterable[str | Path],
               errors: list[CaseFileError] | None = None) -> list[Case]:
    """Every case under paths, ids unique across them.

    errors None: the first problem raises its CaseFileError. A list: every problem is appended
    to it and loading goes on: a file that cannot be read, parsed or fails the file-level
    checks is skipped whole; a case that fails its checks, or whose id an earlier case has,
    is dropped alone and the file's other cases are kept."""
    cases: list[Case] = []
    seen: dict[str, Case] = {}
    for path in case_files(paths, errors):
        for case in load_file(path, errors):
            if case.id in seen:
                first = seen[case.id]
                collect(CaseFileError(path, case.line, f"case id {case.id!r} is already used at "
                                                       f"{first.file}:{first.line}"), errors)
                continue
            seen[case.id] = case
            cases.append(case)
    return cases


def load_file(path: str | Path, errors: list[CaseFileError] | None = None) -> list[Case]:
    """The cases of one file (errors: as for load_cases). Only a regular file is read: a FIFO,
    a device, a socket or a folder (or a symbolic link to one) is refused without opening it."""
    try:
        refused = _not_regular(os.stat(path), path)
        if refused is None:
            # Not blocking in open(): a FIFO put in the file's place since the stat is
            # refused below (fstat of what was opened), not waited on.
            flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
            with open(os.open(path, flags | getattr(os, "O_BINARY", 0)), "rb") as f:
                refused = _not_regular(os.fstat(f.fileno()), path)
                data = b"" if refused else f.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        return collect(CaseFileError(path, None, f"cannot read: {exc.strerror or exc}"), errors)
    if refused:
        return collect(CaseFileError(path, None, refused), errors)
    if len(data) > MAX_FILE_BYTES:
        return collect(CaseFileError(path, None, f"the file is larger than {mib(MAX_FILE_BYTES)}, "
                                                 "the limit for a case file"), errors)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        return collect(CaseFileError(path, line, f"not UTF-8 text: byte 0x{data[exc.start]:02x} "
                                                 f"in column {column} ({exc.reason})"), errors)
    # Loading makes many small acyclic objects; the cyclic collector's passes over them cost
    # more than the loading itself, so it is paused meanwhile (nothing here makes cycles).
    enabled = gc.isenabled()
    gc.disable()
    try:
        return load_text(text, path, errors)
    finally:
        if enabled:
            gc.enable()


_FILE_KINDS = ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket"),
               (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
               (stat.S_ISDIR, "a folder"))


def _not_regular(status: os.stat_result, path: str | Path) -> str | None:
    """Why a file of this status is not read as a case file, or None for a regular file."""
    if stat.S_ISREG(status.st_mode):
        return None
    what = next((name for test, name in _FILE_KINDS if test(status.st_mode)),
                f"of file type {stat.S_IFMT(status.st_mode):#o}")
    link = ", through a symbolic link" if os.path.islink(path) else ""
    return (f"not a regular file: it is {what}{link}; only regular files are read as case "
            "files (it was not opened)")


def load_text(text: str, path: str | Path = "<text>",
              errors: list[CaseFileError] | None = None) -> list[Case]:
    """The cases of a case file's text; path names it in errors (errors: as for load_cases)."""
    try:
        doc = parse(text, path)
        if not isinstance(doc, dict):
            raise CaseFileError(path, getattr(doc, "line", 1),
                                "a case file is a mapping with a 'cases' list")
        file_validator, case_validator = validators()
        error = schema_error(file_validator, doc, path)
        if error:
            raise error
        defaults = doc.get("defaults", LineDict())
        _check_work(doc["cases"], defaults, path)
    except CaseFileError as exc:
        return collect(exc, errors)
    cases = []
    hashing = build.hash_budget()  # the file's budget for telling missing sha256s
    for i, item in enumerate(doc["cases"]):
        try:
            merged = LineDict({**defaults, **item})
            merged.line = item.line
            merged.key_lines = {**{k: defaults.key_lines[k] for k in defaults}, **item.key_lines}
            error = schema_error(case_validator, merged, path, ("cases", i))
            if error:
                raise error
            cases.append(build.build_case(merged, path, hashing))
        except CaseFileError as exc:
            collect(exc, errors)
    return cases


def _check_work(items: list[Any], defaults: dict[str, Any], path: str | Path) -> None:
    """Each case is checked with the defaults merged into it: the values that makes, over all
    the cases, are bounded as the file's own are (a large 'defaults' times many cases)."""
    total = 0
    for item in items:
        total += item.size + sum(getattr(v, "size", 1) + 1 for k, v in defaults.items()
                                 if k not in item)
    if total > MAX_VALUES:
        raise CaseFileError(path, getattr(defaults, "line", None) or None,
                            f"with 'defaults' merged into each of its {len(items)} cases the "
                            f"file holds more than {MAX_VALUES:,} values")
