"""Case files: the YAML format (docs/case-format.md, schema in conformance/schema/), loading with
file:line errors, and the Case model the runner consumes.

Loading never raises anything but CaseFileError, whose text is 'file:line: what is wrong'.
YAML is read with a SafeLoader subclass (safe_load's loader, plus line numbers).
"""

from __future__ import annotations

import gc
import hashlib
import json
import math
import os
import stat
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import fastjsonschema
import jsonschema
import numpy as np
import yaml

from conformance import inputs as sources
from conformance import ops
from conformance.levels import FeatureLevel
from conformance.ops import OperatorCall
from conformance.spec import PAGES, Citation
from conformance.tensors import TensorDesc

SINGLE = "call"  # the name of the one call of a single-call case


class CaseFileError(Exception):
    """A malformed case file. str() is 'file:line: message'."""

    def __init__(self, path: str | Path, line: int | None, message: str) -> None:
        self.path, self.line, self.message = str(path), line, message
        super().__init__(f"{path}:{line}: {message}" if line else f"{path}: {message}")


# -- YAML with line numbers ---------------------------------------------------------------------
#: Limits on what a case file may ask of the loader (docs/case-format.md, "Limits").
MAX_FILE_BYTES = 64 << 20  # refused before parsing
MAX_DEPTH = 64  # nesting of mappings and lists
MAX_VALUES = 4_000_000  # values with aliases expanded and defaults merged into each case
MAX_INT_BITS = 13_000  # about 3,900 decimal digits

_TAG = "tag:yaml.org,2002:"
_STR, _INT, _FLOAT, _BOOL, _NULL, _MERGE = (
    _TAG + t for t in ("str", "int", "float", "bool", "null", "merge"))
#: The explicit tags a case file may use: plain data only.
_ALLOWED_TAGS = {_TAG + t for t in ("str", "int", "float", "bool", "null", "seq", "map")}
_IMPLICIT = yaml.resolver.Resolver.yaml_implicit_resolvers
_Parser = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml's parser when present
_SCALARS = yaml.constructor.SafeConstructor()


class _LineDict(dict):
    line: int = 0
    size: int = 1  # values inside, aliases expanded, itself included
    key_lines: dict

class _LineList(list):
    line: int = 0
    size: int = 1


class _RefusedError(Exception):
    """A YAML document that is no plain case data, at a line."""

    def __init__(self, line: int | None, message: str) -> None:
        super().__init__(message)
        self.line, self.message = line, message


def _refused(event: Any, message: str) -> _RefusedError:
    return _RefusedError(event.start_mark.line + 1, message)


def _show_tag(tag: str) -> str:
    return "!!" + tag[len(_TAG):] if tag.startswith(_TAG) else tag


def _tag_refused(event: Any, tag: str) -> _RefusedError:
    return _refused(event, f"YAML tag {_show_tag(tag)} is not allowed: case files hold plain data")


def _scalar(event: Any) -> Any:
    """The value of a scalar event, resolved and constructed as PyYAML's safe loader does;
    explicit tags other than the plain-data ones are refused."""
    value, tag = event.value, event.tag
    if tag is None or tag == "!":
        if not event.implicit[0]:
            return value
        for t, regexp in _IMPLICIT.get(value[:1], ()):
            if regexp.match(value):
                tag = t
                break
        else:
            return value
    elif tag not in _ALLOWED_TAGS:
        raise _tag_refused(event, tag)
    if tag == _STR or tag == _MERGE:  # '<<' as a value is the text; as a key, see _compose
        return value
    if tag == _INT and value.isdigit() and value.isascii() and (value[0] != "0" or value == "0"):
        if len(value) > MAX_INT_BITS // 4:
            raise _refused(event, f"the integer {value[:20]}... has too many digits")
        return int(value)
    construct = _SCALARS.yaml_constructors.get(tag)
    if construct is None:  # the implicit 'value' ('=') and 'yaml' tags: plain text here
        return value
    try:
        out = construct(_SCALARS, yaml.ScalarNode(tag, value))
    except (ValueError, KeyError, OverflowError, TypeError) as exc:
        raise _refused(event, f"{_short(repr(value))} is not a valid {_show_tag(tag)}: "
                       f"{_short(str(exc))}") from None
    if isinstance(out, int) and not isinstance(out, bool) and out.bit_length() > MAX_INT_BITS:
        raise _refused(event, f"the integer {value[:20]}... is too large")
    return out


