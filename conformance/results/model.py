"""The result of one case (Result), the statuses and their meaning for a run (Status), and the
one rule every writer of a result's text follows (safe_text): docs/results-format.md,
"Results"."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from enum import Enum
from typing import Any


class Status(str, Enum):
    """A result's status. A str (`Status.PASS == "PASS"`, a key of a dict of counts either
    way): JSON writes it as its name ("PASS"), str() and f-strings give the name, and
    Status("PASS") reads it back (ValueError for any other text). docs/results-format.md,
    "Statuses"."""

    PASS = "PASS"
    QUALITY_WARNING = "QUALITY_WARNING"
    FAIL = "FAIL"
    ERROR = "ERROR"
    TIMEOUT = "TIMEOUT"
    NOT_SUPPORTED = "NOT_SUPPORTED"
    XFAIL = "XFAIL"
    XPASS = "XPASS"

    def __str__(self) -> str:
        return self.value

    def __format__(self, spec: str) -> str:
        return format(self.value, spec)


STATUSES: tuple[Status, ...] = tuple(Status)
#: Statuses that fail a run: a wrong result (FAIL), a backend or case that could not run
#: (ERROR: an exception, a crash of an isolated worker, memory exhausted) or a case that ran
#: past the per-case timeout in an isolated worker (TIMEOUT).
FAILING: tuple[Status, ...] = (Status.FAIL, Status.ERROR, Status.TIMEOUT)
#: Statuses that count as passing: QUALITY_WARNING (inside the legal envelope of the platform's
#: arithmetic rules, outside the suite's strict one-rounding reading: docs/tolerances.md) and a
#: case a baseline expected to fail that passed (XPASS); an expected failure (XFAIL) is still a
#: failure for the verdict, unless a waiver forgives it (Result.waiver: results.verdicts).
PASSING: tuple[Status, ...] = (Status.PASS, Status.QUALITY_WARNING, Status.XPASS)


def counted(n: int, noun: str, plural: str = "") -> str:
    """'1 case', '2 cases', '0 cases': a count and its noun, in the number the count takes
    (plural: the plural form where it is not the noun and an s)."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"

#: What no writer can carry as it is: C0 control characters but tab and line feed (a CR too:
#: a lone one rewrites a terminal line; CRLF becomes LF first), DEL and the C1 controls (ESC and
#: CSI drive terminals), lone surrogates (no UTF-8 encoder takes them), the line separators
#: U+2028 and U+2029 (Python splits lines there, other readers do not) and the noncharacters
#: U+FFFE and U+FFFF (XML 1.0 forbids them, with most C0 controls and the surrogates).
UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff\ufffe\uffff]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def safe_text(text: str) -> str:
    """`text` as every writer can write it the same way: each UNSAFE character is replaced by
    its escape as text, `\\x1b` (backslash, x, two hex digits) below U+0100 and `\\ud800`
    (backslash, u, four hex digits) above; a CRLF line end becomes LF, and a high surrogate
    followed by a low one becomes the character they encode. What is left is valid UTF-8, legal
    in XML 1.0, and has no line break but LF. Idempotent; safe text is returned as it is."""
    if not UNSAFE.search(text):
        return text
    text = text.replace("\r\n", "\n")
    if _SURROGATE.search(text):  # a pair (from UTF-16 text) is one character
        text = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")
    return UNSAFE.sub(_escape, text)


def sanitise(value: Any) -> Any:
    """`value` with every string in it (dict keys too, in lists, tuples and dicts at any depth)
    made safe_text; containers are copied, other values kept."""
    kind = type(value)  # the common kinds first, exactly (a run sanitises every result)
    if kind is str:
        return value if not UNSAFE.search(value) else safe_text(value)
    if kind is list:
        return [v if type(v) is str and not UNSAFE.search(v) else sanitise(v) for v in value]
    if value is None or kind is float or kind is int or kind is bool:
        return value
    if isinstance(value, str):
        return safe_text(value)
    if isinstance(value, dict):
        return {sanitise(k): sanitise(v) for k, v in value.items()}
    if isinstance(value, list):
        return [sanitise(v) for v in value]
    if isinstance(value, tuple):
        return tuple(sanitise(v) for v in value)
    return value


def shaped(known: dict[str, Any], extra: Mapping[str, Any],
           keys: Sequence[str] | None) -> dict[str, Any]:
    """The JSON of a record of the results document (a Result, a part of a ResultsDocument):
    `known`, its documented fields in the format's order, and `extra`, those the format does
    not document, in the order of `keys`, the keys of the JSON it was read from (None: made
    here, the format's order, `extra` after). A documented field that `keys` lacks (an older
    document's) is left out, so that a record read writes back as it was read; an extra field
    not in `keys` (set since) comes last."""
    if keys is None:
        return {**known, **extra} if extra else known
    out = {}
    for key in keys:
        if key in extra:
            out[key] = extra[key]
        elif key in known:
            out[key] = known[key]
    for key, value in extra.items():
        out.setdefault(key, value)
    return out


