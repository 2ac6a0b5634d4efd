"""`dmlconf certify`: a certification run and its bundle (docs/certification.md)."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from conformance.cli.common import command_line, parse_size, print_summary, scope_option
from conformance.flags import ExecutionFlags
from conformance.levels import FeatureLevel
from conformance.results import Result, ResultsDocument, Scope
from conformance.session import DEFAULT_TIMEOUT_S


def cmd_certify(args: argparse.Namespace) -> int:
    """A certification run of the claimed level's mustpass list and its bundle
    (docs/certification.md)."""
    from contextlib import redirect_stderr, redirect_stdout

    from conformance import certify

    refused = [opt for opt, given in (("-k", args.k), ("--cases", args.cases),
                                      ("--shard", args.shard), ("--resume", args.resume),
                                      ("--no-isolate", args.isolate is False)) if given]
    if refused:
        print(f"dmlconf certify: error: {', '.join(refused)} refused: a certification runs "
              "the whole mustpass list of the claimed level, isolated, in one run "
              "(docs/certification.md)", file=sys.stderr)
        return 2
    request = certify.Request(
        backend=args.backend, level=FeatureLevel.parse(args.level) if args.level else None,
        execution_flags=ExecutionFlags.parse(args.execution_flags), baseline=args.baseline,
        out=Path(args.out) if args.out else None,
        statement=Path(args.statement) if args.statement else None, workers=args.workers,
        timeout_s=args.timeout, memory_cap=parse_size(args.memory_cap) if args.memory_cap
        else None, without_sandbox=True if args.certify_without_sandbox else None,
        command=command_line(args), scope=Scope.parse(args.scope or ()))
    log = certify.bundle.Log()
    out, err = log.tee(sys.stdout), log.tee(sys.stderr)
    found: dict[str, ResultsDocument] = {}

    def summarise(doc: ResultsDocument, res: list[Result], took: str, path: Path) -> None:
        found["doc"] = doc
        print_summary(doc, res, str(path),
                      f"{time.perf_counter() - args.started:.1f} s ({took})")

    try:
        with redirect_stdout(out), redirect_stderr(err):
            certify.certify(request, log, err, summarise)
    except certify.CertifyError as exc:
        print(f"dmlconf certify: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("dmlconf certify: interrupted: no bundle written (a certification is not "
              "resumed: run it again)", file=sys.stderr)
        return 130
    verdict = found["doc"].verdict.get(found["doc"].feature_level)
    return 0 if verdict is not None and verdict.conformant is True else 1


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`dmlconf certify` and its arguments."""
    crt = sub.add_parser("certify", help="certify a backend: run the claimed level's mustpass "
                                         "list, tamper-proof, and write a submission bundle "
                                         "(docs/certification.md)",
                         description="Certify a backend: run the claimed level's whole mustpass "
                                     "list in the\ntamper-proof mode (isolated workers, the "
                                     "judge in the harness) and write a\nsubmission bundle, a "
                                     "folder and its .zip (docs/certification.md).",
                         epilog="examples:\n"
                                "  dmlconf certify --backend mypackage.dml_port:MyBackend "
                                "--level 6_2\n"
                                "  dmlconf certify --backend my_backend.py:MyBackend --level 5_1 "
                                "--baseline waivers.yaml\n"
                                "      with the waivers of a baseline, copied into the bundle\n\n"
                                "exit status:\n"
                                "  0    the claimed level is conformant (the bundle is written)\n"
                                "  1    it is not (the bundle is written either way: it records "
                                "the run)\n"
                                "  2    refused: bad or refused arguments (-k, --cases, "
                                "--shard, ...), a case\n"
                                "       set that is not the committed one, a backend that does "
                                "not load\n"
                                "  130  interrupted: no bundle (a certification is not resumed)",
                         formatter_class=argparse.RawDescriptionHelpFormatter)
    crt.add_argument("--backend", required=True,
                     help="registered name, package.module:Class or path/to/file.py:Class")
    crt.add_argument("--level", help="the feature level claimed, e.g. 6_2 (default: the "
                                     "backend's highest)")
    crt.add_argument("--execution-flags", metavar="FLAGS",
                     help="DML_EXECUTION_FLAGS, as for run (default: NONE)")
    scope_option(crt)
    crt.add_argument("--baseline", metavar="PATH",
                     help="baseline of waivers (docs/baselines.md); copied into the bundle")
    crt.add_argument("--out", metavar="DIR",
                     help="the bundle folder, new or empty (default: "
                          "certification/<backend>-<level>-<date>); DIR.zip is written beside")
    crt.add_argument("--statement", metavar="FILE",
                     help="the filled-in statement.md to bundle (default: a template to fill)")
    cex = crt.add_argument_group("execution (docs/robustness.md; always isolated)")
    cex.add_argument("--workers", type=int, metavar="N", help="worker processes, as for run")
    cex.add_argument("--timeout", type=float, metavar="S",
                     help=f"seconds per case (default: {DEFAULT_TIMEOUT_S:g}; 0: none)")
    cex.add_argument("--memory-cap", metavar="SIZE", help="memory per process, as for run")
    cex.add_argument("--certify-without-sandbox", action="store_true",
                     help="run where the sandbox cannot be made (recorded in the results; "
                          "docs/robustness.md, 'The sandbox')")
    for refused, kwargs in (("-k", {"action": "append"}), ("--cases", {"action": "append"}),
                            ("--shard", {}), ("--resume", {"action": "store_true"}),
                            ("--isolate", {"action": argparse.BooleanOptionalAction})):
        crt.add_argument(refused, help=argparse.SUPPRESS, **kwargs)  # refused with the reason
    crt.set_defaults(func=cmd_certify)
