"""What a case family is, and what the explorer draws its examples with.

A family module defines FAMILY (its name), DESCRIPTION, files() -> {stem: [case dicts]} and,
where `dmlconf explore` searches it, explore() -> a Hypothesis strategy of Example. The generic
families are modules of conformance.generate; an operator package brings its own in its cases
package, whose FAMILIES lists them (docs/operators.md). Modules of several packages may share a
family name: each writes its own files of cases/generated/<family>/.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from hypothesis import note
from hypothesis import strategies as st

#: The seed of an example's random inputs: one of its draws.
SEEDS = st.integers(0, 2**32 - 1)


@dataclass(frozen=True)
class Example:
    """One drawn case: its family, the named draws it was built from, and the case dict."""

    family: str
    params: dict[str, Any]
    case: dict[str, Any] = field(repr=False)

    def __repr__(self) -> str:
        return f"{self.family}({', '.join(f'{k}={v!r}' for k, v in self.params.items())})"


class Picker:
    """draw() with a name: each value is noted (hypothesis.note) and kept in params. It takes a
    strategy, a range of integers or a sequence of values (conformance.ops.examples.Pick, as
    the operators' Examples.draw_call uses it); with count, a list of that many draws."""

    def __init__(self, draw: Callable[[st.SearchStrategy[Any]], Any]) -> None:
        self._draw = draw
        self.params: dict[str, Any] = {}

    def __call__(self, name: str, choices: st.SearchStrategy[Any] | range | Sequence[Any],
                 count: int | None = None) -> Any:
        if isinstance(choices, range) and choices.step == 1:
            strategy: st.SearchStrategy[Any] = st.integers(choices.start, choices.stop - 1)
        elif isinstance(choices, st.SearchStrategy):
            strategy = choices
        else:
            strategy = st.sampled_from(tuple(choices))
        if count is not None:
            strategy = st.lists(strategy, min_size=count, max_size=count)
        value = self._draw(strategy)
        self.params[name] = value
        note(f"{name} = {value!r}")
        return value


def example_id(family: str) -> str:
    """The id an example carries while it is explored (a regression gets its own)."""
    return f"explore/{family}/example"
