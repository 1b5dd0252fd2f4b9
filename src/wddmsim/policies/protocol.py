"""The research protocol: what a scheduling policy is told, what it answers, and what it may ask
of the OS. docs/policies.md walks through it; the shipped policies in this package are examples.

The OS GPU scheduler (VidSch, :mod:`wddmsim.dxgkrnl.vidsch`) keeps a software queue per context
and a hardware queue per node. A context is *ready* on its node while its software queue holds a
packet the scheduler could submit. Whenever a node's hardware queue has a free slot the scheduler
asks the policy :meth:`Policy.pick` which ready context's next packet goes there; a policy chooses
between contexts only, so the packets of one context always leave in order and get the OS's fence
ids. Around that the policy is told (each ``on_...`` method; all optional):

- a context became ready or idle (:meth:`~Policy.on_ready`, :meth:`~Policy.on_idle`);
- a packet was queued, started (reached the bottom of the node's hardware queue: it runs, as the
  OS sees it), completed or was preempted, with the GPU time it got (``on_queued``,
  ``on_started``, ``on_completed``, ``on_preempted``);
- a timer it set fired (:meth:`~Policy.on_timer`); a context's priority or hints changed
  (:meth:`~Policy.on_changed`).

A policy acts through ``self.os`` (:class:`Os`): the ready contexts of a node, the context running
on it, timers, and :meth:`Os.preempt`, which asks the OS to preempt the running packet; the OS
then does the WDDM work (``DxgkDdiPreemptCommand``, the ``DMA_PREEMPTED`` interrupt, resubmission),
and only where the driver declared preemption (``Os.can_preempt``).

A policy sees what the OS could see: queues, priorities, the GPU time the OS measured (a packet's
``DmaPacketStart`` to its ``DmaPacketStop``), plus the hints the application gave (a model
extension: ``weight``, ``period``, ``deadline``, ``utilization``). It never sees the GPU's own
account or a packet's work before it ran. VidMm's system contexts (paging, context switches) run
before every process and are never shown to it.

A policy that raises, picks a context that is not ready on the node, leaves an idle node with
ready work and no timer set, or preempts where the driver cannot, is stopped with a
:class:`PolicyError` naming the policy, the call and the instant (exit status 2 on the command
line), never a bug check on the driver.

Time is virtual nanoseconds throughout (``now``).
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BeforeValidator

from ..dxgkrnl.errors import PolicyError
from ..util.units import parse_duration

#: A span of virtual time in a policy's ``Settings``: written ``"2ms"``, ``"250us"`` or as int ns
#: (as a scenario writes durations), held as int ns.
Duration = Annotated[int, BeforeValidator(parse_duration)]


def view_of(ctx) -> SchedContext:
    """The :class:`SchedContext` of the OS's context ``ctx``, made on first use and kept on it."""
    view = ctx.sched_view
    if view is None:
        view = ctx.sched_view = SchedContext(ctx)
    return view


