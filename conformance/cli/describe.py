"""`dmlconf describe`: an operator's reference, generated from its spec (conformance.generate.
reference; docs/operators/<OPERATOR>.md holds the same pages, written by `dmlconf generate`)."""

from __future__ import annotations

import argparse
import sys

from conformance import ops


def cmd_describe(args: argparse.Namespace) -> int:
    """The operator's page on stdout (its example backend alone with --example), or without an
    operator the index of every operator; exit 2 naming the closest operator for an unknown
    one."""
    from conformance.generate import reference

    if args.operator is None:
        print(reference.index(), end="")
        return 0
    try:
        spec = ops.get(args.operator)
    except KeyError as exc:
        print(f"dmlconf describe: error: {exc.args[0]}", file=sys.stderr)
        return 2
    if args.example:
        code = reference.snippet(spec)
        if code is None:
            print(f"dmlconf describe: error: the {spec.name} spec gives no example backend",
                  file=sys.stderr)
            return 1
        print(code, end="")
        return 0
    print(reference.page(spec, notes="docs/spec-notes.md"), end="")
    return 0


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`dmlconf describe` and its arguments."""
    first = min(ops.OPERATORS)  # an operator the examples below can name
    first_file = f"{first.lower()}_backend.py"
    des = sub.add_parser(
        "describe", help="an operator's reference: what execute(call, bindings) gets, enum "
                         "values, data types per feature level, the formula, the validation "
                         "rules with their citations, an example backend",
        description="Print an operator's reference page (Markdown), generated from its spec:\n"
                    "the tensors and attributes of `call` with their Python types, the enum\n"
                    "values, the data types and dimension counts per feature level, the\n"
                    "capabilities that decide which of its cases run, the formula and the\n"
                    "validation rules with their citations, and an example backend that passes\n"
                    "its cases. docs/operators/<OPERATOR>.md holds the same pages.",
        epilog="examples:\n"
               f"  dmlconf describe {first}\n"
               f"  dmlconf describe {first} --example\n"
               f"      only its example backend, to save as {first_file}\n"
               "  dmlconf describe\n"
               "      every operator\n\n"
               "exit status:\n"
               "  0  printed\n"
               "  1  --example: the operator's spec gives no example backend\n"
               "  2  an unknown operator (the error names the closest), or bad arguments",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    des.add_argument("operator", nargs="?", metavar="OPERATOR",
                     help="its DML_OPERATOR_TYPE name, with or without the DML_OPERATOR_ prefix "
                          "(default: list every operator)")
    des.add_argument("--example", action="store_true",
                     help="print only the example backend's Python module")
    des.set_defaults(func=cmd_describe)
