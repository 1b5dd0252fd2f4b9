"""Reference scenario 1: the lifecycle of one submission.

One DMA buffer on one context. The packet goes through the software queue (QueuePacketStart),
onto the hardware (DmaPacketStart), its DMA_COMPLETED interrupt (DxgkCbNotifyInterrupt), and back
out of the software queue (QueuePacketStop), in that order. The GPU runs in stepped mode, the
mock GPU a test advances by hand: the packet never completes while the engine is held, however
long virtual time runs, and completes after exactly one step. Each submission's fence id is greater
than the previous one on its node.
"""

from __future__ import annotations

from reference.refsys import MS, build, ddi, script

LIFECYCLE = ("QueuePacketStart", "DmaPacketStart", "DmaPacketStop", "QueuePacketStop")


def milestones(trace):
    """(t, what, fence) for the lifecycle events and DMA_COMPLETED interrupts, in log order."""
    out = []
    for e in trace.events:
        if e["event"] in LIFECYCLE:
            out.append((e["t"], e["event"], e.get("fence")))
        elif e["event"] == "Callback" and e["name"] == "DxgkCbNotifyInterrupt":
            args = e["args"]
            assert args["InterruptType"] == "DXGK_INTERRUPT_DMA_COMPLETED"
            out.append((e["t"], "DMA_COMPLETED", args["DmaCompleted"]["SubmissionFenceId"]))
    return out


def test_one_buffer_in_lifecycle_order_held_until_one_step():
    system, trace = build([{"name": "app", "workload": script((0, MS, 1))}], engine_mode="stepped")
    ctx, engine = system.contexts[0], system.gpu.engines[0]
    # Held: however long virtual time runs, the packet is on the hardware and never completes.
    system.sim.run(until=500 * MS)
    assert (ctx.submitted, ctx.completed, engine.state) == (1, 0, "held")
    assert milestones(trace) == [(0, "QueuePacketStart", None), (0, "DmaPacketStart", 1)]
    # One step runs the submission, at the instant of the step (a stepped engine charges no time).
    engine.step()
    system.sim.run(until=501 * MS)
    assert ctx.completed == 1 and engine.state == "idle"
    assert milestones(trace) == [
        (0, "QueuePacketStart", None), (0, "DmaPacketStart", 1),
        (500 * MS, "DMA_COMPLETED", 1), (500 * MS, "DmaPacketStop", 1), (500 * MS, "QueuePacketStop", 1),
    ]


def test_each_fence_id_is_greater_than_the_previous_on_its_node():
    # Three submissions at 0, 10 and 20 ms; each held until its step.
    system, trace = build([{"name": "app", "workload": script((0, MS, 1), (10 * MS, MS, 1), (20 * MS, MS, 1))}],
                          engine_mode="stepped")
    engine, node = system.gpu.engines[0], system.adapter.vidsch.nodes[0]
    previous = [node.last_completed]
    for k, held_until in enumerate((5 * MS, 15 * MS, 25 * MS), start=1):
        system.sim.run(until=held_until)
        assert system.contexts[0].completed == k - 1
        engine.step()
        system.sim.run(until=held_until + 1)
        assert system.contexts[0].completed == k
        previous.append(node.last_completed)
    fences = [c["args"]["SubmissionFenceId"] for c in ddi(trace, "DxgkDdiSubmitCommand")]
    assert previous == [0, 1, 2, 3] and fences == [1, 2, 3]
    assert all(a < b for a, b in zip(previous, fences))
    assert [(t, f) for t, what, f in milestones(trace) if what == "DMA_COMPLETED"] == [
        (5 * MS, 1), (15 * MS, 2), (25 * MS, 3)]
