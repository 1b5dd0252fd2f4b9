"""The context-management processor: GPU firmware that schedules hardware contexts and their queues
on one engine (WDDM 2.x hardware scheduling, where the OS no longer picks contexts).

The driver programs it; it knows nothing of Windows. One :class:`GpuScheduler` per engine, made by
``GPU.hw_scheduler(index)``; from then on the engine's ring registers are the scheduler's: it loads
the ring of one queue at a time (:meth:`Engine.load_context`) and saves it when the queue leaves
the engine (:meth:`Engine.save_context`). The engine tells it, through ``Engine.listener``, when a
preemption it asked for has stopped, when the loaded ring has drained and when the ring (or a
buffer called from it) stalls on a WAIT, and when it is reset; the CPU's preemption interrupt is
not raised then. Fence interrupts still go to the CPU. Engines must be in ``timed`` mode.

Objects
-------
- A *context* (``create_context(cid, process, address_space)``) belongs to a process and has
  scheduling properties (``set_context``): a band (0 IDLE, 1 NORMAL, 2 FOCUS, 3 REALTIME), a
  realtime level (0..31, REALTIME only), an in-process priority (-7..+7), a quantum (None: its
  band's process quantum), a same-priority grace (``grace_same``) and a lower-priority grace
  (``grace_lower``). Contexts are created resumed, NORMAL, level 0, priority 0.
- A *queue* (``create_queue(cid, qid, ring_base, ring_size)``) is a ring in memory with the
  engine ring's format (packets never wrap, the driver pads the end with a NOP); the driver
  publishes packets with ``doorbell(qid, wptr)``; ``queue_rptr(qid)`` says how far it was fetched.
- Bands (``configure_bands``), per band: the grace a context of that band gives a lower band it
  preempts (IDLE never preempts another band), the process quantum, the grace between processes
  of the band; and the share of the engine kept for NORMAL when FOCUS would starve it.

Scheduling rules (all times are virtual ns; no clock, no randomness; ties by creation order)
----------------------------------------------------------------------------------------------
This module is the mechanism (scheduling rules 1, 5 and 6, the queues, slots, context load and
save, suspend, reset); the decisions are its *policy*'s (:mod:`wddmsim.gpu.policy`): which
runnable context gets the free engine (``pick``) and until when the running one may keep it
(``deadline``). The band rules, scheduling rules 2 to 4, are
:class:`~wddmsim.gpu.policy.BandPolicy`'s, the default; ``GpuScheduler(..., policy=...)``
(``GPU.hw_policy`` for a whole GPU) puts another in its place, a model extension.

1. A context is *runnable* when it is resumed and one of its queues has work (packets past the
   read pointer or a saved stop point), is not blocked on a WAIT and holds a slot (see "Hardware
   queue slots"; always, without a slot limit).
2. Choice when the engine is free: the highest band wins (REALTIME > FOCUS > NORMAL > IDLE); in
   REALTIME the highest realtime level; in the band, a context loses to a context *of its own
   process* with a higher in-process priority; among the rest, the least recently run first
   (never run first, then creation order).
3. The running context keeps the engine until one of these happens:

   - it has no runnable work: its queue drained or stalled on a WAIT (a stall is preemptible at
     once: the queue is saved at the WAIT). If another of its queues has work it switches to the
     next one (round robin), else it leaves the engine;
   - a context of a higher band has been runnable for that band's grace period (counted from when
     it became runnable or from when the running context started, whichever is later);
   - in REALTIME, a context of a higher level, or in any band a context of the same process with a
     higher in-process priority, has been runnable for the running context's ``grace_lower``;
   - its quantum (from when it got the engine) has expired while an equal candidate (same band and
     level; another process, or the same process with the same in-process priority) is runnable,
     and then the running context's ``grace_same`` (same process) or the band's process grace
     (another process) has passed;
   - it is suspended (preempted at once, no grace).

   The scheduler then asks the engine to preempt; the stop comes at the engine's granularity and
   the next context is chosen by scheduling rule 2 when it does. (A suspended context is
   preempted at once under any policy; the rest of scheduling rule 3 is the policy's ``deadline``.)
4. NORMAL share: while a FOCUS context runs and a NORMAL context is runnable, NORMAL earns credit
   ``elapsed * pct / (100 - pct)``. When the credit reaches the NORMAL band's process quantum, the
   FOCUS context is preempted after NORMAL's band grace and a NORMAL context (scheduling rule 2
   inside NORMAL) gets the engine for one NORMAL process quantum, spending credit while it runs;
   FOCUS's claim (after FOCUS's band grace) counts from the end of that quantum. In steady state
   NORMAL gets exactly ``pct`` % of the engine.
5. A queue saved at a WAIT is *blocked*: the scheduler watches the awaited memory (the engine
   reports the WAIT, ``Engine.waiting_on``) and the queue is runnable again as soon as a write, from
   an engine or the CPU, makes the comparison hold. The WAIT is performed again when it is loaded.
6. Inside a context one queue runs at a time.

Hardware queue slots
--------------------
``GpuScheduler(gpu, engine, slots)`` with ``slots`` = n (``EngineSpec.hw_queue_slots``): the engine
holds at most n queues *mapped* (its runlist); only a mapped queue's work counts in scheduling
rule 1. Which queue gets a slot, and when one is taken back: :mod:`.sched_runlist`. ``slots`` None:
no limit, every queue is mapped from its creation.

Suspend, resume, reset
----------------------
``suspend_context(cid, fence)`` returns True if the context is already suspended. Otherwise the
context stops being scheduled; if it is on the engine it is preempted at once. When it holds no
engine state the pair ``(cid, fence)`` is appended to ``completed_suspends`` and interrupt cause
bit ``SUSPEND_CAUSE_SHIFT + engine index`` (128 + index) is raised. ``resume_context`` makes it
schedulable again. ``reset()`` is the engine reset of hardware scheduling: the engine stops now, the
context that was on it loses its state and the work on its queues (read pointers jump to the write
pointers); contexts preempted earlier keep their saved state, which lives in memory (DxgkDdiResetHwEngine:
the driver invalidates the *running* contexts the reset hit); nothing is scheduled (and no suspend
is acknowledged) until ``resume()``. ``reset(everything=True)``, the whole GPU's reset, loses every
queue's work. ``Engine.reset()`` called directly is ``reset()``.
``destroy_context`` and ``destroy_queue`` are refused (GpuSchedulerError) while the queue, or one of
the context's queues, is on the engine: suspend the context first.

Native fences (WDDM 3.2)
------------------------
A NATIVE_FENCE command writes a native fence's CurrentValue; the scheduler then reads the fence's
MonitoredValue (the smallest value a CPU waiter waits for, minus one, kept by the OS through the
driver) and raises interrupt cause bit ``NATIVE_FENCE_CAUSE_SHIFT + engine index`` (160 + index)
only when the new value is above it, appending ``(queue id, CurrentValue address, value)`` to
``native_signals`` for the driver. A queue waiting on the CurrentValue (an ordinary WAIT) is
released by scheduling rule 5 with no CPU involvement (Microsoft's "Native GPU fence objects").

Observability: ``log`` holds ``(t, cid, state)`` for every change of a context's state (``idle``,
``ready``, ``running``, ``suspended``, as DXGK_SCHEDULING_LOG_CONTEXT_STATE; contexts start idle,
which is not logged); when ``gpu.trace`` is set each change is also emitted as ``HwContextState``
(and a running context switching queues emits ``running`` again with the new queue). Counters:
``switches`` (contexts put on the engine), ``queue_switches``, and per context
:meth:`preemptions` and :meth:`busy_ns`.

Decisions: when the scheduler decides, and what a policy may ask of it (:mod:`.sched_decide`,
which also says what a decision costs).

The contexts and queues themselves, their states and the defaults: :mod:`.sched_state`. Every name
of those three modules is importable from here.

Spec: Microsoft's pages for DXGK_SCHEDULING_PRIORITY_BAND and DXGKARG_SETCONTEXTSCHEDULINGPROPERTIES
(bands and properties), DxgkDdiSuspendContext and DXGK_SCHEDULING_LOG_CONTEXT_STATE (suspend and
resume, scheduling log), DxgkDdiResetHwEngine (engine reset) and DxgkDdiSubmitCommandToHwQueue
(hardware-queue submission); reference scenarios 20, 21, 31 and 32 (tests/reference/); docs/gpu.md
("Hardware scheduling", "Hardware queue slots").
"""

