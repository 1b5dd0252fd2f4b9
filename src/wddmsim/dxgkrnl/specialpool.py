"""The OS's special pool: guarded kernel pages that catch a driver reading memory it must not.

Driver Verifier's special pool places an allocation on a page of its own and keeps the page
unreadable once the allocation is freed, so that a stray read is caught at the read
(https://learn.microsoft.com/windows-hardware/drivers/devtest/special-pool). The OS model uses the
same idea, backed by the memory's guarded span (:meth:`wddmsim.gpu.memory.PhysicalMemory.guard`):
each page belongs to an owner, whose ``on_read(addr, size)`` runs when a closed page is read (the
owner judges the read; it may raise to stop the reader). Owners:

- :mod:`wddmsim.dxgkrnl.hwscheduling`: a hardware-queue submission's private data, open only for the
  duration of DxgkDdiSubmitCommandToHwQueue (rule 95, HwQueuePrivateDataNotRetained);
- :mod:`wddmsim.dxgkrnl.vidsch`: the page ``pDmaBufferPrivateData`` points at when a submission has
  no private data (``DmaBufferPrivateDataSize`` 0), never open (rule 21,
  NoPrivateDataValidationWhenEmpty).

The numbers are the rule catalogue's: ``wddmsim rules N`` prints rule N, docs/rules.md lists them
all.

A page handed back goes to quarantine and is reused only when the free pages run out, so a late
read still finds its owner for as long as possible.
"""

from __future__ import annotations

from collections import deque
from typing import Callable

#: Where the guarded pages live (a range of kernel address space of their own).
SPECIAL_POOL_BASE = 0x30_0000_0000
SPECIAL_POOL_PAGES = 256
PAGE = 4096


class SpecialPool:
    """The guarded pages of one adapter's OS (see the module doc)."""

    __slots__ = ("memory", "_owners", "_free", "_quarantine")

    def __init__(self, memory):
        self.memory = memory
        self._owners: dict[int, Callable[[int, int], object]] = {}
        self._free = deque(SPECIAL_POOL_BASE + i * PAGE for i in range(SPECIAL_POOL_PAGES))
        self._quarantine: deque = deque()
        memory.guard(SPECIAL_POOL_BASE, SPECIAL_POOL_BASE + SPECIAL_POOL_PAGES * PAGE, self._read)

    def take(self, on_read: Callable[[int, int], object]) -> int:
        """A closed page for an owner whose ``on_read`` judges reads of it."""
        if not self._free:
            self._free.append(self._quarantine.popleft())
        page = self._free.popleft()
        self._owners[page] = on_read
        return page

    def give_back(self, page: int) -> None:
        """The owner is done with ``page``: it stays closed (and owned) in quarantine."""
        self.memory.close_pages(page, PAGE)
        self._quarantine.append(page)

    def _read(self, addr: int, size: int) -> None:
        owner = self._owners.get(addr - addr % PAGE)
        if owner is not None:
            owner(addr, size)
