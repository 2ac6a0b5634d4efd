"""How the runner judges a run of a case's calls (conformance.session.case_run._judge): what
each output is expected to be (the operator's expectations, from the expectations cache where
the case makes every input, or the case's own values), how a relation between two outputs is
judged, and what a FAIL keeps for the report (inputs, grids, heat maps, first mismatches, the
diagnosis).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from conformance import inputs as sources
from conformance import ops
from conformance.casefile import Case
from conformance.expected import Expected
from conformance.flags import ExecutionFlags
from conformance.judge import compare
from conformance.judge.heat_map import heat_map
from conformance.session import expected_cache
from conformance.session.bindings import CaseError, _Binding
from conformance.tensors import TensorDesc, sharers


class CaseBindings(Protocol):
    """What judging reads of a run of a case's calls (case_run.CaseRun): the bindings it made, by
    reference ("call.tensor"), and the fill byte of each call's outputs."""

    @property
    def bindings(self) -> Mapping[str, _Binding]: ...

    def fill_of(self, name: str) -> int: ...


def call_expected(case: Case, run: CaseBindings, name: str, strict: bool, flags: ExecutionFlags
                  ) -> dict[str, Expected]:
    """The operator spec's expectations of call `name` (OperatorSpec.expected on the inputs
    bound for it), from the expectations cache where the case itself makes every input of the
    call (then they are a function of the case's digest, the flags and the suite's source:
    conformance.session.expected_cache); an input taken from another call's output is the
    backend's, and the call is computed every time."""
    call = case.call(name)
    spec = ops.get(call.operator)
    k = None
    if all(getattr(case.inputs.get(f"{name}.{t}"), "kind", "from") != "from"
           for t in spec.inputs):
        k = expected_cache.key(case.digest(), name, strict, flags)
        found = expected_cache.read(k)
        if found is not None and set(found) == set(spec.outputs):
            return found
    inputs = {t: run.bindings[f"{name}.{t}"].read() for t in spec.inputs}
    computed = spec.expected(call, inputs, strict=strict, flags=flags)
    if k is not None:
        expected_cache.write(k, computed)
    return computed


def expectations(case: Case, run: CaseBindings, flags: ExecutionFlags = ExecutionFlags.NONE
                  ) -> dict[str, Expected]:
    """How each expected output is judged (its strict model, with the legal envelope where the
    platform's rules allow more). A case in an ambiguous region is judged strictly by the
    reading the suite takes (its results are reported apart and decide no verdict). flags: the
    run's execution flags (they may widen the envelope)."""
    out: dict[str, Expected] = {}
    strict = case.ambiguous is not None
    for ref, e in (case.expected or {}).items():
        desc = case.desc(ref)
        name, tensor = ref.split(".", 1)
        if e.kind == "reference" or e.model:
            model = call_expected(case, run, name, strict, flags)[tensor]
            if e.kind == "reference":
                out[ref] = model
                continue
        if e.model:
            if model.kind != "within":
                raise CaseError(f"{case.show_ref(ref)}: 'tolerance: model' needs an operator "
                                f"whose outputs are judged within a bound ({model.rule})")
            center = sources.exact_values(e.data, desc)
            values = sources.rounded(center, desc.data_type)
            legal = model.envelope
            out[ref] = Expected(values, kind="within", center=center, bound=model.bound,
                                rule=f"the case's exact values, {model.rule}",
                                legal=Expected(values, kind="within", center=center,
                                               bound=legal.bound,
                                               rule=f"the case's exact values, {legal.rule}"),
                                readings=model.readings)
            continue
        values = (sources.from_values if e.kind == "values" else sources.from_bits)(e.data, desc)
        if e.ulp is not None and desc.data_type.is_float:
            center = values.astype(np.float64)
            bound = e.ulp * np.spacing(np.abs(values)).astype(np.float64)
            out[ref] = Expected(values, kind="within", center=center, bound=bound,
                                rule=f"within {e.ulp} ulp of the case's values")
        else:
            out[ref] = Expected(values, rule="bit-exact, the case's values")
    if case.may_reject:  # accepted: an output whose elements share an address is open there
        for ref, model in out.items():
            out[ref] = shared_addresses(model, case.desc(ref))
    return out


def shared_addresses(model: Expected, desc: TensorDesc) -> Expected:
    """The model of an accepted output whose elements share addresses (spec-notes §11: an
    output with overlapping elements, rejected or accepted): each address may hold the value of
    any element written to it, so each element may equal any of its address's elements' values
    (a one_of model over them; the legal envelope and the readings alike). Exact and one_of
    models only: an output of arithmetic with shared addresses is not judged."""
    groups = sharers(desc)
    if groups is None:
        return model
    if model.kind == "within":
        raise CaseError(f"an output whose elements share an address is judged only where it "
                        f"is exact ({model.rule})")
    shape = model.values.shape

    def spread(m: Expected) -> Expected:
        arrays = (m.values, *m.alternatives)
        alternatives = tuple(a.ravel()[groups[:, j]].reshape(shape)
                             for a in arrays for j in range(groups.shape[1]))
        return Expected(m.values, kind="one_of", alternatives=alternatives,
                        any_nan=m.any_nan,
                        rule=f"{m.rule}; an element sharing its address with others may hold "
                             "any of their values (spec-notes §11)",
                        legal=None if m.legal is None else spread(m.legal),
                        readings=tuple(spread(r) for r in m.readings))

    return spread(model)


