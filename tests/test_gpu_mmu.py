"""GPU virtual addressing: the page-table format, walks and the TLB (gpu/mmu.py), and engines running
in an address space: the three privileged commands, faults, and exact virtual-time outcomes."""

import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from wddmsim.gpu import commands as C
from wddmsim.gpu.device import FAULT_BIT, GPU, EngineSpec
from wddmsim.gpu.engine import EngineFault
from wddmsim.gpu.mmu import (
    ENTRIES_PER_TABLE,
    LEVELS,
    PTE_ADDRESS_MASK,
    PTE_READ_ONLY,
    PTE_VALID,
    VA_BITS,
    GpuMmu,
    PageFault,
    pte,
    table_index,
)
from wddmsim.sim import Simulator

PAGE = 4096
VA = 0x4000_0000  # a virtual page used throughout (root index 1, level-1 index 0, leaf index 0)
FENCE = 0x40000  # a physical fence slot for the final interrupt


def make(engines=1, granularity="dma_buffer"):
    Space._next[0] = 0x100000
    sim = Simulator()
    specs = [EngineSpec(f"E{i}", "3d", command_cost=100, bandwidth=4.0, preemption=granularity) for i in range(engines)]
    gpu = GPU(sim, specs, [("VRAM", "memory", 1 << 20, False), ("Ap", "aperture", 1 << 20, False)])
    for i, e in enumerate(gpu.engines):
        e.program_ring(0x10000 + i * 0x1000, 4096)
    irqs = []
    gpu.irq.connect(lambda msg: (irqs.append((sim.now, gpu.irq.status)), gpu.irq.ack(gpu.irq.status), True)[-1])
    return sim, gpu, irqs


def submit(gpu, e, data):
    gpu.memory.write(e.ring_base + e.wptr, bytes(data))
    e.doorbell((e.wptr + len(data)) % e.ring_size)


class Space:
    """An address space whose tables the test (standing in for the OS) writes straight into memory."""

    _next = [0x100000]  # table pages come from here (make() starts it again)

    def __init__(self, gpu):
        self.mem = gpu.memory
        self.root = self._table()

    def _table(self):
        addr = Space._next[0]
        Space._next[0] += PAGE
        return addr

    def leaf(self, va):
        """The leaf table covering ``va`` (created, with the level-1 table, as needed)."""
        table = self.root
        for level in (2, 1):
            slot = table + 8 * table_index(va, level)
            entry = self.mem.read_u64(slot)
            if not entry & PTE_VALID:
                entry = pte(self._table())
                self.mem.write_u64(slot, entry)
            table = entry & PTE_ADDRESS_MASK
        return table

    def map(self, va, pa, read_only=False):
        self.mem.write_u64(self.leaf(va) + 8 * table_index(va, 0), pte(pa, read_only))
        return self


# ------------------------------------------------------------------------ format


def test_constants_and_entry_format():
    assert (VA_BITS, LEVELS, ENTRIES_PER_TABLE) == (39, 3, 512)
    assert (PTE_VALID, PTE_READ_ONLY, PTE_ADDRESS_MASK) == (1, 2, 0x000F_FFFF_FFFF_F000)
    assert pte(0x5000) == 0x5001 and pte(0x5000, read_only=True) == 0x5003
    assert pte(0) == PTE_VALID and pte(PTE_ADDRESS_MASK) == PTE_ADDRESS_MASK | 1
    for bad in (0x5008, -PAGE, 1 << 52):
        with pytest.raises(ValueError):
            pte(bad)
    va = 3 << 30 | 5 << 21 | 7 << 12 | 0x123
    assert [table_index(va, level) for level in (2, 1, 0)] == [3, 5, 7]
    assert table_index(2**39 - 1, 2) == 511
    with pytest.raises(ValueError):
        table_index(va, 3)


@given(st.integers(0, 2**39 - 1))
def test_table_indices_rebuild_the_address(va):
    rebuilt = sum(table_index(va, level) << (12 + 9 * level) for level in range(LEVELS)) | va & 0xFFF
    assert rebuilt == va


