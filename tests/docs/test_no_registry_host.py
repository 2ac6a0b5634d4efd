"""No package registry's or mirror's host is written in any file of the repository (issue 27).
The code reaches a registry through the machine's own configuration (pip's, apt's: the Debian
mirror of `backends/directml/setup_tools.debian_mirror`), so the hosts are taken from there and
from the installed tools' own defaults, and none is written in this test either:

- pip: `pip config list` (every configured URL: index-url, extra-index-url, find-links, ...),
  PIP_INDEX_URL, PIP_EXTRA_INDEX_URL and PIP_FIND_LINKS, the pip.conf files (/etc/pip.conf,
  /etc/xdg/pip/pip.conf, ~/.config/pip/pip.conf, ~/.pip/pip.conf), and PyPI's and TestPyPI's
  hosts as pip has them (`pip._internal.models.index`, asked in a subprocess);
- apt: the `deb` lines of /etc/apt/sources.list and /etc/apt/sources.list.d/*.list, the `URIs:`
  of /etc/apt/sources.list.d/*.sources (comments are not sources);
- npm: the `registry=` lines of ~/.npmrc, and npm's default (`npm config get registry`) where
  npm is installed.

A host is the name of a URL, lowercased. Left out: an IP address, `localhost`, and a name of
one label (an internal `mirror`), which would match ordinary words; a file: URL has none. The
files are every file git knows (tracked, or new and not ignored), read as bytes; a host matches
case-insensitively where no letter, digit or hyphen touches its start or end (so a registry's
subdomain counts too). PyPI's hosts are checked on any machine.
"""

from __future__ import annotations

import ipaddress
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

from tests.support import ROOT

URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s'\"<>]+")
PIP_FILES = ("/etc/pip.conf", "/etc/xdg/pip/pip.conf", "~/.config/pip/pip.conf", "~/.pip/pip.conf")
APT = Path("/etc/apt")


def read(path: str | Path) -> str:
    try:
        return Path(path).expanduser().read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def output(*command: str) -> str:
    try:
        return subprocess.run(command, capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.TimeoutExpired):
        return ""


def pip_texts() -> list[str]:
    pypi = ("from pip._internal.models.index import PyPI, TestPyPI\n"
            "for index in (PyPI, TestPyPI):\n"
            "    print(f'https://{index.netloc}/ https://{index.file_storage_domain}/')")
    return [output(sys.executable, "-m", "pip", "config", "list"),
            output(sys.executable, "-c", pypi),
            *(os.environ.get(v, "") for v in ("PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL",
                                              "PIP_FIND_LINKS")),
            *map(read, PIP_FILES)]


def apt_texts() -> list[str]:
    lists = [APT / "sources.list", *sorted((APT / "sources.list.d").glob("*.list"))]
    sources = sorted((APT / "sources.list.d").glob("*.sources"))
    return [line for path in lists for line in read(path).splitlines()
            if line.split()[:1] in (["deb"], ["deb-src"])] + [
        line for path in sources for line in read(path).splitlines() if line.startswith("URIs:")]


def npm_texts() -> list[str]:
    lines = [line for line in read("~/.npmrc").splitlines()
             if re.match(r"\s*(@[\w-]+:)?registry\s*=", line)]
    return lines + ([output("npm", "config", "get", "registry")] if shutil.which("npm") else [])


def hosts() -> set[str]:
    found = set()
    for text in pip_texts() + apt_texts() + npm_texts():
        for url in URL.findall(text):
            host = (urlsplit(url).hostname or "").lower()
            try:
                ipaddress.ip_address(host)
                continue
            except ValueError:
                pass
            if "." in host and host != "localhost":
                found.add(host)
    return found


def repository_files() -> list[Path]:
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            cwd=ROOT, capture_output=True, check=True).stdout.decode()
    return [ROOT / p for p in listed.split("\0") if p and (ROOT / p).is_file()]


def test_no_file_of_the_repository_names_a_registry_host() -> None:
    names = hosts()
    assert len(names) >= 2, names  # PyPI's, at least: the look-up works
    pattern = re.compile(rb"(?<![a-z0-9-])(" + b"|".join(re.escape(h.encode()) for h in names)
                         + rb")(?![a-z0-9-])")
    found = [f"{path.relative_to(ROOT)}: {m.group(1).decode()}" for path in repository_files()
             if (m := pattern.search(path.read_bytes().lower()))]
    assert found == [], "take the host from the machine's configuration instead"
