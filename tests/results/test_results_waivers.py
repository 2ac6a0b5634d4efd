"""Baseline entries with `when:` tags, and waivers (docs/baselines.md, "Tags" and "Waivers"):
which runs an entry applies to, what a waived failure becomes in the results, the verdict and
compare, and that baselines and results documents from before them still read."""

from __future__ import annotations

import datetime as dt
import json
import re
import textwrap
from pathlib import Path

import pytest

from conformance import results
from conformance.cli import main
from conformance.levels import FeatureLevel
from conformance.results import (
    BaselineSummary,
    Result,
    Status,
    Verdict,
    baseline,
    conformant_text,
    verdicts,
)
from conformance.results import diff as run_diff
from conformance.results.mustpass import Mustpass
from tests.support import BROKEN, DOCUMENTED, ROOT, SWAPPED, Dmlconf, result_of, statuses

D2S1 = ("documented/depth_to_space1/example-1-depth-column-row",
        "documented/depth_to_space1/example-2-column-row-depth")
S2D1 = ("documented/space_to_depth1/example-1-depth-column-row",
        "documented/space_to_depth1/example-2-column-row-depth")
LINUX_DML = baseline.run_tags("directml", [], {}, os_name="Linux")


def entry(when: str = "", **extra: str) -> baseline.Entry:
    """The one entry of a baseline `- {cases: t/a, status: FAIL, reason: r, <extra>, when:
    {<when>}}`."""
    fields = ", ".join([f"{k}: {v}" for k, v in extra.items()]
                       + ([f"when: {{{when}}}"] if when else []))
    return baseline.parse(f"- {{cases: t/a, status: FAIL, reason: r{', ' if fields else ''}"
                          f"{fields}}}").entries[0]


def fail(case_id: str = "t/a", status: str = "FAIL") -> Result:
    return Result(id=case_id, status=status, message="OutputTensor: 1 of 4 differ")


# -- the examples of docs/baselines.md are the ones these tests load -----------------------------
def doc_examples() -> list[baseline.Baseline]:
    """The YAML blocks of docs/baselines.md, parsed, in the page's order."""
    text = (ROOT / "docs" / "baselines.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```yaml\n(.*?)```", text, re.S)
    return [baseline.parse(b, f"docs/baselines.md block {i}") for i, b in enumerate(blocks, 1)]


def test_the_documented_tags_example_applies_where_its_tags_match() -> None:
    _, tagged, _ = doc_examples()
    nearest, large, half = tagged.entries
    assert nearest.when == (("vendor", ("NVIDIA*",)), ("driver", ("31.0.15.*", "32.0.*")))
    assert large.when == (("os", ("linux",)), ("backend", ("directml",)))
    assert half.when == (("execution_flags", ("*ALLOW_HALF_PRECISION_COMPUTATION*",)),)
    nvidia = baseline.run_tags("directml", [], {"vendor": "NVIDIA", "driver": "32.0.101.5"},
                               os_name="Windows")
    assert nearest.not_here(nvidia) is None
    assert large.not_here(nvidia) == "os 'linux' (this run: 'windows')"
    assert half.not_here(nvidia) == ("execution_flags '*ALLOW_HALF_PRECISION_COMPUTATION*' "
                                     "(this run: 'NONE')")
    amd = baseline.run_tags("directml", ["ALLOW_HALF_PRECISION_COMPUTATION"],
                            {"vendor": "AMD"}, os_name="Linux")
    assert nearest.not_here(amd) == ("vendor 'NVIDIA*' (this run: 'AMD'); driver '31.0.15.*' or "
                                     "'32.0.*' (this run does not tell its driver)")
    assert large.not_here(amd) is None and half.not_here(amd) is None
    found = [fail("generated/large/x", status="TIMEOUT"),
             fail("generated/sampling/resample1/int8/nearest_neighbor/1d")]
    applied = baseline.apply(tagged, found, tags=amd)
    assert [r.status for r in applied.results] == ["XFAIL", "FAIL"]
    assert [(e["cases"], e["why"]) for e in applied.not_applying] == [
        (nearest.shown, "not for this run: " + str(nearest.not_here(amd)))]
    assert [e["cases"] for e in applied.stale] == [half.shown]  # applies here, matched nothing


