"""What a driver answers in ``DxgkDdiQueryAdapterInfo``: the call's arguments
(``DXGKARG_QUERYADAPTERINFO`` and its ``DXGK_QUERYADAPTERINFOFLAGS``), the capability block
``DXGK_DRIVERCAPS`` (``DXGKQAITYPE_DRIVERCAPS``) with every record it embeds, and the segment
queries ``DXGK_QUERYSEGMENTIN`` / ``DXGK_QUERYSEGMENTOUT`` (``DXGKQAITYPE_QUERYSEGMENT``) and
``DXGK_QUERYSEGMENTOUT3`` / ``DXGK_SEGMENTDESCRIPTOR3`` (``DXGKQAITYPE_QUERYSEGMENT3``, Windows 8).
``DXGK_VIDSCHCAPS`` (:mod:`.context`), ``DXGK_GPUENGINETOPOLOGY``, ``DXGK_SEGMENTFLAGS`` and
``DXGK_SEGMENTDESCRIPTOR`` (:mod:`.adapter`) are reused from their modules.

Version keys (tools/msvc_layouts/DECISIONS.md has the reasoning for each):

* ``DXGK_DRIVERCAPS`` follows the header's ``#if`` groups: ``WDDMVersion`` and the two deprecated
  records (``Reserved``, ``Reserved1``; ``VirtualAddressCaps``/``DmaBufferCaps`` in the Windows 7
  header) from Windows 7; ``PreemptionCaps`` and the seven ``Support*`` BOOLEANs through
  ``SupportSurpriseRemovalInHibernation`` from Windows 8 (``SupportMultiPlaneOverlay`` too, although
  its page says 8.1); ``HybridDiscrete``/``MaxOverlayPlanes`` WDDM 1.3; ``HybridIntegrated`` ...
  ``SupportSurpriseRemoval`` WDDM 2.0; the 2.1 group through ``MaxQueuedMultiPlaneOverlayFlipVSync``;
  ``MiscCaps`` WDDM 2.4 (bits 2.4/2.5/2.6/2.7/2.8/3.0/3.2); ``MaxHwQueuedFlips`` and
  ``HwQueuedFlipCaps`` WDDM 2.9 ("added in WDDM 2.9, supported from WDDM 3.0").
  ``ColorTransformCaps`` shares the union with ``GammaRampCaps`` from WDDM 2.2.
* ``DXGK_PRESENTATIONCAPS``: two bits in Vista, the GDI-acceleration bits from Windows 7, three more
  from Windows 8. ``DXGK_FLIPCAPS``: four bits from Vista (``FlipImmediateMmIo`` is already in the
  Vista header), ``FlipIndependent`` WDDM 1.3, ``DdiPresentForIFlip``/``FlipImmediateOnHSync``
  WDDM 2.0. ``DXGK_VIDMMCAPS``: the header ladder, except ``SectionBackedPrimary`` from Windows 8.
* ``DXGKARG_QUERYADAPTERINFO.Flags`` WDDM 2.2 (with its flag type, ``VirtualMachineData`` only;
  ``SecureVirtualMachine`` WDDM 2.4), ``hKmdProcessHandle`` WDDM 2.4.

Spec: Microsoft's reference pages for DxgkDdiQueryAdapterInfo, DXGK_DRIVERCAPS and the records it embeds
(segments and caps a driver reports at start).
"""

from ..enums import (
    COMPUTE_PREEMPTION_GRANULARITY,
    GRAPHICS_PREEMPTION_GRANULARITY,
    QUERYADAPTERINFOTYPE,
    WDDMVERSION,
)
from ..schema import (
    BOOLEAN,
    D3DGPU_VIRTUAL_ADDRESS,
    HANDLE,
    PVOID,
    SIZE_T,
    UINT,
    Array,
    Bit,
    Member,
    anon_struct,
    flags,
    m,
    struct,
    union,
)
from .adapter import DXGK_GPUENGINETOPOLOGY, DXGK_SEGMENTFLAGS
from .common import PHYSICAL_ADDRESS
from .context import DXGK_VIDSCHCAPS


