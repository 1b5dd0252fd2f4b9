#!/usr/bin/env python3
"""Start-up: the wall time of ``wddmsim --version`` and of ``wddmsim run`` of a 1 ms scenario.

Each command runs in fresh processes, one after the other, and the fastest of ``--repeat`` runs
counts (the machine's other work only ever adds time). Two ways of starting it:

- ``script_s``: the virtual environment's own ``wddmsim`` script (``.venv/bin/wddmsim``, beside the
  Python running this benchmark);
- ``uv_run_s``: ``uv run --frozen wddmsim ...``, as README shows it (uv's own start-up, about
  20-30 ms, included); absent when ``uv`` is not on the PATH.

Both in the environment as it is (``dont_write_bytecode`` says whether ``PYTHONDONTWRITEBYTECODE``
is set there: then Python compiles every module it imports from source on every start, which on a
2-core machine is about half a run's start-up), and again with a bytecode cache of this benchmark's
own, written by a first run and read by the next ones (``script_cached_s``, ``uv_run_cached_s``:
what a user gets from the second start on). ``imports_ms`` is where the first way's time goes:
``python -X importtime``'s self time of every module imported, summed per package (``wddmsim.X``
per subpackage), the heaviest first.

Targets (issue 28): ``uv run wddmsim --version`` under 0.2 s and ``uv run wddmsim run`` of a 1 ms
scenario under 0.5 s on a 2-core machine, judged on ``uv_run_s`` (``script_s`` without uv).

    uv run python benchmarks/startup.py            # best of 7
    uv run python benchmarks/startup.py --quick    # best of 3 (a few seconds)

Prints one JSON line per figure (see :func:`figures`).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

BENCHMARK = "startup"
ROOT = Path(__file__).resolve().parents[1]
#: A small scenario (three contexts on one node), run for 1 ms of virtual time.
SCENARIO = ROOT / "examples" / "priorities.toml"
#: name -> (the command's arguments, the target in seconds)
COMMANDS = {
    "version": (["--version"], 0.2),
    "run_1ms": (["run", str(SCENARIO), "--until", "1ms"], 0.5),
}


#: What to do next about this file's figures when a target is not met (``benchmarks/all.py``
#: prints it under its table).
NEXT_STEP = {
    "startup": "imports_ms names the packages the start imports, the heaviest first: import those lazily, only "
               "in the commands that need them; compare script_s with uv_run_s to see what uv itself adds.",
}


def script() -> str:
    """The ``wddmsim`` script of the environment this Python belongs to."""
    return str(Path(sys.executable).with_name("wddmsim"))


def best_of(cmd: list[str], repeat: int, env: dict) -> float:
    """The fastest wall time of ``repeat`` runs of ``cmd`` (after one that is not counted), in
    seconds; a run that fails raises."""
    times = []
    for i in range(repeat + 1):
        t = time.perf_counter()
        r = subprocess.run(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        elapsed = time.perf_counter() - t
        if r.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)}: exit status {r.returncode}: {r.stderr.strip()[-500:]}")
        if i:
            times.append(elapsed)
    return min(times)


def import_profile(args: list[str], env: dict, top: int = 10) -> dict[str, float]:
    """Milliseconds of import (self time, compilation included) per package when the command runs,
    the ``top`` heaviest, from ``python -X importtime``."""
    code = "import sys\nfrom wddmsim.entry import main\nsys.argv = ['wddmsim', *sys.argv[1:]]\nmain()"
    r = subprocess.run([sys.executable, "-X", "importtime", "-c", code, *args], cwd=ROOT, env=env,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    per: Counter = Counter()
    for line in r.stderr.splitlines():
        if not line.startswith("import time:") or "|" not in line:
            continue
        self_us, _, name = (part.strip() for part in line[len("import time:"):].split("|"))
        if not self_us.isdigit():
            continue  # the header line
        parts = name.split(".")
        package = ".".join(parts[:2]) if parts[0] == "wddmsim" and len(parts) > 1 else parts[0]
        per[package] += int(self_us) / 1000
    return {name: round(ms, 1) for name, ms in per.most_common(top)}


def measure(name: str, repeat: int = 7, uv: bool = True, cached: bool = True, profile: bool = True) -> dict:
    """One figure: command ``name`` of :data:`COMMANDS` started ``repeat`` times each way."""
    args, target = COMMANDS[name]
    env = dict(os.environ)
    uv_path = shutil.which("uv") if uv else None
    uv_cmd = [uv_path, "run", "--frozen", "--quiet", "wddmsim"] if uv_path else None
    fig: dict = {"benchmark": BENCHMARK, "figure": f"startup_{name}", "command": ["wddmsim", *args],
                 "repeat": repeat, "cpus": os.cpu_count(),
                 "load_average_1min_before": round(os.getloadavg()[0], 2) if hasattr(os, "getloadavg") else None,
                 "dont_write_bytecode": bool(env.get("PYTHONDONTWRITEBYTECODE"))}
    fig["script_s"] = round(best_of([script(), *args], repeat, env), 3)
    fig["uv_run_s"] = round(best_of([*uv_cmd, *args], repeat, env), 3) if uv_cmd else None
    if cached:
        with tempfile.TemporaryDirectory(prefix="wddmsim-pyc-") as cache:
            warm = {k: v for k, v in env.items() if k != "PYTHONDONTWRITEBYTECODE"}
            warm["PYTHONPYCACHEPREFIX"] = cache
            fig["script_cached_s"] = round(best_of([script(), *args], repeat, warm), 3)
            fig["uv_run_cached_s"] = round(best_of([*uv_cmd, *args], repeat, warm), 3) if uv_cmd else None
    if profile:
        fig["imports_ms"] = import_profile(args, env)
    judged = fig["uv_run_s"] if fig["uv_run_s"] is not None else fig["script_s"]
    fig["startup_s"] = judged
    fig["judged_on"] = "uv_run_s" if fig["uv_run_s"] is not None else "script_s"
    fig["target"] = target
    fig["compare"] = "<"
    fig["met"] = judged < target
    fig["next_step"] = NEXT_STEP["startup"]
    return fig


def figures(quick: bool = False) -> list[dict]:
    """Every figure of this benchmark: ``--version`` and a 1 ms run (``quick``: best of 3)."""
    return [measure(name, repeat=3 if quick else 7) for name in COMMANDS]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="best of 3 instead of 7")
    ap.add_argument("--repeat", type=int, default=None, help="best of N")
    args = ap.parse_args()
    repeat = args.repeat or (3 if args.quick else 7)
    for name in COMMANDS:
        print(json.dumps(measure(name, repeat=repeat)), flush=True)


if __name__ == "__main__":
    main()
