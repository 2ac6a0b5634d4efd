"""The ONNX-model route to a peer implementation: each operator call becomes a one-node ONNX
model (backends/onnx_model.py) run by a runtime. OnnxModelBackend holds what every runtime
shares; a subclass names the runtime (backends/onnxruntime_backend.py: ONNX Runtime's
providers; backends/openvino_backend.py: OpenVINO's CPU plugin through its ONNX front end).

Claims are probed, not assumed: for each operator and data type a tiny model is built and run
once; the types that run are claimed, the refusals are kept, in the runtime's own words, in the
capabilities' notes. Finer limits come per call from unsupported_reason: a call with no exact
ONNX model (strided tensors, other pixel offsets, a COLUMN_ROW_DEPTH SpaceToDepth, an output
size other than floor(InputSize * Scale)), or one whose operator / type / mode / rank / scale
pattern the runtime refuses (probed on a tiny input of the same pattern, cached).

No such runtime knows DirectML's desc rules, so none validates (rejects_invalid False: the
invalid-desc cases are NOT_SUPPORTED). Where the runtime (or onnx) is not installed the backend
still loads, and every case is NOT_SUPPORTED with the reason.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Hashable, Mapping
from functools import cached_property
from typing import Any

import numpy as np

from backends import onnx_model
from conformance import ops
from conformance.backend import Backend, Capabilities
from conformance.levels import HIGHEST, FeatureLevel
from conformance.ops import OperatorCall
from conformance.tensors import DataType, TensorDesc, read_tensor, write_tensor

INSTALL_ONNX = "onnx is not installed (the models are built with it): pip install onnx"
#: Sessions kept, most recently used first out last (one per model: operator, type, shapes).
SESSION_CACHE = 32
#: The largest dimension a probe input takes (a tiny scale may need a long one to give 1).
PROBE_MAX_SIZE = 4096

#: (backend name, probe signature) -> None (runs) or the refusal. Shared by instances.
_PROBED: dict[tuple[str, Hashable], str | None] = {}


class OnnxModelBackend(Backend):
    """Each call as a one-node ONNX model (backends/onnx_model.py) run by a runtime: the
    subclass says whether the runtime is here (unavailable), its version, and how a model
    becomes a session (_new_session: an object whose run([OUTPUT], {INPUT: x}) gives [y])."""

    native = True
    #: the runtime, as the capabilities' notes name it
    runtime = "the runtime"
    #: Whether the provider computes ONNX's own Resize (a peer), rather than handing the desc the
    #: model carries to DirectML: then a call where ONNX's semantics and the page's differ
    #: (onnx_model.antialias_differs) is not one it can run for the page.
    onnx_semantics = True

    def __init__(self, feature_level: FeatureLevel | None = None) -> None:
        self._sessions: OrderedDict[tuple, Any] = OrderedDict()
        super().__init__(feature_level)

    # -- availability ---------------------------------------------------------------------------
    @cached_property
    def unavailable(self) -> str | None:
        """Why this backend cannot run anything here, or None: the runtime's reason
        (runtime_missing), or onnx missing."""
        why = self.runtime_missing()
        if why:
            return why
        try:
            import onnx  # noqa: F401 - the models are built with it
        except ImportError:
            return INSTALL_ONNX
        return None

    def runtime_missing(self) -> str | None:
        """Why the runtime (its package, provider or device) is not here, or None."""
        raise NotImplementedError

    @property
    def version(self) -> str:
        """The runtime's name and version, as the results record it."""
        raise NotImplementedError

    @property
    def environment(self) -> dict[str, str]:
        """The runtime that ran (Backend.environment's `version`)."""
        return {} if self.unavailable else {"version": self.version}

    def error_text(self, exc: BaseException) -> str:
        """A refusal in the runtime's words, short."""
        text = " ".join(str(exc).split())
        return text if len(text) <= 400 else text[:397] + "..."

    # -- claims ---------------------------------------------------------------------------------
    @cached_property
    def capabilities(self) -> Capabilities:
        if self.unavailable:
            # Claim all of its operators so that each of their cases reaches
            # unsupported_reason, which gives this reason: no claim here is real.
            return Capabilities.full(onnx_model.OPERATORS, f"{self.unavailable}; nothing runs: "
                                     "every case is NOT_SUPPORTED with this reason")
        types: dict[str, frozenset[DataType]] = {}
        refused: dict[str, list[str]] = {}
        for name in onnx_model.OPERATORS:  # the operators a model is built for, no others
            spec = ops.get(name)
            runs = set()
            for data_type in sorted(frozenset().union(*(t.data_types for t in spec.support))):
                errors = [self.probe(call) for call in _representatives(spec, data_type)]
                if any(e is None for e in errors):
                    runs.add(data_type)
                else:
                    refused.setdefault(str(errors[0]), []).append(f"{name} {data_type.name}")
            if runs:
                types[name] = frozenset(runs)
        notes = (f"{self.version}; one ONNX node per call (opset {onnx_model.OPSET}, IR "
                 f"{onnx_model.IR_VERSION}; Resize-{onnx_model.ANTIALIAS_OPSET} for antialias; "
                 "backends/onnx_model.py). Packed tensors only; pixel offsets (0.5, -0.5) "
                 "(half_pixel) and (0, 0) (asymmetric) only, RESAMPLE2/3 nearest with the "
                 "offsets the DirectML provider's nearest_mode mapping adds. Validates no "
                 f"desc: {self.runtime} knows nothing of DirectML's desc rules, so the "
                 "invalid-desc cases are NOT_SUPPORTED. Data types found by running each "
                 "operator once on a tiny tensor; refused there: "
                 + ("; ".join(f"{', '.join(what)}: {why}" for why, what in refused.items())
                    or "none"))
        return Capabilities(operators=types, feature_level=HIGHEST, strided=False,
                            arbitrary_offsets=False,
                            offset_pairs=onnx_model.OFFSET_PAIRS,
                            rejects_invalid=False, notes=notes)

    def unsupported_reason(self, call: OperatorCall) -> str | None:
        if self.unavailable:
            return self.unavailable
        why = onnx_model.why_not_expressible(call)
        if why:
            return f"not expressible as one ONNX node (opset {onnx_model.OPSET}): {why}"
        differs = onnx_model.antialias_differs(call) if self.onnx_semantics else None
        if differs:
            return f"ONNX's Resize computes another operator here: {differs}"
        error = self.probe(call)
        if error:
            return f"{self.version} refuses {_describe(call)}: {error}"
        return None

    # -- probing --------------------------------------------------------------------------------
    def probe(self, call: OperatorCall) -> str | None:
        """Run the call's pattern once on a tiny input: None when it runs, else the refusal.
        Cached by signature (operator, node attributes, data type, rank, scale pattern)."""
        key = (self.name, _signature(call))
        if key not in _PROBED:
            _PROBED[key] = self._probe(_tiny(call))
        return _PROBED[key]

    def _probe(self, call: OperatorCall) -> str | None:
        try:
            session = self._new_session(call, threads=1)
            inp = call.tensors["InputTensor"]
            x = np.zeros(inp.sizes, inp.data_type.numpy_dtype)
            (y,) = session.run([onnx_model.OUTPUT], {onnx_model.INPUT: x})
        except Exception as exc:
            return self.error_text(exc)
        want = call.tensors["OutputTensor"].sizes
        if tuple(y.shape) != tuple(want):
            return f"it returned shape {list(y.shape)} where the model states {list(want)}"
        return None

    # -- running --------------------------------------------------------------------------------
    def _new_session(self, call: OperatorCall, threads: int = 0) -> Any:
        """The call's model ready to run (threads: 0 for the runtime's default)."""
        raise NotImplementedError

    def _session(self, call: OperatorCall) -> Any:
        key = onnx_model.model_key(call)
        session = self._sessions.pop(key, None)
        if session is None:
            session = self._new_session(call)
        self._sessions[key] = session
        while len(self._sessions) > SESSION_CACHE:
            self._sessions.popitem(last=False)
        return session

    def execute(self, call: OperatorCall, bindings: Mapping[str, np.ndarray]) -> None:
        reason = self.unsupported_reason(call)
        if reason:
            raise RuntimeError(f"{self.name} cannot run this call: {reason}")
        inp, out = call.tensors["InputTensor"], call.tensors["OutputTensor"]
        x = read_tensor(inp, bindings["InputTensor"])
        (y,) = self._session(call).run([onnx_model.OUTPUT], {onnx_model.INPUT: x})
        if tuple(y.shape) != tuple(out.sizes) or y.dtype != out.data_type.numpy_dtype:
            raise RuntimeError(f"{self.version} returned {y.dtype} {list(y.shape)} for the "
                               f"model's {out.data_type.name} {list(out.sizes)}")
        write_tensor(out, bindings["OutputTensor"], y)



