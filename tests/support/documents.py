"""Results documents made by hand, for the tests of the reports (conformance.report): a result
and a document of any results, a crash, every kind of row, a document of thousands of cases, and
one whose every string carries markup, script and control characters."""

from __future__ import annotations

import contextlib
import functools
import io
import json
import tempfile
from pathlib import Path

from conformance.results import FORMAT, NOT_RECOGNISED, STATUSES, Result, ResultsDocument


def as_result(r: dict) -> Result:
    """One result made here as its JSON (result() or a part of one), typed, its text kept as
    given (typed()); PASS where it gives no status (a test of what the reports read of the
    other fields)."""
    return typed({"results": [{"status": "PASS", **r}]}).results[0]


def typed(doc: dict | ResultsDocument) -> ResultsDocument:
    """A results document made here as its JSON (a dict, as a results file holds it: the
    documents below are, so that a test can edit any field, wrongly typed ones included), typed
    as conformance.results.read gives it (the reports take the typed document), but with its
    text as it is: read() sanitises a file's text (safe_text) and a Result sanitises what it is
    given, while a hand-made document tests that the reports stand any text themselves (a
    control character, a lone surrogate), so its results keep the text given."""
    if isinstance(doc, ResultsDocument):
        return doc
    out = ResultsDocument.from_json(doc)
    for r, given in zip(out.results, doc.get("results") or [], strict=True):
        if isinstance(r, Result) and isinstance(given, dict):
            for key, value in given.items():
                if key in r.__dict__ and key != "status":
                    object.__setattr__(r, key, value)  # past Result's sanitising __setattr__
    return out


def result(case_id: str, status: str, message: str = "", **extra: object) -> dict:
    """One result as a results document holds it, with `extra` fields set."""
    r = {"id": case_id, "status": status, "message": message, "duration_s": 0.001,
         "operators": ["DEPTH_TO_SPACE1"], "feature_level": "2_1",
         "feature_level_below": None, "tags": [], "spec": [], "ambiguous": None, "info": [],
         "mismatches": []}
    r.update(extra)
    return r


def document(results: list[dict]) -> dict:
    """A results document of these results (its summary counted from them)."""
    def counts(rs: list[dict]) -> dict[str, int]:
        return {s: sum(r["status"] == s for r in rs) for s in STATUSES}

    return {"format": FORMAT, "suite_version": "0.1.0", "case_set_sha256": "ab" * 32,
            "case_paths": ["cases"], "command": "dmlconf run --backend x|y",
            "backend": {"name": "x|y", "class": "m.X", "capabilities": {}},
            "feature_level": "2_1",
            "platform": {"system": "Linux", "release": "6", "machine": "x86_64",
                         "python": "3.11", "numpy": "2.0"},
            "started_at": "2025-01-31T09:12:03+00:00", "finished_at": "2025-01-31T09:12:04+00:00",
            "duration_s": 0.5, "summary": counts(results),
            "ambiguous": counts([r for r in results if r["ambiguous"]]),
            "verdict": {"2_0": {"conformant": None, "mandatory": 0, **counts([])},
                        "2_1": {"conformant": False, "mandatory": 4, "PASS": 1, "FAIL": 2,
                                "ERROR": 1, "NOT_SUPPORTED": 0}},
            "results": results}


#: what a worker killed by SIGSEGV leaves in its result
CRASH = {"exit_code": -11, "signal": "SIGSEGV",
         "output": "Fatal Python error: Segmentation fault\n\nCurrent thread:\n  File x.py"}


#: payloads of markup and script for every string of a hostile document
PAYLOADS = ["<script>window.__pwned=1</script>", '<img src=x onerror="window.__pwned=1">',
            '"><svg onload="window.__pwned=1">',
            "</pre></td></tr></table><script>window.__pwned=1</script>", "{{7*7}}",
            "javascript:window.__pwned=1"]
EVIL = " ".join(PAYLOADS)
EVIL_URL = "javascript:window.__pwned=1"


