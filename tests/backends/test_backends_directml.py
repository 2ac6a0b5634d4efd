"""The directml backends: real DirectML on vkd3d-proton on lavapipe (backends/directml), both
builds: DirectML.dll 1.15.4 under Wine (`directml`) and torch-directml's libdirectml.so
(`directml-linux`).

The pure-Python parts (the desc flattening, the helper's protocol, the mapping of the shim's
answers, the runtime manifests) are tested everywhere; the rest runs real DirectML and is skipped,
with the reason, where that runtime is not set up (`dmlconf directml setup`,
docs/directml-linux.md)."""

from __future__ import annotations

import ctypes
import json
import struct
from pathlib import Path

import numpy as np
import pytest

from backends.directml import layer as layers
from backends.directml import shim
from backends.directml.backend import (
    DirectMLBackend,
    DirectMLGraphBackend,
    DirectMLLinuxBackend,
    DirectMLLinuxGraphBackend,
)
from backends.directml.probe import documented_depth_to_space1
from conformance import ops
from conformance.backend import DescRejected
from conformance.casefile import load_file
from conformance.flags import ExecutionFlags
from conformance.judge.compare import judge
from conformance.session.case_run import run_case
from conformance.tensors import DataType, TensorDesc, footprint_mask, read_tensor, write_tensor
from tests.support import DOCUMENTED, GENERATED, ROOT

LAYERS = {runtime: layers.load_layer(runtime) for runtime in layers.RUNTIMES}
LAYER, MISSING = LAYERS[layers.LINUX]
needs_layer = pytest.mark.skipif(LAYER is None, reason=f"real DirectML not run: {MISSING}")


def needs(runtime: str) -> pytest.MarkDecorator:
    layer, why = LAYERS[runtime]
    return pytest.mark.skipif(layer is None, reason=f"real DirectML not run: {why}")


def each(*classes: type) -> list:
    """The backend classes as parameters, each skipped where its runtime is not set up."""
    return [pytest.param(c, marks=needs(c.runtime), id=c.name) for c in classes]


#: The operator path of both builds; with the graph path of both
BUILDS = each(DirectMLBackend, DirectMLLinuxBackend)
PATHS = each(DirectMLBackend, DirectMLGraphBackend, DirectMLLinuxBackend,
             DirectMLLinuxGraphBackend)


def resample1(mode: str, scales=(1, 1, 2, 2), in_offsets=(0.5,) * 4, out_offsets=(-0.5,) * 4,
              sizes_in=(1, 1, 2, 2), sizes_out=(1, 1, 4, 4), dt=DataType.FLOAT32):
    return ops.get("RESAMPLE1").make_call(
        {"InputTensor": TensorDesc(dt, sizes_in), "OutputTensor": TensorDesc(dt, sizes_out)},
        {"InterpolationMode": mode, "Scales": list(scales),
         "InputPixelOffsets": list(in_offsets), "OutputPixelOffsets": list(out_offsets)})


# -- flattening (everywhere) --------------------------------------------------------------------
def test_flatten_depth_to_space1_states_every_field():
    call = ops.get("DEPTH_TO_SPACE1").make_call(
        {"InputTensor": TensorDesc(DataType.FLOAT16, (1, 8, 2, 3), (48, 6, 3, 1), 200, 16),
         "OutputTensor": TensorDesc(DataType.FLOAT16, (1, 2, 4, 6))},
        {"BlockSize": 2, "Order": "COLUMN_ROW_DEPTH"})
    c = shim.flatten(call, execution_flags=int(ExecutionFlags.ALLOW_HALF_PRECISION_COMPUTATION),
                     graph=True).call
    assert (c.operator_type, c.block_size, c.order) == (113, 2, 1)
    assert (c.execution_flags, c.graph) == (1, 1)
    i, o = c.input, c.output
    assert (i.data_type, i.dimension_count, i.total_tensor_size_in_bytes,
            i.guaranteed_base_offset_alignment) == (2, 4, 200, 16)
    assert [i.sizes[k] for k in range(4)] == [1, 8, 2, 3]
    assert [i.strides[k] for k in range(4)] == [48, 6, 3, 1]
    assert not o.strides  # Strides omitted: NULL, packed
    assert o.total_tensor_size_in_bytes == 96  # DMLCalcBufferTensorSize of {1,2,4,6} float16


def test_flatten_resample_floats_as_float32_and_counts():
    c = shim.flatten(resample1("LINEAR", scales=(1, 1, 0.1, 3), in_offsets=(0.5, 0.5, 0.3, 0),
                               out_offsets=(-0.5, -0.5, 0, 0.25))).call
    assert (c.operator_type, c.interpolation_mode, c.dimension_count) == (116, 1, 4)
    assert c.scales[2] == np.float32(0.1) and c.input_pixel_offsets[2] == np.float32(0.3)
    assert c.output_pixel_offsets[3] == 0.25
    old = ops.get("RESAMPLE").make_call(
        {"InputTensor": TensorDesc(DataType.FLOAT32, (1, 1, 2, 2)),
         "OutputTensor": TensorDesc(DataType.FLOAT32, (1, 1, 4, 4))},
        {"InterpolationMode": "NEAREST_NEIGHBOR", "Scales": [1, 1, 2, 2]})
    c = shim.flatten(old).call
    assert (c.operator_type, c.interpolation_mode, c.dimension_count) == (96, 0, 4)
    assert not c.input_pixel_offsets and not c.output_pixel_offsets  # RESAMPLE has none


def resample23(operator, mode="NEAREST_NEIGHBOR", direction="DECREASING", scales=(3,),
               in_offsets=(0,), out_offsets=(0,), sizes_in=(5,), sizes_out=(13,),
               dt=DataType.FLOAT32, **extra):
    return ops.get(operator).make_call(
        {"InputTensor": TensorDesc(dt, sizes_in), "OutputTensor": TensorDesc(dt, sizes_out)},
        {"InterpolationMode": mode, "RoundingDirection": direction, "Scales": list(scales),
         "InputPixelOffsets": list(in_offsets), "OutputPixelOffsets": list(out_offsets),
         **extra})


def test_flatten_resample2_and_resample3_state_direction_and_antialiased():
    c = shim.flatten(resample23("RESAMPLE2", "LINEAR", "INCREASING", scales=(0.5, 2),
                                in_offsets=(0.5, 0.25), out_offsets=(-0.5, 0.1),
                                sizes_in=(4, 3), sizes_out=(2, 6))).call
    assert (c.operator_type, c.interpolation_mode, c.rounding_direction, c.dimension_count) == (
        161, 1, 0, 2)  # DML_AXIS_DIRECTION_INCREASING 0
    assert c.input_pixel_offsets[1] == 0.25 and c.output_pixel_offsets[1] == np.float32(0.1)
    assert c.antialiased == 0
    for flag in (True, False):
        c = shim.flatten(resample23("RESAMPLE3", "LINEAR", "DECREASING", Antialiased=flag)).call
        assert (c.operator_type, c.rounding_direction, c.antialiased) == (175, 1, int(flag))
    raw = resample23("RESAMPLE2", direction=2)  # no DML_AXIS_DIRECTION: DirectML must say so
    assert shim.flatten(raw).call.rounding_direction == 2


