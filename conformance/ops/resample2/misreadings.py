"""RESAMPLE2's catalogue of misreadings: the resample family's RoundingDirection readings
(conformance/ops/resample/misreadings_rounding.py), which cover RESAMPLE3 too."""

from conformance.ops.resample.misreadings_rounding import MISREADINGS

__all__ = ["MISREADINGS"]
