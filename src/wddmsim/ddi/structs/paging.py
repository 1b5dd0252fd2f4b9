"""Paging buffers: ``DXGKARG_BUILDPAGINGBUFFER`` and the flag unions of its operations
(``DXGK_TRANSFERFLAGS``, ``DXGK_DISCARDCONTENTFLAGS``, ``DXGK_MAPAPERTUREFLAGS``).

The operation union is declared with the arms the model builds (Transfer, Fill, DiscardContent,
MapApertureSegment, UnmapApertureSegment; the GpuMmu arms UpdatePageTable and FlushTlb from WDDM 2.0
and SignalMonitoredFence from WDDM 2.2, whose payloads are the named structures of :mod:`.gpummu`)
and its ``Reserved`` arm of 64 UINTs, which fixes the union at 256 bytes whatever other arms exist:
the members after the union (``hSystemContext``, ``DmaBufferGpuVirtualAddress``,
``DmaBufferWriteOffset``) sit where the header puts them. The other arms (ReadPhysical,
WritePhysical, SpecialLockTransfer, InitContextResource, TransferVirtual, FillVirtual,
CopyPageTableEntries, UpdateContextAllocation, NotifyResidency and the WDDM 3.x ones) are not
declared yet; all are smaller than the Reserved arm.

Spec: Microsoft's DxgkDdiBuildPagingBuffer, DXGK_BUILDPAGINGBUFFER_OPERATION and
DXGKARG_BUILDPAGINGBUFFER pages. ``MdlOffset`` is taken to be a Windows 7 addition (the member
pages say "supported starting with Windows 7"); ``DmaBufferGpuVirtualAddress`` and
``DmaBufferWriteOffset`` WDDM 2.0 ones. The guards of the new arms are those of the
DXGK_BUILDPAGINGBUFFER_OPERATION values that select them (UPDATE_PAGE_TABLE and FLUSH_TLB WDDM 2.0,
SIGNAL_MONITORED_FENCE WDDM 2.2; the WDDM 2.3 header guards the arms the same way).
"""

from ..enums import BUILDPAGINGBUFFER_OPERATION
from ..schema import D3DGPU_VIRTUAL_ADDRESS, HANDLE, PVOID, SIZE_T, UINT, ULONG, Array, Bit, flags, m, struct, union
from .common import PHYSICAL_ADDRESS
from .gpummu import (
    DXGK_BUILDPAGINGBUFFER_FLUSHTLB,
    DXGK_BUILDPAGINGBUFFER_SIGNALMONITOREDFENCE,
    DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE,
)

DXGK_TRANSFERFLAGS = flags(
    "DXGK_TRANSFERFLAGS",
    Bit("Swizzle"),
    Bit("Unswizzle"),
    Bit("AllocationIsIdle", doc="The allocation is idle: the driver need not wait for it."),
    Bit("TransferStart", doc="First sub-transfer of the allocation."),
    Bit("TransferEnd", doc="Last sub-transfer of the allocation."),
    doc="How a paging transfer relates to the whole allocation's move.",
    source="[D:d3dkmddi/ns-d3dkmddi-_dxgk_transferflags]",
)

DXGK_DISCARDCONTENTFLAGS = flags(
    "DXGK_DISCARDCONTENTFLAGS",
    Bit("AllocationIsIdle"),
    doc="Flags of a discard (eviction without copy-back).",
    source="[D:d3dkmddi/ns-d3dkmddi-_dxgk_discardcontentflags]",
)

DXGK_MAPAPERTUREFLAGS = flags(
    "DXGK_MAPAPERTUREFLAGS",
    Bit("CacheCoherent", doc="Map the pages cache-coherently."),
    doc="Flags of an aperture mapping.",
    source="[D:d3dkmddi/ns-d3dkmddi-_dxgk_mapapertureflags]",
)


def _segment_address(name: str):
    return struct(
        name,
        m("SegmentId", UINT, doc="0: system memory described by pMdl."),
        union(m("SegmentAddress", PHYSICAL_ADDRESS, doc="Segment base + offset."), m("pMdl", PVOID)),
    )