class SchedContext:
    """One GPU context as a policy sees it; the same object every time for the same context, so a
    policy may key its own tables by it.

    ``name`` ("process/context"), ``node`` (its node's ordinal), ``priority`` (the effective
    priority: process class x 16 + the context's own -7..7), ``priority_class``, the hints
    (``weight``, ``period``, ``deadline``, ``utilization``: None where not given), ``queued``
    (packets in its software queue), ``gpu_ns`` (GPU time the OS measured so far), ``ready``.
    """

    __slots__ = ("_ctx",)

    def __init__(self, ctx):
        self._ctx = ctx

    name = property(lambda self: self._ctx.full_name, doc="``process/context``")
    process = property(lambda self: self._ctx.device.process.name, doc="the process's name")
    node = property(lambda self: self._ctx.node, doc="the ordinal of the node it submits to")
    priority = property(lambda self: self._ctx.effective_priority,
                        doc="process class x 16 + the context's own priority (-7..7)")
    priority_class = property(lambda self: self._ctx.device.process.priority_class)
    weight = property(lambda self: self._ctx.hints.weight, doc="its share against the node's others (1.0)")
    period = property(lambda self: self._ctx.hints.period, doc="ns between its jobs, or None")
    deadline = property(lambda self: self._ctx.hints.relative_deadline,
                        doc="ns after its release a job must finish (the period when only that is given), or None")
    utilization = property(lambda self: self._ctx.hints.utilization,
                           doc="the most of its node's GPU time it may take (0..1], or None")
    queued = property(lambda self: len(self._ctx.queue), doc="packets in its software queue")
    gpu_ns = property(lambda self: self._ctx.gpu_ns, doc="GPU time the OS measured for it so far (ns)")
    ready = property(lambda self: self._ctx.ready, doc="it has a packet the scheduler could submit now")

    @property
    def head(self) -> SchedPacket | None:
        """Its next packet (the one a pick submits), or None when its queue is empty."""
        q = self._ctx.queue
        return SchedPacket(q[0]) if q else None

    @property
    def next_deadline(self) -> int | None:
        """The absolute deadline of its next packet's job, or None (no deadline, nothing queued)."""
        q = self._ctx.queue
        d = self._ctx.hints.relative_deadline
        return q[0].release + d if q and d is not None else None

    def __repr__(self) -> str:
        return f"<context {self.name} on node {self.node}>"


class SchedPacket:
    """One packet as a policy sees it: ``context``, ``seq`` (its number in its context), ``kind``
    (``render``, ``present``, ...), ``queued`` (when it entered the software queue), ``release``
    (when its job began: the frame's start for a frame loop, else when it was queued),
    ``deadline_at`` (``release`` + the context's deadline hint, or None) and ``resubmission``
    (it was preempted before)."""

    __slots__ = ("_p",)

    def __init__(self, packet):
        self._p = packet

    context = property(lambda self: view_of(self._p.context))
    seq = property(lambda self: self._p.seq)
    kind = property(lambda self: self._p.kind)
    queued = property(lambda self: self._p.queued)
    release = property(lambda self: self._p.release)
    resubmission = property(lambda self: self._p.preempted)

    @property
    def deadline_at(self) -> int | None:
        d = self._p.context.hints.relative_deadline
        return self._p.release + d if d is not None else None

    def __repr__(self) -> str:
        return f"<packet {self._p.seq} of {self._p.context.full_name}>"


class Os:
    """What the OS offers a policy. Made by the scheduler; a policy reaches it as ``self.os``."""

    def __init__(self, host):
        self._host = host

    @property
    def now(self) -> int:
        """The current virtual time (ns)."""
        return self._host.sim.now

    @property
    def nodes(self) -> int:
        """How many nodes the adapter has (ordinals 0 .. nodes - 1)."""
        return len(self._host.vidsch.nodes)

    def node_name(self, node: int) -> str:
        return self._host.vidsch.nodes[node].name

    @property
    def can_preempt(self) -> bool:
        """The driver declared preemption (DXGK_DRIVERCAPS.PreemptionAware): :meth:`preempt` works."""
        return self._host.vidsch.preemptor.enabled

    def ready(self, node: int) -> list[SchedContext]:
        """The contexts ready on ``node``, in the order they became ready (oldest first)."""
        return list(self._host.ready_list(node))

    def running(self, node: int) -> SchedContext | None:
        """The context whose packet is at the bottom of ``node``'s hardware queue (running, as the OS
        sees it), or None when the node is idle."""
        nq = self._host.vidsch.nodes[node]
        if len(nq.hw) == nq.stopped or nq.hw[nq.stopped].context.system:
            return None
        return view_of(nq.hw[nq.stopped].context)

    def queued_on_hardware(self, node: int) -> list[SchedPacket]:
        """The packets on ``node``'s hardware queue not yet completed, the running one first."""
        nq = self._host.vidsch.nodes[node]
        return [SchedPacket(p) for i, p in enumerate(nq.hw) if i >= nq.stopped]

    def preempt(self, node: int) -> bool:
        """Ask the OS to preempt what runs on ``node`` (and the packets behind it on the hardware
        queue): they go back to the front of their contexts' queues and the next picks decide what
        runs. False when there is nothing to preempt or a preemption is already under way; a
        :class:`PolicyError` where the driver cannot preempt (:attr:`can_preempt`)."""
        return self._host.preempt(node)

    def set_timer(self, at: int, token: Any = None) -> object:
        """Call the policy's :meth:`Policy.on_timer` with ``token`` at virtual time ``at`` (now, if
        ``at`` has passed); after it the scheduler looks for work on every node. Returns a handle
        for :meth:`cancel_timer`."""
        return self._host.set_timer(at, token)

    def cancel_timer(self, handle: object) -> None:
        """Cancel a timer :meth:`set_timer` returned (nothing happens if it already fired)."""
        self._host.cancel_timer(handle)


