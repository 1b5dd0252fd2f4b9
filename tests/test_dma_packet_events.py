"""Every packet that ran has its ``DmaPacketStart`` and ``DmaPacketStop``, in that order, also when
one interrupt completes several packets (completion is cumulative: DMA_COMPLETED with fence F
completes every packet up to F) and when an engine reset completes or aborts packets the OS never
saw reach the bottom of the hardware queue. So PresentMon's MsGPUTime is never NA for a frame
that ran."""

from __future__ import annotations

from wddmsim.kmd import ReferenceDriver
from wddmsim.scenario import scenario_from_dict
from wddmsim.runner.system import System
from wddmsim.trace import ListSink
from wddmsim.trace.presentmon import present_rows

from wddm2util import scenario_of

ZERO = {"render": 0, "patch": 0, "submit": 0, "isr": 0, "dpc": 0, "present": 0}
MS = 1_000_000


def pairs(trace):
    """(node, fence) -> [event names in order] of the DMA packet events."""
    seen: dict = {}
    for e in trace.of("DmaPacketStart", "DmaPacketStop"):
        seen.setdefault((e["node"], e["fence"]), []).append((e["event"], e["t"], e.get("status")))
    return seen


def immediate_flips():
    """A game at 50 fps: a 1 ms packet, then an immediate flip (FlipInterval 0), whose buffer takes
    no GPU time: the render's fence and the flip's land together and one interrupt reports both."""
    sc = scenario_from_dict({
        "name": "cumulative", "duration": "100ms",
        "adapter": {"cpu_cost": ZERO, "nodes": [{"name": "3D", "engine": "3d", "command_cost": 0}]},
        "process": [{"name": "game", "context": [{"name": "c", "node": "3D", "workload": {
            "kind": "frame_loop", "fps": 50, "work": "1ms", "present_mode": "flip", "sync_interval": 0,
            "count": 3}}]}],
    }, "<test>")
    trace = ListSink()
    r = System(sc, trace=trace).run()
    assert r.bugcheck is None and r.summary["violations"] == []
    return trace


def test_one_interrupt_completing_two_packets_gives_each_its_start_and_stop():
    trace = immediate_flips()
    reports = [e["args"]["DmaCompleted"]["SubmissionFenceId"] for e in trace.of("Callback")
               if e["args"].get("DmaCompleted")]
    assert reports == [2, 4, 6]  # one report per frame, covering the render and the flip
    p = pairs(trace)
    assert sorted(p) == [(0, f) for f in range(1, 7)]
    for k in range(3):
        t = k * 20 * MS
        assert p[(0, 2 * k + 1)] == [("DmaPacketStart", t, None), ("DmaPacketStop", t + MS, "Completed")]
        # The flip reached the bottom and ran unseen behind the render: it starts and stops at the report.
        assert p[(0, 2 * k + 2)] == [("DmaPacketStart", t + MS, None), ("DmaPacketStop", t + MS, "Completed")]
    # The log keeps each packet's start right before its stop, in fence order.
    dma = [(e["event"], e["fence"]) for e in trace.of("DmaPacketStart", "DmaPacketStop") if e["t"] == MS]
    assert dma == [("DmaPacketStop", 1), ("DmaPacketStart", 2), ("DmaPacketStop", 2)]


def test_ms_gpu_time_of_a_frame_whose_present_completed_with_its_render():
    rows = present_rows(immediate_flips().events)
    assert [row["MsGPUTime"] for row in rows] == [1.0, 1.0, 1.0]
    assert [row["MsGPUBusy"] for row in rows] == [1.0, 1.0, 1.0]
    assert [row["DisplayedTime"] for row in rows] == [1.0, 21.0, 41.0]


class LateReports(ReferenceDriver):
    """Reports its first two fences late: the ISRs of fences 1 and 2 say nothing, so a later report
    (or the reset) covers them; completion is cumulative, so that is within the contract."""

    def _report_completed(self, node):
        if self._completed(node) <= 2:
            return False
        return super()._report_completed(node)


def test_an_engine_reset_gives_unseen_packets_their_start_before_their_stop():
    sc = scenario_of({
        "name": "tdr", "duration": "10s",
        "adapter": {"cpu_cost": ZERO, "ddi_version": "wddm2_0", "hw_queue_depth": 3,
                    "nodes": [{"name": "3D", "engine": "3d", "command_cost": 0, "preemption": "interval"}]},
        "fault": [{"kind": "hang", "process": "bad", "context": "c", "packet": 3}],
        "process": [{"name": "bad", "context": [{"name": "c", "node": "3D", "workload": {
            "kind": "script", "packets": [{"at": 0, "work": "10ms", "repeat": 3}]}}]}],
    }, "<test>")
    trace = ListSink()
    r = System(sc, trace=trace, driver=LateReports).run()
    assert r.bugcheck is None
    (reset,) = trace.of("EngineReset")
    assert reset["last_aborted_fence"] == 3
    t = reset["t"]
    p = pairs(trace)
    # Packets 1 and 2 ran, unreported; packet 3 hung behind them: the OS learns of 2 and 3 at the reset.
    assert p[(0, 1)] == [("DmaPacketStart", 0, None), ("DmaPacketStop", t, "Completed")]
    assert p[(0, 2)] == [("DmaPacketStart", t, None), ("DmaPacketStop", t, "Completed")]
    assert p[(0, 3)] == [("DmaPacketStart", t, None), ("DmaPacketStop", t, "Aborted")]
