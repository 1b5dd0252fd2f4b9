"""Reference scenario 23: preemption at DMA-buffer boundaries only.

The same situation as reference scenario 22 (a 10 ms low-priority packet running, a 2 ms one
queued behind it, a high-priority packet arriving at 3.05 ms), on an engine that can only preempt
between DMA buffers (D3DKMDT_GRAPHICS_PREEMPTION_DMA_BUFFER_BOUNDARY). Pass: the preemption latency
is the remainder of the running buffer (6.95 ms), the running buffer completes, and only the
queued packet is dropped and submitted again.
"""

from __future__ import annotations

from reference.refsys import MS, build, ddi

ARRIVAL = 3_050_000


def test_latency_is_the_rest_of_the_running_buffer_and_only_the_queued_packet_is_dropped():
    nodes = [{"name": "3D", "engine": "3d", "command_cost": 0, "preemption": "dma_buffer"}]
    low = {"name": "low", "process_priority": "below_normal", "workload": {"kind": "script", "packets": [
        {"at": 0, "work": 10 * MS}, {"at": 0, "work": 2 * MS}]}}
    high = {"name": "high", "process_priority": "high", "workload": {"kind": "script", "packets": [
        {"at": ARRIVAL, "work": MS}]}}
    system, trace = build([low, high], nodes=nodes, duration="1s")
    r = system.run()
    assert r.bugcheck is None and r.summary["violations"] == []
    assert system.adapter.caps.GraphicsPreemptionGranularity == 100  # DMA_BUFFER_BOUNDARY
    (preempt,) = ddi(trace, "DxgkDdiPreemptCommand")
    assert (preempt["t"], preempt["args"]["PreemptionFenceId"]) == (ARRIVAL, 3)
    reports = [(e["t"], e["args"]["DmaPreempted"]) for e in trace.of("Callback") if "DmaPreempted" in e.get("args", {})]
    # The running buffer (fence 1) completes: LastCompletedFenceId 1, at 10 ms.
    assert [(t, d["PreemptionFenceId"], d["LastCompletedFenceId"]) for t, d in reports] == [(10 * MS, 3, 1)]
    assert r.summary["nodes"][0]["preempt_latency_max_ns"] == 10 * MS - ARRIVAL == 6_950_000
    gpu = [(e["t"], e["event"], e["fence"], e.get("status")) for e in trace.of("DmaPacketStart", "DmaPacketStop")]
    assert gpu == [
        (0, "DmaPacketStart", 1, None),
        (10 * MS, "DmaPacketStop", 1, "Completed"), (10 * MS, "DmaPacketStart", 2, None),
        (10 * MS, "DmaPacketStop", 2, "Preempted"), (10 * MS, "DmaPacketStart", 4, None),
        (11 * MS, "DmaPacketStop", 4, "Completed"), (11 * MS, "DmaPacketStart", 5, None),
        (13 * MS, "DmaPacketStop", 5, "Completed"),
    ]
    # Only the queued packet (fence 2) came back; it runs again as fence 5 with Flags.Resubmission.
    submits = [(c["t"], c["args"]["SubmissionFenceId"], c["args"]["Flags"]["Resubmission"])
               for c in ddi(trace, "DxgkDdiSubmitCommand")]
    assert submits == [(0, 1, 0), (0, 2, 0), (10 * MS, 4, 0), (10 * MS, 5, 1)]
    assert [(c["completed"], c["preempted"]) for c in r.summary["contexts"]] == [(2, 1), (1, 0)]
    assert system.gpu.engines[0].busy_ns == 13 * MS
