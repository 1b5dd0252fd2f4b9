"""Creating devices and contexts: ``DXGKARG_CREATEDEVICE`` with ``DXGK_CREATEDEVICEFLAGS``, the
legacy ``DXGK_DEVICEINFO``/``DXGK_DEVICEINFOFLAGS`` it can point at, and ``DXGKARG_CREATECONTEXT``
with ``DXGK_CREATECONTEXTFLAGS`` (its ``ContextInfo`` is :data:`~.context.DXGK_CONTEXTINFO`).

Spec: Microsoft's reference pages for DxgkDdiCreateContext, DXGKARG_CREATECONTEXT,
DXGK_CREATECONTEXTFLAGS and DXGK_DEVICEINFO. Version keys:

* ``DXGK_CREATECONTEXTFLAGS``: ``GdiContext`` from Windows 7 (reference page; the Vista header has
  only ``SystemContext`` and 31 reserved bits), ``VirtualAddressing`` WDDM 2.0,
  ``SystemProtectedContext`` WDDM 2.1, ``HwQueueSupported`` WDDM 2.3, ``TestContext`` WDDM 3.2
  (header guards).
* ``DXGK_CREATEDEVICEFLAGS``: ``GdiDevice`` from Windows 7 (reference page; absent from the Vista
  header); the top bit ``Reserved0`` (spelled ``DXGK_DEVICE_RESERVED0`` in the header, a macro for
  ``Reserved0``) from Windows 8 (reference page). The current header guards neither.
* ``DXGKARG_CREATEDEVICE.Pasid`` and ``hKmdProcess`` from WDDM 2.0 (header guard).
"""

from ..schema import HANDLE, PVOID, UINT, ULONG, Bit, flags, m, struct, union
from .context import DXGK_CONTEXTINFO

DXGK_CREATECONTEXTFLAGS = flags(
    "DXGK_CREATECONTEXTFLAGS",
    Bit("SystemContext", doc="The paging engine's system context."),
    Bit("GdiContext", since="win7", doc="A context for GDI hardware acceleration."),
    Bit("VirtualAddressing", since="wddm2_0", doc="The context works with GPU virtual addresses."),
    Bit("SystemProtectedContext", since="wddm2_1", doc="Used to change the VPR; may reach allocations outside it."),
    Bit("HwQueueSupported", since="wddm2_3", doc="The context takes hardware queues."),
    Bit("TestContext", since="wddm3_2", doc="A context for kernel-mode feature testing."),
    doc="How DxgkDdiCreateContext must create the context.",
    source="[D:d3dkmddi/ns-d3dkmddi-_dxgk_createcontextflags]",
)

DXGKARG_CREATECONTEXT = struct(
    "DXGKARG_CREATECONTEXT",
    m("hContext", HANDLE, doc="In: the OS handle for callbacks; out: the driver's handle for later DDIs."),
    m("NodeOrdinal", UINT, doc="Node the context runs on."),
    m("EngineAffinity", UINT, doc="One bit: 1 << engine ordinal within a linked adapter."),
    m("Flags", DXGK_CREATECONTEXTFLAGS),
    m("pPrivateDriverData", PVOID, doc="Data from the user-mode driver."),
    m("PrivateDriverDataSize", UINT),
    m("ContextInfo", DXGK_CONTEXTINFO, doc="Out: DMA buffer and list sizes for the context."),
    doc="Arguments of DxgkDdiCreateContext.",
    source="[D:d3dkmddi/ns-d3dkmddi-_dxgkarg_createcontext]",
)

DXGK_DEVICEINFOFLAGS = flags(
    "DXGK_DEVICEINFOFLAGS",
    Bit("GuaranteedDmaBufferContract", doc="Obsolete: the device uses the guaranteed-contract DMA buffer model (the only one WDDM has)."),
    doc="Flags a driver returns with DXGK_DEVICEINFO.",
    source="[D:d3dkmddi/ns-d3dkmddi-_dxgk_deviceinfoflags]",
)

DXGK_DEVICEINFO = struct(
    "DXGK_DEVICEINFO",
    m("DmaBufferSize", UINT, doc="Starting DMA buffer size in bytes."),
    m("DmaBufferSegmentSet", UINT, doc="Aperture segments DMA buffers may live in; 0 = contiguous system memory."),
    m("DmaBufferPrivateDataSize", UINT),
    m("AllocationListSize", UINT),
    m("PatchLocationListSize", UINT),
    m("Flags", DXGK_DEVICEINFOFLAGS),
    doc="DMA buffer and list sizes of a device, for drivers without per-context sizes (legacy).",
    source="[D:d3dkmddi/ns-d3dkmddi-_dxgk_deviceinfo]",
)

DXGK_CREATEDEVICEFLAGS = flags(
    "DXGK_CREATEDEVICEFLAGS",
    Bit("SystemDevice", doc="The OS's own system device."),
    Bit("GdiDevice", since="win7", doc="A device for GDI hardware acceleration."),
    tail=(Bit("Reserved0", since="win8", doc="Must be zero (the header's DXGK_DEVICE_RESERVED0)."),),
    doc="How DxgkDdiCreateDevice must create the device.",
    source="[D:d3dkmddi/ns-d3dkmddi-_dxgk_createdeviceflags]",
)

DXGKARG_CREATEDEVICE = struct(
    "DXGKARG_CREATEDEVICE",
    m("hDevice", HANDLE, doc="In: the OS handle for callbacks; out: the driver's handle for later DDIs."),
    union(
        m("Flags", DXGK_CREATEDEVICEFLAGS, doc="In: how to create the device."),
        m("pInfo", PVOID, doc="DXGK_DEVICEINFO* (legacy output, shares the slot with Flags)."),
    ),
    m("Pasid", ULONG, since="wddm2_0", doc="PASID of the owning process (shared virtual memory)."),
    m("hKmdProcess", HANDLE, since="wddm2_0", doc="The driver's process object for the owner."),
    doc="Arguments of DxgkDdiCreateDevice.",
    source="[D:d3dkmddi/ns-d3dkmddi-_dxgkarg_createdevice]",
)