def _bit(name: str, width: int = 1, **kw) -> Member:
    """One UINT bitfield of a bit group that is not a whole flag union."""
    return Member(name, UINT, width=width, **kw)


def _reserved() -> Member:
    """The group's reserved range: whatever the active bits leave of the 32."""
    return Member("Reserved", UINT, width=-32, doc="Must be zero.")


# -- DxgkDdiQueryAdapterInfo arguments ------------------------------------------------------------

DXGK_QUERYADAPTERINFOFLAGS = flags(
    "DXGK_QUERYADAPTERINFOFLAGS",
    Bit("VirtualMachineData", doc="The query comes from a virtual machine (GPU paravirtualization)."),
    Bit("SecureVirtualMachine", since="wddm2_4", doc="That virtual machine runs in secure mode."),
    since="wddm2_2",
    doc="Where a DxgkDdiQueryAdapterInfo call comes from.",
    source="[D:d3dkmddi/ns-d3dkmddi-_dxgk_queryadapterinfoflags]",
)

DXGKARG_QUERYADAPTERINFO = struct(
    "DXGKARG_QUERYADAPTERINFO",
    m("Type", QUERYADAPTERINFOTYPE, doc="What is asked for; selects the structures behind the two buffers."),
    m("pInputData", PVOID, doc="Query input (DXGK_QUERYSEGMENTIN, a component index, ...); none for DRIVERCAPS."),
    m("InputDataSize", UINT, doc="Bytes at pInputData."),
    m("pOutputData", PVOID, doc="Buffer the driver fills (DXGK_DRIVERCAPS, DXGK_QUERYSEGMENTOUT, ...)."),
    m("OutputDataSize", UINT, doc="Bytes at pOutputData."),
    m("Flags", DXGK_QUERYADAPTERINFOFLAGS, since="wddm2_2"),
    m("hKmdProcessHandle", HANDLE, since="wddm2_4",
      doc="The driver's process object (from DxgkDdiCreateProcess) of the asking process; may be NULL."),
    doc="Arguments of DxgkDdiQueryAdapterInfo.",
    source="[D:d3dkmddi/ns-d3dkmddi-_dxgkarg_queryadapterinfo]",
)

# -- the records DXGK_DRIVERCAPS embeds -----------------------------------------------------------

DXGK_POINTERFLAGS = flags(
    "DXGK_POINTERFLAGS",
    Bit("Monochrome", doc="Hardware cursor in monochrome (AND/XOR masks)."),
    Bit("Color", doc="Colour cursor with per-pixel alpha (A8R8G8B8)."),
    Bit("MaskedColor", doc="Colour cursor whose alpha byte is an XOR mask."),
    doc="Hardware mouse-pointer kinds the driver can show (DXGK_DRIVERCAPS.PointerCaps).",
    source="[D:d3dkmddi/ns-d3dkmddi-_dxgk_pointerflags]",
)

DXGK_GAMMARAMPCAPS = flags(
    "DXGK_GAMMARAMPCAPS",
    Bit("Gamma_Rgb256x3x16", doc="A GDI-style ramp: 256 entries of three 16-bit channels."),
    doc="Gamma ramps the display pipeline takes (DXGK_DRIVERCAPS.GammaRampCaps).",
    source="[D:d3dkmddi/ns-d3dkmddi-_dxgk_gammarampcaps]",
)

