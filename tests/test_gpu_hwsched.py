"""The context-management processor (gpu/scheduler.py): GPU-side scheduling of hardware contexts and
queues by band, priority and quantum, the NORMAL share, WAIT stalls, suspend/resume and engine reset
(Microsoft's pages for the priority-band, context-scheduling, suspend/resume and engine-reset
DDIs; reference scenarios 20, 21, 31, 32). Every test checks exact virtual times."""

from __future__ import annotations

import pytest

from wddmsim.gpu import commands as C
from wddmsim.gpu.device import GPU, EngineSpec
from wddmsim.gpu.engine import EngineFault
from wddmsim.gpu.scheduler import (
    FOCUS_BAND, IDLE_BAND, NORMAL_BAND, REALTIME_BAND, SUSPEND_CAUSE_SHIFT, GpuSchedulerError,
)
from wddmsim.sim import Simulator
from wddmsim.trace import ListSink

US = 1_000
MS = 1_000_000
FENCES = 0x80000  # queue q's fence lives at FENCES + 8 * q
SEM = 0x90000


class Rig:
    """One engine under a GpuScheduler, with rings at fixed places and buffers allocated upward."""

    def __init__(self, granularity="interval", interval=100 * US, cost=0, slots=None):
        self.sim = Simulator()
        self.gpu = GPU(self.sim, [EngineSpec("3D", "3d", command_cost=cost, preemption=granularity,
                                             preemption_interval=interval, hw_queue_slots=slots)],
                       [("VRAM", "memory", 1 << 20, False)])
        self.irqs = []
        irq = self.gpu.irq
        irq.connect(lambda msg: (self.irqs.append((self.sim.now, irq.status)), irq.ack(irq.status), True)[-1])
        self.engine = self.gpu.engines[0]
        self.hs = self.gpu.hw_scheduler(0)
        self.rings = {}
        self.wptr = {}
        self.next_buf = 0x400000

    def context(self, cid, process, band=NORMAL_BAND, **props):
        self.hs.create_context(cid, process)
        if band != NORMAL_BAND or props:
            self.hs.set_context(cid, band, **props)
        self.queue(cid, cid)

    def queue(self, cid, qid, size=0x1000):
        base = 0x100000 + qid * 0x10000
        self.hs.create_queue(cid, qid, base, size)
        self.rings[qid] = (base, size)
        self.wptr[qid] = 0

    def ring(self, qid, data):
        base, size = self.rings[qid]
        self.gpu.memory.write(base + self.wptr[qid], data)
        self.wptr[qid] = (self.wptr[qid] + len(data)) % size
        self.hs.doorbell(qid, self.wptr[qid])

    def buffer(self, data):
        addr = self.next_buf
        self.next_buf += (len(data) + 0xFFF) & ~0xFFF
        self.gpu.memory.write(addr, data)
        return addr

    def submit(self, qid, data, value=1):
        """A DMA buffer and the progress fence after it (with interrupt), as a driver writes them."""
        self.ring(qid, C.indirect(self.buffer(data), len(data)) + C.fence(FENCES + 8 * qid, value, interrupt=True))

    def at(self, t, fn, *args):
        self.sim.at(t, lambda: fn(*args))

    def fence(self, qid):
        return self.gpu.memory.read_u64(FENCES + 8 * qid)


def bands(hs, grace=(0, 0, 0, 0), quantum=(MS,) * 4, process_grace=(0, 0, 0, 0), pct=10):
    hs.configure_bands(list(grace), list(quantum), list(process_grace), pct)


def running_ns(log, cid, until):
    """ns the log shows ``cid`` running in [0, until)."""
    total, since = 0, None
    for t, c, state in log:
        if t >= until:
            break
        if c != cid:
            continue
        if state == "running":
            since = t
        elif since is not None:
            total += t - since
            since = None
    return total + (until - since if since is not None else 0)


def test_scheduler_is_made_once_and_takes_the_engine():
    rig = Rig()
    assert rig.gpu.hw_scheduler(0) is rig.hs and rig.engine.listener is rig.hs
    with pytest.raises(EngineFault, match="hardware scheduler"):
        rig.engine.program_ring(0x10000, 4096)
    with pytest.raises(ValueError):
        rig.gpu.hw_scheduler(1)
    other = GPU(Simulator(), [EngineSpec("3D", "3d")], [("VRAM", "memory", 1 << 20, False)])
    assert other.engines[0].listener is None  # the packet path is untouched until asked


