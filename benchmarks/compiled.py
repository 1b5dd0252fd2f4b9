#!/usr/bin/env python3
"""Compiled against interpreted: the same runs with the compiled modules and with ``WDDMSIM_PURE=1``,
their event logs compared byte for byte, and the packet rate of each.

A few representative examples (:data:`SCENARIOS`: the software scheduler with three priorities,
two nodes with a frame loop, hardware scheduling, GPU virtual addresses with a page fault) each run
for 50 ms of virtual time through ``python -m wddmsim run SCENARIO --until 50ms --events LOG
--json``, each run in a fresh process: once as installed (``WDDMSIM_PURE`` removed from the
environment, so the compiled modules run where ``uv sync`` built them) and once with
``WDDMSIM_PURE=1`` (every module interpreted), alternating, ``repeat`` times each. Every log and
every ``--json`` summary must be the same bytes as the first compiled run's (``met``). The packet
rate of each side is the best real-time factor ``wddmsim run`` printed on standard error (the same
packets run both ways, so the ratio of the factors is the ratio of the packet rates): ``ratio`` is
compiled over interpreted, per scenario and as their geometric mean (``rate_ratio``).

Which way the modules went is probed in each environment (``wddmsim._native.status()`` in a fresh
process): ``compiled_status`` and ``interpreted_status``. Where nothing was compiled (no compiler
at ``uv sync``, or a source edited since), both sides run interpreted and ``note`` says so.

    uv run python benchmarks/compiled.py            # best of 3 per side
    uv run python benchmarks/compiled.py --quick    # best of 2 (about 15 s)

Prints one JSON line per figure (see :func:`figures`).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

BENCHMARK = "compiled"
EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
#: The examples run both ways: software scheduling with priorities on one node; a frame loop and a
#: compute job on two nodes; hardware scheduling; GPU virtual addresses (page tables, a page fault).
SCENARIOS = ("priorities", "game_and_compute", "hardware_scheduling", "gpu_va")
UNTIL = "50ms"
FACTOR = re.compile(r"real-time factor ([0-9.e+-]+)")

#: What to do next about this file's figure when its target is not met (``benchmarks/all.py``
#: prints it under its table).
NEXT_STEP = {
    "compiled_vs_interpreted": "A log that differs is a bug of the compiled build: first_difference names the "
                               "first line that differs; find the compiled module's attribute typed narrower "
                               "than what runs (or a check the interpreted code skips) and fix it before "
                               "anything else.",
}


def _env(pure: bool) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "WDDMSIM_PURE"}
    if pure:
        env["WDDMSIM_PURE"] = "1"
    return env


def status(pure: bool) -> dict[str, str]:
    """``wddmsim._native.status()`` in a fresh process of that environment, its modules imported."""
    code = "import json, wddmsim.runner.system, wddmsim._native as n; print(json.dumps(n.status()))"
    out = subprocess.run([sys.executable, "-c", code], env=_env(pure), capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"the status probe failed:\n{out.stderr.strip()[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def run(scenario: Path, until: str, log: Path, pure: bool) -> tuple[float, bytes]:
    """One ``wddmsim run`` in a fresh process, the log to ``log``: (real-time factor, summary bytes)."""
    cmd = [sys.executable, "-m", "wddmsim", "run", str(scenario), "--until", until, "--events", str(log), "--json"]
    out = subprocess.run(cmd, env=_env(pure), capture_output=True, cwd=log.parent)
    if out.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: exit status {out.returncode}:\n{out.stderr.decode()[-2000:]}")
    found = FACTOR.findall(out.stderr.decode())
    if not found:
        raise RuntimeError(f"{' '.join(cmd)}: no real-time factor on stderr:\n{out.stderr.decode()[-500:]}")
    return float(found[-1]), out.stdout


def _first_difference(a: bytes, b: bytes) -> dict:
    la, lb = a.split(b"\n"), b.split(b"\n")
    for i, (x, y) in enumerate(zip(la, lb)):
        if x != y:
            return {"line": i + 1, "compiled": x[:200].decode(errors="replace"),
                    "interpreted": y[:200].decode(errors="replace")}
    return {"line": min(len(la), len(lb)) + 1, "lines": [len(la), len(lb)]}


def compare(name: str, until: str = UNTIL, repeat: int = 2) -> dict:
    """One scenario both ways, ``repeat`` times each, alternating: whether every log and summary
    equals the first compiled run's, and the best real-time factor of each side."""
    scenario = EXAMPLES / f"{name}.toml"
    rtf = {False: [], True: []}
    with tempfile.TemporaryDirectory(prefix="wddmsim-compiled-") as d:
        ref_log = ref_summary = None
        identical, difference, packets, size = True, None, None, 0
        for i in range(repeat):
            for pure in (False, True):
                log = Path(d, f"{'pure' if pure else 'compiled'}-{i}.jsonl")
                factor, summary = run(scenario, until, log, pure)
                rtf[pure].append(factor)
                data = log.read_bytes()
                if ref_log is None:
                    ref_log, ref_summary = data, summary
                    packets, size = json.loads(summary)["packets_completed"], len(data)
                elif data != ref_log or summary != ref_summary:
                    if identical:
                        difference = {"run": f"{'pure' if pure else 'compiled'} {i + 1}",
                                      **(_first_difference(ref_log, data) if data != ref_log else {"summary": True})}
                    identical = False
                log.unlink()
    best_c, best_i = max(rtf[False]), max(rtf[True])
    out = {"packets": packets, "log_bytes": size, "identical": identical, "rtf_compiled": best_c,
           "rtf_interpreted": best_i, "ratio": round(best_c / best_i, 3)}
    if difference:
        out["first_difference"] = difference
    return out


