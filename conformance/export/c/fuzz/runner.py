"""The checker fuzz's runs: the program built under AddressSanitizer and
UndefinedBehaviorSanitizer (build), the mutated inputs run through it in batches in one process
(fuzz_harness.c) or one process each, and what crashes or is slow saved (Fuzzer, fuzz)."""

from __future__ import annotations

import collections
import hashlib
import os
import random
import re
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from conformance.export.c.fuzz.corpus import C_FOLDER, CORPUS, Seed, load_corpus, make_corpus
from conformance.export.c.fuzz.mutate import Input, Mutator

#: The program fuzzed by default: the checker's command line and the reader it is built on.
CHECKER_SOURCES = (C_FOLDER / "dmlconf_check.c", C_FOLDER / "dmlconf_vectors.c")
HARNESS = C_FOLDER / "fuzz_harness.c"
SANITIZE = ("-fsanitize=address,undefined", "-fno-sanitize-recover=all")
CFLAGS = ("-std=c99", "-g", "-O1", "-fno-omit-frame-pointer")
#: The exit status the sanitizers are told to use (theirs is 1, a checker's QUALITY_WARNING).
SANITIZER_EXIT = 86
SANITIZER_ENV = {
    "ASAN_OPTIONS": f"exitcode={SANITIZER_EXIT}:detect_leaks=1:allocator_may_return_null=1"
                    ":handle_abort=1",
    "UBSAN_OPTIONS": f"exitcode={SANITIZER_EXIT}:halt_on_error=1:print_stacktrace=1",
    "LSAN_OPTIONS": f"exitcode={SANITIZER_EXIT}",
}
#: Words of a sanitizer's report on standard error.
REPORT_MARKS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:",
                "Sanitizer:DEADLYSIGNAL", "SUMMARY: ")
STATUS = {"0": "PASS", "1": "QUALITY_WARNING", "2": "FAIL", "3": "ERROR"}


class BuildError(Exception):
    """The program could not be built with the sanitizers (the compiler's words)."""


# -- building ---------------------------------------------------------------------------------
def compiler() -> str | None:
    """$CC, else cc, gcc or clang: the first found."""
    for name in (os.environ.get("CC"), "cc", "gcc", "clang"):
        if name and shutil.which(name):
            return shutil.which(name)
    return None


def build(out: Path, sources: Sequence[Path] = CHECKER_SOURCES, cc: str | None = None,
          persistent: bool = False, sanitize: bool = True) -> Path:
    """Compile sources (a program with the checker's command line) into out: under the
    sanitizers unless sanitize is False; persistent: with fuzz_harness.c, the program's main
    renamed, to run many inputs in one process. Raises BuildError saying why it could not."""
    cc = cc or compiler()
    if cc is None:
        raise BuildError("no C compiler (cc, gcc, clang; or $CC)")
    includes = sorted({f"-I{Path(s).resolve().parent}" for s in sources})
    command = [cc, *CFLAGS, *(SANITIZE if sanitize else ()), *includes, "-o", str(out),
               *map(str, sources)]
    if persistent:
        command += ["-Dmain=dmlconf_check_main", str(HARNESS)]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise BuildError(f"{' '.join(command)}\n{done.stderr.strip()}")
    return out


# -- running ----------------------------------------------------------------------------------
@dataclass
class Crash:
    """A crashing input, saved: its folder, the mutations that made it, the report's summary,
    and whether it crashes a fresh process of the command line alone (None: not tried)."""

    folder: Path
    made: list[str]
    summary: str
    alone: bool | None


@dataclass
class Report:
    executions: int = 0
    seconds: float = 0.0
    seed: int = 0
    crashes: list[Crash] = field(default_factory=list)
    slow: list[Path] = field(default_factory=list)
    statuses: collections.Counter[str] = field(default_factory=collections.Counter)
    first_crash_at: int | None = None  # executions made when the first crash was found
    repeats: int = 0  # crashing inputs whose report's summary an earlier crash had

    def line(self) -> str:
        crashes = len(self.crashes)
        return (f"checker fuzz: {self.executions:,} executions in {self.seconds:.0f} s, "
                f"{crashes} crash{'es' if crashes != 1 else ''} (seed {self.seed})")


def _arguments(case: Input, work: Path, name: str) -> list[str]:
    """The command line's arguments for an input, its files written under work."""
    expect = work / f"{name}.expect"
    expect.write_bytes(case.expect)
    args = [str(expect)]
    for k, buf in enumerate(case.buffers):
        seeded = [p for b, p in zip(case.seed.buffers, case.seed.paths, strict=True) if b is buf]
        if seeded:
            args.append(str(seeded[0]))
        else:
            path = work / f"{name}.{k}.bin"
            path.write_bytes(buf)
            args.append(str(path))
    if case.fill is not None:
        args += ["--fill", str(case.fill)]
    return args


