"""The C reader and judge of .expect files (dmlconf_vectors.h/.c) and its command line
(dmlconf_check.c), copied into every export (docs/vectors.md); and the bounded fuzz of that
checker under the sanitizers (fuzz.py with fuzz_harness.c: `python -m conformance.export.c.fuzz`,
docs/robustness.md, "Boundaries"), which no export carries."""
