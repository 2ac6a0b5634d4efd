"""What the kernel modules share: the options every kernel compiles with, how many output
rows one parallel job of the plane kernels takes, and numba's `intrinsic` (typed here as the
kernels call it)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypedDict

if TYPE_CHECKING:
    from collections.abc import Callable

    from numba.core.typing.templates import Signature

    #: What an intrinsic's typing function returns: the call's signature and the function that
    #: emits its LLVM IR.
    Typed = tuple[Signature, Callable[..., Any]]

    def intrinsic(func: Callable[..., Typed]) -> Callable[..., None]:
        """numba.extending.intrinsic as the kernels call it, for the type checker: numba's
        stub gives the result the typing function's parameters (typingctx first), but jitted
        code calls an intrinsic without typingctx, and every one of these returns void."""
        ...
else:
    from numba.extending import intrinsic as intrinsic


class JitOptions(TypedDict):
    """The options of `JIT`, typed so that `njit(..., **JIT)` matches numba's signature."""

    cache: bool
    nogil: bool


#: Compiled kernels are cached on disk (numba `cache=True`, beside each module) and release the
#: GIL while they run.
JIT: JitOptions = {"cache": True, "nogil": True}

#: Output rows per parallel job of the plane kernels (planes are split so 2 cores share even a
#: single large plane).
ROWS = 32
