"""The results file (docs/results-format.md): the one place a results document is made, written
and read back. Every reader in the suite (report, compare, merge, the DirectML baseline script)
reads through read(), which is strict about the format:

- the file is UTF-8 JSON whose top level is an object;
- `format` is exactly FORMAT (another version of it is refused by name: its layout differs);
- every field a results document has held since FORMAT began is there, and every documented
  field that is there has its documented type (the fields added since, such as
  `execution_flags` or `load_errors`, may be missing: older documents lack them);
- every result has an `id` (text) and a known `status`, and every field of a result that is
  there has its documented type.

Fields the format does not document are kept (a later suite may add some). A file that breaks a
rule raises ResultsFileError, one line naming the file and the first thing wrong with it.
"""

from __future__ import annotations

import json
import lzma
import os
import platform
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from conformance import __version__
from conformance.levels import FeatureLevel
from conformance.results import mustpass
from conformance.results.document import (
    BaselineSummary,
    Execution,
    LoadError,
    MergedExecution,
    ResultsDocument,
    Shard,
)
from conformance.results.model import STATUSES, Result, sanitise, summary
from conformance.results.scope import Scope
from conformance.results.verdicts import diagnoses, verdicts

FORMAT = "dml-conformance-results/1"

#: What `format` starts with in every version of the results format.
FORMAT_NAME = FORMAT.rsplit("/", 1)[0] + "/"


class ResultsFileError(ValueError):
    """A file that is not a results document this suite reads. str(): 'PATH: what is wrong',
    one line."""


def platform_info() -> dict[str, str]:
    return {
        "system": platform.system(),
        "release": platform.release(),
        "machine": platform.machine(),
        "python": sys.version.split()[0],
        "numpy": np.__version__,
    }


def document(results: list[Result], *, backend: dict[str, Any], case_set_sha256: str,
             claimed: FeatureLevel, started_at: str, finished_at: str, duration_s: float,
             command: str, case_paths: list[str],
             baseline: BaselineSummary | None = None,
             load_errors: list[LoadError] | None = None,
             execution: Execution | MergedExecution | None = None,
             shard: Shard | None = None,
             execution_flags: list[str] | None = None,
             scope: Scope | None = None) -> ResultsDocument:
    """The results document. load_errors: case files (or cases) that could not be loaded: a
    run with any is incomplete ("complete": false) and exits 1. execution: how the cases were
    run (workers, isolation, limits). shard: for one shard of a sharded run (`dmlconf merge`
    joins the shards). execution_flags: the DML_EXECUTION_FLAGS by name ([]: NONE). scope: a
    scoped claim (results.scope), which the verdict judges the cases of.
    "diagnoses" counts the FAILs each misreading of the catalogue was recognised in. Its text
    is sanitised (safe_text) like the results': the backend's capabilities, the command, paths
    and load errors may hold anything."""
    doc = sanitise({
        "format": FORMAT,
        "suite_version": __version__,
        "case_set_sha256": case_set_sha256,
        "case_paths": case_paths,
        "command": command,
        "backend": backend,
        "feature_level": str(claimed),
        "scope": None if scope is None else scope.to_json(),
        "execution_flags": list(execution_flags or []),
        "platform": platform_info(),
        "started_at": started_at,
        "finished_at": finished_at,
        "duration_s": round(duration_s, 3),
        "summary": summary(results),
        "ambiguous": summary([r for r in results if r.ambiguous]),
        "verdict": {level: v.to_json() for level, v in verdicts(results, claimed,
                                                                   scope=scope).items()},
        "mustpass": {"suite_version": mustpass.committed().suite_version,
                     "case_set_sha256": mustpass.committed().case_set_sha256},
        "diagnoses": diagnoses(results),
        "baseline": None if baseline is None else baseline.to_json(),
        "complete": not load_errors,
        "load_errors": [e.to_json() for e in load_errors or []],
        "execution": None if execution is None else execution.to_json(),
        "shard": None if shard is None else shard.to_json(),
    })
    doc["results"] = results  # sanitised when they were made
    return ResultsDocument.from_json(doc)


def write(doc: ResultsDocument, path: str | Path) -> None:
    """Atomically: the old file or the new one is there, never a partial one. Streamed: each
    top-level field on a line of its own, then one result per line (a compatible layout:
    any JSON reader reads it whole; docs/profile.md), so the whole document is never held
    as one indented text. A document read writes back as it was read (ResultsDocument)."""
    write_atomic(_lines(doc.to_json()), path)


