"""The suite ships in the package (docs/mustpass.md, "Where the suite lives"): conformance.suite
finds the committed cases and mustpass lists in an installed wheel's copy or in the source
tree, names the committed case set by the hash the lists carry, and check() tells a loaded case
set that is not it. The certification test builds the sdist and the wheel from the committed
files, installs the wheel in a fresh venv and certifies numpy from an empty folder."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from conformance import __version__, suite
from conformance.casefile import CaseFileError, case_set_hash, load_cases
from conformance.cli import main
from conformance.levels import FeatureLevel
from conformance.results import mustpass
from conformance.session import default_case_paths
from tests.support import CASES, DOCUMENTED, ROOT

MUSTPASS = ROOT / "mustpass"
VERSION_LINE = re.compile(r"dmlconf (\S+) \(suite (\S+), case set sha256 ([0-9a-f]{64}), "
                          r"(\d+) committed cases\)")


@pytest.fixture(autouse=True)
def fresh_headers() -> Iterator[None]:
    """suite.committed() and mustpass.committed() read the lists once per process: each test
    starts and leaves them unread, so that a layout a test makes is not seen by the next."""
    suite.committed.cache_clear()
    mustpass.committed.cache_clear()
    yield
    suite.committed.cache_clear()
    mustpass.committed.cache_clear()


def installed_layout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                     cases_from: Path = DOCUMENTED) -> Path:
    """A wheel's layout, conformance/suite_data/{cases,mustpass}, under tmp_path, made the
    package's: the cases copied from cases_from and one mustpass list made from them as
    `dmlconf generate` makes it. Returns the suite_data folder."""
    data = tmp_path / "suite_data"
    shutil.copytree(cases_from, data / "cases" / cases_from.name)
    cases = load_cases([data / "cases"])
    lists = mustpass.from_cases(cases, [FeatureLevel.FL_6_4])
    (data / "mustpass" / __version__).mkdir(parents=True)
    for name, text in mustpass.render(lists, len(cases)).items():
        (data / "mustpass" / __version__ / name).write_text(text, encoding="utf-8")
    monkeypatch.setattr(suite, "INSTALLED", data)
    return data


# -- where the suite is -------------------------------------------------------------------------
def test_a_source_tree_uses_its_top_level_folders() -> None:
    assert not suite.INSTALLED.exists(), "the source tree holds a built copy of the suite"
    assert suite.cases_root() == CASES
    assert suite.mustpass_root() == MUSTPASS
    assert default_case_paths() == [CASES]


def test_an_installed_copy_wins_and_is_what_runs_and_verdicts_read(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = installed_layout(tmp_path, monkeypatch)
    assert suite.cases_root() == data / "cases"
    assert suite.mustpass_root() == data / "mustpass"
    assert default_case_paths() == [data / "cases"]
    documented = load_cases([DOCUMENTED])
    assert mustpass.committed().case_set_sha256 == case_set_hash(documented)
    assert suite.case_set_sha256() == case_set_hash(documented)


def test_a_cases_folder_in_the_current_folder_is_not_the_suite(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A vendor's project with a folder of its own named cases/ still runs the suite's."""
    (tmp_path / "cases").mkdir()
    (tmp_path / "cases" / "mine.yaml").write_text("cases: []\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert default_case_paths() == [CASES]


def test_no_suite_anywhere_says_to_give_cases(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(suite, "INSTALLED", tmp_path / "suite_data")
    monkeypatch.setattr(suite, "SOURCE_TREE", tmp_path)
    with pytest.raises(CaseFileError, match=r"committed cases are not there .*give cases "
                                            r"with --cases"):
        default_case_paths()
    assert suite.case_set_sha256() == ""
    assert "the committed case set is unknown" in suite.describe()
    assert "the committed case set is unknown" in (suite.check([]) or "")


# -- the committed case set ---------------------------------------------------------------------
def test_the_committed_hash_and_count_are_the_mustpass_lists() -> None:
    texts = [p.read_text(encoding="utf-8") for p in sorted((MUSTPASS / __version__).glob("*.txt"))]
    assert texts
    for text in texts:
        digest, count = re.fullmatch(r"# case set sha256: ([0-9a-f]{64}) \((\d+) committed "
                                     r"cases\)", text.splitlines()[1]).groups()
        assert suite.case_set_sha256() == digest == mustpass.committed().case_set_sha256
        assert suite.committed().cases == int(count) > 6000


def test_version_names_the_suite_without_loading_a_case(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("--version loaded a case file")

    monkeypatch.setattr("conformance.casefile.load.load_file", refuse)
    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0
    line = capsys.readouterr().out.strip()
    m = VERSION_LINE.fullmatch(line)
    assert m, line
    assert m.groups() == (__version__, suite.SUITE_VERSION, suite.case_set_sha256(),
                          str(suite.committed().cases))


def test_a_broken_list_header_is_an_error_naming_the_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    data = installed_layout(tmp_path, monkeypatch)
    listed = data / "mustpass" / __version__ / "6_4.txt"
    lines = listed.read_text(encoding="utf-8").splitlines(keepends=True)
    listed.write_text(lines[0] + "# case set sha256: abc\n" + "".join(lines[2:]),
                      encoding="utf-8")
    with pytest.raises(suite.MustpassFileError, match=re.escape(f"{listed}: not a mustpass list")):
        suite.committed()
    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 2
    assert f"dmlconf: error: {listed}: not a mustpass list" in capsys.readouterr().err


def test_lists_naming_different_case_sets_are_an_error(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = installed_layout(tmp_path, monkeypatch)
    folder = data / "mustpass" / __version__
    text = (folder / "6_4.txt").read_text(encoding="utf-8")
    digest = suite.case_set_sha256()
    suite.committed.cache_clear()
    (folder / "6_2.txt").write_text(text.replace("6_4", "6_2").replace(digest, "0" * 64),
                                    encoding="utf-8")
    with pytest.raises(suite.MustpassFileError, match="different suite versions or case sets"):
        suite.committed()


def test_check_accepts_the_committed_set_and_names_a_tampered_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = installed_layout(tmp_path, monkeypatch)
    assert suite.check(load_cases([suite.cases_root()])) is None

    # one value of one case edited: the same number of cases, another hash
    edited = data / "cases" / "documented" / "depth_to_space.yaml"
    text = edited.read_text(encoding="utf-8")
    changed = text.replace("[12, 13, 14]", "[12, 13, 15]")
    assert changed != text
    edited.write_text(changed, encoding="utf-8")
    tampered = load_cases([suite.cases_root()])
    problem = suite.check(tampered)
    assert problem is not None and "\n" not in problem
    assert (f"{len(tampered)} cases with sha256 {case_set_hash(tampered)}, committed "
            f"{len(tampered)} cases with sha256 {suite.case_set_sha256()}") in problem
    assert "not the committed case set of suite" in problem

    # a case left out (a selection): the counts say so
    fewer = load_cases([suite.cases_root()])[1:]
    assert f"{len(fewer)} cases with sha256" in (suite.check(fewer) or "")


def test_the_build_hook_copies_every_suite_file_and_skips_editable_builds(
        tmp_path: Path) -> None:
    """setup.py's build_py: the wheel's package gets cases/ and mustpass/ as suite_data (every
    file but caches and hidden ones); an editable build copies nothing."""
    from setuptools.dist import Distribution

    spec = importlib.util.spec_from_file_location("dmlconf_setup", ROOT / "setup.py")
    assert spec is not None and spec.loader is not None
    hook = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hook)

    def build(editable: bool) -> Path:
        out = tmp_path / ("editable" if editable else "wheel")
        cmd = hook.BuildPyWithSuite(Distribution({"packages": []}))
        cmd.initialize_options()
        cmd.build_lib = str(out)
        cmd.editable_mode = editable
        cmd.finalize_options()
        cmd.run()
        return out

    built = build(editable=False) / "conformance" / "suite_data"
    for name in ("cases", "mustpass"):
        source = ROOT / name
        want = sorted(str(p.relative_to(source)) for p in hook.suite_files(source))
        got = sorted(str(p.relative_to(built / name)) for p in (built / name).rglob("*")
                     if p.is_file())
        assert got == want and len(want) > 5
    assert not (build(editable=True) / "conformance").exists()


# -- the wheel, installed -----------------------------------------------------------------------
def committed_files(*folders: str) -> list[str]:
    """The files git knows under folders (tracked, or new and not ignored), as paths."""
    out = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard",
                          "--", *folders], cwd=ROOT, capture_output=True, check=True).stdout
    return sorted(p for p in out.decode().split("\0") if p and (ROOT / p).is_file())


@pytest.mark.certification
def test_the_wheel_installed_in_a_fresh_venv_certifies_numpy_from_an_empty_folder(
        tmp_path: Path) -> None:
    started = time.perf_counter()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}

    def sh(*args: str | Path, cwd: Path = tmp_path) -> subprocess.CompletedProcess[str]:
        done = subprocess.run([str(a) for a in args], cwd=cwd, env=env, capture_output=True,
                              text=True)
        assert done.returncode == 0, f"{args}: exit {done.returncode}\n{done.stdout[-3000:]}" \
                                     f"\n{done.stderr[-3000:]}"
        return done

    # The sdist from the committed files alone (a clean clone), then the wheel from the sdist:
    # both carry the suite. No build isolation: the build needs no network.
    src, dist = tmp_path / "src", tmp_path / "dist"
    for rel in committed_files():
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / rel, src / rel)
    sh(sys.executable, "-c",
       f"from setuptools import build_meta as b; b.build_sdist({str(dist)!r})", cwd=src)
    (sdist,) = dist.glob("*.tar.gz")
    sh(sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
       "-w", dist, sdist)
    (wheel,) = dist.glob("*.whl")
    suite_files = committed_files("cases", "mustpass")
    with zipfile.ZipFile(wheel) as z:
        shipped = sorted(n.removeprefix("conformance/suite_data/") for n in z.namelist()
                         if n.startswith("conformance/suite_data/"))
    assert shipped == suite_files

    # A fresh venv, the wheel and its dependencies (pip's index and cache), an empty folder.
    venv, empty = tmp_path / "venv", tmp_path / "empty"
    sh(sys.executable, "-m", "venv", venv)
    bin_ = venv / ("Scripts" if os.name == "nt" else "bin")
    sh(bin_ / "python", "-m", "pip", "install", "-q", wheel)
    empty.mkdir()
    where = sh(bin_ / "python", "-c", "import conformance; print(conformance.__file__)",
               cwd=empty).stdout
    assert Path(where.strip()).is_relative_to(venv), where

    version = sh(bin_ / "dmlconf", "--version", cwd=empty).stdout.strip()
    m = VERSION_LINE.fullmatch(version)
    assert m, version
    committed = suite.committed()
    assert m.groups() == (__version__, __version__, committed.case_set_sha256,
                          str(committed.cases))

    run = sh(bin_ / "dmlconf", "run", "-q", "--backend", "numpy", "--json", "r.json", cwd=empty)
    doc = json.loads((empty / "r.json").read_text(encoding="utf-8"))
    assert len(doc["results"]) == committed.cases
    assert doc["case_set_sha256"] == committed.case_set_sha256
    assert doc["case_paths"] and Path(doc["case_paths"][0]).is_relative_to(venv)
    levels = sorted(p.stem for p in (MUSTPASS / __version__).glob("*.txt"))
    assert sorted(doc["verdict"]) == levels
    assert {lv: v["conformant"] for lv, v in doc["verdict"].items()} == dict.fromkeys(levels,
                                                                                        True)
    for level in levels:
        assert f"feature level {level}: conformant" in run.stdout, run.stdout
    assert sorted(p.name for p in empty.iterdir()) == ["r.json"]  # nothing else written there

    # The vendor's workflow (docs/backends.md, "From a pip install to a verified certificate"):
    # a backend of their own package certified from the installed wheel, the bundle handed over
    # and verified by someone else in another folder.
    vendor, reviewer = tmp_path / "vendor", tmp_path / "reviewer"
    (vendor / "mypkg").mkdir(parents=True)
    (vendor / "mypkg" / "__init__.py").write_text(
        "from backends.numpy_reference import NumpyReferenceBackend\n\n\n"
        "class MyBackend(NumpyReferenceBackend):\n    name = 'mybackend'\n", encoding="utf-8")
    env["PYTHONPATH"] = str(vendor)
    certified = sh(bin_ / "dmlconf", "certify", "--backend", "mypkg:MyBackend", "--level", "6_2",
                   "--out", vendor / "bundle", cwd=vendor)
    assert "feature level 6_2: conformant" in certified.stdout, certified.stdout[-2000:]
    del env["PYTHONPATH"]
    reviewer.mkdir()
    shutil.copy2(vendor / "bundle.zip", reviewer / "bundle.zip")
    verified = sh(bin_ / "dmlconf", "verify", "bundle.zip", cwd=reviewer)
    assert "valid" in verified.stderr and "6_2" in verified.stderr, verified.stderr

    # Vectors for a C harness from the installed package: the C checker ships with them and
    # judges the reference's own output of an exported case.
    sh(bin_ / "dmlconf", "export", "vectors", "-k", "documented/depth_to_space1", cwd=reviewer)
    index = json.loads((reviewer / "vectors" / "index.json").read_text(encoding="utf-8"))
    assert index["cases"] and index["suite"]["case_set_sha256"] == committed.case_set_sha256
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc:
        vectors = reviewer / "vectors"
        sh(cc, "-std=c99", "-O1", "-o", "check", "dmlconf_check.c", "dmlconf_vectors.c",
           cwd=vectors)
        first = vectors / index["cases"][0]["folder"]
        (expect,) = sorted(first.glob("*.OutputTensor.expect"))[:1]
        reference = expect.with_name(expect.name.replace(".expect", ".reference.bin"))
        judged = sh(vectors / "check", first, reference, cwd=vectors)
        assert judged.stdout.startswith("PASS"), judged.stdout

    # An editable install of the same source uses its top-level folders, copying nothing (built
    # in isolation: the venv may have no setuptools; pip fetches it, from its cache if there).
    sh(bin_ / "python", "-m", "pip", "install", "-q", "--no-deps", "-e", src)
    roots = sh(bin_ / "python", "-c", "from conformance import suite; "
               "print(suite.cases_root()); print(suite.mustpass_root())", cwd=empty).stdout
    assert roots.split() == [str(src / "cases"), str(src / "mustpass")]
    assert not (src / "conformance" / "suite_data").exists()
    print(f"wheel certification: {time.perf_counter() - started:.1f} s")