def test_one_context_one_queue_runs_buffers_back_to_back():
    rig = Rig(cost=100)
    rig.gpu.trace = trace = ListSink()
    rig.context(1, "app")
    for v in (1, 2, 3):
        rig.submit(1, C.work(1000), value=v)
    rig.sim.run()
    hs = rig.hs
    # Each submission: INDIRECT 100 + WORK 100 + 1000 + FENCE 100 = 1300 ns, back to back.
    assert [(t, s) for t, s in rig.irqs] == [(1300, 1), (2600, 1), (3900, 1)]
    assert rig.fence(1) == 3 and hs.queue_rptr(1) == rig.wptr[1] == 3 * 36
    assert hs.log == [(0, 1, "running"), (3900, 1, "idle")]
    assert [(e["t"], e["context"], e["state"], e["queue"], e["engine"]) for e in trace.of("HwContextState")] == [
        (0, 1, "running", 1, 0), (3900, 1, "idle", -1, 0)]
    assert hs.busy_ns(1) == rig.engine.busy_ns == 3900
    assert (hs.switches, hs.preemptions(1), hs.current, hs.state(1)) == (1, 0, None, "idle")
    assert not rig.engine.preemptions  # no preemption was needed


def test_two_normal_processes_alternate_by_quantum_after_the_process_grace():
    rig = Rig(interval=100 * US)
    hs = rig.hs
    bands(hs, quantum=(MS,) * 4, process_grace=(0, 200 * US, 0, 0))
    rig.context(1, "A")
    rig.context(2, "B")
    rig.submit(1, C.work(10 * MS))
    rig.submit(2, C.work(10 * MS))
    rig.sim.run()
    # Turns of quantum 1 ms + process grace 200 us: A 0-1.2, B 1.2-2.4, ... eight turns each,
    # then A's last 0.4 ms and B's.
    expected = [(0, 1, "running"), (0, 2, "ready")]
    t, cur, other = 0, 1, 2
    for _ in range(16):
        t += 1_200 * US
        expected += [(t, cur, "ready"), (t, other, "running")]
        cur, other = other, cur
    expected += [(19_600 * US, 1, "idle"), (19_600 * US, 2, "running"), (20 * MS, 2, "idle")]
    assert hs.log == expected
    assert hs.busy_ns(1) == hs.busy_ns(2) == 10 * MS and rig.engine.busy_ns == 20 * MS
    assert (hs.preemptions(1), hs.preemptions(2)) == (8, 8)
    assert [(t, s) for t, s in rig.irqs] == [(19_600 * US, 1 << 0), (20 * MS, 1 << 0)]
    assert (rig.fence(1), rig.fence(2)) == (1, 1)


def test_same_process_contexts_use_the_running_contexts_grace_same():
    rig = Rig(interval=50 * US)
    hs = rig.hs
    bands(hs, quantum=(MS,) * 4, process_grace=(0, 500 * US, 0, 0))
    rig.context(1, "P", grace_same=150 * US)
    rig.context(2, "P", grace_same=50 * US)
    rig.submit(1, C.work(2 * MS))
    rig.submit(2, C.work(2 * MS))
    rig.sim.run()
    assert hs.log == [(0, 1, "running"), (0, 2, "ready"),
                      (1_150 * US, 1, "ready"), (1_150 * US, 2, "running"),
                      (2_200 * US, 2, "ready"), (2_200 * US, 1, "running"),
                      (3_050 * US, 1, "idle"), (3_050 * US, 2, "running"), (4 * MS, 2, "idle")]


