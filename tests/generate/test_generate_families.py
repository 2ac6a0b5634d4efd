"""The property-generated families (cases/generated/<family>/) against the reference and against
the test doubles of tests/support/family_backends.py: the reference passes every family; each double
FAILs the family built to catch its fault, with a message that names the problem, and passes a
family that does not touch its fault (the catch is specific)."""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

import pytest

from backends.numpy_reference import NumpyReferenceBackend
from conformance.backend import Backend
from conformance.casefile import Case, load_cases, select
from conformance.results import Result, decisive, exit_status
from conformance.session.case_run import run_cases
from tests.support import GENERATED
from tests.support import broken_backends as bb
from tests.support import family_backends as fb

DEPTH_SPACE = {"DEPTH_TO_SPACE", "DEPTH_TO_SPACE1", "SPACE_TO_DEPTH", "SPACE_TO_DEPTH1"}
RESAMPLE = {"RESAMPLE", "RESAMPLE1", "RESAMPLE2", "RESAMPLE3"}
#: Family -> the operators it applies to (a family must cover each, and only these).
APPLIES = {
    "antialias": {"RESAMPLE3"},
    "bitlevel": DEPTH_SPACE | RESAMPLE,
    "blocks": DEPTH_SPACE,
    "boundaries": RESAMPLE,
    "equivalence": DEPTH_SPACE | RESAMPLE,
    "invalid": DEPTH_SPACE | RESAMPLE,
    "large": DEPTH_SPACE | RESAMPLE,
    "layouts": DEPTH_SPACE | RESAMPLE,
    "offsets": RESAMPLE,
    "roundtrip": {"DEPTH_TO_SPACE1", "SPACE_TO_DEPTH1"},
    "sampling": RESAMPLE,
    "tables": DEPTH_SPACE | RESAMPLE,
}
#: Representative subsets of the large offsets family for the broken backends (the reference
#: runs every case): every nearest-neighbour case, or every third case in file order.
SUBSETS: dict[str, Callable[[tuple[Case, ...]], list[Case]]] = {
    "offsets-nearest": lambda cases: select(cases, ["*nearest*"]),
    "offsets-third": lambda cases: list(cases[::3]),
    "layouts-third": lambda cases: list(cases[::3]),
}
#: The layouts family for a double: every third case in the default run, all of it in CI's
#: certification step (a double over the whole family takes 20-60 s).
LAYOUTS = pytest.mark.parametrize("subset", [
    "layouts-third", pytest.param("", id="whole", marks=pytest.mark.certification)])


@cache
def family(name: str) -> tuple[Case, ...]:
    return tuple(load_cases([GENERATED / name]))


@cache
def run(name: str, backend: type[Backend], subset: str = "") -> tuple[Result, ...]:
    cases = family(name)
    if subset:
        cases = tuple(SUBSETS[subset](cases))
    assert cases, f"no {name} cases selected by {subset!r}"
    return tuple(run_cases(cases, backend()))


def failed(results: tuple[Result, ...]) -> list[Result]:
    return [r for r in results if r.status == "FAIL"]


def by_id(name: str) -> dict[str, Case]:
    return {c.id: c for c in family(name)}


# -- the committed families ---------------------------------------------------------------------
def test_every_family_is_present_for_every_operator_it_applies_to() -> None:
    folders = sorted(p.name for p in GENERATED.iterdir() if p.is_dir())
    assert folders == sorted(APPLIES), f"cases/generated/ holds {folders}"
    for name, operators in APPLIES.items():
        cases = family(name)
        seen = {op for c in cases for op in c.operators}
        assert seen == operators, (f"{name}: covers {sorted(seen)}, "
                                   f"should cover {sorted(operators)}")
        wrong = [c.id for c in cases if not c.id.startswith(f"generated/{name}/")]
        assert not wrong, f"{name}: ids outside generated/{name}/: {wrong[:3]}"


@pytest.mark.parametrize("name", sorted(APPLIES))
def test_reference_passes_every_case(name: str) -> None:
    results = run(name, NumpyReferenceBackend)
    bad = [f"{r.id}: {r.status} {r.message[:200]}" for r in results if r.status != "PASS"]
    assert not bad, f"{len(bad)} of {len(results)} {name} cases not PASS: {bad[:3]}"


# -- each double against its family ---------------------------------------------------------------
def test_roundtrip_catches_inconsistent_order() -> None:
    bad = failed(run("roundtrip", fb.InconsistentOrderBackend))
    assert bad, "no round trip failed"
    for r in bad:
        assert "is the inverse of" in r.message and "relation" in r.message, r.message
        # BlockSize 1 moves nothing between orders: those trips must still pass
        assert "/b1/" not in r.id, r.id
    blocked = [c for c in family("roundtrip") if "/b1/" not in c.id]
    assert len(bad) >= len(blocked) // 3, f"only {len(bad)} of {len(blocked)} trips failed"


