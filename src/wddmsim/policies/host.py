"""The host of a research policy inside VidSch: it keeps the ready lists, tells the policy what
happens, asks it to pick, and holds it to the protocol (:mod:`wddmsim.policies.protocol`).

VidSch (:mod:`wddmsim.dxgkrnl.vidsch`) talks to its policy through the scheduler-side interface of
:class:`wddmsim.dxgkrnl.policy.Policy` (``ready``, ``idle``, ``has_ready``, ``pick``, the
preemption questions). :class:`PolicyHost` answers it for a researcher's :class:`Policy`:

- VidMm's system contexts (paging, context switches) go first, ahead of every process, as under the
  OS's own policies; the research policy never sees them.
- Everything else is the research policy's choice, checked: it must pick a context that is ready on
  the node, may leave a node idle only with a timer set, may preempt only where the driver declared
  preemption, and may not raise. A breach is a :class:`PolicyError` naming the policy, the call and
  the instant; the run stops there, and no bug check is laid on the driver.
- The OS's own preemption rules (priority, quantum) are off: under a research policy the OS
  preempts only when the policy asks (and for the TDR watchdog).
"""

from __future__ import annotations

from collections import deque

from ..sim import DISPATCH
from .checks import Checks
from .protocol import Os, Policy, SchedPacket, view_of


