"""Builders shared by the WDDM 2.x system tests (GPU virtual addresses, hardware queues, fences)."""

from __future__ import annotations

from wddmsim.scenario import scenario_from_dict
from wddmsim.system import System
from wddmsim.trace import ListSink

ZERO = {"render": 0, "patch": 0, "submit": 0, "isr": 0, "dpc": 0, "present": 0}
COSTS = {"render": 5000, "patch": 1000, "submit": 2000, "isr": 1000, "dpc": 2000, "present": 3000}
MS = 1_000_000


def adapter(mode: str, cost=ZERO, **extra) -> dict:
    """An adapter with a 3D node and a copy node (VidMm's paging node), command costs zero.
    ``mode``: "va" (software scheduler, GPU virtual addresses, WDDM 2.0) or "hw" (hardware
    scheduling, WDDM 2.7)."""
    nodes = extra.pop("nodes", None) or [
        {"name": "3D", "engine": "3d", "command_cost": 0, **extra.pop("node3d", {})},
        {"name": "Copy", "engine": "copy", "command_cost": 0},
    ]
    ad = {"cpu_cost": cost, "nodes": nodes}
    if mode == "va":
        ad.update(ddi_version="wddm2_0", gpu_va=True)
    else:
        ad.update(ddi_version="wddm2_7", scheduling="hardware")
    ad.update(extra)
    return ad


def chain_processes(members: int, count: int, work: str = "1ms", wait: str = "os", fence: str = "f") -> list:
    return [{"name": f"p{i}", "context": [{"name": "c", "node": "3D", "workload": {
        "kind": "chain", "fence": fence, "members": members, "position": i, "count": count, "work": work,
        "wait": wait}}]} for i in range(members)]


def scenario(ad: dict, processes: list, duration: str = "2s", **top):
    return scenario_from_dict({"name": "t", "duration": duration, "adapter": ad, "process": processes, **top}, "<t>")


def run(sc, **kw):
    """Build and run: (system, result, events)."""
    trace = ListSink()
    system = System(sc, trace=trace, **kw)
    result = system.run()
    return system, result, trace.events


def ddi_calls(events, name: str) -> list[dict]:
    return [e for e in events if e["event"] == "DdiCall" and e["name"] == name]


def stops(events, system, status: str = "Completed") -> list[dict]:
    """QueuePacketStop of the scenario's contexts (not VidMm's), in log order."""
    mine = {c.handle for c in system.contexts}
    return [e for e in events if e["event"] == "QueuePacketStop" and e["context"] in mine and e["status"] == status]