DXGKARG_BUILDPAGINGBUFFER = struct(
    "DXGKARG_BUILDPAGINGBUFFER",
    m("pDmaBuffer", PVOID, doc="In/out: the first free byte of the paging buffer."),
    m("DmaSize", UINT, doc="In/out: bytes left."),
    m("pDmaBufferPrivateData", PVOID),
    m("DmaBufferPrivateDataSize", UINT, doc="In/out: bytes of private data left."),
    m("Operation", BUILDPAGINGBUFFER_OPERATION),
    m("MultipassOffset", UINT, doc="In/out: the driver's progress across calls for one operation."),
    union(
        m("Transfer", struct(
            "Transfer_t",
            m("hAllocation", HANDLE, doc="NULL: a plain copy."),
            m("TransferOffset", UINT),
            m("TransferSize", SIZE_T),
            m("Source", _segment_address("Transfer_Source_t")),
            m("Destination", _segment_address("Transfer_Destination_t")),
            m("Flags", DXGK_TRANSFERFLAGS),
            m("MdlOffset", UINT, since="win7", doc="Offset in pages into the MDL."),
        )),
        m("Fill", struct(
            "Fill_t",
            m("hAllocation", HANDLE),
            m("FillSize", SIZE_T),
            m("FillPattern", UINT),
            m("Destination", struct("Fill_Destination_t",
                                    m("SegmentId", UINT), m("SegmentAddress", PHYSICAL_ADDRESS))),
        )),
        m("DiscardContent", struct(
            "DiscardContent_t",
            m("hAllocation", HANDLE),
            m("Flags", DXGK_DISCARDCONTENTFLAGS),
            m("SegmentId", UINT),
            m("SegmentAddress", PHYSICAL_ADDRESS),
        )),
        m("MapApertureSegment", struct(
            "MapApertureSegment_t",
            m("hDevice", HANDLE, doc="NULL for the primary."),
            m("hAllocation", HANDLE, doc="NULL for DMA buffers."),
            m("SegmentId", UINT),
            m("OffsetInPages", SIZE_T),
            m("NumberOfPages", SIZE_T),
            m("pMdl", PVOID),
            m("Flags", DXGK_MAPAPERTUREFLAGS),
            m("MdlOffset", ULONG, since="win7"),
        )),
        m("UnmapApertureSegment", struct(
            "UnmapApertureSegment_t",
            m("hDevice", HANDLE),
            m("hAllocation", HANDLE),
            m("SegmentId", UINT),
            m("OffsetInPages", SIZE_T),
            m("NumberOfPages", SIZE_T),
            m("DummyPage", PHYSICAL_ADDRESS, doc="Unmapped aperture pages point here."),
        )),
        m("UpdatePageTable", DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE, since="wddm2_0",
          doc="DXGK_OPERATION_UPDATE_PAGE_TABLE: write page-table entries."),
        m("FlushTlb", DXGK_BUILDPAGINGBUFFER_FLUSHTLB, since="wddm2_0",
          doc="DXGK_OPERATION_FLUSH_TLB: invalidate an address space's cached translations."),
        m("SignalMonitoredFence", DXGK_BUILDPAGINGBUFFER_SIGNALMONITOREDFENCE, since="wddm2_2",
          doc="DXGK_OPERATION_SIGNAL_MONITORED_FENCE: write a monitored fence value."),
        m("Reserved", struct("PagingReserved_t", m("Reserved", Array(UINT, 64))),
          doc="Sizes the union: 256 bytes whatever the other arms are."),
    ),
    m("hSystemContext", HANDLE, doc="The paging system context."),
    m("DmaBufferGpuVirtualAddress", D3DGPU_VIRTUAL_ADDRESS, since="wddm2_0"),
    m("DmaBufferWriteOffset", UINT, since="wddm2_0", doc="Current byte offset in the paging buffer."),
    doc="Asks the driver to write the GPU commands of one memory operation into a paging buffer.",
    source="[D:d3dkmddi/ns-d3dkmddi-_dxgkarg_buildpagingbuffer]",
)
