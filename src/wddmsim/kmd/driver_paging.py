"""The reference driver's paging buffers: ``DxgkDdiBuildPagingBuffer`` for VidMm's operations (a
mixin of :class:`~wddmsim.kmd.driver.ReferenceDriver`; the WDDM 2.0 page-table operations,
``UPDATE_PAGE_TABLE`` and ``FLUSH_TLB``, are kmd/wddm2.py's).

- TRANSFER is a COPY between the two addresses (a segment address, or for segment 0 the system
  memory the MDL describes: the model's MDL is the physical address of its first page, plus
  ``MdlOffset`` pages); FILL a FILL; DISCARD_CONTENT needs no command; MAP/UNMAP_APERTURE_SEGMENT
  program the GART directly (MMIO). Each operation also gets a 16-byte private-data record. A
  buffer without room answers ``STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER``.
- With ``paging_transfer_chunk`` a TRANSFER is one COPY per chunk; when they do not all fit, the
  driver writes those that do, keeps the bytes done in ``MultipassOffset`` and answers
  ``STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER`` (multipass).

Spec: Microsoft's reference pages of DxgkDdiBuildPagingBuffer and DXGKARG_BUILDPAGINGBUFFER;
docs/driver.md (section 8).
"""

from __future__ import annotations

import struct

from ..ddi.enums import DXGK_BUILDPAGINGBUFFER_OPERATION
from ..ddi.ntstatus import NTSTATUS
from ..gpu import commands as C
from ..gpu.mmio import PAGE_SIZE

SUCCESS = int(NTSTATUS.STATUS_SUCCESS)
_OP_TRANSFER = int(DXGK_BUILDPAGINGBUFFER_OPERATION.DXGK_OPERATION_TRANSFER)
_OP_FILL = int(DXGK_BUILDPAGINGBUFFER_OPERATION.DXGK_OPERATION_FILL)
_OP_DISCARD = int(DXGK_BUILDPAGINGBUFFER_OPERATION.DXGK_OPERATION_DISCARD_CONTENT)
_OP_MAP_APERTURE = int(DXGK_BUILDPAGINGBUFFER_OPERATION.DXGK_OPERATION_MAP_APERTURE_SEGMENT)
_OP_UNMAP_APERTURE = int(DXGK_BUILDPAGINGBUFFER_OPERATION.DXGK_OPERATION_UNMAP_APERTURE_SEGMENT)
#: Paging buffers the driver asks VidMm for (DXGK_QUERYSEGMENTOUT): ``paging_buffer_size`` bytes of
#: commands (a setting, 64 KiB by default) and 4 KiB of private data each, in contiguous system memory.
PAGING_PRIVATE_SIZE = 4096
#: The private data record of one paging operation: magic, operation, bytes of commands, size moved.
PAGING_MAGIC = 0x504D_5752  # "RWMP"
_PAGING_PRIVATE = struct.Struct("<IIII")
_COPY_BYTES = len(C.copy(0, 0, 0))  # one COPY command


