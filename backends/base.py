"""Kept for backends written against `backends.base`: the interface is conformance.backend."""

from conformance.backend import Backend, Capabilities, DescRejected

__all__ = ["Backend", "Capabilities", "DescRejected"]
