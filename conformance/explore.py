"""`dmlconf explore`: the generated case families as Hypothesis properties against one backend.

Each family is a strategy that draws the parameters of one case (every draw named and noted)
and builds the case dict with the builders of conformance/generate/build.py, as the family
module does for cases/generated/. An example is dumped to YAML, loaded back with load_text (so
it is exactly what a committed file would hold) and run through a conformance.session.Session
(the one `dmlconf run` and the pytest plugin use), one case at a time; the property is that
the status is PASS or NOT_SUPPORTED (cases marked ambiguous never fail it). When it fails,
Hypothesis shrinks the example, and the minimal failing case is written to
<out>/<family>-<hash>.yaml, ready to commit as a regression (docs/explore.md).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import textwrap
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import hypothesis
from hypothesis import HealthCheck, Phase, Verbosity, assume, note, settings
from hypothesis import strategies as st
from hypothesis.errors import FlakyFailure, Unsatisfiable

from conformance import ops
from conformance.backend import Backend
from conformance.casefile import Case, load_cases, load_text
from conformance.flags import ExecutionFlags
from conformance.generate import (
    bitlevel,
    dump,
    equivalence,
    invalid,
    layouts,
    offsets,
    roundtrip,
    tables,
)
from conformance.generate.build import ALL_TYPES, case, chain, cite, desc, smooth_input, values_for
from conformance.levels import HIGHEST, FeatureLevel
from conformance.results import Result
from conformance.session import RunOptions, Session
from conformance.session.runner import run_case
from conformance.tensors import DataType, TensorDesc

OK = ("PASS", "NOT_SUPPORTED")
DEFAULT_MAX_EXAMPLES = 100
#: With --seconds and no --max-examples, the example count is no limit.
UNLIMITED = 1_000_000
#: Shrinking may run past a family's time budget by this much (or by the budget, if longer).
SHRINK_GRACE_S = 10.0

TYPES = tuple(t.name for t in ALL_TYPES)
RESAMPLE_TYPES = tuple(t.name for t in offsets.TYPES)
SEEDS = st.integers(0, 2**32 - 1)
SCALES = st.one_of(st.sampled_from(offsets.SCALES), st.floats(0.25, 3.0, width=32))
OFFSET = st.floats(-1.5, 1.5, width=32)
OFFSET_PAIRS = st.one_of(st.sampled_from(offsets.OFFSETS), st.tuples(OFFSET, OFFSET))


@dataclass(frozen=True)
class Example:
    """One drawn case: its family, the named draws it was built from, and the case dict."""

    family: str
    params: dict[str, Any]
    case: dict[str, Any] = field(repr=False)

    def __repr__(self) -> str:
        return f"{self.family}({', '.join(f'{k}={v!r}' for k, v in self.params.items())})"


class _Picker:
    """draw() with a name: each value is noted (hypothesis.note) and kept in params."""

    def __init__(self, draw: Callable[[st.SearchStrategy[Any]], Any]) -> None:
        self._draw = draw
        self.params: dict[str, Any] = {}

    def __call__(self, name: str, strategy: st.SearchStrategy[Any]) -> Any:
        value = self._draw(strategy)
        self.params[name] = value
        note(f"{name} = {value!r}")
        return value


def _cid(family: str) -> str:
    """The id an example carries while it is explored (a regression gets its own)."""
    return f"explore/{family}/example"


def _depth_space(pick: _Picker, data_type: str, max_block: int
                 ) -> tuple[int, dict[str, Any], dict[str, Any]]:
    """(BlockSize, depth-form desc, space-form desc): batch > 1, odd and prime sizes."""
    block = pick("block", st.integers(1, max_block))
    n, c = pick("batch", st.integers(1, 3)), pick("space_channels", st.integers(1, 3))
    h, w = pick("height", st.integers(1, 7)), pick("width", st.integers(1, 7))
    return (block, desc(data_type, [n, c * block * block, h, w]),
            desc(data_type, [n, c, h * block, w * block]))


def _depth_space_call(pick: Any, name: str) -> tuple[str, dict, dict, dict]:
    """A drawn depth/space call of operator `name`: data type, attributes, input and output
    descs (the depth form or the space form first, as the operator reads)."""
    data_type = pick("data_type", st.sampled_from(TYPES))
    block, depth, space = _depth_space(pick, data_type, 4)
    attrs: dict = {"BlockSize": block}
    if name.endswith("1"):
        attrs["Order"] = pick("order", st.sampled_from(roundtrip.ORDERS))
    inp, outp = (depth, space) if name.startswith("DEPTH") else (space, depth)
    return data_type, attrs, inp, outp


# -- the families -------------------------------------------------------------------------------
@st.composite
def roundtrips(draw: Callable) -> Example:
    """SPACE_TO_DEPTH1(DEPTH_TO_SPACE1(x)) == x, and the other way round (a relation)."""
    pick, cid = _Picker(draw), _cid(roundtrip.FAMILY)
    to_space_first = pick("direction", st.sampled_from(["depth-space", "space-depth"])) == (
        "depth-space")
    order = pick("order", st.sampled_from(roundtrip.ORDERS))
    data_type = pick("data_type", st.sampled_from(TYPES))
    block, depth, space = _depth_space(pick, data_type, 8)
    seed = pick("seed", SEEDS)
    attrs = {"BlockSize": block, "Order": order}
    first, back = "DEPTH_TO_SPACE1", "SPACE_TO_DEPTH1"
    start, middle = depth, space
    if not to_space_first:
        first, back, start, middle = back, first, middle, start
    return Example(roundtrip.FAMILY, pick.params, chain(
        cid, [{"name": "first", "operator": first, "attributes": attrs,
               "tensors": {"InputTensor": start, "OutputTensor": middle}},
              {"name": "back", "operator": back, "attributes": attrs,
               "tensors": {"InputTensor": middle, "OutputTensor": start}}],
        family=roundtrip.FAMILY, spec=roundtrip.SPEC,
        inputs={"first.InputTensor": values_for(cid, start, seed),
                "back.InputTensor": {"from": "first.OutputTensor"}},
        relations=[{"equal": ["back.OutputTensor", "first.InputTensor"],
                    "why": f"{back} is the inverse of {first}"}],
        tags=[order.lower()]))


@st.composite
def equivalences(draw: Callable) -> Example:
    """*1 with DEPTH_COLUMN_ROW == the original operator; COLUMN_ROW_DEPTH == DEPTH_COLUMN_ROW
    after the channel permutation between the two depth layouts."""
    pick, cid, family = _Picker(draw), _cid(equivalence.FAMILY), equivalence.FAMILY
    kind = pick("kind", st.sampled_from(["dcr-is-v0", "crd-is-permuted-dcr"]))
    new = pick("operator", st.sampled_from(["DEPTH_TO_SPACE1", "SPACE_TO_DEPTH1"]))
    data_type = pick("data_type", st.sampled_from(TYPES))
    block, depth, space = _depth_space(pick, data_type, 5)
    seed = pick("seed", SEEDS)
    to_space = new == "DEPTH_TO_SPACE1"
    inp, outp = (depth, space) if to_space else (space, depth)
    tensors = {"InputTensor": inp, "OutputTensor": outp}
    if kind == "dcr-is-v0":
        old = new[:-1]
        return Example(family, pick.params, chain(
            cid, [{"name": "v1", "operator": new,
                   "attributes": {"BlockSize": block, "Order": "DEPTH_COLUMN_ROW"},
                   "tensors": tensors},
                  {"name": "v0", "operator": old, "attributes": {"BlockSize": block},
                   "tensors": tensors}],
            family=family, spec=[cite(f"DML_{new}_OPERATOR_DESC", "Remarks")],
            inputs={"v1.InputTensor": values_for(cid, inp, seed),
                    "v0.InputTensor": {"from": "v1.InputTensor"}},
            relations=[{"equal": ["v1.OutputTensor", "v0.OutputTensor"],
                        "why": f"{new} with DEPTH_COLUMN_ROW is equivalent to {old}"}]))
    channels = depth["Sizes"][1]
    dcr_source: dict[str, Any] = {"from": "crd.InputTensor"}
    relation: dict[str, Any] = {"equal": ["crd.OutputTensor", "dcr.OutputTensor"],
                                "why": "the depth layouts differ only in the order of the "
                                       "channels"}
    if to_space:
        dcr_source["take"] = {"axis": 1, "indices": equivalence._dcr_from_crd(channels, block)}
    else:
        relation["take"] = {"axis": 1, "indices": equivalence._crd_from_dcr(channels, block)}
    return Example(family, pick.params, chain(
        cid, [{"name": "crd", "operator": new,
               "attributes": {"BlockSize": block, "Order": "COLUMN_ROW_DEPTH"},
               "tensors": tensors},
              {"name": "dcr", "operator": new,
               "attributes": {"BlockSize": block, "Order": "DEPTH_COLUMN_ROW"},
               "tensors": tensors}],
        family=family, spec=[cite(equivalence.ORDER_PAGE, "Constants")],
        inputs={"crd.InputTensor": values_for(cid, inp, seed), "dcr.InputTensor": dcr_source},
        relations=[relation]))


@st.composite
def offset_cases(draw: Callable) -> Example:
    """RESAMPLE1 against the reference: 1 to 4 dimensions, any scales and offsets, output
    sizes that equal, crop or clamp."""
    pick, cid = _Picker(draw), _cid(offsets.FAMILY)
    mode = pick("mode", st.sampled_from(offsets.MODES))
    dims = pick("dimensions", st.integers(1, 4))
    data_type = pick("data_type", st.sampled_from(RESAMPLE_TYPES))

    def per_axis(name: str, strategy: st.SearchStrategy[Any]) -> list:
        return pick(name, st.lists(strategy, min_size=dims, max_size=dims))

    sizes = per_axis("sizes", st.integers(1, 5))
    scales = per_axis("scales", SCALES)
    pairs = [tuple(p) for p in per_axis("offsets", OFFSET_PAIRS)]
    variants = per_axis("output_sizes", st.sampled_from(offsets.SIZE_VARIANTS))
    seed = pick("seed", SEEDS)
    outs = [offsets.out_size(s, f, v) for s, f, v in zip(sizes, scales, variants, strict=True)]
    tensors = {"InputTensor": desc(data_type, sizes), "OutputTensor": desc(data_type, outs)}
    return Example(offsets.FAMILY, pick.params, case(
        cid, "RESAMPLE1", offsets._attrs(mode, scales, pairs), tensors, family=offsets.FAMILY,
        spec=[cite(offsets.PAGE, "Scales"), cite(offsets.PAGE, "InputPixelOffsets"),
              cite("NOTES", "4")],
        inputs={"InputTensor": smooth_input(cid, tensors["InputTensor"], seed)},
        tags=[f"{dims}d"]))


LAYOUT_SLUGS = tuple(slug for slug, _, _ in layouts._variants([1] * 4, [1] * 4))


@st.composite
def layout_cases(draw: Callable) -> Example:
    """A strided call (padded, NHWC, reversed, broadcast, oversized) equals the packed one."""
    pick, cid = _Picker(draw), _cid(layouts.FAMILY)
    name = pick("operator", st.sampled_from(list(layouts.OPERATORS)))
    resample = name.startswith("RESAMPLE")
    attrs: dict[str, Any]
    if resample:
        data_type = pick("data_type", st.sampled_from([t.name for t in layouts.RESAMPLE_TYPES]))
        mode = pick("mode", st.sampled_from(offsets.MODES))
        sizes_in = pick("sizes", st.lists(st.integers(1, 4), min_size=4, max_size=4))
        scales = pick("scales", st.lists(st.sampled_from(offsets.SCALES), min_size=4,
                                         max_size=4))
        sizes_out = [offsets.natural(s, f) for s, f in zip(sizes_in, scales, strict=True)]
        attrs = {"InterpolationMode": mode, "Scales": scales}
        if name == "RESAMPLE1":
            pairs = pick("offsets", st.lists(st.sampled_from(offsets.OFFSETS), min_size=4,
                                             max_size=4))
            attrs = offsets._attrs(mode, scales, pairs)
        packed_in, packed_out = desc(data_type, sizes_in), desc(data_type, sizes_out)
    else:
        data_type, attrs, packed_in, packed_out = _depth_space_call(pick, name)
        mode = None
    slug = pick("layout", st.sampled_from(LAYOUT_SLUGS))
    seed = pick("seed", SEEDS)
    _, in_fields, out_fields = next(v for v in layouts._variants(
        packed_in["Sizes"], packed_out["Sizes"]) if v[0] == slug)
    strided = {"InputTensor": layouts._with(packed_in, in_fields),
               "OutputTensor": layouts._with(packed_out, out_fields)}
    linear = mode == "LINEAR"
    source = (smooth_input if resample else values_for)(cid, strided["InputTensor"], seed)
    return Example(layouts.FAMILY, pick.params, chain(
        cid, [{"name": "strided", "operator": name, "attributes": attrs, "tensors": strided},
              {"name": "packed", "operator": name, "attributes": attrs,
               "tensors": {"InputTensor": packed_in, "OutputTensor": packed_out}}],
        family=layouts.FAMILY,
        spec=[cite("dml-strides", "DirectML buffer tensor descriptions"),
              cite("DML_BUFFER_TENSOR_DESC", "Strides")],
        inputs={"strided.InputTensor": source,
                "packed.InputTensor": {"from": "strided.InputTensor"}},
        expected=({"strided.OutputTensor": "reference", "packed.OutputTensor": "reference"}
                  if linear else None),
        relations=[] if linear else [
            {"equal": ["strided.OutputTensor", "packed.OutputTensor"],
             "why": "a layout changes where elements live, not their values"}],
        tags=[slug.split("-", 1)[1]]))


@st.composite
def table_cases(draw: Callable) -> Example:
    """A data type and dimension count: valid from the level whose table lists it, or
    rejected where no table does."""
    pick, cid = _Picker(draw), _cid(tables.FAMILY)
    spec = ops.get(pick("operator", st.sampled_from(list(ops.OPERATORS))))
    data_type = pick("data_type", st.sampled_from(TYPES))
    if spec.name.startswith("RESAMPLE"):
        dims = pick("dimensions", st.integers(1, 5))
        mode = pick("mode", st.sampled_from(offsets.MODES))
        inp, outp, attrs = tables._resample(spec, dims, mode)
    else:
        dims, mode = pick("dimensions", st.integers(3, 5)), None
        inp, outp, attrs = tables._depth_space(spec, dims)
    seed = pick("seed", SEEDS)
    tensors = {"InputTensor": desc(data_type, inp), "OutputTensor": desc(data_type, outp)}
    source = (smooth_input if mode == "LINEAR" else values_for)(
        cid, tensors["InputTensor"], seed)
    level = spec.level_for(DataType.parse(data_type), dims)
    citation = [cite(spec.page, "Tensor support")]
    if level is None:
        built = case(cid, spec.name, attrs, tensors, family=tables.FAMILY, spec=citation,
                     inputs={"InputTensor": source}, expected="rejected",
                     level=spec.introduced, tags=["rejected"])
    else:
        built = case(cid, spec.name, attrs, tensors, family=tables.FAMILY, spec=citation,
                     inputs={"InputTensor": source}, level=max(level, spec.introduced))
    return Example(tables.FAMILY, pick.params, built)


@st.composite
def invalid_cases(draw: Callable) -> Example:
    """One validation rule broken alone (checked with the operator spec): must be rejected."""
    pick, cid = _Picker(draw), _cid(invalid.FAMILY)
    spec = ops.get(pick("operator", st.sampled_from(list(ops.OPERATORS))))
    rules = {slug: (rule, change, ambiguous, citation)
             for slug, rule, change, ambiguous, citation in invalid.variants(spec)}
    slug = pick("rule", st.sampled_from(list(rules)))
    data_type = pick("base_data_type", st.sampled_from(
        RESAMPLE_TYPES if spec.name.startswith("RESAMPLE") else TYPES))
    rule, change, ambiguous, citation = rules[slug]
    base_tensors, base_attrs = invalid.base(spec)
    tensors, attrs = change(({n: {**d, "DataType": data_type} for n, d in base_tensors.items()},
                             base_attrs))
    call = spec.make_call({n: TensorDesc.from_json(d) for n, d in tensors.items()}, attrs)
    assume({v.rule for v in spec.validate(call, HIGHEST)} == {rule})
    return Example(invalid.FAMILY, pick.params, case(
        cid, spec.name, attrs, tensors, family=invalid.FAMILY, spec=[citation], inputs={},
        expected="rejected", level=spec.introduced, tags=["rejected", rule],
        ambiguous=ambiguous))


@st.composite
def bitlevel_cases(draw: Callable) -> Example:
    """Random bit patterns (NaN payloads, -0.0, subnormals, ...) through pure data movement:
    every depth/space operator, and nearest resampling at integer scales (a selection)."""
    pick, cid = _Picker(draw), _cid(bitlevel.FAMILY)
    name = pick("operator", st.sampled_from(list(ops.OPERATORS)))
    if name.startswith("RESAMPLE"):
        data_type = pick("data_type", st.sampled_from(RESAMPLE_TYPES))
        sizes = pick("sizes", st.lists(st.integers(1, 4), min_size=4, max_size=4))
        scales = pick("scales", st.lists(st.integers(1, 3), min_size=4, max_size=4))
        attrs: dict[str, Any] = {"InterpolationMode": "NEAREST_NEIGHBOR", "Scales": scales}
        if name == "RESAMPLE1":
            attrs |= {"InputPixelOffsets": [0.5] * 4, "OutputPixelOffsets": [-0.5] * 4}
        inp = desc(data_type, sizes)
        outp = desc(data_type, [s * f for s, f in zip(sizes, scales, strict=True)])
    else:
        data_type, attrs, inp, outp = _depth_space_call(pick, name)
    seed = pick("seed", SEEDS)
    page = ops.get(name).page
    return Example(bitlevel.FAMILY, pick.params, case(
        cid, name, attrs, {"InputTensor": inp, "OutputTensor": outp}, family=bitlevel.FAMILY,
        spec=[cite(page, "Description (copies the input)") if "DEPTH" in name else
              cite(page, "InterpolationMode (nearest chooses an input element)"),
              cite("NOTES", "3" if "DEPTH" in name else "4")],
        inputs={"InputTensor": values_for(cid, inp, seed)}))


#: family name (as in conformance/generate/) -> the strategy of its examples
FAMILIES: dict[str, Callable[[], st.SearchStrategy[Example]]] = {
    roundtrip.FAMILY: roundtrips,
    equivalence.FAMILY: equivalences,
    offsets.FAMILY: offset_cases,
    layouts.FAMILY: layout_cases,
    tables.FAMILY: table_cases,
    invalid.FAMILY: invalid_cases,
    bitlevel.FAMILY: bitlevel_cases,
}


# -- the property -------------------------------------------------------------------------------
def run_on(target: Backend | Session, loaded: Case) -> Result:
    """The case's result on a backend (in this process) or through a started Session (isolated
    where it says so)."""
    return target.run_case(loaded) if isinstance(target, Session) else run_case(loaded, target)


def check(example: Example, backend: Backend | Session) -> Result | None:
    """Run an example as a committed file holds it; its result if it breaks the property."""
    (loaded,) = load_text(dump({"cases": [example.case]}), f"<explore {example.family}>")
    if loaded.ambiguous:
        return None
    result = run_on(backend, loaded)
    return None if result.status in OK else result


class _PropertyError(AssertionError):
    """The property broke: the example's case FAILed or ERRORed against the backend."""


