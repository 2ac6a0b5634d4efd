"""The suite this package certifies against: its version, where its committed cases and
mustpass lists are, and the hash that names its case set (docs/mustpass.md, "Where the suite
lives").

    installed (a wheel)   conformance/suite_data/cases, conformance/suite_data/mustpass
                          (setup.py copies the source tree's folders there at build time)
    a source tree         the top-level cases/ and mustpass/ beside conformance/ (a clone, an
                          editable install: nothing is copied, the package runs from there)

The installed copy wins where both could be: a folder named cases/ beside an installed
package (another distribution's, in site-packages) is not this suite.

The committed case set is named by the case-set hash every mustpass list's header carries
(written by `dmlconf generate` from the committed cases: results.mustpass.render), so the
hash and the number of cases are known without loading a case: `dmlconf --version` reads two
lines per list. check() compares a loaded case set with it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from conformance import __version__
from conformance.casefile import Case, case_set_hash

#: The suite version: the package's (mustpass/<SUITE_VERSION>/ holds its lists).
SUITE_VERSION = __version__
PACKAGE = Path(__file__).resolve().parent
#: Where a built wheel carries the suite (setup.py's SUITE_DATA).
INSTALLED = PACKAGE / "suite_data"
#: The source tree the package runs from, when it runs from one.
SOURCE_TREE = PACKAGE.parent

MUSTPASS_TITLE = "# dml-conformance mustpass list"
_SHA256 = "# case set sha256: "


def _root(name: str) -> Path:
    installed = INSTALLED / name
    return installed if installed.is_dir() else SOURCE_TREE / name


def cases_root() -> Path:
    """The committed cases: the installed copy, else the source tree's cases/ (which may be
    missing: a package installed without its data; callers say so)."""
    return _root("cases")


def mustpass_root() -> Path:
    """The folder of the mustpass lists, one subfolder per suite version: the installed copy,
    else the source tree's mustpass/ (which may be missing)."""
    return _root("mustpass")


class MustpassFileError(ValueError):
    """A mustpass file that is not one: 'PATH: what is wrong'."""


@dataclass(frozen=True)
class ListHeader:
    """The first two lines of a mustpass list: its suite version and claimed level, and the
    committed case set it was made from (its hash and its number of cases)."""

    suite_version: str
    level: str
    case_set_sha256: str
    cases: int

    def lines(self) -> list[str]:
        return [f"{MUSTPASS_TITLE}: suite version {self.suite_version}, feature level "
                f"{self.level}",
                f"{_SHA256}{self.case_set_sha256} ({self.cases} committed cases)"]


def read_header(lines: Sequence[str], path: str | Path) -> ListHeader:
    """The header of a list from its first two lines (MustpassFileError if they are not one)."""
    try:
        version, level = lines[0].removeprefix(f"{MUSTPASS_TITLE}: suite version ").split(
            ", feature level ")
        digest, count = lines[1].removeprefix(_SHA256).split(" (", 1)
        header = ListHeader(version, level, digest,
                            int(count.removesuffix(" committed cases)")))
    except (IndexError, ValueError):
        header = None
    if header is None or header.lines() != list(lines[:2]):
        raise MustpassFileError(f"{path}: not a mustpass list (its header is not "
                                f"'{MUSTPASS_TITLE}: suite version V, feature level L' then "
                                f"'{_SHA256}HEX (N committed cases)')")
    return header


def list_files(version: str = SUITE_VERSION) -> list[Path]:
    """The mustpass lists of a suite version (<level>.txt), sorted; none when it has none."""
    return sorted((mustpass_root() / version).glob("*.txt"))


@cache
def committed() -> ListHeader | None:
    """The header this suite version's lists agree on (the level: the first list's), from two
    lines of each list; None when there are none. MustpassFileError when they disagree on the
    version or the case set, or one is not a list."""
    headers = []
    for path in list_files():
        with path.open(encoding="utf-8") as f:
            headers.append(read_header([f.readline().rstrip("\n"), f.readline().rstrip("\n")],
                                       path))
    if not headers:
        return None
    if len({(h.suite_version, h.case_set_sha256, h.cases) for h in headers}) != 1:
        raise MustpassFileError(f"{mustpass_root() / SUITE_VERSION}: its lists name different "
                                "suite versions or case sets")
    return headers[0]


def case_set_sha256() -> str:
    """The committed case set's hash (casefile.case_set_hash of every committed case: what a
    full run's results record as case_set_sha256); "" when this suite version has no lists."""
    header = committed()
    return header.case_set_sha256 if header else ""


def describe() -> str:
    """'suite 0.1.0, case set sha256 HEX, N committed cases' (`dmlconf --version`)."""
    header = committed()
    if header is None:
        return (f"suite {SUITE_VERSION}, no mustpass lists at {mustpass_root() / SUITE_VERSION}: "
                "the committed case set is unknown")
    noun = "committed case" if header.cases == 1 else "committed cases"
    return (f"suite {SUITE_VERSION}, case set sha256 {header.case_set_sha256}, "
            f"{header.cases} {noun}")


def check(cases: Sequence[Case]) -> str | None:
    """Whether a loaded case set is the committed one: None, or the one-line problem."""
    header = committed()
    if header is None:
        return (f"no mustpass lists of suite {SUITE_VERSION} at "
                f"{mustpass_root() / SUITE_VERSION}: the committed case set is unknown, so no "
                "case set can be checked against it")
    digest = case_set_hash(cases)
    if digest == header.case_set_sha256:
        return None
    return (f"the cases loaded are not the committed case set of suite {SUITE_VERSION}: "
            f"{len(cases)} cases with sha256 {digest}, committed {header.cases} cases with "
            f"sha256 {header.case_set_sha256} (a case file under {cases_root()} was added, "
            "removed or edited, or cases were selected: reinstall the package or run every "
            "committed case)")
