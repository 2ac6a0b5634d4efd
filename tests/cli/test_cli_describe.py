"""The operator reference (issue 27): `dmlconf describe OPERATOR` prints the page that
docs/operators/<OPERATOR>.md holds, generated from the operator's spec; the committed pages equal
a fresh rendering (`dmlconf generate --check` fails otherwise); a misspelt operator exits 2 with
the closest name; each page says what its operator's spec says (attributes and their Python
types, enum values, tables, capabilities, formula, rules with citations); and each page's
example backend, as the page prints it, passes its operator's cases."""

from __future__ import annotations

import shlex
import shutil
from pathlib import Path

import pytest
import yaml

from conformance import generate, ops
from conformance.casefile import load_cases
from conformance.cli import main, parser
from conformance.generate import reference
from conformance.levels import FeatureLevel
from tests.support import DOCUMENTED, GENERATED, ROOT, Dmlconf

PAGES = ROOT / "docs" / "operators"
OPERATORS = sorted(ops.OPERATORS)


def test_describe_prints_the_operator_s_page(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["describe", "dml_operator_resample1"]) == 0
    out = capsys.readouterr().out
    assert out == reference.page(ops.get("RESAMPLE1"), notes="docs/spec-notes.md")
    # the committed page is the same page, its spec-notes links relative to docs/operators/
    committed = (PAGES / "RESAMPLE1.md").read_text(encoding="utf-8")
    assert committed == out.replace("(docs/spec-notes.md)", "(../spec-notes.md)")


def test_a_misspelt_operator_exits_2_naming_the_closest(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["describe", "RESAMPEL1"]) == 2
    err = capsys.readouterr().err
    assert "unknown operator 'RESAMPEL1': did you mean 'RESAMPLE1'?" in err
    assert all(name in err for name in OPERATORS)  # and every name it could be
    assert main(["describe", "NOTHING_LIKE_IT"]) == 2
    assert "did you mean" not in capsys.readouterr().err


def test_describe_without_an_operator_lists_them_and_example_prints_the_backend(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["describe"]) == 0
    out = capsys.readouterr().out
    assert out == (PAGES / "README.md").read_text(encoding="utf-8")
    assert all(f"[{name}]({name}.md)" in out for name in OPERATORS)
    assert main(["describe", "RESAMPLE1", "--example"]) == 0
    assert capsys.readouterr().out == reference.snippet(ops.get("RESAMPLE1"))


def test_the_committed_pages_equal_a_fresh_rendering() -> None:
    # The CI check, as for the generated cases: `dmlconf generate` must have been run and its
    # output committed.
    assert generate.stale_pages(PAGES) == []
    assert sorted(p.stem for p in PAGES.glob("*.md")) == sorted([*OPERATORS, "README"])