def test_the_documented_waiver_example_is_a_waiver() -> None:
    plain, _, waivers = doc_examples()
    assert not any(e.waiver or e.when for e in plain.entries)  # the format before tags
    (w,) = waivers.entries
    assert (w.waiver, w.expires, w.issue) == (True, dt.date(2099, 12, 31),
                                              "https://example.com/driver/issues/1234")
    applied = baseline.apply(waivers, [fail(w.cases[0])], tags=LINUX_DML)
    (r,) = applied.results
    assert r.status == "XFAIL" and applied.waived == [w.cases[0]] and applied.expected == []
    assert r.message == (f"waived FAIL ({w.reason}; {w.issue}; waived until 2099-12-31): "
                         "OutputTensor: 1 of 4 differ")
    assert r.waiver == {"cases": w.shown, "reason": w.reason, "issue": w.issue,
                        "expires": "2099-12-31"}


# -- tags ---------------------------------------------------------------------------------------
def test_run_tags() -> None:
    tags = baseline.run_tags("mypkg:Mine", ["ALLOW_HALF_PRECISION_COMPUTATION",
                                            "DISABLE_META_COMMANDS"],
                             {"vendor": " ACME ", "driver": "", "adapter": 3, "other": "x",
                              "directml_version": "1.15.2"}, os_name="Windows")
    assert tags == {"os": "windows", "backend": "mypkg:Mine",
                    "execution_flags": "ALLOW_HALF_PRECISION_COMPUTATION|DISABLE_META_COMMANDS",
                    "vendor": "ACME", "directml_version": "1.15.2"}
    assert baseline.run_tags("numpy")["execution_flags"] == "NONE"
    assert "os" not in baseline.run_tags("numpy", os_name="")  # an OS it cannot tell


@pytest.mark.parametrize(("when", "tags", "applies"), [
    ("vendor: ACME", {"vendor": "ACME"}, True),
    ("vendor: acme", {"vendor": "Acme"}, True),  # case-insensitive
    ("vendor: ACME", {"vendor": "ACME Corp"}, False),  # the whole value
    ("vendor: 'ACME*'", {"vendor": "ACME Corp"}, True),
    ("vendor: 'ACME*'", {}, False),  # a tag the run cannot tell matches nothing
    ("driver: ['31.*', '32.0.?']", {"driver": "32.0.1"}, True),
    ("driver: ['31.*', '32.0.?']", {"driver": "32.0.10"}, False),
    ("directml_version: '1.1[0-5].*'", {"directml_version": "1.13.1"}, True),
    ("adapter: '*llvmpipe*'", {"adapter": "llvmpipe (LLVM 15.0.6, 256 bits)"}, True),
    ("os: linux, backend: directml", {"os": "linux", "backend": "directml"}, True),
    ("os: linux, backend: directml", {"os": "linux", "backend": "numpy"}, False),  # every tag
    ("execution_flags: NONE", {"execution_flags": "NONE"}, True),
    ("execution_flags: NONE", {"execution_flags": "ALLOW_HALF_PRECISION_COMPUTATION"}, False),
    ("execution_flags: 'DISABLE_META_COMMANDS,ALLOW_HALF_PRECISION_COMPUTATION'",
     {"execution_flags": "ALLOW_HALF_PRECISION_COMPUTATION|DISABLE_META_COMMANDS"}, True),
    ("execution_flags: 0x1", {"execution_flags": "ALLOW_HALF_PRECISION_COMPUTATION"}, False),
    ("execution_flags: '0x1'", {"execution_flags": "ALLOW_HALF_PRECISION_COMPUTATION"}, True),
    ("execution_flags: '*DISABLE_META_COMMANDS*'",
     {"execution_flags": "ALLOW_HALF_PRECISION_COMPUTATION|DISABLE_META_COMMANDS"}, True),
])
def test_an_entry_applies_only_where_every_tag_matches(
        when: str, tags: dict[str, str], applies: bool) -> None:
    if when == "execution_flags: 0x1":  # YAML reads 0x1 as the number 1: refused, not guessed
        with pytest.raises(baseline.BaselineError, match="quote it"):
            entry(when)
        return
    e = entry(when)
    applied = baseline.apply(baseline.Baseline("b", (e,)), [fail()], tags=tags)
    assert (applied.results[0].status == "XFAIL") is applies
    assert applied.stale == []  # matched here, or not for this run: never stale
    assert len(applied.not_applying) == (not applies)
    assert (e.not_here(tags) is None) is applies