# ------------------------------------------------------------------------ walks, TLB, faults


def test_walk_through_all_levels_then_the_tlb_answers():
    _, gpu, _ = make()
    mmu = gpu.mmu
    s = Space(gpu).map(VA, 0x300000).map(VA + PAGE, 0x2F0000)
    assert mmu.translate(s.root, VA + 0x123) == 0x300123
    assert mmu.stats == {"walks": 1, "hits": 0, "faults": 0, "flushes": 0, "tlb_entries": 1}
    assert mmu.translate(s.root, VA + 0xFF8, write=True) == 0x300FF8
    assert mmu.translate(s.root, VA + PAGE) == 0x2F0000
    assert (mmu.walks, mmu.hits) == (2, 1)


def test_tables_and_pages_may_sit_in_local_memory_and_the_aperture():
    _, gpu, _ = make()
    local, aperture = gpu.segments[0].base, gpu.segments[1].base
    s = Space(gpu)
    # The leaf table lives in an aperture page the GART maps onto system page 0x380000.
    gpu.map_aperture(aperture, 0x380000, PAGE)
    gpu.memory.write_u64(s.root + 8 * table_index(VA, 2), pte(0x381000))
    gpu.memory.write_u64(0x381000 + 8 * table_index(VA, 1), pte(aperture))
    gpu.memory.write_u64(0x380000 + 8 * table_index(VA, 0), pte(local + 0x5000))
    gpu.memory.write_u64(0x380000 + 8 * table_index(VA + PAGE, 0), pte(aperture + PAGE))
    gpu.map_aperture(aperture + PAGE, 0x390000, PAGE)
    assert gpu.mmu.translate(s.root, VA + 8) == local + 0x5008
    assert gpu.mmu.translate(s.root, VA + PAGE + 8) == aperture + PAGE + 8  # a GPU physical address
    gpu.mmu.write(s.root, VA + PAGE - 4, b"abcdefgh")
    assert gpu.memory.read(local + 0x5FFC, 4) == b"abcd" and gpu.memory.read(0x390000, 4) == b"efgh"


@pytest.mark.parametrize("level", [2, 1, 0])
def test_a_walk_faults_at_the_level_of_the_first_invalid_entry(level):
    _, gpu, _ = make()
    s = Space(gpu)
    va = VA + 0x10_0000 * 3 + 0x42
    if level == 1:  # the root entry points at an empty level-1 table
        gpu.memory.write_u64(s.root + 8 * table_index(va, 2), pte(0x3F0000))
    if level == 0:  # the leaf table exists, but not va's entry
        s.map(va + PAGE, 0x300000)
    with pytest.raises(PageFault) as e:
        gpu.mmu.translate(s.root, va, write=True)
    f = e.value
    assert isinstance(f, EngineFault)
    assert (f.address, f.level, f.write, f.root) == (va, level, True, s.root)
    assert f"page fault at {va:#x} (write, level {level}" in str(f)
    assert gpu.mmu.stats["faults"] == 1 and gpu.mmu.stats["tlb_entries"] == 0


def test_read_only_pages_fault_on_write_only():
    _, gpu, _ = make()
    s = Space(gpu).map(VA, 0x300000, read_only=True)
    assert gpu.mmu.translate(s.root, VA + 8) == 0x300008
    with pytest.raises(PageFault) as e:
        gpu.mmu.translate(s.root, VA + 8, write=True)  # from the TLB: the bit is cached too
    assert (e.value.level, e.value.write, e.value.address) == (0, True, VA + 8)
    # READ_ONLY on a table entry (not a leaf) is ignored.
    s2 = Space(gpu)
    s2.map(VA, 0x310000)
    slot = s2.root + 8 * table_index(VA, 2)
    gpu.memory.write_u64(slot, gpu.memory.read_u64(slot) | PTE_READ_ONLY)
    assert gpu.mmu.translate(s2.root, VA, write=True) == 0x310000


