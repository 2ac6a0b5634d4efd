"""The causality experiment of docs/findings/resample1-linear-offsets.md: DirectML's linear
RESAMPLE shaders, as spirv-cross writes their SPIR-V in GLSL, rewritten to form the coordinate
before taking its floor and fraction, i.e. floor(v - offset) and frc(v - offset) where DirectML
computes floor(v) - [frc(v) - offset < 0] and frc(v) - offset (+1). Compile the result with
glslangValidator and hand it to vkd3d-proton by hash through VKD3D_SHADER_OVERRIDE (README.md).

    python linear_fix.py IN.glsl OUT.glsl
"""

from __future__ import annotations

import re
import sys

#: dxil-spirv's form (the Linux build's DXIL): `fract(_212) + ((-0.0) - _234.x)`
DXIL_FRACTION = re.compile(r"fract\((_\d+)\) \+ \(\(-0\.0\) - (_\d+\.[xyzw])\)")
#: vkd3d-shader's form of 1.15.4's SM5: `vec4 r6 = fract(r5);` then `r6 += (-vec4(cb0_28..31))`
SM5_FRACTION = re.compile(r"vec4 (r\d+) = fract\((r\d+)\);\n(\s+)\1 \+= "
                          r"(\(-vec4\((_\d+)\.cb0_28, \5\.cb0_29, \5\.cb0_30, \5\.cb0_31\)\));")


def fix(glsl: str) -> tuple[str, int]:
    """The shader with the offset subtracted before floor and fract, and how many coordinates
    were rewritten (0: not a linear RESAMPLE shader of either form)."""
    offsets: dict[str, str] = {}
    for m in DXIL_FRACTION.finditer(glsl):
        offsets.setdefault(m.group(1), m.group(2))
    if offsets:
        glsl = DXIL_FRACTION.sub(lambda m: f"fract({m.group(1)} - {m.group(2)})", glsl)
        glsl = re.sub(r"floor\((_\d+)\)", lambda m: (f"floor({m.group(1)} - {offsets[m.group(1)]})"
                                                     if m.group(1) in offsets else m.group(0)),
                      glsl)
        return glsl, len(offsets)
    return SM5_FRACTION.subn(lambda m: (f"{m.group(2)} += {m.group(4)};\n{m.group(3)}vec4 "
                                        f"{m.group(1)} = fract({m.group(2)});"), glsl)


if __name__ == "__main__":
    with open(sys.argv[1], encoding="utf-8") as f:
        text, count = fix(f.read())
    with open(sys.argv[2], "w", encoding="utf-8") as f:
        f.write(text)
    print(f"{sys.argv[1]}: {count} coordinates rewritten")
