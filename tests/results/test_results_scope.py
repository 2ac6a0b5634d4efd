"""A scoped claim (conformance.results.scope; docs/certification.md, "Scoped certification"): its
syntax and refusals, which cases it covers, and the verdict it gives: the covered cases decide,
the rest are "not covered" and deny nothing; a claimed case NOT_SUPPORTED denies."""

from __future__ import annotations

import pytest

from conformance.levels import FeatureLevel
from conformance.present import verdict_line, verdict_words
from conformance.results import Result, ResultsDocument, Scope, ScopeError, verdicts
from conformance.results.mustpass import Mustpass


def test_the_syntax_names_operators_and_their_types() -> None:
    one = Scope.parse(["RESAMPLE1:FLOAT32,FLOAT16"])
    assert one is not None and one.to_json() == {"RESAMPLE1": ["FLOAT32", "FLOAT16"]}
    assert one.text() == "RESAMPLE1 (FLOAT32, FLOAT16)"
    # the page's own names, any case, ';' or repeated, merged per operator
    same = Scope.parse(["DML_RESAMPLE1_OPERATOR_DESC:float16", "resample1:FLOAT32"])
    assert same == one == Scope.parse(["RESAMPLE1:FLOAT16;RESAMPLE1:FLOAT32"])
    assert Scope.parse([one.option()]) == one
    assert Scope.from_json(one.to_json()) == one
    # an operator alone: every type it takes, named by the operator alone
    whole = Scope.parse(["RESAMPLE"])
    assert whole is not None
    assert whole.to_json() == {"RESAMPLE": ["FLOAT32", "FLOAT16", "UINT8", "INT8"]}
    assert whole.text() == "RESAMPLE"
    assert Scope.parse([]) is None and Scope.parse([" ; "]) is None
    assert Scope.from_json(None) is None and Scope.from_json({}) is None


@pytest.mark.parametrize("given, said", [
    ("RESAMPLE9", "'RESAMPLE9' is no operator: did you mean 'RESAMPLE'"),
    ("RESAMPLE1:FLOAT23", "did you mean 'FLOAT32'"),
    ("RESAMPLE:INT32", "RESAMPLE takes no INT32 at any feature level; it takes FLOAT32, "
                       "FLOAT16, UINT8, INT8"),
])
def test_a_name_the_suite_does_not_know_says_what_to_write(given: str, said: str) -> None:
    with pytest.raises(ScopeError, match="--scope") as caught:
        Scope.parse([given])
    assert said in str(caught.value)


def test_a_case_is_covered_when_every_operator_and_type_is_claimed() -> None:
    scope = Scope.parse(["RESAMPLE1:FLOAT32", "DEPTH_TO_SPACE1"])
    assert scope is not None
    assert scope.covers(["RESAMPLE1"], ["FLOAT32"])
    assert not scope.covers(["RESAMPLE1"], ["FLOAT16"])
    assert not scope.covers(["RESAMPLE1"], ["FLOAT32", "FLOAT16"])
    assert scope.covers(["DEPTH_TO_SPACE1"], ["UINT8"])
    # a case of two calls needs both operators, and its types claimed for each
    assert scope.covers(["DEPTH_TO_SPACE1", "RESAMPLE1"], ["FLOAT32"])
    assert not scope.covers(["DEPTH_TO_SPACE1", "RESAMPLE1"], ["UINT8"])
    assert not scope.covers(["SPACE_TO_DEPTH1"], ["FLOAT32"])
    assert not scope.covers([], ["FLOAT32"])


def test_what_no_case_at_a_level_can_cover_is_named() -> None:
    scope = Scope.parse(["RESAMPLE3:FLOAT32", "RESAMPLE1:FLOAT32"])
    assert scope is not None
    assert scope.beyond_level(FeatureLevel.parse("6_2")) == ["RESAMPLE3 (introduced at 6_4)"]
    assert scope.beyond_level(FeatureLevel.parse("6_4")) == []


