#!/bin/bash
# Real DirectML on an NVIDIA GPU, by recipe (issue 22): the runtimes built on this project's
# machine kind (Debian 12), carried to a GPU machine that can build and fetch nothing, run there
# on NVIDIA's own Vulkan driver, and the results brought back.
#
#   [RUNTIMES=linux|wine] bash backends/directml/gpu/run.sh prepare [BUNDLE]
#       here, as root, after `dmlconf directml setup`: fills BUNDLE (default .gpu/, added to
#       .git/info/exclude) with what the GPU machine lacks for those runtimes (one at a time: the
#       device tool carries 64 MiB a call, the project included)
#   bash backends/directml/gpu/run.sh run [BUNDLE]
#       there, from the repository root, with BUNDLE carried: the whole committed suite on each
#       runtime in BUNDLE, operator and graph path ($BACKENDS to choose); results to $OUT
#
# What the GPU machine lacks (an image with NVIDIA's driver mounted with the graphics capability,
# Python 3.12, no Vulkan loader): the Vulkan loader and GL dispatch libraries (unpacked over /, as
# the device tool's notes say), libX11-xcb and the X libraries the NVIDIA ICD needs before it
# offers VK_KHR_surface and VK_KHR_xcb_surface (unpacked apart, never over /), the project's Python
# dependencies that are not there (wheels), and the built runtimes: the Linux one (its lib/ folder
# and its manifest), the Wine one (gpu/wine_bundle.py: what Wine opens, Xvfb, the run folder and
# the prefix), each registered there with `setup register` on the NVIDIA ICD.
set -euo pipefail
mode=${1:?prepare or run}
B=${2:-.gpu}
case "$mode" in
prepare)
    cd "$(dirname "$0")/../../.."
    git rev-parse --git-dir >/dev/null 2>&1 && { grep -qx "/$B/" .git/info/exclude 2>/dev/null \
        || echo "/$B/" >> .git/info/exclude; }
    rm -rf "$B" && mkdir -p "$B/gl" "$B/xl" "$B/whl"
    (cd "$B/gl" && apt-get download -q libvulkan1 libegl1 libglvnd0 libopengl0 libgl1 libglx0 libgles2)
    (cd "$B/xl" && apt-get download -q libx11-xcb1 libx11-6 libxcb1 libxau6 libxdmcp6 libxext6 libbsd0 libmd0)
    python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
        --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 \
        --platform manylinux2014_x86_64 -d "$B/whl" jsonschema jsonschema-specifications \
        referencing rpds-py fastjsonschema
    # bubblewrap for the sandbox (docs/robustness.md): Debian's, with the libraries it needs,
    # run through the machine's own loader so that nothing else sees them
    mkdir -p "$B/bwrap/lib" && cp /usr/bin/bwrap "$B/bwrap/bwrap.bin"
    for l in libselinux.so.1 libcap.so.2 libpcre2-8.so.0; do cp -L "/lib/x86_64-linux-gnu/$l" "$B/bwrap/lib/"; done
    printf '#!/bin/sh\nd=$(dirname "$0")\nexec /lib64/ld-linux-x86-64.so.2 --library-path "$d/lib" "$d/bwrap.bin" "$@"\n' > "$B/bwrap/bwrap"
    chmod +x "$B/bwrap/bwrap"
    for runtime in ${RUNTIMES:-linux}; do
        if [ "$runtime" = wine ]; then
            python3 -m backends.directml.gpu.wine_bundle "$B"
            continue
        fi
        python3 - "$B" <<'PY'
import json, sys, tarfile
from pathlib import Path
from backends.directml import layer as lay
out = Path(sys.argv[1])
layer, why = lay.load_layer(lay.LINUX)
if layer is None:
    sys.exit(f"linux: {why}")
with tarfile.open(out / "linux.tar.xz", "w:xz") as tar:
    tar.add(layer.libdir, arcname="lib")
