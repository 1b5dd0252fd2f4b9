"""What a driver tells the OS about contexts and scheduling: ``DXGK_CONTEXTINFO`` and its caps,
``DXGK_VIDSCHCAPS`` (``DXGK_DRIVERCAPS.SchedulingCaps``) and ``DXGK_NODEMETADATA_FLAGS``.

Spec: Microsoft's reference pages for DXGK_CONTEXTINFO, DXGK_CONTEXTINFO_CAPS, DXGK_VIDSCHCAPS and
DXGK_NODEMETADATA_FLAGS.
"""

from ..schema import UINT, ULONG, Bit, flags, m, struct

DXGK_CONTEXTINFO_CAPS = flags(
    "DXGK_CONTEXTINFO_CAPS",
    Bit("NoPatchingRequired"),
    Bit("DriverManagesResidency"),
    Bit("UseIoMmu"),
    since="wddm2_0",
    doc="Context capabilities a WDDM 2.0 driver reports at context creation.",
    source="[D:d3dkmddi/ns-d3dkmddi-_dxgk_contextinfo_caps]",
)

DXGK_CONTEXTINFO = struct(
    "DXGK_CONTEXTINFO",
    m("DmaBufferSize", UINT, doc="Starting DMA buffer size; buffers never shrink below it."),
    m("DmaBufferSegmentSet", UINT, doc="Aperture segments DMA buffers may live in; 0 = contiguous system memory."),
    m("DmaBufferPrivateDataSize", UINT),
    m("AllocationListSize", UINT),
    m("PatchLocationListSize", UINT),
    m("Reserved", UINT, since="win7"),
    m("Caps", DXGK_CONTEXTINFO_CAPS, since="wddm2_0"),
    m("PagingCompanionNodeId", ULONG, since="wddm2_0"),
    doc="DMA buffer and list sizes a driver asks for at context creation.",
    source="[D:d3dkmddi/ns-d3dkmddi-_dxgk_contextinfo]",
)

DXGK_VIDSCHCAPS = flags(
    "DXGK_VIDSCHCAPS",
    Bit("MultiEngineAware", doc="Contexts are supported; hContext replaces hDevice."),
    Bit("VSyncPowerSaveAware"),
    Bit("PreemptionAware", since="win8", doc="Windows 8 preemption model; needs MultiEngineAware."),
    Bit("NoDmaPatching", since="win8", doc="Needs PreemptionAware and MultiEngineAware."),
    Bit("CancelCommandAware", since="win8", doc="Implements DxgkDdiCancelCommand; needs MultiEngineAware."),
    Bit("No64BitAtomics", since="wddm2_0"),
    Bit("LowIrqlPreemptCommand", since="wddm2_0"),
    Bit("HwQueuePacketCap", width=4, since="wddm2_3", doc="Max DMA packets queued to one node."),
    Bit("NativeGpuFence", since="wddm3_1"),
    Bit("OptimizedNativeFenceSignaledInterrupt", since="wddm3_1"),
    doc="The scheduling capabilities of a driver.",
    source="[D:d3dkmddi/ns-d3dkmddi-_dxgk_vidschcaps]",
)

DXGK_NODEMETADATA_FLAGS = flags(
    "DXGK_NODEMETADATA_FLAGS",
    Bit("ContextSchedulingSupported"),
    Bit("RingBufferFenceRelease", since="wddm2_5", doc="Progress fence written only after the buffer is retired."),
    Bit("SupportTrackedWorkload", since="wddm2_5"),
    Bit("UserModeSubmission", since="wddm3_1"),
    Bit("SupportBuildTestCommandBuffer", since="wddm3_2"),
    tail=(Bit("MaxInFlightHwQueueBuffers", width=16, since="wddm2_5", doc="0 = unlimited."),),
    since="wddm2_2",
    doc="Per-node flags from DxgkDdiGetNodeMetadata.",
    source="[D:d3dkmdt/ns-d3dkmdt-_dxgk_nodemetadata_flags]",
)
