"""RESAMPLE2, filed under its own package name: its spec, examples, pages and misreadings live in
the resample family package (conformance/ops/resample/, whose docstring says why this package
stays); here are what discovery asks of a package (OPERATORS, PAGES, misreadings.MISREADINGS)
and RESAMPLE2's case families (cases/)."""

from conformance.ops.resample.pages import RESAMPLE2_PAGES as PAGES
from conformance.ops.resample.spec import Resample2

__all__ = ["OPERATORS", "PAGES"]

OPERATORS = (Resample2(),)
