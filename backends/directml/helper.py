"""The Windows DirectML.dll under Wine: dmlshim-helper.exe (native/helper.c, the shim built with
mingw-w64) started once per process and fed the same flattened calls as the Linux build's shim,
through its standard input and output (the protocol is helper.c's header comment).

Helper starts what the helper needs and stops it all again: the helper's own Wine prefix (a
hard-linked copy of the runtime's prefix, registry files copied: milliseconds, no disk), with its
own wineserver, and its own Xvfb on a free display (Wine 8's Vulkan driver refuses to load
without an X display). Helpers that share one prefix share its wineserver and the desktop
process that wineserver started on the first helper's display, and D3D12CreateDevice then fails
("Vulkan 1.3 not supported by loader") whenever that display or desktop is going away: measured
at one start in three, two helpers or two runs in a row. The helper and the Xvfb are killed with
the process that started them (PR_SET_PDEATHSIG), the helper also exits when its standard input
ends, and the private prefix and its wineserver go when the helper stops (those of a process
that was killed, at the next start). A helper that dies mid-call is an ERROR of that call, with
the tail of its log; the next call starts a new one.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import fcntl
import io
import os
import shutil
import signal
import socket
import struct
import subprocess
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, cast

import numpy as np

from backends.directml.layer import Layer
from backends.directml.shim import (
    ABI_VERSION,
    MODE_EXECUTE,
    OK,
    DirectMLError,
    Flat,
    ShimBase,
    Status,
    hresult_name,
)

REQUEST, ANSWER = 0x51484D44, 0x41484D44  # DMLSHIM_REQUEST, DMLSHIM_ANSWER (dmlshim.h)
CMD_ABI, CMD_OPEN, CMD_LEVEL, CMD_TYPE, CMD_RUN, CMD_CLOSE = range(1, 7)  # enum dmlshim_command
HEAD = struct.Struct("<IIQ")  # magic, command (a request) or rc (an answer), size
WINE = "/usr/lib/wine/wine64"  # Debian's: called directly, no wine32 warning


def wine() -> str:
    """The Wine loader: $DMLCONF_WINE (a Wine carried elsewhere: gpu/run.sh), else Debian's."""
    return os.environ.get("DMLCONF_WINE") or WINE


def wineserver() -> str:
    """The wineserver: $DMLCONF_WINESERVER, else the one on PATH, else Debian's."""
    return (os.environ.get("DMLCONF_WINESERVER") or shutil.which("wineserver")
            or "/usr/lib/wine/wineserver64")
#: DLLs taken from the run folder over Wine's own: vkd3d-proton and the DXCore stub
DLL_OVERRIDES = "d3d12,d3d12core,dxcore=n;mscoree,mshtml="


def _die_with_parent() -> None:
    """In the child before exec: SIGKILL when the process that started it ends."""
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def wine_path(path: Path) -> str:
    """A Linux path as the Windows process names it (Wine's drive Z: is /)."""
    return "Z:" + str(path.resolve()).replace("/", "\\")


def _array_bytes(pointer: ctypes._Pointer[Any], count: int, width: int,
                 keep: list[ctypes.Array]) -> bytes:
    """count elements of width bytes from one of the flattened call's arrays, never past its end
    (a desc whose arrays are shorter than the count it states is sent zero-filled, as no
    DirectML call can say it)."""
    address = ctypes.cast(pointer, ctypes.c_void_p).value
    for array in keep:
        if ctypes.addressof(array) == address:
            data = bytes(array)[:count * width]
            return data + bytes(count * width - len(data))
    raise DirectMLError("a flattened call points at an array it does not keep")


def encode_call(flat: Flat, mode: int) -> bytes:
    """The RUN request's body before the buffers (helper.c: "The call")."""
    c = flat.call
    n = c.dimension_count
    floats = (c.scales, c.input_pixel_offsets, c.output_pixel_offsets)
    parts = [struct.pack("<13I", mode, c.operator_type, c.block_size, c.order,
                         c.interpolation_mode, n, c.execution_flags, c.graph,
                         c.rounding_direction, c.antialiased, *(bool(f) for f in floats))]
    for t in (c.input, c.output):
        has_strides = bool(t.strides)
        parts.append(struct.pack("<5IQ", t.data_type, t.flags, t.dimension_count,
                                 t.guaranteed_base_offset_alignment, has_strides,
                                 t.total_tensor_size_in_bytes))
        parts.append(_array_bytes(t.sizes, t.dimension_count, 4, flat.keep))
        if has_strides:
            parts.append(_array_bytes(t.strides, t.dimension_count, 4, flat.keep))
    parts.extend(_array_bytes(f, n, 4, flat.keep) for f in floats if f)
    return b"".join(parts)