class Policy:
    """Base class of a research scheduling policy.

    Subclass it and write :meth:`pick`; override any ``on_...`` method to be told of what happens.
    Settings come from the scenario's ``[scheduler]`` table (every key but ``policy``) or
    ``--set scheduler.KEY=VALUE``: declare them as a pydantic model named ``Settings`` inside the
    class, and read them as ``self.settings.KEY``; without a ``Settings`` model a policy takes no
    setting. Set up state in :meth:`setup`, not ``__init__``.
    """

    #: the policy's name in summaries (default: the class's name)
    name: str = ""

    def __init__(self, os: Os, settings: Any = None):
        self.os = os
        self.settings = settings
        self.setup()

    def setup(self) -> None:
        """Called once, before the run starts: make the policy's own tables here."""

    # -- the decision -----------------------------------------------------------------------------
    def pick(self, node: int, now: int) -> SchedContext | None:
        """The ready context whose next packet goes to ``node``'s free hardware-queue slot now, or
        None to leave the slot free (then set a timer: a node left idle while work is ready and no
        timer is pending is a :class:`PolicyError`)."""
        raise NotImplementedError(f"{type(self).__name__} must define pick(node, now)")

    # -- what the policy is told ------------------------------------------------------------------
    def on_ready(self, ctx: SchedContext, now: int) -> None:
        """``ctx`` has a packet to submit, and had none (or was held back) before."""

    def on_idle(self, ctx: SchedContext, now: int) -> None:
        """``ctx`` has nothing the scheduler could submit now (queue empty, or held back)."""

    def on_queued(self, packet: SchedPacket, now: int) -> None:
        """The application queued ``packet`` (``packet.context`` may already be ready)."""

    def on_started(self, packet: SchedPacket, node: int, now: int) -> None:
        """``packet`` reached the bottom of ``node``'s hardware queue: it runs."""

    def on_completed(self, packet: SchedPacket, node: int, gpu_ns: int, now: int) -> None:
        """``packet`` completed; it ran ``gpu_ns`` as the OS measured (0 for a packet that ran
        unseen behind the one at the bottom, whose interrupt reported both)."""

    def on_preempted(self, packet: SchedPacket, node: int, gpu_ns: int, now: int) -> None:
        """``packet`` was taken back by a preemption after running ``gpu_ns`` (0 if it had not
        started); it returns to the front of its context's queue."""

    def on_timer(self, token: Any, now: int) -> None:
        """A timer set with ``self.os.set_timer(at, token)`` fired."""

    def on_changed(self, ctx: SchedContext, now: int) -> None:
        """``ctx``'s priority (D3DKMTSetContextSchedulingPriority, its process's class) or its hints
        (a SetSchedulingHints call) changed."""


__all__ = ["Duration", "Os", "Policy", "PolicyError", "SchedContext", "SchedPacket", "view_of"]