def test_flatten_keeps_invalid_values_and_refuses_the_inexpressible():
    call = ops.get("DEPTH_TO_SPACE1").make_call(
        {"InputTensor": TensorDesc(DataType.FLOAT32, (1, 8, 2, 3)),
         "OutputTensor": TensorDesc(DataType.FLOAT32, (1, 2, 4, 6))},
        {"BlockSize": 2, "Order": 7})  # no DML_DEPTH_SPACE_ORDER: DirectML must say so
    assert shim.flatten(call).call.order == 7
    mismatch = ops.get("DEPTH_TO_SPACE1").make_call(
        {"InputTensor": TensorDesc(DataType.FLOAT32, (1, 8, 2, 3), (48, 6, 1)),
         "OutputTensor": TensorDesc(DataType.FLOAT32, (1, 2, 4, 6))},
        {"BlockSize": 2, "Order": 0})
    with pytest.raises(shim.InexpressibleError, match="one DimensionCount"):
        shim.flatten(mismatch)
    huge = ops.get("DEPTH_TO_SPACE1").make_call(
        {"InputTensor": TensorDesc(DataType.FLOAT32, (1, 8, 2, 2**32)),
         "OutputTensor": TensorDesc(DataType.FLOAT32, (1, 2, 4, 6))},
        {"BlockSize": 2, "Order": 0})
    with pytest.raises(shim.InexpressibleError, match="UINT"):
        shim.flatten(huge)


# -- the shim's answers (everywhere) ------------------------------------------------------------
def status(hr=0, stage=0, message=b"", **fields) -> shim.Status:
    s = shim.Status(hr=hr, stage=stage, guard_tensor=-1, **fields)
    s.message = message
    return s


def test_outcomes_map_to_rejection_or_error():
    shim.outcome(shim.OK, status())
    with pytest.raises(DescRejected, match=r"at CreateOperator: 0x80070057 \(E_INVALIDARG\)"):
        shim.outcome(shim.REJECTED_CREATE, status(hr=-2147024809, stage=2))
    with pytest.raises(DescRejected, match=r"at CompileOperator: 0x887A0004 \(DXGI_ERROR_UNSUP"):
        shim.outcome(shim.REJECTED_COMPILE, status(hr=0x887A0004 - 2**32, stage=3))
    with pytest.raises(shim.DirectMLError, match=r"while executing: HRESULT 0x80004005 \(E_FAIL\)"
                       r".*vkd3d says"):
        shim.outcome(shim.FAILED, status(hr=0x80004005 - 2**32, stage=8, message=b"vkd3d says"))
    with pytest.raises(shim.DirectMLError, match=r"device was removed.*0x887A0005"):
        shim.outcome(shim.DEVICE_REMOVED, status(hr=0x887A0005 - 2**32, stage=8,
                                                 removed_reason=0x887A0005 - 2**32))
    guard = status(guard_bytes_changed=3, guard_offset=100)
    guard.guard_tensor = 1
    with pytest.raises(shim.DirectMLError, match=r"3 byte.*outside the bound range of OutputTen"):
        shim.outcome(shim.OK, guard)


def test_hresult_names():
    assert shim.hresult_name(0x80070057) == "0x80070057 (E_INVALIDARG)"
    assert shim.hresult_name(-2147024809) == "0x80070057 (E_INVALIDARG)"
    assert shim.hresult_name(0x1234) == "0x00001234"


def test_status_layout_matches_dmlshim_h():
    # dmlshim.h: 6 x 4-byte fields, 2 doubles, 2048 characters
    assert ctypes.sizeof(shim.Status) == 24 + 16 + 2048
    assert shim.Call.input.offset == 48 and ctypes.sizeof(shim.Tensor) == 40
    # graph, rounding_direction, antialiased, reserved after the two tensors
    assert shim.Call.rounding_direction.offset == 48 + 2 * 40 + 4
    assert ctypes.sizeof(shim.Call) == 48 + 2 * 40 + 4 * 4


# -- the Wine helper's protocol (everywhere: a stand-in speaks it) --------------------------------
def test_a_run_request_is_laid_out_as_helper_c_reads_it():
    from backends.directml.helper import encode_call

    call = resample23("RESAMPLE3", "LINEAR", "INCREASING", scales=(0.25,), in_offsets=(-3.5,),
                      out_offsets=(0.5,), sizes_in=(12,), sizes_out=(3,), Antialiased=True)
    body = encode_call(shim.flatten(call, execution_flags=1), shim.MODE_COMPILE)
    head = struct.unpack_from("<13I", body)
    assert head == (0, 175, 0, 0, 1, 1, 1, 0, 0, 1, 1, 1, 1)  # mode .. antialiased, 3 present
    at = 13 * 4
    for sizes in ((12,), (3,)):  # FLOAT32 1-D, packed: no strides
        data_type, _, count, _, has_strides, total = struct.unpack_from("<5IQ", body, at)
        at += 28
        assert (data_type, count, has_strides, total) == (1, 1, 0, 4 * sizes[0])
        assert struct.unpack_from("<I", body, at) == sizes
        at += 4
    assert struct.unpack_from("<3f", body, at) == (0.25, -3.5, 0.5) and at + 12 == len(body)


def test_arrays_shorter_than_their_count_are_sent_zero_filled():
    """The helper gets exactly DimensionCount floats per array, never bytes from beyond an
    array: one shorter than its count (no operator call makes one; a flattened call could) is
    sent zero-filled, one the call does not keep is refused."""
    from backends.directml.helper import encode_call

    flat = shim.flatten(resample1("LINEAR"))
    short = (ctypes.c_float * 2)(0.5, 0.25)
    flat.keep.append(short)
    flat.call.input_pixel_offsets = ctypes.cast(short, ctypes.POINTER(ctypes.c_float))
    body = encode_call(flat, shim.MODE_COMPILE)
    assert struct.unpack_from("<4f", body, len(body) - 32) == (0.5, 0.25, 0.0, 0.0)
    flat.keep.remove(short)
    with pytest.raises(shim.DirectMLError, match="does not keep"):
        encode_call(flat, shim.MODE_COMPILE)


