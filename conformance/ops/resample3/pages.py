"""The spec page of RESAMPLE3, beside RESAMPLE2's under windows/ai/directml."""

from __future__ import annotations

from conformance.ops.resample2.pages import DOCS_API
from conformance.spec import Page, pages_of

PAGE = Page("DML_RESAMPLE3_OPERATOR_DESC", DOCS_API + "ns-directml-dml_resample3_operator_desc")
PAGES = pages_of(PAGE)
