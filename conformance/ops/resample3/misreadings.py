"""RESAMPLE3's catalogue of misreadings: the resample family's Antialiased readings
(conformance/ops/resample/misreadings_antialias.py)."""

from conformance.ops.resample.misreadings_antialias import MISREADINGS

__all__ = ["MISREADINGS"]