STAND_IN = r"""
import struct, sys
R, A = 0x51484D44, 0x41484D44
inp, out = sys.stdin.buffer, sys.stdout.buffer
def answer(rc, body=b""):
    out.write(struct.pack("<IiQ", A, rc, len(body)) + body); out.flush()
status = bytes(2088)
while True:
    head = inp.read(16)
    if len(head) < 16:
        sys.exit(0)
    magic, command, size = struct.unpack("<IIQ", head)
    body = inp.read(size)
    if command == 1: answer(%(abi)d)
    elif command == 2: answer(0, status)
    elif command == 3: answer(0, struct.pack("<I", 0x6400))
    elif command == 4: answer(0, struct.pack("<i", struct.unpack("<I", body)[0] != 7))
    elif command == 5:
        mode, op = struct.unpack_from("<2I", body)
        if op == 116:  # RESAMPLE1: die mid-call, as a crashing runtime does
            sys.stderr.write("stand-in: crashed on purpose\n"); sys.stderr.flush(); sys.exit(3)
        n = struct.unpack_from("<I", body, 52 + 8)[0]  # the input's dimension count
        if mode == 0:
            answer(0, status)
        else:  # the output comes back as the input's bytes (a copy, for this test)
            data = body[-2 * 96:]
            answer(0, status + data[:96] + data[:96])
    elif command == 6: answer(0)
"""


@pytest.fixture
def stand_in(tmp_path, monkeypatch):
    """A Helper whose 'helper.exe' is a Python stand-in speaking the protocol, with no Wine, no
    X server and no prefix."""
    import sys

    from backends.directml import helper

    def make(abi: int = shim.ABI_VERSION):
        script = tmp_path / "stand_in.py"
        script.write_text(STAND_IN % {"abi": abi})
        monkeypatch.setenv("DMLCONF_WINE", sys.executable)
        monkeypatch.setattr(helper, "start_xvfb", lambda: (None, ":0"))
        monkeypatch.setattr(helper, "private_prefix", lambda prefix: None)
        layer = layers.Layer(tmp_path, tmp_path / "icd.json", 0x6400, ("FLOAT32",), "",
                             {"prefix": str(tmp_path / "prefix")}, layers.WINE)
        monkeypatch.setattr(layers.Layer, "shim", property(lambda self: script))
        return helper.Helper(layer)

    return make


def test_the_helper_protocol_round_trips_with_a_stand_in(stand_in):
    h = stand_in()
    try:
        assert h.max_feature_level([0x6200, 0x6400]) == 0x6400
        assert h.data_type_supported(1) and not h.data_type_supported(7)
        call = ops.get("DEPTH_TO_SPACE1").make_call(
            {"InputTensor": TensorDesc(DataType.FLOAT32, (1, 4, 2, 3)),
             "OutputTensor": TensorDesc(DataType.FLOAT32, (1, 1, 4, 6))},
            {"BlockSize": 2, "Order": "DEPTH_COLUMN_ROW"})
        buffers = {"InputTensor": np.arange(96, dtype=np.uint8),
                   "OutputTensor": np.zeros(96, np.uint8)}
        h.run(call, None)
        h.run(call, buffers)  # the buffers come back in place
        assert buffers["OutputTensor"].tolist() == list(range(96))
    finally:
        h.stop()


def test_a_helper_that_dies_mid_call_is_an_error_with_its_log_and_is_restarted(stand_in):
    h = stand_in()
    try:
        with pytest.raises(shim.DirectMLError, match=r"ended while command 5 \(exit status 3\)"
                                                     r".*crashed on purpose"):
            h.run(resample1("LINEAR"), None)
        assert h.proc is None and not h.opened
        assert h.max_feature_level([0x6400]) == 0x6400  # a new helper answers
    finally:
        h.stop()


def test_a_helper_of_another_abi_is_refused(stand_in):
    with pytest.raises(shim.DirectMLError, match="speaks shim ABI 1, this code needs"):
        stand_in(abi=1)


def test_the_dll_version_is_read_from_its_version_resource(tmp_path):
    from backends.directml.helper import version_of

    value = layers.DLL_VERSION
    blob = (b"MZ" + bytes(60) + "FileVersion\0".encode("utf-16-le") + bytes(2)
            + f"{value}\0".encode("utf-16-le") + b"more")
    (tmp_path / "a.dll").write_bytes(blob)
    assert version_of(tmp_path / "a.dll") == value
    (tmp_path / "b.dll").write_bytes(b"MZ" + bytes(100))
    assert version_of(tmp_path / "b.dll") == ""


def test_the_debian_mirror_comes_from_the_machines_apt_sources(tmp_path):
    from backends.directml.setup import debian_mirror

    deb822 = tmp_path / "debian.sources"
    deb822.write_text("Types: deb\nURIs: file:/srv/mirror/debian-security\nSuites: x\n\n"
                      "Types: deb\nURIs: file:/srv/mirror/debian\nSuites: bookworm\n")
    one_line = tmp_path / "sources.list"
    one_line.write_text("# comment\ndeb file:/srv/other/debian bookworm main\n")
    assert debian_mirror([deb822]) == "file:/srv/mirror/debian"
    assert debian_mirror([tmp_path / "missing", one_line]) == "file:/srv/other/debian"
    assert debian_mirror([]) is None


def test_the_vulkan_driver_and_its_vendor_come_from_the_icd_file(tmp_path):
    from backends.directml.backend import _icd_driver

    nvidia = tmp_path / "nvidia_icd.json"
    nvidia.write_text(json.dumps({"ICD": {"library_path": "libGLX_nvidia.so.0",
                                          "api_version": "1.4.312"}}))
    assert _icd_driver(nvidia) == ("NVIDIA", "GPU", f"NVIDIA Vulkan driver ICD {nvidia} "
                                   "(Vulkan 1.4.312, libGLX_nvidia.so.0)")
    lvp = tmp_path / "lvp_icd.json"
    lvp.write_text("not json")
    assert _icd_driver(lvp) == ("Mesa", "lavapipe (Vulkan on the CPU)", f"lavapipe ICD {lvp}")


# -- the layer manifest (everywhere) ------------------------------------------------------------
@pytest.mark.parametrize("backend_class", [DirectMLBackend, DirectMLLinuxBackend])
def test_without_a_layer_every_case_says_to_run_the_setup(tmp_path, monkeypatch, backend_class):
    monkeypatch.setenv(layers.ENV_CACHE, str(tmp_path))
    backend = backend_class()
    case = load_file(DOCUMENTED / "depth_to_space1.yaml")[0]
    result = run_case(case, backend)
    assert result.status == "NOT_SUPPORTED"
    assert f"dmlconf directml setup --runtime {backend_class.runtime}" in result.message


def test_a_layer_built_from_other_sources_is_stale(tmp_path, monkeypatch):
    monkeypatch.setenv(layers.ENV_CACHE, str(tmp_path))
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / layers.SHIM).write_bytes(b"")
    icd = tmp_path / "lvp_icd.json"
    icd.write_text("{}")
    layer = layers.Layer(tmp_path / "lib", icd, 0x6200, ("FLOAT32",), "0" * 64)
    layers.manifest_path().write_text(json.dumps(layer.to_json()))
    found, why = layers.load_layer()
    assert found is None and "other sources" in why
    current = {**layer.to_json(), "sources_sha256": layers.native_sources_sha256()}
    # a vkd3d-proton built without this checkout's patches is stale too: set-up rebuilds it
    layers.manifest_path().write_text(json.dumps(current))
    found, why = layers.load_layer()
    assert found is None and "other patches (none)" in why
    assert "vkd3d-proton-ssbo-alignment.patch" in why and layers.SETUP_COMMAND in why
    patched = {"version": "2.14.1", "patches": [p.name for p in layers.layer_patches()],
               "patches_sha256": layers.patches_sha256()}
    layers.manifest_path().write_text(json.dumps({**current, "vkd3d_proton": patched}))
    found, why = layers.load_layer()
    assert why is None and found.feature_level == 0x6200 and found.data_types == ("FLOAT32",)
    # the adapter it reports names them
    assert found.info["vkd3d_proton"]["patches"] == ["vkd3d-proton-ssbo-alignment.patch"]
    backend = DirectMLLinuxBackend()
    assert backend.environment["adapter"].endswith(
        "through vkd3d-proton 2.14.1 + vkd3d-proton-ssbo-alignment")


