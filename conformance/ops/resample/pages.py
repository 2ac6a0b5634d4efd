"""The spec pages of the resample family (their documented cases cite them too): RESAMPLE,
RESAMPLE1 and DML_INTERPOLATION_MODE; RESAMPLE2, RESAMPLE3 and DML_AXIS_DIRECTION, whose newer
operator pages live under windows/ai/directml (the RESAMPLE3 page links RESAMPLE2 there).

PAGES is what this package brings conformance.ops.pages(); RESAMPLE2_PAGES and RESAMPLE3_PAGES
are the PAGES of the resample2 and resample3 packages, which file those operators under their
own names (conformance/ops/resample/__init__.py says why)."""

from __future__ import annotations

from conformance.spec import API, Page, pages_of

DOCS_API = "https://learn.microsoft.com/windows/ai/directml/api/"
RESAMPLE = Page("DML_RESAMPLE_OPERATOR_DESC", API + "ns-directml-dml_resample_operator_desc")
RESAMPLE1 = Page("DML_RESAMPLE1_OPERATOR_DESC", API + "ns-directml-dml_resample1_operator_desc")
MODE_PAGE = Page("DML_INTERPOLATION_MODE", API + "ne-directml-dml_interpolation_mode")
RESAMPLE2 = Page("DML_RESAMPLE2_OPERATOR_DESC",
                 DOCS_API + "ns-directml-dml_resample2_operator_desc")
DIRECTION_PAGE = Page("DML_AXIS_DIRECTION", API + "ne-directml-dml_axis_direction")
RESAMPLE3 = Page("DML_RESAMPLE3_OPERATOR_DESC",
                 DOCS_API + "ns-directml-dml_resample3_operator_desc")
PAGES = pages_of(RESAMPLE, RESAMPLE1, MODE_PAGE)
RESAMPLE2_PAGES = pages_of(RESAMPLE2, DIRECTION_PAGE)
RESAMPLE3_PAGES = pages_of(RESAMPLE3)
