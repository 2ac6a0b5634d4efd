"""Where the two DirectML runtimes live, and what their set-up recorded.

`dmlconf directml setup` (backends/directml/setup.py) builds everything into a cache folder
outside the repository and writes a manifest per runtime there; the backend reads the manifest,
never builds. The folder is $DMLCONF_DIRECTML_CACHE, else
$XDG_CACHE_HOME/dml-conformance/directml, else ~/.cache/dml-conformance/directml:

    libdirectml/<md5>/libdirectml.so            the Linux build, from the pinned torch-directml
    vkd3d-proton/<sha256[:16] of the source>/   src/, build/, dist/{lib,include}/, built.json
    layer/<key>/lib/                            what the Linux runtime loads: libdmlshim.so (the
                                                shim), libd3d12.so, libdxcore.so, libdirectml.so
                                                and vkd3d-proton's two libraries
    layer.json                                  the manifest of the Linux runtime in use
    DirectML.dll/<md5>/DirectML.dll             the Windows build, from the pinned
                                                onnxruntime-directml wheel (setup_wine.py)
    vkd3d-proton-win64/<sha256[:16]>/           vkd3d-proton built for Windows with mingw-w64
    wine/<key>/run/                             what the Wine runtime runs: dmlshim-helper.exe,
                                                DirectML.dll, DXCore.dll, d3d12.dll, d3d12core.dll
    wine/prefix/                                the private Wine prefix
    layer-wine.json                             the manifest of the Wine runtime in use
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: The runtimes: the Linux build in-process, the Windows build under Wine (docs/directml-linux.md)
LINUX, WINE = "linux", "wine"
RUNTIMES = (LINUX, WINE)
#: The pinned DirectML runtime: PyPI's torch-directml wheel for manylinux (issue 12).
WHEEL_REQUIREMENT = "torch-directml==0.2.5.dev240914"
WHEEL_MEMBER = "torch_directml/libdirectml.so"
DIRECTML_MD5 = "28b4d23c79c0b3f98136642c3d0f3287"
DIRECTML_SHA256 = "fd54a8c578630f62a31d6d971d1f7e758e8497df8afccefe5efb1517d791692c"
#: The pinned Windows DirectML, the newest release (1.15.4, feature level 6_4, RESAMPLE3): the
#: DLL in PyPI's onnxruntime-directml wheel for win_amd64 (the same DLL as npm's onnxruntime-node).
DLL_WHEEL_REQUIREMENT = "onnxruntime-directml==1.24.4"
DLL_WHEEL_MEMBER = "onnxruntime/capi/DirectML.dll"
DLL_MD5 = "2cae63adea6bb72000d4471b1a587379"
DLL_SHA256 = "c07cb8c2f870f0152bfb690f64c4b048e78bbc219efad420a9758fc896cbecb0"
DLL_VERSION = "1.15.4+241025-1615.1.dml-1.15.fac7597"  # its FileVersion resource


@dataclass(frozen=True)
class Pin:
    """A DirectML runtime pinned in a wheel: what to download, which member to keep, its hash."""

    requirement: str
    member: str
    md5: str
    sha256: str
    platform: str  # pip download --platform
    python: str  # pip download --python-version
    folder: str  # the cache folder it is kept in, under its md5

    @property
    def name(self) -> str:
        return self.member.rsplit("/", 1)[-1]


PINS = {LINUX: Pin(WHEEL_REQUIREMENT, WHEEL_MEMBER, DIRECTML_MD5, DIRECTML_SHA256,
                   "manylinux2010_x86_64", "3.10", "libdirectml"),
        WINE: Pin(DLL_WHEEL_REQUIREMENT, DLL_WHEEL_MEMBER, DLL_MD5, DLL_SHA256, "win_amd64",
                  "3.11", "DirectML.dll")}
#: The pinned D3D12-on-Vulkan layer.
VKD3D_PROTON_VERSION = "2.14.1"
VKD3D_PROTON_TARBALL = f"vkd3d-proton-{VKD3D_PROTON_VERSION}-src.tar.xz"
VKD3D_PROTON_GIT = "https://github.com/HansKristian-Work/vkd3d-proton"

ENV_CACHE = "DMLCONF_DIRECTML_CACHE"
NATIVE = Path(__file__).resolve().parent / "native"
PATCHES = Path(__file__).resolve().parent / "patches"
#: What each runtime's backend loads or starts, in the manifest's libdir
SHIMS = {LINUX: "libdmlshim.so", WINE: "dmlshim-helper.exe"}
SHIM = SHIMS[LINUX]
SETUP_COMMAND = "dmlconf directml setup"


def missing(runtime: str = LINUX) -> str:
    """Why a runtime cannot run, when it was never set up."""
    what = {LINUX: "the DirectML layer (the Linux build)",
            WINE: "DirectML 1.15.4 under Wine"}[runtime]
    return f"{what} is not set up here: run `{SETUP_COMMAND} --runtime {runtime}` " \
           "(docs/directml-linux.md)"


MISSING = missing(LINUX)
#: Where Debian's mesa-vulkan-drivers puts lavapipe's ICD file.
LAVAPIPE_ICD_DIRS = ("/usr/share/vulkan/icd.d", "/etc/vulkan/icd.d",
                     "/usr/local/share/vulkan/icd.d")


def cache_root() -> Path:
    given = os.environ.get(ENV_CACHE)
    if given:
        return Path(given).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "dml-conformance" / "directml"


def manifest_path(runtime: str = LINUX) -> Path:
    return cache_root() / ("layer.json" if runtime == LINUX else f"layer-{runtime}.json")


def files_sha256(paths: Sequence[Path]) -> str:
    """The hash of files by their names and bytes, in the order given."""
    digest = hashlib.sha256()
    for path in paths:
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def native_sources_sha256() -> str:
    """The hash of the shim's sources: a layer built from other sources is stale."""
    return files_sha256([p for p in sorted(NATIVE.iterdir())
                         if p.is_file() and p.suffix in (".c", ".h", ".map", ".def")])


