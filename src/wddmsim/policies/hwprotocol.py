"""The research protocol on the GPU's side: a policy for the GPU's own scheduler under hardware
scheduling (``[adapter] scheduling = "hardware"``), written like the OS-side one
(:mod:`wddmsim.policies.protocol`); docs/policies.md, "Under hardware scheduling", walks through it.

Under hardware scheduling the OS no longer picks: each engine's firmware (the context-management
processor, :mod:`wddmsim.gpu.scheduler`) chooses which *hardware context* runs, and when to preempt
it. Windows only programs it (bands, priorities, quanta, grace periods); its rules are one policy,
:class:`~wddmsim.gpu.policy.BandPolicy`, the default (``windows``). A :class:`HwPolicy` takes its
place on every engine. Whenever an engine is free and a context is runnable the firmware asks
:meth:`HwPolicy.pick` which one gets it; the policy is told (each ``on_...`` method; all optional):

- a context became runnable on its engine, or stopped being runnable (:meth:`~HwPolicy.on_ready`,
  :meth:`~HwPolicy.on_idle`);
- a context got the engine (:meth:`~HwPolicy.on_started`), left it with nothing runnable left
  (:meth:`~HwPolicy.on_stopped`: its queues drained or stalled on a WAIT) or was taken off it
  (:meth:`~HwPolicy.on_preempted`: a preemption, a suspend, an engine reset), with the engine time
  the turn got;
- a timer it set fired (:meth:`~HwPolicy.on_timer`); a context's scheduling properties changed
  (:meth:`~HwPolicy.on_changed`).

It acts through ``self.os`` (:class:`HwOs`, the same names as the OS side's ``Os``): the runnable
contexts of an engine, the one running, timers, and :meth:`HwOs.preempt`, which has the firmware
ask the engine to preempt (``Engine.request_preempt``: the stop comes at the engine's
granularity, then the next pick). Nothing else preempts under a research policy: no band grace,
no quantum, only a suspend or an engine reset.

VidMm's system context (paging; REALTIME under Windows' policy) gets a free engine first and is
never shown to the policy, as on the OS side. A node is an engine (the OS's node ordinal is the
engine's index). A context is a hardware context:
what the driver programmed (its band, realtime level, in-process priority, quantum, graces), the
GPU's own account of its engine time, and, a model extension, the OS's name for it and the hints
its application gave (``weight``, ``period``, ``deadline``, ``utilization``).

The same checks as the OS side: a policy that raises, picks a context that is not runnable on the
engine, or leaves a free engine idle while work is runnable and no timer is set is stopped with a
:class:`PolicyError` naming the policy, the call and the instant (exit status 2), never a bug check.

Replacing the GPU's scheduler is a model extension: a real GPU's is its vendor's firmware.
"""

from __future__ import annotations

from typing import Any

from ..dxgkrnl.errors import PolicyError
from ..dxgkrnl.hints import SchedulingHints
from ..gpu.policy import BAND_NAMES
from .protocol import Duration

_NO_HINTS = SchedulingHints()


class HwSchedContext:
    """One hardware context as a GPU policy sees it; the same object every time for the same
    context, so a policy may key its own tables by it.

    ``name`` ("process/context", the OS's name; ``context N`` for one the OS does not know),
    ``process``, ``node`` (its engine's index), ``cid`` (the firmware's context id), ``band``
    (``idle``, ``normal``, ``focus``, ``realtime``), ``realtime_level`` (0..31), ``priority`` (the
    in-process priority, -7..7), ``quantum`` (ns, None: its band's), ``grace_same``,
    ``grace_lower``, the hints (``weight``, ``period``, ``deadline``, ``utilization``: as the
    application gave them, else 1.0 and None), ``gpu_ns`` (engine time so far, the GPU's own
    account), ``ready`` (runnable), ``running`` (on the engine now), ``queues``.
    """

    __slots__ = ("_c", "_fw", "_os_of")

    def __init__(self, c, fw, os_of):
        self._c = c
        self._fw = fw
        self._os_of = os_of

    def _os(self):
        return self._os_of(self._c.cid)

    @property
    def name(self) -> str:
        ctx = self._os()
        return ctx.full_name if ctx is not None else f"context {self._c.cid}"

    @property
    def process(self) -> str:
        ctx = self._os()
        return ctx.device.process.name if ctx is not None else str(self._c.process)

    def _hints(self):
        ctx = self._os()
        return ctx.hints if ctx is not None else _NO_HINTS

    node = property(lambda self: self._fw.index, doc="its engine's index (the OS's node ordinal)")
    cid = property(lambda self: self._c.cid, doc="the firmware's id of the context (the driver's handle)")
    band = property(lambda self: BAND_NAMES[self._c.band], doc="its priority band, as the driver programmed it")
    realtime_level = property(lambda self: self._c.level, doc="0..31 (realtime band only)")
    priority = property(lambda self: self._c.priority, doc="its in-process priority, -7..7")
    quantum = property(lambda self: self._c.quantum, doc="its quantum (ns), None: its band's")
    grace_same = property(lambda self: self._c.grace_same)
    grace_lower = property(lambda self: self._c.grace_lower)
    weight = property(lambda self: self._hints().weight, doc="its share against the engine's others (1.0)")
    period = property(lambda self: self._hints().period, doc="ns between its jobs, or None")
    deadline = property(lambda self: self._hints().relative_deadline,
                        doc="ns after its release a job must finish (the period when only that is given), or None")
    utilization = property(lambda self: self._hints().utilization,
                           doc="the most of its engine's time it may take (0..1], or None")
    gpu_ns = property(lambda self: self._fw.busy_ns(self._c.cid, elapsed=True),
                      doc="engine time it has had so far (ns), the GPU's own account")
    ready = property(lambda self: self._c.runnable, doc="it has work the engine could run")
    running = property(lambda self: self._fw.current == self._c.cid, doc="it is on the engine now")
    queues = property(lambda self: len(self._c.queues), doc="its hardware queues on the engine")

    def __repr__(self) -> str:
        return f"<hardware context {self.name} on engine {self.node}>"


