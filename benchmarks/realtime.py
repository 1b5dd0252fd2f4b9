#!/usr/bin/env python3
"""The real-time factor: virtual seconds run per wall second, for the demo and every example.

Three kinds of figure, each a wall time of ``System.run`` alone (building the system is not in it);
a factor above 1 runs faster than the GPU's own time. A run that ends in a bug check
(``tdr_failure``) counts the virtual time up to the bug check.

- ``real_time_factor``, one per scenario (the built-in demo and every ``examples/*.toml``), each
  at its own duration (``--quick``: at most 20 ms of it), in this process, twice: with the event
  log off (``rtf``), and with the log streamed to a temporary file (``JsonlSink``, what ``wddmsim
  run --events`` does; ``rtf_log``), so the log's cost shows (``log_cost``: wall time with the log
  over wall time without it).
- ``examples_realtime``: issue 28's target, every example at least 10 virtual seconds per wall
  second at its own duration with the log off, except the floods named in :data:`FLOODS` (each
  with why: an example whose point is packets as fast as the path takes them). One figure for all:
  how many are below 10, the slowest, and the floods' own factors beside. The demo is measured but
  not judged (it is no example file). Without ``--quick`` it takes the ``real_time_factor`` runs;
  with it, each example runs once more, log off, at its own duration (a few seconds in all).
- ``game_and_compute``: ``examples/game_and_compute.toml`` at 20 s of virtual time (``--quick``:
  5 s, which the figure's name says), log off, the best of ``repeat`` runs after a warm-up:
  ``rtf``, and ``normalised_rtf``, the virtual seconds the model runs in the wall time that
  ``throughput.py``'s bare heapq loop takes for 10^6 packets (two streams), measured in the same
  process: as ``throughput.py``'s headline ratio, this takes out most of the machine's speed and
  load, so a figure measured once at an older revision can be kept as a constant
  (:data:`BASELINE_NORMALISED`, at :data:`BASELINE_REVISION`) and compared in later runs. Target:
  :data:`GAME_TARGET_FACTOR` times the baseline (``speedup_vs_baseline``). ``--game
  --baseline-tree DIR`` also measures an older checkout DIR live (its ``src/`` first on
  PYTHONPATH, in fresh processes alternating with this tree), which is how the constant was taken.

    uv run python benchmarks/realtime.py            # every scenario, best of 3 runs each, and the two figures above
    uv run python benchmarks/realtime.py --quick    # one run each, at most 20 ms of virtual time (under ~20 s)
    uv run python benchmarks/realtime.py deep_queue tdr   # only these scenarios' real_time_factor
    uv run python benchmarks/realtime.py --game [--quick]   # the game_and_compute figure only
    uv run python benchmarks/realtime.py --game --baseline-tree DIR
        # ... and the same figure measured on the older checkout DIR in the same run

One JSON line per figure. Figures with a target carry ``next_step`` (:data:`NEXT_STEP`) and
``show_profile`` (``benchmarks/all.py`` prints both, with the profile of the same run, under an
unmet one).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import throughput  # noqa: E402  (the bare loop and the packet-rate next step)

BENCHMARK = "realtime"
EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
GAME = EXAMPLES / "game_and_compute.toml"

#: How far a ``--quick`` run of ``real_time_factor`` goes (virtual ns).
QUICK_NS = 20_000_000

#: ``examples_realtime``: the least virtual seconds per wall second of every example but the floods.
TARGET_RTF = 10

#: The examples excepted from ``examples_realtime``, each with why: its point is a flood of
#: packets, as many as the submission path takes, so its real-time factor measures the path's cost
#: per packet (``throughput.py``'s headline), not whether a scenario of its kind runs in real time.
FLOODS = {
    "null_rendering": "every submission is NullRendering, so the GPU is infinitely fast and each context "
                      "submits again the moment its fence returns: the run is the submission path's own cost, "
                      "about 190,000 packets per virtual second",
    "priority_rotation": "1000 packets of 20 us submitted at once with every CPU cost zero, a backlog for every "
                         "priority change to reorder: 25,000 packets per virtual second, as fast as the GPU "
                         "retires them",
}

#: ``game_and_compute``: virtual seconds of the figure (issue 28's 20 s) and of its ``--quick`` run.
GAME_S, GAME_QUICK_S = 20, 5
#: ``normalised_rtf`` of game_and_compute at :data:`BASELINE_REVISION` ("today's main" when issue 28
#: set its target), per virtual duration in seconds: the best of 6 fresh processes each (20 s:
#: 1.70-2.02, rtf 5.3-7.7; 5 s: 1.98-2.22), measured on 2026-12-01 with :func:`game_against` on a
#: worktree of that revision (``git worktree add DIR 1a7451f``; its ``src/`` first on PYTHONPATH,
#: interpreted: that revision compiled nothing) from the project's environment, on the shared 2-core
#: x86-64 Linux machine (load average about 1), CPython 3.11.7.
BASELINE_NORMALISED = {20: 2.02, 5: 2.22}
BASELINE_REVISION = "1a7451f"
GAME_TARGET_FACTOR = 5
#: Packets of the bare loop the normalisation times (two streams); scaled to 10^6.
BARE_PACKETS = 200_000

#: What to do next about each figure of this file when its target is not met (``benchmarks/all.py``
#: prints it under its table, with the profile of the same run).
NEXT_STEP = {
    "examples_realtime": throughput.PACKET_RATE_NEXT_STEP,
    "game_and_compute": throughput.PACKET_RATE_NEXT_STEP,
}


def scenarios() -> list[tuple[str, object]]:
    """(name, scenario model) of the demo and of each example, the demo first."""
    from wddmsim.cli.demo import SCENARIO
    from wddmsim.scenario import load_scenario, parse_scenario

    out = [("demo", parse_scenario(SCENARIO, "<built-in demo>"))]
    out += [(p.stem, load_scenario(str(p))) for p in sorted(EXAMPLES.glob("*.toml"))]
    return out


def run_once(scenario, events: str | None = None, until: int | None = None) -> tuple[int, float]:
    """(virtual ns reached, wall seconds of the run) of one run of ``scenario`` (to ``until`` ns,
    default its duration)."""
    from wddmsim.runner.system import System
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


def examples_realtime(rtf: dict[str, float], quick: bool = False) -> dict:
    """The ``examples_realtime`` figure from each example's real-time factor at its own duration
    (log off; ``rtf``: name -> factor, every example, the floods included; the demo, if there, is
    left out)."""
    unknown = sorted(set(FLOODS) - set(rtf))
    judged = {name: f for name, f in rtf.items() if name not in FLOODS and name != "demo"}
    below = sorted((name for name, f in judged.items() if f < TARGET_RTF), key=judged.get)
    slowest = sorted(judged, key=judged.get)[:5]
    measured = f"{len(below)} of {len(judged)} below {TARGET_RTF}"
    if slowest:
        measured += f" (slowest {slowest[0]} {judged[slowest[0]]:.3g})"
    return {"benchmark": BENCHMARK, "figure": "examples_realtime", "log": "off", "duration": "each example's own",
            "repeat": 1 if quick else 3, "judged": len(judged), "below_target": len(below), "below": below,
            "slowest": [{"scenario": n, "rtf": judged[n]} for n in slowest],
            "floods": {name: {"rtf": rtf.get(name), "why": why} for name, why in FLOODS.items()},
            **({"floods_not_found": unknown} if unknown else {}),
            "rtf": dict(sorted(judged.items())), "measured": measured,
            "target": f"none below {TARGET_RTF} virtual s per wall s, floods excepted",
            "met": not below, "show_profile": True, "next_step": NEXT_STEP["examples_realtime"]}


def _bare_s_per_mpacket(repeat: int = 5) -> float:
    """Wall seconds of ``throughput.py``'s bare heapq loop per 10^6 packets (two streams, the best
    of ``repeat``)."""
    return min(throughput.run_bare(2, BARE_PACKETS) for _ in range(repeat)) * 1e6 / BARE_PACKETS


def game_measure(seconds: float, repeat: int = 3) -> dict:
    """game_and_compute for ``seconds`` of virtual time, log off, in this process: a warm-up run
    of 100 ms, then the best of ``repeat`` runs, and the bare loop; the model measured (its
    directory, and whether its compiled modules ran)."""
    import wddmsim
    from wddmsim.scenario import load_scenario

    scenario = load_scenario(str(GAME))
    until = round(seconds * 1e9)
    run_once(scenario, until=min(until, 100_000_000))  # warm-up: first-use imports and caches
    end, wall = min((run_once(scenario, until=until) for _ in range(repeat)), key=lambda r: r[1])
    bare = _bare_s_per_mpacket()
    rtf = end / 1e9 / wall
    try:
        from wddmsim import _native

        compiled = _native.status()
    except ImportError:  # an older revision: nothing compiled
        compiled = {}
    return {"virtual_s": end / 1e9, "wall_s": round(wall, 4), "rtf": round(rtf, 3),
            "bare_s_per_mpacket": round(bare, 4), "normalised_rtf": round(rtf * bare, 4), "repeat": repeat,
            "model": str(Path(wddmsim.__file__).resolve().parent), "compiled": compiled}


def _game_name(seconds: float) -> str:
    name = f"game_and_compute, {seconds:g} s virtual, log off"
    return name if seconds == GAME_S else name + f" (quick; the target is at {GAME_S} s)"


def game(quick: bool = False, seconds: float | None = None, repeat: int | None = None) -> dict:
    """The ``game_and_compute`` figure (see the module doc): 20 s of virtual time (``quick``: 5 s),
    against :data:`BASELINE_NORMALISED` at the same duration; not judged (``met`` None) at a
    duration with no baseline."""
    seconds = seconds or (GAME_QUICK_S if quick else GAME_S)
    m = game_measure(seconds, repeat or (2 if quick else 3))
    base = BASELINE_NORMALISED.get(seconds)
    fig = {"benchmark": BENCHMARK, "figure": _game_name(seconds), **m, "baseline_revision": BASELINE_REVISION,
           "baseline_normalised": base,
           "speedup_vs_baseline": round(m["normalised_rtf"] / base, 2) if base else None,
           "target": f">= {GAME_TARGET_FACTOR} (normalised_rtf over {BASELINE_REVISION}'s)",
           "show_profile": True, "next_step": NEXT_STEP["game_and_compute"]}
    if base:
        fig["met"] = m["normalised_rtf"] >= GAME_TARGET_FACTOR * base
    else:
        fig["met"] = None
        fig["not_judged"] = f"n/a at {seconds:g} s (no baseline measured at that duration)"
    return fig


def _game_in(tree: str | None, seconds: float, repeat: int = 1) -> dict:
    """:func:`game_measure` in a fresh process, with ``tree``'s ``src`` first on PYTHONPATH
    (None: this tree): ``throughput.in_tree``."""
    return throughput.in_tree(__file__, ["--game-one", str(seconds), "--repeat", str(repeat)], tree)


def game_against(tree: str, quick: bool = False, seconds: float | None = None, rounds: int | None = None) -> dict:
    """The ``game_and_compute`` figure measured live on this tree and on the older checkout
    ``tree``, alternating fresh processes (``rounds`` each, the best of each side kept)."""
    seconds = seconds or (GAME_QUICK_S if quick else GAME_S)
    rounds = rounds or (2 if quick else 3)
    b, a, before, after = throughput.alternate(lambda where: _game_in(where, seconds), tree, rounds, "normalised_rtf")
    speedup = a["normalised_rtf"] / b["normalised_rtf"]
    return {"benchmark": BENCHMARK, "figure": _game_name(seconds) + ", before/after in one run",
            "virtual_s": seconds, "rounds": rounds, "baseline_tree": str(tree), "baseline_model": b["model"],
            "before_rtf": b["rtf"], "before_normalised_rtf": b["normalised_rtf"],
            "before_normalised_all": [m["normalised_rtf"] for m in before],
            "after_rtf": a["rtf"], "after_normalised_rtf": a["normalised_rtf"],
            "after_normalised_all": [m["normalised_rtf"] for m in after], "after_compiled": a["compiled"],
            "speedup": round(speedup, 2), "target": f"speedup >= {GAME_TARGET_FACTOR}",
            "met": speedup >= GAME_TARGET_FACTOR, "show_profile": True, "next_step": NEXT_STEP["game_and_compute"]}


def figures(quick: bool = False, only: list[str] | None = None) -> list[dict]:
    """One ``real_time_factor`` figure per scenario (``only``: just these names, and then nothing
    else); without ``only``, then ``examples_realtime`` and ``game_and_compute``."""
    rows = [measure(name, sc, repeat=1 if quick else 3, until=QUICK_NS if quick else None)
            for name, sc in scenarios() if only is None or name in only]
    if only is not None:
        return rows
    own = own_rtf() if quick else {r["scenario"]: r["rtf"] for r in rows if r["scenario"] != "demo"}
    return [*rows, examples_realtime(own, quick), game(quick)]


def own_rtf(only: list[str] | None = None) -> dict[str, float]:
    """Each example's real-time factor at its own duration, log off, one run each (``only``: just
    these names)."""
    out = {}
    for name, sc in scenarios():
        if name != "demo" and (only is None or name in only):
            end, wall = run_once(sc)
            out[name] = round(end / 1e9 / wall, 3)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="one run per scenario, at most 20 ms of virtual time")
    ap.add_argument("--game", action="store_true", help="only the game_and_compute figure")
    ap.add_argument("--baseline-tree", metavar="DIR",
                    help="with --game: also measure the checkout DIR of an older revision, alternating with this one")
    ap.add_argument("--game-one", type=float, help=argparse.SUPPRESS)
    ap.add_argument("--repeat", type=int, default=1, help=argparse.SUPPRESS)
    ap.add_argument("names", nargs="*", help="only these scenarios (demo, or an example's name)")
    args = ap.parse_args()
    if args.baseline_tree and not args.game:
        ap.error("--baseline-tree goes with --game")
    if args.game_one:
        print(json.dumps(game_measure(args.game_one, args.repeat)))
        return
    if args.game:
        print(json.dumps(game(args.quick)), flush=True)
        if args.baseline_tree:
            print(json.dumps(game_against(args.baseline_tree, args.quick)), flush=True)
        return
    if args.names:
        for name, sc in scenarios():
            if name in args.names:
                print(json.dumps(measure(name, sc, repeat=1 if args.quick else 3,
                                         until=QUICK_NS if args.quick else None)), flush=True)
        return
    for fig in figures(args.quick):
        print(json.dumps(fig), flush=True)


if __name__ == "__main__":
    main()