class _OutOfTime(BaseException):
    """Ends a family's search when its time is up (not an Exception: Hypothesis lets it
    through instead of shrinking it)."""


@dataclass
class FamilyReport:
    """What exploring one family found."""

    family: str
    examples: int = 0  # examples run before the first failure
    shrink_steps: int = 0  # examples run after it
    seconds: float = 0.0
    out_of_time: bool = False
    example: Example | None = None  # the minimal failing example
    result: Result | None = None
    path: Path | None = None
    reproduced: bool | None = None  # the written file fails again
    reference_passes: bool | None = None  # ... and the reference backend passes it
    error: str | None = None  # the explorer itself broke

    @property
    def failed(self) -> bool:
        return self.result is not None or self.error is not None

    def line(self) -> str:
        head = f"{self.family}: {self.examples} examples, {self.seconds:.1f} s"
        if self.error:
            return f"{head}: INTERNAL ERROR {self.error}"
        if self.result is None:
            return f"{head}: nothing found" + (" (time budget spent)" if self.out_of_time
                                               else "")
        first = self.result.message.splitlines()[0] if self.result.message else ""
        cut = " (shrinking cut short: time budget)" if self.out_of_time else ""
        return (f"{head}, {self.shrink_steps} shrinking{cut}: {self.result.status} "
                f"{first[:200]}\n  minimal example: {self.example!r}")


