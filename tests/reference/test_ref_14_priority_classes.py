"""Reference scenario 14: priority classes.

One context per process priority class (idle, below_normal, normal, above_normal, high, realtime),
each submitting three 1 ms packets at the same instant, onto one node under ``priority_quantum``. Pass: while
the node is contended, the packets of a higher class are dispatched first, so the classes run
highest first, each to its end; everything completes. 18 ms of work stays below the starvation
time (10 quanta = 20 ms), so no boost reorders them.
"""

from __future__ import annotations

from wddmsim.dxgkrnl.objects import PRIORITY_CLASSES
from wddmsim.scenario import scenario_from_dict
from wddmsim.system import System
from wddmsim.trace import ListSink

MS = 1_000_000
ZERO = {"render": 0, "patch": 0, "submit": 0, "isr": 0, "dpc": 0, "present": 0}


def test_higher_classes_are_dispatched_first():
    sc = scenario_from_dict({
        "name": "priority-classes", "duration": "1s",
        "adapter": {"cpu_cost": ZERO, "hw_queue_depth": 2,
                    "nodes": [{"name": "3D", "engine": "3d", "command_cost": 0, "preemption": "dma_buffer"}]},
        "driver": {"ddi_version": "wddm2_0", "preemption_aware": True},
        "scheduler": {"policy": "priority_quantum", "quantum": "2ms"},
        "process": [{"name": cls, "priority": cls, "context": [{"name": "c", "node": "3D", "workload": {
            "kind": "script", "packets": [{"at": 0, "work": "1ms"}] * 3}}]} for cls in PRIORITY_CLASSES],
    }, "<ref14>")
    trace = ListSink()
    system = System(sc, trace=trace)
    result = system.run()
    assert result.bugcheck is None
    name = {ctx.handle: ctx.device.process.name for ctx in system.contexts}
    # Every context is ready before the node's worker first picks (it runs after the instant's
    # submissions): the node is contended from the start, and the classes run highest first,
    # each class's three packets back to back, 1 ms each, with no gap.
    completed = [(e["t"], name[e["context"]]) for e in trace.of("DmaPacketStop") if e["status"] == "Completed"]
    expected = [c for c in reversed(PRIORITY_CLASSES) for _ in range(3)]
    assert completed == [(MS * (i + 1), c) for i, c in enumerate(expected)]
    assert [name[e["context"]] for e in trace.of("DmaPacketStart")] == expected
    assert all(c["completed"] == 3 for c in result.summary["contexts"])
