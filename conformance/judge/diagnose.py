"""Diagnosis of a failing output: which catalogued misreading it equals, and where its wrong
elements came from.

explain() is called by the harness on a FAIL, with the input bytes the backend saw:
(a) every misreading of conformance.judge.misreadings that covers the call is run on fresh
    copies of those input buffers, with output buffers pre-filled as the backend's were; an
    output that equals a misreading's (bit for bit where the judgement is bit-exact; within the
    same bound around the misreading's values where it is 'within'), while that misreading's
    output is itself wrong, names the reading;
(b) for data movement and nearest selection (outputs judged bit-exact or one-of), the first
    wrong elements are traced: the operator's reference run on an index tensor gives the input
    each output element should copy, and the input is searched for the bits the backend wrote;
    for computed outputs (linear, antialiased), the operator says what each first wrong
    element's value is consistent with (OperatorSpec.consistent_with: the range of its taps,
    the weight and coordinate that would give it).

The work is bounded: nothing is run for outputs above MAX_ELEMENTS elements, and at most
TRACED wrong elements are traced.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from math import prod
from typing import Any, SupportsInt

import numpy as np

from conformance import ops
from conformance.backend import DescRejected
from conformance.expected import Expected
from conformance.flags import ExecutionFlags
from conformance.judge import compare, misreadings
from conformance.ops import OperatorCall
from conformance.tensors import read_tensor

#: Beyond this many elements in the call's tensors, explain() does nothing (a large case is
#: reproduced by a smaller one; diagnosis must not cost more than the run).
MAX_ELEMENTS = 1 << 21
#: Wrong elements traced back to the input in a diagnosis.
TRACED = 3


def _run(entry: misreadings.Misreading, call: OperatorCall,
         input_buffers: Mapping[str, np.ndarray], fill: int) -> dict[str, np.ndarray] | None:
    """The logical outputs of call under the misreading, or None where it does not run."""
    spec = ops.get(call.operator)
    bindings = {n: np.array(input_buffers[n], dtype=np.uint8, copy=True) for n in spec.inputs}
    for name in spec.outputs:
        bindings[name] = np.full(call.tensors[name].total_size, fill, dtype=np.uint8)
    try:
        entry.run(call, bindings)
    except Exception:  # a reading that cannot run this call explains nothing
        return None
    return {n: read_tensor(call.tensors[n], bindings[n]) for n in spec.outputs}


def matching(call: OperatorCall, input_buffers: Mapping[str, np.ndarray], fill: int,
             got: Mapping[str, np.ndarray], expected: Mapping[str, Expected]
             ) -> list[misreadings.Misreading]:
    """The misreadings covering call whose outputs are wrong and equal what the backend gave."""
    found = []
    for entry in misreadings.for_call(call):
        out = _run(entry, call, input_buffers, fill)
        if out is None:
            continue
        judged = [n for n in expected if n in got and n in out]
        if not judged:
            continue
        if not any(compare.mismatches(out[n], expected[n].envelope).any() for n in judged):
            continue  # this reading is right here: it cannot explain a failure
        if all(not compare.mismatches(got[n], compare.recentred(out[n], expected[n].envelope)).any()
               for n in judged):
            found.append(entry)
    return found


def _show(index: Iterable[SupportsInt]) -> str:
    return "[" + ",".join(str(int(i)) for i in index) + "]"


def _sources(call: OperatorCall, shape: tuple[int, ...]) -> list[np.ndarray] | None:
    """Per output element, the flat input index (or indices, at a nearest tie) it should copy:
    the operator's reference on an int64 index tensor. None where outputs are computed rather
    than selected."""
    spec = ops.get(call.operator)
    if spec.inputs != ["InputTensor"] or spec.outputs != ["OutputTensor"]:
        return None
    if not spec.selects_elements(call):
        return None
    index = np.arange(prod(shape), dtype=np.int64).reshape(shape)
    exp = spec.expected(call, {"InputTensor": index})["OutputTensor"]
    if exp.kind == "within":
        return None
    return [exp.values, *exp.alternatives]


def trace(call: OperatorCall, input_buffers: Mapping[str, np.ndarray], fill: int,
          got: np.ndarray, bad: np.ndarray) -> list[str]:
    """'[0,0,0,1] holds input [0,2,0,0]; expected input [0,1,0,0]' for the first wrong
    elements of OutputTensor of a data-movement or nearest call."""
    desc = call.tensors["InputTensor"]
    x = read_tensor(desc, input_buffers["InputTensor"])
    sources = _sources(call, x.shape)
    if sources is None:
        return []
    bits = x.view(desc.data_type.bits_dtype).ravel()
    got_bits = got.view(desc.data_type.bits_dtype)
    filled = int.from_bytes(bytes([fill]) * desc.data_type.size, "little")
    lines = []
    for index in np.argwhere(bad)[:TRACED]:
        idx = tuple(int(i) for i in index)
        value = got_bits[idx]
        want = " or ".join(dict.fromkeys(
            _show(np.unravel_index(int(s[idx]), x.shape)) for s in sources))
        holders = np.flatnonzero(bits == value)
        if holders.size == 1:
            held = f"holds input {_show(np.unravel_index(int(holders[0]), x.shape))}"
        elif holders.size > 1:
            shown = ", ".join(_show(np.unravel_index(int(h), x.shape)) for h in holders[:3])
            held = (f"holds a value {holders.size} inputs hold ({shown}"
                    + (", ..." if holders.size > 3 else "") + ")")
        elif int(value) == filled:
            held = f"was left unwritten (it still holds the fill byte 0x{fill:02X})"
        else:
            held = (f"holds {compare.format_value(got[idx])}, a value found nowhere in the "
                    "input")
        lines.append(f"{_show(idx)} {held}; expected input {want}")
    return lines


def weigh(call: OperatorCall, input_buffers: Mapping[str, np.ndarray], got: np.ndarray,
          bad: np.ndarray) -> list[str]:
    """'[0,0,0,1] holds -125: -125 lies outside 1 .. 9, the range of the 4 inputs its taps
    read ...' for the first wrong elements of a computed OutputTensor (linear, antialiased),
    from the operator's consistent_with."""
    spec = ops.get(call.operator)
    if spec.inputs != ["InputTensor"]:
        return []
    x = read_tensor(call.tensors["InputTensor"], input_buffers["InputTensor"])
    lines = []
    for index in np.argwhere(bad)[:TRACED]:
        idx = tuple(int(i) for i in index)
        said = spec.consistent_with(call, x, idx, float(got[idx]))
        if said:
            lines.append(f"{_show(idx)} holds {compare.format_value(got[idx])}: {said}")
    return lines


