"""The OS's side of hardware scheduling (WDDM 2.x), :class:`OsHwScheduling`: hardware contexts,
hardware queues with progress fences, and ``DxgkDdiSubmitCommandToHwQueue``. The driver's side is
:mod:`wddmsim.kmd.wddm2`, the GPU's :mod:`wddmsim.gpu.scheduler`.

The GPU (its context-management processor, programmed by the driver) picks what runs; the OS
only feeds queues and retires what the progress fences say is done. One submission's life:

1. ENQUEUED_SW: the application submits a command buffer (already in its GPU virtual address space)
   with progress value V, strictly above every earlier V of the queue (rule 92,
   ProgressFenceIncreases). The OS holds it behind the queue's pending GPU waits (``wait`` entries,
   rule 103, GpuWaitHoldsLaterWork) and behind page-table updates of the process.
2. APPENDED: ``DxgkDdiSubmitCommandToHwQueue`` with ``HwQueueProgressFenceId`` = V, ``Flags`` 0 for
   a user-mode buffer and ``Flags.Present`` for one ``DxgkDdiPresentToHwQueue`` built (rule 94,
   HwQueueFlagsMatchOrigin). The private data lives in a guarded kernel page ("special pool") that
   is closed when the call returns: a driver that reads it later is stopped under rule 95
   (HwQueuePrivateDataNotRetained). At most ``MaxInFlightHwQueueBuffers`` buffers of a node are
   with the driver at once (rule 105, MaxInFlightHwQueueBuffers; 0 = no limit).
3. SIGNALED: the progress fence reaches V (written by the buffer's last instruction, or after the
   buffer retired when the node has ``RingBufferFenceRelease``); the driver reports
   ``DXGK_INTERRUPT_MONITORED_FENCE_SIGNALED``; in its DPC the OS reads the progress fences,
   completes each submission with id <= value (``QueuePacketStop``), releases fence waiters and
   feeds the queues again.

Also here: scheduling properties (``DxgkDdiSetupPriorityBands`` once at start,
``DxgkDdiSetContextSchedulingProperties`` before a context's first submission, rule 125
SchedulingPropertiesBeforeSubmit, and again at every D3DKMTSetContextSchedulingPriority or
D3DKMTSetProcessSchedulingPriorityClass, :meth:`OsHwScheduling.reprioritize`), blt presents (``DxgkDdiPresentToHwQueue``, then
``DxgkDdiSignalMonitoredFence`` on a node whose buffers write their own progress fence; a driver with
the hardware flip queue also gets flips, which wait for the queue's progress fence in
:mod:`.hwflipqueue`, told of each retire), and suspend
and resume (``DxgkDdiSuspendContext`` / ``SUSPEND_CONTEXT_COMPLETED`` / ``DxgkDdiResumeContext``,
which replace the null-context switch; rules 56 SuspendFenceIssued and 104 SuspendFenceIncreases).
Timeouts, engine resets and page faults are :mod:`.hwtdr`'s.

Decisions where the documentation is silent (docs/scheduling.md has them all):

- ``DxgkDdiSubmitCommandToHwQueue`` returns STATUS_SUCCESS or, for a malformed buffer or private
  data, STATUS_INVALID_PARAMETER, which puts the device in error as for
  ``DxgkDdiSubmitCommandVirtual``; any other status is bug check 0x119/0x2.
- A device in error drops its queued buffers (``Cancelled``) and abandons those with the driver
  (``Aborted``); its monitored fences, progress fences included, jump to their maximum (rule 101,
  MaxFenceOnTdr), which releases every waiter.

Spec: Microsoft's reference pages for DxgkDdiSetupPriorityBands, DxgkDdiSetContextSchedulingProperties,
DxgkDdiSuspendContext, DxgkDdiCreateHwQueue and DxgkDdiSubmitCommandToHwQueue; rules 56, 92-95, 100,
103-105 and 122-126 of the rule catalogue (``wddmsim rules N`` prints rule N, docs/rules.md lists
them all).
"""

from __future__ import annotations

from collections import deque
from itertools import count
from heapq import heappop, heappush
from operator import attrgetter

from ..ddi import layout
from ..ddi import rules as R
from ..ddi.bugcheck import BugCheck, BugCheckCode, VidSchError
from ..ddi.ntstatus import NTSTATUS
from ..ddi.registry import RECORDS
from ..sim import DISPATCH, PASSIVE
from .errors import ApiError
from .crash import BugCheckStop, CrashRecord
from .fences import U64_MAX
from .hwtdr import HwTdr
from .objects import Packet
from .present import FLAG_PRESENT

SUCCESS = int(NTSTATUS.STATUS_SUCCESS)
PENDING = int(NTSTATUS.STATUS_PENDING)
INVALID_PARAMETER = int(NTSTATUS.STATUS_INVALID_PARAMETER)
DEVICE_REMOVED = int(NTSTATUS.STATUS_DEVICE_REMOVED)
BANDS = ("idle", "normal", "focus", "realtime")
BAND_INDEX = {name: i for i, name in enumerate(BANDS)}
#: D3DKMT_SCHEDULINGPRIORITYCLASS of a process -> its contexts' default band.
CLASS_BAND = {"idle": "idle", "below_normal": "normal", "normal": "normal", "above_normal": "normal",
              "high": "focus", "realtime": "realtime"}
PAGE = 4096
_KEY = attrgetter("key")
#: DXGK_KERNEL_SUBMISSION_TYPE_PRESENTBLT
KERNEL_SUBMISSION_PRESENTBLT = 2
#: The kernel DMA buffer of one present blt, and its private data.
PRESENT_DMA_SIZE = PAGE
PRESENT_PRIVATE_SIZE = 64


