"""The reference driver's DMA buffers: what ``DxgkDdiRender``, ``DxgkDdiPresent`` and
``DxgkDdiPatch`` write (a mixin of :class:`~wddmsim.kmd.driver.ReferenceDriver`).

- ``DxgkDdiRender``: validates the user-mode command buffer (GPU commands whose address fields are
  patched from allocations), copies it to the DMA buffer, turns the input patch list into the
  output list with DMA-buffer offsets, pre-patches allocations whose segment is known, and writes
  its private data record. FENCE, FLIP and INDIRECT are privileged.
- ``DxgkDdiPresent``: a blt from the source allocation to the destination (a COPY of the rectangle's
  bytes) or a flip of the source (FLIP), with patch locations for both. A present with ``Flip`` or
  ``FlipWithNoWait`` puts a FLIP of the source surface with the present's ``FlipInterval`` into the
  DMA buffer (a no-wait flip goes to the display's pending-flip registers). A driver with MMIO flips
  gets no DMA buffer for a flip and writes nothing: the OS flips the source with
  ``DxgkDdiSetVidPnSourceAddress`` (kmd/driver_display.py).
- ``DxgkDdiPatch``: writes each allocation's final address at the patch offsets of the range.

The private data record at the start of each DMA buffer's private data (magic, context handle,
bytes of commands, commands) is checked by ``DxgkDdiSubmitCommand`` and cleared by
``DxgkDdiCancelCommand`` (kmd/driver_submission.py).

Spec: Microsoft's reference pages of DxgkDdiRender, DxgkDdiPresent and DxgkDdiPatch, and its
"Splitting a DMA buffer" page; docs/driver.md (section 7).
"""

from __future__ import annotations

import ctypes
import struct
from bisect import bisect_right

from ..ddi.ntstatus import NTSTATUS
from ..gpu import commands as C

SUCCESS = int(NTSTATUS.STATUS_SUCCESS)
_PRIVILEGED_INSTRUCTION = int(NTSTATUS.STATUS_PRIVILEGED_INSTRUCTION)
_ILLEGAL_INSTRUCTION = int(NTSTATUS.STATUS_ILLEGAL_INSTRUCTION)

#: The driver's private data record at the start of each DMA buffer's private data:
#: magic, context handle, bytes of commands rendered, commands rendered.
PRIVATE_MAGIC = 0x444D_5752  # "RWMD"
_PRIVATE = struct.Struct("<IIII")
PRIVATE_DATA_SIZE = 32

#: Opcodes a user-mode command buffer may hold; the others are privileged.
USER_OPCODES = frozenset({C.NOP, C.WORK, C.FILL, C.COPY, C.WAIT, C.TIMESTAMP})
#: Where each user command's address fields sit (offset from the packet start), for patching.
ADDRESS_FIELDS = {
    C.FILL: (C.FILL_DST,),
    C.COPY: (C.COPY_SRC, C.COPY_DST),
    C.WAIT: (C.WAIT_ADDR,),
    C.TIMESTAMP: (C.TIMESTAMP_ADDR,),
}


