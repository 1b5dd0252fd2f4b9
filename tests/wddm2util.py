"""Builders shared by the WDDM 2.x system tests (GPU virtual addresses, hardware queues, fences)."""

from __future__ import annotations

from wddmsim.scenario import scenario_from_dict
from wddmsim.runner.system import System
from wddmsim.trace import ListSink

ZERO = {"render": 0, "patch": 0, "submit": 0, "isr": 0, "dpc": 0, "present": 0}
COSTS = {"render": 5000, "patch": 1000, "submit": 2000, "isr": 1000, "dpc": 2000, "present": 3000}
MS = 1_000_000

#: The reference driver's settings that test builders accept among an adapter's keys (and an
#: adapter node's): :func:`with_driver` moves them to the scenario's [driver] table.
DRIVER_KEYS = ("ddi_version", "multi_engine_aware", "ring_size", "dma_buffer_size", "preemption_aware",
               "per_engine_reset", "cancel_aware", "no64bit_atomics", "virtual_addressing", "hardware_scheduling")
ENGINE_KEYS = ("ring_size", "ring_buffer_fence_release", "max_in_flight_hw_queue_buffers")


def with_driver(data: dict) -> dict:
    """A scenario dict whose adapter (and nodes) name reference-driver settings, with those moved
    to the [driver] table (per-node ones to [driver.engines.<node>])."""
    adapter = dict(data.get("adapter") or {})
    driver = dict(data.get("driver") or {})
    for key in DRIVER_KEYS:
        if key in adapter:
            value = adapter.pop(key)
            if value is not None:
                driver[key] = value
    if "nodes" in adapter:
        nodes = []
        for node in adapter["nodes"]:
            node = dict(node)
            moved = {k: node.pop(k) for k in ENGINE_KEYS if k in node}
            if moved:
                driver.setdefault("engines", {})[node["name"]] = moved
            nodes.append(node)
        adapter["nodes"] = nodes
    out = {**data, "adapter": adapter}
    if driver:
        out["driver"] = driver
    return out


def scenario_of(data: dict, source: str = "<t>"):
    """``scenario_from_dict`` of a dict whose adapter may name reference-driver settings."""
    return scenario_from_dict(with_driver(data), source)


def adapter(mode: str, cost=ZERO, **extra) -> dict:
    """An adapter with a 3D node and a copy node (VidMm's paging node), command costs zero.
    ``mode``: "va" (software scheduler, GPU virtual addresses, WDDM 2.0) or "hw" (hardware
    scheduling, WDDM 2.7)."""
    nodes = extra.pop("nodes", None) or [
        {"name": "3D", "engine": "3d", "command_cost": 0, **extra.pop("node3d", {})},
        {"name": "Copy", "engine": "copy", "command_cost": 0},
    ]
    adapter = {"cpu_cost": cost, "nodes": nodes}
    if mode == "va":
        adapter.update(ddi_version="wddm2_0", gpu_va=True)
    else:
        adapter.update(ddi_version="wddm2_7", scheduling="hardware")
    adapter.update(extra)
    return adapter


def chain_processes(members: int, count: int, work: str = "1ms", wait: str = "os", fence: str = "f") -> list:
    return [{"name": f"p{i}", "context": [{"name": "c", "node": "3D", "workload": {
        "kind": "chain", "fence": fence, "members": members, "position": i, "count": count, "work": work,
        "wait": wait}}]} for i in range(members)]


def scenario(adapter: dict, processes: list, duration: str = "2s", **top):
    """A scenario from an adapter dict that may name reference-driver settings (see :func:`with_driver`)."""
    return scenario_from_dict(with_driver({"name": "t", "duration": duration, "adapter": adapter, "process": processes,
                                           **top}), "<t>")


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
