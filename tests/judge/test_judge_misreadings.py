"""The self-check of the catalogue of misreadings (conformance.judge.misreadings): every mandatory
entry, run as a backend that claims one single-type slice (one operator, one data type), must
FAIL some committed mandatory case of that slice, and the FAIL's diagnosis must name it. Plus the
issue's acceptance check: a FLOAT32-only DEPTH_TO_SPACE1 backend with the orders swapped FAILs at
least 10 mandatory cases, each diagnosed as the other Order.

A case belongs to a slice when every call of it is that operator with every tensor of that type;
rejected and ambiguous cases are left out (they decide nothing about the reading); open cases
(judged against every admissible reading) are mandatory and stay in. Only the cases
an entry covers (Misreading.covers) are run, blocks family first, and the search stops at the
first diagnosed FAIL, so the whole check stays cheap.
"""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest

from conformance import ops
from conformance.casefile import Case, load_cases, logical_values
from conformance.generate import kill_floor
from conformance.generate.kill_floor import ReadingBackend
from conformance.judge.misreadings import CATALOGUE
from conformance.kit.misreading import Misreading
from conformance.levels import HIGHEST
from conformance.results import Result
from conformance.session.case_run import run_case
from conformance.tensors import DataType, read_tensor, write_tensor
from tests.support import DOCUMENTED, GENERATED, ROOT


def reading_backend(entry: Misreading, operator: str, data_type: DataType) -> ReadingBackend:
    """A backend that is one misreading, claiming one operator with one data type at the
    highest level (conformance.generate.kill_floor.ReadingBackend)."""
    return ReadingBackend(entry, operator, data_type, HIGHEST)


@cache
def committed() -> tuple[Case, ...]:
    cases = load_cases([DOCUMENTED, GENERATED])
    # The readable family first: it is built so that every reading shows.
    return tuple(sorted(cases, key=lambda c: not c.id.startswith("generated/blocks/")))


@cache
def mandatory_by_slice() -> dict[tuple[str, DataType], tuple[Case, ...]]:
    return kill_floor.mandatory_by_slice(committed())


def slices(entry: Misreading) -> list[tuple[str, DataType]]:
    """The single-type slices an entry covers: its operators x the types of their tables that
    the entry names (all of them when it names none)."""
    out = []
    for name in sorted(entry.operators):
        spec = ops.get(name)
        for data_type in sorted(frozenset().union(*(t.data_types for t in spec.support))):
            if entry.data_types is None or data_type in entry.data_types:
                out.append((name, data_type))
    return out


def diagnosis(result: Result) -> list[str]:
    """The readings the runner diagnosed a FAIL with (a wrong output, a valid desc rejected, or
    a relation broken: case_run._diagnose and diagnose.explain_rejection)."""
    return list((result.diagnosis or {}).get("readings", []))


def caught(entry: Misreading, operator: str, data_type: DataType) -> tuple[int, str | None]:
    """(cases run, id of the first FAIL whose diagnosis names the entry, or None)."""
    backend = reading_backend(entry, operator, data_type)
    run = 0
    for case in mandatory_by_slice().get((operator, data_type), ()):
        if not any(entry.covers(named.call) for named in case.calls):
            continue
        run += 1
        result = run_case(case, backend)
        if result.status == "FAIL" and entry.key in diagnosis(result):
            return run, case.id
    return run, None


MANDATORY = list(CATALOGUE.values())


def test_the_catalogue_has_the_depth_space_and_layout_readings() -> None:
    keys = set(CATALOGUE)
    assert {"other-order", "transposed-block", "power-of-two-block", "height-width-swapped",
            "original-as-column-row-depth", "through-float32", "through-float64",
            "nan-quieted", "nan-canonical", "strides-ignored", "strides-in-bytes",
            "innermost-stride-one", "stride-zero-as-packed", "stride-zero-as-one"} <= keys


@pytest.mark.parametrize("entry", MANDATORY, ids=[e.key for e in MANDATORY])
def test_every_mandatory_misreading_fails_every_slice_it_covers(entry: Misreading) -> None:
    missed = []
    for operator, data_type in slices(entry):
        run, hit = caught(entry, operator, data_type)
        if hit is None:
            missed.append(f"{operator} {data_type.name} ({run} covered mandatory cases ran, "
                          "none FAILed with this diagnosis)")
    assert not missed, (f"misreading {entry.key} ({entry.reading}) is not caught on: "
                        + "; ".join(missed))


