"""The GPU's physical memory: a flat, byte-addressed store that the engines read and write.

The model has one address space of physical bytes (no page tables yet; GPU virtual addressing is a
later issue). It is sparse: memory is kept as 4 KiB pages in a dict keyed by page number, and a page
exists only once something has been written into it. Reading memory that was never written gives
zeros and allocates nothing, so a scenario can place buffers at addresses gigabytes apart and pay
only for the pages it touches.

:class:`PhysicalMemory` is what the hardware sees: reads and writes of any length and alignment
(crossing page boundaries as needed), little-endian 32- and 64-bit accessors, ``fill`` and a
memmove-style ``copy``. It also lets an observer *watch* an 8-byte location: after every store that
overlaps the location the watcher's callback runs once. The engines use this to wake a ``WAIT``
packet when the fence it polls changes, instead of re-reading memory on every tick.

Nothing here knows about Windows, drivers or command packets.
"""

from __future__ import annotations

import struct
from collections.abc import Callable

__all__ = ["PAGE_SIZE", "PhysicalMemory", "Watch"]

PAGE_SIZE = 4096
_SHIFT = 12
_MASK = PAGE_SIZE - 1
assert 1 << _SHIFT == PAGE_SIZE

_U32 = struct.Struct("<I")
_U64 = struct.Struct("<Q")
_unpack_u32 = _U32.unpack_from
_unpack_u64 = _U64.unpack_from
_pack_u32 = _U32.pack
_pack_u64 = _U64.pack
_pack_u32_into = _U32.pack_into
_pack_u64_into = _U64.pack_into
# the last page offset where a whole word lies in one page
_LAST_U32 = PAGE_SIZE - 4
_LAST_U64 = PAGE_SIZE - 8

# A watch covers the 8 bytes [addr, addr + 8): a store to [start, start + n) touches it when
# addr is in [start - 7, start + n).
_WATCH_SPAN = 8

# A store of at most this many bytes, with the 7 before it that a watch reaches back over, lies
# in at most two pages: the first and the last (``write`` checks just those before notifying).
_NEAR = PAGE_SIZE - _WATCH_SPAN + 1

# Copies larger than this move in pieces, so a huge copy never holds a second full-size buffer.
_COPY_CHUNK = 1 << 20


class Watch:
    """A registration made by :meth:`PhysicalMemory.watch`; :meth:`cancel` ends it."""

    __slots__ = ("addr", "callback", "_memory", "_active")

    def __init__(self, memory: PhysicalMemory, addr: int, callback: Callable[[int], object]):
        self.addr = addr
        self.callback = callback
        self._memory = memory
        self._active = True

    @property
    def active(self) -> bool:
        """True until :meth:`cancel` is called."""
        return self._active

    def cancel(self) -> None:
        """Stop calling the callback. Safe to call more than once and from inside a callback."""
        if not self._active:
            return
        self._active = False
        watches = self._memory._watches
        group = watches.get(self.addr)
        if group is not None:
            group.remove(self)
            if not group:
                del watches[self.addr]
            pages = self._memory._watch_pages
            pn = self.addr >> _SHIFT
            if pages[pn] == 1:
                del pages[pn]
            else:
                pages[pn] -= 1

    def __repr__(self) -> str:
        state = "active" if self._active else "cancelled"
        return f"<Watch 0x{self.addr:x} {state}>"


def _spans(addr: int, size: int):
    """``[addr, addr + size)`` page by page: ``(page number, offset in the page, offset in the
    range, bytes)`` of each piece, in address order."""
    pn = addr >> _SHIFT
    off = addr & _MASK
    pos = 0
    while pos < size:
        take = PAGE_SIZE - off
        if take > size - pos:
            take = size - pos
        yield pn, off, pos, take
        pos += take
        pn += 1
        off = 0


def _check_addr(addr: int) -> None:
    if addr < 0:
        raise ValueError(f"negative address {addr}")


def _check_size(size: int) -> None:
    if size < 0:
        raise ValueError(f"negative size {size}")


