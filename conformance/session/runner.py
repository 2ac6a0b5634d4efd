"""Cases x backend -> results.

For each case: NOT_SUPPORTED (with the reason) where the backend's claims exclude it; otherwise
materialise the bindings (each buffer between guard bytes, inputs written through their strides,
outputs pre-filled), create the operator, execute, and judge:
- FAIL: an output beyond its tolerance, a guard byte or an input byte changed, a valid desc
  rejected, or an invalid desc accepted;
- ERROR: the backend raised anything but DescRejected;
- writes into an output's padding inside TotalTensorSizeInBytes are legal (spec-notes §2):
  recorded in `info`, never a failure.

The backend's code is reached only through an Executor: its calls (create_operator alone, and
create_operator then execute) on bindings the harness owns. In-process it is
InProcess(backend), the backend's own methods on views of the bindings; in an isolated run it
is conformance.session.workers' RPC to a worker process that holds only the backend, the bindings'
bytes (guards included) crossing in shared memory and copied back into the harness's private
bindings before anything is checked. Either way everything else here (materialising, the guard
and input checks, the expected values and the judgement) runs in the calling process: in an
isolated run, out of the backend's reach.
"""

from __future__ import annotations

import os
import time
import traceback
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Protocol

import numpy as np

from conformance import inputs as sources
from conformance import ops
from conformance.backend import Backend, Capabilities, DescRejected
from conformance.casefile import Case, Source, logical_values
from conformance.expected import Expected
from conformance.flags import ExecutionFlags
from conformance.judge import compare
from conformance.levels import FeatureLevel
from conformance.ops import OperatorCall
from conformance.results import FAILING, Result, counted
from conformance.session import expected_cache
from conformance.tensors import (
    MAX_BUFFER_BYTES,
    MINIMUM_BUFFER_TENSOR_ALIGNMENT,
    TensorDesc,
    footprint_mask,
    read_tensor,
    write_tensor,
)

GUARD = 64  # bytes before and after every buffer
GUARD_BYTE = 0xA5
_GUARDS = bytes([GUARD_BYTE]) * GUARD
INPUT_PADDING_BYTE = 0x5A
OUTPUT_FILLS = (0xCD, 0x32)  # the second run is made only when the first proves too little
CALL_FILL_STEP = 0x3B  # the n-th call of a chain fills its outputs with fill + n * step
#: The harness holds about this many working copies of a case's buffers (the guarded
#: bindings, input snapshots, outputs read back, expected values): a case is run only when
#: that much fits the memory cap.
WORKING_COPIES = 4


def physical_memory() -> int | None:
    """This machine's physical memory in bytes, where the OS says (POSIX), else None."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return None


def default_memory_cap(processes: int = 1) -> int:
    """The memory one process running cases may use: half the machine's memory shared by the
    processes (4 GiB where the OS does not say), at least 1 GiB (a JIT compiling its kernels in
    a worker needs some hundreds of MiB; the cap is a limit, not a reservation)."""
    total = physical_memory() or 8 << 30
    return max(1 << 30, total // 2 // max(processes, 1))


def case_bytes(case: Case) -> int:
    """The bytes of every buffer a case binds (TotalTensorSizeInBytes of all its tensors)."""
    return sum(d.total_size for named in case.calls for d in named.call.tensors.values())


class Claims(Protocol):
    """What the runner reads of a backend to decide whether a case is its to run: a Backend,
    or in an isolated run what its worker said of it (conformance.session.workers.RemoteBackend)."""

    @property
    def capabilities(self) -> Capabilities: ...

    @property
    def claimed_level(self) -> FeatureLevel: ...

    def unsupported_reason(self, call: OperatorCall) -> str | None: ...


class Claimed:
    """A backend's claims read once (its capabilities and claimed level are properties that a
    backend may rebuild on every read: Capabilities.full for each case was 1.2 s of a 16 s
    run); unsupported_reason is still asked of the backend for each call."""

    def __init__(self, backend: Claims) -> None:
        self.capabilities = backend.capabilities
        self.claimed_level = backend.claimed_level
        self.unsupported_reason = backend.unsupported_reason


class CaseError(Exception):
    """The case cannot be run as written (e.g. generated inputs drifted): an ERROR."""


def unsupported_reason(case: Case, backend: Claims) -> str | None:
    """Why the backend's declared capabilities exclude this case, or None."""
    caps = backend.capabilities
    claimed = backend.claimed_level
    if case.feature_level > claimed:
        return (f"needs feature level {case.feature_level}; the backend claims {claimed} "
                "(not required of it)")
    if case.feature_level_below and claimed >= case.feature_level_below:
        return (f"the expectation holds below feature level {case.feature_level_below} only; "
                f"the backend claims {claimed}")
    if case.rejected and not caps.rejects_invalid:
        return "the backend declares that it does not validate descs"
    for named in case.calls:
        call = named.call
        if call.operator not in caps.operators:
            return f"the backend does not implement {call.operator}"
        if not case.rejected:
            for tensor, desc in call.tensors.items():
                if desc.data_type not in caps.operators[call.operator]:
                    return (f"the backend does not run {call.operator} with "
                            f"{desc.data_type.name} ({tensor})")
            if not caps.strided and any(d.is_strided for d in call.tensors.values()):
                return "the backend declares no support for strided tensors"
            gap = ops.get(call.operator).capability_gap(call, caps)
            if gap:
                return gap
        reason = backend.unsupported_reason(call)
        if reason:
            return reason
    return None


