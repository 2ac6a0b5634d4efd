"""DML_FEATURE_LEVEL: the levels the suite knows, and parsing them from text.

Values from DirectML.h (docs/spec-notes.md §1; DML_FEATURE_LEVEL page, compiler's note on the
explicit header values).
"""

from __future__ import annotations

from enum import IntEnum


class FeatureLevel(IntEnum):
    FL_1_0 = 0x1000
    FL_2_0 = 0x2000
    FL_2_1 = 0x2100
    FL_3_0 = 0x3000
    FL_3_1 = 0x3100
    FL_4_0 = 0x4000
    FL_4_1 = 0x4100
    FL_5_0 = 0x5000
    FL_5_1 = 0x5100
    FL_5_2 = 0x5200
    FL_6_0 = 0x6000
    FL_6_1 = 0x6100
    FL_6_2 = 0x6200
    FL_6_3 = 0x6300
    FL_6_4 = 0x6400

    def __str__(self) -> str:
        return self.name[3:]

    @classmethod
    def parse(cls, text: str | int) -> FeatureLevel:
        """Accept "2_1", "DML_FEATURE_LEVEL_2_1", "0x2100" or the integer value; nothing else
        ("2.1" is refused: a level is not a DirectML version, whose 1.9 is level 5_1)."""
        if isinstance(text, int) and not isinstance(text, bool):
            return cls(text)
        if not isinstance(text, str):
            raise ValueError(f"a feature level is text like '2_1', not {text!r}")
        t = text.strip().upper().removeprefix("DML_FEATURE_LEVEL_")
        if t.startswith("0X"):
            try:
                return cls(int(t, 16))
            except ValueError:
                pass
        try:
            return cls["FL_" + t]
        except KeyError:
            known = ", ".join(str(level) for level in cls)
            raise ValueError(f"unknown feature level {text!r}: give it as 5_1, 0x5100 or "
                             f"DML_FEATURE_LEVEL_5_1 (known: {known})") from None


HIGHEST = max(FeatureLevel)