@pytest.mark.parametrize("va", [2**39, 2**39 + VA, 2**64 - 1, -PAGE])
def test_addresses_beyond_39_bits_fault(va):
    _, gpu, _ = make()
    s = Space(gpu)
    with pytest.raises(PageFault) as e:
        gpu.mmu.translate(s.root, va)
    assert (e.value.address, e.value.level, e.value.write) == (va, 2, False)
    assert gpu.mmu.walks == 0


def test_virtual_reads_and_writes_follow_discontiguous_pages():
    _, gpu, _ = make()
    mmu = gpu.mmu
    s = Space(gpu).map(VA, 0x300000).map(VA + PAGE, 0x2F0000).map(VA + 2 * PAGE, 0x301000, read_only=True)
    data = bytes(range(256)) * 20  # 5120 bytes: 4 on the first page, 4096 on the second, ...
    mmu.write(s.root, VA + PAGE - 4, data[:PAGE + 4])
    assert gpu.memory.read(0x300FFC, 4) == data[:4] and gpu.memory.read(0x2F0000, PAGE) == data[4:PAGE + 4]
    assert mmu.read(s.root, VA + PAGE - 4, PAGE + 4) == data[:PAGE + 4]
    # Every page is translated before any byte is written: nothing lands before a fault.
    with pytest.raises(PageFault) as e:
        mmu.write(s.root, VA + 2 * PAGE - 8, b"\xff" * 16)
    assert e.value.address == VA + 2 * PAGE and e.value.level == 0
    assert gpu.memory.read(0x2F0FF8, 8) == data[PAGE - 4 : PAGE + 4]
    assert mmu.read(s.root, VA, 0) == b""
    mmu.fill(s.root, VA + PAGE - 2, 6, b"\x01\x02\x03\x04")
    assert gpu.memory.read(0x300FFE, 2) == b"\x01\x02" and gpu.memory.read(0x2F0000, 4) == b"\x03\x04\x01\x02"


def test_flush_drops_by_root_and_range_and_the_tlb_is_bounded():
    _, gpu, _ = make()
    a = Space(gpu).map(VA, 0x300000).map(VA + PAGE, 0x301000)
    b = Space(gpu).map(VA, 0x302000)
    mmu = gpu.mmu
    for root, va in ((a.root, VA), (a.root, VA + PAGE), (b.root, VA)):
        mmu.translate(root, va)
    assert mmu.stats["tlb_entries"] == 3
    mmu.flush(a.root, VA + PAGE, VA + PAGE + 1)  # a range touching one page of a
    assert mmu.stats["tlb_entries"] == 2
    mmu.translate(a.root, VA)
    mmu.translate(b.root, VA)
    assert (mmu.walks, mmu.hits) == (3, 2)
    mmu.flush(b.root)
    assert mmu.stats["tlb_entries"] == 1
    mmu.flush(0, 0, VA)  # every space, below VA: nothing
    assert mmu.stats["tlb_entries"] == 1
    mmu.flush()
    assert mmu.stats["tlb_entries"] == 0 and mmu.flushes == 4
    small = GpuMmu(gpu, tlb_entries=2)
    for va in (VA, VA + PAGE, VA, VA + PAGE):
        small.translate(a.root, va)
    assert (small.walks, small.hits) == (2, 2)
    small.translate(b.root, VA)  # evicts the oldest (a, VA)
    small.translate(a.root, VA)
    assert (small.walks, small.hits) == (4, 2)


# ------------------------------------------------------------------------ engines in an address space


