"""The depth/space operators' own case families (conformance.generate writes them under
cases/generated/<family>/, the explorer searches those with a strategy)."""

from conformance.ops.depth_space.cases import blocks, equivalence, roundtrip

#: The family modules of this package (conformance/kit/family.py says what one holds).
FAMILIES = (blocks, equivalence, roundtrip)