def measure(names=SCENARIOS, until: str = UNTIL, repeat: int = 2) -> dict:
    """The ``compiled_vs_interpreted`` figure over ``names`` (see the module doc)."""
    compiled, interpreted = status(False), status(True)
    rows = {name: compare(name, until, repeat) for name in names}
    same = sum(r["identical"] for r in rows.values())
    ratio = math.exp(sum(math.log(r["ratio"]) for r in rows.values()) / len(rows))
    fig = {"benchmark": BENCHMARK, "figure": "compiled_vs_interpreted", "until": until, "repeat": repeat,
           "compiled_status": compiled, "interpreted_status": interpreted, "scenarios": rows,
           "identical": same, "compared": len(rows), "rate_ratio": round(ratio, 3),
           "measured": f"logs identical {same}/{len(rows)}; packet rate compiled/interpreted {ratio:.2f}x",
           "target": "event logs and summaries byte-identical, compiled and WDDMSIM_PURE=1",
           "met": same == len(rows), "next_step": NEXT_STEP["compiled_vs_interpreted"]}
    if not all(v == "compiled" for v in compiled.values()):
        fig["note"] = ("the compiled modules were not in use on the compiled side ("
                       + "; ".join(sorted({v for v in compiled.values() if v != "compiled"}))
                       + "): both sides ran interpreted")
    return fig


def figures(quick: bool = False) -> list[dict]:
    """Every figure of this benchmark: ``compiled_vs_interpreted`` (``quick``: best of 2 per side
    instead of 3)."""
    return [measure(repeat=2 if quick else 3)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="best of 2 per side instead of 3")
    ap.add_argument("--until", default=UNTIL, help=f"virtual time of each run (default {UNTIL})")
    ap.add_argument("names", nargs="*", help=f"the examples to run (default: {', '.join(SCENARIOS)})")
    args = ap.parse_args()
    print(json.dumps(measure(args.names or SCENARIOS, args.until, 2 if args.quick else 3)), flush=True)


if __name__ == "__main__":
    main()