def test_a_stale_page_is_caught_by_generate_check(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "operators"
    shutil.copytree(PAGES, folder)
    edited = folder / "RESAMPLE1.md"
    text = edited.read_text(encoding="utf-8")
    edited.write_text(text.replace("`tuple[float, ...]`", "`list[float]`"), encoding="utf-8")
    (folder / "DEPTH_TO_SPACE.md").unlink()
    (folder / "GONE.md").write_text("# an operator the suite no longer has\n", encoding="utf-8")
    bad = [str(folder / n) for n in ("DEPTH_TO_SPACE.md", "GONE.md", "RESAMPLE1.md")]
    assert generate.stale_pages(folder) == bad
    # `dmlconf generate --check --operators DIR` checks them with the rest (the cases' own
    # check, a whole generation, is tests/generate/test_generate.py's).
    seen: list[object] = []

    def stale(root: str, counts: str, mustpass: str, pages: str | None = None) -> list[str]:
        seen.append(pages)
        return generate.stale_pages(pages) if pages else []

    monkeypatch.setattr(generate, "stale", stale)
    assert main(["generate", "--check", "--operators", str(folder)]) == 1
    assert main(["generate", "--check"]) == 0
    assert seen == [str(folder), "docs/operators"]
    # a generation writes them again and removes the page of no operator (generate.write
    # calls write_pages after the cases)
    assert sorted(generate.write_pages(folder)) == bad
    assert generate.stale_pages(folder) == [] and generate.write_pages(folder) == []


@pytest.mark.parametrize("name", OPERATORS)
def test_the_page_says_what_the_spec_says(name: str) -> None:
    spec = ops.get(name)
    text = (PAGES / f"{name}.md").read_text(encoding="utf-8")
    for a in spec.attributes:  # each key of call.attributes, its Python and desc types
        assert f"| `{a.name}` | `{a.python_type}` | {a.directml_type} | " in text
        for value, number in a.values.items():  # each enum value, as DirectML.h names it
            assert f"| `{value}` | `{a.prefix}{value}` | {number} |" in text
    for derived in spec.derived_attributes:
        assert f"`{derived}` is a member of the desc but not in `call.attributes`" in text
    for t in spec.support:
        types = ", ".join(f"{d.name} (`{d.numpy_dtype}`)" for d in sorted(t.data_types))
        assert f"| {t.level} | " in text and types in text and f"[{t.cite}](" in text
    for statement in spec.formula():
        assert f"- {statement.text} ([{statement.cite}](" in text
    for field in spec.capability_fields():
        assert f"| `{field}` | " in text
    # every rule the operator's invalid cases break, each with its citation
    cases = yaml.safe_load((GENERATED / "invalid" / f"{name.lower()}.yaml").read_text(
        encoding="utf-8"))["cases"]
    found = {r.rule: r for r in reference.rules(spec)}
    assert {c["tags"][-1] for c in cases} <= set(found)
    assert "operator.data_type" in found
    assert ("operator.level" in found) is (spec.introduced > min(FeatureLevel))
    for r in found.values():
        assert f"| `{r.rule}` | [{r.cite}](" in text and r.message in text


def test_the_resample1_page_answers_what_the_issue_found_missing() -> None:
    """Issue 27's newcomer read four documents for RESAMPLE1: the attributes and their enum
    values, the formula, what offset_pairs and arbitrary_offsets mean, and whether
    DimensionCount is in call.attributes. One page says all of it."""
    text = (PAGES / "RESAMPLE1.md").read_text(encoding="utf-8")
    assert "| `Scales` | `tuple[float, ...]` | FLOAT array | " in text
    assert "| `LINEAR` | `DML_INTERPOLATION_MODE_LINEAR` | 1 |" in text
    assert "c = (o - OutputPixelOffset) / Scale - InputPixelOffset" in text
    assert "| `arbitrary_offsets` | `True` | whether it takes any pixel offsets" in text
    assert "| `offset_pairs` | `[(0.5, -0.5)]` | " in text
    assert "`DimensionCount` is a member of the desc but not in `call.attributes`" in text
    assert "| 6_2 | 1, 2, 3, 4 | FLOAT32 (`float32`), FLOAT16 (`float16`), UINT8 (`uint8`), " \
           "INT8 (`int8`) | " in text
    assert "offset_pairs" not in (PAGES / "DEPTH_TO_SPACE1.md").read_text(encoding="utf-8")


def case_files(name: str) -> list[Path]:
    """The cases an example backend is run on: the operator's documented ones, its tables and
    invalid descs, and a family of what it computes (its float32 files, or its blocks)."""
    stem = name.lower()
    files = [DOCUMENTED / f"{stem}.yaml", GENERATED / "tables" / f"{stem}.yaml",
             GENERATED / "invalid" / f"{stem}.yaml", GENERATED / "blocks" / f"{stem}.yaml",
             *sorted(GENERATED.glob(f"*/{stem}_float32.yaml"))]
    return [f for f in files if f.is_file()]


@pytest.mark.parametrize("name", OPERATORS)
def test_the_page_s_example_backend_passes_its_operator_s_cases(
        name: str, tmp_path: Path, dmlconf: Dmlconf) -> None:
    spec = ops.get(name)
    text = (PAGES / f"{name}.md").read_text(encoding="utf-8")
    code = reference.snippet(spec)
    assert code is not None and f"```python\n{code}```" in text  # the page shows what runs
    (line,) = [s.strip() for s in text.splitlines() if s.startswith("    dmlconf run ")]
    words = shlex.split(line)  # the page's command, as a newcomer types it
    parser().parse_args(words[1:])
    file_name, class_name = words[words.index("--backend") + 1].split(":")
    (tmp_path / file_name).write_text(code, encoding="utf-8")
    pattern = words[words.index("-k") + 1]
    args = ["--backend", f"{tmp_path / file_name}:{class_name}", "-k", pattern]
    files = case_files(name)
    status, doc = dmlconf(*args, *[a for f in files for a in ("--cases", str(f))])
    assert status == 0, doc["summary"]
    mine = [r for r in doc["results"] if r["operators"] == [name]]
    assert len(mine) >= 100
    assert any(r["id"].startswith("generated/invalid/") and r["status"] == "PASS" for r in mine)
    declined = {r["id"]: r["message"] for r in mine if r["status"] != "PASS"}
    kernel = spec.example_kernel
    assert kernel is not None
    # only the calls a kernel declines (RESAMPLE3's antialiased filter) are not run, each with
    # the kernel's reason
    assert bool(declined) is (kernel.unsupported is not None), sorted(declined)[:5]
    if kernel.unsupported is not None:
        calls = {c.id: c.calls[0].call for c in load_cases(files) if c.id in declined}
        for case_id, message in declined.items():
            reason = kernel.unsupported(calls[case_id].attributes)
            assert reason and reason in message, (case_id, message)
    others = {r["status"] for r in doc["results"] if r["operators"] != [name]}
    assert others <= {"NOT_SUPPORTED"}
