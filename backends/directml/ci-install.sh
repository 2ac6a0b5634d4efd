#!/bin/sh
# CI: what the directml backends need on Debian 12 (bookworm), as root, then both runtimes set up
# in the cache (reused when present: keep ~/.cache/dml-conformance between CI runs to skip the
# vkd3d-proton builds, 1.5-5 min each). Reaches only the package registries (Debian's mirror as
# this machine's apt sources name it, and PyPI).
#   sh backends/directml/ci-install.sh [PYTHON]       PYTHON: the venv's python (default: python)
# Exits 0 without building when the machine cannot (not Debian, no root, no apt): the directml
# tests then skip, saying why. A runtime whose set-up fails is said so, and the other is still
# set up.
set -eu
PY=${1:-python}
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "directml: not root or no apt-get: the layer is not built here (tests skip)"; exit 0
fi
export DEBIAN_FRONTEND=noninteractive
# lavapipe with descriptor indexing: mesa-vulkan-drivers 25.x from bookworm-backports, on the
# mirror this machine's apt sources already use
if ! grep -rqs "bookworm-backports" /etc/apt/sources.list /etc/apt/sources.list.d/; then
    line=$("$PY" -c "from backends.directml.setup import backports_line; print(backports_line())")
    case "$line" in *"<"*) echo "directml: no Debian mirror in the apt sources"; exit 0;; esac
    echo "$line" > /etc/apt/sources.list.d/dmlconf-backports.list
fi
apt-get update -q
apt-get install -y -q --no-install-recommends build-essential patch pkg-config ninja-build glslang-tools \
    wine64-tools libvulkan-dev libvulkan1 unzip
apt-get install -y -q --no-install-recommends -t bookworm-backports mesa-vulkan-drivers
"$PY" -m pip install -q "meson==1.12.1"
"$PY" -m backends.directml.setup setup --runtime linux \
    || echo "directml: the Linux build (directml-linux) could not be set up"
# DirectML 1.15.4 under Wine (the `directml` backend): Wine, mingw-w64 and an X server
apt-get install -y -q --no-install-recommends wine64 wine gcc-mingw-w64-x86-64 \
    g++-mingw-w64-x86-64 mingw-w64-tools xvfb xauth \
    || echo "directml: Wine or mingw-w64 could not be installed"
"$PY" -m backends.directml.setup setup --runtime wine \
    || echo "directml: DirectML 1.15.4 under Wine (directml) could not be set up"