class PagingDdi:
    """Mixin of :class:`~wddmsim.kmd.driver.ReferenceDriver`: ``DxgkDdiBuildPagingBuffer`` (see
    the module doc)."""

    # state set up by ReferenceDriver.__init__: hw (the GPU's register interface), mem (system
    # memory), settings, paging_operations, paging_passes, _OP_UPDATE_PAGE_TABLE, _OP_FLUSH_TLB

    def DxgkDdiBuildPagingBuffer(self, hAdapter: int, pBuildPagingBuffer) -> int:
        """The commands of one paging operation (see the module doc)."""
        args = pBuildPagingBuffer
        op = args.Operation
        if op == self._OP_UPDATE_PAGE_TABLE or op == self._OP_FLUSH_TLB:
            return self._build_page_table_ops(args)
        cmds = b""
        moved = 0
        if op == _OP_TRANSFER:
            return self._build_transfer(args)
        elif op == _OP_FILL:
            f = args.Fill
            moved = f.FillSize
            cmds = C.fill(f.Destination.SegmentAddress.QuadPart, moved, f.FillPattern)
        elif op == _OP_DISCARD:
            pass
        elif op in (_OP_MAP_APERTURE, _OP_UNMAP_APERTURE):
            arm = args.MapApertureSegment if op == _OP_MAP_APERTURE else args.UnmapApertureSegment
            base = self._segment_base(arm.SegmentId) + arm.OffsetInPages * PAGE_SIZE
            size = arm.NumberOfPages * PAGE_SIZE
            if op == _OP_MAP_APERTURE:
                self.hw.map_aperture(base, arm.pMdl + getattr(arm, "MdlOffset", 0) * PAGE_SIZE, size)
            else:
                # Unmapped pages must point at the dummy page: GPU accesses through them keep working.
                dummy = arm.DummyPage.QuadPart
                for off in range(0, size, PAGE_SIZE):
                    self.hw.map_aperture(base + off, dummy, PAGE_SIZE)
            moved = size
        else:
            return int(NTSTATUS.STATUS_NOT_SUPPORTED)
        if len(cmds) > args.DmaSize or args.DmaBufferPrivateDataSize < _PAGING_PRIVATE.size:
            return int(NTSTATUS.STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER)
        if cmds:
            self.mem.write(args.pDmaBuffer, cmds)
        self.mem.write(args.pDmaBufferPrivateData, _PAGING_PRIVATE.pack(PAGING_MAGIC, int(op), len(cmds), moved & 0xFFFFFFFF))
        args.pDmaBuffer += len(cmds)
        args.DmaSize -= len(cmds)
        args.pDmaBufferPrivateData += _PAGING_PRIVATE.size
        args.DmaBufferPrivateDataSize -= _PAGING_PRIVATE.size
        self.paging_operations += 1
        return SUCCESS

    def _build_transfer(self, args) -> int:
        """A TRANSFER: COPYs of at most ``paging_transfer_chunk`` bytes (the whole transfer in one
        without a chunk). When they do not all fit the room left in the paging buffer, as many as
        fit are written and the bytes done so far kept in ``MultipassOffset``, answered with
        STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER: VidMm submits that part and calls again with the
        same operation in a new buffer (Microsoft's DxgkDdiBuildPagingBuffer page)."""
        t = args.Transfer
        size = t.TransferSize
        mdl_offset = getattr(t, "MdlOffset", 0)  # a Windows 7 member
        src = self._paging_address(t.Source, mdl_offset) + t.TransferOffset
        dst = self._paging_address(t.Destination, mdl_offset) + t.TransferOffset
        chunk = self.settings.paging_transfer_chunk or max(size, 1)
        done = start = args.MultipassOffset
        room = args.DmaSize // _COPY_BYTES if args.DmaBufferPrivateDataSize >= _PAGING_PRIVATE.size else 0
        pieces = []
        while done < size and len(pieces) < room:
            n = min(chunk, size - done)
            pieces.append(C.copy(src + done, dst + done, n))
            done += n
        if done < size and not pieces:
            return int(NTSTATUS.STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER)
        if args.DmaBufferPrivateDataSize < _PAGING_PRIVATE.size:
            return int(NTSTATUS.STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER)
        cmds = b"".join(pieces)
        if cmds:
            self.mem.write(args.pDmaBuffer, cmds)
        self.mem.write(args.pDmaBufferPrivateData,
                       _PAGING_PRIVATE.pack(PAGING_MAGIC, _OP_TRANSFER, len(cmds), (done - start) & 0xFFFFFFFF))
        args.pDmaBuffer += len(cmds)
        args.DmaSize -= len(cmds)
        args.pDmaBufferPrivateData += _PAGING_PRIVATE.size
        args.DmaBufferPrivateDataSize -= _PAGING_PRIVATE.size
        if done < size:
            args.MultipassOffset = done
            self.paging_passes += 1
            return int(NTSTATUS.STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER)
        self.paging_operations += 1
        return SUCCESS

    def _segment_base(self, segment_id: int) -> int:
        return self.hw.segments[segment_id - 1].base

    def _paging_address(self, side, mdl_offset: int) -> int:
        if side.SegmentId:
            return side.SegmentAddress.QuadPart
        return side.pMdl + mdl_offset * PAGE_SIZE
