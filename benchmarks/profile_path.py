#!/usr/bin/env python3
"""Where a packet's time goes on the headline run of ``throughput.py`` (physical mode, 8
contexts, verifier strict): microseconds and Python calls per packet, per component.

Method: one run under ``cProfile`` gives each function's own time and call count; each function
belongs to a component by its module; the components' shares of the profiled time are applied to
the CPU time per packet of an unprofiled run of the same scenario. cProfile adds a fixed cost per
call, so components made of many small calls come out somewhat heavier than they are; the calls
per packet are exact.

    uv run python benchmarks/profile_path.py            # 2*10^4 packets, one JSON line per figure
    uv run python benchmarks/profile_path.py --quick    # 4*10^3 packets
    uv run python benchmarks/profile_path.py --functions 30   # also the 30 costliest functions
"""

from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import throughput  # noqa: E402

from wddmsim.system import System  # noqa: E402

#: (component, module path fragments under wddmsim/), first match wins.
COMPONENTS = (
    ("ground truth", ("dxgkrnl/groundtruth.py",)),
    ("gateway + verifier", ("dxgkrnl/gateway.py", "dxgkrnl/verifier.py", "ddi/")),
    ("ISR/DPC dispatch + callbacks", ("dxgkrnl/callbacks.py",)),
    ("OS scheduler (VidSch, policy, adapter, D3DKMT)", ("dxgkrnl/",)),
    ("driver (reference KMD)", ("kmd/",)),
    ("memory model", ("gpu/memory.py",)),
    ("GPU engine, commands, MMIO", ("gpu/",)),
    ("workload + UMD", ("workloads/", "umd/")),
    ("kernel (timer heap, processes)", ("sim/",)),
)
BUILTINS = "C built-ins (struct, dict, list, ctypes)"


def component(filename: str) -> str:
    """The component a function's module belongs to."""
    if filename == "~":
        return BUILTINS
    for name, parts in COMPONENTS:
        for part in parts:
            if "/wddmsim/" + part in filename:
                return name
    return "other"


def _system(packets: int) -> System:
    return System(throughput.scenario(8, packets), trace=None, verifier="strict")


def profile(packets: int = 20_000, functions: int = 0) -> dict:
    """The per-component figure (and the ``functions`` costliest functions, when asked)."""
    s = _system(packets)
    t = time.process_time()
    retired = s.run().summary["packets_completed"]
    cpu_us = (time.process_time() - t) / retired * 1e6
    s = _system(packets)
    prof = cProfile.Profile()
    prof.enable()
    s.run()
    prof.disable()
    stats = pstats.Stats(prof).stats
    own: dict[str, float] = {}
    calls: dict[str, float] = {}
    rows = []
    for (filename, line, fn), (_cc, nc, tt, _ct, _callers) in stats.items():
        c = component(filename)
        own[c] = own.get(c, 0.0) + tt
        calls[c] = calls.get(c, 0.0) + nc
        rows.append((tt, nc, f"{filename.split('/wddmsim/')[-1]}:{line}({fn})"))
    total = sum(own.values())
    fig = {"benchmark": "profile_path", "figure": throughput.HEADLINE + ": time per packet by component",
           "packets": retired, "cpu_us_per_packet": round(cpu_us, 1),
           "calls_per_packet": round(sum(calls.values()) / retired, 1),
           "components": {c: {"us_per_packet": round(own[c] / total * cpu_us, 1),
                              "calls_per_packet": round(calls[c] / retired, 1)}
                          for c in sorted(own, key=own.get, reverse=True)}}
    if functions:
        rows.sort(reverse=True)
        fig["functions"] = [{"function": name, "us_per_packet": round(tt / total * cpu_us, 2),
                             "calls_per_packet": round(nc / retired, 2)} for tt, nc, name in rows[:functions]]
    return fig


def figures(quick: bool = False) -> list[dict]:
    """Every figure of this benchmark, one dict each (the benchmarks' common convention)."""
    return [profile(4_000 if quick else 20_000)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="4*10^3 packets")
    ap.add_argument("--functions", type=int, default=0, metavar="N", help="also the N costliest functions")
    args = ap.parse_args()
    if args.functions:
        print(json.dumps(profile(4_000 if args.quick else 20_000, args.functions), indent=1))
        return
    for fig in figures(args.quick):
        print(json.dumps(fig), flush=True)


if __name__ == "__main__":
    main()