def test_without_tags_no_entry_with_when_applies_and_one_without_always_does() -> None:
    tagged, plain = baseline.parse("- {cases: t/a, status: FAIL, reason: r, when: {os: '*'}}\n"
                                   "- {cases: t/a, status: FAIL, reason: plain}").entries
    assert tagged.not_here({}) == "os '*' (this run does not tell its os)"
    applied = baseline.apply(baseline.Baseline("b", (tagged, plain)), [fail()])
    assert applied.results[0].message.startswith("expected FAIL (plain): ")
    assert [e["why"] for e in applied.not_applying] == [
        "not for this run: os '*' (this run does not tell its os)"]
    assert plain.not_here({}) is None and plain.not_here(LINUX_DML) is None


def test_an_expired_entry_is_stale_whatever_its_tags() -> None:
    e = entry("vendor: nobody", expires="2000-01-01")
    applied = baseline.apply(baseline.Baseline("b", (e,)), [fail()], tags=LINUX_DML)
    assert applied.not_applying == [] and [s["why"] for s in applied.stale] == [
        "expired on 2000-01-01"]


# -- waivers ------------------------------------------------------------------------------------
def test_an_expired_waiver_applies_to_nothing() -> None:
    w = entry(waiver="true", expires="2025-06-30", issue="https://example.com/1")
    known = baseline.Baseline("b", (w,))
    on_the_day = baseline.apply(known, [fail()], today=dt.date(2025, 6, 30))
    assert [r.status for r in on_the_day.results] == ["XFAIL"]
    assert on_the_day.waived == ["t/a"] and on_the_day.results[0].waiver is not None
    after = baseline.apply(known, [fail()], today=dt.date(2025, 7, 1))
    (r,) = after.results
    assert (r.status, r.waiver, r.message) == ("FAIL", None, "OutputTensor: 1 of 4 differ")
    assert after.waived == [] and [s["why"] for s in after.stale] == ["expired on 2025-06-30"]
    assert after.stale[0]["waiver"] is True
    assert results.exit_status(after.results) == 1


def test_a_waived_case_that_passes_is_an_xpass() -> None:
    w = entry(waiver="true", expires="2099-01-01")
    applied = baseline.apply(baseline.Baseline("b", (w,)), [Result(id="t/a", status="PASS")])
    assert applied.xpass == ["t/a"] and applied.results[0].waiver is None
    assert applied.results[0].message == ("passed, but the baseline waives FAIL (r; waived "
                                          "until 2099-01-01)")


def test_the_first_entry_of_the_status_in_file_order_decides() -> None:
    waiver_first = baseline.parse(
        "- {cases: t/, status: FAIL, reason: w, waiver: true, expires: 2099-01-01}\n"
        "- {cases: t/a, status: FAIL, reason: known}\n")
    (r,) = baseline.apply(waiver_first, [fail()]).results
    assert r.waiver is not None and r.message.startswith("waived FAIL (w; ")
    plain_first = baseline.Baseline("b", waiver_first.entries[::-1])
    (r,) = baseline.apply(plain_first, [fail()]).results
    assert r.waiver is None and r.message.startswith("expected FAIL (known): ")