def test_a_patch_changes_the_build_key(tmp_path):
    one, other = tmp_path / "vkd3d-proton-a.patch", tmp_path / "vkd3d-proton-b.patch"
    one.write_text("--- a/x\n+++ b/x\n")
    other.write_text("--- a/x\n+++ b/x\n")
    assert layers.patches_sha256([one]) != layers.patches_sha256([other])  # names count
    before = layers.patches_sha256([one])
    one.write_text("--- a/x\n+++ b/x\n@@ -1 +1 @@\n")
    assert layers.patches_sha256([one]) != before  # and contents
    assert layers.patches_sha256([]) != layers.patches_sha256()


def test_the_layer_patches_apply_to_the_pinned_source(tmp_path):
    """Each of the set-up's patches applies cleanly to the pinned vkd3d-proton tarball (where it
    is at hand), and the trace kit's instrumentation applies on top of them."""
    import re
    import shutil
    import tarfile

    from backends.directml.setup import find_source
    from backends.directml.setup_build import apply_patches, extract

    source = find_source(None)
    if source is None or not shutil.which("patch"):
        pytest.skip("no vkd3d-proton source tarball beside the repository, or no `patch`")
    patches = layers.layer_patches()
    assert patches, "backends/directml/patches is empty"
    patches += sorted((ROOT / "backends" / "directml" / "trace").glob("*.patch"))
    touched = {m for p in patches for m in re.findall(r"^\+\+\+ b/(\S+)", p.read_text(), re.M)}
    with tarfile.open(source) as tar:
        top = tar.getnames()[0].split("/")[0]
        extract(tar, tmp_path, [tar.getmember(f"{top}/{name}") for name in sorted(touched)])
    apply_patches(tmp_path / top, patches)  # the set-up's own step: raises where one fails


# -- real DirectML (where the runtime is set up) -------------------------------------------------
@pytest.mark.parametrize(("backend_class", "level"), [
    pytest.param(DirectMLBackend, 0x6400, marks=needs(layers.WINE), id="directml"),
    pytest.param(DirectMLLinuxBackend, 0x6200, marks=needs(layers.LINUX), id="directml-linux")])
def test_capabilities_are_what_directml_reports(backend_class, level):
    backend = backend_class()
    layer = backend.layer
    caps = backend.capabilities
    assert int(caps.feature_level) == layer.feature_level == level
    # every operator introduced at or below the level DirectML reports (6_2 on the Linux build:
    # RESAMPLE2, not RESAMPLE3 of 6_4; 6_4 on 1.15.4: RESAMPLE3 too)
    assert set(caps.operators) == {name for name, spec in ops.OPERATORS.items()
                                   if spec.introduced <= layer.feature_level}
    for name, types in caps.operators.items():
        assert {t.name for t in types} <= set(layer.data_types), name
    env = backend.environment
    assert env["vendor"] == "Mesa" and "lavapipe" in env["adapter"]
    if backend_class.runtime == layers.WINE:  # read from the DLL's version resource
        assert env["directml_version"].startswith(layers.DLL_VERSION + " (DirectML.dll of ")


@pytest.mark.parametrize("backend_class", PATHS)
def test_documented_depth_to_space1_bit_for_bit(backend_class):
    backend = backend_class()
    cases = load_file(DOCUMENTED / "depth_to_space1.yaml")
    assert len(cases) == 2
    for case in cases:
        result = run_case(case, backend)
        assert result.status == "PASS", (case.id, result.message)
    call, values = documented_depth_to_space1()  # the FLOAT32 form of the page's example
    got = run(backend, call, values)
    page = [[0, 18, 1, 19, 2, 20], [36, 54, 37, 55, 38, 56], [3, 21, 4, 22, 5, 23],
            [39, 57, 40, 58, 41, 59], [9, 27, 10, 28, 11, 29], [45, 63, 46, 64, 47, 65],
            [12, 30, 13, 31, 14, 32], [48, 66, 49, 67, 50, 68]]
    assert got.reshape(8, 6).tolist() == page


def run(backend, call, values):
    buffers = {n: np.zeros(d.total_size, np.uint8) for n, d in call.tensors.items()}
    write_tensor(call.tensors["InputTensor"], buffers["InputTensor"], values)
    backend.create_operator(call)
    backend.execute(call, buffers)
    return read_tensor(call.tensors["OutputTensor"], buffers["OutputTensor"])


@pytest.mark.parametrize("backend_class", PATHS)
def test_resample1_nearest_and_linear_of_the_probe(backend_class):
    backend = backend_class()
    x = np.array([1, 2, 3, 4], np.float32).reshape(1, 1, 2, 2)
    nearest = run(backend, resample1("NEAREST_NEIGHBOR"), x)
    assert nearest[0, 0].tolist() == [[1, 1, 2, 2], [1, 1, 2, 2], [3, 3, 4, 4], [3, 3, 4, 4]]
    linear = run(backend, resample1("LINEAR"), x)
    assert linear[0, 0].tolist() == [[1, 1.25, 1.75, 2], [1.5, 1.75, 2.25, 2.5],
                                     [2.5, 2.75, 3.25, 3.5], [3, 3.25, 3.75, 4]]


@pytest.mark.parametrize("backend_class", PATHS)
@pytest.mark.parametrize("dt", [DataType.FLOAT32, DataType.FLOAT16, DataType.UINT8,
                                DataType.INT8])
def test_resample2_rounding_direction_is_floor_and_ceil(backend_class, dt):
    """docs/directml-linux.md, RESAMPLE2: [0..4] scaled by 3, offsets 0 (c = o / 3), and by 2
    with half-pixel offsets (c = o / 2 - 0.25): DECREASING floor(c), INCREASING ceil(c), for
    every type of the 6_2 table, as the spec reads it (judged by the reference too)."""
    backend = backend_class()
    x = np.arange(5).astype(dt.numpy_dtype)
    want = {("INCREASING", 3): [0, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4],
            ("DECREASING", 3): [0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4],
            ("INCREASING", 2): [0, 1, 1, 2, 2, 3, 3, 4, 4],
            ("DECREASING", 2): [0, 0, 0, 1, 1, 2, 2, 3, 3]}
    for (direction, scale), values in want.items():
        offsets = ((0,), (0,)) if scale == 3 else ((0.5,), (-0.5,))
        call = resample23("RESAMPLE2", "NEAREST_NEIGHBOR", direction, (scale,), *offsets,
                          sizes_out=(len(values),), dt=dt)
        got = run(backend, call, x)
        assert got.astype(int).tolist() == values, (direction, scale)
        expected = ops.get("RESAMPLE2").expected(call, {"InputTensor": x})["OutputTensor"]
        assert judge(got, expected).status == "PASS"


