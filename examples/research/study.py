"""The policy study: every shipped scheduling policy on three workloads, ten seeds each.

    uv run python examples/research/study.py [--seeds 1-10] [--workers 2] [-o out/research]

The workloads (the TOML files beside this script):

- ``interactive_batch``: a 60 Hz game whose frames are due 8 ms after they start, beside a batch
  job of 10 ms buffers at the same priority;
- ``mixed_deadlines``: three periodic renderers (100, 60 and 30 Hz) due at the end of their
  periods, utilization 0.9;
- ``equal_clients``: three identical saturating compute clients with weights 1, 2 and 3.

For each workload it runs one sweep (``wddmsim.sweep.sweep``) over ``scheduler.policy`` and the
seeds and writes, under the output folder: the rows (``WORKLOAD.csv``), the policy comparison
figure (``WORKLOAD/policy_comparison.png``: latency distribution and deadline misses per policy),
one plot per headline figure against the policy (``WORKLOAD-FIGURE.png``), and ``findings.md``,
the table of what each policy did, which it also prints. docs/policies.md discusses the findings;
tests/test_research_study.py asserts them.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from wddmsim.policies.names import SHIPPED
from wddmsim.output.report import write_comparison
from wddmsim.sweep import sweep, write_csv
from wddmsim.output.sweep_plot import plot_metric

HERE = Path(__file__).parent
WORKLOADS = ("interactive_batch", "mixed_deadlines", "equal_clients")
#: Every shipped policy once (``priority_quantum`` is ``windows`` under its older name).
POLICIES = tuple(name for name in SHIPPED if name != "priority_quantum")
#: Per workload, the figures plotted against the policy.
PLOTS = {
    "interactive_batch": ("contexts.0.deadline_misses", "contexts.0.latency_p99_ns"),
    "mixed_deadlines": ("deadline_misses", "contexts.0.latency_p99_ns"),
    "equal_clients": ("contexts.0.share", "contexts.2.share"),
}


def _mean(values) -> float | None:
    values = [v for v in values if v is not None]
    return sum(values) / len(values) if values else None


def _misses(row: dict) -> int | None:
    """Deadline misses of every context of a run; None when no context has a deadline."""
    total, i, any_deadline = 0, 0, False
    while f"contexts.{i}.context" in row:
        misses = row.get(f"contexts.{i}.deadline_misses")
        if misses is not None:
            total += misses
            any_deadline = True
        i += 1
    return total if any_deadline else None


def findings(rows_by_workload: dict[str, list[dict]]) -> dict[str, dict[str, dict]]:
    """Per workload and policy, the means over the seeds of what the study compares:
    ``misses`` (deadline misses of all contexts in a run; None without deadlines), ``p99_ms`` (the
    first context's latency p99, ms), ``shares`` (each context's share of the GPU) and ``worst_share_error``
    (the largest |share - weight's share| among them). Failed runs are left out and counted in
    ``failed``."""
    out: dict[str, dict[str, dict]] = {}
    for workload, rows in rows_by_workload.items():
        table = out.setdefault(workload, {})
        for policy in POLICIES:
            mine = [r for r in rows if r["scheduler.policy"] == policy]
            ok = [r for r in mine if not r["error"]]
            n = 0
            while f"contexts.{n}.context" in (ok[0] if ok else {}):
                n += 1
            table[policy] = {
                "runs": len(ok), "failed": len(mine) - len(ok),
                "misses": _mean(_misses(r) for r in ok),
                "p99_ms": _mean(r["contexts.0.latency_p99_ns"] / 1e6 for r in ok
                                if r.get("contexts.0.latency_p99_ns") is not None),
                "shares": [_mean(r.get(f"contexts.{i}.share") for r in ok) for i in range(n)],
                "worst_share_error": _mean(max(abs(r.get(f"contexts.{i}.share_error") or 0.0) for i in range(n))
                                           for r in ok),
            }
    return out


def markdown(found: dict) -> str:
    """The findings as one markdown table per workload."""
    lines = []
    for workload, table in found.items():
        lines += [f"### {workload}", "", "| policy | deadline misses per run | context 0 p99 latency (ms) | "
                  "GPU shares | worst share error |", "|---|---|---|---|---|"]
        for policy, f in table.items():
            shares = " / ".join("-" if s is None else f"{s:.3f}" for s in f["shares"])
            misses = "-" if f["misses"] is None else f"{f['misses']:.1f}"
            p99 = "-" if f["p99_ms"] is None else f"{f['p99_ms']:.2f}"
            err = "-" if f["worst_share_error"] is None else f"{f['worst_share_error']:.3f}"
            failed = f" ({f['failed']} failed)" if f["failed"] else ""
            lines.append(f"| `{policy}`{failed} | {misses} | {p99} | {shares} | {err} |")
        lines.append("")
    return "\n".join(lines)


def study(seeds="1-10", workers: int | None = None, out: Path | None = None, progress=None) -> dict:
    """Run the three sweeps; with ``out``, write the rows, figures and findings there. Returns
    ``{"rows": {workload: rows}, "findings": findings(rows)}``."""
    rows_by_workload = {}
    for workload in WORKLOADS:
        rows = sweep(HERE / f"{workload}.toml", {"scheduler.policy": list(POLICIES)}, seeds, workers=workers,
                     progress=progress, latency=True)
        rows_by_workload[workload] = rows
        if out is not None:
            out.mkdir(parents=True, exist_ok=True)
            write_csv(rows, out / f"{workload}.csv")
            write_comparison(rows, out / workload)
            for metric in PLOTS[workload]:
                if metric == "deadline_misses":
                    rows = [{**r, "deadline_misses": _misses(r)} for r in rows]
                plot_metric(rows, metric, ["scheduler.policy"], out / f"{workload}-{metric}.png")
    found = findings(rows_by_workload)
    if out is not None:
        (out / "findings.md").write_text(markdown(found))
    return {"rows": rows_by_workload, "findings": found}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="1-10", help="seeds, as wddmsim sweep --seeds takes them (1-10)")
    parser.add_argument("--workers", type=int, default=None, help="worker processes (default: one per CPU)")
    parser.add_argument("-o", "--output", default="out/research", help="the output folder (out/research)")
    args = parser.parse_args(argv)
    t0 = time.perf_counter()
    result = study(args.seeds, args.workers, Path(args.output))
    print(markdown(result["findings"]))
    runs = sum(len(r) for r in result["rows"].values())
    print(f"{runs} runs in {time.perf_counter() - t0:.1f} s; rows, figures and findings.md in {args.output}",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