def test_equivalence_catches_swapped_order() -> None:
    bad = failed(run("equivalence", fb.SwappedOrderBackend))
    assert bad, "no equivalence failed"
    for r in bad:
        assert ("with DEPTH_COLUMN_ROW is equivalent to" in r.message
                or "differ only in the order of the channels" in r.message), r.message
        assert "/b1/" not in r.id, r.id
    # the *1 operators with DEPTH_COLUMN_ROW against the originals: every case where the orders
    # differ (BlockSize > 1 and more than one channel in the space form)
    dcr = [c.id for c in family("equivalence")
           if "-dcr-is-" in c.id and "/b1/" not in c.id and _space_channels(c) > 1]
    assert dcr and set(dcr) <= {r.id for r in bad}


def _space_channels(case: Case) -> int:
    call = case.calls[0].call
    space = "OutputTensor" if call.operator.startswith("DEPTH") else "InputTensor"
    return call.tensors[space].sizes[1]


# a wrong backend over every offsets case: 7-12 s, in CI's certification step
@pytest.mark.certification
def test_offsets_catch_an_ignored_input_offset() -> None:
    results = run("offsets", fb.IgnoresInputOffsetBackend, "offsets-third")
    cases = by_id("offsets")
    bad = failed(results)
    assert len(bad) > len(results) // 2, f"only {len(bad)} of {len(results)} failed"
    for r in bad:
        assert "elements differ" in r.message, r.message
        attrs = cases[r.id].calls[0].call.attributes
        assert any(attrs.get("InputPixelOffsets", ())), f"{r.id} has no input offset"
    zero = [r for r in results
            if cases[r.id].operators == ("RESAMPLE1",)
            and not any(cases[r.id].calls[0].call.attributes["InputPixelOffsets"])]
    assert zero and all(r.status == "PASS" for r in zero), "a case without input offsets failed"


@LAYOUTS
def test_layouts_catch_ignored_strides(subset: str) -> None:
    results = run("layouts", fb.IgnoresStridesBackend, subset)
    cases = by_id("layouts")
    bad = failed(results)
    assert len(bad) > len(results) // 2, f"only {len(bad)} of {len(results)} failed"
    for r in bad:
        assert "strided.OutputTensor" in r.message, r.message
    unstrided = [r for r in results
                 if not any(d.is_strided for c in cases[r.id].calls for d in
                            c.call.tensors.values())]
    assert unstrided and all(r.status == "PASS" for r in unstrided), \
        "a layouts case without stated strides failed"


def test_ties_admit_halves_to_even_as_either_neighbour() -> None:
    # The ties are an open region (NOTES §4): either neighbour is admissible at every tie, so
    # rounding halves to even passes them, and they are mandatory cases like any other.
    results = run("offsets", fb.HalvesToEvenBackend, "offsets-nearest")
    ties = [r for r in results if "/nearest-ties/" in r.id]
    assert ties and all(not r.ambiguous for r in ties)
    assert all(r.status == "PASS" for r in results), failed(results)
    assert exit_status(list(results)) == 0


def test_boundaries_catch_a_ceil_with_a_margin() -> None:
    # trunc(c + 0.999) for ceil(c) passes every other family (issue 25's measurement); the
    # boundaries family FAILs it wherever a coordinate sits 1e-4 above a whole number, in
    # RESAMPLE2 and RESAMPLE3 INCREASING of every type, and nowhere else.
    results = run("boundaries", fb.MarginCeilBackend)
    bad = failed(results)
    assert {r.id for r in bad} == {r.id for r in results if "/increasing/" in r.id
                                   and r.id.endswith("/whole-above-0.0001")}
    assert {(tuple(r.operators), r.data_types[0]) for r in bad} == {
        (op, t) for op in (("RESAMPLE2",), ("RESAMPLE3",))
        for t in ("FLOAT32", "FLOAT16", "INT8", "UINT8")}
    assert all(r.status == "PASS" for r in results if r not in bad)


def test_boundaries_pass_the_reference_and_are_all_mandatory() -> None:
    from backends.numpy_reference import NumpyReferenceBackend

    results = run("boundaries", NumpyReferenceBackend)
    assert results and all(r.status == "PASS" and not r.ambiguous for r in results)


def test_resample2_cross_checks_fail_halves_to_even_at_the_ties_only() -> None:
    # RESAMPLE1 rounding halves to even equals neither RESAMPLE2 call at its ties, where the
    # cross-checks are ambiguous; off the ties it equals both, and every decisive case passes.
    results = run("equivalence", fb.HalvesToEvenBackend)
    bad = [r for r in results if r.status != "PASS"]
    assert any("/resample1-ties-resample2/at-ties/" in r.id for r in bad), "no tie case failed"
    for r in bad:
        assert r.status == "FAIL" and r.ambiguous and "RESAMPLE1" in r.operators, r.id
        assert "/off-ties/" not in r.id, r.id
    assert all(r.status == "PASS" for r in decisive(results))
    assert exit_status(list(results)) == 0


def test_tables_catch_int32_resample1() -> None:
    results = run("tables", fb.AcceptsInt32ResampleBackend)
    bad = failed(results)
    want = {f"generated/tables/resample1/{d}d/{mode}/int32"
            for d in (1, 2, 3, 4) for mode in ("nearest_neighbor", "linear")}
    assert {r.id for r in bad} == want
    for r in bad:
        assert "accepted an invalid desc" in r.message and "DataType INT32" in r.message, \
            r.message
    assert all(r.status == "PASS" for r in results if r.id not in want)