DXGK_COLORTRANSFORMCAPS = flags(
    "DXGK_COLORTRANSFORMCAPS",
    Bit("Gamma_Rgb256x3x16", doc="A GDI-style 256x3x16 gamma ramp."),
    Bit("Gamma_Dxgi1", doc="A DXGI 1 gamma ramp (display-only and indirect drivers can now say so)."),
    Bit("Transform_3x4Matrix", since="wddm2_3", doc="A 3x4 colour matrix in the scan-out pipeline."),
    Bit("Transform_3x4Matrix_WideColor", since="wddm2_3", doc="That matrix also for wide-colour scan-out."),
    Bit("Transform_3x4Matrix_HighColor", since="wddm2_3", doc="That matrix also for high-colour scan-out."),
    Bit("Transform_Matrix_V2", since="wddm2_6", doc="The second-generation colour-space matrix."),
    since="wddm2_2",
    doc="Gamma and colour-transform support; shares its place in DXGK_DRIVERCAPS with GammaRampCaps.",
    source="[D:d3dkmddi/ns-d3dkmddi-_dxgk_colortransformcaps]",
)

DXGK_PRESENTATIONCAPS = flags(
    "DXGK_PRESENTATIONCAPS",
    Bit("NoScreenToScreenBlt", doc="No blt from the primary onto itself."),
    Bit("NoOverlapScreenBlt", doc="No blt whose source and destination overlap."),
    Bit("SupportKernelModeCommandBuffer", since="win7", doc="GDI hardware acceleration through DxgkDdiRenderKm."),
    Bit("NoSameBitmapAlphaBlend", since="win7"),
    Bit("NoSameBitmapStretchBlt", since="win7"),
    Bit("NoSameBitmapTransparentBlt", since="win7"),
    Bit("NoSameBitmapOverlappedAlphaBlend", since="win7"),
    Bit("NoSameBitmapOverlappedStretchBlt", since="win7"),
    Bit("DriverSupportsCddDwmInterop", since="win7", doc="CDD presents into DWM textures without GDI acceleration."),
    Bit("Reserved0", since="win7", doc="Must be zero."),
    Bit("AlignmentShift", width=4, since="win7", doc="GDI blt pitches are multiples of 1 << n bytes (n >= 2)."),
    Bit("MaxTextureWidthShift", width=3, since="win7", doc="Widest texture: 2^(n + 11) texels."),
    Bit("MaxTextureHeightShift", width=3, since="win7", doc="Tallest texture: 2^(n + 11) texels."),
    Bit("SupportAllBltRops", since="win7", doc="Every ROP3 with a solid pattern in BitBlt and ColorFill."),
    Bit("SupportMirrorStretchBlt", since="win7"),
    Bit("SupportMonoStretchBltModes", since="win7", doc="BLACKONWHITE and WHITEONBLACK stretch modes."),
    Bit("StagingRectStartPitchAligned", since="win7", doc="Staging rectangles start at x = 0."),
    Bit("NoSameBitmapBitBlt", since="win7"),
    Bit("NoSameBitmapOverlappedBitBlt", since="win7"),
    Bit("Reserved1", since="win7", doc="Must be zero."),
    Bit("NoTempSurfaceForClearTypeBlend", since="win7", doc="ClearType blends need no scratch surface."),
    Bit("SupportSoftwareDeviceBitmaps", since="win8", doc="Documented as reserved; leave zero."),
    Bit("NoCacheCoherentApertureMemory", since="win8"),
    Bit("SupportLinearHeap", since="win8", doc="Linear-heap allocations from staging surfaces."),
    doc="What the kernel-mode present and GDI paths may ask of the driver (DXGK_DRIVERCAPS.PresentationCaps).",
    source="[D:d3dkmddi/ns-d3dkmddi-_dxgk_presentationcaps]",
)

DXGK_FLIPCAPS = flags(
    "DXGK_FLIPCAPS",
    Bit("FlipOnVSyncWithNoWait", doc="A queued flip takes effect at vsync without stalling the pipeline."),
    Bit("FlipOnVSyncMmIo", doc="Flips by MMIO from DxgkDdiSetVidPnSourceAddress, latched at vsync."),
    Bit("FlipInterval", doc="Flip intervals of two, three and four."),
    Bit("FlipImmediateMmIo", doc="Immediate MMIO flips, not waiting for vsync."),
    Bit("FlipIndependent", since="wddm1_3", doc="Independent flips; required from WDDM 1.3."),
    Bit("DdiPresentForIFlip", since="wddm2_0", doc="Call DxgkDdiPresent for independent-flip presents."),
    Bit("FlipImmediateOnHSync", since="wddm2_0", doc="Immediate flips land between scan lines without tearing."),
    doc="How the driver can flip (DXGK_DRIVERCAPS.FlipCaps).",
    source="[D:d3dkmddi/ns-d3dkmddi-_dxgk_flipcaps]",
)

