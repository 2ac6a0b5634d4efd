"""RESAMPLE2: RESAMPLE1 with a RoundingDirection for nearest neighbour (spec.py says how)."""

from conformance.ops.resample2.pages import PAGES
from conformance.ops.resample2.spec import AXIS_DIRECTIONS, ROUNDINGS, Resample2, tables

__all__ = ["AXIS_DIRECTIONS", "OPERATORS", "PAGES", "ROUNDINGS", "Resample2", "tables"]

OPERATORS = (Resample2(),)
