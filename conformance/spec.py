"""The spec pages the suite cites, and the citation and violation records built on them.

Every rule the suite checks names the page and section it comes from. Pages are the DirectML
documentation pages the project was founded on (copied facts live in docs/spec-notes.md, which
is the project's copy of the team's NOTES file; "NOTES §N" cites its section N).
"""

from __future__ import annotations

from dataclasses import dataclass

_API = "https://learn.microsoft.com/windows/win32/api/directml/"
_DOCS = "https://learn.microsoft.com/windows/ai/directml/"

#: Spec page key -> public address. The keys are the page names used in case files.
PAGES: dict[str, str] = {
    "DML_DEPTH_TO_SPACE_OPERATOR_DESC": _API + "ns-directml-dml_depth_to_space_operator_desc",
    "DML_DEPTH_TO_SPACE1_OPERATOR_DESC": _API + "ns-directml-dml_depth_to_space1_operator_desc",
    "DML_SPACE_TO_DEPTH_OPERATOR_DESC": _API + "ns-directml-dml_space_to_depth_operator_desc",
    "DML_SPACE_TO_DEPTH1_OPERATOR_DESC": _API + "ns-directml-dml_space_to_depth1_operator_desc",
    "DML_RESAMPLE_OPERATOR_DESC": _API + "ns-directml-dml_resample_operator_desc",
    "DML_RESAMPLE1_OPERATOR_DESC": _API + "ns-directml-dml_resample1_operator_desc",
    # The newer pages live under windows/ai/directml (the RESAMPLE3 page links RESAMPLE2 there).
    "DML_RESAMPLE2_OPERATOR_DESC": _DOCS + "api/ns-directml-dml_resample2_operator_desc",
    "DML_RESAMPLE3_OPERATOR_DESC": _DOCS + "api/ns-directml-dml_resample3_operator_desc",
    "DML_AXIS_DIRECTION": _API + "ne-directml-dml_axis_direction",
    "DML_BUFFER_TENSOR_DESC": _API + "ns-directml-dml_buffer_tensor_desc",
    "DML_DEPTH_SPACE_ORDER": _API + "ne-directml-dml_depth_space_order",
    "DML_INTERPOLATION_MODE": _API + "ne-directml-dml_interpolation_mode",
    "DML_TENSOR_DATA_TYPE": _API + "ne-directml-dml_tensor_data_type",
    "DML_FEATURE_LEVEL": _API + "ne-directml-dml_feature_level",
    "dml-strides": _DOCS + "dml-strides",
    "dml-helper-functions": _DOCS + "dml-helper-functions",
    "dml-feature-level-history": _DOCS + "dml-feature-level-history",
    "directml-constants": _DOCS + "directml-constants",
    "NOTES": "docs/spec-notes.md",
}


@dataclass(frozen=True)
class Citation:
    """A pointer into the spec: a page key of PAGES and a section (heading or NOTES number)."""

    page: str
    section: str = ""

    def __post_init__(self) -> None:
        if self.page not in PAGES:
            raise ValueError(f"unknown spec page {self.page!r}; known: {', '.join(PAGES)}")

    @property
    def url(self) -> str:
        return PAGES[self.page]

    def __str__(self) -> str:
        return f"{self.page} § {self.section}" if self.section else self.page

    def to_json(self) -> dict[str, str]:
        return {"page": self.page, "section": self.section, "url": self.url}


def notes(section: str) -> Citation:
    """Cite a section of the spec notes (docs/spec-notes.md), e.g. notes("2")."""
    return Citation("NOTES", section)


@dataclass(frozen=True)
class Violation:
    """One broken validation rule: a stable rule id, a message a reader understands, the cite."""

    rule: str
    message: str
    cite: Citation

    def __str__(self) -> str:
        return f"{self.message} [{self.rule}; {self.cite}]"