DXGK_VIDMMCAPS = struct(
    "DXGK_VIDMMCAPS",
    union(
        anon_struct(
            _bit("OutOfOrderLock", doc="Older instances of a renamed allocation can be locked."),
            _bit("DedicatedPagingEngine", since="win7", doc="Reserved; zero."),
            _bit("PagingEngineCanSwizzle", since="win7", doc="Reserved; zero."),
            _bit("SectionBackedPrimary", since="win8", doc="Primaries backed by a section, no I/O range needed."),
            _bit("CrossAdapterResource", since="wddm1_3", doc="Tier 1: copies to and from cross-adapter resources."),
            _bit("VirtualAddressingSupported", since="wddm2_0", doc="GPU virtual addressing (with GpuMmu or IoMmu)."),
            _bit("GpuMmuSupported", since="wddm2_0", doc="The GpuMmu model."),
            _bit("IoMmuSupported", since="wddm2_0", doc="The IoMmu model; never together with GpuMmuSupported."),
            _bit("ReplicateGdiContent", since="wddm2_0"),
            _bit("NonCpuVisiblePrimary", since="wddm2_0", doc="GDI allocations need not be CPU visible."),
            _bit("ParavirtualizationSupported", since="wddm2_2", doc="Every GPU-paravirtualization DDI is implemented."),
            _bit("IoMmuSecureModeSupported", since="wddm2_4", doc="IOMMU-based GPU isolation."),
            _bit("DisableSelfRefreshVRAMInS3", since="wddm2_4"),
            _bit("IoMmuSecureModeRequired", since="wddm2_7", doc="Do not start the adapter without IOMMU isolation."),
            _bit("MapAperture2Supported", since="wddm2_9", doc="Implements DXGK_OPERATION_MAP_APERTURE_SEGMENT2."),
            _bit("CrossAdapterResourceTexture", since="wddm2_9", doc="Tier 2: texturing from cross-adapter resources."),
            _bit("CrossAdapterResourceScanout", since="wddm2_9", doc="Tier 3: scanning them out."),
            _bit("AlwaysPoweredVRAM", since="wddm3_1"),
            _reserved(),
        ),
        m("Value", UINT, doc="All capability bits as one value."),
    ),
    m("PagingNode", UINT, doc="Node paging buffers run on (WDDM 1.x with MultiEngineAware)."),
    doc="Video memory management capabilities (DXGK_DRIVERCAPS.MemoryManagementCaps).",
    source="[D:d3dkmddi/ns-d3dkmddi-_dxgk_vidmmcaps]",
)

DXGK_VIRTUALADDRESSCAPS_DEPRECATED = struct(
    "DXGK_VIRTUALADDRESSCAPS_DEPRECATED",
    union(
        anon_struct(
            _bit("PrivilegedMemorySupported"),
            _bit("ReadOnlyMemorySupported"),
            _reserved(),
        ),
        m("Value", UINT),
    ),
    m("VirtualAddressBitCount", UINT),
    m("PageTableCoverageBitCount", UINT),
    m("PageDirectoryEntrySize", UINT),
    m("PageDirectorySegment", UINT),
    m("PageTableSegment", UINT),
    m("IdealGPUPageSize", UINT),
    since="win7",
    doc="Windows 7 placeholder for GPU virtual addressing, never used; DXGK_DRIVERCAPS.Reserved, all zero.",
    source="[D:d3dkmddi/ns-d3dkmddi-_dxgk_drivercaps]",
)

