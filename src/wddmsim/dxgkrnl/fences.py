"""Monitored fences: the OS side of D3DDDI_MONITORED_FENCE synchronization objects.

A monitored fence is a 64-bit counter in kernel memory. The CPU sees it through a read-only mapping
(``cpu_va``) and changes it only by asking the kernel (SignalSynchronizationObjectFromCpu, rule 97
CpuNeverWritesMonitoredFence); the GPU writes it directly through its GPU VA (a fence write at the
end of a command buffer) or the OS writes it on a queue's behalf (a software signal packet).
Waiters, on the CPU or on a queue, are released when the value reaches their target. After a command
buffer completes or the GPU raises MONITORED_FENCE_SIGNALED, the integrator calls
:meth:`FenceTable.scan`: the OS reads the fences that have waiters and releases whoever is
satisfied.

Under ``DXGK_VIDSCHCAPS.No64BitAtomics`` the GPU updates only a 32-bit value. The OS keeps a 64-bit
view and extends each 32-bit reading relative to the last value it observed: a forward distance
below 2**31 is progress, anything else is a stale or backward write. That is only sound while every
outstanding wait or signal is within UINT_MAX/2 of the last signalled value (rule 99,
NarrowFenceHalfRange), which this module enforces.

What is modelled (Microsoft's "Context monitoring" page and D3DDDI_SYNCHRONIZATIONOBJECTINFO2):

- creation with an initial value and flags, 8-byte aligned addresses (rule 100,
  MonitoredFenceAddressAligned), CPU signal writes the value and releases satisfied waiters at once,
  CPU waits (blocking, with timeout, poll, wait-any), queue (GPU) waits, AllowFenceRewind, NoSignal
  / NoWait (STATUS_ACCESS_DENIED), NoGPUAccess (never mapped, always 64 bits),
  D3DDDI_MAX_OBJECT_SIGNALED / D3DDDI_MAX_OBJECT_WAITED_ON = 32.
- DXGK_VIDSCHCAPS.No64BitAtomics: the 32-bit value with the OS handling the wrap.
- rules 97 (only the kernel writes the value), 98 (MonitoredFenceMonotonic: values never decrease
  except through an accepted rewind), 99 (32-bit distance), 100 (alignment), 101 (MaxFenceOnTdr:
  max value on TDR), 102 (SyncObjectFlagCombinations); 103 (GpuWaitHoldsLaterWork) is the
  scheduler's: a queue wait here only reports when it is satisfied.
- after a TDR, fences the affected devices could signal jump to the maximum value:
  :meth:`FenceTable.signal_max_on_tdr`.

The rule numbers are the rule catalogue's: ``wddmsim rules N`` prints rule N, docs/rules.md lists
them all.

Decisions where the documentation is silent:

1. A CPU signal below the current value without ``rewind`` fails with STATUS_INVALID_PARAMETER
   ("values only go forward unless AllowFenceRewind"); a signal equal to the current value is
   accepted and changes nothing.
2. A rewind may go to any value not lower than the fence's initial value: the fence never held a
   lower value, so it cannot be "an earlier queued value". Lower: STATUS_INVALID_PARAMETER. A
   rewind to a value above the current one is an ordinary forward signal.
3. A queued signal (:meth:`FenceTable.signal_queued`) of a value below the current one is ignored
   (counted in ``stats["ignored_queued_signals"]``), never rewound: only the application's explicit
   rewind may move the value back.
4. The GPU writing a lower value than the OS has observed (64 bits: smaller; 32 bits: a backward
   distance, i.e. a forward distance of 2**31 or more) leaves the observed value alone and counts
   ``stats["backward_gpu_writes"]``; memory keeps what the GPU wrote. Once a fence is at its
   maximum, every other value the GPU writes counts as backward.
5. Rule 99 is checked for every signal that moves a 32-bit fence (forward or rewind) and for every
   wait that would pend; a wait whose target is already reached is satisfied however far back it is.
6. Destroying a fence completes every pending waiter with :data:`DESTROYED_STATUS`
   (STATUS_INVALID_HANDLE: the handle it waits on is gone); later calls on the fence, waits
   included, raise ApiError(STATUS_INVALID_HANDLE) at once. Its 8-byte slot is reused by a later
   fence.
7. A wait that times out: see :mod:`.fence_waits`, which keeps this decision.
8. A wait-all: see :mod:`.fence_waits`, which keeps this decision.
9. Every API call refreshes the fences it names from memory first, so validation never compares
   against a value the GPU has already overtaken.
10. Opening a fence from another process needs the Shared flag (else STATUS_ACCESS_DENIED).
    CrossAdapter, TopOfPipeline and UnwaitCpuWaitersOnlyOnDestroy are accepted and stored; their
    effect belongs to the scheduler. SignalByKmd (CPU notifications only) and unknown names are
    rejected.
11. A TDR drives a 32-bit fence's memory to 2**32-1 and its 64-bit view to 2**64-1.

``value`` is the OS's view as of the last signal, scan or API call on the fence; :meth:`FenceTable.read`
shows what memory holds now without committing it.

The module is the fence table: creating, opening and destroying fences, their values in memory,
signals and scans. The fence object and the contract's numbers are :mod:`.fence_object`'s; the
waits (CPU and queue waiters, their release) are :mod:`.fence_waits`'s, a base class of
:class:`FenceTable`. Every name is importable from here as before.
"""