class HwQueue:
    """A hardware queue of one hardware context, with its progress fence."""

    __slots__ = ("handle", "context", "hDriver", "flags", "progress", "last_id", "handed", "pending", "in_flight",
                 "wait_token", "destroyed", "submitted", "completed", "name", "index", "held_until", "key", "in_line")

    def __init__(self, context, index: int, flags: frozenset):
        self.handle = 0
        self.context = context
        self.index = index
        self.name = f"{context.full_name}#{index}"
        self.hDriver = 0
        self.flags = flags  # D3DDDI_CREATEHWQUEUEFLAGS names
        self.progress = None  # MonitoredFence
        self.last_id = 0  # highest HwQueueProgressFenceId accepted from the application
        self.handed = 0  # highest HwQueueProgressFenceId handed to the driver
        self.pending: deque = deque()  # Entry, in submission order
        self.in_flight: deque = deque()  # buffers handed to the driver, oldest first
        self.wait_token = None  # the fence wait holding the head
        self.held_until = 0  # after a released wait: when the OS's submission of the next buffer ends
        self.destroyed = False
        self.submitted = 0
        self.completed = 0
        self.key = (0, 0)  # (node, creation order): the order the OS goes through queues in
        self.in_line = -1  # the band whose line of its node's ``waiting`` it is in, -1: none (no search)


class Entry:
    """One item of a queue: a buffer (``kind`` "buffer"), a GPU wait or a queued signal."""

    __slots__ = ("kind", "progress_id", "va", "size", "private", "seq", "queued", "submitted", "fence",
                 "value", "present", "ran_at")

    def __init__(self, kind: str):
        self.ran_at = None  # when an engine finished its buffer (dxgkrnl/groundtruth.py); None: untracked
        self.kind = kind
        self.progress_id = 0
        self.va = 0
        self.size = 0
        self.private = b""
        self.seq = 0
        self.queued = 0
        self.submitted = -1
        self.fence = None
        self.value = 0
        self.present = None  # a present blt: its Packet record for the display statistics


class WaitLine:
    """The queues a node's MaxInFlightHwQueueBuffers cap holds back, one line per priority band: a
    freed slot goes to the first queue of the highest band waiting (arrival order within a band),
    so a REALTIME queue's buffer is not held behind lower bands' buffers the GPU would preempt
    anyway. A queue's ``in_line`` is the band index it waits under, -1 when not in line."""

    __slots__ = ("lines", "count")

    def __init__(self):
        self.lines = tuple(deque() for _ in BANDS)
        self.count = 0

    def __bool__(self) -> bool:
        return self.count > 0

    def __len__(self) -> int:
        return self.count

    def append(self, q) -> None:
        band = BAND_INDEX[q.context.band]
        self.lines[band].append(q)
        q.in_line = band
        self.count += 1

    def remove(self, q) -> None:
        self.lines[q.in_line].remove(q)
        q.in_line = -1
        self.count -= 1

    def popleft(self):
        """The first queue of the highest band waiting."""
        for line in reversed(self.lines):
            if line:
                q = line.popleft()
                q.in_line = -1
                self.count -= 1
                return q
        raise IndexError("no queue waits")

    def rebanded(self, q) -> None:
        """``q``'s context changed band: it waits at the back of its new band's line."""
        if q.in_line >= 0 and q.in_line != BAND_INDEX[q.context.band]:
            self.remove(q)
            self.append(q)


class HwNode:
    """The OS's view of one node under hardware scheduling."""

    __slots__ = ("ordinal", "max_in_flight", "in_flight", "fence_release", "waiting", "queues", "timer",
                 "resetting", "resets", "progress_t", "granted")

    def __init__(self, ordinal: int, max_in_flight: int, fence_release: bool):
        self.ordinal = ordinal
        self.max_in_flight = max_in_flight  # 0: unlimited
        self.in_flight = 0
        self.fence_release = fence_release
        self.waiting = WaitLine()  # queues held by the in-flight cap, in line by band
        self.granted = 0  # freed slots kept for waiting queues until the OS's submission into them
        self.queues: list[HwQueue] = []
        self.timer = None  # the watchdog (hwtdr)
        self.resetting = False  # between DxgkDdiResetHwEngine and DxgkDdiResumeHwEngine
        self.resets = 0
        self.progress_t = 0  # when a buffer of the node last completed (or the node became busy)