def _x_socket(number: int) -> Path:
    return Path(f"/tmp/.X11-unix/X{number}")


def start_xvfb(first: int = 90, tries: int = 50) -> tuple[subprocess.Popen, str]:
    """A private X server on a free display, for this process's life. The display is picked
    here (the first without a live server's lock file whose server starts): with Xvfb's own
    pick (-displayfd) Wine's desktop process failed to connect at one start in three (measured,
    with or without -noreset and a delay); on a display picked here it never did (0 of 30)."""
    xvfb = shutil.which("Xvfb")
    if xvfb is None:
        raise DirectMLError("Xvfb is not installed (Wine's Vulkan driver needs an X display): "
                            "apt-get install xvfb, or run `dmlconf directml status`")
    for number in range(first, first + tries):
        try:  # a lock of a live server: taken (Xvfb itself replaces the stale ones)
            if _alive(int(Path(f"/tmp/.X{number}-lock").read_text().strip())):
                continue
        except (OSError, ValueError):
            pass
        proc = subprocess.Popen([xvfb, f":{number}", "-nolisten", "tcp", "-screen", "0",
                                 "64x64x24"], stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                preexec_fn=_die_with_parent)
        deadline = time.monotonic() + 30
        while proc.poll() is None and time.monotonic() < deadline:
            if _x_socket(number).exists():
                with socket.socket(socket.AF_UNIX) as probe:
                    try:
                        probe.connect(str(_x_socket(number)))
                    except OSError:
                        pass
                    else:
                        return proc, f":{number}"
            time.sleep(0.02)
        if proc.poll() is None:  # alive but never listening
            proc.kill()
            proc.wait()
            raise DirectMLError(f"Xvfb :{number} did not start listening within 30 s")
    raise DirectMLError(f"no free X display among :{first}-:{first + tries - 1} for Xvfb")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


#: The lock on each private prefix this process holds (see private_prefix).
_HELD: dict[Path, int] = {}


def _abandoned(folder: Path) -> bool:
    """True when no process holds the lock on a private prefix (taking it for a moment to see):
    its owner is gone, whatever PID namespace it ran in."""
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False
    finally:
        os.close(fd)  # closing drops the lock taken here
    return True


def private_prefix(prefix: Path) -> Path:
    """This process's own copy of the runtime's prefix: every file hard-linked but the registry
    (which the wineserver rewrites), beside it; the copies of processes that are gone are
    removed first.

    A copy is named by mkdtemp, not by this process's PID, and it is known to be in use by an
    flock its process holds on the folder for as long as the copy lives: sandboxed workers each
    have their own PID namespace, so two of them are both PID 2, and a PID cannot tell whether
    another namespace's process still lives (measured: with names by PID, two sandboxed
    workers copied into one folder and removed each other's prefix). A copy is made under a
    name starting ".new-" and renamed only once locked, so no one takes it for abandoned while
    it is made."""
    live = prefix.parent / "live"
    live.mkdir(parents=True, exist_ok=True)
    for old in live.iterdir():
        if old.name.startswith(".new-") and time.time() - old.stat().st_mtime < 3600:
            continue  # another process is still copying (for an hour at most)
        if _abandoned(old):
            stop_wineserver(old)
            shutil.rmtree(old, ignore_errors=True)
    making = Path(tempfile.mkdtemp(prefix=".new-", dir=live))
    fd = os.open(making, os.O_RDONLY | os.O_DIRECTORY)
    fcntl.flock(fd, fcntl.LOCK_EX)

    def link(src: str, dst: str) -> None:
        if src.endswith(".reg") or src.endswith(".update-timestamp"):
            shutil.copy2(src, dst)
        else:
            os.link(src, dst)

    shutil.copytree(prefix, making, symlinks=True, copy_function=link, dirs_exist_ok=True)
    mine = live / making.name.removeprefix(".new-")
    making.rename(mine)  # the lock is on the folder, not its name: it stays held
    _HELD[mine] = fd
    return mine


def remove_private_prefix(mine: Path) -> None:
    """End a private prefix's wineserver, remove the copy, and drop its lock."""
    stop_wineserver(mine)
    shutil.rmtree(mine, ignore_errors=True)
    fd = _HELD.pop(mine, None)
    if fd is not None:
        os.close(fd)


def stop_wineserver(prefix: Path) -> None:
    """End a prefix's wineserver (and so its desktop and service processes), if it runs."""
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        subprocess.run([wineserver(), "-k"], env={**os.environ, "WINEPREFIX": str(prefix)},
                       stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, timeout=30, check=False)