@pytest.mark.parametrize("backend_class", BUILDS)
def test_resample2_coordinates_near_whole_numbers_are_float32(backend_class):
    """Scale float32(1/3), offsets 0, DECREASING: the exact c = o / 0.33333334 is just below 3o
    (floor 3o - 1); DirectML's float32 coordinate gives 3o. The reference accepts both at such
    near-ties (the RESAMPLE1 rule moved to whole numbers) and holds everything else exact."""
    x = np.arange(200, dtype=np.float32)
    call = resample23("RESAMPLE2", scales=(1 / 3,), sizes_in=(200,), sizes_out=(66,))
    got = run(backend_class(), call, x)
    assert got.astype(int).tolist() == [3 * o for o in range(66)]
    expected = ops.get("RESAMPLE2").expected(call, {"InputTensor": x})["OutputTensor"]
    assert expected.kind == "one_of" and judge(got, expected).status == "PASS"
    exact = np.floor(np.arange(66) / float(np.float32(1 / 3)))
    assert int((got != exact).sum()) == 65  # the exact floor would fail 65 of 66 outputs


@pytest.mark.parametrize("backend_class", BUILDS)
def test_resample1_is_resample2_decreasing_with_the_input_offset_shifted(backend_class):
    """docs/directml-linux.md: RESAMPLE1 nearest equals RESAMPLE2 DECREASING with
    InputPixelOffsets - 0.5, bit for bit; the page's remark (OutputPixelOffsets - 0.5) does not
    hold where Scale != 1 (scale 2, offsets 0: 39 of 80 outputs differ)."""
    backend = backend_class()
    x = np.arange(40, dtype=np.float32)
    r1 = run(backend, resample1("NEAREST_NEIGHBOR", (2,), (0,), (0,), (40,), (80,)), x)
    shifted_in = run(backend, resample23("RESAMPLE2", scales=(2,), in_offsets=(-0.5,),
                                         sizes_in=(40,), sizes_out=(80,)), x)
    shifted_out = run(backend, resample23("RESAMPLE2", scales=(2,), out_offsets=(-0.5,),
                                          sizes_in=(40,), sizes_out=(80,)), x)
    assert np.array_equal(r1, shifted_in)
    assert int((r1 != shifted_out).sum()) == 39


@needs_layer
def test_resample3_and_a_bad_rounding_direction_are_refused_at_create_operator():
    """The Linux build (feature level 6_2) has no RESAMPLE3 (6_4): CreateOperator says
    E_INVALIDARG, antialiased or not; the backend does not claim it. RoundingDirection 2 is no
    DML_AXIS_DIRECTION: E_INVALIDARG."""
    backend = DirectMLLinuxBackend()
    assert "RESAMPLE3" not in backend.capabilities.operators
    for flag in (True, False):
        call = resample23("RESAMPLE3", "LINEAR", scales=(0.4,), sizes_in=(5,), sizes_out=(2,),
                          Antialiased=flag)
        with pytest.raises(DescRejected, match=r"at CreateOperator: 0x80070057"):
            backend.create_operator(call)
    with pytest.raises(DescRejected, match=r"at CreateOperator: 0x80070057"):
        backend.create_operator(resample23("RESAMPLE2", direction=2))


@pytest.mark.parametrize("backend_class", each(DirectMLBackend))
def test_resample3_runs_on_directml_1_15_and_a_bad_rounding_direction_is_refused(backend_class):
    """DirectML 1.15.4 (feature level 6_4) creates and runs RESAMPLE3. Antialiased FALSE is
    RESAMPLE2 bit for bit (the page's remark); Antialiased TRUE downscaling [0..4] by 0.4
    (1/Scale 2.5 > 2) gives the antialias finding (docs/directml-linux.md): 0 where the stretched
    triangle gives 0.385. RoundingDirection 2 (no DML_AXIS_DIRECTION) is refused with
    E_INVALIDARG, as on the Linux build."""
    backend = backend_class()
    assert "RESAMPLE3" in backend.capabilities.operators
    x = np.arange(5, dtype=np.float32)
    plain = run(backend, resample23("RESAMPLE3", "LINEAR", scales=(0.4,), sizes_in=(5,),
                                    sizes_out=(2,), Antialiased=False), x)
    assert np.array_equal(plain, run(backend, resample23("RESAMPLE2", "LINEAR", scales=(0.4,),
                                                         sizes_in=(5,), sizes_out=(2,)), x))
    call = resample23("RESAMPLE3", "LINEAR", scales=(0.4,), sizes_in=(5,), sizes_out=(2,),
                      Antialiased=True)
    got = run(backend, call, x)
    expected = ops.get("RESAMPLE3").expected(call, {"InputTensor": x})["OutputTensor"]
    assert expected.values.tolist() == pytest.approx([5 / 13, 2.5])
    assert got.tolist() == [0, 2.5] and judge(got, expected).status == "FAIL"
    with pytest.raises(DescRejected, match=r"at CreateOperator: 0x80070057"):
        backend.create_operator(resample23("RESAMPLE2", direction=2))


@pytest.mark.parametrize("backend_class", BUILDS)
def test_an_invalid_desc_is_refused_at_create_operator(backend_class):
    call = ops.get("DEPTH_TO_SPACE1").make_call(
        {"InputTensor": TensorDesc(DataType.FLOAT32, (1, 6, 2, 3)),  # 6 channels, block 2
         "OutputTensor": TensorDesc(DataType.FLOAT32, (1, 1, 4, 6))},
        {"BlockSize": 2, "Order": "DEPTH_COLUMN_ROW"})
    with pytest.raises(DescRejected, match=r"at CreateOperator: 0x80070057 \(E_INVALIDARG\)"):
        backend_class().create_operator(call)


@pytest.mark.parametrize(("backend_class", "graph_class"), [
    pytest.param(DirectMLBackend, DirectMLGraphBackend, marks=needs(layers.WINE), id="directml"),
    pytest.param(DirectMLLinuxBackend, DirectMLLinuxGraphBackend, marks=needs(layers.LINUX),
                 id="directml-linux")])
def test_execution_flags_reach_compile_operator(backend_class, graph_class):
    backend = backend_class()
    call, values = documented_depth_to_space1()
    backend.execution_flags = ExecutionFlags.ALLOW_HALF_PRECISION_COMPUTATION
    assert run(backend, call, values).size == 48
    # a bit that is no DML_EXECUTION_FLAGS value: DirectML's CompileOperator refuses it
    with pytest.raises(DescRejected, match="at CompileOperator"):
        backend.shim.run(call, None, execution_flags=0x8)
    with pytest.raises(DescRejected, match="at CompileOperator"):
        graph_class().shim.run(call, None, execution_flags=0x8, graph=True)