(out / "linux.json").write_text(json.dumps(layer.to_json(), indent=1))
print(f"linux: {layer.libdir} packed")
PY
    done
    du -sh "$B"
    ;;
run)
    B=$(cd "$B" && pwd)
    for f in "$B"/gl/*.deb; do dpkg -x "$f" /; done
    ldconfig
    mkdir -p /tmp/xl && for f in "$B"/xl/*.deb; do dpkg -x "$f" /tmp/xl; done
    for l in libX11.so.6 libxcb.so.1 libX11-xcb.so.1 libXext.so.6 libXau.so.6 libXdmcp.so.6; do
        ldconfig -p | grep -q "$l " || { export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}:/tmp/xl/usr/lib/x86_64-linux-gnu; break; }
    done
    python3 -m pip install -q --no-index --no-deps --no-compile --upgrade --target /tmp/site "$B"/whl/*.whl
    export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 DMLCONF_DIRECTML_CACHE=/tmp/dml/cache
    ICD=${ICD:-}
    for c in /usr/share/vulkan/icd.d/nvidia_icd.json /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json; do
        [ -z "$ICD" ] && [ -f "$c" ] && ICD=$c
    done
    export VK_ICD_FILENAMES=$ICD VK_DRIVER_FILES=$ICD
    [ -x "$B/bwrap/bwrap" ] && export DMLCONF_BWRAP="$B/bwrap/bwrap"
    python3 -c "from conformance.session import sandbox; print('sandbox:', sandbox.find())" | tee "$OUT/sandbox.txt"
    nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
    backends=""
    if [ -f "$B/linux.tar.xz" ]; then
        mkdir -p /tmp/dml/linux && tar xJf "$B/linux.tar.xz" -C /tmp/dml/linux
        python3 -m backends.directml.setup register "$B/linux.json" --libdir /tmp/dml/linux/lib --icd "$ICD"
        backends="$backends directml-linux directml-linux-graph"
    fi
    if [ -f "$B/wine.tar.xz" ]; then
        mkdir -p /tmp/dml && tar xJf "$B/wine.tar.xz" -C /tmp/dml
        W=/tmp/dml/wine
        # Xvfb runs xkbcomp from its compiled-in folder; the keymaps it compiles go to /var/lib/xkb
        [ -x /usr/bin/xkbcomp ] || cp "$W/x/bin/xkbcomp.bin" /usr/bin/xkbcomp
        mkdir -p /var/lib/xkb
        export PATH="$W/x/bin:$PATH" DMLCONF_WINE="$W/x/bin/wine64" \
            DMLCONF_WINESERVER="$W/usr/lib/wine/wineserver64"
        if timeout "${WINE_PROBE_S:-120}" python3 -m backends.directml.setup register "$B/wine.json" \
                --libdir "$W/run" --prefix "$W/prefix" --icd "$ICD"; then
            backends="$backends directml directml-graph"
        else
            echo "directml (Wine): NOT RUN on this machine: the runtime did not open"
            tail -c 3000 /tmp/dmlconf-helper-*.log 2>/dev/null || true
        fi
    fi
    for backend in ${BACKENDS:-$backends}; do
        started=$(date +%s)
        # RUN_ARGS: more options of dmlconf run (--no-sandbox, say); TAG: a suffix for the file
        python3 -m dmlconf run -q --backend "$backend" --workers "${WORKERS:-8}" ${RUN_ARGS:-} \
            --json "/tmp/dml/$backend.json" --baseline backends/directml/baseline-lavapipe.yaml \
            | head -12 || true
        echo "$backend${TAG:-}: $(( $(date +%s) - started )) s"
        xz -9 -c "/tmp/dml/$backend.json" > "$OUT/nvidia-$backend${TAG:-}.json.xz"
    done
    ;;
*) echo "usage: $0 prepare|run [BUNDLE]" >&2; exit 2;;
esac
