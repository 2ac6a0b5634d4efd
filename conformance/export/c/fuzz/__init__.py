"""A bounded fuzz of the C checker (dmlconf_check.c over dmlconf_vectors.c) under AddressSanitizer
and UndefinedBehaviorSanitizer, for CI (issue 24; docs/robustness.md, "Boundaries"):

    python -m conformance.export.c.fuzz --seconds 60 [--seed N]

The checker is built with `-fsanitize=address,undefined -fno-sanitize-recover=all` (gcc or
clang, nothing else) and run on mutations of a seed corpus of real exported files (an .expect
and the output buffers it judges; tests/export/checker_corpus, made by `--make-corpus` from the
committed suite). Any sanitizer report, or a signal, is a crash: its input is saved (the .expect,
the buffers, the command line and the report) and its folder printed, and the command exits 1.
At the end it prints the executions made and the time taken:

    checker fuzz: 12,345 executions in 60 s, 0 crashes (seed 7)

Mutations. Format-blind ones, as any fuzzer makes: bit flips, bytes set to 0, 0x7f, 0x80 or
0xff, 4- and 8-byte words set to boundary values (0, 2^31, 2^32 - 1, 2^63, 2^64 - 1, ...),
truncations, deletions, duplications, splices with another seed, inserted bytes. Format-aware
ones, which know where the .expect's integer fields are (layout(), the reader's own walk) and
keep the format's own agreements so as to get past its consistency checks to the arithmetic
behind them: a field set to a boundary value of its width; a reshape of a dimension on every
tensor of the file at once (the two sides of a relation must agree on their shape); a size and
a stride chosen so that (size - 1) * stride * element size lands on 2^32, 2^63 or 2^64 (the
extent arithmetic's wrap-around); TotalTensorSizeInBytes set to a boundary or to the buffer's
length. And the buffers (cut, lengthened, bytes changed), --fill and the number of buffers given.

Runs. By default the checker's main runs in one process per batch of inputs (fuzz_harness.c:
thousands of executions per second where a process each gives about a hundred); a crash found
so is run again alone, in a fresh process of the real command line, to say whether it
reproduces there. --per-process runs one process of the command line per input. A run slower
than --timeout seconds is a slow input: saved and counted apart (a legal file may ask for up to
2^32 - 1 elements), not a crash unless --fail-on-slow.
"""

from conformance.export.c.fuzz.cli import main
from conformance.export.c.fuzz.corpus import (
    CORPUS,
    Field,
    Layout,
    Seed,
    TensorAt,
    layout,
    load_corpus,
    make_corpus,
)
from conformance.export.c.fuzz.mutate import Input, Mutator
from conformance.export.c.fuzz.runner import (
    CHECKER_SOURCES,
    SANITIZER_ENV,
    BuildError,
    Crash,
    Fuzzer,
    Report,
    build,
    compiler,
    fuzz,
    sanitized_environment,
    sanitizer_report,
)

__all__ = ["CHECKER_SOURCES", "CORPUS", "SANITIZER_ENV", "BuildError", "Crash", "Field",
           "Fuzzer", "Input", "Layout", "Mutator", "Report", "Seed", "TensorAt", "build",
           "compiler", "fuzz", "layout", "load_corpus", "main", "make_corpus",
           "sanitized_environment", "sanitizer_report"]