@dataclass
class _Binding:
    desc: TensorDesc
    guarded: np.ndarray  # GUARD + total + GUARD bytes

    @property
    def buffer(self) -> np.ndarray:
        return self.guarded[GUARD:GUARD + self.desc.total_size]

    def guards_intact(self) -> bool:
        g = self.guarded
        return (g[:GUARD].tobytes() == _GUARDS
                and g[GUARD + self.desc.total_size:].tobytes() == _GUARDS)

    def read(self) -> np.ndarray:
        return read_tensor(self.desc, self.buffer)


class Executor(Protocol):
    """Where the backend's code runs, on bindings the harness owns: create_operator(call) is
    the backend's create_operator alone (IDMLDevice::CreateOperator); dispatch(call, bindings)
    is its create_operator then its execute on the bindings (one step for an executor in
    another process). The bindings' bytes (guards included) are the backend's to write during
    dispatch; the runner reads them only after dispatch returns."""

    def create_operator(self, call: OperatorCall) -> None: ...

    def dispatch(self, call: OperatorCall, bindings: Mapping[str, _Binding]) -> None: ...


class InProcess:
    """The executor of an in-process run: the backend's own methods, on views of the bindings
    (TotalTensorSizeInBytes each, between the guards). Not tamper-proof: the backend shares the
    process, and so the modules, of the judge."""

    def __init__(self, backend: Backend) -> None:
        self.backend = backend

    def create_operator(self, call: OperatorCall) -> None:
        self.backend.create_operator(call)

    def dispatch(self, call: OperatorCall, bindings: Mapping[str, _Binding]) -> None:
        self.backend.create_operator(call)
        self.backend.execute(call, {t: b.buffer for t, b in bindings.items()})


class OverBudget(CaseError):  # noqa: N818 - reads as what happened: the case is over budget
    """A buffer the runner will not materialise: beyond MAX_BUFFER_BYTES or the memory cap."""


def _allocate(desc: TensorDesc, fill: int, budget: list[int] | None = None) -> _Binding:
    """A guarded binding of desc, its bytes set to fill. budget: [bytes left], charged."""
    total = desc.total_size
    if total > MAX_BUFFER_BYTES:
        raise OverBudget(f"a {total}-byte buffer is beyond what the runner materialises "
                         f"({MAX_BUFFER_BYTES})")
    if budget is not None:
        if total * WORKING_COPIES > budget[0]:
            raise OverBudget(f"a {total}-byte buffer does not fit in what is left of the "
                             f"memory cap ({budget[0] // WORKING_COPIES} bytes per buffer)")
        budget[0] -= total * WORKING_COPIES
    # Bind at an address aligned as DML_MINIMUM_BUFFER_TENSOR_ALIGNMENT and the desc's
    # GuaranteedBaseOffsetAlignment promise.
    align = max(MINIMUM_BUFFER_TENSOR_ALIGNMENT, desc.guaranteed_base_offset_alignment)
    raw = np.empty(GUARD + total + GUARD + align, dtype=np.uint8)
    skip = -(raw.ctypes.data + GUARD) % align
    guarded = raw[skip:skip + GUARD + total + GUARD]
    guarded[:] = GUARD_BYTE
    guarded[GUARD:GUARD + total] = fill
    return _Binding(desc, guarded)