@pytest.mark.parametrize("granularity,stop", [("interval", 3_100 * US), ("primitive", 4 * MS), ("dma_buffer", 10 * MS)])
def test_realtime_preempts_focus_after_grace_zero_at_the_engine_granularity(granularity, stop):
    rig = Rig(granularity, interval=100 * US)
    hs = rig.hs
    bands(hs, grace=(0, MS, MS, 0))
    rig.context(1, "game", FOCUS_BAND)
    rig.context(2, "audio", REALTIME_BAND, realtime_level=5)
    rig.submit(1, b"".join(C.work(MS) for _ in range(10)))  # ten 1 ms primitives
    rig.at(3_050 * US, rig.submit, 2, C.work(MS))
    rig.sim.run()
    if granularity == "dma_buffer":
        # The running buffer and its fence finish; FOCUS has nothing left, so no preemption counts.
        assert hs.log == [(0, 1, "running"), (3_050 * US, 2, "ready"), (stop, 1, "idle"),
                          (stop, 2, "running"), (stop + MS, 2, "idle")]
        assert hs.preemptions(1) == 0
    else:
        assert hs.log == [(0, 1, "running"), (3_050 * US, 2, "ready"), (stop, 1, "ready"), (stop, 2, "running"),
                          (stop + MS, 2, "idle"), (stop + MS, 1, "running"), (11 * MS, 1, "idle")]
        assert hs.preemptions(1) == 1
    assert rig.engine.preemptions == 1 and not any(s >> 64 for _, s in rig.irqs)  # no CPU preemption cause
    assert (hs.busy_ns(1), hs.busy_ns(2)) == (10 * MS, MS)
    assert (rig.fence(1), rig.fence(2)) == (1, 1)


def test_realtime_level_orders_realtime_contexts():
    rig = Rig(interval=100 * US)
    hs = rig.hs
    bands(hs)
    rig.context(1, "a", REALTIME_BAND, realtime_level=3, grace_lower=250 * US)
    rig.context(2, "b", REALTIME_BAND, realtime_level=9)
    rig.submit(1, C.work(2 * MS))
    rig.at(500 * US, rig.submit, 2, C.work(MS))
    rig.sim.run()
    assert hs.log == [(0, 1, "running"), (500 * US, 2, "ready"), (800 * US, 1, "ready"), (800 * US, 2, "running"),
                      (1_800 * US, 2, "idle"), (1_800 * US, 1, "running"), (3 * MS, 1, "idle")]


@pytest.mark.parametrize("pct", [10, 20, 50])
def test_normal_gets_exactly_its_share_beside_a_focus_hog(pct):
    rig = Rig(interval=100 * US)
    hs = rig.hs
    bands(hs, quantum=(MS,) * 4, pct=pct)
    rig.context(1, "game", FOCUS_BAND)
    rig.context(2, "desktop")
    rig.submit(1, C.work(5_000 * MS))
    rig.submit(2, C.work(5_000 * MS))
    rig.sim.run(until=1_000 * MS)
    log = hs.log
    focus_turn = MS * (100 - pct) // pct  # the FOCUS time that earns one NORMAL quantum
    assert log[:6] == [(0, 1, "running"), (0, 2, "ready"), (focus_turn, 1, "ready"), (focus_turn, 2, "running"),
                       (focus_turn + MS, 2, "ready"), (focus_turn + MS, 1, "running")]
    window = 1_000 * MS
    assert running_ns(log, 2, window) == window * pct // 100
    assert running_ns(log, 1, window) == window * (100 - pct) // 100


def test_normal_share_holds_in_steady_state_with_grace_periods():
    rig = Rig(interval=10 * US)
    hs = rig.hs
    bands(hs, grace=(0, 300 * US, 200 * US, 0), quantum=(MS,) * 4, pct=10)
    rig.context(1, "game", FOCUS_BAND)
    rig.context(2, "desktop")
    rig.submit(1, C.work(5_000 * MS))
    rig.submit(2, C.work(5_000 * MS))
    rig.sim.run(until=200 * MS)
    starts = [t for t, c, s in hs.log if c == 2 and s == "running"]
    # The first turn comes after 9 ms of FOCUS + NORMAL's 300 us grace; every turn is the quantum
    # plus FOCUS's 200 us grace, and FOCUS then runs nine times as long: a 12 ms cycle.
    assert starts[0] == 9_300 * US
    assert all(b - a == 12 * MS for a, b in zip(starts[1:], starts[2:]))
    cycle_start = starts[3]
    assert running_ns(hs.log, 2, cycle_start + 12 * MS) - running_ns(hs.log, 2, cycle_start) == 1_200 * US


