"""The DDI's hardware-scheduling structures (the argument layouts the OS and the driver exchange):
hardware contexts and queues, priority bands and per-context scheduling properties, context
suspend/resume, hardware-engine reset, and the kernel-submission fence write. The OS's side of
hardware scheduling is :mod:`wddmsim.dxgkrnl.hwscheduling`, the driver's :mod:`wddmsim.kmd.wddm2`,
the GPU's :mod:`wddmsim.gpu.scheduler`.

* ``DXGKARG_CREATEHWCONTEXT`` (with ``D3DDDI_CREATEHWCONTEXTFLAGS`` and ``DXGK_HWCONTEXT_CAPS``) and
  ``DXGKARG_CREATEHWQUEUE`` (with ``D3DDDI_CREATEHWQUEUEFLAGS``): WDDM 2.2.
* ``DXGKARG_SETUPPRIORITYBANDS``, ``DXGKARG_SETCONTEXTSCHEDULINGPROPERTIES``,
  ``DXGKARG_SUSPENDCONTEXT``, ``DXGKARG_RESUMECONTEXT``, ``DXGKARG_RESUMEHWENGINE`` and
  ``DXGK_INVALIDATEHWCONTEXTFLAGS``: the WDDM 2.4 scheduling model.
* ``DXGKARG_RESETHWENGINE`` and ``DXGKARGCB_INVALIDATEHWCONTEXT``: WDDM 2.2; the callback's argument
  gains ``hAdapter`` (in front of ``hHwContext``) and ``Flags`` at WDDM 2.4.
* ``DXGKARG_SIGNALMONITOREDFENCE``: WDDM 2.5.

Spec: Microsoft's reference pages for DxgkDdiSetupPriorityBands and
DxgkDdiSetContextSchedulingProperties (bands and scheduling properties), DxgkDdiSuspendContext
(suspend and resume), DxgkDdiCreateHwQueue and D3DDDI_CREATEHWQUEUEFLAGS (queue creation),
DxgkDdiSignalMonitoredFence, and DxgkDdiResetHwEngine (engine reset). Version keys
(tools/msvc_layouts/DECISIONS.md has the reasoning): the 2.2 structures and the 2.2 form of
DXGKARGCB_INVALIDATEHWCONTEXT are as in the WDDM 2.3 header (10.0.16299). The 2.4 set follows the
DxgkDdiSuspendContext page ("WDDM 2.4 scheduling mode") and the WDDM2_4 header guard of the
interrupts that go with it (SUSPEND_CONTEXT_COMPLETED, GPU_ENGINE_TIMEOUT); the reference pages of
the set are dated with Windows 10 1809. DXGKARG_SIGNALMONITOREDFENCE follows its page (1809, WDDM
2.5). ``D3DDDI_CREATEHWQUEUEFLAGS``: DisableGpuTimeout WDDM 2.2, NoBroadcastSignal and
NoBroadcastWait WDDM 2.7 (Windows 10 2004), NoKmdAccess WDDM 2.7 (taken with them: absent from the
WDDM 2.3 header, present in the WDDM 3.0 one), UserModeSubmission WDDM 3.1 (as
DXGK_NODEMETADATA_FLAGS.UserModeSubmission), NativeProgressFence and TestQueue WDDM 3.2 (24H2);
``DXGKARG_CREATEHWQUEUE.hHwQueueNativeProgressFence`` WDDM 3.2 (with NativeProgressFence).
"""

from ..enums import DXGK_SCHEDULING_PRIORITY_BAND as BAND
from ..enums import KERNEL_SUBMISSION_TYPE, SCHEDULING_PRIORITY_BAND
from ..schema import (
    D3DGPU_VIRTUAL_ADDRESS,
    D3DKMT_HANDLE,
    HANDLE,
    INT,
    PVOID,
    UINT,
    UINT64,
    Array,
    Bit,
    flags,
    m,
    struct,
)

#: ``DXGK_SCHEDULING_PRIORITY_BAND_COUNT``: elements of the per-band arrays.
BAND_COUNT = int(BAND.DXGK_SCHEDULING_PRIORITY_BAND_COUNT)

D3DDDI_CREATEHWCONTEXTFLAGS = flags(
    "D3DDDI_CREATEHWCONTEXTFLAGS",
    since="wddm2_2",
    doc="Hardware context creation flags; no bit is defined.",
    source="[D:d3dukmdt/ns-d3dukmdt-_d3dddi_createhwcontextflags]",
)

DXGK_HWCONTEXT_CAPS = flags(
    "DXGK_HWCONTEXT_CAPS",
    Bit("UseIoMmu", doc="The context's engine works in the IoMmu model."),
    since="wddm2_2",
    doc="What the driver reports about a new hardware context.",
    source="[D:d3dkmddi/nc-d3dkmddi-dxgkddi_createhwcontext]",
)

