"""`dmlconf merge`: join the results files of the shards of a run into one."""

from __future__ import annotations

import argparse
import time

from conformance import results
from conformance.cli.common import command_line, print_summary, report_options, write_reports
from conformance.session import DEFAULT_JSON, shards


def cmd_merge(args: argparse.Namespace) -> int:
    docs = shards.load(args.shards)
    command = command_line(args)
    doc, found = shards.merge(docs, command)
    results.write(doc, args.json)
    write_reports(doc, args)
    print_summary(doc, found, args.json,
                  f"{float(doc.duration_s):.1f} s (the longest shard's run; merged in "
                  f"{time.perf_counter() - args.started:.1f} s)")
    return results.exit_status(found) or int(not doc.complete)


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`dmlconf merge` and its arguments."""
    mrg = sub.add_parser("merge", help="join the results files of the shards of a run "
                                       "(dmlconf run --shard K/N) into one",
                         epilog="examples:\n"
                                "  dmlconf merge shard1.json shard2.json shard3.json shard4.json "
                                "--json reports/results.json\n"
                                "      after dmlconf run --shard K/4 --json shardK.json, K = 1 "
                                "to 4\n\n"
                                "exit status:\n"
                                "  0  merged; no decisive case FAILed, ERRORed or TIMED OUT\n"
                                "  1  merged; a decisive FAIL, ERROR or TIMEOUT, or a shard "
                                "that stopped early\n"
                                "  2  bad arguments, or files that are not the shards of one "
                                "run",
                         formatter_class=argparse.RawDescriptionHelpFormatter)
    mrg.add_argument("shards", nargs="+", metavar="SHARD.json",
                     help="the results file of every shard (dmlconf run --shard K/N --json ...)")
    mrg.add_argument("--json", default=DEFAULT_JSON, metavar="PATH",
                     help=f"the merged results file (default: {DEFAULT_JSON})")
    report_options(mrg)
    mrg.set_defaults(func=cmd_merge)