def test_bitlevel_catches_canonical_nan() -> None:
    # Depth/space is a copy (a raw move): a canonicalised NaN FAILs. Nearest resampling selects
    # an element but need not move it raw (docs/tolerances.md): a changed NaN is legal there, a
    # QUALITY_WARNING, never a PASS.
    results = run("bitlevel", fb.CanonicalNaNBackend)
    bad = failed(results)
    assert bad, "no bitlevel case failed"
    for r in bad:
        assert r.id.rsplit("/", 1)[1].startswith("float"), f"{r.id} failed"
        assert "RESAMPLE" not in r.operators[0], f"{r.id} failed"
        assert "nan (0x" in r.message and "bit-exact" in r.message, r.message
    floats = [r for r in results if r.id.rsplit("/", 1)[1].startswith("float")]
    moved = [r for r in floats if not r.operators[0].startswith("RESAMPLE")]
    selected = [r for r in floats if r.operators[0].startswith("RESAMPLE")]
    assert len(bad) == len(moved), (f"{len(moved) - len(bad)} float cases passed: "
                                    f"{[r.id for r in moved if r.status == 'PASS'][:3]}")
    assert selected and all(r.status == "QUALITY_WARNING" and "any NaN" in r.message
                            for r in selected), [(r.id, r.status) for r in selected]


def test_large_catches_a_dropped_last_column() -> None:
    results = run("large", fb.TiledBackend)
    cases = by_id("large")
    assert len(failed(results)) == len(results), [r.id for r in results if r.status == "PASS"]
    for r in results:
        width = cases[r.id].calls[0].call.tensors["OutputTensor"].sizes[-1]
        assert width > fb.TiledBackend.WIDTH
        assert "elements differ" in r.message, r.message
        assert r.mismatches and all(m["index"][-1] == width - 1 for m in r.mismatches), \
            r.mismatches


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # the double computes invalid descs
def test_invalid_catches_accept_all() -> None:
    results = run("invalid", bb.AcceptAllBackend)
    assert not [r for r in results if r.status == "ERROR"], \
        [f"{r.id}: {r.message[:200]}" for r in results if r.status == "ERROR"][:3]
    mandatory = [r for r in decisive(results) if "may-reject" not in r.tags]
    assert mandatory and all(r.status == "FAIL" for r in mandatory)
    for r in mandatory:
        assert "accepted an invalid desc" in r.message and "it breaks:" in r.message, r.message
    # where accepting is admissible (spec-notes §11), computing the outputs right PASSes
    open_ones = [r for r in results if "may-reject" in r.tags]
    assert open_ones and all(r.status == "PASS" for r in open_ones)
    assert all(any("accepted a desc the suite's reading rejects" in i for i in r.info)
               for r in open_ones)


# -- specificity: each double passes a family that does not touch its fault ----------------------
PASSES: list[tuple[type[Backend], str, str]] = [
    (fb.InconsistentOrderBackend, "layouts", "layouts-third"),
    (fb.SwappedOrderBackend, "roundtrip", ""),
    (fb.SwappedOrderBackend, "layouts", "layouts-third"),
    (fb.IgnoresInputOffsetBackend, "invalid", ""),
    (fb.IgnoresStridesBackend, "roundtrip", ""),
    (fb.IgnoresStridesBackend, "offsets", "offsets-third"),
    (fb.AcceptsInt32ResampleBackend, "equivalence", ""),
    (fb.CanonicalNaNBackend, "equivalence", ""),
    (fb.TiledBackend, "roundtrip", ""),
    (fb.TiledBackend, "layouts", "layouts-third"),
    (bb.AcceptAllBackend, "roundtrip", ""),
]


@pytest.mark.parametrize(("backend", "name", "subset"), [
    *(pytest.param(*p, id=f"{p[0].__name__}-{p[1]}") for p in PASSES),
    *(pytest.param(b, n, "", id=f"{b.__name__}-{n}-whole", marks=pytest.mark.certification)
      for b, n, s in PASSES if s == "layouts-third")])
def test_fault_is_outside_another_family(backend: type[Backend], name: str, subset: str) -> None:
    results = run(name, backend, subset)
    bad = [f"{r.id}: {r.status} {r.message[:200]}" for r in results if r.status != "PASS"]
    assert not bad, f"{backend.__name__} should pass {name}: {len(bad)} did not: {bad[:3]}"


def test_an_ambiguous_invalid_case_gives_the_reason_of_its_own_rule() -> None:
    """The reason an invalid case is reported apart names what its rule is about: a non-finite
    pixel offset's case said "no page states that scales must be positive or finite"."""
    cases = load_cases([GENERATED / "invalid"])
    about = {"resample.offsets": "offsets", "resample.scales": "scales"}
    checked = 0
    for case in cases:
        for rule, word in about.items():
            if rule in case.tags:
                assert case.ambiguous and word in case.ambiguous, (case.id, case.ambiguous)
                checked += 1
    assert checked >= 20