@pytest.mark.rule(127)
def test_idle_band_never_preempts_but_is_preempted():
    rig = Rig(interval=100 * US)
    hs = rig.hs
    bands(hs, grace=(5 * MS, 300 * US, 0, 0), quantum=(MS,) * 4)
    rig.context(1, "indexer", IDLE_BAND)
    rig.context(2, "app")
    rig.submit(1, C.work(2 * MS))
    rig.at(500 * US, rig.submit, 2, C.work(MS))  # NORMAL preempts IDLE after NORMAL's grace
    rig.at(10 * MS, rig.submit, 2, C.work(5 * MS))  # far past its quantum: IDLE waits anyway
    rig.at(11 * MS, rig.submit, 1, C.work(MS))
    rig.sim.run()
    assert hs.log == [(0, 1, "running"), (500 * US, 2, "ready"), (800 * US, 1, "ready"), (800 * US, 2, "running"),
                      (1_800 * US, 2, "idle"), (1_800 * US, 1, "running"), (3 * MS, 1, "idle"),
                      (10 * MS, 2, "running"), (11 * MS, 1, "ready"), (15 * MS, 2, "idle"), (15 * MS, 1, "running"),
                      (16 * MS, 1, "idle")]


def test_in_process_priority_only_orders_contexts_of_one_process():
    rig = Rig(interval=100 * US)
    hs = rig.hs
    bands(hs, quantum=(10 * MS,) * 4)
    rig.context(1, "P", grace_lower=200 * US)
    rig.context(2, "P", in_process_priority=1)
    rig.context(3, "Q", in_process_priority=7)  # another process: its priority does not count
    rig.submit(1, C.work(3 * MS))
    rig.at(MS, rig.submit, 2, C.work(MS))
    rig.at(MS, rig.submit, 3, C.work(MS))
    rig.sim.run()
    # 2 preempts 1 after 1's grace_lower; 3 is only an equal candidate of 1 and waits for the engine
    # to be free (1's quantum does not expire); when 2 is done, 3 (never run) goes before 1.
    assert hs.log == [(0, 1, "running"), (MS, 2, "ready"), (MS, 3, "ready"), (1_200 * US, 1, "ready"),
                      (1_200 * US, 2, "running"), (2_200 * US, 2, "idle"), (2_200 * US, 3, "running"),
                      (3_200 * US, 3, "idle"), (3_200 * US, 1, "running"), (5 * MS, 1, "idle")]


def test_higher_in_process_priority_is_chosen_first_when_both_are_ready():
    rig = Rig()
    hs = rig.hs
    bands(hs)
    rig.context(1, "P")
    rig.context(2, "P", in_process_priority=2)
    rig.submit(1, C.work(MS))
    rig.submit(2, C.work(MS))
    rig.sim.run()
    assert hs.log == [(0, 2, "running"), (0, 1, "ready"), (MS, 2, "idle"), (MS, 1, "running"), (2 * MS, 1, "idle")]


def test_a_wait_stall_gives_the_engine_away_and_a_cpu_write_brings_it_back():
    rig = Rig()
    hs = rig.hs
    rig.gpu.trace = trace = ListSink()
    bands(hs, quantum=(2 * MS,) * 4)
    rig.context(1, "X")  # queue 1
    rig.queue(1, 11)  # X's second queue
    rig.context(2, "Y")  # queue 2
    rig.ring(1, C.wait(SEM, 1) + C.indirect(rig.buffer(C.work(MS)), 12) + C.fence(FENCES + 8, 1, interrupt=True))
    rig.submit(11, C.work(MS))
    rig.submit(2, C.work(2 * MS))
    rig.at(1_500 * US, rig.gpu.memory.write_u64, SEM, 1)
    rig.sim.run(until=1)
    # Queue 1 stalled at once; X went on with its other queue.
    assert (hs.current, hs.current_queue, hs.queue_switches) == (1, 11, 1)
    rig.sim.run()
    # X has nothing runnable at 1 ms (queue 1 waits): Y runs; the CPU's write at 1.5 ms makes X
    # ready; it gets the engine when Y is done and its WAIT now passes.
    assert hs.log == [(0, 1, "running"), (0, 2, "ready"), (MS, 1, "idle"), (MS, 2, "running"),
                      (1_500 * US, 1, "ready"), (3 * MS, 2, "idle"), (3 * MS, 1, "running"), (4 * MS, 1, "idle")]
    assert [(e["t"], e["context"], e["state"], e["queue"]) for e in trace.of("HwContextState")][:3] == [
        (0, 1, "running", 1), (0, 2, "ready", -1), (0, 1, "running", 11)]
    assert (rig.fence(1), rig.fence(11), rig.fence(2)) == (1, 1, 1)
    assert (hs.busy_ns(1), hs.busy_ns(2)) == (2 * MS, 2 * MS)
    assert rig.gpu.memory.watch_count == 0


