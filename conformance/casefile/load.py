"""Loading case files: a file read (a regular file only, within the size limit, UTF-8),
parsed (safe_yaml), checked against the schema and built into Cases, every problem a
CaseFileError at its file and line."""

from __future__ import annotations

import gc
import hashlib
import os
import stat
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from conformance.casefile import build as build_module
from conformance.casefile import cache
from conformance.casefile.errors import CaseFileError, collect, mib
from conformance.casefile.model import Case, canonical
from conformance.casefile.safe_yaml import MAX_FILE_BYTES, MAX_VALUES, LineDict, parse, plain
from conformance.casefile.schema_check import schema_error, validators
from conformance.casefile.selection import case_files, id_matcher


def load_cases(paths: Iterable[str | Path], errors: list[CaseFileError] | None = None,
               patterns: Sequence[str] = ()) -> list[Case]:
    """Every case under paths (only those whose id matches a -k pattern, when given: the
    others are not built), ids unique across them.

    errors None: the first problem raises its CaseFileError. A list: every problem is appended
    to it and loading goes on: a file that cannot be read, parsed or fails the file-level
    checks is skipped whole; a case that fails its checks, or whose id an earlier case has,
    is dropped alone and the file's other cases are kept."""
    return build_indexed(select(index(paths, errors), patterns), errors)


class Indexed(NamedTuple):
    """One case of a checked file, not built: what -k and --shard select from. Its id and
    digest() are the built Case's (selection.case_set_hash takes either)."""

    file: Checked
    position: int
    id: str
    sha256: str
    line: int

    def digest(self) -> str:
        return self.sha256


def index(paths: Iterable[str | Path],
          errors: list[CaseFileError] | None = None) -> list[Indexed]:
    """The cases under paths, checked (parsed and schema-checked, or found in the parse cache)
    but not built, ids unique across them (errors: as for load_cases)."""
    out: list[Indexed] = []
    seen: dict[str, Indexed] = {}
    for path in case_files(paths, errors):
        checked = check_file(path, errors)
        if checked is None:
            continue
        for position, (case_id, digest, line) in enumerate(checked.index):
            if case_id in seen:
                first = seen[case_id]
                collect(CaseFileError(path, line, f"case id {case_id!r} is already used at "
                                                  f"{first.file.path}:{first.line}"), errors)
                continue
            seen[case_id] = entry = Indexed(checked, position, case_id, digest, line)
            out.append(entry)
    return out


def select(entries: Sequence[Indexed], patterns: Sequence[str]) -> list[Indexed]:
    """The entries whose id matches any -k pattern (all of them with no pattern)."""
    if not patterns:
        return list(entries)
    matches = id_matcher(tuple(patterns))
    return [e for e in entries if matches(e.id)]


def build_indexed(entries: Iterable[Indexed], errors: list[CaseFileError] | None = None
          ) -> list[Case]:
    """The Cases of the entries, in their order (errors: as for load_cases: a case that fails
    its checks is dropped)."""
    cases: list[Case] = []
    budgets: dict[int, list[int]] = {}  # per file: its budget for telling missing sha256s
    enabled = gc.isenabled()
    gc.disable()  # see load_file
    try:
        for e in entries:
            hashing = budgets.setdefault(id(e.file), build_module.hash_budget())
            try:
                cases.append(e.file.case(e.position, hashing))
            except CaseFileError as exc:
                collect(exc, errors)
    finally:
        if enabled:
            gc.enable()
    return cases


class Checked:
    """A case file read, parsed and schema-checked (or its parse cache entry read), its cases
    not built: index holds (id, digest, line) of each case that passed its checks (digest: the
    sha256 of the case's canonical text, model.canonical), texts (parsed here, until the
    parse cache's entry is written) those texts."""

    def __init__(self, path: str | Path, data: bytes, index: list[tuple[str, str, int]],
                 items: list[tuple[LineDict, dict[str, Any]]] | None = None,
                 entry: cache.Entry | None = None) -> None:
        self.path, self.data, self.index = path, data, index
        self._items, self._entry = items, entry
        self.texts: list[bytes] = []

    def items(self) -> list[tuple[LineDict, dict[str, Any]]]:
        """(the case with its defaults merged in, its plain data), in the index's order."""
        if self._items is None:
            payload = self._entry.payload() if self._entry else None
            if payload is None:  # an entry not as written: parse the file afresh
                found: list[CaseFileError] = []
                fresh = _check_text(self.data.decode("utf-8"), self.path, found, self.data)
                if not found:
                    _store(fresh)
                if fresh.index != self.index:
                    raise CaseFileError(self.path, None, "its parse cache entry did not match "
                                        "it and has been written again: run again")
                self._items = fresh.items()
            else:  # (the lines of a cached case's keys are not kept: an error in it is
                # told again from the file's text, line for line: case())
                self._items = [(_line_dict(case, {}, line), case)
                               for case, (_, _, line) in zip(payload, self.index, strict=True)]
        return self._items

    def case(self, position: int, hashing: list[int]) -> Case:
        """The Case at position. A case from the cache that fails its checks is checked again
        from the file's text, for the exact line of its error (the cache keeps no key's
        line)."""
        item, raw = self.items()[position]
        try:
            return build_module.build_case(item, self.path, hashing, raw,
                                           self.index[position][1])
        except CaseFileError:
            if self._entry is None:
                raise
        fresh = _check_text(self.data.decode("utf-8"), self.path, [], self.data)
        item, raw = fresh.items()[position]
        return build_module.build_case(item, self.path, build_module.hash_budget(), raw)


