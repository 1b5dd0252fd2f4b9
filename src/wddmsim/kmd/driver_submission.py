"""The reference driver's submission path: each node's ring and fence slot, ``DxgkDdiSubmitCommand``
and ``DxgkDdiCancelCommand`` (a mixin of :class:`~wddmsim.kmd.driver.ReferenceDriver`).

- A node is the engine of the same number with its ring and its fence slot, both in contiguous
  system memory (``DxgkDdiStartDevice`` gives them). A packet never wraps around the end of a ring:
  the end is padded with one NOP.
- ``DxgkDdiSubmitCommand``: an INDIRECT packet for ``DmaBufferSubmissionStartOffset..EndOffset`` and
  a FENCE of ``SubmissionFenceId`` (with interrupt) on the node's ring, then the doorbell.
  ``NullRendering`` puts only the FENCE on the ring. When the buffer has private data, its record
  must carry the DMA-buffer magic (a paging buffer's record has a magic of its own). A flip's FLIP
  commands get the submission's VidPn source, which ``DxgkDdiPresent`` did not know.
  When the OS submits again a buffer a preemption stopped, the ring gets the WORK still owed, then
  an INDIRECT from the command the engine stopped before (kmd/driver_preemption.py).
- ``DxgkDdiCancelCommand`` (CancelCommandAware, Windows 8 and later) checks and clears the
  cancelled packet's private data record.
- A node's last completed fence is its fence slot, carried through the ids the driver refused with
  STATUS_INVALID_PARAMETER (kmd/wddm2.py): the OS counts each of those complete once the fence
  before it is.

Spec: Microsoft's reference pages of DxgkDdiSubmitCommand and DXGKARG_SUBMITCOMMAND,
DxgkDdiSubmitCommandVirtual and DxgkDdiCancelCommand; docs/driver.md (section 5).
"""

from __future__ import annotations

from collections import deque

from ..ddi.fenceid import U32, after
from ..ddi.ntstatus import NTSTATUS
from ..gpu import commands as C
from .driver_buffers import PRIVATE_MAGIC

SUCCESS = int(NTSTATUS.STATUS_SUCCESS)
_INDIRECT_SIZE = 16
_FENCE_SIZE = 20


class _Node:
    """The driver's per-node state: its ring and fence slot (the engine is the one of the same
    number), fence bookkeeping."""

    __slots__ = ("ordinal", "ring", "ring_size", "wptr", "fence_addr", "last_submitted",
                 "last_reported", "interrupt_data", "preempt_fence", "inflight", "refused", "refused_through")

    def __init__(self, ordinal: int, ring: int, ring_size: int, fence_addr: int):
        self.ordinal = ordinal
        self.ring = ring
        self.ring_size = ring_size
        self.wptr = 0
        self.fence_addr = fence_addr
        self.last_submitted = 0
        self.last_reported = 0
        self.interrupt_data = None
        self.preempt_fence = 0  # PreemptionFenceId of the request the engine is answering
        #: submissions on the ring not yet reported complete: (fence, buffer address, first offset,
        #: WORK owed from an earlier preemption)
        self.inflight: deque = deque()
        self.refused: set[int] = set()  # SubmissionFenceIds refused with STATUS_INVALID_PARAMETER
        self.refused_through = None  # the completed fence those carried the node to


