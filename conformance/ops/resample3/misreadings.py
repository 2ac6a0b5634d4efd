"""RESAMPLE3's catalogue of misreadings: the resample family's Antialiased readings
(conformance/ops/resample/misreadings_antialias.py); the admissible readings of its open regions
are the resample package's (admissible.py)."""

from conformance.ops.resample.misreadings_antialias import MISREADINGS

__all__ = ["MISREADINGS"]
