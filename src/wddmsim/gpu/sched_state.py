"""The context-management processor's records: hardware contexts and their queues, and their states.

What the firmware (:class:`~wddmsim.gpu.scheduler.GpuScheduler`) keeps for each context
(:class:`HwContext`: what the driver programmed with ``set_context``, and what the firmware knows:
its state, its turns, its busy time) and for each queue (``_Queue``: its ring's engine state while
it is not loaded, an :class:`~wddmsim.gpu.engine.EngineContext`; the WAIT it is blocked on; its
hardware slot); the states a context goes through (``idle``, ``ready``, ``running``,
``suspended``, as DXGK_SCHEDULING_LOG_CONTEXT_STATE); the interrupt cause bits of a completed
suspend and of a native fence; the band defaults before ``configure_bands``; and the checks on the
numbers a driver programs. All of it is importable from :mod:`.scheduler`.

Spec: gpu/scheduler.py's module doc ("Objects", "Suspend, resume, reset", "Native fences"),
docs/gpu.md ("Hardware scheduling").
"""

from __future__ import annotations

import operator

from .engine import EngineContext
from .policy import NORMAL_BAND

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
