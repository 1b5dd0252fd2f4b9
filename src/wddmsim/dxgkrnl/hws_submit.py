"""Submission to hardware queues, :class:`HwSubmission` (one of the mixins
:class:`~.hwscheduling.OsHwScheduling` is made of): the first two states of a submission's life, the
OS's part of the queue state machine (the third, SIGNALED, is :mod:`.hws_retire`'s).

1. ENQUEUED_SW: the application submits a command buffer (already in its GPU virtual address space)
   with progress value V, strictly above every earlier V of the queue (rule 92,
   ProgressFenceIncreases). The OS holds it behind the queue's pending GPU waits (``wait`` entries,
   rule 103, GpuWaitHoldsLaterWork) and behind page-table updates of the process.
2. APPENDED: ``DxgkDdiSubmitCommandToHwQueue`` with ``HwQueueProgressFenceId`` = V, ``Flags`` 0 for
   a user-mode buffer and ``Flags.Present`` for one ``DxgkDdiPresentToHwQueue`` built (rule 94,
   HwQueueFlagsMatchOrigin). The private data lives in a guarded kernel page ("special pool") that
   is closed when the call returns: a driver that reads it later is stopped under rule 95
   (HwQueuePrivateDataNotRetained). At most ``MaxInFlightHwQueueBuffers`` buffers of a node are with
   the driver at once (rule 105, MaxInFlightHwQueueBuffers; 0 = no limit); the queues the cap holds
   back wait in line by band (:class:`~.hws_state.WaitLine`).

A decision where the documentation is silent (docs/scheduling.md has them all):
``DxgkDdiSubmitCommandToHwQueue`` returns STATUS_SUCCESS or, for a malformed buffer or private data,
STATUS_INVALID_PARAMETER, which puts the device in error as for ``DxgkDdiSubmitCommandVirtual``; any
other status is bug check 0x119/0x2.

Spec: Microsoft's reference page for DxgkDdiSubmitCommandToHwQueue. Rule numbers are the rule
catalogue's: ``wddmsim rules N`` prints rule N, docs/rules.md lists them all.
"""

from __future__ import annotations

from ..ddi import rules as R
from ..ddi.bugcheck import BugCheckCode, VidSchError
from ..ddi.ntstatus import NTSTATUS
from ..sim import DISPATCH, PASSIVE
from .errors import ApiError
from .fences import U64_MAX
from .hws_state import PAGE, Entry, HwNode, HwQueue
from .objects import Packet

SUCCESS = int(NTSTATUS.STATUS_SUCCESS)
INVALID_PARAMETER = int(NTSTATUS.STATUS_INVALID_PARAMETER)
DEVICE_REMOVED = int(NTSTATUS.STATUS_DEVICE_REMOVED)


class HwSubmission:
    """Buffers, GPU waits and queued signals into hardware queues, and on to the driver."""

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
