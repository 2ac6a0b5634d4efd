"""Mustpass lists (docs/mustpass.md): per suite version and claimed feature level, the ids of
the mandatory cases a run must cover before its verdict may say "conformant" (the idea of
Vulkan CTS's per-release mustpass lists). `dmlconf generate` writes them from the committed
cases into mustpass/<suite version>/<level>.txt; the verdict (results.verdicts) reads them.

One rule says what is mandatory, here, for both: the list of a claimed level and the verdict of
every level up to it."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from conformance import __version__, suite
from conformance.casefile import Case, case_set_hash
from conformance.levels import FeatureLevel
from conformance.suite import MustpassFileError, read_header


def mandatory(need: FeatureLevel, below: FeatureLevel | None, ambiguous: bool,
              level: FeatureLevel, claimed: FeatureLevel) -> bool:
    """Whether a case decides the verdict of `level` in a run claiming `claimed`: not ambiguous,
    needing `level` or less, and not limited to levels below the claimed one (such a case is
    not run, NOT_SUPPORTED: a run claiming a lower level judges it)."""
    return (not ambiguous and need <= level
            and not (below is not None and claimed >= below))


@dataclass(frozen=True)
class Mustpass:
    """The lists of one suite version: claimed level (text, "6_2") -> the mandatory case ids a
    run claiming it must run; case_set_sha256 names the committed cases they were made from."""

    suite_version: str
    case_set_sha256: str
    lists: dict[str, frozenset[str]] = field(default_factory=dict)

    def required(self, level: FeatureLevel, claimed: FeatureLevel) -> frozenset[str] | None:
        """The ids deciding `level` in a run claiming `claimed` (level <= claimed): the claimed
        level's list less the cases needing more than `level`, which is the claimed list met
        with the list of `level` (a case in both needs at most `level` and is not limited below
        the claimed level). None when this suite version has no list for either."""
        if str(level) not in self.lists or str(claimed) not in self.lists:
            return None
        return self.lists[str(level)] & self.lists[str(claimed)]


def from_cases(cases: Iterable[Case], levels: Iterable[FeatureLevel],
               suite_version: str = __version__) -> Mustpass:
    """The lists of the given cases (the committed ones: `dmlconf generate`), one per level."""
    cases = list(cases)
    lists = {str(lv): frozenset(c.id for c in cases
                                if mandatory(c.feature_level, c.feature_level_below,
                                             bool(c.ambiguous), lv, lv))
             for lv in levels}
    return Mustpass(suite_version, case_set_hash(cases), lists)


def render(mp: Mustpass, total: int) -> dict[str, str]:
    """File name (<level>.txt) -> text: the header, then one id per line, sorted. total: the
    number of committed cases the case-set hash covers."""
    out = {}
    for level, ids in mp.lists.items():
        out[f"{level}.txt"] = "\n".join([
            *suite.ListHeader(mp.suite_version, level, mp.case_set_sha256, total).lines(),
            f"# {len(ids)} mandatory cases a run claiming {level} must run; written by "
            "`dmlconf generate` (docs/mustpass.md): do not edit",
            *sorted(ids)]) + "\n"
    return out


def parse(text: str, path: str | Path) -> tuple[str, str, str, frozenset[str]]:
    """(suite version, feature level, case set sha256, ids) of one list's text."""
    lines = text.splitlines()
    header = read_header(lines, path)
    version, level, digest = header.suite_version, header.level, header.case_set_sha256
    ids = [line for line in lines[3:] if line and not line.startswith("#")]
    if ids != sorted(set(ids)):
        raise MustpassFileError(f"{path}: the case ids are not sorted and unique")
    return version, level, digest, frozenset(ids)


def load(folder: str | Path) -> Mustpass | None:
    """The lists of one suite version's folder (mustpass/<version>/); None when it has none.
    MustpassFileError when its files disagree on the version or the case set."""
    files = sorted(Path(folder).glob("*.txt"))
    if not files:
        return None
    parsed = [parse(f.read_text(encoding="utf-8"), f) for f in files]
    if len({(v, d) for v, _, d, _ in parsed}) != 1:
        raise MustpassFileError(f"{folder}: its lists name different suite versions or case "
                                "sets")
    version, _, digest, _ = parsed[0]
    return Mustpass(version, digest, {lv: ids for _, lv, _, ids in parsed})


@cache
def committed() -> Mustpass:
    """This suite version's committed lists (suite.mustpass_root(): the installed copy or the
    source tree's mustpass/); an empty Mustpass when it has none: then no level has a
    verdict."""
    return load(suite.mustpass_root() / suite.SUITE_VERSION) or Mustpass(suite.SUITE_VERSION, "")