class CaseRun:
    """One execution of a case's calls with one output fill byte."""

    def __init__(self, case: Case, executor: Executor, fill: int,
                 memory_cap: int | None = None) -> None:
        self.case, self.executor, self.fill = case, executor, fill
        self.budget = [memory_cap] if memory_cap is not None else None
        self.bindings: dict[str, _Binding] = {}
        self.info: list[str] = []

    def fill_of(self, name: str) -> int:
        """Each call's outputs get their own fill byte, so that outputs left unwritten by two
        calls are not equal to each other (a relation between them would pass unseen)."""
        index = [c.name for c in self.case.calls].index(name)
        return (self.fill + CALL_FILL_STEP * index) & 0xFF

    def input_binding(self, ref: str, desc: TensorDesc) -> _Binding:
        source = self.case.inputs.get(ref)
        b = _allocate(desc, INPUT_PADDING_BYTE, self.budget)
        if source is None:  # a rejected case may leave inputs unspecified
            return b
        try:
            return self._fill_input(ref, desc, source, b)
        except sources.SourceError as exc:
            if self.case.rejected:  # its buffers cannot be made: the acceptance is the FAIL
                raise
            raise CaseError(f"{self.case.show_ref(ref)}: {exc}") from exc

    def _fill_input(self, ref: str, desc: TensorDesc, source: Source, b: _Binding) -> _Binding:
        """Write a valid input's values into its binding (its source's kind decides how)."""
        if source.kind == "buffer":
            image = sources.buffer_image(source.params, desc)
            b.buffer[:image.size] = image
            return b
        if source.kind == "from":
            values = self.bindings[source.params].read()
            if source.take:
                values = source.take.apply(values)
            if values.shape != desc.sizes:
                raise CaseError(f"{source.params} has Sizes {list(values.shape)}, "
                                f"{self.case.show_ref(ref)} has {list(desc.sizes)}")
        else:
            values, made = _made(source, desc)
            if source.sha256 and made != source.sha256:
                raise CaseError(f"generated input {self.case.show_ref(ref)} drifted: its bytes "
                                f"hash to {made}, the case records {source.sha256}")
        write_tensor(desc, b.buffer, values)
        return b

    def execute(self, name: str, call: OperatorCall) -> None:
        spec = ops.get(call.operator)
        for tensor in spec.inputs:
            ref = f"{name}.{tensor}"
            self.bindings[ref] = self.input_binding(ref, call.tensors[tensor])
        fill = self.fill_of(name)
        for tensor in spec.outputs:
            self.bindings[f"{name}.{tensor}"] = _allocate(call.tensors[tensor], fill,
                                                          self.budget)
        mine = {t: self.bindings[f"{name}.{t}"] for t in call.tensors}
        snapshot = {t: mine[t].buffer.tobytes() for t in spec.inputs}
        _call_backend(self.executor.dispatch, call, mine)
        for t, b in mine.items():
            if not b.guards_intact():
                raise BindingError(f"{self.case.show_ref(f'{name}.{t}')}: the backend wrote "
                                   f"outside its buffer (guard bytes around the "
                                   f"{b.desc.total_size}-byte binding changed)")
        for t in spec.inputs:
            now = mine[t].buffer
            if _same(now, snapshot[t]):
                continue
            changed = np.flatnonzero(now != np.frombuffer(snapshot[t], dtype=np.uint8))
            raise BindingError(f"{self.case.show_ref(f'{name}.{t}')}: the backend changed "
                               f"{counted(int(changed.size), 'byte')} of its input, first "
                               f"at byte {int(changed[0])}")
        for t in spec.outputs:
            written = padding_written(mine[t], fill)
            if written:
                self.info.append(f"{self.case.show_ref(f'{name}.{t}')}: wrote "
                                 f"{counted(written, 'padding byte')} inside "
                                 "TotalTensorSizeInBytes (legal: spec-notes §2)")


