"""The host of a research policy inside the GPU's own scheduler (hardware scheduling): it puts one
:class:`~wddmsim.policies.hwprotocol.HwPolicy` in place of the band rules on every engine, tells
it what happens, asks it to pick, and holds it to the protocol.

Each engine's firmware (:class:`wddmsim.gpu.scheduler.GpuScheduler`) talks to its policy through
:class:`wddmsim.gpu.policy.GpuPolicy`; :class:`HwPolicyHost` gives every engine a seat
(:class:`_Seat`, one such policy) that answers it for the researcher's policy:

- VidMm's system context (paging, in the REALTIME band under Windows' policy) gets a free engine
  first, ahead of every process, as under the OS-side host; the research policy never sees it;
- ``pick`` is the researcher's ``pick(node, now)``, checked: it must return a context runnable on
  the engine, and may leave a free engine idle only with a timer set;
- ``deadline`` is always None: nothing preempts but the policy (``self.os.preempt``), a suspend
  or an engine reset; the band table the driver programs is kept, unused;
- a policy that raises is stopped. A breach is a :class:`PolicyError` naming the policy, the call
  and the instant, as on the OS side; the run stops there, and no bug check is laid on the driver.
"""

from __future__ import annotations

from ..gpu.policy import GpuPolicy
from ..sim import DEVICE
from .checks import Checks
from .hwprotocol import HwOs, HwPolicy, HwSchedContext


class HwPolicyHost(Checks):
    """Runs ``policy_cls`` (a :class:`HwPolicy` subclass, made with ``settings``) on every engine of
    a GPU: :meth:`bind` it to the GPU before the driver starts hardware scheduling."""

    who = "GPU scheduling policy"

    def __init__(self, policy_cls: type, settings, label: str):
        self.label = label
        self._cls = policy_cls
        self._settings = settings
        self.policy: HwPolicy | None = None
        self.gpu = None
        self.sim = None
        self._os_of = lambda cid: None
        self._seats: dict[int, _Seat] = {}
        self._timers: dict[object, object] = {}
        self._preempting: set[int] = set()
        self.picks = 0

    def bind(self, gpu, os_context=None) -> None:
        """Become the policy of ``gpu``'s hardware schedulers (``GPU.hw_policy``) and make the
        researcher's policy (its ``setup`` runs now). ``os_context(cid)``: the OS's context the
        firmware calls ``cid`` (for names and hints), or None."""
        self.gpu = gpu
        self.sim = gpu.sim
        if os_context is not None:
            self._os_of = os_context
        gpu.hw_policy = self._seat
        os = HwOs(self)
        self.policy = self._guard("setup", lambda: self._cls(os, self._settings))

    def _seat(self, index: int) -> _Seat:
        seat = self._seats[index] = _Seat(self, index)
        return seat

    # -- what HwOs asks -----------------------------------------------------------------------------------
    def ready_list(self, node: int):
        seat = self._seats.get(node)
        return seat.ready.keys() if seat is not None else ()

    def running(self, node: int) -> HwSchedContext | None:
        seat = self._seats.get(node)
        if seat is None:
            return None
        c = seat.fw.current_context
        return None if c is None or seat.system_context(c) else seat.view(c)

    def preempt(self, node: int) -> bool:
        call = f"os.preempt(node={node})"
        if not isinstance(node, int) or not 0 <= node < len(self.gpu.engines):
            raise self._stop(call, f"there is no node {node!r}")
        seat = self._seats.get(node)
        running = None if seat is None else seat.fw.current_context
        if running is None or node in self._preempting or seat.system_context(running):
            return False  # (VidMm's paging runs first: it is not the policy's to preempt)
        self._preempting.add(node)
        # The firmware asks its engine after the policy's call returns, at this instant (if the
        # context is still there: it may have left in the meantime).
        self.sim.soon(self._preempt_now, (seat, running), DEVICE)
        return True

    def _preempt_now(self, arg) -> None:
        seat, running = arg
        self._preempting.discard(seat.index)
        if seat.fw.current_context is running:
            seat.fw.preempt()

    def set_timer(self, at: int, token) -> object:
        if not isinstance(at, int) or isinstance(at, bool):
            raise self._stop(f"os.set_timer({at!r})", "the time must be an int of virtual ns")
        handle = object()
        self._timers[handle] = self.sim.at(max(at, self.sim.now), self._fired, (handle, token), DEVICE)
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
        for seat in self._seats.values():
            seat.fw.kick()

