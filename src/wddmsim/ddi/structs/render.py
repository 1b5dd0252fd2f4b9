"""Building DMA buffers: ``DXGKARG_RENDER`` (a user-mode command buffer translated into a DMA
buffer) and ``DXGKARG_PRESENT`` with ``DXGK_PRESENTFLAGS`` (a blt, color fill or flip).

Spec: Microsoft's DxgkDdiRender, DXGKARG_RENDER, DxgkDdiPresent and DXGKARG_PRESENT pages. Version
keys (header guards): ``DXGKARG_RENDER`` has no guarded member. In ``DXGKARG_PRESENT`` the
allocation-list pointer shares an anonymous union with ``pAllocationInfo`` from Windows 7 and
``pPresentMultiPlaneOverlayInfo`` from Windows 8 (before Windows 7 it stands alone, which is the
same bytes); ``Reserved`` from WDDM 1.3; ``DmaBufferGpuVirtualAddress`` ... ``pPrivateDriverData``
from WDDM 2.0. In ``DXGK_PRESENTFLAGS`` the stereo bits and ``FlipWithMultiPlaneOverlay`` come from
Windows 8 (the header's Windows 8 group, although the reference page dates the overlay bit to 8.1),
``RedirectedFlip`` from WDDM 2.0.
"""

from ..enums import FLIPINTERVAL
from ..schema import D3DGPU_VIRTUAL_ADDRESS, PVOID, UINT, Bit, flags, m, struct, union
from .common import PHYSICAL_ADDRESS, RECT

#: Index of the source allocation in a present's allocation list.
DXGK_PRESENT_SOURCE_INDEX = 1
#: Index of the destination allocation in a present's allocation list.
DXGK_PRESENT_DESTINATION_INDEX = 2

DXGKARG_RENDER = struct(
    "DXGKARG_RENDER",
    m("pCommand", PVOID, doc="The user-mode command buffer (read it under try/except)."),
    m("CommandLength", UINT, doc="Bytes in the command buffer."),
    m("pDmaBuffer", PVOID, doc="In: 4 KB aligned start of the DMA buffer; out: one past the last byte written."),
    m("DmaSize", UINT, doc="Bytes available at pDmaBuffer."),
    m("pDmaBufferPrivateData", PVOID, doc="Driver private data of the DMA buffer."),
    m("DmaBufferPrivateDataSize", UINT),
    m("pAllocationList", PVOID, doc="DXGK_ALLOCATIONLIST*; a nonzero SegmentId asks for pre-patching."),
    m("AllocationListSize", UINT),
    m("pPatchLocationListIn", PVOID, doc="D3DDDI_PATCHLOCATIONLIST* from the user-mode driver."),
    m("PatchLocationListInSize", UINT),
    m("pPatchLocationListOut", PVOID, doc="D3DDDI_PATCHLOCATIONLIST* to fill; out: the next unused element."),
    m("PatchLocationListOutSize", UINT),
    m("MultipassOffset", UINT, doc="0 on the first call; the driver's progress mark across retries."),
    m("DmaBufferSegmentId", UINT, doc="Segment the DMA buffer is in; 0 = not properly paged in."),
    m("DmaBufferPhysicalAddress", PHYSICAL_ADDRESS, doc="Where the DMA buffer was paged in."),
    doc="Arguments of DxgkDdiRender: turn a command buffer into a DMA buffer and patch list.",
    source="[D:d3dkmddi/ns-d3dkmddi-_dxgkarg_render]",
)

