"""The hardware flip queue (WDDM 3.0, Microsoft's "Hardware flip queue" page): the display controller's
queue (gpu/display.py HwFlipQueue, through the registers of gpu/mmio.py) latches each flip at the first
vsync at or after its target time, in order, one per vsync per plane, and logs it; cancelled flips are
logged cancelled. The rule 91 judge (wddmsim.ddi.rules.flipqueue) over submissions, cancels and the
log. Then the whole path under hardware scheduling (dxgkrnl/hwflipqueue.py, kmd/flipqueue.py): each
flip submitted ahead with its TargetFlipTime and PresentId, latched at its vsync, the interval-0
cancel of the queued tail, the log, the interrupt target, the STATUS_RETRY drain, and rule 91 broken
by drivers.

Times are virtual ns; the display runs at 100 Hz (a 10 ms period) so the vsyncs are round numbers.
"""

import pytest

from wddmsim.ddi.ntstatus import NTSTATUS
from wddmsim.ddi.rules.flipqueue import CANCELLED, FlipQueueJudge
from wddmsim.dxgkrnl.errors import AdapterStartError
from wddmsim.gpu.device import GPU, EngineSpec
from wddmsim.gpu.display import HWFLIPQUEUE_TIMESTAMP_CANCELLED, NO_INTERRUPT
from wddmsim.gpu.mmio import vsync_bit
from wddmsim.kmd import ReferenceDriver
from wddmsim.scenario import scenario_from_dict
from wddmsim.sim import Simulator
from wddmsim.runner.system import ConfigError, System
from wddmsim.trace import ListSink

MS = 1_000_000
P = 10 * MS  # the refresh period at 100 Hz


def make():
    sim = Simulator()
    gpu = GPU(sim, [EngineSpec("3D", "3d")], [("VRAM", "memory", 1 << 20, False)], display_refresh_hz=[100.0])
    irqs = []
    gpu.irq.connect(lambda msg: (irqs.append((sim.now, gpu.irq.status)), gpu.irq.ack(gpu.irq.status), True)[-1])
    return sim, gpu, gpu.mmio, irqs


def test_each_flip_latches_at_the_first_vsync_at_or_after_its_target_time():
    sim, gpu, mmio, irqs = make()
    # Three frames queued at once (a video's next three), each for its own time.
    assert mmio.hw_flip_queue_submit(0, 0, 1, 0xA000, 5 * MS)  # -> the vsync at 10 ms
    assert mmio.hw_flip_queue_submit(0, 0, 2, 0xB000, 20 * MS)  # exactly on a vsync: that one
    assert mmio.hw_flip_queue_submit(0, 0, 3, 0xC000, 41 * MS)  # -> 50 ms
    sim.run(until=100 * MS)
    assert mmio.hw_flip_queue_log(0, 0) == [(1, 1 * P), (2, 2 * P), (3, 5 * P)]
    assert mmio.scanout(0) == 0xC000
    # a vsync cause at each latch (interrupt target 0: every latch), and nothing in between
    assert [t for t, status in irqs if status & vsync_bit(0)] == [1 * P, 2 * P, 5 * P]


def test_flips_due_one_per_vsync_are_shown_one_per_vsync_in_order():
    sim, gpu, mmio, _ = make()
    for pid, target in ((1, 0), (2, 15 * MS), (3, 25 * MS)):
        mmio.hw_flip_queue_submit(0, 0, pid, 0x1000 * pid, target)
    sim.run(until=100 * MS)
    assert mmio.hw_flip_queue_log(0, 0) == [(1, P), (2, 2 * P), (3, 3 * P)]


def test_of_the_flips_whose_target_has_come_the_latest_queued_is_shown_and_the_older_ones_cancelled():
    """The page: with several expired flips on a plane, the hardware shows the most recently queued one
    and treats the rest as cancelled (their log entries say so)."""
    sim, gpu, mmio, _ = make()
    for pid, target in ((1, 0), (2, 5 * MS), (3, 10 * MS), (4, 25 * MS)):
        mmio.hw_flip_queue_submit(0, 0, pid, 0x1000 * pid, target)
    sim.run(until=100 * MS)
    c = HWFLIPQUEUE_TIMESTAMP_CANCELLED
    assert mmio.hw_flip_queue_log(0, 0) == [(1, c), (2, c), (3, P), (4, 3 * P)]
    assert mmio.scanout(0) == 0x4000


def test_a_flip_written_at_a_vsync_instant_latches_at_the_next_one():
    sim, gpu, mmio, _ = make()
    sim.at(3 * P, lambda: mmio.hw_flip_queue_submit(0, 0, 1, 0xA000, 3 * P))
    sim.run(until=100 * MS)
    assert mmio.hw_flip_queue_log(0, 0) == [(1, 4 * P)]


