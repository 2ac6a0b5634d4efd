"""What the kernel modules share: the options every kernel compiles with, and how many output
rows one parallel job of the plane kernels takes."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable

    from numba.core.typing.templates import Signature

    #: What an intrinsic's typing function returns: the call's signature and the function that
    #: emits its LLVM IR.
    Typed = tuple[Signature, Callable[..., Any]]

#: Compiled kernels are cached on disk (numba `cache=True`, beside each module) and release the
#: GIL while they run.
JIT = {"cache": True, "nogil": True}

#: Output rows per parallel job of the plane kernels (planes are split so 2 cores share even a
#: single large plane).
ROWS = 32