def test_a_discontiguous_dma_buffer_runs_in_virtual_time():
    sim, gpu, irqs = make()
    e = gpu.engines[0]
    data_va = 0x5000_0000
    s = Space(gpu).map(VA, 0x300000).map(VA + PAGE, 0x2F0000).map(data_va, 0x310000)
    buf = C.CommandBuffer().work(1000).fence(data_va, 1).timestamp(data_va + 8).data  # 44 bytes
    buf_va = VA + PAGE - 16  # the FENCE straddles the two pages, which lie apart (and backwards)
    gpu.memory.write(0x300FF0, buf[:16])
    gpu.memory.write(0x2F0000, buf[16:])
    submit(gpu, e, C.CommandBuffer().set_address_space(s.root).indirect(buf_va, len(buf))
           .fence(data_va + 16, 7, interrupt=True).data)
    sim.run()
    # SET_ADDRESS_SPACE 100, INDIRECT 200, WORK 300+1000, FENCE 1400, TIMESTAMP 1500, ring FENCE 1600
    assert irqs == [(1600, 1)]
    assert gpu.memory.read_u64(0x310000) == 1 and gpu.memory.read_u64(0x310008) == 1500
    assert gpu.memory.read_u64(0x310010) == 7
    assert e.busy_ns == 1600 and e.idle and e.address_space == s.root
    # the buffer's two pages walked once each, the data page once; then two TLB hits
    assert (gpu.mmu.walks, gpu.mmu.hits) == (3, 2)


def test_physical_mode_leaves_the_mmu_alone():
    sim, gpu, irqs = make()
    e = gpu.engines[0]
    gpu.memory.write(0x20000, C.work(1000))
    submit(gpu, e, C.indirect(0x20000, 12) + C.fence(FENCE, 7, interrupt=True))
    sim.run()
    assert irqs == [(1300, 1)] and e.address_space == 0
    assert gpu.mmu.stats == {"walks": 0, "hits": 0, "faults": 0, "flushes": 0, "tlb_entries": 0}


def test_two_address_spaces_map_one_va_to_different_pages():
    sim, gpu, irqs = make()
    e = gpu.engines[0]
    a = Space(gpu).map(VA, 0x320000)
    b = Space(gpu).map(VA, 0x330000)
    submit(gpu, e, C.CommandBuffer().set_address_space(a.root).fence(VA + 8, 1).set_address_space(b.root)
           .fence(VA + 8, 2).set_address_space(0).fence(FENCE, 3, interrupt=True).data)
    sim.run(until=200)
    assert gpu.memory.read_u64(0x320008) == 1 and gpu.memory.read_u64(0x330008) == 0 and e.address_space == a.root
    sim.run()
    assert irqs == [(600, 1)]
    assert (gpu.memory.read_u64(0x320008), gpu.memory.read_u64(0x330008), gpu.memory.read_u64(FENCE)) == (1, 2, 3)
    assert e.address_space == 0 and gpu.mmu.walks == 2


def test_update_page_table_lands_at_its_instant():
    sim, gpu, irqs = make()
    e = gpu.engines[0]
    s = Space(gpu)
    leaf = s.leaf(VA)
    entries = [pte(0x300000), pte(0x301000, read_only=True), pte(0x302000)]
    submit(gpu, e, C.update_page_table(leaf, 5, entries) + C.fence(FENCE, 1, interrupt=True))
    sim.run(until=105)  # 100 + ceil(3 * 8 / 4) = 106
    assert gpu.memory.read(leaf + 40, 24) == bytes(24)
    sim.run(until=106)
    assert [gpu.memory.read_u64(leaf + 8 * i) for i in range(4, 9)] == [0, *entries, 0]
    sim.run()
    assert irqs == [(206, 1)] and e.busy_ns == 206
    assert gpu.mmu.translate(s.root, VA + 6 * PAGE) == 0x301000


def test_update_page_table_writes_a_table_in_the_aperture():
    sim, gpu, irqs = make()
    e = gpu.engines[0]
    aperture = gpu.segments[1].base
    gpu.map_aperture(aperture + PAGE, 0x3A0000, PAGE)
    submit(gpu, e, C.update_page_table(aperture + PAGE, 510, [pte(0x300000), pte(0x301000)]))
    sim.run()
    assert gpu.memory.read_u64(0x3A0000 + 8 * 510) == pte(0x300000)
    assert gpu.memory.read_u64(0x3A0000 + 8 * 511) == pte(0x301000)
    assert e.busy_ns == 104 and e.idle