@pytest.mark.parametrize("backend_class", BUILDS)
def test_all_buffers_come_back_and_padding_is_bound(backend_class):
    """The bound bytes include padding: the output's padding bytes keep their fill where
    DirectML does not write, and the input comes back unchanged."""
    call = ops.get("DEPTH_TO_SPACE1").make_call(
        {"InputTensor": TensorDesc(DataType.FLOAT32, (1, 8, 2, 3)),
         "OutputTensor": TensorDesc(DataType.FLOAT32, (1, 2, 4, 6), (64, 32, 8, 1))},
        {"BlockSize": 2, "Order": "DEPTH_COLUMN_ROW"})
    _, values = documented_depth_to_space1()
    buffers = {"InputTensor": np.zeros(call.tensors["InputTensor"].total_size, np.uint8),
               "OutputTensor": np.full(call.tensors["OutputTensor"].total_size, 0xCD, np.uint8)}
    write_tensor(call.tensors["InputTensor"], buffers["InputTensor"], values)
    before = buffers["InputTensor"].copy()
    backend = backend_class()
    backend.create_operator(call)
    backend.execute(call, buffers)
    assert np.array_equal(buffers["InputTensor"], before)
    out = read_tensor(call.tensors["OutputTensor"], buffers["OutputTensor"])
    want = ops.get("DEPTH_TO_SPACE1").reference(call, {"InputTensor": values})["OutputTensor"]
    assert np.array_equal(out, want)
    # the fill reached the D3D12 buffer and came back where DirectML did not write: without
    # the output's bytes copied in, its padding would come back as the D3D12 buffer's zeros
    padding = ~footprint_mask(call.tensors["OutputTensor"])
    assert padding.sum() == 248 - 192 and np.all(buffers["OutputTensor"][padding] == 0xCD)


# -- the CI baseline of known findings (everywhere) ----------------------------------------------
def test_the_baseline_classifies_known_findings_and_refuses_new_ones():
    from backends.directml import baseline
    from conformance.casefile import load_cases
    from conformance.results.baseline import parse

    cases = load_cases([GENERATED / "sampling"])
    by_kind = {}
    for c in cases:
        call = c.calls[0].call
        key = (call.attributes["InterpolationMode"], call.tensors["InputTensor"].data_type.name)
        if call.operator == "RESAMPLE1":
            by_kind.setdefault(key, []).append(c)
    nearest8, linear, nearest32 = (by_kind[("NEAREST_NEIGHBOR", "UINT8")],
                                   by_kind[("LINEAR", "FLOAT32")][:3],
                                   by_kind[("NEAREST_NEIGHBOR", "FLOAT32")][:1])

    def doc(name, version, vendor, *found):
        return {"backend": {"name": name, "environment": {"directml_version": version,
                                                          "vendor": vendor}},
                "results": [{"id": c.id, "status": status, "ambiguous": None}
                            for group, status in found for c in group]}

    new = doc("directml", "1.15.4+x", "Mesa", (nearest8, "FAIL"), (linear, "FAIL"),
              (nearest32, "PASS"))
    old = doc("directml-linux", "libdirectml.so of y", "Mesa", (nearest8, "FAIL"),
              (linear[:1], "PASS"), (linear[1:], "FAIL"))
    gpu = doc("directml-linux", "libdirectml.so of y", "NVIDIA", (nearest8, "FAIL"),
              (linear[:2], "PASS"), (linear[2:], "FAIL"))
    text = baseline.build([new, old, gpu], cases)
    entries = parse(text).entries
    ids = [c.id for c in cases]
    covered = [{i for i in ids if e.covers(i)} for e in entries]
    # one entry per finding and the runs it is of, the narrower first: one failing on both
    # builds but measured passing on NVIDIA (a finding of lavapipe, tagged with it); a linear
    # case of 1.15.4 only; one of both builds everywhere; and the whole 8-bit nearest group
    assert [(e.reason, dict(e.when)) for e in entries] == [
        (baseline.CAUSES["linear-edges"], {"directml_version": ("1.15.4+x",
                                                                "libdirectml.so of y"),
                                           "vendor": ("Mesa",)}),
        (baseline.CAUSES["linear-edges"], {"directml_version": ("1.15.4+x",)}),
        (baseline.CAUSES["linear-edges"], {"directml_version": ("1.15.4+x",
                                                                "libdirectml.so of y")}),
        (baseline.CAUSES["nearest-8bit"], {"directml_version": ("1.15.4+x",
                                                                "libdirectml.so of y")})]
    assert covered == [{linear[1].id}, {linear[0].id}, {linear[2].id}, {c.id for c in nearest8}]
    assert all(len(e.cases) < len(nearest8) for e in entries)  # patterns, not one per case
    bad = dict(new, results=[*new["results"], {"id": nearest32[0].id, "status": "FAIL",
                                               "ambiguous": None}][1:])
    with pytest.raises(ValueError, match=r"no known cause on 1\.15\.4\+x \(directml;"):
        baseline.build([bad, old], cases)  # a FLOAT32 nearest FAIL has no known cause
    with pytest.raises(ValueError, match="does not say its directml_version"):
        baseline.build([{"backend": {"name": "numpy"}, "results": []}], cases)
    # A run recorded before some cases existed (a GPU record) says nothing of them: their
    # pattern is not stale against it, and a run that held them and passed still refuses it.
    early = doc("directml-linux", "libdirectml.so of y", "NVIDIA", (nearest8[1:], "FAIL"),
                (linear[:2], "PASS"), (linear[2:], "FAIL"))
    assert parse(baseline.build([new, old, early], cases)).entries
    passed = doc("directml-linux", "libdirectml.so of y", "NVIDIA", (nearest8[1:], "FAIL"),
                 (nearest8[:1], "PASS"), (linear[:2], "PASS"), (linear[2:], "FAIL"))
    texts = [baseline.build([new, old, passed], cases)]
    assert texts and "vendor" in texts[0]  # the passing run narrows that case's entry


def test_patterns_match_exactly_the_group():
    from backends.directml.baseline import patterns
    from conformance.casefile import id_matches

    ids = ["a/x/int8/1", "a/x/int8/2", "a/x/uint8/1", "a/x/uint8/2", "a/x/float32/1",
           "a/y/int8/1", "a/y/int8/2", "b/1", "b/10"]
    for group in ({"a/x/int8/1", "a/x/int8/2", "a/y/int8/1", "a/y/int8/2"},
                  {"a/x/int8/1", "a/x/uint8/1"}, {"b/1"}, {"a/x/int8/1", "a/x/int8/2",
                                                             "a/x/uint8/1", "a/x/uint8/2"}):
        got = patterns(group, ids)
        assert {i for i in ids if any(id_matches(i, p) for p in got)} == group, got
    # the widest folder whose cases are all in the group, then folders merged at one place
    assert patterns({"a/x/int8/1", "a/x/int8/2", "a/y/int8/1", "a/y/int8/2"}, ids) == [
        "a/x/int8/*", "a/y/*"]
    assert patterns({"a/x/int8/1", "a/y/int8/1"}, ids) == ["a/*/int8/1"]
    assert patterns({"a/x/int8/1", "a/x/uint8/1"}, ids) == ["a/x/int8/1", "a/x/uint8/1"]
    assert patterns({"b/1"}, ids) == ["b/[1]"]


