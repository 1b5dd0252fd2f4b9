"""Native GPU fences: the arguments of the three driver entry points the OS uses for them.

* ``DXGKARG_CREATENATIVEFENCE`` (with ``DXGKARG_CREATENATIVEFENCE_FLAGS``): DxgkDdiCreateNativeFence,
  the driver's tracking object for one fence.
* ``DXGKARG_DESTROYNATIVEFENCE`` (with ``DXGK_DESTROYNATIVEFENCE_FLAGS``): DxgkDdiDestroyNativeFence.
* ``DXGKARG_UPDATEMONITOREDVALUES`` (with ``DXGKARG_UPDATEMONITOREDVALUES_FLAGS``):
  DxgkDdiUpdateMonitoredValues, the OS's new MonitoredValue for a batch of fences.
* ``DXGKARG_UPDATECURRENTVALUESFROMCPU`` (with ``DXGK_UPDATECURRENTVALUESFROMCPU_FLAGS``):
  DxgkDdiUpdateCurrentValuesFromCpu, a CPU signal written by the driver.
* ``DXGK_NATIVE_FENCE_CAPS``: what DxgkDdiQueryAdapterInfo answers to DXGKQAITYPE_NATIVE_FENCE_CAPS.

Member order and types follow Microsoft's reference pages of these structures (d3dkmddi.h) and
"Native GPU fence objects". ``pPrivateDriverData`` is an array of ``D3DDDI_NATIVE_FENCE_PDD_SIZE``
(64) bytes inside the structure, in spite of its name. No flag bit is defined yet (Reserved:32).
Version: the reference pages date every one of them to Windows 11 24H2; the conceptual page lists
DxgkDdiCreateNativeFence and DxgkDdiDestroyNativeFence as WDDM 3.1 members of
DRIVER_INITIALIZATION_DATA, the header guards the interrupt arm and ``DXGK_VIDSCHCAPS.NativeGpuFence``
with WDDM 3.1, and the update of monitored values goes with them, so all are WDDM 3.1 header items
here (tools/msvc_layouts/DECISIONS.md). The OS enables the feature for WDDM 3.2 drivers only.
"""

from ..enums import NATIVEFENCE_TYPE
from ..schema import BOOLEAN, BYTE, D3DGPU_VIRTUAL_ADDRESS, HANDLE, PVOID, UINT, Array, Bit, flags, m, struct

#: D3DDDI_NATIVE_FENCE_PDD_SIZE: bytes of private driver data passed at creation.
NATIVE_FENCE_PDD_SIZE = 64

DXGKARG_CREATENATIVEFENCE_FLAGS = flags(
    "DXGKARG_CREATENATIVEFENCE_FLAGS",
    since="wddm3_1",
    doc="Native fence creation flags; no bit is defined.",
    source="[D:d3dkmddi/ns-d3dkmddi-dxgkarg_createnativefence_flags]",
)

DXGKARG_CREATENATIVEFENCE = struct(
    "DXGKARG_CREATENATIVEFENCE",
    m("hGlobalNativeFence", HANDLE, doc="In: Dxgkrnl's handle of the fence; out: the driver's handle."),
    m("Type", NATIVEFENCE_TYPE, doc="DEFAULT (CPU and GPU) or INTRA_GPU (not supported by the OS)."),
    m("CurrentValueSystemProcessGpuVa", D3DGPU_VIRTUAL_ADDRESS,
      doc="CurrentValue in the system process's GPU address space (for the context-management processor)."),
    m("MonitoredValueSystemProcessGpuVa", D3DGPU_VIRTUAL_ADDRESS,
      doc="MonitoredValue in the system process's GPU address space."),
    m("pPrivateDriverData", Array(BYTE, NATIVE_FENCE_PDD_SIZE), doc="In/out: the user-mode driver's data."),
    m("Flags", DXGKARG_CREATENATIVEFENCE_FLAGS),
    m("Reserved", Array(BYTE, 32), doc="Reserved for the system."),
    since="wddm3_1",
    doc="Arguments of DxgkDdiCreateNativeFence.",
    source="[D:d3dkmddi/ns-d3dkmddi-dxgkarg_createnativefence]",
)

DXGK_DESTROYNATIVEFENCE_FLAGS = flags(
    "DXGK_DESTROYNATIVEFENCE_FLAGS",
    since="wddm3_1",
    doc="Native fence destruction flags; no bit is defined.",
    source="[D:d3dkmddi/ns-d3dkmddi-dxgk_destroynativefence_flags]",
)

