"""``python -m benchmarks [--quick] [--only a,b] [--output PATH]``: run the suite and write the report."""

from __future__ import annotations

import argparse
import datetime
import importlib
import json
import os
import shlex
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks import BENCHMARKS, paths, report
from benchmarks.child import ChildFailed, run_child
from benchmarks.harness import machine_info


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="tiny sizes and few repeats (about a minute); for the smoke test")
    parser.add_argument("--only", metavar="NAMES", help=f"comma-separated subset of: {', '.join(BENCHMARKS)}")
    parser.add_argument("--output", metavar="PATH", type=Path, help="Markdown report path (the JSON goes beside it); "
                        "default docs/benchmarks.md, or the cache directory with --quick")
    parser.add_argument("--timeout", type=float, default=1800.0, help="seconds one benchmark may run before it is abandoned")
    parser.add_argument(
        "--whatif",
        metavar="PATCHES",
        help="apply proposed fixes at run time (benchmarks/whatif.py: status, coalesce, gcfreeze, window), comma-separated; "
        "the report goes to the cache directory unless --output is given",
    )
    parser.add_argument("--render", metavar="JSON", type=Path, help="only rewrite the Markdown report from an earlier run's JSON (e.g. after editing benchmarks/FINDINGS.md)")
    return parser


def _title(name: str) -> str:
    module = importlib.import_module(f"benchmarks.{name}")
    return getattr(module, "TITLE", name)


def _method(name: str) -> str:
    module = importlib.import_module(f"benchmarks.{name}")
    return getattr(module, "METHOD", "")


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.render is not None:
        run = json.loads(args.render.read_text(encoding="utf-8"))
        output = args.output or args.render.with_suffix(".md")
        report.write(run, {r["name"]: _method(r["name"]) for r in run["results"]}, output)
        print(f"wrote {output}")
        return 0
    names = list(BENCHMARKS)
    if args.only:
        wanted = [n.strip() for n in args.only.split(",") if n.strip()]
        unknown = sorted(set(wanted) - set(BENCHMARKS))
        if unknown:
            print(f"unknown benchmark(s): {', '.join(unknown)}; choose from {', '.join(BENCHMARKS)}", file=sys.stderr)
            return 2
        names = [n for n in BENCHMARKS if n in wanted]
    if args.whatif:
        from benchmarks.whatif import ENV, PATCHES

        unknown = sorted(set(args.whatif.split(",")) - set(PATCHES))
        if unknown:
            print(f"unknown what-if patch(es): {', '.join(unknown)}; choose from {', '.join(PATCHES)}", file=sys.stderr)
            return 2
        os.environ[ENV] = args.whatif
    default = paths.CACHE / ("benchmarks-whatif.md" if args.whatif else "benchmarks-quick.md")
    output = args.output or (default if args.quick or args.whatif else paths.DOCS / "benchmarks.md")
    started = time.perf_counter()
    results: list[dict[str, Any]] = []
    print(f"assistant-tui benchmarks ({'quick' if args.quick else 'full'}): {', '.join(names)}", flush=True)
    for name in names:
        print(f"\n== {name}: {_title(name)}", flush=True)
        began = time.perf_counter()
        load_before = os.getloadavg()[0]
        try:
            result = run_child(name, "run", {"quick": args.quick}, timeout=args.timeout)
        except ChildFailed as exc:
            result = {"name": name, "title": _title(name), "figures": [], "notes": [], "error": str(exc), "parameters": {}}
        result["seconds"] = time.perf_counter() - began
        result["load"] = [round(load_before, 2), round(os.getloadavg()[0], 2)]
        results.append(result)
        for line in report.console_lines(result):
            print(line, flush=True)
    run = {
        "command": "python -m benchmarks" + (" " + shlex.join(argv if argv is not None else sys.argv[1:]) if (argv if argv is not None else sys.argv[1:]) else ""),
        "date": datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z"),
        "quick": args.quick,
        "whatif": args.whatif or "",
        "seconds": time.perf_counter() - started,
        "machine": machine_info(),
        "results": results,
    }
    json_path = report.write(run, {name: _method(name) for name in names}, output)
    print(f"\nwrote {output} and {json_path} in {run['seconds']:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
