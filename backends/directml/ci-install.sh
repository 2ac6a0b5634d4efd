#!/bin/sh
# CI: what the directml backend needs on Debian 12 (bookworm), as root, then the layer built into
# the cache (reused when present: keep ~/.cache/dml-conformance between CI runs to skip the
# 2.5-5 min vkd3d-proton build). Reaches only the package registries (deb.debian.org, PyPI).
#   sh backends/directml/ci-install.sh [PYTHON]       PYTHON: the venv's python (default: python)
# Exits 0 without building when the machine cannot (not Debian, no root, no apt): the directml
# tests then skip, saying why.
set -eu
PY=${1:-python}
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "directml: not root or no apt-get: the layer is not built here (tests skip)"; exit 0
fi
export DEBIAN_FRONTEND=noninteractive
# lavapipe with descriptor indexing: mesa-vulkan-drivers 25.x from bookworm-backports
if ! grep -rqs "bookworm-backports" /etc/apt/sources.list /etc/apt/sources.list.d/; then
    echo "deb http://deb.debian.org/debian bookworm-backports main" > /etc/apt/sources.list.d/dmlconf-backports.list
fi
apt-get update -q
apt-get install -y -q --no-install-recommends build-essential pkg-config ninja-build glslang-tools \
    wine64-tools libvulkan-dev libvulkan1 unzip
apt-get install -y -q --no-install-recommends -t bookworm-backports mesa-vulkan-drivers
"$PY" -m pip install -q "meson==1.12.1"
"$PY" -m backends.directml.setup setup