from __future__ import annotations

from heapq import heappop
from operator import attrgetter
from typing import Any, Callable, Iterable

from ..sim.tracing import wants
from .errors import ApiError
# The names of the fence object and of the waits stay importable from here (some only re-exported).
from .fence_object import (  # noqa: F401
    _KNOWN_FLAGS,
    ACCESS_DENIED,
    CANCELLED,
    DESTROYED_STATUS,
    HALF_RANGE,
    INVALID_HANDLE,
    INVALID_PARAMETER,
    MAX_OBJECTS_SIGNALED,
    MAX_OBJECTS_WAITED_ON,
    SUCCESS,
    SYNC_FLAGS,
    TIMEOUT,
    U32_MAX,
    U64_MAX,
    MonitoredFence,
)
from .fence_waits import FenceWaits, QueueWait  # noqa: F401
from .objects import HandleTable
from .stats import LatencyStats

__all__ = [
    "DESTROYED_STATUS",
    "HALF_RANGE",
    "MAX_OBJECTS_SIGNALED",
    "MAX_OBJECTS_WAITED_ON",
    "SYNC_FLAGS",
    "U32_MAX",
    "U64_MAX",
    "FenceTable",
    "MonitoredFence",
    "QueueWait",
]

_STAT_NAMES = (
    "created", "opened", "destroyed", "rejected", "cpu_signals", "queued_signals",
    "ignored_queued_signals", "rewinds", "gpu_updates", "backward_gpu_writes", "scans", "tdr_maxed",
    "cpu_waits", "queue_waits", "satisfied_at_once", "released", "timeouts", "destroy_released",
    "cancelled",
)

_HANDLE = attrgetter("handle")


