"""The spec pages the suite cites, and the citation and violation records built on them.

Every rule the suite checks names the page and section it comes from. Pages are the DirectML
documentation pages the project was founded on (copied facts live in docs/spec-notes.md, which
is the project's copy of the team's NOTES file; "NOTES §N" cites its section N).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

#: The address of the DirectML API reference pages (operator packages build theirs on it).
API = "https://learn.microsoft.com/windows/win32/api/directml/"
_DOCS = "https://learn.microsoft.com/windows/ai/directml/"

#: Spec page key -> public address. The keys are the page names used in case files. These are
#: the pages every operator shares; each operator package adds its own with register() (the
#: packages are found when conformance.ops is imported).
PAGES: dict[str, str] = {
    "DML_BUFFER_TENSOR_DESC": API + "ns-directml-dml_buffer_tensor_desc",
    "DML_TENSOR_DATA_TYPE": API + "ne-directml-dml_tensor_data_type",
    "DML_FEATURE_LEVEL": API + "ne-directml-dml_feature_level",
    "dml-strides": _DOCS + "dml-strides",
    "dml-helper-functions": _DOCS + "dml-helper-functions",
    "dml-feature-level-history": _DOCS + "dml-feature-level-history",
    "directml-constants": _DOCS + "directml-constants",
    "NOTES": "docs/spec-notes.md",
}


def register(pages: Mapping[str, str]) -> None:
    """Add an operator package's pages to PAGES. A page may be registered again (two packages
    citing one enum page) only with the same address."""
    for key, url in pages.items():
        if PAGES.get(key, url) != url:
            raise ValueError(f"spec page {key!r} registered with two addresses: "
                             f"{PAGES[key]} and {url}")
        PAGES[key] = url


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