def _parse_yaml(text: str) -> Any:
    """The one YAML document of text as _LineDict, _LineList and scalars, built from the parser's
    events without recursion: nesting, alias expansion and tags are checked on the way."""
    parser = _Parser(text)
    try:
        return _compose(parser.get_event)
    finally:
        parser.dispose()


_NO_KEY, _MERGE_KEY = object(), object()


def _compose(get_event: Any) -> Any:
    """The document of a stream of parser events. Each value counts once for every time it is
    used (an alias counts the whole value it names), so that what later walks the document is
    bounded by MAX_VALUES however the aliases nest."""
    events = yaml.events
    scalar_event, alias_event = events.ScalarEvent, events.AliasEvent
    mapping_start, sequence_start = events.MappingStartEvent, events.SequenceStartEvent
    mapping_end, sequence_end = events.MappingEndEvent, events.SequenceEndEvent
    anchors: dict[str, tuple[Any, int]] = {}
    # one entry per open collection: [container, is_mapping, the key whose value comes next
    # (_NO_KEY: a key comes next; _MERGE_KEY: '<<'), merges, total before it, anchor]
    stack: list[list[Any]] = []
    total = 0
    documents = 0
    root: Any = None
    while True:
        event = get_event()
        kind = event.__class__
        if kind is scalar_event:
            value = _scalar(event)
            total += 1
            if event.anchor is not None:
                anchors[event.anchor] = (value, 1)
        elif kind is mapping_start or kind is sequence_start:
            if event.tag is not None and event.tag != "!" and event.tag not in _ALLOWED_TAGS:
                raise _tag_refused(event, event.tag)
            if len(stack) >= MAX_DEPTH:
                raise _refused(event, f"mappings and lists are nested more than {MAX_DEPTH} "
                               "deep, the limit for a case file")
            if kind is mapping_start:
                container: Any = _LineDict()
                container.key_lines = {}
            else:
                container = _LineList()
            container.line = event.start_mark.line + 1
            total += 1
            stack.append([container, kind is mapping_start, _NO_KEY, None, total, event.anchor])
            continue
        elif kind is mapping_end or kind is sequence_end:
            container, _, _, merges, before, anchor = stack.pop()
            if merges:
                container = _merged(container, merges)
            value = container
            container.size = total - before + 1
            if anchor is not None:
                anchors[anchor] = (value, container.size)
        elif kind is alias_event:
            try:
                value, size = anchors[event.anchor]
            except KeyError:
                raise _refused(event, f"alias *{event.anchor} names no anchor defined before it "
                               "(an anchor's own value cannot use it)") from None
            total += size
        elif kind is events.DocumentStartEvent:
            documents += 1
            if documents > 1:
                raise _refused(event, "a second YAML document (after '---' or '...'): a case "
                               "file holds one document")
            continue
        elif kind is events.StreamEndEvent:
            return root
        else:  # the stream's start, a document's end
            continue
        if total > MAX_VALUES:
            raise _refused(event, f"the file holds more than {MAX_VALUES:,} values, the limit "
                           "for a case file (an alias counts the values it repeats)")
        if not stack:
            root = value
            continue
        top = stack[-1]
        container = top[0]
        if not top[1]:
            container.append(value)
        elif top[2] is _NO_KEY:
            if not isinstance(value, str):
                raise _refused(event, _key_problem(value))
            if value == "<<" and kind is scalar_event and event.tag is None and (
                    event.implicit[0]):
                top[2] = _MERGE_KEY
            else:
                if value in container:
                    raise _refused(event, f"duplicate key {_short(repr(value))}")
                container.key_lines[value] = event.start_mark.line + 1
                top[2] = value
        elif top[2] is _MERGE_KEY:
            top[3] = [*(top[3] or ()), (value, event.start_mark.line + 1)]
            top[2] = _NO_KEY
        else:
            container[top[2]] = value
            top[2] = _NO_KEY


def _key_problem(key: Any) -> str:
    if isinstance(key, (dict, list)):
        return "a mapping key must be a plain value"
    what = ("a boolean" if isinstance(key, bool) else "a number" if isinstance(key, (int, float))
            else "null" if key is None else f"a {type(key).__name__}")
    return f"the key {_short(repr(key))} is not a string (YAML reads it as {what}): quote it"


