"""The hardware queue slots of the context-management processor: the queues an engine holds mapped.

Hardware queue slots
--------------------
``GpuScheduler(gpu, engine, slots)`` with ``slots`` = n (``EngineSpec.hw_queue_slots``): the engine
holds at most n queues *mapped* (its runlist); only a mapped queue's work counts in scheduling
rule 1. A queue with work it could run (pending, not blocked, its context not suspended) and no
slot waits for one;
waiting queues get slots in the order they began to wait: a free slot first, else the slot of the
mapped queue *idle* longest (not on the engine and nothing it could run; least recently mapped or
loaded first). A queue that is not idle is never unmapped, so a queue is mapped and unmapped only
while idle; a doorbell on an unmapped queue moves its saved write pointer and its packets run after
it is mapped. Mapping takes no time. ``slot_log`` holds ``(t, qid, slot, "map"|"unmap")``; with
``gpu.trace`` set each change is emitted as ``HwQueueMap`` / ``HwQueueUnmap``. ``slots`` None: no
limit, every queue is mapped from its creation (and nothing is logged).

:class:`RunList` is the slots' share of :class:`~wddmsim.gpu.scheduler.GpuScheduler` (one of its
base classes): it works on the scheduler's queues (``_queues``, the slot table ``_slot_of``, the
loaded queue ``_loaded``), tells the decisions of a queue that changed (``_touch``,
:mod:`.sched_decide`) and logs each change (``slot_log``, ``gpu.trace``).

Spec: docs/gpu.md ("Hardware queue slots").
"""

from __future__ import annotations

import operator

from .sched_state import _Queue


class RunList:
    """The slots' share of :class:`~wddmsim.gpu.scheduler.GpuScheduler` (see the module doc):
    which queues hold a slot, given out by :meth:`_remap` at each decision."""

    def _wants_slot(self, q: _Queue) -> bool:
        """``q`` has work it could run now (a queue of a suspended context has none)."""
        return q.blocked is None and q.snap.pending and not q.ctx.suspended

    def _remap(self) -> None:
        """Give slots to the queues that have work and none: a free slot first, else the slot of
        the mapped queue idle longest (not on the engine, nothing it can run); the queues in the
        order they began to wait. A queue that is not idle keeps its slot."""
        wanting = []
        for q in self._queues.values():
            if q.slot is None:
                if self._wants_slot(q):
                    if not q.want:
                        self._seq += 1
                        q.want = self._seq
                    wanting.append(q)
                else:
                    q.want = 0
        if not wanting:
            return
        wanting.sort(key=operator.attrgetter("want"))
        free = [i for i, x in enumerate(self._slot_of) if x is None]
        idle = None
        for q in wanting:
            if free:
                slot = free.pop(0)
            else:
                if idle is None:
                    idle = sorted((x for x in self._slot_of if x is not self._loaded and not self._wants_slot(x)),
                                  key=lambda x: (x.used, x.order))
                if not idle:
                    return
                victim = idle.pop(0)
                slot = victim.slot
                self._unmap(victim)
            self._map(q, slot)

    def _map(self, q: _Queue, slot: int) -> None:
        q.slot = slot
        q.want = 0
        self._seq += 1
        q.used = self._seq
        self._slot_of[slot] = q
        self._touch(q.ctx)
        self.maps += 1
        self._slot_event(q, slot, "map")

    def _unmap(self, q: _Queue) -> None:
        slot = q.slot
        q.slot = None
        self._slot_of[slot] = None
        self._touch(q.ctx)
        self.unmaps += 1
        self._slot_event(q, slot, "unmap")

    def _slot_event(self, q: _Queue, slot: int, what: str) -> None:
        now = self.sim.now
        self.slot_log.append((now, q.qid, slot, what))
        tr = self.gpu.trace
        if tr is not None:
            tr.emit(now, "HwQueueMap" if what == "map" else "HwQueueUnmap", {
                "engine": self.index, "queue": q.qid, "context": q.ctx.cid, "slot": slot,
                "rptr": q.snap.rptr, "wptr": q.snap.wptr})

    def mapped(self, qid: int) -> int | None:
        """The slot queue ``qid`` is mapped to (None: unmapped; -1: the engine has no slot limit)."""
        return self._queue(qid).slot
