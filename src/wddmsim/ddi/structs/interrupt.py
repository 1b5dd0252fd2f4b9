"""What a driver reports from its ISR: ``DXGKARGCB_NOTIFY_INTERRUPT_DATA`` with every
``DXGK_INTERRUPT_TYPE`` arm, its flags, and the small structures the arms embed.

Spec: Microsoft's DXGK_INTERRUPT_TYPE, DXGKARGCB_NOTIFY_INTERRUPT_DATA,
DXGKCB_NOTIFY_INTERRUPT_DATA_FLAGS and DXGK_PAGE_FAULT_FLAGS pages. Each union arm exists from the
DDI version that introduced its interrupt type (:data:`wddmsim.ddi.enums.INTERRUPT_TYPE_SINCE`); the
union keeps its size through the ``Reserved[16]`` arm.
"""

import enum

from ..enums import (
    ENGINE_STATE,
    GENERAL_ERROR_CODE,
    INTERRUPT_TYPE,
    INTERRUPT_TYPE_SINCE,
    PAGE_FAULT_FLAGS,
    PRESENT_DISPLAY_ONLY_PROGRESS_ID,
    RENDER_PIPELINE_STAGE,
    DXGK_INTERRUPT_TYPE as T,
)
from ..schema import (
    D3DDDI_VIDEO_PRESENT_SOURCE_ID,
    D3DDDI_VIDEO_PRESENT_TARGET_ID,
    D3DGPU_VIRTUAL_ADDRESS,
    HANDLE,
    NTSTATUS,
    PVOID,
    UINT,
    UINT64,
    ULONGLONG,
    Array,
    Bit,
    EnumType,
    anon_struct,
    flags,
    m,
    struct,
    union,
)
from .common import PHYSICAL_ADDRESS


class DXGK_MIRACAST_CHUNK_TYPE(enum.IntEnum):
    """What a Miracast chunk notification is about."""

    DXGK_MIRACAST_CHUNK_TYPE_UNKNOWN = 0
    DXGK_MIRACAST_CHUNK_TYPE_COLOR_CONVERT_COMPLETE = 1
    DXGK_MIRACAST_CHUNK_TYPE_ENCODE_COMPLETE = 2
    DXGK_MIRACAST_CHUNK_TYPE_FRAME_START = 3
    DXGK_MIRACAST_CHUNK_TYPE_FRAME_DROPPED = 4
    DXGK_MIRACAST_CHUNK_TYPE_ENCODE_DRIVER_DEFINED_1 = -0x80000000
    DXGK_MIRACAST_CHUNK_TYPE_ENCODE_DRIVER_DEFINED_2 = -0x7FFFFFFF


DXGK_MIRACAST_CHUNK_ID = flags(
    "DXGK_MIRACAST_CHUNK_ID",
    Bit("FrameNumber", width=40, doc="Frame the chunk belongs to."),
    Bit("PartNumber", width=24, doc="Part of the frame."),
    storage=ULONGLONG,
    since="wddm1_3",
    doc="Identifies a Miracast chunk: frame and part numbers packed in 64 bits.",
    source="[D:d3dukmdt/ns-d3dukmdt-dxgk_miracast_chunk_id]",
)

DXGK_MIRACAST_CHUNK_INFO = struct(
    "DXGK_MIRACAST_CHUNK_INFO",
    m("ChunkType", EnumType("DXGK_MIRACAST_CHUNK_TYPE", DXGK_MIRACAST_CHUNK_TYPE)),
    m("ChunkId", DXGK_MIRACAST_CHUNK_ID),
    m("ProcessingTime", UINT, doc="Microseconds the chunk took."),
    m("EncodeRate", UINT, doc="Encode bit rate in kbit/s."),
    since="wddm1_3",
    doc="A wireless display (Miracast) encode chunk.",
    source="[D:d3dukmdt/ns-d3dukmdt-dxgk_miracast_chunk_info]",
)

DXGKARGCB_PRESENT_DISPLAYONLY_PROGRESS = struct(
    "DXGKARGCB_PRESENT_DISPLAYONLY_PROGRESS",
    m("VidPnSourceId", D3DDDI_VIDEO_PRESENT_SOURCE_ID),
    m("ProgressId", PRESENT_DISPLAY_ONLY_PROGRESS_ID),
    since="win8",
    doc="Progress of a display-only driver's present.",
    source="[D:d3dkmddi/ns-d3dkmddi-_dxgkargcb_present_displayonly_progress]",
)