from __future__ import annotations

from collections import deque

from . import commands as C
from .engine import IDLE, EngineContext, EngineFault
from .policy import BAND_NAMES, FOCUS_BAND, IDLE_BAND, NORMAL_BAND, REALTIME_BAND, BandPolicy, GpuPolicy
from .sched_decide import SchedulerDecisions
from .sched_runlist import RunList
from .sched_state import (  # noqa: F401 (importable from here)
    CTX_IDLE, CTX_READY, CTX_RUNNING, CTX_SUSPENDED, DEFAULT_GRACE, DEFAULT_NORMAL_SHARE_PCT, DEFAULT_PROCESS_GRACE,
    DEFAULT_QUANTUM, NATIVE_FENCE_CAUSE_SHIFT, SUSPEND_CAUSE_SHIFT, _NO_SLOTS, _ORDER, GpuSchedulerError, HwContext,
    _Queue, _bands, _int,
)

__all__ = [
    "IDLE_BAND", "NORMAL_BAND", "FOCUS_BAND", "REALTIME_BAND", "BAND_NAMES", "SUSPEND_CAUSE_SHIFT",
    "NATIVE_FENCE_CAUSE_SHIFT",
    "CTX_IDLE", "CTX_READY", "CTX_RUNNING", "CTX_SUSPENDED",
    "DEFAULT_GRACE", "DEFAULT_QUANTUM", "DEFAULT_PROCESS_GRACE", "DEFAULT_NORMAL_SHARE_PCT",
    "GpuSchedulerError", "GpuScheduler", "HwContext", "GpuPolicy", "BandPolicy",
]


