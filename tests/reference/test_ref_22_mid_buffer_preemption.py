"""Reference scenario 22: preemption in the middle of a DMA buffer, and its resumption.

A long low-priority packet (10 ms of work, with a 2 ms one queued behind it) runs when a
high-priority packet arrives. The engine preempts mid-buffer: at ``interval`` granularity a WORK
command stops at the next multiple of ``preemption_interval`` of its own work (reported to the OS
as triangle-boundary granularity). Pass:

- DxgkDdiPreemptCommand carries a new PreemptionFenceId (above every fence submitted before);
- the DMA_PREEMPTED interrupt reports that id and the LastCompletedFenceId;
- the packets still queued on the hardware come back to VidSch (DmaPacketStop Preempted) and are
  submitted again with Flags.Resubmission;
- the preempted packet resumes from its saved progress: the engine's busy time is exactly the work
  submitted (the model charges no context save or restore);
- the preemption latency is what the configured granularity costs. At ``instruction`` granularity
  (reported as SHADER_BOUNDARY) the engine stops where it is and spends ``preemption_save`` saving
  the buffer's state: the latency is exactly that parameter (here 20 to 100 us), and the engine's
  busy time is the work plus that save. At ``interval`` granularity the latency is the time to the
  next interval boundary of the running work, less than the interval.
"""

from __future__ import annotations

import pytest

from reference.refsys import MS, build, ddi

INTERVAL = 50_000


def scenario(arrival: int, interval: int = INTERVAL, granularity: str = "interval", save: int = 0):
    nodes = [{"name": "3D", "engine": "3d", "command_cost": 0, "preemption": granularity,
              "preemption_interval": interval, "preemption_save": save}]
    low = {"name": "low", "process_priority": "below_normal", "workload": {"kind": "script", "packets": [
        {"at": 0, "work": 10 * MS}, {"at": 0, "work": 2 * MS}]}}
    high = {"name": "high", "process_priority": "high", "workload": {"kind": "script", "packets": [
        {"at": arrival, "work": MS}]}}
    return build([low, high], nodes=nodes, duration="1s")


def test_mid_buffer_preemption_and_resume():
    arrival = 3_030_000
    system, trace = scenario(arrival)
    r = system.run()
    assert r.bugcheck is None and r.summary["violations"] == []
    submits = [(c["t"], c["args"]["SubmissionFenceId"], c["args"]["Flags"]["Resubmission"])
               for c in ddi(trace, "DxgkDdiSubmitCommand")]
    (preempt,) = ddi(trace, "DxgkDdiPreemptCommand")
    # A new PreemptionFenceId, above the two fences submitted so far.
    assert preempt["t"] == arrival and preempt["args"]["PreemptionFenceId"] == 3
    assert [f for t, f, _ in submits if t <= arrival] == [1, 2]
    # Stopped at the next 50 us of the running work (3.05 ms): 20 us of latency.
    stop = 3_050_000
    reports = [(e["t"], e["args"]["DmaPreempted"]) for e in trace.of("Callback") if "DmaPreempted" in e.get("args", {})]
    assert [(t, d["PreemptionFenceId"], d["LastCompletedFenceId"]) for t, d in reports] == [(stop, 3, 0)]
    assert r.summary["nodes"][0]["preempt_latency_max_ns"] == stop - arrival == 20_000
    # Both low packets came back to VidSch; the high one (fence 4) runs, then the low ones again
    # with new fence ids and Flags.Resubmission.
    gpu = [(e["t"], e["event"], e["fence"], e.get("status")) for e in trace.of("DmaPacketStart", "DmaPacketStop")]
    assert gpu == [
        (0, "DmaPacketStart", 1, None),
        (stop, "DmaPacketStop", 1, "Preempted"), (stop, "DmaPacketStop", 2, "Preempted"),
        (stop, "DmaPacketStart", 4, None), (stop + MS, "DmaPacketStop", 4, "Completed"),
        (stop + MS, "DmaPacketStart", 5, None), (stop + MS + 6_950_000, "DmaPacketStop", 5, "Completed"),
        (11 * MS, "DmaPacketStart", 6, None), (13 * MS, "DmaPacketStop", 6, "Completed"),
    ]
    assert submits == [(0, 1, 0), (0, 2, 0), (stop, 4, 0), (stop, 5, 1), (stop + MS, 6, 1)]
    # Resumed from its saved progress: 3.05 ms were done, the 6.95 ms left ran from 4.05 ms; the
    # engine was busy exactly for the work submitted.
    assert system.gpu.engines[0].busy_ns == 10 * MS + 2 * MS + MS
    assert [(c["completed"], c["preempted"]) for c in r.summary["contexts"]] == [(2, 2), (1, 0)]


