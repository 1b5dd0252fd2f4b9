"""Waits on monitored fences: CPU waits, queue (GPU) waits, and the waiters each fence holds.

A waiter, on the CPU or on a queue, is released when its fence's value reaches its target: at once
if it already has, else by whatever moves the value forward (a signal, a scan of what the GPU
wrote, a TDR's maximum value) or completes it otherwise (a destroy, a timeout). Each fence keeps
its waiters in a heap by target, so a release takes them in target order, ties in the order they
registered, and costs nothing for the waiters still short of their targets. What is modelled
(Microsoft's "Context monitoring" page and D3DDDI_SYNCHRONIZATIONOBJECTINFO2):

- WaitForSynchronizationObjectFromCpu (:meth:`FenceWaits.wait_cpu`): on 1 to
  D3DDDI_MAX_OBJECT_WAITED_ON = 32 fences, all of them or any one (wait-any), blocking, with a
  timeout, or polling (timeout 0); NoWait fences refuse it (STATUS_ACCESS_DENIED).
- WaitForSynchronizationObjectFromGpu (:meth:`FenceWaits.wait_queue`): a callback once the value is
  reached. Holding the queue's later work back behind it is the scheduler's part (rule 103,
  GpuWaitHoldsLaterWork); here a queue wait only reports when it is satisfied.
- A wait that would pend on a 32-bit fence must stay within UINT_MAX/2 of the fence's value (rule
  99, NarrowFenceHalfRange); a wait whose target is already reached is satisfied however far back it
  is (decision 5 of :mod:`.fences`).

Decisions where the documentation is silent (numbered as in :mod:`.fences`'s list):

7. A wait that times out first re-reads its fences (a value may be in memory without a scan yet,
   so it is checked again before the wait gives up) and times out only if still unsatisfied. The
   timeout timer runs at DISPATCH_LEVEL (a kernel timer expires in a DPC).
8. A wait-all is satisfied at an instant where every target is reached at once; if a rewind undoes
   one target meanwhile, the wait goes on waiting for it.

The rule numbers are the rule catalogue's: ``wddmsim rules N`` prints rule N, docs/rules.md lists
them all.
"""

from __future__ import annotations

from heapq import heapify, heappop, heappush
from typing import Any, Callable

from ..ddi.ntstatus import status_name
from ..sim import DISPATCH
from .fence_object import (
    ACCESS_DENIED,
    CANCELLED,
    DESTROYED_STATUS,
    HALF_RANGE,
    INVALID_PARAMETER,
    MAX_OBJECTS_WAITED_ON,
    SUCCESS,
    TIMEOUT,
    MonitoredFence,
    _Entry,
)

__all__ = ["FenceWaits", "QueueWait"]


class QueueWait:
    """Token of a queue-level (GPU) wait: ``done`` once released or cancelled, ``status`` then."""

    __slots__ = ("table", "fence", "value", "callback", "done", "status", "start", "_entry")

    def __init__(self, table: "FenceWaits", fence: MonitoredFence, value: int, callback: Callable[[int], Any]):
        self.table = table
        self.fence = fence
        self.value = value
        self.callback = callback
        self.done = False
        self.status: int | None = None
        self.start = table.sim.now
        self._entry: _Entry | None = None

    def cancel(self) -> None:
        """Withdraw the wait; the callback is not called. Harmless once done."""
        if self.done:
            return
        self.done = True
        self.status = CANCELLED
        table = self.table
        table._drop(self._entry)
        table.stats["cancelled"] += 1
        if table.trace is not None:
            table._trace_done(self.fence, self.value, "queue", CANCELLED, self.start)

    def _fire(self, entry: _Entry, status: int) -> None:
        if self.done:
            return
        self.done = True
        self.status = status
        table = self.table
        if table.trace is not None:
            table._trace_done(self.fence, self.value, "queue", status, self.start)
        self.callback(status)

    def __repr__(self) -> str:
        return f"<QueueWait fence=0x{self.fence.handle:x} value={self.value} done={self.done}>"


