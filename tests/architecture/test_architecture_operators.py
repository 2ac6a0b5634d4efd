"""The harness knows no operator: outside the operator packages (conformance/ops/<package>/), no
file of conformance/ names an operator, its package, its pages, its attributes or their enum
values, not even in a comment or docstring; and every operator's examples (OperatorSpec.examples)
give every generic family what it asks for (docs/operators.md), or say why the family does not
apply."""

from __future__ import annotations

import io
import re
import tokenize
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from conformance import generate, ops, spec
from conformance.judge.misreadings import CATALOGUE
from conformance.levels import HIGHEST
from conformance.ops.base import OperatorSpec
from conformance.ops.examples import Breaking, ExampleCall, Examples
from conformance.tensors import TensorDesc
from tests.support import ROOT

HARNESS = ROOT / "conformance"
PACKAGES = sorted(set(ops.PACKAGES.values()))


def _operator_words() -> tuple[set[str], set[str]]:
    """(upper-case words found anywhere in a token, lower-case names found as names): the
    operators' names without their version digits, their packages' page keys, attribute names
    and enum value names; the packages' names and the operators' names in lower case."""
    upper: set[str] = set()
    lower: set[str] = set(PACKAGES)
    for name, s in ops.OPERATORS.items():
        base = name.rstrip("0123456789")
        upper.add(base)
        lower.add(base.lower())
        for attribute in s.attributes:
            upper.add(attribute.name)
            upper.update(attribute.values)
    for package in PACKAGES:
        upper.update(__import__(f"conformance.ops.{package}", fromlist=["PAGES"]).PAGES)
    return upper, lower


UPPER, LOWER = _operator_words()
#: An upper-case word as a whole word (Order, Scales) or inside a longer name (DML_..._DESC).
UPPER_RE = re.compile("|".join(rf"(?<![A-Za-z]){re.escape(w)}(?![a-z])"
                               for w in sorted(UPPER, key=len, reverse=True)))
#: A lower-case name as a name, with or without version digits (resample1): not a longer word
#: (resampling) nor part of one.
LOWER_RE = re.compile("|".join(rf"(?<![A-Za-z]){re.escape(w)}(?![a-z])"
                               for w in sorted(LOWER, key=len, reverse=True)))


def harness_files() -> Iterator[Path]:
    """Every file of conformance/ outside the operator packages."""
    packages = [HARNESS / "ops" / p for p in PACKAGES]
    for path in sorted(HARNESS.rglob("*")):
        if not path.is_file() or "__pycache__" in path.parts:
            continue
        if any(path.is_relative_to(p) for p in packages):
            continue
        yield path


def _texts(path: Path) -> Iterator[tuple[int, str]]:
    """(line, text) of every token of a Python file (names, strings, comments, docstrings),
    or of every line of any other text file."""
    text = path.read_text(encoding="utf-8")
    if path.suffix != ".py":
        yield from enumerate(text.splitlines(), start=1)
        return
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type in (tokenize.NAME, tokenize.STRING, tokenize.COMMENT,
                          getattr(tokenize, "FSTRING_MIDDLE", -1)):
            for offset, line in enumerate(token.string.splitlines()):
                yield token.start[0] + offset, line


def test_the_words_checked_are_the_operators_own() -> None:
    # A sanity check of the check: it looks for what the operator packages define.
    assert {"RESAMPLE", "DEPTH_TO_SPACE", "SPACE_TO_DEPTH", "BlockSize", "InterpolationMode",
            "NEAREST_NEIGHBOR", "DML_DEPTH_SPACE_ORDER"} <= UPPER
    assert {"resample", "depth_space", "depth_to_space"} <= LOWER
    assert UPPER_RE.search('x = "DML_RESAMPLE1_OPERATOR_DESC"')
    assert UPPER_RE.search("attrs['Order']") and not UPPER_RE.search("in the order given")
    assert LOWER_RE.search("from conformance.ops.resample import x")
    assert LOWER_RE.search('stem = "resample1_float32"')
    assert not LOWER_RE.search("nearest-neighbour resampling")


def test_no_harness_file_names_an_operator() -> None:
    files = list(harness_files())
    assert HARNESS / "generate" / "tables.py" in files
    assert HARNESS / "ops" / "base.py" in files
    assert not any("ops/resample/" in str(f) for f in files)
    found = []
    for path in files:
        for line, text in _texts(path):
            hit = UPPER_RE.search(text) or LOWER_RE.search(text)
            if hit:
                found.append(f"{path.relative_to(ROOT)}:{line}: {hit.group(0)!r} in {text!r}")
    assert not found, ("operator knowledge outside conformance/ops/<package>/ (ask the operator "
                       "through its spec or its examples instead, docs/operators.md):\n"
                       + "\n".join(found))