def _same(now: np.ndarray, before: bytes) -> bool:
    """Whether a buffer's bytes are still `before` (compared as bytes: a tenth of the cost of
    NumPy's comparison for the suite's small buffers; large ones without another copy)."""
    if now.nbytes <= 1 << 20:
        return now.tobytes() == before
    return bool(np.array_equal(now, np.frombuffer(before, dtype=np.uint8)))


def padding_written(b: _Binding, fill: int) -> int:
    """How many bytes of an output's padding (inside TotalTensorSizeInBytes, outside every
    logical element) no longer hold the fill. A packed desc in row-major order has its padding
    at the end only (the rounding up to 4 bytes and any larger TotalTensorSizeInBytes)."""
    desc, buffer = b.desc, b.buffer
    if not desc.is_strided:
        tail = buffer[desc.element_count * desc.data_type.size:]
        return int(np.count_nonzero(tail != fill)) if tail.size else 0
    return int(np.count_nonzero(~footprint_mask(desc) & (buffer != fill)))


class BindingError(Exception):
    """A FAIL found in the bound buffers: guard bytes or input bytes changed."""


class BackendError(Exception):
    """The backend raised something other than DescRejected: an ERROR. (An executor that runs
    the backend elsewhere raises it with the backend's exception in words.)"""


#: Inputs made for earlier cases: many cases share an input (the same generator, parameters,
#: type and sizes), and a run makes each once. Only small ones are kept, MADE_BYTES in all.
_MADE: OrderedDict[tuple, tuple[np.ndarray, str | None]] = OrderedDict()
MADE_BYTES, MADE_ONE_BYTES = 16 << 20, 1 << 20
_made_bytes = [0]


def _made(source: Source, desc: TensorDesc) -> tuple[np.ndarray, str | None]:
    """The logical values a case's source makes for desc and, where the case records one,
    their sha256; a generator's small output is made once per run (an in-memory LRU, its
    arrays read-only)."""
    k = None
    if source.kind in sources.GENERATED and isinstance(source.params, dict):
        try:
            k = (source.kind, desc.data_type, desc.sizes,  # 1 and 1.0 are kept apart
                 tuple((n, type(v).__name__, v) for n, v in sorted(source.params.items())))
            hash(k)
        except TypeError:  # a parameter the schema allows as a list: not kept
            k = None
    if k is not None and k in _MADE:
        _MADE.move_to_end(k)
        return _MADE[k]
    values = logical_values(source, desc)
    made = (values, sources.sha256(values) if source.sha256 or k is not None else None)
    if k is not None and values.nbytes <= MADE_ONE_BYTES:
        values.flags.writeable = False
        _MADE[k] = made
        _made_bytes[0] += values.nbytes
        while _made_bytes[0] > MADE_BYTES:
            _made_bytes[0] -= _MADE.popitem(last=False)[1][0].nbytes
    return made


def _call_backend(method: Callable, *args: object) -> None:
    try:
        method(*args)
    except (DescRejected, BackendError, CaseError):
        raise
    except Exception as exc:
        tb = traceback.extract_tb(exc.__traceback__)
        where = f" at {tb[-1].filename}:{tb[-1].lineno}" if tb else ""
        raise BackendError(f"the backend raised {type(exc).__name__}: {exc}{where}") from exc


def call_expected(case: Case, run: CaseRun, name: str, strict: bool, flags: ExecutionFlags
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


def expectations(case: Case, run: CaseRun, flags: ExecutionFlags = ExecutionFlags.NONE
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
                                               rule=f"the case's exact values, {legal.rule}"))
            continue
        values = (sources.from_values if e.kind == "values" else sources.from_bits)(e.data, desc)
        if e.ulp is not None and desc.data_type.is_float:
            center = values.astype(np.float64)
            bound = e.ulp * np.spacing(np.abs(values)).astype(np.float64)
            out[ref] = Expected(values, kind="within", center=center, bound=bound,
                                rule=f"within {e.ulp} ulp of the case's values")
        else:
            out[ref] = Expected(values, rule="bit-exact, the case's values")
    return out