class _CpuWait:
    """A CPU wait on up to 32 (fence, value) pairs; its Event succeeds with the status."""

    __slots__ = ("table", "event", "pairs", "any", "start", "timer", "done", "traced")

    def __init__(self, table: "FenceWaits", event, pairs: list, wait_any: bool):
        self.table = table
        self.event = event
        self.pairs = pairs  # [fence, target, entry or None]
        self.any = wait_any
        self.start = table.sim.now
        self.timer = None
        self.done = False
        self.traced: list = []  # (fence, target) pairs that logged FenceWait

    def _fire(self, entry: _Entry, status: int) -> None:
        if self.done:
            return
        if status != SUCCESS or self.any:
            self._finish(status)
            return
        waiting = False
        for pair in self.pairs:
            fence, target, e = pair
            if fence.value >= target:
                continue
            if fence.destroyed:
                self._finish(DESTROYED_STATUS)
                return
            waiting = True
            if e is None or not e.live:  # satisfied before, undone by a rewind since
                pair[2] = self.table._add(fence, target, self)
        if not waiting:
            self._finish(SUCCESS)

    def _timeout(self) -> None:
        self.timer = None
        if self.done:
            return
        table = self.table
        seen = set()
        for fence, _, _ in self.pairs:
            if fence not in seen and not fence.destroyed:
                seen.add(fence)
                table._refresh(fence)
        if not self.done:
            table.stats["timeouts"] += 1
            self._finish(TIMEOUT)

    def _finish(self, status: int) -> None:
        self.done = True
        table = self.table
        for pair in self.pairs:
            e = pair[2]
            if e is not None and e.live:
                table._drop(e)
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        if table.trace is not None:
            for fence, target in self.traced:
                table._trace_done(fence, target, "cpu", status, self.start)
        self.event.succeed(status)


