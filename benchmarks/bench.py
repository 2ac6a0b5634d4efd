"""Throughput of the backends against the copy limit and peer libraries, measured in one run.

For each workload every available implementation runs `--repeats` times after a warm-up; the
table gives the median GB/s (bytes read plus bytes written, per call) with the spread (min-max)
and the ratio to the best memory copy of the same number of bytes (np.copyto, the same in 1 MiB
pieces, or split across all threads: the fastest in the launch) and to the best peer.
Peers (onnxruntime, torch, OpenCV) are measured when installed, and skipped otherwise.

    python benchmarks/bench.py                 # the sizes of the issue (64 MiB tensors)
    python benchmarks/bench.py --tiny          # a smoke run on small tensors
    python benchmarks/bench.py --md RESULTS.md --json results.json
    python benchmarks/bench.py --launches 5    # 5 fresh processes, medians and min-max
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

# Idle worker threads must sleep, not spin: OpenMP (Numba's 'omp' layer, torch) and onnxruntime
# spin after a parallel region by default, and a spinning pool of the implementation measured
# just before steals the cores from the one measured now.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
# OpenCV's bundled OpenBLAS binds the main thread to one core when it loads; Numba's worker
# threads then inherit that binding and run on one core (measured: linear resample 17 -> 10
# GB/s after `import cv2`). MAIN_FREE leaves the main thread unbound.
os.environ.setdefault("OPENBLAS_MAIN_FREE", "1")

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from conformance import ops
from conformance.backend import load_backend
from conformance.tensors import DataType, TensorDesc, write_tensor

THREADS = os.cpu_count() or 1
F32 = DataType.FLOAT32


@dataclass
class Workload:
    name: str
    operator: str
    attributes: dict
    input: TensorDesc
    output: TensorDesc
    peers: dict[str, Callable[[np.ndarray], Callable[[], object]]] = field(default_factory=dict)

    @property
    def bytes_moved(self) -> int:
        return self.input.element_count * 4 + self.output.element_count * 4


def workloads(tiny: bool, peers: bool = True) -> list[Workload]:
    d2s_in = [1, 16, 16, 8] if tiny else [8, 64, 256, 128]
    d2s_out = [d2s_in[0], d2s_in[1] // 4, d2s_in[2] * 2, d2s_in[3] * 2]
    rs_in = [1, 2, 16, 16] if tiny else [8, 16, 256, 256]
    rs_out = [*rs_in[:2], rs_in[2] * 2, rs_in[3] * 2]
    nhwc = [d2s_in[1] * d2s_in[2] * d2s_in[3], 1, d2s_in[3] * d2s_in[1], d2s_in[1]]
    out = []
    for order, short in (("DEPTH_COLUMN_ROW", "DCR"), ("COLUMN_ROW_DEPTH", "CRD")):
        attrs = {"BlockSize": 2, "Order": order}
        out.append(Workload(f"DEPTH_TO_SPACE1 {short}", "DEPTH_TO_SPACE1", attrs,
                            TensorDesc(F32, tuple(d2s_in)), TensorDesc(F32, tuple(d2s_out)),
                            peers=depth_space_peers(True, short) if peers else {}))
        out.append(Workload(f"SPACE_TO_DEPTH1 {short}", "SPACE_TO_DEPTH1", attrs,
                            TensorDesc(F32, tuple(d2s_out)), TensorDesc(F32, tuple(d2s_in)),
                            peers=depth_space_peers(False, short) if peers else {}))
    for mode in ("LINEAR", "NEAREST_NEIGHBOR"):
        attrs = {"InterpolationMode": mode, "Scales": [1, 1, 2, 2],
                 "InputPixelOffsets": [0.5] * 4, "OutputPixelOffsets": [-0.5] * 4}
        out.append(Workload(f"RESAMPLE1 {mode.lower()}", "RESAMPLE1", attrs,
                            TensorDesc(F32, tuple(rs_in)), TensorDesc(F32, tuple(rs_out)),
                            peers=resample_peers(mode, rs_out) if peers else {}))
    out.append(Workload("DEPTH_TO_SPACE1 DCR, NHWC input", "DEPTH_TO_SPACE1",
                        {"BlockSize": 2, "Order": "DEPTH_COLUMN_ROW"},
                        TensorDesc(F32, tuple(d2s_in), tuple(nhwc)),
                        TensorDesc(F32, tuple(d2s_out)), peers={}))
    return out


# -- peers -------------------------------------------------------------------------------------
def depth_space_peers(to_space: bool, order: str) -> dict:
    peers: dict = {}
    try:
        import onnxruntime  # noqa: F401

        if to_space or order == "DCR":  # SpaceToDepth below opset 27 is DCR only (notes §5)
            peers["onnxruntime"] = lambda x: _ort_depth_space(x, to_space, order)
    except ImportError:
        pass
    try:
        import torch

        def make(x: np.ndarray) -> Callable[[], object]:
            t = torch.from_numpy(x)
            n, c, h, w = x.shape
            if to_space:
                out = torch.empty((n, c // 4, h * 2, w * 2))
                view = (t.view(n, 2, 2, c // 4, h, w).permute(0, 3, 4, 1, 5, 2) if order == "DCR"
                        else t.view(n, c // 4, 2, 2, h, w).permute(0, 1, 4, 2, 5, 3))
                return lambda: out.view(n, c // 4, h, 2, w, 2).copy_(view)
            out = torch.empty((n, c * 4, h // 2, w // 2))
            v = t.view(n, c, h // 2, 2, w // 2, 2)
            view = v.permute(0, 3, 5, 1, 2, 4) if order == "DCR" else v.permute(0, 1, 3, 5, 2, 4)
            shape = (n, 2, 2, c, h // 2, w // 2) if order == "DCR" else (n, c, 2, 2, h // 2,
                                                                           w // 2)
            return lambda: out.view(shape).copy_(view)

        peers["torch (permute + copy_)"] = make
    except ImportError:
        pass
    return peers


def _ort_depth_space(x: np.ndarray, to_space: bool, order: str) -> Callable[[], object]:
    import onnx
    import onnxruntime as ort
    from onnx import TensorProto, helper

    n, c, h, w = x.shape
    shape = [n, c // 4, h * 2, w * 2] if to_space else [n, c * 4, h // 2, w // 2]
    op = "DepthToSpace" if to_space else "SpaceToDepth"
    attrs = {"blocksize": 2, **({"mode": order} if to_space else {})}
    x_info = helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x.shape))
    y_info = helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)
    graph = helper.make_graph([helper.make_node(op, ["x"], ["y"], **attrs)], "g", [x_info],
                              [y_info])
    return _ort_session(onnx, ort, helper, graph, x, shape)


def _ort_session(onnx, ort, helper, graph, x, shape) -> Callable[[], object]:
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8  # onnxruntime 1.31 loads IR <= 13 (notes §5)
    options = ort.SessionOptions()
    options.intra_op_num_threads = THREADS
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    session = ort.InferenceSession(model.SerializeToString(), options,
                                   providers=["CPUExecutionProvider"])
    out = np.empty(shape, np.float32)
    binding = session.io_binding()
    binding.bind_cpu_input("x", x)
    binding.bind_output("y", "cpu", 0, np.float32, shape, out.ctypes.data)
    keep = (x, out)  # the binding holds raw pointers: the arrays must outlive the session

    def run() -> object:
        session.run_with_iobinding(binding)
        return keep

    return run


def resample_peers(mode: str, out_shape: list[int]) -> dict:
    peers: dict = {}
    try:
        import onnxruntime  # noqa: F401

        def make_ort(x: np.ndarray) -> Callable[[], object]:
            import onnx
            import onnxruntime as ort
            from onnx import TensorProto, helper, numpy_helper

            scales = numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "scales")
            attrs = {"mode": "linear" if mode == "LINEAR" else "nearest",
                     "coordinate_transformation_mode": "half_pixel",
                     "nearest_mode": "round_prefer_ceil"}
            node = helper.make_node("Resize", ["x", "", "scales"], ["y"], **attrs)
            graph = helper.make_graph(
                [node], "g",
                [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x.shape))],
                [helper.make_tensor_value_info("y", TensorProto.FLOAT, out_shape)],
                initializer=[scales])
            return _ort_session(onnx, ort, helper, graph, x, out_shape)

        peers["onnxruntime"] = make_ort
    except ImportError:
        pass
    try:
        import torch
        import torch.nn.functional as F  # noqa: N812

        def make_torch(x: np.ndarray) -> Callable[[], object]:
            t = torch.from_numpy(x)
            if mode == "LINEAR":
                return lambda: F.interpolate(t, scale_factor=2, mode="bilinear",
                                             align_corners=False)
            return lambda: F.interpolate(t, scale_factor=2, mode="nearest-exact")

        peers["torch"] = make_torch
    except ImportError:
        pass
    try:
        import cv2

        def make_cv(x: np.ndarray) -> Callable[[], object]:
            planes = x.reshape(-1, x.shape[2], x.shape[3])
            out = np.empty((planes.shape[0], x.shape[2] * 2, x.shape[3] * 2), np.float32)
            flag = cv2.INTER_LINEAR if mode == "LINEAR" else cv2.INTER_NEAREST_EXACT

            def run() -> None:
                for i in range(planes.shape[0]):
                    cv2.resize(planes[i], (x.shape[3] * 2, x.shape[2] * 2), dst=out[i],
                               interpolation=flag)
            return run

        peers["opencv (per plane)"] = make_cv
    except ImportError:
        pass
    return peers


# -- measuring ---------------------------------------------------------------------------------
def measure_round_robin(runs: dict[str, Callable[[], object]], repeats: int
                        ) -> dict[str, list[float]]:
    """Seconds per call of each run. After one warm-up call each (JIT compilation, first-touch
    page faults), the repeats go round-robin across the implementations, so that whatever
    else the machine does in the meantime falls on all of them alike."""
    for run in runs.values():
        run()
    times: dict[str, list[float]] = {label: [] for label in runs}
    for _ in range(repeats):
        for label, run in runs.items():
            t0 = time.perf_counter()
            run()
            times[label].append(time.perf_counter() - t0)
    return times


#: The piece size of the chunked copy: small enough that each piece is copied with ordinary
#: (cached) stores, where glibc's memmove switches to non-temporal stores for a copy this large.
PIECE = 1 << 20


def copy_runs(nbytes: int) -> dict[str, Callable[[], object]]:
    """Three copies of nbytes / 2 bytes (so that read plus written equals nbytes): np.copyto in
    one call, the same in 1 MiB pieces, and split across all threads (NumPy releases the GIL
    while copying). The best of the three in a launch is the limit the kernels are held to."""
    half = nbytes // 2
    src = np.random.default_rng(0).integers(0, 255, half, dtype=np.uint8)
    dst = np.empty_like(src)
    chunks = np.array_split(np.arange(half), THREADS)
    bounds = [(int(c[0]), int(c[-1]) + 1) for c in chunks if c.size]
    pool = ThreadPoolExecutor(THREADS)

    def pieces() -> None:
        for i in range(0, half, PIECE):
            np.copyto(dst[i:i + PIECE], src[i:i + PIECE])

    def all_threads() -> None:
        list(pool.map(lambda b: np.copyto(dst[b[0]:b[1]], src[b[0]:b[1]]), bounds))

    return {"copy, np.copyto": lambda: np.copyto(dst, src), "copy, 1 MiB pieces": pieces,
            f"copy, {THREADS} threads": all_threads}


def backend_run(name: str, w: Workload, x: np.ndarray) -> Callable[[], object]:
    backend = load_backend(name)
    spec = ops.get(w.operator)
    call = spec.make_call({"InputTensor": w.input, "OutputTensor": w.output}, w.attributes)
    src = np.zeros(w.input.total_size, np.uint8)
    write_tensor(w.input, src, x)
    bindings = {"InputTensor": src, "OutputTensor": np.zeros(w.output.total_size, np.uint8)}
    return lambda: backend.execute(call, bindings)


def bench(tiny: bool, repeats: int, backends: list[str], peers: bool = True,
          only: str | None = None) -> list[dict]:
    rows = []
    for w in workloads(tiny, peers):
        if only and only not in w.name:
            continue
        x = np.random.default_rng(1).standard_normal(w.input.sizes, dtype=np.float32)
        runs: dict[str, tuple[str, Callable[[], object]]] = {
            k: ("baseline", v) for k, v in copy_runs(w.bytes_moved).items()}
        for b in backends:
            runs[f"{b} backend"] = ("ours", backend_run(b, w, x))
        for peer, make in w.peers.items():
            runs[peer] = ("peer", make(np.ascontiguousarray(x)))
        timings = measure_round_robin({k: v[1] for k, v in runs.items()}, repeats)
        results = {}
        for label, (kind, _) in runs.items():
            gbs = [w.bytes_moved / t / 1e9 for t in timings[label]]
            results[label] = {"kind": kind, "median": statistics.median(gbs),
                              "min": min(gbs), "max": max(gbs)}
        copies = {k: r["median"] for k, r in results.items() if r["kind"] == "baseline"}
        best_copy = max(copies, key=copies.get)
        limit = copies[best_copy]
        peers = [r["median"] for r in results.values() if r["kind"] == "peer"]
        best_peer = max(peers) if peers else None
        for label, r in results.items():
            rows.append({"workload": w.name, "bytes": w.bytes_moved, "implementation": label,
                         **{k: round(v, 3) for k, v in r.items() if k != "kind"},
                         "kind": r["kind"], "best_copy": best_copy,
                         "vs_copy": round(r["median"] / limit, 3),
                         "vs_best_peer": round(r["median"] / best_peer, 3) if best_peer
                         else None})
        print(f"{w.name}: " + ", ".join(f"{k} {v['median']:.2f}" for k, v in results.items()),
              file=sys.stderr)
    return rows


def aggregate(launches: list[list[dict]]) -> list[dict]:
    """The rows of several process launches as one: per workload and implementation, the median
    and min-max over the launches of each launch's median GB/s and of its ratio to that launch's
    best copy (ratios are taken within a launch, side by side, before they are combined), and
    which copy was the best in how many launches."""
    out = []
    for first in launches[0]:
        key = (first["workload"], first["implementation"])
        same = [r for rows in launches for r in rows
                if (r["workload"], r["implementation"]) == key]
        best = Counter(r["best_copy"] for r in same).most_common()
        peer = [r["vs_best_peer"] for r in same if r["vs_best_peer"] is not None]
        out.append({
            "workload": key[0], "bytes": first["bytes"], "implementation": key[1],
            "kind": first["kind"], "launches": len(same),
            "median": round(statistics.median(r["median"] for r in same), 3),
            "min": min(r["median"] for r in same), "max": max(r["median"] for r in same),
            "best_copy": "; ".join(f"{k} {n}/{len(same)}" for k, n in best),
            "vs_copy": round(statistics.median(r["vs_copy"] for r in same), 3),
            "vs_copy_min": min(r["vs_copy"] for r in same),
            "vs_copy_max": max(r["vs_copy"] for r in same),
            "vs_best_peer": round(statistics.median(peer), 3) if peer else None})
    return out


def markdown(rows: list[dict], repeats: int, launches: int = 1) -> str:
    if launches > 1:
        head = (f"Medians over {launches} process launches of each launch's median GB/s (read + "
                f"written bytes per call, {repeats} calls per launch), min-max of the launch "
                "medians in brackets; the ratios are taken within each launch (side by side) and "
                "then summarised the same way.")
    else:
        head = (f"Median GB/s (read + written bytes per call) over {repeats} calls, min-max in "
                "brackets; ratios of medians.")
    lines = [f"{head} {THREADS} threads, {platform.machine()}, Python "
             f"{platform.python_version()}, NumPy {np.__version__}. The limit is the best copy "
             "of the launch (named in the last column: which copy won, in how many launches).",
             "", "| workload | implementation | GB/s | spread | vs best copy | spread | "
             "vs best peer | best copy |", "|---|---|---:|---|---:|---|---:|---|"]
    for r in rows:
        peer = f"{r['vs_best_peer']:.2f}" if r["vs_best_peer"] is not None else "-"
        spread = (f"{r['vs_copy_min']:.2f}-{r['vs_copy_max']:.2f}" if "vs_copy_min" in r
                  else "-")
        lines.append(f"| {r['workload']} | {r['implementation']} | {r['median']:.2f} | "
                     f"{r['min']:.2f}-{r['max']:.2f} | {r['vs_copy']:.2f} | {spread} | {peer} | "
                     f"{r['best_copy']} |")
    return "\n".join(lines) + "\n"


def launch_all(argv: list[str], launches: int) -> list[list[dict]]:
    """This script run `launches` times, each in a fresh process (own JIT cache load, own
    memory layout, own scheduling), one after the other; their rows."""
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(launches):
            path = Path(tmp) / f"{i}.json"
            subprocess.run([sys.executable, __file__, *argv, "--json", str(path)], check=True,
                           stdout=subprocess.DEVNULL)
            out.append(json.loads(path.read_text()))
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tiny", action="store_true", help="small tensors (a smoke run)")
    p.add_argument("--repeats", type=int, default=15)
    p.add_argument("--launches", type=int, default=1,
                   help="run the measurement in this many fresh processes and summarise them")
    p.add_argument("--backend", action="append", help="backends to measure (default: numpy, "
                                                      "numba)")
    p.add_argument("--no-peers", action="store_true", help="measure no peer library")
    p.add_argument("-k", dest="only", help="only the workloads whose name contains this")
    p.add_argument("--md", help="also write the table to this file")
    p.add_argument("--json", help="also write the rows as JSON to this file")
    args = p.parse_args(argv)
    if args.launches > 1:
        child = (["--tiny"] * args.tiny + ["--repeats", str(args.repeats)]
                 + [a for b in args.backend or [] for a in ("--backend", b)]
                 + ["--no-peers"] * args.no_peers + (["-k", args.only] if args.only else []))
        rows = aggregate(launch_all(child, args.launches))
    else:
        rows = bench(args.tiny, args.repeats, args.backend or ["numpy", "numba"],
                     not args.no_peers, args.only)
    table = markdown(rows, args.repeats, args.launches)
    print(table)
    if args.md:
        Path(args.md).write_text(table)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
