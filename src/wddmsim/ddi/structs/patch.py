"""Patching and cancelling a DMA buffer: ``DXGKARG_PATCH`` with ``DXGK_PATCHFLAGS``, the allocation
list (``DXGK_ALLOCATIONLIST``) and patch-location list (``D3DDDI_PATCHLOCATIONLIST``) it walks, and
``DXGKARG_CANCELCOMMAND``.

Spec: Microsoft's DxgkDdiPatch, DXGKARG_PATCH, DXGK_PATCHFLAGS, D3DDDI_PATCHLOCATIONLIST and
DxgkDdiCancelCommand pages and its "Splitting a DMA buffer" page. ``DXGKARG_CANCELCOMMAND`` exists
from Windows 8 (``CancelCommandAware``); its ``DmaBufferVirtualAddress`` and
``DmaBufferUmdPrivateDataSize`` are taken to be WDDM 2.0 additions, the version that introduced GPU
virtual addresses and UMD private data sizes elsewhere in the submission structures.
"""

from ..schema import D3DGPU_VIRTUAL_ADDRESS, HANDLE, PVOID, UINT, Bit, anon_struct, flags, m, struct, union
from .common import PHYSICAL_ADDRESS

DXGK_PATCHFLAGS = flags(
    "DXGK_PATCHFLAGS",
    Bit("Paging"),
    Bit("Present"),
    Bit("RedirectedPresent"),
    Bit("NullRendering"),
    doc="What kind of DMA buffer DxgkDdiPatch is asked to patch.",
    source="[D:d3dkmddi/ns-d3dkmddi-_dxgk_patchflags]",
)

DXGK_ALLOCATIONLIST = struct(
    "DXGK_ALLOCATIONLIST",
    m("hDeviceSpecificAllocation", HANDLE, doc="Driver handle of the allocation; NULL unbinds."),
    anon_struct(
        m("WriteOperation", UINT, width=1, doc="The DMA buffer writes the allocation."),
        m("SegmentId", UINT, width=5, doc="Segment the allocation was in at render time; 0 = no pre-patch info."),
        m("Reserved", UINT, width=26),
    ),
    union(
        m("PhysicalAddress", PHYSICAL_ADDRESS, doc="Segment address at render time (for pre-patching)."),
        m("VirtualAddress", D3DGPU_VIRTUAL_ADDRESS, since="wddm2_0"),
    ),
    doc="One allocation a DMA buffer references.",
    source="[D:d3dkmddi/ns-d3dkmddi-_dxgk_allocationlist]",
)

D3DDDI_PATCHLOCATIONLIST = struct(
    "D3DDDI_PATCHLOCATIONLIST",
    m("AllocationIndex", UINT, doc="Index into the allocation list."),
    union(
        anon_struct(m("SlotId", UINT, width=24), m("Reserved", UINT, width=8)),
        m("Value", UINT),
    ),
    m("DriverId", UINT),
    m("AllocationOffset", UINT, doc="Offset added to the allocation's address."),
    m("PatchOffset", UINT, doc="Byte offset in the DMA buffer to patch."),
    m("SplitOffset", UINT, doc="Offset where the DMA buffer may be split; strictly increasing along the list."),
    doc="One place in a DMA buffer that takes an allocation's final address.",
    source="[D:d3dukmdt/ns-d3dukmdt-_d3dddi_patchlocationlist]",
)

DXGKARG_PATCH = struct(
    "DXGKARG_PATCH",
    union(m("hDevice", HANDLE), m("hContext", HANDLE)),
    m("DmaBufferSegmentId", UINT),
    m("DmaBufferPhysicalAddress", PHYSICAL_ADDRESS),
    m("pDmaBuffer", PVOID, doc="CPU address of the start of the DMA buffer."),
    m("DmaBufferSize", UINT),
    m("DmaBufferSubmissionStartOffset", UINT),
    m("DmaBufferSubmissionEndOffset", UINT),
    m("pDmaBufferPrivateData", PVOID),
    m("DmaBufferPrivateDataSize", UINT),
    m("DmaBufferPrivateDataSubmissionStartOffset", UINT),
    m("DmaBufferPrivateDataSubmissionEndOffset", UINT),
    m("pAllocationList", PVOID, doc="const DXGK_ALLOCATIONLIST*; NULL for paging."),
    m("AllocationListSize", UINT),
    m("pPatchLocationList", PVOID, doc="const D3DDDI_PATCHLOCATIONLIST*; NULL for paging."),
    m("PatchLocationListSize", UINT),
    m("PatchLocationListSubmissionStart", UINT, doc="First patch location to process."),
    m("PatchLocationListSubmissionLength", UINT, doc="Number of patch locations to process."),
    m("SubmissionFenceId", UINT),
    m("Flags", DXGK_PATCHFLAGS),
    m("EngineOrdinal", UINT),
    doc="Asks the driver to write final addresses into a DMA buffer before it is submitted.",
    source="[D:d3dkmddi/ns-d3dkmddi-_dxgkarg_patch]",
)

DXGKARG_CANCELCOMMAND = struct(
    "DXGKARG_CANCELCOMMAND",
    m("hContext", HANDLE),
    m("pDmaBuffer", PVOID),
    m("DmaBufferSize", UINT),
    m("DmaBufferSubmissionStartOffset", UINT),
    m("DmaBufferSubmissionEndOffset", UINT),
    m("pDmaBufferPrivateData", PVOID),
    m("DmaBufferPrivateDataSize", UINT),
    m("DmaBufferPrivateDataSubmissionStartOffset", UINT),
    m("DmaBufferPrivateDataSubmissionEndOffset", UINT),
    m("pAllocationList", PVOID),
    m("AllocationListSize", UINT),
    m("pPatchLocationList", PVOID),
    m("PatchLocationListSize", UINT),
    m("PatchLocationListSubmissionStart", UINT),
    m("PatchLocationListSubmissionLength", UINT),
    m("DmaBufferVirtualAddress", D3DGPU_VIRTUAL_ADDRESS, since="wddm2_0"),
    m("DmaBufferUmdPrivateDataSize", UINT, since="wddm2_0"),
    since="win8",
    doc="Lets the driver free what it holds for a packet that never reached the hardware queue.",
    source="[D:d3dkmddi/ns-d3dkmddi-_dxgkarg_cancelcommand]",
)