class OsHwScheduling:
    """The OS's hardware-scheduling state of one adapter."""

    def __init__(self, adapter, fences, gpuva, *, bands: dict | None = None):
        self.adapter = adapter
        self.sim = adapter.sim
        self.fences = fences
        self.gpuva = gpuva
        self.trace = adapter.trace
        self.ledger = adapter.ledger
        self.nodes: list[HwNode] = []
        self.queues: list[HwQueue] = []
        self.bands = bands or {}
        self.submissions = 0
        self.completions = 0
        self.last_completion_ns = 0  # when the last buffer completed (the run's makespan)
        self.presents = 0
        self.deferred_submissions = 0  # buffers the OS submitted itself after holding them behind a wait
        #: queues released from an OS-held wait, not yet submitted again: when the signal came (the
        #: interrupt that reported the GPU's write, or the CPU's signal), for the wake-up latency
        self._woken: dict = {}
        self.suspends = 0
        self.resumes = 0
        self._suspend_waits: dict[int, list] = {}  # driver context handle -> [(fence, event, context)]
        self._by_driver_handle: dict[int, object] = {}  # driver context handle -> hardware context
        self._last_suspend: dict[int, int] = {}  # context handle -> last contextSuspendFence issued
        self._live_private: dict[int, tuple] = {}  # special-pool page -> the submission it was handed with
        self._submit_cls = layout.ctype(RECORDS["DXGKARG_SUBMITCOMMANDTOHWQUEUE"], adapter.arch, adapter.version)
        self._args = self._submit_cls()
        self._submit_address = adapter.pool.alloc(PAGE)  # where the arguments live (bug check P3)
        #: ``release(context, va)``: the buffer at ``va`` of the context's command area is free again.
        self.release = None
        self.tdr = HwTdr(self)
        # The model's bookkeeping for retire (not the OS's): queues by progress fence, queues whose
        # oldest buffer in flight is new since the last retire, and a creation counter.
        self._by_progress: dict = {}
        self._new_head: set[HwQueue] = set()
        self._created = 0
        self._tick = count()

    # -- start ----------------------------------------------------------------------------------------
    def start(self, metadata: list) -> None:
        """The nodes' hardware-queue caps (DXGK_NODEMETADATA.Flags), then DxgkDdiSetupPriorityBands."""
        for ordinal, flags in enumerate(metadata):
            self.nodes.append(HwNode(ordinal, int(flags.MaxInFlightHwQueueBuffers), bool(flags.RingBufferFenceRelease)))
        adapter = self.adapter
        args = layout.ctype(RECORDS["DXGKARG_SETUPPRIORITYBANDS"], adapter.arch, adapter.version)()
        b = self.bands
        for i, name in enumerate(BANDS):
            args.gracePeriodForBand[i] = b.get("grace", {}).get(name, 0) // 100
            args.processQuantumForBand[i] = b.get("quantum", {}).get(name, 2_000_000) // 100
            args.processGracePeriodForBand[i] = b.get("process_grace", {}).get(name, 0) // 100
        args.targetNormalBandPercentage = b.get("normal_share", 10)
        adapter.ddi.call("DxgkDdiSetupPriorityBands", adapter.hAdapter, args, facts=R.Facts(version=adapter.version),
                    address=self._submit_address, fail="DxgkDdiSetupPriorityBands failed")

    # -- contexts and queues --------------------------------------------------------------------------
    def create_context(self, ctx, *, band: str | None = None, realtime_level: int = 0, quantum: int | None = None,
                       grace_same: int = 0, grace_lower: int = 0) -> None:
        """DxgkDdiCreateHwContext, the root page table, then DxgkDdiSetContextSchedulingProperties
        (before anything can be submitted, rule 125)."""
        adapter = self.adapter
        args = layout.ctype(RECORDS["DXGKARG_CREATEHWCONTEXT"], adapter.arch, adapter.version)()
        args.hHwContext = ctx.handle
        args.NodeOrdinal = ctx.node
        args.EngineAffinity = 1
        status = adapter.ddi.call("DxgkDdiCreateHwContext", ctx.device.hDriver, args)
        if status != SUCCESS:
            raise ApiError(status, "DxgkDdiCreateHwContext failed")
        ctx.hDriver = ctx.hDdi = args.hHwContext
        self._by_driver_handle[ctx.hDriver] = ctx
        ctx.hw = True
        ctx.hwqueues = []
        self.gpuva.set_root(ctx)
        ctx.band = band or CLASS_BAND[ctx.device.process.priority_class]
        ctx.sched = {"realtime_level": realtime_level, "quantum": quantum, "grace_same": grace_same,
                     "grace_lower": grace_lower}
        self.set_properties(ctx)

    def context(self, hHwContext: int):
        """The hardware context the driver calls ``hHwContext``, or None."""
        return self._by_driver_handle.get(hHwContext)

    def set_properties(self, ctx) -> None:
        """DxgkDdiSetContextSchedulingProperties (on creation and on every priority change)."""
        adapter = self.adapter
        args = layout.ctype(RECORDS["DXGKARG_SETCONTEXTSCHEDULINGPROPERTIES"], adapter.arch, adapter.version)()
        s = ctx.sched
        args.hContext = ctx.hDriver
        args.priorityBand = BANDS.index(ctx.band)
        args.realtimeBandPriorityLevel = s["realtime_level"] if ctx.band == "realtime" else 0
        args.inProcessPriority = ctx.priority
        q = s["quantum"]
        args.quantum = (q if q is not None else self.bands.get("quantum", {}).get(ctx.band, 2_000_000)) // 100
        args.gracePeriodSamePriority = s["grace_same"] // 100
        args.gracePeriodLowerPriority = s["grace_lower"] // 100
        # The model gives SE_INC_BASE_PRIORITY_NAME to processes of class high or realtime; a scenario
        # cannot give another process a FOCUS or REALTIME band (the schema refuses it, as Windows
        # refuses the request), so rule 126 holds by construction.
        privileged = ctx.system or ctx.device.process.priority_class in ("high", "realtime")
        adapter.ddi.call("DxgkDdiSetContextSchedulingProperties", adapter.hAdapter, args,
                    facts=R.Facts(version=adapter.version, has_inc_base_priority=privileged), address=self._submit_address,
                    fail="DxgkDdiSetContextSchedulingProperties failed")

    def reprioritize(self, contexts, change, undo, *, reband: bool) -> None:
        """D3DKMTSetContextSchedulingPriority or D3DKMTSetProcessSchedulingPriorityClass under
        hardware scheduling: ``change()`` records the new priority (a context's, or its process's
        class), then each of ``contexts`` gets DxgkDdiSetContextSchedulingProperties with its new
        properties, effective at the GPU's next scheduling decision in the band (Microsoft's
        DxgkDdiSetContextSchedulingProperties page: the call "can be made in the middle of context
        execution"). The context's priority is ``inProcessPriority``; with ``reband`` (a class
        change) the context moves to its new class's band, as when it was created (a band a
        scenario gave the context is replaced). A queue of the context waiting for an in-flight
        slot moves to the back of its new band's line. If the driver fails a call, ``undo()`` and
        the contexts already told get their old properties back, and the thunk fails with the
        driver's status."""
        change()
        done = []
        try:
            for ctx in contexts:
                old = ctx.band
                if reband:
                    ctx.band = CLASS_BAND[ctx.device.process.priority_class]
                try:
                    self.set_properties(ctx)
                except ApiError:
                    ctx.band = old
                    raise
                done.append((ctx, old))
        except ApiError:
            undo()
            for ctx, old in done:
                ctx.band = old
                self.set_properties(ctx)
            raise
        for ctx in contexts:
            line = self.nodes[ctx.node].waiting
            for q in ctx.hwqueues:
                line.rebanded(q)

    def create_queue(self, ctx, flags=()) -> HwQueue:
        """DxgkDdiCreateHwQueue with a fresh progress fence (initial value 0)."""
        adapter = self.adapter
        q = HwQueue(ctx, len(ctx.hwqueues), frozenset(flags))
        q.handle = adapter.handles.add(q)
        q.progress = self.fences.create(ctx.device.process, ctx.device, 0, ())
        args = layout.ctype(RECORDS["DXGKARG_CREATEHWQUEUE"], adapter.arch, adapter.version)()
        args.hHwQueue = q.handle
        for name in flags:
            setattr(args.Flags, name, 1)
        args.hHwQueueProgressFence = q.progress.handle
        args.HwQueueProgressFenceCPUVirtualAddress = q.progress.cpu_va
        args.HwQueueProgressFenceGPUVirtualAddress = q.progress.gpu_va.get(ctx.device.process, 0)
        status = adapter.ddi.call("DxgkDdiCreateHwQueue", ctx.hDriver, args, facts=R.Facts(version=adapter.version),
                             address=self._submit_address)
        if status != SUCCESS:
            adapter.handles.remove(q.handle)
            raise ApiError(status, "DxgkDdiCreateHwQueue failed")
        q.hDriver = args.hHwQueue
        self._created += 1
        q.key = (ctx.node, self._created)
        self._by_progress[q.progress] = q
        ctx.hwqueues.append(q)
        self.nodes[ctx.node].queues.append(q)
        self.queues.append(q)
        if self.trace is not None:
            self.trace.emit(self.sim.now, "HwQueueCreate", {
                "hwqueue": q.handle, "context": ctx.handle, "node": ctx.node, "progress_fence": q.progress.handle,
                "band": ctx.band, "flags": sorted(flags), "hHwQueue": q.hDriver, "hHwContext": ctx.hDriver})
        return q

    # -- submission -----------------------------------------------------------------------------------
    def check_progress_id(self, q: HwQueue, v: int) -> None:
        """The runtime's check of a new HwQueueProgressFenceId: above the queue's last (rule 92)."""
        if q.destroyed:
            raise ApiError(int(NTSTATUS.STATUS_INVALID_HANDLE), "the hardware queue was destroyed")
        if not isinstance(v, int) or not q.last_id < v <= U64_MAX:
            raise ApiError(INVALID_PARAMETER, f"HwQueueProgressFenceId {v} is not above the queue's previous "
                                              f"{q.last_id} (and at most 2**64-1)")

    def submit(self, q: HwQueue, va: int, size: int, private: bytes = b"", progress_id: int | None = None,
               present: Packet | None = None) -> Entry:
        """SubmitCommandToHwQueueCb: queue the buffer at ``va`` with progress value V (default: one
        above the queue's last)."""
        ctx = q.context
        if ctx.device.error:
            raise ApiError(DEVICE_REMOVED, "the device is in error")
        v = q.last_id + 1 if progress_id is None else progress_id
        self.check_progress_id(q, v)
        q.last_id = v
        e = Entry("buffer")
        e.progress_id = v
        e.va = va
        e.size = size
        e.private = private
        e.present = present
        ctx.seq += 1
        ctx.submitted += 1
        q.submitted += 1
        e.seq = ctx.seq
        e.queued = self.sim.now
        q.pending.append(e)
        self.ledger.queue_start(self.sim.now, ctx.handle, ctx.device.process.pid, ctx.node, e.seq,
                                "present" if present is not None else "render", len(q.pending), q.handle, v)
        if self.trace is not None:
            self.trace.emit(self.sim.now, "QueuePacketStart", {
                "context": ctx.handle, "process": ctx.device.process.pid, "node": ctx.node, "seq": e.seq,
                "kind": "present" if present is not None else "render", "queued": len(q.pending),
                "hwqueue": q.handle, "progress_id": v})
        self._feed(q)
        return e

    def wait(self, q: HwQueue, fence, value: int) -> None:
        """WaitForSynchronizationObjectFromGpu on a queue: later buffers wait for the value."""
        if q.context.device.error:
            raise ApiError(DEVICE_REMOVED, "the device is in error")
        self.fences.check_wait(fence, value)
        e = Entry("wait")
        e.fence = fence
        e.value = value
        e.queued = self.sim.now
        q.pending.append(e)
        self._feed(q)

    def signal(self, q: HwQueue, fence, value: int) -> None:
        """SignalSynchronizationObjectFromGpu performed by the OS when the queue reaches it."""
        if q.context.device.error:
            raise ApiError(DEVICE_REMOVED, "the device is in error")
        e = Entry("signal")
        e.fence = fence
        e.value = value
        e.queued = self.sim.now
        self.fences.register_signaler(fence, q.context.device)
        q.pending.append(e)
        self._feed(q)

    def _feed(self, q: HwQueue) -> None:
        """Hand the queue's head items to the driver as far as waits and the in-flight cap allow.

        Under a MaxInFlightHwQueueBuffers cap the queues that found the node full wait in line
        (``node.waiting``); a freed slot is kept for the first of them in the highest band waiting
        and its next buffer goes into it (:meth:`_feed_turn`), one buffer per turn while others of
        its band wait, so no queue keeps the node to itself."""
        self._feed_queue(q, False)

    def _feed_turn(self, q: HwQueue) -> None:
        """``q``'s turn for the slot kept for it; a turn it cannot use passes down the line."""
        self.nodes[q.context.node].granted -= 1
        if not self._feed_queue(q, True):
            self._grant_slots()

    def _feed_queue(self, q: HwQueue, turn: bool) -> bool:
        """:meth:`_feed`; with ``turn`` the first buffer takes the kept slot. True if it did."""
        used = False
        if q.wait_token is not None or q.context.suspended or q.context.device.error or q.held_until > self.sim.now:
            return used
        node = self.nodes[q.context.node]
        if node.resetting:
            return used
        while q.pending:
            e = q.pending[0]
            if e.kind == "wait":
                if e.fence.destroyed or self.fences.read(e.fence) >= e.value:
                    q.pending.popleft()
                    continue
                q.wait_token = self.fences.wait_queue(e.fence, e.value, lambda status, q=q: self._released(q))
                if q.wait_token.done:
                    q.wait_token = None
                    continue
                return used
            if e.kind == "signal":
                if q.in_flight:
                    return used  # performed when the buffers before it are done
                q.pending.popleft()
                if not e.fence.destroyed:
                    self.fences.signal_queued(e.fence, e.value, q.context.device)
                continue
            if not self.gpuva.when_ready(q.context.device.process, lambda q=q: self._feed(q)):
                return used
            if node.max_in_flight:
                if turn:
                    turn = False  # into the slot kept for it
                    used = True
                elif node.in_flight + node.granted >= node.max_in_flight or node.waiting:
                    if q.in_line < 0:
                        node.waiting.append(q)
                    return used
            q.pending.popleft()
            self._submit(node, q, e)
        return used

    def _released(self, q: HwQueue) -> None:
        """The fence reached the value a queue's OS-held wait needs. The buffers behind it reach the
        driver from the OS's side now: after the DPC's work when the release happened in the DPC,
        and after the DxgkDdiSubmitCommandToHwQueue call's cost (CpuCost.submit)."""
        q.wait_token = None
        if q.pending and q.pending[0].kind == "wait":
            q.pending.popleft()
        self._woken[q] = self.adapter.dxgk.isr_at if self.sim.irql == DISPATCH else self.sim.now
        self._feed_deferred(q, False)

    def _feed_deferred(self, q: HwQueue, turn: bool) -> None:
        """The OS hands ``q``'s next buffer to the driver itself (after a wait, or into a slot the
        in-flight cap freed): after the DPC's work when this runs in the DPC, and after the
        DxgkDdiSubmitCommandToHwQueue call's cost (CpuCost.submit)."""
        costs = self.adapter.costs
        delay = (costs.dpc if self.sim.irql == DISPATCH else 0) + costs.submit
        if q.pending and q.pending[0].kind == "buffer":
            self.deferred_submissions += 1
        feed = self._feed_turn if turn else self._feed
        if delay:
            q.held_until = self.sim.now + delay
            self.sim.after(delay, feed, q, PASSIVE)
        else:
            feed(q)

    def _submit(self, node: HwNode, q: HwQueue, e: Entry) -> None:
        """DxgkDdiSubmitCommandToHwQueue for one buffer."""
        adapter = self.adapter
        mem = adapter.memory
        args = self._args
        args.hHwQueue = q.hDriver
        args.HwQueueProgressFenceId = e.progress_id
        args.DmaBufferVirtualAddress = e.va
        args.DmaBufferSize = e.size
        page = 0
        if e.private:
            page = adapter.special_pool.take(self._freed_read)
            mem.open_pages(page, PAGE)
            mem.write(page, e.private)
        args.pDmaBufferPrivateData = page
        args.DmaBufferPrivateDataSize = len(e.private)
        args.Flags.Value = 0
        args.Flags.Present = 1 if e.present is not None else 0
        args.HwQueueProgressFenceGpuVa = q.progress.gpu_va.get(q.context.device.process, 0)
        args.HwQueueProgressFenceCpuVa = q.progress.cpu_va
        facts = None
        if adapter.verifier.mode != "off":
            facts = R.Facts(
                version=adapter.version, last_progress_fence_id=q.handed, queue_busy=False,
                buffer_origin="present" if e.present is not None else "umd", max_in_flight=node.max_in_flight,
                in_flight=node.in_flight, scheduling_properties_set=True)
        truth = adapter.vidsch.truth
        if truth is not None:
            truth.queued(q, e)  # before the call: the driver's doorbell may start the engine inside it
        status = adapter.ddi.call("DxgkDdiSubmitCommandToHwQueue", adapter.hAdapter, args, facts=facts,
                             address=self._submit_address,
                             bugcheck=(BugCheckCode.VIDEO_SCHEDULER_INTERNAL_ERROR,
                                       VidSchError.DRIVER_FAILED_SUBMIT_COMMAND, self._submit_address,
                                       e.progress_id & 0xFFFFFFFF))
        if page:
            # The private data is freed when the call returns (WDDM 2.4+): poison and guard it.
            mem.write(page, b"\xcc" * len(e.private))
            self._live_private[page] = (bytes(args), e.progress_id)
            adapter.special_pool.give_back(page)
        if status != SUCCESS:
            self._failed_submit(q, e, status)
            return
        e.submitted = self.sim.now
        if self._woken:
            signalled = self._woken.pop(q, None)
            if signalled is not None:
                self.fences.wake_latency.add(self.sim.now - signalled)
        if not node.in_flight:
            node.progress_t = self.sim.now  # the node becomes busy
        node.in_flight += 1
        q.in_flight.append(e)
        if len(q.in_flight) == 1:
            self._new_head.add(q)
        q.handed = e.progress_id
        self.submissions += 1
        self.tdr.submitted(node)

    def signal_monitored_fence(self, q: HwQueue, kind: int, dma: int, size: int, length: int, priv: int,
                               value: int) -> int:
        """DxgkDdiSignalMonitoredFence: the driver appends the write of ``value`` to the queue's
        progress fence after the ``length`` bytes of the kernel-built buffer at ``dma`` (a node
        without RingBufferFenceRelease); returns the buffer's new length."""
        adapter = self.adapter
        proc = q.context.device.process
        args = layout.ctype(RECORDS["DXGKARG_SIGNALMONITOREDFENCE"], adapter.arch, adapter.version)()
        args.KernelSubmissionType = kind
        args.pDmaBuffer = dma + length
        args.DmaBufferGpuVirtualAddress = (dma if q.context.system else self.gpuva.address_of(proc, dma)) + length
        args.DmaSize = size - length
        args.pDmaBufferPrivateData = priv
        args.DmaBufferPrivateDataSize = 0
        args.MultipassOffset = 0
        args.MonitoredFenceGpuVa = q.progress.gpu_va[proc]
        args.MonitoredFenceValue = value
        args.MonitoredFenceCpuVa = q.progress.cpu_va
        args.hHwQueue = q.hDriver
        status = adapter.ddi.call("DxgkDdiSignalMonitoredFence", q.context.hDriver, args, facts=R.Facts(version=adapter.version),
                             address=self._submit_address)
        if status != SUCCESS:
            raise ApiError(status, "DxgkDdiSignalMonitoredFence failed")
        return args.pDmaBuffer - dma

    def _failed_submit(self, q: HwQueue, e: Entry, status: int) -> None:
        """STATUS_INVALID_PARAMETER puts the device in error (decision: as for
        DxgkDdiSubmitCommandVirtual); the gateway stops on any other failure (0x119/0x2)."""
        self._drop(q, e, "Cancelled")
        self.device_error(q.context.device, "DxgkDdiSubmitCommandToHwQueue returned STATUS_INVALID_PARAMETER")

    def _freed_read(self, addr: int, size: int) -> None:
        """The driver read private data after DxgkDdiSubmitCommandToHwQueue returned (rule 95)."""
        found = self._live_private.get(addr - addr % PAGE)
        if found is None:
            return
        raw, progress_id = found
        obj = self._submit_cls.from_buffer_copy(raw)
        adapter = self.adapter
        adapter.verifier.check("DXGKARG_SUBMITCOMMANDTOHWQUEUE", obj, R.Facts(
            version=adapter.version, private_data_reads_after_return=1), self._submit_address)

    # -- presents -------------------------------------------------------------------------------------
    def present(self, ctx, source, destination, width: int, height: int, vidpn_source: int = 0,
                call_start: int | None = None, queue: HwQueue | None = None) -> Entry:
        """A blt present on a hardware queue: DxgkDdiPresentToHwQueue builds it in a kernel DMA
        buffer (mapped into the process's space) with its private data; on a node whose buffers
        write their own progress fence DxgkDdiSignalMonitoredFence appends the write; then the
        buffer goes to the queue with Flags.Present (rule 94)."""
        adapter = self.adapter
        if ctx.device.error:
            raise ApiError(DEVICE_REMOVED, "the device is in error")
        q = queue or ctx.hwqueues[0]
        v = q.last_id + 1
        self.check_progress_id(q, v)
        proc = ctx.device.process
        block = adapter.pool.alloc(PRESENT_DMA_SIZE + PAGE)
        dma, priv, alist = block, block + PRESENT_DMA_SIZE, block + PRESENT_DMA_SIZE + 2 * PRESENT_PRIVATE_SIZE
        entries = []
        for alloc in (None, source, destination):  # DXGK_PRESENT_SOURCE_INDEX 1, DESTINATION 2
            e = adapter._alist_cls()
            if alloc is not None:
                e.hDeviceSpecificAllocation = alloc.handle
                e.VirtualAddress = alloc.va
            entries.append(bytes(e))
        adapter.memory.write(alist, b"".join(entries))
        args = layout.ctype(RECORDS["DXGKARG_PRESENT"], adapter.arch, adapter.version)()
        args.pDmaBuffer = dma
        args.DmaSize = PRESENT_DMA_SIZE
        args.pDmaBufferPrivateData = priv
        args.DmaBufferPrivateDataSize = PRESENT_PRIVATE_SIZE
        args.pAllocationList = alist
        args.SrcRect.right = args.DstRect.right = width
        args.SrcRect.bottom = args.DstRect.bottom = height
        args.Flags.Blt = 1
        args.DmaBufferGpuVirtualAddress = self.gpuva.address_of(proc, dma)
        args.NumSrcAllocations = 1
        args.NumDstAllocations = 1
        status = adapter.ddi.call("DxgkDdiPresentToHwQueue", q.hDriver, args)
        if status != SUCCESS:
            adapter.pool.free(block, PRESENT_DMA_SIZE + PAGE)
            raise ApiError(status, "DxgkDdiPresentToHwQueue failed")
        length = args.pDmaBuffer - dma
        private = adapter.memory.read(priv, PRESENT_PRIVATE_SIZE)
        if not self.nodes[ctx.node].fence_release:
            length = self.signal_monitored_fence(q, KERNEL_SUBMISSION_PRESENTBLT, dma, PRESENT_DMA_SIZE, length,
                                                 priv + PRESENT_PRIVATE_SIZE, v)
        p = Packet(ctx, ctx.seq + 1, "present")
        p.flags = FLAG_PRESENT
        p.vidpn_source = vidpn_source
        p.present_t = self.sim.now if call_start is None else call_start
        p.buffers = (block, PRESENT_DMA_SIZE + PAGE)
        try:
            e = self.submit(q, args.DmaBufferGpuVirtualAddress, length, private, progress_id=v, present=p)
        except ApiError:
            # Feeding the queue failed after the buffer was queued (its QueuePacketStart is out):
            # VidMm's page-table write for it went to a system device in error. The present did
            # enter the scheduler, and its buffer leaves it later (cancelled, so dropped), so it is
            # counted and logged as presented before the error reaches the application; the
            # packet ledger found it counted dropped and never presented.
            e = next((x for x in (*q.pending, *q.in_flight) if x.present is p), None)
            if e is not None:
                self._presented(ctx, e, p, vidpn_source, width, height)
            raise
        self._presented(ctx, e, p, vidpn_source, width, height)
        return e

    def _presented(self, ctx, e: Entry, p: Packet, vidpn_source: int, width: int, height: int) -> None:
        """A blt present's buffer ``e`` entered its queue: counted, logged (``Present``), and told to
        the display's statistics."""
        p.fence = e.progress_id
        self.presents += 1
        self.ledger.present(self.sim.now, ctx.handle, ctx.device.process.pid, e.seq, "blt", 0, 0, vidpn_source, width,
                            height, p.present_t)
        if self.trace is not None:
            self.trace.emit(self.sim.now, "Present", {"context": ctx.handle, "process": ctx.device.process.pid,
                                                     "seq": e.seq, "mode": "blt", "flip": 0, "interval": 0,
                                                     "source": vidpn_source, "width": width, "height": height,
                                                     "cpu_start": p.present_t})
        self.adapter.vidsch.presents.presented(p)

    # -- completion ------------------------------------------------------------------------------------
    def retire(self) -> None:
        """In the DPC: complete every submission whose id the progress fence has reached, release
        fence waiters, feed the queues."""
        now = self.sim.now
        fed = []
        fences = self.fences
        by_progress = self._by_progress
        # The OS reads the progress fence of every queue with buffers in flight, node by node;
        # only those stored to since it last read them can have moved.
        reads = [q for f in fences.written() if (q := by_progress.get(f)) is not None and q.in_flight]
        reads.sort(key=_KEY)
        fences.scan([q.progress for q in reads])
        # Then it completes, queue by queue in the same order, what the progress values reached: a
        # queue whose value has not moved since it was last looked at, and whose oldest buffer is
        # not new, has nothing to complete. Values that move meanwhile count for the queues not yet
        # passed, as they would in a walk over every queue.
        truth = self.adapter.vidsch.truth
        heap: list = []
        pos = (-1, -1)
        moved, new = fences.moved, self._new_head
        if moved or new:
            self._due(heap, pos)
        while heap:
            key, _, q = heappop(heap)
            if key == pos:
                continue
            pos = key
            if q.in_flight and by_progress.get(q.progress) is q:
                node = self.nodes[key[0]]
                value = q.progress.value
                done = False
                while q.in_flight and q.in_flight[0].progress_id <= value:
                    if truth is not None:
                        truth.progress_reached(q, q.in_flight[0], value)
                    e = q.in_flight.popleft()
                    node.in_flight -= 1
                    self._complete(q, e, now, "Completed")
                    done = True
                if done:
                    node.progress_t = now
                    fed.append(q)
            if moved or new:
                self._due(heap, pos)
        fences.scan()
        self._grant_slots()
        hwflips = self.adapter.hwflips
        for q in fed:
            self._feed(q)
            if hwflips is not None:
                hwflips.progressed(q)  # flips waiting for this queue's rendering (dxgkrnl/hwflipqueue.py)

    def _due(self, heap: list, pos: tuple[int, int]) -> None:
        """Queue for retire's walk (past ``pos``) the queues whose progress value moved or whose
        oldest buffer in flight is new; those at or before ``pos`` wait for the next retire."""
        moved = self.fences.moved
        if moved:
            by_progress = self._by_progress
            for f in list(moved):
                q = by_progress.get(f)
                if q is None:
                    moved.discard(f)  # not a progress fence
                elif q.key > pos:
                    moved.discard(f)
                    heappush(heap, (q.key, next(self._tick), q))
        new = self._new_head
        if new:
            for q in list(new):
                if q.key > pos:
                    new.discard(q)
                    heappush(heap, (q.key, next(self._tick), q))

    def _grant_slots(self) -> None:
        """Free in-flight slots go to the queues waiting for them: the highest band first, in line
        within a band (each slot is kept for its queue until the OS's submission into it is done)."""
        for node in self.nodes:
            free = node.max_in_flight - node.in_flight - node.granted
            while node.waiting and free > 0:
                q = node.waiting.popleft()
                node.granted += 1
                free -= 1
                self._feed_deferred(q, True)

    def _complete(self, q: HwQueue, e: Entry, now: int, status: str) -> None:
        ctx = q.context
        if self.release is not None:
            self.release(ctx, e.va)
        p = e.present
        if status == "Completed":
            ctx.completed += 1
            ctx.gpu_packets += 1
            ctx.latencies.add(now - e.queued)
            q.completed += 1
            self.completions += 1
            self.last_completion_ns = now
            if p is not None:
                self.adapter.vidsch.presents.completed(p, now)
        else:
            ctx.aborted += 1
            if p is not None:
                self.adapter.vidsch.presents.forget(p)
        if p is not None:
            self.adapter.free_packet(p)
        self.ledger.queue_stop(now, ctx.handle, ctx.node, e.progress_id, "present" if p else "render", e.seq, status,
                               q.handle)
        if self.trace is not None:
            self.trace.emit(now, "QueuePacketStop", {
                "context": ctx.handle, "node": ctx.node, "fence": e.progress_id, "kind": "present" if p else "render",
                "seq": e.seq, "status": status, "hwqueue": q.handle})
        if ctx.waiters:
            self.adapter.vidsch._wake_waiters(ctx)
        if ctx.destroyed and ctx.hDriver and not ctx.in_flight:
            self.adapter.finish_destroy(ctx)

    def _drop(self, q: HwQueue, e: Entry, status: str) -> None:
        """``e`` never reaches the driver, or leaves it without completing: ``Cancelled`` counts as
        cancelled, ``Aborted`` as aborted."""
        if status == "Cancelled":
            ctx = q.context
            ctx.cancelled += 1
            if self.release is not None:
                self.release(ctx, e.va)
            if e.present is not None:
                self.adapter.vidsch.presents.forget(e.present)
                self.adapter.free_packet(e.present)
            self.ledger.queue_stop(self.sim.now, ctx.handle, ctx.node, e.progress_id,
                                   "present" if e.present else "render", e.seq, status, q.handle)
            if self.trace is not None:
                self.trace.emit(self.sim.now, "QueuePacketStop", {
                    "context": ctx.handle, "node": ctx.node, "fence": e.progress_id,
                    "kind": "present" if e.present else "render", "seq": e.seq, "status": status,
                    "hwqueue": q.handle})
            return
        self._complete(q, e, self.sim.now, status)

    # -- suspend and resume ------------------------------------------------------------------------------
    def suspend(self, ctx):
        """DxgkDdiSuspendContext: an event that triggers when the GPU holds nothing of ``ctx``
        (with the contextSuspendFence acknowledged). Rule 104 is judged on the call."""
        adapter = self.adapter
        ev = self.sim.event()
        last = self._last_suspend.get(ctx.handle, 0)
        fence = last + 1
        args = layout.ctype(RECORDS["DXGKARG_SUSPENDCONTEXT"], adapter.arch, adapter.version)()
        args.hContext = ctx.hDriver
        args.contextSuspendFence = fence
        already = ctx.suspended
        self._last_suspend[ctx.handle] = fence
        ctx.suspended = True
        self.suspends += 1
        status = adapter.ddi.call("DxgkDdiSuspendContext", adapter.hAdapter, args, address=self._submit_address, judge="after",
                             facts=R.Facts(version=adapter.version, last_suspend_fence=last, already_suspended=already))
        if status == SUCCESS:
            ev.succeed(fence)
        elif status == PENDING:
            self._suspend_waits.setdefault(ctx.hDriver, []).append((fence, ev, ctx))
            self.tdr.suspend_pending(ctx, fence)
        else:
            raise ApiError(status, "DxgkDdiSuspendContext failed")
        return ev

    def suspend_completed(self, data) -> None:
        """DXGK_INTERRUPT_SUSPEND_CONTEXT_COMPLETED (device IRQL): rule 56, then the waiters of
        every suspend up to the acknowledged fence."""
        s = data.SuspendContextCompleted
        ctx = self._by_driver_handle.get(s.hContext)
        issued = self._last_suspend.get(ctx.handle, 0) if ctx is not None else 0
        if not 0 < s.ContextSuspendFence <= issued:
            adapter = self.adapter
            bc = BugCheck(BugCheckCode.VIDEO_SCHEDULER_INTERNAL_ERROR, VidSchError.INCORRECT_SUSPEND_FENCE,
                          s.ContextSuspendFence, s.hContext, issued)
            raise BugCheckStop(CrashRecord(
                time=self.sim.now, bugcheck=bc, rule=56, rule_name="SuspendFenceIssued",
                message=f"SUSPEND_CONTEXT_COMPLETED for context 0x{s.hContext:x} carries ContextSuspendFence "
                        f"{s.ContextSuspendFence}, which the OS did not issue (last issued: {issued})",
                struct="DXGKARGCB_NOTIFY_INTERRUPT_DATA", arch=adapter.arch, ddi_version=adapter.version.name,
                address=adapter.interrupt_address, data=bytes(data)))
        keep = []
        for fence, ev, c in self._suspend_waits.get(s.hContext, ()):  # none left: a stale acknowledgment
            if fence <= s.ContextSuspendFence:
                self.tdr.suspend_acknowledged(c, fence)
                self.sim.soon(ev.succeed, fence, DISPATCH)
            else:
                keep.append((fence, ev, c))
        self._suspend_waits[s.hContext] = keep

    def resume(self, ctx) -> None:
        """DxgkDdiResumeContext: the GPU may schedule ``ctx`` again."""
        adapter = self.adapter
        args = layout.ctype(RECORDS["DXGKARG_RESUMECONTEXT"], adapter.arch, adapter.version)()
        args.hContext = ctx.hDriver
        adapter.ddi.call("DxgkDdiResumeContext", adapter.hAdapter, args, fail="DxgkDdiResumeContext failed")
        ctx.suspended = False
        self.resumes += 1
        for q in ctx.hwqueues:
            self._feed(q)

    # -- destroying a context ---------------------------------------------------------------------------
    def cancel_queues(self, ctx) -> None:
        """D3DKMTDestroyContext: ``ctx``'s buffers still queued by the OS never reach the driver."""
        node = self.nodes[ctx.node]
        for q in ctx.hwqueues:
            q.destroyed = True
            self._cancel_pending(q, node)
        if self.adapter.hwflips is not None:
            self.adapter.hwflips.context_gone(ctx)  # its flips still waiting for their rendering

    def _cancel_pending(self, q: HwQueue, node: HwNode) -> None:
        """Everything ``q`` still holds on the OS's side goes: buffers (``Cancelled``), its GPU
        wait, its place in line for an in-flight slot."""
        while q.pending:
            e = q.pending.popleft()
            if e.kind == "buffer":
                self._drop(q, e, "Cancelled")
        if q.wait_token is not None:
            q.wait_token.cancel()
            q.wait_token = None
        if q.in_line >= 0:
            node.waiting.remove(q)

    def destroy(self, ctx) -> None:
        """The last buffer of destroyed ``ctx`` left the GPU: DxgkDdiDestroyHwQueue for each of its
        queues, then DxgkDdiDestroyHwContext."""
        adapter = self.adapter
        node = self.nodes[ctx.node]
        for q in ctx.hwqueues:
            adapter.ddi.call("DxgkDdiDestroyHwQueue", q.hDriver, log_args={"hHwQueue": q.hDriver})
            node.queues.remove(q)
            self.queues.remove(q)
            self._by_progress.pop(q.progress, None)
            self._new_head.discard(q)
            adapter.handles.remove(q.handle)
        adapter.ddi.call("DxgkDdiDestroyHwContext", ctx.hDriver, log_args={"hHwContext": ctx.hDriver})
        self._by_driver_handle.pop(ctx.hDriver, None)

    # -- devices in error ----------------------------------------------------------------------------------
    def device_error(self, device, reason: str) -> None:
        """Put ``device`` in error: its queues' work is dropped, its fences jump to the maximum."""
        if device.error:
            return
        device.error = True
        device.error_reason = reason
        now = self.sim.now
        if self.trace is not None:
            self.trace.emit(now, "DeviceError", {"device": device.handle, "process": device.process.pid,
                                                 "reason": reason})
        for ctx in device.contexts:
            node = self.nodes[ctx.node]
            for q in ctx.hwqueues:
                while q.in_flight:
                    node.in_flight -= 1
                    self._drop(q, q.in_flight.popleft(), "Aborted")
                self._cancel_pending(q, node)
            # CPU waiters wake; their next call sees STATUS_DEVICE_REMOVED.
            for _target, event in ctx.waiters:
                event.succeed(ctx.completed)
            ctx.waiters = []
            if self.adapter.hwflips is not None:
                self.adapter.hwflips.context_gone(ctx)
        self.fences.signal_max_on_tdr({device})
        self._grant_slots()  # room under the in-flight caps for the other queues

    def summary(self) -> dict:
        return {"submissions": self.submissions, "completions": self.completions, "presents": self.presents,
                "suspends": self.suspends, "resumes": self.resumes, "engine_resets": self.tdr.engine_resets,
                "adapter_resets": self.tdr.adapter_resets, "page_faults": self.tdr.page_faults,
                "queues": len(self.queues)}