def test_a_wait_released_by_another_contexts_fence_costs_its_command_once():
    rig = Rig(cost=100)
    hs = rig.hs
    bands(hs, quantum=(2 * MS,) * 4)
    rig.context(1, "X")
    rig.context(2, "Y")
    rig.submit(1, C.wait(SEM, 5) + C.work(MS))  # the WAIT is inside the buffer
    rig.ring(2, C.indirect(rig.buffer(C.work(MS)), 12) + C.fence(SEM, 5))
    rig.sim.run()
    # X: INDIRECT 100, WAIT 100 -> stalled at 200. Y: INDIRECT 100, WORK 100 + 1 ms, FENCE 100 (the
    # release) -> 1_000_500. X resumes at its WAIT (already paid for), WORK 100 + 1 ms, FENCE 100.
    assert hs.log == [(0, 1, "running"), (0, 2, "ready"), (200, 1, "idle"), (200, 2, "running"),
                      (1_000_500, 2, "idle"), (1_000_500, 1, "running"), (2_000_700, 1, "idle")]
    assert (hs.busy_ns(1), hs.busy_ns(2)) == (1_000_400, 1_000_300)
    assert rig.engine.busy_ns == 2 * MS + 7 * 100 and rig.fence(1) == 1
    assert rig.irqs == [(2_000_700, 1)]


def test_suspend_and_resume():
    rig = Rig(interval=100 * US)
    hs = rig.hs
    bands(hs, quantum=(10 * MS,) * 4)
    rig.context(1, "A")
    rig.context(2, "B")
    rig.submit(1, C.work(5 * MS))
    answers = []
    rig.at(1_050 * US, lambda: answers.append(hs.suspend_context(1, 7)))  # running: preempted, no grace
    rig.at(1_060 * US, lambda: answers.append(hs.suspend_context(1, 8)))  # already suspended
    rig.at(1_070 * US, lambda: answers.append(hs.suspend_context(2, 3)))  # not on the engine: at once
    rig.sim.run(until=1_500 * US)
    assert answers == [False, True, False]
    assert list(hs.completed_suspends) == [(2, 3), (1, 7)]
    bit = 1 << (SUSPEND_CAUSE_SHIFT + 0)
    assert rig.irqs == [(1_070 * US, bit), (1_100 * US, bit)]
    assert rig.engine.idle and hs.current is None and hs.preemptions(1) == 1
    rig.submit(2, C.work(MS))  # a suspended context's work waits
    rig.sim.run(until=2 * MS)
    assert hs.state(2) == "suspended" and rig.fence(2) == 0
    hs.resume_context(1)
    rig.sim.run(until=3 * MS)
    hs.resume_context(2)
    rig.sim.run()
    # A resumes where it stopped: 1.1 ms done, 3.9 ms left, from 2 ms; B after it.
    assert hs.log == [(0, 1, "running"), (1_070 * US, 2, "suspended"), (1_100 * US, 1, "suspended"),
                      (2 * MS, 1, "ready"), (2 * MS, 1, "running"), (3 * MS, 2, "ready"),
                      (5_900 * US, 1, "idle"), (5_900 * US, 2, "running"), (6_900 * US, 2, "idle")]
    assert hs.busy_ns(1) == 5 * MS and rig.fence(1) == 1
    assert rig.irqs[2:] == [(5_900 * US, 1), (6_900 * US, 1)]


