"""The parse cache: what parsing and the schema check made of a case file, kept as plain JSON
data under the user's cache folder, so that a run reads a file it has seen before without
composing its YAML or checking its schema again.

An entry is found by the sha256 of the file's bytes together with salt(): the loader's
version, the suite's, PyYAML's and its parser's, the limits and the schema's text. A changed
file, loader or schema finds no entry and is parsed again (never stale). Only a file that
parsed and passed every schema check is stored: errors are never cached, a file with any is
checked afresh each time. What is stored is never run or unpickled: an entry is JSON, read
only when its key and the sha256 of its payload match, its shape checked; anything else
(a corrupt, truncated or foreign entry) is ignored as a miss and written again. Building the
Cases (the operators' checks) is never cached: it runs on every load.

An entry, two lines of JSON:
  1. {"format", "key", "payload_sha256", "cases": [[id, digest, line], ...]}: the index
     (-k and --shard select from it without reading the payload)
  2. [[key_lines, case], ...]: each case with its defaults merged in, the lines of its keys

The folder: $DMLCONF_CACHE/parse if set ('off' or empty: no cache), else
$XDG_CACHE_HOME/dml-conformance/parse, else ~/.cache/dml-conformance/parse (on Windows
%LOCALAPPDATA%\\dml-conformance\\parse). A folder that cannot be written is no error: the run
parses as if there were no cache.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from conformance import __version__
from conformance.casefile import safe_yaml

#: Bumped whenever what the loader stores changes meaning (the parse, the checks, the layout).
LOADER_VERSION = 1
FORMAT = "dmlconf-parse/1"
#: An entry larger than this is neither written nor read (the YAML it stands for is at most
#: MAX_FILE_BYTES; expanded aliases may make its data somewhat larger).
MAX_ENTRY_BYTES = 4 * safe_yaml.MAX_FILE_BYTES
_OFF = {"", "0", "off", "no", "none", "false"}


def root() -> Path:
    """The suite's cache folder, which the parse cache (parse/) and the deep tier (deep/) share:
    $DMLCONF_CACHE where set to a folder, else dml-conformance/ in the user's cache folder
    ($XDG_CACHE_HOME, %LOCALAPPDATA% on Windows, else ~/.cache)."""
    given = os.environ.get("DMLCONF_CACHE")
    if given is not None and given.strip().lower() not in _OFF:
        return Path(given)
    base = os.environ.get("XDG_CACHE_HOME") or (
        os.environ.get("LOCALAPPDATA") if sys.platform == "win32" else None)
    return (Path(base) if base else Path.home() / ".cache") / "dml-conformance"


def folder() -> Path | None:
    """Where entries are kept, or None with the cache turned off (DMLCONF_CACHE=off: the parse
    cache only; the deep tier needs its folder and keeps it under root())."""
    given = os.environ.get("DMLCONF_CACHE")
    if given is not None and given.strip().lower() in _OFF:
        return None
    return root() / "parse"


@cache
def salt() -> str:
    """What besides a file's bytes decides what the loader makes of it."""
    schema = resources.files("conformance.casefile").joinpath("case.schema.json").read_bytes()
    parts = [FORMAT, str(LOADER_VERSION), __version__, yaml.__version__,
             safe_yaml._Parser.__name__, str(safe_yaml.MAX_FILE_BYTES), str(safe_yaml.MAX_DEPTH),
             str(safe_yaml.MAX_VALUES), str(safe_yaml.MAX_INT_BITS),
             hashlib.sha256(schema).hexdigest()]
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()


def key(data: bytes) -> str:
    """The key of a file's bytes: their sha256 and the salt."""
    return hashlib.sha256(data).hexdigest() + "-" + salt()[:32]


def _entry_path(where: Path, k: str) -> Path:
    return where / k[:2] / f"{k}.json"


class Entry:
    """A stored entry whose key and payload sha256 matched, its index read; payload() decodes
    the cases when they are needed (not for a file -k or --shard takes nothing from)."""

    def __init__(self, index: list[tuple[str, str, int]], payload: bytes) -> None:
        self.index, self._payload = index, payload

    def payload(self) -> list[tuple[dict[str, int], dict[str, Any]]] | None:
        """[(key_lines, case)] in the index's order, or None when the payload is not of the
        shape written (the caller parses the file instead)."""
        try:
            cases = json.loads(self._payload)
        except (ValueError, RecursionError):
            return None
        if not isinstance(cases, list) or len(cases) != len(self.index):
            return None
        out = []
        for got, (case_id, _, _) in zip(cases, self.index, strict=True):
            if not (isinstance(got, list) and len(got) == 2 and isinstance(got[0], dict)
                    and isinstance(got[1], dict) and got[1].get("id") == case_id
                    and all(isinstance(v, int) for v in got[0].values())):
                return None
            out.append((got[0], got[1]))
        return out