# -- probe calls ------------------------------------------------------------------------------
def _representatives(spec: ops.OperatorSpec, data_type: DataType) -> list[OperatorCall]:
    """Tiny calls of every mode of an operator with one data type (a type is claimed when
    any of them runs)."""
    def desc(sizes: tuple[int, ...]) -> TensorDesc:
        return TensorDesc(data_type, sizes)

    if onnx_model.OPERATORS[spec.name] == "Resize":
        calls = []
        names = {a.name for a in spec.attributes}
        for mode in ("NEAREST_NEIGHBOR", "LINEAR"):
            attrs: dict[str, Any] = {"InterpolationMode": mode, "Scales": [1, 1, 2, 2]}
            if "InputPixelOffsets" in names:  # RESAMPLE1, 2, 3: half_pixel
                attrs |= {"InputPixelOffsets": [0.5] * 4, "OutputPixelOffsets": [-0.5] * 4}
            if "RoundingDirection" in names:  # RESAMPLE2, 3: floor(x) (ONNX nearest_mode floor)
                attrs["RoundingDirection"] = "DECREASING"
            if "Antialiased" in names:  # RESAMPLE3: what it adds is probed per call
                attrs["Antialiased"] = False
            calls.append(spec.make_call({"InputTensor": desc((1, 1, 2, 2)),
                                         "OutputTensor": desc((1, 1, 4, 4))}, attrs))
        return calls
    orders = ["DEPTH_COLUMN_ROW", "COLUMN_ROW_DEPTH"] if spec.name == "DEPTH_TO_SPACE1" else [
        "DEPTH_COLUMN_ROW"]
    depth, space = desc((1, 4, 1, 1)), desc((1, 1, 2, 2))
    tensors = ({"InputTensor": depth, "OutputTensor": space}
               if onnx_model.OPERATORS[spec.name] == "DepthToSpace"
               else {"InputTensor": space, "OutputTensor": depth})
    return [spec.make_call(tensors, {"BlockSize": 2, **({"Order": o} if spec.name.endswith("1")
                                                        else {})}) for o in orders]