def hostile_document(control: str = "") -> dict:
    """A results document whose every string field carries the PAYLOADS (and `control`, e.g.
    control characters, where given): one result per status and one ambiguous TIMEOUT, each
    with a diagnosis of payloads and a margin (a payload for the ERROR's); payloads for the
    execution flags and the reading keys of `diagnoses` too."""
    evil = EVIL + control
    results = []
    for i, status in enumerate(("FAIL", "ERROR", "TIMEOUT", "NOT_SUPPORTED", "XFAIL", "XPASS",
                                "TIMEOUT", "QUALITY_WARNING")):
        p = PAYLOADS[i % len(PAYLOADS)]
        results.append(result(
            f"generated/{p}/case-{i}/{p}{control}/float32", status, f"{evil} | pipe\n{evil}",
            operators=[p, "DEPTH_TO_SPACE1"], feature_level=p, tags=[p, evil], info=[evil],
            ambiguous=evil if i == 6 else None,
            spec=[{"page": evil, "section": evil, "url": EVIL_URL},
                  {"page": p, "section": p, "url": f"https://example.com/{p}"}],
            mismatches=[{"tensor": evil, "index": [0, p], "expected": evil, "got": evil}],
            grids=[{"tensor": evil, "shape": [1, 2], "got": [p, evil], "expected": [evil, p],
                    "bad": [1, 0], "error": [p, 0.5]}],
            crash={"exit_code": p, "signal": evil, "output": f"{evil}\n{evil}"},
            margin=evil if i == 1 else 0.9 / (i + 1),
            diagnosis={"readings": [p, evil], "text": f"the output equals {evil}"}))
    doc = document(results)
    caps = {"feature_level": evil, "strided": evil, "arbitrary_offsets": evil,
            "offset_pairs": evil, "rejects_invalid": evil, "operators": {evil: [evil, evil]},
            "notes": evil}
    doc.update(suite_version=evil, case_set_sha256=evil, case_paths=[evil, EVIL_URL],
               command=evil, backend={"name": evil, "class": evil, "capabilities": caps},
               feature_level=evil, platform={k: evil for k in doc["platform"]},
               started_at=evil, finished_at=evil, complete=False,
               load_errors=[{"file": evil, "line": 7, "message": evil},
                            {"file": EVIL_URL, "line": None, "message": evil}],
               execution={"workers": evil, "isolated": evil, "timeout_s": evil,
                          "memory_cap_bytes": evil, evil: evil},
               shard={"index": evil, "count": evil, "cases": evil, "of_cases": evil,
                      "full_case_set_sha256": evil},
               baseline={"path": evil, "xpass": [evil], "stale": [{"cases": evil}]},
               execution_flags=[evil, PAYLOADS[1]],
               diagnoses={evil: 2, PAYLOADS[1]: 1, NOT_RECOGNISED: 1, "x": evil})
    return doc


MARKUP = "<script>alert(1)</script>"
MARKUP_ID = f"generated/weird/{MARKUP}/</script>/float32"
MARKUP_MESSAGE = f"OutputTensor: {MARKUP} and </script><b>bold</b> & \"quotes\""

OPERATORS = ["DEPTH_TO_SPACE", "DEPTH_TO_SPACE1", "SPACE_TO_DEPTH", "SPACE_TO_DEPTH1",
             "RESAMPLE", "RESAMPLE1"]
TYPES = ["float32", "float16", "uint8", "uint32", "int8", "int32"]
FAMILIES = ["layouts", "offsets", "roundtrip", "tables", "bitlevel"]


