"""Results: one record per case, the run's provenance, the verdict per feature level, and the
results JSON (docs/results-format.md)."""

from __future__ import annotations

import json
import os
import platform
import re
import sys
from collections import Counter
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import numpy as np

from conformance import __version__
from conformance.levels import FeatureLevel

FORMAT = "dml-conformance-results/1"
STATUSES = ("PASS", "QUALITY_WARNING", "FAIL", "ERROR", "TIMEOUT", "NOT_SUPPORTED", "XFAIL",
            "XPASS")
#: Statuses that fail a run: a wrong result (FAIL), a backend or case that could not run
#: (ERROR: an exception, a crash of an isolated worker, memory exhausted) or a case that ran
#: past the per-case timeout in an isolated worker (TIMEOUT).
FAILING = ("FAIL", "ERROR", "TIMEOUT")
#: Statuses that count as passing: QUALITY_WARNING (inside the legal envelope of the platform's
#: arithmetic rules, outside the suite's strict one-rounding reading: docs/tolerances.md) and a
#: case a baseline expected to fail that passed (XPASS); an expected failure (XFAIL) is still a
#: failure for the verdict.
PASSING = ("PASS", "QUALITY_WARNING", "XPASS")
#: The levels at which the operators' tables change: the levels a verdict is given for.
VERDICT_LEVELS = tuple(FeatureLevel.parse(t) for t in ("1_0", "2_0", "2_1", "5_0", "5_1", "6_2"))

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
    if isinstance(value, str):
        return safe_text(value)
    if isinstance(value, dict):
        return {sanitise(k): sanitise(v) for k, v in value.items()}
    if isinstance(value, list):
        return [sanitise(v) for v in value]
    if isinstance(value, tuple):
        return tuple(sanitise(v) for v in value)
    return value


@dataclass
class Result:
    id: str
    status: str
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

    def __setattr__(self, name: str, value: Any) -> None:
        """Every field is sanitised as it is set: by the constructor (and so by from_json and
        dataclasses.replace) and by any later assignment, so that every writer (the journal,
        the results JSON, the reports, the terminal) gets the same safe text. A list or dict
        set as a field is a copy: append to a result's list only through a new assignment."""
        object.__setattr__(self, name, sanitise(value))

    def __setstate__(self, state: dict[str, Any]) -> None:
        """Unpickled (a result sent back by a worker process): sanitised here too, whatever
        the worker did."""
        for name, value in state.items():
            setattr(self, name, value)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Result:
        """A result from its to_json() dict (keys it does not know are dropped)."""
        return cls(**{k: v for k, v in data.items() if k in _FIELDS})

    def to_json(self) -> dict[str, Any]:
        """The fields as a dict for JSON (shallow: its lists are the result's own; asdict's
        deep copy cost more than the rest of writing a result)."""
        return dict(self.__dict__)



_FIELDS = {f.name for f in fields(Result)}

def summary(results: list[Result]) -> dict[str, int]:
    counts = Counter(r.status for r in results)
    return {s: counts.get(s, 0) for s in STATUSES}


def decisive(results: list[Result]) -> list[Result]:
    """Results that decide verdicts and the exit status: all but ambiguous cases."""
    return [r for r in results if not r.ambiguous]


def verdicts(results: list[Result], claimed: FeatureLevel) -> dict[str, dict[str, Any]]:
    """Per distinguished feature level up to the claimed one: conformant (True) when every
    mandatory case at that level (needing it or less, not ambiguous, not limited to levels
    below the claimed one) passed; None when no case is mandatory there (untested, no verdict).
    A case limited to levels below the claimed one is not run (NOT_SUPPORTED), so it decides
    no level of this run: a run claiming a lower level judges it."""
    out: dict[str, dict[str, Any]] = {}
    for level in VERDICT_LEVELS:
        if level > claimed:
            break
        mandatory = [r for r in decisive(results)
                     if FeatureLevel.parse(r.feature_level) <= level
                     and not (r.feature_level_below
                              and claimed >= FeatureLevel.parse(r.feature_level_below))]
        counts = summary(mandatory)
        out[str(level)] = {
            "conformant": (sum(counts[s] for s in PASSING) == len(mandatory)
                           if mandatory else None),
            "mandatory": len(mandatory),
            **counts,
        }
    return out


#: The key of results.diagnoses() that counts the FAILs no catalogued misreading explains.
NOT_RECOGNISED = "(not recognised)"


def diagnoses(results: list[Result]) -> dict[str, int]:
    """How many failing results each misreading of the catalogue was recognised in, most first
    (a result may name several); NOT_RECOGNISED counts the FAILs with no diagnosis. Given the
    results after a baseline is applied, an expected failure (XFAIL) is not counted."""
    counts: Counter[str] = Counter()
    for r in results:
        if r.status == "FAIL":
            counts.update((r.diagnosis or {}).get("readings") or [NOT_RECOGNISED])
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def exit_status(results: list[Result], strict: bool = False) -> int:
    """0 only when no decisive case FAILed, ERRORed or TIMED OUT (an XFAIL never fails the
    run); with strict, also when none unexpectedly passed (XPASS)."""
    failing = (*FAILING, "XPASS") if strict else FAILING
    return int(any(r.status in failing for r in decisive(results)))


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
             baseline: dict[str, Any] | None = None,
             load_errors: list[dict[str, Any]] | None = None,
             execution: dict[str, Any] | None = None,
             shard: dict[str, Any] | None = None,
             execution_flags: list[str] | None = None) -> dict[str, Any]:
    """The results document. load_errors: case files (or cases) that could not be loaded,
    {"file", "line", "message"} each: a run with any is incomplete ("complete": false) and
    exits 1. execution: how the cases were run (workers, isolation, limits). shard: for one
    shard of a sharded run, {"index", "count", "cases", "of_cases", "full_case_set_sha256"}
    (`dmlconf merge` joins the shards). execution_flags: the DML_EXECUTION_FLAGS by name ([]:
    NONE). "diagnoses" counts the FAILs each misreading of the catalogue was recognised in.
    Its text is sanitised (safe_text) like the results': the backend's capabilities, the
    command, paths and load errors may hold anything."""
    doc = sanitise({
        "format": FORMAT,
        "suite_version": __version__,
        "case_set_sha256": case_set_sha256,
        "case_paths": case_paths,
        "command": command,
        "backend": backend,
        "feature_level": str(claimed),
        "execution_flags": list(execution_flags or []),
        "platform": platform_info(),
        "started_at": started_at,
        "finished_at": finished_at,
        "duration_s": round(duration_s, 3),
        "summary": summary(results),
        "ambiguous": summary([r for r in results if r.ambiguous]),
        "verdict": verdicts(results, claimed),
        "diagnoses": diagnoses(results),
        "baseline": baseline,
        "complete": not load_errors,
        "load_errors": list(load_errors or []),
        "execution": execution,
        "shard": shard,
    })
    doc["results"] = [r.to_json() for r in results]  # sanitised when they were made
    return doc


def write(doc: dict[str, Any], path: str | Path) -> None:
    """Atomically: the old file or the new one is there, never a partial one."""
    write_atomic(json.dumps(doc, indent=1) + "\n", path)


def write_atomic(text: str, path: str | Path) -> None:
    """Write PATH.tmp, flush it to the disk, and rename it over PATH (atomic on POSIX and
    Windows): a crash or Ctrl-C at any moment leaves the old file or the new one, whole.
    Missing parent folders are created."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