def covers_fill(expected: Expected, fill: int) -> bool:
    """Whether the fill pattern itself is an acceptable value of some element (then an
    unwritten element would pass unseen, and a second run with another fill is needed).
    Judged by the expectation's envelope itself, and those of its admissible readings, so a
    tolerance ('within', 'one_of') that admits the fill counts too, not only an expected value
    equal to it."""
    values = expected.values
    filled = np.full(values.nbytes, fill, dtype=np.uint8).view(values.dtype).reshape(values.shape)
    return any(not compare.mismatches(filled, e.envelope).all()
               for e in (expected, *expected.readings))


@dataclass
class _Verdict:
    """What one run of a case's calls with one output fill came to."""

    status: str
    message: str = ""
    info: list[str] = field(default_factory=list)
    mismatches: list[dict] = field(default_factory=list)
    grids: list[dict] = field(default_factory=list)
    heat_maps: list[dict] = field(default_factory=list)
    again: bool = False  # the fill itself is acceptable somewhere: run again with another
    margin: float | None = None
    diagnosis: dict | None = None

def relation_model(case: Case, run: CaseBindings, left: str, right: np.ndarray,
                    flags: ExecutionFlags) -> Expected:
    """How a relation `left == right` is judged: strictly bit for bit; where `left` is an output
    of arithmetic (linear resampling), legally within that output's envelope around `right`
    (two legal evaluations of the same value, e.g. a scale-1 identity or two equivalent operators,
    may round differently), and where it is a nearest output, with any NaN for a NaN."""
    strict = Expected(right, rule="bit-exact")
    name, tensor = left.split(".", 1)
    spec = ops.get(case.call(name).operator)
    if tensor not in spec.outputs:
        return strict
    envelope = call_expected(case, run, name, False, flags)[tensor].envelope
    if envelope.kind == "exact" and not envelope.any_nan:
        return strict
    strict.legal = compare.recentred(right, envelope, f"{envelope.rule}, around the other side")
    return strict

def keep_output(name: str, got: np.ndarray, judged: compare.Judgement,
                verdict: _Verdict) -> None:
    """Keep a failing output (named `name` in the report) for the report: its grid, with what
    was expected (or why the grid is left out), and its heat map (where the errors lie)."""
    verdict.grids.append(compare.kept(name, got, judged.model, judged.bad))
    verdict.heat_maps.append(heat_map(name, got, judged.model, judged.bad))


def _keep_failure(case: Case, run: CaseBindings, ref: str, got: np.ndarray,
                  judged: compare.Judgement, verdict: _Verdict) -> None:
    """Keep what a reader of the report needs: the call's inputs (small ones whole), the output
    with what was expected and its heat map (keep_output), and the first mismatching
    elements."""
    name = ref.split(".", 1)[0]
    spec = ops.get(case.call(name).operator)
    for t in spec.inputs:
        g = compare.kept(case.show_ref(f"{name}.{t}"), run.bindings[f"{name}.{t}"].read())
        if g not in verdict.grids:
            verdict.grids.append(g)
    keep_output(case.show_ref(ref), got, judged, verdict)
    for index in np.argwhere(judged.bad)[:compare.SHOWN]:
        idx = tuple(int(i) for i in index)
        verdict.mismatches.append({"tensor": case.show_ref(ref), "index": list(idx),
                                   "expected": compare.format_value(judged.model.values[idx]),
                                   "got": compare.format_value(got[idx])})


def _diagnose(case: Case, run: CaseBindings,
              failed: dict[str, dict[str, tuple[np.ndarray, Expected]]],
              flags: ExecutionFlags, related: bool) -> dict | None:
    """What the catalogue of misreadings recognises in the failing outputs, call by call
    (conformance.judge.diagnose): the outputs judged against expectations, and, where a relation
    failed, every other call's outputs against the operator's reference for the inputs it was
    given. The readings of every call, the texts joined."""
    from conformance.judge import diagnose  # the catalogue is loaded only when something FAILs

    readings: list[str] = []
    texts: list[str] = []
    for named in case.calls:
        name, call = named.name, named.call
        spec = ops.get(call.operator)
        inputs = {t: run.bindings[f"{name}.{t}"].buffer for t in spec.inputs}
        if name in failed:
            outputs = failed[name]
            found = diagnose.explain(call, inputs, run.fill_of(name),
                                     {t: got for t, (got, _) in outputs.items()},
                                     {t: exp for t, (_, exp) in outputs.items()})
        elif related:
            found = diagnose.explain_by_reference(
                call, inputs, run.fill_of(name),
                {t: run.bindings[f"{name}.{t}"].read() for t in spec.outputs}, flags)
        else:
            continue
        if found:
            readings += [r for r in found["readings"] if r not in readings]
            texts.append(f"{name}: {found['text']}" if len(case.calls) > 1 else found["text"])
    return {"readings": readings, "text": "; ".join(texts)} if texts else None
