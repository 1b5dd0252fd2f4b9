#!/usr/bin/env python3
"""Memory: a run's peak resident memory with the event log streamed to a file, and lazy work.

Two measurements, each run in a fresh Python process so that the peak (of that process, the
interpreter and its modules included) is the run's own. On Linux the peak is ``VmHWM`` of
``/proc/self/status``, not ``ru_maxrss``: Linux carries ``ru_maxrss`` across ``exec``, so a fresh
process started by a large one (``benchmarks/all.py`` after the other benchmarks) would report its
parent's peak (about 250 MiB there, against 40 MiB for the run itself); elsewhere ``ru_maxrss``:

- ``peak_rss``: 8 contexts streaming batches of 16 packets of 1 us of GPU work (every CPU cost
  zero, verifier strict) with the event log written to a file as it goes (``JsonlSink``, what
  ``wddmsim run --events`` does). ``peak_rss_mib`` is the run's peak plus the peak of the log's
  writer process (:mod:`wddmsim.trace.writer`), both shown: an upper bound of what the two held at
  once. The peak is measured at two or three sizes to show it does not grow with the packets
  run; the target is under 300 MB at 10^7 packets, so a run of fewer packets is not judged
  (``met`` is None and ``not_judged`` says at what size it ran). ``before`` is the peak
  once the system is built, before the run: what the interpreter and the model's modules take.
- ``lazy``: a 10 ms scenario whose compute workload describes 10, just enough to last the 10 ms,
  and 10^9 batches: the wall time of each run (best of five, log off) and its peak memory. The
  10^9 run must cost what the just-enough run costs (target: within 25%, the machine's noise);
  the run of 10 does less work (fewer packets) and is shown for scale.

    uv run python benchmarks/memory.py            # 10^5 and 10^6 packets, and the lazy check
    uv run python benchmarks/memory.py --quick    # 10^3 and 10^4 packets (under ~20 s)
    uv run python benchmarks/memory.py --full     # 10^5, 10^6 and 10^7 packets (the 10^7 run takes long)

Each figure is printed as one JSON line.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

BENCHMARK = "memory"
#: The target of the streamed-log run at 10^7 packets.
TARGET_BYTES = 300_000_000
#: The run size the target is set at; a run below it is not judged (8 contexts of whole batches
#: of 16 make 10^7 into 9,999,872 packets, hence the margin).
TARGET_PACKETS = 10_000_000
#: How much slower the 10^9 run may be than the just-enough one (the machine's noise).
LAZY_TOLERANCE = 1.25
ZERO = {"render": 0, "patch": 0, "submit": 0, "isr": 0, "dpc": 0, "present": 0}


def stream_scenario(packets: int, contexts: int = 8) -> dict:
    """``contexts`` contexts on one node, each ``packets / contexts`` packets in batches of 16."""
    batches = max(1, packets // contexts // 16)
    return {
        "name": f"memory-{packets}", "duration": "3600s",
        "adapter": {"nodes": [{"name": "3D", "engine": "3d", "command_cost": 0}], "cpu_cost": ZERO,
                    "hw_queue_depth": 2},
        "process": [{"name": f"p{i}", "context": [{"name": "c", "node": "3D", "workload": {
            "kind": "compute_batch", "batch": 16, "work": "1us", "count": batches}}]} for i in range(contexts)],
    }


def lazy_scenario(count: int) -> dict:
    """10 ms of a compute job of ``count`` batches of 4 packets of 50 us (60 batches last the 10 ms)."""
    return {
        "name": f"lazy-{count}", "duration": "10ms",
        "adapter": {"nodes": [{"name": "3D", "engine": "3d"}]},
        "process": [{"name": "p", "context": [{"name": "c", "node": "3D", "workload": {
            "kind": "compute_batch", "batch": 4, "work": "50us", "count": count}}]}],
    }


#: What to do next about each figure of this file when its target is not met (``benchmarks/all.py``
#: prints it under its table).
NEXT_STEP = {
    "peak_rss": "Find what the run holds as it grows: tracemalloc's largest allocation sites at the end of a "
                "10^6-packet run against a 10^5 one, then release those records as their packets retire.",
    "lazy": "The 10^9 run does work the just-enough one does not: profile both (cProfile) and remove what "
            "walks the batches described rather than the ones reached.",
}


def _size(packets: int) -> str:
    """``packets`` as the power of ten it rounds to: ``10^4`` for 9,984."""
    import math

    return f"10^{round(math.log10(max(packets, 1)))}"


def _peak_rss(who: str = "self") -> int:
    """The peak resident set size in bytes of this process (``VmHWM`` where Linux gives it: its
    own, unlike ``ru_maxrss``, which keeps the peak of the process that started this one), or
    (``children``) of the largest child it has waited for: the event log's writer process once
    the sink is closed."""
    from wddmsim.runner.cost import peak_rss_bytes, writer_peak_rss_bytes

    return (peak_rss_bytes() if who == "self" else writer_peak_rss_bytes()) or 0


def child(spec: dict) -> dict:
    """Run in the measuring process: build and run ``spec["scenario"]`` ``spec["repeat"]`` times
    (the log to ``spec["events"]`` if given) and report the packets, the best wall time and the
    peak resident memory before and after the runs."""
    from wddmsim.scenario import scenario_from_dict
    from wddmsim.runner.system import System
    from wddmsim.trace import JsonlSink

    scenario = scenario_from_dict(spec["scenario"], "<benchmark>")
    walls = []
    before = None
    result = None
    for _ in range(spec.get("repeat", 1)):
        sink = JsonlSink(spec["events"]) if spec.get("events") else None
        system = System(scenario, trace=sink)
        if before is None:
            before = _peak_rss()
        t = time.perf_counter()
        result = system.run()
        walls.append(time.perf_counter() - t)
        if sink is not None:
            sink.close()
        assert result.bugcheck is None, result.bugcheck
        del system
    out = {"packets": result.summary["packets_completed"], "wall_s": min(walls), "before_rss_bytes": before,
           "peak_rss_bytes": _peak_rss(), "writer_rss_bytes": _peak_rss("children")}
    if spec.get("events"):
        out["log_bytes"] = os.path.getsize(spec["events"])
    return out


def measure(scenario: dict, *, events: bool = False, repeat: int = 1) -> dict:
    """Run ``scenario`` in a fresh process (:func:`child`) and return what it measured."""
    with tempfile.TemporaryDirectory() as d:
        spec = {"scenario": scenario, "repeat": repeat, "events": os.path.join(d, "events.jsonl") if events else None}
        out = subprocess.run([sys.executable, __file__, "--child", json.dumps(spec)], capture_output=True, text=True)
        if out.returncode != 0:
            raise RuntimeError(f"the measuring process failed:\n{out.stderr}")
        return json.loads(out.stdout.strip().splitlines()[-1])


def peak_rss(packets: int) -> dict:
    """The figure of one streamed-log run of about ``packets`` packets."""
    m = measure(stream_scenario(packets), events=True)
    total = m["peak_rss_bytes"] + m["writer_rss_bytes"]  # both peaks at once: an upper bound
    fig = {"benchmark": BENCHMARK, "figure": "peak_rss", "packets": m["packets"], "log": "streamed",
           "peak_rss_mib": round(total / 2**20, 1), "run_rss_mib": round(m["peak_rss_bytes"] / 2**20, 1),
           "writer_rss_mib": round(m["writer_rss_bytes"] / 2**20, 1),
           "before_rss_mib": round(m["before_rss_bytes"] / 2**20, 1),
           "log_mib": round(m["log_bytes"] / 2**20, 1), "wall_s": round(m["wall_s"], 2),
           "packets_per_s": round(m["packets"] / m["wall_s"]) if m["wall_s"] else None,
           "target": "peak under 300 MB at 10^7 packets", "next_step": NEXT_STEP["peak_rss"]}
    if m["packets"] >= TARGET_PACKETS * 0.99:
        fig["met"] = total < TARGET_BYTES
    else:
        fig["met"] = None
        fig["not_judged"] = f"n/a at {_size(m['packets'])} (target is at 10^7)"
    return fig


def flatness(rows: list[dict]) -> dict:
    """How much the peak grew from the smallest to the largest run."""
    small, big = rows[0], rows[-1]
    return {"benchmark": BENCHMARK, "figure": "peak_rss_growth", "packets": [small["packets"], big["packets"]],
            "peak_rss_mib": [small["peak_rss_mib"], big["peak_rss_mib"]],
            "growth_mib": round(big["peak_rss_mib"] - small["peak_rss_mib"], 1),
            "ratio": round(big["peak_rss_mib"] / small["peak_rss_mib"], 3)}


def lazy(covering: int = 60, repeat: int = 5) -> dict:
    """The lazy-work figure: counts 10, ``covering`` (just lasts the 10 ms) and 10^9."""
    runs = {str(n): measure(lazy_scenario(n), repeat=repeat) for n in (10, covering, 10**9)}
    cover, huge, ten = runs[str(covering)], runs[str(10**9)], runs["10"]
    ratio = huge["wall_s"] / cover["wall_s"]
    return {"benchmark": BENCHMARK, "figure": "lazy", "duration_ms": 10,
            "counts": {k: {"packets": v["packets"], "wall_ms": round(v["wall_s"] * 1e3, 2),
                           "peak_rss_mib": round(v["peak_rss_bytes"] / 2**20, 1)} for k, v in runs.items()},
            "ratio_billion_to_covering": round(ratio, 3), "ratio_billion_to_ten": round(huge["wall_s"] / ten["wall_s"], 3),
            "same_packets": huge["packets"] == cover["packets"],
            "target": f"10^9 within {LAZY_TOLERANCE}x of the count that lasts the run, the same packets",
            "met": ratio <= LAZY_TOLERANCE and huge["packets"] == cover["packets"], "next_step": NEXT_STEP["lazy"]}


def figures(quick: bool = False, full: bool = False) -> list[dict]:
    """Every figure of this benchmark (``quick``: small sizes; ``full``: up to 10^7 packets)."""
    sizes = (1_000, 10_000) if quick else (100_000, 1_000_000, 10_000_000) if full else (100_000, 1_000_000)
    rows = [peak_rss(n) for n in sizes]
    return [*rows, flatness(rows), lazy(repeat=3 if quick else 5)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="10^3 and 10^4 packets (under ~20 s)")
    ap.add_argument("--full", action="store_true", help="also 10^7 packets")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(json.loads(args.child))))
        return
    sizes = (1_000, 10_000) if args.quick else (100_000, 1_000_000, 10_000_000) if args.full else (100_000, 1_000_000)
    rows = []
    for n in sizes:
        rows.append(peak_rss(n))
        print(json.dumps(rows[-1]), flush=True)
    print(json.dumps(flatness(rows)), flush=True)
    print(json.dumps(lazy(repeat=3 if args.quick else 5)), flush=True)


if __name__ == "__main__":
    main()
