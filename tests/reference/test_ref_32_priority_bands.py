"""Reference scenario 32: priority bands under hardware scheduling
(DXGKARG_SETUPPRIORITYBANDS, DXGKARG_SETCONTEXTSCHEDULINGPROPERTIES).

Two FOCUS-band hogs (processes of the high class, 8 ms jobs always queued), a NORMAL-band client
(normal class, 8 ms jobs always queued) and, from 400 ms, a REALTIME context (realtime class, a
1 ms job every 10 ms). Bands as the OS sets them: every quantum 2 ms, a FOCUS process grace of
500 us (processes of one band preempt each other that long after the quantum), no band grace
(REALTIME preempts lower bands at once), targetNormalBandPercentage 10. The engine preempts at
10 us intervals. Pass:

- NORMAL keeps targetNormalBandPercentage = 10 % of the GPU beside FOCUS: one NORMAL quantum of
  2 ms in every 20 ms;
- REALTIME preempts at once: each of its jobs runs within the engine's 10 us preemption interval
  of its submission;
- inside FOCUS the two hogs alternate by quantum plus the process grace: every whole turn lasts
  2.5 ms, and the turns go F1, F2, F1, ...
"""

from __future__ import annotations

from wddmsim.scenario import scenario_from_dict
from wddmsim.runner.system import System
from wddmsim.trace import ListSink

MS = 1_000_000
US = 1_000
COSTS = {"render": 5000, "patch": 1000, "submit": 2000, "isr": 1000, "dpc": 2000, "present": 3000}


def batch(job: str, interval: str, sync: bool, count: int, start: str = "0ms") -> dict:
    return {"kind": "compute_batch", "batch": 1, "work": job, "interval": interval, "sync": sync, "count": count,
            "start": start}


def run():
    sc = scenario_from_dict({
        "name": "priority-bands", "duration": "1s",
        "adapter": {"scheduling": "hardware", "cpu_cost": COSTS,
                    "bands": {"process_grace": {"focus": "500us"}, "normal_share": 10},
                    "nodes": [{"name": "3D", "engine": "3d", "command_cost": 0, "preemption": "interval",
                               "preemption_interval": "10us"},
                              {"name": "Copy", "engine": "copy", "command_cost": 0}]},
        "driver": {"ddi_version": "wddm2_7"},
        "process": [
            {"name": "F1", "priority": "high", "context": [{"name": "c", "node": "3D",
                                                           "workload": batch("8ms", "0us", False, 150)}]},
            {"name": "F2", "priority": "high", "context": [{"name": "c", "node": "3D",
                                                           "workload": batch("8ms", "0us", False, 150)}]},
            {"name": "N", "priority": "normal", "context": [{"name": "c", "node": "3D",
                                                           "workload": batch("8ms", "0us", False, 150)}]},
            {"name": "R", "priority": "realtime", "context": [{"name": "c", "node": "3D",
                                                             "workload": batch("1ms", "9ms", True, 20, "400ms")}]},
        ],
    }, "<ref32>")
    trace = ListSink()
    system = System(sc, trace=trace)
    result = system.run()
    assert result.bugcheck is None
    return system, trace, result


def turns(system, trace):
    """(context, start, end) of every stretch a context held the 3D engine, from HwContextState."""
    hw_to_ctx = {e["hHwContext"]: e["context"] for e in trace.of("HwQueueCreate")}
    name = {c.handle: c.device.process.name for c in system.contexts}
    out = []
    cur, t0 = None, 0
    for e in trace.of("HwContextState"):
        if e["engine"] != 0:
            continue
        n = name.get(hw_to_ctx.get(e["context"]))
        if e["state"] == "running":
            if cur is not None and cur != n:
                out.append((cur, t0, e["t"]))
            if cur != n:
                cur, t0 = n, e["t"]
        elif n == cur:
            out.append((cur, t0, e["t"]))
            cur = None
    return out


def test_priority_bands():
    system, trace, result = run()
    seq = turns(system, trace)
    bands = {c["context"]: c["band"] for c in result.summary["wddm2"]["contexts"]}
    assert bands == {"F1/c": "focus", "F2/c": "focus", "N/c": "normal", "R/c": "realtime"}
    # NORMAL's share: before the realtime context comes, one 2 ms NORMAL turn every 20 ms.
    normal = [(a, b) for n, a, b in seq if n == "N" and b < 400 * MS]
    assert len(normal) == 19
    assert all(b - a == 2 * MS for a, b in normal)
    assert [b[0] - a[0] for a, b in zip(normal, normal[1:])] == [20 * MS] * 18
    busy = {c["context"]: c["gpu_busy_ns"] for c in result.summary["wddm2"]["contexts"]}
    share = busy["N/c"] / (busy["F1/c"] + busy["F2/c"] + busy["N/c"])
    assert 0.095 <= share <= 0.105
    # REALTIME preempts at once: each job runs within the 10 us preemption interval of its
    # submission (7 us: where the running hog's work reached its next 10 us stop), all 20 complete.
    rt = system.contexts[3].handle
    queued = [e["t"] for e in trace.of("QueuePacketStart") if e["context"] == rt]
    started = [a for n, a, _b in seq if n == "R"]
    assert [s - q for q, s in zip(queued, started)] == [0] + [7 * US] * 19
    assert all(b - a == 1 * MS for n, a, b in seq if n == "R")
    assert {c["context"]: c["completed"] for c in result.summary["contexts"]}["R/c"] == 20
    # Inside FOCUS: turns alternate between the two hogs, and every turn that neither NORMAL's
    # share nor REALTIME cut short is the quantum plus the process grace, 2.5 ms.
    focus = [(n, a, b) for n, a, b in seq if n in ("F1", "F2")]
    whole = []
    for i, (n, a, b) in enumerate(seq):
        if n in ("F1", "F2") and i + 1 < len(seq) and seq[i + 1][0] in ("F1", "F2"):
            whole.append(b - a)
    assert whole and set(whole) == {2500 * US}
    assert all(x[0] != y[0] for x, y in zip(focus, focus[1:]) if x[2] == y[1])