class PhysicalMemory:
    """Sparse, page-backed physical memory with write watchers.

    Addresses and sizes are non-negative ints; a negative one raises :class:`ValueError`.
    """

    __slots__ = ("_pages", "_watches", "_watch_pages", "_guard_lo", "_guard_hi", "_guard_open", "_guard_cb")

    def __init__(self) -> None:
        self._pages: dict[int, bytearray] = {}
        # address -> watchers of [address, address + 8), in registration order
        self._watches: dict[int, list[Watch]] = {}
        # page number -> how many watches start in it (a store far from every watch returns at once)
        self._watch_pages: dict[int, int] = {}
        # A guarded span (a debug "special pool"): reads of its closed pages call _guard_cb.
        self._guard_lo = 0
        self._guard_hi = 0
        self._guard_open: set[int] = set()
        self._guard_cb: Callable[[int, int], object] | None = None

    # ------------------------------------------------------------------ guarded span

    def guard(self, lo: int, hi: int, on_access: Callable[[int, int], object]) -> None:
        """Guard ``[lo, hi)`` (page aligned): a read of a page of it that is not open calls
        ``on_access(addr, size)`` before the read is served (the callback may raise to stop the
        reader). Pages start closed; :meth:`open_pages` and :meth:`close_pages` move them. This is
        the hardware side of a debugging allocator: memory freed by its owner stays readable
        only to whoever is caught reading it."""
        if lo & _MASK or hi & _MASK or hi <= lo:
            raise ValueError("a guarded span is page aligned and not empty")
        self._guard_lo = lo
        self._guard_hi = hi
        self._guard_open = set()
        self._guard_cb = on_access

    def open_pages(self, addr: int, size: int) -> None:
        """Make the guarded pages under ``[addr, addr + size)`` readable without a callback."""
        self._guard_open.update(range(addr >> _SHIFT, (addr + max(size, 1) - 1 >> _SHIFT) + 1))

    def close_pages(self, addr: int, size: int) -> None:
        """Guard the pages under ``[addr, addr + size)`` again."""
        self._guard_open.difference_update(range(addr >> _SHIFT, (addr + max(size, 1) - 1 >> _SHIFT) + 1))

    def _guarded(self, addr: int, size: int) -> None:
        if (addr >> _SHIFT) not in self._guard_open or (addr + size - 1 >> _SHIFT) not in self._guard_open:
            cb = self._guard_cb
            assert cb is not None  # a guarded span always has its callback
            cb(addr, size)

    # ------------------------------------------------------------------ residency

    @property
    def pages_resident(self) -> int:
        """How many pages have been allocated (written at least once)."""
        return len(self._pages)

    @property
    def bytes_resident(self) -> int:
        """Bytes of backing store allocated: ``pages_resident * PAGE_SIZE``."""
        return len(self._pages) * PAGE_SIZE

    def resident_pages(self) -> list[int]:
        """The numbers of the allocated pages, ascending."""
        return sorted(self._pages)

    def __repr__(self) -> str:
        return f"<PhysicalMemory {len(self._pages)} pages resident, {self.watch_count} watches>"

    # ------------------------------------------------------------------ reads

    def read(self, addr: int, size: int) -> bytes:
        """The ``size`` bytes at ``addr``; never-written bytes read as zero. Allocates nothing."""
        if addr < 0:
            _check_addr(addr)
        if size <= 0:
            _check_size(size)
            return b""
        if self._guard_lo <= addr < self._guard_hi:
            self._guarded(addr, size)
        off = addr & _MASK
        if off + size <= PAGE_SIZE:
            page = self._pages.get(addr >> _SHIFT)
            if page is None:
                return bytes(size)
            return bytes(page[off : off + size])
        out = bytearray(size)
        pages = self._pages
        for pn, off, pos, take in _spans(addr, size):
            page = pages.get(pn)
            if page is not None:
                out[pos : pos + take] = page[off : off + take]
        return bytes(out)

    # The word accessors are spelled out once per width (a compiled class takes no methods made
    # by a factory): within a page one unpack or pack, across a page boundary through
    # :meth:`read` or ``_store``; a store then notifies the watchers it touches, as :meth:`write`.

    def read_u32(self, addr: int) -> int:
        """The little-endian u32 at ``addr``."""
        if addr < 0:
            _check_addr(addr)
        if self._guard_lo <= addr < self._guard_hi:
            self._guarded(addr, 4)
        off = addr & _MASK
        if off <= _LAST_U32:
            page = self._pages.get(addr >> _SHIFT)
            return 0 if page is None else _unpack_u32(page, off)[0]
        return int.from_bytes(self.read(addr, 4), "little")

    def read_u64(self, addr: int) -> int:
        """The little-endian u64 at ``addr``."""
        if addr < 0:
            _check_addr(addr)
        if self._guard_lo <= addr < self._guard_hi:
            self._guarded(addr, 8)
        off = addr & _MASK
        if off <= _LAST_U64:
            page = self._pages.get(addr >> _SHIFT)
            return 0 if page is None else _unpack_u64(page, off)[0]
        return int.from_bytes(self.read(addr, 8), "little")

    # ------------------------------------------------------------------ writes

    def write(self, addr: int, data: bytes | bytearray | memoryview) -> None:
        """Store ``data`` at ``addr``, allocating pages as needed, then notify watchers."""
        if addr < 0:
            _check_addr(addr)
        if type(data) is not bytes and type(data) is not bytearray:
            data = memoryview(data).cast("B")
        n = len(data)
        if n == 0:
            return
        off = addr & _MASK
        if off + n <= PAGE_SIZE:  # within one page: _store's first case, without the call
            pn = addr >> _SHIFT
            page = self._pages.get(pn)
            if page is None:
                page = self._pages[pn] = bytearray(PAGE_SIZE)
            page[off : off + n] = data
        else:
            self._store(addr, data, n)
        wp = self._watch_pages
        if wp and (n > _NEAR or (addr - 7) >> _SHIFT in wp or (addr + n - 1) >> _SHIFT in wp):
            self._notify(addr, n)

    def write_u32(self, addr: int, value: int) -> None:
        """Store ``value`` (0 .. 2**32-1) little-endian at ``addr``."""
        if addr < 0:
            _check_addr(addr)
        if not 0 <= value <= 0xFFFF_FFFF:
            raise ValueError(f"value {value} does not fit in a u32")
        off = addr & _MASK
        if off <= _LAST_U32:
            pn = addr >> _SHIFT
            page = self._pages.get(pn)
            if page is None:
                page = self._pages[pn] = bytearray(PAGE_SIZE)
            _pack_u32_into(page, off, value)
        else:
            self._store(addr, _pack_u32(value), 4)
        wp = self._watch_pages
        # a watch starting up to 7 bytes before the word still overlaps it; the word's last byte is addr + 3
        if wp and ((addr - 7) >> _SHIFT in wp or (addr + 3) >> _SHIFT in wp):
            self._notify(addr, 4)

    def write_u64(self, addr: int, value: int) -> None:
        """Store ``value`` (0 .. 2**64-1) little-endian at ``addr``."""
        if addr < 0:
            _check_addr(addr)
        if not 0 <= value <= 0xFFFF_FFFF_FFFF_FFFF:
            raise ValueError(f"value {value} does not fit in a u64")
        off = addr & _MASK
        if off <= _LAST_U64:
            pn = addr >> _SHIFT
            page = self._pages.get(pn)
            if page is None:
                page = self._pages[pn] = bytearray(PAGE_SIZE)
            _pack_u64_into(page, off, value)
        else:
            self._store(addr, _pack_u64(value), 8)
        wp = self._watch_pages
        # a watch starting up to 7 bytes before the word still overlaps it; the word's last byte is addr + 7
        if wp and ((addr - 7) >> _SHIFT in wp or (addr + 7) >> _SHIFT in wp):
            self._notify(addr, 8)

    def fill(self, addr: int, size: int, pattern: bytes | bytearray | memoryview) -> None:
        """Write ``pattern`` over ``size`` bytes at ``addr``, repeated and cut off at ``size``.

        The pattern restarts at ``addr`` (byte ``addr + i`` gets ``pattern[i % len(pattern)]``).
        """
        _check_addr(addr)
        _check_size(size)
        pattern = bytes(pattern)
        if size == 0:
            return
        if not pattern:
            raise ValueError("fill pattern is empty")
        plen = len(pattern)
        if size <= plen:
            self._store(addr, pattern[:size], size)
        else:
            # One tile a page plus a pattern long: any page-sized run of the fill is a slice of it.
            tile = memoryview(pattern * (PAGE_SIZE // plen + 2))
            pages = self._pages
            for pn, off, pos, take in _spans(addr, size):
                page = pages.get(pn)
                if page is None:
                    page = pages[pn] = bytearray(PAGE_SIZE)
                phase = pos % plen
                page[off : off + take] = tile[phase : phase + take]
        if self._watches:
            self._notify(addr, size)

    def copy(self, src: int, dst: int, size: int) -> None:
        """Copy ``size`` bytes from ``src`` to ``dst``; overlapping ranges behave like memmove."""
        _check_addr(src)
        _check_addr(dst)
        _check_size(size)
        if size == 0:
            return
        if size <= _COPY_CHUNK:
            self._store(dst, self.read(src, size), size)
        elif dst <= src or dst >= src + size:
            # Front to back: the destination is below the source (or apart from it).
            pos = 0
            while pos < size:
                take = min(_COPY_CHUNK, size - pos)
                self._store(dst + pos, self.read(src + pos, take), take)
                pos += take
        else:
            # The destination overlaps the source from above: move the tail first.
            pos = size
            while pos > 0:
                take = min(_COPY_CHUNK, pos)
                pos -= take
                self._store(dst + pos, self.read(src + pos, take), take)
        if self._watches:
            self._notify(dst, size)

    def _store(self, addr: int, data: bytes | bytearray | memoryview, n: int) -> None:
        """Put ``n`` bytes of ``data`` at ``addr`` without notifying anyone."""
        pages = self._pages
        pn = addr >> _SHIFT
        off = addr & _MASK
        if off + n <= PAGE_SIZE:
            page = pages.get(pn)
            if page is None:
                page = pages[pn] = bytearray(PAGE_SIZE)
            page[off : off + n] = data
            return
        view = memoryview(data)
        for pn, off, pos, take in _spans(addr, n):
            page = pages.get(pn)
            if page is None:
                page = pages[pn] = bytearray(PAGE_SIZE)
            page[off : off + take] = view[pos : pos + take]

    # ------------------------------------------------------------------ watchers

    @property
    def watch_count(self) -> int:
        """How many watches are active."""
        return sum(len(group) for group in self._watches.values())

    def watch(self, addr: int, callback: Callable[[int], object]) -> Watch:
        """Call ``callback(addr)`` after every store that overlaps ``[addr, addr + 8)``.

        The callback runs once per store operation (``write``, ``write_u32``, ``write_u64``,
        ``fill``, ``copy``), after the bytes are in memory. When one store touches several watched
        locations the callbacks run by ascending address, then in registration order. A watch
        cancelled (or added) by a callback during a store is not called for that store. An
        exception from a callback propagates to the writer and skips the remaining callbacks.
        """
        _check_addr(addr)
        handle = Watch(self, addr, callback)
        group = self._watches.get(addr)
        if group is None:
            self._watches[addr] = [handle]
        else:
            group.append(handle)
        pn = addr >> _SHIFT
        self._watch_pages[pn] = self._watch_pages.get(pn, 0) + 1
        return handle

    def _notify(self, start: int, n: int) -> None:
        watches = self._watches
        lo = start - (_WATCH_SPAN - 1)
        hi = start + n
        pages = self._watch_pages
        first = max(lo, 0) >> _SHIFT
        last = (hi - 1) >> _SHIFT
        if last - first < 4:
            for pn in range(first, last + 1):
                if pn in pages:
                    break
            else:
                return
        if len(watches) <= n + _WATCH_SPAN:
            hits = [a for a in watches if lo <= a < hi]
            if not hits:
                return
            if len(hits) > 1:
                hits.sort()
        else:
            hits = [a for a in range(max(lo, 0), hi) if a in watches]
            if not hits:
                return
        # Snapshot first: callbacks may add or cancel watches.
        targets = [w for a in hits for w in watches[a]]
        for w in targets:
            if w._active:
                w.callback(w.addr)
