"""The Case model the runner consumes: a case's calls, where its inputs come from (Source,
Take), what its outputs must hold (Expectation, Relation)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from conformance.levels import FeatureLevel
from conformance.ops import OperatorCall
from conformance.spec import Citation
from conformance.tensors import TensorDesc

SINGLE = "call"  # the name of the one call of a single-call case


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
    #: The open region of the spec the case sits in, whose admissible readings the operator's
    #: expectation enumerates (Expected.readings): a mandatory case, judged against every one.
    open: str | None = None
    #: Why the desc may also be rejected (an open region of validation whose readings are
    #: "rejected" and "accepted and computed as expected", spec-notes §11), or None. Such a case
    #: has expected outputs and is mandatory: a rejection PASSes, naming the reading; an
    #: accepted run is judged against the outputs.
    may_reject: str | None = None
    file: str = ""
    line: int = 0
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)
    #: digest() when the loader knows it already: the sha256 of the case's canonical text, as
    #: parsed, or as the parse cache held it (checked against that text before it was
    #: believed: casefile.cache); "" otherwise.
    sha256: str = field(default="", repr=False, compare=False)

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
        """sha256 of the case's mapping (its defaults merged in): names its content."""
        return self.sha256 or raw_digest(self.raw)


def canonical(raw: dict[str, Any]) -> bytes:
    """A case's plain mapping as the text its digest is the sha256 of: JSON, keys sorted at
    every depth, ASCII (the parse cache stores a case as this text: casefile.cache)."""
    return json.dumps(raw, sort_keys=True).encode()


def raw_digest(raw: dict[str, Any]) -> str:
    """The digest of a case's plain mapping (Case.digest): the sha256 of canonical(raw)."""
    return hashlib.sha256(canonical(raw)).hexdigest()
