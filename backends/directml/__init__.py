"""Real DirectML (libdirectml.so) on Linux through vkd3d-proton on Mesa lavapipe: the `directml`
and `directml-graph` backends (backend.py), their native shim (native/), and the set-up that
builds the layer (setup.py: `dmlconf directml setup`). docs/directml-linux.md."""

from backends.directml.backend import DirectMLBackend, DirectMLGraphBackend

__all__ = ["DirectMLBackend", "DirectMLGraphBackend"]
