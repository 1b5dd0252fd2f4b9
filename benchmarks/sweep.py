#!/usr/bin/env python3
"""Sweep throughput: a 16-run sweep run serially (one worker, in this process) and on a pool of
two worker processes, in one process one after the other; runs per second each and the speedup.

The sweep is ``examples/game_and_compute.toml`` (a 144 Hz game with jitter beside a compute job)
stretched to ``--duration`` of virtual time, with the scheduler's quantum at 1 ms and 2 ms and
seeds 1-8: 16 runs of about the same length, long enough (about 0.5-1 s each at 2 s of virtual
time on the machine this was written on) that starting the pool does not dominate. The pool's
rows must be the serial rows, byte for byte, or the figure says so. Each sweep runs twice in turn
(serial, pool, serial, pool) and the faster of each counts, which damps other work on a shared
machine. Target: the pool at least 1.8x the serial rate (the ideal on two cores is 2x).

    uv run python benchmarks/sweep.py            # 2 s of virtual time per run
    uv run python benchmarks/sweep.py --quick    # 300 ms per run, under ~20 s in all

Prints one JSON line per figure (see :func:`figures`).
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

from wddmsim.sweep import rows_to_csv, sweep

SCENARIO = Path(__file__).resolve().parents[1] / "examples" / "game_and_compute.toml"
#: The pool's rate over the serial rate that counts as met.
TARGET = 1.8
#: What to do next about this file's figure when its target is not met (``benchmarks/all.py``
#: prints it under its table).
NEXT_STEP = {
    "sweep": "Two workers on a 2-core machine shared with other work; measure on an idle machine before "
             "redesigning.",
}


def sweep_rate(duration: str = "2s", seeds: str = "1-8", workers: int = 1) -> tuple[float, float, list[dict]]:
    """Wall seconds of the benchmark's sweep at ``duration`` of virtual time per run on
    ``workers`` workers, the CPU seconds it took (this process and its finished workers), and its
    rows."""
    sets = {"duration": duration, "scheduler.quantum": ["1ms", "2ms"]}
    c = os.times()
    t = time.perf_counter()
    rows = sweep(SCENARIO, sets, seeds, workers=workers)
    wall = time.perf_counter() - t
    d = os.times()
    cpu = (d.user - c.user) + (d.system - c.system) + (d.children_user - c.children_user) + (
        d.children_system - c.children_system)
    return wall, cpu, rows


def measure(duration: str = "2s", seeds: str = "1-8", workers: int = 2, repeat: int = 1) -> dict:
    """The serial and the pool's sweep one after the other, ``repeat`` times in turn (after one
    warm-up run that imports everything a run needs), the fastest of each kept, as one figure."""
    sweep(SCENARIO, {"duration": "10ms"}, [1], workers=1)  # warm-up: imports, first-use caches
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    serial = pool = None
    for _ in range(repeat):
        s = sweep_rate(duration, seeds, 1)
        p = sweep_rate(duration, seeds, workers)
        serial = s if serial is None or s[0] < serial[0] else serial
        pool = p if pool is None or p[0] < pool[0] else pool
    serial_s, serial_cpu, serial_rows = serial
    pool_s, pool_cpu, pool_rows = pool
    runs = len(serial_rows)
    speedup = serial_s / pool_s
    return {
        "benchmark": "sweep", "figure": f"sweep_{runs}_runs_{workers}_workers_vs_serial",
        "scenario": SCENARIO.name, "duration": duration, "runs": runs, "workers": workers, "repeat": repeat,
        "cpus": os.cpu_count(), "serial_s": round(serial_s, 3), "pool_s": round(pool_s, 3),
        "seconds_per_run": round(serial_s / runs, 3),
        "serial_runs_per_s": round(runs / serial_s, 3), "pool_runs_per_s": round(runs / pool_s, 3),
        "speedup": round(speedup, 3),
        # CPU seconds per wall second: what the machine gave each phase (1.0 and ``workers`` on
        # idle cores; less when other work shares them, which caps the speedup whatever the pool)
        "serial_cpu_per_wall": round(serial_cpu / serial_s, 3), "pool_cpu_per_wall": round(pool_cpu / pool_s, 3),
        # the CPU time of the same 16 runs in each phase: what the pool costs beyond the runs
        # themselves (start-up, sending scenarios and summaries), independent of other work
        "serial_cpu_s": round(serial_cpu, 3), "pool_cpu_s": round(pool_cpu, 3),
        "pool_extra_cpu_pct": round(100 * (pool_cpu - serial_cpu) / serial_cpu, 1),
        "load_average_1min_before": None if load is None else round(load, 2),
        "rows_identical": rows_to_csv(serial_rows) == rows_to_csv(pool_rows),
        "failed_runs": sum(1 for r in serial_rows + pool_rows if r["error"]),
        "target": TARGET, "compare": ">=", "met": speedup >= TARGET, "next_step": NEXT_STEP["sweep"],
    }


def figures(quick: bool = False) -> list[dict]:
    """Every figure of this benchmark; ``quick``: 300 ms of virtual time per run instead of 2 s,
    each sweep once instead of the fastest of two."""
    return [measure("300ms", repeat=1) if quick else measure("2s", repeat=2)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="300 ms of virtual time per run")
    parser.add_argument("--duration", default=None, help="virtual time per run (default 2s; --quick: 300ms)")
    args = parser.parse_args()
    if args.duration:
        out = [measure(args.duration, repeat=2)]
    else:
        out = figures(args.quick)
    for fig in out:
        print(json.dumps(fig))


if __name__ == "__main__":
    main()
