#!/usr/bin/env python3
"""Throughput of the submission path: simulated packets per wall second, against a bare heapq loop.

Many contexts saturate one node with small packets (1 us of GPU work each, every CPU cost zero,
tracing off, verifier on as by default). Each context submits batches of 16 and waits for the last
one, so every packet makes the whole trip: render, queue, pick, patch, build the
DXGKARG_SUBMITCOMMAND, submit, ring, execute, fence, interrupt, ISR, DPC, retire.

The baseline, measured in the same process, is a bare heapq loop that runs the same number of
packets with two events each (start, done) and as many concurrent streams as contexts.

    uv run python benchmarks/throughput.py              # contexts 1, 8, 64 at 2*10^4 packets; sizes 10^4, 10^5
    uv run python benchmarks/throughput.py --full       # also 10^6 packets and the memory check
    uv run python benchmarks/throughput.py --memory N   # peak RSS of one run of N packets with the log streamed
    uv run python benchmarks/throughput.py --mode gpu_va     # the same through DxgkDdiSubmitCommandVirtual
    uv run python benchmarks/throughput.py --mode hardware   # through hardware queues (DxgkDdiSubmitCommandToHwQueue)
    uv run python benchmarks/throughput.py --flatness [--quick]  # every mode at 1, 8, 64, 256 contexts: one JSON figure a line

``--mode`` picks the submission path: ``physical`` (the default: DxgkDdiRender, DxgkDdiPatch,
DxgkDdiSubmitCommand), ``gpu_va`` (the software scheduler with GPU virtual addresses) or
``hardware`` (hardware scheduling; a buffer completes by its progress fence).
"""

from __future__ import annotations

import argparse
import heapq
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

from wddmsim.scenario import scenario_from_dict
from wddmsim.system import System
from wddmsim.trace import JsonlSink

ZERO = {"render": 0, "patch": 0, "submit": 0, "isr": 0, "dpc": 0, "present": 0}


#: The adapter settings and the driver's DDI version of each submission path.
MODES = {
    "physical": ({}, None),
    "gpu_va": ({"gpu_va": True}, "wddm2_0"),
    "hardware": ({"scheduling": "hardware"}, "wddm2_7"),
}