def test_planes_have_queues_of_their_own():
    sim, gpu, mmio, _ = make()
    mmio.hw_flip_queue_submit(0, 0, 1, 0xA000, 30 * MS)
    mmio.hw_flip_queue_submit(0, 1, 1, 0xB000, 0)
    mmio.hw_flip_queue_submit(0, 1, 2, 0xB100, 15 * MS)
    sim.run(until=100 * MS)
    assert mmio.hw_flip_queue_log(0, 0) == [(1, 3 * P)]
    assert mmio.hw_flip_queue_log(0, 1) == [(1, P), (2, 2 * P)]
    assert mmio.scanout(0) == 0xA000  # the primary plane is the source's scanout


def test_cancel_takes_back_the_run_from_a_present_id_to_the_last_and_logs_it_cancelled():
    sim, gpu, mmio, _ = make()
    for pid in (1, 2, 3, 4):
        mmio.hw_flip_queue_submit(0, 0, pid, 0x1000 * pid, pid * P)
    first = []
    sim.at(P + 1, lambda: first.append(mmio.hw_flip_queue_cancel(0, 0, 3)))
    sim.run(until=100 * MS)
    assert first == [3]
    # logged in PresentId order: the cancelled run right after PresentId 2, the last still queued, latches
    assert mmio.hw_flip_queue_log(0, 0) == [
        (1, P), (2, 2 * P), (3, HWFLIPQUEUE_TIMESTAMP_CANCELLED), (4, HWFLIPQUEUE_TIMESTAMP_CANCELLED)]
    assert mmio.scanout(0) == 0x2000
    # nothing left to cancel
    assert mmio.hw_flip_queue_cancel(0, 0, 1) == 0


def test_the_interrupt_target_present_id_silences_earlier_latches():
    sim, gpu, mmio, irqs = make()
    mmio.hw_flip_queue_interrupt_target(0, 0, 3)
    for pid, target in ((1, 0), (2, 15 * MS), (3, 25 * MS)):
        mmio.hw_flip_queue_submit(0, 0, pid, 0x1000 * pid, target)
    sim.run(until=100 * MS)
    assert [t for t, status in irqs if status & vsync_bit(0)] == [3 * P]
    mmio.hw_flip_queue_interrupt_target(0, 0, NO_INTERRUPT)
    mmio.hw_flip_queue_submit(0, 0, 4, 0x4000, 0)
    sim.run(until=200 * MS)
    assert mmio.hw_flip_queue_log(0, 0)[-1] == (4, 11 * P)
    assert [t for t, status in irqs if status & vsync_bit(0)] == [3 * P]


def test_a_full_plane_queue_refuses_the_write():
    sim, gpu, mmio, _ = make()
    q = gpu.displays[0].flip_queue(depth=2)
    assert mmio.hw_flip_queue_submit(0, 0, 1, 0x1000, 0)
    assert mmio.hw_flip_queue_submit(0, 0, 2, 0x2000, 0)
    assert q.full(0) and not mmio.hw_flip_queue_submit(0, 0, 3, 0x3000, 0)
    sim.run(until=P)
    assert not q.full(0) and mmio.hw_flip_queue_submit(0, 0, 3, 0x3000, 0)


# -- rule 91's judge -------------------------------------------------------------------------------------------
def test_the_judge_is_quiet_on_what_the_display_queue_does():
    sim, gpu, mmio, _ = make()
    judge = FlipQueueJudge()
    for pid in (1, 2, 3, 4):
        assert judge.submitted(0, 0, pid, pid * P) == []
        mmio.hw_flip_queue_submit(0, 0, pid, 0x1000 * pid, pid * P)
    sim.run(until=P + 1)
    first = mmio.hw_flip_queue_cancel(0, 0, 3)
    assert judge.cancelled(0, 0, 3, first) == []
    sim.run(until=100 * MS)
    log = mmio.hw_flip_queue_log(0, 0)
    assert CANCELLED == HWFLIPQUEUE_TIMESTAMP_CANCELLED
    assert judge.completed(0, 0, log) == []


def test_a_target_flip_time_going_backwards_breaks_rule_91():
    judge = FlipQueueJudge()
    assert judge.submitted(0, 0, 1, 30 * MS) == []
    v = judge.submitted(0, 0, 2, 20 * MS)
    assert [x.rule for x in v] == [91] and "never go backwards" in v[0].message
    assert judge.submitted(0, 1, 1, 10 * MS) == []  # another plane: its own order
    assert judge.submitted(0, 0, 3, 0) == []  # no target: not compared


