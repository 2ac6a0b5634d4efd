"""The spec pages of the depth/space operators (their documented cases cite them too)."""

from __future__ import annotations

from conformance.spec import API, Page, pages_of

DEPTH_TO_SPACE = Page("DML_DEPTH_TO_SPACE_OPERATOR_DESC",
                      API + "ns-directml-dml_depth_to_space_operator_desc")
DEPTH_TO_SPACE1 = Page("DML_DEPTH_TO_SPACE1_OPERATOR_DESC",
                       API + "ns-directml-dml_depth_to_space1_operator_desc")
SPACE_TO_DEPTH = Page("DML_SPACE_TO_DEPTH_OPERATOR_DESC",
                      API + "ns-directml-dml_space_to_depth_operator_desc")
SPACE_TO_DEPTH1 = Page("DML_SPACE_TO_DEPTH1_OPERATOR_DESC",
                       API + "ns-directml-dml_space_to_depth1_operator_desc")
ORDER_PAGE = Page("DML_DEPTH_SPACE_ORDER", API + "ne-directml-dml_depth_space_order")
PAGES = pages_of(DEPTH_TO_SPACE, DEPTH_TO_SPACE1, SPACE_TO_DEPTH, SPACE_TO_DEPTH1, ORDER_PAGE)
