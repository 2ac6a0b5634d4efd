"""How thickly the committed suite kills each misreading, slice by slice (issue 25): for every
(operator, data type, feature level) slice and every catalogue entry that applies to it, the
number of the slice's mandatory cases that FAIL when the entry runs as a backend claiming that
slice alone, counted up to a floor (10 by default: a slice where a misreading is killed by one
or two cases is one case edit away from letting it through).

A slice's cases are the committed mandatory cases whose every call is that operator with every
tensor of that type, needing that level or less. The levels nest, so the count only grows with
the level: the slice at the lowest level where the operator takes the type is the thinnest, and
it is the one measured.

The validation class counts the same way: each rule the operator's validation checks, dropped
from the reference's validation (LenientBackend), must let at least the floor of the slice's
mandatory rejected cases through. A backend claiming one slice runs every rejected case of its
operator whatever its types (a rejected case is never NOT_SUPPORTED for its types), so these are
the slice's rejected cases. A rule no call of a slice can break is named with why
(inapplicable()): the slice's count of it is not held to the floor.

    python -m conformance.generate.kill_floor [--floor 10] [--operator NAME] [--json PATH]

prints every (slice, entry) below the floor, thinnest first, and a summary line; exit 0.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain
from pathlib import Path

import numpy as np

from conformance import ops
from conformance.backend import Backend, Capabilities
from conformance.casefile import Case
from conformance.judge.misreadings import catalogue
from conformance.kit.misreading import Misreading
from conformance.kit.rejection import DescRejected
from conformance.levels import FeatureLevel
from conformance.ops import OperatorCall
from conformance.tensors import DataType

FLOOR = 10


class ReadingBackend(Backend):
    """A backend that is one reading (a misreading, or an admissible reading): it claims one
    operator with one data type at `level`, strided descs and any offsets, validates like the
    reference, and executes the reading."""

    name = "reading"

    def __init__(self, entry: Misreading, operator: str, data_type: DataType,
                 level: FeatureLevel) -> None:
        self.entry, self.operator, self.data_type, self.level = entry, operator, data_type, level
        super().__init__()

    @property
    def capabilities(self) -> Capabilities:
        return Capabilities(operators={self.operator: frozenset({self.data_type})},
                            feature_level=self.level, notes=f"reading {self.entry.key}")

    def create_operator(self, call: OperatorCall) -> None:
        self.validate(call)

    def execute(self, call: OperatorCall, bindings: Mapping[str, np.ndarray]) -> None:
        self.validate(call)
        self.entry.run(call, bindings)


class LenientBackend(ReadingBackend):
    """A validation misreading: the reference's validation with one rule dropped (a backend that
    accepts what only that rule refuses). It executes nothing: an accepted rejected case FAILs
    at its acceptance."""

    def __init__(self, rule: str, operator: str, data_type: DataType,
                 level: FeatureLevel) -> None:
        self.rule, self.operator, self.data_type, self.level = rule, operator, data_type, level
        Backend.__init__(self)

    @property
    def capabilities(self) -> Capabilities:
        return Capabilities(operators={self.operator: frozenset({self.data_type})},
                            feature_level=self.level, notes=f"validation without {self.rule}")

    def validate(self, call: OperatorCall) -> None:
        broken = [v for v in ops.get(call.operator).validate(call, self.claimed_level)
                  if v.rule != self.rule]
        if broken:
            raise DescRejected("; ".join(str(v) for v in broken))

    def execute(self, call: OperatorCall, bindings: Mapping[str, np.ndarray]) -> None:
        self.validate(call)


def validation_rules(operator: str) -> tuple[str, ...]:
    """The rules of the operator's validation that the validation class drops one at a time:
    the mandatory rules the invalid family breaks for it (conformance/generate/invalid.py names
    every rule the validation checks, each with the family's cases), and the data-type and level
    rules of the operator's tables. The rules read as ambiguous (the 2^32 - 1 count, the
    operators' own readings) decide no verdict, and the open ones (the DWORD size, the output
    overlap: invalid.OPEN_RULES) admit the acceptance that dropping them is: neither is
    counted."""
    from conformance.generate.invalid import variants

    spec = ops.get(operator)
    found = dict.fromkeys(rule for _, rule, _, ambiguous, _ in variants(spec) if ambiguous is None)
    return (*found, *(r for r in ("operator.data_type", "operator.level") if r not in found))


def inapplicable(operator: str, rule: str, level: FeatureLevel) -> str | None:
    """Why no call of a slice of the operator at `level` can break the rule alone, or None."""
    spec = ops.get(operator)
    if rule == "operator.level":
        return (f"a backend claiming {level} claims a level where {operator} exists (from "
                f"{spec.introduced}); the level rule refuses calls below it, which only a "
                "backend claiming an earlier level meets")
    if rule == "operator.data_type" and not set(DataType) - set(spec.data_types):
        return (f"every DML_TENSOR_DATA_TYPE is in some {operator} table; a type is refused "
                "only below the level that adds it, and the suite states no such case")
    return None


def slice_of(case: Case) -> tuple[str, DataType] | None:
    """(operator, data type) when every call of the case is one operator with one data type."""
    pairs = {(named.call.operator, d.data_type) for named in case.calls
             for d in named.call.tensors.values()}
    return next(iter(pairs)) if len(pairs) == 1 else None


def lowest_level(operator: str, data_type: DataType) -> FeatureLevel:
    """The lowest feature level whose table of the operator takes the type."""
    spec = ops.get(operator)
    return min(t.level for t in spec.support if data_type in t.data_types)


def mandatory_by_slice(cases: Sequence[Case]) -> dict[tuple[str, DataType], tuple[Case, ...]]:
    """The single-slice mandatory cases (not rejected, not ambiguous; open ones included) by
    slice."""
    out: dict[tuple[str, DataType], list[Case]] = {}
    for case in cases:
        key = slice_of(case)
        if key and not case.rejected and case.ambiguous is None:
            out.setdefault(key, []).append(case)
    return {k: tuple(v) for k, v in out.items()}


@dataclass(frozen=True)
class Count:
    """The FAILs of one entry on one slice, counted up to the floor."""

    operator: str
    data_type: DataType
    level: FeatureLevel
    entry: str
    kills: int
    covered: int  # the slice's cases the entry covers (an upper bound on kills)
    kind: str = "misreading"  # or "validation": entry is the rule dropped


def counts(cases: Sequence[Case], floor: int = FLOOR, operator: str | None = None
           ) -> Iterator[Count]:
    """Every (slice, entry) count, slices at their lowest level, in catalogue order."""
    by_slice = mandatory_by_slice(cases)
    for entry in catalogue().values():
        for name in sorted(entry.operators):
            if operator and name != operator:
                continue
            spec = ops.get(name)
            for data_type in spec.data_types:
                if entry.data_types is not None and data_type not in entry.data_types:
                    continue
                level = lowest_level(name, data_type)
                covered = [c for c in by_slice.get((name, data_type), ())
                           if c.feature_level <= level
                           and any(entry.covers(named.call) for named in c.calls)]
                kills = _kills(covered, ReadingBackend(entry, name, data_type, level), floor)
                yield Count(name, data_type, level, entry.key, kills, len(covered))


def _kills(cases: Sequence[Case], backend: Backend, floor: int) -> int:
    """How many of the cases FAIL on the backend, counted up to the floor."""
    from conformance.session.case_run import run_case

    kills = 0
    for case in cases:
        if run_case(case, backend).status == "FAIL":
            kills += 1
            if kills >= floor:
                break
    return kills


def validation_counts(cases: Sequence[Case], floor: int = FLOOR, operator: str | None = None
                      ) -> Iterator[Count]:
    """Every (slice, validation rule) count, slices at their lowest level: the slice's
    mandatory rejected cases (its operator's, needing its level or less, not ambiguous) that
    FAIL when the rule is dropped; covered: those that break the rule."""
    rejected = [c for c in cases if c.rejected and c.ambiguous is None and len(c.calls) == 1]
    for name in sorted({c.calls[0].call.operator for c in rejected}):
        if operator and name != operator:
            continue
        spec = ops.get(name)
        for data_type in spec.data_types:
            level = lowest_level(name, data_type)
            # each case's broken rules at the slice's level, once for every rule below
            broken = [(c, {v.rule for v in spec.validate(c.calls[0].call, level)})
                      for c in rejected if c.calls[0].call.operator == name
                      and c.feature_level <= level
                      and not (c.feature_level_below and level >= c.feature_level_below)]
            for rule in validation_rules(name):
                covered = [c for c, rules in broken if rule in rules]
                kills = _kills(covered, LenientBackend(rule, name, data_type, level), floor)
                yield Count(name, data_type, level, rule, kills, len(covered), "validation")


def main(argv: Sequence[str] | None = None) -> int:
    from conformance.casefile import load_cases
    from conformance.suite import cases_root

    parser = argparse.ArgumentParser(prog="python -m conformance.generate.kill_floor",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--floor", type=int, default=FLOOR)
    parser.add_argument("--operator")
    parser.add_argument("--json", type=Path, help="write every count here")
    args = parser.parse_args(argv)
    cases = load_cases([cases_root() / "documented", cases_root() / "generated"])
    found = []
    for count in chain(counts(cases, args.floor, args.operator),
                       validation_counts(cases, args.floor, args.operator)):
        found.append(count)
        print(f"\r{len(found)} (slice, misreading) pairs counted", end="", file=sys.stderr)
    print(file=sys.stderr)
    thin = sorted((c for c in found if c.kills < args.floor), key=lambda c: c.kills)
    for c in thin:
        why = inapplicable(c.operator, c.entry, c.level) if c.kind == "validation" else None
        print(f"{c.kills:3d} of {c.covered:4d} covered  {c.operator} {c.data_type.name} "
              f"{c.level}  {c.kind} {c.entry}" + (f"  (inapplicable: {why})" if why else ""))
    print(f"{len(found)} pairs, {len(thin)} below {args.floor} FAILs"
          + (f"; thinnest: {thin[0].operator} {thin[0].data_type.name} {thin[0].entry} "
             f"({thin[0].kills})" if thin else ""))
    if args.json:
        args.json.write_text(json.dumps([{**c.__dict__, "data_type": c.data_type.name,
                                           "level": str(c.level)} for c in found], indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