_DMA_BUFFER_CAPS = struct(
    "DmaBufferCapsEntry_t",
    m("Size", UINT),
    m("PrivateDriverDataSize", UINT),
    m("SegmentId", UINT),
    m("Reserved1", UINT, doc="AllocationGroup in the Windows 7 header."),
    m("Reserved", Array(UINT, 16)),
)

DXGK_DMABUFFERCAPS_DEPRECATED = struct(
    "DXGK_DMABUFFERCAPS_DEPRECATED",
    m("PresentDmaBuffer", _DMA_BUFFER_CAPS),
    m("PagingDmaBuffer", _DMA_BUFFER_CAPS),
    since="win7",
    doc="Windows 7 placeholder for present and paging DMA-buffer sizes, never used; DXGK_DRIVERCAPS.Reserved1.",
    source="[D:d3dkmddi/ns-d3dkmddi-_dxgk_drivercaps]",
)

D3DKMDT_PREEMPTION_CAPS = struct(
    "D3DKMDT_PREEMPTION_CAPS",
    m("GraphicsPreemptionGranularity", GRAPHICS_PREEMPTION_GRANULARITY, doc="Finest stop point for graphics work."),
    m("ComputePreemptionGranularity", COMPUTE_PREEMPTION_GRANULARITY, doc="Finest stop point for compute work."),
    since="win8",
    doc="How finely the engines can be preempted (DXGK_DRIVERCAPS.PreemptionCaps).",
    source="[D:d3dkmdt/ns-d3dkmdt-_d3dkmdt_preemption_caps]",
)

DXGK_HWQUEUEDFLIP_CAPS = flags(
    "DXGK_HWQUEUEDFLIP_CAPS",
    since="wddm2_9",
    doc="Hardware flip queue capabilities; no bit is defined yet.",
    source="[D:d3dkmddi/ns-d3dkmddi-dxgk_hwqueuedflip_caps]",
)

_MISC_CAPS = flags(
    "MiscCaps_t",
    Bit("SupportContextlessPresent", doc="Present DDIs may get a NULL context."),
    Bit("Detachable", doc="The adapter is hot-pluggable."),
    Bit("VirtualGpuOnly", since="wddm2_5", doc="Keep host Direct3D applications off this adapter."),
    Bit("ComputeOnly", since="wddm2_6", doc="A compute-only device."),
    Bit("IndependentVidPnVSyncControl", since="wddm2_7", doc="Vsync control per source through DxgkDdiControlInterrupt3."),
    Bit("NoHybridDiscreteDListDllSupport", since="wddm2_8", doc="No d-List DLL for the hybrid discrete GPU."),
    Bit("DisplayableSupport", since="wddm3_0", doc="The displayable-surface feature."),
    Bit("NoHybridDiscreteDListDllMuxSupport", since="wddm3_2"),
    Bit("CursorDoesNotSupportXorBlendWithMultiPlaneOverlay", since="wddm3_2"),
    since="wddm2_4",
    doc="DXGK_DRIVERCAPS.MiscCaps.",
)

# -- DXGK_DRIVERCAPS --------------------------------------------------------------------------------