def test_the_helper_environment_takes_tracing_paths_and_wine_debug_channels(tmp_path,
                                                                           monkeypatch):
    """backends/directml/trace/README.md: the shader dump, override and root-constant log
    variables reach the Windows helper as Wine paths, WINEDEBUG from $DMLCONF_WINEDEBUG; any
    other VKD3D_ or WINE variable of the caller does not."""
    from backends.directml import helper, layer

    lay = layer.Layer(tmp_path, tmp_path / "icd.json", 0x6400, ("FLOAT32",), "0" * 64,
                      runtime=layer.WINE)
    for name in helper.TRACE_PATHS:
        monkeypatch.setenv(name, str(tmp_path / name.lower()))
    monkeypatch.setenv("VKD3D_CONFIG", "no_upload_hvv")
    monkeypatch.setenv("WINEDEBUG", "+all")
    env = helper.environment(lay, tmp_path / "prefix", ":91", tmp_path / "log")
    assert {name: env[name] for name in helper.TRACE_PATHS} == {
        name: "Z:" + str((tmp_path / name.lower()).resolve()).replace("/", "\\")
        for name in helper.TRACE_PATHS}
    assert "VKD3D_CONFIG" not in env and env["WINEDEBUG"] == "-all"
    monkeypatch.setenv("DMLCONF_WINEDEBUG", "err+all,+loaddll")
    monkeypatch.delenv("VKD3D_SHADER_OVERRIDE")
    env = helper.environment(lay, tmp_path / "prefix", ":91", tmp_path / "log")
    assert env["WINEDEBUG"] == "err+all,+loaddll" and "VKD3D_SHADER_OVERRIDE" not in env


def test_exact_patterns_match_one_id_only():
    from backends.directml.baseline import exact
    from conformance.casefile import id_matches

    ids = ["a/b/1", "a/b/10", "a/c"]
    for i in ids:
        assert [j for j in ids if id_matches(j, exact(i, ids))] == [i]
    assert exact("a/c", ids) == "a/c" and exact("a/b/1", ids) == "a/b/[1]"


# every case of eight committed runs against the baseline's causes: 10 s, CI's certification step
@pytest.mark.certification
def test_the_committed_baseline_covers_each_case_with_its_own_cause():
    """An entry's patterns are globs: a case added under one later is covered by it, so each
    committed case an entry covers must be of the entry's cause (else a new finding could hide
    under an old one)."""
    from backends.directml import baseline
    from conformance.casefile import load_cases
    from conformance.results.baseline import load

    known = load(baseline.DEFAULT)
    reasons = {text: name for name, text in baseline.CAUSES.items()}
    wrong = [(e.number, c.id) for c in load_cases([ROOT / "cases"]) for e in known.entries
             if e.covers(c.id) and reasons[e.reason] != baseline.cause(c)]
    assert not wrong


