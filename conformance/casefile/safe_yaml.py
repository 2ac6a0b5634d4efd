"""Case-file YAML, composed safely: the parser's events (libyaml's when present, the SafeLoader
otherwise) are built into plain data with line numbers, without recursion, refusing what is not
plain data (tags other than the plain-data ones, a second document, non-text keys, duplicate
keys) and bounding what a file may ask of the loader (docs/case-format.md, "Limits"): its size,
its nesting, its values with aliases expanded, its integers' digits."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from conformance.casefile.errors import CaseFileError, mib, short

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


#: What libyaml (0.2.5 and later, PyYAML 6.0.4's wheels) says when a file passes its own nesting
#: limit (1,000 levels), which it may check before the composer sees MAX_DEPTH levels.
_PARSER_DEPTH_LIMIT = "exceeded maximum nesting depth"


def _too_deep() -> str:
    return f"mappings and lists are nested more than {MAX_DEPTH} deep, the limit for a case file"


class LineDict(dict):
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
        raise _refused(event, f"{short(repr(value))} is not a valid {_show_tag(tag)}: "
                       f"{short(str(exc))}") from None
    if isinstance(out, int) and not isinstance(out, bool) and out.bit_length() > MAX_INT_BITS:
        raise _refused(event, f"the integer {value[:20]}... is too large")
    return out


def _parse_yaml(text: str) -> Any:
    """The one YAML document of text as LineDict, _LineList and scalars, built from the parser's
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
                raise _refused(event, _too_deep())
            if kind is mapping_start:
                container: Any = LineDict()
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
                    raise _refused(event, f"duplicate key {short(repr(value))}")
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
    return f"the key {short(repr(key))} is not a string (YAML reads it as {what}): quote it"


def _merged(own: LineDict, merges: list[tuple[Any, int]]) -> LineDict:
    """A mapping with '<<' merge keys: the merged mappings' keys first (of a list of them, the
    earlier one wins), then the mapping's own keys, which win over all merged ones."""
    out = LineDict()
    out.line, out.key_lines = own.line, {}
    for value, line in merges:
        parts = value if isinstance(value, list) else [value]
        for part in reversed(parts):
            if not isinstance(part, LineDict):  # every mapping read here is one
                raise _RefusedError(line, "'<<' merges a mapping or a list of mappings, not "
                                    f"{short(repr(part))}")
            out.update(part)
            out.key_lines.update(part.key_lines)
    out.update(own)
    out.key_lines.update(own.key_lines)
    return out


def line_of(root: Any, path: Sequence[Any]) -> int | None:
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


def plain(obj: Any) -> Any:
    """Strip line annotations: plain dicts and lists (for hashing and showing)."""
    if isinstance(obj, dict):
        return {k: plain(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [plain(v) for v in obj]
    return obj


def parse(text: str, path: str | Path) -> Any:
    """The YAML document of text; CaseFileError for anything that is no plain YAML data."""
    if len(text) > MAX_FILE_BYTES:
        raise CaseFileError(path, None, f"the text is larger than {mib(MAX_FILE_BYTES)}, the "
                                        "limit for a case file")
    try:
        return _parse_yaml(text)
    except _RefusedError as exc:
        raise CaseFileError(path, exc.line, exc.message) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else None
        if _PARSER_DEPTH_LIMIT in (exc.problem or ""):
            # libyaml 0.2.5 as PyYAML 6.0.4 builds it stops at 1,000 levels, and its scanner
            # reads a simple key's whole flow ahead, so it can refuse before the composer has
            # seen MAX_DEPTH levels: the file is nested past the case-file limit either way.
            raise CaseFileError(path, line, _too_deep()) from None
        raise CaseFileError(path, line, f"not valid YAML: {exc.problem or exc}") from None
    except yaml.reader.ReaderError as exc:
        character = exc.character
        shown = f"#x{character:04x}" if isinstance(character, int) else repr(character)
        raise CaseFileError(path, _line_at(text, exc.position), f"not valid YAML: character "
                            f"{shown} is not allowed ({exc.reason})") from None
    except yaml.YAMLError as exc:
        raise CaseFileError(path, None, f"not valid YAML: {short(str(exc))}") from None
    except UnicodeError as exc:  # a str that is no text (a lone surrogate)
        raise CaseFileError(path, _line_at(text, getattr(exc, "start", None)),
                            f"not valid text: {exc.reason if hasattr(exc, 'reason') else exc}"
                            ) from None


def _line_at(text: str, position: int | None) -> int | None:
    """The line of a character position of text (libyaml counts UTF-8 bytes: close enough)."""
    if not isinstance(position, int) or position < 0:
        return None
    return text.count("\n", 0, position) + 1
