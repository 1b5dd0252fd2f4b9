#!/usr/bin/env python3
"""The real-time factor: virtual seconds run per wall second, for the demo and every example.

Each scenario (the built-in demo and every ``examples/*.toml``) runs at its own duration, in this
process, twice: with the event log off, and with the log streamed to a temporary file
(``JsonlSink``, what ``wddmsim run --events`` does), so the log's cost shows. A run that ends in a
bug check (``tdr_failure``) counts the virtual time up to the bug check. The wall time is that of
``System.run`` alone (building the system is not in it); a factor above 1 runs faster than the
GPU's own time.

    uv run python benchmarks/realtime.py            # every scenario, best of 3 runs each
    uv run python benchmarks/realtime.py --quick    # one run each, at most 20 ms of virtual time (under ~20 s)

One JSON line per scenario: ``rtf`` (log off), ``rtf_log`` (log streamed) and ``log_cost`` (wall
time with the log over wall time without it).
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

BENCHMARK = "realtime"
EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def scenarios() -> list[tuple[str, object]]:
    """(name, scenario model) of the demo and of each example, the demo first."""
    from wddmsim.demo import SCENARIO
    from wddmsim.scenario import load_scenario, parse_scenario

    out = [("demo", parse_scenario(SCENARIO, "<built-in demo>"))]
    out += [(p.stem, load_scenario(str(p))) for p in sorted(EXAMPLES.glob("*.toml"))]
    return out


#: How far a ``--quick`` run goes (virtual ns).
QUICK_NS = 20_000_000


def run_once(scenario, events: str | None = None, until: int | None = None) -> tuple[int, float]:
    """(virtual ns reached, wall seconds of the run) of one run of ``scenario`` (to ``until`` ns,
    default its duration)."""
    from wddmsim.system import System
    from wddmsim.trace import JsonlSink

    sink = JsonlSink(events) if events else None
    try:
        system = System(scenario, trace=sink)
        t = time.perf_counter()
        result = system.run(until)
        wall = time.perf_counter() - t
    finally:
        if sink is not None:
            sink.close()
    return result.end, wall


def measure(name: str, scenario, repeat: int = 1, until: int | None = None) -> dict:
    """The figure of one scenario: best of ``repeat`` runs with the log off and with it streamed
    (each to ``until`` ns if given, else the scenario's duration)."""
    if until is not None:
        until = min(until, scenario.duration)
    end, wall = min((run_once(scenario, until=until) for _ in range(repeat)), key=lambda r: r[1])
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "events.jsonl")
        end_log, wall_log = min((run_once(scenario, path, until) for _ in range(repeat)), key=lambda r: r[1])
        log_bytes = os.path.getsize(path)
    assert end_log == end, (name, end, end_log)
    return {"benchmark": BENCHMARK, "figure": "real_time_factor", "scenario": name, "virtual_s": end / 1e9,
            "wall_s": round(wall, 4), "rtf": round(end / 1e9 / wall, 3),
            "wall_s_log": round(wall_log, 4), "rtf_log": round(end / 1e9 / wall_log, 3),
            "log_cost": round(wall_log / wall, 2), "log_mib": round(log_bytes / 2**20, 2)}


def figures(quick: bool = False, only: list[str] | None = None) -> list[dict]:
    """One figure per scenario (``only``: just these names)."""
    return [measure(name, sc, repeat=1 if quick else 3, until=QUICK_NS if quick else None)
            for name, sc in scenarios() if only is None or name in only]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="one run per scenario, at most 20 ms of virtual time")
    ap.add_argument("names", nargs="*", help="only these scenarios (demo, or an example's name)")
    args = ap.parse_args()
    for name, sc in scenarios():
        if args.names and name not in args.names:
            continue
        print(json.dumps(measure(name, sc, repeat=1 if args.quick else 3, until=QUICK_NS if args.quick else None)),
              flush=True)


if __name__ == "__main__":
    main()