def test_a_cancel_answer_outside_the_run_breaks_rule_91():
    judge = FlipQueueJudge()
    for pid in (1, 2, 3, 4):
        judge.submitted(0, 0, pid, pid * P)
    assert judge.cancelled(0, 0, 3, 0) == []  # none cancelled
    assert judge.cancelled(0, 0, 3, 4) == []  # could not cancel 3; 4 went
    v = judge.cancelled(0, 0, 3, 2)  # before the requested PresentId
    assert [x.rule for x in v] == [91] and "one run" in v[0].message
    assert [x.rule for x in judge.cancelled(0, 0, 3, 5)] == [91]  # beyond the last submitted


def test_a_target_has_only_to_follow_the_flips_still_pending():
    """The page: TargetFlipTime is at least that of any flip pending on the plane; a cancelled or
    completed flip is not pending."""
    judge = FlipQueueJudge()
    assert judge.submitted(0, 0, 1, 10 * MS) == [] and judge.submitted(0, 0, 2, 50 * MS) == []
    assert judge.cancelled(0, 0, 2, 2) == []
    assert judge.submitted(0, 0, 3, 20 * MS) == []  # 2 went: only 1 (10 ms) is pending
    assert judge.completed(0, 0, [(1, P)]) == []
    v = judge.submitted(0, 0, 4, 15 * MS)  # 3 (20 ms) still pends
    assert [x.rule for x in v] == [91] and "before the 20000000 of a flip still pending" in v[0].message


def test_completions_out_of_order_or_beyond_the_last_submitted_break_rule_91():
    judge = FlipQueueJudge()
    for pid in (1, 2, 3):
        judge.submitted(0, 0, pid, 0)
    assert judge.completed(0, 0, [(1, P)]) == []
    v = judge.completed(0, 0, [(3, 2 * P), (2, 3 * P)])
    assert [x.rule for x in v] == [91] and "in order" in v[0].message
    assert [x.rule for x in judge.completed(0, 0, [(4, 4 * P)])] == [91]


def test_a_flip_logged_shown_after_the_driver_cancelled_it_breaks_rule_91():
    judge = FlipQueueJudge()
    for pid in (1, 2, 3):
        judge.submitted(0, 0, pid, 0)
    assert judge.cancelled(0, 0, 2, 2) == []
    v = judge.completed(0, 0, [(1, P), (2, 2 * P)])
    assert [x.rule for x in v] == [91] and "cancelled" in v[0].message


def test_cancelling_every_waiting_flip_logs_them_at_once():
    sim, gpu, mmio, _ = make()
    for pid in (1, 2):
        mmio.hw_flip_queue_submit(0, 0, pid, 0x1000 * pid, 5 * P)
    assert mmio.hw_flip_queue_cancel(0, 0, 1) == 1
    assert mmio.hw_flip_queue_log(0, 0) == [(1, HWFLIPQUEUE_TIMESTAMP_CANCELLED), (2, HWFLIPQUEUE_TIMESTAMP_CANCELLED)]
    assert gpu.displays[0].flip_queue().first_free_log_index(0) == 2
    sim.run(until=100 * MS)
    assert len(mmio.hw_flip_queue_log(0, 0)) == 2 and gpu.displays[0].flips == 0


def test_a_second_cancel_reaching_further_back_keeps_the_log_in_order():
    sim, gpu, mmio, _ = make()
    for pid in (1, 2, 3, 4):
        mmio.hw_flip_queue_submit(0, 0, pid, 0x1000 * pid, 0)
    assert mmio.hw_flip_queue_cancel(0, 0, 4) == 4  # logged after 3 latches
    assert mmio.hw_flip_queue_cancel(0, 0, 2) == 2  # now after 1: 2, 3, then 4
    sim.run(until=100 * MS)
    c = HWFLIPQUEUE_TIMESTAMP_CANCELLED
    assert mmio.hw_flip_queue_log(0, 0) == [(1, P), (2, c), (3, c), (4, c)]


# -- the OS and the reference driver: flips queued ahead under hardware scheduling ----------------------------
# A 100 Hz display (10 ms refresh), every CPU cost zero, the reference driver at WDDM 3.0 with overlay
# planes and MaxHwQueuedFlips 3. Each frame_loop frame is one 1 ms buffer then the present; the first
# buffer of the run also waits 540 ns for VidMm's page-table update, so the first flip is ready at
# 1 000 540 ns. QPC ticks are 100 ns: a target of t ns goes out as t // 100 ticks.

NO_TARGET = (1 << 64) - 1
DRIVER = {"ddi_version": "wddm3_0", "overlay_planes": 2, "max_hw_queued_flips": 3}
ZERO = {"render": 0, "patch": 0, "submit": 0, "isr": 0, "dpc": 0, "present": 0}