# -- the hook contract ----------------------------------------------------------------------------
def first(name: str, choices: range | Sequence[Any], count: int | None = None) -> Any:
    """A pick that takes the first choice of every draw (the smallest)."""
    value = choices[0]
    return [value] * count if count is not None else value


def last(name: str, choices: range | Sequence[Any], count: int | None = None) -> Any:
    """A pick that takes the last choice of every draw (the largest)."""
    value = choices[-1]
    return [value] * count if count is not None else value


def _call(s: OperatorSpec, example: ExampleCall) -> Any:
    data_type = example.data_types[0] if example.data_types else s.data_types[0]
    return s.make_call({n: TensorDesc.from_json(d) for n, d in
                        example.tensors(data_type).items()}, example.attributes)


def _valid(s: OperatorSpec, example: ExampleCall) -> list[str]:
    return [str(v) for v in s.validate(_call(s, example), HIGHEST)]


def _ask(s: OperatorSpec, hook: str) -> None:
    """Ask one hook of one operator's examples and check what it gives."""
    x = s.examples
    assert isinstance(x, Examples) and x.spec is s
    if hook == "table_examples":
        examples = x.table_examples()
        assert examples and len({e.slug for e in examples}) == len(examples)
        assert {e.dimension_count for e in examples} >= {t for table in s.support
                                                         for t in table.dimension_counts}
    elif hook == "layout_examples":
        for e in x.layout_examples():
            assert e.data_types and len(e.sizes["InputTensor"]) == 4
            assert not _valid(s, e), (e, _valid(s, e))
            assert isinstance(s.selects_elements(_call(s, e)), bool)  # the family asks it too
    elif hook == "draw_call":
        assert isinstance(s.selects_elements(_call(s, x.draw_call(first))), bool)
        for pick in (first, last):
            for selecting in (False, True):
                e = x.draw_call(pick, selecting)
                assert len(e.data_types) == 1 and not _valid(s, e), (e, _valid(s, e))
                if selecting:
                    assert s.selects_elements(_call(s, e)) and e.cites
    elif hook == "invalid_example":
        tensors, attrs = x.invalid_example()
        call = s.make_call({n: TensorDesc.from_json(d) for n, d in tensors.items()}, attrs)
        assert s.validate(call, HIGHEST) == [] and s.required_level(call) == s.introduced
    elif hook in ("breaking_sizes", "breaking_rules"):
        breaking = getattr(x, hook)()
        assert breaking and all(isinstance(b, Breaking) for b in breaking)
        if hook == "breaking_sizes":
            assert {"desc.zero_size", "desc.dimension_count"} <= {b.rule for b in breaking}
    elif hook == "too_many_elements":
        tensors, _ = x.too_many_elements(x.invalid_example())
        assert TensorDesc.from_json(tensors["OutputTensor"]).element_count > 2**32 - 1
    elif hook in ("large_examples", "bitlevel_examples"):
        mine = [e for e in getattr(x, hook)() if e.operator == s.name]
        assert mine, f"{s.name}'s {hook}() holds no call of {s.name}"
        assert all(e.data_types and e.cites and not _valid(s, e) for e in mine)
        if hook == "bitlevel_examples":
            assert all(s.selects_elements(_call(s, e)) for e in mine)
    else:
        raise AssertionError(f"the test does not know hook {hook}: teach it what to check")


CONTRACT = [(m.FAMILY, hook, name) for m in generate.GENERIC for hook in m.HOOKS
            for name in ops.OPERATORS]


@pytest.mark.parametrize(("family", "hook", "name"), CONTRACT,
                         ids=[f"{f}-{h}-{n}" for f, h, n in CONTRACT])
def test_every_operator_answers_what_each_generic_family_asks(family: str, hook: str,
                                                               name: str) -> None:
    s = ops.get(name)
    not_applicable = s.examples.not_applicable
    if family in not_applicable:
        assert not_applicable[family].strip(), f"{name} gives no reason why {family} " \
                                               "does not apply"
        return
    _ask(s, hook)


def test_not_applicable_names_generic_families_only() -> None:
    families = {m.FAMILY for m in generate.GENERIC}
    for s in ops.OPERATORS.values():
        assert set(s.examples.not_applicable) <= families, (s.name, s.examples.not_applicable)


