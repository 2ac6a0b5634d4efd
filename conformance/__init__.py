"""dml-conformance: a conformance suite for DirectML operators (conformance/ops/ lists them)."""

__version__ = "0.1.0"
