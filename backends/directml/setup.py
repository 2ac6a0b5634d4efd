"""`dmlconf directml setup` and `dmlconf directml status`: set up the two DirectML runtimes in a
cache folder outside the repository (backends/directml/layer.py says where), reusing every piece
already built. `--runtime wine` is DirectML.dll 1.15.4 under Wine (the `directml` backend),
`--runtime linux` torch-directml 0.2.5's libdirectml.so (`directml-linux`); both by default.

setup, per runtime:
1. checks the tools (Linux: C compiler, ninja, glslangValidator, widl, Vulkan headers and loader;
   Wine: mingw-w64, wine64, Xvfb, ninja, glslangValidator) and the Vulkan driver (lavapipe,
   Mesa's CPU Vulkan driver, unless --icd names another), naming the Debian packages to install
   when one is missing; meson comes from PyPI into the cache when it is not installed;
2. gets the DirectML library out of its pinned wheel (pip download, md5 checked, only the
   library kept);
3. builds vkd3d-proton 2.14.1 from a source tarball (--source: a .tar.xz or a folder holding
   one; default: ../shared/directml-linux/third_party beside this repository when present, else
   a git clone of the pinned tag with its submodules), with the fixes of backends/directml/patches
   applied, keyed by the source's sha256 and the patches', natively or for Windows with mingw-w64;
4. builds the shim (backends/directml/native): with the system compiler as libdmlshim.so, or
   with mingw-w64 as dmlshim-helper.exe and DXCore.dll, and makes the private Wine prefix
   (setup_wine.py);
5. opens the runtime in a fresh process, asks DirectML for its feature level and data types,
   runs the documentation's DEPTH_TO_SPACE1 example, and writes the manifest (layer.json,
   layer-wine.json).

    python -m backends.directml.setup setup [--runtime wine|linux|all] [--icd PATH]
                                            [--source PATH] [--force] [--jobs N]
    python -m backends.directml.setup register MANIFEST --libdir DIR [--icd PATH] [--prefix P]
    python -m backends.directml.setup status

The pieces are setup_tools.py (step 1's checks, and running a tool), setup_build.py (steps 2 to
4) and setup_wine.py (the Wine runtime's own steps); this module runs them in order (setup),
probes the result and writes the manifest, registers a runtime built elsewhere (register), and
says what is present (status). Every name of those modules that other code imports from here
still imports from here.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path

from backends.directml import layer as lay
from backends.directml.setup_build import (
    REPO,
    RUNTIME_FOLDERS,
    SHARED_SOURCES,
    build_shim,
    build_vkd3d_proton,
    clone_source,
    file_digest,
    find_source,
    get_directml,
    md5_file,
    runtime_folder,
    sha256_file,
)
from backends.directml.setup_tools import (
    MESON_VERSION,
    TOOLS,
    TOOLS_WINE,
    SetupError,
    backports_line,
    check_lavapipe,
    check_tools,
    debian_mirror,
    find_icd,
    lavapipe_advice,
    meson_command,
    run,
    say,
)

__all__ = [
    "BACKEND_OF", "MESON_VERSION", "REPO", "RUNTIME_FOLDERS", "SHARED_SOURCES", "TOOLS",
    "TOOLS_WINE", "SetupError", "backports_line", "build_linux", "build_shim",
    "build_vkd3d_proton", "build_wine", "check_lavapipe", "check_tools", "clone_source",
    "debian_mirror", "file_digest", "find_icd", "find_source", "get_directml", "lavapipe_advice",
    "locked", "main", "md5_file", "meson_command", "probe", "register", "run", "runtime_folder",
    "say", "setup", "sha256_file", "status", "write_manifest",
]


def probe(layer: lay.Layer) -> dict[str, object]:
    """Open the runtime in a fresh process (a crash there must not take the set-up with it)."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", prefix="dmlconf-layer-") as f:
        json.dump(layer.to_json(), f)
        f.flush()
        done = subprocess.run([sys.executable, "-m", "backends.directml.probe", f.name],
                              cwd=REPO, capture_output=True, timeout=600, check=False,
                              stdin=subprocess.DEVNULL)
    lines = done.stdout.decode("utf-8", "replace").strip().splitlines()
    try:
        out = json.loads(lines[-1])
    except (IndexError, ValueError):
        out = {"error": f"the probe exited {done.returncode} without an answer: "
                        + done.stderr.decode("utf-8", "replace")[-2000:]}
    if done.returncode or "error" in out:
        raise SetupError(f"the {layer.runtime} runtime was built but does not work: "
                         f"{out.get('error') or out}")
    return out