def _line_dict(case: dict[str, Any], key_lines: dict[str, int], line: int) -> LineDict:
    item = LineDict(case)
    item.line, item.key_lines = line, key_lines
    return item


def load_file(path: str | Path, errors: list[CaseFileError] | None = None) -> list[Case]:
    """The cases of one file (errors: as for load_cases). Only a regular file is read: a FIFO,
    a device, a socket or a folder (or a symbolic link to one) is refused without opening it."""
    checked = check_file(path, errors)
    if checked is None:
        return []
    return build_indexed(_all(checked), errors)


def check_file(path: str | Path, errors: list[CaseFileError] | None = None) -> Checked | None:
    """A case file read and checked (parsed and schema-checked, or its parse cache entry
    read), or None when it cannot be (errors: as for load_cases)."""
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
        collect(CaseFileError(path, None, f"cannot read: {exc.strerror or exc}"), errors)
        return None
    if refused:
        collect(CaseFileError(path, None, refused), errors)
        return None
    if len(data) > MAX_FILE_BYTES:
        collect(CaseFileError(path, None, f"the file is larger than {mib(MAX_FILE_BYTES)}, "
                                          "the limit for a case file"), errors)
        return None
    k = cache.key(data)
    entry = cache.read(k)
    if entry is not None:
        return Checked(path, data, entry.index, entry=entry)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        collect(CaseFileError(path, line, f"not UTF-8 text: byte 0x{data[exc.start]:02x} "
                                          f"in column {column} ({exc.reason})"), errors)
        return None
    # Loading makes many small acyclic objects; the cyclic collector's passes over them cost
    # more than the loading itself, so it is paused meanwhile (nothing here makes cycles).
    enabled = gc.isenabled()
    gc.disable()
    try:
        found: list[CaseFileError] = []
        checked = _check_text(text, path, found, data)
    finally:
        if enabled:
            gc.enable()
    for error in found:
        collect(error, errors)
    if not found:  # errors are never cached: a file with any is checked afresh each time
        _store(checked, k)
    return checked


def _store(checked: Checked, k: str | None = None) -> None:
    """Write the parse cache entry of a file parsed and checked without an error."""
    cache.write(cache.key(checked.data) if k is None else k,
                [(*row, raw, text)
                 for row, (_, raw), text in zip(checked.index, checked.items(), checked.texts,
                                                strict=True)])
    checked.texts = []  # written: not held for the run


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
    """The cases of a case file's text; path names it in errors (errors: as for load_cases).
    Not cached: the parse cache is keyed by a file's bytes (load_file)."""
    found: list[CaseFileError] = []
    checked = _check_text(text, path, found, None, stop=errors is None)
    for error in found:
        collect(error, errors)
    return build_indexed(_all(checked), errors)


def _check_text(text: str, path: str | Path, found: list[CaseFileError], data: bytes | None,
                stop: bool = False) -> Checked:
    """Parse and schema-check a case file's text: its problems appended to found (stop: from
    the first one on, nothing more is checked), the cases that pass in the Checked."""
    checked = Checked(path, data or b"", [], [])
    items = checked._items
    assert items is not None
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
        found.append(exc)
        return checked
    for i, item in enumerate(doc["cases"]):
        merged = LineDict({**defaults, **item})
        merged.line = item.line
        merged.key_lines = {**{k: defaults.key_lines[k] for k in defaults}, **item.key_lines}
        error = schema_error(case_validator, merged, path, ("cases", i))
        if error:
            found.append(error)
            if stop:
                return checked
            continue
        raw = plain(merged)
        canonical_text = canonical(raw)
        checked.index.append((merged["id"], hashlib.sha256(canonical_text).hexdigest(),
                              merged.line))
        checked.texts.append(canonical_text)
        items.append((merged, raw))
    return checked


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


def _all(checked: Checked) -> list[Indexed]:
    return [Indexed(checked, i, *row) for i, row in enumerate(checked.index)]
