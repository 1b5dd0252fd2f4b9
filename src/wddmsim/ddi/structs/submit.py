"""What the OS hands a driver to run a DMA buffer: ``DXGKARG_SUBMITCOMMAND`` and its flags, the
GPU-virtual variant ``DXGKARG_SUBMITCOMMANDVIRTUAL`` and the hardware-queue variant
``DXGKARG_SUBMITCOMMANDTOHWQUEUE``.

Spec: Microsoft's reference pages for DxgkDdiSubmitCommand, DXGKARG_SUBMITCOMMAND,
DXGK_SUBMITCOMMANDFLAGS, DXGKARG_SUBMITCOMMANDVIRTUAL and DXGKARG_SUBMITCOMMANDTOHWQUEUE. Version
keys: ``ContextSwitch`` from Windows 8, ``Resubmission`` from WDDM 2.0, ``VirtualMachineData`` from
WDDM 2.2 (header guards); ``DmaBufferVirtualAddress`` from Windows 7 and ``NodeOrdinal`` from
Windows 8 (the DXGKARG_SUBMITCOMMAND page).
``DXGKARG_SUBMITCOMMANDTOHWQUEUE`` exists from WDDM 2.2 (the hardware-queue DDIs); its layout moves
from ``{..., DmaBufferUmdPrivateDataSize}`` to ``{..., Flags, HwQueueProgressFenceGpuVa,
HwQueueProgressFenceCpuVa}`` at WDDM 2.4: the WDDM 2.3 header (10.0.16299) still has the old form,
and ``Flags.Present`` exists for buffers built by ``DxgkDdiPresentToHwQueue``, whose kernel thunk
(``D3DKMT_SUBMITPRESENTBLTTOHWQUEUE``) is guarded by WDDM 2.4 (the documentation only says the
layout differs from WDDM 2.0-2.3).
"""

from ..enums import FLIPINTERVAL
from ..schema import (
    D3DDDI_VIDEO_PRESENT_SOURCE_ID,
    D3DGPU_VIRTUAL_ADDRESS,
    HANDLE,
    PVOID,
    UINT,
    UINT64,
    Bit,
    flags,
    m,
    struct,
    union,
)
from .common import PHYSICAL_ADDRESS

DXGK_SUBMITCOMMANDFLAGS = flags(
    "DXGK_SUBMITCOMMANDFLAGS",
    Bit("Paging", doc="The DMA buffer is a paging buffer."),
    Bit("Present", doc="The DMA buffer holds a present built by DxgkDdiPresent."),
    Bit("RedirectedPresent", doc="A present into a DWM-owned shared allocation, built by DxgkDdiRender."),
    Bit("NullRendering", doc="Insert and fence the buffer as usual but do not execute it (an infinitely fast engine)."),
    Bit("Flip", doc="The DMA buffer holds a flip."),
    Bit("FlipWithNoWait", doc="A flip without the built-in wait for the next vertical sync."),
    Bit("ContextSwitch", since="win8", doc="Switch the node to the null context (zero-length buffer)."),
    Bit("Resubmission", since="wddm2_0", doc="The packet is resubmitted after a preemption (always 0 for WDDM 1.x)."),
    Bit("VirtualMachineData", since="wddm2_2", doc="The submission comes from a paravirtualized adapter."),
    doc="Bit flags describing a DMA buffer to submit.",
    source="[D:d3dkmddi/ns-d3dkmddi-_dxgk_submitcommandflags]",
)