class _Seat(GpuPolicy):
    """The researcher's policy as engine ``index``'s firmware policy."""

    def __init__(self, host: HwPolicyHost, index: int):
        self.host = host
        self.index = index
        self.ready: dict[HwSchedContext, None] = {}
        self.system: dict = {}  # VidMm's contexts runnable here, first come first
        self.name = host.label

    def system_context(self, c) -> bool:
        """``c`` is one of VidMm's system contexts (paging), never shown to the policy."""
        ctx = self.host._os_of(c.cid)
        return ctx is not None and ctx.system

    def view(self, c) -> HwSchedContext:
        v = c.policy_data
        if v is None:
            v = c.policy_data = HwSchedContext(c, self.fw, self.host._os_of)
        return v

    # -- the decisions --------------------------------------------------------------------------------------
    def pick(self, now: int):
        if self.system:
            return next(iter(self.system))
        host = self.host
        node = self.index
        call = f"pick(node={node})"
        view = host._guard(call, lambda: host.policy.pick(node, now))
        host.picks += 1
        ready = self.ready
        if view is None:
            if not host._timers:
                names = ", ".join(v.name for v in ready)
                raise host._stop(call, f"returned None while node {node} is idle and {names} "
                                       f"{'is' if len(ready) == 1 else 'are'} ready, with no timer set: "
                                       "the work would wait forever")
            return None
        c = getattr(view, "_c", None) if isinstance(view, HwSchedContext) else None
        if c is None or view not in ready:
            what = view.name if c is not None else repr(view)
            state = "not ready" if c is not None and view.node == node else "not a context of this node"
            raise host._stop(call, f"picked {what}, which is {state}; ready: {', '.join(v.name for v in ready)}")
        return c

    def deadline(self, cur, now: int):
        return None

    # -- what the policy is told ------------------------------------------------------------------------------
    def runnable(self, c, now: int) -> None:
        if self.system_context(c):
            self.system[c] = None
            return
        v = self.view(c)
        self.ready[v] = None
        self.host._guard(f"on_ready({v.name})", lambda: self.host.policy.on_ready(v, now))

    def unrunnable(self, c, now: int) -> None:
        if self.system.pop(c, 0) is None:
            return
        v = self.view(c)
        self.ready.pop(v, None)
        self.host._guard(f"on_idle({v.name})", lambda: self.host.policy.on_idle(v, now))

    def changed(self, c, before: tuple, now: int) -> None:
        if self.system_context(c):
            return
        v = self.view(c)
        self.host._guard(f"on_changed({v.name})", lambda: self.host.policy.on_changed(v, now))

    def switched_in(self, c, now: int) -> None:
        if c in self.system:
            return
        v = self.view(c)
        node = self.index
        self.host._guard(f"on_started({v.name})", lambda: self.host.policy.on_started(v, node, now))

    def switched_out(self, c, ran_ns: int, preempted: bool, now: int) -> None:
        if self.system_context(c):
            return
        v = self.view(c)
        node = self.index
        policy = self.host.policy
        if preempted:
            self.host._guard(f"on_preempted({v.name})", lambda: policy.on_preempted(v, node, ran_ns, now))
        else:
            self.host._guard(f"on_stopped({v.name})", lambda: policy.on_stopped(v, node, ran_ns, now))


__all__ = ["HwPolicyHost"]