DXGK_FAULT_ERROR_CODE = struct(
    "DXGK_FAULT_ERROR_CODE",
    union(
        anon_struct(m("IsDeviceSpecificCode", UINT, width=1), m("GeneralErrorCode", GENERAL_ERROR_CODE, width=31)),
        anon_struct(m("IsDeviceSpecificCodeReservedBit", UINT, width=1), m("DeviceSpecificCode", UINT, width=31)),
    ),
    since="wddm2_0",
    doc="Why the GPU faulted: a general error code or a vendor-specific one.",
    source="[D:d3dkmdt/ns-d3dkmdt-_dxgk_fault_error_code]",
)

DXGKCB_NOTIFY_INTERRUPT_DATA_FLAGS = flags(
    "DXGKCB_NOTIFY_INTERRUPT_DATA_FLAGS",
    Bit("ValidPhysicalAdapterMask", doc="The vsync member's PhysicalAdapterMask is supplied."),
    Bit("HsyncFlipCompletion", since="wddm2_2", doc="An Hsync flip completed."),
    Bit("EvaluateLegacyMonitoredFences", since="wddm3_1", doc="Rescan legacy monitored fences too (native fence era)."),
    doc="Flags of an interrupt notification.",
    source="[D:d3dkmddi/ns-d3dkmddi-_dxgkcb_notify_interrupt_data_flags]",
)


def _since(t: T) -> str:
    return INTERRUPT_TYPE_SINCE[t]


def _arm(name: str, t: T, *members) -> "object":
    return m(name, struct(f"{name}_t", *members), since=_since(t), doc=f"Data of {t.name}.")


_MPO_VSYNC_PTR = PVOID  # points at DXGK_MULTIPLANE_OVERLAY_VSYNC_INFO[Count] in the model's memory

