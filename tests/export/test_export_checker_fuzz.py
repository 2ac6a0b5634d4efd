"""The bounded fuzz of the C checker (conformance/export/c/fuzz.py; CI runs it for 60 s,
docs/robustness.md, "Boundaries"): its seed corpus is real exported files the checker passes,
its walk of the .expect format reads them whole, and it is no no-op: run on a checker with
planted bugs (planted_checker.c: the unchecked extent arithmetic of issue 24, and a signed
overflow) it finds both, saves the inputs and says where; run briefly on the real checker, its
inputs reach the judge's verdicts (not only the reader's errors) and it finds nothing. The fuzz
runs take a few seconds each (a fixed seed, a fixed number of executions): integration tier."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from conformance.export.c import fuzz

PLANTED = Path(__file__).resolve().with_name("planted_checker.c")
REMAKE = "python -m conformance.export.c.fuzz --make-corpus tests/export/checker_corpus"


def test_the_corpus_is_small_and_read_whole_by_the_format_walk() -> None:
    seeds = fuzz.load_corpus(fuzz.CORPUS)
    assert len(seeds) >= 40
    assert sum(len(s.expect) + sum(map(len, s.buffers)) for s in seeds) < 300_000
    kinds = {s.name.split("-")[0] for s in seeds}
    assert kinds == {"output", "relation"}
    for s in seeds:
        lay = fuzz.layout(s.expect)
        assert lay.complete, f"{s.name}: not read whole: the format changed? ({REMAKE})"
        assert len(lay.tensors) == len(s.buffers) == (2 if s.name.startswith("relation") else 1)
    assert any(s.layout.take_axis is not None for s in seeds)
    assert any("padded" in s.name for s in seeds) and any("within" in s.name for s in seeds)


def test_every_seed_passes_the_checker(checker: Path) -> None:
    """The seeds are real: the reference's buffers pass their own .expect."""
    for s in fuzz.load_corpus(fuzz.CORPUS):
        expect = fuzz.CORPUS / s.name / "check.expect"
        done = subprocess.run([str(checker), str(expect), *map(str, s.paths)],
                              capture_output=True, text=True)
        assert done.returncode == 0 and done.stdout.startswith("PASS: "), (
            s.name, done.stdout, done.stderr, f"remake the corpus? ({REMAKE})")


@pytest.mark.integration
def test_the_fuzz_finds_the_planted_overflow_and_says_where(
        sanitizers: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status = fuzz.main(["--seed", "7", "--seconds", "60", "--max-executions", "5000",
                        "--source", str(PLANTED), "--cc", sanitizers,
                        "--out", str(tmp_path / "crashes")])
    out = capsys.readouterr().out
    assert status == 1, out
    crash = re.search(r"^CRASH: AddressSanitizer: SEGV \S*planted_checker\.c:\d+ in main "
                      r"\(crashes a fresh process alone; mutations: .*\): (\S+)$", out, re.M)
    assert crash, out
    folder = Path(crash.group(1))
    assert folder.parent == tmp_path / "crashes"
    assert {p.name for p in folder.iterdir()} >= {"input.expect", "command.txt", "report.txt"}
    assert "ERROR: AddressSanitizer: SEGV" in (folder / "report.txt").read_text()
    found = re.search(r"^first crash after ([\d,]+) executions$", out, re.M)
    assert found and int(found.group(1).replace(",", "")) <= 5000, out
    assert re.search(r"^checker fuzz: [\d,]+ executions in \d+ s, 1 crash \(seed 7\), "
                     r"[\d,]+ executions/s$", out, re.M), out
    # the saved input crashes the planted program again (a fresh, plain-argument run)
    program = fuzz.build(tmp_path / "planted", [PLANTED], sanitizers)
    buffers = sorted(folder.glob("input.*.bin"))
    again = subprocess.run([str(program), str(folder / "input.expect"), *map(str, buffers)],
                           capture_output=True, text=True, env=fuzz.sanitized_environment())
    assert "AddressSanitizer" in fuzz.sanitizer_report(again.stderr), again.stderr


@pytest.mark.integration
@pytest.mark.certification  # 4,000 sanitized executions: 40 s
def test_the_fuzz_reports_undefined_behaviour_too(sanitizers: str, tmp_path: Path) -> None:
    # 4,000 executions: with the corpus of format 2 (95 seeds) seed 1 reaches the overflow
    # after 2,000 (1,000 sufficed with 91 seeds)
    report = fuzz.fuzz(seconds=60, seed=1, sources=[PLANTED], cc=sanitizers,
                       out=tmp_path / "crashes", max_crashes=0, max_executions=4000)
    summaries = [c.summary for c in report.crashes]
    assert any(s.startswith("AddressSanitizer: SEGV") for s in summaries), summaries
    assert any("runtime error: signed integer overflow" in s for s in summaries), summaries
    assert report.executions == 4000 and len(report.crashes) == 2  # the others repeat them
    assert report.repeats > 0


@pytest.mark.integration
def test_the_fuzz_of_the_checker_reaches_the_verdicts_and_finds_nothing(
        sanitizers: str, tmp_path: Path) -> None:
    report = fuzz.fuzz(seconds=60, seed=7, cc=sanitizers, out=tmp_path / "crashes",
                       max_executions=3000)
    assert not report.crashes, [(c.summary, c.folder) for c in report.crashes]
    assert report.executions == 3000
    assert set(report.statuses) >= {"PASS", "FAIL", "ERROR"}, report.statuses  # the judge too
    assert report.line().startswith("checker fuzz: 3,000 executions in ")
