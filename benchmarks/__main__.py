"""``python -m benchmarks [SUITE ...] [--quick] [--json PATH]``: run suites and print figures."""

from __future__ import annotations

import argparse
import sys
import time

from . import SUITES, load_suite
from .harness import (
    QUICK_SKIPS,
    cpu_seconds,
    load_average,
    machine_facts,
    print_facts,
    print_table,
    write_json,
)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """The command line: suite names (default: all), ``--quick`` and ``--json PATH``."""
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks",
        description="Time gradcli against hand-written numpy and other autograd libraries.",
    )
    parser.add_argument(
        "suites",
        nargs="*",
        metavar="SUITE",
        help=f"suites to run, by name (default: all): {', '.join(SUITES)}",
    )
    parser.add_argument("--quick", action="store_true", help="fewer repeats: rougher, faster")
    parser.add_argument("--json", metavar="PATH", help="also write the figures to PATH as JSON")
    args = parser.parse_args(argv)
    unknown = [name for name in args.suites if name not in SUITES]
    if unknown:
        parser.error(f"unknown suite(s) {', '.join(unknown)}; choose from {', '.join(SUITES)}")
    return args


def main(argv: list[str] | None = None) -> int:
    """Run the chosen suites, then print the machine facts, the table and the suites' notes."""
    args = parse_args(argv)
    results, notes = [], []
    load_at_start = load_average()
    started, cpu_at_start = time.perf_counter(), cpu_seconds()
    for name in args.suites or SUITES:
        suite = load_suite(name)
        print(f"running {name}: {suite.TITLE}", file=sys.stderr, flush=True)
        suite_started, suite_cpu = time.perf_counter(), cpu_seconds()
        try:
            results += suite.run(quick=args.quick)
        except AssertionError as error:
            print(f"FAILED: implementations disagree: {error}", file=sys.stderr)
            return 1
        notes += getattr(suite, "NOTES", ())
        print(
            f"  {name} took {time.perf_counter() - suite_started:.1f} s, "
            f"{cpu_seconds() - suite_cpu:.1f} s of CPU time",
            file=sys.stderr,
            flush=True,
        )
    facts = machine_facts()  # after the suites, so that the libraries they used are imported
    if load_at_start is not None:  # other work on the machine makes the figures noisier
        facts["load_avg_at_start"] = load_at_start
        facts["load_avg_at_end"] = load_average()

    print_facts(facts)
    print()
    print_table(results)
    if notes:
        print()
        print("\n".join(notes))
    if QUICK_SKIPS:
        print("\nleft out by --quick:")
        print("\n".join(f"  {line}" for line in QUICK_SKIPS))
    took = time.perf_counter() - started
    cpu = cpu_seconds() - cpu_at_start  # about the wall clock of a quiet machine
    print(f"\n{'quick run, ' if args.quick else ''}took {took:.1f} s, {cpu:.1f} s of CPU time")
    if args.json:
        write_json(args.json, facts, results, args.quick)
        print(f"figures written to {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
