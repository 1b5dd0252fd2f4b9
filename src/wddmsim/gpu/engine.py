"""An engine: a ring buffer in memory, read and write pointers, a doorbell and a command processor.

The driver writes command packets (``commands``) into the ring at the write pointer and rings the
doorbell with the new write pointer. The command processor fetches packets at the read pointer,
follows INDIRECT packets into DMA buffers (fetched whole when the INDIRECT is reached, with a
return to the ring after them), and executes each command under a simple timing model:

- every packet costs ``command_cost`` ns to fetch and decode;
- WORK adds its duration; FILL and COPY add ``ceil(size / bandwidth)`` ns;
- a command whose effect others can see (FENCE, FILL, COPY, TIMESTAMP, FLIP, WAIT) takes effect at
  the engine's local time: the processor runs ahead through invisible work (NOP, WORK, INDIRECT)
  and schedules one timer for the instant the next visible effect lands. A typical submission
  (INDIRECT to a WORK buffer, then a FENCE with interrupt) costs one timer.

Pointers are byte offsets into the ring, ``0 <= ptr < ring_size``; the ring is empty when they are
equal. A packet never wraps: the driver pads the ring's end with a NOP. The read pointer moves as
packets are fetched (the processor prefetches, so ring space frees when a packet starts, not when
it ends).

Two modes, as in drm_sched's mock GPU: ``timed`` (work takes its modelled duration) and
``stepped`` (nothing runs until a test calls :meth:`Engine.step`; each step runs ring packets up
to and including the next interrupting FENCE, i.e. one submission, at the current instant).

Preemption (:meth:`Engine.request_preempt`) stops the engine at its ``granularity``, keeping what
was left of an interrupted buffer in :attr:`Engine.preempt_state`; :meth:`Engine.save_context` and
:meth:`Engine.load_context` save and restore one ring's execution for a hardware scheduler
(:mod:`.scheduler`, the engine's ``listener``): :mod:`.engine_preempt` says how. Faults, hangs and
resets: :mod:`.engine_state`. Virtual addressing (the ``address_space`` register, privileged MMU
packets): :mod:`.engine_execute`.

Drivers reach engines only through the register interface, :mod:`.mmio` (``GPU.mmio``).

Engines know nothing of WDDM: they see memory, a doorbell and an interrupt bit.

One engine, four modules, one job each, stacked as one class (each layer subclasses the one
before; the four are compiled together, ``wddmsim._native.COMPILED``, so the calls between them
stay native): :mod:`.engine_state` (the attributes, the ring registers, the two modes, faults,
hangs and resets), :mod:`.engine_execute` (what each command does when issued and when it lands),
:mod:`.engine_preempt` (preemption, context save and restore) and this module, the command
processor: the fetch and decode loop that drives them, and :class:`Engine`. Every name the engine's
modules define is importable from here.

Spec: docs/gpu.md (engines, command processor, two completion modes).
"""

from __future__ import annotations

from typing import Any

from . import commands as C
from .engine_execute import (  # noqa: F401 (importable from here)
    _APERTURE_BASE, _FENCE_INTERRUPT, _FLIP_NO_WAIT, _ISSUE, _ISSUE_STEPPED, _LATCH, _OWED, _PAGE_MASK, _PERFORM,
    EngineExecute, _Latch, _Owed,
)
from .engine_preempt import EngineContext, EnginePreempt  # noqa: F401 (importable from here)
from .engine_state import (  # noqa: F401 (importable from here)
    FAULTED, GRANULARITIES, HELD, HUNG, IDLE, MID_BUFFER, PREEMPT_CAUSE_SHIFT, RUNNING, WAITING, EngineState,
    FaultRecord,
)
# Interpreted in every build (interpreted code subclasses EngineFault; PreemptState is a tuple).
from .engineparts import EngineFault, PreemptState  # noqa: F401 (importable from here)

_decode_packet = C.decode_packet  # ring packets, memoized by their bytes
_decode_cached = C.decode_cached


