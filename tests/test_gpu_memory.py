"""The GPU's physical memory: sparse pages, reads and writes across page boundaries, fill and
memmove-style copy, the u32/u64 accessors and their range checks, and the write watchers."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wddmsim.gpu.memory import PAGE_SIZE, PhysicalMemory, Watch

P = PAGE_SIZE


# ------------------------------------------------------------------------ sparse pages


def test_fresh_memory_reads_zero_and_allocates_nothing():
    m = PhysicalMemory()
    assert m.read(0, 16) == bytes(16)
    assert m.read(2**40 - 3, 3 * P) == bytes(3 * P)
    assert m.read_u32(P - 2) == 0 and m.read_u64(123) == 0 and m.read_u64(P - 4) == 0
    assert m.pages_resident == 0 and m.bytes_resident == 0


def test_a_write_allocates_only_the_pages_it_touches():
    m = PhysicalMemory()
    m.write(5 * P + 10, b"abc")
    assert m.pages_resident == 1 and m.bytes_resident == P and m.resident_pages() == [5]
    m.write(7 * P - 2, b"wxyz")  # pages 6 and 7
    assert m.resident_pages() == [5, 6, 7]
    m.write(100 * P, b"")  # nothing written, nothing allocated
    assert m.pages_resident == 3


def test_read_write_roundtrip_within_a_page():
    m = PhysicalMemory()
    m.write(0x1234, b"hello")
    assert m.read(0x1234, 5) == b"hello"
    assert m.read(0x1232, 9) == b"\0\0hello\0\0"


def test_write_across_several_pages():
    m = PhysicalMemory()
    data = bytes(range(256)) * 40  # 10240 bytes: spans 4 pages from this start
    m.write(P - 100, data)
    assert m.read(P - 100, len(data)) == data
    assert m.resident_pages() == [0, 1, 2, 3]
    assert m.read(P - 101, 1) == b"\0" and m.read(P - 100 + len(data), 1) == b"\0"
    # a read straddling written and unwritten pages
    assert m.read(P - 100 + len(data) - 2, P) == data[-2:] + bytes(P - 2)


def test_write_accepts_bytearray_and_memoryview():
    m = PhysicalMemory()
    m.write(0, bytearray(b"\x01\x02"))
    m.write(P - 1, memoryview(b"\x03\x04\x05"))
    m.write(10, memoryview(bytearray(b"0123456789"))[2:5])
    assert m.read(0, 2) == b"\x01\x02" and m.read(P - 1, 3) == b"\x03\x04\x05" and m.read(10, 3) == b"234"


def test_read_returns_bytes_not_a_live_view():
    m = PhysicalMemory()
    m.write(0, b"abcd")
    got = m.read(0, 4)
    m.write(0, b"zzzz")
    assert got == b"abcd" and isinstance(got, bytes)


def test_negative_addresses_and_sizes():
    m = PhysicalMemory()
    for call in (
        lambda: m.read(-1, 4),
        lambda: m.read(0, -1),
        lambda: m.write(-1, b"x"),
        lambda: m.read_u32(-4),
        lambda: m.read_u64(-8),
        lambda: m.write_u32(-4, 0),
        lambda: m.write_u64(-8, 0),
        lambda: m.fill(-1, 4, b"x"),
        lambda: m.fill(0, -4, b"x"),
        lambda: m.copy(-1, 0, 4),
        lambda: m.copy(0, -1, 4),
        lambda: m.copy(0, 0, -4),
        lambda: m.watch(-8, print),
    ):
        with pytest.raises(ValueError):
            call()
    assert m.pages_resident == 0


class Model:
    """A reference: one plain bytearray."""

    def __init__(self, size):
        self.b = bytearray(size)


OPS = st.one_of(
    st.tuples(st.just("write"), st.integers(0, 4 * P), st.binary(max_size=2 * P + 10)),
    st.tuples(st.just("fill"), st.integers(0, 4 * P), st.integers(0, 2 * P), st.binary(min_size=1, max_size=7)),
    st.tuples(st.just("copy"), st.integers(0, 4 * P), st.integers(0, 4 * P), st.integers(0, 2 * P)),
    st.tuples(st.just("u32"), st.integers(0, 4 * P), st.integers(0, 2**32 - 1)),
    st.tuples(st.just("u64"), st.integers(0, 4 * P), st.integers(0, 2**64 - 1)),
)


@settings(max_examples=200)
@given(st.lists(OPS, max_size=12), st.integers(0, 6 * P), st.integers(0, 3 * P))
def test_against_a_flat_bytearray(ops, raddr, rsize):
    m, ref = PhysicalMemory(), bytearray(10 * P)  # reads reach 6P + 3P
    for op in ops:
        if op[0] == "write":
            _, a, d = op
            m.write(a, d)
            ref[a : a + len(d)] = d
        elif op[0] == "fill":
            _, a, n, pat = op
            m.fill(a, n, pat)
            ref[a : a + n] = (pat * (n // len(pat) + 1))[:n]
        elif op[0] == "copy":
            _, s, d, n = op
            m.copy(s, d, n)
            ref[d : d + n] = bytes(ref[s : s + n])
        elif op[0] == "u32":
            _, a, v = op
            m.write_u32(a, v)
            ref[a : a + 4] = v.to_bytes(4, "little")
        else:
            _, a, v = op
            m.write_u64(a, v)
            ref[a : a + 8] = v.to_bytes(8, "little")
    assert m.read(raddr, rsize) == bytes(ref[raddr : raddr + rsize])
    assert m.read_u32(raddr) == int.from_bytes(ref[raddr : raddr + 4], "little")
    assert m.read_u64(raddr) == int.from_bytes(ref[raddr : raddr + 8], "little")
    assert m.read(0, 7 * P) == bytes(ref[: 7 * P])


# ------------------------------------------------------------------------ u32 / u64


@pytest.mark.parametrize("addr", [0, 8, P - 8, P - 5, P - 1, 3 * P + 2])
def test_u64_little_endian_any_alignment(addr):
    m = PhysicalMemory()
    m.write_u64(addr, 0x0102030405060708)
    assert m.read(addr, 8) == bytes([8, 7, 6, 5, 4, 3, 2, 1])
    assert m.read_u64(addr) == 0x0102030405060708
    assert m.read_u32(addr) == 0x05060708 and m.read_u32(addr + 4) == 0x01020304


@pytest.mark.parametrize("addr", [0, P - 4, P - 3, P - 1])
def test_u32_little_endian_any_alignment(addr):
    m = PhysicalMemory()
    m.write_u32(addr, 0xA1B2C3D4)
    assert m.read(addr, 4) == bytes([0xD4, 0xC3, 0xB2, 0xA1]) and m.read_u32(addr) == 0xA1B2C3D4


def test_width_limits():
    m = PhysicalMemory()
    m.write_u32(0, 2**32 - 1)
    m.write_u64(8, 2**64 - 1)
    assert m.read_u32(0) == 2**32 - 1 and m.read_u64(8) == 2**64 - 1
    for call in (lambda: m.write_u32(0, 2**32), lambda: m.write_u32(0, -1), lambda: m.write_u64(0, 2**64), lambda: m.write_u64(0, -1)):
        with pytest.raises(ValueError, match="u32|u64"):
            call()
    assert m.read_u32(0) == 2**32 - 1


# ------------------------------------------------------------------------ fill and copy


def test_fill_repeats_and_truncates_across_pages():
    m = PhysicalMemory()
    m.fill(P - 3, 10, b"\xef\xbe\xad\xde")
    assert m.read(P - 4, 12) == b"\0" + b"\xef\xbe\xad\xde" * 2 + b"\xef\xbe" + b"\0"
    m.fill(10 * P + 1, 3 * P, b"abc")
    expected = (b"abc" * P)[: 3 * P]
    assert m.read(10 * P + 1, 3 * P) == expected
    assert m.read(10 * P, 1) == b"\0" and m.read(13 * P + 1, 1) == b"\0"


def test_fill_short_and_empty():
    m = PhysicalMemory()
    m.fill(0, 2, b"wxyz")
    assert m.read(0, 3) == b"wx\0"
    m.fill(5 * P, 0, b"")  # zero size: nothing to do, empty pattern allowed
    assert m.pages_resident == 1
    with pytest.raises(ValueError, match="empty"):
        m.fill(0, 4, b"")


def test_copy_disjoint_and_overlapping():
    m = PhysicalMemory()
    m.write(0, b"0123456789")
    m.copy(0, 100, 10)
    assert m.read(100, 10) == b"0123456789"
    m.copy(0, 3, 10)  # forward overlap: destination above the source
    assert m.read(0, 13) == b"0120123456789"
    m.write(0, b"0123456789")
    m.copy(3, 0, 7)  # backward overlap
    assert m.read(0, 10) == b"3456789789"


def test_copy_from_unwritten_memory_writes_zeros():
    m = PhysicalMemory()
    m.write(P * 3, b"\xff" * 16)
    m.copy(0, P * 3 + 4, 8)
    assert m.read(P * 3, 16) == b"\xff" * 4 + bytes(8) + b"\xff" * 4


@pytest.mark.parametrize("shift", [-P - 5, -3, 3, P + 5, (1 << 20) + 7, -(1 << 20) - 7])
def test_large_overlapping_copy_is_memmove(shift):
    m = PhysicalMemory()
    size = (1 << 20) * 2 + 123  # more than the internal chunk
    src = 4 * (1 << 20)
    pattern = bytes((i * 7 + 3) & 0xFF for i in range(251))
    data = (pattern * (size // 251 + 1))[:size]
    m.write(src, data)
    m.copy(src, src + shift, size)
    ref = bytearray(16 * (1 << 20))
    ref[src : src + size] = data
    ref[src + shift : src + shift + size] = data
    lo, hi = min(src, src + shift), max(src, src + shift) + size
    assert m.read(lo, hi - lo) == bytes(ref[lo:hi])


# ------------------------------------------------------------------------ watchers


def recorder():
    calls = []
    return calls, calls.append


def test_watch_fires_once_per_overlapping_write_after_the_store():
    m = PhysicalMemory()
    seen = []
    w = m.watch(0x1000, lambda a: seen.append((a, m.read_u64(0x1000))))
    assert isinstance(w, Watch) and w.active and m.watch_count == 1
    m.write_u64(0x1000, 7)
    m.write(0xFF0, bytes(64))  # covers the whole location: still one call
    m.write_u32(0x1004, 9)  # the upper half
    m.write(0x1007, b"\x01")  # the last byte
    m.write(0xFF9, b"\x00" * 8)  # ends on the first byte
    assert seen == [(0x1000, 7), (0x1000, 0), (0x1000, 9 << 32), (0x1000, (1 << 56) | (9 << 32)), (0x1000, (1 << 56) | (9 << 32))]


@pytest.mark.parametrize("write, size", [("write_u32", 4), ("write_u64", 8)])
def test_a_word_written_across_a_page_boundary_wakes_the_watches_it_touches(write, size):
    # One code path writes both widths: the word straddles pages P-1 and P; a watch whose 8 bytes
    # end on its first byte, one in the next page under its last byte, and one just past it.
    m = PhysicalMemory()
    seen = []
    for addr in (P - 2 - 7, P - 2 + size - 1, P - 2 + size):
        m.watch(addr, lambda a: seen.append(a))
    getattr(m, write)(P - 2, 2 ** (8 * size) - 2)
    assert seen == [P - 2 - 7, P - 2 + size - 1]
    assert m.read(P - 2, size) == bytes([0xFE]) + b"\xff" * (size - 1)
    assert getattr(m, "read_u%d" % (8 * size))(P - 2) == 2 ** (8 * size) - 2
    assert getattr(PhysicalMemory, write).__qualname__ == f"PhysicalMemory.{write}"


def test_watch_ignores_writes_that_do_not_overlap():
    m = PhysicalMemory()
    calls, cb = recorder()
    m.watch(0x1000, cb)
    m.write(0xFF8, bytes(8))  # ends just before
    m.write(0x1008, bytes(8))  # starts just after
    m.write_u64(0x2000, 1)
    m.write(0x1000, b"")  # empty write touches nothing
    m.fill(0x1000, 0, b"x")
    m.copy(0x1000, 0x3000, 8)  # reading the location is not a write
    m.read(0x1000, 8)
    assert calls == []


def test_fill_and_copy_notify_the_destination():
    m = PhysicalMemory()
    calls, cb = recorder()
    m.watch(0x1000, cb)
    m.fill(0, 3 * P, b"ab")
    m.copy(0x5000, 0x1004, 2)
    m.copy(0x1000, 0x1000, 8)
    assert calls == [0x1000] * 3


def test_several_watchers_and_addresses():
    m = PhysicalMemory()
    order = []
    m.watch(0x1008, lambda a: order.append(("b", a)))
    m.watch(0x1000, lambda a: order.append(("a1", a)))
    m.watch(0x1000, lambda a: order.append(("a2", a)))
    m.watch(0x1003, lambda a: order.append(("c", a)))
    m.write(0x1000, bytes(16))
    assert order == [("a1", 0x1000), ("a2", 0x1000), ("c", 0x1003), ("b", 0x1008)]
    order.clear()
    m.write_u32(0x1000, 1)
    assert order == [("a1", 0x1000), ("a2", 0x1000), ("c", 0x1003)]


def test_many_watchers_small_write_and_large_write():
    m = PhysicalMemory()
    calls, cb = recorder()
    for a in range(0, 64 * 8, 8):
        m.watch(a, cb)
    m.write_u32(20, 1)  # only the watch at 16
    assert calls == [16]
    calls.clear()
    m.fill(0, 4096, b"\0")
    assert calls == list(range(0, 64 * 8, 8))


def test_cancel():
    m = PhysicalMemory()
    calls, cb = recorder()
    w = m.watch(0x40, cb)
    m.write_u64(0x40, 1)
    w.cancel()
    w.cancel()  # harmless twice
    m.write_u64(0x40, 2)
    assert calls == [0x40] and not w.active and m.watch_count == 0 and not m._watches


def test_cancel_inside_callback():
    m = PhysicalMemory()
    calls = []
    handles = {}

    def first(a):
        calls.append("first")
        handles["first"].cancel()
        handles["second"].cancel()  # a later watcher of the same store

    def second(a):
        calls.append("second")

    handles["first"] = m.watch(0x80, first)
    handles["second"] = m.watch(0x80, second)
    m.write_u64(0x80, 1)
    m.write_u64(0x80, 2)
    assert calls == ["first"] and m.watch_count == 0


def test_one_shot_watch_and_watch_added_in_callback():
    m = PhysicalMemory()
    calls = []

    def once(a):
        calls.append(("once", m.read_u64(a)))
        h.cancel()
        m.watch(a, lambda a: calls.append(("later", m.read_u64(a))))

    h = m.watch(0x100, once)
    m.write_u64(0x100, 1)  # the watch added now is not called for this store
    m.write_u64(0x100, 2)
    assert calls == [("once", 1), ("later", 2)]


def test_callback_may_write_memory():
    m = PhysicalMemory()
    m.watch(0x0, lambda a: m.write_u64(0x100, m.read_u64(0x0) * 2))
    calls, cb = recorder()
    m.watch(0x100, cb)
    m.write_u64(0x0, 21)
    assert m.read_u64(0x100) == 42 and calls == [0x100]
