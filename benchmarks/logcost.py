#!/usr/bin/env python3
"""What the event log costs: the same run with the log off and with it streamed, as a ratio.

Two runs, each measured four ways in one process, interleaved so that a noisy shared machine
disturbs them alike (the best of ``repeat`` runs of each way is kept):

* ``off``: no sink (``trace=None``), the model's own cost;
* ``null``: a sink whose ``emit`` does nothing: the cost of building the events;
* ``encode``: the JSON Lines sink writing to ``os.devnull``: building plus encoding;
* ``file``: the JSON Lines sink writing to a file in a temporary folder: the real log.

The runs: ``benchmarks/throughput.py``'s scenario at 8 contexts (physical mode, verifier strict)
and ``examples/game_and_compute.toml`` stretched to several seconds of virtual time. Each figure
gives the wall and CPU times, ``ratio`` (file / off on CPU time; the target is at most 1.5; the
same on wall time is ``wall_ratio``), ``build_ratio`` (null / off) and ``encode_ratio``
(encode / off), the log's size and its bytes per retired packet.

    uv run python benchmarks/logcost.py            # 2*10^4 packets; game_and_compute for 5 s
    uv run python benchmarks/logcost.py --quick    # a smaller run of each (under ~20 s)
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from wddmsim.scenario import load_scenario
from wddmsim.system import System
from wddmsim.trace import JsonlSink

ROOT = Path(__file__).resolve().parents[1]
TARGET = 1.5


class NullSink:
    """Takes every event and keeps nothing: what building the events costs."""

    def emit(self, t: int, event: str, fields: dict) -> None:
        pass

    def close(self) -> None:
        pass


def _throughput_scenario(contexts: int, packets: int):
    spec = importlib.util.spec_from_file_location("throughput", ROOT / "benchmarks" / "throughput.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.scenario(contexts, packets, "physical")


def run_once(scenario, until: int | None, way: str, path: str) -> tuple[float, float, int]:
    """One run of ``scenario`` with the log ``way`` (off, null, encode, file): (wall seconds, CPU
    seconds of this process, packets retired). The log of ``file`` is at ``path``."""
    sink = {"off": lambda: None, "null": NullSink, "encode": lambda: JsonlSink(os.devnull),
            "file": lambda: JsonlSink(path)}[way]()
    system = System(scenario, trace=sink, verifier="strict")
    t, cpu = time.perf_counter(), time.process_time()
    result = system.run(until)
    if sink is not None:
        sink.close()
    wall, cpu = time.perf_counter() - t, time.process_time() - cpu
    if result.bugcheck is not None:
        raise RuntimeError(f"{scenario.name}: stopped with a bug check: {result.bugcheck.message}")
    return wall, cpu, result.summary["packets_retired"]


def measure(name: str, scenario, until: int | None, repeat: int = 3) -> dict:
    """The figure of one run: the best wall and CPU time of each way, the log's size, and the
    ratios to ``off`` taken on CPU time (this process's own seconds, user and system: what the
    log adds, less disturbed than wall time by other work on a shared machine)."""
    ways = ("off", "null", "encode", "file")
    wall = dict.fromkeys(ways, float("inf"))
    cpu = dict.fromkeys(ways, float("inf"))
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "events.jsonl")
        packets = 0
        run_once(scenario, until, "off", path)  # warm-up: caches, structure classes, readers
        for _ in range(repeat):
            for way in ways:
                w, c, packets = run_once(scenario, until, way, path)
                wall[way] = min(wall[way], w)
                cpu[way] = min(cpu[way], c)
        size = os.path.getsize(path)
    ratio = cpu["file"] / cpu["off"]
    return {"benchmark": "logcost", "figure": f"event log cost: {name}", "packets": packets,
            **{f"{w}_s": round(wall[w], 3) for w in ways}, **{f"{w}_cpu_s": round(cpu[w], 3) for w in ways},
            "build_ratio": round(cpu["null"] / cpu["off"], 3), "encode_ratio": round(cpu["encode"] / cpu["off"], 3),
            "wall_ratio": round(wall["file"] / wall["off"], 3), "ratio": round(ratio, 3),
            "log_bytes": size, "bytes_per_packet": round(size / max(packets, 1)),
            "target": TARGET, "met": ratio <= TARGET}


def figures(quick: bool = False) -> list[dict]:
    """The log's cost on the throughput scenario (8 contexts) and on game_and_compute."""
    packets, seconds, repeat = (2_000, 1, 2) if quick else (20_000, 5, 3)
    game = load_scenario(str(ROOT / "examples" / "game_and_compute.toml"))
    return [
        measure(f"throughput, 8 contexts, {packets} packets", _throughput_scenario(8, packets), None, repeat),
        measure(f"game_and_compute, {seconds} s", game, seconds * 1_000_000_000, repeat),
    ]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="a smaller run of each (under ~20 s)")
    args = ap.parse_args()
    import wddmsim

    print(f"wddmsim from {Path(wddmsim.__file__).parent}", file=sys.stderr)
    for fig in figures(quick=args.quick):
        print(json.dumps(fig), flush=True)


if __name__ == "__main__":
    main()
