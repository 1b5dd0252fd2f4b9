"""Flags of synchronization objects and of their signals, from the user-mode/kernel-thunk shared header
(d3dukmdt.h): ``D3DDDI_SYNCHRONIZATIONOBJECT_FLAGS`` and ``D3DDDICB_SIGNALFLAGS``.

These never cross a kernel-mode DDI by themselves; the OS model reads them when a runtime creates a
monitored fence or signals one. They are declared the same way as the DDI structures (the header
guards them by DXGKDDI_INTERFACE_VERSION too) so that the layout tables hold them to the compiler.

Spec: Microsoft's "Context monitoring" page and its D3DDDI_SYNCHRONIZATIONOBJECTINFO2 and
D3DDDI_SYNCHRONIZATIONOBJECT_FLAGS pages. Version keys (tools/msvc_layouts/DECISIONS.md has the reasoning):

* ``D3DDDI_SYNCHRONIZATIONOBJECT_FLAGS`` exists from Windows 7 (reference page). NtSecuritySharing
  and the top bit from Windows 8 (member pages; the current header leaves them unguarded),
  CrossAdapter WDDM 1.3, TopOfPipeline ... NoGPUAccess WDDM 2.0, SignalByKmd WDDM 3.0 (header
  guards), Unused WDDM 3.1, UnwaitCpuWaitersOnlyOnDestroy WDDM 3.2 (member pages). The top bit is
  spelled ``D3DDDI_SYNCHRONIZATIONOBJECT_FLAGS_RESERVED0`` in the header, a macro for ``Reserved0``.
* ``D3DDDICB_SIGNALFLAGS``: SignalAtSubmission from Vista, EnqueueCpuEvent Windows 8,
  AllowFenceRewind and the top bit ``DXGK_SIGNAL_FLAG_INTERNAL0`` WDDM 2.0 (header guards).
"""

from ..schema import Bit, flags

D3DDDI_SYNCHRONIZATIONOBJECT_FLAGS = flags(
    "D3DDDI_SYNCHRONIZATIONOBJECT_FLAGS",
    Bit("Shared", doc="The object is shared."),
    Bit("NtSecuritySharing", since="win8", doc="Shared through an NT handle, no global handle; needs Shared."),
    Bit("CrossAdapter", since="wddm1_3", doc="A shared cross-adapter object (hybrid systems)."),
    Bit("TopOfPipeline", since="wddm2_0",
        doc="Monitored fence only: signaled once the preceding buffer is fetched into the pipe, not completed."),
    Bit("NoSignal", since="wddm2_0", doc="Monitored fence only: this device may only wait; signals get STATUS_ACCESS_DENIED."),
    Bit("NoWait", since="wddm2_0", doc="Monitored fence only: this device may only signal; exclusive with NoSignal."),
    Bit("NoSignalMaxValueOnTdr", since="wddm2_0", doc="Do not force the fence to its maximum value on a TDR."),
    Bit("NoGPUAccess", since="wddm2_0", doc="No GPU VA mapping; always 64-bit; packet-based signal/wait only."),
    Bit("SignalByKmd", since="wddm3_0", doc="The KMD may signal it (CPU_NOTIFICATION objects only)."),
    Bit("Unused", since="wddm3_1", doc="Must be zero."),
    Bit("UnwaitCpuWaitersOnlyOnDestroy", since="wddm3_2",
        doc="Shared object: CPU waiters are released only when the last reference is destroyed."),
    tail=(Bit("Reserved0", since="win8", doc="Must be zero (the header's D3DDDI_SYNCHRONIZATIONOBJECT_FLAGS_RESERVED0)."),),
    since="win7",
    doc="Attributes of a synchronization object (D3DDDI_SYNCHRONIZATIONOBJECTINFO2.Flags).",
    source="[D:d3dukmdt/ns-d3dukmdt-_d3dddi_synchronizationobject_flags]",
)

D3DDDICB_SIGNALFLAGS = flags(
    "D3DDDICB_SIGNALFLAGS",
    Bit("SignalAtSubmission", doc="Signal when the previous packet is submitted rather than completed."),
    Bit("EnqueueCpuEvent", since="win8", doc="Signal the CPU event once every listed context processed the signal."),
    Bit("AllowFenceRewind", since="wddm2_0", doc="May move a monitored fence back to an earlier value."),
    tail=(Bit("DXGK_SIGNAL_FLAG_INTERNAL0", since="wddm2_0", doc="For the OS; must be zero."),),
    doc="How a signal of a synchronization object behaves (pfnSignalSynchronizationObject(2)Cb).",
    source="[D:d3dukmdt/ns-d3dukmdt-_d3dddicb_signalflags]",
)
