"""The resample family: RESAMPLE, RESAMPLE1, RESAMPLE2 and RESAMPLE3 in one package. spec.py holds
the four specs (each its page's data, on one family base), sampling.py and antialias.py the
sampling they share, attributes.py their desc members that are no tensors, describe.py what the
operator reference (`dmlconf describe`) says beyond that data (the formula, the example
backend's kernels), examples.py the generic families' calls, pages.py the pages, the
misreadings*.py modules the catalogues and cases/ this package's case families (with derive.py,
which restates RESAMPLE1's cases for RESAMPLE2 and RESAMPLE3); docs/operators.md says what an
operator package provides.

Discovery (conformance.ops) files an operator under the package that lists it in OPERATORS, and
the generated cases are written per package: large/<package>.yaml and bitlevel/<package>.yaml,
and each file's header names the family module that wrote it. So that those files stay as they
are, this package lists RESAMPLE and RESAMPLE1, and two thin packages file the others under their
own names: conformance/ops/resample2/ (RESAMPLE2) and conformance/ops/resample3/ (RESAMPLE3),
each holding only its OPERATORS and PAGES, its misreadings (this package's catalogue of that
operator) and its case families (built on this package).
"""

from conformance.ops.resample.attributes import AXIS_DIRECTIONS, INTERPOLATION_MODE, MODES
from conformance.ops.resample.pages import PAGES
from conformance.ops.resample.sampling import (
    ACCUMULATION_REL_ERROR,
    COORDINATE_REL_ERROR,
    D3D_RULES,
    FLOAT16_OP_ERROR,
    FLOAT32_MIN_NORMAL,
    FLOAT32_OP_ERROR,
    LEGAL_COORDINATE_REL_ERROR,
    NearestRounding,
    coordinates,
    interpolated,
    legal_coordinate_error,
    linear_taps,
    nearest_index,
    operation_count,
)
from conformance.ops.resample.spec import (
    ROUNDINGS,
    Resample,
    Resample1,
    Resample2,
    Resample3,
    ResampleFamily,
    support_tables,
    tables,
)

OPERATORS = (Resample(), Resample1())

__all__ = ["ACCUMULATION_REL_ERROR", "AXIS_DIRECTIONS", "COORDINATE_REL_ERROR", "D3D_RULES",
           "FLOAT16_OP_ERROR", "FLOAT32_MIN_NORMAL", "FLOAT32_OP_ERROR", "INTERPOLATION_MODE",
           "LEGAL_COORDINATE_REL_ERROR", "MODES", "OPERATORS", "PAGES", "ROUNDINGS",
           "NearestRounding", "Resample", "Resample1", "Resample2", "Resample3",
           "ResampleFamily", "coordinates", "interpolated", "legal_coordinate_error",
           "linear_taps", "nearest_index", "operation_count", "support_tables", "tables"]