DXGKARG_CREATEHWCONTEXT = struct(
    "DXGKARG_CREATEHWCONTEXT",
    m("hHwContext", HANDLE, doc="In: Dxgkrnl's handle; out: the driver's handle."),
    m("NodeOrdinal", UINT, doc="Node the context runs on."),
    m("EngineAffinity", UINT, doc="Engine within the node (one bit on a linked adapter)."),
    m("Flags", D3DDDI_CREATEHWCONTEXTFLAGS),
    m("PrivateDriverDataSize", UINT),
    m("pPrivateDriverData", PVOID, doc="In/out: UMD data; the KMD may write back."),
    m("ContextCaps", DXGK_HWCONTEXT_CAPS, doc="Out: the context's capabilities."),
    since="wddm2_2",
    doc="Arguments of DxgkDdiCreateHwContext.",
    source="[D:d3dkmddi/nc-d3dkmddi-dxgkddi_createhwcontext]",
)

D3DDDI_CREATEHWQUEUEFLAGS = flags(
    "D3DDDI_CREATEHWQUEUEFLAGS",
    Bit("DisableGpuTimeout", doc="Buffers may run longer than 2 s: no GPU timeout for this queue."),
    Bit("NoBroadcastSignal", since="wddm2_7", doc="The queue takes no part in D3D12 fence broadcast signals."),
    Bit("NoBroadcastWait", since="wddm2_7", doc="The queue is not held behind D3D12 fence broadcast waits."),
    Bit("NoKmdAccess", since="wddm2_7", doc="For system use."),
    Bit("UserModeSubmission", since="wddm3_1", doc="Doorbell submission only; the kernel path is not usable."),
    Bit("NativeProgressFence", since="wddm3_2", doc="The progress fence is a native fence: read hHwQueueNativeProgressFence."),
    Bit("TestQueue", since="wddm3_2", doc="A queue for kernel-mode feature testing."),
    since="wddm2_2",
    doc="How a hardware queue is to be created.",
    source="[D:d3dukmdt/ns-d3dukmdt-_d3dddi_createhwqueueflags]",
)

DXGKARG_CREATEHWQUEUE = struct(
    "DXGKARG_CREATEHWQUEUE",
    m("hHwQueue", HANDLE, doc="In: Dxgkrnl's handle; out: the driver's handle."),
    m("Flags", D3DDDI_CREATEHWQUEUEFLAGS),
    m("PrivateDriverDataSize", UINT),
    m("pPrivateDriverData", PVOID, doc="In/out: UMD data; the KMD may write back."),
    m("hHwQueueProgressFence", D3DKMT_HANDLE, doc="The OS-created progress fence (a monitored fence)."),
    m("HwQueueProgressFenceCPUVirtualAddress", PVOID, doc="Kernel CPU VA to read the fence value (8-byte aligned)."),
    m("HwQueueProgressFenceGPUVirtualAddress", D3DGPU_VIRTUAL_ADDRESS,
      doc="GPU VA to read/write the fence value (8-byte aligned); it must grow with every submission."),
    m("hHwQueueNativeProgressFence", HANDLE, since="wddm3_2",
      doc="Driver handle of a native fence; read only with Flags.NativeProgressFence."),
    since="wddm2_2",
    doc="Arguments of DxgkDdiCreateHwQueue.",
    source="[D:d3dkmddi/ns-d3dkmddi-dxgkarg_createhwqueue]",
)

DXGKARG_SETUPPRIORITYBANDS = struct(
    "DXGKARG_SETUPPRIORITYBANDS",
    m("gracePeriodForBand", Array(UINT64, BAND_COUNT),
      doc="100 ns; grace when a band preempts another (ignored for IDLE, which never preempts)."),
    m("processQuantumForBand", Array(UINT64, BAND_COUNT), doc="100 ns; default quantum between processes in a band."),
    m("processGracePeriodForBand", Array(UINT64, BAND_COUNT), doc="100 ns; grace when processes of a band preempt each other."),
    m("targetNormalBandPercentage", UINT, doc="0..50: GPU share kept for NORMAL when FOCUS starves it (desktop default 10)."),
    since="wddm2_4",
    doc="Arguments of DxgkDdiSetupPriorityBands.",
    source="[D:d3dkmddi/ns-d3dkmddi-_dxgkarg_setupprioritybands]",
)

DXGKARG_SETCONTEXTSCHEDULINGPROPERTIES = struct(
    "DXGKARG_SETCONTEXTSCHEDULINGPROPERTIES",
    m("hContext", HANDLE, doc="The hardware context."),
    m("priorityBand", SCHEDULING_PRIORITY_BAND, doc="FOCUS and REALTIME need SE_INC_BASE_PRIORITY_NAME."),
    m("realtimeBandPriorityLevel", INT, doc="0..31 inside the REALTIME band; ignored for other bands."),
    m("inProcessPriority", INT, doc="-7..+7 (default 0) relative to same-priority contexts of the process."),
    m("quantum", UINT64, doc="100 ns."),
    m("gracePeriodSamePriority", UINT64, doc="100 ns; when preempting a same-priority context of the process."),
    m("gracePeriodLowerPriority", UINT64, doc="100 ns; when preempting a lower-priority one (usually smaller)."),
    since="wddm2_4",
    doc="Arguments of DxgkDdiSetContextSchedulingProperties.",
    source="[D:d3dkmddi/ns-d3dkmddi-_dxgkarg_setcontextschedulingproperties]",
)