def test_swapped_orders_on_a_float32_only_depth_to_space1_fail_with_their_diagnosis() -> None:
    """The issue's acceptance check: at least 10 mandatory FAILs, each saying the orders are
    swapped; no case of the slice passes that should not."""
    entry = CATALOGUE["other-order"]
    backend = reading_backend(entry, "DEPTH_TO_SPACE1", DataType.FLOAT32)
    results = [run_case(c, backend)
               for c in mandatory_by_slice()[("DEPTH_TO_SPACE1", DataType.FLOAT32)]]
    failed = [r for r in results if r.status == "FAIL"]
    assert len(failed) >= 10, f"only {len(failed)} FAILs"
    undiagnosed = [r.id for r in failed if "other-order" not in diagnosis(r)]
    assert not undiagnosed, f"FAILs not diagnosed as the other Order: {undiagnosed}"
    texts = [r.diagnosis["text"] for r in failed]
    assert all("the other Order" in t for t in texts), texts
    assert all(r.status in ("PASS", "FAIL") for r in results), \
        [(r.id, r.status, r.message) for r in results if r.status not in ("PASS", "FAIL")]


OWN = [e for e in CATALOGUE.values()
       if e.run.__module__.startswith(("conformance.ops.depth_space.misreadings",
                                       "conformance.judge.layouts"))]


@pytest.mark.parametrize("entry", OWN, ids=[e.key for e in OWN])
def test_a_misreading_that_does_not_cover_a_call_computes_the_spec(entry: Misreading) -> None:
    """`applies` and `data_types` only leave out calls where the reading cannot differ: on up
    to 40 committed single-call cases of its operators that it does not cover, its output is
    the reference's, bit for bit (so a diagnosis never misses it there)."""
    checked = 0
    for case in committed():
        if len(case.calls) != 1 or case.rejected:
            continue
        call = case.calls[0].call
        if call.operator not in entry.operators or entry.covers(call):
            continue
        spec = ops.get(call.operator)
        x = logical_values(case.inputs["call.InputTensor"], call.tensors["InputTensor"])
        bindings = {"InputTensor": np.full(call.tensors["InputTensor"].total_size, 0x5A,
                                           dtype=np.uint8),
                    "OutputTensor": np.full(call.tensors["OutputTensor"].total_size, 0xCD,
                                            dtype=np.uint8)}
        write_tensor(call.tensors["InputTensor"], bindings["InputTensor"], x)
        want = spec.reference(call, {"InputTensor": read_tensor(call.tensors["InputTensor"],
                                                                bindings["InputTensor"])})
        entry.run(call, bindings)
        got = read_tensor(call.tensors["OutputTensor"], bindings["OutputTensor"])
        bits = call.tensors["OutputTensor"].data_type.bits_dtype
        assert np.array_equal(got.view(bits), want["OutputTensor"].view(bits)), case.id
        checked += 1
        if checked == 40:
            break
    assert checked, f"no committed case outside {entry.key}'s cover"


def test_docs_list_every_entry_of_the_catalogue() -> None:
    import re

    from conformance.judge.misreadings import admissible

    text = (ROOT / "docs" / "misreadings.md").read_text(encoding="utf-8")
    rows = set(re.findall(r"^\| `([a-z0-9-]+)` \|", text, flags=re.M))
    known = set(CATALOGUE) | set(admissible())
    assert rows == known, (f"undocumented: {sorted(known - rows)}; documented but not in the "
                           f"catalogue or the admissible readings: {sorted(rows - known)}")


@pytest.mark.parametrize(("key", "operator", "data_type"), [
    ("offsets-negated", "RESAMPLE2", DataType.FLOAT32),
    ("offsets-negated", "RESAMPLE3", DataType.FLOAT16),
    ("other-signedness", "RESAMPLE1", DataType.INT8),
    ("other-signedness", "RESAMPLE2", DataType.INT8),
    ("other-signedness", "RESAMPLE3", DataType.UINT8),
])
def test_diagnosis_crosses_the_resample_family(key: str, operator: str,
                                               data_type: DataType) -> None:
    """Issue 25: the coordinate relation and the data types are shared across RESAMPLE ..
    RESAMPLE3, so a RESAMPLE2 with both offsets' signs flipped, and INT8 handled as UINT8 in any
    of them, FAIL at least 10 mandatory cases of the slice, nearly all diagnosed by name (an
    output may also equal another reading, which is then named with it)."""
    backend = reading_backend(CATALOGUE[key], operator, data_type)
    failed = [r for c in mandatory_by_slice()[(operator, data_type)]
              if (r := run_case(c, backend)).status == "FAIL"]
    named = [r for r in failed if key in diagnosis(r)]
    assert len(failed) >= 10, f"only {len(failed)} FAILs"
    assert len(named) >= 0.9 * len(failed), [(r.id, r.message[-300:]) for r in failed
                                              if r not in named][:3]