@pytest.mark.parametrize("interval", [20_000, 50_000, 100_000])
@pytest.mark.parametrize("offset", [1, 7_000, 19_999])
def test_the_latency_is_the_granularity_cost(interval, offset):
    """The request lands ``offset`` ns after an interval boundary of the running work: the engine
    stops at the next boundary, ``interval - offset`` later."""
    arrival = 3 * MS + offset
    system, trace = scenario(arrival, interval)
    r = system.run()
    (report,) = [e["t"] for e in trace.of("Callback") if "DmaPreempted" in e.get("args", {})]
    assert report - arrival == interval - offset
    assert r.summary["nodes"][0]["preempt_latency_max_ns"] == interval - offset
    assert system.gpu.engines[0].busy_ns == 13 * MS


@pytest.mark.parametrize("save", [20_000, 50_000, 100_000])
def test_instruction_level_latency_equals_the_configured_save_cost(save):
    arrival = 3_030_000
    system, trace = scenario(arrival, granularity="instruction", save=save)
    r = system.run()
    assert r.bugcheck is None and r.summary["violations"] == []
    assert system.adapter.caps.GraphicsPreemptionGranularity == 500  # SHADER_BOUNDARY
    (preempt,) = ddi(trace, "DxgkDdiPreemptCommand")
    assert (preempt["t"], preempt["args"]["PreemptionFenceId"]) == (arrival, 3)
    # Stopped where it was (3.03 ms of its work done), saved for ``save`` ns, then reported.
    stop = arrival + save
    reports = [(e["t"], e["args"]["DmaPreempted"]) for e in trace.of("Callback") if "DmaPreempted" in e.get("args", {})]
    assert [(t, d["PreemptionFenceId"], d["LastCompletedFenceId"]) for t, d in reports] == [(stop, 3, 0)]
    assert r.summary["nodes"][0]["preempt_latency_max_ns"] == save
    left = 10 * MS - arrival  # the work the first low packet still owed
    gpu = [(e["t"], e["event"], e["fence"], e.get("status")) for e in trace.of("DmaPacketStart", "DmaPacketStop")]
    assert gpu == [
        (0, "DmaPacketStart", 1, None),
        (stop, "DmaPacketStop", 1, "Preempted"), (stop, "DmaPacketStop", 2, "Preempted"),
        (stop, "DmaPacketStart", 4, None), (stop + MS, "DmaPacketStop", 4, "Completed"),
        (stop + MS, "DmaPacketStart", 5, None), (stop + MS + left, "DmaPacketStop", 5, "Completed"),
        (stop + MS + left, "DmaPacketStart", 6, None), (stop + MS + left + 2 * MS, "DmaPacketStop", 6, "Completed"),
    ]
    # Work conserved, plus the save: the engine was busy for the 13 ms submitted and ``save``.
    assert system.gpu.engines[0].busy_ns == 13 * MS + save
    assert [(c["completed"], c["preempted"]) for c in r.summary["contexts"]] == [(2, 2), (1, 0)]


def test_interval_granularity_adds_the_save_cost_to_the_boundary():
    system, trace = scenario(3_030_000, granularity="interval", save=30_000)
    r = system.run()
    # The next 50 us boundary (3.05 ms) plus 30 us of context save.
    assert r.summary["nodes"][0]["preempt_latency_max_ns"] == 20_000 + 30_000
    assert system.gpu.engines[0].busy_ns == 13 * MS + 30_000