@pytest.mark.parametrize(
    "packet, reason",
    [
        (struct.pack("<IQII", 0x9000A, 0x6000, 511, 2) + bytes(16), "entries 511..512 run past the table's 512"),
        (C.update_page_table(0x6008, 0, [1]), "page table 0x6008 is not page aligned"),
        (C.set_address_space(0x6010), "address space root 0x6010 is not page aligned"),
    ],
)
def test_bad_mmu_commands_fault_the_engine(packet, reason):
    sim, gpu, irqs = make()
    e = gpu.engines[0]
    submit(gpu, e, packet)
    sim.run()
    assert e.state == "faulted" and reason in e.fault
    assert gpu.memory.read_u64(0x6000) == 0 and e.address_space == 0
    assert irqs[-1][1] & FAULT_BIT


def test_the_tlb_keeps_a_stale_translation_until_flush_tlb():
    sim, gpu, irqs = make()
    e = gpu.engines[0]
    s = Space(gpu).map(VA, 0x300000)
    leaf = s.leaf(VA)
    submit(gpu, e, C.CommandBuffer()
           .set_address_space(s.root)  # 100
           .fence(VA + 8, 1)  # 200: walks, caches VA -> 0x300000
           .update_page_table(leaf, 0, [pte(0x308000)])  # 302
           .fence(VA + 8, 2)  # 402: still 0x300000
           .flush_tlb(s.root, VA, VA + PAGE)  # 502
           .fence(VA + 8, 3)  # 602: walks again, 0x308000
           .set_address_space(0)  # 702
           .fence(FENCE, 9, interrupt=True)  # 802
           .data)
    sim.run(until=401)
    assert gpu.memory.read_u64(leaf) == pte(0x308000) and gpu.memory.read_u64(0x300008) == 1
    sim.run(until=402)
    assert gpu.memory.read_u64(0x300008) == 2 and gpu.memory.read_u64(0x308008) == 0
    sim.run()
    assert irqs == [(802, 1)]
    assert gpu.memory.read_u64(0x300008) == 2 and gpu.memory.read_u64(0x308008) == 3
    assert (gpu.mmu.walks, gpu.mmu.hits, gpu.mmu.flushes) == (2, 1, 1)


def test_a_flush_of_another_address_space_leaves_the_stale_entry():
    sim, gpu, irqs = make()
    e = gpu.engines[0]
    s = Space(gpu).map(VA, 0x300000)
    other = Space(gpu)
    submit(gpu, e, C.CommandBuffer().set_address_space(s.root).fence(VA, 1)
           .update_page_table(s.leaf(VA), 0, [pte(0x308000)]).flush_tlb(other.root, 0, 2**39)
           .flush_tlb(s.root, VA + PAGE, VA + 2 * PAGE).fence(VA, 2).flush_tlb(0, 0, 2**39).fence(VA, 3).data)
    sim.run()
    assert (gpu.memory.read_u64(0x300000), gpu.memory.read_u64(0x308000)) == (2, 3)


def test_privileged_commands_fault_in_a_buffer_fetched_in_virtual_mode():
    sim, gpu, irqs = make()
    e = gpu.engines[0]
    s = Space(gpu).map(VA, 0x340000).map(0x5000_0000, 0x350000)
    user = C.CommandBuffer().fence(0x5000_0000, 1).flush_tlb(0, 0, 2**39).fence(0x5000_0000, 2).data
    gpu.memory.write(0x340000, user)
    submit(gpu, e, C.set_address_space(s.root) + C.indirect(VA, len(user)) + C.fence(FENCE, 3, interrupt=True))
    sim.run()
    # SET_ADDRESS_SPACE 100, INDIRECT 200, FENCE 300, FLUSH_TLB 400: fault
    assert gpu.memory.read_u64(0x350000) == 1
    assert gpu.faults == [(400, "E0", "E0: privileged command FLUSH_TLB in a virtual buffer")]
    assert e.state == "faulted" and e.fault_level is None and e.busy_ns == 400
    assert irqs == [(400, FAULT_BIT)] and gpu.mmu.flushes == 0