def explain(call: OperatorCall, input_buffers: Mapping[str, np.ndarray], fill: int,
            got: Mapping[str, np.ndarray], expected: Mapping[str, Expected]
            ) -> dict[str, Any] | None:
    """What the catalogue recognises in a failing output: {"readings": [keys], "text": ...},
    or None when nothing is recognised (or the call is too large to diagnose cheaply).

    input_buffers: tensor member -> the raw input bytes the backend saw; fill: the byte the
    outputs were pre-filled with; got: output member -> the logical output read through the
    true strides; expected: output member -> its Expected (judged by .envelope)."""
    if sum(d.element_count for d in call.tensors.values()) > MAX_ELEMENTS:
        return None
    found = matching(call, input_buffers, fill, got, expected)
    parts = [f"the output equals {m.reading} [{m.key}; contradicts {m.contradicts}]"
             for m in found]
    text = "; ".join(parts[:1] + [f"it also equals {p[len('the output equals '):]}"
                                  for p in parts[1:]])
    traced: list[str] = []
    if "OutputTensor" in got and "OutputTensor" in expected:
        env = expected["OutputTensor"].envelope
        bad = compare.mismatches(got["OutputTensor"], env)
        if bad.any():
            traced = (trace(call, input_buffers, fill, got["OutputTensor"], bad)
                      if env.kind != "within" else
                      weigh(call, input_buffers, got["OutputTensor"], bad))
    if traced:
        text = (text + ". " if text else "no catalogued misreading matches. ") + \
            "Wrong elements: " + "; ".join(traced)
    if not text:
        return None
    return {"readings": [m.key for m in found], "text": text}


def explain_by_reference(call: OperatorCall, input_buffers: Mapping[str, np.ndarray], fill: int,
                         got: Mapping[str, np.ndarray],
                         flags: ExecutionFlags = ExecutionFlags.NONE) -> dict[str, Any] | None:
    """explain() for a call of a case judged by relations alone (no expected output): each
    output is judged against the operator's own reference for the inputs the call was given
    (which, in a chain, may be the backend's earlier outputs). None where the outputs are
    right for those inputs. flags: the run's execution flags (they may widen the envelope)."""
    if sum(d.element_count for d in call.tensors.values()) > MAX_ELEMENTS:
        return None
    spec = ops.get(call.operator)
    inputs = {n: read_tensor(call.tensors[n], input_buffers[n]) for n in spec.inputs}
    expected = spec.expected(call, inputs, flags=flags)
    if not any(compare.mismatches(got[n], e.envelope).any() for n, e in expected.items()
               if n in got):
        return None
    return explain(call, input_buffers, fill, got, expected)


def explain_rejection(call: OperatorCall) -> dict[str, Any] | None:
    """For a valid desc the backend rejected: the catalogued misreadings that reject it too
    (e.g. an output's Sizes checked against the formula of another operator's page)."""
    if sum(d.data_type.size * d.element_count for d in call.tensors.values()) > MAX_ELEMENTS:
        return None
    spec = ops.get(call.operator)
    found = []
    for entry in misreadings.for_call(call):
        bindings = {n: np.zeros(call.tensors[n].total_size, dtype=np.uint8)
                    for n, _ in spec.tensors}
        try:
            entry.run(call, bindings)
        except DescRejected:
            found.append(entry)
        except Exception:  # a reading that cannot run this call explains nothing
            continue
    if not found:
        return None
    return {"readings": [m.key for m in found],
            "text": "; ".join(f"the rejection matches {m.reading} [{m.key}; contradicts "
                              f"{m.contradicts}]" for m in found)}
