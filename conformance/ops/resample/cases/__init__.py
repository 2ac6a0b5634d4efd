"""The resample operators' own case families (conformance.generate writes them under
cases/generated/<family>/, the explorer searches those with a strategy)."""

from conformance.ops.resample.cases import boundaries, equivalence, offsets, sampling

#: The family modules of this package (conformance/kit/family.py says what one holds).
FAMILIES = (boundaries, equivalence, offsets, sampling)
