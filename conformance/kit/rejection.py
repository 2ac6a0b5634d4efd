"""The rejection a backend (or a misreading run like one) raises for an operator desc it refuses."""

from __future__ import annotations


class DescRejected(Exception):  # noqa: N818 - named for what DirectML does: it rejects the desc
    """Raised by a backend that refuses an operator desc as invalid (DirectML: E_INVALIDARG)."""