def test_reset_loses_the_running_context_only_and_nothing_runs_until_resume():
    rig = Rig(interval=100 * US)
    hs = rig.hs
    bands(hs, quantum=(MS,) * 4)
    for c in (1, 2, 3):
        rig.context(c, f"P{c}")
    rig.submit(1, C.work(5 * MS))
    rig.submit(2, C.work(5 * MS))
    rig.at(3 * MS, rig.submit, 3, C.work(MS))
    hit = []
    rig.at(3_500 * US, lambda: hit.append(hs.reset()))
    rig.sim.run(until=10 * MS)
    # 2 was on the engine: its state and work are gone. 1 had been preempted after 2 ms of its
    # buffer: its context save is in memory and survives. 3 never started.
    assert hit == [[2]] and hs.halted and rig.engine.idle and rig.engine.resets == 1
    assert hs.log[-3:] == [(3 * MS, 2, "running"), (3 * MS, 3, "ready"), (3_500 * US, 2, "idle")]
    assert hs.queue_rptr(2) == rig.wptr[2] and hs.queue_rptr(1) < rig.wptr[1]  # 1 still owes its fence
    assert (hs.busy_ns(1), hs.busy_ns(2)) == (2 * MS, 1_500 * US)
    assert hs.suspend_context(2, 9) is False and not hs.completed_suspends  # no interrupt before resume
    hs.destroy_context(2)  # the driver drops the context the reset hit: forgotten, never acknowledged
    assert hs.contexts() == [1, 3]
    with pytest.raises(KeyError):
        hs.doorbell(2, 0)
    assert rig.irqs == []
    hs.resume()
    rig.sim.run()
    # 3 (never run) goes first, then 1 finishes the 3 ms its buffer still owed.
    assert hs.log[-4:] == [(10 * MS, 3, "running"), (11 * MS, 3, "idle"), (11 * MS, 1, "running"), (14 * MS, 1, "idle")]
    assert rig.irqs == [(11 * MS, 1), (14 * MS, 1)] and not hs.completed_suspends
    assert (hs.busy_ns(1), hs.busy_ns(3)) == (5 * MS, MS) and rig.engine.busy_ns == 7_500 * US
    assert (rig.fence(1), rig.fence(3)) == (1, 1)


def test_a_whole_gpu_reset_loses_every_queue_with_work():
    rig = Rig(interval=100 * US)
    hs = rig.hs
    bands(hs, quantum=(MS,) * 4)
    for c in (1, 2, 3):
        rig.context(c, f"P{c}")
    rig.submit(1, C.work(5 * MS))
    rig.submit(2, C.work(5 * MS))
    hit = []
    rig.at(3_500 * US, lambda: hit.append(hs.reset(everything=True)))
    rig.sim.run(until=10 * MS)
    assert hit == [[1, 2]]
    assert hs.queue_rptr(1) == rig.wptr[1] and hs.queue_rptr(2) == rig.wptr[2]
    hs.resume()
    rig.sim.run()
    assert (rig.fence(1), rig.fence(2)) == (0, 0) and rig.engine.busy_ns == 3_500 * US


def test_destroying_what_is_on_the_engine_is_refused():
    rig = Rig()
    hs = rig.hs
    rig.context(1, "A")
    rig.queue(1, 5)
    rig.submit(1, C.work(MS))
    rig.sim.run(until=10)
    with pytest.raises(GpuSchedulerError):
        hs.destroy_context(1)
    with pytest.raises(GpuSchedulerError):
        hs.destroy_queue(1)
    hs.destroy_queue(5)  # an idle queue may go
    rig.sim.run()
    hs.destroy_queue(1)
    hs.destroy_context(1)
    assert hs.contexts() == [] and hs.log == [(0, 1, "running"), (MS, 1, "idle")]


def test_configuration_is_validated():
    hs = Rig().hs
    hs.create_context(1, "A")
    with pytest.raises(ValueError):
        hs.configure_bands([0, 0, 0], [MS] * 4, [0] * 4, 10)
    with pytest.raises(ValueError):
        hs.configure_bands([0] * 4, [MS, 0, MS, MS], [0] * 4, 10)
    with pytest.raises(ValueError):
        hs.configure_bands([0] * 4, [MS] * 4, [0, -1, 0, 0], 10)
    with pytest.raises(ValueError):
        hs.configure_bands([0] * 4, [MS] * 4, [0] * 4, 51)
    for bad in ({"band": 4}, {"band": 3, "realtime_level": 32}, {"band": 1, "in_process_priority": 8},
                {"band": 1, "quantum": 0}, {"band": 1, "grace_lower": -1}):
        with pytest.raises(ValueError):
            hs.set_context(1, **bad)
    with pytest.raises(ValueError):
        hs.create_context(1, "again")
    with pytest.raises(ValueError):
        hs.create_queue(1, 1, 0x10002, 4096)
    hs.create_queue(1, 1, 0x10000, 4096)
    with pytest.raises(EngineFault):
        hs.doorbell(1, 4096)


