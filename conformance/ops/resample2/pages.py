"""The spec pages of RESAMPLE2 (its documented cases cite them too). The newer operator pages live
under windows/ai/directml (the RESAMPLE3 page links RESAMPLE2 there)."""

from __future__ import annotations

from conformance.spec import API, Page, pages_of

DOCS_API = "https://learn.microsoft.com/windows/ai/directml/api/"
PAGE = Page("DML_RESAMPLE2_OPERATOR_DESC", DOCS_API + "ns-directml-dml_resample2_operator_desc")
DIRECTION_PAGE = Page("DML_AXIS_DIRECTION", API + "ne-directml-dml_axis_direction")
PAGES = pages_of(PAGE, DIRECTION_PAGE)