def explore_family(family: str, backend: Backend | Session, *, max_examples: int | None = None,
                   seconds: float | None = None, seed: int = 0) -> FamilyReport:
    """Search one family for a failing example; shrink the first one found."""
    report = FamilyReport(family)
    t0 = time.perf_counter()
    stop = t0 + seconds if seconds else None
    hard_stop = t0 + seconds + max(SHRINK_GRACE_S, seconds) if seconds else None

    def prop(example: Example) -> None:
        now = time.perf_counter()
        if report.example is None:
            if stop is not None and now > stop:
                report.out_of_time = True
                raise _OutOfTime
            report.examples += 1
        else:
            if hard_stop is not None and now > hard_stop:
                report.out_of_time = True
                raise _OutOfTime
            report.shrink_steps += 1
        result = check(example, backend)
        if result is not None:
            report.example, report.result = example, result
            raise _PropertyError(f"{result.status}: {result.message}")

    limit = max_examples or (UNLIMITED if seconds else DEFAULT_MAX_EXAMPLES)
    test = settings(max_examples=limit, deadline=None, database=None, derandomize=False,
                    phases=(Phase.explicit, Phase.generate, Phase.shrink),
                    report_multiple_bugs=False, suppress_health_check=list(HealthCheck),
                    verbosity=Verbosity.quiet, print_blob=False)(
        hypothesis.seed(seed)(hypothesis.given(FAMILIES[family]())(prop)))
    try:
        test()
    except (_PropertyError, _OutOfTime, Unsatisfiable):
        pass
    except FlakyFailure:
        pass  # the last failing example stands (reproduced says whether it fails again)
    except Exception as exc:  # the explorer built a case that does not load, or crashed
        if report.example is None:
            report.error = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
    report.seconds = time.perf_counter() - t0
    return report


