"""The sandbox an isolated run's workers run in (docs/robustness.md, "The sandbox").

Isolation (conformance.session.remote) keeps the backend's code out of the judge's process. The
sandbox keeps the backend's process out of the judge's reach through the operating system:

- **bubblewrap** (`bwrap`, what Flatpak runs its applications in; Debian's package) starts each
  worker in PID, IPC and UTS namespaces of its own, so the harness's processes are neither
  visible nor signalable nor traceable, with its own /proc; the whole file system read-only
  (the harness's code, case files, caches, results and reports included); a fresh /tmp and
  /dev/shm; a minimal /dev with only the GPU device nodes present on the machine granted
  (/dev/dri, /dev/kfd, /dev/nvidia*, /dev/dxg); a writable home of its own (HOME, where a JIT's
  cache may live); no new privileges; killed, all of it, when its harness thread ends
  (--die-with-parent: the namespace's first process dies, and every process of the namespace
  with it, including one the backend double-forked into another session).
- **another user**: when the harness runs as root the worker runs as SANDBOX_UID (nobody) with
  no supplementary groups and no capabilities (util-linux's `setpriv`, inside the sandbox, before
  Python starts). Folders on the way to what the worker needs that others may not enter (such as
  a root-only /root) are replaced by a tmpfs holding just those paths. Run by another user, the
  worker gets a user namespace of its own instead (its uid outside is the user's own).
- **a memory cgroup**: where the harness may make one (cgroup v1's memory controller, or v2's),
  each worker gets a cgroup whose limit, set once the backend is built, is what the worker then
  uses plus the memory cap. It counts every page the worker touches, shared mappings included
  (RLIMIT_DATA, which a worker also gets, counts private ones only). Past it the kernel kills
  the worker (SIGKILL), which the case's result names as its memory cap.

The worker reaches the harness only through what it inherits: its channel, its log and its
arena, each an open file descriptor (the harness's own folder is hidden under the fresh /tmp).

Why bubblewrap rather than systemd-run or namespaces made here: it is a small, audited tool made
for exactly this (unprivileged sandboxes for untrusted code), one exec per worker (about 4 ms
here), with no daemon (systemd-run needs a running systemd, which containers and CI machines
mostly lack) and no namespace code of the suite's own to get wrong.
"""

from __future__ import annotations

import functools
import glob
import os
import shutil
import stat
import subprocess
import sys
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from conformance.backend import BUILTIN, backend_class

#: The user a root harness runs its workers as (nobody).
SANDBOX_UID = SANDBOX_GID = 65534
#: The device nodes of GPU runtimes, granted where present (globs): DRM (Mesa, AMD, Intel),
#: AMD's compute (kfd), NVIDIA's (nvidia0.., nvidiactl, nvidia-uvm, nvidia-modeset, nvidia-caps),
#: and WSL's DirectX.
GPU_DEVICES = ("/dev/dri", "/dev/kfd", "/dev/nvidia*", "/dev/dxg")
#: Where the workers keep their home: beside the suite's cache folder (never in it: the worker
#: sees that folder read-only).
HOME_FOLDER = "dml-conformance-sandbox"


class MemoryCgroup:
    """A worker's memory cgroup: made before the worker starts, which joins it before it execs
    bubblewrap (so everything the sandbox starts is in it); its limit set once the backend is
    built; removed when the worker is gone."""

    def __init__(self, path: Path, version: int) -> None:
        self.path, self.version = path, version

    @property
    def procs(self) -> Path:
        return self.path / "cgroup.procs"

    def usage(self) -> int:
        name = "memory.usage_in_bytes" if self.version == 1 else "memory.current"
        return int((self.path / name).read_text())

    def limit(self, nbytes: int) -> None:
        name = "memory.limit_in_bytes" if self.version == 1 else "memory.max"
        (self.path / name).write_text(str(nbytes))

    def killed(self) -> bool:
        """Whether the kernel killed a process of the cgroup for passing its limit."""
        name = "memory.oom_control" if self.version == 1 else "memory.events"
        try:
            for line in (self.path / name).read_text().splitlines():
                key, _, value = line.partition(" ")
                if key == "oom_kill" and int(value) > 0:
                    return True
        except (OSError, ValueError):
            pass
        return False

    def remove(self) -> None:
        """Remove the cgroup once its processes are gone (they die with the sandbox's first
        process, a moment after it): tried for up to a second, then left to the OS."""
        for _ in range(20):
            try:
                self.path.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:
                time.sleep(0.05)


