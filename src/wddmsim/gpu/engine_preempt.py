"""An engine's preemption, and the context save and restore of hardware scheduling.

Preemption (:meth:`Engine.request_preempt`): the engine stops at its ``granularity`` and raises
its preemption cause. ``dma_buffer``: the running DMA buffer finishes (with the ring's fence after
it) and nothing queued behind it starts. ``primitive``: the running command finishes and the buffer
stops before its next command. ``interval``: a WORK command stops at the next multiple of
``preempt_interval`` ns of its own work. ``instruction``: a WORK command stops where it is (the
finest, D3DKMDT ``SHADER_BOUNDARY``). ``none``: everything on the ring runs first. A stop inside a
buffer first spends ``preempt_save`` ns saving its state (busy time; the cause is raised after it),
so the preemption latency is the way to the stop point plus that save. The engine's own account
of what its preemption stops cost it, :attr:`Engine.preempt_cost_ns`, adds up those saves and the
work a stop discards and runs again: a stop placed before a command the engine has already
decoded (a WORK run ahead but not begun, a stalled WAIT) decodes it again after the resume, one
``command_cost``. Nothing else is lost: every granularity keeps the progress made up to the stop
point, and the engine restores for free (the driver's resubmission is ordinary ring work; under a
hardware scheduler the ring packets fetched past the stop point are fetched again, not counted
there). What was left
of an interrupted buffer is in :attr:`Engine.preempt_state` (buffer address, offset of the next
command, buffer end, ns of WORK still owed; the address is None when the engine stopped in a WORK on
the ring itself) for the driver to resume from; the ring is stopped (``stopped``, the status
bit a driver reads as "preempted") and :meth:`Engine.reset_ring` empties it. A WAIT stalled inside
a buffer is always preemptible.

Hardware scheduling (:mod:`.scheduler`): a ``listener`` (None by default) owns the ring registers
and is told when a preemption stops the engine, when the ring drains and when the ring (or a buffer
it called) stalls on a WAIT (``engine_stopped``/``engine_drained``/``engine_stalled``), instead of
the CPU's preemption cause, and after :meth:`Engine.reset` (``engine_reset``).
:meth:`Engine.save_context` and :meth:`Engine.load_context` save and restore one ring's execution
(an :class:`EngineContext`: ring registers, stop point, WORK owed, a WAIT to perform again, the
address-space register); :attr:`Engine.waiting_on` names the WAIT it stalled on. With a listener,
a preemption also rewinds the read pointer over ring packets fetched ahead of the stop point, so
they run after the resume.

:class:`EnginePreempt` is the third layer of :class:`~wddmsim.gpu.engine.Engine` (over
:mod:`.engine_execute`); it is compiled with the rest of the engine (``wddmsim._native.COMPILED``):
the command processor stops through it.

Spec: docs/gpu.md ("Preemption", "Hardware scheduling").
"""

from __future__ import annotations

from typing import Any

from ..sim import DEVICE
from . import commands as C
from .engine_execute import EngineExecute, _Owed
from .engine_state import FAULTED, HELD, HUNG, IDLE, MID_BUFFER, RUNNING, WAITING
from .engineparts import EngineFault, PreemptState


