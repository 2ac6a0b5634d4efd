"""The expectations cache: what an operator's spec expects of one call of a case (its
`OperatorSpec.expected`: the strict model and the legal envelope of every output), kept under
the suite's cache folder so that a later run judges the case without computing the reference
again. The reference is as costly as the NumPy backend's own work (docs/profile.md); with the
cache a warm run's judge reads it back.

An entry is found by key(): the sha256 of the case's content (Case.digest(), its defaults merged
in), the call's name, the strict reading (ambiguous cases), the execution flags, and
fingerprint(): the sha256 of the conformance package's source (the operators' specs, the
inputs' generators, the runner) and NumPy's version. A changed case, spec or flag finds no entry
(never stale). Only a call whose inputs the case itself makes is cached: an input taken `from`
another call's output is the backend's output, and its expectation is computed every time.

An entry is one file: a line of JSON (format, key, the payload's sha256, the Expected objects'
fields with their arrays named by offset, dtype and shape) then the arrays' raw bytes. Nothing in
it is run or unpickled: it is read only when its key and payload sha256 match and its shape is
right; anything else is a miss, computed and written again. (Not .npz: np.load of an .npz cost
744 us against 39 us for this layout, more than computing most references.)

A certification believes no entry: the cache folder is writable by the user the backend runs as,
and an entry rewritten with its sha256 recomputed would make the judge expect what the backend
returns. Inside fresh() (process-wide, the judge's threads included) every expectation is
computed; good entries are still written. No check of an entry could do instead: its key and
sha256 are made from what anyone can know (the case's digest, the call, the flags, the suite's
source) and the harness holds no secret a backend of its own user could not read, so a forged
entry under the right key looks like a good one; only computing the expectation again tells
them apart. An ordinary run believes the entries (that is what a cache is for) and says so: its
results record the folder its judge believed entries of (execution.expectations_cache, null
where it believed none: a certification, or the cache off; session.run.Session), and every
report shows it on an "Expectations" line: a run whose verdict may rest on an entry never reads
as one whose judge computed every expectation (docs/results-format.md).

The folder: casefile.cache.root()/expected; DMLCONF_CACHE=off turns it off with the parse cache,
DMLCONF_EXPECTED_CACHE=off alone.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import fields
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from conformance.casefile import cache as parse_cache
from conformance.expected import Expected
from conformance.flags import ExecutionFlags

FORMAT = "dmlconf-expected/2"
#: An entry larger than this is neither written nor read.
MAX_ENTRY_BYTES = 64 << 20

#: Not read inside fresh(), the one switch of the suite's caches (casefile.cache), which a
#: certification's run is wrapped in.
fresh, trusted = parse_cache.fresh, parse_cache.trusted


def folder() -> Path | None:
    """Where entries are kept, or None with the cache turned off (DMLCONF_CACHE=off, or
    DMLCONF_EXPECTED_CACHE=off for this cache alone: benchmarks/bench_harness.py compares)."""
    env = os.environ
    return _folder(env.get("DMLCONF_CACHE"), env.get("DMLCONF_EXPECTED_CACHE"),
                   env.get("XDG_CACHE_HOME"), env.get("LOCALAPPDATA"), env.get("HOME"))


@cache
def _folder(*environment: str | None) -> Path | None:
    """folder() for the environment's values (asked for every case: worked out once)."""
    alone = environment[1]
    if parse_cache.folder() is None or (alone is not None
                                        and alone.strip().lower() in parse_cache._OFF):
        return None
    return parse_cache.root() / "expected"


@cache
def fingerprint() -> str:
    """The sha256 of what decides an expectation besides the case: the conformance package's
    Python source (every file, so a change anywhere in the judging path is a new key) and
    NumPy's version."""
    package = Path(__file__).resolve().parent.parent
    h = hashlib.sha256(f"{FORMAT}\0{np.__version__}\0".encode())
    for path in sorted(package.rglob("*.py")):
        h.update(path.relative_to(package).as_posix().encode() + b"\0")
        h.update(path.read_bytes() + b"\0")
    return h.hexdigest()


def key(digest: str, call: str, strict: bool, flags: ExecutionFlags) -> str:
    """The key of one call's expectations in the case of that digest."""
    text = json.dumps([digest, call, bool(strict), int(flags), fingerprint()])
    return hashlib.sha256(text.encode()).hexdigest()


