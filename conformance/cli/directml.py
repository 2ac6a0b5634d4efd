"""`dmlconf directml`: the directml backend's own command (docs/directml-linux.md)."""

from __future__ import annotations

import argparse

from conformance.backend import backend_class


def cmd_directml(args: argparse.Namespace) -> int:
    """The directml backend's own command: its DirectML-on-Linux layer's set-up and status."""
    return backend_class("directml").command(args.rest)


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`dmlconf directml` and its arguments."""
    dml = sub.add_parser("directml", add_help=False,
                         help="build or inspect the DirectML-on-Linux layer of the `directml` "
                              "backend: `dmlconf directml setup [--source PATH]`, `dmlconf "
                              "directml status` (docs/directml-linux.md; its --help has "
                              "examples and exit codes)")
    dml.add_argument("rest", nargs=argparse.REMAINDER)
    dml.set_defaults(func=cmd_directml)
