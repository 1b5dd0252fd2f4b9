"""The context-management processor's decisions, and what its policy may ask of it.

A decision (``_decide``) is taken at an instant, once however many reasons there are (``_kick``:
a doorbell, a WAIT, a slot, a suspension, the engine, a policy's timer or its ``kick``): when the
ring on the engine has left it (drained, stalled, or stopped by a preemption) the running context
moves to its next queue with work (round robin, scheduling rule 3) or leaves the engine; a free
engine gets the context the policy picks (``pick``, scheduling rule 2) among the runnable ones
(scheduling rule 1); and the running context is preempted when the policy's ``deadline`` has come
(at once when it is suspended). The rules are gpu/scheduler.py's module doc; the policy
interface is :mod:`wddmsim.gpu.policy`. A policy may ask for a preemption (:meth:`preempt`), a
decision at this instant (:meth:`kick`) and a timer (:meth:`set_timer`, :meth:`cancel_timer`).

Cost: a decision does not walk every context. Contexts are re-examined when something their
runnability depends on changes (a doorbell, a WAIT, a slot, a suspension, the engine), the policy
is told only of changes (BandPolicy groups the runnable ones by rank), and the state sweep logs
only touched contexts (in creation order, as a walk over all of them would). With a slot limit,
the remap still looks at every queue at each decision.

:class:`SchedulerDecisions` is the decisions' share of
:class:`~wddmsim.gpu.scheduler.GpuScheduler` (one of its base classes): it loads rings through the
scheduler's ``_load``, gives out slots through ``_remap`` (:mod:`.sched_runlist`) and completes
suspends through ``_complete_suspend``.

Spec: gpu/scheduler.py's module doc ("Scheduling rules"); docs/gpu.md ("Hardware scheduling").
"""

from __future__ import annotations

from ..sim import DEVICE
from .sched_state import CTX_IDLE, CTX_READY, CTX_RUNNING, CTX_SUSPENDED, _ORDER, GpuSchedulerError, HwContext, _Queue


