"""The members of the resample descs that are no tensors, as their pages name them, each with its
DirectML type, its enum values and what it holds (spec.py gives each operator the ones its desc
states; `dmlconf describe` and docs/operators/RESAMPLE*.md show them)."""

from __future__ import annotations

from conformance.ops.base import Attribute

MODES = {"NEAREST_NEIGHBOR": 0, "LINEAR": 1}  # DML_INTERPOLATION_MODE (notes §1)
INTERPOLATION_MODE = Attribute(
    "InterpolationMode", "enum", MODES, prefix="DML_INTERPOLATION_MODE_",
    doc="NEAREST_NEIGHBOR copies the element nearest each output's input coordinate; LINEAR "
        "interpolates between the two elements around it, in every dimension")
#: DML_AXIS_DIRECTION (DirectML.h at DML_TARGET_VERSION 0x6400: "DML_AXIS_DIRECTION_INCREASING =
#: 0, DML_AXIS_DIRECTION_DECREASING = 1"; the DML_AXIS_DIRECTION page states the same values).
AXIS_DIRECTIONS = {"INCREASING": 0, "DECREASING": 1}
ROUNDING_DIRECTION = Attribute(
    "RoundingDirection", "enum", AXIS_DIRECTIONS, prefix="DML_AXIS_DIRECTION_",
    doc="how NEAREST_NEIGHBOR rounds a fractional coordinate: INCREASING toward increasing axis "
        "values (ceil), DECREASING toward decreasing ones (floor); LINEAR ignores it")
SCALES = Attribute(
    "Scales", "floats",
    doc="per dimension, the factor from input to output coordinates (OutputSize / InputSize "
        "need not equal it: beyond the scaled input the output crops, below it the coordinates "
        "clamp); one per dimension, taken as FLOAT (float32)")
INPUT_PIXEL_OFFSETS = Attribute(
    "InputPixelOffsets", "floats",
    doc="per dimension, added to the input coordinate before it is scaled (OutputX = (InputX + "
        "InputPixelOffset) * Scale + OutputPixelOffset); 0.5 is half-pixel sampling")
OUTPUT_PIXEL_OFFSETS = Attribute(
    "OutputPixelOffsets", "floats",
    doc="per dimension, added to the scaled coordinate (OutputX = (InputX + InputPixelOffset) "
        "* Scale + OutputPixelOffset); -0.5 is half-pixel sampling")
ANTIALIASED = Attribute(
    "Antialiased", "bool",
    doc="whether LINEAR stretches its filter by max(1, 1 / Scale) in each dimension whose "
        "1 / Scale is above 2 (downsampling by more than 2); any value is valid")