DXGK_DRIVERCAPS = struct(
    "DXGK_DRIVERCAPS",
    m("HighestAcceptableAddress", PHYSICAL_ADDRESS, doc="Highest system-memory physical address the GPU can use."),
    m("MaxAllocationListSlotId", UINT, doc="Allocation-list slot ids the driver uses."),
    m("ApertureSegmentCommitLimit", SIZE_T, doc="Most bytes of system memory mapped into aperture segments."),
    m("MaxPointerWidth", UINT, doc="Widest hardware cursor, in pixels."),
    m("MaxPointerHeight", UINT, doc="Tallest hardware cursor, in scan lines."),
    m("PointerCaps", DXGK_POINTERFLAGS),
    m("InterruptMessageNumber", UINT, doc="MSI message the ISR's DxgkCbNotifyInterrupt calls belong to."),
    m("NumberOfSwizzlingRanges", UINT),
    m("MaxOverlays", UINT, doc="Legacy overlays."),
    union(
        m("GammaRampCaps", DXGK_GAMMARAMPCAPS),
        m("ColorTransformCaps", DXGK_COLORTRANSFORMCAPS, since="wddm2_2"),
    ),
    m("PresentationCaps", DXGK_PRESENTATIONCAPS),
    m("MaxQueuedFlipOnVSync", UINT, doc="Flips the hardware can hold pending, latched one per vsync."),
    m("FlipCaps", DXGK_FLIPCAPS),
    m("SchedulingCaps", DXGK_VIDSCHCAPS),
    m("MemoryManagementCaps", DXGK_VIDMMCAPS),
    m("GpuEngineTopology", DXGK_GPUENGINETOPOLOGY),
    m("WDDMVersion", WDDMVERSION, since="win7",
      doc="Zero for a Windows 7 or later interface version; WDDM 2.x drivers report DXGKQAITYPE_WDDMDEVICECAPS."),
    m("Reserved", DXGK_VIRTUALADDRESSCAPS_DEPRECATED, since="win7", doc="Must be zero (VirtualAddressCaps in Windows 7)."),
    m("Reserved1", DXGK_DMABUFFERCAPS_DEPRECATED, since="win7", doc="Must be zero (DmaBufferCaps in Windows 7)."),
    m("PreemptionCaps", D3DKMDT_PREEMPTION_CAPS, since="win8"),
    m("SupportNonVGA", BOOLEAN, since="win8", doc="Implements DxgkDdiStopDeviceAndReleasePostDisplayOwnership."),
    m("SupportSmoothRotation", BOOLEAN, since="win8", doc="Path rotation changes without a new VidPN."),
    m("SupportPerEngineTDR", BOOLEAN, since="win8",
      doc="Engines reset one by one (DxgkDdiQueryDependentEngineGroup, DxgkDdiQueryEngineStatus, DxgkDdiResetEngine)."),
    m("SupportDirectFlip", BOOLEAN, since="win8", doc="Shared managed primaries for Direct Flip."),
    m("SupportMultiPlaneOverlay", BOOLEAN, since="win8", doc="Multiplane overlays; set MaxOverlayPlanes too."),
    m("SupportRuntimePowerManagement", BOOLEAN, since="win8", doc="Runtime power management (F-states)."),
    m("SupportSurpriseRemovalInHibernation", BOOLEAN, since="win8"),
    m("HybridDiscrete", BOOLEAN, since="wddm1_3", doc="The discrete GPU of a hybrid system, without outputs."),
    m("MaxOverlayPlanes", UINT, since="wddm1_3", doc="Planes shown at once on one output, primary included."),
    m("HybridIntegrated", BOOLEAN, since="wddm2_0", doc="The integrated GPU of a hybrid system."),
    m("InternalGpuVirtualAddressRangeStart", D3DGPU_VIRTUAL_ADDRESS, since="wddm2_0"),
    m("InternalGpuVirtualAddressRangeEnd", D3DGPU_VIRTUAL_ADDRESS, since="wddm2_0"),
    m("SupportSurpriseRemoval", BOOLEAN, since="wddm2_0"),
    m("SupportMultiPlaneOverlayImmediateFlip", BOOLEAN, since="wddm2_1",
      doc="Immediate flips of an overlay plane when only its address changes."),
    m("CursorScaledWithMultiPlaneOverlayPlane0", BOOLEAN, since="wddm2_1"),
    m("HybridAcpiChainingRequired", BOOLEAN, since="wddm2_1"),
    m("MaxQueuedMultiPlaneOverlayFlipVSync", UINT, since="wddm2_1",
      doc="Updates of one plane within a vsync, the last one winning."),
    m("MiscCaps", _MISC_CAPS, since="wddm2_4"),
    m("MaxHwQueuedFlips", UINT, since="wddm2_9", doc="Depth of the hardware flip queue (above 1 to use one)."),
    m("HwQueuedFlipCaps", DXGK_HWQUEUEDFLIP_CAPS, since="wddm2_9"),
    doc="The capabilities a driver reports for DXGKQAITYPE_DRIVERCAPS, once at adapter start.",
    source="[D:d3dkmddi/ns-d3dkmddi-_dxgk_drivercaps]",
)