def build(*apps, duration="300ms", driver=DRIVER, driver_cls=None, verifier="strict"):
    sc = scenario_from_dict({
        "name": "hwfq", "duration": duration, "driver": driver,
        "adapter": {"scheduling": "hardware", "cpu_cost": ZERO, "displays": [100.0],
                    "nodes": [{"name": "3D", "engine": "3d", "command_cost": 0}]},
        "process": [{"name": f"app{i}", "context": [{"name": "c", "node": "3D", "workload": {
            "kind": "frame_loop", "work": "1ms", "present_mode": "flip", "max_frame_latency": 8, **w}}]}
            for i, w in enumerate(apps)]}, "<test>")
    trace = ListSink()
    return System(sc, trace=trace, driver=driver_cls, verifier=verifier), trace


def run(*apps, **kw):
    system, trace = build(*apps, **kw)
    r = system.run()
    assert r.bugcheck is None and r.summary["violations"] == []
    return system, trace, r


def queued(trace):
    """(t, PresentId, seq, TargetFlipTime in ticks, expected vsync, status) of every queueing call."""
    return [(e["t"], e["present_id"], e["seq"], e["target"], e["expected"], e["status"]) for e in trace.of("HwFlip")]


def targets(trace):
    return [(e["t"], e["present_id"]) for e in trace.of("HwFlipTarget")]


def shown(trace):
    """(t the OS read it, seq, when it was shown) of every Displayed."""
    return [(e["t"], e["seq"], e["displayed"]) for e in trace.of("Displayed")]


@pytest.mark.rule(91)
def test_interval_1_flips_are_queued_ahead_with_their_target_and_latch_in_order_at_their_vsync():
    """A 200 fps application with sync interval 1: each flip is queued as soon as its 1 ms of rendering
    is done, targeted half a refresh before the vsync after the one the OS expects the previous flip at
    (the page's mapping), and latched there. With 3 flips not yet known shown the present call blocks
    until the OS reads the log, at the end of the batch."""
    system, trace, r = run({"fps": 200, "sync_interval": 1, "count": 6})
    assert queued(trace) == [
        (1_000_540, 1, 1, 10_005, 10 * MS, 0),  # no previous flip: targeted at its own submission
        (6 * MS, 2, 2, 150_000, 20 * MS, 0),  # 10 ms + a refresh - half a refresh = 15 ms
        (11 * MS, 3, 3, 250_000, 30 * MS, 0),
        (30 * MS, 4, 4, 350_000, 40 * MS, 0),  # its present waited for the batch: the rendering was done
        (31 * MS, 5, 5, 450_000, 50 * MS, 0),
        (36 * MS, 6, 6, 550_000, 60 * MS, 0),
    ]
    calls = [e for e in trace.of("DdiCall") if e["name"] == "DxgkDdiSetVidPnSourceAddressWithMultiPlaneOverlay3"]
    assert [(e["irql"], e["args"]["TargetFlipTime"], e["args"]["PlaneCount"]) for e in calls] == [
        ("DIRQL", t, 1) for t in (10_005, 150_000, 250_000, 350_000, 450_000, 550_000)]
    assert [(e["present_id"], e["layer"], e["immediate"]) for e in trace.of("MpoFlip")] == [
        (pid, 0, 0) for pid in range(1, 7)]
    # Each one shown at its vsync, one a refresh; the OS reads them from the log later, at the end of
    # each batch (the interrupt target is the last flip queued).
    assert shown(trace) == [(30 * MS, 1, 10 * MS), (30 * MS, 2, 20 * MS), (30 * MS, 3, 30 * MS),
                            (60 * MS, 4, 40 * MS), (60 * MS, 5, 50 * MS), (60 * MS, 6, 60 * MS)]
    assert [(e["present_id"], e["shown"]) for e in trace.of("HwFlipLog")] == [(k, 10 * MS * k) for k in range(1, 7)]
    # The driver reported the log with one OVERLAY3 entry (plane 0) at each batch's end; the OS read up
    # to the first free index it named: 6 entries.
    reports = [(e["t"], e["args"]["CrtcVsyncWithMultiPlaneOverlay3"]["MultiPlaneOverlayVsyncInfoCount"])
               for e in trace.of("Callback")
               if e["args"].get("InterruptType") == "DXGK_INTERRUPT_CRTC_VSYNC_WITH_MULTIPLANE_OVERLAY3"]
    assert reports == [(30 * MS, 1), (60 * MS, 1)]
    assert [(e["t"], e["layer"]) for e in trace.of("PlaneVSync")] == [(30 * MS, 0), (60 * MS, 0)]
    assert system.adapter.hwflips.sources[0].read == 6
    # The present call of frame 4 waited for room: 3 flips were not yet known shown until 30 ms.
    assert [(e["seq"], e["cpu_start"], e["t"]) for e in trace.of("Present")] == [
        (1, 0, 0), (2, 5 * MS, 5 * MS), (3, 10 * MS, 10 * MS), (4, 15 * MS, 30 * MS), (5, 30 * MS, 30 * MS),
        (6, 35 * MS, 35 * MS)]
    assert r.summary["displays"][0]["displayed"] == 6 and r.summary["displays"][0]["dropped"] == 0