@pytest.mark.parametrize(("text", "error"), [
    ("- {cases: a, status: FAIL, reason: r, waiver: true}",
     "entry 1 (cases 'a'): a waiver needs 'expires' (YYYY-MM-DD)"),
    ("- {cases: a, status: FAIL, waiver: true, expires: 2099-01-01}",
     "missing required key 'reason'"),
    ("- {cases: a, status: FAIL, reason: ' ', waiver: true, expires: 2099-01-01}",
     "'reason' must be non-empty text"),
    ("- {cases: a, status: FAIL, reason: r, waiver: yes please, expires: 2099-01-01}",
     "'waiver' must be true or false, not 'yes please'"),
    ("- {cases: a, status: FAIL, reason: r, when: linux}",
     "'when' must be a mapping of tags (os, backend, execution_flags, vendor, adapter, driver, "
     "directml_version) to patterns, not 'linux'"),
    ("- {cases: a, status: FAIL, reason: r, when: {}}", "'when' must be a mapping of tags"),
    ("- {cases: a, status: FAIL, reason: r, when: {gpu: x}}",
     "unknown tag in 'when': gpu; allowed: os, backend"),
    ("- {cases: a, status: FAIL, reason: r, when: {driver: []}}",
     "'when: driver' must be a pattern or a non-empty list of them, not []"),
    ("- {cases: a, status: FAIL, reason: r, when: {directml_version: 1.10}}",
     "'when: directml_version' must be text or a list of text (glob patterns), not 1.1 (YAML "
     "read 1.1 as a float: quote it, '1.1')"),
    ("- {cases: a, status: FAIL, reason: r, when: {vendor: ['ACME', '']}}",
     "'when: vendor' must be text or a list of text"),
    ("- {cases: a, status: FAIL, reason: r, when: {execution_flags: HALF}}",
     "'when: execution_flags': unknown execution flag 'HALF'; known: "
     "ALLOW_HALF_PRECISION_COMPUTATION"),
])
def test_malformed_tags_and_waivers_are_usage_errors(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, error: str) -> None:
    with pytest.raises(baseline.BaselineError) as info:
        baseline.parse(text, "b.yaml")
    assert str(info.value).startswith("baseline b.yaml: entry 1")
    assert error in str(info.value)
    path = tmp_path / "b.yaml"
    path.write_text(text, encoding="utf-8")
    assert main(["run", "-q", "--cases", str(DOCUMENTED), "--json", str(tmp_path / "r.json"),
                 "--baseline", str(path)]) == 2
    assert error in capsys.readouterr().err
    assert not (tmp_path / "r.json").exists()


# -- the verdict ----------------------------------------------------------------------------------
def level_results(*statuses: tuple[str, bool]) -> list[Result]:
    """Cases t/0, t/1, ... needing 1_0, of the given (status, waived)."""
    waiver = {"cases": "t/", "reason": "r", "issue": None, "expires": "2099-01-01"}
    return [Result(id=f"t/{i}", status=s, feature_level="1_0", waiver=waiver if w else None)
            for i, (s, w) in enumerate(statuses)]


def verdict_of(found: list[Result]) -> Verdict:
    everything = frozenset(r.id for r in found)
    mp = Mustpass("0", "", {"1_0": everything})
    return verdicts(found, FeatureLevel.parse("1_0"), mp)["1_0"]


def test_a_level_whose_every_failure_is_waived_is_conformant_with_waivers() -> None:
    one = verdict_of(level_results(("PASS", False), ("XFAIL", True), ("XPASS", False)))
    assert (one.conformant, one.waivers, one.counts[Status.XFAIL]) == (True, 1, 1)
    assert conformant_text(one) == "conformant with 1 waiver"
    two = verdict_of(level_results(("XFAIL", True), ("QUALITY_WARNING", False), ("XFAIL", True)))
    assert conformant_text(two) == "conformant with 2 waivers" and two.conformant is True
    clean = verdict_of(level_results(("PASS", False)))
    assert (clean.conformant, clean.waivers, conformant_text(clean)) == (
        True, 0, "conformant")
    # a document before waivers
    assert conformant_text(Verdict.from_json({"conformant": True})) == "conformant"