DXGKARG_DESTROYNATIVEFENCE = struct(
    "DXGKARG_DESTROYNATIVEFENCE",
    m("hGlobalNativeFence", HANDLE, doc="The driver's handle, as DxgkDdiCreateNativeFence returned it."),
    m("Flags", DXGK_DESTROYNATIVEFENCE_FLAGS),
    m("Reserved", Array(BYTE, 32), doc="Reserved for the system."),
    since="wddm3_1",
    doc="Arguments of DxgkDdiDestroyNativeFence.",
    source="[D:d3dkmddi/ns-d3dkmddi-dxgkarg_destroynativefence]",
)

DXGKARG_UPDATEMONITOREDVALUES_FLAGS = flags(
    "DXGKARG_UPDATEMONITOREDVALUES_FLAGS",
    since="wddm3_1",
    doc="Flags of a monitored-value update; no bit is defined.",
    source="[D:d3dkmddi/ns-d3dkmddi-dxgkarg_updatemonitoredvalues_flags]",
)

DXGKARG_UPDATEMONITOREDVALUES = struct(
    "DXGKARG_UPDATEMONITOREDVALUES",
    m("NativeFenceArray", PVOID, doc="HANDLE array of NumFences: the driver's fence handles."),
    m("UpdatedValueArray", PVOID, doc="UINT64 array of NumFences: each fence's new MonitoredValue."),
    m("MonitoredValueKernelCpuVa", PVOID,
      doc="Pointer array of NumFences: where each MonitoredValue lives (kernel CPU address), valid only "
          "during the call."),
    m("NumFences", UINT),
    m("Flags", DXGKARG_UPDATEMONITOREDVALUES_FLAGS),
    m("Reserved", Array(BYTE, 28), doc="Reserved for the system."),
    since="wddm3_1",
    doc="Arguments of DxgkDdiUpdateMonitoredValues.",
    source="[D:d3dkmddi/ns-d3dkmddi-dxgkarg_updatemonitoredvalues]",
)

DXGK_UPDATECURRENTVALUESFROMCPU_FLAGS = flags(
    "DXGK_UPDATECURRENTVALUESFROMCPU_FLAGS",
    Bit("AlwaysSignaled", doc="The fence's device is in error: GPU waits pass at once, GPU signals do nothing."),
    Bit("NotificationOnly", doc="CurrentValue was already written: only release the GPU waiters it satisfies."),
    since="wddm3_1",
    doc="How DxgkDdiUpdateCurrentValuesFromCpu treats its batch.",
    source="[D:d3dkmddi/ns-d3dkmddi-dxgk_updatecurrentvaluesfromcpu_flags]",
)

DXGKARG_UPDATECURRENTVALUESFROMCPU = struct(
    "DXGKARG_UPDATECURRENTVALUESFROMCPU",
    m("NativeFenceArray", PVOID, doc="HANDLE array of NumFences: the driver's fence handles."),
    m("UpdatedValueArray", PVOID, doc="UINT64 array of NumFences: each fence's new CurrentValue."),
    m("CurrentValueKernelCpuVa", PVOID,
      doc="Pointer array of NumFences: where each CurrentValue lives (kernel CPU address), valid only "
          "during the call."),
    m("NumFences", UINT),
    m("Flags", DXGK_UPDATECURRENTVALUESFROMCPU_FLAGS),
    m("Reserved", Array(BYTE, 28), doc="Reserved for the system."),
    since="wddm3_1",
    doc="Arguments of DxgkDdiUpdateCurrentValuesFromCpu.",
    source="[D:d3dkmddi/ns-d3dkmddi-dxgkarg_updatecurrentvaluesfromcpu]",
)

DXGK_NATIVE_FENCE_CAPS = struct(
    "DXGK_NATIVE_FENCE_CAPS",
    m("MonitoredValueStride", UINT, doc="Bytes between the MonitoredValues of fences the OS packs in one page."),
    m("MapToGpuSystemProcess", BOOLEAN,
      doc="The OS maps CurrentValue and MonitoredValue into the system process's GPU space for the "
          "context-management processor (DXGKARG_CREATENATIVEFENCE's *SystemProcessGpuVa)."),
    m("MinimumAddress", D3DGPU_VIRTUAL_ADDRESS, doc="Lowest GPU VA for native fence mappings (optional)."),
    m("MaximumAddress", D3DGPU_VIRTUAL_ADDRESS, doc="Highest GPU VA for native fence mappings (optional)."),
    m("Reserved", Array(BYTE, 28), doc="Reserved for the system."),
    since="wddm3_1",
    doc="The GPU's native fence capabilities (DxgkDdiQueryAdapterInfo, DXGKQAITYPE_NATIVE_FENCE_CAPS).",
    source="[D:d3dkmddi/ns-d3dkmddi-dxgk_native_fence_caps]",
)