class GpuScheduler(SchedulerDecisions, RunList):
    """The GPU-side scheduler of one engine (see the module doc for the rules)."""

    def __init__(self, gpu, engine, slots: int | None = None, history: int | None = None,
                 policy: GpuPolicy | None = None):
        if engine.listener is not None:
            raise GpuSchedulerError(f"{engine.name} already has a scheduler")
        if engine.state != IDLE or engine.rptr != engine.wptr:
            raise GpuSchedulerError(f"{engine.name} is busy: hardware scheduling starts on an idle engine")
        self.gpu = gpu
        self.sim = gpu.sim
        self.engine = engine
        self.index = engine.index
        self.grace = list(DEFAULT_GRACE)
        self.quantum = list(DEFAULT_QUANTUM)
        self.process_grace = list(DEFAULT_PROCESS_GRACE)
        self.normal_share_pct = DEFAULT_NORMAL_SHARE_PCT
        #: (t, cid, state) for every change of a context's state (``history``: only the latest so many).
        self.log: list[tuple[int, int, str]] = [] if history is None else deque(maxlen=history)
        #: (cid, fence) of completed suspends, in completion order; the driver drains it.
        self.completed_suspends: deque[tuple[int, int]] = deque()
        self.switches = 0  # contexts put on the engine
        self.queue_switches = 0  # a running context moving to another of its queues
        self._contexts: dict[int, HwContext] = {}
        self._queues: dict[int, _Queue] = {}
        # The bookkeeping that keeps a decision's work independent of the number of contexts: the
        # contexts whose runnability may have changed (``_dirty``, told to the policy before a
        # decision) and whose state the next sweep must look at (``_stale``).
        self._dirty: set[HwContext] = set()
        self._stale: set[HwContext] = set()
        self._nrunnable = 0  # contexts runnable, as the policy was last told
        self._timers: dict[object, object] = {}  # the policy's timers: handle -> simulator timer
        self._running: HwContext | None = None
        self._loaded: _Queue | None = None
        self._preempting = False
        self._halted = False
        self._deferred: list[tuple[HwContext, int]] = []  # suspends completed while halted
        self._hit: list[int] = []  # the contexts the last engine reset hit
        self._reset_everything = False  # the reset in progress is one of the whole GPU
        self._kick_timer = None
        self._deadline_timer = None
        self._busy_mark = 0
        self._seq = 0
        self._suspend_bit = 1 << (SUSPEND_CAUSE_SHIFT + engine.index)
        #: Native fence writes that raised the CPU interrupt: (queue id, CurrentValue address,
        #: value), oldest first; the driver drains it. ``native_fence_writes`` counts every
        #: NATIVE_FENCE, ``native_fence_interrupts`` those that raised the interrupt.
        self.native_signals: deque[tuple[int | None, int, int]] = deque()
        self.native_fence_writes = 0
        self.native_fence_interrupts = 0
        self._native_bit = 1 << (NATIVE_FENCE_CAUSE_SHIFT + engine.index)
        #: Hardware queue slots (None: every queue is mapped, however many there are).
        self.slots = None if slots is None else _int("slots", slots, 1, 1024)
        self._slot_of: list[_Queue | None] = [None] * (self.slots or 0)
        #: (t, qid, slot, "map" or "unmap") for every change of the slots (``history``: the latest).
        self.slot_log: list[tuple[int, int, int, str]] = [] if history is None else deque(maxlen=history)
        self.maps = 0
        self.unmaps = 0
        #: the decisions (gpu/policy.py): the band rules unless the GPU was given another
        self.policy: GpuPolicy = BandPolicy() if policy is None else policy
        self.policy.attach(self)
        engine.listener = self

    # -- configuration ----------------------------------------------------------------------------
    def configure_bands(self, grace, quantum, process_grace, normal_share_pct: int) -> None:
        """Per band (IDLE, NORMAL, FOCUS, REALTIME), in ns: the grace a context of the band gives a
        lower band it preempts (ignored for IDLE), the quantum between processes of the band, the
        grace between processes of the band; and the NORMAL share (0..50 %). Effective at the next
        scheduling decision."""
        g = _bands("grace", grace, 0)
        q = _bands("quantum", quantum, 1)
        pg = _bands("process_grace", process_grace, 0)
        pct = _int("normal_share_pct", normal_share_pct, 0, 50)
        self.policy.configuring(self.sim.now)
        self.grace, self.quantum, self.process_grace, self.normal_share_pct = g, q, pg, pct
        self._kick()

    def create_context(self, cid: int, process, address_space: int = 0) -> None:
        """A new context of ``process`` (any hashable), resumed, NORMAL, level 0, priority 0.
        ``address_space`` is what its queues' rings load into the engine's address-space register."""
        if cid in self._contexts:
            raise ValueError(f"context {cid} exists")
        self._seq += 1
        self._contexts[cid] = HwContext(cid, process, address_space, self._seq)

    def set_context(self, cid: int, band: int, realtime_level: int = 0, in_process_priority: int = 0,
                    quantum: int | None = None, grace_same: int = 0, grace_lower: int = 0) -> None:
        """Scheduling properties of a context; effective at the next scheduling decision."""
        c = self._ctx(cid)
        band = _int("band", band, IDLE_BAND, REALTIME_BAND)
        level = _int("realtime_level", realtime_level, 0, 31)
        prio = _int("in_process_priority", in_process_priority, -7, 7)
        if quantum is not None:
            quantum = _int("quantum", quantum, 1)
        grace_same = _int("grace_same", grace_same, 0)
        grace_lower = _int("grace_lower", grace_lower, 0)
        before = (c.band, c.level, c.priority, c.quantum, c.grace_same, c.grace_lower)
        c.band, c.level, c.priority = band, level, prio
        c.quantum, c.grace_same, c.grace_lower = quantum, grace_same, grace_lower
        self._touch(c)
        self.policy.changed(c, before, self.sim.now)
        self._kick()

    def destroy_context(self, cid: int) -> None:
        """Forget a context and its queues. Refused while one of its queues is on the engine."""
        c = self._ctx(cid)
        if self._running is c:
            if self._loaded is not None:
                raise GpuSchedulerError(f"context {cid} is running on {self.engine.name}")
            self._running = None
            preempted, self._preempting = self._preempting, False
            self.policy.switched_out(c, c.busy_ns - c.turn_mark, preempted, self.sim.now)
        for q in c.queues:
            self._unblock(q)
            if self.slots is not None and q.slot is not None:
                self._unmap(q)
            del self._queues[q.qid]
        c.queues = []
        del self._contexts[cid]
        if c.runnable:
            c.runnable = False
            self._nrunnable -= 1
            self.policy.unrunnable(c, self.sim.now)
        self._dirty.discard(c)
        self._stale.discard(c)
        self._deferred = [(x, f) for x, f in self._deferred if x is not c]
        self._kick()

    def create_queue(self, cid: int, qid: int, ring_base: int, ring_size: int) -> None:
        """A queue of context ``cid``: a ring of ``ring_size`` bytes at ``ring_base``, empty."""
        c = self._ctx(cid)
        if qid in self._queues:
            raise ValueError(f"queue {qid} exists")
        if ring_size < 64 or ring_size & 3 or ring_base & 3:
            raise ValueError("ring base and size must be dword aligned, size >= 64")
        self._seq += 1
        q = _Queue(qid, c, EngineContext(ring_base, ring_size, address_space=c.address_space), self._seq)
        if self.slots is None:
            q.slot = _NO_SLOTS  # mapped for good: this engine has no slot limit
        c.queues.append(q)
        self._queues[qid] = q
        self._touch(c)

    def destroy_queue(self, qid: int) -> None:
        """Forget a queue; refused while it is on the engine."""
        q = self._queue(qid)
        if q is self._loaded:
            raise GpuSchedulerError(f"queue {qid} is on {self.engine.name}")
        self._unblock(q)
        if self.slots is not None and q.slot is not None:
            self._unmap(q)
        c = q.ctx
        i = c.queues.index(q)
        del c.queues[i]
        if i < c.rr or c.rr >= len(c.queues):
            c.rr = max(c.rr - 1, 0) if i < c.rr else 0
        del self._queues[qid]
        self._touch(c)
        self._kick()

    # -- the driver's side of a queue -----------------------------------------------------------------
    def doorbell(self, qid: int, wptr: int) -> None:
        """The driver published packets up to ``wptr`` on the queue's ring."""
        q = self._queue(qid)
        snap = q.snap
        if not 0 <= wptr < snap.ring_size or wptr & 3:
            raise EngineFault(f"queue {qid}: doorbell write pointer {wptr:#x} outside the ring")
        snap.wptr = wptr  # (the engine's register while loaded; kept here for an engine reset)
        if q is self._loaded:
            self.engine.doorbell(wptr)
        self._touch(q.ctx)
        self._kick()

    def queue_rptr(self, qid: int) -> int:
        """How far the queue's ring has been fetched (ring space before it is free)."""
        q = self._queue(qid)
        return self.engine.rptr if q is self._loaded else q.snap.rptr

    # -- suspend, resume, reset -------------------------------------------------------------------------
    def suspend_context(self, cid: int, fence: int) -> bool:
        """Stop scheduling a context. True if it already was suspended (nothing else happens); else
        the completion ``(cid, fence)`` and the suspend interrupt come when it holds no engine state
        (at once if it is not on the engine)."""
        c = self._ctx(cid)
        if c.suspended:
            return True
        c.suspended = True
        self._touch(c)
        if self._running is c:
            c.suspend_fences.append(fence)
            self._kick()
        else:
            self._complete_suspend(c, fence)
            self._set_state(c, CTX_SUSPENDED)
        return False

    def resume_context(self, cid: int) -> None:
        """Make a suspended context schedulable again."""
        c = self._ctx(cid)
        if not c.suspended:
            return
        c.suspended = False
        self._touch(c)
        if self._running is not c:
            self._set_state(c, self._state_off(c))
        self._kick()

    def reset(self, everything: bool = False) -> list[int]:
        """Engine reset: stop now and return the cid that was on the engine (a list, empty if none);
        its state and queued work are dropped. Contexts preempted earlier keep theirs (their context
        save is in memory). With ``everything`` (a reset of the whole GPU) every context with work on
        its queues loses it and is returned, in creation order.
        Nothing is scheduled until :meth:`resume`. (``Engine.reset()`` called directly does the
        same as ``everything=False``.)"""
        self._reset_everything = everything
        try:
            self.engine.reset()  # calls engine_reset
        finally:
            self._reset_everything = False
        return self._hit

    def engine_reset(self, engine) -> None:
        """The engine was reset (see :meth:`reset`)."""
        now = self.sim.now
        self._set_deadline(None)
        if self._kick_timer is not None:
            self._kick_timer.cancel()
            self._kick_timer = None
        cur, q = self._running, self._loaded
        if q is not None:
            cur.busy_ns += engine.busy_ns - self._busy_mark
        if cur is not None:
            self._touch(cur)
        self._running = self._loaded = None
        self._preempting = False
        self._halted = True
        if cur is not None:
            self.policy.switched_out(cur, cur.busy_ns - cur.turn_mark, True, now)
        # The engine's own state is lost: the context on it. A context preempted earlier keeps its
        # saved state (it is in memory) and resumes after resume(); a reset of the whole GPU loses
        # every queue's work.
        everything = self._reset_everything
        affected = [c for c in self._contexts.values()
                    if c is cur or (everything and any(x.snap.pending for x in c.queues))]
        for c in affected:
            for x in c.queues:
                self._unblock(x)
                s = x.snap
                x.snap = EngineContext(s.ring_base, s.ring_size, s.wptr, s.wptr, address_space=s.address_space)
            self._touch(c)
        if cur is not None:
            fences, cur.suspend_fences = cur.suspend_fences, []
            for f in fences:
                self._complete_suspend(cur, f)
        self._sweep()
        self._hit = [c.cid for c in affected]

    def resume(self) -> None:
        """Restart scheduling after :meth:`reset` (all runnable contexts)."""
        if not self._halted:
            return
        self._halted = False
        deferred, self._deferred = self._deferred, []
        for c, f in deferred:
            self._complete_suspend(c, f)
        self._kick()

    # -- what it can report -----------------------------------------------------------------------------
    @property
    def current(self) -> int | None:
        """The cid of the context on the engine, or None."""
        return None if self._running is None else self._running.cid

    @property
    def current_context(self) -> HwContext | None:
        """The context on the engine, or None."""
        return self._running

    @property
    def current_queue(self) -> int | None:
        """The qid of the queue whose ring is loaded, or None."""
        return None if self._loaded is None else self._loaded.qid

    @property
    def halted(self) -> bool:
        """Between :meth:`reset` and :meth:`resume`."""
        return self._halted

    def state(self, cid: int) -> str:
        """The context's state (``idle``, ``ready``, ``running``, ``suspended``)."""
        return self._ctx(cid).state

    def busy_ns(self, cid: int, elapsed: bool = False) -> int:
        """ns of engine work done for the context: its finished turns, plus, while it is on the
        engine, what the engine has counted since it got it (run-ahead included, unless
        ``elapsed``: only what has happened by now)."""
        c = self._ctx(cid)
        extra = 0
        if self._loaded is not None and self._loaded.ctx is c:
            extra = self.engine.busy_ns - self._busy_mark - (self.engine.ahead_ns if elapsed else 0)
        return c.busy_ns + extra

    def preemptions(self, cid: int) -> int:
        """How many times the context was stopped with work left (a preemption or a suspend)."""
        return self._ctx(cid).preemptions

    def contexts(self) -> list[int]:
        """The cids, in creation order."""
        return list(self._contexts)

    # -- engine listener (called by the engine) ----------------------------------------------------------
    def engine_stopped(self, engine) -> None:
        """A preemption asked of the engine has stopped it."""
        self._unload(None)

    def engine_drained(self, engine) -> None:
        """The loaded ring has nothing left."""
        self._unload(None)

    def engine_stalled(self, engine) -> None:
        """The loaded ring (or a buffer it called) stalls on a WAIT."""
        self._unload(engine.waiting_on)

    def native_fence_written(self, engine, addr: int, value: int, monitored: int) -> None:
        """The engine wrote ``value`` to a native fence's CurrentValue at ``addr`` (NATIVE_FENCE):
        raise the CPU interrupt only if ``value`` is above the MonitoredValue at ``monitored``, which
        the scheduler reads now, after the write (so a MonitoredValue the driver lowered before this
        instant is always seen: no write is missed). Queues blocked on ``addr`` are released by the
        memory watch of rule 5, without the CPU."""
        self.native_fence_writes += 1
        if value > self.gpu.memory.read_u64(monitored):
            self.native_fence_interrupts += 1
            self.native_signals.append((self.current_queue, addr, value))
            self.gpu.irq.assert_cause(self._native_bit)

    # -- internals --------------------------------------------------------------------------------------
    def _ctx(self, cid: int) -> HwContext:
        c = self._contexts.get(cid)
        if c is None:
            raise KeyError(f"no context {cid} on {self.engine.name}")
        return c

    def _queue(self, qid: int) -> _Queue:
        q = self._queues.get(qid)
        if q is None:
            raise KeyError(f"no queue {qid} on {self.engine.name}")
        return q

    # -- loading and saving rings, blocked queues, suspends ---------------------------------------------
    def _load(self, c: HwContext, q: _Queue, queue_switch: bool = False) -> None:
        """Put the queue's ring on the engine (the engine may report back before this returns)."""
        c.rr = c.queues.index(q)
        self._seq += 1
        q.used = self._seq
        tr = self.gpu.trace
        if queue_switch and tr is not None:
            tr.emit(self.sim.now, "HwContextState", {
                "engine": self.index, "context": c.cid, "state": CTX_RUNNING, "queue": q.qid})
        self._loaded = q
        self._touch(c)
        self.engine.settle_hang()  # an engine hung before the load: that time is not the context's
        self._busy_mark = self.engine.busy_ns
        if not self.engine.load_context(q.snap):
            self._loaded = None  # nothing to run after all
            self._touch(c)
            self._kick()

    def _unload(self, wait) -> None:
        """The engine stopped, drained or stalled: save the loaded ring's state."""
        q = self._loaded
        if q is None:
            return
        eng = self.engine
        q.snap = eng.save_context()
        q.ctx.busy_ns += eng.busy_ns - self._busy_mark
        self._loaded = None
        self._touch(q.ctx)
        if wait is not None:
            self._block(q, wait)
        self._kick()

    def _block(self, q: _Queue, wait: tuple[int, int, int]) -> None:
        addr, value, flags = wait
        if self._wait_holds(addr, value, flags):
            return
        q.blocked = wait
        self._touch(q.ctx)
        q.watch = self.gpu.memory.watch(addr, lambda _addr, q=q: self._wait_changed(q))

    def _wait_holds(self, addr: int, value: int, flags: int) -> bool:
        mem = self.gpu.memory
        cur = mem.read_u32(addr) if flags & C.WAIT_32BIT else mem.read_u64(addr)
        return C.wait_holds(flags & C.WAIT_COMPARE_MASK, cur, value, 32 if flags & C.WAIT_32BIT else 64)

    def _wait_changed(self, q: _Queue) -> None:
        if q.blocked is not None and self._wait_holds(*q.blocked):
            self._unblock(q)
            self._kick()

    def _unblock(self, q: _Queue) -> None:
        if q.watch is not None:
            q.watch.cancel()
            q.watch = None
        if q.blocked is not None:
            q.blocked = None
            self._touch(q.ctx)

    def _complete_suspend(self, c: HwContext, fence: int) -> None:
        if self._halted:
            self._deferred.append((c, fence))
            return
        self.completed_suspends.append((c.cid, fence))
        self.gpu.irq.assert_cause(self._suspend_bit)
