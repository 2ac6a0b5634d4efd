"""Parallel and sharded runs: --workers N gives the results of a serial run apart from
timings; --shard K/N splits the selection deterministically; `dmlconf merge` joins the shards
into the document the whole run writes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conformance.casefile import case_set_hash, load_cases
from conformance.cli import main
from conformance.session import shards
from tests.support import DOCUMENTED, GENERATED, SWAPPED, Dmlconf, comparable, dmlconf_in

#: documented cases, the invalid family (rejections), the ties (ambiguous) and the large
#: family: PASS, FAIL with grids and mismatches, rejected descs, ambiguous results.
SELECTION = ["--cases", str(DOCUMENTED),
             "--cases", str(GENERATED / "invalid"),
             "--cases", str(GENERATED / "offsets" / "ties.yaml"),
             "--cases", str(GENERATED / "large")]


def run(dmlconf: Dmlconf, name: str, *args: str, backend: str = SWAPPED) -> tuple[int, dict]:
    """The SELECTION on backend, its results in NAME.json."""
    return dmlconf("--backend", backend, *SELECTION, *args, name=f"{name}.json")


@pytest.fixture(scope="module")
def serial(tmp_path_factory: pytest.TempPathFactory) -> dict:
    code, doc = run(dmlconf_in(tmp_path_factory.mktemp("serial")), "serial", "--no-isolate")
    assert code == 1 and doc["execution"]["isolated"] is False
    s = doc["summary"]
    assert s["PASS"] and s["FAIL"] and doc["ambiguous"]["PASS"], s
    assert any(r["grids"] for r in doc["results"])
    return doc


@pytest.mark.parametrize("workers", [1, 2, 3])
def test_workers_give_the_serial_results(serial: dict, dmlconf: Dmlconf, workers: int) -> None:
    code, doc = run(dmlconf, "parallel", "--workers", str(workers), "--isolate")
    assert code == 1
    assert doc["execution"]["workers"] == workers and doc["execution"]["isolated"] is True
    assert comparable(doc, "shard") == comparable(serial, "shard")


def test_each_worker_gets_its_share_of_the_cpus(dmlconf: Dmlconf,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    for variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMBA_NUM_THREADS"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("MKL_NUM_THREADS", "7")  # the user's own setting stays
    _, doc = run(dmlconf, "threads", "--workers", "2", "-k", "documented/strides")
    env = doc["execution"]["thread_environment"]
    assert "MKL_NUM_THREADS" not in env and set(env) >= {"OMP_NUM_THREADS",
                                                         "OPENBLAS_NUM_THREADS"}
    assert len(set(env.values())) == 1 and int(env["OMP_NUM_THREADS"]) >= 1


def test_shard_parse_and_deal() -> None:
    assert shards.parse("2/4") == (2, 4) and shards.parse(" 1 / 1 ") == (1, 1)
    for bad in ("0/3", "4/3", "1", "a/b", "1/0", "-1/2"):
        with pytest.raises(ValueError, match="give K/N with 1 <= K <= N"):
            shards.parse(bad)
    items = list(range(10))
    dealt = [shards.deal(items, k, 3) for k in (1, 2, 3)]
    assert dealt == [[0, 3, 6, 9], [1, 4, 7], [2, 5, 8]]
    assert sorted(i for share in dealt for i in share) == items


def test_shards_merge_into_the_whole_run(serial: dict, tmp_path: Path, dmlconf: Dmlconf,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    paths = []
    for k in (1, 2, 3):
        code, doc = run(dmlconf, f"shard{k}", "--shard", f"{k}/3", "--workers", "1")
        assert doc["shard"]["index"] == k and doc["shard"]["count"] == 3
        assert doc["shard"]["of_cases"] == len(serial["results"])
        assert doc["shard"]["full_case_set_sha256"] == serial["case_set_sha256"]
        assert doc["case_set_sha256"] != serial["case_set_sha256"]  # the shard's own cases
        paths.append(str(tmp_path / f"shard{k}.json"))
    capsys.readouterr()
    merged_path = tmp_path / "merged.json"
    html = tmp_path / "merged.html"
    code = main(["merge", *reversed(paths), "--json", str(merged_path), "--html", str(html)])
    assert code == 1  # the swapped-order backend fails
    merged = json.loads(merged_path.read_text())
    assert merged["shard"] is None and merged["complete"] is True
    assert comparable(merged, "shard", "platform") == comparable(serial, "shard", "platform")
    assert [m["shard"] for m in merged["execution"]["merged"]] == ["1/3", "2/3", "3/3"]
    assert merged["command"].startswith("dmlconf merge ")
    assert "NOT conformant" in capsys.readouterr().out and html.stat().st_size > 1000


def test_merge_refuses_what_is_not_one_run(serial: dict, tmp_path: Path, dmlconf: Dmlconf,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    docs = {}
    for k in (1, 2):
        _, docs[k] = run(dmlconf, f"s{k}", "--shard", f"{k}/2")
    whole = tmp_path / "whole.json"
    whole.write_text(json.dumps(serial))
    capsys.readouterr()

    def merge(*names: str) -> tuple[int, str]:
        code = main(["merge", *(str(tmp_path / n) for n in names),
                     "--json", str(tmp_path / "m.json")])
        return code, capsys.readouterr().err

    assert merge("s1.json") == (2, "dmlconf: error: shard 2/2 missing: merge needs the "
                                   "results of every shard\n")
    code, err = merge("s1.json", "s1.json")
    assert code == 2 and "are both shard 1/2" in err
    code, err = merge("s1.json", "whole.json")
    assert code == 2 and "whole.json is not one shard's results" in err
    other = dict(docs[2], backend={**docs[2]["backend"], "name": "numpy"})
    (tmp_path / "other.json").write_text(json.dumps(other))
    code, err = merge("s1.json", "other.json")
    assert code == 2 and "their backends differ" in err
    (tmp_path / "junk.json").write_text("{")
    code, err = merge("s1.json", "junk.json")
    assert code == 2 and "junk.json" in err
    assert not (tmp_path / "m.json").exists()


def test_a_shard_of_an_empty_share_is_an_empty_document(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    args = ["run", "-q", "--json", str(out), "--cases", str(DOCUMENTED),
            "-k", "documented/depth_to_space/example"]
    assert main([*args, "--shard", "2/2"]) == 0
    doc = json.loads(out.read_text())
    assert doc["results"] == [] and doc["shard"]["cases"] == 0 and doc["shard"]["of_cases"] == 1
    cases = load_cases([DOCUMENTED])
    assert doc["shard"]["full_case_set_sha256"] == case_set_hash(
        [c for c in cases if c.id == "documented/depth_to_space/example"])


# the whole committed suite in two shards: 13-20 s, in CI's certification step
@pytest.mark.certification
def test_two_shards_of_the_suite_have_no_verdict_and_merge_into_a_conformant_run(
        tmp_path: Path, dmlconf: Dmlconf, capsys: pytest.CaptureFixture[str]) -> None:
    # Each shard covers a part of every mustpass list (docs/mustpass.md); merged, all of it.
    paths = []
    for k in (1, 2):
        code, doc = dmlconf("--shard", f"{k}/2", name=f"half{k}.json")
        assert code == 0
        for level, v in doc["verdict"].items():
            assert v["conformant"] is None and 0 < v["mustpass_run"] < v["mustpass"], level
        paths.append(str(tmp_path / f"half{k}.json"))
    assert "mustpass cases run: no verdict" in capsys.readouterr().out
    merged_path = tmp_path / "merged.json"
    assert main(["merge", *paths, "--json", str(merged_path)]) == 0
    merged = json.loads(merged_path.read_text())
    for level, v in merged["verdict"].items():
        assert v["conformant"] is True and v["mustpass_run"] == v["mustpass"] > 0, level
    assert "feature level 6_4: conformant" in capsys.readouterr().out


@pytest.mark.parametrize("workers", [1, 2])
def test_processes_launched_while_loading_run_the_cases_or_are_stopped(
        tmp_path: Path, workers: int) -> None:
    """select(launch=True) starts a whole run's workers before the cases are built (issue 16):
    start() hands them to the runner, which runs the cases on them; a run that does not start
    stops them."""
    from conformance.session.run import RunOptions, Session

    def session() -> Session:
        return Session(RunOptions(backend="numpy", cases=(str(DOCUMENTED),), isolate=True,
                                  workers=workers, json=str(tmp_path / "r.json")))

    unused = session()
    unused.select(launch=True)
    pool = unused.pool
    assert pool is not None and unused.execution is not None and unused.execution.isolated
    processes = ([j.process for j in pool.judges] if workers > 1
                 else [pool.slot.worker.process])
    assert len(processes) == workers and all(p.is_alive() for p in processes)
    unused.close()
    assert unused.pool is None and not any(p.is_alive() for p in processes)

    used = session()
    used.select(launch=True)
    launched = used.pool
    with used:
        runner = used.start()
        assert runner.pool is launched and used.pool is None
        found = used.run()
    assert {r.status for r in found} == {"PASS"} and len(found) == len(used.cases)
