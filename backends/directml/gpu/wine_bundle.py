"""The Wine runtime packed for a machine that has no Wine and no X server (the GPU machine):
`python -m backends.directml.gpu.wine_bundle OUT` (run by `gpu/run.sh prepare` with
RUNTIMES=wine), on a machine where `dmlconf directml setup --runtime wine` has run.

Wine is 700 MB installed; the bundle holds what one helper start opens (traced with strace:
Wine's PE and Unix modules, stripped, its NLS files, the X and font libraries it and Xvfb load)
and the prefix's registry with its opened files hard-linked to the stripped modules, plus Xvfb,
xkbcomp and the XKB data, and the runtime's run folder: about 15 MB compressed. OUT/wine.tar.xz
unpacks to wine/ (usr/, prefix/, run/, x/: Xvfb, lib/ and wrappers in bin/) and OUT/wine.json is
the runtime's manifest, for `dmlconf directml setup register` there.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

from backends.directml import layer as lay
from backends.directml.helper import (
    CMD_ABI,
    CMD_OPEN,
    HEAD,
    REQUEST,
    environment,
    private_prefix,
    remove_private_prefix,
    start_xvfb,
)

WINE_ROOT = Path("/usr/lib/wine")
#: libraries the GPU machine has or must not take from here (glibc, the C++ runtime, Mesa's
#: lavapipe and LLVM, the Vulkan loader and GL dispatch, which come as Debian packages)
KEEP_OUT = re.compile(r"^(libc|libm|libdl|libpthread|librt|ld-linux.*|libstdc\+\+|libgcc_s|"
                      r"libvulkan|libGL.*|libEGL|libLLVM.*|libvulkan_.*|libVkLayer.*|libicu.*|"
                      r"libxml2|libz3|libedit|libdrm.*|libgbm|libglapi|libsensors|libelf|"
                      r"libwayland.*|libdbus-1|libsystemd|libudev|libselinux)\.so")


def trace(layer: lay.Layer) -> tuple[list[Path], set[Path]]:
    """Every file a helper start (ABI, OPEN) opens, under strace: those outside its prefix, and
    those inside it, relative to it."""
    strace = shutil.which("strace")
    if strace is None:
        sys.exit("strace is needed to find what Wine opens: apt-get install strace")
    xvfb, display = start_xvfb()
    prefix = private_prefix(Path(layer.info["prefix"]))
    try:
        with tempfile.NamedTemporaryFile(suffix=".strace") as log:
            frames = HEAD.pack(REQUEST, CMD_ABI, 0) + HEAD.pack(REQUEST, CMD_OPEN, 0)
            subprocess.run([strace, "-f", "-qq", "-e", "trace=openat,execve", "-o", log.name,
                            str(WINE_ROOT / "wine64"), str(layer.shim)], input=frames,
                           cwd=layer.libdir, capture_output=True, timeout=300, check=False,
                           env=environment(layer, prefix, display, Path("/dev/null")))
            text = Path(log.name).read_text(errors="replace")
        # each path as opened: a library by the name it was asked for (its soname, which
        # dlopen looks for: libXrandr.so.2, not the libXrandr.so.2.2.0 it links to)
        opened = {Path(p) for line in text.splitlines() if "ENOENT" not in line
                  for p in re.findall(r'"(/[^"]+)"', line)}
        mine = prefix.resolve()  # through dosdevices/c: to drive_c, while the copy exists
        inside = {p.resolve().relative_to(mine) for p in opened
                  if p.resolve().is_relative_to(mine) and p.is_file()}
    finally:
        subprocess.run([str(WINE_ROOT / "wineserver64"), "-k"], timeout=60, check=False,
                       env={**os.environ, "WINEPREFIX": str(prefix)})
        xvfb.kill()
        remove_private_prefix(prefix)
    return sorted(p for p in opened if p.is_file()), inside


def strip(path: Path) -> None:
    tool = "x86_64-w64-mingw32-strip" if path.suffix in (".dll", ".exe", ".sys", ".drv") \
        else "strip"
    subprocess.run([tool, str(path)], capture_output=True, check=False)


def libraries(binary: str) -> list[Path]:
    out = subprocess.run(["ldd", binary], capture_output=True, text=True, check=False).stdout
    return [Path(p) for p in re.findall(r"=> (/\S+)", out)]


def build(out: Path) -> Path:
    layer, why = lay.load_layer(lay.WINE)
    if layer is None:
        sys.exit(why)
    root = out / "wine"
    shutil.rmtree(root, ignore_errors=True)
    prefix = Path(layer.info["prefix"])
    modules: dict[str, Path] = {}
    libs: set[Path] = set()
    files, inside = trace(layer)
    for path in files:
        real = path.resolve()
        if str(real).startswith(("/usr/lib/x86_64-linux-gnu/wine/", "/usr/lib/wine/")):
            dest = root / str(real).lstrip("/")
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(real, dest)
            strip(dest)
            modules.setdefault(real.name.lower(), dest)
        elif real.suffix == ".so" or ".so." in real.name:
            libs.add(path)  # copied under the name it was opened by
    for tool in ("wine64", "wineserver64"):
        dest = root / "usr/lib/wine" / tool
        if not dest.exists():
            shutil.copy2(WINE_ROOT / tool, dest)
    # the loader execs the wineserver beside it; Debian's is a script that looks for
    # /usr/lib/wine/wineserver64 by its absolute path: the binary itself there
    shutil.copy2(WINE_ROOT / "wineserver64", root / "usr/lib/wine/wineserver")
    shutil.copytree("/usr/share/wine", root / "usr/share/wine")
    # the prefix: registry and folders as made here; each file a helper opened, hard-linked to
    # its stripped module (the prefix holds copies of Wine's modules)
    for src in prefix.rglob("*"):
        dest = root / "prefix" / src.relative_to(prefix)
        if src.is_symlink():
            dest.parent.mkdir(parents=True, exist_ok=True)
            os.symlink(os.readlink(src), dest)
        elif src.is_dir():
            dest.mkdir(parents=True, exist_ok=True)
        elif (src.suffix == ".reg" or src.name.startswith(".")
              or src.relative_to(prefix) in inside):
            dest.parent.mkdir(parents=True, exist_ok=True)
            module = modules.get(src.name.lower())
            if module is not None:
                os.link(module, dest)
            else:
                shutil.copy2(src, dest)
    # no prefix update where it is unpacked: wineboot would start services whose modules were
    # never opened here (seen on the GPU machine: a storm of explorer processes)
    (root / "prefix" / ".update-timestamp").write_text("disable\n")
    shutil.copytree(layer.libdir, root / "run")
    # Xvfb, xkbcomp, the XKB data, and the libraries they and Wine load
    x = root / "x"
    (x / "bin").mkdir(parents=True)
    (x / "lib").mkdir()
    for tool in ("Xvfb", "xkbcomp"):
        binary = shutil.which(tool) or sys.exit(f"{tool} is not installed")
        shutil.copy2(binary, x / "bin" / f"{tool}.bin")
        libs.update(libraries(binary))
    for lib in sorted(libs):
        if not KEEP_OUT.match(lib.name):
            shutil.copy2(lib, x / "lib" / lib.name)
    shutil.copytree("/usr/share/X11/xkb", x / "xkb")
    head = ("#!/bin/sh\nH=\"$(cd \"$(dirname \"$0\")\" && pwd)\"\n"
            "export LD_LIBRARY_PATH=\"$H/../lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}\"\n")
    (x / "bin" / "Xvfb").write_text(head + 'exec "$H/Xvfb.bin" -xkbdir "$H/../xkb" "$@"\n')
    (x / "bin" / "wine64").write_text(head + 'exec "$H/../../usr/lib/wine/wine64" "$@"\n')
    for wrapper in ("Xvfb", "wine64"):
        (x / "bin" / wrapper).chmod(0o755)
    tarball = out / "wine.tar.xz"
    with tarfile.open(tarball, "w:xz") as tar:
        tar.add(root, arcname="wine")
    (out / "wine.json").write_text(json.dumps(layer.to_json(), indent=1))
    shutil.rmtree(root)
    return tarball


if __name__ == "__main__":
    made = build(Path(sys.argv[1] if len(sys.argv) > 1 else ".gpu-wine"))
    print(f"{made}: {made.stat().st_size / 2**20:.1f} MiB")