DXGKARG_SUBMITCOMMAND = struct(
    "DXGKARG_SUBMITCOMMAND",
    union(
        m("hDevice", HANDLE, doc="Device the submission came from (drivers that are not MultiEngineAware); NULL for some paging."),
        m("hContext", HANDLE, doc="Context the submission came from (MultiEngineAware drivers); NULL for some paging."),
    ),
    m("DmaBufferSegmentId", UINT, doc="Segment the DMA buffer was paged into; 0 = contiguous system memory."),
    m("DmaBufferPhysicalAddress", PHYSICAL_ADDRESS, doc="Start of the whole DMA buffer (system or segment address)."),
    m("DmaBufferSize", UINT, doc="Size of the whole DMA buffer in bytes."),
    m("DmaBufferSubmissionStartOffset", UINT, doc="Start of the portion to submit, same as at patch time."),
    m("DmaBufferSubmissionEndOffset", UINT, doc="End of the portion to submit, same as at patch time."),
    m("pDmaBufferPrivateData", PVOID, doc="Driver private data of the DMA buffer."),
    m("DmaBufferPrivateDataSize", UINT, doc="Size of the whole private data."),
    m("DmaBufferPrivateDataSubmissionStartOffset", UINT, doc="Start of this submission's private data; 0 unless paging."),
    m("DmaBufferPrivateDataSubmissionEndOffset", UINT, doc="End of this submission's private data."),
    m("SubmissionFenceId", UINT, doc="Fence id the driver writes in the ring after the buffer."),
    m("VidPnSourceId", D3DDDI_VIDEO_PRESENT_SOURCE_ID, doc="Flip target; valid only with Flip or FlipWithNoWait."),
    m("FlipInterval", FLIPINTERVAL, doc="Vsyncs before the flip; valid only with Flip."),
    m("Flags", DXGK_SUBMITCOMMANDFLAGS),
    m("EngineOrdinal", UINT, doc="Reserved; engine within the node (0 on a non-linked adapter)."),
    m("DmaBufferVirtualAddress", D3DGPU_VIRTUAL_ADDRESS, since="win7", doc="Reserved, must be 0."),
    m("NodeOrdinal", UINT, since="win8", doc="Node of the context; names the node when the handle is NULL."),
    doc="Describes the DMA buffer the OS asks DxgkDdiSubmitCommand to queue on a node.",
    source="[D:d3dkmddi/ns-d3dkmddi-_dxgkarg_submitcommand]",
)

DXGKARG_SUBMITCOMMANDVIRTUAL = struct(
    "DXGKARG_SUBMITCOMMANDVIRTUAL",
    m("hContext", HANDLE),
    m("DmaBufferVirtualAddress", D3DGPU_VIRTUAL_ADDRESS, doc="GPU VA of the DMA buffer in the process's address space."),
    m("DmaBufferSize", UINT),
    m("pDmaBufferPrivateData", PVOID),
    m("DmaBufferPrivateDataSize", UINT),
    m("DmaBufferUmdPrivateDataSize", UINT, doc="Bytes of private data the UMD passed in SubmitCommandCb."),
    m("SubmissionFenceId", UINT),
    m("VidPnSourceId", D3DDDI_VIDEO_PRESENT_SOURCE_ID),
    m("FlipInterval", FLIPINTERVAL),
    m("Flags", DXGK_SUBMITCOMMANDFLAGS),
    m("EngineOrdinal", UINT),
    m("NodeOrdinal", UINT),
    since="wddm2_0",
    doc="Describes a DMA buffer submitted with GPU virtual addressing (DxgkDdiSubmitCommandVirtual).",
    source="[D:d3dkmddi/ns-d3dkmddi-_dxgkarg_submitcommandvirtual]",
)

DXGKARG_SUBMITCOMMANDTOHWQUEUE = struct(
    "DXGKARG_SUBMITCOMMANDTOHWQUEUE",
    m("hHwQueue", HANDLE, doc="Hardware queue being submitted to."),
    m("HwQueueProgressFenceId", UINT64, doc="Progress fence value this buffer signals; strictly increasing per queue."),
    m("DmaBufferVirtualAddress", D3DGPU_VIRTUAL_ADDRESS),
    m("DmaBufferSize", UINT),
    m("DmaBufferPrivateDataSize", UINT),
    m("pDmaBufferPrivateData", PVOID, doc="Freed when the DDI returns (WDDM 2.4 and later)."),
    m("DmaBufferUmdPrivateDataSize", UINT, until="wddm2_4"),
    m("Flags", DXGK_SUBMITCOMMANDFLAGS, since="wddm2_4", doc="0 for UMD buffers; Present for DxgkDdiPresentToHwQueue buffers."),
    m("HwQueueProgressFenceGpuVa", D3DGPU_VIRTUAL_ADDRESS, since="wddm2_4"),
    m("HwQueueProgressFenceCpuVa", PVOID, since="wddm2_4"),
    since="wddm2_2",
    doc="Describes a DMA buffer appended to a hardware queue (DxgkDdiSubmitCommandToHwQueue).",
    source="[D:d3dkmddi/ns-d3dkmddi-_dxgkarg_submitcommandtohwqueue]",
)
