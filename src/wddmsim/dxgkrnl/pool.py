"""Kernel memory: a page-granular allocator over a range of the simulated system memory.

DMA buffers, their private data, allocation and patch lists, rings and fence slots are kernel
memory the CPU and the GPU both reach. Freed blocks go back to a free list per size and are reused
first, so a long run touches a bounded set of pages: memory grows with packets in flight, not with
packets run.

Spec: Microsoft's DXGK_CONTEXTINFO page (DMA buffers in contiguous system memory when the driver asks
for no DMA segment).
"""

from __future__ import annotations

PAGE = 4096


class KernelPool:
    """Allocate page-aligned blocks in ``[base, limit)``."""

    __slots__ = ("base", "limit", "_top", "_free", "in_use")

    def __init__(self, base: int = 0x1000_0000, limit: int = 0x40_0000_0000):
        self.base = base
        self.limit = limit
        self._top = base
        self._free: dict[int, list[int]] = {}
        self.in_use = 0

    def alloc(self, size: int) -> int:
        """A page-aligned block of at least ``size`` bytes."""
        size = -(-max(size, 1) // PAGE) * PAGE
        free = self._free.get(size)
        self.in_use += size
        if free:
            return free.pop()
        addr = self._top
        if addr + size > self.limit:
            raise MemoryError(f"kernel pool exhausted ({self.limit - self.base} bytes)")
        self._top = addr + size
        return addr

    def free(self, addr: int, size: int) -> None:
        size = -(-max(size, 1) // PAGE) * PAGE
        self.in_use -= size
        free = self._free.get(size)
        if free is None:
            self._free[size] = [addr]
        else:
            free.append(addr)

    @property
    def high_water(self) -> int:
        """Bytes of address space ever handed out."""
        return self._top - self.base
