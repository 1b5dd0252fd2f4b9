"""Builders the reference-scenario tests share: a system of one-context processes on a
zero-cost adapter (every CPU cost and command cost 0 unless a test sets one), and readers of the
event log."""

from __future__ import annotations

from wddmsim.runner.system import System
from wddmsim.trace import ListSink

from wddm2util import scenario_of

MS = 1_000_000
ZERO_COST = {"render": 0, "patch": 0, "submit": 0, "isr": 0, "dpc": 0, "present": 0}
ONE_NODE = [{"name": "3D", "engine": "3d", "command_cost": 0}]


def script(*packets) -> dict:
    """A script workload: each packet ``(at, work, repeat)``."""
    return {"kind": "script", "packets": [{"at": at, "work": work, "repeat": rep} for at, work, rep in packets]}


def build(contexts, *, nodes=ONE_NODE, cost=ZERO_COST, depth=2, policy="priority_quantum", duration="10s",
          engine_mode="timed", driver=None, preemption=None, adapter=None, scheduler=None, **top):
    """(system, trace) for processes that each hold one context. ``contexts``: dicts with ``name``,
    ``workload`` and optional ``node``, ``priority``, ``process_priority``, ``destroy_at``."""
    processes = []
    for c in contexts:
        ctx = {"name": "c", "node": c.get("node", "3D"), "priority": c.get("priority", 0), "workload": c["workload"]}
        if "destroy_at" in c:
            ctx["destroy_at"] = c["destroy_at"]
        processes.append({"name": c["name"], "priority": c.get("process_priority", "normal"), "context": [ctx]})
    ad_spec = {"nodes": nodes, "cpu_cost": cost, "hw_queue_depth": depth, "preemption_aware": preemption, **(adapter or {})}
    sc = scenario_of({"name": "reference", "duration": duration, "adapter": ad_spec,
                      "scheduler": {"policy": policy, **(scheduler or {})}, "process": processes, **top}, "<test>")
    trace = ListSink()
    return System(sc, trace=trace, engine_mode=engine_mode, driver=driver), trace


def names(system) -> dict[int, str]:
    """Context handle -> its process's name."""
    return {c.handle: c.process.name for c in system.contexts}


def ddi(trace, name: str) -> list[dict]:
    return [e for e in trace.of("DdiCall") if e["name"] == name]