@contextlib.contextmanager
def locked(cache: Path) -> Iterator[None]:
    """One set-up at a time per cache (parallel CI jobs, two terminals)."""
    cache.mkdir(parents=True, exist_ok=True)
    with (cache / ".lock").open("w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        yield


def build_linux(cache: Path, source: Path | None, force: bool, jobs: int, wheel: str | None,
                icd: Path) -> lay.Layer:
    """The Linux build: libdirectml.so, vkd3d-proton, the shim library."""
    directml, directml_info = get_directml(cache, Path(wheel) if wheel else None)
    vkd3d, vkd3d_info = build_vkd3d_proton(cache, source, jobs, force)
    libdir = build_shim(cache, directml, vkd3d, force)
    return lay.Layer(libdir=libdir, icd=icd, feature_level=0, data_types=(),
                     sources_sha256=lay.native_sources_sha256(),
                     info={"directml": directml_info, "vkd3d_proton": vkd3d_info})


def build_wine(cache: Path, source: Path | None, force: bool, jobs: int, wheel: str | None,
               icd: Path) -> lay.Layer:
    """The Windows build under Wine: DirectML.dll, vkd3d-proton for Windows, the helper, the
    prefix."""
    from backends.directml import setup_wine
    from backends.directml.helper import version_of

    _, missing = check_tools(lay.WINE)
    if missing:
        raise SetupError("missing tools for the Wine runtime; as root: apt-get install -y "
                         + " ".join(sorted(set(missing))))
    dll, dll_info = get_directml(cache, Path(wheel) if wheel else None, lay.WINE)
    dll_info["file_version"] = version_of(dll)
    vkd3d, vkd3d_info = build_vkd3d_proton(cache, source, jobs, force, windows=True)
    run_folder = setup_wine.build_run_folder(cache, dll, vkd3d, force)
    prefix = setup_wine.make_prefix(cache)
    return lay.Layer(libdir=run_folder, icd=icd, feature_level=0, data_types=(),
                     sources_sha256=lay.native_sources_sha256(), runtime=lay.WINE,
                     info={"directml": dll_info, "vkd3d_proton": vkd3d_info,
                           "prefix": str(prefix)})


def setup(source: str | None, force: bool, jobs: int, wheel: str | None,
          runtimes: Sequence[str] = lay.RUNTIMES, icd_path: str | None = None) -> int:
    started = time.perf_counter()
    cache = lay.cache_root()
    say(f"cache: {cache}")
    icd = find_icd(icd_path)
    say(f"Vulkan driver: {icd}")
    tarball = find_source(source)
    failed = []
    with locked(cache):
        for runtime in runtimes:
            began = time.perf_counter()
            say(f"== the {runtime} runtime ==")
            try:
                build = build_linux if runtime == lay.LINUX else build_wine
                built = build(cache, tarball, force, jobs, wheel, icd)
                say(f"probing {runtime}: device, CheckFeatureSupport, the DEPTH_TO_SPACE1 example")
                found = probe(built)
            except SetupError as exc:
                if len(runtimes) == 1:
                    raise
                print(f"[directml setup] the {runtime} runtime FAILED: {exc}", file=sys.stderr)
                failed.append(runtime)
                continue
            path = write_manifest(built, found, began)
            say(f"{runtime} ready in {time.perf_counter() - began:.0f} s: DirectML feature level "
                f"{found['feature_level']}, data types {', '.join(found['data_types'])}; "  # type: ignore
                f"DEPTH_TO_SPACE1 example {found['depth_to_space1_example']}; manifest {path}")
    say(f"done in {time.perf_counter() - started:.0f} s; run it: dmlconf run --backend "
        + " / ".join(BACKEND_OF[r] for r in runtimes if r not in failed))
    return 1 if failed else 0


def write_manifest(built: lay.Layer, found: dict[str, object], began: float) -> Path:
    """The runtime's manifest, with what its probe found."""
    layer = replace(built, feature_level=int(str(found["feature_level"]), 0),
                    data_types=tuple(found["data_types"]),  # type: ignore[arg-type]
                    info={**built.info, "probe": found,
                          "setup_s": round(time.perf_counter() - began, 1),
                          "built": time.strftime("%Y-%m-%dT%H:%M:%S")})
    path = lay.manifest_path(built.runtime)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".part")
    partial.write_text(json.dumps(layer.to_json(), indent=1))
    partial.replace(path)
    return path


def register(manifest: str, libdir: str, icd_path: str | None, prefix: str | None) -> int:
    """A runtime built elsewhere, moved here (a GPU machine that can build nothing): its
    manifest from the machine that built it, its files at libdir (and the Wine prefix), probed
    on this machine's Vulkan driver and written as this cache's manifest."""
    began = time.perf_counter()
    try:
        built = lay.Layer.from_json(json.loads(Path(manifest).read_text(encoding="utf-8")))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise SetupError(f"{manifest} is no runtime manifest: {exc}") from None
    info = {k: v for k, v in built.info.items() if k not in ("probe", "setup_s", "built")}
    if prefix:
        info["prefix"] = str(Path(prefix).resolve())
    built = replace(built, libdir=Path(libdir).resolve(), icd=find_icd(icd_path), info=info,
                    sources_sha256=lay.native_sources_sha256())
    if not built.shim.is_file():
        raise SetupError(f"{built.shim} is missing: {libdir} holds no built {built.runtime} "
                         "runtime")
    say(f"probing {built.runtime} at {built.libdir} on {built.icd}")
    found = probe(built)
    path = write_manifest(built, found, began)
    say(f"{built.runtime} registered: feature level {found['feature_level']}, DEPTH_TO_SPACE1 "
        f"example {found['depth_to_space1_example']}; manifest {path}")
    return 0