def _merged(own: _LineDict, merges: list[tuple[Any, int]]) -> _LineDict:
    """A mapping with '<<' merge keys: the merged mappings' keys first (of a list of them, the
    earlier one wins), then the mapping's own keys, which win over all merged ones."""
    out = _LineDict()
    out.line, out.key_lines = own.line, {}
    for value, line in merges:
        parts = value if isinstance(value, list) else [value]
        for part in reversed(parts):
            if not isinstance(part, dict):
                raise _RefusedError(line, "'<<' merges a mapping or a list of mappings, not "
                                    f"{_short(repr(part))}")
            out.update(part)
            out.key_lines.update(part.key_lines)
    out.update(own)
    out.key_lines.update(own.key_lines)
    return out


def _line_of(root: Any, path: Sequence[Any]) -> int | None:
    """The line of the deepest element of root reachable along path: the line of its key in a
    mapping (not of a block value below the key), the line where it starts in a list."""
    line = getattr(root, "line", None)
    node = root
    for key in path:
        if isinstance(node, dict) and key in node:
            line = node.key_lines.get(key, line) if hasattr(node, "key_lines") else line
            node = node[key]
        elif isinstance(node, list) and isinstance(key, int) and key < len(node):
            node = node[key]
            line = getattr(node, "line", line)
        else:
            break
    return line


