"""The hardware flip queue (WDDM 3.0): the display controller's queue (gpu/display.py HwFlipQueue,
through the registers of gpu/mmio.py) latches each flip at the first vsync at or after its target
time, in order, one per vsync per plane, and logs it; cancelled flips are logged cancelled. The
rule 91 judge (wddmsim.ddi.rules.flipqueue) over submissions, cancels and the log.

Times are virtual ns; the display runs at 100 Hz (a 10 ms period) so the vsyncs are round numbers.
"""

from wddmsim.ddi.rules.flipqueue import CANCELLED, FlipQueueJudge
from wddmsim.gpu.device import GPU, EngineSpec
from wddmsim.gpu.display import HWFLIPQUEUE_TIMESTAMP_CANCELLED, NO_INTERRUPT
from wddmsim.gpu.mmio import vsync_bit
from wddmsim.sim import Simulator

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


def test_flips_due_at_the_same_vsync_are_shown_one_per_vsync_in_order():
    sim, gpu, mmio, _ = make()
    for pid in (1, 2, 3):
        mmio.hw_flip_queue_submit(0, 0, pid, 0x1000 * pid, 0)  # no target: as soon as possible
    sim.run(until=100 * MS)
    assert mmio.hw_flip_queue_log(0, 0) == [(1, P), (2, 2 * P), (3, 3 * P)]


def test_a_flip_written_at_a_vsync_instant_latches_at_the_next_one():
    sim, gpu, mmio, _ = make()
    sim.at(3 * P, lambda: mmio.hw_flip_queue_submit(0, 0, 1, 0xA000, 3 * P))
    sim.run(until=100 * MS)
    assert mmio.hw_flip_queue_log(0, 0) == [(1, 4 * P)]


def test_planes_have_queues_of_their_own():
    sim, gpu, mmio, _ = make()
    mmio.hw_flip_queue_submit(0, 0, 1, 0xA000, 30 * MS)
    mmio.hw_flip_queue_submit(0, 1, 1, 0xB000, 0)
    mmio.hw_flip_queue_submit(0, 1, 2, 0xB100, 0)
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
    for pid in (1, 2, 3):
        mmio.hw_flip_queue_submit(0, 0, pid, 0x1000 * pid, 0)
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
