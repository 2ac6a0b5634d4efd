"""The tools of `dmlconf directml setup` (setup.py): step 1's checks, which build tools are
installed (check_tools, naming the Debian packages that are not; meson_command, meson from PyPI
into the cache when it is not installed) and which Vulkan driver the runtimes run on (find_icd:
lavapipe unless another is named, with the advice that installs it), and how every step runs a
tool (run), says what it does (say) and fails (SetupError).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from backends.directml import layer as lay

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


def find_icd(given: str | None) -> Path:
    """The Vulkan driver's ICD file: the one given (another driver, e.g. NVIDIA's), else
    lavapipe's."""
    if given:
        icd = Path(given).expanduser().resolve()
        if not icd.is_file():
            raise SetupError(f"no Vulkan ICD file at {given}")
        return icd
    lavapipe = check_lavapipe()
    if lavapipe is None:
        raise SetupError(lavapipe_advice())
    return lavapipe