def _plain(obj: Any) -> Any:
    """Strip line annotations: plain dicts and lists (for hashing and showing)."""
    if isinstance(obj, dict):
        return {k: _plain(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_plain(v) for v in obj]
    return obj


@cache
def schema() -> dict[str, Any]:
    text = resources.files("conformance").joinpath("schema/case.schema.json").read_text()
    return json.loads(text)


class _Validator:
    """A schema check with a fast path: fastjsonschema's compiled check (draft-07 form of the
    same schema) decides; only a document that fails it goes through jsonschema, whose
    best_match gives the message and the path."""

    def __init__(self, schema_doc: dict[str, Any]) -> None:
        self.full = jsonschema.Draft202012Validator(schema_doc)
        draft7 = json.loads(json.dumps(schema_doc).replace('"#/$defs/', '"#/definitions/'))
        draft7["definitions"] = draft7.pop("$defs")
        draft7["$schema"] = "http://json-schema.org/draft-07/schema#"
        draft7.pop("$id", None)
        self.fast = fastjsonschema.compile(draft7)

    def errors(self, instance: Any) -> list[jsonschema.ValidationError]:
        try:
            self.fast(instance)
        except fastjsonschema.JsonSchemaException:
            return list(self.full.iter_errors(instance))
        return []


@cache
def _validators() -> tuple[_Validator, _Validator]:
    """The file-level validator, and the one for a case with its defaults merged in."""
    whole = schema()
    case = {"$schema": whole["$schema"], "$defs": whole["$defs"], "$ref": "#/$defs/case"}
    return _Validator(whole), _Validator(case)


def _schema_error(validator: _Validator, doc: Any, path: str | Path,
                  prefix: Sequence[Any] = ()) -> CaseFileError | None:
    try:
        errors = validator.errors(_plain(doc))
        if not errors:
            return None
        err = jsonschema.exceptions.best_match(errors)
        message = _schema_message(err)
    except RecursionError:  # MAX_DEPTH keeps documents far from this
        return CaseFileError(path, getattr(doc, "line", None), f"{'/'.join(map(str, prefix))}: "
                             "nested too deeply to check against the schema")
    where = "/".join(str(p) for p in [*prefix, *err.absolute_path]) or "(top)"
    at = [*err.absolute_path, *_unknown_keys(err)[:1]]  # an unknown key: its own line
    return CaseFileError(path, _line_of(doc, at), f"{where}: {_short(message)}")


def _unknown_keys(err: jsonschema.ValidationError) -> list[Any]:
    """The keys an 'additionalProperties: false' error is about."""
    if err.validator != "additionalProperties" or err.validator_value is not False or (
            not isinstance(err.instance, dict)):
        return []
    known = err.schema.get("properties", {})
    return [k for k in err.instance if k not in known]


# -- the model ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Source:
    """Where an input tensor's bytes come from. kind: values, bits, buffer, iota, constant,
    random or from (another call's tensor, 'name.Tensor')."""

    kind: str
    params: Any
    sha256: str | None = None
    take: Take | None = None  # for 'from': the elements taken along one axis, in order


@dataclass(frozen=True)
class Take:
    """numpy.take(values, indices, axis): a permutation or selection along one dimension."""

    axis: int
    indices: tuple[int, ...]

    def apply(self, values: np.ndarray) -> np.ndarray:
        return np.take(values, list(self.indices), axis=self.axis)

    def shape(self, sizes: Sequence[int]) -> tuple[int, ...]:
        out = list(sizes)
        out[self.axis] = len(self.indices)
        return tuple(out)


@dataclass(frozen=True)
class Relation:
    """left == right (after right.take, if any), bit for bit, on the backend's own tensors."""

    left: str
    right: str
    why: str = ""
    take: Take | None = None


@dataclass(frozen=True)
class Expectation:
    """What one output must hold: kind 'reference', 'values' or 'bits' (with an optional ulp
    tolerance for inline float values)."""

    kind: str
    data: Any = None
    ulp: float | None = None
    model: bool = False  # judge the inline values with the operator's own tolerance model


@dataclass(frozen=True)
class NamedCall:
    name: str
    call: OperatorCall


@dataclass(frozen=True)
class Case:
    id: str
    feature_level: FeatureLevel
    spec: tuple[Citation, ...]
    calls: tuple[NamedCall, ...]
    inputs: dict[str, Source]  # "call.Tensor" -> source
    expected: dict[str, Expectation] | None  # None: the desc must be rejected
    relations: tuple[Relation, ...] = ()
    layout: dict[str, Any] = field(default_factory=dict)
    feature_level_below: FeatureLevel | None = None
    tags: tuple[str, ...] = ()
    description: str = ""
    ambiguous: str | None = None
    file: str = ""
    line: int = 0
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def rejected(self) -> bool:
        return self.expected is None

    @property
    def operators(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(c.call.operator for c in self.calls))

    def call(self, name: str) -> OperatorCall:
        for c in self.calls:
            if c.name == name:
                return c.call
        raise KeyError(name)

    def desc(self, ref: str) -> TensorDesc:
        name, tensor = ref.split(".", 1)
        return self.call(name).tensors[tensor]

    def show_ref(self, ref: str) -> str:
        """'call.OutputTensor' -> 'OutputTensor' in a single-call case."""
        return ref.split(".", 1)[1] if len(self.calls) == 1 else ref

    def digest(self) -> str:
        return hashlib.sha256(json.dumps(self.raw, sort_keys=True).encode()).hexdigest()


# -- loading --------------------------------------------------------------------------------------
NO_SUCH_PATH = "no such file or folder"


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
                _fail(CaseFileError(p, None, NO_SUCH_PATH), errors)
        except OSError as exc:
            _fail(CaseFileError(p, None, f"cannot read: {exc.strerror or exc}"), errors)
    return found


def _fail(error: CaseFileError, errors: list[CaseFileError] | None) -> list[Case]:
    """Raise error, or with a list to collect into, append it and go on (with no cases)."""
    if errors is None:
        raise error
    errors.append(error)
    return []


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
                _fail(CaseFileError(path, case.line, f"case id {case.id!r} is already used at "
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
        return _fail(CaseFileError(path, None, f"cannot read: {exc.strerror or exc}"), errors)
    if refused:
        return _fail(CaseFileError(path, None, refused), errors)
    if len(data) > MAX_FILE_BYTES:
        return _fail(CaseFileError(path, None, f"the file is larger than {_mib(MAX_FILE_BYTES)}, "
                                               "the limit for a case file"), errors)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        return _fail(CaseFileError(path, line, f"not UTF-8 text: byte 0x{data[exc.start]:02x} "
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


def _mib(n: int) -> str:
    return f"{n >> 20} MiB"


#: In a message, a value shown from the file is cut to this many characters.
_SHOWN = 200


def _short(text: str) -> str:
    return text if len(text) <= _SHOWN else text[:_SHOWN] + " ..."


def _parse(text: str, path: str | Path) -> Any:
    """The YAML document of text; CaseFileError for anything that is no plain YAML data."""
    if len(text) > MAX_FILE_BYTES:
        raise CaseFileError(path, None, f"the text is larger than {_mib(MAX_FILE_BYTES)}, the "
                                        "limit for a case file")
    try:
        return _parse_yaml(text)
    except _RefusedError as exc:
        raise CaseFileError(path, exc.line, exc.message) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else None
        raise CaseFileError(path, line, f"not valid YAML: {exc.problem or exc}") from None
    except yaml.reader.ReaderError as exc:
        character = exc.character
        shown = f"#x{character:04x}" if isinstance(character, int) else repr(character)
        raise CaseFileError(path, _line_at(text, exc.position), f"not valid YAML: character "
                            f"{shown} is not allowed ({exc.reason})") from None
    except yaml.YAMLError as exc:
        raise CaseFileError(path, None, f"not valid YAML: {_short(str(exc))}") from None
    except UnicodeError as exc:  # a str that is no text (a lone surrogate)
        raise CaseFileError(path, _line_at(text, getattr(exc, "start", None)),
                            f"not valid text: {exc.reason if hasattr(exc, 'reason') else exc}"
                            ) from None


def _line_at(text: str, position: int | None) -> int | None:
    """The line of a character position of text (libyaml counts UTF-8 bytes: close enough)."""
    if not isinstance(position, int) or position < 0:
        return None
    return text.count("\n", 0, position) + 1


def load_text(text: str, path: str | Path = "<text>",
              errors: list[CaseFileError] | None = None) -> list[Case]:
    """The cases of a case file's text; path names it in errors (errors: as for load_cases)."""
    try:
        doc = _parse(text, path)
        if not isinstance(doc, dict):
            raise CaseFileError(path, getattr(doc, "line", 1),
                                "a case file is a mapping with a 'cases' list")
        file_validator, case_validator = _validators()
        error = _schema_error(file_validator, doc, path)
        if error:
            raise error
        defaults = doc.get("defaults", _LineDict())
        _check_work(doc["cases"], defaults, path)
    except CaseFileError as exc:
        return _fail(exc, errors)
    cases = []
    hashing = [MAX_HASHED_BYTES]  # the file's budget for telling missing sha256s
    for i, item in enumerate(doc["cases"]):
        try:
            merged = _LineDict({**defaults, **item})
            merged.line = item.line
            merged.key_lines = {**{k: defaults.key_lines[k] for k in defaults}, **item.key_lines}
            error = _schema_error(case_validator, merged, path, ("cases", i))
            if error:
                raise error
            cases.append(_build_checked(merged, path, hashing))
        except CaseFileError as exc:
            _fail(exc, errors)
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


#: The words of an error that a check let escape (a loader bug: the fuzz tests look for them).
UNEXPECTED = "could not be checked (a loader bug; please report it)"


def _build_checked(item: _LineDict, path: str | Path, hashing: list[int]) -> Case:
    """_build, whose failures are all CaseFileErrors that name the case."""
    try:
        return _build(item, path, hashing)
    except CaseFileError:
        raise
    except (ArithmeticError, LookupError, TypeError, ValueError, MemoryError,
            RecursionError) as exc:
        raise CaseFileError(path, item.line, f"case {item['id']}: {UNEXPECTED}: "
                                             f"{type(exc).__name__}: {_short(str(exc))}"
                            ) from None


def _schema_message(err: jsonschema.ValidationError) -> str:
    if err.validator == "oneOf" and isinstance(err.instance, dict):
        keys = ", ".join(sorted(err.instance)) or "nothing"
        return f"this combination of keys ({keys}) is not one of the allowed forms"
    unknown = _unknown_keys(err)
    if unknown:
        return (f"unknown key{'s' if len(unknown) > 1 else ''} "
                f"{', '.join(repr(k) for k in unknown)}; allowed here: "
                f"{', '.join(err.schema.get('properties', {})) or 'none'}")
    return err.message


def _build(item: _LineDict, path: str | Path, hashing: list[int]) -> Case:
    """The Case of a merged case mapping. hashing: [bytes of generated values the loader may
    still make, in this file, to tell a missing sha256], charged."""

    def fail(message: str, *keys: Any) -> CaseFileError:
        return CaseFileError(path, _line_of(item, list(keys)), f"case {item['id']}: {message}")

    levels: dict[str, FeatureLevel | None] = {}
    for key in ("feature_level", "feature_level_below"):
        try:
            levels[key] = FeatureLevel.parse(item[key]) if key in item else None
        except ValueError as exc:
            raise fail(str(exc), key) from None
    level, below = levels["feature_level"], levels["feature_level_below"]
    cites = item["spec"] if isinstance(item["spec"], list) else [item["spec"]]
    for i, c in enumerate(cites):
        if c["page"] not in PAGES:
            raise fail(f"unknown spec page {c['page']!r}; known: {', '.join(PAGES)}", "spec", i)
    spec = tuple(Citation(c["page"], c.get("section", "")) for c in cites)

    raw_calls = item["calls"] if "calls" in item else [
        {"name": SINGLE, **{k: item[k] for k in ("operator", "attributes", "tensors")}}]
    calls: list[NamedCall] = []
    for i, rc in enumerate(raw_calls):
        keys = ("calls", i) if "calls" in item else ()
        name = rc.get("name", f"c{i}")
        if any(c.name == name for c in calls):
            raise fail(f"two calls are named {name!r}", *keys)
        try:
            op = ops.get(rc["operator"])
        except KeyError as exc:
            raise fail(exc.args[0], *keys, "operator") from None
        try:
            descs = {n: TensorDesc.from_json(d) for n, d in rc["tensors"].items()}
            call = op.make_call(descs, rc["attributes"])
        except (ValueError, OverflowError, TypeError) as exc:  # OverflowError: 1e400 as FLOAT
            raise fail(_short(str(exc)), *keys, "attributes") from None
        calls.append(NamedCall(name, call))

    case = Case(id=item["id"], feature_level=level, spec=spec, calls=tuple(calls), inputs={},
                expected=None, feature_level_below=below, tags=tuple(item.get("tags", ())),
                description=item.get("description", ""), ambiguous=item.get("ambiguous"),
                file=str(path), line=item.line, raw=_plain(item))

    def ref(text: str, *keys: Any, kind: str | None = None) -> str:
        full = f"{SINGLE}.{text}" if "calls" not in item and "." not in text else text
        try:
            name, tensor = full.split(".", 1)
            desc = case.call(name).tensors[tensor]
        except (KeyError, ValueError):
            raise fail(f"{text!r} names no tensor of this case", *keys) from None
        del desc
        roles = dict(ops.get(case.call(name).operator).tensors)
        if kind and roles[tensor] != kind:
            raise fail(f"{text!r} is an {roles[tensor]} tensor, not an {kind}", *keys)
        return full

    for text, src in item.get("inputs", {}).items():
        full = ref(text, "inputs", text, kind="input")
        kind = next(k for k in ("values", "bits", "buffer", "iota", "constant", "random", "from")
                    if k in src)
        source = Source(kind, src[kind], src.get("sha256"))
        if kind == "from":
            origin = ref(src["from"], "inputs", text)
            take = _take(src.get("take"), case.desc(origin).sizes,
                         lambda m, t=text: fail(m, "inputs", t))
            source = Source(kind, origin, take=take)
            names = [c.name for c in case.calls]
            if names.index(origin.split(".")[0]) >= names.index(full.split(".")[0]):
                raise fail(f"from: {src['from']!r} is not a tensor of an earlier call (calls "
                           "run in the order listed)", "inputs", text)
            sizes = case.desc(origin).sizes
            sizes = take.shape(sizes) if take else sizes
            if tuple(sizes) != tuple(case.desc(full).sizes):
                raise fail(f"from: {src['from']!r} gives Sizes {list(sizes)}"
                           f", {text} has {list(case.desc(full).sizes)}", "inputs", text)
        elif "take" in src:
            raise fail("'take' applies to a 'from' source only", "inputs", text)
        _check_source(source, case.desc(full), lambda m, t=text: fail(m, "inputs", t),
                      made=item.get("expected") != "rejected", hashing=hashing)
        case.inputs[full] = source
    for c in case.calls:
        for tensor in ops.get(c.call.operator).inputs:
            if f"{c.name}.{tensor}" not in case.inputs and item.get("expected") != "rejected":
                raise fail(f"input {case.show_ref(f'{c.name}.{tensor}')} has no source in "
                           "'inputs'", "inputs")

    if item.get("expected") != "rejected":
        expected = {}
        for text, e in item.get("expected", {}).items():
            full = ref(text, "expected", text, kind="output")
            if e == "reference":
                expected[full] = Expectation("reference")
            else:
                kind = "values" if "values" in e else "bits"
                expectation = Expectation(kind, e[kind], e.get("ulp"),
                                          e.get("tolerance") == "model")
                if expectation.model and kind == "bits":
                    raise fail("'tolerance: model' judges exact 'values', not bits",
                               "expected", text)
                make = (sources.exact_values if expectation.model else
                        sources.from_values if kind == "values" else sources.from_bits)
                try:
                    make(e[kind], case.desc(full))
                except sources.SourceError as exc:
                    raise fail(str(exc), "expected", text) from None
                except (ValueError, OverflowError, TypeError) as exc:  # NumPy's own: e.g. a
                    # list where a number belongs, an integer beyond float64 on a float type
                    raise fail(f"{kind}: {_short(str(exc))}", "expected", text) from None
                expected[full] = expectation
        object.__setattr__(case, "expected", expected)
    relations = []
    for i, r in enumerate(item.get("relations", ())):
        left, right = (ref(t, "relations", i) for t in r["equal"])
        take = _take(r.get("take"), case.desc(right).sizes, lambda m, i=i: fail(m, "relations", i))
        sizes = take.shape(case.desc(right).sizes) if take else case.desc(right).sizes
        if tuple(sizes) != tuple(case.desc(left).sizes):
            raise fail(f"relation compares Sizes {list(case.desc(left).sizes)} with "
                       f"{list(sizes)}", "relations", i)
        relations.append(Relation(left, right, r.get("why", ""), take))
    object.__setattr__(case, "relations", tuple(relations))
    if not case.rejected and not case.expected and not case.relations:
        raise fail("the case expects nothing: give 'expected' (outputs or 'rejected') or "
                   "'relations'")
    if case.rejected and len(case.calls) != 1:
        raise fail("a rejected case has exactly one call", "expected")

    for text, facts in item.get("layout", {}).items():
        full = ref(text, "layout", text)
        problem = _check_layout(case.desc(full), facts, case.inputs.get(full))
        if problem:
            raise fail(f"layout of {text}: {problem}", "layout", text)
    object.__setattr__(case, "layout", _plain(item.get("layout", {})))

    if not case.rejected:
        for c in case.calls:
            op = ops.get(c.call.operator)
            need = op.required_level(c.call)
            if need is None:
                raise fail(f"{c.call.operator} takes these data types and dimension counts at no "
                           "feature level; expect 'rejected' or fix the descs", "feature_level")
            if need > level:
                raise fail(f"feature_level {level} is below the {need} that {c.call.operator} "
                           "needs for these data types and dimension counts", "feature_level")
    elif level < min(ops.get(c.call.operator).introduced for c in case.calls):
        raise fail(f"feature_level {level} is below the level that introduced the operator",
                   "feature_level")
    return case


#: The most bytes of generated values the loader makes, per file, to tell the sha256 of inputs
#: that lack it (a few seconds of work at most; hashed chunk by chunk, never held whole).
MAX_HASHED_BYTES = 64 << 20


def _take(spec: dict[str, Any] | None, sizes: Sequence[int], fail: Any) -> Take | None:
    """Parse a {axis, indices} selection against the Sizes it applies to."""
    if spec is None:
        return None
    # the schema's integers include 2.0: indices and axis are ints from here on
    axis, indices = int(spec["axis"]), tuple(int(i) for i in spec["indices"])
    if not 0 <= axis < len(sizes):
        raise fail(f"take: axis {axis} is not a dimension of Sizes {list(sizes)}")
    if any(not 0 <= i < sizes[axis] for i in indices):
        raise fail(f"take: indices must lie in [0, {sizes[axis]}) for axis {axis}")
    return Take(axis, indices)


def _check_source(source: Source, desc: TensorDesc, fail: Any, *, made: bool,
                  hashing: list[int]) -> None:
    """Values must fit the tensor; generated ones need their recorded sha256. made: the case's
    inputs are made when it runs (not a rejected case): generated ones must be within the
    memory limit (inputs.MAX_WORKING_BYTES), checked here from the desc before anything is
    made. hashing: [bytes left], charged when a missing sha256 is computed to be told."""
    try:
        if source.kind == "values":
            sources.from_values(source.params, desc)
        elif source.kind == "bits":
            sources.from_bits(source.params, desc)
        elif source.kind == "buffer":
            if _strides_problem(desc):
                raise fail(f"a buffer needs a buffer size: {_strides_problem(desc)}")
            sources.buffer_image(source.params, desc)
        elif source.kind in sources.GENERATED:
            if source.kind == "random":
                for key in ("low", "high", "mean", "std"):
                    value = source.params.get(key, 0)
                    if not (isinstance(value, int) or math.isfinite(value)):
                        raise fail(f"random: {key} must be a finite number, not {value!r}")
            if source.kind != "random":  # a constant in range, a whole iota start and step
                # on an integer type: checked on one element
                sources.generate(source.kind, source.params, TensorDesc(desc.data_type, (1,)))
            if made:
                try:
                    sources.check_working_memory(source.kind, source.params, desc)
                except sources.TooLargeError as exc:
                    raise fail(f"generated input too large: {exc} (docs/case-format.md, "
                               "Limits)") from None
            if source.sha256 is None:
                size = desc.element_count * desc.data_type.size
                if size > hashing[0]:
                    raise fail(f"generated input needs its sha256 (its {size:,} bytes are too "
                               "many to generate here: the loader makes at most "
                               f"{_mib(MAX_HASHED_BYTES)} per file to tell missing hashes)")
                hashing[0] -= size
                got = sources.generated_sha256(source.kind, source.params, desc)
                raise fail(f"generated input needs its sha256 (the bytes generated now hash to "
                           f"{got})")
    except sources.SourceError as exc:
        raise fail(str(exc)) from None
    except (ValueError, OverflowError, TypeError) as exc:  # NumPy's own (a list where a
        # number belongs, an integer beyond float64 where a float is made)
        raise fail(f"{source.kind}: cannot make {desc.data_type.name} values of Sizes "
                   f"{list(desc.sizes)}: {_short(str(exc))}") from None


def _check_layout(desc: TensorDesc, facts: dict[str, Any], source: Source | None
                  ) -> str | None:
    """The spec's stated facts about a desc, checked against the tensor model (and, for a
    `value` at an offset, against the case's buffer image: a letter is its character code)."""
    if _strides_problem(desc):
        return _strides_problem(desc)
    if "strides" in facts and list(desc.element_strides) != facts["strides"]:
        return f"strides are {list(desc.element_strides)}, the spec states {facts['strides']}"
    if "packed" in facts and desc.is_packed != facts["packed"]:
        return f"packed is {desc.is_packed}, the spec states {facts['packed']}"
    if "minimum_size_bytes" in facts and desc.minimum_size != facts["minimum_size_bytes"]:
        return (f"DMLCalcBufferTensorSize gives {desc.minimum_size}, the spec states "
                f"{facts['minimum_size_bytes']}")
    for fact in facts.get("offsets", ()):
        if len(fact["index"]) != desc.dimension_count:
            return f"index {fact['index']} has the wrong number of dimensions"
        got = desc.offset_of(fact["index"])
        if got != fact["offset"]:
            return f"element {fact['index']} is at offset {got}, the spec states {fact['offset']}"
        if "value" in fact:
            if source is None or source.kind != "buffer":
                return "a value at an offset is checked against a 'buffer' input only"
            want = fact["value"]
            want = ord(want) if isinstance(want, str) and len(want) == 1 else want
            held = source.params[got] if got < len(source.params) else None
            if held != want:
                return f"offset {got} holds {held!r} in the buffer, the spec states {want!r}"
    return None


def _strides_problem(desc: TensorDesc) -> str | None:
    if desc.strides is not None and len(desc.strides) != desc.dimension_count:
        return (f"Strides has {len(desc.strides)} entries for {desc.dimension_count} Sizes, so "
                "the desc has no offsets or size to check")
    return None


def case_set_hash(cases: Sequence[Case]) -> str:
    """sha256 over the sorted ids and contents of the cases: names the exact case set run."""
    h = hashlib.sha256()
    for case in sorted(cases, key=lambda c: c.id):
        h.update(case.id.encode() + b"\0" + case.digest().encode() + b"\n")
    return h.hexdigest()


def select(cases: Sequence[Case], patterns: Sequence[str]) -> list[Case]:
    """Cases whose id matches any pattern: a glob if it has *?[, else a substring."""
    if not patterns:
        return list(cases)
    return [c for c in cases if any(id_matches(c.id, p) for p in patterns)]


def id_matches(case_id: str, pattern: str) -> bool:
    """Whether a case id matches a -k pattern: a glob if it has *?[, else a substring."""
    from fnmatch import fnmatchcase

    if any(ch in pattern for ch in "*?["):
        return fnmatchcase(case_id, pattern)
    return pattern in case_id


def logical_values(source: Source, desc: TensorDesc) -> np.ndarray:
    """The logical input values a non-chained, non-buffer source makes for desc."""
    if source.kind == "values":
        return sources.from_values(source.params, desc)
    if source.kind == "bits":
        return sources.from_bits(source.params, desc)
    return sources.generate(source.kind, source.params, desc)
