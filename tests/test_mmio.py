"""The GPU's register interface (gpu/mmio.py, docs/gpu-programming.md): each operation does what
its docstring says on a real GPU, with exact values; the reference driver reaches the GPU through
nothing else (a strict proxy over every example scenario, and a static check of src/wddmsim/kmd)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from wddmsim.gpu import commands as C
from wddmsim.gpu import mmio as M
from wddmsim.gpu.device import APERTURE_BASE, BAR_BASE, GPU, LOCAL_BASE, EngineSpec
from wddmsim.gpu.display import VSYNC_CAUSE_SHIFT
from wddmsim.gpu.engine import PREEMPT_CAUSE_SHIFT, EngineFault
from wddmsim.gpu.scheduler import SUSPEND_CAUSE_SHIFT, GpuSchedulerError
from wddmsim.gpu.interrupts import FAULT_BIT, SPURIOUS_BIT
from wddmsim.gpu.memory import PhysicalMemory
from wddmsim.gpu.mmu import pte
from wddmsim.sim import Simulator

ROOT = Path(__file__).parents[1]
SRC = ROOT / "src" / "wddmsim"
KMD = SRC / "kmd"
MS = 1_000_000
RING = 0x10000
SLOT = 0x8000  # a fence slot
BUF = 0x20000  # a DMA buffer


def make():
    """A GPU with an interval-preempting 3D engine and a copy engine, VRAM and an aperture, two
    displays; no interrupt handler, so causes stay in the status register until acknowledged."""
    sim = Simulator()
    gpu = GPU(sim,
              [EngineSpec("3D", "3d", command_cost=100, preemption="interval", preemption_interval=50_000),
               EngineSpec("Copy", "copy")],
              [("VRAM", "memory", 1 << 20, True), ("Ap", "aperture", 1 << 20, False)],
              display_refresh_hz=[60.0, 30.0], max_queued_flips=2)
    return sim, gpu, gpu.mmio


def ring(hw, engine, packets: bytes, at: int = 0) -> int:
    """Write ``packets`` into a ring programmed at RING from byte ``at`` and ring the doorbell."""
    hw.memory.write(RING + at, packets)
    wptr = at + len(packets)
    hw.doorbell(engine, wptr)
    return wptr


# -- the object ---------------------------------------------------------------------------------------------------------
def test_gpu_builds_one_mmio_with_slots_and_no_other_state():
    sim, gpu, hw = make()
    assert gpu.mmio is hw and isinstance(hw, M.Mmio)
    assert not hasattr(hw, "__dict__")
    with pytest.raises(AttributeError):
        hw.gpu = gpu  # nothing can be hung on it
    with pytest.raises(AttributeError):
        hw.memory = None  # a read-only view
    assert repr(hw) == "<Mmio 2 engines, 2 segments, 2 displays>"


def test_every_public_member_is_documented_in_its_docstring_and_the_manual():
    manual = (ROOT / "docs" / "gpu-programming.md").read_text()
    members = sorted(n for n in dir(M.Mmio) if not n.startswith("_"))
    assert members == sorted([
        "engine_count", "engine_info", "segments", "display_count", "flip_queue_depth", "memory",
        "irq_status", "irq_ack", "program_ring", "rptr", "doorbell", "reset_ring",
        "status", "preempt", "preempt_state", "reset_engine", "fault", "fault_ack", "map_aperture", "scanout",
        "set_scanout_address", "vsync_interrupt",
        "plane_count", "set_plane_address", "plane_address", "plane_enabled", "plane_status", "plane_status_ack",
        "hw_flip_queue_submit", "hw_flip_queue_depth", "hw_flip_queue_pending", "hw_flip_queue_cancel",
        "hw_flip_queue_log", "hw_flip_queue_interrupt_target",
        "sched_bands", "sched_create_context", "sched_set_context", "sched_destroy_context",
        "sched_create_queue", "sched_destroy_queue", "sched_doorbell", "sched_rptr", "sched_suspend",
        "sched_resume", "sched_pop_suspend", "sched_reset", "sched_restart", "sched_running_queue",
        "sched_pop_native_signal",
    ])
    for name in members:
        assert (getattr(M.Mmio, name).__doc__ or "").strip(), name
        assert f"`{name}" in manual, name
    for name in M.__all__:
        assert name in manual, name


# -- identification -----------------------------------------------------------------------------------------------------
def test_identification_registers():
    sim, gpu, hw = make()
    assert hw.engine_count == 2
    assert hw.engine_info(0) == M.EngineInfo("3d", "interval", 50_000, "3D")
    assert hw.engine_info(1) == M.EngineInfo(kind="copy", preemption="dma_buffer", preemption_interval=100_000,
                                             name="Copy")
    assert hw.segments == (M.SegmentInfo(LOCAL_BASE, 1 << 20, False, True, BAR_BASE),
                           M.SegmentInfo(APERTURE_BASE, 1 << 20, True, False, 0))
    assert hw.segments[1].aperture and not hw.segments[0].aperture and hw.segments[0].cpu_base == 0x80_0000_0000
    assert hw.display_count == 2 and hw.flip_queue_depth(0) == hw.flip_queue_depth(1) == 2
    # Records are made once (no allocation per read) and cannot be written.
    assert hw.segments is hw.segments and hw.engine_info(0) is hw.engine_info(0)
    with pytest.raises(AttributeError):
        hw.segments[0].base = 0
    with pytest.raises(AttributeError):
        hw.engine_info(0).kind = "copy"


def test_memory_is_the_gpus_physical_memory():
    sim, gpu, hw = make()
    assert hw.memory is gpu.memory and isinstance(hw.memory, PhysicalMemory)
    hw.memory.write_u64(0x5000, 0x1122334455667788)
    assert gpu.memory.read_u32(0x5004) == 0x11223344


# -- interrupts ---------------------------------------------------------------------------------------------------------
def test_interrupt_bit_layout():
    assert (M.FENCE_SHIFT, M.PREEMPT_SHIFT, M.VSYNC_SHIFT, M.SUSPEND_SHIFT) == (0, 64, 96, 128)
    assert (M.PREEMPT_SHIFT, M.VSYNC_SHIFT, M.SUSPEND_SHIFT) == (PREEMPT_CAUSE_SHIFT, VSYNC_CAUSE_SHIFT,
                                                                SUSPEND_CAUSE_SHIFT)
    assert M.FAULT_BIT == FAULT_BIT == 1 << 62 and M.UNKNOWN_BIT == SPURIOUS_BIT == 1 << 63
    assert M.fence_bit(0) == 1 and M.fence_bit(3) == 8
    assert M.preempt_bit(1) == 1 << 65 and M.vsync_bit(1) == 1 << 97 and M.suspend_bit(2) == 1 << 130
    assert M.PAGE_SIZE == 4096 and M.GRANULARITIES == ("none", "dma_buffer", "primitive", "interval", "instruction")


def test_status_read_and_write_one_to_clear_ack():
    sim, gpu, hw = make()
    assert hw.irq_status() == 0
    gpu.irq.assert_cause(M.UNKNOWN_BIT | M.fence_bit(1))  # the hardware raising two causes
    assert hw.irq_status() == M.UNKNOWN_BIT | 2
    assert hw.irq_status() == M.UNKNOWN_BIT | 2  # reading clears nothing
    hw.irq_ack(M.fence_bit(1) | M.fence_bit(0))  # a bit that is not pending is ignored
    assert hw.irq_status() == M.UNKNOWN_BIT
    hw.irq_ack(hw.irq_status())
    assert hw.irq_status() == 0


# -- rings --------------------------------------------------------------------------------------------------------------
def test_ring_doorbell_runs_a_fence_and_raises_the_engines_fence_bit():
    sim, gpu, hw = make()
    hw.program_ring(1, RING, 4096)
    assert hw.rptr(1) == 0 and hw.status(1) == M.IDLE
    wptr = ring(hw, 1, C.fence(SLOT, 7, interrupt=True))
    assert wptr == 20 and hw.status(1) == M.BUSY and hw.rptr(1) == 20  # fetched at once, lands at 100
    sim.run()
    assert sim.now == 100 and hw.memory.read_u64(SLOT) == 7
    assert hw.irq_status() == M.fence_bit(1) and hw.status(1) == M.IDLE and hw.rptr(1) == 20
    hw.irq_ack(M.fence_bit(1))
    assert hw.irq_status() == 0
    # The next submission continues at the write pointer.
    ring(hw, 1, C.work(1000) + C.fence(SLOT, 8, interrupt=True), at=wptr)
    sim.run()
    assert sim.now == 100 + 1200 and hw.memory.read_u64(SLOT) == 8 and hw.rptr(1) == 52


def test_ring_registers_refuse_what_hardware_refuses():
    sim, gpu, hw = make()
    hw.program_ring(0, RING, 4096)
    with pytest.raises(EngineFault, match="outside the ring"):
        hw.doorbell(0, 4096)
    with pytest.raises(EngineFault, match="outside the ring"):
        hw.doorbell(0, 6)
    with pytest.raises(ValueError, match="dword aligned"):
        hw.program_ring(0, RING, 32)
    ring(hw, 0, C.work(1000) + C.fence(SLOT, 1, interrupt=True))
    with pytest.raises(EngineFault, match="reprogrammed while running"):
        hw.program_ring(0, RING, 4096)
    with pytest.raises(EngineFault, match="ring reset while running"):
        hw.reset_ring(0)


# -- preemption ---------------------------------------------------------------------------------------------------------
def test_preemption_request_stop_save_registers_ring_reset_and_resume():
    sim, gpu, hw = make()
    hw.program_ring(0, RING, 4096)
    hw.memory.write(BUF, C.work(200_000) + C.work(10))  # 24 bytes, two commands
    ring(hw, 0, C.indirect(BUF, 24) + C.fence(SLOT, 1, interrupt=True))
    sim.run(until=60_000)
    hw.preempt(0)
    assert hw.status(0) == M.BUSY  # it stops at its granularity: the next 50 us of the WORK
    sim.run()
    # The WORK began at 200 and stops at 200 + 2 x 50 us, owing 100 us; the next command is at 12.
    assert sim.now == 100_200 and hw.status(0) == M.PREEMPTED and hw.irq_status() == M.preempt_bit(0)
    saved = hw.preempt_state(0)
    assert saved == (BUF, 12, 24, 100_000) and saved.address_space == 0 and hw.preempt_state(0) is saved
    assert hw.memory.read_u64(SLOT) == 0 and hw.rptr(0) == 36
    hw.irq_ack(M.preempt_bit(0))
    hw.reset_ring(0)
    assert (hw.status(0), hw.preempt_state(0), hw.rptr(0)) == (M.IDLE, None, 0)
    # Resume: the WORK owed, then INDIRECT from the saved offset.
    buf, pc, end, owed = saved
    ring(hw, 0, C.work(owed) + C.indirect(buf + pc, end - pc) + C.fence(SLOT, 1, interrupt=True))
    sim.run()
    assert sim.now == 100_200 + 100 + 100_000 + 100 + 110 + 100 and hw.memory.read_u64(SLOT) == 1
    assert hw.irq_status() == M.fence_bit(0) and hw.status(0) == M.IDLE
    assert gpu.engines[0].busy_ns == 200_010 + 6 * 100  # the work is conserved


def test_an_idle_engine_stops_at_once_and_a_doorbell_restarts_a_stopped_ring():
    sim, gpu, hw = make()
    hw.program_ring(1, RING, 4096)
    hw.preempt(1)
    assert hw.status(1) == M.PREEMPTED and hw.preempt_state(1) is None
    sim.run()
    assert hw.irq_status() == M.preempt_bit(1)
    ring(hw, 1, C.fence(SLOT, 3, interrupt=True))
    assert hw.status(1) == M.BUSY
    sim.run()
    assert hw.status(1) == M.IDLE and hw.memory.read_u64(SLOT) == 3


def test_dma_buffer_granularity_finishes_the_buffer_and_its_fence():
    sim, gpu, hw = make()
    hw.program_ring(1, RING, 4096)
    hw.memory.write(BUF, C.work(5000))
    two = C.indirect(BUF, 12) + C.fence(SLOT, 1, interrupt=True) + C.indirect(BUF, 12) + C.fence(SLOT, 2, interrupt=True)
    ring(hw, 1, two)
    sim.run(until=1000)
    hw.preempt(1)
    sim.run()
    assert hw.status(1) == M.PREEMPTED and hw.memory.read_u64(SLOT) == 1 and hw.preempt_state(1) is None
    assert hw.irq_status() == M.fence_bit(1) | M.preempt_bit(1) and hw.rptr(1) == 36  # the second is not fetched


# -- faults and reset ---------------------------------------------------------------------------------------------------
def test_a_page_fault_latches_a_record_until_acknowledged():
    sim, gpu, hw = make()
    root = 0x200000  # a root table of invalid entries
    hw.program_ring(0, RING, 4096)
    ring(hw, 0, C.set_address_space(root) + C.fence(0x1000, 1))
    assert hw.fault(0) is None
    sim.run()
    assert hw.status(0) == M.FAULTED and hw.irq_status() == M.FAULT_BIT
    rec = hw.fault(0)
    assert rec == M.FaultRecord(address=0x1000, fatal=False, write=True, level=2, root=root)
    assert hw.fault(0) is rec and hw.fault(1) is None  # held, read after read
    hw.irq_ack(M.FAULT_BIT)
    assert hw.fault(0) is rec  # acknowledging the interrupt does not release the record
    hw.fault_ack(0)
    assert hw.fault(0) is None and hw.status(0) == M.FAULTED  # the engine stays stopped
    hw.fault_ack(0)  # nothing latched: nothing happens
    hw.reset_engine(0)
    assert hw.status(0) == M.IDLE and hw.rptr(0) == 0 and gpu.engines[0].address_space == 0
    # A read-only page: the walk reaches the leaf.
    l1, leaf = 0x201000, 0x202000
    hw.memory.write_u64(root, pte(l1))
    hw.memory.write_u64(l1, pte(leaf))
    hw.memory.write_u64(leaf + 8 * 1, pte(0x300000, read_only=True))
    ring(hw, 0, C.set_address_space(root) + C.fence(0x1008, 1))
    sim.run()
    assert hw.fault(0) == (0x1008, False, True, 0, root)


def test_an_injected_fatal_fault_and_a_reset_clear_the_latch():
    sim, gpu, hw = make()
    hw.program_ring(1, RING, 4096)
    gpu.engines[1].fault_on_buffer(BUF, 0xDEAD000, fatal=True)  # the test injects it
    hw.memory.write(BUF, C.work(10))
    ring(hw, 1, C.indirect(BUF, 12) + C.fence(SLOT, 1, interrupt=True))
    sim.run()
    assert hw.status(1) == M.FAULTED and hw.fault(1) == (0xDEAD000, True, False, None, 0)
    assert gpu.faults == [(100, "Copy", "page fault at 0xdead000")]
    hw.reset_engine(1)
    assert hw.fault(1) is None and hw.status(1) == M.IDLE
    assert hw.irq_status() == M.FAULT_BIT  # a reset does not clear pending causes


def test_a_hung_engine_reads_busy_answers_no_preemption_and_resets():
    sim, gpu, hw = make()
    hw.program_ring(0, RING, 4096)
    ring(hw, 0, C.work(1000) + C.fence(SLOT, 1, interrupt=True))
    sim.at(50, gpu.engines[0].hang)  # the test hangs it
    sim.run(until=10 * MS)
    assert hw.status(0) == M.BUSY and hw.memory.read_u64(SLOT) == 0
    hw.preempt(0)
    sim.run(until=20 * MS)
    assert hw.status(0) == M.BUSY and hw.irq_status() == 0 and hw.preempt_state(0) is None
    hw.reset_engine(0)
    assert hw.status(0) == M.IDLE and hw.rptr(0) == 0
    ring(hw, 0, C.fence(SLOT, 2, interrupt=True))
    sim.run()
    assert hw.memory.read_u64(SLOT) == 2 and hw.irq_status() == M.fence_bit(0)


# -- the GART and display ---------------------------------------------------------------------------------------------
def test_map_aperture_programs_the_gart():
    sim, gpu, hw = make()
    ap = hw.segments[1].base
    hw.map_aperture(ap + 4096, 0x300000, 2 * 4096)
    hw.program_ring(1, RING, 4096)
    ring(hw, 1, C.fence(ap + 4096 + 8, 5) + C.fence(ap + 2 * 4096, 6, interrupt=True))
    sim.run()
    assert hw.memory.read_u64(0x300008) == 5 and hw.memory.read_u64(0x301000) == 6 and hw.status(1) == M.IDLE
    with pytest.raises(ValueError, match="page aligned"):
        hw.map_aperture(ap + 8, 0x300000, 4096)
    hw.map_aperture(ap + 4096, 0x400000, 4096)  # remapped
    assert gpu.translate(ap + 4096 + 16) == 0x400010


def test_scanout_follows_flips_and_a_vsync_latch_raises_the_vsync_bit():
    sim, gpu, hw = make()
    # At power-on every source shows the firmware's framebuffer at the start of local memory.
    assert hw.scanout(0) == hw.scanout(1) == LOCAL_BASE
    hw.program_ring(0, RING, 4096)
    wptr = ring(hw, 0, C.flip(1, 0x440000, 0))  # immediate: no vsync, no interrupt
    sim.run()
    assert hw.scanout(1) == 0x440000 and hw.scanout(0) == LOCAL_BASE and hw.irq_status() == 0
    ring(hw, 0, C.flip(0, 0x550000, 1), at=wptr)
    sim.run()
    assert sim.now == 16_666_667 and hw.scanout(0) == 0x550000 and hw.irq_status() == M.vsync_bit(0)


def test_the_vsync_interrupt_register_raises_the_cause_at_every_vsync_while_set():
    sim, gpu, hw = make()
    seen = []
    gpu.irq.connect(lambda _msg: (seen.append((sim.now, hw.irq_status())), hw.irq_ack(hw.irq_status()), True)[-1])
    sim.run(until=20_000_000)
    assert seen == [] and sim.pending == 0  # cleared at power-on: nothing happens, nothing is scheduled
    hw.vsync_interrupt(0, True)  # 60 Hz source: vsyncs at k x 16 666 667 ns
    hw.vsync_interrupt(0, True)  # idempotent: still one tick per vsync
    hw.vsync_interrupt(1, True)  # 30 Hz source: k x 33 333 333 ns
    sim.run(until=70_000_000)
    assert seen == [
        (33_333_333, M.vsync_bit(1)), (33_333_334, M.vsync_bit(0)), (50_000_001, M.vsync_bit(0)),
        (66_666_666, M.vsync_bit(1)), (66_666_668, M.vsync_bit(0))]
    hw.vsync_interrupt(0, False)
    hw.vsync_interrupt(1, False)
    before = len(seen)
    sim.run(until=500_000_000)
    assert len(seen) == before and sim.pending == 0  # cleared: no cause and no timer left


# -- the hardware scheduler's mailbox -----------------------------------------------------------------------------------
Q1, Q2 = 0x100000, 0x110000  # queue rings


def sched():
    sim, gpu, hw = make()
    hw.sched_bands(0, [0] * 4, [MS] * 4, [0] * 4, 10)
    return sim, gpu, hw, gpu.hw_scheduler(0)


def queue_ring(hw, qid, base, packets, at=0):
    hw.memory.write(base + at, packets)
    hw.sched_doorbell(0, qid, at + len(packets))
    return at + len(packets)


def test_first_mailbox_command_gives_the_ring_to_the_scheduler():
    sim, gpu, hw, hs = sched()
    with pytest.raises(EngineFault, match="hardware scheduler"):
        hw.program_ring(0, RING, 4096)
    with pytest.raises(ValueError, match="normal_share_pct=60"):
        hw.sched_bands(0, [0] * 4, [MS] * 4, [0] * 4, 60)
    assert hs.quantum == [MS] * 4 and hs.normal_share_pct == 10


def test_queue_doorbell_rptr_and_running_queue():
    sim, gpu, hw, hs = sched()
    hw.sched_create_context(0, 1, "p")
    hw.sched_create_queue(0, 1, 11, Q1, 0x1000)
    assert hw.sched_rptr(0, 11) == 0 and hw.sched_running_queue(0) is None
    wptr = queue_ring(hw, 11, Q1, C.work(1000) + C.fence(SLOT, 1, interrupt=True))
    assert hw.sched_rptr(0, 11) == 0  # the scheduler decides at this instant, after the doorbell
    sim.run(until=500)
    assert hw.sched_running_queue(0) == 11 and hw.sched_rptr(0, 11) == wptr == 32
    sim.run()
    # WORK: 100 ns of command cost + 1000; FENCE: 100.
    assert sim.now == 1200 and hw.memory.read_u64(SLOT) == 1 and hw.irq_status() == M.fence_bit(0)
    assert hw.sched_running_queue(0) is None and hw.sched_rptr(0, 11) == 32
    assert hs.log == [(0, 1, "running"), (1200, 1, "idle")]


def test_set_context_band_decides_who_runs_first():
    sim, gpu, hw, hs = sched()
    for cid, base in ((1, Q1), (2, Q2)):
        hw.sched_create_context(0, cid, f"p{cid}")
        hw.sched_create_queue(0, cid, cid, base, 0x1000)
    hw.sched_set_context(0, 2, 2)  # FOCUS
    queue_ring(hw, 1, Q1, C.work(1000) + C.fence(SLOT, 1, interrupt=True))
    queue_ring(hw, 2, Q2, C.work(1000) + C.fence(SLOT + 8, 1, interrupt=True))
    sim.run()
    assert [(t, c) for t, c, s in hs.log if s == "running"] == [(0, 2), (1200, 1)]
    with pytest.raises(ValueError, match="band=4"):
        hw.sched_set_context(0, 1, 4)


def test_suspend_pop_resume():
    sim, gpu, hw, hs = sched()
    hw.sched_create_context(0, 1, "p")
    hw.sched_create_queue(0, 1, 11, Q1, 0x1000)
    assert hw.sched_pop_suspend(0) is None
    wptr = queue_ring(hw, 11, Q1, C.work(200_000) + C.fence(SLOT, 1, interrupt=True))
    sim.run(until=400)
    assert hw.sched_suspend(0, 1, 77) is False  # on the engine: preempted, answered at the stop
    sim.run(until=50_099)
    assert hw.irq_status() == 0 and hw.sched_pop_suspend(0) is None
    sim.run(until=50_100)  # the WORK began at 100; the engine stops 50 us into it
    assert hw.irq_status() == M.suspend_bit(0) and hw.sched_pop_suspend(0) == (1, 77)
    assert hw.sched_pop_suspend(0) is None and hs.state(1) == "suspended"
    assert hw.sched_suspend(0, 1, 78) is True  # already suspended
    assert hw.sched_pop_suspend(0) is None
    sim.run(until=MS)
    assert hw.memory.read_u64(SLOT) == 0  # nothing runs while suspended
    hw.sched_resume(0, 1)
    sim.run()
    assert hw.memory.read_u64(SLOT) == 1 and hw.sched_rptr(0, 11) == wptr
    assert sim.now == MS + 150_000 + 100  # the WORK it still owed, then the FENCE


def test_reset_answers_the_contexts_hit_and_restart():
    sim, gpu, hw, hs = sched()
    for cid, base in ((1, Q1), (2, Q2)):
        hw.sched_create_context(0, cid, f"p{cid}")
        hw.sched_create_queue(0, cid, cid, base, 0x1000)
    w1 = queue_ring(hw, 1, Q1, C.work(10_000) + C.fence(SLOT, 1, interrupt=True))
    queue_ring(hw, 2, Q2, C.work(10_000) + C.fence(SLOT + 8, 1, interrupt=True))
    sim.run(until=500)
    assert hw.sched_running_queue(0) == 1
    assert hw.sched_reset(0) == [1]
    assert hw.sched_running_queue(0) is None and hw.sched_rptr(0, 1) == w1  # its work is gone
    sim.run(until=MS)
    assert hw.memory.read_u64(SLOT + 8) == 0  # nothing runs until the restart
    hw.sched_restart(0)
    sim.run()
    assert (hw.memory.read_u64(SLOT), hw.memory.read_u64(SLOT + 8)) == (0, 1) and sim.now == MS + 10_200
    # A reset of the whole GPU answers every context with work queued.
    queue_ring(hw, 1, Q1, C.work(10_000), at=w1)
    assert hw.sched_reset(0, everything=True) == [1]
    hw.sched_restart(0)
    hw.sched_restart(0)  # without a reset before it: nothing


def test_destroy_is_refused_on_the_engine():
    sim, gpu, hw, hs = sched()
    hw.sched_create_context(0, 1, "p")
    hw.sched_create_queue(0, 1, 11, Q1, 0x1000)
    with pytest.raises(ValueError, match="context 1 exists"):
        hw.sched_create_context(0, 1, "p")
    queue_ring(hw, 11, Q1, C.work(1000))
    sim.run(until=500)
    with pytest.raises(GpuSchedulerError, match="queue 11 is on 3D"):
        hw.sched_destroy_queue(0, 11)
    with pytest.raises(GpuSchedulerError, match="context 1 is running on 3D"):
        hw.sched_destroy_context(0, 1)
    sim.run()
    hw.sched_destroy_queue(0, 11)
    with pytest.raises(KeyError):
        hw.sched_rptr(0, 11)
    hw.sched_destroy_context(0, 1)
    assert hs.contexts() == []


def test_a_fault_under_the_scheduler_names_the_running_queue():
    sim, gpu, hw, hs = sched()
    hw.sched_create_context(0, 1, "p")
    hw.sched_create_queue(0, 1, 11, Q1, 0x1000)
    queue_ring(hw, 11, Q1, C.work(100) + C.fence(hw.segments[1].base, 1))  # an unmapped aperture page
    sim.run()
    assert hw.status(0) == M.FAULTED and hw.irq_status() == M.FAULT_BIT
    assert hw.sched_running_queue(0) == 11 and hw.fault(0) == (0, False, False, None, 0)
    hw.fault_ack(0)
    assert hw.sched_reset(0) == [1] and hw.status(0) == M.IDLE and hw.fault(0) is None


# -- the reference driver uses nothing else ---------------------------------------------------------------------------
PUBLIC = frozenset(n for n in dir(M.Mmio) if not n.startswith("_"))
MEMORY_PUBLIC = frozenset(n for n in dir(PhysicalMemory) if not n.startswith("_"))


class HardwareAccess(Exception):
    """The driver touched the GPU outside its register interface (not an AttributeError, so that
    no getattr() default can hide it)."""


def strict(real, allowed, seen: set, bad: list, wrap=None):
    """A proxy of ``real`` that serves only ``allowed`` attributes (``wrap``: name -> proxy maker)."""

    class Strict:
        __slots__ = ()

        def __getattribute__(self, name):
            if name not in allowed:
                bad.append(name)
                raise HardwareAccess(f"{type(real).__name__}.{name} is not part of the interface")
            seen.add(name)
            value = getattr(real, name)
            return wrap[name](value) if wrap and name in wrap else value

        def __setattr__(self, name, value):
            bad.append(f"{name}=")
            raise HardwareAccess(f"{type(real).__name__}.{name} written")

    return Strict()


from example_files import EXAMPLES, expected_bugcheck  # noqa: E402


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: Path(p).stem)
def test_every_example_runs_with_a_driver_that_sees_only_mmio(path):
    from wddmsim.ddi.interface import DeviceInfo
    from wddmsim.kmd import ReferenceDriver
    from wddmsim.scenario import load_scenario
    from wddmsim.runner.system import System

    seen: set = set()
    bad: list = []

    def guarded(info):
        mem = lambda m: strict(m, MEMORY_PUBLIC, set(), bad)  # noqa: E731
        return ReferenceDriver(DeviceInfo(gpu=strict(info.gpu, PUBLIC, seen, bad, {"memory": mem}),
                                          memory=mem(info.memory), settings=info.settings))

    sc = load_scenario(path)
    system = System(sc, driver=guarded)
    result = system.run()
    code = expected_bugcheck(path)
    assert bad == [] and (result.bugcheck is None if code is None else result.bugcheck.bugcheck.code == code)
    plain = System(sc).run()
    # The proxy changes nothing: the same run, event for event (compare_logs checks the logs).
    assert result.summary == plain.summary
    assert result.summary["packets_completed"] > 0
    assert {"engine_count", "irq_status", "irq_ack", "segments"} <= seen
    assert ({"sched_bands", "sched_doorbell"} if system.scenario.adapter.scheduling == "hardware"
            else {"program_ring", "doorbell", "rptr"}) <= seen


def test_the_guard_catches_an_access_outside_the_interface():
    sim, gpu, hw = make()
    bad: list = []
    proxy = strict(hw, PUBLIC, set(), bad)
    assert proxy.engine_count == 2
    with pytest.raises(HardwareAccess):
        proxy._gpu  # noqa: B018
    with pytest.raises(HardwareAccess):
        getattr(proxy, "engines", None)
    assert bad == ["_gpu", "engines"]


def _module_of(node: ast.ImportFrom, path: Path, src: Path) -> str:
    if not node.level:
        return node.module or ""
    package = ["wddmsim", *path.relative_to(src).parts[:-1]]
    base = package[: len(package) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


def _is_hw(node: ast.AST) -> bool:
    """``self.hw`` or a local ``hw``."""
    return (isinstance(node, ast.Name) and node.id == "hw") or (
        isinstance(node, ast.Attribute) and node.attr == "hw" and isinstance(node.value, ast.Name)
        and node.value.id == "self")


def _is_mem(node: ast.AST) -> bool:
    """``self.mem``, a local ``mem``, or ``<hw>.memory``."""
    return (isinstance(node, ast.Name) and node.id == "mem") or (
        isinstance(node, ast.Attribute) and (
            (node.attr == "mem" and isinstance(node.value, ast.Name) and node.value.id == "self")
            or (node.attr == "memory" and _is_hw(node.value))))


def hardware_violations(path: Path, src: Path = SRC) -> list[str]:
    """What a driver module does to the GPU other than through gpu.commands and gpu.mmio's public
    API, in line order."""
    out = []
    allowed_modules = {"wddmsim.gpu.commands", "wddmsim.gpu.mmio"}
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        where = f"{path.name}:{getattr(node, 'lineno', 0):04d}"
        if isinstance(node, ast.ImportFrom):
            mod = _module_of(node, path, src)
            if mod == "wddmsim.gpu":
                out += [f"{where} imports gpu.{a.name}" for a in node.names if a.name not in ("commands", "mmio")]
            elif mod.startswith("wddmsim.gpu.") and mod not in allowed_modules:
                out.append(f"{where} imports {mod}")
            elif mod == "wddmsim.gpu.mmio":
                out += [f"{where} imports mmio.{a.name}" for a in node.names if a.name not in M.__all__]
        elif isinstance(node, ast.Import):
            out += [f"{where} imports {a.name}" for a in node.names
                    if a.name.startswith("wddmsim.gpu") and a.name not in allowed_modules]
        elif isinstance(node, ast.Attribute):
            v = node.value
            if _is_hw(v) and node.attr not in PUBLIC:
                out.append(f"{where} uses hw.{node.attr}")
            elif _is_mem(v) and node.attr not in MEMORY_PUBLIC:
                out.append(f"{where} uses memory.{node.attr}")
            elif isinstance(v, ast.Name) and v.id == "mmio" and node.attr not in M.__all__:
                out.append(f"{where} uses mmio.{node.attr}")
            elif isinstance(v, ast.Name) and v.id == "gpu" and node.attr != "mmio":
                out.append(f"{where} uses gpu.{node.attr}")
            elif node.attr == "gpu" and isinstance(v, ast.Name) and v.id == "self":
                out.append(f"{where} uses self.gpu")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in (
                "getattr", "setattr", "hasattr", "delattr") and node.args:
            first = node.args[0]
            if _is_hw(first) or _is_mem(first) or (isinstance(first, ast.Name) and first.id == "gpu"):
                out.append(f"{where} {node.func.id}() on the hardware")
    return sorted(out)


def test_the_driver_reaches_the_gpu_only_through_commands_and_mmio():
    files = sorted(KMD.glob("*.py"))
    assert {p.name for p in files} >= {"driver.py", "wddm2.py"}
    assert [v for p in files for v in hardware_violations(p)] == []


def test_the_static_check_sees_violations(tmp_path):
    pkg = tmp_path / "src" / "wddmsim" / "kmd"
    pkg.mkdir(parents=True)
    bad = pkg / "bad.py"
    bad.write_text(
        "from ..gpu import commands, engine\n"
        "from ..gpu.device import GPU\n"
        "from ..gpu.mmio import _ENGINE_IDLE\n"
        "import wddmsim.gpu.scheduler\n"
        "class D:\n"
        "    def __init__(self, gpu):\n"
        "        self.gpu = gpu\n"
        "        self.hw = gpu.mmio\n"
        "        self.mem = self.hw.memory\n"
        "        gpu.engines[0].doorbell(0)\n"
        "        self.hw._gpu.irq.ack(1)\n"
        "        self.mem._pages.clear()\n"
        "        hw = self.hw\n"
        "        getattr(hw, 'x', None)\n"
        "        hw.doorbell(0, 8)\n")
    assert hardware_violations(bad, tmp_path / "src" / "wddmsim") == [
        "bad.py:0001 imports gpu.engine", "bad.py:0002 imports wddmsim.gpu.device",
        "bad.py:0003 imports mmio._ENGINE_IDLE", "bad.py:0004 imports wddmsim.gpu.scheduler",
        "bad.py:0007 uses self.gpu", "bad.py:0010 uses gpu.engines", "bad.py:0011 uses hw._gpu",
        "bad.py:0012 uses memory._pages", "bad.py:0014 getattr() on the hardware",
    ]