#: The backend that runs each runtime (conformance/backend.py's BUILTIN)
BACKEND_OF = {lay.WINE: "directml", lay.LINUX: "directml-linux"}


def status() -> int:
    """What is present per runtime, and what is missing with the command that fixes it."""
    cache = lay.cache_root()
    print(f"cache:      {cache}")
    icd = check_lavapipe()
    print(f"lavapipe:   {icd or 'MISSING'}")
    print(f"meson:      {shutil.which('meson') or 'not installed (setup takes it from PyPI)'}")
    ready = 0
    for runtime in lay.RUNTIMES:
        pin = lay.PINS[runtime]
        found, missing = check_tools(runtime)
        lib = cache / pin.folder / pin.md5 / pin.name
        print(f"-- {runtime} (--backend {BACKEND_OF[runtime]}) --")
        print(f"  tools:    {', '.join(sorted(found))}"
              + (f"; MISSING (Debian packages): {' '.join(sorted(set(missing)))}"
                 if missing else ""))
        print(f"  DirectML: {lib if lib.is_file() else f'not downloaded ({pin.requirement})'}")
        layer, why = lay.load_layer(runtime)
        if layer is None:
            print(f"  runtime:  NOT READY: {why}")
            continue
        ready += 1
        version = (layer.info.get("directml") or {}).get("file_version") or pin.requirement
        print(f"  runtime:  ready ({layer.libdir}); DirectML {version}; feature level "
              f"0x{layer.feature_level:04x}; data types {', '.join(layer.data_types)}; "
              f"Vulkan driver {layer.icd}")
    if icd is None:
        print(lavapipe_advice())
    return 0 if ready == len(lay.RUNTIMES) else 1


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="dmlconf directml", description=__doc__.split("\n\n")[0],
        epilog="examples:\n"
               "  dmlconf directml setup\n"
               "      both runtimes, reusing what is already built (minutes the first time)\n"
               "  dmlconf directml setup --runtime linux --icd "
               "/usr/share/vulkan/icd.d/nvidia_icd.json\n"
               "      torch-directml's libdirectml.so on an NVIDIA GPU's Vulkan driver\n"
               "  dmlconf directml status\n\n"
               "exit status:\n"
               "  0  set up, registered, or (status) every runtime ready\n"
               "  1  a step failed, or (status) a runtime is not ready\n"
               "  2  bad arguments",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    s = sub.add_parser("setup", help="build the layer (reusing what is already built)")
    s.add_argument("--source", help=f"vkd3d-proton source tarball ({lay.VKD3D_PROTON_TARBALL}) or "
                   f"a folder holding it (default: {SHARED_SOURCES} when present, else a git "
                   "clone of the pinned tag)")
    s.add_argument("--wheel", help="the runtime's wheel already downloaded (torch-directml for "
                   "linux, onnxruntime-directml win_amd64 for wine; md5 still checked)")
    s.add_argument("--force", action="store_true", help="rebuild vkd3d-proton and the shim")
    s.add_argument("--jobs", type=int, default=os.cpu_count() or 2, help="ninja's -j")
    s.add_argument("--runtime", choices=(*lay.RUNTIMES, "all"), default="all",
                   help="which DirectML to set up: wine (DirectML.dll 1.15.4 under Wine, the "
                        "`directml` backend), linux (torch-directml 0.2.5's libdirectml.so, "
                        "`directml-linux`), or all (default)")
    s.add_argument("--icd", help="the Vulkan driver's ICD file to run on (default: lavapipe's), "
                   "e.g. /usr/share/vulkan/icd.d/nvidia_icd.json for an NVIDIA GPU")
    r = sub.add_parser("register", help="take a runtime built on another machine (its "
                       "manifest and files), probe it here and write this cache's manifest")
    r.add_argument("manifest", help="the runtime's layer.json / layer-wine.json from where "
                   "it was built")
    r.add_argument("--libdir", required=True, help="where its files are here (lib/ or run/)")
    r.add_argument("--icd", help="the Vulkan driver's ICD file (default: lavapipe's)")
    r.add_argument("--prefix", help="the Wine runtime's prefix here")
    sub.add_parser("status", help="say what is present (also: check)")
    sub.add_parser("check", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    try:
        if args.command == "setup":
            runtimes = lay.RUNTIMES if args.runtime == "all" else (args.runtime,)
            return setup(args.source, args.force, args.jobs, args.wheel, runtimes, args.icd)
        if args.command == "register":
            return register(args.manifest, args.libdir, args.icd, args.prefix)
        return status()
    except SetupError as exc:
        print(f"[directml setup] FAILED: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
