"""RESAMPLE2's own case families (conformance.generate writes them under cases/generated/<family>/
beside RESAMPLE1's parts of the same families)."""

from conformance.ops.resample2.cases import equivalence, offsets, sampling

#: The family modules of this package (conformance/kit/family.py says what one holds).
FAMILIES = (equivalence, offsets, sampling)