def test_the_interrupt_target_lets_the_cpu_sleep_through_a_batch_and_the_vsync_interrupt_go_off():
    """DxgkDdiSetInterruptTargetPresentId: the last flip queued, none once nothing is queued. The
    driver interrupts only then: 2 vsync reports for 6 flips; two refreshes after the last target
    asked for none the OS turns the vsync interrupt off (the page's 2-stage disable)."""
    system, trace, r = run({"fps": 200, "sync_interval": 1, "count": 6})
    assert targets(trace) == [(1_000_540, 1), (6 * MS, 2), (11 * MS, 3), (30 * MS, NO_TARGET), (30 * MS, 4),
                              (31 * MS, 5), (36 * MS, 6), (60 * MS, NO_TARGET)]
    calls = [e for e in trace.of("DdiCall") if e["name"] == "DxgkDdiSetInterruptTargetPresentId"]
    assert [(e["irql"], e["args"]["InterruptTargetPresentId"]) for e in calls] == [
        ("DIRQL", pid) for _, pid in targets(trace)]
    assert [e["t"] for e in trace.of("VSync")] == [30 * MS, 60 * MS]
    assert [(e["t"], e["enabled"], e["reason"]) for e in trace.of("VSyncControl")] == [
        (0, 1, "flip"), (80 * MS, 0, "idle")]
    # The log buffer was given once, before the first flip, at PASSIVE_LEVEL.
    logs = [e for e in trace.of("DdiCall") if e["name"] == "DxgkDdiSetFlipQueueLogBuffer"]
    assert [(e["t"], e["irql"], e["args"]["NumberOfEntries"]) for e in logs] == [(0, "PASSIVE_LEVEL", 64)]


@pytest.mark.rule(91)
def test_an_interval_0_flip_cancels_the_queued_one_not_yet_shown_which_is_dropped():
    """A 400 fps application with sync interval 0: each newer flip whose rendering is done first reads
    the log (DxgkDdiUpdateFlipQueueLog), then cancels the queued tail (DxgkDdiCancelFlips from the
    oldest flip not known done); the driver cancels it, the present is replaced and dropped, and the
    newest frame before each vsync is the one shown."""
    system, trace, r = run({"fps": 400, "sync_interval": 0, "count": 8})
    cancels = [(e["t"], e["requested"], e["cancelled"], e["last"]) for e in trace.of("HwFlipCancel")]
    assert cancels == [(3_500_000, 1, 1, 1), (6 * MS, 2, 2, 2), (8_500_000, 3, 3, 3),
                       (13_500_000, 5, 5, 5), (16 * MS, 6, 6, 6), (18_500_000, 7, 7, 7)]
    assert [(e["t"], e["seq"], e["by_seq"]) for e in trace.of("FlipReplaced")] == [
        (t, old, old + 1) for t, old, _, _ in cancels]
    assert [(e["t"], e["seq"]) for e in trace.of("Dropped")] == [(t, old) for t, old, _, _ in cancels]
    # Targets: the time of the submission, never below a flip still queued.
    assert [(q[0], q[1], q[3]) for q in queued(trace)] == [
        (1_000_540, 1, 10_005), (3_500_000, 2, 35_000), (6 * MS, 3, 60_000), (8_500_000, 4, 85_000),
        (11 * MS, 5, 110_000), (13_500_000, 6, 135_000), (16 * MS, 7, 160_000), (18_500_000, 8, 185_000)]
    assert shown(trace) == [(10 * MS, 4, 10 * MS), (20 * MS, 8, 20 * MS)]
    # Each cancel came right after a log update, both at device IRQL; the cancelled flips are logged cancelled.
    names = [e["name"] for e in trace.of("DdiCall") if e["name"] in ("DxgkDdiUpdateFlipQueueLog", "DxgkDdiCancelFlips")]
    assert names == ["DxgkDdiUpdateFlipQueueLog", "DxgkDdiCancelFlips"] * 6
    assert [(e["t"], e["irql"], e["args"]["FirstFreeFlipQueueLogEntryIndex"]) for e in trace.of("DdiCall")
            if e["name"] == "DxgkDdiUpdateFlipQueueLog"] == [
        (3_500_000, "DIRQL", 0), (6 * MS, "DIRQL", 1), (8_500_000, "DIRQL", 2), (13_500_000, "DIRQL", 4),
        (16 * MS, "DIRQL", 5), (18_500_000, "DIRQL", 6)]
    assert [(e["present_id"], e["shown"]) for e in trace.of("HwFlipLog")] == [
        (1, -1), (2, -1), (3, -1), (4, 10 * MS), (5, -1), (6, -1), (7, -1), (8, 20 * MS)]
    d = r.summary["displays"][0]
    assert (d["presents"], d["displayed"], d["dropped"]) == (8, 2, 6)