@pytest.mark.parametrize("other", ["XFAIL", "FAIL", "ERROR"])
def test_an_expected_failure_that_is_no_waiver_still_denies_conformant(other: str) -> None:
    v = verdict_of(level_results(("XFAIL", True), (other, False)))
    assert (v.conformant, v.waivers) == (False, 1)


def test_a_case_not_claimed_beside_a_waiver_is_not_covered_and_denies_nothing() -> None:
    v = verdict_of(level_results(("XFAIL", True), ("NOT_SUPPORTED", False)))
    assert (v.conformant, v.waivers, v.not_covered) == (None, 1, 1)


# -- end to end: dmlconf run ----------------------------------------------------------------------
def write(tmp_path: Path, text: str, name: str = "baseline.yaml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


ENVIRONMENT_BACKEND = f'''\
import sys
sys.path.insert(0, {str(ROOT)!r})
from tests.support.broken_backends import SwappedOrderBackend


class AcmeSwapped(SwappedOrderBackend):
    """The swapped orders, on a backend that reports its environment."""

    @property
    def environment(self) -> dict[str, str]:
        return {{"vendor": "ACME Graphics", "driver": "31.0.15.1"}}
'''


def test_run_with_waivers_and_tags(tmp_path: Path, dmlconf: Dmlconf,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    """Waivers and expected failures listed apart; tags from the backend's environment
    (read in this process: a backend isolated in workers reports it through the runner)."""
    backend = tmp_path / "acme.py"
    backend.write_text(ENVIRONMENT_BACKEND, encoding="utf-8")
    path = write(tmp_path, """\
        - cases: "documented/depth_to_space1/example-*"
          status: FAIL
          reason: orders swapped
          when: {vendor: "ACME*", driver: "31.*", backend: "*acme.py:AcmeSwapped", os: "*"}
        - cases: "documented/space_to_depth1/example-*"
          status: FAIL
          reason: the spec's S2D order is being settled
          issue: https://example.com/spec/7
          waiver: true
          expires: 2099-12-31
        - cases: "documented/"
          status: FAIL
          reason: another vendor's
          when: {vendor: OTHER}
        """)
    code, doc = dmlconf("--backend", f"{backend}:AcmeSwapped", "--cases", str(DOCUMENTED),
                        "--baseline", str(path), "--strict")
    out = capsys.readouterr().out
    assert code == 0
    got = statuses(doc)
    assert {i for i, s in got.items() if s == "XFAIL"} == {*D2S1, *S2D1}
    known = doc["baseline"]
    assert known["tags"]["vendor"] == "ACME Graphics" and known["tags"]["driver"] == "31.0.15.1"
    assert (known["expected"], known["waived"]) == (list(D2S1), list(S2D1))
    assert known["stale"] == [] and [e["cases"] for e in known["not_applying"]] == ["documented/"]
    assert known["not_applying"][0]["why"] == ("not for this run: vendor 'OTHER' (this run: "
                                               "'ACME Graphics')")
    assert result_of(doc, D2S1[0])["waiver"] is None
    assert result_of(doc, S2D1[0])["waiver"] == {
        "cases": "documented/space_to_depth1/example-*",
        "reason": "the spec's S2D order is being settled", "issue": "https://example.com/spec/7",
        "expires": "2099-12-31"}
    assert result_of(doc, S2D1[0])["message"].startswith(
        "waived FAIL (the spec's S2D order is being settled; https://example.com/spec/7; "
        "waived until 2099-12-31): OutputTensor:")
    # the D2S1 expected failures deny 2_1 whatever the waivers
    assert (doc["verdict"]["2_1"]["waivers"], doc["verdict"]["2_1"]["conformant"]) == (2, False)
    assert f"baseline {path}: 2 expected failures, 2 waivers (XFAIL)" in out
    assert (f"  WAIVED {S2D1[0]}: the spec's S2D order is being settled (until 2099-12-31)"
            in out)
    assert ("1 baseline entry not for this run, e.g. 'documented/': not for this run: vendor "
            "'OTHER'") in out
    # the strict reader takes the new fields
    assert results.read(tmp_path / "results.json").to_json() == doc
    # the same baseline on a backend that tells no vendor: the tagged entry does not apply
    code, doc = dmlconf("--backend", SWAPPED, "--cases", str(DOCUMENTED), "--baseline",
                        str(path), name="untold.json")
    assert code == 1
    assert {i for i, s in statuses(doc).items() if s == "FAIL"} == set(D2S1)
    assert [e["why"] for e in doc["baseline"]["not_applying"]] == [
        f"not for this run: backend '*acme.py:AcmeSwapped' (this run: '{SWAPPED}'); vendor "
        "'ACME*' (this run does not tell its vendor); driver '31.*' (this run does not tell "
        "its driver)",
        "not for this run: vendor 'OTHER' (this run does not tell its vendor)"]


# -- compare ------------------------------------------------------------------------------------
def test_compare_counts_expected_and_waived_failures_and_hides_nothing_else(
        tmp_path: Path, dmlconf: Dmlconf, capsys: pytest.CaptureFixture[str]) -> None:
    live = write(tmp_path, """\
        - {cases: "documented/depth_to_space1/example-*", status: FAIL, reason: swapped}
        - {cases: "documented/space_to_depth1/example-*", status: FAIL, reason: settling,
           waiver: true, expires: 2099-12-31}
        """, "live.yaml")
    elsewhere = write(tmp_path, """\
        - {cases: "documented/depth_to_space1/example-*", status: FAIL, reason: swapped,
           when: {backend: directml}}
        - {cases: "documented/space_to_depth1/example-*", status: FAIL, reason: settling,
           waiver: true, expires: 2000-01-01}
        """, "elsewhere.yaml")
    dmlconf("--backend", f"{BROKEN}:LateRejectBackend", "--cases", str(DOCUMENTED),
            name="old.json")
    dmlconf("--backend", SWAPPED, "--cases", str(DOCUMENTED), "--baseline", str(live),
            name="known.json")
    dmlconf("--backend", SWAPPED, "--cases", str(DOCUMENTED), "--baseline", str(elsewhere),
            name="unknown.json")
    old, known, unknown = (results.read(tmp_path / f"{n}.json")
                           for n in ("old", "known", "unknown"))
    diff = run_diff.compare(old, known)
    assert diff.newly_failing == [] and run_diff.exit_status(diff) == 0
    assert (diff.failing, diff.expected, [i for i, _ in diff.waived]) == (0, list(D2S1),
                                                                          list(S2D1))
    capsys.readouterr()
    assert main(["compare", str(tmp_path / "old.json"), str(tmp_path / "known.json")]) == 0
    out = capsys.readouterr().out
    assert "NEW's failures: 4 (0 not expected, 2 expected by its baseline, 2 waived)\n" in out
    assert (f"waived in NEW (2):\n  {S2D1[0]}: settling (waived until 2099-12-31)\n" in out)
    assert main(["compare", str(tmp_path / "old.json"), str(tmp_path / "known.json"),
                 "--markdown"]) == 0
    md = capsys.readouterr().out
    assert "### Waived in NEW (2)" in md
    assert f"| `{S2D1[0]}` | settling (waived until 2099-12-31) |" in md
    # an entry not for NEW's run and an expired waiver hid nothing: every FAIL is newly failing
    diff = run_diff.compare(old, unknown)
    assert {c.id for c in diff.newly_failing} == {*D2S1, *S2D1}
    assert (diff.failing, diff.expected, diff.waived) == (4, [], [])
    assert main(["compare", str(tmp_path / "old.json"), str(tmp_path / "unknown.json")]) == 1
    assert "NEW's failures: 4 (4 not expected, 0 expected by its baseline, 0 waived)" in \
        capsys.readouterr().out


# -- what came before still reads ---------------------------------------------------------------
def test_a_baseline_from_before_tags_parses_and_applies_everywhere() -> None:
    old = baseline.parse(textwrap.dedent("""\
        expected_failures:
          - cases: "generated/offsets/linear/all-axes/float16/[1]"
            status: FAIL
            reason: "linear edges"
            issue: https://example.com/1
            expires: 2099-01-01
        """))
    (e,) = old.entries
    assert (e.when, e.waiver) == ((), False)
    assert e.to_json() == {"cases": e.shown, "status": "FAIL", "reason": "linear edges",
                           "issue": "https://example.com/1", "expires": "2099-01-01",
                           "when": {}, "waiver": False}
    found = [fail("generated/offsets/linear/all-axes/float16/1")]
    for tags in (None, LINUX_DML, baseline.run_tags("numpy", os_name="Windows")):
        applied = baseline.apply(old, found, tags=tags)
        assert applied.results[0].status == "XFAIL" and applied.not_applying == []


def test_the_lavapipe_baseline_is_for_the_directml_builds_it_names() -> None:
    """One file for both DirectML builds, their graph paths, lavapipe and NVIDIA: one entry per
    finding and the runs it is of (`when:` directml_version as each backend reports it, and
    vendor / backend where it was measured absent elsewhere). Applied to the committed NVIDIA
    records of both builds (docs/gpu), it gives back exactly each run's failures (the NaN
    quieting of lavapipe's graph path does not apply there)."""
    import lzma

    from backends.directml import layer

    new = (f"{layer.DLL_VERSION} (DirectML.dll of {layer.DLL_WHEEL_REQUIREMENT}, under Wine)")
    old = f"libdirectml.so of {layer.WHEEL_REQUIREMENT}"
    lavapipe = baseline.load(ROOT / "backends" / "directml" / "baseline-lavapipe.yaml")
    assert lavapipe.entries and not any(e.waiver for e in lavapipe.entries)
    assert len(lavapipe.entries) < 10  # findings, not cases
    assert {tag for e in lavapipe.entries for tag, _ in e.when} <= {"directml_version",
                                                                    "vendor", "backend"}
    assert {v for e in lavapipe.entries for v in dict(e.when)["directml_version"]} == {new, old}
    # The records were judged when the open regions were still ambiguous (issue 25): their
    # cases are judged as the committed cases mark them now, and the records predate some
    # cases, so a pattern of only those is not stale against them. A may_reject case (an open
    # region of validation) was then a rejected case: the record holds its acceptance as a
    # FAIL without the outputs that now judge it, so it is left out like an ambiguous one.
    from conformance.casefile import id_matches, load_cases

    ambiguous = {c.id for c in load_cases([ROOT / "cases"]) if c.ambiguous or c.may_reject}
    for record, backend, failures, applying in (
            ("nvidia-h200-directml-linux", "directml-linux", 539, 3),
            ("nvidia-h200-directml", "directml", 712, 5)):
        with lzma.open(ROOT / "docs" / "gpu" / f"{record}.json.xz", "rt") as f:
            doc = json.load(f)
        failing = {r["id"] for r in doc["results"] if r["status"] in ("FAIL", "XFAIL")
                   and r["id"] not in ambiguous}
        found = [Result(id=r["id"], status="FAIL" if r["id"] in failing else r["status"])
                 for r in doc["results"]]
        tags = baseline.run_tags(backend, [], doc["backend"]["environment"], os_name="Linux")
        here = baseline.apply(lavapipe, found, tags=tags)
        assert set(here.expected) == failing and len(failing) == failures, (record, len(failing))
        held = [r["id"] for r in doc["results"]]
        stale = [e for e in here.stale if any(id_matches(i, e["pattern"]) for i in held)]
        assert here.xpass == [] and stale == []
        assert len(lavapipe.entries) - len(here.not_applying) == applying, record
        assert all(e["why"].startswith("not for this run: ") for e in here.not_applying)
    there = baseline.apply(lavapipe, found, tags=baseline.run_tags("numpy", os_name="Linux"))
    assert here.expected and not any(r.status == "XFAIL" for r in there.results)
    assert len(there.not_applying) == len(lavapipe.entries)


def test_a_results_document_from_before_waivers_still_reads(tmp_path: Path) -> None:
    doc = {"format": results.FORMAT, "suite_version": "0.1.0", "case_set_sha256": "ab" * 32,
           "case_paths": ["cases"], "command": "dmlconf run", "backend": {"name": "numpy"},
           "feature_level": "1_0", "platform": {}, "started_at": "", "finished_at": "",
           "duration_s": 0.1, "summary": {"XFAIL": 1}, "ambiguous": {},
           "verdict": {"1_0": {"conformant": True, "mandatory": 1, "PASS": 1}},
           "baseline": {"path": "b.yaml", "xpass": [], "stale": []},
           "results": [{"id": "t/a", "status": "XFAIL", "message": "expected FAIL (r): x"}]}
    path = tmp_path / "old.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    back = results.read(path)
    assert back.to_json() == doc and back.results[0].waiver is None
    assert conformant_text(back.verdict["1_0"]) == "conformant"
    diff = run_diff.compare(back, back)
    assert (diff.failing, diff.expected, diff.waived) == (0, ["t/a"], [])
    # the field is checked where present
    doc["results"][0]["waiver"] = "r"
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(results.ResultsFileError,
                       match=r"results\[0\]\.waiver is text, not an object or null"):
        results.read(path)


def test_merge_joins_the_shards_baseline_records() -> None:
    stale = {"cases": "x", "why": "matches no case"}
    elsewhere = {"cases": "y", "why": "not for this run: os 'windows' (this run: 'linux')"}
    first = {"path": "b.yaml", "tags": {"os": "linux"}, "xpass": ["c"], "expected": ["a"],
             "waived": [], "stale": [stale, {"cases": "z", "why": "matches no case"}],
             "not_applying": [elsewhere]}
    second = {"path": "b.yaml", "tags": {"os": "linux"}, "xpass": [], "expected": [],
              "waived": ["b"], "stale": [stale], "not_applying": [elsewhere]}
    typed = BaselineSummary.from_json
    assert baseline.join([typed(first), typed(second)]).to_json() == {
        "path": "b.yaml", "tags": {"os": "linux"}, "xpass": ["c"], "expected": ["a"],
        "waived": ["b"], "stale": [stale], "not_applying": [elsewhere], "outside": []}
    before = {"path": "b.yaml", "xpass": ["c"], "stale": []}  # shards from before waivers
    assert baseline.join([typed(before), typed(before)]).to_json() == {
        "path": "b.yaml", "tags": {}, "xpass": ["c"], "expected": [], "waived": [],
        "stale": [], "not_applying": [], "outside": []}


def test_merged_shards_keep_waivers_and_expected_failures_apart(
        tmp_path: Path, dmlconf: Dmlconf) -> None:
    path = write(tmp_path, """\
        - {cases: "documented/depth_to_space1/example-*", status: FAIL, reason: swapped}
        - {cases: "documented/space_to_depth1/example-*", status: FAIL, reason: settling,
           waiver: true, expires: 2099-12-31}
        - {cases: "documented/", status: FAIL, reason: elsewhere, when: {vendor: OTHER}}
        """)
    args = ("--backend", SWAPPED, "--cases", str(DOCUMENTED), "--baseline", str(path))
    _, whole = dmlconf(*args, name="whole.json")
    for k in (1, 2):
        dmlconf(*args, "--shard", f"{k}/2", name=f"shard{k}.json")
    merged_path = tmp_path / "merged.json"
    assert main(["merge", str(tmp_path / "shard1.json"), str(tmp_path / "shard2.json"),
                 "--json", str(merged_path)]) == 0
    merged = results.read(merged_path).to_json()
    assert {k: sorted(v) if k in ("expected", "waived") else v
            for k, v in merged["baseline"].items() if k != "path"} == {
        k: sorted(v) if k in ("expected", "waived") else v
        for k, v in whole["baseline"].items() if k != "path"}
    assert sorted(merged["baseline"]["waived"]) == sorted(S2D1)
    assert merged["verdict"]["2_1"]["waivers"] == whole["verdict"]["2_1"]["waivers"] == 2
    assert result_of(merged, S2D1[1])["waiver"] == result_of(whole, S2D1[1])["waiver"]
