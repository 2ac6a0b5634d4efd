"""The spec pages of RESAMPLE and RESAMPLE1 (their documented cases cite them too)."""

from __future__ import annotations

from conformance.spec import API, Page, pages_of

RESAMPLE = Page("DML_RESAMPLE_OPERATOR_DESC", API + "ns-directml-dml_resample_operator_desc")
RESAMPLE1 = Page("DML_RESAMPLE1_OPERATOR_DESC", API + "ns-directml-dml_resample1_operator_desc")
MODE_PAGE = Page("DML_INTERPOLATION_MODE", API + "ne-directml-dml_interpolation_mode")
PAGES = pages_of(RESAMPLE, RESAMPLE1, MODE_PAGE)
