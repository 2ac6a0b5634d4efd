"""What one output must hold: the expectation model an operator's spec makes (OperatorSpec.
expected) and the judge applies (conformance.judge.compare). A data type of the bottom layer, so
that operators build it without importing the judge.

Three kinds, each exact where the spec is exact and bounded where it is not:
- exact:  every element's bits equal the expected bits (NaN payloads and -0.0 included).
- one_of: each element equals, bit for bit, the element of one of several acceptable arrays
          (nearest-neighbour at a tie of the coordinate: spec-notes §4).
- within: |got - center| <= bound per element, computed in float64; a NaN center needs a NaN.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

Kind = Literal["exact", "one_of", "within"]


@dataclass
class Expected:
    """What one output must hold. values: the reference output in the output's dtype."""

    values: np.ndarray
    kind: Kind = "exact"
    alternatives: tuple[np.ndarray, ...] = ()
    center: np.ndarray | None = None
    bound: np.ndarray | None = None
    rule: str = "bit-exact"
    #: The legal envelope, where it is wider than this (strict) model: what DirectML on D3D12
    #: may legally return under the platform's arithmetic rules (docs/tolerances.md). An output
    #: outside it FAILs; inside it but outside the strict model it is a QUALITY_WARNING. None:
    #: the strict model is also the legal one (data movement, inline values).
    legal: Expected | None = None
    #: Where a NaN is expected, any NaN is acceptable (exact and one_of kinds).
    any_nan: bool = False
    #: 'within' kind: where True, a NaN is acceptable besides the center (linear resampling
    #: where a tap of weight 0 is NaN or infinite: multiplying it in gives NaN, legally).
    nan_ok: np.ndarray | None = None
    #: The other admissible readings of an open region of the spec (docs/spec-notes.md names
    #: each region and its readings): whole models of the output, each with its own strict model
    #: and envelope, whose rule names the reading. An output outside this model's envelope that
    #: fits one of them is judged by that one (conformance.judge.compare.judge); an output that
    #: fits none FAILs.
    readings: tuple[Expected, ...] = ()

    @property
    def envelope(self) -> Expected:
        """The model that decides FAIL: the legal envelope, or this model where none is set."""
        return self.legal if self.legal is not None else self

    @property
    def band(self) -> tuple[np.ndarray, np.ndarray]:
        """center and bound of a 'within' model (which __post_init__ makes sure it has)."""
        if self.center is None or self.bound is None:
            raise ValueError(f"a '{self.kind}' expectation has no center and bound")
        return self.center, self.bound

    def __post_init__(self) -> None:
        if self.kind == "within" and (self.center is None or self.bound is None):
            raise ValueError("a 'within' expectation needs center and bound")
