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
    uv run python benchmarks/throughput.py --headline   # the headline figure only, as one JSON line
    uv run python benchmarks/throughput.py --headline --baseline-tree DIR
        # ... and the same figure measured live on an older checkout DIR (its src/ on PYTHONPATH,
        # in a subprocess), alternating with this tree, so the before/after ratio comes from one run

``--mode`` picks the submission path: ``physical`` (the default: DxgkDdiRender, DxgkDdiPatch,
DxgkDdiSubmitCommand), ``gpu_va`` (the software scheduler with GPU virtual addresses) or
``hardware`` (hardware scheduling; a buffer completes by its progress fence).

The headline figure (:func:`headline`, first in :func:`figures`): physical mode, 8 contexts,
verifier strict, packets per second and the ratio to the bare loop, against the target of four
times :data:`BASELINE_RATIO`. Ratios, not packet rates, are compared across runs: the bare loop
measured in the same process takes out most of the machine's speed and load.
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
from pathlib import Path

from wddmsim.scenario import scenario_from_dict
from wddmsim.system import System
from wddmsim.trace import JsonlSink

#: The headline ratio (model packets per second / bare heapq loop packets per second; physical mode,
#: 8 contexts, verifier strict, 2*10^4 packets, best of three) at revision 04d78ac, measured on
#: 2026-11-27 on the project's shared 2-core x86-64 Linux machine, CPython 3.11.7 (about 11,100
#: packets per second there). The target is four times it.
BASELINE_RATIO = 0.0060
BASELINE_REVISION = "04d78ac"
TARGET_FACTOR = 4

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


HEADLINE = "packet rate, physical mode, 8 contexts, verifier strict"


def headline(quick: bool = False, packets: int | None = None, repeat: int | None = None) -> dict:
    """The headline figure: physical mode, 8 contexts, verifier strict; its ratio to the bare loop
    against four times :data:`BASELINE_RATIO`. ``quick``: 5*10^3 packets, best of two."""
    n = packets or (5_000 if quick else 20_000)
    m = measure(8, n, repeat=repeat or (2 if quick else 3))
    target = round(TARGET_FACTOR * BASELINE_RATIO, 4)
    return {"benchmark": "throughput.py", "figure": HEADLINE, "packets": m["packets"],
            "packets_per_s": m["packets_per_s"], "bare_packets_per_s": m["bare_packets_per_s"],
            "ratio": m["ratio"], "baseline_ratio": BASELINE_RATIO, "baseline_revision": BASELINE_REVISION,
            "speedup_vs_baseline": round(m["ratio"] / BASELINE_RATIO, 2),
            "target": f"ratio >= {target} ({TARGET_FACTOR}x the ratio measured at {BASELINE_REVISION})",
            "target_ratio": target, "met": m["ratio"] >= target}


def _measure_in(tree: str | None, packets: int) -> dict:
    """One headline measurement (best of one model run) in a fresh process, with ``tree``'s
    ``src`` first on PYTHONPATH (None: this tree). This file's scenario and loops are used
    either way; only the model under them changes."""
    env = dict(os.environ)
    if tree is not None:
        src = Path(tree, "src")
        if not (src / "wddmsim").is_dir():
            raise SystemExit(f"--baseline-tree {tree}: no src/wddmsim there (give a checkout of the older revision)")
        env["PYTHONPATH"] = os.pathsep.join([str(src.resolve())] + [p for p in [env.get("PYTHONPATH")] if p])
    out = subprocess.run([sys.executable, __file__, "--one", str(packets)], env=env, capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"--baseline-tree {tree}: the measurement failed:\n{out.stderr.strip()[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def headline_against(tree: str, quick: bool = False, rounds: int | None = None) -> dict:
    """The headline figure measured live on this tree and on the older checkout ``tree``,
    alternating fresh processes (``rounds`` each, best of each side), so one run gives the
    before/after ratio on the same machine under the same load."""
    n = 5_000 if quick else 20_000
    rounds = rounds or (2 if quick else 3)
    before, after = [], []
    for _ in range(rounds):
        before.append(_measure_in(tree, n))
        after.append(_measure_in(None, n))
    b = max(before, key=lambda m: m["ratio"])
    a = max(after, key=lambda m: m["ratio"])
    target = round(TARGET_FACTOR * BASELINE_RATIO, 4)
    return {"benchmark": "throughput.py", "figure": HEADLINE + ", before/after in one run",
            "packets": a["packets"], "baseline_tree": str(tree), "baseline_model": b["model"],
            "before_packets_per_s": b["packets_per_s"], "before_ratio": b["ratio"],
            "after_packets_per_s": a["packets_per_s"], "after_ratio": a["ratio"],
            "speedup": round(a["ratio"] / b["ratio"], 2),
            "target": f"speedup >= {TARGET_FACTOR}", "met": a["ratio"] >= TARGET_FACTOR * b["ratio"],
            "target_ratio": target}


def figures(quick: bool = False) -> list[dict]:
    """Every figure of this benchmark, one dict each (the benchmarks' common convention)."""
    return [headline(quick)]


def peak_memory(packets: int) -> dict:
    """Peak RSS of a fresh process running ``packets`` packets with the event log streamed to disk."""
    with tempfile.TemporaryDirectory() as d:
        out = subprocess.run([sys.executable, __file__, "--memory", str(packets), "--events-dir", d],
                             capture_output=True, text=True, check=True)
        return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--full", action="store_true", help="include 10^6 packets and the memory check")
    ap.add_argument("--mode", choices=sorted(MODES), default="physical", help="the submission path")
    ap.add_argument("--headline", action="store_true", help="only the headline figure (physical, 8 contexts, strict)")
    ap.add_argument("--quick", action="store_true", help="every figure on small sizes (under ~20 s)")
    ap.add_argument("--baseline-tree", metavar="DIR",
                    help="with --headline: also measure the checkout DIR of an older revision, alternating with this one")
    ap.add_argument("--one", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--memory", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--events-dir", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.baseline_tree and not args.headline:
        ap.error("--baseline-tree goes with --headline")
    if args.one:
        import wddmsim

        m = measure(8, args.one, repeat=1)
        m["model"] = str(Path(wddmsim.__file__).resolve().parent)
        print(json.dumps(m))
        return
    if args.headline:
        print(json.dumps(headline(args.quick)), flush=True)
        if args.baseline_tree:
            print(json.dumps(headline_against(args.baseline_tree, args.quick)), flush=True)
        return
    if args.quick:
        for fig in figures(quick=True):
            print(json.dumps(fig), flush=True)
        return
    if args.memory:
        path = os.path.join(args.events_dir, "events.jsonl")
        n, wall = run_model(8, args.memory, path)
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        print(json.dumps({"packets": n, "peak_rss_bytes": rss, "log_bytes": os.path.getsize(path), "wall_s": round(wall, 1)}))
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