class EnginePreempt(EngineExecute):
    """Preemption and context save and restore (see the module doc): the third layer of
    :class:`~wddmsim.gpu.engine.Engine`."""

    __slots__ = ()

    # -- preemption --------------------------------------------------------------------------------
    def request_preempt(self) -> None:
        """The driver asks the engine to stop at its granularity (see the module doc)."""
        if self.state in (FAULTED, HUNG):
            return  # a stopped engine answers nothing: the request will time out
        self._preempt = True
        now = self.sim.now
        if self.state in (IDLE, HELD):
            if self.state == HELD:
                self._buf = None
                self._stack.clear()
            self._stop(now, None)
            return
        if self.state == WAITING:
            # A stalled WAIT is preemptible at every granularity: resume at the WAIT itself.
            if self._stack and self.listener is not None:
                return  # in a nested buffer a context save cannot hold it: stop further on
            if self._watch is not None:
                self._watch.cancel()
                self._watch = None
            saved: Any = None  # the stop point to keep (a 4-tuple whose address may be None)
            if self._buf is not None and not self._stack:
                saved = (self._buf_addr, self._pc - self._pending.length, self._end, 0)
                self.preempt_cost_ns += self._redecode()  # the resume starts at the WAIT again
            self._stop_saving(now, saved)
            return
        if self.granularity not in MID_BUFFER or self._stack:
            return  # the loop stops at the next submission boundary (or when the ring is empty)
        # Running ahead: find the WORK command executing at ``now`` (or the next one to start).
        for start, end, addr, before, after, buf_end, rptr in self._ahead:
            if end <= now:
                continue
            if start >= now:
                stop, saved = start, (addr, before, buf_end, end - start if before == after else 0)
                if before != after:
                    self.preempt_cost_ns += self._redecode()  # decoded, not begun: decoded again
            elif self.granularity == "primitive":
                stop, saved = end, (addr, after, buf_end, 0)
            elif self.granularity == "instruction":
                stop, saved = now, (addr, after, buf_end, end - now)
            else:
                step = self.preempt_interval
                stop = min(start + -(-(now - start) // step) * step, end)
                saved = (addr, after, buf_end, end - stop)
            if addr is not None and saved[1] >= buf_end and not saved[3]:
                return  # the buffer ends there: its fence lands and the engine stops after it
            # Undo what was run ahead past the stop point.
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            self.busy_ns -= self._t - stop
            bus = self.gpu.bus
            if bus is not None:
                bus.rewound(self.index, stop)
            self._pending = None
            if self.listener is not None:
                self.rptr = rptr  # ring packets fetched past the stop point are fetched again
            self._stop_saving(stop, saved)
            return
        # No WORK ahead: the buffer is ending; stop at the boundary after its fence.

    def _stop_saving(self, t: int, saved) -> None:
        """Stop at local time ``t``; with progress to keep (``saved``), first spend
        ``preempt_save`` ns saving it (busy time), so the preemption is reported that much later."""
        if saved is not None and self.preempt_save:
            t += self.preempt_save
            self.busy_ns += self.preempt_save
            self.preempt_cost_ns += self.preempt_save
        self._stop(t, saved)

    def _redecode(self) -> int:
        """What decoding a command again after a resume costs (nothing in stepped mode)."""
        return 0 if self.mode == "stepped" else self.command_cost

    def _stop_at(self, arg) -> None:
        stop, saved = arg
        self._stop(stop, saved)

    def _stop(self, t: int, saved) -> None:
        """Stop for preemption at local time ``t``: state saved, ring halted, cause raised."""
        if t > self.sim.now:
            self.state = RUNNING
            self._timer = self.sim.at(t, self._stop_at, (t, saved), irql=DEVICE)
            return
        self._timer = None
        self._preempt = False
        self._pending = None
        if self.gpu.bus is not None:
            self.gpu.bus.stopped(self.index, t)
        self._buf = None
        self._stack.clear()
        self._vdepth = 0
        self._ahead.clear()
        self._t = t
        self.state = IDLE
        self.preempt_state = None if saved is None else PreemptState(saved, self.address_space)
        self.preemptions += 1
        if self.listener is not None:
            self.listener.engine_stopped(self)
        else:
            self.stopped = True
            self.gpu.irq.assert_cause(self._preempt_bit)

    def reset_ring(self) -> None:
        """Empty the ring (both pointers to 0) after a preemption; the engine must be stopped."""
        if self.state not in (IDLE, HELD):
            raise EngineFault(f"{self.name}: ring reset while {self.state}")
        self.rptr = self.wptr = 0
        self.state = IDLE
        self._boundary = True
        self.preempt_state = None
        self.stopped = False

    # -- context save and restore (hardware scheduling) --------------------------------------------
    @property
    def waiting_on(self) -> tuple[int, int, int] | None:
        """The WAIT the engine is stalled on: (memory address it watches, value, flags); else None."""
        if self.state != WAITING or self._watch is None:
            return None
        cmd = self._pending
        return (self._watch.addr, cmd.value, cmd.flags)

    def save_context(self) -> EngineContext:
        """Context save: the ring registers and where execution stands, for :meth:`load_context`.

        The engine must be idle (stopped by a preemption, whose ``preempt_state`` is kept, or with
        its ring drained) or stalled on a WAIT of its ring or of a buffer called from the ring (a
        stall is preemptible: the watch is dropped and the WAIT is performed again, at no second
        command cost, first thing after the load). The engine is left idle, owing nothing."""
        st = self.state
        wait = None
        stop: Any
        if st == WAITING and not self._stack and self._pending is not None and self._pending.opcode == C.WAIT:
            wait = self._pending
            stop = None if self._buf is None else (self._buf_addr, self._pc, self._end, 0)
            if self._watch is not None:
                self._watch.cancel()
                self._watch = None
            self._pending = None
            self._buf = None
            self._vdepth = 0
            self._t = self.sim.now
        elif st == IDLE:
            stop = self.preempt_state
            if stop is not None:
                stop = tuple(stop)
                if stop[0] is None and not stop[3]:
                    stop = None  # stopped on the ring with nothing owed: the ring says it all
        else:
            raise EngineFault(f"{self.name}: context saved while {st}")
        ctx = EngineContext(self.ring_base, self.ring_size, self.rptr, self.wptr, stop, wait, self._boundary,
                            self.address_space)
        self.state = IDLE
        self.preempt_state = None
        self._preempt = False
        self._ahead.clear()
        return ctx

    def load_context(self, ctx: EngineContext) -> bool:
        """Context restore: continue exactly where ``ctx`` was saved: a WAIT saved at first, else the
        WORK still owed, then the rest of the interrupted buffer, then the ring. The engine must be
        idle. Returns False, leaving it idle, when there is nothing to run.

        A hung engine (a hang that struck while no context was loaded) takes the context's ring but
        runs none of it, as if it had hung right after the load: the context stays loaded, making
        no progress, until an engine reset drops it. Returns True then."""
        if self.state == HUNG:
            self.ring_base, self.ring_size = ctx.ring_base, ctx.ring_size
            self.rptr, self.wptr = ctx.rptr, ctx.wptr
            self.address_space = ctx.address_space
            return True
        if self.state != IDLE:
            raise EngineFault(f"{self.name}: context loaded while {self.state}")
        self.ring_base = ctx.ring_base
        self.ring_size = ctx.ring_size
        self.rptr = ctx.rptr
        self.wptr = ctx.wptr
        self.address_space = ctx.address_space
        self._boundary = ctx.boundary
        self.preempt_state = None
        self._preempt = False
        self._pending = None
        self._buf = None
        self._stack.clear()
        self._ahead.clear()
        self._vdepth = 0
        now = self.sim.now
        self._t = now
        stop = ctx.stop
        if stop is not None:
            addr, pc, end, owed = stop
            if addr is not None:
                try:
                    if self.address_space:  # the buffer was fetched in virtual mode
                        self._buf = self.gpu.mmu.read(self.address_space, addr, end)
                        self._vdepth = 1
                    else:
                        self._buf = self.mem.read(self.gpu.translate(addr), end)
                except EngineFault as exc:
                    self._buf = None
                    self._fault_now(exc)
                    return True
                self._buf_addr, self._pc, self._end = addr, pc, end
                self._top_end = addr + end
            if owed:
                self._pending = _Owed(owed, addr, pc, end)
        if ctx.wait is not None:
            self._pending = ctx.wait
        if self._pending is None and self._buf is None and self.rptr == self.wptr:
            return False
        self.state = RUNNING
        self._run()
        return True

class EngineContext:
    """One ring's context save (:meth:`Engine.save_context`, :meth:`Engine.load_context`): the ring
    registers, the preemption stop point (``preempt_state``'s 4-tuple, or None), a WAIT to perform
    again first (or None), whether the ring stood between submissions, the address-space register.
    A hardware scheduler keeps one per queue and moves ``wptr`` for doorbells while it is not loaded."""

    __slots__ = ("ring_base", "ring_size", "rptr", "wptr", "stop", "wait", "boundary", "address_space")

    def __init__(self, ring_base: int, ring_size: int, rptr: int = 0, wptr: int = 0, stop=None, wait=None,
                 boundary: bool = True, address_space: int = 0):
        self.ring_base = ring_base
        self.ring_size = ring_size
        self.rptr = rptr
        self.wptr = wptr
        self.stop = stop
        self.wait = wait
        self.boundary = boundary
        self.address_space = address_space

    @property
    def pending(self) -> bool:
        """Loading it gives the engine something to do."""
        return self.stop is not None or self.wait is not None or self.rptr != self.wptr

    def __repr__(self) -> str:
        return (f"<EngineContext ring {self.ring_base:#x}+{self.ring_size:#x} rptr {self.rptr:#x} wptr {self.wptr:#x}"
                f" stop {self.stop} wait {self.wait is not None}>")
