"""A few larger cases per operator (its large_examples), with sizes that cross the points where
implementations change strategy: rows longer than a vector or a tile (and not a multiple of one:
65, 129, 257, 1025 elements), planes beyond a cache line, channel counts beyond a thread group,
batch > 1. Judged against the reference (bit-exact for data movement, the tolerance models for
computed outputs). One file per operator package.
"""

from __future__ import annotations

from conformance.generate.family import package_examples
from conformance.kit.build import case, cite, smooth_input, values_for

FAMILY = "large"
DESCRIPTION = "larger tensors that cross vector, tile and thread-split sizes"
#: The hooks this family asks of every operator it applies to (its Examples).
HOOKS = ("large_examples",)


def files() -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for package, examples in package_examples(FAMILY, "large_examples").items():
        cases = out.setdefault(package, [])
        for example in examples:
            (data_type,) = example.data_types
            tensors = example.tensors(data_type)
            parts = [example.operator.lower(), example.slug, data_type.name.lower(),
                     "x".join(map(str, tensors["InputTensor"]["Sizes"]))]
            cid = "generated/large/" + "/".join(p for p in parts if p)
            source = (smooth_input if example.inputs == "smooth" else values_for)(
                cid, tensors["InputTensor"])
            cases.append(case(cid, example.operator, example.attributes, tensors, family=FAMILY,
                              spec=[cite(c.page, c.section) for c in example.cites],
                              inputs={"InputTensor": source}))
    return out