def _mixed_run(granularity, cost):
    """Four contexts in three bands and three processes, four buffers each of three WORKs."""
    rig = Rig(granularity, interval=50 * US, cost=cost)
    hs = rig.hs
    hs.configure_bands([0, 100 * US, 70 * US, 0], [500 * US] * 4, [30 * US] * 4, 20)
    owed = {}
    for c in (1, 2, 3, 4):
        rig.context(c, f"P{c % 3}", band={3: FOCUS_BAND, 4: REALTIME_BAND}.get(c, NORMAL_BAND))
        total = 0
        for k in range(4):
            durations = [((c * 137 + k * 71 + j * 53) % 400 + 10) * US for j in range(3)]
            total += sum(durations) + cost * (3 + 2)  # three WORKs, the INDIRECT and the FENCE
            when = {3: 963 * US, 4: 1_284 * US + k * 1_700 * US}.get(c, 0)
            rig.at(when, rig.submit, c, b"".join(C.work(d) for d in durations), k + 1)
        owed[c] = total
    rig.sim.run()
    return rig, owed


@pytest.mark.parametrize("granularity", ["interval", "primitive", "dma_buffer", "none"])
@pytest.mark.parametrize("cost", [0, 100])
def test_preempted_buffers_resume_with_work_conserved(granularity, cost):
    rig, owed = _mixed_run(granularity, cost)
    hs = rig.hs
    # Each context's busy time is its WORK plus one command cost per packet, however often it was
    # preempted and resumed; every progress fence lands with its last value.
    assert {c: hs.busy_ns(c) for c in owed} == owed
    assert rig.engine.busy_ns == sum(owed.values()) and rig.sim.now == 10_576 * US + 80 * cost
    assert [rig.fence(c) for c in owed] == [4, 4, 4, 4]
    preempted = [hs.preemptions(c) for c in owed]
    assert preempted == {"interval": [5, 5, 3, 0], "primitive": [4, 3, 2, 0], "dma_buffer": [3, 2, 1, 0],
                         "none": [0, 0, 0, 0]}[granularity]
    assert rig.engine.preemptions >= sum(preempted)


def test_the_mixed_run_switches_at_exact_times():
    rig, _ = _mixed_run("interval", 100)
    log = rig.hs.log
    # FOCUS (963 us) preempts NORMAL 2 after its 70 us grace at the next 50 us of 2's second WORK
    # (started at 831.7 us): 1081.7 us. REALTIME (1284 us) preempts FOCUS at once: 1304.2 us.
    assert log[:12] == [(0, 1, "running"), (0, 2, "ready"), (547_400, 1, "ready"), (547_400, 2, "running"),
                        (963_000, 3, "ready"), (1_081_700, 2, "ready"), (1_081_700, 3, "running"),
                        (1_284_000, 4, "ready"), (1_304_200, 3, "ready"), (1_304_200, 4, "running"),
                        (1_937_700, 4, "idle"), (1_937_700, 3, "running")]