class Engine(EnginePreempt):
    """One engine of the GPU (3D, compute, copy, ...) with its ring and command processor."""

    __slots__ = ()

    # -- the command processor ------------------------------------------------------------------
    # Each command is issued as it is decoded and performed when it lands (:mod:`.engine_execute`).

    def _run(self) -> None:
        """The command processor: perform the command whose instant has come, or fetch and issue
        the next one, until the fetch or a handler stops it. A fault (a malformed packet, an
        address nothing backs) stops the engine."""
        if self.state != RUNNING:
            return  # a timer the engine has left behind (it stopped, hung or faulted)
        sim = self.sim
        if self.mode == "stepped":
            cost, issue = 0, _ISSUE_STEPPED
        else:
            cost, issue = self.command_cost, _ISSUE
        perform = _PERFORM
        t: Any = self._t  # None once a handler stops the fetching
        if t < sim.now:
            t = sim.now
        self._ahead.clear()
        try:
            while t is not None:
                cmd = self._pending
                if cmd is not None:  # its instant has come
                    self._pending = None
                    self._ahead.clear()
                    t = perform[cmd.opcode](self, cmd, t)
                    continue
                if self._buf is not None and self._pc < self._end and not self._preempt:
                    cmd = _decode_cached(self._buf, self._pc, self._end)  # _fetch's common case
                    self._pc += cmd.length
                else:
                    cmd = self._fetch(t)
                    if cmd is None:
                        return
                t += cost
                self.busy_ns += cost
                t = issue[cmd.opcode](self, cmd, t)
        except (EngineFault, C.CommandError) as exc:
            self._fault_now(exc)

    # -- fetching ---------------------------------------------------------------------------------
    def _fetch(self, t: int):
        """The next command at local time ``t``: from the buffer being executed (back in the buffer
        or on the ring that called it when it ends), else from the ring. None where the engine
        stops fetching instead: the ring is empty, a preemption stops it, or stepped mode holds it."""
        while self._buf is not None:
            if self._pc < self._end:
                if self._preempt and not self._stack and self.granularity in MID_BUFFER:
                    self._stop_saving(t, (self._buf_addr, self._pc, self._end, 0))
                    return None
                cmd = _decode_cached(self._buf, self._pc, self._end)
                self._pc += cmd.length
                return cmd
            self._return(t)
        rptr = self.rptr
        if rptr == self.wptr:
            self._drained(t)
            return None
        if self._preempt and self._boundary and self.granularity != "none":
            self._stop(t, None)
            return None
        if self.mode == "stepped" and self._steps <= 0:
            self.state = HELD
            self._t = t
            return None
        base = self.ring_base + rptr
        mem = self.mem
        hdr = mem.read_u32(base)
        n = (hdr >> 16) * 4
        size = self.ring_size
        if n == 0 or rptr + n > size:
            raise EngineFault(f"{self.name}: bad ring packet at ring offset {rptr:#x} (header {hdr:#010x})")
        # The bytes in memory are what runs; a decode of the same bytes is reused.
        cmd = _decode_packet(mem.read(base, n))
        self.rptr = (rptr + n) % size
        self.packets += 1
        self._boundary = False
        return cmd

    def _return(self, t: int) -> None:
        """The buffer being executed ended at ``t``: back to the buffer that called it, or to the ring."""
        if self._vdepth:  # leaving a buffer fetched in virtual mode
            self._vdepth -= 1
        if self._stack:
            self._buf, self._pc, self._end = self._stack.pop()
        else:
            self._buf = None
            bus = self.gpu.bus
            if bus is not None:
                bus.finished(self.index, self._top_end, t, self.address_space)

    def _drained(self, t: int) -> None:
        """The ring is empty: the engine is idle from ``t`` (stopped, if a preemption was asked for).
        A hardware scheduler hears of it when the ring's last work has ended."""
        if self.listener is not None and t > self.sim.now:
            self._resume_at(t)
            return
        self.state = IDLE
        self._t = t
        if self._preempt:
            self._stop(t, None)
        elif self.listener is not None:
            self.listener.engine_drained(self)
