"""RESAMPLE and RESAMPLE1: the spec (spec.py), the package's case families (cases/) and its
misreadings (misreadings.py); docs/operators.md says what an operator package provides."""

from conformance.ops.resample.pages import PAGES
from conformance.ops.resample.spec import (
    ACCUMULATION_REL_ERROR,
    COORDINATE_REL_ERROR,
    D3D_RULES,
    FLOAT16_OP_ERROR,
    FLOAT32_MIN_NORMAL,
    FLOAT32_OP_ERROR,
    INTERPOLATION_MODE,
    LEGAL_COORDINATE_REL_ERROR,
    MODES,
    NearestRounding,
    Resample,
    Resample1,
    coordinates,
    interpolated,
    legal_coordinate_error,
    linear_taps,
    nearest_index,
    operation_count,
    support_tables,
)

OPERATORS = (Resample(), Resample1())

__all__ = ["ACCUMULATION_REL_ERROR", "COORDINATE_REL_ERROR", "D3D_RULES", "FLOAT16_OP_ERROR",
           "FLOAT32_MIN_NORMAL", "FLOAT32_OP_ERROR", "INTERPOLATION_MODE",
           "LEGAL_COORDINATE_REL_ERROR", "MODES", "OPERATORS", "PAGES", "NearestRounding",
           "Resample", "Resample1", "coordinates", "interpolated", "legal_coordinate_error",
           "linear_taps", "nearest_index", "operation_count", "support_tables"]