# -- regressions --------------------------------------------------------------------------------
def regression_case(example: Example, result: Result, *, backend_name: str, seed: int
                    ) -> dict[str, Any]:
    """The failing case with its regression id (family and a hash of its content) and a
    description naming the backend, the seed and the failure."""
    content = {k: v for k, v in example.case.items() if k not in ("id", "description")}
    content["tags"] = [*content.get("tags", []), "regression"]
    digest = hashlib.sha256(json.dumps(content, sort_keys=True).encode()).hexdigest()[:12]
    first = result.message.splitlines()[0] if result.message else ""
    description = (f"Found by dmlconf explore against backend {backend_name} (seed {seed}): "
                   f"{result.status} {first[:200]}")
    return {"id": f"regressions/{example.family}/{digest}", "description": description,
            **content}


def write_regression(report: FamilyReport, out: Path, session: Session, *, seed: int) -> Path:
    """Write the minimal failing example as a regression case file; its header says how it was
    drawn and the command that reruns it (session.reproduce)."""
    assert report.example is not None and report.result is not None
    regression = regression_case(report.example, report.result,
                                 backend_name=session.options.backend, seed=seed)
    path = out / f"{report.family}-{regression['id'].rsplit('/', 1)[1]}.yaml"
    body = dump({"cases": [regression]})
    (case,) = load_text(body, path)
    drawn = textwrap.wrap(repr(report.example), 96, initial_indent="#   ",
                          subsequent_indent="#     ")
    header = "\n".join([
        "# Regression written by `dmlconf explore` (conformance/explore.py): the minimal failing",
        f"# example of family {report.family}, shrunk by Hypothesis. Drawn:", *drawn,
        f"# Reproduce: {session.reproduce(case)}", ""])
    out.mkdir(parents=True, exist_ok=True)
    path.write_text(header + body, encoding="utf-8")
    return path