def covers_fill(expected: Expected, fill: int) -> bool:
    """Whether the fill pattern itself is an acceptable value of some element (then an
    unwritten element would pass unseen, and a second run with another fill is needed).
    Judged by the expectation itself, so a tolerance ('within', 'one_of') that admits the
    fill counts too, not only an expected value equal to it."""
    values = expected.values
    filled = np.full(values.nbytes, fill, dtype=np.uint8).view(values.dtype).reshape(values.shape)
    return bool(not compare.mismatches(filled, expected).all())


@dataclass
class _Verdict:
    """What one run of a case's calls with one output fill came to."""

    status: str
    message: str = ""
    info: list[str] = field(default_factory=list)
    mismatches: list[dict] = field(default_factory=list)
    grids: list[dict] = field(default_factory=list)
    again: bool = False  # the fill itself is acceptable somewhere: run again with another
    margin: float | None = None
    diagnosis: dict | None = None


def _judge(case: Case, executor: Executor, flags: ExecutionFlags, fill: int,
           memory_cap: int | None) -> _Verdict:
    """Run once and judge every expected output against its legal envelope (FAIL outside it)
    and its strict model (QUALITY_WARNING outside it), and every relation bit for bit. flags:
    the run's execution flags (they may widen the envelope)."""
    run = CaseRun(case, executor, fill, memory_cap)
    named = case.calls[0]
    try:
        for named in case.calls:
            run.execute(named.name, named.call)
    except BindingError as exc:
        return _Verdict("FAIL", str(exc), run.info)
    except DescRejected as exc:
        from conformance.judge import diagnose  # the catalogue is loaded only when something FAILs

        found = diagnose.explain_rejection(named.call)
        message = f"the backend rejected a valid desc: {exc}"
        return _Verdict("FAIL", f"{message} | diagnosis: {found['text']}" if found else message,
                        run.info, diagnosis=found)
    verdict = _Verdict("PASS", info=run.info)
    failures, warnings, failed, related = [], [], {}, False
    for ref, exp in expectations(case, run, flags).items():
        got = run.bindings[ref].read()
        name = ref.split(".", 1)[0]
        verdict.again |= covers_fill(exp.envelope, run.fill_of(name))
        judged = compare.judge(got, exp)
        if judged.margin is not None:
            verdict.margin = max(verdict.margin or 0.0, judged.margin)
        if judged.status == "QUALITY_WARNING":
            warnings.append(f"inside the legal envelope ({exp.envelope.rule}), outside the "
                            "strict reading: "
                            + compare.describe(got, judged.model, judged.bad, case.show_ref(ref)))
        elif judged.status == "FAIL":
            failures.append(compare.describe(got, judged.model, judged.bad, case.show_ref(ref)))
            failed.setdefault(name, {})[ref.split(".", 1)[1]] = (got, exp)
            _keep_failure(case, run, ref, got, judged, verdict)
    for relation in case.relations:
        left, right, why = relation.left, relation.right, relation.why
        a, b = run.bindings[left].read(), run.bindings[right].read()
        if relation.take:
            b = relation.take.apply(b)
        if a.shape != b.shape:
            failures.append(f"{left} {list(a.shape)} and {right} {list(b.shape)} differ in shape")
            continue
        judged = compare.judge(a, relation_model(case, run, left, b, flags))
        said = f"relation {left} == {right}{f' ({why})' if why else ''}"
        if judged.margin is not None:
            verdict.margin = max(verdict.margin or 0.0, judged.margin)
        if judged.status == "FAIL":
            failures.append(f"{said}: " + compare.describe(a, judged.model, judged.bad, left))
            related = True
        elif judged.status == "QUALITY_WARNING":
            warnings.append(f"{said} holds within the legal envelope "
                            f"({judged.model.envelope.rule}), not bit for bit: "
                            + compare.describe(a, judged.model, judged.bad, left))
    if failures:
        verdict.status, verdict.again = "FAIL", False
        verdict.diagnosis = _diagnose(case, run, failed, flags, related)
        text = " | ".join(failures)
        verdict.message = (f"{text} | diagnosis: {verdict.diagnosis['text']}"
                           if verdict.diagnosis else text)
    elif warnings:
        verdict.status, verdict.message = "QUALITY_WARNING", " | ".join(warnings)
    return verdict


