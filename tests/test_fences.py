"""Monitored fences (dxgkrnl/fences.py): reference scenarios 26, 28 and 29, rules 97-103, TDR max
value, and a property test of monotonic values and exactly-once, on-time waiter release. Times are
virtual ns."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wddmsim.ddi.ntstatus import NTSTATUS
from wddmsim.dxgkrnl.adapter import ApiError
from wddmsim.dxgkrnl.fences import (
    DESTROYED_STATUS,
    HALF_RANGE,
    U32_MAX,
    U64_MAX,
    FenceTable,
)
from wddmsim.gpu.memory import PhysicalMemory
from wddmsim.sim import Simulator
from wddmsim.trace import ListSink

SUCCESS = NTSTATUS.STATUS_SUCCESS
TIMEOUT = NTSTATUS.STATUS_TIMEOUT
INVALID_PARAMETER = NTSTATUS.STATUS_INVALID_PARAMETER
INVALID_HANDLE = NTSTATUS.STATUS_INVALID_HANDLE
ACCESS_DENIED = NTSTATUS.STATUS_ACCESS_DENIED


class Mem:
    """Byte-addressed little-endian memory in a dict, counting stores."""

    def __init__(self):
        self.bytes: dict[int, int] = {}
        self.stores = 0

    def _read(self, addr, n):
        return sum(self.bytes.get(addr + i, 0) << (8 * i) for i in range(n))

    def _write(self, addr, value, n):
        assert 0 <= value < 1 << (8 * n)
        self.stores += 1
        for i in range(n):
            self.bytes[addr + i] = (value >> (8 * i)) & 0xFF

    def read_u32(self, addr):
        return self._read(addr, 4)

    def read_u64(self, addr):
        return self._read(addr, 8)

    def write_u32(self, addr, value):
        self._write(addr, value, 4)

    def write_u64(self, addr, value):
        self._write(addr, value, 8)


class Bump:
    """allocate(size, align): a bump allocator."""

    def __init__(self, base=0x10_0000):
        self.top = base
        self.calls = 0

    def __call__(self, size, align):
        self.calls += 1
        self.top = -(-self.top // align) * align
        addr = self.top
        self.top += size
        return addr


class Obj:
    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return self.name


P1, P2 = Obj("P1"), Obj("P2")
D1, D2, D3 = Obj("D1"), Obj("D2"), Obj("D3")


def make(*, no64=False, trace=None, map_gpu=None, memory=None):
    sim = Simulator()
    mem = memory if memory is not None else Mem()
    table = FenceTable(sim, mem, Bump(), trace=trace, no64bit_atomics=no64, map_gpu=map_gpu)
    return sim, mem, table


def cpu_waiter(sim, table, fences, values, log, tag=None, **kw):
    """Start a process that waits on the CPU and logs (tag, now, status)."""

    def proc():
        status = yield table.wait_cpu(fences, values, **kw)
        log.append((tag, sim.now, status))

    return sim.process(proc())


def queue_waiter(sim, table, fence, value, log, tag=None):
    return table.wait_queue(fence, value, lambda status: log.append((tag, sim.now, status)))


def raises(status, fn, *args, **kw):
    with pytest.raises(ApiError) as info:
        fn(*args, **kw)
    assert info.value.status == status, info.value
    return info.value


# -- reference scenario 26: CPU and GPU waits on one fence ----------------------------------------
def test_cpu_and_queue_waiter_unblock_exactly_at_target_through_scan():
    sim, mem, table = make()
    f = table.create(P1, D1)
    log = []
    cpu_waiter(sim, table, [f], [5], log, "cpu")
    sim.run(until=10)  # the process is waiting now
    queue_waiter(sim, table, f, 5, log, "queue")
    assert table.pending_waits(f) == 2
    sim.at(100, lambda: table.signal_cpu([f], [3]))
    sim.at(200, lambda: table.signal_queued(f, 4, D2))
    sim.at(300, lambda: mem.write_u64(f.cpu_va, 5))  # the GPU's fence write
    sim.run(until=340)
    assert log == [] and f.value == 4  # memory says 5 but nobody has looked yet
    sim.at(350, table.scan)
    sim.run()
    assert log == [("queue", 350, SUCCESS), ("cpu", 350, SUCCESS)]
    assert f.value == 5 and table.pending_waits(f) == 0
    assert D2 in f.signalers


def test_cpu_signal_releases_both_waiters_at_once():
    sim, _, table = make()
    f = table.create(P1, D1, initial=1)
    log = []
    cpu_waiter(sim, table, [f], [7], log, "cpu")
    sim.run(until=1)
    queue_waiter(sim, table, f, 7, log, "queue")
    queue_waiter(sim, table, f, 8, log, "later")
    sim.at(500, lambda: table.signal_cpu([f], [6]))
    sim.at(1_000, lambda: table.signal_cpu([f], [7]))
    sim.run()
    assert log == [("queue", 1_000, SUCCESS), ("cpu", 1_000, SUCCESS)]
    assert table.pending_waits(f) == 1


def test_already_reached_wait_is_satisfied_at_once():
    sim, _, table = make()
    f = table.create(P1, D1, initial=9)
    log = []
    token = queue_waiter(sim, table, f, 9, log, "q")
    assert log == [("q", 0, SUCCESS)] and token.done and token.status == SUCCESS
    cpu_waiter(sim, table, [f], [3], log, "c")
    sim.run()
    assert log[-1] == ("c", 0, SUCCESS)
    assert table.pending_waits(f) == 0


def test_32_objects_per_wait_and_signal_33_rejected():
    sim, _, table = make()
    fences = [table.create(P1, D1) for _ in range(33)]
    raises(INVALID_PARAMETER, table.wait_cpu, fences, [1] * 33)
    raises(INVALID_PARAMETER, table.signal_cpu, fences, [1] * 33)
    assert all(f.value == 0 for f in fences)  # nothing signalled
    assert all(table.pending_waits(f) == 0 for f in fences)
    raises(INVALID_PARAMETER, table.wait_cpu, [], [])
    raises(INVALID_PARAMETER, table.signal_cpu, fences[:2], [1])

    log = []
    cpu_waiter(sim, table, fences[:32], [1] * 32, log)
    sim.run(until=10)
    assert all(table.pending_waits(f) == 1 for f in fences[:32])
    sim.at(20, lambda: table.signal_cpu(fences[:32], [1] * 32))
    sim.run()
    assert log == [(None, 20, SUCCESS)]
    assert [f.value for f in fences] == [1] * 32 + [0]


def test_wait_on_destroyed_fence_errors_at_once():
    sim, _, table = make()
    f = table.create(P1, D1)
    g = table.create(P1, D1)
    table.destroy(f)
    raises(INVALID_HANDLE, table.wait_cpu, [f], [1])
    raises(INVALID_HANDLE, table.wait_cpu, [g, f], [1, 1])
    raises(INVALID_HANDLE, table.wait_queue, f, 1, lambda s: None)
    raises(INVALID_HANDLE, table.signal_cpu, [f], [1])
    raises(INVALID_HANDLE, table.signal_queued, f, 1, D1)
    raises(INVALID_HANDLE, table.destroy, f)
    raises(INVALID_HANDLE, table.open, f, P1, D2)
    raises(INVALID_HANDLE, table.lookup, f.handle)
    assert table.lookup(g.handle) is g
    assert table.pending_waits(g) == 0 and f.destroyed
    sim.run()


def test_destroy_releases_pending_waiters_with_error_and_nothing_hangs():
    sim, _, table = make()
    f = table.create(P1, D1)
    g = table.create(P1, D1)
    log = []
    cpu_waiter(sim, table, [f, g], [5, 5], log, "cpu-all")
    cpu_waiter(sim, table, [g], [5], log, "cpu-g", timeout=10_000)
    sim.run(until=1)
    queue_waiter(sim, table, f, 3, log, "q3")
    queue_waiter(sim, table, f, 2, log, "q2")
    assert table.pending_waits(g) == 2
    sim.at(50, lambda: table.destroy(f))
    end = sim.run()
    assert log[:3] == [("q2", 50, DESTROYED_STATUS), ("q3", 50, DESTROYED_STATUS), ("cpu-all", 50, DESTROYED_STATUS)]
    assert log[3] == ("cpu-g", 10_000, TIMEOUT)
    assert DESTROYED_STATUS == INVALID_HANDLE
    assert table.pending_waits(g) == 0 and end == 10_000
    assert table.stats["destroy_released"] == 3


def test_destroyed_slot_is_reused():
    _, _, table = make()
    f = table.create(P1, D1, initial=4)
    table.destroy(f)
    g = table.create(P1, D1, initial=9)
    assert g.cpu_va == f.cpu_va and g.handle != f.handle
    assert table.memory.read_u64(g.cpu_va) == 9


# -- reference scenario 29: timeline semantics ----------------------------------------------------
def test_out_of_order_queued_signals_keep_the_value_monotonic():
    _, _, table = make()
    f = table.create(P1, D1)
    seen = []
    for v in (3, 1, 2):
        table.signal_queued(f, v, D1)
        seen.append(f.value)
    assert seen == [3, 3, 3]
    assert table.memory.read_u64(f.cpu_va) == 3
    assert table.stats["ignored_queued_signals"] == 2


@pytest.mark.rule(98)
def test_out_of_order_cpu_signals_rejected_without_rewind():
    _, _, table = make()
    f = table.create(P1, D1)
    table.signal_cpu([f], [3])
    seen = [f.value]
    for v in (1, 2):
        err = raises(INVALID_PARAMETER, table.signal_cpu, [f], [v])
        assert "AllowFenceRewind" in str(err)
        seen.append(f.value)
    assert seen == [3, 3, 3]
    # a multi-object signal that fails in one object signals none
    g = table.create(P1, D1)
    raises(INVALID_PARAMETER, table.signal_cpu, [g, f], [7, 2])
    assert g.value == 0
    # the same fence twice: the second value is checked against the first
    raises(INVALID_PARAMETER, table.signal_cpu, [g, g], [5, 4])
    assert g.value == 0
    table.signal_cpu([g, g], [4, 5])
    assert g.value == 5


def test_wait_for_unsignalled_point_resolves_at_first_value_at_or_above():
    sim, _, table = make()
    f = table.create(P1, D1)
    log = []
    cpu_waiter(sim, table, [f], [5], log, "c5")
    sim.run(until=1)
    queue_waiter(sim, table, f, 5, log, "q5")
    queue_waiter(sim, table, f, 7, log, "q7")
    queue_waiter(sim, table, f, 8, log, "q8")
    for t, v in ((10, 2), (20, 4), (30, 7)):
        sim.at(t, lambda v=v: table.signal_queued(f, v, D1))
    sim.run()
    assert log == [("q5", 30, SUCCESS), ("q7", 30, SUCCESS), ("c5", 30, SUCCESS)]
    assert table.pending_waits(f) == 1


def test_signal_of_point_zero():
    sim, _, table = make(trace=ListSink())
    f = table.create(P1, D1)
    table.signal_cpu([f], [0])
    table.signal_queued(f, 0, D1)
    assert f.value == 0 and table.trace.of("FenceSignal") == []
    log = []
    cpu_waiter(sim, table, [f], [0], log)
    sim.run()
    assert log == [(None, 0, SUCCESS)]


@pytest.mark.rule(98)
def test_rewind_with_allow_fence_rewind():
    sim, mem, table = make(trace=ListSink())
    f = table.create(P1, D1, initial=2)
    table.signal_cpu([f], [10])
    log = []
    queue_waiter(sim, table, f, 12, log, "q12")  # pending across the rewind ("reset during wait")
    table.signal_cpu([f], [4], rewind=True)
    assert f.value == 4 and mem.read_u64(f.cpu_va) == 4
    assert table.trace.of("FenceSignal")[-1] == {"t": 0, "event": "FenceSignal", "fence": f.handle, "value": 4,
                                                 "source": "cpu", "rewind": 1}
    err = raises(INVALID_PARAMETER, table.signal_cpu, [f], [1], rewind=True)
    assert "initial value" in str(err)
    table.signal_cpu([f], [2], rewind=True)  # back to the initial value is allowed
    assert f.value == 2 and table.stats["rewinds"] == 2
    queue_waiter(sim, table, f, 6, log, "q6")
    sim.at(40, lambda: table.signal_cpu([f], [6], rewind=True))  # forward with the flag: a plain signal
    sim.at(50, lambda: table.signal_cpu([f], [12]))
    sim.run()
    assert log == [("q6", 40, SUCCESS), ("q12", 50, SUCCESS)]
    # a queued signal below the value never rewinds
    table.signal_queued(f, 3, D1)
    assert f.value == 12


def test_wait_all_is_redone_when_a_rewind_undoes_one_target():
    sim, _, table = make()
    f = table.create(P1, D1)
    g = table.create(P1, D1)
    log = []
    cpu_waiter(sim, table, [f, g], [5, 5], log)
    sim.at(10, lambda: table.signal_cpu([f], [5]))
    sim.at(20, lambda: table.signal_cpu([f], [2], rewind=True))
    sim.at(30, lambda: table.signal_cpu([g], [5]))
    sim.at(40, lambda: table.signal_cpu([f], [5]))
    sim.run()
    assert log == [(None, 40, SUCCESS)]


def test_wait_any():
    sim, _, table = make()
    f = table.create(P1, D1)
    g = table.create(P1, D1)
    log = []
    cpu_waiter(sim, table, [f, g], [5, 3], log, wait_any=True)
    sim.at(10, lambda: table.signal_cpu([f], [4]))
    sim.at(20, lambda: table.signal_cpu([g], [3]))
    sim.run()
    assert log == [(None, 20, SUCCESS)]
    assert table.pending_waits(f) == 0 and table.pending_waits(g) == 0


# -- reference scenario 28: wrap ------------------------------------------------------------------
def test_32bit_fence_across_the_wrap_driven_by_gpu_writes():
    sim, mem, table = make(no64=True)
    start = 2**32 - 20
    f = table.create(P1, D1, initial=start)
    assert f.bits == 32 and mem.read_u32(f.cpu_va) == start
    log = []
    for i in range(1, 41):
        queue_waiter(sim, table, f, start + i, log, i)
    cpu_waiter(sim, table, [f], [start + 40], log, "cpu-last")
    cpu_waiter(sim, table, [f], [2**32], log, "cpu-wrap")

    def step(i):
        mem.write_u32(f.cpu_va, (start + i) & U32_MAX)  # what the GPU's 32-bit fence write stores
        table.scan()

    for i in range(1, 41):
        sim.at(i * 100, step, i)
    sim.run()
    queue_log = [e for e in log if isinstance(e[0], int)]
    assert queue_log == [(i, i * 100, SUCCESS) for i in range(1, 41)]
    assert ("cpu-wrap", 2000, SUCCESS) in log and ("cpu-last", 4000, SUCCESS) in log
    assert f.value == start + 40 == 2**32 + 20
    assert mem.read_u32(f.cpu_va) == 20
    assert table.stats["backward_gpu_writes"] == 0


def test_32bit_fence_across_the_wrap_by_cpu_signals():
    sim, mem, table = make(no64=True)
    start = 2**32 - 20
    f = table.create(P1, D1, initial=start)
    values = []
    for i in range(1, 41):
        table.signal_cpu([f], [start + i])
        values.append(f.value)
        assert mem.read_u32(f.cpu_va) == (start + i) & U32_MAX
        assert mem.read_u64(f.cpu_va) >> 32 == 0  # only 32 bits are ever stored
    assert values == sorted(values) and values[-1] == 2**32 + 20


def test_64bit_fence_near_its_maximum_does_not_wrap():
    sim, mem, table = make()
    start = U64_MAX - 19
    f = table.create(P1, D1, initial=start)
    log = []
    for i in range(1, 20):
        queue_waiter(sim, table, f, start + i, log, i)
    for i in range(1, 20):
        sim.at(i * 10, lambda i=i: table.signal_cpu([f], [start + i]))
    sim.run()
    assert [e[:2] for e in log] == [(i, i * 10) for i in range(1, 20)]
    assert f.value == U64_MAX and mem.read_u64(f.cpu_va) == U64_MAX
    raises(INVALID_PARAMETER, table.signal_cpu, [f], [U64_MAX + 1])
    raises(INVALID_PARAMETER, table.wait_queue, f, U64_MAX + 1, lambda s: None)
    raises(INVALID_PARAMETER, table.signal_cpu, [f], [0])  # no wrap back to zero
    assert f.value == U64_MAX


@pytest.mark.rule(99)
def test_rule_99_32bit_values_within_half_range():
    _, mem, table = make(no64=True)
    f = table.create(P1, D1, initial=100)
    err = raises(INVALID_PARAMETER, table.signal_cpu, [f], [100 + HALF_RANGE + 1])
    assert "rule 99" in str(err)
    raises(INVALID_PARAMETER, table.signal_queued, f, 100 + HALF_RANGE + 1, D1)
    raises(INVALID_PARAMETER, table.wait_queue, f, 100 + HALF_RANGE + 1, lambda s: None)
    raises(INVALID_PARAMETER, table.wait_cpu, [f], [100 + HALF_RANGE + 1])
    assert f.value == 100
    table.wait_queue(f, 100 + HALF_RANGE, lambda s: None)  # the edge is allowed
    table.signal_cpu([f], [100 + HALF_RANGE])
    assert f.value == 100 + HALF_RANGE
    # a 64-bit fence has no such limit
    _, _, t64 = make()
    g = t64.create(P1, D1, initial=100)
    t64.signal_cpu([g], [100 + 2**40])
    assert g.value == 100 + 2**40
    # a GPU write that is 2**31 or more ahead reads as a stale, backward value
    h = table.create(P1, D1, initial=10)
    mem.write_u32(h.cpu_va, (10 + 2**31) & U32_MAX)
    table.scan([h])
    assert h.value == 10 and table.stats["backward_gpu_writes"] == 1


# -- timeouts and polls ---------------------------------------------------------------------------
def test_cpu_wait_timeout_exactly_at_now_plus_timeout():
    sim, _, table = make()
    f = table.create(P1, D1)
    log = []

    def proc():
        yield 1_000
        status = yield table.wait_cpu([f], [5], timeout=500)
        log.append((sim.now, status))

    sim.process(proc())
    sim.at(1_600, lambda: table.signal_cpu([f], [5]))
    sim.run()
    assert log == [(1_500, TIMEOUT)]
    assert table.pending_waits(f) == 0 and table.stats["timeouts"] == 1


def test_signal_before_timeout_cancels_the_timer():
    sim, _, table = make()
    f = table.create(P1, D1)
    log = []
    cpu_waiter(sim, table, [f], [5], log, timeout=500)
    sim.at(499, lambda: table.signal_cpu([f], [5]))
    assert sim.run() == 499  # the cancelled timer leaves nothing to run
    assert log == [(None, 499, SUCCESS)]


def test_poll_with_timeout_zero():
    sim, _, table = make()
    f = table.create(P1, D1, initial=3)
    log = []
    cpu_waiter(sim, table, [f], [4], log, "miss", timeout=0)
    cpu_waiter(sim, table, [f], [3], log, "hit", timeout=0)
    sim.run()
    assert log == [("miss", 0, TIMEOUT), ("hit", 0, SUCCESS)]
    assert table.pending_waits(f) == 0


def test_timeout_rereads_memory_before_giving_up():
    sim, mem, table = make()
    f = table.create(P1, D1)
    log = []
    cpu_waiter(sim, table, [f], [5], log, timeout=500)
    sim.at(200, lambda: mem.write_u64(f.cpu_va, 6))  # the GPU wrote it; no interrupt, no scan
    sim.run()
    assert log == [(None, 500, SUCCESS)] and f.value == 6


# -- scans and GPU writes -------------------------------------------------------------------------
def test_scan_after_a_direct_memory_write():
    mem = PhysicalMemory()
    sim, _, table = make(memory=mem)
    f = table.create(P1, D1)
    quiet = table.create(P1, D1)
    log = []
    queue_waiter(sim, table, f, 2, log)
    mem.write_u64(f.cpu_va, 2)
    mem.write_u64(quiet.cpu_va, 8)
    assert table.scan() == 1  # only fences with waiters are read
    assert log == [(None, 0, SUCCESS)] and f.value == 2 and quiet.value == 0
    assert table.scan([quiet]) == 1 and quiet.value == 8
    assert table.read(quiet) == 8


@pytest.mark.rule(98)
def test_backward_gpu_write_is_ignored():
    sim, mem, table = make(trace=ListSink())
    f = table.create(P1, D1)
    table.signal_cpu([f], [10])
    mem.write_u64(f.cpu_va, 7)
    assert table.read(f) == 7
    table.scan([f])
    table.scan([f])  # the same stale value counts once
    assert f.value == 10 and table.stats["backward_gpu_writes"] == 1
    mem.write_u64(f.cpu_va, 12)
    table.scan([f])
    assert f.value == 12
    sources = [(e["value"], e["source"]) for e in table.trace.of("FenceSignal")]
    assert sources == [(10, "cpu"), (12, "gpu")]
    # the same on a 32-bit fence
    _, mem32, t32 = make(no64=True)
    g = t32.create(P1, D1, initial=2**32 + 5)
    mem32.write_u32(g.cpu_va, 3)
    t32.scan([g])
    assert g.value == 2**32 + 5 and t32.stats["backward_gpu_writes"] == 1
    assert t32.read(g) == 2**32 + 3


def test_api_calls_see_gpu_progress_before_validating():
    sim, mem, table = make()
    f = table.create(P1, D1)
    mem.write_u64(f.cpu_va, 9)  # written by the GPU, not scanned yet
    raises(INVALID_PARAMETER, table.signal_cpu, [f], [5])
    assert f.value == 9


# -- TDR ------------------------------------------------------------------------------------------
@pytest.mark.rule(101)
@pytest.mark.parametrize("no64", [False, True])
def test_tdr_drives_signalable_fences_to_max(no64):
    sim, mem, table = make(no64=no64, trace=ListSink())
    f1 = table.create(P1, D1)  # created by the reset device
    f2 = table.create(P1, D2)  # D1 queued a signal on it
    table.register_signaler(f2, D1)
    f3 = table.create(P1, D1, flags={"NoSignalMaxValueOnTdr"})
    f4 = table.create(P1, D2)  # nothing to do with D1
    log = []
    for f in (f1, f2, f3, f4):
        queue_waiter(sim, table, f, 1_000, log, f)
    sim.at(70, lambda: log.append(("hit", table.signal_max_on_tdr([D1, D3]))))
    sim.run()
    assert log[:2] == [(f1, 70, SUCCESS), (f2, 70, SUCCESS)]
    assert log[2] == ("hit", [f1, f2])
    assert f1.value == f2.value == U64_MAX
    assert f3.value == 0 and f4.value == 0
    assert table.pending_waits(f3) == 1 and table.pending_waits(f4) == 1
    if no64:
        assert mem.read_u32(f1.cpu_va) == U32_MAX and mem.read_u64(f1.cpu_va) == U32_MAX
    else:
        assert mem.read_u64(f1.cpu_va) == U64_MAX
    assert [e["source"] for e in table.trace.of("FenceSignal")] == ["tdr", "tdr"]
    # a later scan leaves the max value alone, and a stale GPU write cannot lower it
    table.scan([f1])
    assert f1.value == U64_MAX
    if no64:
        mem.write_u32(f1.cpu_va, 5)
    else:
        mem.write_u64(f1.cpu_va, 5)
    table.scan([f1])
    assert f1.value == U64_MAX
    table.signal_queued(f1, 50, D1)  # ignored
    assert f1.value == U64_MAX


def test_queued_signal_makes_the_device_a_signaler():
    _, _, table = make()
    f = table.create(P1, D1)
    table.signal_queued(f, 1, D2)
    assert table.signal_max_on_tdr([D2]) == [f]
    assert table.signal_max_on_tdr([D3]) == []


# -- rule 102 and the flags -----------------------------------------------------------------------
@pytest.mark.rule(102)
def test_rule_102_flag_validation():
    _, _, table = make()
    err = raises(INVALID_PARAMETER, table.create, P1, D1, flags=("NoSignal", "NoWait"))
    assert "NoSignal" in str(err) and "NoWait" in str(err)
    err = raises(INVALID_PARAMETER, table.create, P1, D1, flags=("NtSecuritySharing",))
    assert "NtSecuritySharing" in str(err) and "Shared" in str(err)
    raises(INVALID_PARAMETER, table.create, P1, D1, flags=("Bogus",))
    raises(INVALID_PARAMETER, table.create, P1, D1, flags=("SignalByKmd",))
    raises(INVALID_PARAMETER, table.create, P1, D1, initial=-1)
    f = table.create(P1, D1, flags=("NtSecuritySharing", "Shared", "TopOfPipeline", "CrossAdapter"))
    assert f.flags == frozenset({"NtSecuritySharing", "Shared", "TopOfPipeline", "CrossAdapter"})
    assert table.stats["created"] == 1 and table.stats["rejected"] == 5


def test_nosignal_and_nowait_deny_access():
    _, _, table = make()
    ns = table.create(P1, D1, flags=("NoSignal",))
    nw = table.create(P1, D1, flags=("NoWait",))
    raises(ACCESS_DENIED, table.signal_cpu, [ns], [1])
    raises(ACCESS_DENIED, table.signal_queued, ns, 1, D1)
    raises(ACCESS_DENIED, table.wait_cpu, [nw], [1])
    raises(ACCESS_DENIED, table.wait_queue, nw, 1, lambda s: None)
    table.wait_queue(ns, 1, lambda s: None)  # waiting on NoSignal is fine
    table.signal_cpu([nw], [1])
    assert ns.value == 0 and nw.value == 1


@pytest.mark.rule(100)
def test_addresses_mapping_and_open():
    calls = []

    def map_gpu(fence, process):
        calls.append((fence.handle, process))
        return 0x7000_0000 + len(calls) * 0x1000

    _, _, table = make(no64=True, map_gpu=map_gpu)
    f = table.create(P1, D1, flags=("Shared",))
    private = table.create(P1, D1)
    cpu_only = table.create(P1, D1, flags=("NoGPUAccess",))
    assert all(x.cpu_va % 8 == 0 for x in (f, private, cpu_only))  # rule 100
    assert f.bits == 32 and cpu_only.bits == 64 and cpu_only.gpu_va == {}
    table.open(f, P2, D2)
    table.open(f, P2, D3)  # already mapped in P2
    assert f.gpu_va == {P1: 0x7000_1000, P2: 0x7000_3000}
    assert calls == [(f.handle, P1), (private.handle, P1), (f.handle, P2)]
    assert f.devices == {D1, D2, D3} and f.signalers == {D1}
    raises(ACCESS_DENIED, table.open, private, P2, D2)
    table.open(private, P1, D2)  # same process, another device


@pytest.mark.rule(97)
def test_only_the_kernel_writes_and_only_on_changes_it_accepts():
    # Rule 97: every store to a fence's memory comes from the table (create, signal, TDR).
    _, mem, table = make()
    f = table.create(P1, D1)
    assert mem.stores == 1
    table.signal_cpu([f], [4])
    raises(INVALID_PARAMETER, table.signal_cpu, [f], [2])
    table.signal_queued(f, 1, D1)
    table.wait_cpu([f], [9])
    table.scan()
    assert mem.stores == 2


# -- trace ----------------------------------------------------------------------------------------
def test_trace_events():
    trace = ListSink()
    sim, _, table = make(trace=trace)
    f = table.create(P1, D1)
    log = []

    def proc():
        yield 100
        status = yield table.wait_cpu([f], [2])
        log.append(status)

    sim.process(proc())
    sim.at(150, lambda: queue_waiter(sim, table, f, 3, log))
    sim.at(200, lambda: table.signal_cpu([f], [2]))
    sim.at(300, lambda: table.signal_queued(f, 3, D1))
    token = table.wait_queue(f, 9, lambda s: log.append(s))
    sim.at(400, token.cancel)
    sim.run()
    events = [e for e in trace.events if e["event"].startswith("Fence")]
    h = f.handle
    assert events == [
        {"t": 0, "event": "FenceWait", "fence": h, "value": 9, "waiter": "queue"},
        {"t": 100, "event": "FenceWait", "fence": h, "value": 2, "waiter": "cpu"},
        {"t": 150, "event": "FenceWait", "fence": h, "value": 3, "waiter": "queue"},
        {"t": 200, "event": "FenceSignal", "fence": h, "value": 2, "source": "cpu", "rewind": 0},
        {"t": 200, "event": "FenceWaitDone", "fence": h, "value": 2, "waiter": "cpu", "status": "STATUS_SUCCESS",
         "waited_ns": 100},
        {"t": 300, "event": "FenceSignal", "fence": h, "value": 3, "source": "queue", "rewind": 0},
        {"t": 300, "event": "FenceWaitDone", "fence": h, "value": 3, "waiter": "queue", "status": "STATUS_SUCCESS",
         "waited_ns": 150},
        {"t": 400, "event": "FenceWaitDone", "fence": h, "value": 9, "waiter": "queue", "status": "STATUS_CANCELLED",
         "waited_ns": 400},
    ]
    assert log == [SUCCESS, (None, 300, SUCCESS)]
    assert token.done and token.status == NTSTATUS.STATUS_CANCELLED
    assert table.pending_waits(f) == 0


# -- many waiters ---------------------------------------------------------------------------------
def test_thousands_of_waiters_release_in_target_then_registration_order():
    sim, _, table = make()
    f = table.create(P1, D1)
    rng = random.Random(7)
    targets = [rng.randrange(1, 200) for _ in range(5_000)]
    order = []
    tokens = [table.wait_queue(f, t, lambda s, i=i: order.append(i)) for i, t in enumerate(targets)]
    cancelled = set(range(0, 5_000, 3))
    for i in cancelled:
        tokens[i].cancel()
    assert table.pending_waits(f) == 5_000 - len(cancelled)
    for v in range(0, 201, 10):
        table.signal_cpu([f], [v])
    expected = sorted((i for i in range(5_000) if i not in cancelled), key=lambda i: (targets[i], i))
    assert order == expected
    assert table.pending_waits(f) == 0 and len(f._heap) == 0


def test_callback_may_register_and_signal_reentrantly():
    sim, _, table = make()
    f = table.create(P1, D1)
    g = table.create(P1, D1)
    order = []

    def on_f(status):
        order.append(("f", f.value))
        table.signal_queued(g, 1, D1)  # a queue unblocked by f runs and signals g
        table.wait_queue(f, 2, lambda s: order.append(("f2", f.value)))

    table.wait_queue(f, 1, on_f)
    table.wait_queue(g, 1, lambda s: order.append(("g", g.value)))
    table.signal_cpu([f], [2])
    assert order == [("f", 2), ("g", 1), ("f2", 2)]


# -- property -------------------------------------------------------------------------------------
_OPS = st.one_of(
    st.tuples(st.sampled_from(["sig", "rew", "queue", "gpu"]), st.integers(0, 40)),
    st.tuples(st.just("wq"), st.integers(0, 45)),
    st.tuples(st.just("wc"), st.integers(0, 45), st.one_of(st.none(), st.integers(0, 6))),
)


@pytest.mark.rule(98)
@settings(max_examples=150, deadline=None)
@given(ops=st.lists(_OPS, max_size=40), no64=st.booleans(), initial=st.integers(0, 10))
def test_property_monotonic_value_and_exactly_once_release(ops, no64, initial):
    # 32-bit fences sit just below the wrap so that the offsets 0..45 cross it.
    base = 2**32 - 25 if no64 else 0
    sim, mem, table = make(no64=no64)
    f = table.create(P1, D1, initial=base + initial)
    expected = base + initial
    history = []  # (time, value after the op, accepted rewind down)
    waiters = []  # [target, registered at, timeout, releases]

    def run_op(i):
        nonlocal expected
        op = ops[i]
        kind = op[0]
        before = f.value
        rewound = False
        if kind in ("sig", "rew"):
            v = base + op[1]
            ok = v >= expected or (kind == "rew" and v >= base + initial)
            try:
                table.signal_cpu([f], [v], rewind=kind == "rew")
            except ApiError as e:
                assert not ok and e.status == INVALID_PARAMETER
            else:
                assert ok
                rewound = v < before
                expected = v
        elif kind == "queue":
            v = base + op[1]
            table.signal_queued(f, v, D1)
            expected = max(expected, v)
        elif kind == "gpu":
            v = base + op[1]
            if no64:
                mem.write_u32(f.cpu_va, v & U32_MAX)
            else:
                mem.write_u64(f.cpu_va, v)
            table.scan()
            if table.pending_waits(f) == 0:
                table.scan([f])
            expected = max(expected, v)
        else:
            w = [base + op[1], sim.now, op[2] if kind == "wc" else None, []]
            waiters.append(w)
            if kind == "wq":
                table.wait_queue(f, w[0], lambda s: w[3].append((sim.now, s)))
            else:
                ev = table.wait_cpu([f], [w[0]], timeout=None if op[2] is None else op[2] * 10 + 5)
                ev.add_callback(lambda s: w[3].append((sim.now, s)))
        assert f.value == expected
        assert f.value >= before or rewound
        history.append((sim.now, f.value))

    for i in range(len(ops)):
        sim.at(i * 10, run_op, i)
    sim.run()

    never = 0
    for target, start, timeout, releases in waiters:
        hit = next((t for t, v in history if t >= start and v >= target), None)
        deadline = None if timeout is None else start + timeout * 10 + 5
        if deadline is not None and (hit is None or hit > deadline):
            assert releases == [(deadline, TIMEOUT)]
        elif hit is None:
            assert releases == []
            never += 1
        else:
            assert releases == [(hit, SUCCESS)]
    assert table.pending_waits(f) == never