#: vkd3d-proton's variables for tracing a finding (backends/directml/trace/README.md) that reach
#: the helper, each a Linux path handed to Windows as a Wine path: the shaders DirectML hands to
#: the device and their SPIR-V (VKD3D_SHADER_DUMP_PATH), replacement SPIR-V by hash
#: (VKD3D_SHADER_OVERRIDE), and the trace patch's log of root constants (VKD3D_TRACE_RC).
TRACE_PATHS = ("VKD3D_SHADER_DUMP_PATH", "VKD3D_SHADER_OVERRIDE", "VKD3D_TRACE_RC")


def environment(layer: Layer, prefix: Path, display: str, log: Path) -> dict[str, str]:
    """The helper's environment: the private prefix, vkd3d-proton and the DXCore stub over Wine's
    builtins, no OpenGL renderer (DirectML goes through DXCore.dll), the layer's Vulkan driver and
    no other, vkd3d-proton's warnings to a log the shim quotes. $DMLCONF_WINEDEBUG sets Wine's
    debug channels (WINEDEBUG; none by default), written to the helper's log; TRACE_PATHS set
    here reach the helper as Wine paths."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("WINE", "VKD3D_", "VK_"))}
    env.update({
        "WINEPREFIX": str(prefix), "WINEDEBUG": os.environ.get("DMLCONF_WINEDEBUG", "-all"),
        "WINEDLLOVERRIDES": DLL_OVERRIDES, "WINE_D3D_CONFIG": "renderer=no3d",
        "DISPLAY": display, "VK_ICD_FILENAMES": str(layer.icd), "VK_DRIVER_FILES": str(layer.icd),
        "VKD3D_SHADER_CACHE_PATH": "0", "VKD3D_DEBUG": "warn", "VKD3D_LOG_FILE": wine_path(log),
    })
    env.update({name: wine_path(Path(os.environ[name])) for name in TRACE_PATHS
                if os.environ.get(name)})
    if os.environ.get("DMLCONF_WINESERVER"):  # a Wine carried elsewhere: not where it was built
        env["WINESERVER"] = os.environ["DMLCONF_WINESERVER"]
    return env


class Helper(ShimBase):
    """dmlshim-helper.exe under Wine, started at the first call of this process."""

    _started: Helper | None = None

    def __init__(self, layer: Layer) -> None:
        self.layer = layer
        self.proc: subprocess.Popen | None = None
        self.xvfb: subprocess.Popen | None = None
        self.prefix: Path | None = None
        self.pending = 0  # bytes of the last answer still to read (the buffers)
        tmp = Path(tempfile.gettempdir())
        self.log = tmp / f"dmlconf-helper-{os.getpid()}.log"  # the helper's stderr
        self.vkd3d_log = tmp / f"dmlconf-vkd3d-wine-{os.getpid()}.log"
        self.open()

    @classmethod
    def get(cls, layer: Layer) -> Helper:
        if cls._started is None:
            cls._started = cls(layer)
            atexit.register(cls._started.stop)
        return cls._started

    # -- the process ---------------------------------------------------------------------------
    def start(self) -> None:
        self.stop()
        self.xvfb, display = start_xvfb()
        self.prefix = private_prefix(Path(self.layer.info["prefix"]))
        with self.log.open("ab") as log:
            self.proc = subprocess.Popen(
                [wine(), str(self.layer.shim)], cwd=self.layer.libdir, stdin=subprocess.PIPE,
                stdout=subprocess.PIPE, stderr=log, bufsize=0, preexec_fn=_die_with_parent,
                env=environment(self.layer, self.prefix, display, self.vkd3d_log))
        rc, _ = self.request(CMD_ABI)
        if rc != ABI_VERSION:
            raise DirectMLError(f"{self.layer.shim} speaks shim ABI {rc}, this code needs "
                                f"{ABI_VERSION}: run `dmlconf directml setup --runtime wine`")

    def stop(self) -> None:
        """End the helper, its wineserver, its X server; remove its prefix."""
        for proc in (self.proc, self.xvfb):
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.wait()
        if self.prefix is not None:
            remove_private_prefix(self.prefix)
        self.proc = self.xvfb = self.prefix = None
        self.opened = False

    def _gone(self, doing: str) -> DirectMLError:
        """The helper died: an ERROR of this call, with its exit and its log's tail."""
        proc, self.proc = self.proc, None
        self.opened = False
        code = proc.wait(timeout=10) if proc is not None else None
        try:
            tail = self.log.read_bytes()[-1500:].decode("utf-8", "replace").strip()
        except OSError:
            tail = ""
        how = (f"killed by signal {-code}" if code is not None and code < 0
               else f"exit status {code}" if code is not None else "not running")
        return DirectMLError(f"dmlshim-helper.exe (DirectML.dll under Wine) ended while "
                             f"{doing} ({how})" + (f"; its log ends: {tail}" if tail else ""))

    def _read_into(self, view: memoryview, doing: str) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        out = cast(io.FileIO, self.proc.stdout)  # bufsize=0: the pipe's raw file
        while len(view):
            got = out.readinto(view)
            if not got:
                raise self._gone(doing)
            view = view[got:]

    def request(self, command: int, body: bytes = b"", buffers: tuple[np.ndarray, ...] = ()
                ) -> tuple[int, bytes]:
        """Send one request; the answer's rc and its first bytes (the rest, the buffers of a
        successful execution, is read by _run into the buffers themselves)."""
        if self.proc is None or self.proc.poll() is not None:
            if command != CMD_ABI:
                self.start()
        assert self.proc is not None and self.proc.stdin is not None
        doing = f"command {command}"
        try:
            size = len(body) + sum(b.nbytes for b in buffers)
            self.proc.stdin.write(HEAD.pack(REQUEST, command, size) + body)
            for buffer in buffers:
                self.proc.stdin.write(buffer.data.cast("B"))
        except (BrokenPipeError, OSError):
            raise self._gone(doing) from None
        head = bytearray(HEAD.size)
        self._read_into(memoryview(head), doing)
        magic, rc, size = HEAD.unpack(head)
        if magic != ANSWER:
            self.stop()
            raise DirectMLError(f"dmlshim-helper.exe answered without the protocol's magic "
                                f"(0x{magic:08x}): stopped")
        rc = rc - (1 << 32) if rc >= 1 << 31 else rc
        first = min(size, ctypes.sizeof(Status)) if command == CMD_RUN else size
        out = bytearray(first)
        self._read_into(memoryview(out), doing)
        self.pending = size - first
        return rc, bytes(out)

    # -- dmlshim.h -----------------------------------------------------------------------------
    def _open(self, status: Status) -> int:
        rc, body = self.request(CMD_OPEN)
        ctypes.memmove(ctypes.byref(status), body, min(len(body), ctypes.sizeof(Status)))
        return rc

    def _close(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.request(CMD_CLOSE)

    def max_feature_level(self, levels: list[int]) -> int:
        hr, body = self.request(CMD_LEVEL, struct.pack(f"<I{len(levels)}I", len(levels), *levels))
        if hr < 0:
            raise DirectMLError(f"CheckFeatureSupport(FEATURE_LEVELS): {hresult_name(hr)}")
        return struct.unpack("<I", body)[0]

    def data_type_supported(self, data_type: int) -> bool:
        hr, body = self.request(CMD_TYPE, struct.pack("<I", data_type))
        if hr < 0:
            raise DirectMLError(f"CheckFeatureSupport(TENSOR_DATA_TYPE_SUPPORT {data_type}): "
                                f"{hresult_name(hr)}")
        return struct.unpack("<i", body)[0] != 0

    def _run(self, flat: Flat, buffers: Mapping[str, np.ndarray] | None, mode: int,
             status: Status) -> int:
        names = ("InputTensor", "OutputTensor")
        sent = tuple(buffers[n] for n in names) if buffers is not None else ()
        rc, body = self.request(CMD_RUN, encode_call(flat, mode), sent)
        ctypes.memmove(ctypes.byref(status), body, min(len(body), ctypes.sizeof(Status)))
        if self.pending:
            if not (rc == OK and mode == MODE_EXECUTE
                    and self.pending == sum(b.nbytes for b in sent)):
                self.stop()
                raise DirectMLError(f"dmlshim-helper.exe answered {self.pending} bytes of "
                                    "buffers that were not asked for: stopped")
            for buffer in sent:
                self._read_into(buffer.data.cast("B"), "reading the buffers back")
        return rc


def version_of(dll: Path) -> str:
    """A PE file's FileVersion string (its version resource), or '' where it has none."""
    data = dll.read_bytes()
    key = "FileVersion\0".encode("utf-16-le")
    at = data.find(key)
    if at < 0:
        return ""
    start = at + len(key)
    start += (-start) % 4  # the value is aligned on 32 bits after the key
    end = start
    while end + 1 < len(data) and data[end:end + 2] != b"\0\0":
        end += 2
    return data[start:end].decode("utf-16-le", "replace")


__all__ = ["Helper", "encode_call", "version_of", "wine_path"]