def scenario(contexts: int, packets: int, mode: str = "physical"):
    per_ctx = max(1, packets // contexts)
    batches = max(1, per_ctx // 16)
    adapter, ddi_version = MODES[mode]
    return scenario_from_dict({
        "name": f"throughput-{contexts}x{packets}", "duration": "1000s",
        **({"driver": {"ddi_version": ddi_version}} if ddi_version else {}),
        "adapter": {"nodes": [{"name": "3D", "engine": "3d", "command_cost": 0}], "cpu_cost": ZERO, "hw_queue_depth": 2,
                    **adapter},
        "process": [{"name": f"p{i}", "context": [{"name": "c", "node": "3D", "workload": {
            "kind": "compute_batch", "batch": 16, "work": "1us", "count": batches}}]} for i in range(contexts)],
    }, "<benchmark>")


def run_model(contexts: int, packets: int, events_path: str | None = None, verifier: str = "strict",
              mode: str = "physical") -> tuple[int, float]:
    sink = JsonlSink(events_path) if events_path else None
    system = System(scenario(contexts, packets, mode), trace=sink, verifier=verifier)
    t = time.perf_counter()
    result = system.run()
    wall = time.perf_counter() - t
    if sink:
        sink.close()
    assert result.bugcheck is None
    return result.summary["packets_retired"], wall


def run_bare(contexts: int, packets: int) -> float:
    """Two heap events per packet, ``contexts`` streams in flight."""
    heap: list = []
    push, pop = heapq.heappush, heapq.heappop
    seq = 0
    left = packets
    t0 = time.perf_counter()
    for _ in range(min(contexts, packets)):
        seq += 1
        push(heap, (0, seq, 0))
        left -= 1
    while heap:
        t, _, kind = pop(heap)
        seq += 1
        if kind == 0:
            push(heap, (t + 1000, seq, 1))
        elif left > 0:
            left -= 1
            push(heap, (t, seq, 0))
    return time.perf_counter() - t0


def measure(contexts: int, packets: int, verifier: str = "strict", repeat: int = 3, mode: str = "physical") -> dict:
    """Best of ``repeat`` model runs against the best of five bare loops (a shared 2-core machine
    is noisy; the best run is the one least disturbed)."""
    runs = [run_model(contexts, packets, verifier=verifier, mode=mode) for _ in range(repeat)]
    n = runs[0][0]
    wall = min(w for _, w in runs)
    bare = min(run_bare(contexts, n) for _ in range(5))
    return {"mode": mode, "contexts": contexts, "packets": n, "verifier": verifier, "wall_s": round(wall, 3),
            "packets_per_s": round(n / wall), "bare_packets_per_s": round(n / bare), "ratio": round(bare / wall, 4)}


def peak_memory(packets: int) -> dict:
    """Peak RSS of a fresh process running ``packets`` packets with the event log streamed to disk."""
    with tempfile.TemporaryDirectory() as d:
        out = subprocess.run([sys.executable, __file__, "--memory", str(packets), "--events-dir", d],
                             capture_output=True, text=True, check=True)
        return json.loads(out.stdout.strip().splitlines()[-1])


def figures(quick: bool = False) -> list[dict]:
    """Every figure of this benchmark, one dict each (``benchmark``, ``figure``, the values, and
    ``target`` / ``met`` where a target applies)."""
    out: list[dict] = []
    # (the headline packet-rate figure goes here)
    out += flatness(quick)
    return out


#: The context counts of the flatness figures.
FLAT_CONTEXTS = (1, 8, 64, 256)
#: Targets: each mode within 20 % from 1 to 256 contexts; the modes within 2x of each other.
FLAT_TARGET = 1.2
PARITY_TARGET = 0.5


def _run_cpu(contexts: int, packets: int, mode: str) -> tuple[int, float]:
    """One run (log off, verifier strict): packets retired and CPU seconds of ``System.run``."""
    system = System(scenario(contexts, packets, mode))
    t = time.process_time()
    result = system.run()
    cpu = time.process_time() - t
    assert result.bugcheck is None
    return result.summary["packets_retired"], cpu


def flatness(quick: bool = False, packets: int | None = None, repeat: int | None = None,
             contexts: tuple[int, ...] = FLAT_CONTEXTS) -> list[dict]:
    """Packets per second of every submission mode at each context count, the same packets each
    time (a power of two, so every count divides it into whole batches); the runs are interleaved
    and each (mode, contexts) keeps its best of ``repeat`` (a shared machine is noisy).

    Figures: per mode ``flatness_<mode>``, the fastest rate over the slowest across the context
    counts (target <= 1.2); and ``mode_parity``, the slowest mode's rate over the fastest's at 8
    contexts (or the nearest count measured; target >= 0.5). Rates are packets per second of the
    process's CPU time (``time.process_time``): on a shared machine the wall clock also counts the
    time other processes hold the cores, which swamps a 20 % difference."""
    packets = packets or (4096 if quick else 32768)
    repeat = repeat or (1 if quick else 3)
    walls: dict[tuple[str, int], float] = {}
    retired: dict[tuple[str, int], int] = {}
    for _ in range(repeat):
        for mode in MODES:
            for c in contexts:
                n, wall = _run_cpu(c, packets, mode)
                key = (mode, c)
                retired[key] = n
                walls[key] = min(wall, walls.get(key, wall))
    rates = {key: retired[key] / walls[key] for key in walls}
    out = []
    for mode in MODES:
        per = {str(c): round(rates[(mode, c)]) for c in contexts}
        value = max(per.values()) / min(per.values())
        out.append({"benchmark": "throughput", "figure": f"flatness_{mode}", "mode": mode, "packets": packets,
                    "repeat": repeat, "clock": "process_time", "packets_per_s": per,
                    "retired": {str(c): retired[(mode, c)] for c in contexts},
                    "value": round(value, 3), "target": FLAT_TARGET, "compare": "<=", "met": value <= FLAT_TARGET})
    at = min(contexts, key=lambda c: abs(c - 8))
    by_mode = {mode: round(rates[(mode, at)]) for mode in MODES}
    value = min(by_mode.values()) / max(by_mode.values())
    out.append({"benchmark": "throughput", "figure": "mode_parity", "contexts": at, "packets": packets,
                "packets_per_s": by_mode, "slowest": min(by_mode, key=by_mode.get),
                "fastest": max(by_mode, key=by_mode.get), "value": round(value, 3), "target": PARITY_TARGET,
                "compare": ">=", "met": value >= PARITY_TARGET})
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--full", action="store_true", help="include 10^6 packets and the memory check")
    ap.add_argument("--mode", choices=sorted(MODES), default="physical", help="the submission path")
    ap.add_argument("--flatness", action="store_true", help="every mode at 1, 8, 64, 256 contexts (JSON figures)")
    ap.add_argument("--quick", action="store_true", help="a short run (with --flatness)")
    ap.add_argument("--memory", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--events-dir", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.memory:
        path = os.path.join(args.events_dir, "events.jsonl")
        n, wall = run_model(8, args.memory, path)
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        print(json.dumps({"packets": n, "peak_rss_bytes": rss, "log_bytes": os.path.getsize(path), "wall_s": round(wall, 1)}))
        return
    if args.flatness:
        for fig in flatness(args.quick):
            print(json.dumps(fig), flush=True)
        return
    rows = []
    mode = args.mode
    for c in (1, 8, 64):
        rows.append(measure(c, 20_000, mode=mode))
        print(json.dumps(rows[-1]), flush=True)
    rows.append(measure(8, 20_000, verifier="off", mode=mode))
    print(json.dumps(rows[-1]), flush=True)
    sizes = (10_000, 100_000, 1_000_000) if args.full else (10_000, 100_000)
    for n in sizes:
        rows.append(measure(8, n, repeat=1 if n >= 1_000_000 else 3, mode=mode))
        print(json.dumps(rows[-1]), flush=True)
    if args.full:
        for n in (10_000, 100_000, 1_000_000):
            print(json.dumps(peak_memory(n)), flush=True)


if __name__ == "__main__":
    main()