def lavapipe_version() -> str | None:
    """The installed Mesa Vulkan drivers' Debian version (lavapipe), or None."""
    import subprocess

    try:
        found = subprocess.run(["dpkg-query", "-W", "-f=${Version}", "mesa-vulkan-drivers"],
                               capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    return found.stdout.strip() if found.returncode == 0 else None


BASELINE_LAVAPIPE = (ROOT / "backends" / "directml" / "lavapipe.version").read_text().strip()


@pytest.mark.certification  # the whole suite twice, about a minute: CI's certification step
@pytest.mark.skipif(lavapipe_version() != BASELINE_LAVAPIPE,
                    reason=f"the baseline was made on lavapipe {BASELINE_LAVAPIPE}, this machine "
                           f"has {lavapipe_version()}: remake it there (backends/directml/"
                           "baseline.py)")
@pytest.mark.parametrize(("backend", "expected"), [
    pytest.param("directml", 841, marks=needs(layers.WINE), id="directml"),
    pytest.param("directml-linux", 561, marks=needs(layers.LINUX), id="directml-linux")])
def test_the_committed_baseline_names_every_known_finding_of_the_suite(tmp_path, backend,
                                                                       expected):
    """The whole committed suite on each real DirectML, with the one committed baseline: exit 0
    (every FAIL is a known finding of that build) and no entry stale (every finding still
    there); the entries of the other build's findings only are not for this run."""
    from conformance.cli import main

    out = tmp_path / "dml.json"
    assert main(["run", "-q", "--backend", backend, "--json", str(out), "--baseline",
                 str(ROOT / "backends" / "directml" / "baseline-lavapipe.yaml")]) == 0
    doc = json.loads(out.read_text())
    assert doc["baseline"]["stale"] == []
    assert [r["id"] for r in doc["results"] if r["status"] == "FAIL" and not r["ambiguous"]] == []
    assert doc["summary"]["XFAIL"] == expected


# -- the GPU record (everywhere: from results files) ----------------------------------------------
def test_the_gpu_record_compares_each_run_with_lavapipe_case_by_case(tmp_path):
    import lzma

    from backends.directml.gpu import record

    # a reason may hold "): " itself: the baseline the run names says where it ends
    offsets = "offset outside [0, 1): one low; docs"
    (tmp_path / "b.yaml").write_text(
        f'expected_failures:\n  - cases: ["a/b/e/*"]\n    status: FAIL\n    reason: "{offsets}"\n')

    def results(stack, *rows):
        doc = {"backend": {"environment": {"directml_version": "v", "adapter": stack,
                                           "driver": "d"}},
               "summary": {"PASS": 1}, "duration_s": 3.0,
               "baseline": {"path": str(tmp_path / "b.yaml")},
               "results": [{"id": i, "status": s, "message": m} for i, s, m in rows]}
        with lzma.open(tmp_path / f"{stack}-directml-linux.json.xz", "wt") as f:
            json.dump(doc, f)

    why = "expected FAIL (8-bit nearest; docs): "
    results("lavapipe", ("a/b/c/1", "XFAIL", why + "got 1"), ("a/b/c/2", "QUALITY_WARNING", ""),
            ("a/b/d/3", "NOT_SUPPORTED", "FLOAT64"), ("a/b/c/4", "FAIL", "got 5"),
            ("a/b/e/5", "XFAIL", f"expected FAIL ({offsets}): got 2 (x): 3"))
    results("nvidia-h200", ("a/b/c/1", "XFAIL", why + "got 1"), ("a/b/c/2", "PASS", ""),
            ("a/b/d/3", "PASS", ""), ("a/b/c/4", "FAIL", "got 6"),
            ("a/b/e/5", "XFAIL", f"expected FAIL ({offsets}): got 2 (x): 4"))
    (tmp_path / "nvidia-h200.txt").write_text("NVIDIA H200, 580\n")
    text = record.build(tmp_path)
    assert "## `directml-linux`" in text and "`nvidia-h200`: NVIDIA H200, 580" in text
    assert "Same status on 3 of 5 cases." in text
    assert "| offset outside [0, 1): one low | 1 | 1 |" in text
    assert "| `a/b/c` | QUALITY_WARNING | PASS | 1 | `a/b/c/2` |" in text
    assert "| `a/b/d` | NOT_SUPPORTED | PASS | 1 | `a/b/d/3` |" in text
    assert "other values (the GPU's arithmetic, or another wrong element): 2, e.g. `a/b/c/4`" \
        in text
    assert "| 8-bit nearest | 1 | 1 |" in text


def test_the_committed_gpu_record_is_generated_from_the_committed_results():
    from backends.directml.gpu import record

    assert (ROOT / "docs" / "directml-gpu.md").read_text() == record.build(ROOT / "docs" / "gpu")


# -- the findings' minimal cases (docs/findings, backends/directml/trace) -------------------------
TRACE = ROOT / "backends" / "directml" / "trace" / "cases"


def trace_case(case_id):
    from conformance.casefile import load_cases

    return next(c for c in load_cases([TRACE]) if c.id == case_id)


def test_the_trace_cases_hold_the_pages_values():
    """The minimal cases of docs/findings state what the page's relation gives: the reference
    passes every one."""
    from backends.numpy_reference import NumpyReferenceBackend
    from conformance.casefile import load_cases

    cases = load_cases([TRACE])
    assert len(cases) == 21
    assert {run_case(c, NumpyReferenceBackend()).status for c in cases} == {"PASS"}


#: (case, build) -> what docs/findings says DirectML returns
FINDINGS = {
    ("trace/nearest-ex/uint8", DirectMLLinuxBackend): [10, 10, 10, 20, 20, 30, 30, 40],
    ("trace/nearest-ex/int8", DirectMLBackend): [10, 10, 10, 20, 20, 30, 30, 40],
    ("trace/nearest-ex/float32", DirectMLLinuxBackend): [10, 10, 20, 20, 30, 30, 40, 40],
    ("trace/linear/1d-m1.5-nonramp/float32", DirectMLLinuxBackend): [0, 0, 20, -10, 20, -10, 20],
    ("trace/linear/1d-m1.5-nonramp/float32", DirectMLBackend): [0, 0, 20, -10, 20, -10, 20],
    ("trace/linear/4d/float32", DirectMLBackend): [0, 0, 1, 2, 3, 4, 4],
    ("trace/aa/third", DirectMLBackend): [0, 1, 0, 0],
    ("trace/aa/quarter-m3.5-onehot0", DirectMLBackend): [-15.625, 0, 0],
}


@pytest.mark.parametrize(("case_id", "backend_class"), [
    pytest.param(i, b, marks=needs(b.runtime), id=f"{b.name}:{i}") for i, b in FINDINGS])
def test_directml_returns_what_the_findings_report(case_id, backend_class):
    case = trace_case(case_id)
    call = case.calls[0].call
    (source,) = case.inputs.values()
    desc = call.tensors["InputTensor"]
    values = np.array(source.params, desc.data_type.numpy_dtype).reshape(desc.sizes)
    got = run(backend_class(), call, values)
    assert got.ravel().tolist() == FINDINGS[case_id, backend_class]


def test_the_linear_fix_forms_the_coordinate_before_floor_and_fract():
    """backends/directml/trace/linear_fix.py on both translators' GLSL of DirectML's linear
    shaders (lines of the Linux build's c3a6b593d1fbcd07 and 1.15.4's a15dd520630cad6b)."""
    from backends.directml.trace.linear_fix import fix

    dxil = ("    float _243 = fract(_212) + ((-0.0) - _234.x);\n"
            "    uint _264 = uint(int(floor(_212))) + _260;\n"
            "    uint _266 = uint(int(floor(_216))) + _260;\n")
    assert fix(dxil) == ("    float _243 = fract(_212 - _234.x);\n"
                         "    uint _264 = uint(int(floor(_212 - _234.x))) + _260;\n"
                         "    uint _266 = uint(int(floor(_216))) + _260;\n", 1)
    sm5 = ("    vec4 r6 = fract(r5);\n"
           "    r6 += (-vec4(_39.cb0_28, _39.cb0_29, _39.cb0_30, _39.cb0_31));\n")
    assert fix(sm5) == ("    r5 += (-vec4(_39.cb0_28, _39.cb0_29, _39.cb0_30, _39.cb0_31));\n"
                        "    vec4 r6 = fract(r5);\n", 1)
    assert fix("void main() {}\n") == ("void main() {}\n", 0)


def test_private_prefixes_are_told_apart_by_their_lock_not_a_pid(tmp_path, monkeypatch):
    """Sandboxed workers each have a PID namespace of their own, so two share a PID: a private
    prefix is claimed by an flock its process holds. Another process's copy that is in use is
    kept; a copy whose process is gone (its lock free), an old PID-named one included, goes at
    the next start; a copy still being made is left alone."""
    import subprocess
    import sys

    from backends.directml import helper

    monkeypatch.setenv("DMLCONF_WINESERVER", "/bin/true")
    prefix = tmp_path / "prefix"
    (prefix / "drive_c").mkdir(parents=True)
    (prefix / "drive_c" / "dll").write_bytes(b"MZ")
    (prefix / "system.reg").write_text("registry")
    live = tmp_path / "live"
    (live / "2").mkdir(parents=True)  # a copy named by the PID of a process that is gone
    (live / ".new-making").mkdir()  # a copy another process is making
    child = subprocess.Popen(
        [sys.executable, "-c", "import sys; from pathlib import Path; "
         "from backends.directml.helper import private_prefix; "
         f"print(private_prefix(Path({str(prefix)!r})), flush=True); sys.stdin.read()"],
        cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        theirs = Path(child.stdout.readline().strip())
        mine = helper.private_prefix(prefix)
        dll = Path("drive_c", "dll")
        assert mine != theirs and theirs.is_dir() and (mine / dll).read_bytes() == b"MZ"
        assert (mine / dll).stat().st_ino == (prefix / dll).stat().st_ino  # hard-linked
        assert (mine / "system.reg").stat().st_ino != (prefix / "system.reg").stat().st_ino
        assert not (live / "2").exists() and (live / ".new-making").is_dir()
    finally:
        child.stdin.close()
        child.wait(timeout=30)
    helper.remove_private_prefix(mine)
    again = helper.private_prefix(prefix)
    assert not theirs.exists() and not mine.exists()
    assert sorted(p.name for p in live.iterdir()) == sorted([again.name, ".new-making"])
    helper.remove_private_prefix(again)
    assert not again.exists() and again not in helper._HELD
