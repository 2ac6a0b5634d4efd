"""RESAMPLE3: RESAMPLE2 with Antialiased (spec.py says how, antialias.py computes it)."""

from conformance.ops.resample3.pages import PAGES
from conformance.ops.resample3.spec import Resample3

__all__ = ["OPERATORS", "PAGES", "Resample3"]

OPERATORS = (Resample3(),)
