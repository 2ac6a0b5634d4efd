"""Sharded runs: `dmlconf run --shard K/N` runs every N-th case of the selection, starting at
the K-th, so that N CI jobs share a certification; `dmlconf merge` joins their results files
into the one the whole run would have written (results in the same order, one summary, one
verdict), which reports render like any other.

The split is deterministic: the selection's cases in their loading order (files sorted by
path, cases in file order), dealt round-robin. Shard sizes differ by one case at most.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeVar

from conformance import results
from conformance.casefile import case_set_hash
from conformance.casefile.selection import Identified
from conformance.levels import FeatureLevel
from conformance.results import (
    BaselineSummary,
    LoadError,
    MergedExecution,
    Result,
    ResultsDocument,
    Shard,
    ShardRun,
)
from conformance.results import baseline as baselines

T = TypeVar("T")
CaseT = TypeVar("CaseT", bound=Identified)  # a Case, or the index entry of one (casefile.Indexed)
_SHARD = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")


class MergeError(ValueError):
    """Results files that do not make one run (the message says which and why)."""


def parse(text: str) -> tuple[int, int]:
    """'K/N' -> (K, N), 1 <= K <= N; ValueError otherwise."""
    m = _SHARD.match(text)
    if not m or not 1 <= int(m.group(1)) <= int(m.group(2)):
        raise ValueError(f"--shard {text!r}: give K/N with 1 <= K <= N, e.g. 2/4")
    return int(m.group(1)), int(m.group(2))


def deal(items: Sequence[T], index: int, count: int) -> list[T]:
    """The index-th (1-based) of count round-robin shards of items."""
    return list(items[index - 1::count])


def take(cases: Sequence[CaseT], index: int, count: int
         ) -> tuple[list[CaseT], dict[str, Any]]:
    """The shard's cases, and the shard record of its results document."""
    mine = deal(cases, index, count)
    return mine, {"index": index, "count": count, "cases": len(mine), "of_cases": len(cases),
                  "full_case_set_sha256": case_set_hash(cases)}


def _same(docs: list[tuple[str, ResultsDocument]], what: str, get: Any) -> Any:
    values = {repr(get(d)) for _, d in docs}
    if len(values) > 1:
        listed = "; ".join(f"{p}: {get(d)!r}" for p, d in docs)
        raise MergeError(f"the shards are not of one run: their {what} differ ({listed})")
    return get(docs[0][1])


def _of(shard: Shard, key: str) -> Any:
    """A field of a shard record as its document gives it (None where it lacks it)."""
    return getattr(shard, key) if shard.has(key) else None


def merge(docs: list[tuple[str, ResultsDocument]], command: str
          ) -> tuple[ResultsDocument, list[Result]]:
    """One results document from the documents of every shard of a run (path, document), and
    its results."""
    if not docs:
        raise MergeError("give the results files of the shards to merge")
    shard_of: dict[str, Shard] = {}
    for path, doc in docs:
        if not isinstance(doc.shard, Shard):
            raise MergeError(f"{path} is not one shard's results (it was not run with "
                             "--shard K/N)")
        shard_of[path] = doc.shard
    count = _same(docs, "shard counts", lambda d: _of(d.shard, "count"))
    full = _same(docs, "case sets", lambda d: _of(d.shard, "full_case_set_sha256"))
    of_cases = _same(docs, "case counts", lambda d: _of(d.shard, "of_cases"))
    _same(docs, "suite versions", lambda d: d.suite_version)
    _same(docs, "backends", lambda d: (d.backend or {}).get("name"))
    level = _same(docs, "feature levels", lambda d: d.feature_level)
    flags = _same(docs, "execution flags", lambda d: d.execution_flags or [])
    scope = results.Scope.from_json(_same(docs, "scopes", lambda d: d.scope))
    by_index: dict[int, tuple[str, ResultsDocument]] = {}
    for path, doc in docs:
        k = _of(shard_of[path], "index")
        if k in by_index:
            raise MergeError(f"{path} and {by_index[k][0]} are both shard {k}/{count}")
        by_index[k] = (path, doc)
    missing = [k for k in range(1, count + 1) if k not in by_index]
    if missing:
        raise MergeError(f"{'shard' if len(missing) == 1 else 'shards'} "
                         f"{', '.join(f'{k}/{count}' for k in missing)} missing: "
                         "merge needs the results of every shard")
    ordered: list[Result | None] = [None] * of_cases
    for k, (path, doc) in by_index.items():
        slots = list(range(of_cases))[k - 1::count]
        if len(doc.results) != len(slots):
            raise MergeError(f"{path}: shard {k}/{count} has {len(doc.results)} results; "
                             f"a shard {k} of {of_cases} cases has {len(slots)}")
        for slot, r in zip(slots, doc.results, strict=True):
            # as Result.from_json made them before the document was typed: every field, in
            # to_json()'s order, those the format does not document dropped
            ordered[slot] = r if r.json_keys is None else replace(r, extra={}, json_keys=None)
    found = [r for r in ordered if r is not None]
    seen: set[str] = set()
    for r in found:
        if r.id in seen:
            raise MergeError(f"case {r.id} has results in two shards")
        seen.add(r.id)
    first = by_index[1][1]
    load_errors: list[LoadError] = []
    for _, doc in docs:
        for e in doc.load_errors or []:
            if e not in load_errors:
                load_errors.append(e)
    merged = results.document(
        found, backend=first.backend or {}, case_set_sha256=full,
        claimed=FeatureLevel.parse(level), started_at=min(d.started_at for _, d in docs),
        finished_at=max(d.finished_at for _, d in docs),
        duration_s=max(float(d.duration_s or 0) for _, d in docs), command=command,
        case_paths=first.case_paths or [], baseline=_baselines(docs),
        load_errors=load_errors,
        execution=MergedExecution(merged=[
            ShardRun(path=p, shard=f"{shard_of[p].index}/{count}", duration_s=d.duration_s,
                     execution=d.execution)
            for p, d in sorted(docs, key=lambda x: shard_of[x[0]].index)]),
        execution_flags=flags, scope=scope)
    if first.has("platform"):
        merged.platform = first.platform
    return merged, found


def _baselines(docs: list[tuple[str, ResultsDocument]]) -> BaselineSummary | None:
    """The shards' baseline records joined (results.baseline.join): every XPASS, expected
    failure and waiver; an entry is stale when expired, or when it matched no case in any
    shard."""
    applied = [d.baseline for _, d in docs if d.baseline]
    if not applied:
        return None
    if len(applied) != len(docs):
        raise MergeError("some shards were run with --baseline and some without")
    return baselines.join(applied)


def load(paths: Sequence[str | Path]) -> list[tuple[str, ResultsDocument]]:
    """Read each shard's results file (conformance.results.read, strict)."""
    try:
        return [(str(p), results.read(p)) for p in paths]
    except results.ResultsFileError as exc:
        raise MergeError(str(exc)) from None
