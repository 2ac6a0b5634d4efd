"""The parse cache: what parsing and the schema check made of a case file, kept as plain JSON
data under the user's cache folder, so that a run reads a file it has seen before without
composing its YAML or checking its schema again.

An entry is found by the sha256 of the file's bytes together with salt(): the loader's
version, the suite's, PyYAML's and its parser's, the limits and the schema's text. A changed
file, loader or schema finds no entry and is parsed again (never stale). Only a file that
parsed and passed every schema check is stored: errors are never cached, a file with any is
checked afresh each time. What is stored is never run or unpickled: an entry is JSON, read
only when its key matches and every case's text hashes to the digest its index gives, its
shape checked; anything else (a corrupt, truncated or foreign entry) is ignored as a miss and
written again. Building the Cases (the operators' checks) is never cached: it runs on every
load.

An entry, three lines:
  1. {"format", "key", "cases": [[id, digest, line, size], ...]}: the index (-k and --shard
     select from it without decoding a case)
  2. {"orders": [[[path, keys], ...], ...], "of": [n, ...]}: the order of the keys of each
     mapping of a case whose keys are not in sorted order (the path from the case to it, its
     keys in the order written), each list of them once, and the list of each case (its index
     in "orders")
  3. the cases' canonical texts (model.canonical: JSON, keys sorted, ASCII), one after the
     other, `size` bytes each

A case's digest (Case.digest, what case_set_hash is made from) is the sha256 of its canonical
text, so the index's digest is checked against the very text the case is decoded from before
the entry is believed: the folder is writable by the user a backend runs as, and an entry
rewritten with a case's content changed but its digest kept is a miss (the file is parsed
again), so that a run's case-set hash always names the cases it ran. (An entry rewritten with
the digest of its changed content is believed: the run's case_set_sha256 then names that
content, which is not the committed case set's.) Checking the digests costs what checking
the sha256 of the whole payload did; with the key orders put back, a warm load of the
committed suite runs about 1% more instructions than with the layout before (issue 24).

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
LOADER_VERSION = 2
FORMAT = "dmlconf-parse/2"
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
    """A stored entry whose key matched and whose every case's canonical text hashes to the
    digest its index gives (read() checked them), its index read; payload() decodes the cases
    when they are needed (not for a file -k or --shard takes nothing from)."""

    def __init__(self, index: list[tuple[str, str, int]], sizes: list[int], meta: bytes,
                 texts: bytes) -> None:
        self.index, self._sizes, self._meta, self._texts = index, sizes, meta, texts

    def payload(self) -> list[dict[str, Any]] | None:
        """The cases in the index's order, each decoded from exactly the text whose sha256 is
        its index's digest (read() checked), the keys of its mappings put back in their written
        order (each [path, keys] of its orders: only the order changes, so the content, and
        the digest, stay the text's); None when the entry is not of the shape written (the
        caller parses the file instead)."""
        text = self._texts.decode("ascii")  # read() checked: offsets are characters
        # the decoder's scanner (C): one case at a time, from its offset, giving its end
        scan = json.JSONDecoder().scan_once  # type: ignore[attr-defined]
        out = []
        pos = 0
        try:
            meta = json.loads(self._meta)
            kinds, of = meta["orders"], meta["of"]
            if type(of) is not list or len(of) != len(self.index):
                return None
            for (case_id, _, _), size, kind in zip(self.index, self._sizes, of, strict=True):
                case, end = scan(text, pos)
                # exactly the text hashed: nothing before, after or around it taken in
                if end != pos + size or type(case) is not dict or case.get("id") != case_id:
                    return None
                for path, keys in kinds[kind]:
                    parent, node = None, case
                    for p in path:
                        parent, node = node, node[p]
                    if type(node) is not dict:
                        return None
                    put = {k: node[k] for k in keys}
                    if len(put) != len(node):  # a key left out or named twice
                        return None
                    if parent is None:
                        case = put
                    else:
                        parent[path[-1]] = put
                out.append(case)
                pos = end
        except (ValueError, TypeError, LookupError, StopIteration, RecursionError):
            return None
        return out


def orders(raw: Any, path: list[Any] | None = None,
           out: list[list[Any]] | None = None) -> list[list[Any]] | None:
    """The [path, keys] of every mapping in raw whose keys are not in sorted order (what
    Entry.payload puts back after the canonical text sorted them), innermost first; None when
    raw has a key that is not text (JSON would change it: such a file is not cached)."""
    path = [] if path is None else path
    out = [] if out is None else out
    if type(raw) is dict:
        keys = list(raw)
        if not all(type(k) is str for k in keys):
            return None
        for k, v in raw.items():
            if type(v) in (dict, list) and orders(v, [*path, k], out) is None:
                return None
        if keys != sorted(keys):
            out.append([path, keys])
    elif type(raw) is list:
        for i, v in enumerate(raw):
            if type(v) in (dict, list) and orders(v, [*path, i], out) is None:
                return None
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


def read_entry(path: Path, k: str, fmt: str, max_bytes: int, hashed: bool = True
               ) -> tuple[dict[str, Any], bytes] | None:
    """An entry file's header and payload, or None unless it can be read, holds at most
    max_bytes, and its first line is a JSON object of this format and key whose
    payload_sha256 is the payload's (the rest of the file, bytes as written; hashed False:
    not checked, the caller checks the payload itself: this parse cache, each case's text
    against its digest). The one reader of the suite's cache entries (this parse cache,
    session.expected_cache)."""
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
            and (not hashed
                 or header.get("payload_sha256") == hashlib.sha256(payload).hexdigest())):
        return None
    return header, payload


def write_entry(path: Path, header: dict[str, Any], payload: bytes, max_bytes: int,
                hashed: bool = True) -> None:
    """Write an entry file (header as one JSON line, with payload_sha256 added unless not
    hashed, then the payload) atomically: a temporary file renamed over path. Nothing is
    written when it would exceed max_bytes or the folder cannot be written (the next run makes
    it again)."""
    if hashed:
        header = {**header, "payload_sha256": hashlib.sha256(payload).hexdigest()}
    head = json.dumps(header, separators=(",", ":")).encode()
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
    """The entry of key k, or None: no cache, no entry, one that is not a good entry of k (a
    case's text whose sha256 is not the digest its index gives among them), or inside
    fresh()."""
    where = folder()
    if where is None or not trusted():
        return None
    found = read_entry(_entry_path(where, k), k, FORMAT, MAX_ENTRY_BYTES, hashed=False)
    if found is None or not isinstance(found[0].get("cases"), list):
        return None
    header, rest = found
    meta, _, texts = rest.partition(b"\n")
    index, sizes = [], []
    for row in header["cases"]:
        if not (isinstance(row, list) and len(row) == 4 and isinstance(row[0], str)
                and isinstance(row[1], str) and type(row[2]) is int and type(row[3]) is int
                and row[3] > 0):
            return None
        index.append((row[0], row[1], row[2]))
        sizes.append(row[3])
    if sum(sizes) != len(texts) or not texts.isascii():
        return None
    view, pos = memoryview(texts), 0
    for (_, digest, _), size in zip(index, sizes, strict=True):
        if hashlib.sha256(view[pos:pos + size]).hexdigest() != digest:
            return None
        pos += size
    return Entry(index, sizes, meta, texts)


def write(k: str, cases: list[tuple[str, str, int, dict[str, Any], bytes]]) -> None:
    """Store the checked cases of a file of key k: (id, digest, line, case, its canonical
    text) each. Nothing is stored when the data is not plain JSON data with text keys or the
    folder cannot be written: the next run parses the file again."""
    where = folder()
    if where is None:
        return
    kinds: dict[str, int] = {}
    of = []
    for _, _, _, case, _ in cases:
        kept = orders(case)
        if kept is None:
            return
        try:
            of.append(kinds.setdefault(json.dumps(kept, separators=(",", ":")), len(kinds)))
        except (TypeError, ValueError, RecursionError):
            return
    meta = ('{"orders":[' + ",".join(kinds) + '],"of":' + json.dumps(of, separators=(",", ":"))
            + "}").encode()
    texts = b"".join(text for *_, text in cases)
    if not texts.isascii():
        return
    write_entry(_entry_path(where, k),
                {"format": FORMAT, "key": k,
                 "cases": [[i, d, line, len(text)] for i, d, line, _, text in cases]},
                meta + b"\n" + texts, MAX_ENTRY_BYTES, hashed=False)