@pytest.mark.rule(91)
def test_status_retry_with_a_drain_is_submitted_again_once_the_queued_flips_are_done():
    """The driver declares 3 but the display holds 2 per plane: the third flip finds no room and the
    driver answers STATUS_RETRY with OutputFlags.HwFlipQueueDrainNeeded. The OS waits for the two
    queued flips to complete (its interrupt comes at the last), then for the flip's target time, and
    submits it again with a new PresentId."""
    system, trace = build({"fps": 200, "sync_interval": 1, "count": 6})
    system.gpu.displays[0].flip_queue(depth=2)
    r = system.run()
    assert r.bugcheck is None and r.summary["violations"] == []
    retry = int(NTSTATUS.STATUS_RETRY)
    assert queued(trace)[3:] == [
        (30 * MS, 4, 4, 350_000, 40 * MS, 0),
        (31 * MS, 5, 5, 450_000, 50 * MS, 0),
        (36 * MS, 6, 6, 550_000, -1, retry),  # 4 and 5 wait in the display: no room
        (55 * MS, 7, 6, 550_000, 60 * MS, 0),  # after 4 and 5 are known done (50 ms), at its target
    ]
    assert [e["drain"] for e in trace.of("HwFlip")] == [0, 0, 0, 0, 0, 1, 0]
    call = [e for e in trace.of("DdiCall") if e["name"] == "DxgkDdiSetVidPnSourceAddressWithMultiPlaneOverlay3"][5]
    assert call["status"] == "STATUS_RETRY" and call["args"]["OutputFlags"]["HwFlipQueueDrainNeeded"] == 1
    assert shown(trace)[3:] == [(50 * MS, 4, 40 * MS), (50 * MS, 5, 50 * MS), (60 * MS, 6, 60 * MS)]
    assert r.summary["displays"][0]["dropped"] == 0


class _RetriesForever(ReferenceDriver):
    """Answers the flip of PresentId 2 with STATUS_RETRY and a drain however many flips are queued."""

    def _fq_flip(self, args, source, work):
        if any(pid >= 2 for _p, _l, pid, *_ in work):
            args.OutputFlags.Value = 0
            args.OutputFlags.HwFlipQueueDrainNeeded = 1
            return int(NTSTATUS.STATUS_RETRY)
        return super()._fq_flip(args, source, work)


def test_status_retry_again_with_nothing_queued_is_the_invalid_parameter_failure():
    system, trace = build({"fps": 200, "sync_interval": 1, "count": 3}, driver_cls=_RetriesForever)
    r = system.run()
    bc = r.bugcheck
    assert (bc.bugcheck.code, bc.bugcheck.p1) == (0x119, 0xB)  # FAILED_SETVIDPNSOURCEMPO_COMMAND
    # PresentId 1 latched at 10 ms (the OS asked for an interrupt there, to drain); PresentId 2's target
    # time (15 ms) came with nothing queued: the second STATUS_RETRY is refused.
    assert bc.time == 15 * MS and "no flip is pending on any source" in bc.message
    assert [q[5] for q in queued(trace)] == [0, int(NTSTATUS.STATUS_RETRY)]


# -- rule 91 broken by a driver ----------------------------------------------------------------------------
class _CancelsBeyondTheLast(ReferenceDriver):
    """Answers DxgkDdiCancelFlips with a PresentId above the last one the OS submitted."""

    def DxgkDdiCancelFlips(self, hAdapter, pCancelFlips):
        status = super().DxgkDdiCancelFlips(hAdapter, pCancelFlips)
        ptr = int.from_bytes(self.mem.read(pCancelFlips.ppPlanes, 8), "little")
        requested = int.from_bytes(self.mem.read(ptr, 8), "little")
        self.mem.write(ptr + 8, (requested + 1).to_bytes(8, "little"))
        return status


class _LogsOutOfOrder(ReferenceDriver):
    """Copies each batch of the display's log into the OS's log in reverse order."""

    def _fq_sync(self, key):
        log = self._fq_logs.get(key)
        if log is not None:
            fresh = self.hw.hw_flip_queue_log(key[0], key[1], log.copied)
            if len(fresh) > 1:
                for i, (pid, vsync) in enumerate(reversed(fresh)):
                    self.mem.write(log.address + 16 * ((log.next + i) % log.entries),
                                   pid.to_bytes(8, "little") + self._fq_stamp(pid, vsync).to_bytes(8, "little"))
                log.next = (log.next + len(fresh)) % log.entries
                log.copied += len(fresh)
                return log
        return super()._fq_sync(key)