DXGK_PRESENTFLAGS = flags(
    "DXGK_PRESENTFLAGS",
    Bit("Blt", doc="Copy from source to destination."),
    Bit("ColorFill", doc="Fill the destination with Color; no source."),
    Bit("Flip", doc="Scan out from the source instead of copying; tear-free."),
    Bit("FlipWithNoWait", doc="Do not stall the pipe until the flip takes effect (needs FlipOnVSyncWithNoWait)."),
    Bit("SrcColorKey", doc="Skip source pixels equal to Color."),
    Bit("DstColorKey", doc="Replace only destination pixels equal to Color."),
    Bit("LinearToSrgb", doc="Convert linear source data to sRGB while copying."),
    Bit("Rotate", doc="Rotate to the path's current orientation."),
    Bit("FlipStereo", since="win8", doc="Flip both images of a stereo allocation."),
    Bit("FlipStereoTemporaryMono", since="win8", doc="Build the stereo frame from the left image only."),
    Bit("FlipStereoPreferRight", since="win8", doc="Clone a stereo primary to a mono monitor from the right image."),
    Bit("BltStereoUseRight", since="win8", doc="Copy from the right image of a stereo source."),
    Bit("FlipWithMultiPlaneOverlay", since="win8", doc="Flip an overlay plane."),
    Bit("RedirectedFlip", since="wddm2_0"),
    doc="What kind of present DxgkDdiPresent builds; ColorFill, SrcColorKey and DstColorKey exclude each other.",
    source="[D:d3dkmddi/ns-d3dkmddi-_dxgk_presentflags]",
)

DXGKARG_PRESENT = struct(
    "DXGKARG_PRESENT",
    m("pDmaBuffer", PVOID, doc="In: 4 KB aligned start of the DMA buffer; out: one past the last byte written."),
    m("DmaSize", UINT),
    m("pDmaBufferPrivateData", PVOID),
    m("DmaBufferPrivateDataSize", UINT),
    union(
        m("pAllocationList", PVOID, doc="DXGK_ALLOCATIONLIST*: [1] source, [2] destination, [0] always NULL."),
        m("pAllocationInfo", PVOID, since="win7", doc="For the OS; drivers ignore it."),
        m("pPresentMultiPlaneOverlayInfo", PVOID, since="win8", doc="DXGK_PRESENTMULTIPLANEOVERLAYINFO* of an overlay flip."),
    ),
    m("pPatchLocationListOut", PVOID, doc="D3DDDI_PATCHLOCATIONLIST* to fill; out: the next unused element."),
    m("PatchLocationListOutSize", UINT),
    m("MultipassOffset", UINT, doc="0 on the first call; the driver's progress mark across retries."),
    m("Color", UINT, doc="A8R8G8B8 fill or color-key value (a palette index on palettized primaries)."),
    m("DstRect", RECT, doc="Destination rectangle (with SrcRect, gives the stretch factor)."),
    m("SrcRect", RECT),
    m("SubRectCnt", UINT, doc="Entries in pDstSubRects."),
    m("pDstSubRects", PVOID, doc="const RECT*: destination pieces to copy, already clipped by the OS."),
    m("FlipInterval", FLIPINTERVAL, doc="Vsyncs before a flip takes effect."),
    m("Flags", DXGK_PRESENTFLAGS),
    m("DmaBufferSegmentId", UINT, doc="Segment the DMA buffer is in; 0 = not properly paged in."),
    m("DmaBufferPhysicalAddress", PHYSICAL_ADDRESS),
    m("Reserved", UINT, since="wddm1_3", doc="For the OS; drivers ignore it."),
    m("DmaBufferGpuVirtualAddress", D3DGPU_VIRTUAL_ADDRESS, since="wddm2_0", doc="GPU VA of the DMA buffer."),
    m("NumSrcAllocations", UINT, since="wddm2_0", doc="Context allocations making up the source."),
    m("NumDstAllocations", UINT, since="wddm2_0", doc="Context allocations making up the destination."),
    m("PrivateDriverDataSize", UINT, since="wddm2_0"),
    m("pPrivateDriverData", PVOID, since="wddm2_0", doc="Optional driver private data."),
    doc="Arguments of DxgkDdiPresent: build the DMA buffer of a blt, color fill or flip.",
    source="[D:d3dkmddi/ns-d3dkmddi-_dxgkarg_present]",
)