def test_a_kernel_buffer_in_physical_mode_may_switch_spaces_around_a_user_buffer():
    sim, gpu, irqs = make()
    e = gpu.engines[0]
    s = Space(gpu).map(VA, 0x340000).map(0x5000_0000, 0x350000)
    user = C.fence(0x5000_0000, 1)
    gpu.memory.write(0x340000, user)
    kernel = (C.CommandBuffer().set_address_space(s.root).indirect(VA, len(user)).set_address_space(0)
              .fence(FENCE, 2, interrupt=True).data)
    gpu.memory.write(0x20000, kernel)
    submit(gpu, e, C.indirect(0x20000, len(kernel)))
    sim.run()
    # INDIRECT 100, SET_ADDRESS_SPACE 200, INDIRECT 300, FENCE 400, SET_ADDRESS_SPACE 500, FENCE 600
    assert irqs == [(600, 1)] and gpu.memory.read_u64(0x350000) == 1 and gpu.memory.read_u64(FENCE) == 2
    assert e.address_space == 0 and e.state == "idle"
    # ... but a user buffer that tries the same faults at its SET_ADDRESS_SPACE.
    sim, gpu, irqs = make()
    e = gpu.engines[0]
    s = Space(gpu).map(VA, 0x340000)
    user = C.set_address_space(0) + C.fence(FENCE, 5)
    gpu.memory.write(0x340000, user)
    kernel = C.set_address_space(s.root) + C.indirect(VA, len(user))
    gpu.memory.write(0x20000, kernel)
    submit(gpu, e, C.indirect(0x20000, len(kernel)))
    sim.run()
    assert gpu.faults == [(400, "E0", "E0: privileged command SET_ADDRESS_SPACE in a virtual buffer")]
    assert gpu.memory.read_u64(FENCE) == 0 and e.address_space == s.root


def test_fill_copy_and_flip_through_virtual_addresses():
    sim, gpu, irqs = make()
    e = gpu.engines[0]
    s = Space(gpu).map(VA, 0x300000).map(VA + PAGE, 0x2F0000).map(0x5000_0000, 0x360000).map(0x5000_1000, 0x370000)
    submit(gpu, e, C.CommandBuffer().set_address_space(s.root)
           .fill(VA + PAGE - 2, 8, 0xAABBCCDD)  # 100 + 100 + 2 = 202
           .copy(VA + PAGE - 2, 0x5000_1000 - 4, 8)  # 304
           .flip(0, 0x5000_1000 + 0x40, 0)  # 404: scans out the physical page
           .fence(0x5000_0000, 1, interrupt=True).data)  # 504
    sim.run()
    assert irqs[-1] == (504, 1)
    assert gpu.memory.read(0x300FFE, 2) == bytes.fromhex("ddcc")
    assert gpu.memory.read(0x2F0000, 6) == bytes.fromhex("bbaaddccbbaa")
    assert gpu.memory.read(0x360FFC, 4) == bytes.fromhex("ddccbbaa") and gpu.memory.read(0x370000, 4) == bytes.fromhex("ddccbbaa")
    assert gpu.displays[0].scanout == 0x370040


def test_a_wait_on_one_va_is_released_by_a_fence_through_an_alias():
    sim, gpu, irqs = make(engines=2)
    e0, e1 = gpu.engines
    a = Space(gpu).map(VA, 0x350000)
    b = Space(gpu).map(0x7123_4000, 0x350000)  # another space, another VA, the same page
    submit(gpu, e0, C.CommandBuffer().set_address_space(a.root).wait(VA + 8, 5).set_address_space(0)
           .fence(FENCE, 1, interrupt=True).data)
    submit(gpu, e1, C.CommandBuffer().set_address_space(b.root).work(5000).fence(0x7123_4008, 4)
           .work(1000).fence(0x7123_4008, 5).data)
    sim.run(until=5000)
    assert e0.state == "waiting" and gpu.memory.watch_count == 1
    sim.run()
    # e1: SET_ADDRESS_SPACE 100, WORK 200+5000, FENCE 5300 (4: not yet), WORK 5400+1000, FENCE 6500;
    # e0 goes on at 6500: SET_ADDRESS_SPACE 6600, FENCE 6700
    assert irqs == [(6700, 1)] and e0.idle and gpu.memory.watch_count == 0
    assert e0.busy_ns == 400 and gpu.memory.read_u64(0x350008) == 5