def sanitizer_report(stderr: str) -> str:
    """The sanitizer's report in a program's standard error (from its first line), or ''."""
    lines = stderr.splitlines()
    for i, line in enumerate(lines):
        if any(mark in line for mark in REPORT_MARKS[:4]):
            return "\n".join(lines[max(0, i - 1):])
    return ""


def _summary(stderr: str, returncode: int) -> str:
    for line in stderr.splitlines():
        if line.startswith("SUMMARY: "):
            return line.removeprefix("SUMMARY: ")
    for line in stderr.splitlines():
        if "runtime error:" in line:
            return line.strip()
    if returncode < 0:
        try:
            return f"killed by {signal.Signals(-returncode).name}"
        except ValueError:
            return f"killed by signal {-returncode}"
    return f"exit status {returncode}"


def _signature(summary: str) -> str:
    """A report's summary without addresses, the in-process main named as the program's."""
    return re.sub(r"0x[0-9a-f]+", "0x", summary.replace("dmlconf_check_main", "main"))


def sanitized_environment() -> dict[str, str]:
    """This process's environment with the sanitizers' options (SANITIZER_ENV)."""
    return {**os.environ, **SANITIZER_ENV}


def _run_alone(program: Path, args: Sequence[str], timeout: float
               ) -> subprocess.CompletedProcess[str] | None:
    """One process of the command line (None: slower than timeout)."""
    try:
        return subprocess.run([str(program), *args], capture_output=True, text=True,
                              errors="replace", timeout=timeout, env=sanitized_environment())
    except subprocess.TimeoutExpired:
        return None


def _crashed(done: subprocess.CompletedProcess[str]) -> bool:
    return (done.returncode not in (0, 1, 2, 3)
            or bool(sanitizer_report(done.stderr)))


