"""The model's indexes that keep per-event work independent of the number of contexts, queues and
fences: each gives exactly what the plain walk over everything gives."""

from __future__ import annotations

import random
import sys
from pathlib import Path

from wddmsim.gpu.memory import PhysicalMemory
from wddmsim.runner.system import System

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import throughput  # noqa: E402

PAGE = 4096


def test_a_watch_is_called_for_stores_that_touch_it_and_only_those():
    m = PhysicalMemory()
    calls = []
    m.watch(0x2FF8, calls.append)  # the last 8 bytes of a page
    m.watch(0x5000, calls.append)
    m.write_u64(0x1000, 1)  # pages without a watch
    m.write(0x3000, bytes(64))
    m.write_u32(0x2FF0, 7)  # just before [0x2FF8, 0x3000)
    assert calls == []
    m.write(0x2FF4, bytes(8))  # overlaps the first watch from the page before
    m.write(0x4FF9, bytes(8))  # from page 4 into the second watch on page 5
    m.write(0x2000, bytes(3 * PAGE + 1))  # one store over both
    assert calls == [0x2FF8, 0x5000, 0x2FF8, 0x5000]
    assert m.watch_count == 2


def test_a_cancelled_watch_leaves_its_page_unwatched():
    m = PhysicalMemory()
    calls = []
    a = m.watch(0x1000, calls.append)
    b = m.watch(0x1008, calls.append)
    a.cancel()
    m.write_u64(0x1000, 5)
    b.cancel()
    m.write_u64(0x1008, 5)
    assert calls == [] and m._watch_pages == {} and m.watch_count == 0
    b2 = m.watch(0x1008, calls.append)
    m.write_u64(0x1008, 6)
    assert calls == [0x1008] and b2.active


def _gpuva(mode="gpu_va"):
    return System(throughput.scenario(2, 64, mode)).adapter.wddm2.gpuva


def test_a_fresh_range_is_mapped_one_entry_per_page_in_its_leaf_tables():
    g = _gpuva()

    class P:
        pass

    p = P()
    sp = g.space(p)
    physical = 0x4000_0000
    size = (4 << 20) + 2 * PAGE  # crosses leaf tables (2 MiB each)
    va = g.map(p, physical, size, read_only=True)
    n = size // PAGE
    assert sp.pages == {va // PAGE + i: physical + i * PAGE for i in range(n)}
    assert sp.mapped_at == {physical + i * PAGE: va // PAGE + i for i in range(n)}
    expected: dict = {}
    for i in range(n):
        v = va + i * PAGE
        table = sp.tables[(0, v >> g._shift(1))]
        expected.setdefault((0, table), {})[(v >> 12) & 511] = (physical + i * PAGE) | 3
    leaves = {k: e for k, e in sp.pending.items() if k[0] == 0}
    assert leaves == expected


def test_page_table_entries_cross_the_ddi_as_the_structure_fills_them():
    sys_ = System(throughput.scenario(2, 64, "hardware"))
    g = sys_.adapter.wddm2.gpuva
    driver = sys_.adapter.driver
    rng = random.Random(5)
    entries = [rng.choice([0, 1, 2, 3]) | (rng.getrandbits(40) << 12) for _ in range(300)]
    fast = g._pte_array(entries)
    arr = (g._pte_cls * len(entries))()
    for e, value in zip(arr, entries):
        e.Valid = value & 1
        e.ReadOnly = (value >> 1) & 1
        e.PageAddress = value >> 12
    assert fast == bytes(arr)
    assert driver._read_ptes(fast, len(entries)) == entries
