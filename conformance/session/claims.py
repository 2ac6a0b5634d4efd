"""What the runner reads of a backend (its claims: capabilities, claimed level,
unsupported_reason, execution flags) and whether a case is its to run."""

from __future__ import annotations

from typing import Protocol

from conformance import ops
from conformance.backend import Capabilities
from conformance.casefile import Case
from conformance.flags import ExecutionFlags
from conformance.levels import FeatureLevel
from conformance.ops import OperatorCall
from conformance.results import Scope


class Claims(Protocol):
    """What the runner reads of a backend to decide whether a case is its to run: a Backend,
    or in an isolated run what its worker said of it
    (conformance.session.worker_handle.RemoteBackend)."""

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


def data_types_of(case: Case) -> list[str]:
    """The data types of the case's tensors, each once, in call and tensor order (a result's
    `data_types`)."""
    return list(dict.fromkeys(d.data_type.name for named in case.calls
                              for d in named.call.tensors.values()))


def out_of_scope(case: Case, scope: Scope | None) -> str | None:
    """Why a scoped claim (results.scope) does not cover the case, or None: the case is then
    not run, NOT_SUPPORTED as not covered, and decides no verdict."""
    if scope is None or scope.covers(case.operators, data_types_of(case)):
        return None
    return f"not covered: outside the claimed scope ({scope.text()})"


def backend_flags(backend: Claims) -> ExecutionFlags:
    """The execution flags a backend runs with (NONE for one built without them)."""
    return ExecutionFlags(getattr(backend, "execution_flags", ExecutionFlags.NONE))
