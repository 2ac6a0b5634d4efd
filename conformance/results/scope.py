"""A scoped claim (docs/certification.md, "Scoped certification"): the slices of the suite a
backend claims, each an operator and the data types it claims that operator in. A case is
covered when every call of it is to a claimed operator and every data type of its tensors is
claimed for each of its operators; the verdict (results.verdicts) judges the covered cases
and counts the rest "not covered", a neutral word: a case that was not claimed is never a
failure. Computed from each case's own metadata (its operators and data types, as the
results document records them), so the scope of a mustpass list needs no list of its own.

The syntax, one --scope per operator (repeatable) or several joined with ';':

    OPERATOR                    every data type the operator takes
    OPERATOR:FLOAT32,FLOAT16    the operator in FLOAT32 and FLOAT16

The idea is Vulkan CTS's: an optional feature a driver does not claim reads NotSupported
without failing the claim."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from conformance import ops
from conformance.levels import FeatureLevel
from conformance.tensors import DataType


class ScopeError(ValueError):
    """A --scope that names no operator or data type the suite knows (its text says what to
    write instead)."""


def _unknown(given: str, names: Iterable[str], kind: str) -> str:
    names = list(names)
    return (f"--scope: {given!r} is no {kind}: {ops.did_you_mean(given, names)}the {kind}s are "
            f"{', '.join(names)}")


@dataclass(frozen=True)
class Scope:
    """Operator name -> the data types claimed for it (names, in DML_TENSOR_DATA_TYPE order)."""

    claims: tuple[tuple[str, tuple[str, ...]], ...]

    @classmethod
    def parse(cls, texts: Iterable[str]) -> Scope | None:
        """The scope of the --scope values given (None for none); ScopeError for a name the
        suite does not know, or a data type the operator takes at no feature level."""
        claims: dict[str, set[DataType]] = {}
        for text in texts:
            for part in filter(None, (p.strip() for p in str(text).split(";"))):
                name, _, types = part.partition(":")
                name = name.strip().upper().removeprefix("DML_").removesuffix(
                    "_OPERATOR_DESC")
                if name not in ops.OPERATORS:
                    raise ScopeError(_unknown(name, ops.OPERATORS, "operator"))
                spec = ops.get(name)
                takes = set(spec.data_types)
                if types.strip():
                    wanted = set()
                    for t in filter(None, (t.strip() for t in types.split(","))):
                        try:
                            wanted.add(DataType.parse(t))
                        except ValueError:
                            raise ScopeError(_unknown(
                                t.upper(), [d.name for d in spec.data_types],
                                f"data type of {name}")) from None
                    beyond = sorted(wanted - takes)
                    if beyond:
                        raise ScopeError(
                            f"--scope: {name} takes no {', '.join(d.name for d in beyond)} "
                            f"at any feature level; it takes "
                            f"{', '.join(d.name for d in spec.data_types)}")
                else:
                    wanted = takes
                claims.setdefault(name, set()).update(wanted)
        if not claims:
            return None
        return cls(tuple((name, tuple(d.name for d in sorted(types)))
                         for name, types in sorted(claims.items())))

    @classmethod
    def from_json(cls, data: Any) -> Scope | None:
        """A document's "scope" (operator -> [data type names]); None for null or absent."""
        if not isinstance(data, Mapping) or not data:
            return None
        return cls.parse(f"{op}:{','.join(types)}" for op, types in data.items())

    def to_json(self) -> dict[str, list[str]]:
        return {name: list(types) for name, types in self.claims}

    def covers(self, operators: Iterable[str], data_types: Iterable[str]) -> bool:
        """Whether a case of these operators and tensor data types is in the claim."""
        claimed = dict(self.claims)
        names = list(operators)
        types = set(data_types)
        return bool(names) and all(op in claimed and types <= set(claimed[op]) for op in names)

    def text(self) -> str:
        """"<operator> (FLOAT32, FLOAT16)", an operator claimed in every type it takes by its
        name alone."""
        out = []
        for name, types in self.claims:
            every = tuple(d.name for d in ops.get(name).data_types)
            out.append(name if types == every else f"{name} ({', '.join(types)})")
        return "; ".join(out)

    def option(self) -> str:
        """The --scope value that gives this scope again."""
        return ";".join(f"{name}:{','.join(types)}" for name, types in self.claims)

    def beyond_level(self, level: FeatureLevel) -> list[str]:
        """The claims no case at `level` can cover: an operator introduced later, or a data
        type its tables take only above `level` ("<operator> (introduced at 6_4)")."""
        out = []
        for name, types in self.claims:
            spec = ops.get(name)
            table = spec.table_at(level)
            if table is None:
                out.append(f"{name} (introduced at {spec.introduced})")
                continue
            later = [t for t in types if DataType[t] not in table.data_types]
            if later:
                out.append(f"{name} {', '.join(later)} (not taken at {level})")
        return out


def for_scope(scope: Scope | None) -> str:
    """" for <operator> (FLOAT32)" after a claim's level, "" for a claim of the whole level."""
    return f" for {scope.text()}" if scope is not None else ""
