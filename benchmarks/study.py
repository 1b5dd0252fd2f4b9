#!/usr/bin/env python3
"""The policy study's wall time: every shipped scheduling policy on the three workloads of
``examples/research`` with ten seeds (300 runs), as the README runs it, on a pool of the CPUs
here. Target: under 3 minutes on a 2-core machine (issue 26's "runs from the README in under 3
minutes"). The study writes its rows, figures and findings to a temporary folder, which is then
removed; the figure says how many runs failed (none should).

    uv run python benchmarks/study.py            # seeds 1-10, 300 runs
    uv run python benchmarks/study.py --quick    # seeds 1-2, 60 runs

Prints one JSON line per figure (see :func:`figures`).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import tempfile
import time
from pathlib import Path

STUDY = Path(__file__).resolve().parents[1] / "examples" / "research" / "study.py"
#: Seconds the whole study may take to count as met.
TARGET_S = 180.0
#: What to do next about this file's figure when its target is not met (``benchmarks/all.py``
#: prints it under its table).
NEXT_STEP = {
    "policy_study_wall_time": "The runs themselves are the time (seconds_per_run): the packet-rate work "
                              "(throughput.py's next step) speeds them; check failed_runs and the load first.",
}


def _study_module():
    spec = importlib.util.spec_from_file_location("research_study", STUDY)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def measure(seeds: str = "1-10", workers: int | None = None) -> dict:
    """One whole study (rows, figures and findings written) on ``workers`` processes, timed."""
    study = _study_module()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    with tempfile.TemporaryDirectory() as out:
        t = time.perf_counter()
        result = study.study(seeds, workers, Path(out))
        wall = time.perf_counter() - t
    rows = [r for rows in result["rows"].values() for r in rows]
    return {
        "benchmark": "study", "figure": "policy_study_wall_time", "seeds": seeds, "runs": len(rows),
        "policies": len(study.POLICIES), "workloads": len(study.WORKLOADS), "cpus": os.cpu_count(),
        "workers": workers, "wall_s": round(wall, 2), "seconds_per_run": round(wall / len(rows), 3),
        "failed_runs": sum(1 for r in rows if r["error"]),
        "load_average_1min_before": None if load is None else round(load, 2),
        "target": TARGET_S, "compare": "<=", "met": wall <= TARGET_S, "next_step": NEXT_STEP["policy_study_wall_time"],
    }


def figures(quick: bool = False) -> list[dict]:
    """Every figure of this benchmark; ``quick``: seeds 1-2 (60 runs) instead of 1-10."""
    return [measure("1-2" if quick else "1-10")]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="seeds 1-2 (60 runs)")
    args = parser.parse_args()
    for fig in figures(args.quick):
        print(json.dumps(fig))


if __name__ == "__main__":
    main()
