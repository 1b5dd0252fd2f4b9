#!/usr/bin/env python3
"""What the event log costs: the same run with the log off and with it streamed, as a ratio.

Two runs, each measured four ways in one process, interleaved so that a noisy shared machine
disturbs them alike (the best of ``repeat`` runs of each way is kept):

* ``off``: no sink (``trace=None``), the model's own cost;
* ``null``: a sink whose ``emit`` does nothing (it takes DdiCall structures as raw bytes, as the
  JSON Lines sink does): what the run itself spends on building the events;
* ``inproc``: the JSON Lines sink writing the file in the run's own process (``process=False``);
* ``file``: the JSON Lines sink as ``run --events`` uses it, its writer process encoding and
  writing the file.

The runs: ``benchmarks/throughput.py``'s scenario at 8 contexts (physical mode, verifier strict)
and ``examples/game_and_compute.toml`` stretched to 20 s of virtual time (``--quick``: 5 s, which
the figure's name says). Each figure gives, per way, the wall time (until the log is closed), the
run's own CPU time and the total CPU time (with the writer process's). ``ratio`` is file / off on
wall time, what a user waits for; the target is at most 1.5 for the throughput scenario and 1.3
for game_and_compute (issue 28's target, at 20 s). Beside it: ``cpu_ratio`` (the run's own process), ``total_cpu_ratio``
(every process: the work done does not shrink, it moves), ``inproc_wall_ratio`` and
``inproc_cpu_ratio`` (the sink without its writer), ``build_ratio`` (null / off, CPU), the log's
size and its bytes per retired packet. Wall time needs a free core for the writer: on a machine
whose cores are all busy, the wall ratio rises toward the total CPU ratio.

A third figure, ``ledger_cost``, is what the packet ledger every run keeps costs: the throughput
scenario (8 contexts, log off) with the ledger on, over the same run with it off
(``System(_ledger=False)``, a switch for this benchmark alone: the product always keeps it), the
best wall time of each of ``repeat`` interleaved runs. The target is at most 1.05.

    uv run python benchmarks/logcost.py            # 2*10^4 packets; game_and_compute for 20 s
    uv run python benchmarks/logcost.py --quick    # a smaller run of each (about 20 s)
    uv run python benchmarks/logcost.py --ledger   # the ledger's cost only
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

from wddmsim.scenario import load_scenario
from wddmsim.runner.system import System
from wddmsim.trace import JsonlSink

ROOT = Path(__file__).resolve().parents[1]
TARGET = 1.5
LEDGER_TARGET = 1.05
#: game_and_compute with the log streamed to a file: within 1.3x of the log off (wall), at
#: :data:`GAME_S` seconds of virtual time (issue 28); ``--quick`` runs :data:`GAME_QUICK_S`.
GAME_TARGET = 1.3
GAME_S, GAME_QUICK_S = 20, 5

#: What to do next about each figure of this file when its target is not met (``benchmarks/all.py``
#: prints it under its table).
NEXT_STEP = {
    "event log cost": "Encoding each event in the run process dominates; next: a compiled encoder.",
    "ledger_cost": "The ledger is one plain call per transition (five a packet, 7-9 scalar arguments each); what "
                   "is left is those calls and the per-packet record (a slotted object, a dict entry, a history "
                   "tuple per event). Compiling the ledger alone was measured slower (2.9 us of its own work per "
                   "packet against 2.2 us interpreted: mypyc parses each call's arguments and boxes the integers "
                   "again for the history). Next: hand the ledger the OS's packet object (one argument) and keep "
                   "the history as a reference to it plus the times, compiled together with VidSch.",
}


class NullSink:
    """Takes every event and keeps nothing: what building the events costs."""

    raw_args = True

    def emit(self, t: int, event: str, fields: dict) -> None:
        pass

    def close(self) -> None:
        pass


def _throughput_scenario(contexts: int, packets: int):
    spec = importlib.util.spec_from_file_location("throughput", ROOT / "benchmarks" / "throughput.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.scenario(contexts, packets, "physical")


def _children_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def run_once(scenario, until: int | None, way: str, path: str) -> tuple[float, float, float, int]:
    """One run of ``scenario`` with the log ``way`` (off, null, inproc, file): (wall seconds, CPU
    seconds of this process, CPU seconds of the writer process, packets retired). The wall time
    runs until the log is closed; the log is at ``path``."""
    sink = {"off": lambda: None, "null": NullSink, "inproc": lambda: JsonlSink(path, process=False),
            "file": lambda: JsonlSink(path)}[way]()
    system = System(scenario, trace=sink, verifier="strict")
    t, cpu, child = time.perf_counter(), time.process_time(), _children_cpu()
    result = system.run(until)
    if sink is not None:
        sink.close()
    wall, cpu, child = time.perf_counter() - t, time.process_time() - cpu, _children_cpu() - child
    if result.bugcheck is not None:
        raise RuntimeError(f"{scenario.name}: stopped with a bug check: {result.bugcheck.message}")
    return wall, cpu, child, result.summary["packets_completed"]


def measure(name: str, scenario, until: int | None, repeat: int = 3, target: float = TARGET) -> dict:
    """The figure of one run: the best wall, own-CPU and total-CPU time of each way, the log's
    size, and the ratios to ``off`` (see the module doc), against ``target`` (file / off, wall)."""
    ways = ("off", "null", "inproc", "file")
    wall = dict.fromkeys(ways, float("inf"))
    cpu = dict.fromkeys(ways, float("inf"))
    total = dict.fromkeys(ways, float("inf"))
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "events.jsonl")
        packets = 0
        run_once(scenario, until, "off", path)  # warm-up: caches, structure classes, readers
        for _ in range(repeat):
            for way in ways:
                w, c, child, packets = run_once(scenario, until, way, path)
                wall[way] = min(wall[way], w)
                cpu[way] = min(cpu[way], c)
                total[way] = min(total[way], c + child)
        size = os.path.getsize(path)
    ratio = wall["file"] / wall["off"]
    return {"benchmark": "logcost", "figure": f"event log cost: {name}", "packets": packets,
            **{f"{w}_s": round(wall[w], 3) for w in ways}, **{f"{w}_cpu_s": round(cpu[w], 3) for w in ways},
            "file_total_cpu_s": round(total["file"], 3),
            "ratio": round(ratio, 3), "cpu_ratio": round(cpu["file"] / cpu["off"], 3),
            "total_cpu_ratio": round(total["file"] / cpu["off"], 3),
            "inproc_wall_ratio": round(wall["inproc"] / wall["off"], 3),
            "inproc_cpu_ratio": round(cpu["inproc"] / cpu["off"], 3),
            "build_ratio": round(cpu["null"] / cpu["off"], 3),
            "log_bytes": size, "bytes_per_packet": round(size / max(packets, 1)),
            "cores": os.cpu_count(), "load_average": round(os.getloadavg()[0], 2),
            "target": target, "compare": "<=", "met": ratio <= target, "next_step": NEXT_STEP["event log cost"]}


def _ledger_run(scenario, ledger: bool) -> tuple[float, float, int]:
    """One run of ``scenario``, log off, with the packet ledger on or off: (wall s, CPU s, packets)."""
    system = System(scenario, trace=None, verifier="strict", _ledger=ledger)
    t, cpu = time.perf_counter(), time.process_time()
    result = system.run(None)
    wall, cpu = time.perf_counter() - t, time.process_time() - cpu
    if result.bugcheck is not None:
        raise RuntimeError(f"{scenario.name}: stopped with a bug check: {result.bugcheck.message}")
    return wall, cpu, result.summary["packets_completed"]


def ledger_cost(packets: int = 20_000, repeat: int = 7) -> dict:
    """``ledger_cost``: the throughput scenario (8 contexts, log off, verifier strict) with the
    ledger on over with it off, the best wall time of ``repeat`` interleaved runs of each."""
    scenario = _throughput_scenario(8, packets)
    wall = {True: float("inf"), False: float("inf")}
    cpu = dict(wall)
    done = {}
    _ledger_run(scenario, True)  # warm-up
    for _ in range(repeat):
        for on in (False, True):
            w, c, done[on] = _ledger_run(scenario, on)
            wall[on] = min(wall[on], w)
            cpu[on] = min(cpu[on], c)
    if done[True] != done[False]:
        raise RuntimeError(f"the ledger changed the run: {done[True]} packets with it, {done[False]} without")
    ratio = wall[True] / wall[False]
    return {"benchmark": "logcost", "figure": "ledger_cost", "packets": done[True],
            "ledger_on_s": round(wall[True], 3), "ledger_off_s": round(wall[False], 3),
            "ratio": round(ratio, 3), "cpu_ratio": round(cpu[True] / cpu[False], 3), "repeat": repeat,
            "cores": os.cpu_count(), "load_average": round(os.getloadavg()[0], 2),
            "target": LEDGER_TARGET, "compare": "<=", "met": ratio <= LEDGER_TARGET, "next_step": NEXT_STEP["ledger_cost"]}


def game_log(seconds: float = GAME_S, repeat: int = 3) -> dict:
    """The log's cost on ``examples/game_and_compute.toml`` run for ``seconds`` of virtual time,
    against :data:`GAME_TARGET`; the figure's name says so when that is not the target's 20 s."""
    game = load_scenario(str(ROOT / "examples" / "game_and_compute.toml"))
    name = f"game_and_compute, {seconds:g} s"
    if seconds != GAME_S:
        name += f" (quick; the target is at {GAME_S} s)"
    fig = measure(name, game, round(seconds * 1_000_000_000), repeat, GAME_TARGET)
    fig["virtual_s"] = seconds
    return fig


def figures(quick: bool = False) -> list[dict]:
    """The log's cost on the throughput scenario (8 contexts) and on game_and_compute (20 s;
    ``quick``: 5 s), and the packet ledger's cost on the throughput scenario."""
    packets, repeat = (2_000, 2) if quick else (20_000, 3)
    return [
        measure(f"throughput, 8 contexts, {packets} packets", _throughput_scenario(8, packets), None, repeat),
        game_log(GAME_QUICK_S if quick else GAME_S, repeat),
        ledger_cost(packets, 3 if quick else 7),
    ]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="a smaller run of each (under ~20 s)")
    ap.add_argument("--ledger", action="store_true", help="the ledger_cost figure only")
    args = ap.parse_args()
    import wddmsim

    print(f"wddmsim from {Path(wddmsim.__file__).parent}", file=sys.stderr)
    if args.ledger:
        print(json.dumps(ledger_cost(2_000 if args.quick else 20_000, 3 if args.quick else 7)), flush=True)
        return
    for fig in figures(quick=args.quick):
        print(json.dumps(fig), flush=True)


if __name__ == "__main__":
    main()