def test_a_page_fault_stops_the_engine_with_its_registers():
    sim, gpu, irqs = make()
    e = gpu.engines[0]
    s = Space(gpu).map(VA, 0x300000, read_only=True)
    submit(gpu, e, C.set_address_space(s.root) + C.fence(VA + 8, 1) + C.fence(FENCE, 2, interrupt=True))
    sim.run()
    assert e.state == "faulted" and gpu.faults[0][0] == 200 and "write to a read-only page" in e.fault
    assert (e.fault_address, e.fault_level, e.fault_write, e.fault_root) == (VA + 8, 0, True, s.root)
    assert irqs == [(200, FAULT_BIT)] and gpu.memory.read_u64(0x300008) == 0
    e.reset()
    assert (e.fault_address, e.fault_level, e.fault_write, e.fault_root, e.address_space) == (0, None, False, 0, 0)
    assert e.fault is None and e.idle


def test_an_indirect_to_an_unmapped_va_faults_at_its_instant():
    sim, gpu, irqs = make()
    e = gpu.engines[0]
    s = Space(gpu)
    submit(gpu, e, C.set_address_space(s.root) + C.work(1000) + C.indirect(0x12_3456_7000, 64))
    sim.run()
    # SET_ADDRESS_SPACE 100, WORK 200+1000, INDIRECT 1300
    assert gpu.faults[0][0] == 1300 and e.busy_ns == 1300
    assert (e.fault_address, e.fault_level, e.fault_write, e.fault_root) == (0x12_3456_7000, 2, False, s.root)


def test_the_buffer_fault_injection_still_works_in_virtual_mode():
    sim, gpu, irqs = make()
    e = gpu.engines[0]
    s = Space(gpu).map(VA, 0x300000)
    e.fault_on_buffer(VA, 0xDEAD000)
    submit(gpu, e, C.set_address_space(s.root) + C.indirect(VA, 12))
    sim.run()
    assert gpu.faults == [(200, "E0", "page fault at 0xdead000")] and e.fault_address == 0xDEAD000
    assert gpu.mmu.walks == 0


def test_a_preemption_saves_the_address_space():
    sim, gpu, irqs = make(granularity="primitive")
    e = gpu.engines[0]
    s = Space(gpu).map(VA, 0x300000)
    gpu.memory.write(0x300000, C.work(1000) + C.work(1000))
    submit(gpu, e, C.set_address_space(s.root) + C.indirect(VA, 24) + C.fence(FENCE, 1, interrupt=True))
    sim.at(500, e.request_preempt)
    sim.run()
    # SET_ADDRESS_SPACE 100, INDIRECT 200, WORK 300..1300: stops after it
    assert e.preempt_state == (VA, 12, 24, 0) and e.preempt_state.address_space == s.root
    assert e.address_space == s.root and irqs == [(1300, 1 << 64)]
    buf, pc, end, owed = e.preempt_state
    assert (buf, pc, end, owed) == (VA, 12, 24, 0)
    # physical mode: the same plain tuple, address space 0
    sim, gpu, irqs = make(granularity="primitive")
    e = gpu.engines[0]
    gpu.memory.write(0x300000, C.work(1000) + C.work(1000))
    submit(gpu, e, C.indirect(0x300000, 24) + C.fence(FENCE, 1, interrupt=True))
    sim.at(500, e.request_preempt)
    sim.run()
    assert e.preempt_state == (0x300000, 12, 24, 0) and e.preempt_state.address_space == 0