class SchedulerDecisions:
    """The decisions' share of :class:`~wddmsim.gpu.scheduler.GpuScheduler` (see the module doc)."""

    def _kick(self) -> None:
        """Take a scheduling decision at this instant (once, however many reasons)."""
        if self._kick_timer is None:
            self._kick_timer = self.sim.soon(self._on_kick, irql=DEVICE)

    def _on_kick(self) -> None:
        self._kick_timer = None
        self._decide()

    def _on_deadline(self) -> None:
        self._deadline_timer = None
        self._decide()

    def _set_deadline(self, t: int | None) -> None:
        timer = self._deadline_timer
        if timer is not None:
            if t is not None and timer.time == t:
                return
            timer.cancel()
            self._deadline_timer = None
        if t is not None:
            self._deadline_timer = self.sim.at(t, self._on_deadline, irql=DEVICE)

    def _runnable(self, c: HwContext) -> bool:
        if c.suspended:
            return False
        for q in c.queues:
            if q is self._loaded or (q.blocked is None and q.snap.pending and q.slot is not None):
                return True
        return False

    def _state_off(self, c: HwContext) -> str:
        """The state of a context that is not on the engine."""
        if c.suspended:
            return CTX_SUSPENDED
        return CTX_READY if self._runnable(c) else CTX_IDLE

    def _set_state(self, c: HwContext, state: str, qid: int = -1) -> None:
        if c.state == state:
            return
        now = self.sim.now
        c.state = state
        if state == CTX_READY:
            self.policy.waiting(c, now)
        self.log.append((now, c.cid, state))
        tr = self.gpu.trace
        if tr is not None:
            tr.emit(now, "HwContextState", {"engine": self.index, "context": c.cid, "state": state, "queue": qid})

    def _sweep(self) -> None:
        """Bring every context off the engine to the state it is in (logging the changes in
        creation order). Only the contexts touched since the last sweep can have moved."""
        stale = self._stale
        if not stale:
            return
        self._stale = set()
        todo = sorted(stale, key=_ORDER) if len(stale) > 1 else stale
        running = self._running
        for c in todo:
            if c is not running:
                self._set_state(c, self._state_off(c))

    # -- the index of runnable contexts ------------------------------------------------------------------
    def _touch(self, c: HwContext) -> None:
        """Something ``c``'s runnability or state depends on changed (a queue's work, a WAIT, a
        slot, suspension, the engine, its rank)."""
        self._dirty.add(c)
        self._stale.add(c)

    def _fresh(self) -> None:
        """Tell the policy which of the touched contexts became runnable or stopped being so (in
        creation order)."""
        dirty = self._dirty
        if not dirty:
            return
        todo = sorted(dirty, key=_ORDER) if len(dirty) > 1 else list(dirty)
        dirty.clear()
        policy = self.policy
        now = self.sim.now
        for c in todo:
            r = self._runnable(c)
            if r != c.runnable:
                c.runnable = r
                if r:
                    self._nrunnable += 1
                    policy.runnable(c, now)
                else:
                    self._nrunnable -= 1
                    policy.unrunnable(c, now)

    def _next_queue(self, c: HwContext, skip: int) -> _Queue | None:
        """The first queue of ``c`` with runnable work, from its last one (``skip`` 0) or the one
        after it (``skip`` 1, round robin)."""
        qs = c.queues
        n = len(qs)
        for k in range(skip, skip + n):
            q = qs[(c.rr + k) % n]
            if q.blocked is None and q.snap.pending and q.slot is not None:
                return q
        return None

    def _pick(self, now: int) -> HwContext | None:
        """The policy's choice among the runnable contexts for the free engine."""
        self._fresh()
        if not self._nrunnable:
            return None
        c = self.policy.pick(now)
        if c is not None and (not c.runnable or self._contexts.get(c.cid) is not c):
            raise GpuSchedulerError(f"{self.engine.name}: the scheduling policy picked {c!r}, which is not runnable")
        return c

    def _deadline(self, cur: HwContext, now: int) -> int | None:
        """When the running context must be preempted (None: not while things stay as they are):
        at once when it is suspended, else when the policy says."""
        if cur.suspended:
            return now
        self._fresh()
        return self.policy.deadline(cur, now)

    def _decide(self) -> None:
        if self._halted:
            self._sweep()
            return
        now = self.sim.now
        if self.slots is not None:
            self._remap()
        cur = self._running
        if cur is not None and self._loaded is None:
            # Its ring left the engine: drained, stalled, or stopped by a preemption.
            preempted = self._preempting
            self._preempting = False
            q = None
            if not preempted and not cur.suspended:
                d = self._deadline(cur, now)
                if d is None or d > now:
                    q = self._next_queue(cur, 1)
            if q is not None:
                self.queue_switches += 1
                self._load(cur, q, queue_switch=True)
            else:
                self._switch_out(cur, preempted)
        if self._running is None:
            pick = self._pick(now)
            if pick is not None:
                self._switch_in(pick)
        self._sweep()
        cur = self._running
        deadline = None
        if cur is not None and self._loaded is not None and not self._preempting:
            deadline = self._deadline(cur, now)
            if deadline is not None and deadline <= now:
                deadline = None
                self._set_deadline(None)
                self._preempting = True
                self.engine.request_preempt()
        self._set_deadline(deadline)
        self._fresh()
        self.policy.decided(self._running, now)

    # -- what a policy may ask ------------------------------------------------------------------------------
    def preempt(self) -> bool:
        """Ask the engine to preempt the context on it (at the engine's granularity); the next
        decision, when it has stopped, picks again. False when no ring is on the engine or a
        preemption is under way."""
        if self._halted or self._running is None or self._loaded is None or self._preempting:
            return False
        self._set_deadline(None)
        self._preempting = True
        self.engine.request_preempt()
        return True

    def kick(self) -> None:
        """Decide again at this instant (a policy whose answers changed between decisions)."""
        self._kick()

    def set_timer(self, at: int, token=None) -> object:
        """Call the policy's ``timer(token, now)`` at ``at`` (now, if it has passed), then decide;
        returns a handle for :meth:`cancel_timer`."""
        handle = object()
        self._timers[handle] = self.sim.at(max(at, self.sim.now), self._on_timer, (handle, token), irql=DEVICE)
        return handle

    def cancel_timer(self, handle) -> None:
        """Cancel a timer :meth:`set_timer` returned (nothing happens if it already fired)."""
        timer = self._timers.pop(handle, None)
        if timer is not None:
            timer.cancel()

    def _on_timer(self, arg) -> None:
        handle, token = arg
        if self._timers.pop(handle, None) is None:
            return
        self.policy.timer(token, self.sim.now)
        self._kick()

    def _switch_in(self, c: HwContext) -> None:
        now = self.sim.now
        q = self._next_queue(c, 0)
        self._running = c
        self._seq += 1
        c.last_run = self._seq
        self._touch(c)
        c.run_start = now
        c.runs += 1
        c.turn_mark = c.busy_ns
        self.switches += 1
        self.policy.switched_in(c, now)
        self._set_state(c, CTX_RUNNING, q.qid)
        self._load(c, q)

    def _switch_out(self, c: HwContext, preempted: bool) -> None:
        self._running = None
        self._touch(c)
        self.policy.switched_out(c, c.busy_ns - c.turn_mark, preempted, self.sim.now)
        if preempted and any(q.snap.pending for q in c.queues):
            c.preemptions += 1
        fences, c.suspend_fences = c.suspend_fences, []
        for f in fences:
            self._complete_suspend(c, f)
        self._set_state(c, self._state_off(c))