# -- the verdict ----------------------------------------------------------------------------------
def _result(i: int, status: str, operator: str, dtype: str) -> Result:
    return Result(id=f"t/{i}", status=status, feature_level="2_1", operators=[operator],
                  data_types=[dtype])


def _verdict(found: list[Result], scope: Scope | None) -> ResultsDocument:
    level = FeatureLevel.parse("2_1")
    mp = Mustpass("0", "", {"2_1": frozenset(r.id for r in found)})
    made = verdicts(found, level, mp, scope)
    return ResultsDocument(feature_level="2_1", verdict={"2_1": made["2_1"]},
                           scope=None if scope is None else scope.to_json(), results=found)


#: A RESAMPLE1 backend in FLOAT32: its cases pass, the rest were not claimed.
RESAMPLE1_ONLY = [_result(0, "PASS", "RESAMPLE1", "FLOAT32"),
                  _result(1, "PASS", "RESAMPLE1", "FLOAT32"),
                  _result(2, "NOT_SUPPORTED", "RESAMPLE1", "FLOAT16"),
                  _result(3, "NOT_SUPPORTED", "DEPTH_TO_SPACE1", "UINT8")]


def test_a_scoped_claim_is_conformant_for_its_scope() -> None:
    scope = Scope.parse(["RESAMPLE1:FLOAT32"])
    doc = _verdict(RESAMPLE1_ONLY, scope)
    v = doc.verdict["2_1"]
    assert (v.conformant, v.mandatory, v.not_covered) == (True, 2, 2)
    assert verdict_words(doc)["2_1"] == "conformant for RESAMPLE1 (FLOAT32)"
    assert "2 outside the scope, not covered" in verdict_line(v, scope=scope)


def test_without_a_scope_cases_not_claimed_are_not_covered_never_not_conformant() -> None:
    doc = _verdict(RESAMPLE1_ONLY, None)
    v = doc.verdict["2_1"]
    assert (v.conformant, v.mandatory, v.not_covered) == (None, 4, 2)
    words = verdict_words(doc)["2_1"]
    assert words.startswith("not covered: 2 mandatory cases NOT_SUPPORTED, none failed")
    # a whole run: its mandatory cases pass, not "run pass" as a partial run's
    assert "(2/4 mandatory cases pass; FAIL 0, ERROR 0, NOT_SUPPORTED 2)" in verdict_line(
        doc.verdict["2_1"])
    assert "--scope" in words and "NOT conformant" not in words


def test_a_claimed_case_not_supported_or_failing_denies_the_scope() -> None:
    scope = Scope.parse(["RESAMPLE1"])  # FLOAT16 claimed too, and not supported
    doc = _verdict(RESAMPLE1_ONLY, scope)
    assert doc.verdict["2_1"].conformant is False
    assert verdict_words(doc)["2_1"] == "NOT conformant for RESAMPLE1"
    failing = [*RESAMPLE1_ONLY[:1], _result(1, "FAIL", "RESAMPLE1", "FLOAT32")]
    assert _verdict(failing, None).verdict["2_1"].conformant is False
    # a failure outside the scope decides nothing
    outside = [*RESAMPLE1_ONLY[:2], _result(5, "FAIL", "DEPTH_TO_SPACE1", "FLOAT32")]
    assert _verdict(outside, Scope.parse(["RESAMPLE1:FLOAT32"])).verdict["2_1"].conformant


def test_a_scope_that_covers_nothing_of_a_level_gives_no_verdict() -> None:
    scope = Scope.parse(["SPACE_TO_DEPTH1"])
    doc = _verdict(RESAMPLE1_ONLY, scope)
    v = doc.verdict["2_1"]
    assert (v.conformant, v.mandatory, v.not_covered) == (None, 0, 4)
    assert verdict_words(doc)["2_1"] == ("not covered: the scope claims no mandatory case of "
                                         "this level")