class FenceTable(FenceWaits):
    """The OS's monitored fences on one adapter.

    ``memory`` has ``read_u64/write_u64/read_u32/write_u32``; ``allocate(size, align)`` returns
    kernel memory for a fence's value; ``map_gpu(fence, process)`` (optional) returns the GPU VA
    the fence gets in ``process``. ``handles`` (optional) is a :class:`HandleTable` to take handles
    from, so that fences share the handle space of the other kernel objects.
    """

    def __init__(
        self,
        sim,
        memory,
        allocate: Callable[[int, int], int],
        *,
        trace=None,
        no64bit_atomics: bool = False,
        map_gpu: Callable[[MonitoredFence, Any], int] | None = None,
        handles: HandleTable | None = None,
    ):
        self.sim = sim
        self.memory = memory
        self._allocate = allocate
        #: software scheduler: fence signal -> wait released -> the held context's next submission
        self.wake_latency = LatencyStats()
        #: the sink of Fence* events: None when no sink wants them
        self.trace = trace if wants(trace, "FenceSignal") else None
        self.no64bit_atomics = no64bit_atomics
        self.map_gpu = map_gpu
        self.handles = handles if handles is not None else HandleTable()
        self.fences: dict[int, MonitoredFence] = {}  # live fences by handle
        self.stats: dict[str, int] = dict.fromkeys(_STAT_NAMES, 0)
        self._waited: dict[MonitoredFence, None] = {}  # fences with pending waiters
        # The model's bookkeeping (not the OS's): fences whose memory was stored to since the OS
        # last read it (a watch on each value), so a scan reads only what can have moved; and
        # fences whose observed value changed, for whoever drains ``moved`` (hardware queues).
        self._written: set[MonitoredFence] = set()
        self.moved: set[MonitoredFence] = set()
        # A memory that cannot be watched (a test's stand-in): every fence counts as stored to.
        self._watching = hasattr(memory, "watch")
        self._free: list[int] = []  # value slots of destroyed fences
        self._seq = 0

    # -- errors ---------------------------------------------------------------------------------
    def _fail(self, status: int, message: str):
        self.stats["rejected"] += 1
        raise ApiError(status, message)

    def _check_live(self, fence: MonitoredFence) -> None:
        if fence.destroyed:
            self._fail(INVALID_HANDLE, f"monitored fence 0x{fence.handle:x} was destroyed")

    def check_value(self, value: int, what: str = "fence value") -> None:
        """Raise ApiError(STATUS_INVALID_PARAMETER) unless ``value`` is a 64-bit fence value."""
        if not isinstance(value, int):
            self._fail(INVALID_PARAMETER, f"{what} {value!r} is not an integer")
        if not 0 <= value <= U64_MAX:
            self._fail(INVALID_PARAMETER, f"{what} {value} is outside 0..2**64-1")

    def _check_flags(self, flags) -> frozenset:
        if isinstance(flags, str):
            flags = (flags,)
        names = frozenset(flags)
        unknown = names - _KNOWN_FLAGS
        if unknown:
            self._fail(INVALID_PARAMETER, f"unknown synchronization object flag(s) {', '.join(sorted(unknown))}")
        if "NoSignal" in names and "NoWait" in names:
            self._fail(INVALID_PARAMETER, "flags NoSignal and NoWait are exclusive (rule 102)")
        if "NtSecuritySharing" in names and "Shared" not in names:
            self._fail(INVALID_PARAMETER, "flag NtSecuritySharing requires Shared (rule 102)")
        if "SignalByKmd" in names:
            self._fail(INVALID_PARAMETER, "flag SignalByKmd is valid only on CPU notification objects, not monitored fences")
        return names

    # -- objects --------------------------------------------------------------------------------
    def create(self, process, device, initial: int = 0, flags: Iterable[str] = (), *,
               kind: type[MonitoredFence] = MonitoredFence) -> MonitoredFence:
        """D3DDDI_MONITORED_FENCE creation: a fence holding ``initial``, owned by ``process``
        (``kind``: the fence class, a native fence's for :mod:`.nativefence`)."""
        names = self._check_flags(flags)
        self.check_value(initial, "initial fence value")
        bits = 32 if self.no64bit_atomics and "NoGPUAccess" not in names else 64
        addr = self._free.pop() if self._free else self._allocate(8, 8)
        if addr % 8:
            raise ValueError(f"monitored fence value at 0x{addr:x} is not 8-byte aligned (rule 100)")
        fence = kind(process, device, names, addr, bits, initial)
        fence.handle = self.handles.add(fence)
        if self._watching:
            fence._watch = self.memory.watch(addr, lambda _addr, f=fence: self._written.add(f))
        self._write(fence, initial)
        self.fences[fence.handle] = fence
        if self.map_gpu is not None and "NoGPUAccess" not in names:
            fence.gpu_va[process] = self.map_gpu(fence, process)
        self.stats["created"] += 1
        return fence

    def open(self, fence: MonitoredFence, process, device) -> MonitoredFence:
        """``process``/``device`` starts using ``fence`` (its GPU VA is mapped there)."""
        self._check_live(fence)
        if process is not fence.process and "Shared" not in fence.flags:
            self._fail(ACCESS_DENIED, f"monitored fence 0x{fence.handle:x} is not Shared; another process cannot open it")
        if device is not None:
            fence.devices.add(device)
        if self.map_gpu is not None and "NoGPUAccess" not in fence.flags and process not in fence.gpu_va:
            fence.gpu_va[process] = self.map_gpu(fence, process)
        self.stats["opened"] += 1
        return fence

    def lookup(self, handle: int) -> MonitoredFence:
        """The live fence with ``handle``, else ApiError(STATUS_INVALID_HANDLE)."""
        fence = self.fences.get(handle)
        if fence is None:
            self._fail(INVALID_HANDLE, f"no monitored fence with handle 0x{handle:x}")
        return fence

    def destroy(self, fence: MonitoredFence) -> None:
        """Destroy ``fence``: each pending waiter completes with :data:`DESTROYED_STATUS`."""
        self._check_live(fence)
        fence.destroyed = True
        self.fences.pop(fence.handle, None)
        self.handles.remove(fence.handle)
        self._waited.pop(fence, None)
        if fence._watch is not None:
            fence._watch.cancel()
        self._written.discard(fence)
        self.moved.discard(fence)
        heap, fence._heap = fence._heap, []
        entries = []
        while heap:
            e = heappop(heap)[2]
            if e.live:
                e.live = False
                entries.append(e)
        fence._pending = fence._dead = 0
        self._free.append(fence.cpu_va)
        self.stats["destroyed"] += 1
        self.stats["destroy_released"] += len(entries)
        for e in entries:
            e.owner._fire(e, DESTROYED_STATUS)

    def register_signaler(self, fence: MonitoredFence, device) -> None:
        """``device`` queued a signal of ``fence`` (a TDR on it then maxes the fence, rule 101)."""
        self._check_live(fence)
        fence.signalers.add(device)

    # -- memory ---------------------------------------------------------------------------------
    def _write(self, fence: MonitoredFence, value: int) -> None:
        # The kernel writes the value (rule 97: never the CPU mapping).
        if fence.bits == 64:
            self.memory.write_u64(fence.cpu_va, value)
            fence._raw = value
        else:
            raw = value & U32_MAX
            self.memory.write_u32(fence.cpu_va, raw)
            fence._raw = raw
        self._written.discard(fence)  # what memory holds is what the OS knows

    def read(self, fence: MonitoredFence) -> int:
        """What memory holds now, in the 64-bit view, without committing it to ``value``."""
        if fence.bits == 64:
            return self.memory.read_u64(fence.cpu_va)
        raw = self.memory.read_u32(fence.cpu_va)
        delta = (raw - fence.value) & U32_MAX
        if delta <= HALF_RANGE:
            return min(fence.value + delta, U64_MAX)
        return max(fence.value - ((fence.value - raw) & U32_MAX), 0)

    def _refresh(self, fence: MonitoredFence) -> bool:
        """Read ``fence`` from memory; commit forward progress and release. True if it moved."""
        self._written.discard(fence)
        if fence.bits == 64:
            raw = self.memory.read_u64(fence.cpu_va)
            if raw == fence._raw:
                return False
            fence._raw = raw
            new = raw
            if new <= fence.value:
                if new < fence.value:
                    self.stats["backward_gpu_writes"] += 1
                return False
        else:
            raw = self.memory.read_u32(fence.cpu_va)
            if raw == fence._raw:
                return False
            fence._raw = raw
            delta = (raw - fence.value) & U32_MAX
            if delta == 0:
                return False
            new = fence.value + delta
            if delta > HALF_RANGE or new > U64_MAX:
                self.stats["backward_gpu_writes"] += 1
                return False
        fence.value = new
        self.moved.add(fence)
        self.stats["gpu_updates"] += 1
        if self.trace is not None:
            self.trace.emit(self.sim.now, "FenceSignal", {"fence": fence.handle, "value": new, "source": "gpu", "rewind": 0})
        if fence._heap:
            self._release(fence)
        return True

    def _set(self, fence: MonitoredFence, value: int, source: str) -> None:
        """The kernel writes ``value`` (already validated) and releases whoever it satisfies."""
        old = fence.value
        self._write(fence, value)
        if value == old:
            return
        fence.value = value
        self.moved.add(fence)
        if value < old:
            self.stats["rewinds"] += 1
        if self.trace is not None:
            self.trace.emit(self.sim.now, "FenceSignal", {"fence": fence.handle, "value": value, "source": source,
                                                         "rewind": 1 if value < old else 0})
        if value > old and fence._heap:
            self._release(fence)

    # -- signals --------------------------------------------------------------------------------
    def signal_cpu(self, fences: list[MonitoredFence], values: list[int], *, rewind: bool = False) -> None:
        """SignalSynchronizationObjectFromCpu: set each fence to its value, release at once.

        Everything is validated before anything is signalled. ``rewind`` is AllowFenceRewind.
        """
        n = len(fences)
        if len(values) != n:
            self._fail(INVALID_PARAMETER, f"{n} fences but {len(values)} values")
        if not 1 <= n <= MAX_OBJECTS_SIGNALED:
            self._fail(INVALID_PARAMETER, f"{n} objects; a signal takes 1..{MAX_OBJECTS_SIGNALED} (D3DDDI_MAX_OBJECT_SIGNALED)")
        for fence in fences:
            if not fence.destroyed:
                self._refresh(fence)
        after: dict[MonitoredFence, int] = {}
        for fence, value in zip(fences, values):
            self._check_live(fence)
            if "NoSignal" in fence.flags:
                self._fail(ACCESS_DENIED, f"monitored fence 0x{fence.handle:x} has NoSignal")
            self.check_value(value)
            current = after.get(fence, fence.value)
            if value < current:
                if not rewind:
                    self._fail(INVALID_PARAMETER, f"signal of {value} below the current value {current} of fence "
                                                  f"0x{fence.handle:x} without AllowFenceRewind (rule 98)")
                if value < fence.initial:
                    self._fail(INVALID_PARAMETER, f"rewind of fence 0x{fence.handle:x} to {value}, below its initial value "
                                                  f"{fence.initial}")
            if fence.bits == 32 and abs(value - current) > HALF_RANGE:
                self._fail(INVALID_PARAMETER, f"signal of {value} on 32-bit fence 0x{fence.handle:x} is more than UINT_MAX/2 "
                                              f"from its value {current} (rule 99)")
            after[fence] = value
        self.stats["cpu_signals"] += n
        for fence, value in zip(fences, values):
            if not fence.destroyed:  # a released waiter's callback may have destroyed it
                self._set(fence, value, "cpu")

    def check_cpu_signal(self, fences: list[MonitoredFence], values: list[int]) -> None:
        """Validate a SignalSynchronizationObjectFromCpu (as :meth:`signal_cpu` does) without
        signalling: for fences whose value someone else writes (native fences, through their
        driver). The fences are read from memory first."""
        n = len(fences)
        if len(values) != n:
            self._fail(INVALID_PARAMETER, f"{n} fences but {len(values)} values")
        if not 1 <= n <= MAX_OBJECTS_SIGNALED:
            self._fail(INVALID_PARAMETER, f"{n} objects; a signal takes 1..{MAX_OBJECTS_SIGNALED} (D3DDDI_MAX_OBJECT_SIGNALED)")
        for fence, value in zip(fences, values):
            self._check_live(fence)
            self._refresh(fence)
            if "NoSignal" in fence.flags:
                self._fail(ACCESS_DENIED, f"monitored fence 0x{fence.handle:x} has NoSignal")
            self.check_value(value)
            if value < fence.value:
                self._fail(INVALID_PARAMETER, f"signal of {value} below the current value {fence.value} of fence "
                                              f"0x{fence.handle:x} without AllowFenceRewind (rule 98)")

    def signalled_by_driver(self, fence: MonitoredFence, value: int) -> None:
        """The driver wrote ``value`` for a CPU signal the OS asked of it: the OS's view moves
        (``FenceSignal`` with source ``cpu``) and satisfied waiters are released; memory is not
        written again."""
        self.stats["cpu_signals"] += 1
        fence._raw = self.memory.read_u64(fence.cpu_va)
        self._written.discard(fence)
        if value <= fence.value:
            return
        fence.value = value
        self.moved.add(fence)
        if self.trace is not None:
            self.trace.emit(self.sim.now, "FenceSignal", {"fence": fence.handle, "value": value, "source": "cpu",
                                                         "rewind": 0})
        if fence._heap:
            self._release(fence)

    def signal_queued(self, fence: MonitoredFence, value: int, device=None) -> None:
        """The OS signals ``fence`` to ``value`` for a queue of ``device`` that reached the signal.

        A value below the current one is ignored (the observed value stays monotonic).
        """
        self._check_live(fence)
        if "NoSignal" in fence.flags:
            self._fail(ACCESS_DENIED, f"monitored fence 0x{fence.handle:x} has NoSignal")
        self.check_value(value)
        if device is not None:
            fence.signalers.add(device)
        self._refresh(fence)
        current = fence.value
        if value < current:
            self.stats["ignored_queued_signals"] += 1
            return
        if fence.bits == 32 and value - current > HALF_RANGE:
            self._fail(INVALID_PARAMETER, f"signal of {value} on 32-bit fence 0x{fence.handle:x} is more than UINT_MAX/2 "
                                          f"above its value {current} (rule 99)")
        self.stats["queued_signals"] += 1
        self._set(fence, value, "queue")

    def signal_max_on_tdr(self, devices: Iterable) -> list[MonitoredFence]:
        """Rule 101: fences the reset ``devices`` could signal jump to their maximum value."""
        devs = set(devices)
        hit = []
        for fence in sorted(self.fences.values(), key=lambda f: f.handle):
            if fence.destroyed or "NoSignalMaxValueOnTdr" in fence.flags or fence.signalers.isdisjoint(devs):
                continue
            hit.append(fence)
            self._set(fence, U64_MAX, "tdr")
        self.stats["tdr_maxed"] += len(hit)
        return hit

    def written(self) -> set[MonitoredFence]:
        """The fences whose memory was stored to since the OS last read or wrote it (the model's
        bookkeeping; read it, do not change it)."""
        return self._written if self._watching else set(self.fences.values())

    def scan(self, fences: Iterable[MonitoredFence] | None = None) -> int:
        """Read fences the GPU may have written (those with waiters, or ``fences``); release.

        Returns how many fences moved forward. Every fence named is read; only those whose memory
        was stored to since the OS last read it can move, so the others are passed over (the
        outcome is the same, at a cost that does not grow with the number of idle fences).
        """
        self.stats["scans"] += 1
        if not self._watching:
            if fences is None:
                targets = sorted(self._waited, key=_HANDLE)
            else:
                targets = list(fences)
            return sum(1 for fence in targets if not fence.destroyed and self._refresh(fence))
        written = self._written
        if not written:
            return 0
        if fences is None:
            waited = self._waited
            targets = sorted([f for f in written if f in waited], key=_HANDLE)
        else:
            targets = [f for f in fences if f in written]
        moved = 0
        for fence in targets:
            if not fence.destroyed and self._refresh(fence):
                moved += 1
        return moved