class SubmissionDdi:
    """Mixin of :class:`~wddmsim.kmd.driver.ReferenceDriver`: the rings, ``DxgkDdiSubmitCommand``,
    ``DxgkDdiCancelCommand`` and each node's completed fence (see the module doc)."""

    # state set up by ReferenceDriver.__init__: hw (the GPU's register interface), mem (system
    # memory), nodes, multi_engine_aware, paging_node, cancelled, reads_of_private_data, _resume,
    # _ring_roots, _submit_has_node

    def _ring_put(self, ring: int, size: int, wptr: int, rptr: int, packet: bytes) -> int | None:
        """Write ``packet`` into the ring at ``ring`` (``size`` bytes, the engine has fetched up to
        ``rptr``) from ``wptr``: the new write pointer, or None if there is no room. A packet never
        wraps: the end of the ring is padded with one NOP."""
        n = len(packet)
        free = (rptr - wptr - 4) % size
        if wptr + n > size:
            pad = size - wptr
            if free < pad + n:
                return None
            self.mem.write(ring + wptr, C.nop(pad // 4))
            wptr = 0
            free -= pad
        if free < n:
            return None
        self.mem.write(ring + wptr, packet)
        return (wptr + n) % size

    def _ring_write(self, node: _Node, packet: bytes) -> bool:
        """Append ``packet`` to a node's ring (False: the ring is full)."""
        wptr = self._ring_put(node.ring, node.ring_size, node.wptr, self.hw.rptr(node.ordinal), packet)
        if wptr is None:
            return False
        node.wptr = wptr
        return True

    def DxgkDdiSubmitCommand(self, hAdapter: int, pSubmitCommand) -> int:
        """INDIRECT to the submitted range plus FENCE of SubmissionFenceId, then the doorbell."""
        args = pSubmitCommand
        if not self.multi_engine_aware:
            ordinal = 0
        elif self._submit_has_node:
            ordinal = args.NodeOrdinal
        elif args.hContext:
            ordinal = self._node_of(args.hContext)
        else:
            ordinal = self.paging_node  # a paging submission without a context (before Windows 8)
        if not 0 <= ordinal < len(self.nodes):
            return int(NTSTATUS.STATUS_INVALID_PARAMETER)
        node = self.nodes[ordinal]
        flags = args.Flags.Value  # Paging is bit 0, NullRendering bit 3, Flip/FlipWithNoWait bits 4-5
        if args.DmaBufferPrivateDataSize:
            # Rule 21: private data is validated only when there is some.
            self.reads_of_private_data += 1
            magic = self.mem.read_u32(args.pDmaBufferPrivateData)
            if magic != PRIVATE_MAGIC and not flags & 0x1:
                return int(NTSTATUS.STATUS_INVALID_PARAMETER)
        start = args.DmaBufferSubmissionStartOffset
        length = args.DmaBufferSubmissionEndOffset - start
        fence_id = args.SubmissionFenceId
        if flags & 0x30 and length:
            # A flip: DxgkDdiPresent did not know the VidPn source; the submission says which.
            self._aim_flips(args.DmaBufferPhysicalAddress.QuadPart + start, length, args.VidPnSourceId)
        # The ring may last have run a buffer in a GPU virtual address space: back to physical.
        packet = self._switch_root(node, 0) if self._ring_roots else b""
        fence = C.fence(node.fence_addr, fence_id, interrupt=True)
        if length and not flags & 0x8:
            packet += self._buffer_call(node, fence_id, args.DmaBufferPhysicalAddress.QuadPart + start, length,
                                        owner=args.hContext)
        packet += fence
        # _ring_write, inline
        wptr = self._ring_put(node.ring, node.ring_size, node.wptr, self.hw.rptr(node.ordinal), packet)
        if wptr is None:
            return int(NTSTATUS.STATUS_UNSUCCESSFUL)
        node.wptr = wptr
        if not node.last_submitted or after(fence_id, node.last_submitted):
            node.last_submitted = fence_id
        self.hw.doorbell(node.ordinal, node.wptr)
        return SUCCESS

    def _buffer_call(self, node: _Node, fence: int, address: int, length: int, root: int = 0,
                     owner: int = 0) -> bytes:
        """The ring commands that run the buffer at ``address`` (physical, or virtual in the address
        space ``root``, which the ring must be in) for the context ``owner``: an INDIRECT to all of
        it, or for a buffer a preemption stopped, the WORK it still owed and an INDIRECT to the
        commands not yet run. Recorded as in flight."""
        saved = self._resume.pop((owner, root, address), None) if self._resume else None
        if saved is None:
            offset = owed = 0
            packet = C.indirect(address, length)
        else:
            offset, owed = saved
            packet = (C.work(owed) if owed else b"") + \
                (C.indirect(address + offset, length - offset) if offset < length else b"")
        node.inflight.append((fence, address, offset, owed, root, owner))
        return packet

    def _switch_root(self, node: _Node, root: int) -> bytes:
        """SET_ADDRESS_SPACE to ``root`` if the ring is not already in it (0: physical addressing)."""
        if self._ring_roots.get(node.ordinal, 0) == root:
            return b""
        self._ring_roots[node.ordinal] = root
        return C.set_address_space(root)

    def _aim_flips(self, address: int, length: int, source: int) -> None:
        """Write ``source`` into every FLIP command of the buffer range."""
        data = self.mem.read(address, length)
        for cmd in C.iter_commands(data):
            if cmd.opcode == C.FLIP:
                self.mem.write_u32(address + cmd.offset + C.FLIP_SOURCE, source)

    def DxgkDdiCancelCommand(self, hAdapter: int, pCancelCommand) -> int:
        """A packet that will never reach the hardware: nothing of it is held here but its private
        data record, which is checked and cleared."""
        args = pCancelCommand
        if self._node_of(args.hContext) < 0:
            return int(NTSTATUS.STATUS_INVALID_HANDLE)
        if args.DmaBufferPrivateDataSize:
            if self.mem.read_u32(args.pDmaBufferPrivateData) != PRIVATE_MAGIC:
                return int(NTSTATUS.STATUS_INVALID_PARAMETER)
            self.mem.write_u32(args.pDmaBufferPrivateData, 0)
        self.cancelled += 1
        return SUCCESS

    def _completed(self, node: _Node) -> int:
        """The node's last completed fence: its fence slot, carried through the ids the driver
        refused with STATUS_INVALID_PARAMETER (the OS counts each complete once the fence before it
        is, as DxgkDdiSubmitCommandVirtual's page says; fence ids of a node are consecutive)."""
        value = self.mem.read_u64(node.fence_addr) & U32
        refused = node.refused
        if refused:
            if node.refused_through is not None and after(node.refused_through, value):
                value = node.refused_through
            while (value + 1) & U32 in refused:
                value = (value + 1) & U32
                refused.discard(value)
            node.refused_through = value  # the slot stays behind until a later fence passes it
        elif node.refused_through is not None:
            if after(node.refused_through, value):
                value = node.refused_through
            else:
                node.refused_through = None  # the slot has caught up
        return value
