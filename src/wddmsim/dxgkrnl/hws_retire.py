"""Completion under hardware scheduling, :class:`HwRetire` (one of the mixins
:class:`~.hwscheduling.OsHwScheduling` is made of): the last state of a submission's life and the
work that leaves the queues without completing.

3. SIGNALED: the progress fence reaches V (written by the buffer's last instruction, or after the
   buffer retired when the node has ``RingBufferFenceRelease``); the driver reports
   ``DXGK_INTERRUPT_MONITORED_FENCE_SIGNALED``; in its DPC the OS reads the progress fences,
   completes each submission with id <= value (``QueuePacketStop``), releases fence waiters and
   feeds the queues again (the freed in-flight slots go to the queues waiting for them).

A decision where the documentation is silent (docs/scheduling.md has them all): a device in error
drops its queued buffers (``Cancelled``) and abandons those with the driver (``Aborted``); its
monitored fences, progress fences included, jump to their maximum (rule 101, MaxFenceOnTdr), which
releases every waiter. Rule numbers are the rule catalogue's: ``wddmsim rules N`` prints rule N,
docs/rules.md lists them all.
"""

from __future__ import annotations

from heapq import heappop, heappush
from operator import attrgetter

from .hws_state import Entry, HwQueue

_KEY = attrgetter("key")


class HwRetire:
    """Completed, cancelled and aborted buffers, and devices in error."""

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