@pytest.mark.rule(91)
def test_a_cancel_answer_beyond_the_last_present_id_submitted_stops_with_rule_91():
    system, trace = build({"fps": 400, "sync_interval": 0, "count": 8}, driver_cls=_CancelsBeyondTheLast)
    r = system.run()
    bc = r.bugcheck
    assert (bc.bugcheck.code, bc.bugcheck.p1, bc.rule, bc.rule_name) == (0xC4, 91, 91, "HwFlipQueueOrdering")
    assert bc.time == 3_500_000 and bc.struct == "DXGK_CANCELFLIPS_PLANE"
    assert "asked for PresentIds 1..1 and the driver answered PresentIdCancelled 2" in bc.message


@pytest.mark.rule(91)
def test_a_log_out_of_order_stops_with_rule_91_and_the_crash_record_shows_the_entry():
    system, trace = build({"fps": 200, "sync_interval": 1, "count": 6}, driver_cls=_LogsOutOfOrder)
    r = system.run()
    bc = r.bugcheck
    assert (bc.bugcheck.code, bc.bugcheck.p1, bc.rule) == (0xC4, 91, 91)
    # The first batch is 1, 2 and 3, read at 30 ms, logged 3, 2, 1.
    assert bc.time == 30 * MS and "reports PresentId 2 after PresentId 3; flips complete in order" in bc.message
    assert bc.struct == "DXGK_FLIPQUEUE_LOG_ENTRY" and int.from_bytes(bc.data[:8], "little") == 2


@pytest.mark.rule(91)
def test_in_report_mode_the_zoo_driver_breaks_rule_91_alone_and_the_run_goes_on():
    from zoo.flips import LogsCancelledFlipsShown

    system, trace = build({"fps": 400, "sync_interval": 0, "count": 8}, driver_cls=LogsCancelledFlipsShown,
                          verifier="report")
    r = system.run()
    assert r.bugcheck is None
    found = [(t, v.rule) for t, v in system.adapter.verifier.violations]
    # Each cancelled flip is logged shown with the time the driver copied it; the OS reads it at the
    # next log update (the next cancel) or vsync report.
    assert found == [(t, 91) for t in (6 * MS, 8_500_000, 10 * MS, 16 * MS, 18_500_000, 20 * MS)]
    assert ("PresentId 1 is logged shown at 3500000, but the driver said DxgkDdiCancelFlips cancelled 1..1"
            in system.adapter.verifier.violations[0][1].message)
    # The OS keeps what it knew: those flips were cancelled and stay dropped.
    assert r.summary["displays"][0]["dropped"] == 6


# -- what is refused, with a clear message -------------------------------------------------------------------
@pytest.mark.parametrize("settings, words", [
    ({"ddi_version": "wddm2_7", "overlay_planes": 2, "max_hw_queued_flips": 4},
     "max_hw_queued_flips = 4 needs ddi_version wddm3_0 or later"),
    ({"ddi_version": "wddm3_0", "max_hw_queued_flips": 4}, "max_hw_queued_flips = 4 needs overlay_planes of 1"),
])
def test_the_setting_needs_wddm3_0_and_overlay_planes(settings, words):
    with pytest.raises(ConfigError) as err:
        build({"fps": 60, "count": 1}, driver=settings)
    assert any(words in why for _, why in err.value.problems)


def test_flips_under_hardware_scheduling_without_the_hardware_flip_queue_are_refused_before_the_run():
    with pytest.raises(ConfigError) as err:
        build({"fps": 60, "count": 1}, driver={"ddi_version": "wddm3_0"})
    (where, why), = err.value.problems
    assert where == "process[0].context[0].workload.present_mode"
    assert "flips only through the hardware flip queue" in why


class _DeclaresWithoutAsking(ReferenceDriver):
    """Declares MaxHwQueuedFlips without asking the OS whether it enabled the feature."""

    def _caps(self):
        c = super()._caps()
        c.MaxHwQueuedFlips = 4
        return c


def test_a_driver_declaring_the_queue_the_os_did_not_enable_is_refused_at_start():
    sc = scenario_from_dict({"name": "sw", "duration": "10ms", "driver": {"ddi_version": "wddm3_0", "overlay_planes": 2},
                             "adapter": {"displays": [60.0]},
                             "process": [{"name": "a", "context": [{"name": "c", "node": "3D", "workload": {
                                 "kind": "frame_loop", "fps": 60, "work": "1ms", "count": 1}}]}]}, "<test>")
    with pytest.raises(AdapterStartError) as err:
        System(sc, driver=_DeclaresWithoutAsking)
    assert any("MaxHwQueuedFlips = 4, but the OS enables the hardware flip queue" in p and "software scheduler" in p
               for p in err.value.problems)


