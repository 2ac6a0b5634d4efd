"""RESAMPLE3's own case families (conformance.generate writes them under cases/generated/<family>/
beside the other operators' parts of the same families)."""

from conformance.ops.resample3.cases import antialias, equivalence, offsets, sampling

#: The family modules of this package (conformance/kit/family.py says what one holds).
FAMILIES = (antialias, equivalence, offsets, sampling)