def layer_patches() -> list[Path]:
    """The fixes applied to the pinned vkd3d-proton before it is built, in order (each file says
    what it mends and why)."""
    return sorted(PATCHES.glob("vkd3d-proton-*.patch"))


def patches_sha256(patches: Sequence[Path] | None = None) -> str:
    """The hash of the patches applied: a layer built with other patches is another layer."""
    return files_sha256(layer_patches() if patches is None else patches)


def find_lavapipe_icd() -> Path | None:
    """lavapipe's ICD file (lvp_icd.json, or lvp_icd.x86_64.json on some distributions)."""
    for folder in LAVAPIPE_ICD_DIRS:
        for name in ("lvp_icd.json", "lvp_icd.x86_64.json"):
            path = Path(folder) / name
            if path.is_file():
                return path
    return None


@dataclass(frozen=True)
class Layer:
    """The manifest of a built layer."""

    libdir: Path
    icd: Path
    feature_level: int  # DML_FEATURE_LEVEL value DirectML reports (CheckFeatureSupport)
    data_types: tuple[str, ...]  # DML_TENSOR_DATA_TYPE names the device supports
    sources_sha256: str
    info: dict[str, Any] = field(default_factory=dict)
    runtime: str = LINUX

    @property
    def shim(self) -> Path:
        return self.libdir / SHIMS[self.runtime]

    def to_json(self) -> dict[str, Any]:
        return {"runtime": self.runtime, "libdir": str(self.libdir), "icd": str(self.icd),
                "feature_level": f"0x{self.feature_level:04x}",
                "data_types": list(self.data_types), "sources_sha256": self.sources_sha256,
                **self.info}

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> Layer:
        known = {"runtime", "libdir", "icd", "feature_level", "data_types", "sources_sha256"}
        return cls(libdir=Path(obj["libdir"]), icd=Path(obj["icd"]),
                   feature_level=int(str(obj["feature_level"]), 0),
                   data_types=tuple(obj["data_types"]), sources_sha256=obj["sources_sha256"],
                   info={k: v for k, v in obj.items() if k not in known},
                   runtime=obj.get("runtime", LINUX))


def load_layer(runtime: str = LINUX) -> tuple[Layer | None, str | None]:
    """The runtime's layer and None, or None and why it cannot be used (in words)."""
    path = manifest_path(runtime)
    if not path.is_file():
        return None, missing(runtime)
    try:
        layer = Layer.from_json(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        return None, f"the layer manifest {path} is unreadable ({exc}): run `{SETUP_COMMAND}`"
    if not layer.shim.is_file():
        return None, f"{layer.shim} is missing: run `{SETUP_COMMAND}`"
    if not layer.icd.is_file():
        return None, (f"the Vulkan driver's ICD file {layer.icd} is gone (for lavapipe: "
                      f"mesa-vulkan-drivers uninstalled?): run `{SETUP_COMMAND}` for what to "
                      "install")
    if layer.sources_sha256 != native_sources_sha256():
        return None, (f"the shim in {layer.libdir} was built from other sources than "
                      f"{NATIVE}: run `{SETUP_COMMAND}` to rebuild it")
    vkd3d = layer.info.get("vkd3d_proton") or {}
    if vkd3d.get("patches_sha256") != patches_sha256():
        built = ", ".join(vkd3d.get("patches") or []) or "none"
        wanted = ", ".join(p.name for p in layer_patches()) or "none"
        return None, (f"the vkd3d-proton in {layer.libdir} was built with other patches ({built}) "
                      f"than {PATCHES} ({wanted}): run `{SETUP_COMMAND}` to rebuild it")
    return layer, None