#: How many fresh() blocks are open, in any thread of the process.
_distrust = 0
_LOCK = threading.Lock()


@contextmanager
def fresh() -> Iterator[None]:
    """Within, in every thread of the process: no entry of the suite's caches is read (this
    parse cache, session.expected_cache): every file is parsed and checked afresh and every
    expectation computed; good entries are still written. A certification runs so: the cache
    folder is writable by the user the backend runs as, and an entry rewritten with its sha256
    recomputed (a poisoned expectation, the original digest kept) would otherwise be believed.
    The case-set hash a certification checks then comes from the files themselves."""
    global _distrust
    with _LOCK:
        _distrust += 1
    try:
        yield
    finally:
        with _LOCK:
            _distrust -= 1


def trusted() -> bool:
    """Whether cache entries may be read now (not inside fresh())."""
    return _distrust == 0


def read_entry(path: Path, k: str, fmt: str, max_bytes: int
               ) -> tuple[dict[str, Any], bytes] | None:
    """An entry file's header and payload, or None unless it can be read, holds at most
    max_bytes, and its first line is a JSON object of this format and key whose
    payload_sha256 is the payload's (the rest of the file, bytes as written). The one reader of
    the suite's cache entries (this parse cache, session.expected_cache)."""
    try:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size > max_bytes:
                return None
            # read(size + 1), not read(max_bytes + 1): Python allocates what is asked for
            # first (a 64 MiB bytes object per entry cost 3x reading the entry). A file that
            # grew meanwhile is read short: its payload's sha256 then fails (a miss).
            data = f.read(size + 1)
    except OSError:
        return None
    if len(data) > max_bytes:
        return None
    head, _, payload = data.partition(b"\n")
    try:
        header = json.loads(head)
    except (ValueError, RecursionError):
        return None
    if not (isinstance(header, dict) and header.get("format") == fmt and header.get("key") == k
            and header.get("payload_sha256") == hashlib.sha256(payload).hexdigest()):
        return None
    return header, payload


def write_entry(path: Path, header: dict[str, Any], payload: bytes, max_bytes: int) -> None:
    """Write an entry file (header as one JSON line, with payload_sha256 added, then the
    payload) atomically: a temporary file renamed over path. Nothing is written when it would
    exceed max_bytes or the folder cannot be written (the next run makes it again)."""
    head = json.dumps({**header, "payload_sha256": hashlib.sha256(payload).hexdigest()},
                      separators=(",", ":")).encode()
    if len(head) + 1 + len(payload) > max_bytes:
        return
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(tmp, "wb") as f:
            f.write(head + b"\n" + payload)
        os.replace(tmp, path)
    except OSError:
        pass
    finally:
        try:
            tmp.unlink(missing_ok=True)
        except OSError:
            pass


def read(k: str) -> Entry | None:
    """The entry of key k, or None: no cache, no entry, one that is not a good entry of k, or
    inside fresh()."""
    where = folder()
    if where is None or not trusted():
        return None
    found = read_entry(_entry_path(where, k), k, FORMAT, MAX_ENTRY_BYTES)
    if found is None or not isinstance(found[0].get("cases"), list):
        return None
    header, payload = found
    index = []
    for row in header["cases"]:
        if not (isinstance(row, list) and len(row) == 3 and isinstance(row[0], str)
                and isinstance(row[1], str) and isinstance(row[2], int)):
            return None
        index.append((row[0], row[1], row[2]))
    return Entry(index, payload)


def write(k: str, cases: list[tuple[str, str, int, dict[str, int], dict[str, Any]]]) -> None:
    """Store the checked cases of a file of key k: (id, digest, line, key_lines, case) each.
    Nothing is stored when the data is not plain JSON data (a YAML timestamp, say) or the
    folder cannot be written: the next run parses the file again."""
    where = folder()
    if where is None:
        return
    try:
        payload = json.dumps([[lines, case] for _, _, _, lines, case in cases],
                             separators=(",", ":")).encode()
    except (TypeError, ValueError, RecursionError):
        return
    write_entry(_entry_path(where, k),
                {"format": FORMAT, "key": k,
                 "cases": [[i, d, line] for i, d, line, _, _ in cases]},
                payload, MAX_ENTRY_BYTES)