def test_a_context_in_an_address_space_resumes_its_buffer_through_the_mmu():
    from wddmsim.gpu.mmu import pte, table_index

    rig = Rig(interval=100 * US)
    hs = rig.hs
    bands(hs, quantum=(500 * US,) * 4)
    mem = rig.gpu.memory
    root, mid, leaf = 0x200000, 0x201000, 0x202000  # one table per level
    va = 0x4000_0000
    mem.write_u64(root + 8 * table_index(va, 2), pte(mid))
    mem.write_u64(mid + 8 * table_index(va, 1), pte(leaf))
    buf_pa, fence_pa = 0x300000, 0x301000
    mem.write_u64(leaf + 8 * table_index(va, 0), pte(buf_pa))
    mem.write_u64(leaf + 8 * table_index(va + 0x1000, 0), pte(fence_pa))
    hs.create_context(1, "virtual", address_space=root)
    rig.queue(1, 1)
    rig.context(2, "physical")
    work = C.work(2 * MS)
    mem.write(buf_pa, work)
    rig.ring(1, C.indirect(va, len(work)) + C.fence(va + 0x1000, 5, interrupt=True))
    rig.at(200 * US, rig.submit, 2, C.work(MS))
    rig.sim.run()
    # Turns of 0.5 ms; B runs in physical mode between A's turns, A's buffer is fetched again through
    # A's page tables each time it resumes, and A's fence lands at its virtual address.
    assert hs.log == [(0, 1, "running"), (200 * US, 2, "ready"), (500 * US, 1, "ready"), (500 * US, 2, "running"),
                      (MS, 2, "ready"), (MS, 1, "running"), (1_500 * US, 1, "ready"), (1_500 * US, 2, "running"),
                      (2 * MS, 2, "idle"), (2 * MS, 1, "running"), (3 * MS, 1, "idle")]
    assert mem.read_u64(fence_pa) == 5 and rig.fence(2) == 1 and not rig.gpu.faults
    assert (hs.busy_ns(1), hs.busy_ns(2)) == (2 * MS, MS)


def test_a_direct_engine_reset_is_seen_by_the_scheduler():
    rig = Rig()
    hs = rig.hs
    rig.context(1, "A")
    rig.submit(1, C.work(2 * MS))
    rig.at(MS, rig.engine.reset)  # e.g. an adapter-wide reset
    rig.at(MS + 1, rig.submit, 1, C.work(MS))  # new work waits for resume()
    rig.sim.run(until=5 * MS)
    assert hs.halted and hs.current is None and rig.engine.idle and rig.fence(1) == 0
    assert hs.log == [(0, 1, "running"), (MS, 1, "idle"), (MS + 1, 1, "ready")] and hs.busy_ns(1) == MS
    hs.resume()
    rig.sim.run()
    assert hs.log[-2:] == [(5 * MS, 1, "running"), (6 * MS, 1, "idle")] and rig.fence(1) == 1


# -- hardware queue slots (docs/gpu.md, "Hardware queue slots") ----------------------------------------
def test_a_queue_blocked_on_a_wait_is_idle_and_gives_its_slot_away_and_gets_one_back_when_it_holds():
    rig = Rig(slots=1)
    trace = ListSink()
    rig.gpu.trace = trace
    rig.context(1, "A")
    rig.context(2, "B")
    # Queue 1 stalls on a WAIT at once; queue 2 wants the only slot.
    rig.ring(1, C.wait(SEM, 1) + C.indirect(rig.buffer(C.work(MS)), 12) + C.fence(FENCES + 8, 1, interrupt=True))
    rig.submit(2, C.work(MS))
    # The WAIT holds at 500 us while queue 2 runs: queue 1 waits for the slot until queue 2 drains.
    rig.at(500 * US, rig.gpu.memory.write_u64, SEM, 1)
    rig.sim.run(until=10 * MS)
    assert rig.hs.slot_log == [(0, 1, 0, "map"), (0, 1, 0, "unmap"), (0, 2, 0, "map"),
                               (MS, 2, 0, "unmap"), (MS, 1, 0, "map")]
    assert (rig.fence(1), rig.fence(2)) == (1, 1)
    turns = [(e["t"], e["context"], e["state"]) for e in trace.events if e["event"] == "HwContextState"]
    assert (0, 2, "running") in turns and (MS, 1, "running") in turns
    unmaps = [e for e in trace.events if e["event"] == "HwQueueUnmap"]
    # Queue 1 left its slot stalled at the WAIT: its ring holds the rest (the WAIT is done again).
    assert [(e["queue"], e["rptr"] < e["wptr"]) for e in unmaps] == [(1, True), (2, False)]
    assert rig.hs.mapped(1) == 0 and rig.hs.mapped(2) is None


def test_without_slots_every_queue_is_mapped_for_good():
    rig = Rig()
    for cid in range(1, 4):
        rig.context(cid, cid)
        rig.submit(cid, C.work(MS))
    rig.sim.run(until=10 * MS)
    assert [rig.fence(q) for q in (1, 2, 3)] == [1, 1, 1]
    assert rig.hs.slot_log == [] and rig.hs.mapped(3) == -1 and (rig.hs.maps, rig.hs.unmaps) == (0, 0)
