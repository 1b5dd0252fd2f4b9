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
rule 1. A queue with work it could run (pending, not blocked, its context not suspended) and no
slot waits for one;
waiting queues get slots in the order they began to wait: a free slot first, else the slot of the
mapped queue *idle* longest (not on the engine and nothing it could run; least recently mapped or
loaded first). A queue that is not idle is never unmapped, so a queue is mapped and unmapped only
while idle; a doorbell on an unmapped queue moves its saved write pointer and its packets run after
it is mapped. Mapping takes no time. ``slot_log`` holds ``(t, qid, slot, "map"|"unmap")``; with
``gpu.trace`` set each change is emitted as ``HwQueueMap`` / ``HwQueueUnmap``. ``slots`` None: no
limit, every queue is mapped from its creation (and nothing is logged).

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

Cost: a decision does not walk every context. Contexts are re-examined when something their
runnability depends on changes (a doorbell, a WAIT, a slot, a suspension, the engine), the policy
is told only of changes (BandPolicy groups the runnable ones by rank), and the state sweep logs
only touched contexts (in creation order, as a walk over all of them would). With a slot limit,
the remap still looks at every queue at each decision.

Spec: Microsoft's pages for DXGK_SCHEDULING_PRIORITY_BAND and DXGKARG_SETCONTEXTSCHEDULINGPROPERTIES
(bands and properties), DxgkDdiSuspendContext and DXGK_SCHEDULING_LOG_CONTEXT_STATE (suspend and
resume, scheduling log), DxgkDdiResetHwEngine (engine reset) and DxgkDdiSubmitCommandToHwQueue
(hardware-queue submission); reference scenarios 20, 21, 31 and 32 (tests/reference/); docs/gpu.md
("Hardware scheduling", "Hardware queue slots").
"""

from __future__ import annotations

import operator
from collections import deque

from ..sim import DEVICE
from . import commands as C
from .engine import IDLE, EngineContext, EngineFault
from .policy import BAND_NAMES, FOCUS_BAND, IDLE_BAND, NORMAL_BAND, REALTIME_BAND, BandPolicy, GpuPolicy

__all__ = [
    "IDLE_BAND", "NORMAL_BAND", "FOCUS_BAND", "REALTIME_BAND", "BAND_NAMES", "SUSPEND_CAUSE_SHIFT",
    "NATIVE_FENCE_CAUSE_SHIFT",
    "CTX_IDLE", "CTX_READY", "CTX_RUNNING", "CTX_SUSPENDED",
    "DEFAULT_GRACE", "DEFAULT_QUANTUM", "DEFAULT_PROCESS_GRACE", "DEFAULT_NORMAL_SHARE_PCT",
    "GpuSchedulerError", "GpuScheduler", "HwContext", "GpuPolicy", "BandPolicy",
]

#: A completed suspend sets bit ``SUSPEND_CAUSE_SHIFT + engine index`` of the interrupt status.
SUSPEND_CAUSE_SHIFT = 128
#: A native fence write above its MonitoredValue sets bit ``NATIVE_FENCE_CAUSE_SHIFT + engine index``.
NATIVE_FENCE_CAUSE_SHIFT = 160

CTX_IDLE = "idle"
CTX_READY = "ready"
CTX_RUNNING = "running"
CTX_SUSPENDED = "suspended"

#: Defaults before ``configure_bands`` (ns, indexed by band).
DEFAULT_GRACE = (0, 1_000_000, 500_000, 0)
DEFAULT_QUANTUM = (2_000_000, 2_000_000, 2_000_000, 2_000_000)
DEFAULT_PROCESS_GRACE = (500_000, 500_000, 500_000, 0)
DEFAULT_NORMAL_SHARE_PCT = 10
_ORDER = operator.attrgetter("order")
#: The slot of every queue of an engine without a slot limit.
_NO_SLOTS = -1


class GpuSchedulerError(RuntimeError):
    """An operation the scheduler refuses in its current state (e.g. destroying a running context)."""


def _int(name: str, value, lo: int, hi: int | None = None) -> int:
    try:
        value = operator.index(value)
    except TypeError:
        raise ValueError(f"{name} must be an integer, not {type(value).__name__}") from None
    if value < lo or (hi is not None and value > hi):
        raise ValueError(f"{name}={value} is outside {lo}..{'' if hi is None else hi}")
    return value


def _bands(name: str, values, lo: int) -> list[int]:
    vals = list(values)
    if len(vals) != 4:
        raise ValueError(f"{name} needs 4 values (IDLE, NORMAL, FOCUS, REALTIME), got {len(vals)}")
    return [_int(f"{name}[{i}]", v, lo) for i, v in enumerate(vals)]


class HwContext:
    """A context as the firmware holds it. What the driver programmed: ``cid``, ``process``,
    ``address_space``, ``band``, ``level``, ``priority``, ``quantum``, ``grace_same``,
    ``grace_lower``; what the firmware knows: ``order`` (creation order), ``state``, ``suspended``,
    ``runnable`` (as its policy was last told), ``last_run`` (a stamp that grows at each switch-in;
    -1: never run), ``run_start`` (when it last got the engine), ``busy_ns``, ``preemptions``,
    ``runs``. ``policy_data`` belongs to the engine's policy (:mod:`wddmsim.gpu.policy`)."""

    __slots__ = (
        "cid", "process", "address_space", "order", "band", "level", "priority", "quantum",
        "grace_same", "grace_lower", "suspended", "suspend_fences", "queues", "rr", "last_run",
        "run_start", "state", "busy_ns", "preemptions", "runs", "runnable", "turn_mark", "policy_data",
    )

    def __init__(self, cid: int, process, address_space: int, order: int):
        self.cid = cid
        self.process = process
        self.address_space = address_space
        self.order = order
        self.band = NORMAL_BAND
        self.level = 0
        self.priority = 0
        self.quantum: int | None = None  # None: the band's process quantum
        self.grace_same = 0
        self.grace_lower = 0
        self.suspended = False
        self.suspend_fences: list[int] = []  # suspends to acknowledge when it leaves the engine
        self.queues: list[_Queue] = []
        self.rr = 0  # index of the queue it ran last
        self.last_run = -1  # stamp of the last time it got the engine (-1: never)
        self.run_start = 0
        self.state = CTX_IDLE
        self.busy_ns = 0
        self.preemptions = 0
        self.runs = 0
        self.runnable = False  # runnable, as its policy was last told
        self.turn_mark = 0  # busy_ns when it last got the engine
        self.policy_data = None

    def __repr__(self) -> str:
        return f"<hardware context {self.cid}>"


class _Queue:
    __slots__ = ("qid", "ctx", "snap", "blocked", "watch", "slot", "want", "used", "order")

    def __init__(self, qid: int, ctx: HwContext, snap: EngineContext, order: int):
        self.qid = qid
        self.ctx = ctx
        self.snap = snap  # the engine state of this ring while it is not loaded
        self.blocked: tuple[int, int, int] | None = None  # the WAIT it is saved at (addr, value, flags)
        self.watch = None
        self.order = order  # creation order
        self.slot: int | None = None  # the hardware slot it is mapped to (None: unmapped)
        self.want = 0  # stamp of when it began waiting for a slot (0: not waiting)
        self.used = 0  # stamp of when it was last mapped or loaded (least recently used leaves first)


class GpuScheduler:
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

    # -- hardware queue slots -------------------------------------------------------------------------
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
