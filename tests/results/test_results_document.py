"""The typed results document (conformance/results/document.py, model.Status): a status is a
str that JSON, str() and f-strings write as its name; a Result takes a status's text and refuses
any other; a results file read and written back is the same file, byte for byte, and the fields
the format does not document (or an older document lacks) are kept as they were."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from conformance import results
from conformance.results import (
    FAILING,
    PASSING,
    STATUSES,
    BaselineSummary,
    Execution,
    MergedExecution,
    Result,
    ResultsDocument,
    Shard,
    Status,
    Verdict,
)
from tests.support import DOCUMENTED, SWAPPED, Dmlconf


# -- Status ---------------------------------------------------------------------------------------
def test_a_status_is_its_name_as_text_and_in_json() -> None:
    assert [str(s) for s in STATUSES] == ["PASS", "QUALITY_WARNING", "FAIL", "ERROR", "TIMEOUT",
                                          "NOT_SUPPORTED", "XFAIL", "XPASS"]
    assert FAILING == (Status.FAIL, Status.ERROR, Status.TIMEOUT)
    assert PASSING == (Status.PASS, Status.QUALITY_WARNING, Status.XPASS)
    for status in STATUSES:
        assert status == status.value and isinstance(status, str)
        assert str(status) == f"{status}" == format(status) == status.value
        assert f"{status:>16}" == f"{status.value:>16}"
        assert json.dumps(status) == f'"{status.value}"'
        assert Status(json.loads(json.dumps(status))) is status
        assert {status.value: 1}[status] == 1 and {status: 1}[status.value] == 1
    assert json.dumps({Status.PASS: 2, Status.FAIL: 1}) == '{"PASS": 2, "FAIL": 1}'
    assert "FAIL" in FAILING and "PASS" not in FAILING
    with pytest.raises(ValueError):
        Status("MAYBE")


def test_a_result_takes_a_status_as_text_and_refuses_any_other() -> None:
    r = Result(id="a/b", status="FAIL")  # type: ignore[arg-type]
    assert r.status is Status.FAIL and r.to_json()["status"] == "FAIL"
    assert replace(r, status="XFAIL").status is Status.XFAIL  # type: ignore[arg-type]
    assert Result.from_json({"id": "a/b", "status": "PASS"}).status is Status.PASS
    for bad in ("MAYBE", "pass", "", None, 1):
        with pytest.raises(ValueError, match="is none of PASS, QUALITY_WARNING, FAIL"):
            Result(id="a/b", status=bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="status 'MAYBE' is none of"):
        r.status = "MAYBE"  # type: ignore[assignment]
    assert r.status is Status.FAIL


# -- a real run, read and written back --------------------------------------------------------
@pytest.mark.parametrize("options", [
    (),
    ("--shard", "2/3", "--execution-flags", "ALLOW_HALF_PRECISION_COMPUTATION"),
    ("--baseline", "{baseline}"),
])
def test_a_results_file_read_and_written_back_is_the_same_file(
        tmp_path: Path, dmlconf: Dmlconf, options: tuple[str, ...]) -> None:
    baseline = tmp_path / "baseline.yaml"
    baseline.write_text("- {cases: documented/depth_to_space1/*, status: FAIL, reason: x}\n"
                        "- {cases: gone/*, status: FAIL, reason: stale}\n", encoding="utf-8")
    dmlconf("--backend", SWAPPED, "--cases", str(DOCUMENTED), "--no-isolate",
            *(o.format(baseline=baseline) for o in options))
    path = tmp_path / "results.json"
    doc = results.read(path)
    # its JSON is the file's, key order included, and writing it gives the same bytes
    given = json.loads(path.read_text(encoding="utf-8"))
    assert doc.to_json() == given
    assert json.dumps(doc.to_json()) == json.dumps(given)
    results.write(doc, tmp_path / "again.json")
    assert (tmp_path / "again.json").read_bytes() == path.read_bytes()
    # the typed parts
    assert all(isinstance(r, Result) and isinstance(r.status, Status) for r in doc.results)
    assert isinstance(doc.execution, Execution) and doc.execution.isolated is False
    assert all(isinstance(v, Verdict) for v in doc.verdict.values())
    assert all(sum(v.counts.values()) == v.mandatory for v in doc.verdict.values())
    assert sum(doc.summary.values()) == len(doc.results)
    assert doc.summary[Status.PASS] == doc.summary["PASS"]  # type: ignore[index]
    if "--shard" in options:
        assert isinstance(doc.shard, Shard) and (doc.shard.index, doc.shard.count) == (2, 3)
        assert doc.execution_flags == ["ALLOW_HALF_PRECISION_COMPUTATION"]
    else:
        assert doc.shard is None
    if "--baseline" in options:
        assert isinstance(doc.baseline, BaselineSummary)
        assert doc.baseline.path == str(baseline) and len(doc.baseline.expected) == 2
        assert [e["cases"] for e in doc.baseline.stale] == ["gone/*"]
    # a document made by results.document is what read() gives back of its file
    assert doc == results.read(tmp_path / "again.json")


def test_a_merged_document_reads_back_as_it_was_written(tmp_path: Path,
                                                       dmlconf: Dmlconf) -> None:
    from conformance.cli import main

    for k in (1, 2):
        dmlconf("--backend", SWAPPED, "--cases", str(DOCUMENTED), "--no-isolate", "--shard",
                f"{k}/2", name=f"shard{k}.json")
    merged = tmp_path / "merged.json"
    main(["merge", str(tmp_path / "shard1.json"), str(tmp_path / "shard2.json"), "--json",
          str(merged)])
    doc = results.read(merged)
    assert isinstance(doc.execution, MergedExecution)
    assert [m.shard for m in doc.execution.merged] == ["1/2", "2/2"]
    assert all(isinstance(m.execution, Execution) for m in doc.execution.merged)
    results.write(doc, tmp_path / "again.json")
    assert (tmp_path / "again.json").read_bytes() == merged.read_bytes()


# -- what the format does not document, what an older document lacks -------------------------------
def _written(tmp_path: Path, doc: dict) -> Path:
    path = tmp_path / "r.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def _document(tmp_path: Path, dmlconf: Dmlconf) -> dict:
    dmlconf("--backend", SWAPPED, "--cases", str(DOCUMENTED), "--no-isolate", "-k",
            "depth_to_space1", "--shard", "1/1")
    return json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))


def test_unknown_fields_are_kept_where_they_are(tmp_path: Path, dmlconf: Dmlconf) -> None:
    given = _document(tmp_path, dmlconf)
    # a later suite's fields: at the top (before `results`), in each part and in a result
    given = {**dict(list(given.items())[:3]), "later": {"x": [1, 2]},
             **dict(list(given.items())[3:])}
    given["execution"]["load_s"] = 1.5
    given["shard"] = {"first": True, **given["shard"]}
    given["verdict"]["2_1"]["later"] = "y"
    given["platform"]["gpu"] = "none"
    given["results"][0]["later"] = [3]
    given["results"][1] = {"later": None, **given["results"][1]}
    path = _written(tmp_path, given)
    doc = results.read(path)
    assert doc.extra == {"later": {"x": [1, 2]}}
    assert isinstance(doc.execution, Execution) and doc.execution.extra == {"load_s": 1.5}
    assert isinstance(doc.shard, Shard) and doc.shard.extra == {"first": True}
    assert doc.verdict["2_1"].extra == {"later": "y"} and doc.platform.extra == {"gpu": "none"}
    assert doc.results[0].extra == {"later": [3]} and doc.results[1].extra == {"later": None}
    assert json.dumps(doc.to_json()) == json.dumps(given)  # the same keys, in the same order
    results.write(doc, tmp_path / "again.json")
    assert json.loads((tmp_path / "again.json").read_text(encoding="utf-8")) == given


def test_an_older_document_writes_back_without_the_newer_fields(tmp_path: Path,
                                                              dmlconf: Dmlconf) -> None:
    given = _document(tmp_path, dmlconf)
    for key in ("execution_flags", "diagnoses", "complete", "load_errors", "mustpass"):
        del given[key]
    for r in given["results"]:
        for key in ("data_types", "grids", "crash", "margin", "diagnosis", "waiver"):
            del r[key]
    for v in given["verdict"].values():
        for key in ("mustpass", "mustpass_run", "waivers", "TIMEOUT", "QUALITY_WARNING"):
            del v[key]
    doc = results.read(_written(tmp_path, given))
    # the fields it lacks read as the format says ...
    assert (doc.execution_flags, doc.complete, doc.load_errors) == ([], True, [])
    assert not doc.has("diagnoses") and doc.has("results")
    v = doc.verdict["2_1"]
    assert v.waivers == 0 and v.mustpass is None and not v.has("mustpass")
    assert v.count(Status.TIMEOUT) == 0 and Status.TIMEOUT not in v.counts
    assert doc.results[0].data_types == [] and not doc.results[0].has("data_types")
    # ... and are not written back
    assert json.dumps(doc.to_json()) == json.dumps(given)


def test_a_part_from_its_json_and_back() -> None:
    made = Verdict(conformant=True, mandatory=2, mustpass=2, mustpass_run=2, waivers=0,
                   counts=dict.fromkeys(STATUSES, 0) | {Status.PASS: 2})
    assert list(made.to_json()) == ["conformant", "mandatory", "mustpass", "mustpass_run",
                                    "waivers", "not_covered", *STATUSES]
    assert Verdict.from_json(made.to_json()) == made
    doc = ResultsDocument.from_json({"results": [{"id": "a", "status": "XFAIL", "extra": 1}]})
    assert doc.to_json() == {"results": [{"id": "a", "status": "XFAIL", "extra": 1}]}
    assert doc.results[0].extra == {"extra": 1} and doc.results[0].status is Status.XFAIL