class HwOs:
    """What the GPU's firmware offers a policy (the names of the OS side's ``Os``). Made by the
    host; a policy reaches it as ``self.os``."""

    def __init__(self, host):
        self._host = host

    @property
    def now(self) -> int:
        """The current virtual time (ns)."""
        return self._host.sim.now

    @property
    def nodes(self) -> int:
        """How many engines the GPU has (indices 0 .. nodes - 1)."""
        return len(self._host.gpu.engines)

    def node_name(self, node: int) -> str:
        return self._host.gpu.engines[node].name

    #: The firmware can always ask its engine to preempt (at the engine's granularity).
    can_preempt = True

    def ready(self, node: int) -> list[HwSchedContext]:
        """The contexts runnable on engine ``node``, in the order they became runnable (oldest
        first); the one on the engine is among them while it has work."""
        return list(self._host.ready_list(node))

    def running(self, node: int) -> HwSchedContext | None:
        """The context on engine ``node``, or None when it is free (or VidMm's paging runs)."""
        return self._host.running(node)

    def preempt(self, node: int) -> bool:
        """Have the firmware ask engine ``node`` to preempt the context on it; the stop comes at the
        engine's granularity, then the next pick decides. False when nothing runs or a preemption
        is already under way."""
        return self._host.preempt(node)

    def set_timer(self, at: int, token: Any = None) -> object:
        """Call the policy's :meth:`HwPolicy.on_timer` with ``token`` at virtual time ``at`` (now, if
        ``at`` has passed); after it every engine decides again. Returns a handle for
        :meth:`cancel_timer`."""
        return self._host.set_timer(at, token)

    def cancel_timer(self, handle: object) -> None:
        """Cancel a timer :meth:`set_timer` returned (nothing happens if it already fired)."""
        self._host.cancel_timer(handle)


class HwPolicy:
    """Base class of a research policy for the GPU's own scheduler (hardware scheduling).

    Subclass it and write :meth:`pick`; override any ``on_...`` method to be told of what happens.
    Settings as for the OS side's ``Policy``: a pydantic model named ``Settings`` inside the class,
    filled from the scenario's ``[scheduler]`` table, read as ``self.settings.KEY``. Set up state
    in :meth:`setup`, not ``__init__``.
    """

    #: the policy's name in summaries (default: the class's name)
    name: str = ""

    def __init__(self, os: HwOs, settings: Any = None):
        self.os = os
        self.settings = settings
        self.setup()

    def setup(self) -> None:
        """Called once, before the run starts: make the policy's own tables here."""

    # -- the decision -----------------------------------------------------------------------------
    def pick(self, node: int, now: int) -> HwSchedContext | None:
        """The runnable context that gets engine ``node`` now (it is free), or None to leave it
        idle (then set a timer: an engine left idle while work is runnable and no timer is pending
        is a :class:`PolicyError`)."""
        raise NotImplementedError(f"{type(self).__name__} must define pick(node, now)")

    # -- what the policy is told ------------------------------------------------------------------
    def on_ready(self, ctx: HwSchedContext, now: int) -> None:
        """``ctx`` has work its engine could run, and had none before."""

    def on_idle(self, ctx: HwSchedContext, now: int) -> None:
        """``ctx`` has nothing its engine could run (queues drained, waiting, suspended, gone)."""

    def on_started(self, ctx: HwSchedContext, node: int, now: int) -> None:
        """``ctx`` got engine ``node``."""

    def on_stopped(self, ctx: HwSchedContext, node: int, gpu_ns: int, now: int) -> None:
        """``ctx`` left engine ``node`` after ``gpu_ns`` of engine time in this turn, with nothing
        runnable left (its queues drained or stalled on a WAIT)."""

    def on_preempted(self, ctx: HwSchedContext, node: int, gpu_ns: int, now: int) -> None:
        """``ctx`` was taken off engine ``node`` after ``gpu_ns`` in this turn: a preemption (this
        policy's), a suspend or an engine reset."""

    def on_timer(self, token: Any, now: int) -> None:
        """A timer set with ``self.os.set_timer(at, token)`` fired."""

    def on_changed(self, ctx: HwSchedContext, now: int) -> None:
        """``ctx``'s scheduling properties (band, priority, quantum, graces) changed
        (DxgkDdiSetContextSchedulingProperties)."""


__all__ = ["Duration", "HwOs", "HwPolicy", "HwSchedContext", "PolicyError"]