def _lines(doc: dict[str, Any]) -> Iterable[str]:
    """The results document as JSON text, a line at a time (json.loads reads it whole)."""
    fields = [(k, v) for k, v in doc.items() if k != "results"]
    yield "{"
    for i, (k, v) in enumerate(fields):
        yield ("" if i == 0 else ",") + f"\n{json.dumps(k)}: {json.dumps(v)}"
    if "results" in doc:
        yield (",\n" if fields else "\n") + '"results": ['
        for i, r in enumerate(doc["results"]):
            yield ("\n" if i == 0 else ",\n") + json.dumps(r)
        yield "\n]"
    yield "\n}\n"


def write_atomic(text: str | Iterable[str], path: str | Path) -> None:
    """Write PATH.tmp (text, or its pieces one after the other), flush it to the disk, and
    rename it over PATH (atomic on POSIX and Windows): a crash, an error making a piece or
    Ctrl-C at any moment leaves the old file or the new one, whole. Missing parent folders are
    created."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            if isinstance(text, str):
                f.write(text)
            else:
                f.writelines(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


# -- reading ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Type:
    """A type of the format: its name in a message, the test of a value, and for a container
    (a list, or an object of values) the type of each element."""

    name: str
    test: Callable[[Any], bool]
    each: Type | None = None
    null: bool = False  # null is allowed too

    def or_null(self) -> Type:
        return replace(self, name=f"{self.name} or null", null=True)


TEXT = Type("text", lambda v: isinstance(v, str))
NUMBER = Type("a number", lambda v: isinstance(v, (int, float)) and not isinstance(v, bool))
COUNT = Type("a count (a whole number, 0 or more)",
             lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 0)
BOOLEAN = Type("true or false", lambda v: isinstance(v, bool))
OBJECT = Type("an object", lambda v: isinstance(v, dict))
LIST = Type("a list", lambda v: isinstance(v, list))
TEXTS = Type("a list of text", LIST.test, TEXT)
OBJECTS = Type("a list of objects", LIST.test, OBJECT)
COUNTS = Type("an object of counts", OBJECT.test, COUNT)
LEVELS = Type("an object of one object per feature level", OBJECT.test, OBJECT)

#: The top-level fields every results document has held since FORMAT began, with their types.
REQUIRED = {"suite_version": TEXT, "case_set_sha256": TEXT, "case_paths": TEXTS,
            "command": TEXT, "backend": OBJECT, "feature_level": TEXT, "platform": OBJECT,
            "started_at": TEXT, "finished_at": TEXT, "duration_s": NUMBER, "summary": COUNTS,
            "ambiguous": COUNTS, "verdict": LEVELS, "results": LIST}
#: The top-level fields added since, which older documents lack, with their types.
OPTIONAL = {"execution_flags": TEXTS, "diagnoses": OBJECT, "baseline": OBJECT.or_null(),
            "complete": BOOLEAN, "load_errors": OBJECTS, "execution": OBJECT.or_null(),
            "shard": OBJECT.or_null(), "mustpass": OBJECT.or_null()}
#: The fields of one result (Result.to_json()) and their types: `id` and `status` (one of
#: STATUSES) are required, the others are checked where present (older documents lack the
#: newer ones).
RESULT = {"id": TEXT, "status": TEXT, "message": TEXT, "duration_s": NUMBER,
          "operators": TEXTS, "data_types": TEXTS, "feature_level": TEXT,
          "feature_level_below": TEXT.or_null(), "tags": TEXTS, "spec": OBJECTS,
          "ambiguous": TEXT.or_null(), "info": TEXTS, "mismatches": OBJECTS, "grids": OBJECTS,
          "heat_maps": OBJECTS,
          "crash": OBJECT.or_null(), "margin": NUMBER.or_null(),
          "diagnosis": OBJECT.or_null(), "waiver": OBJECT.or_null()}


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _kind(value: Any) -> str:
    """What a JSON value is, in the words of the types above."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return str(value).lower()
    return next((t.name for t in (TEXT, NUMBER, OBJECT, LIST) if t.test(value)),
                type(value).__name__)


def _type_problem(where: str, value: Any, t: Type) -> str | None:
    """Where `value` (at `where`, e.g. results[3].margin) is not of type t, in words."""
    if value is None and t.null:
        return None
    if not t.test(value):
        return f"{where} is {_kind(value)}, not {t.name}"
    if t.each is not None:
        items = value.items() if isinstance(value, dict) else enumerate(value)
        for key, item in items:
            wrong = _type_problem(f"{where}.{key}" if isinstance(value, dict)
                                  else f"{where}[{key}]", item, t.each)
            if wrong:
                return wrong
    return None


