"""Real DirectML on Linux through vkd3d-proton on lavapipe (or another Vulkan driver): the
`directml` and `directml-graph` backends (DirectML.dll 1.15.4 under Wine) and `directml-linux`
and `directml-linux-graph` (torch-directml 0.2.5's libdirectml.so) in backend.py, their native
shim (native/), and the set-up that builds both (setup.py: `dmlconf directml setup`).
docs/directml-linux.md."""

from backends.directml.backend import (
    DirectMLBackend,
    DirectMLGraphBackend,
    DirectMLLinuxBackend,
    DirectMLLinuxGraphBackend,
)

__all__ = ["DirectMLBackend", "DirectMLGraphBackend", "DirectMLLinuxBackend",
           "DirectMLLinuxGraphBackend"]