def relation_model(case: Case, run: CaseRun, left: str, right: np.ndarray,
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


def backend_flags(backend: Claims) -> ExecutionFlags:
    """The execution flags a backend runs with (NONE for one built without them)."""
    return ExecutionFlags(getattr(backend, "execution_flags", ExecutionFlags.NONE))


def _keep_failure(case: Case, run: CaseRun, ref: str, got: np.ndarray,
                  judged: compare.Judgement, verdict: _Verdict) -> None:
    """Keep what a reader of the report needs: the call's small inputs, the output with what was
    expected, and the first mismatching elements."""
    name = ref.split(".", 1)[0]
    spec = ops.get(case.call(name).operator)
    for t in spec.inputs:
        g = compare.grid(case.show_ref(f"{name}.{t}"), run.bindings[f"{name}.{t}"].read())
        if g and g not in verdict.grids:
            verdict.grids.append(g)
    g = compare.grid(case.show_ref(ref), got, judged.model, judged.bad)
    if g:
        verdict.grids.append(g)
    for index in np.argwhere(judged.bad)[:compare.SHOWN]:
        idx = tuple(int(i) for i in index)
        verdict.mismatches.append({"tensor": case.show_ref(ref), "index": list(idx),
                                   "expected": compare.format_value(judged.model.values[idx]),
                                   "got": compare.format_value(got[idx])})


def _diagnose(case: Case, run: CaseRun, failed: dict[str, dict[str, tuple[np.ndarray, Expected]]],
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


def _run_rejected(case: Case, executor: Executor, claimed: FeatureLevel,
                  memory_cap: int | None) -> tuple[str, str]:
    named = case.calls[0]
    call = named.call
    broken = ops.get(call.operator).validate(call, claimed)
    why = "; ".join(str(v) for v in broken) or "(the reference finds no broken rule)"
    try:
        _call_backend(executor.create_operator, call)
    except DescRejected as exc:
        return "PASS", f"rejected at create_operator: {exc}"
    run = CaseRun(case, executor, OUTPUT_FILLS[0], memory_cap)
    try:
        run.execute(named.name, call)
    except DescRejected as exc:
        return "PASS", f"rejected at execute: {exc}"
    except OverBudget as exc:
        return "FAIL", (f"the backend accepted an invalid desc at create_operator (too large to "
                        f"dispatch here: {exc}); it breaks: {why}")
    except (ValueError, TypeError) as exc:
        # The harness cannot bind buffers for this desc (Strides of another length than Sizes,
        # a TotalTensorSizeInBytes below what the strides address): the acceptance is the FAIL.
        return "FAIL", (f"the backend accepted an invalid desc at create_operator (its buffers "
                        f"cannot be bound here: {exc}); it breaks: {why}")
    except BindingError as exc:
        return "FAIL", f"the backend accepted an invalid desc and then: {exc}; it breaks: {why}"
    return "FAIL", f"the backend accepted an invalid desc; it breaks: {why}"


def new_result(case: Case, status: str = "PASS", message: str = "") -> Result:
    """A result for case, its descriptive fields filled in from the case."""
    return Result(
        id=case.id, status=status, message=message, operators=list(case.operators),
        data_types=list(dict.fromkeys(d.data_type.name for named in case.calls
                                      for d in named.call.tensors.values())),
        feature_level=str(case.feature_level),
        feature_level_below=str(case.feature_level_below) if case.feature_level_below else None,
        tags=list(case.tags), spec=[c.to_json() for c in case.spec], ambiguous=case.ambiguous)


def run_case(case: Case, backend: Claims, memory_cap: int | None = None,
             executor: Executor | None = None, flags: ExecutionFlags | None = None) -> Result:
    """Run one case and judge it. backend: a Backend, or what stands for one (its claims).
    memory_cap: the bytes the harness may hold for the case's buffers (WORKING_COPIES of each);
    a valid case over it is an ERROR before anything is allocated or run. None:
    default_memory_cap(). executor: where the backend's calls run (None: InProcess(backend),
    in this process). flags: the run's execution flags (None: the backend's own)."""
    started = time.perf_counter()
    cap = default_memory_cap() if memory_cap is None else memory_cap
    if executor is None:
        executor = InProcess(backend)  # type: ignore[arg-type]
    if flags is None:
        flags = backend_flags(backend)
    result = new_result(case)
    try:
        reason = unsupported_reason(case, backend)
        needed = 0 if case.rejected else case_bytes(case) * WORKING_COPIES
        if reason:
            result.status, result.message = "NOT_SUPPORTED", reason
        elif needed > cap:
            result.status, result.message = "ERROR", (
                f"the case cannot run: its buffers need {needed // WORKING_COPIES:,} bytes "
                f"({WORKING_COPIES} working copies: {needed:,}), over the memory cap of "
                f"{cap:,} bytes (--memory-cap); refused before allocating anything "
                f"({case.file}:{case.line})")
        elif case.rejected:
            result.status, result.message = _run_rejected(case, executor,
                                                          backend.claimed_level, cap)
        else:
            verdict = _judge(case, executor, flags, OUTPUT_FILLS[0], cap)
            if verdict.status != "FAIL" and verdict.again:
                second = _judge(case, executor, flags, OUTPUT_FILLS[1], cap)
                second.info = verdict.info + [i for i in second.info if i not in verdict.info]
                if second.status == "PASS" and verdict.status == "QUALITY_WARNING":
                    second.status, second.message = verdict.status, verdict.message
                if verdict.margin is not None:
                    second.margin = max(verdict.margin, second.margin or 0.0)
                verdict = second
            result.status, result.message = verdict.status, verdict.message
            result.info = verdict.info
            result.mismatches, result.grids = verdict.mismatches, verdict.grids
            result.margin = verdict.margin
            result.diagnosis = verdict.diagnosis
    except CaseError as exc:
        result.status, result.message = "ERROR", f"the case cannot run: {exc}"
    except BackendError as exc:
        result.status, result.message = "ERROR", str(exc)
    except MemoryError as exc:
        result.status, result.message = "ERROR", (
            f"the harness ran out of memory running the case ({type(exc).__name__}: {exc}); "
            f"its buffers need {case_bytes(case):,} bytes")
    except Exception as exc:
        result.status = "ERROR"
        result.message = (f"internal error in the harness (please report): "
                          f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=-3)}")
    result.duration_s = round(time.perf_counter() - started, 6)
    return result


def run_cases(cases: Iterable[Case], backend: Backend,
              on_result: Callable[[Result], None] | None = None,
              memory_cap: int | None = None) -> list[Result]:
    """Run the cases one after the other in this process (conformance.session.workers runs them in
    worker processes). The backend's claims are read once for the run (Claimed), not for every
    case."""
    results = []
    claims, executor, flags = Claimed(backend), InProcess(backend), backend_flags(backend)
    for case in cases:
        result = run_case(case, claims, memory_cap, executor, flags)
        results.append(result)
        if on_result:
            on_result(result)
    return results


#: How the message of a failing result that a retry ended otherwise begins (--retries).
FLAKY = "FLAKY"


def is_flaky(result: Result) -> bool:
    return result.status in FAILING and result.message.startswith(f"{FLAKY} (")


def retry_failures(results: list[Result], cases: Sequence[Case],
                   run: Callable[[list[Case]], list[Result]], times: int) -> list[Result]:
    """Run each case whose result fails (FAIL, ERROR, TIMEOUT) `times` more times, to tell a
    flaky failure from a deterministic one. The first result stands, since a failure seen once
    is a failure; its info lists the status of every try, and its message starts with FLAKY
    when some try ended otherwise. run: runs cases the way the first tries ran."""
    failing = {r.id for r in results if r.status in FAILING}
    if times < 1 or not failing:
        return results
    tries = {r.id: [r.status] for r in results if r.id in failing}
    again = [c for c in cases if c.id in failing]
    for _ in range(times):
        for r in run(again):
            tries[r.id].append(r.status)
    out = []
    for r in results:
        if r.id in tries:
            seen = tries[r.id]
            flaky = len(set(seen)) > 1
            r = replace(r, info=[*r.info, f"{len(seen)} tries: {', '.join(seen)} ("
                                 + ("flaky)" if flaky else "the same every time)")],
                        message=(f"{FLAKY} ({', '.join(seen)} in {len(seen)} tries): "
                                 if flaky else "") + r.message)
        out.append(r)
    return out
