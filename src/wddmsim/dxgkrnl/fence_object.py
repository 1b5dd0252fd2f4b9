"""The monitored fence object (D3DDDI_MONITORED_FENCE) and the numbers of its contract.

:class:`MonitoredFence` is one fence as the OS keeps it: its 64-bit counter's kernel address, the
value the OS last observed, its flags, the devices that may signal it, and the heap of its waiters
(``_Entry``, one registration each; :mod:`.fence_waits` adds and releases them). Beside it, the
limits Microsoft's D3DDDI_SYNCHRONIZATIONOBJECTINFO2 and "Context monitoring" pages set:
D3DDDI_MAX_OBJECT_SIGNALED / D3DDDI_MAX_OBJECT_WAITED_ON = 32, the member names of
D3DDDI_SYNCHRONIZATIONOBJECT_FLAGS, and UINT_MAX/2, the farthest a 32-bit fence's outstanding
values may be from its last value under ``DXGK_VIDSCHCAPS.No64BitAtomics`` (rule 99,
NarrowFenceHalfRange). The statuses the fence calls answer with live here too, so that
:class:`~wddmsim.dxgkrnl.fences.FenceTable` and its waiters share them. The rule numbers are the
rule catalogue's: ``wddmsim rules N`` prints rule N, docs/rules.md lists them all.
"""

from __future__ import annotations

from typing import Any

from ..ddi.ntstatus import NTSTATUS

__all__ = [
    "ACCESS_DENIED",
    "CANCELLED",
    "DESTROYED_STATUS",
    "HALF_RANGE",
    "INVALID_HANDLE",
    "INVALID_PARAMETER",
    "MAX_OBJECTS_SIGNALED",
    "MAX_OBJECTS_WAITED_ON",
    "SUCCESS",
    "SYNC_FLAGS",
    "TIMEOUT",
    "U32_MAX",
    "U64_MAX",
    "MonitoredFence",
]

U64_MAX = (1 << 64) - 1
U32_MAX = (1 << 32) - 1
#: UINT_MAX/2: the farthest a 32-bit fence's outstanding values may be from its last value (rule 99).
HALF_RANGE = U32_MAX // 2
#: D3DDDI_MAX_OBJECT_SIGNALED and D3DDDI_MAX_OBJECT_WAITED_ON.
MAX_OBJECTS_SIGNALED = 32
MAX_OBJECTS_WAITED_ON = 32

#: D3DDDI_SYNCHRONIZATIONOBJECT_FLAGS member names, in declaration order.
SYNC_FLAGS = (
    "Shared", "NtSecuritySharing", "CrossAdapter", "TopOfPipeline", "NoSignal", "NoWait",
    "NoSignalMaxValueOnTdr", "NoGPUAccess", "SignalByKmd", "UnwaitCpuWaitersOnlyOnDestroy",
)
_KNOWN_FLAGS = frozenset(SYNC_FLAGS)

SUCCESS = int(NTSTATUS.STATUS_SUCCESS)
TIMEOUT = int(NTSTATUS.STATUS_TIMEOUT)
CANCELLED = int(NTSTATUS.STATUS_CANCELLED)
INVALID_HANDLE = int(NTSTATUS.STATUS_INVALID_HANDLE)
INVALID_PARAMETER = int(NTSTATUS.STATUS_INVALID_PARAMETER)
ACCESS_DENIED = int(NTSTATUS.STATUS_ACCESS_DENIED)
#: The status pending waiters complete with when their fence is destroyed (decision 6 of :mod:`.fences`).
DESTROYED_STATUS = INVALID_HANDLE


class MonitoredFence:
    """One monitored fence. The table owns the waiters; the attributes are for reading."""

    #: A native GPU fence (:mod:`.nativefence`) says True: its waiters are read on the native-fence
    #: interrupt only, never by the scan of monitored fences with waiters.
    native = False

    __slots__ = (
        "handle", "process", "device", "flags", "cpu_va", "gpu_va", "bits", "value", "initial",
        "destroyed", "signalers", "devices", "_heap", "_pending", "_dead", "_raw", "_watch",
    )

    def __init__(self, process, device, flags: frozenset, cpu_va: int, bits: int, initial: int):
        self.handle = 0
        self.process = process  # the owner
        self.device = device  # the creator's device
        self.flags = flags  # names of the D3DDDI_SYNCHRONIZATIONOBJECT_FLAGS set
        self.cpu_va = cpu_va  # kernel CPU address of the value
        self.gpu_va: dict[Any, int] = {}  # process -> GPU VA (filled through map_gpu)
        self.bits = bits  # 64, or 32 under No64BitAtomics
        self.value = initial  # the OS's observed 64-bit value
        self.initial = initial
        self.destroyed = False
        self.signalers: set = set() if device is None else {device}
        self.devices: set = set() if device is None else {device}  # creator and openers
        self._heap: list[tuple[int, int, _Entry]] = []  # (target, registration seq, entry)
        self._watch = None  # the table's watch on the value's memory (see FenceTable._written)
        self._pending = 0  # live entries in the heap
        self._dead = 0  # cancelled entries still in the heap
        self._raw = 0  # the memory value last read or written by the OS

    @property
    def max_value(self) -> int:
        """The value a TDR drives it to (2**64-1 in the 64-bit view)."""
        return U64_MAX

    def __repr__(self) -> str:
        state = " destroyed" if self.destroyed else ""
        return f"<MonitoredFence 0x{self.handle:x} value={self.value} bits={self.bits}{state}>"


class _Entry:
    """A waiter's registration on one fence (a heap item)."""

    __slots__ = ("fence", "target", "owner", "live")

    def __init__(self, fence: MonitoredFence, target: int, owner):
        self.fence = fence
        self.target = target
        self.owner = owner
        self.live = True