class DmaBufferDdi:
    """Mixin of :class:`~wddmsim.kmd.driver.ReferenceDriver`: the entry points that build DMA
    buffers (see the module doc)."""

    # state set up by ReferenceDriver.__init__: mem (system memory), _plist and _alist (the
    # D3DDDI_PATCHLOCATIONLIST and DXGK_ALLOCATIONLIST structures of the driver's version)

    def DxgkDdiRender(self, hContext: int, pRender) -> int:
        """Validate and copy a user-mode command buffer into the DMA buffer (see the module doc)."""
        if self._node_of(hContext) < 0:
            return int(NTSTATUS.STATUS_INVALID_HANDLE)
        n = pRender.CommandLength
        if n > pRender.DmaSize:
            return int(NTSTATUS.STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER)
        mem = self.mem
        data = mem.read(pRender.pCommand, n)
        starts = []  # each command's offset in the command buffer (split points, rule 30)
        packets, error = C.scan(data)
        for offset, opcode in packets:
            if opcode not in USER_OPCODES:
                return _PRIVILEGED_INSTRUCTION
            starts.append(offset)
        if error is not None:
            return _ILLEGAL_INSTRUCTION
        count = len(starts)
        dma = pRender.pDmaBuffer
        dma_start = pRender.DmaBufferPhysicalAddress.QuadPart
        mem.write(dma, data)
        # Patch list: input offsets are into the command buffer; output ones into the DMA buffer,
        # which this render starts at offset (pDmaBuffer - start of the buffer).
        nin = pRender.PatchLocationListInSize
        if nin:
            if nin > pRender.PatchLocationListOutSize:
                return int(NTSTATUS.STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER)
            psize = ctypes.sizeof(self._plist)
            asize = ctypes.sizeof(self._alist)
            base_off = dma - dma_start if dma_start else 0
            raw = mem.read(pRender.pPatchLocationListIn, nin * psize)
            out = []
            for i in range(nin):
                pl = self._plist.from_buffer_copy(raw, i * psize)
                if pl.AllocationIndex >= pRender.AllocationListSize or pl.PatchOffset + 8 > n:
                    return int(NTSTATUS.STATUS_INVALID_PARAMETER)
                # The split point of an allocation is the start of the command that uses it: the
                # buffer can run up to there without it (Microsoft's "Splitting a DMA buffer").
                pl.SplitOffset = base_off + starts[bisect_right(starts, pl.PatchOffset) - 1]
                pl.PatchOffset += base_off
                out.append(pl)
                al = self._alist.from_buffer_copy(mem.read(pRender.pAllocationList + pl.AllocationIndex * asize, asize))
                if al.SegmentId:
                    # Pre-patch: the OS may skip DxgkDdiPatch for this buffer (DxgkDdiRender's page).
                    mem.write_u64(dma + pl.PatchOffset - base_off, al.PhysicalAddress.QuadPart + pl.AllocationOffset)
            # In the order the stream uses the allocations (rule 30), whatever the input order.
            out.sort(key=lambda pl: pl.SplitOffset)
            mem.write(pRender.pPatchLocationListOut, b"".join(bytes(pl) for pl in out))
            pRender.pPatchLocationListOut += nin * psize
        if pRender.pDmaBufferPrivateData and pRender.DmaBufferPrivateDataSize >= _PRIVATE.size:
            mem.write(pRender.pDmaBufferPrivateData, _PRIVATE.pack(PRIVATE_MAGIC, hContext & 0xFFFFFFFF, n, count))
        pRender.pDmaBuffer = dma + n
        return SUCCESS

    def DxgkDdiPresent(self, hContext: int, pPresent) -> int:
        """A blt (COPY of the source rectangle's bytes, 4 bytes a pixel) or a flip of the source."""
        if self._node_of(hContext) < 0:
            return int(NTSTATUS.STATUS_INVALID_HANDLE)
        flags = pPresent.Flags
        if flags.Flip and not pPresent.pDmaBuffer:
            # An MMIO flip (FlipOnVSyncMmIo): no DMA buffer to write; the OS flips the source with
            # DxgkDdiSetVidPnSourceAddress.
            return SUCCESS
        cb = C.CommandBuffer()
        patches = []
        if flags.Flip:
            off = cb.mark()
            cb.flip(0, 0, int(pPresent.FlipInterval), no_wait=bool(flags.FlipWithNoWait))
            patches.append((1, off + C.FLIP_SURFACE))
        elif flags.Blt:
            r = pPresent.SrcRect
            size = max(0, r.right - r.left) * max(0, r.bottom - r.top) * 4
            off = cb.mark()
            cb.copy(0, 0, size)
            patches.append((1, off + C.COPY_SRC))
            patches.append((2, off + C.COPY_DST))
        else:
            return int(NTSTATUS.STATUS_INVALID_PARAMETER)
        data = cb.data
        if len(data) > pPresent.DmaSize:
            return int(NTSTATUS.STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER)
        if len(patches) > pPresent.PatchLocationListOutSize:
            return int(NTSTATUS.STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER)
        mem = self.mem
        dma = pPresent.pDmaBuffer
        dma_start = pPresent.DmaBufferPhysicalAddress.QuadPart
        base_off = dma - dma_start if dma_start else 0
        mem.write(dma, data)
        asize = ctypes.sizeof(self._alist)
        out = bytearray()
        for index, offset in patches:
            pl = self._plist()
            pl.AllocationIndex = index
            pl.PatchOffset = base_off + offset
            pl.SplitOffset = base_off  # the one command of the present uses both allocations
            out += bytes(pl)
            al = self._alist.from_buffer_copy(mem.read(pPresent.pAllocationList + index * asize, asize))
            if al.SegmentId:
                mem.write_u64(dma + offset, al.PhysicalAddress.QuadPart)
        mem.write(pPresent.pPatchLocationListOut, bytes(out))
        pPresent.pPatchLocationListOut += len(out)
        if pPresent.pDmaBufferPrivateData and pPresent.DmaBufferPrivateDataSize >= _PRIVATE.size:
            mem.write(pPresent.pDmaBufferPrivateData, _PRIVATE.pack(PRIVATE_MAGIC, hContext & 0xFFFFFFFF, len(data), 1))
        pPresent.pDmaBuffer = dma + len(data)
        return SUCCESS

    def DxgkDdiPatch(self, hAdapter: int, pPatch) -> int:
        """Write final allocation addresses at the patch offsets of the submitted range."""
        count = pPatch.PatchLocationListSubmissionLength
        if not count:
            return SUCCESS
        mem = self.mem
        psize = ctypes.sizeof(self._plist)
        asize = ctypes.sizeof(self._alist)
        first = pPatch.PatchLocationListSubmissionStart
        raw = mem.read(pPatch.pPatchLocationList + first * psize, count * psize)
        alist = mem.read(pPatch.pAllocationList, pPatch.AllocationListSize * asize)
        dma = pPatch.pDmaBuffer
        for i in range(count):
            pl = self._plist.from_buffer_copy(raw, i * psize)
            al = self._alist.from_buffer_copy(alist, pl.AllocationIndex * asize)
            mem.write_u64(dma + pl.PatchOffset, al.PhysicalAddress.QuadPart + pl.AllocationOffset)
        return SUCCESS