def _scale_pattern(call: OperatorCall) -> tuple[int, ...]:
    return tuple(int(np.sign(s - 1)) for s in np.float32(call.attributes["Scales"]))


def _signature(call: OperatorCall) -> Hashable:
    spec = onnx_model.node_spec(call)
    inp = call.tensors["InputTensor"]
    pattern = _scale_pattern(call) if spec.scales is not None else ()
    return spec.op_type, spec.attributes, inp.data_type, inp.dimension_count, pattern


def _describe(call: OperatorCall) -> str:
    spec = onnx_model.node_spec(call)
    attrs = ", ".join(f"{k}={v}" for k, v in spec.attributes)
    inp = call.tensors["InputTensor"]
    text = f"{spec.op_type}({attrs}) on {inp.dimension_count}-D {inp.data_type.name}"
    if spec.scales is not None:
        scaled = [d for d, s in enumerate(_scale_pattern(call)) if s]
        text += f" scaling dimension(s) {scaled or 'none'}"
    return text


def _tiny_size(scale: float) -> tuple[int, int] | None:
    """The smallest input size >= 2 whose ONNX output size is at least 1 (both readings)."""
    n = max(2, math.ceil(1 / scale)) if scale < 1 else 2
    while n <= PROBE_MAX_SIZE:
        exact, single = onnx_model.onnx_output_size(n, scale)
        if exact == single >= 1:
            return n, exact
        n += 1
    return None


def _tiny(call: OperatorCall) -> OperatorCall:
    """The call's pattern on a tiny input: same operator, attributes and data type."""
    spec = ops.get(call.operator)
    data_type = call.tensors["InputTensor"].data_type
    a = call.attributes
    if onnx_model.OPERATORS[call.operator] == "Resize":
        sizes = [_tiny_size(float(s)) for s in np.float32(a["Scales"])]
        if any(s is None for s in sizes):
            return call  # no small input gives an output: probe with the call itself
        ins = tuple(s[0] for s in sizes if s)
        outs = tuple(s[1] for s in sizes if s)
    else:
        b = a["BlockSize"]
        ins, outs = (1, b * b, 1, 1), (1, 1, b, b)
        if onnx_model.OPERATORS[call.operator] == "SpaceToDepth":
            ins, outs = outs, ins
    return OperatorCall(spec.name, {"InputTensor": TensorDesc(data_type, ins),
                                    "OutputTensor": TensorDesc(data_type, outs)}, a)
