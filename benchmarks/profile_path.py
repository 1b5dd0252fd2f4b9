#!/usr/bin/env python3
"""Where a packet's time goes on the headline run of ``throughput.py`` (physical mode, 8
contexts, verifier strict; ``--contexts`` and ``--mode`` pick another run of the same scenario):
microseconds and Python calls per packet, per component.

Method: one run under ``cProfile`` gives each function's own time and call count; each function
belongs to a component by its module; the components' shares of the profiled time are applied to
the CPU time per packet of an unprofiled run of the same scenario. cProfile adds a fixed cost per
call, so components made of many small calls come out somewhat heavier than they are; the calls
per packet are exact. cProfile sees a module that runs compiled (``wddmsim._native``) as C
built-ins: a method of one of its classes (``<method 'run' of 'Simulator' objects>``) is counted in
that module's component all the same, and what the compiled code does without calling back into
Python is that method's own time. The figure's ``compiled`` says how each compiled module ran.

    uv run python benchmarks/profile_path.py            # 2*10^4 packets, one JSON line per figure
    uv run python benchmarks/profile_path.py --quick    # 4*10^3 packets
    uv run python benchmarks/profile_path.py --functions 30   # also the 30 costliest functions
    uv run python benchmarks/profile_path.py --contexts 256 --mode hardware   # another run: the figure names it

``benchmarks/all.py`` prints this figure's components under every figure of the same run whose
target is not met and which asks for it (``show_profile``: the packet-rate, flatness and
real-time figures).
"""

from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import throughput  # noqa: E402

from wddmsim.runner.system import System  # noqa: E402

#: (component, module path fragments under wddmsim/), first match wins.
COMPONENTS = (
    ("ground truth", ("dxgkrnl/groundtruth.py",)),
    ("gateway + verifier", ("dxgkrnl/gateway.py", "dxgkrnl/verifier.py", "ddi/")),
    ("ISR/DPC dispatch + callbacks", ("dxgkrnl/callbacks.py",)),
    ("packet ledger", ("trace/ledger",)),
    ("OS scheduler (VidSch, policy, adapter, D3DKMT)", ("dxgkrnl/",)),
    ("driver (reference KMD)", ("kmd/",)),
    ("memory model", ("gpu/memory.py",)),
    ("GPU engine, commands, MMIO", ("gpu/",)),
    ("workload + UMD", ("workloads/", "umd/")),
    ("kernel (timer heap, processes)", ("sim/",)),
)
BUILTINS = "C built-ins (struct, dict, list, ctypes)"


#: A C method as cProfile names it: ``<method 'run' of 'Simulator' objects>``.
_C_METHOD = re.compile(r"of '(\w+)' objects>$")


def compiled_classes() -> dict[str, str]:
    """Class name -> component, for every class of the modules that run compiled in this process
    (cProfile sees their methods as C built-ins)."""
    try:
        from wddmsim import _native
    except ImportError:  # an older revision: nothing compiled
        return {}
    out = {}
    for name, how in _native.status().items():
        if how != "compiled":
            continue
        where = component("/wddmsim/" + name.split(".", 1)[1].replace(".", "/") + ".py")
        for obj in vars(sys.modules[name]).values():
            if isinstance(obj, type) and obj.__module__ == name:
                out[obj.__name__] = where
    return out


def component(filename: str, function: str = "", compiled: dict[str, str] | None = None) -> str:
    """The component a function's module belongs to; a C built-in (``filename`` ``~``) that is a
    method of a class of ``compiled`` (:func:`compiled_classes`) belongs to that class's module's."""
    if filename == "~":
        found = _C_METHOD.search(function) if compiled else None
        return compiled.get(found.group(1), BUILTINS) if found else BUILTINS
    for name, parts in COMPONENTS:
        for part in parts:
            if "/wddmsim/" + part in filename:
                return name
    return "other"


def _system(packets: int, contexts: int = 8, mode: str = "physical") -> System:
    return System(throughput.scenario(contexts, packets, mode), trace=None, verifier="strict")


def name(contexts: int = 8, mode: str = "physical") -> str:
    """The figure's name: the run it profiles (the defaults give ``throughput.HEADLINE``'s run)."""
    return f"packet rate, {mode} mode, {contexts} contexts, verifier strict: time per packet by component"


def _status() -> dict[str, str]:
    try:
        from wddmsim import _native
    except ImportError:
        return {}
    return _native.status()


def profile(packets: int = 20_000, functions: int = 0, contexts: int = 8, mode: str = "physical") -> dict:
    """The per-component figure of ``throughput.py``'s scenario at ``contexts`` contexts in
    submission ``mode`` (and the ``functions`` costliest functions, when asked)."""
    s = _system(packets, contexts, mode)
    t = time.process_time()
    retired = s.run().summary["packets_completed"]
    cpu_us = (time.process_time() - t) / retired * 1e6
    s = _system(packets, contexts, mode)
    prof = cProfile.Profile()
    prof.enable()
    s.run()
    prof.disable()
    stats = pstats.Stats(prof).stats
    classes = compiled_classes()
    own: dict[str, float] = {}
    calls: dict[str, float] = {}
    rows = []
    for (filename, line, fn), (_cc, nc, tt, _ct, _callers) in stats.items():
        c = component(filename, fn, classes)
        own[c] = own.get(c, 0.0) + tt
        calls[c] = calls.get(c, 0.0) + nc
        rows.append((tt, nc, f"{filename.split('/wddmsim/')[-1]}:{line}({fn})"))
    total = sum(own.values())
    fig = {"benchmark": "profile_path", "figure": name(contexts, mode), "mode": mode, "contexts": contexts,
           "packets": retired, "cpu_us_per_packet": round(cpu_us, 1),
           "calls_per_packet": round(sum(calls.values()) / retired, 1), "compiled": _status(),
           "components": {c: {"us_per_packet": round(own[c] / total * cpu_us, 1),
                              "calls_per_packet": round(calls[c] / retired, 1)}
                          for c in sorted(own, key=own.get, reverse=True)}}
    if functions:
        rows.sort(reverse=True)
        fig["functions"] = [{"function": name, "us_per_packet": round(tt / total * cpu_us, 2),
                             "calls_per_packet": round(nc / retired, 2)} for tt, nc, name in rows[:functions]]
    return fig


def figures(quick: bool = False, contexts: int = 8, mode: str = "physical") -> list[dict]:
    """Every figure of this benchmark, one dict each (the benchmarks' common convention)."""
    return [profile(4_000 if quick else 20_000, contexts=contexts, mode=mode)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="4*10^3 packets")
    ap.add_argument("--functions", type=int, default=0, metavar="N", help="also the N costliest functions")
    ap.add_argument("--contexts", type=int, default=8, metavar="N", help="contexts of the run profiled (default 8)")
    ap.add_argument("--mode", choices=sorted(throughput.MODES), default="physical",
                    help="the submission path of the run profiled (default physical)")
    args = ap.parse_args()
    if args.functions:
        print(json.dumps(profile(4_000 if args.quick else 20_000, args.functions, args.contexts, args.mode), indent=1))
        return
    for fig in figures(args.quick, args.contexts, args.mode):
        print(json.dumps(fig), flush=True)


if __name__ == "__main__":
    main()