def test_under_the_software_scheduler_the_same_driver_declares_nothing_and_flips_through_mmio():
    sc = scenario_from_dict({"name": "sw", "duration": "100ms", "driver": DRIVER,
                             "adapter": {"displays": [100.0], "cpu_cost": ZERO},
                             "process": [{"name": "a", "context": [{"name": "c", "node": "3D", "workload": {
                                 "kind": "frame_loop", "fps": 100, "work": "1ms", "present_mode": "flip",
                                 "count": 3}}]}]}, "<test>")
    trace = ListSink()
    system = System(sc, trace=trace)
    r = system.run()
    assert system.adapter.caps.MaxHwQueuedFlips == 0 and system.adapter.hwflips is None
    assert not trace.of("HwFlip") and len(trace.of("MmioFlip")) == 3 and r.summary["displays"][0]["displayed"] == 3


# -- the shipped example --------------------------------------------------------------------------------
def test_the_example_runs_with_a_trace_and_presentmon_and_shows_what_its_readme_says(tmp_path, monkeypatch):
    """examples/hw_flip_queue.toml as examples/README.md runs it: the player's 28 frames one a refresh,
    queued four at a time with one vsync interrupt a batch; the shooter's 72 of 150 shown, 78 cancelled."""
    import json
    from pathlib import Path

    from click.testing import CliRunner

    from wddmsim.cli import main
    from wddmsim.scenario import load_scenario

    example = Path(__file__).parent.parent / "examples" / "hw_flip_queue.toml"
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(main, ["run", str(example), "--json", "--trace", "t.json", "--presentmon", "p.csv"])
    assert r.exit_code == 0, r.output
    s, _ = json.JSONDecoder().raw_decode(r.output[r.output.index("{"):])
    player, shooter = s["displays"]
    assert (player["presents"], player["displayed"], player["dropped"], player["latency_p50_ns"]) == (32, 28, 0, 41_660_000)
    assert (shooter["presents"], shooter["displayed"], shooter["dropped"]) == (150, 72, 78)
    assert s["violations"] == [] and (tmp_path / "t.json").stat().st_size
    # one row per present shown or dropped (the 4 still queued when the run ends have none), and a header
    assert (tmp_path / "p.csv").read_text().count("\n") == 1 + 28 + 72 + 78
    trace = ListSink()
    System(load_scenario(str(example)), trace=trace).run()
    assert [sum(1 for e in trace.of("VSync") if e["source"] == src) for src in (0, 1)] == [7, 72]
    assert len(trace.of("HwFlipCancel")) == 78 and len([e for e in trace.of("HwFlip") if e["status"] == 0]) == 182
    # The trace's flip queue lanes end each frame when the flip queue log says it appeared (the vsync's
    # time in 100 ns ticks, rounded down), not at the Displayed event: the OS reads the log at the
    # interrupts it asked for, so 21 of the player's 28 frames are reported a refresh or more later.
    slices = [x for x in json.loads((tmp_path / "t.json").read_text())["traceEvents"]
              if x.get("cat") == "present" and x.get("ph") == "X" and x["args"].get("result") == "Displayed"]
    assert len(slices) == 28 + 72
    assert sorted(round((x["ts"] + x["dur"]) * 1000) for x in slices) == sorted(e["displayed"] for e in
                                                                                 trace.of("Displayed"))
    late = [e["t"] - e["displayed"] for e in trace.of("Displayed")]
    assert min(late) >= 0 and sum(x > 1_000_000 for x in late) == 21


class _AlwaysRetries(ReferenceDriver):
    """Answers every flip with STATUS_RETRY and a drain, even with nothing queued."""

    def _fq_flip(self, args, source, work):
        args.OutputFlags.Value = 0
        args.OutputFlags.HwFlipQueueDrainNeeded = 1
        return int(NTSTATUS.STATUS_RETRY)


def test_status_retry_with_nothing_queued_is_tried_once_more_then_refused():
    """Nothing is queued, so the drain is over at once: the OS makes the flip again at its target time
    (its submission) and the second STATUS_RETRY stops the run (0x119/0xB)."""
    system, trace = build({"fps": 200, "sync_interval": 1, "count": 1}, driver_cls=_AlwaysRetries)
    r = system.run()
    assert (r.bugcheck.bugcheck.code, r.bugcheck.bugcheck.p1, r.bugcheck.time) == (0x119, 0xB, 1_000_540)
    assert [(q[0], q[1], q[5]) for q in queued(trace)] == [(1_000_540, 1, int(NTSTATUS.STATUS_RETRY))]
