"""A scoped run (RunOptions.scope, `dmlconf run --scope`): the cases outside the scope are not
run but recorded NOT_SUPPORTED as not covered, the document carries the scope and its verdict,
and a journal of another scope is not resumed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conformance.cli import main
from conformance.results import Scope
from conformance.session import journal
from tests.support import DOCUMENTED


def test_a_scoped_run_runs_the_scope_and_records_the_rest_as_not_covered(
        tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    out = tmp_path / "results.json"
    code = main(["run", "--backend", "numpy", "--no-isolate", "--level", "2_1",
                 "--cases", str(DOCUMENTED / "resample1.yaml"),
                 "--cases", str(DOCUMENTED / "depth_to_space1.yaml"),
                 "--scope", "resample1:float32", "--json", str(out), "-q"])
    assert code == 0
    printed = capsys.readouterr()
    assert "feature level 2_1 for RESAMPLE1 (FLOAT32)," in printed.err
    doc = json.loads(out.read_text())
    assert doc["scope"] == {"RESAMPLE1": ["FLOAT32"]}
    by_operator = {tuple(r["operators"]): r for r in doc["results"]}
    assert by_operator[("RESAMPLE1",)]["status"] == "PASS"
    outside = by_operator[("DEPTH_TO_SPACE1",)]
    assert outside["status"] == "NOT_SUPPORTED"
    assert outside["message"] == ("not covered: outside the claimed scope "
                                  "(RESAMPLE1 (FLOAT32))")
    assert doc["verdict"]["2_1"]["not_covered"] >= 2
    # a partial run (not the whole mustpass list) still gives no verdict, as without a scope
    assert "2_1: " in printed.out and "no verdict" in printed.out


def test_a_scope_the_suite_does_not_know_is_a_usage_error(tmp_path: Path,
                                                          capsys: pytest.CaptureFixture) -> None:
    code = main(["run", "--backend", "numpy", "--scope", "RESAMPLE1:FLOAT64",
                 "--json", str(tmp_path / "r.json")])
    assert code == 2
    assert "RESAMPLE1 takes no FLOAT64 at any feature level" in capsys.readouterr().err
    assert not (tmp_path / "r.json").exists()


def test_a_journal_of_another_scope_is_not_resumed(tmp_path: Path) -> None:
    path = tmp_path / "r.json.journal"
    scope = Scope.parse(["RESAMPLE1"])
    assert scope is not None
    run = {"backend": "numpy", "scope": scope.to_json()}
    journal.Journal(path, run).close()  # interrupted: kept for --resume
    with pytest.raises(journal.JournalError, match="scope"):
        journal.Journal(path, {**run, "scope": None}, resume=True)
    journal.Journal(path, run, resume=True).finish()


def test_the_shards_of_a_scoped_run_merge_with_their_scope(tmp_path: Path) -> None:
    cases = ["--cases", str(DOCUMENTED / "resample1.yaml"),
             "--cases", str(DOCUMENTED / "depth_to_space1.yaml")]
    for k in (1, 2):
        assert main(["run", "--backend", "numpy", "--no-isolate", *cases, "--scope",
                     "RESAMPLE1", "--shard", f"{k}/2", "--json", str(tmp_path / f"{k}.json"),
                     "-q"]) == 0
    assert main(["merge", str(tmp_path / "1.json"), str(tmp_path / "2.json"),
                 "--json", str(tmp_path / "merged.json")]) == 0
    merged = json.loads((tmp_path / "merged.json").read_text())
    assert merged["scope"] == {"RESAMPLE1": ["FLOAT32", "FLOAT16", "UINT8", "INT8"]}
    assert merged["verdict"]["2_1"]["not_covered"] >= 2
    # shards of different scopes are not one run
    assert main(["run", "--backend", "numpy", "--no-isolate", *cases, "--shard", "2/2",
                 "--json", str(tmp_path / "2.json"), "-q"]) == 0
    assert main(["merge", str(tmp_path / "1.json"), str(tmp_path / "2.json"),
                 "--json", str(tmp_path / "m2.json")]) == 2
