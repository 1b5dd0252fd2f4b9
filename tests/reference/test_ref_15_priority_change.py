"""Reference scenario 15: scheduling priorities changed while the work runs.

Three contexts share the 3D node, 1000 packets of 20 us in all, submitted at once. From a scenario
file, D3DKMTSetContextSchedulingPriority rotates one context's priority and
D3DKMTSetProcessSchedulingPriorityClass rotates another process's class, each call 200 to 500 us
after the previous one. Pass: nothing is lost (every packet completes exactly once), the order
within each context is kept, and the scheduler follows the priorities in force at each instant.
Times are virtual ns.
"""

from __future__ import annotations

from collections import defaultdict

from wddmsim.dxgkrnl.objects import PRIORITY_CLASSES
from wddmsim.scenario import parse_scenario
from wddmsim.runner.system import System
from wddmsim.trace import ListSink

US = 1_000

SCENARIO = """
name = "priority_rotation"
seed = 7
duration = "40ms"
[adapter]
cpu_cost = { render = 0, patch = 0, submit = 0, isr = 0, dpc = 0, present = 0 }
[[adapter.nodes]]
name = "3D"
engine = "3d"
command_cost = 0
[[process]]
name = "app"
[[process.context]]
name = "a"
node = "3D"
workload = { kind = "compute_batch", batch = 250, count = 1, work = "20us", sync = false }
[[process.context]]
name = "b"
node = "3D"
workload = { kind = "compute_batch", batch = 250, count = 1, work = "20us", sync = false }
[[process]]
name = "other"
[[process.context]]
name = "c"
node = "3D"
workload = { kind = "compute_batch", batch = 500, count = 1, work = "20us", sync = false }

[[call]]
api = "SetContextSchedulingPriority"
process = "app"
context = "a"
priority = [7, -7, 0]
at = "100us"
every = "200us"
every_max = "500us"

[[call]]
api = "SetProcessSchedulingPriorityClass"
process = "other"
priority_class = ["high", "idle", "normal"]
at = "150us"
every = "200us"
every_max = "500us"
"""


def run():
    trace = ListSink()
    system = System(parse_scenario(SCENARIO, "<ref15>"), trace=trace)
    result = system.run()
    return system, result, trace.events


def test_rotating_priorities_lose_nothing_and_keep_each_contexts_order():
    system, result, events = run()
    assert result.bugcheck is None
    names = {e["context"]: e["name"] for e in events if e["event"] == "ContextCreate"}
    completed = defaultdict(list)
    for e in events:
        if e["event"] == "DmaPacketStop" and e["status"] == "Completed":
            completed[names[e["context"]]].append(e["seq"])
    # Nothing lost: every packet completed exactly once, in its context's order.
    assert {k: len(v) for k, v in completed.items()} == {"app/a": 250, "app/b": 250, "other/c": 500}
    for seqs in completed.values():
        assert seqs == list(range(1, len(seqs) + 1))
    retired = [e for e in events if e["event"] == "QueuePacketStop"]
    assert len(retired) == 1000
    assert sum(c["completed"] for c in result.summary["contexts"]) == 1000
    assert all(c["cancelled"] == c["aborted"] == 0 for c in result.summary["contexts"])
    # The rotation really ran while the work did: calls 200..500 us apart, every one succeeding.
    calls = defaultdict(list)
    for e in events:
        if e["event"] == "ScenarioCall":
            assert e["status"] == "STATUS_SUCCESS"
            calls[e["api"]].append(e["t"])
    last_done = max(e["t"] for e in events if e["event"] == "QueuePacketStop")
    for api, first in (("SetContextSchedulingPriority", 100 * US), ("SetProcessSchedulingPriorityClass", 150 * US)):
        times = calls[api]
        assert times[0] == first
        gaps = [b - a for a, b in zip(times, times[1:])]
        assert all(200 * US <= g <= 500 * US for g in gaps)
        assert sum(t < last_done for t in times) >= 30  # dozens of changes while packets were pending
    prios = [e["priority"] for e in events if e["event"] == "ContextPriority"]
    assert prios[:4] == [7, -7, 0, 7]
    classes = [e["priority_class"] for e in events if e["event"] == "ProcessPriorityClass"]
    assert classes[:4] == ["high", "idle", "normal", "high"]


def test_every_preemption_serves_the_priority_in_force_at_that_instant():
    """Replaying the log: each priority preemption is asked for a context whose effective priority
    (class, then context priority) is above the running one's at that very instant."""
    _, _, events = run()
    ctx_prio: dict[int, int] = {}
    ctx_proc: dict[int, int] = {}
    proc_class: dict[int, str] = {}
    preemptions = 0
    for e in events:
        kind = e["event"]
        if kind == "ProcessCreate":
            proc_class[e["process"]] = e["priority_class"]
        elif kind == "ContextCreate":
            ctx_prio[e["context"]] = e["priority"]
            ctx_proc[e["context"]] = e["process"]
        elif kind == "ContextPriority":
            assert ctx_prio[e["context"]] == e["previous"]
            ctx_prio[e["context"]] = e["priority"]
        elif kind == "ProcessPriorityClass":
            assert proc_class[e["process"]] == e["previous"]
            proc_class[e["process"]] = e["priority_class"]
        elif kind == "PreemptRequest" and e["reason"] == "priority":
            def eff(c):
                return PRIORITY_CLASSES.index(proc_class[ctx_proc[c]]) * 16 + ctx_prio[c]
            assert eff(e["for"]) > eff(e["running"])
            preemptions += 1
    assert preemptions >= 10


def test_a_raised_class_takes_the_node_at_once():
    """At 150 us process "other" is raised to class high while app/a runs: the scheduler asks to
    preempt a for other/c at that instant; a's running buffer ends at 160 us (DMA-buffer
    granularity), its queued one is taken back, and c's packets run from then on."""
    _, _, events = run()
    names = {e["context"]: e["name"] for e in events if e["event"] == "ContextCreate"}
    first = next(e for e in events if e["event"] == "PreemptRequest")
    assert first["t"] == 150 * US
    assert (names[first["running"]], names[first["for"]], first["reason"]) == ("app/a", "other/c", "priority")
    stops = [(e["t"], names[e["context"]], e["status"]) for e in events
             if e["event"] == "DmaPacketStop" and e["t"] > 150 * US][:4]
    assert stops == [(160 * US, "app/a", "Completed"), (160 * US, "app/a", "Preempted"),
                     (180 * US, "other/c", "Completed"), (200 * US, "other/c", "Completed")]
