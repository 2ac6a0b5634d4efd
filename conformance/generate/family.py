"""What the generic families ask every operator (conformance.kit.family says what a family is):
through its examples (OperatorSpec.examples, a conformance.ops.examples.Examples)."""

from __future__ import annotations

from conformance import ops
from conformance.ops.base import OperatorSpec
from conformance.ops.examples import ExampleCall


def operators(family: str) -> list[OperatorSpec]:
    """The operators a generic family asks: all but those whose examples list it in
    not_applicable."""
    return [s for s in ops.OPERATORS.values() if family not in s.examples.not_applicable]


def package_examples(family: str, hook: str) -> dict[str, list[ExampleCall]]:
    """Package name -> the calls its operators' examples give a family through a hook
    (large_examples, bitlevel_examples): each call once, in the order given (operators of a
    package may share one list)."""
    out: dict[str, list[ExampleCall]] = {}
    for spec in operators(family):
        calls = out.setdefault(ops.PACKAGES[spec.name], [])
        for example in getattr(spec.examples, hook)():
            if example not in calls:
                calls.append(example)
    return out
