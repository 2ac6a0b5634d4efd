"""Building a Case from a case mapping the schema passed (its defaults merged in): the
operators' calls, the inputs' sources, the expectations and relations, each checked against the
operator specs and the tensor model; and the logical values a source makes."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from conformance import inputs as sources
from conformance import ops
from conformance.casefile.errors import CaseFileError, mib, short
from conformance.casefile.model import (
    SINGLE,
    Case,
    Expectation,
    NamedCall,
    Relation,
    Source,
    Take,
)
from conformance.casefile.safe_yaml import LineDict, line_of, plain
from conformance.levels import FeatureLevel
from conformance.spec import Citation, Page
from conformance.tensors import TensorDesc

#: The words of an error that a check let escape (a loader bug: the fuzz tests look for them).
UNEXPECTED = "could not be checked (a loader bug; please report it)"


def build_case(item: LineDict, path: str | Path, hashing: list[int],
               raw: dict[str, Any] | None = None, digest: str = "") -> Case:
    """_build, whose failures are all CaseFileErrors that name the case. raw: plain(item)
    when the caller has it; digest: its digest when known."""
    try:
        return _build(item, path, hashing, plain(item) if raw is None else raw, digest)
    except CaseFileError:
        raise
    except (ArithmeticError, LookupError, TypeError, ValueError, MemoryError,
            RecursionError) as exc:
        raise CaseFileError(path, item.line, f"case {item['id']}: {UNEXPECTED}: "
                                             f"{type(exc).__name__}: {short(str(exc))}"
                            ) from None


def _build(item: LineDict, path: str | Path, hashing: list[int], raw: dict[str, Any],
           digest: str) -> Case:
    """The Case of a merged case mapping. hashing: [bytes of generated values the loader may
    still make, in this file, to tell a missing sha256], charged."""

    def fail(message: str, *keys: Any) -> CaseFileError:
        return CaseFileError(path, line_of(item, list(keys)), f"case {item['id']}: {message}")

    levels: dict[str, FeatureLevel | None] = {}
    for key in ("feature_level", "feature_level_below"):
        try:
            levels[key] = FeatureLevel.parse(item[key]) if key in item else None
        except ValueError as exc:
            raise fail(str(exc), key) from None
    level, below = levels["feature_level"], levels["feature_level_below"]
    if level is None:  # the schema requires it
        raise fail("no feature_level", "feature_level")
    cites = item["spec"] if isinstance(item["spec"], list) else [item["spec"]]
    pages = ops.pages()
    for i, c in enumerate(cites):
        if c["page"] not in pages:
            raise fail(f"unknown spec page {c['page']!r}; known: {', '.join(pages)}", "spec", i)
    spec = tuple(Citation(Page(c["page"], pages[c["page"]]), c.get("section", "")) for c in cites)

    raw_calls = item["calls"] if "calls" in item else [
        {"name": SINGLE, **{k: item[k] for k in ("operator", "attributes", "tensors")}}]
    calls: list[NamedCall] = []
    for i, rc in enumerate(raw_calls):
        keys = ("calls", i) if "calls" in item else ()
        name = rc.get("name", f"c{i}")
        if any(c.name == name for c in calls):
            raise fail(f"two calls are named {name!r}", *keys)
        try:
            op = ops.get(rc["operator"])
        except KeyError as exc:
            raise fail(exc.args[0], *keys, "operator") from None
        try:
            descs = {n: TensorDesc.from_json(d) for n, d in rc["tensors"].items()}
            call = op.make_call(descs, rc["attributes"])
        except (ValueError, OverflowError, TypeError) as exc:  # OverflowError: 1e400 as FLOAT
            raise fail(short(str(exc)), *keys, "attributes") from None
        calls.append(NamedCall(name, call))

    case = Case(id=item["id"], feature_level=level, spec=spec, calls=tuple(calls), inputs={},
                expected=None, feature_level_below=below, tags=tuple(item.get("tags", ())),
                description=item.get("description", ""), ambiguous=item.get("ambiguous"),
                open=item.get("open"), may_reject=item.get("may_reject"), file=str(path),
                line=item.line, raw=raw, sha256=digest)

    def ref(text: str, *keys: Any, kind: str | None = None) -> str:
        full = f"{SINGLE}.{text}" if "calls" not in item and "." not in text else text
        try:
            name, tensor = full.split(".", 1)
            desc = case.call(name).tensors[tensor]
        except (KeyError, ValueError):
            raise fail(f"{text!r} names no tensor of this case", *keys) from None
        del desc
        roles = dict(ops.get(case.call(name).operator).tensors)
        if kind and roles[tensor] != kind:
            raise fail(f"{text!r} is an {roles[tensor]} tensor, not an {kind}", *keys)
        return full

    for text, src in item.get("inputs", {}).items():
        full = ref(text, "inputs", text, kind="input")
        kind = next(k for k in ("values", "bits", "buffer", "iota", "constant", "random", "from")
                    if k in src)
        source = Source(kind, src[kind], src.get("sha256"))
        if kind == "from":
            origin = ref(src["from"], "inputs", text)
            take = _take(src.get("take"), case.desc(origin).sizes,
                         lambda m, t=text: fail(m, "inputs", t))
            source = Source(kind, origin, take=take)
            names = [c.name for c in case.calls]
            if names.index(origin.split(".")[0]) >= names.index(full.split(".")[0]):
                raise fail(f"from: {src['from']!r} is not a tensor of an earlier call (calls "
                           "run in the order listed)", "inputs", text)
            sizes = case.desc(origin).sizes
            sizes = take.shape(sizes) if take else sizes
            if tuple(sizes) != tuple(case.desc(full).sizes):
                raise fail(f"from: {src['from']!r} gives Sizes {list(sizes)}"
                           f", {text} has {list(case.desc(full).sizes)}", "inputs", text)
        elif "take" in src:
            raise fail("'take' applies to a 'from' source only", "inputs", text)
        _check_source(source, case.desc(full), lambda m, t=text: fail(m, "inputs", t),
                      made=item.get("expected") != "rejected", hashing=hashing)
        case.inputs[full] = source
    for c in case.calls:
        for tensor in ops.get(c.call.operator).inputs:
            if f"{c.name}.{tensor}" not in case.inputs and item.get("expected") != "rejected":
                raise fail(f"input {case.show_ref(f'{c.name}.{tensor}')} has no source in "
                           "'inputs'", "inputs")

    if item.get("expected") != "rejected":
        expected = {}
        for text, e in item.get("expected", {}).items():
            full = ref(text, "expected", text, kind="output")
            if e == "reference":
                expected[full] = Expectation("reference")
            else:
                kind = "values" if "values" in e else "bits"
                expectation = Expectation(kind, e[kind], e.get("ulp"),
                                          e.get("tolerance") == "model")
                if expectation.model and kind == "bits":
                    raise fail("'tolerance: model' judges exact 'values', not bits",
                               "expected", text)
                make = (sources.exact_values if expectation.model else
                        sources.from_values if kind == "values" else sources.from_bits)
                try:
                    make(e[kind], case.desc(full))
                except sources.SourceError as exc:
                    raise fail(str(exc), "expected", text) from None
                except (ValueError, OverflowError, TypeError) as exc:  # NumPy's own: e.g. a
                    # list where a number belongs, an integer beyond float64 on a float type
                    raise fail(f"{kind}: {short(str(exc))}", "expected", text) from None
                expected[full] = expectation
        object.__setattr__(case, "expected", expected)
    relations = []
    for i, r in enumerate(item.get("relations", ())):
        left, right = (ref(t, "relations", i) for t in r["equal"])
        take = _take(r.get("take"), case.desc(right).sizes, lambda m, i=i: fail(m, "relations", i))
        sizes = take.shape(case.desc(right).sizes) if take else case.desc(right).sizes
        if tuple(sizes) != tuple(case.desc(left).sizes):
            raise fail(f"relation compares Sizes {list(case.desc(left).sizes)} with "
                       f"{list(sizes)}", "relations", i)
        relations.append(Relation(left, right, r.get("why", ""), take))
    object.__setattr__(case, "relations", tuple(relations))
    if not case.rejected and not case.expected and not case.relations:
        raise fail("the case expects nothing: give 'expected' (outputs or 'rejected') or "
                   "'relations'")
    if case.rejected and len(case.calls) != 1:
        raise fail("a rejected case has exactly one call", "expected")
    if case.may_reject and (case.rejected or len(case.calls) != 1 or not case.expected):
        raise fail("'may_reject' belongs to a single-call case with expected outputs (a case "
                   "that must be rejected says expected: rejected)", "may_reject")

    for text, facts in item.get("layout", {}).items():
        full = ref(text, "layout", text)
        problem = _check_layout(case.desc(full), facts, case.inputs.get(full))
        if problem:
            raise fail(f"layout of {text}: {problem}", "layout", text)
    object.__setattr__(case, "layout", plain(item.get("layout", {})))

    if not case.rejected:
        for c in case.calls:
            op = ops.get(c.call.operator)
            need = op.required_level(c.call)
            if need is None:
                raise fail(f"{c.call.operator} takes these data types and dimension counts at no "
                           "feature level; expect 'rejected' or fix the descs", "feature_level")
            if need > level:
                raise fail(f"feature_level {level} is below the {need} that {c.call.operator} "
                           "needs for these data types and dimension counts", "feature_level")
    elif level < min(ops.get(c.call.operator).introduced for c in case.calls):
        raise fail(f"feature_level {level} is below the level that introduced the operator",
                   "feature_level")
    return case


#: The most bytes of generated values the loader makes, per file, to tell the sha256 of inputs
#: that lack it (a few seconds of work at most; hashed chunk by chunk, never held whole).
MAX_HASHED_BYTES = 64 << 20


def hash_budget() -> list[int]:
    """A file's budget for telling missing sha256s: [bytes of generated values the loader may
    still make to hash], charged by build_case."""
    return [MAX_HASHED_BYTES]


def _take(spec: dict[str, Any] | None, sizes: Sequence[int], fail: Any) -> Take | None:
    """Parse a {axis, indices} selection against the Sizes it applies to."""
    if spec is None:
        return None
    # the schema's integers include 2.0: indices and axis are ints from here on
    axis, indices = int(spec["axis"]), tuple(int(i) for i in spec["indices"])
    if not 0 <= axis < len(sizes):
        raise fail(f"take: axis {axis} is not a dimension of Sizes {list(sizes)}")
    if any(not 0 <= i < sizes[axis] for i in indices):
        raise fail(f"take: indices must lie in [0, {sizes[axis]}) for axis {axis}")
    return Take(axis, indices)


def _check_source(source: Source, desc: TensorDesc, fail: Any, *, made: bool,
                  hashing: list[int]) -> None:
    """Values must fit the tensor; generated ones need their recorded sha256. made: the case's
    inputs are made when it runs (not a rejected case): generated ones must be within the
    memory limit (inputs.MAX_WORKING_BYTES), checked here from the desc before anything is
    made. hashing: [bytes left], charged when a missing sha256 is computed to be told."""
    try:
        if source.kind == "values":
            sources.from_values(source.params, desc)
        elif source.kind == "bits":
            sources.from_bits(source.params, desc)
        elif source.kind == "buffer":
            if _strides_problem(desc):
                raise fail(f"a buffer needs a buffer size: {_strides_problem(desc)}")
            sources.buffer_image(source.params, desc)
        elif source.kind in sources.GENERATED:
            if source.kind == "random":
                for key in ("low", "high", "mean", "std"):
                    value = source.params.get(key, 0)
                    if not (isinstance(value, int) or math.isfinite(value)):
                        raise fail(f"random: {key} must be a finite number, not {value!r}")
            if source.kind != "random":  # a constant in range, a whole iota start and step
                # on an integer type: checked on one element
                sources.generate(source.kind, source.params, TensorDesc(desc.data_type, (1,)))
            if made:
                try:
                    sources.check_working_memory(source.kind, source.params, desc)
                except sources.TooLargeError as exc:
                    raise fail(f"generated input too large: {exc} (docs/case-format.md, "
                               "Limits)") from None
            if source.sha256 is None:
                size = desc.element_count * desc.data_type.size
                if size > hashing[0]:
                    raise fail(f"generated input needs its sha256 (its {size:,} bytes are too "
                               "many to generate here: the loader makes at most "
                               f"{mib(MAX_HASHED_BYTES)} per file to tell missing hashes)")
                hashing[0] -= size
                got = sources.generated_sha256(source.kind, source.params, desc)
                raise fail(f"generated input needs its sha256 (the bytes generated now hash to "
                           f"{got})")
    except sources.SourceError as exc:
        raise fail(str(exc)) from None
    except (ValueError, OverflowError, TypeError) as exc:  # NumPy's own (a list where a
        # number belongs, an integer beyond float64 where a float is made)
        raise fail(f"{source.kind}: cannot make {desc.data_type.name} values of Sizes "
                   f"{list(desc.sizes)}: {short(str(exc))}") from None


def _check_layout(desc: TensorDesc, facts: dict[str, Any], source: Source | None
                  ) -> str | None:
    """The spec's stated facts about a desc, checked against the tensor model (and, for a
    `value` at an offset, against the case's buffer image: a letter is its character code)."""
    if _strides_problem(desc):
        return _strides_problem(desc)
    if "strides" in facts and list(desc.element_strides) != facts["strides"]:
        return f"strides are {list(desc.element_strides)}, the spec states {facts['strides']}"
    if "packed" in facts and desc.is_packed != facts["packed"]:
        return f"packed is {desc.is_packed}, the spec states {facts['packed']}"
    if "minimum_size_bytes" in facts and desc.minimum_size != facts["minimum_size_bytes"]:
        return (f"DMLCalcBufferTensorSize gives {desc.minimum_size}, the spec states "
                f"{facts['minimum_size_bytes']}")
    for fact in facts.get("offsets", ()):
        if len(fact["index"]) != desc.dimension_count:
            return f"index {fact['index']} has the wrong number of dimensions"
        got = desc.offset_of(fact["index"])
        if got != fact["offset"]:
            return f"element {fact['index']} is at offset {got}, the spec states {fact['offset']}"
        if "value" in fact:
            if source is None or source.kind != "buffer":
                return "a value at an offset is checked against a 'buffer' input only"
            want = fact["value"]
            want = ord(want) if isinstance(want, str) and len(want) == 1 else want
            held = source.params[got] if got < len(source.params) else None
            if held != want:
                return f"offset {got} holds {held!r} in the buffer, the spec states {want!r}"
    return None


def _strides_problem(desc: TensorDesc) -> str | None:
    if desc.strides is not None and len(desc.strides) != desc.dimension_count:
        return (f"Strides has {len(desc.strides)} entries for {desc.dimension_count} Sizes, so "
                "the desc has no offsets or size to check")
    return None


def logical_values(source: Source, desc: TensorDesc) -> np.ndarray:
    """The logical input values a non-chained, non-buffer source makes for desc."""
    if source.kind == "values":
        return sources.from_values(source.params, desc)
    if source.kind == "bits":
        return sources.from_bits(source.params, desc)
    return sources.generate(source.kind, source.params, desc)
