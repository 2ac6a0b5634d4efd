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

Here: CaseRun (one execution of a case's calls), _judge (one run judged) and run_case. The
guarded buffers, the executors and the errors are conformance.session.bindings; what each
output is judged against and what a FAIL keeps, conformance.session.judging; what the runner
reads of a backend, conformance.session.claims.
"""

from __future__ import annotations

import os
import time
import traceback
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace

import numpy as np

from conformance import inputs as sources
from conformance import ops
from conformance.backend import Backend, DescRejected
from conformance.casefile import Case, Source, logical_values
from conformance.expected import Expected
from conformance.flags import ExecutionFlags
from conformance.judge import compare
from conformance.levels import FeatureLevel
from conformance.ops import OperatorCall
from conformance.results import FAILING, Result, Status, counted
from conformance.session.bindings import GUARD as GUARD  # re-exported: case_run.GUARD
from conformance.session.bindings import (
    WORKING_COPIES,
    BackendError,
    BindingError,
    CaseError,
    Executor,
    InProcess,
    OverBudget,
    _allocate,
    _Binding,
    _call_backend,
    padding_written,
)
from conformance.session.claims import (
    Claimed,
    Claims,
    backend_flags,
    data_types_of,
    unsupported_reason,
)
from conformance.session.judging import (
    _diagnose,
    _keep_failure,
    _Verdict,
    covers_fill,
    expectations,
    keep_output,
    relation_model,
)
from conformance.tensors import TensorDesc, write_tensor

INPUT_PADDING_BYTE = 0x5A
OUTPUT_FILLS = (0xCD, 0x32)  # the second run is made only when the first proves too little
CALL_FILL_STEP = 0x3B  # the n-th call of a chain fills its outputs with fill + n * step


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
        if case.may_reject:  # an open region of validation: rejecting is the suite's reading
            return _Verdict("PASS", f"rejected, the suite's reading of an open region (accepted "
                                    f"and computed right is admissible too): {exc}", run.info)
        from conformance.judge import diagnose  # the catalogue is loaded only when something FAILs

        found = diagnose.explain_rejection(named.call)
        message = f"the backend rejected a valid desc: {exc}"
        return _Verdict("FAIL", f"{message} | diagnosis: {found['text']}" if found else message,
                        run.info, diagnosis=found)
    verdict = _Verdict("PASS", info=run.info)
    if case.may_reject:
        verdict.info.append(f"accepted a desc the suite's reading rejects: an admissible reading "
                            f"of an open region ({case.may_reject}); its outputs are judged")
    failures, warnings, related = [], [], False
    failed: dict[str, dict[str, tuple[np.ndarray, Expected]]] = {}  # call -> output -> judged
    for ref, exp in expectations(case, run, flags).items():
        got = run.bindings[ref].read()
        name = ref.split(".", 1)[0]
        verdict.again |= covers_fill(exp, run.fill_of(name))
        judged = compare.judge(got, exp)
        if judged.margin is not None:
            verdict.margin = max(verdict.margin or 0.0, judged.margin)
        if judged.reading is not None:
            verdict.info.append(f"{case.show_ref(ref)} follows an admissible reading of an "
                                f"open region, not the suite's own: {judged.reading.rule}")
        elif judged.status != "FAIL" and (taken := compare.others_taken(got, exp)):
            # per element: a tie (an open region) or a coordinate within the arithmetic's
            # rounding of one (the legal envelope); the model does not say which
            verdict.info.append(f"{case.show_ref(ref)} took the other admissible value at "
                                f"{taken} element(s), not the suite's first: {exp.rule}")
        if judged.status == "QUALITY_WARNING":
            envelope = (judged.reading or exp).envelope
            warnings.append(f"inside the legal envelope ({envelope.rule}), outside the "
                            "strict reading: "
                            + compare.describe(got, judged.model, judged.bad, case.show_ref(ref)))
        elif judged.status == "FAIL":
            failures.append(compare.describe(got, judged.model, judged.bad, case.show_ref(ref))
                            + compare.fits_no_reading(exp))
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
            keep_output(f"{case.show_ref(left)} == {case.show_ref(right)}", a, judged, verdict)
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


def new_result(case: Case, status: Status = Status.PASS, message: str = "") -> Result:
    """A result for case, its descriptive fields filled in from the case."""
    return Result(
        id=case.id, status=status, message=message, operators=list(case.operators),
        data_types=data_types_of(case),
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
            result.status, result.message = Status.NOT_SUPPORTED, reason
        elif needed > cap:
            result.status, result.message = Status.ERROR, (
                f"the case cannot run: its buffers need {needed // WORKING_COPIES:,} bytes "
                f"({WORKING_COPIES} working copies: {needed:,}), over the memory cap of "
                f"{cap:,} bytes (--memory-cap); refused before allocating anything "
                f"({case.file}:{case.line})")
        elif case.rejected:
            status, result.message = _run_rejected(case, executor, backend.claimed_level, cap)
            result.status = Status(status)
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
            result.status, result.message = Status(verdict.status), verdict.message
            result.info = verdict.info
            result.mismatches, result.grids = verdict.mismatches, verdict.grids
            result.heat_maps = verdict.heat_maps
            result.margin = verdict.margin
            result.diagnosis = verdict.diagnosis
    except CaseError as exc:
        result.status, result.message = Status.ERROR, f"the case cannot run: {exc}"
    except BackendError as exc:
        result.status, result.message = Status.ERROR, str(exc)
    except MemoryError as exc:
        result.status, result.message = Status.ERROR, (
            f"the harness ran out of memory running the case ({type(exc).__name__}: {exc}); "
            f"its buffers need {case_bytes(case):,} bytes")
    except Exception as exc:
        result.status = Status.ERROR
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