class PolicyHost(Checks):
    """Runs ``policy_cls`` (a :class:`Policy` subclass, made with ``settings``) for one VidSch."""

    #: VidSch asks for the research hooks (queued, started, completed, preempted)
    observes = True
    #: the OS preempts for priority or quantum on its own: not under a research policy
    priority_preemption = False
    quantum = None

    def __init__(self, policy_cls: type, settings, label: str):
        self.label = label
        self._cls = policy_cls
        self._settings = settings
        self.policy: Policy | None = None
        self.vidsch = None
        self.sim = None
        self._ready: dict[int, dict] = {}
        self._system: dict[int, deque] = {}
        self._timers: dict[object, object] = {}
        self._preempting: set[int] = set()
        self.picks = 0

    # -- set-up -------------------------------------------------------------------------------------
    def attach(self, vidsch) -> None:
        """Bind to the scheduler and make the policy (its ``setup`` runs now)."""
        self.vidsch = vidsch
        self.sim = vidsch.sim
        for nq in vidsch.nodes:
            self._ready[nq.ordinal] = {}
            self._system[nq.ordinal] = deque()
        os = Os(self)
        self.policy = self._guard("setup", lambda: self._cls(os, self._settings))

    def ready_list(self, node: int):
        return self._ready[node].keys()

    # -- VidSch's questions ---------------------------------------------------------------------------
    def ready(self, ctx, now: int) -> None:
        ctx.ready_since = now
        if ctx.system:
            self._system[ctx.node].append(ctx)
            return
        view = view_of(ctx)
        self._ready[ctx.node][view] = None
        self._guard(f"on_ready({view.name})", lambda: self.policy.on_ready(view, now))

    def idle(self, ctx) -> None:
        if ctx.system:
            self._system[ctx.node].remove(ctx)
            return
        view = view_of(ctx)
        del self._ready[ctx.node][view]
        now = self.sim.now
        self._guard(f"on_idle({view.name})", lambda: self.policy.on_idle(view, now))

    def has_ready(self, node: int) -> bool:
        return bool(self._system[node]) or bool(self._ready[node])

    def pick(self, node: int, now: int):
        system = self._system[node]
        if system:
            ctx = system[0]
            system.rotate(-1)
            return ctx
        ready = self._ready[node]
        if not ready:
            return None
        call = f"pick(node={node})"
        view = self._guard(call, lambda: self.policy.pick(node, now))
        self.picks += 1
        if view is None:
            nq = self.vidsch.nodes[node]
            if len(nq.hw) == nq.stopped and not nq.preemption.fence and not self._timers and not nq.worker_busy:
                names = ", ".join(v.name for v in ready)
                raise self._stop(call, f"returned None while node {node} is idle and {names} "
                                       f"{'is' if len(ready) == 1 else 'are'} ready, with no timer set: "
                                       "the work would wait forever")
            return None
        ctx = getattr(view, "_ctx", None)
        if ctx is None or view not in ready:
            what = view.name if ctx is not None else repr(view)
            state = "not ready" if ctx is not None and ctx.node == node else "not a context of this node"
            raise self._stop(call, f"picked {what}, which is {state}; ready: "
                                   f"{', '.join(v.name for v in ready)}")
        return ctx

    def preempt_candidate(self, node: int, running, run_since: int, now: int):
        return None, None

    def preempting(self, running, cand) -> None:
        pass

    def shielded(self, node: int, running, run_since: int, now: int):
        return None

    def started(self, node: int, ctx) -> None:
        pass

    def reprioritize(self, contexts, change) -> None:
        change()
        self.changed(contexts)

    def changed(self, contexts) -> None:
        now = self.sim.now
        for ctx in contexts:
            if not ctx.system:
                view = view_of(ctx)
                self._guard(f"on_changed({view.name})", lambda: self.policy.on_changed(view, now))

    # -- the research hooks ---------------------------------------------------------------------------
    def queued(self, packet) -> None:
        if packet.context.system:
            return
        p = SchedPacket(packet)
        self._guard(f"on_queued({packet.context.full_name} #{packet.seq})",
                    lambda: self.policy.on_queued(p, self.sim.now))

    def packet_started(self, node: int, packet) -> None:
        if packet.context.system:
            return
        p = SchedPacket(packet)
        self._guard(f"on_started({packet.context.full_name} #{packet.seq})",
                    lambda: self.policy.on_started(p, node, self.sim.now))

    def packet_completed(self, node: int, packet, gpu_ns: int) -> None:
        if packet.context.system:
            return
        p = SchedPacket(packet)
        self._guard(f"on_completed({packet.context.full_name} #{packet.seq})",
                    lambda: self.policy.on_completed(p, node, gpu_ns, self.sim.now))

    def packet_preempted(self, node: int, packet, gpu_ns: int) -> None:
        if packet.context.system:
            return
        p = SchedPacket(packet)
        self._guard(f"on_preempted({packet.context.full_name} #{packet.seq})",
                    lambda: self.policy.on_preempted(p, node, gpu_ns, self.sim.now))

    # -- what the policy asks of the OS -----------------------------------------------------------------
    def preempt(self, node: int) -> bool:
        vs = self.vidsch
        call = f"os.preempt(node={node})"
        if not isinstance(node, int) or not 0 <= node < len(vs.nodes):
            raise self._stop(call, f"there is no node {node!r}")
        if not vs.preemptor.enabled:
            raise self._stop(call, "the driver did not declare preemption (DXGK_DRIVERCAPS.PreemptionAware); "
                                   "a policy checks self.os.can_preempt first")
        nq = vs.nodes[node]
        if node in self._preempting or nq.preemption.fence or len(nq.hw) == nq.stopped:
            return False
        if nq.hw[nq.stopped].context.system:
            return False  # VidMm's paging runs first: it is not the policy's to preempt
        self._preempting.add(node)
        # DxgkDdiPreemptCommand is called at DISPATCH_LEVEL, never from inside the policy's call.
        self.sim.soon(self._preempt_now, nq, DISPATCH)
        return True

    def _preempt_now(self, nq) -> None:
        self._preempting.discard(nq.ordinal)
        vs = self.vidsch
        if nq.preemption.fence or len(nq.hw) == nq.stopped or vs.stopped or nq.tdr.held_for is not None:
            return
        running = nq.hw[nq.stopped].context
        if running.system:
            return
        vs.preemptor.request(nq, running, None, reason="policy")

    def set_timer(self, at: int, token) -> object:
        if not isinstance(at, int) or isinstance(at, bool):
            raise self._stop(f"os.set_timer({at!r})", "the time must be an int of virtual ns")
        handle = object()
        timer = self.sim.at(max(at, self.sim.now), self._fired, (handle, token), DISPATCH)
        self._timers[handle] = timer
        return handle

    def cancel_timer(self, handle) -> None:
        timer = self._timers.pop(handle, None)
        if timer is not None:
            timer.cancel()

    def _fired(self, arg) -> None:
        handle, token = arg
        if self._timers.pop(handle, None) is None:
            return
        now = self.sim.now
        self._guard(f"on_timer({token!r})", lambda: self.policy.on_timer(token, now))
        vs = self.vidsch
        for nq in vs.nodes:
            if self.has_ready(nq.ordinal):
                vs._wake_worker(nq)


__all__ = ["PolicyHost"]