class FenceWaits:
    """The waits of :class:`~wddmsim.dxgkrnl.fences.FenceTable` (a base class of it: one object).
    It uses the attributes the table's ``__init__`` sets (``sim``, ``trace``, ``stats``,
    ``_waited``, ``_seq``) and the table's checks and reads (``_fail``, ``_check_live``,
    ``check_value``, ``_refresh``)."""

    # -- waits ----------------------------------------------------------------------------------
    def check_wait(self, fence: MonitoredFence, value: int) -> None:
        """Raise ApiError unless ``fence`` may be waited on for ``value`` (live, no NoWait)."""
        self._check_live(fence)
        if "NoWait" in fence.flags:
            self._fail(ACCESS_DENIED, f"monitored fence 0x{fence.handle:x} has NoWait")
        self.check_value(value)

    def _check_pending_target(self, fence: MonitoredFence, value: int) -> None:
        if fence.bits == 32 and value > fence.value and value - fence.value > HALF_RANGE:
            self._fail(INVALID_PARAMETER, f"wait for {value} on 32-bit fence 0x{fence.handle:x} is more than UINT_MAX/2 "
                                          f"above its value {fence.value} (rule 99)")

    def wait_cpu(self, fences: list[MonitoredFence], values: list[int], *, timeout: int | None = None,
                 wait_any: bool = False):
        """WaitForSynchronizationObjectFromCpu: an Event that succeeds with the wait's status.

        STATUS_SUCCESS at the instant every value (``wait_any``: one) is reached; STATUS_TIMEOUT at
        ``now + timeout`` ns otherwise (``timeout=0`` polls, None waits forever);
        :data:`DESTROYED_STATUS` if a fence is destroyed meanwhile.
        """
        n = len(fences)
        if len(values) != n:
            self._fail(INVALID_PARAMETER, f"{n} fences but {len(values)} values")
        if not 1 <= n <= MAX_OBJECTS_WAITED_ON:
            self._fail(INVALID_PARAMETER, f"{n} objects; a wait takes 1..{MAX_OBJECTS_WAITED_ON} (D3DDDI_MAX_OBJECT_WAITED_ON)")
        if timeout is not None and (not isinstance(timeout, int) or timeout < 0):
            self._fail(INVALID_PARAMETER, f"timeout {timeout!r} is not a non-negative number of ns")
        for fence, value in zip(fences, values):
            self.check_wait(fence, value)
        for fence in fences:
            if not fence.destroyed:
                self._refresh(fence)
        for fence, value in zip(fences, values):
            self._check_live(fence)  # a waiter released just now may have destroyed it
            self._check_pending_target(fence, value)
        self.stats["cpu_waits"] += 1
        event = self.sim.event()
        reached = [fence.value >= value for fence, value in zip(fences, values)]
        if (any(reached) if wait_any else all(reached)):
            self.stats["satisfied_at_once"] += 1
            event.succeed(SUCCESS)
            return event
        if timeout == 0:
            self.stats["timeouts"] += 1
            event.succeed(TIMEOUT)
            return event
        wait = _CpuWait(self, event, [], wait_any)
        trace = self.trace
        for fence, value, ok in zip(fences, values, reached):
            if ok:
                wait.pairs.append([fence, value, None])
                continue
            wait.pairs.append([fence, value, self._add(fence, value, wait)])
            if trace is not None:
                wait.traced.append((fence, value))
                trace.emit(self.sim.now, "FenceWait", {"fence": fence.handle, "value": value, "waiter": "cpu"})
        if timeout is not None:
            wait.timer = self.sim.at(self.sim.now + timeout, wait._timeout, irql=DISPATCH)
        return event

    def wait_queue(self, fence: MonitoredFence, value: int, callback: Callable[[int], Any]) -> QueueWait:
        """WaitForSynchronizationObjectFromGpu: ``callback(status)`` once ``fence`` reaches ``value``.

        The callback runs synchronously inside whatever releases the wait (a signal, a scan, a TDR,
        a destroy), or inside this call if the value is already reached.
        """
        self.check_wait(fence, value)
        self._refresh(fence)
        self._check_live(fence)
        self._check_pending_target(fence, value)
        self.stats["queue_waits"] += 1
        token = QueueWait(self, fence, value, callback)
        if fence.value >= value:
            self.stats["satisfied_at_once"] += 1
            token.done = True
            token.status = SUCCESS
            callback(SUCCESS)
            return token
        token._entry = self._add(fence, value, token)
        if self.trace is not None:
            self.trace.emit(self.sim.now, "FenceWait", {"fence": fence.handle, "value": value, "waiter": "queue"})
        return token

    def pending_waits(self, fence: MonitoredFence) -> int:
        """Waiter registrations on ``fence`` not yet released or withdrawn."""
        return fence._pending

    # -- waiter bookkeeping ---------------------------------------------------------------------
    def _add(self, fence: MonitoredFence, target: int, owner) -> _Entry:
        self._seq += 1
        entry = _Entry(fence, target, owner)
        heappush(fence._heap, (target, self._seq, entry))
        fence._pending += 1
        if fence._pending == 1 and not fence.native:
            self._waited[fence] = None
        return entry

    def _drop(self, entry: _Entry | None) -> None:
        """Withdraw a live entry (lazy deletion; the heap is compacted when mostly dead)."""
        if entry is None or not entry.live:
            return
        entry.live = False
        fence = entry.fence
        fence._pending -= 1
        fence._dead += 1
        if fence._pending == 0:
            self._waited.pop(fence, None)
            fence._heap = []
            fence._dead = 0
        elif fence._dead > 32 and fence._dead > fence._pending:
            heap = [item for item in fence._heap if item[2].live]
            heapify(heap)
            fence._heap = heap
            fence._dead = 0

    def _release(self, fence: MonitoredFence) -> None:
        """Release satisfied waiters in target order, ties in registration order."""
        stats = self.stats
        while not fence.destroyed:
            heap = fence._heap  # re-read: a callback may compact or replace it
            if not heap or heap[0][0] > fence.value:
                return
            entry = heappop(heap)[2]
            if not entry.live:
                fence._dead -= 1
                continue
            entry.live = False
            fence._pending -= 1
            if fence._pending == 0:
                self._waited.pop(fence, None)
            stats["released"] += 1
            entry.owner._fire(entry, SUCCESS)

    def _trace_done(self, fence: MonitoredFence, value: int, waiter: str, status: int, start: int) -> None:
        now = self.sim.now
        self.trace.emit(now, "FenceWaitDone", {"fence": fence.handle, "value": value, "waiter": waiter,
                                               "status": status_name(status), "waited_ns": now - start})
