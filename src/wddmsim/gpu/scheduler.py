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
   the next context is chosen by scheduling rule 2 when it does.
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
runnability depends on changes (a doorbell, a WAIT, a slot, a suspension, the engine, their
rank), runnable ones are grouped by rank, and the state sweep logs only touched contexts (in
creation order, as a walk over all of them would). With a slot limit, the remap still looks at
every queue at each decision.

Spec: Microsoft's pages for DXGK_SCHEDULING_PRIORITY_BAND and DXGKARG_SETCONTEXTSCHEDULINGPROPERTIES
(bands and properties), DxgkDdiSuspendContext and DXGK_SCHEDULING_LOG_CONTEXT_STATE (suspend and
resume, scheduling log), DxgkDdiResetHwEngine (engine reset) and DxgkDdiSubmitCommandToHwQueue
(hardware-queue submission); reference scenarios 20, 21, 31 and 32 (tests/reference/); docs/gpu.md
("Hardware scheduling", "Hardware queue slots").
"""

from __future__ import annotations

import operator
from collections import deque
from heapq import heapify, heappop, heappush
from fractions import Fraction
from math import ceil

from ..sim import DEVICE
from . import commands as C
from .engine import IDLE, EngineContext, EngineFault

__all__ = [
    "IDLE_BAND", "NORMAL_BAND", "FOCUS_BAND", "REALTIME_BAND", "BAND_NAMES", "SUSPEND_CAUSE_SHIFT",
    "NATIVE_FENCE_CAUSE_SHIFT",
    "CTX_IDLE", "CTX_READY", "CTX_RUNNING", "CTX_SUSPENDED",
    "DEFAULT_GRACE", "DEFAULT_QUANTUM", "DEFAULT_PROCESS_GRACE", "DEFAULT_NORMAL_SHARE_PCT",
    "GpuSchedulerError", "GpuScheduler",
]

IDLE_BAND = 0
NORMAL_BAND = 1
FOCUS_BAND = 2
REALTIME_BAND = 3
BAND_NAMES = ("idle", "normal", "focus", "realtime")

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


class _Context:
    __slots__ = (
        "cid", "process", "address_space", "order", "band", "level", "priority", "quantum",
        "grace_same", "grace_lower", "suspended", "suspend_fences", "queues", "rr", "last_run",
        "ready_since", "run_start", "state", "busy_ns", "preemptions", "runs", "grp",
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
        self.ready_since = 0
        self.run_start = 0
        self.state = CTX_IDLE
        self.busy_ns = 0
        self.preemptions = 0
        self.runs = 0
        self.grp: _Group | None = None  # the group of runnable contexts it is indexed in (None: not runnable)


class _Queue:
    __slots__ = ("qid", "ctx", "snap", "blocked", "watch", "slot", "want", "used", "order")

    def __init__(self, qid: int, ctx: _Context, snap: EngineContext, order: int):
        self.qid = qid
        self.ctx = ctx
        self.snap = snap  # the engine state of this ring while it is not loaded
        self.blocked: tuple[int, int, int] | None = None  # the WAIT it is saved at (addr, value, flags)
        self.watch = None
        self.order = order  # creation order
        self.slot: int | None = None  # the hardware slot it is mapped to (None: unmapped)
        self.want = 0  # stamp of when it began waiting for a slot (0: not waiting)
        self.used = 0  # stamp of when it was last mapped or loaded (least recently used leaves first)


class _Group:
    """The runnable contexts of one rank (band, and realtime level in REALTIME): the index that lets
    a decision look at the few contexts that matter instead of every context.

    ``lru`` is a heap of ``(last_run, order, context)`` (rule 2's order) and ``rs`` one of
    ``(ready_since, order, context)`` (rule 3's claims); both are lazy: an entry whose context has
    left the group or whose key has changed since is dropped when it reaches the top. ``procs``
    holds the members of each process (rule 2's and rule 3's in-process priorities)."""

    __slots__ = ("rank", "members", "procs", "lru", "rs")

    def __init__(self, rank: tuple[int, int]):
        self.rank = rank
        self.members: dict[_Context, None] = {}
        self.procs: dict = {}
        self.lru: list = []
        self.rs: list = []

    def first_lru(self) -> _Context:
        """The member least recently run (never run first, then creation order)."""
        heap = self.lru
        while True:
            lr, _, c = heap[0]
            if c.grp is self and c.last_run == lr:
                return c
            heappop(heap)

    def min_ready_since(self, skip=None) -> int | None:
        """The earliest ``ready_since`` of a member whose process is not ``skip`` (None: any)."""
        heap = self.rs
        held = []
        found = None
        while heap:
            rs, _, c = heap[0]
            if c.grp is not self or c.ready_since != rs:
                heappop(heap)
                continue
            if skip is not None and c.process == skip:
                held.append(heappop(heap))
                continue
            found = rs
            break
        for item in held:
            heappush(heap, item)
        return found

    def compact(self) -> None:
        """Drop the stale entries once they outnumber the members."""
        n = len(self.members)
        if len(self.lru) > 2 * n + 16:
            self.lru = [(c.last_run, c.order, c) for c in self.members]
            heapify(self.lru)
        if len(self.rs) > 2 * n + 16:
            self.rs = [(c.ready_since, c.order, c) for c in self.members]
            heapify(self.rs)


class GpuScheduler:
    """The GPU-side scheduler of one engine (see the module doc for the rules)."""

    def __init__(self, gpu, engine, slots: int | None = None, history: int | None = None):
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
        self._contexts: dict[int, _Context] = {}
        self._queues: dict[int, _Queue] = {}
        # The bookkeeping that keeps a decision's work independent of the number of contexts: the
        # contexts whose runnability may have changed (``_dirty``, re-indexed before a decision) and
        # whose state the next sweep must look at (``_stale``), and the runnable contexts by rank.
        self._dirty: set[_Context] = set()
        self._stale: set[_Context] = set()
        self._groups: dict[tuple[int, int], _Group] = {}
        self._running: _Context | None = None
        self._loaded: _Queue | None = None
        self._preempting = False
        self._halted = False
        self._deferred: list[tuple[_Context, int]] = []  # suspends completed while halted
        self._hit: list[int] = []  # the contexts the last engine reset hit
        self._reset_everything = False  # the reset in progress is one of the whole GPU
        self._kick_timer = None
        self._deadline_timer = None
        self._busy_mark = 0
        self._seq = 0
        self._grant = False  # the running NORMAL context is on its share quantum
        self._grant_end = 0
        self._credit = Fraction(0)  # NORMAL share credit, ns
        self._share_due: int | None = None  # when the credit reached the NORMAL quantum
        self._acct_at = self.sim.now
        self._accruing = False
        self._spending = False
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
        self._account(self.sim.now)
        self.grace, self.quantum, self.process_grace, self.normal_share_pct = g, q, pg, pct
        self._share_due = None
        self._kick()

    def create_context(self, cid: int, process, address_space: int = 0) -> None:
        """A new context of ``process`` (any hashable), resumed, NORMAL, level 0, priority 0.
        ``address_space`` is what its queues' rings load into the engine's address-space register."""
        if cid in self._contexts:
            raise ValueError(f"context {cid} exists")
        self._seq += 1
        self._contexts[cid] = _Context(cid, process, address_space, self._seq)

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
        if (band, level, prio) != (c.band, c.level, c.priority) and c.state == CTX_READY:
            c.ready_since = self.sim.now  # a new claim on the engine starts now
            self._ready_moved(c)
        c.band, c.level, c.priority = band, level, prio
        c.quantum, c.grace_same, c.grace_lower = quantum, grace_same, grace_lower
        self._touch(c)
        self._kick()

    def destroy_context(self, cid: int) -> None:
        """Forget a context and its queues. Refused while one of its queues is on the engine."""
        c = self._ctx(cid)
        if self._running is c:
            if self._loaded is not None:
                raise GpuSchedulerError(f"context {cid} is running on {self.engine.name}")
            self._running = None
            self._preempting = False
            self._grant = False
        for q in c.queues:
            self._unblock(q)
            if self.slots is not None and q.slot is not None:
                self._unmap(q)
            del self._queues[q.qid]
        c.queues = []
        del self._contexts[cid]
        self._leave(c)
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
        self._account(now)
        self._accruing = self._spending = False
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
        self._preempting = self._grant = False
        self._halted = True
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
        self._acct_at = self.sim.now
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
    def _ctx(self, cid: int) -> _Context:
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

    def _runnable(self, c: _Context) -> bool:
        if c.suspended:
            return False
        for q in c.queues:
            if q is self._loaded or (q.blocked is None and q.snap.pending and q.slot is not None):
                return True
        return False

    def _state_off(self, c: _Context) -> str:
        """The state of a context that is not on the engine."""
        if c.suspended:
            return CTX_SUSPENDED
        return CTX_READY if self._runnable(c) else CTX_IDLE

    def _set_state(self, c: _Context, state: str, qid: int = -1) -> None:
        if c.state == state:
            return
        now = self.sim.now
        if state == CTX_READY:
            c.ready_since = now
            self._ready_moved(c)
        c.state = state
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
    def _touch(self, c: _Context) -> None:
        """Something ``c``'s runnability or state depends on changed (a queue's work, a WAIT, a
        slot, suspension, the engine, its rank)."""
        self._dirty.add(c)
        self._stale.add(c)

    def _fresh(self) -> None:
        """Re-index the touched contexts: each runnable one in the group of its rank."""
        dirty = self._dirty
        while dirty:
            c = dirty.pop()
            g = c.grp
            if self._runnable(c):
                rank = self._rank(c)
                if g is not None:
                    if g.rank == rank:
                        continue
                    self._leave(c)
                g = self._groups.get(rank)
                if g is None:
                    g = self._groups[rank] = _Group(rank)
                c.grp = g
                g.members[c] = None
                g.procs.setdefault(c.process, {})[c] = None
                heappush(g.lru, (c.last_run, c.order, c))
                heappush(g.rs, (c.ready_since, c.order, c))
            elif g is not None:
                self._leave(c)

    def _leave(self, c: _Context) -> None:
        g = c.grp
        if g is None:
            return
        c.grp = None
        del g.members[c]
        mates = g.procs[c.process]
        del mates[c]
        if not mates:
            del g.procs[c.process]
        if not g.members:
            del self._groups[g.rank]
        else:
            g.compact()

    def _ready_moved(self, c: _Context) -> None:
        """``c.ready_since`` changed: index the new value."""
        g = c.grp
        if g is not None:
            heappush(g.rs, (c.ready_since, c.order, c))

    def _next_queue(self, c: _Context, skip: int) -> _Queue | None:
        """The first queue of ``c`` with runnable work, from its last one (``skip`` 0) or the one
        after it (``skip`` 1, round robin)."""
        qs = c.queues
        n = len(qs)
        for k in range(skip, skip + n):
            q = qs[(c.rr + k) % n]
            if q.blocked is None and q.snap.pending and q.slot is not None:
                return q
        return None

    @staticmethod
    def _rank(c: _Context) -> tuple[int, int]:
        return (c.band, c.level if c.band == REALTIME_BAND else 0)

    def _pick(self) -> tuple[_Context, bool] | None:
        """Rule 2 (and rule 4's NORMAL turn) among the runnable contexts."""
        self._fresh()
        groups = self._groups
        if not groups:
            return None
        top = max(groups)
        grant = False
        g = groups[top]
        if top[0] == FOCUS_BAND and self.normal_share_pct and self._credit >= self.quantum[NORMAL_BAND]:
            normals = groups.get((NORMAL_BAND, 0))
            if normals is not None:
                g, grant = normals, True
        c = g.first_lru()
        mates = g.procs[c.process]
        if len(mates) == 1 or c.priority == max(x.priority for x in mates):
            return c, grant
        # Several contexts of one process in the rank, the least recently run not its highest
        # priority: rule 2 in full over the group.
        best: dict = {}
        for x in g.members:
            p = best.get(x.process)
            if p is None or x.priority > p:
                best[x.process] = x.priority
        return min((x for x in g.members if x.priority == best[x.process]),
                   key=lambda x: (x.last_run, x.order)), grant

    def _decide(self) -> None:
        if self._halted:
            self._sweep()
            return
        now = self.sim.now
        self._account(now)
        if self.slots is not None:
            self._remap()
        cur = self._running
        if cur is not None and self._loaded is None:
            # Its ring left the engine: drained, stalled, or stopped by a preemption.
            preempted = self._preempting
            self._preempting = False
            q = None
            if not preempted and not cur.suspended:
                d = self._yield_deadline(cur, now)
                if d is None or d > now:
                    q = self._next_queue(cur, 1)
            if q is not None:
                self.queue_switches += 1
                self._load(cur, q, queue_switch=True)
            else:
                self._switch_out(cur, preempted)
        if self._running is None:
            pick = self._pick()
            if pick is not None:
                self._switch_in(*pick)
        self._sweep()
        cur = self._running
        deadline = None
        if cur is not None and self._loaded is not None and not self._preempting:
            deadline = self._yield_deadline(cur, now)
            if deadline is not None and deadline <= now:
                deadline = None
                self._set_deadline(None)
                self._preempting = True
                self.engine.request_preempt()
        self._set_deadline(deadline)
        cur = self._running
        if cur is not None and cur.band == FOCUS_BAND and self.normal_share_pct and not self._grant:
            self._fresh()
            self._accruing = (NORMAL_BAND, 0) in self._groups
        else:
            self._accruing = False
        self._spending = self._grant and cur is not None

    def _yield_deadline(self, cur: _Context, now: int) -> int | None:
        """When the running context must be preempted (None: not while things stay as they are).
        Rule 3 over the runnable contexts, a group at a time: in a group the earliest claim
        (``ready_since``) gives the earliest deadline, as every deadline grows with it."""
        if cur.suspended:
            return now
        self._fresh()
        best = None
        start = cur.run_start
        band = cur.band
        for rank, g in self._groups.items():
            b = rank[0]
            if b < band:
                continue
            if b > band:
                rs = g.min_ready_since()
                since = self._grant_end if (self._grant and b == FOCUS_BAND) else start
                d = max(rs, since) + self.grace[b]
            elif band == REALTIME_BAND and rank[1] != cur.level:
                if rank[1] < cur.level:
                    continue
                d = max(g.min_ready_since(), start) + cur.grace_lower
            else:
                quantum = cur.quantum if cur.quantum is not None else self.quantum[band]
                rs = g.min_ready_since(cur.process)
                d = None if rs is None else max(rs, start + quantum) + self.process_grace[band]
                for c in g.procs.get(cur.process, ()):
                    if c is cur:
                        continue
                    if c.priority != cur.priority:
                        if c.priority < cur.priority:
                            continue
                        e = max(c.ready_since, start) + cur.grace_lower
                    else:
                        e = max(c.ready_since, start + quantum) + cur.grace_same
                    if d is None or e < d:
                        d = e
                if d is None:
                    continue
            if best is None or d < best:
                best = d
        pct = self.normal_share_pct
        if band == FOCUS_BAND and pct and (NORMAL_BAND, 0) in self._groups:
            q = self.quantum[NORMAL_BAND]
            if self._credit >= q:
                if self._share_due is None:
                    self._share_due = now
                due = self._share_due
            else:
                due = now + ceil((q - self._credit) * (100 - pct) / pct)
            d = max(due, start) + self.grace[NORMAL_BAND]
            if best is None or d < best:
                best = d
        return best

    def _account(self, now: int) -> None:
        """NORMAL share credit for the time since the last decision."""
        start = self._acct_at
        if now <= start:
            return
        self._acct_at = now
        dt = now - start
        if self._accruing:
            pct = self.normal_share_pct
            q = self.quantum[NORMAL_BAND]
            before = self._credit
            self._credit = before + Fraction(dt * pct, 100 - pct)
            if before < q <= self._credit:
                self._share_due = start + ceil((q - before) * (100 - pct) / pct)
        elif self._spending:
            self._credit -= dt
            if self._credit < self.quantum[NORMAL_BAND]:
                self._share_due = None

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

    def _switch_in(self, c: _Context, grant: bool) -> None:
        now = self.sim.now
        q = self._next_queue(c, 0)
        self._running = c
        self._seq += 1
        c.last_run = self._seq
        if c.grp is not None:
            heappush(c.grp.lru, (c.last_run, c.order, c))
        self._touch(c)
        c.run_start = now
        c.runs += 1
        self.switches += 1
        self._grant = grant
        self._grant_end = now + self.quantum[NORMAL_BAND] if grant else 0
        self._set_state(c, CTX_RUNNING, q.qid)
        self._load(c, q)

    def _switch_out(self, c: _Context, preempted: bool) -> None:
        self._running = None
        self._touch(c)
        self._grant = False
        if preempted and any(q.snap.pending for q in c.queues):
            c.preemptions += 1
        fences, c.suspend_fences = c.suspend_fences, []
        for f in fences:
            self._complete_suspend(c, f)
        self._set_state(c, self._state_off(c))

    def _load(self, c: _Context, q: _Queue, queue_switch: bool = False) -> None:
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

    def _complete_suspend(self, c: _Context, fence: int) -> None:
        if self._halted:
            self._deferred.append((c, fence))
            return
        self.completed_suspends.append((c.cid, fence))
        self.gpu.irq.assert_cause(self._suspend_bit)
