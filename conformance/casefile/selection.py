"""Which cases a run takes: the case files under the given paths, the cases whose id matches
a -k pattern, and the hash that names the case set selected."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable, Sequence
from fnmatch import translate
from functools import lru_cache
from pathlib import Path
from typing import Protocol

from conformance.casefile.errors import CaseFileError, collect
from conformance.casefile.model import Case

NO_SUCH_PATH = "no such file or folder"


class Identified(Protocol):
    """What selection and the case set's hash read of a case: a built Case, or an index entry
    (casefile.load.Indexed) of one not built yet."""

    @property
    def id(self) -> str: ...

    def digest(self) -> str: ...


def require_paths(paths: Iterable[str | Path]) -> None:
    """CaseFileError for the first path that does not exist: a mistyped --cases is a usage
    error, not a problem of a case file for load_cases to list and go past."""
    for p in map(Path, paths):
        if not p.exists():
            raise CaseFileError(p, None, NO_SUCH_PATH)


def case_files(paths: Iterable[str | Path],
               errors: list[CaseFileError] | None = None) -> list[Path]:
    """The .yaml/.yml files under the given files and folders, in a stable order (a folder
    named *.yaml is searched, not listed). A path that does not exist is an error (raised, or
    appended to errors and skipped). Nothing is opened here: load_file refuses what is not a
    regular file."""
    found: list[Path] = []
    for p in map(Path, paths):
        try:
            if p.is_dir():
                found += sorted(q for q in p.rglob("*")
                                if q.suffix in (".yaml", ".yml") and not q.is_dir())
            elif p.exists():
                found.append(p)
            else:
                collect(CaseFileError(p, None, NO_SUCH_PATH), errors)
        except OSError as exc:
            collect(CaseFileError(p, None, f"cannot read: {exc.strerror or exc}"), errors)
    return found


def case_set_hash(cases: Sequence[Identified]) -> str:
    """sha256 over the sorted ids and contents of the cases: names the exact case set run."""
    h = hashlib.sha256()
    for case in sorted(cases, key=lambda c: c.id):
        h.update(case.id.encode() + b"\0" + case.digest().encode() + b"\n")
    return h.hexdigest()


def select(cases: Sequence[Case], patterns: Sequence[str]) -> list[Case]:
    """Cases whose id matches any pattern: a glob if it has *?[, else a substring."""
    if not patterns:
        return list(cases)
    matches = id_matcher(tuple(patterns))
    return [c for c in cases if matches(c.id)]


@lru_cache(maxsize=256)
def id_matcher(patterns: tuple[str, ...]) -> Callable[[str], bool]:
    """Whether a case id matches any of these -k patterns, each a glob over the whole id if it
    has *?[, else a substring of it: the patterns compiled into one expression, one match per
    id however many patterns (a baseline entry may list hundreds)."""
    expression = re.compile("|".join(
        f"(?:{translate(p)})" if any(ch in p for ch in "*?[") else f"(?s:.*{re.escape(p)})"
        for p in patterns))
    return lambda case_id: expression.match(case_id) is not None


def id_matches(case_id: str, pattern: str) -> bool:
    """Whether a case id matches a -k pattern: a glob if it has *?[, else a substring."""
    return id_matcher((pattern,))(case_id)
