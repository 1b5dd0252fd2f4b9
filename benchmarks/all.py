#!/usr/bin/env python3
"""Every benchmark in one command: each file's figures, one JSON line each, then a table of targets.

    uv run python benchmarks/all.py            # every figure at its full size (about half an hour on 2 cores)
    uv run python benchmarks/all.py --quick    # every figure on small sizes (a few minutes)
    uv run python benchmarks/all.py --only throughput --only logcost
    uv run python benchmarks/all.py --json out/results.jsonl   # also keep the figures in a file

Each benchmark file exposes ``figures(quick) -> list[dict]``; a figure names its ``benchmark`` and
what it measures, carries the measured values and, where the project sets a target, ``target`` and
``met``. The table at the end lists every figure with a target, so one run says which targets hold
on this machine. Speed figures are ratios measured within one run (the bare loop, the run without
the log, the serial sweep), because absolute rates depend on the machine and its load; the load
average at the start and the end is printed beside them so a run on a busy machine shows itself.

A benchmark that fails does not stop the others: its error is printed as a figure of its own and
the exit status is 1.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent

#: The benchmark files, in the order they run: the submission path first, the log, memory, real time,
#: sweeps, the command line's start-up, and last the profile that explains the throughput figures.
BENCHMARKS = ("throughput", "logcost", "memory", "realtime", "sweep", "study", "startup", "profile_path")


def load(name: str):
    """The benchmark module ``benchmarks/NAME.py``, loaded by path (``benchmarks/`` is no package)."""
    spec = importlib.util.spec_from_file_location(f"bench_{name}", HERE / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def run(names, quick: bool, out=None) -> tuple[list[dict], bool]:
    """Run each named benchmark's ``figures(quick)``, print each figure as a JSON line as it comes
    (and to ``out`` when given): the figures, and whether every benchmark ran."""
    figures, ok = [], True
    for name in names:
        t0 = time.perf_counter()
        try:
            got = load(name).figures(quick)
        except Exception as e:  # noqa: BLE001 - one broken benchmark must not lose the others' figures
            ok = False
            got = [{"benchmark": name, "figure": "error", "error": f"{type(e).__name__}: {e}",
                    "traceback": traceback.format_exc(limit=4)}]
        elapsed = round(time.perf_counter() - t0, 1)
        for fig in got:
            fig.setdefault("benchmark", name)
            fig.setdefault("benchmark_wall_s", elapsed)
            line = json.dumps(fig, sort_keys=False, default=str)
            print(line, flush=True)
            if out is not None:
                out.write(line + "\n")
        figures.extend(got)
    return figures, ok


def _value(fig: dict) -> str:
    """The figure's measured value against its target, in the key the figure names it by."""
    for key in ("ratio", "speedup", "flatness", "parity", "peak_rss_mb", "realtime_factor", "wall_ratio", "startup_s"):
        if key in fig:
            return f"{key} {fig[key]}"
    return ""


def table(figures: list[dict]) -> str:
    """The figures that carry a target, one line each: benchmark, figure, value, target, met."""
    rows = [(f.get("benchmark", ""), str(f.get("figure", "")), _value(f), str(f.get("target", "")),
             "yes" if f.get("met") else "NO") for f in figures if "target" in f]
    rows += [(f["benchmark"], "error", f["error"][:60], "", "NO") for f in figures if f.get("figure") == "error"]
    if not rows:
        return "no figure carries a target"
    head = ("benchmark", "figure", "measured", "target", "met")
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(5)]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    return "\n".join([fmt.format(*head), *(fmt.format(*r) for r in rows)])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="every figure on small sizes")
    ap.add_argument("--only", action="append", choices=BENCHMARKS, metavar="NAME",
                    help=f"run only this benchmark (repeatable): {', '.join(BENCHMARKS)}")
    ap.add_argument("--json", metavar="FILE", help="also write every figure as a JSON line to FILE")
    args = ap.parse_args()
    names = [n for n in BENCHMARKS if not args.only or n in args.only]
    load_before = os.getloadavg()
    print(f"# {len(names)} benchmarks{' (quick)' if args.quick else ''}; CPUs {os.cpu_count()}; "
          f"load average {load_before[0]:.2f}", file=sys.stderr, flush=True)
    out = open(args.json, "w", encoding="utf-8") if args.json else None
    try:
        figures, ok = run(names, args.quick, out)
    finally:
        if out is not None:
            out.close()
    print(f"\n# load average at the end {os.getloadavg()[0]:.2f}", file=sys.stderr)
    print(table(figures), file=sys.stderr)
    raise SystemExit(0 if ok else 1)


if __name__ == "__main__":
    main()
