"""What the tests share: the repository's paths, the files of the stand-in backends (TEST DOUBLES
ONLY, never implementations to certify), and the reading of a results document.

The stand-ins sit beside this file; a test imports one (`from tests.support import
broken_backends as bb`) or names its file to `dmlconf run --backend FILE:Class` (BROKEN, CHEATS,
HOSTILE below). They import the harness and the backends only, never this package, so that they
load the same from a path, in a worker process or in a subprocess outside the repository.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np

from conformance.cli import main
from conformance.results import ResultsDocument

SUPPORT = Path(__file__).resolve().parent
ROOT = SUPPORT.parents[1]
CASES = ROOT / "cases"
DOCUMENTED = CASES / "documented"
GENERATED = CASES / "generated"

BROKEN = SUPPORT / "broken_backends.py"  # one fault each: FAIL, ERROR, NOT_SUPPORTED
CHEATS = SUPPORT / "cheating_backends.py"  # tamper with the judge, its channel, fds, processes
HOSTILE = SUPPORT / "hostile_backends.py"  # crash, hang, exhaust memory, run slowly or flakily
DXDISPATCH_STANDIN = SUPPORT / "dxdispatch_standin.py"  # a stand-in dxdispatch executable
SWAPPED = f"{BROKEN}:SwappedOrderBackend"  # the two Orders of the *1 operators swapped

#: One case item (under `cases:`) whose expectation holds only below a level: a 3-D RESAMPLE is
#: rejected before 5_1 (feature_level_below), so a run claiming 5_1 or more does not run it.
BELOW_5_1_CASE = """\
  - id: t/resample-3d
    operator: RESAMPLE
    feature_level: "2_0"
    feature_level_below: "5_1"
    spec: {page: DML_RESAMPLE_OPERATOR_DESC, section: Availability}
    attributes: {InterpolationMode: NEAREST_NEIGHBOR, Scales: [1, 2, 2]}
    tensors:
      InputTensor: {DataType: FLOAT32, Sizes: [1, 2, 2]}
      OutputTensor: {DataType: FLOAT32, Sizes: [1, 4, 4]}
    expected: rejected
"""

#: the fields of a results document that differ between two runs of the same cases
RUN_TIMING = ("started_at", "finished_at", "duration_s", "execution", "command")


#: dmlconf(*args, name="results.json") -> (exit status, results document)
Dmlconf = Callable[..., tuple[int, dict]]


def dmlconf_in(folder: Path) -> Dmlconf:
    """A `dmlconf run` writing its results into folder (the `dmlconf` fixture of conftest.py
    is this on tmp_path): dmlconf(*args, name=NAME) runs `dmlconf run -q ARGS --json
    FOLDER/NAME` in this process and gives its exit status and the results document it wrote,
    as JSON (NAME: results.json unless given; its --json comes last, so it wins over one in
    ARGS, such as a reproduce command's)."""

    def dmlconf(*args: str, name: str = "results.json") -> tuple[int, dict]:
        out = folder / name
        code = main(["run", "-q", *args, "--json", str(out)])
        return code, json.loads(out.read_text(encoding="utf-8"))

    return dmlconf


def as_json(doc: dict | ResultsDocument) -> dict:
    """A results document as its JSON, as the file holds it (what dmlconf_in gives is already
    that; a ResultsDocument, what conformance.results.read gives, is made so)."""
    return doc.to_json() if isinstance(doc, ResultsDocument) else doc


def statuses(doc: dict | ResultsDocument) -> dict[str, str]:
    """Each case's status in a results document (its JSON, or the typed document), by id."""
    return {r["id"]: r["status"] for r in as_json(doc)["results"]}


def result_of(doc: dict | ResultsDocument, case_id: str) -> dict:
    """The one result of case_id in a results document (its JSON, or the typed document), as
    JSON."""
    (found,) = [r for r in as_json(doc)["results"] if r["id"] == case_id]
    return found


def comparable(doc: dict | ResultsDocument, *also: str) -> dict:
    """A results document (its JSON, or the typed document) as JSON, without what differs
    between two runs of the same cases (RUN_TIMING, `also`, each result's duration_s)."""
    doc = as_json(doc)
    out = {k: v for k, v in doc.items() if k not in RUN_TIMING + also}
    out["results"] = [{k: v for k, v in r.items() if k != "duration_s"}
                      for r in doc["results"]]
    return out


def run_misreading(entry: object, call: object, x: np.ndarray) -> np.ndarray:
    """Run a misreading (conformance.judge.misreadings) like a backend: an input buffer written
    through its desc, the output buffer filled with 0xCD, the output read back through its desc."""
    from conformance.tensors import read_tensor, write_tensor

    tensors = call.tensors  # type: ignore[attr-defined]
    bindings = {n: np.full(tensors[n].total_size, 0xCD, dtype=np.uint8)
                for n in ("InputTensor", "OutputTensor")}
    write_tensor(tensors["InputTensor"], bindings["InputTensor"], x)
    entry.run(call, bindings)  # type: ignore[attr-defined]
    return read_tensor(tensors["OutputTensor"], bindings["OutputTensor"])


def execute_at(backend: object, call: object, inp: np.ndarray, offset: int,
               line: bool = False) -> np.ndarray:
    """backend.execute(call) on the input bytes inp, its output buffer starting `offset` bytes
    into a larger one filled with 0xA5 (that one first aligned to 64 bytes when `line`), after
    which no byte outside the output's elements may have changed (before it, after it, its
    padding): the output buffer. The kernel tests' harness for odd alignments."""
    from conformance.tensors import footprint_mask

    dst = call.tensors["OutputTensor"]  # type: ignore[attr-defined]
    room = np.full(dst.total_size + 128, 0xA5, np.uint8)
    whole = room[(-room.ctypes.data) % 64:] if line else room
    out = whole[offset:offset + dst.total_size]
    backend.execute(call, {"InputTensor": inp, "OutputTensor": out})  # type: ignore[attr-defined]
    start = out.ctypes.data - room.ctypes.data
    assert (room[:start] == 0xA5).all(), "wrote before the output"
    assert (room[start + out.size:] == 0xA5).all(), "wrote after the output buffer"
    assert (out[~footprint_mask(dst, out.size)] == 0xA5).all(), "wrote padding bytes"
    return out