# -- segment queries --------------------------------------------------------------------------------

DXGK_QUERYSEGMENTIN = struct(
    "DXGK_QUERYSEGMENTIN",
    m("AgpApertureBase", PHYSICAL_ADDRESS, doc="Base of the AGP aperture."),
    m("AgpApertureSize", PHYSICAL_ADDRESS, doc="LARGE_INTEGER: bytes of AGP aperture available."),
    m("AgpFlags", DXGK_SEGMENTFLAGS, doc="Properties of that aperture."),
    doc="Input of DXGKQAITYPE_QUERYSEGMENT: the AGP aperture the OS found.",
    source="[D:d3dkmddi/ns-d3dkmddi-_dxgk_querysegmentin]",
)

DXGK_QUERYSEGMENTOUT = struct(
    "DXGK_QUERYSEGMENTOUT",
    m("NbSegment", UINT, doc="Segments described; the first call asks for the count only."),
    m("pSegmentDescriptor", PVOID, doc="DXGK_SEGMENTDESCRIPTOR[NbSegment] the driver fills."),
    m("PagingBufferSegmentId", UINT, doc="Aperture segment for paging buffers; 0 = contiguous write-combined memory."),
    m("PagingBufferSize", UINT, doc="Bytes of each paging buffer."),
    m("PagingBufferPrivateDataSize", UINT, doc="Bytes of driver private data per paging buffer (0 = none)."),
    doc="Output of DXGKQAITYPE_QUERYSEGMENT: the memory and aperture segments.",
    source="[D:d3dkmddi/ns-d3dkmddi-_dxgk_querysegmentout]",
)

DXGK_SEGMENTDESCRIPTOR3 = struct(
    "DXGK_SEGMENTDESCRIPTOR3",
    m("Flags", DXGK_SEGMENTFLAGS),
    m("BaseAddress", PHYSICAL_ADDRESS, doc="Segment start as the GPU sees it."),
    m("CpuTranslatedAddress", PHYSICAL_ADDRESS, doc="Segment start on the bus when CpuVisible."),
    m("Size", SIZE_T, doc="Bytes; a multiple of the CPU page size."),
    m("NbOfBanks", UINT, doc="Bank count when UseBanking."),
    m("pBankRangeTable", PVOID, doc="SIZE_T* of bank end offsets when UseBanking."),
    m("CommitLimit", SIZE_T, doc="Most bytes that may be committed."),
    m("SystemMemoryEndAddress", SIZE_T,
      doc="Segments partly made of system memory: allocations past it are purged on hibernation."),
    m("Reserved", SIZE_T, doc="Must be zero."),
    since="win8",
    doc="One segment of a WDDM 1.2 driver's DXGKQAITYPE_QUERYSEGMENT3 answer.",
    source="[D:d3dkmddi/ns-d3dkmddi-_dxgk_segmentdescriptor3]",
)

DXGK_QUERYSEGMENTOUT3 = struct(
    "DXGK_QUERYSEGMENTOUT3",
    m("NbSegment", UINT, doc="Segments described."),
    m("pSegmentDescriptor", PVOID, doc="DXGK_SEGMENTDESCRIPTOR3[NbSegment] the driver fills."),
    m("PagingBufferSegmentId", UINT, doc="Aperture segment for paging buffers; 0 = contiguous write-combined memory."),
    m("PagingBufferSize", UINT, doc="Bytes of each paging buffer."),
    m("PagingBufferPrivateDataSize", UINT, doc="Bytes of driver private data per paging buffer."),
    since="win8",
    doc="Output of DXGKQAITYPE_QUERYSEGMENT3 (WDDM 1.2 and later drivers).",
    source="[D:d3dkmddi/ns-d3dkmddi-_dxgk_querysegmentout3]",
)