def _fields_problem(record: dict[str, Any], types: dict[str, Type], required: Iterable[str],
                    prefix: str = "") -> str | None:
    for key in required:
        if key not in record:
            return f"{prefix}{key} is missing"
    for key, t in types.items():
        if key in record:
            wrong = _type_problem(f"{prefix}{key}", record[key], t)
            if wrong:
                return wrong
    return None


def problem(doc: Any) -> str | None:
    """The first thing that keeps `doc` (parsed JSON) from being a results document of FORMAT
    (the module's docstring gives the rules), in words; None when it is one."""
    if not isinstance(doc, dict):
        return f"the top level is {_kind(doc)}, not an object"
    if "format" not in doc:
        return "format is missing"
    name = doc["format"]
    if name != FORMAT:
        if isinstance(name, str) and name.startswith(FORMAT_NAME):
            return f"format {_shown(name)} is a version this suite does not read"
        return f"format is {_shown(name)}"
    wrong = _fields_problem(doc, {**REQUIRED, **OPTIONAL}, REQUIRED)
    if wrong:
        return wrong
    for key in ("summary", "ambiguous"):
        unknown = [k for k in doc[key] if k not in STATUSES]
        if unknown:
            return f"{key} counts {_shown(unknown[0])}, which is no status"
    for i, r in enumerate(doc["results"]):
        wrong = result_problem(r, f"results[{i}].")
        if wrong:
            return wrong
    return None


def result_problem(record: Any, where: str = "") -> str | None:
    """The first thing that keeps `record` from being one result of the format (a Result's
    to_json()), in words (field names after `where`); None when it is one."""
    if not isinstance(record, dict):
        return f"{where.rstrip('.') or 'the result'} is {_kind(record)}, not an object"
    wrong = _fields_problem(record, RESULT, ("id", "status"), where)
    if wrong is None and record["status"] not in STATUSES:
        wrong = (f"{where}status is {_shown(record['status'])}, none of "
                 f"{', '.join(STATUSES)}")
    if wrong and isinstance(record.get("id"), str) and not wrong.startswith(f"{where}id "):
        wrong += f" (case {_shown(record['id'])})"
    return wrong


#: The most bytes an .xz results file may unpack to (a whole-suite run is some tens of MiB).
MAX_UNPACKED = 1 << 30


def read(path: str | Path) -> ResultsDocument:
    """The results document of a results file (xz-compressed where its name ends in .xz),
    checked against the format (module docstring)
    and sanitised (safe_text: an old or hand-made file follows the rule results are written
    by). ResultsFileError, one line naming the file and what is wrong, when it is not one.
    Written back (write), it gives the same JSON: the fields it lacks are left out, those the
    format does not document kept (ResultsDocument.to_json)."""
    try:
        data = Path(path).read_bytes()
        if str(path).endswith(".xz"):  # a committed record (docs/gpu/*.json.xz)
            unpack = lzma.LZMADecompressor()
            data = unpack.decompress(data, max_length=MAX_UNPACKED)
            if not unpack.eof:
                raise ResultsFileError(f"{path}: not a results document: it unpacks to more "
                                       f"than {MAX_UNPACKED >> 20} MiB, or is cut short")
    except OSError as exc:
        raise ResultsFileError(f"{path}: cannot read the results file: "
                               f"{exc.strerror or exc}") from None
    except lzma.LZMAError as exc:
        raise ResultsFileError(f"{path}: not a results document: not xz data ({exc})") from None
    try:
        doc = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ResultsFileError(f"{path}: not a results document: not UTF-8 text (byte "
                               f"0x{data[exc.start]:02x} at offset {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise ResultsFileError(f"{path}: not a results document: not JSON ({exc})") from None
    except RecursionError:
        raise ResultsFileError(f"{path}: not a results document: its JSON is nested too "
                               "deeply to read") from None
    wrong = problem(doc)
    if wrong:
        raise ResultsFileError(f"{path}: not a dmlconf results document ({FORMAT}, "
                               f"docs/results-format.md): {wrong}")
    # the results are sanitised as they are made (Result)
    return ResultsDocument.from_json({sanitise(k): v if k == "results" else sanitise(v)
                                      for k, v in doc.items()})