HOOKS = sorted({hook for m in generate.GENERIC for hook in m.HOOKS})


def test_the_families_ask_the_examples_and_the_spec_holds_none_of_it() -> None:
    # Every hook a generic family asks is one of Examples (with the base's NotImplementedError);
    # OperatorSpec keeps what every operator must answer, none of the families' hooks.
    assert set(HOOKS) == {"table_examples", "layout_examples", "invalid_example",
                          "breaking_sizes", "too_many_elements", "breaking_rules",
                          "large_examples", "bitlevel_examples", "draw_call"}
    for hook in [*HOOKS, "not_applicable"]:
        assert hasattr(Examples, hook) and not hasattr(OperatorSpec, hook), hook


class Bare(OperatorSpec):
    name = "BARE"

    def check(self, call: Any, level: Any) -> list:
        return []

    def infer_output_sizes(self, input_sizes: Any, attributes: Any) -> tuple:
        return ()

    def reference(self, call: Any, inputs: Any) -> dict:
        return {}


@pytest.mark.parametrize("hook", HOOKS)
def test_a_hook_left_out_says_what_to_do(hook: str) -> None:
    args = {"too_many_elements": (({}, {}),), "draw_call": (first,)}.get(hook, ())
    with pytest.raises(NotImplementedError, match=rf"BARE implements no {hook}\(\).*"
                                                  r"not_applicable"):
        getattr(Bare().examples, hook)(*args)


@pytest.mark.parametrize("package", PACKAGES)
def test_every_package_brings_its_pages_families_and_misreadings(package: str) -> None:
    module = __import__(f"conformance.ops.{package}", fromlist=["OPERATORS"])
    names = [s.name for s in module.OPERATORS]
    assert names and all(ops.PACKAGES[n] == package for n in names)
    assert module.PAGES and all(ops.pages()[k] == v for k, v in module.PAGES.items())
    for s in module.OPERATORS:
        assert isinstance(s.page, spec.Page) and module.PAGES[s.page] == s.page.url
    families = __import__(f"conformance.ops.{package}.cases", fromlist=["FAMILIES"]).FAMILIES
    for family in families:
        assert family.FAMILY and family.DESCRIPTION and callable(family.files), family
    catalogue = __import__(f"conformance.ops.{package}.misreadings",
                           fromlist=["MISREADINGS"]).MISREADINGS
    assert catalogue and all(CATALOGUE[m.key] is m for m in catalogue)
    # Readings of the package's operators, or of operators that extend theirs (RESAMPLE3 has
    # RESAMPLE2's RoundingDirection) or share their family's spec base (RESAMPLE2 and RESAMPLE3
    # repeat RESAMPLE1's coordinate relation: ResampleFamily), never of another family's.
    from conformance.ops.base import OperatorSpec

    mine = tuple({*(type(s) for s in module.OPERATORS),
                  *(b for s in module.OPERATORS for b in type(s).__bases__
                    if b is not OperatorSpec and issubclass(b, OperatorSpec))})
    assert all(isinstance(ops.get(n), mine) for m in catalogue for n in m.operators)


def test_docs_describe_every_hook() -> None:
    text = (ROOT / "docs" / "operators.md").read_text(encoding="utf-8")
    hooks = {h for m in generate.GENERIC for h in m.HOOKS} | {
        "selects_elements", "capability_gap", "desc_fields", "examples", "examples_type",
        "not_applicable"}
    missing = sorted(h for h in hooks if f"`{h}" not in text)
    assert not missing, f"docs/operators.md does not describe {missing}"


def test_a_citation_of_a_package_page_needs_its_page_constant() -> None:
    """No registry filled at import: a package's page is cited by its Page (which carries its
    address), a shared page by its key; a bare unknown key is refused whatever was imported."""
    from conformance.ops.resample.pages import RESAMPLE1

    assert spec.Citation(RESAMPLE1, "Scales").url == RESAMPLE1.url == ops.pages()[RESAMPLE1]
    assert spec.Citation("dml-strides").url == spec.PAGES["dml-strides"]
    with pytest.raises(ValueError, match="Page constant"):
        spec.Citation("DML_RESAMPLE1_OPERATOR_DESC", "Scales")
    import pickle

    again = pickle.loads(pickle.dumps(spec.Citation(RESAMPLE1, "Scales")))
    assert again.url == RESAMPLE1.url and again.to_json()["page"] == "DML_RESAMPLE1_OPERATOR_DESC"
    assert type(again.to_json()["page"]) is str