def synthetic_document(cases: int = 6000, failures: int = 500) -> dict:
    """A results document of `cases` cases, `failures` of them FAILs with 5 mismatches each
    (the rest PASS), over 6 operators x 6 data types x 5 families."""
    results = []
    every = max(1, cases // failures) if failures else cases + 1
    failed = 0
    for i in range(cases):
        op, dtype = OPERATORS[i % len(OPERATORS)], TYPES[(i // 6) % len(TYPES)]
        family = FAMILIES[(i // 36) % len(FAMILIES)]
        case_id = f"generated/{family}/{op.lower()}/case-{i}/{dtype}"
        spec = [{"page": f"DML_{op}_OPERATOR_DESC", "section": "Remarks",
                 "url": f"https://learn.microsoft.com/windows/win32/api/directml/"
                        f"ns-directml-dml_{op.lower()}_operator_desc"}]
        if i % every == 0 and failed < failures:
            failed += 1
            mismatches = [{"tensor": "OutputTensor", "index": [0, 0, j, 1],
                           "expected": str(9 + j), "got": str(18 + j)} for j in range(5)]
            message = ("OutputTensor: 36 of 48 elements differ (bit-exact, the case's "
                       "values): " + "; ".join(f"[0, 0, {j}, 1] expected {9 + j}, got {18 + j}"
                                               for j in range(5)) + "; and 31 more")
            results.append(result(case_id, "FAIL", message, operators=[op],
                                  tags=[family, op.lower()], spec=spec,
                                  mismatches=mismatches))
        else:
            results.append(result(case_id, "PASS", operators=[op], tags=[family, op.lower()],
                                  spec=spec))
    return document(results)


WARNED_ID = "generated/tables/resample1/w/float16"


def mixed_document() -> dict:
    """Every kind of row: a markup id and message, ambiguous, XFAIL, XPASS, info notes, a
    QUALITY_WARNING."""
    return document([
        result("documented/depth_to_space1/ok", "PASS",
               info=["OutputTensor: wrote 2 padding bytes inside TotalTensorSizeInBytes "
                     "(legal: spec-notes §2)"]),
        result("generated/layouts/depth_to_space1/bad/float16", "FAIL", "1 of 4 differ",
               tags=["layouts", "depth_to_space1"],
               spec=[{"page": "DML_DEPTH_TO_SPACE1_OPERATOR_DESC", "section": "Remarks",
                      "url": "https://learn.microsoft.com/x"}],
               mismatches=[{"tensor": "OutputTensor", "index": [0, 1], "expected": "9",
                            "got": "18"}]),
        result(MARKUP_ID, "FAIL", MARKUP_MESSAGE, tags=["weird"]),
        result("documented/resample1/boom", "ERROR", "the backend raised RuntimeError: x",
               operators=["RESAMPLE1"]),
        result("documented/resample1/unclear", "FAIL", "differs", ambiguous="two readings",
               operators=["RESAMPLE1"]),
        result("generated/offsets/x/float32/a", "XFAIL", "known", operators=["RESAMPLE1"],
               tags=["offsets", "resample1"]),
        result("generated/offsets/y/float32/b", "XPASS", "passes now", operators=["RESAMPLE1"],
               tags=["offsets", "resample1"]),
        result("generated/tables/z", "NOT_SUPPORTED", "the backend does not implement X",
               tags=["tables"]),
        result(WARNED_ID, "QUALITY_WARNING", "OutputTensor: 2 of 16 elements outside the strict "
               "reading, inside the legal envelope", operators=["RESAMPLE1"],
               tags=["tables", "resample1"], data_types=["FLOAT16"], margin=0.6),
    ])


def full_document(big: int = 1000) -> dict:
    """The widest matrices a run of the committed suite can give: every operator of the suite
    with every data type of its support tables (and a two-type case, and one naming none), in
    every family of cases/generated and the documented cases, each cell holding every status,
    and in each operator's column one cell of `big` PASS cases (a four-digit count)."""
    from conformance import ops
    from tests.support import GENERATED

    families = ["documented", *sorted(p.name for p in GENERATED.iterdir() if p.is_dir())]
    results = []
    for op, spec in sorted(ops.OPERATORS.items()):
        types = sorted({t.name for table in spec.support for t in table.data_types})
        for k, dtype in enumerate([*types, "FLOAT32/FLOAT16", None]):
            family = families[k % len(families)]
            for status in STATUSES:
                results.append(result(
                    f"generated/{family}/{op.lower()}/{status.lower()}/{dtype}", status,
                    f"{status} of {op}", operators=[op], tags=[family],
                    data_types=dtype.split("/") if dtype else None))
        results += [result(f"generated/{families[1]}/{op.lower()}/many-{i}/float32", "PASS",
                           operators=[op], tags=[families[1]], data_types=["FLOAT32"])
                    for i in range(big)]
    return document(results)


#: The narrow-backend run: the stand-in claiming one operator on a slice of the committed cases
#: (the documented cases and the layouts family: every operator, 731 cases).
NARROW_BACKEND = "narrow_backends.py:NarrowBackend"
NARROW_SLICE = ("documented", "generated/layouts")


@functools.cache
def _narrow_run() -> str:
    from conformance.cli import main
    from tests.support import CASES, SUPPORT

    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "results.json"
        args = ["run", "-q", "--no-isolate", "--backend", str(SUPPORT / NARROW_BACKEND),
                "--json", str(out)]
        for path in NARROW_SLICE:
            args += ["--cases", str(CASES / path)]
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            main(args)
        return out.read_text(encoding="utf-8")


def narrow_document() -> dict:
    """The results document of a real run of tests/support/narrow_backends.py (one operator,
    four data types, the Orders swapped) on NARROW_SLICE: FAILs among hundreds of NOT_SUPPORTED
    cases of a dozen reasons, levels 1_0 and 2_0 all NOT_SUPPORTED. Run once per session; a
    fresh copy each call."""
    return json.loads(_narrow_run())


LARGE_ID = "generated/sampling/resample1/large/float32"
#: Where large_failure's output is wrong: 2.5 times the bound.
LARGE_WRONG = (0, 0, 10, 15)


def large_failure(case_id: str = LARGE_ID) -> dict:
    """A FAIL whose output is too large for a grid (320 elements, [1, 1, 16, 20]), one element
    2.5 times the bound away (LARGE_WRONG), as the judge keeps it: the small input's grid, the
    output's grid left out saying why, and the output's heat map."""
    import numpy as np

    from conformance.expected import Expected
    from conformance.judge import compare
    from conformance.judge.heat_map import heat_map

    center = np.linspace(0, 1, 320).reshape(1, 1, 16, 20)
    got = center.astype(np.float32)
    got[LARGE_WRONG] += 0.25
    exp = Expected(center.astype(np.float32), kind="within", center=center,
                   bound=np.full(center.shape, 0.1), rule="within 0.1")
    judged = compare.judge(got, exp)
    small = np.arange(80, dtype=np.float32).reshape(1, 1, 8, 10)
    return result(case_id, "FAIL", "OutputTensor: 1 of 320 elements differ (within 0.1)",
                  operators=["RESAMPLE1"], tags=["sampling"], data_types=["FLOAT32"],
                  margin=2.5, grids=[compare.kept("InputTensor", small),
                                     compare.kept("OutputTensor", got, judged.model, judged.bad)],
                  heat_maps=[heat_map("OutputTensor", got, judged.model, judged.bad)])