DXGKARGCB_NOTIFY_INTERRUPT_DATA = struct(
    "DXGKARGCB_NOTIFY_INTERRUPT_DATA",
    m("InterruptType", INTERRUPT_TYPE),
    union(
        _arm("DmaCompleted", T.DXGK_INTERRUPT_DMA_COMPLETED,
             m("SubmissionFenceId", UINT), m("NodeOrdinal", UINT), m("EngineOrdinal", UINT)),
        _arm("DmaPreempted", T.DXGK_INTERRUPT_DMA_PREEMPTED,
             m("PreemptionFenceId", UINT), m("LastCompletedFenceId", UINT), m("NodeOrdinal", UINT), m("EngineOrdinal", UINT)),
        _arm("DmaFaulted", T.DXGK_INTERRUPT_DMA_FAULTED,
             m("FaultedFenceId", UINT), m("Status", NTSTATUS), m("NodeOrdinal", UINT), m("EngineOrdinal", UINT)),
        _arm("CrtcVsync", T.DXGK_INTERRUPT_CRTC_VSYNC,
             m("VidPnTargetId", D3DDDI_VIDEO_PRESENT_TARGET_ID), m("PhysicalAddress", PHYSICAL_ADDRESS),
             m("PhysicalAdapterMask", UINT)),
        _arm("DisplayOnlyVsync", T.DXGK_INTERRUPT_DISPLAYONLY_VSYNC, m("VidPnTargetId", D3DDDI_VIDEO_PRESENT_TARGET_ID)),
        _arm("CrtcVsyncWithMultiPlaneOverlay", T.DXGK_INTERRUPT_CRTC_VSYNC_WITH_MULTIPLANE_OVERLAY,
             m("VidPnTargetId", D3DDDI_VIDEO_PRESENT_TARGET_ID), m("PhysicalAdapterMask", UINT),
             m("MultiPlaneOverlayVsyncInfoCount", UINT), m("pMultiPlaneOverlayVsyncInfo", _MPO_VSYNC_PTR)),
        m("DisplayOnlyPresentProgress", DXGKARGCB_PRESENT_DISPLAYONLY_PROGRESS,
          since=_since(T.DXGK_INTERRUPT_DISPLAYONLY_PRESENT_PROGRESS)),
        _arm("MiracastEncodeChunkCompleted", T.DXGK_INTERRUPT_MICACAST_CHUNK_PROCESSING_COMPLETE,
             m("VidPnTargetId", D3DDDI_VIDEO_PRESENT_TARGET_ID), m("ChunkInfo", DXGK_MIRACAST_CHUNK_INFO),
             m("pPrivateDriverData", PVOID), m("PrivateDataDriverSize", UINT), m("Status", NTSTATUS)),
        _arm("DmaPageFaulted", T.DXGK_INTERRUPT_DMA_PAGE_FAULTED,
             m("FaultedFenceId", UINT), m("FaultedPrimitiveAPISequenceNumber", UINT64),
             m("FaultedPipelineStage", RENDER_PIPELINE_STAGE), m("FaultedBindTableEntry", UINT),
             m("PageFaultFlags", PAGE_FAULT_FLAGS), m("FaultedVirtualAddress", D3DGPU_VIRTUAL_ADDRESS),
             m("NodeOrdinal", UINT), m("EngineOrdinal", UINT), m("PageTableLevel", UINT),
             m("FaultErrorCode", DXGK_FAULT_ERROR_CODE), m("FaultedProcessHandle", HANDLE)),
        _arm("CrtcVsyncWithMultiPlaneOverlay2", T.DXGK_INTERRUPT_CRTC_VSYNC_WITH_MULTIPLANE_OVERLAY2,
             m("VidPnTargetId", D3DDDI_VIDEO_PRESENT_TARGET_ID), m("PhysicalAdapterMask", UINT),
             m("MultiPlaneOverlayVsyncInfoCount", UINT), m("pMultiPlaneOverlayVsyncInfo", _MPO_VSYNC_PTR),
             m("GpuFrequency", ULONGLONG), m("GpuClockCounter", ULONGLONG)),
        _arm("MonitoredFenceSignaled", T.DXGK_INTERRUPT_MONITORED_FENCE_SIGNALED,
             m("NodeOrdinal", UINT), m("EngineOrdinal", UINT)),
        _arm("HwContextListSwitchCompleted", T.DXGK_INTERRUPT_HWCONTEXTLIST_SWITCH_COMPLETED,
             m("NodeOrdinal", UINT), m("EngineOrdinal", UINT), m("ContextSwitchFence", UINT64)),
        _arm("HwQueuePageFaulted", T.DXGK_INTERRUPT_HWQUEUE_PAGE_FAULTED,
             m("FaultedFenceId", UINT64), m("FaultedVirtualAddress", D3DGPU_VIRTUAL_ADDRESS),
             m("FaultedPrimitiveAPISequenceNumber", UINT64),
             union(m("FaultedHwQueue", HANDLE), m("FaultedHwContext", HANDLE), m("FaultedProcessHandle", HANDLE)),
             m("NodeOrdinal", UINT), m("EngineOrdinal", UINT), m("FaultedPipelineStage", RENDER_PIPELINE_STAGE),
             m("FaultedBindTableEntry", UINT), m("PageFaultFlags", PAGE_FAULT_FLAGS), m("PageTableLevel", UINT),
             m("FaultErrorCode", DXGK_FAULT_ERROR_CODE)),
        _arm("PeriodicMonitoredFenceSignaled", T.DXGK_INTERRUPT_PERIODIC_MONITORED_FENCE_SIGNALED,
             m("VidPnTargetId", D3DDDI_VIDEO_PRESENT_TARGET_ID), m("NotificationID", UINT)),
        _arm("SchedulingLogInterrupt", T.DXGK_INTERRUPT_SCHEDULING_LOG_INTERRUPT,
             m("NodeOrdinal", UINT), m("EngineOrdinal", UINT)),
        _arm("GpuEngineTimeout", T.DXGK_INTERRUPT_GPU_ENGINE_TIMEOUT, m("NodeOrdinal", UINT), m("EngineOrdinal", UINT)),
        _arm("SuspendContextCompleted", T.DXGK_INTERRUPT_SUSPEND_CONTEXT_COMPLETED,
             m("hContext", HANDLE), m("ContextSuspendFence", UINT64)),
        _arm("CrtcVsyncWithMultiPlaneOverlay3", T.DXGK_INTERRUPT_CRTC_VSYNC_WITH_MULTIPLANE_OVERLAY3,
             m("VidPnTargetId", D3DDDI_VIDEO_PRESENT_TARGET_ID), m("PhysicalAdapterMask", UINT),
             m("MultiPlaneOverlayVsyncInfoCount", UINT), m("pMultiPlaneOverlayVsyncInfo", _MPO_VSYNC_PTR),
             m("GpuFrequency", ULONGLONG), m("GpuClockCounter", ULONGLONG)),
        _arm("NativeFenceSignaled", T.DXGK_INTERRUPT_NATIVE_FENCE_SIGNALED,
             m("NodeOrdinal", UINT), m("EngineOrdinal", UINT), m("SignaledNativeFenceCount", UINT),
             m("pSignaledNativeFenceArray", PVOID), m("hHWQueue", HANDLE)),
        _arm("EngineStateChange", T.DXGK_INTERRUPT_GPU_ENGINE_STATE_CHANGE,
             m("NodeOrdinal", UINT), m("EngineOrdinal", UINT), m("NewState", ENGINE_STATE)),
        m("Reserved", struct("Reserved_t", m("Reserved", Array(UINT, 16)))),
    ),
    m("Flags", DXGKCB_NOTIFY_INTERRUPT_DATA_FLAGS),
    doc="What DxgkCbNotifyInterrupt reports; InterruptType selects the union arm.",
    source="[D:d3dkmddi/ns-d3dkmddi-_dxgkargcb_notify_interrupt_data]",
)