@dataclass
class Result:
    id: str
    status: Status
    message: str = ""
    duration_s: float = 0.0
    operators: list[str] = field(default_factory=list)
    #: The data types of the case's tensors, each once, in call and tensor order.
    data_types: list[str] = field(default_factory=list)
    feature_level: str = ""
    feature_level_below: str | None = None
    tags: list[str] = field(default_factory=list)
    spec: list[dict[str, str]] = field(default_factory=list)
    ambiguous: str | None = None
    info: list[str] = field(default_factory=list)
    mismatches: list[dict[str, Any]] = field(default_factory=list)
    grids: list[dict[str, Any]] = field(default_factory=list)
    #: For a FAIL on output values: where each failing output's errors lie, in at most 64 x 64
    #: cells whatever its size (conformance.judge.heat_map): {"tensor", "shape", "scale":
    #: "bound" (|error| / bound) or "mismatch" (1: not acceptable), "block": elements per cell,
    #: "cells": rows of cells, each the largest value of its elements, "bad", "largest"}.
    heat_maps: list[dict[str, Any]] = field(default_factory=list)
    #: What is known of an isolated worker that died or was killed in this case:
    #: {"exit_code": int | None, "signal": "SIGSEGV" | None, "output": the worker's last
    #: output (its stdout and stderr, Python's faulthandler traceback included)}.
    crash: dict[str, Any] | None = None
    #: How close the judged outputs came to the legal envelope: the largest |error| / bound
    #: over the elements judged within a bound (0.0: on the strict value everywhere; above 1.0:
    #: outside it, a FAIL). None where no output is judged within a bound (bit-exact models).
    margin: float | None = None
    #: For a FAIL: what the catalogue of misreadings recognises in the output
    #: (conformance.judge.diagnose): {"readings": [keys of the matching wrong readings], "text": the
    #: sentence a reader acts on}. None when nothing was recognised or the case passed.
    diagnosis: dict[str, Any] | None = None
    #: For an XFAIL a baseline's waiver forgives (docs/baselines.md, "Waivers"): the waiver,
    #: {"cases": its id pattern, "reason", "issue": a URL or None, "expires": "YYYY-MM-DD"}.
    #: None otherwise (a plain expected failure, any other status).
    waiver: dict[str, Any] | None = None
    #: Fields of a result read from a document that the format does not document (a later
    #: suite's): kept, and written back after the others. Not a field of the format.
    extra: dict[str, Any] = field(default_factory=dict, repr=False)
    #: The keys of the JSON the result was read from where they are not to_json()'s (an older
    #: document's, which lacks the newer fields; another order): to_json() gives them back.
    #: None for a result made here. Not a field of the format, not compared.
    json_keys: tuple[str, ...] | None = field(default=None, repr=False, compare=False)

    def __setattr__(self, name: str, value: Any) -> None:
        """Every field is sanitised as it is set: by the constructor (and so by from_json and
        dataclasses.replace) and by any later assignment, so that every writer (the journal,
        the results JSON, the reports, the terminal) gets the same safe text. A list or dict
        set as a field is a copy: append to a result's list only through a new assignment.
        The status is made a Status: text that is none is a ValueError."""
        if name == "status":
            if type(value) is not Status:
                value = _status(value)
            object.__setattr__(self, name, value)
            return
        object.__setattr__(self, name, sanitise(value))

    def __setstate__(self, state: dict[str, Any]) -> None:
        """Unpickled (a result sent back by a worker process): sanitised here too, whatever
        the worker did."""
        for name, value in state.items():
            setattr(self, name, value)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Result:
        """A result from its to_json() dict (a result of a results document): the keys the
        format does not document are kept in `extra`, and where the keys are not to_json()'s
        (an older document's), they are kept in `json_keys`, so that to_json() gives `data`
        back."""
        result = cls(**{k: v for k, v in data.items() if k in _NAMES})
        keys = tuple(data)
        if keys != _KEYS:
            extra = {k: v for k, v in data.items() if k not in _NAMES}
            if extra:
                result.extra = extra
            result.json_keys = keys
        return result

    def has(self, key: str) -> bool:
        """Whether the JSON the result was read from has the field `key` (a result made here
        has every field)."""
        return self.json_keys is None or key in self.json_keys

    def to_json(self) -> dict[str, Any]:
        """The fields as a dict for JSON (shallow: its lists are the result's own; asdict's
        deep copy cost more than the rest of writing a result)."""
        out = dict(self.__dict__)
        extra, keys = out.pop("extra"), out.pop("json_keys")
        return out if keys is None and not extra else shaped(out, extra, keys)


def _status(value: Any) -> Status:
    try:
        return Status(value)
    except ValueError:
        raise ValueError(f"status {value!r} is none of {', '.join(STATUSES)}") from None


#: The fields of a result in the results format, in to_json()'s order.
_KEYS = tuple(f.name for f in fields(Result) if f.name not in ("extra", "json_keys"))
_NAMES = frozenset(_KEYS)


def summary(results: list[Result]) -> dict[Status, int]:
    counts = Counter(r.status for r in results)
    return {s: counts.get(s, 0) for s in STATUSES}


def decisive(results: list[Result]) -> list[Result]:
    """Results that decide verdicts and the exit status: all but ambiguous cases."""
    return [r for r in results if not r.ambiguous]