class Fuzzer:
    """Runs mutated inputs through a sanitized build of the program, saving what crashes."""

    def __init__(self, seeds: Sequence[Seed], seed: int, out: Path, work: Path,
                 sources: Sequence[Path] = CHECKER_SOURCES, cc: str | None = None,
                 aware: bool = True, per_process: bool = False, timeout: float = 2.0,
                 batch: int = 256, fail_on_slow: bool = False) -> None:
        self.mutator = Mutator(seeds, random.Random(seed), aware)
        self.out, self.work = Path(out), Path(work)
        self.sources, self.cc = list(sources), cc
        self.per_process, self.timeout, self.batch = per_process, timeout, batch
        self.fail_on_slow = fail_on_slow
        self.report = Report(seed=seed)
        self.program = build(self.work / "program", self.sources, cc)
        self.harness = None if per_process else build(self.work / "harness", self.sources, cc,
                                                      persistent=True)

    def run(self, seconds: float, max_crashes: int = 1,
            max_executions: int | None = None) -> Report:
        """Fuzz for seconds (or max_executions), until max_crashes crashes (0: no limit)."""
        started = time.perf_counter()
        report = self.report
        while time.perf_counter() - started < seconds and (
                not max_crashes or len(report.crashes) < max_crashes) and (
                max_executions is None or report.executions < max_executions):
            n = self.batch if max_executions is None else min(
                self.batch, max_executions - report.executions)
            inputs = [self.mutator.mutate() for _ in range(1 if self.per_process else n)]
            if self.per_process:
                self._one(inputs[0])
            else:
                self._batch(inputs)
        report.seconds = time.perf_counter() - started
        return report

    def _one(self, case: Input) -> None:
        args = _arguments(case, self.work, "input")
        done = _run_alone(self.program, args, self.timeout)
        self.report.executions += 1
        if done is None:
            self._slow(case, args)
        elif _crashed(done):
            self._crash(case, args, done.stderr, done.returncode, alone=True)
        else:
            self.report.statuses[STATUS.get(str(done.returncode), "?")] += 1

    def _batch(self, inputs: list[Input]) -> None:
        assert self.harness is not None
        lines = [_arguments(case, self.work, f"i{k}") for k, case in enumerate(inputs)]
        manifest, status = self.work / "manifest", self.work / "status"
        manifest.write_text("".join("\t".join(a) + "\n" for a in lines), encoding="utf-8")
        with open(self.work / "stderr", "w+b") as err:
            try:
                command = [str(self.harness), str(manifest), str(status),
                           str(max(1, round(self.timeout)))]
                done = subprocess.run(command, stdin=subprocess.DEVNULL,
                                      stdout=subprocess.DEVNULL, stderr=err,
                                      env=sanitized_environment(),
                                      timeout=self.timeout * (len(inputs) + 1) + 30)
                returncode = done.returncode
            except subprocess.TimeoutExpired:
                returncode = -signal.SIGKILL
            err.seek(0)
            stderr = err.read().decode("utf-8", "replace")
        statuses = status.read_text(encoding="ascii", errors="replace") if status.exists() else ""
        if returncode == 2 and not statuses and not sanitizer_report(stderr):
            raise RuntimeError(f"the fuzz harness failed: {stderr.strip()}")
        report = self.report
        report.executions += len(statuses)
        for s in statuses:
            report.statuses[STATUS.get(s, "?")] += 1
        if returncode == 0 and len(statuses) == len(inputs):
            return
        if len(statuses) < len(inputs):  # the input after the last status ended the process
            report.executions += 1
            case, args = inputs[len(statuses)], lines[len(statuses)]
            if returncode == -signal.SIGALRM:
                self._slow(case, args)
            else:
                self._crash(case, args, stderr, returncode, alone=None)
            return
        # Every input ran, then the process failed (a leak, reported at exit): find which.
        for case, args in zip(inputs, lines, strict=True):
            alone = _run_alone(self.program, args, self.timeout)
            if alone is not None and _crashed(alone):
                self._crash(case, args, alone.stderr, alone.returncode, alone=True)
                return
        self._crash(inputs[-1], lines[-1], stderr, returncode, alone=False)

    def _save(self, case: Input, args: Sequence[str], kind: str, text: str) -> Path:
        digest = hashlib.sha256(case.expect + b"".join(case.buffers)).hexdigest()[:12]
        folder = self.out / f"{kind}-{digest}"
        folder.mkdir(parents=True, exist_ok=True)
        saved = []
        for k, arg in enumerate(args):
            source = Path(arg)
            if arg.startswith("--") or (k and args[k - 1] == "--fill") or not source.is_file():
                saved.append(arg)
                continue
            name = "input.expect" if k == 0 else f"input.{k - 1}.bin"
            shutil.copyfile(source, folder / name)
            saved.append(name)
        (folder / "command.txt").write_text(
            f"cd {folder} && dmlconf_check {' '.join(saved)}\n"
            f"mutations: {', '.join(case.made)} (seed folder {case.seed.name})\n",
            encoding="utf-8")
        (folder / "report.txt").write_text(text, encoding="utf-8")
        return folder

    def _slow(self, case: Input, args: Sequence[str]) -> None:
        folder = self._save(case, args, "slow", f"slower than {self.timeout} s\n")
        self.report.slow.append(folder)
        if self.fail_on_slow:
            self.report.crashes.append(Crash(folder, case.made, "slow", None))

    def _crash(self, case: Input, args: Sequence[str], stderr: str, returncode: int,
               alone: bool | None) -> None:
        report = self.report
        if report.first_crash_at is None:
            report.first_crash_at = report.executions
        if _signature(_summary(stderr, returncode)) in {
                _signature(c.summary) for c in report.crashes}:
            report.repeats += 1
            return
        if alone is None:  # found in a batch: does it crash a fresh process of its own?
            again = _run_alone(self.program, args, self.timeout)
            alone = again is not None and _crashed(again)
            if again is not None and alone:
                stderr, returncode = again.stderr, again.returncode
        text = sanitizer_report(stderr) or stderr[-20000:] or f"exit status {returncode}"
        folder = self._save(case, args, "crash", text + "\n")
        report.crashes.append(Crash(folder, case.made, _summary(stderr, returncode), alone))


def _work_folder() -> Path:
    shm = Path("/dev/shm")
    base = shm if shm.is_dir() and os.access(shm, os.W_OK) else None
    return Path(tempfile.mkdtemp(prefix="dmlconf-checker-fuzz-", dir=base))


def fuzz(seconds: float = 60.0, seed: int = 0, corpus: Path | None = None,
         out: Path | None = None, sources: Sequence[Path] = CHECKER_SOURCES,
         cc: str | None = None, aware: bool = True, per_process: bool = False,
         timeout: float = 2.0, max_crashes: int = 1, max_executions: int | None = None,
         fail_on_slow: bool = False) -> Report:
    """Build the program under the sanitizers and fuzz it (the package's docstring says how).
    corpus: the seed folder (default: the committed one); out: where crashing and slow inputs
    go (default: a folder of the temporary directory). Raises BuildError where it cannot be
    built."""
    work = _work_folder()
    try:
        if corpus is None and not CORPUS.is_dir():
            corpus = work / "corpus"
            make_corpus(corpus)
        seeds = load_corpus(corpus or CORPUS)
        if out is None:
            out = Path(tempfile.gettempdir()) / "dmlconf-checker-fuzz" / f"seed-{seed}"
        fuzzer = Fuzzer(seeds, seed, out, work, sources, cc, aware, per_process, timeout,
                        fail_on_slow=fail_on_slow)
        return fuzzer.run(seconds, max_crashes, max_executions)
    finally:
        shutil.rmtree(work, ignore_errors=True)
