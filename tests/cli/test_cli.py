"""`dmlconf` end to end: run / list / show through conformance.cli.main, and the installed
console script in a subprocess, with backends found by name, as 'module:Class' and as
'path/to/file.py:Class' from outside the repository."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import tomllib

from conformance.casefile import load_cases
from conformance.cli import main
from conformance.levels import FeatureLevel
from conformance.results import mustpass
from tests.support import BELOW_5_1_CASE, BROKEN, CASES, ROOT, Dmlconf, statuses
from tests.support.console import dmlconf, outside_env

D2S1_CRD = "documented/depth_to_space1/example-2-column-row-depth"
ROW_MAJOR = "documented/strides/2d-row-major"

VENDOR = textwrap.dedent('''
    """A vendor's backend, kept outside the repository: the reference without strided descs."""
    from dataclasses import replace

    from backends.numpy_reference import NumpyReferenceBackend


    class VendorBackend(NumpyReferenceBackend):
        name = "vendor"

        @property
        def capabilities(self):
            return replace(super().capabilities, strided=False, notes="vendor test double")
''')


# -- run ----------------------------------------------------------------------------------------
# the whole committed suite through the CLI: 14-16 s, in CI's certification step
@pytest.mark.certification
def test_run_on_the_committed_cases_exits_0_and_writes_the_json(
        tmp_path: Path, dmlconf: Dmlconf, capsys: pytest.CaptureFixture[str]) -> None:
    code, doc = dmlconf("--cases", str(CASES))
    assert code == 0
    total = len(load_cases([CASES]))
    assert len(doc["results"]) == total >= 18
    assert doc["summary"]["FAIL"] == doc["summary"]["ERROR"] == 0
    assert sum(doc["summary"].values()) == total
    assert doc["backend"]["name"] == "numpy"
    assert doc["backend"]["class"] == "backends.numpy_reference.NumpyReferenceBackend"
    assert doc["feature_level"] == "6_4"
    assert doc["case_paths"] == [str(CASES)]
    assert doc["command"] == (f"dmlconf run -q --cases {CASES} "
                              f"--json {tmp_path / 'results.json'}")
    assert len(doc["case_set_sha256"]) == 64
    assert doc["started_at"] <= doc["finished_at"]
    assert doc["verdict"]["2_1"]["conformant"] is True
    # The whole suite covers every level's mustpass list (docs/mustpass.md).
    assert doc["mustpass"] == {"suite_version": doc["suite_version"],
                               "case_set_sha256": doc["case_set_sha256"]}
    for level, v in doc["verdict"].items():
        assert v["conformant"] is True and v["mustpass_run"] == v["mustpass"] > 0, level
    out = capsys.readouterr().out
    assert f"{total} cases in " in out
    assert "feature level 2_1: conformant" in out
    assert f"results: {tmp_path / 'results.json'}" in out


def test_the_summary_counts_from_the_command_s_start_in_words_of_its_number(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """"N cases in X s" is the wall time from the command's start, loading included (a backend
    whose module takes 1 s to import: the 1 s is in X and in the loading), and 1 case is "1
    case" (issue 15)."""
    slow = tmp_path / "slow_backend.py"
    slow.write_text(textwrap.dedent("""
        import time

        from backends.numpy_reference import NumpyReferenceBackend

        time.sleep(1.0)  # a backend slow to load (a driver, a device)


        class SlowToLoad(NumpyReferenceBackend):
            name = "slow"
    """), encoding="utf-8")
    assert main(["run", "--backend", f"{slow}:SlowToLoad", "--cases", str(CASES / "documented"),
                 "-k", ROW_MAJOR, "--json", str(tmp_path / "r.json")]) == 0
    captured = capsys.readouterr()
    assert ": 1 case, backend " in captured.err
    line = captured.out.splitlines()[0]
    found = re.fullmatch(r"1 case in (\d+\.\d) s \(loading (\d+\.\d) s, running "
                         r"(\d+\.\d) s\): PASS 1, .*", line)
    assert found, line
    wall, loading, running = map(float, found.groups())
    assert loading >= 1.0 and wall >= loading + running - 0.1 and running < 1.0


def test_run_selects_with_k_substrings_and_globs(dmlconf: Dmlconf) -> None:
    code, doc = dmlconf("--cases", str(CASES / "documented"), "-k", "depth_to_space1/")
    assert code == 0
    assert sorted(statuses(doc)) == ["documented/depth_to_space1/example-1-depth-column-row",
                                     D2S1_CRD]
    code, doc = dmlconf("--cases", str(CASES / "documented"),
                        "-k", "documented/strides/*-major",
                        "-k", "resample1/remark-linear-resample1")
    assert code == 0
    assert sorted(statuses(doc)) == ["documented/resample1/remark-linear-resample1",
                                     "documented/strides/2d-column-major", ROW_MAJOR]


def test_run_at_level_2_0_makes_2_1_cases_not_supported(
        dmlconf: Dmlconf, capsys: pytest.CaptureFixture[str]) -> None:
    code, doc = dmlconf("--cases", str(CASES / "documented"), "--level", "2_0")
    assert code == 0
    assert doc["feature_level"] == "2_0"
    by_id = {r["id"]: r for r in doc["results"]}
    for r in by_id.values():
        if r["feature_level"] != "2_0":  # 2_1, and RESAMPLE2/3's 5_1, 6_2, 6_4
            assert r["status"] == "NOT_SUPPORTED", r["id"]
            assert r["message"] == (f"needs feature level {r['feature_level']}; the backend "
                                    "claims 2_0 (not required of it)")
        else:
            assert r["status"] == "PASS", r["id"]
    assert {r["feature_level"] for r in by_id.values()} >= {"2_0", "2_1", "6_4"}
    assert doc["summary"]["PASS"] == 2
    assert list(doc["verdict"]) == ["1_0", "2_0"]
    # The documented cases are a part of the 2_0 mustpass list: the 2 mandatory ones pass,
    # and the level has no verdict (docs/mustpass.md).
    required = mustpass.committed().required(FeatureLevel.FL_2_0, FeatureLevel.FL_2_0)
    assert required is not None and len(required) > 2
    assert doc["verdict"]["2_0"]["conformant"] is None
    assert doc["verdict"]["2_0"]["mandatory"] == doc["verdict"]["2_0"]["PASS"] == 2
    assert doc["verdict"]["2_0"]["mustpass"] == len(required)
    assert doc["verdict"]["2_0"]["mustpass_run"] == 2
    assert (f"feature level 2_0: 2 of {len(required)} mustpass cases run: no verdict (2/2 "
            "mandatory cases run pass" in capsys.readouterr().out)


def test_broken_backend_makes_run_exit_1_and_names_the_failure(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["run", "--cases", str(CASES / "documented"), "--json",
                 str(tmp_path / "r.json"), "--backend", f"{BROKEN}:SwappedOrderBackend"])
    assert code == 1
    captured = capsys.readouterr()
    assert (f"FAIL {D2S1_CRD}: diagnosis: other-order | OutputTensor: 36 of 48 elements "
            "differ [") in captured.err
    assert "judged by [1]: bit-exact, the case's values" in captured.err
    assert "feature level 2_1: NOT conformant" in captured.out
    assert f"  FAIL {D2S1_CRD}: diagnosis: other-order | OutputTensor: 36 of 48" in captured.out
    assert "  diagnoses of the 4 FAILs: other-order 4" in captured.out
    doc = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert doc["summary"]["FAIL"] == 4
    assert doc["backend"]["name"] == f"{BROKEN}:SwappedOrderBackend"


def test_erroring_backend_makes_run_exit_1(dmlconf: Dmlconf) -> None:
    code, doc = dmlconf("--cases", str(CASES / "documented"), "-k", ROW_MAJOR,
                        "--backend", f"{BROKEN}:RaisingBackend")
    assert code == 1
    assert statuses(doc) == {ROW_MAJOR: "ERROR"}


def test_run_defaults_to_the_source_cases_and_reports_results_json(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # no cases/ here: the source tree's are used
    assert main(["run", "-q", "-k", ROW_MAJOR]) == 0
    doc = json.loads((tmp_path / "reports" / "results.json").read_text(encoding="utf-8"))
    assert statuses(doc) == {ROW_MAJOR: "PASS"}
    assert doc["case_paths"] == [str(CASES)]


@pytest.mark.parametrize(("args", "message"), [
    (["--backend", "no-such-backend"],
     "dmlconf: error: backend 'no-such-backend' is not a registered name: the names are numpy"),
    (["--backend", "nunpy"], "is not a registered name: did you mean 'numpy'? the names are"),
    (["--backend", str(BROKEN)], f"names a file but not its class: write {BROKEN}:ClassName "
                                 "(it defines OverrunBackend, "),
    (["--backend", "no_such_module_xyz:Backend"],
     "dmlconf: error: importing no_such_module_xyz failed: ModuleNotFoundError"),
    (["--backend", "/no/such/file.py:Backend"],
     "dmlconf: error: backend file /no/such/file.py does not exist"),
    (["--backend", "conformance.levels:FeatureLevel"],
     "dmlconf: error: conformance.levels:FeatureLevel is not a subclass of "
     "conformance.backend.Backend"),
    (["--backend", f"{BROKEN}:NoSuchClass"], "has no NoSuchClass"),
    (["--level", "9_9"], "dmlconf: error: unknown feature level '9_9': give it as 5_1, 0x5100 or "
         "DML_FEATURE_LEVEL_5_1 (known: 1_0, 2_0"),
    (["--level", "two"], "dmlconf: error: unknown feature level 'two'"),
    (["--cases", "/no/such/cases"], "dmlconf: error: /no/such/cases: no such file or folder"),
    (["-k", "no-case-has-this-id"], "no case selected by -k no-case-has-this-id"),
])
def test_run_usage_errors_exit_2_with_one_clear_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str],
        message: str) -> None:
    out = tmp_path / "r.json"
    argv = ["run", "--json", str(out), *args]
    if "--cases" not in args:
        argv += ["--cases", str(CASES / "documented")]
    assert main(argv) == 2
    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    assert len(lines) == 1, captured.err
    assert lines[0].startswith("dmlconf: error: ") and message in lines[0]
    assert "Traceback" not in captured.err + captured.out
    assert not out.exists()


def test_level_above_the_backends_highest_exits_2(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    low = tmp_path / "low_backend.py"
    low.write_text(textwrap.dedent('''
        from dataclasses import replace
        from backends.numpy_reference import NumpyReferenceBackend
        from conformance.levels import FeatureLevel

        class Low(NumpyReferenceBackend):
            @property
            def capabilities(self):
                return replace(super().capabilities, feature_level=FeatureLevel.FL_2_1)
    '''), encoding="utf-8")
    code = main(["run", "--cases", str(CASES / "documented"), "--json", str(tmp_path / "r.json"),
                 "--backend", f"{low}:Low", "--level", "5_0"])
    assert code == 2
    err = capsys.readouterr().err
    assert err.splitlines() == ["dmlconf: error: numpy claims feature level 2_1 at most, "
                                "not 5_0"]


# -- list and show ------------------------------------------------------------------------------
def test_list_prints_ids_and_a_count(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list", "--cases", str(CASES / "documented")]) == 0
    captured = capsys.readouterr()
    ids = [c.id for c in load_cases([CASES / "documented"])]
    assert captured.out.splitlines() == ids
    assert captured.err.strip() == f"{len(ids)} cases"


def test_list_verbose_and_selected(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list", "-v", "--cases", str(CASES), "-k", "resample1/remark-linear"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "documented/resample1/remark-linear-resample1\tRESAMPLE1\t2_1\tvalid",
        "documented/resample1/remark-linear-resample\tRESAMPLE\t2_0\tvalid",
    ]


def test_show_prints_case_citation_and_a_reproduce_command_that_runs(
        dmlconf: Dmlconf, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["show", ROW_MAJOR, "--cases", str(CASES), "--backend", "numpy"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0].startswith(f"# {ROW_MAJOR}  ({CASES / 'documented' / 'strides.yaml'}:")
    assert lines[1] == ("# spec: dml-strides § Two-dimensional (2D) arrays  "
                        "<https://learn.microsoft.com/windows/ai/directml/dml-strides>")
    assert "operator: DEPTH_TO_SPACE1" in lines
    assert "Strides: [6, 6, 3, 1]" in out
    reproduce = lines[-1]
    assert reproduce == (f"# reproduce: dmlconf run --json reports/repro-documented-strides-"
                         f"2d-row-major.json --cases {CASES / 'documented' / 'strides.yaml'} "
                         f"-k {ROW_MAJOR} --backend numpy")
    argv = reproduce.removeprefix("# reproduce: dmlconf ").split()
    code, doc = dmlconf(*argv[1:])
    assert code == 0 and statuses(doc) == {ROW_MAJOR: "PASS"}


def test_show_of_a_pattern_and_of_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["show", "strides/", "--cases", str(CASES / "documented")]) == 0
    captured = capsys.readouterr()
    assert captured.out.startswith("# documented/strides/")
    assert "cases match 'strides/'; showing the first" in captured.err
    assert main(["show", "no-such-case", "--cases", str(CASES / "documented")]) == 2
    assert capsys.readouterr().err.strip() == "no case matches 'no-such-case'"


def test_show_of_a_rejected_case_names_the_broken_rules(
        tmp_path: Path, dmlconf: Dmlconf, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "rejected.yaml").write_text(textwrap.dedent("""
        cases:
          - id: t/rejected
            operator: DEPTH_TO_SPACE1
            feature_level: "2_1"
            spec: {page: DML_DEPTH_TO_SPACE1_OPERATOR_DESC, section: OutputTensor}
            attributes: {BlockSize: 2, Order: DEPTH_COLUMN_ROW}
            tensors:
              InputTensor: {DataType: FLOAT32, Sizes: [1, 2, 2, 2]}
              OutputTensor: {DataType: FLOAT32, Sizes: [1, 1, 4, 4]}
            expected: rejected
    """), encoding="utf-8")
    assert main(["show", "t/rejected", "--cases", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "# must be rejected: InputChannelCount 2 is not divisible by BlockSize * " \
           "BlockSize 4" in out
    assert "depth_space.channels_divisible" in out
    code, doc = dmlconf("--cases", str(tmp_path / "rejected.yaml"),
                        "--backend", f"{BROKEN}:AcceptAllBackend")
    assert code == 1
    assert doc["results"][0]["message"].startswith("the backend accepted an invalid desc")


def test_show_of_a_case_limited_to_lower_levels_reproduces_below_them(
        tmp_path: Path, dmlconf: Dmlconf, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "below.yaml").write_text("cases:\n" + BELOW_5_1_CASE, encoding="utf-8")
    assert main(["show", "t/resample-3d", "--cases", str(tmp_path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert ("# must be rejected: InputTensor has 3 dimensions; the operator takes 4 here "
            "[desc.dimension_count; DML_BUFFER_TENSOR_DESC § DimensionCount]") in lines
    reproduce = lines[-1].removeprefix("# reproduce: dmlconf ").split()
    assert reproduce[-2:] == ["--level", "2_0"]
    code, doc = dmlconf(*reproduce[1:])
    assert code == 0
    assert doc["results"][0]["status"] == "PASS"
    assert doc["results"][0]["message"].startswith("rejected at create_operator: ")


@pytest.mark.parametrize("command", [["run"], ["show", ROW_MAJOR], ["explore"]])
def test_a_level_written_like_a_version_is_refused(
        command: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    """--level 5.1 is refused, naming the accepted forms (issue 15): it is not taken silently."""
    assert main([*command, "--level", "5.1", "--cases", str(CASES / "documented")]
                if command[0] != "explore" else [*command, "--level", "5.1"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("dmlconf: error: unknown feature level '5.1': give it as 5_1, 0x5100 "
                          "or DML_FEATURE_LEVEL_5_1")


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    assert capsys.readouterr().out.strip().startswith("dmlconf ")


def test_python_m_dmlconf_is_the_command(tmp_path: Path) -> None:
    """`python -m dmlconf` runs conformance.cli.main, from any folder (issue 15), and the
    package that makes it so is one the wheel ships."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    proc = subprocess.run(
        [sys.executable, "-m", "dmlconf", "run", "-q", "--cases", str(CASES / "documented"),
         "-k", ROW_MAJOR, "--json", "out/results.json"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("1 case in ")
    doc = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))
    assert statuses(doc) == {ROW_MAJOR: "PASS"}
    proc = subprocess.run([sys.executable, "-m", "dmlconf", "run", "--level", "bogus"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60,
                          check=False)
    assert proc.returncode == 2 and proc.stderr.startswith("dmlconf: error: ")
    found = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "dmlconf" in found["tool"]["setuptools"]["packages"]["find"]["include"]


# -- the installed console script, with a backend from outside the repository -------------------
@pytest.mark.parametrize("form", ["module", "file"])
def test_outside_backend_runs_through_the_installed_command(tmp_path: Path, form: str) -> None:
    (tmp_path / "vendor_backend.py").write_text(VENDOR, encoding="utf-8")
    spec = ("vendor_backend:VendorBackend" if form == "module"
            else "vendor_backend.py:VendorBackend")
    proc = subprocess.run(
        [dmlconf(), "run", "--backend", spec, "--cases", str(CASES / "documented"), "--json",
         "out/results.json"],
        cwd=tmp_path, env=outside_env(tmp_path), capture_output=True, text=True, timeout=60,
        check=False)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    assert f"backend {spec} (VendorBackend)" in proc.stderr
    doc = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))
    assert doc["backend"]["name"] == spec
    cls = doc["backend"]["class"]
    if form == "module":
        assert cls == "vendor_backend.VendorBackend"
    else:
        assert cls.startswith("_dmlconf_backend_") and cls.endswith(".VendorBackend")
    assert doc["backend"]["capabilities"]["strided"] is False
    assert doc["backend"]["capabilities"]["notes"] == "vendor test double"
    got = statuses(doc)
    assert got["documented/strides/padded-height-stride-5"] == "NOT_SUPPORTED"
    assert got[ROW_MAJOR] == "PASS"
    assert doc["summary"]["FAIL"] == doc["summary"]["ERROR"] == 0
    assert doc["summary"]["NOT_SUPPORTED"] >= 1
    assert doc["command"] == (f"dmlconf run --backend {spec} --cases {CASES / 'documented'} "
                              "--json out/results.json")


def test_installed_command_usage_error_has_no_traceback(tmp_path: Path) -> None:
    proc = subprocess.run(
        [dmlconf(), "run", "--backend", "vendor_backend:VendorBackend", "--cases",
         str(CASES / "documented"), "--json", "r.json"],
        cwd=tmp_path, env=outside_env(tmp_path), capture_output=True, text=True, timeout=60,
        check=False)  # no vendor_backend.py written: the import fails
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [
        "dmlconf: error: importing vendor_backend failed: "
        "ModuleNotFoundError(\"No module named 'vendor_backend'\")"]
    assert not (tmp_path / "r.json").exists()


def test_a_partial_run_has_no_verdict_and_says_how_much_of_the_mustpass_list_it_ran(
        dmlconf: Dmlconf, capsys: pytest.CaptureFixture[str]) -> None:
    # Issue 15: `-k documented` once printed "feature level 6_2: conformant".
    code, doc = dmlconf("-k", "documented")
    assert code == 0 and doc["summary"]["FAIL"] == 0
    ran = {r["id"] for r in doc["results"]}
    out = capsys.readouterr().out
    for level, v in doc["verdict"].items():
        required = mustpass.committed().required(FeatureLevel.parse(level), FeatureLevel.FL_6_4)
        assert required is not None and v["mustpass"] == len(required), level
        assert v["mustpass_run"] == len(required & ran) < len(required), level
        assert v["conformant"] is None, level
        assert (f"feature level {level}: {v['mustpass_run']} of {v['mustpass']} mustpass "
                "cases run: no verdict") in out
    assert ": conformant" not in out


def test_a_fail_line_leads_with_its_cause_and_fits_the_terminal() -> None:
    """Issue 27: the diagnosis first (or that none matched), the tolerance rule said once
    after the lines as [k], each line within the terminal's width, and a roll-up."""
    from conformance.present import diagnosis_rollup, failure_line
    from conformance.results import Result

    rule = ("linear, within the legal envelope of float32 math under the Direct3D "
            "floating-point rules (Direct3D 11 and up) (docs/tolerances.md)")
    message = (f"OutputTensor: 3 of 48 elements differ ({rule}): [0, 1, 0, 2] expected 5, got 7"
               " | diagnosis: the output equals nearest taking floor(c)")
    found = [Result(id="t/a", status="FAIL", message=message,
                    diagnosis={"readings": ["nearest-floor"], "text": "..."}),
             Result(id="t/b", status="FAIL", message=message.split(" | ")[0]),
             Result(id="t/c", status="FAIL", message=message,
                    diagnosis={"readings": ["nearest-floor"], "text": "..."}),
             Result(id="t/d", status="ERROR", message="boom\ntraceback")]
    rules: list[str] = []
    lines = [failure_line(r, 120, rules) for r in found]
    assert lines[0] == ("  FAIL t/a: diagnosis: nearest-floor | OutputTensor: 3 of 48 elements "
                        "differ [1]: [0, 1, 0, 2] expected 5, got 7")
    assert lines[1].startswith("  FAIL t/b: diagnosis: none of the catalogue's misreadings")
    assert all(len(line) <= 120 for line in lines) and lines[1].endswith("...")
    assert lines[3] == "  ERROR t/d: boom"
    assert rules == [rule]  # said once, however many lines
    assert diagnosis_rollup(found) == "diagnoses of the 3 FAILs: nearest-floor 2, none matched 1"


def test_capabilities_written_as_a_method_says_to_make_it_a_property(tmp_path: Path) -> None:
    path = tmp_path / "mine.py"
    path.write_text("from conformance.backend import Backend, Capabilities\n"
                    "class Mine(Backend):\n"
                    "    def capabilities(self):\n"
                    "        return Capabilities(operators={})\n"
                    "    def execute(self, call, bindings):\n"
                    "        pass\n", encoding="utf-8")
    from conformance.backend import BackendLoadError, load_backend

    with pytest.raises(BackendLoadError, match=r"capabilities must be a property, read as "
                                               r"backend\.capabilities: write @property"):
        load_backend(f"{path}:Mine")
