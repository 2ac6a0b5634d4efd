"""DML_EXECUTION_FLAGS: the flags an operator is compiled with (IDMLDevice::CompileOperator).

Values from DirectML.h (spec-notes §7): NONE 0x0, ALLOW_HALF_PRECISION_COMPUTATION 0x1 (float16
math may be computed in half precision), DISABLE_META_COMMANDS 0x2 (no vendor meta commands:
DirectML's own shaders run), DESCRIPTORS_VOLATILE 0x4. A run's flags reach the backend
(Backend.execution_flags; the DirectML routes pass them to CompileOperator) and the judge (the
float16 envelope of arithmetic operators widens to half-precision arithmetic under
ALLOW_HALF_PRECISION_COMPUTATION: docs/tolerances.md), and are recorded in the results.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import IntFlag

PREFIX = "DML_EXECUTION_FLAG_"


class ExecutionFlags(IntFlag):
    NONE = 0x0
    ALLOW_HALF_PRECISION_COMPUTATION = 0x1
    DISABLE_META_COMMANDS = 0x2
    DESCRIPTORS_VOLATILE = 0x4

    @property
    def names(self) -> list[str]:
        """The set flags by name, in value order ([] for NONE)."""
        return [f.name for f in ExecutionFlags if f and f in self and f.name]

    @classmethod
    def parse(cls, text: str | int | Iterable[str] | None) -> ExecutionFlags:
        """Accept "ALLOW_HALF_PRECISION_COMPUTATION,DISABLE_META_COMMANDS" (commas, '|' or
        spaces; the DML_EXECUTION_FLAG_ prefix optional; case-insensitive), "NONE", "0x3", an
        int, or a list of names."""
        if text is None:
            return cls.NONE
        if isinstance(text, int) and not isinstance(text, bool):
            if text < 0 or text & ~_ALL:
                raise ValueError(f"execution flags 0x{text:x} hold bits that are no "
                                 f"DML_EXECUTION_FLAGS value (known: {_known()})")
            return cls(text)
        if isinstance(text, bool):  # an int to Python, but neither a value nor names
            raise TypeError(f"execution flags are not a bool: {text!r}")
        words = (text.replace("|", ",").replace(" ", ",").split(",") if isinstance(text, str)
                 else list(text))
        out = cls.NONE
        for word in words:
            if not isinstance(word, str):
                raise ValueError(f"an execution flag is a name, not {word!r} (known: {_known()})")
            w = word.strip().upper().removeprefix(PREFIX)
            if not w:
                continue
            if w.startswith("0X") and all(c in "0123456789ABCDEF" for c in w[2:]) and w[2:]:
                out |= cls.parse(int(w, 16))
            elif w in cls.__members__:
                out |= cls[w]
            else:
                raise ValueError(f"unknown execution flag {word!r}; known: {_known()}")
        return out


_ALL = sum(int(f) for f in ExecutionFlags)


def _known() -> str:
    return ", ".join(f.name for f in ExecutionFlags if f.name)
