"""`dmlconf explore`: search a backend for failures with Hypothesis (conformance.explore)."""

from __future__ import annotations

import argparse

from conformance.session import DEFAULT_TIMEOUT_S


def cmd_explore(args: argparse.Namespace) -> int:
    from conformance import explore  # imports Hypothesis: only for this command

    return explore.command(args)


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`dmlconf explore` and its arguments."""
    exp = sub.add_parser("explore", help="search a backend for failures with Hypothesis; write "
                                         "each minimal failing case as a regression",
                         epilog="examples:\n"
                                "  dmlconf explore --backend my_backend.py:MyBackend "
                                "--seconds 300\n"
                                "  dmlconf explore --family layouts --max-examples 50 "
                                "--seed 7\n\n"
                                "exit status:\n"
                                "  0    nothing found\n"
                                "  1    a family found a failure (its minimal case is written "
                                "under --out)\n"
                                "  2    bad arguments, or a backend that does not load\n"
                                "  130  interrupted",
                         formatter_class=argparse.RawDescriptionHelpFormatter)
    exp.add_argument("--backend", default="numpy", help="as for run (default: numpy)")
    exp.add_argument("--family", action="append", metavar="NAME",
                     help="only this family (repeatable; default: all)")
    exp.add_argument("--max-examples", type=int, metavar="N",
                     help="examples per family (default: 100, or no limit with --seconds)")
    exp.add_argument("--seconds", type=float, metavar="S",
                     help="total wall time, split across the families")
    exp.add_argument("--seed", type=int, default=0, help="Hypothesis seed (default: 0)")
    exp.add_argument("--out", default="cases/regressions",
                     help="folder for regression cases (default: cases/regressions)")
    exp.add_argument("--level", help="the feature level claimed (default: the backend's highest)")
    exp.add_argument("--execution-flags", metavar="FLAGS",
                     help="DML_EXECUTION_FLAGS the backend compiles with and the judge allows "
                          "for, e.g. ALLOW_HALF_PRECISION_COMPUTATION,DISABLE_META_COMMANDS "
                          "(default: NONE; docs/tolerances.md)")
    exp.add_argument("--isolate", action=argparse.BooleanOptionalAction, default=None,
                     help="run the backend in a worker process: a crash or hang is a failing "
                          "example, shrunk like any other (default: for native backends)")
    exp.add_argument("--timeout", type=float, metavar="S",
                     help=f"with isolation: seconds an example may run before it is a TIMEOUT "
                          f"(default: {DEFAULT_TIMEOUT_S:g}; 0: none)")
    exp.set_defaults(func=cmd_explore)
