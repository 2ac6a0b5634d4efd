"""The Wine runtime's own set-up steps (`dmlconf directml setup --runtime wine`; setup.py runs
them in order with the steps both runtimes share):

1. DirectML.dll 1.15.4 out of the pinned onnxruntime-directml wheel for win_amd64 (setup_build.py's
   get_directml, md5 checked, only the DLL kept);
2. vkd3d-proton 2.14.1 built for Windows with mingw-w64 from the same source tarball
   (setup_build.py's build_vkd3d_proton, keyed by the source's sha256);
3. the run folder (build_run_folder): the DXCore stub (native/dxcore.c + dxcore.def) as
   DXCore.dll and dmlshim-helper.exe (native/helper.c + dmlshim.c) built with mingw-w64, beside
   DirectML.dll, d3d12.dll and d3d12core.dll;
4. the private Wine prefix (make_prefix: wineboot on a private Xvfb), made once per cache.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

from backends.directml import layer as lay
from backends.directml.helper import start_xvfb, wine, wineserver
from backends.directml.setup_build import runtime_folder
from backends.directml.setup_tools import SetupError, run, say

MINGW_CC = "x86_64-w64-mingw32-gcc"


def build_run_folder(cache: Path, dll: Path, vkd3d: Path, force: bool) -> Path:
    """wine/<key>/run: everything the helper process loads, keyed by the shim's sources, the
    vkd3d-proton build and the DLL."""
    cc = shutil.which(MINGW_CC)
    folder, built = runtime_folder(cache, lay.WINE, dll, vkd3d, force, cc,
                                   "gcc-mingw-w64-x86-64")
    helper = folder / lay.SHIMS[lay.WINE]
    if built:
        say(f"helper: present ({folder})")
        return folder
    assert cc is not None  # runtime_folder goes on to a build only with a compiler
    n = lay.NATIVE
    flags = ["-O2", "-Wall", "-Werror"]
    say(f"helper: {MINGW_CC} -> {folder}")
    run([cc, *flags, "-shared", "-o", str(folder / "DXCore.dll"), str(n / "dxcore.c"),
         str(n / "dxcore.def")])
    # linked against DirectML.dll itself (GNU ld reads a DLL's exports) and mingw's d3d12 import
    # library; at run time both resolve to the DLLs in this folder
    run([cc, *flags, f"-I{n}", "-o", str(helper), str(n / "helper.c"), str(n / "dmlshim.c"),
         "-ld3d12", str(folder / "DirectML.dll")])
    return folder


def make_prefix(cache: Path, force: bool = False) -> Path:
    """The private Wine prefix (about 10-40 s the first time), made on a private Xvfb."""
    prefix = cache / "wine" / "prefix"
    if (prefix / "system.reg").is_file() and not force:
        say(f"Wine prefix: present ({prefix})")
        return prefix
    shutil.rmtree(prefix, ignore_errors=True)
    prefix.parent.mkdir(parents=True, exist_ok=True)
    say(f"Wine prefix: wineboot -i into {prefix}")
    started = time.perf_counter()
    xvfb, display = start_xvfb()
    try:
        env = {**os.environ, "WINEPREFIX": str(prefix), "WINEDEBUG": "-all", "DISPLAY": display,
               "WINEDLLOVERRIDES": "mscoree,mshtml="}
        done = subprocess.run([wine(), "wineboot", "-i"], env=env, capture_output=True,
                              timeout=600, check=False, stdin=subprocess.DEVNULL)
        # wineboot returns before its wineserver is done writing the registry
        subprocess.run([wineserver(), "-w"], env=env,
                       timeout=120, check=False)
    finally:
        xvfb.kill()
        xvfb.wait()
    if done.returncode or not (prefix / "system.reg").is_file():
        raise SetupError(f"wineboot -i failed (exit {done.returncode}): "
                         + done.stderr.decode("utf-8", "replace")[-1500:])
    say(f"Wine prefix: made in {time.perf_counter() - started:.0f} s")
    return prefix