#: The union arm that each interrupt type fills.
INTERRUPT_ARM: dict[T, str] = {
    T.DXGK_INTERRUPT_DMA_COMPLETED: "DmaCompleted",
    T.DXGK_INTERRUPT_DMA_PREEMPTED: "DmaPreempted",
    T.DXGK_INTERRUPT_CRTC_VSYNC: "CrtcVsync",
    T.DXGK_INTERRUPT_DMA_FAULTED: "DmaFaulted",
    T.DXGK_INTERRUPT_DISPLAYONLY_VSYNC: "DisplayOnlyVsync",
    T.DXGK_INTERRUPT_DISPLAYONLY_PRESENT_PROGRESS: "DisplayOnlyPresentProgress",
    T.DXGK_INTERRUPT_CRTC_VSYNC_WITH_MULTIPLANE_OVERLAY: "CrtcVsyncWithMultiPlaneOverlay",
    T.DXGK_INTERRUPT_MICACAST_CHUNK_PROCESSING_COMPLETE: "MiracastEncodeChunkCompleted",
    T.DXGK_INTERRUPT_DMA_PAGE_FAULTED: "DmaPageFaulted",
    T.DXGK_INTERRUPT_CRTC_VSYNC_WITH_MULTIPLANE_OVERLAY2: "CrtcVsyncWithMultiPlaneOverlay2",
    T.DXGK_INTERRUPT_MONITORED_FENCE_SIGNALED: "MonitoredFenceSignaled",
    T.DXGK_INTERRUPT_HWQUEUE_PAGE_FAULTED: "HwQueuePageFaulted",
    T.DXGK_INTERRUPT_HWCONTEXTLIST_SWITCH_COMPLETED: "HwContextListSwitchCompleted",
    T.DXGK_INTERRUPT_PERIODIC_MONITORED_FENCE_SIGNALED: "PeriodicMonitoredFenceSignaled",
    T.DXGK_INTERRUPT_SCHEDULING_LOG_INTERRUPT: "SchedulingLogInterrupt",
    T.DXGK_INTERRUPT_GPU_ENGINE_TIMEOUT: "GpuEngineTimeout",
    T.DXGK_INTERRUPT_SUSPEND_CONTEXT_COMPLETED: "SuspendContextCompleted",
    T.DXGK_INTERRUPT_CRTC_VSYNC_WITH_MULTIPLANE_OVERLAY3: "CrtcVsyncWithMultiPlaneOverlay3",
    T.DXGK_INTERRUPT_NATIVE_FENCE_SIGNALED: "NativeFenceSignaled",
    T.DXGK_INTERRUPT_GPU_ENGINE_STATE_CHANGE: "EngineStateChange",
}
