"""Backends under test: implementations of the harness's backend interface
(conformance.backend), which also holds the registry that finds one by name. The names below are
re-exported for code written when they lived here; new code imports conformance.backend."""

from conformance.backend import (
    BUILTIN,
    ENTRY_POINT_GROUP,
    Backend,
    BackendLoadError,
    Capabilities,
    DescRejected,
    backend_class,
    load_backend,
    registered,
)

__all__ = ["BUILTIN", "ENTRY_POINT_GROUP", "Backend", "BackendLoadError", "Capabilities",
           "DescRejected", "backend_class", "load_backend", "registered"]
