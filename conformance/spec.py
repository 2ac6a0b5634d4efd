"""The spec pages the suite cites, and the citation and violation records built on them.

Every rule the suite checks names the page and section it comes from. Pages are the DirectML
documentation pages the project was founded on (copied facts live in docs/spec-notes.md, which
is the project's copy of the team's NOTES file; "NOTES §N" cites its section N).
"""

from __future__ import annotations

from dataclasses import dataclass

#: The address of the DirectML API reference pages (operator packages build theirs on it).
API = "https://learn.microsoft.com/windows/win32/api/directml/"
_DOCS = "https://learn.microsoft.com/windows/ai/directml/"

#: Spec page key -> public address: the pages every operator shares (the keys are the page names
#: used in case files). An operator package names its own pages as Page constants and lists them
#: in its PAGES; conformance.ops.pages() gathers them all when first asked.
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


class Page(str):
    """A spec page key that carries its address: an operator package's page (the shared pages
    are keys of PAGES). It is the key wherever a string is (case files, results)."""

    url: str

    def __new__(cls, key: str, url: str) -> Page:
        page = super().__new__(cls, key)
        page.url = url
        return page

    def __reduce__(self) -> tuple[type[Page], tuple[str, str]]:
        return Page, (str(self), self.url)


def pages_of(*pages: Page) -> dict[str, str]:
    """A package's PAGES: key -> address of its Page constants."""
    return {str(page): page.url for page in pages}


@dataclass(frozen=True)
class Citation:
    """A pointer into the spec: a page (a key of PAGES, or an operator package's Page) and a
    section (heading or NOTES number)."""

    page: str
    section: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.page, Page) and self.page not in PAGES:
            raise ValueError(f"unknown spec page {self.page!r}: an operator package's page is "
                             f"cited by its Page constant; shared pages: {', '.join(PAGES)}")

    @property
    def url(self) -> str:
        return self.page.url if isinstance(self.page, Page) else PAGES[self.page]

    def __str__(self) -> str:
        return f"{self.page} § {self.section}" if self.section else self.page

    def to_json(self) -> dict[str, str]:
        return {"page": str(self.page), "section": self.section, "url": self.url}


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
