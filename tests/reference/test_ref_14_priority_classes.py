"""Reference scenario 14: priority classes.

One context per process priority class (idle, below_normal, normal, above_normal, high, realtime)
on one node under ``priority_quantum``, three 1 ms packets each. Pass: when the engine is
contended, the packets of a higher class are dispatched first; everything completes. 18 ms of work
stays below the starvation time (10 quanta = 20 ms), so no starvation boost reorders them.
"""

from __future__ import annotations

from wddmsim.dxgkrnl.objects import PRIORITY_CLASSES
from wddmsim.scenario import scenario_from_dict
from wddmsim.runner.system import System
from wddmsim.trace import ListSink

MS = 1_000_000
US = 1_000
ZERO = {"render": 0, "patch": 0, "submit": 0, "isr": 0, "dpc": 0, "present": 0}


def run(at):
    """``at(k, r)``: when class ``k``'s packet of round ``r`` is submitted."""
    sc = scenario_from_dict({
        "name": "priority-classes", "duration": "1s",
        "adapter": {"cpu_cost": ZERO, "hw_queue_depth": 2,
                    "nodes": [{"name": "3D", "engine": "3d", "command_cost": 0, "preemption": "dma_buffer"}]},
        "driver": {"ddi_version": "wddm2_0", "preemption_aware": True},
        "scheduler": {"policy": "priority_quantum", "quantum": "2ms"},
        "process": [{"name": cls, "priority": cls, "context": [{"name": "c", "node": "3D", "workload": {
            "kind": "script", "packets": [{"at": at(k, r), "work": "1ms"} for r in range(3)]}}]}
            for k, cls in enumerate(PRIORITY_CLASSES)],
    }, "<ref14>")
    trace = ListSink()
    system = System(sc, trace=trace)
    result = system.run()
    assert result.bugcheck is None
    assert all(c["completed"] == 3 for c in result.summary["contexts"])
    name = {ctx.handle: ctx.device.process.name for ctx in system.contexts}
    return trace, name


def test_all_at_once_the_classes_run_highest_first():
    """Every packet is queued at t = 0, before the node's worker first picks: the classes run
    highest first, each class's three packets back to back, 1 ms each, no gap."""
    trace, name = run(lambda k, r: 0)
    completed = [(e["t"], name[e["context"]]) for e in trace.of("DmaPacketStop") if e["status"] == "Completed"]
    expected = [c for c in reversed(PRIORITY_CLASSES) for _ in range(3)]
    assert completed == [(MS * (i + 1), c) for i, c in enumerate(expected)]


def test_round_robin_submission_under_contention_dispatches_the_highest_class_first():
    """The classes submit in turn, lowest first, one packet every 200 us (round r, class k at
    (6r + k) x 200 us): the engine is busy from the first packet on. Every time the OS hands a
    packet to the hardware queue it is one of the highest class with packets waiting, and a higher
    class arriving preempts a lower one at the end of its DMA buffer."""
    trace, name = run(lambda k, r: (6 * r + k) * 200 * US)
    rank = {c: i for i, c in enumerate(PRIORITY_CLASSES)}
    pending = {c: 0 for c in PRIORITY_CLASSES}
    picks = []
    for e in trace.of("QueuePacketStart", "DmaPacketQueued", "DmaPacketStop"):
        c = name[e["context"]]
        if e["event"] == "QueuePacketStart":
            pending[c] += 1
        elif e["event"] == "DmaPacketQueued":
            waiting = [w for w, n in pending.items() if n]
            assert rank[c] == max(rank[w] for w in waiting), (e["t"], c, waiting)
            pending[c] -= 1
            picks.append(c)
        elif e["status"] == "Preempted":
            pending[c] += 1
    # Once every packet is queued (3.4 ms) the rest completes in class order, one per ms, but for
    # the high packet that was already on the hardware queue when realtime's last packet came: the
    # OS asks for preemption at once (4 ms), and at DMA-buffer granularity that started buffer
    # ends first.
    done = [(e["t"], name[e["context"]]) for e in trace.of("DmaPacketStop") if e["status"] == "Completed"]
    late = [(t, c) for t, c in done if t > 3_400_000]
    order = ["realtime", "high", "realtime", "high"] + ["above_normal"] * 3 + ["normal"] * 3 + \
        ["below_normal"] * 3 + ["idle"] * 2
    assert late == [(MS * (4 + i), c) for i, c in enumerate(order)]
    assert [(e["t"], e["reason"]) for e in trace.of("PreemptRequest")][-1] == (4 * MS, "priority")
    assert done[-1] == (18 * MS, "idle")  # 18 ms of work, the engine never idle
