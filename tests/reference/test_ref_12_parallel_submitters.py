"""Reference scenario 12: parallel submitters.

Sixteen submitters (one context each, in its own process) submit 8 packets each at the same
virtual instant. Every packet is submitted to the driver exactly once, the submission fence ids are
unique and increase on the node, and all 128 complete.
"""

from __future__ import annotations

from reference.refsys import ZERO_COST, build, ddi, script

THREADS, PACKETS, WORK = 16, 8, 10_000


def test_sixteen_submitters_of_eight_packets_at_one_instant():
    contexts = [{"name": f"thread{i}", "workload": script((0, WORK, PACKETS))} for i in range(THREADS)]
    system, trace = build(contexts, cost=dict(ZERO_COST, render=1_000, submit=2_000))
    r = system.run()
    queued = [(e["t"], e["context"], e["seq"]) for e in trace.of("QueuePacketStart")]
    # The submitters run side by side: each renders its k-th packet at the same instant, k us.
    for ctx in system.contexts:
        assert [t for t, c, _ in queued if c == ctx.handle] == [k * 1_000 for k in range(1, PACKETS + 1)]
    assert len({(c, s) for _, c, s in queued}) == THREADS * PACKETS
    # Each packet went to the driver exactly once, with a fence id of its own, increasing.
    calls = ddi(trace, "DxgkDdiSubmitCommand")
    fences = [c["args"]["SubmissionFenceId"] for c in calls]
    assert fences == list(range(1, THREADS * PACKETS + 1))
    sent = [(e["context"], e["seq"], e["fence"]) for e in trace.of("DmaPacketQueued")]
    assert sorted((c, s) for c, s, _ in sent) == sorted((c, s) for _, c, s in queued)
    assert [f for _, _, f in sent] == fences
    # All 128 complete, each context's in its own order, each fence exactly once.
    stops = trace.of("QueuePacketStop")
    assert sorted(e["fence"] for e in stops) == fences and {e["status"] for e in stops} == {"Completed"}
    for ctx in system.contexts:
        assert [e["seq"] for e in stops if e["context"] == ctx.handle] == list(range(1, PACKETS + 1))
        assert (ctx.submitted, ctx.completed) == (PACKETS, PACKETS)
    assert r.summary["packets_completed"] == THREADS * PACKETS and r.summary["violations"] == []


def test_same_instant_without_cpu_costs():
    contexts = [{"name": f"thread{i}", "workload": script((0, WORK, PACKETS))} for i in range(THREADS)]
    system, trace = build(contexts)
    system.run()
    assert {e["t"] for e in trace.of("QueuePacketStart")} == {0}
    assert [c["args"]["SubmissionFenceId"] for c in ddi(trace, "DxgkDdiSubmitCommand")] == list(range(1, 129))
    stops = trace.of("QueuePacketStop")
    assert [e["fence"] for e in stops] == list(range(1, 129))
    assert stops[-1]["t"] == THREADS * PACKETS * WORK  # one engine, back to back