# -- the command --------------------------------------------------------------------------------
def explore(backend_name: str, families: Sequence[str] | None = None, *,
            max_examples: int | None = None, seconds: float | None = None, seed: int = 0,
            out: str | Path = "cases/regressions", level: FeatureLevel | None = None,
            stream: TextIO | None = None, isolate: bool | None = None,
            timeout_s: float | None = None,
            execution_flags: ExecutionFlags = ExecutionFlags.NONE
            ) -> tuple[int, list[FamilyReport]]:
    """Explore each family against the backend; write a regression per failing family.
    (exit status: 1 if any family failed, else 0; the reports). isolate: run the backend in a
    worker process (a crash or hang is then a failing example, ERROR or TIMEOUT, shrunk like
    any other); None: for native backends, as dmlconf run. timeout_s: as --timeout (None: the
    default; 0: none)."""
    stream = stream or sys.stderr
    names = list(families or FAMILIES)
    unknown = [f for f in names if f not in FAMILIES]
    if unknown:
        raise ValueError(f"unknown family {', '.join(unknown)}; known: {', '.join(FAMILIES)}")
    if max_examples is not None and max_examples < 1:
        raise ValueError("--max-examples must be at least 1")
    if seconds is not None and seconds <= 0:
        raise ValueError("--seconds must be positive")
    with Session(RunOptions(backend=backend_name, level=level, execution_flags=execution_flags,
                            isolate=isolate, timeout_s=timeout_s)) as session:
        session.start(one_at_a_time=True)
        return _explore(session, names, max_examples=max_examples, seconds=seconds, seed=seed,
                        out=out, stream=stream)


