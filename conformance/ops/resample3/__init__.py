"""RESAMPLE3, filed under its own package name: its spec, examples, pages, antialiased filter and
misreadings live in the resample family package (conformance/ops/resample/, whose docstring says
why this package stays); here are what discovery asks of a package (OPERATORS, PAGES,
misreadings.MISREADINGS) and RESAMPLE3's case families (cases/)."""

from conformance.ops.resample.pages import RESAMPLE3_PAGES as PAGES
from conformance.ops.resample.spec import Resample3

__all__ = ["OPERATORS", "PAGES"]

OPERATORS = (Resample3(),)
