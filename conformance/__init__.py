"""dml-conformance: a conformance suite for DirectML depth/space and resample operators."""

__version__ = "0.1.0"