DXGKARG_SUSPENDCONTEXT = struct(
    "DXGKARG_SUSPENDCONTEXT",
    m("hContext", HANDLE, doc="The hardware context to preempt (no grace period) and mark suspended."),
    m("contextSuspendFence", UINT64, doc="Strictly increasing per context; echoed by SUSPEND_CONTEXT_COMPLETED."),
    since="wddm2_4",
    doc="Arguments of DxgkDdiSuspendContext.",
    source="[D:d3dkmddi/ns-d3dkmddi-_dxgkarg_suspendcontext]",
)

DXGKARG_RESUMECONTEXT = struct(
    "DXGKARG_RESUMECONTEXT",
    m("hContext", HANDLE, doc="The hardware context to make runnable again."),
    since="wddm2_4",
    doc="Arguments of DxgkDdiResumeContext.",
    source="[D:d3dkmddi/ns-d3dkmddi-_dxgkarg_resumecontext]",
)

DXGKARG_RESETHWENGINE = struct(
    "DXGKARG_RESETHWENGINE",
    m("NodeOrdinal", UINT),
    m("EngineOrdinal", UINT),
    since="wddm2_2",
    doc="Arguments of DxgkDdiResetHwEngine (hardware-scheduled engine reset).",
    source="[D:d3dkmddi/nc-d3dkmddi-dxgkddi_resethwengine]",
)

DXGKARG_RESUMEHWENGINE = struct(
    "DXGKARG_RESUMEHWENGINE",
    m("NodeOrdinal", UINT),
    m("EngineOrdinal", UINT),
    since="wddm2_4",
    doc="Arguments of DxgkDdiResumeHwEngine: restart scheduling after ResetHwEngine.",
    source="[D:d3dkmddi/ns-d3dkmddi-_dxgkarg_resumehwengine]",
)

DXGK_INVALIDATEHWCONTEXTFLAGS = flags(
    "DXGK_INVALIDATEHWCONTEXTFLAGS",
    Bit("CollateralDamage", doc="0: the context caused the hang; 1: it was only caught by the reset."),
    since="wddm2_4",
    doc="Why a hardware context is being invalidated.",
    source="[D:d3dkmddi/ns-d3dkmddi-_dxgk_invalidatehwcontextflags]",
)

DXGKARGCB_INVALIDATEHWCONTEXT = struct(
    "DXGKARGCB_INVALIDATEHWCONTEXT",
    m("hAdapter", HANDLE, since="wddm2_4", doc="The display adapter."),
    m("hHwContext", HANDLE, doc="Dxgkrnl's handle of a context hit by the engine reset."),
    m("Flags", DXGK_INVALIDATEHWCONTEXTFLAGS, since="wddm2_4"),
    since="wddm2_2",
    doc="Argument of DxgkCbInvalidateHwContext, called from DxgkDdiResetHwEngine per affected context.",
    source="[D:d3dkmddi/ns-d3dkmddi-_dxgkargcb_invalidatehwcontext]",
)

DXGKARG_SIGNALMONITOREDFENCE = struct(
    "DXGKARG_SIGNALMONITOREDFENCE",
    m("KernelSubmissionType", KERNEL_SUBMISSION_TYPE, doc="Which kernel buffer this is (sync class and format)."),
    m("pDmaBuffer", PVOID, doc="Start of the DMA buffer (4 KB aligned)."),
    m("DmaBufferGpuVirtualAddress", D3DGPU_VIRTUAL_ADDRESS),
    m("DmaSize", UINT),
    m("pDmaBufferPrivateData", PVOID),
    m("DmaBufferPrivateDataSize", UINT, doc="Bytes of private data left."),
    m("MultipassOffset", UINT),
    m("MonitoredFenceGpuVa", D3DGPU_VIRTUAL_ADDRESS, doc="GPU VA of the fence value (8-byte aligned)."),
    m("MonitoredFenceValue", UINT64, doc="Value to write."),
    m("MonitoredFenceCpuVa", PVOID, doc="Kernel CPU VA of the fence value (8-byte aligned)."),
    m("hHwQueue", HANDLE, doc="Hardware queue the buffer goes to."),
    since="wddm2_5",
    doc="Arguments of DxgkDdiSignalMonitoredFence: append a fence write to a kernel-built DMA buffer.",
    source="[D:d3dkmddi/ns-d3dkmddi-_dxgkarg_signalmonitoredfence]",
)