def _reference_passes(case: Case, level: FeatureLevel) -> bool:
    """Whether the reference backend (numpy, in this process) passes the case."""
    with Session(RunOptions(backend="numpy", level=level, isolate=False)) as reference:
        reference.start(one_at_a_time=True)
        return reference.run_case(case).status in OK


def _explore(session: Session, names: list[str], *, max_examples: int | None,
             seconds: float | None, seed: int, out: str | Path, stream: TextIO
             ) -> tuple[int, list[FamilyReport]]:
    runner, backend_name = session.runner, session.options.backend
    assert runner is not None
    isolated = ", isolated in a worker process" if runner.isolated else ""
    stream.write(f"dmlconf explore: backend {backend_name} ({runner.class_name}), feature "
                 f"level {runner.claimed_level}{isolated}, seed {seed}, families "
                 f"{', '.join(names)}\n")
    t0 = time.perf_counter()
    reports = []
    regressions: dict[str, Case] = {}
    for i, family in enumerate(names):
        share = None
        if seconds:  # what is left of the total, split over the families still to run
            share = max(0.01, (seconds - (time.perf_counter() - t0)) / (len(names) - i))
        report = explore_family(family, session, max_examples=max_examples, seconds=share,
                                seed=seed)
        if report.result is not None:
            report.path = write_regression(report, Path(out), session, seed=seed)
            (again,) = load_cases([report.path])
            regressions[family] = again
            report.reproduced = session.run_case(again).status not in OK
            report.reference_passes = _reference_passes(again, runner.claimed_level)
        reports.append(report)
        stream.write(report.line() + "\n")
        if report.path:
            stream.write(f"  wrote {report.path} ("
                         f"{'reproduces' if report.reproduced else 'DOES NOT reproduce'}; "
                         + ("the reference passes it)\n" if report.reference_passes else
                            "the reference FAILS it too: a bug of the suite?)\n"))
        stream.flush()
    total = sum(r.examples + r.shrink_steps for r in reports)
    failed = [r for r in reports if r.failed]
    families_ = f"{len(reports)} famil{'y' if len(reports) == 1 else 'ies'}"
    print(f"explored {families_} against {backend_name}: {total} examples in "
          f"{time.perf_counter() - t0:.1f} s; "
          + (f"{len(failed)} failed" if failed else "nothing found"))
    for r in failed:
        if r.path:
            print(f"  {r.family}: {r.path}\n    reproduce: "
                  f"{session.reproduce(regressions[r.family])}")
        else:
            print(f"  {r.family}: {r.error}")
    return int(bool(failed)), reports


def command(args: argparse.Namespace) -> int:
    """`dmlconf explore` (conformance/cli.py parses the arguments)."""
    level = FeatureLevel.parse(args.level) if args.level else None
    status, _ = explore(args.backend, args.family, max_examples=args.max_examples,
                        seconds=args.seconds, seed=args.seed, out=args.out, level=level,
                        isolate=args.isolate, timeout_s=args.timeout,
                        execution_flags=ExecutionFlags.parse(args.execution_flags))
    return status