def _memory_parent() -> tuple[Path, int] | None:
    """The memory cgroup this process is in, where it may make children: (folder, version)."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        _, controllers, where = line.split(":", 2)
        if "memory" in controllers.split(","):
            folder = Path("/sys/fs/cgroup/memory") / where.lstrip("/")
            if (folder / "memory.limit_in_bytes").exists():
                return folder, 1
        if controllers == "":
            folder = Path("/sys/fs/cgroup") / where.lstrip("/")
            try:
                if "memory" in (folder / "cgroup.subtree_control").read_text().split():
                    return folder, 2
            except OSError:
                pass
    return None


@functools.cache
def _cgroups_usable() -> tuple[Path, int] | None:
    """The parent of the workers' memory cgroups, where a child can be made and limited."""
    found = _memory_parent()
    if found is None:
        return None
    probe = found[0] / f"dmlconf-probe-{os.getpid()}"
    try:
        probe.mkdir()
    except OSError:
        return None
    try:
        MemoryCgroup(probe, found[1]).limit(1 << 40)
    except OSError:
        return None
    finally:
        MemoryCgroup(probe, found[1]).remove()
    return found


def _version(bwrap: str) -> str:
    try:
        out = subprocess.run([bwrap, "--version"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return out.stdout.strip() or "unknown"


def _needs_traversal(path: Path, uid: int) -> list[Path]:
    """The folders on the way to path that uid (not their owner, nor in their group: the sandbox
    user has no groups) may not enter."""
    blocked: list[Path] = []
    for folder in reversed(path.parents):
        try:
            st = folder.stat()
        except OSError:
            return blocked
        if st.st_uid != uid and not st.st_mode & stat.S_IXOTH:
            blocked.append(folder)
    return blocked


def _interpreter_paths() -> list[str]:
    """What Python needs to start and import the harness: its prefixes, the executable's folder
    and the import path."""
    return [sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
            str(Path(sys.executable).resolve().parent), *(p for p in sys.path if p)]


def _environment_paths() -> list[str]:
    """The absolute paths the environment points the worker at (PATH, LD_LIBRARY_PATH, a
    runtime's folder or driver file in a variable of its own...), each read-only in its view."""
    found = []
    for value in os.environ.values():
        for part in value.split(os.pathsep):
            if part.startswith("/") and len(part) > 1 and os.path.exists(part):
                found.append(part)
    return found


@dataclass(frozen=True)
class Sandbox:
    """How workers are sandboxed (see the module's text); to_json() is what a run records."""

    bwrap: str
    version: str
    #: The suite's cache folder (the DirectML layers' files among others): read-only, at its
    #: place and at ~/.cache/dml-conformance of the worker's own HOME.
    cache: Path
    #: The uid and gid the worker runs as outside (root harness); None: the harness's own, in a
    #: user namespace of the worker's own.
    uid: int | None
    setpriv: str | None = None
    cgroups: tuple[Path, int] | None = None
    devices: tuple[str, ...] = field(default_factory=tuple)

    #: Why a root harness's workers keep its uid (in a user namespace, with no capabilities).
    same_user: str = ""
    #: Folders the worker may write besides its home and /tmp (granted to a built-in backend).
    writable: tuple[Path, ...] = ()

    @property
    def home(self) -> Path:
        """The workers' home: a folder of the worker's user, kept between runs (a JIT's cache
        stays warm), beside the suite's cache folder."""
        return _home(self.cache, self.uid)

    #: What the worker must read besides the interpreter's and the environment's paths.
    readable: tuple[Path, ...] = ()

    def granting(self, readable: Iterable[Path], writable: Iterable[Path],
                 same_user: str) -> Sandbox:
        """This sandbox with what a built-in backend declares it needs (Backend.sandbox_readable;
        Backend.sandbox_writable, folders made here if missing; Backend.sandbox_same_user)."""
        folders = tuple(writable)
        for folder in folders:
            folder.mkdir(parents=True, exist_ok=True)
        granted = replace(self, readable=tuple(readable), writable=folders)
        if same_user and self.uid is not None:
            return replace(granted, uid=None, same_user=same_user)
        return granted

    def reaching(self, needed: Iterable[str | os.PathLike[str]]) -> Sandbox:
        """This sandbox, or where the sandbox's user could not read a path the worker needs
        (the backend's files, the interpreter, the current folder: closed to other users), one
        whose workers keep the harness's uid in a user namespace, saying why."""
        if self.uid is None:
            return self
        for p in [*needed, *self.readable, *_interpreter_paths(), os.getcwd()]:
            try:
                mode = os.stat(p).st_mode
            except OSError:
                continue
            want = stat.S_IROTH | (stat.S_IXOTH if stat.S_ISDIR(mode) else 0)
            if mode & want != want:
                return replace(self, uid=None, same_user=(
                    f"{p} is not readable by other users (chmod o+r{'x' if want & 1 else ''} "
                    "it for a worker run by another user)"))
        return self

    def to_json(self) -> dict[str, Any]:
        return {"tool": self.version, "uid": self.uid if self.uid is not None else os.getuid(),
                "user": "another user" if self.uid is not None else
                        "the harness's user, in a user namespace of its own, with no "
                        f"capabilities{': ' if self.same_user else ''}{self.same_user}",
                "pid_namespace": True, "file_system": "read-only",
                "memory": (f"cgroup v{self.cgroups[1]} memory limit (shared mappings counted)"
                           if self.cgroups else "RLIMIT_DATA only (private memory)"),
                "devices": list(self.devices),
                **({"writable": [str(w) for w in self.writable]} if self.writable else {})}

    def memory_cgroup(self, name: str) -> MemoryCgroup | None:
        if self.cgroups is None:
            return None
        group = MemoryCgroup(self.cgroups[0] / name, self.cgroups[1])
        try:
            group.path.mkdir()
        except FileExistsError:
            pass
        except OSError:
            return None
        return group

    def command(self, argv: Sequence[str], needed: Iterable[str | os.PathLike[str]],
                cgroup: MemoryCgroup | None = None) -> list[str]:
        """argv to run in the sandbox; needed: paths the worker must read (the interpreter, its
        import path, the backend's files), made reachable where a folder on their way is closed
        to the sandbox user."""
        cmd = [self.bwrap, "--die-with-parent", "--new-session", "--unshare-pid",
               "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]
        if self.uid is None:
            cmd += ["--unshare-user"]
        cmd += ["--ro-bind", "/", "/", "--dev", "/dev", "--perms", "1777", "--tmpfs", "/dev/shm",
                "--proc", "/proc", "--perms", "1777", "--tmpfs", "/tmp"]
        for device in self.devices:
            cmd += ["--dev-bind", device, device]
        # What the worker reads is bound back, read-only, where a tmpfs covers it: the fresh
        # /tmp (the current folder, or a backend's file, may be there), and for another user
        # the folders it may not enter.
        every = [*needed, *self.readable, *_interpreter_paths(), os.getcwd(), self.cache,
                 *_environment_paths()]
        home = self.home
        wanted = sorted({Path(p).resolve() for p in every if os.path.exists(p)} | {home})
        covered = {Path("/tmp")}  # each a tmpfs: /tmp, and the folders closed to the user
        if self.uid is not None:
            for path in wanted:
                covered.update(_needs_traversal(path, self.uid))
        # Parents before children: a closed folder always becomes a tmpfs; a wanted path is bound
        # only where the mount nearest above it is a tmpfs (a read-only bind above it already
        # shows it); the folders between a tmpfs and what is mounted in it are made enterable
        # first (bwrap makes them 0700).
        mounts, made = {Path("/tmp"): True}, set[Path]()  # mount point: whether a tmpfs
        for path in sorted(covered | set(wanted)):
            nearest = max((m for m in mounts if m in path.parents), key=lambda m: len(m.parts),
                          default=None)
            in_tmpfs = nearest is not None and mounts[nearest]
            if path in mounts or not (in_tmpfs or path in covered):
                continue
            for folder in reversed(path.parents) if in_tmpfs else ():
                if nearest in folder.parents and folder not in made:
                    made.add(folder)
                    cmd += ["--perms", "0755", "--dir", str(folder)]
            if path in covered:
                mounts[path] = True
                cmd += ["--tmpfs", str(path)]
            elif path != home:  # bound writable below
                mounts[path] = False
                cmd += ["--ro-bind", str(path), str(path)]
        cwd = os.getcwd()
        seen_cache = home / ".cache" / "dml-conformance"  # made by _home()
        cmd += ["--bind", str(home), str(home), "--setenv", "HOME", str(home),
                "--setenv", "TMPDIR", "/tmp",
                "--ro-bind", str(self.cache), str(seen_cache),
                *(a for w in self.writable for a in ("--bind", str(w), str(w))),
                "--chdir", cwd if Path(cwd) not in covered else "/", "--"]
        if self.uid is not None and self.setpriv:
            cmd += [self.setpriv, f"--reuid={self.uid}", f"--regid={self.uid}", "--clear-groups",
                    "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", "--"]
        cmd += list(argv)
        if cgroup is not None:  # join the cgroup first: all the sandbox starts is then in it
            cmd = ["/bin/sh", "-c", 'echo $$ > "$0" && exec "$@"', str(cgroup.procs), *cmd]
        return cmd


@dataclass(frozen=True)
class Unavailable:
    """Why no sandbox can be made here."""

    reason: str


def _home(cache: Path, uid: int | None) -> Path:
    cache.mkdir(parents=True, exist_ok=True)  # seen read-only in the sandbox: it must exist
    home = cache.parent / HOME_FOLDER / str(uid if uid is not None else os.getuid())
    (home / ".cache" / "dml-conformance").mkdir(parents=True, exist_ok=True)
    if uid is not None:
        for folder in (home, home / ".cache", home / ".cache" / "dml-conformance"):
            if folder.stat().st_uid != uid:
                os.chown(folder, uid, uid)
    home.chmod(0o700)
    return home


@functools.cache
def find(cache: Path | None = None) -> Sandbox | Unavailable:
    """The sandbox this machine can make (its workers' home under cache, by default the suite's
    cache folder), tried once: bubblewrap must start a process in it. Unavailable with the
    reason where it cannot (not Linux, no bwrap, user namespaces refused, ...)."""
    if not sys.platform.startswith("linux"):
        return Unavailable(f"the sandbox needs Linux's namespaces (this is {sys.platform})")
    bwrap = os.environ.get("DMLCONF_BWRAP") or shutil.which("bwrap")
    if not bwrap:
        return Unavailable("bubblewrap is not installed (Debian: apt install bubblewrap)")
    root = os.geteuid() == 0
    setpriv = shutil.which("setpriv") if root else None
    if root and not setpriv:
        return Unavailable("running as root, the worker would stay root: util-linux's setpriv "
                           "is missing")
    if cache is None:
        from conformance.casefile import cache as parse_cache

        cache = parse_cache.root()
    try:
        _home(cache, SANDBOX_UID if root else None)
    except OSError as exc:
        return Unavailable(f"the workers' home could not be made beside {cache}: {exc}")
    sandbox = Sandbox(bwrap, _version(bwrap), cache, SANDBOX_UID if root else None, setpriv,
                      _cgroups_usable(),
                      tuple(sorted(d for pattern in GPU_DEVICES for d in glob.glob(pattern))))
    try:
        probe = subprocess.run(sandbox.reaching([]).command([sys.executable, "-c", "pass"], []),
                               capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError) as exc:
        return Unavailable(f"bubblewrap could not be started: {exc}")
    if probe.returncode != 0:
        why = (probe.stderr.strip().splitlines() or ["no message"])[-1]
        return Unavailable(f"bubblewrap could not make the sandbox here: {why}")
    return sandbox


def exit_code(returncode: int) -> int:
    """A sandboxed worker's exit code as a direct child's would read: bubblewrap, as a shell
    does, exits with 128 + the signal that killed its command, read back as -signal."""
    if 128 < returncode < 128 + 65:
        return -(returncode - 128)
    return returncode


def backend_files(backend: str) -> list[str]:
    """The folder of a backend given by path (`file.py[:Class]`), which a sandboxed worker must
    be able to read."""
    path = backend if backend.endswith(".py") else backend.rpartition(":")[0]
    return [str(Path(path).resolve().parent)] if path.endswith(".py") else []


def for_run(backend: str, wanted: bool | None, certify: bool,
            override: bool) -> dict[str, Any]:
    """The sandbox fields of an isolated run's Execution (conformance.session.execution): the
    sandbox, with what a built-in backend declares it needs, where it is wanted (wanted: None
    where it can be made, True required, False never) and can be made; else why there is none.
    ValueError where --sandbox, or --certify without override, needs one that cannot be made."""
    if wanted is False:
        missing = "not asked for (--no-sandbox)"
    else:
        found = find()
        if isinstance(found, Sandbox):
            if backend in BUILTIN:
                cls = backend_class(backend)
                found = found.granting(cls.sandbox_readable(), cls.sandbox_writable(),
                                       cls.sandbox_same_user)
            return {"sandbox": found.reaching(backend_files(backend))}
        if wanted:
            raise ValueError(f"--sandbox: the sandbox cannot be made here: {found.reason}")
        missing = found.reason
    if certify and not override:
        raise ValueError(f"--certify runs the backend in the sandbox, which is not made here: "
                         f"{missing}. --certify-without-sandbox runs it anyway, recorded in the "
                         "results (docs/robustness.md)")
    return {"sandbox_missing": missing, "sandbox_override": override}