def _path(where: Path, k: str) -> Path:
    return where / k[:2] / f"{k}.bin"


# -- encoding: Expected <-> JSON fields and raw arrays ----------------------------------------

def _encode(exp: Expected, arrays: list[np.ndarray]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for f in fields(exp):
        value = getattr(exp, f.name)
        if isinstance(value, np.ndarray):
            out[f.name] = {"array": _array(value, arrays)}
        elif isinstance(value, Expected):
            out[f.name] = {"expected": _encode(value, arrays)}
        elif isinstance(value, tuple) and value and all(isinstance(v, Expected)
                                                        for v in value):
            out[f.name] = {"expecteds": [_encode(v, arrays) for v in value]}
        elif isinstance(value, tuple) and all(isinstance(v, np.ndarray) for v in value):
            out[f.name] = {"arrays": [_array(v, arrays) for v in value]}
        elif value is None or type(value) in (str, bool, int, float):
            out[f.name] = {"plain": value}
        else:
            raise TypeError(f"{f.name}: {type(value).__name__} is not stored")
    return out


def _array(a: np.ndarray, arrays: list[np.ndarray]) -> int:
    if a.dtype.hasobject or a.dtype.fields is not None:
        raise TypeError(f"dtype {a.dtype} is not stored")
    arrays.append(a)
    return len(arrays) - 1


def _decode(data: Any, arrays: list[np.ndarray]) -> Expected:
    if not isinstance(data, dict):
        raise ValueError("not an expectation")
    kwargs: dict[str, Any] = {}
    for name, value in data.items():
        if not (isinstance(value, dict) and len(value) == 1):
            raise ValueError(f"{name}: not a stored field")
        (kind, got), = value.items()
        if kind == "array":
            kwargs[name] = arrays[got]
        elif kind == "arrays":
            kwargs[name] = tuple(arrays[i] for i in got)
        elif kind == "expected":
            kwargs[name] = _decode(got, arrays)
        elif kind == "expecteds":
            kwargs[name] = tuple(_decode(e, arrays) for e in got)
        elif kind == "plain" and (got is None or type(got) in (str, bool, int, float)):
            kwargs[name] = got
        else:
            raise ValueError(f"{name}: not a stored field")
    return Expected(**kwargs)


def read(k: str) -> dict[str, Expected] | None:
    """The expectations stored under key k, or None: no cache, no entry, a bad entry, or inside
    fresh(). The arrays are read-only views of the entry's bytes."""
    where = folder()
    if where is None or not trusted():
        return None
    found = parse_cache.read_entry(_path(where, k), k, FORMAT, MAX_ENTRY_BYTES)
    if found is None:
        return None
    header, payload = found
    try:
        arrays, offset = [], 0
        for dtype, shape, nbytes in header["arrays"]:
            dt = np.dtype(dtype)
            if dt.hasobject or dt.fields is not None or nbytes < 0 or offset + nbytes > len(
                    payload):
                return None
            a = np.frombuffer(payload, dtype=dt, count=nbytes // dt.itemsize, offset=offset)
            arrays.append(a.reshape(shape))
            offset += nbytes
        if offset != len(payload):
            return None
        outputs = header["outputs"]
        return {str(t): _decode(e, arrays) for t, e in outputs.items()}
    except (ValueError, TypeError, KeyError, IndexError, RecursionError, AttributeError):
        return None


def write(k: str, expected: dict[str, Expected]) -> None:
    """Store one call's expectations under key k. Nothing is stored when the folder cannot be
    written or a field is not of the kinds stored (the next run computes it again)."""
    where = folder()
    if where is None:
        return
    arrays: list[np.ndarray] = []
    try:
        outputs = {t: _encode(e, arrays) for t, e in expected.items()}
    except TypeError:
        return
    blobs = [np.ascontiguousarray(a).tobytes() for a in arrays]
    header = {"format": FORMAT, "key": k,
              "arrays": [[a.dtype.str, list(a.shape), len(b)]
                         for a, b in zip(arrays, blobs, strict=True)],
              "outputs": outputs}
    parse_cache.write_entry(_path(where, k), header, b"".join(blobs), MAX_ENTRY_BYTES)
