"""What an engine does with each command: the issue and perform handlers of the command processor.

Every command goes through two phases (docs/gpu-commands.md, "How an engine executes each
packet"). It is *issued* as it is decoded, at the engine's local time ``t``, which runs ahead of
now: it costs ``command_cost``, and the commands nobody else can see (NOP, WORK, INDIRECT) are done
there and then. Every other command *lands*: it is *performed* at its instant, at once when ``t``
has come, else from a timer at ``t`` (the processor stops running ahead). :data:`_ISSUE`,
:data:`_ISSUE_STEPPED` and :data:`_PERFORM`, below the class, give each opcode its handler. A
handler takes the command and ``t`` and returns the local time after it, or None where the engine
stops fetching: it waits for a timer, a memory write or a step, or it stopped.

Timing: WORK adds its duration; FILL, COPY and UPDATE_PAGE_TABLE add ``ceil(size / bandwidth)`` ns;
in ``stepped`` mode work and transfers take no time. A WAIT watches the memory it compares and
checks again whenever it is written, rather than polling.

Virtual addressing: the ``address_space`` register (set by SET_ADDRESS_SPACE; 0, the default, is
physical addressing) makes every address a command carries a GPU virtual address, translated by
``gpu.mmu`` (:mod:`.mmu`); the ring is always read physically. The MMU packets (SET_ADDRESS_SPACE,
UPDATE_PAGE_TABLE, FLUSH_TLB) are privileged: they fault in a buffer fetched in virtual mode.

:class:`EngineExecute` is the second layer of :class:`~wddmsim.gpu.engine.Engine` (over
:mod:`.engine_state`); it is compiled with the rest of the engine (``wddmsim._native.COMPILED``):
every packet goes through it.

Spec: docs/gpu-commands.md ("How an engine executes each packet"), docs/gpu.md ("Engines",
"Virtual addressing (the MMU)").
"""

from __future__ import annotations

import struct
from math import ceil
from typing import Any

from ..sim import DEVICE
from . import commands as C
from .engine_state import RUNNING, WAITING, EngineState
from .engineparts import EngineFault

_PAGE_MASK = 0xFFF  # page tables and address-space roots are 4 KiB aligned
# The flags the handlers test, as module globals (one lookup, not two).
_FENCE_INTERRUPT = C.FENCE_INTERRUPT
_FLIP_NO_WAIT = C.FLIP_NO_WAIT
#: Below the aperture a GPU physical address is the memory address (device.translate's first case;
#: device.py checks the two agree).
_APERTURE_BASE = 0x200_0000_0000

_LATCH = -1
_OWED = -2


class _Owed:
    """WORK still owed from a preemption, run first after :meth:`Engine.load_context` (internal
    pseudo-command; ``addr``/``pc``/``end`` say where its buffer resumes, ``addr`` None: the ring)."""

    __slots__ = ("ns", "addr", "pc", "end")
    opcode = -2  # _OWED (a literal: a compiled class takes only literal attribute defaults)

    def __init__(self, ns: int, addr: int | None, pc: int, end: int):
        self.ns = ns
        self.addr = addr
        self.pc = pc
        self.end = end


class _Latch:
    """A flip waiting for its vsync inside the engine (internal pseudo-command)."""

    __slots__ = ("source", "surface")
    opcode = -1  # _LATCH (a literal, as _Owed.opcode)

    def __init__(self, source, surface: int):
        self.source = source
        self.surface = surface


class EngineExecute(EngineState):
    """What an engine does with each command (see the module doc): the second layer of
    :class:`~wddmsim.gpu.engine.Engine`."""

    __slots__ = ()

    # -- timing -----------------------------------------------------------------------------------
    def _resume_at(self, t: int, pending=None) -> None:
        """Stop running ahead until local time ``t``; then perform ``pending`` (None: fetch on)."""
        self._pending = pending
        self._t = t
        self._timer = self.sim.at(t, self._run, irql=DEVICE)

    def _at(self, t: int, callback, *arg) -> None:
        """Stop fetching; ``callback(*arg)`` (no argument or one) at local time ``t``, at once
        when it has come."""
        self._t = t
        if t > self.sim.now:
            if arg:
                self._timer = self.sim.at(t, callback, arg[0], irql=DEVICE)
            else:
                self._timer = self.sim.at(t, callback, irql=DEVICE)
        else:
            callback(*arg)

    def _address(self, addr: int, write: bool) -> int:
        """The memory address behind a command's ``addr``: a virtual address in the engine's address
        space when it has one (``write``: the access writes), else a GPU physical address (through the
        GART in an aperture). Below the aperture a physical address is the memory address itself:
        the handlers take that common case without calling this."""
        if self.address_space:
            return self.gpu.translate(self.gpu.mmu.translate(self.address_space, addr, write))
        return addr if addr < _APERTURE_BASE else self.gpu.translate(addr)

    # -- issue: each command as it is decoded ---------------------------------------------------
    def _nop(self, cmd, t: int) -> int:
        """NOP: nothing (and, in stepped mode, WORK: it takes no time there)."""
        return t

    def _work(self, cmd, t: int) -> int:
        """WORK: the engine stays busy for ``duration_ns``. The processor runs ahead through it,
        noting where it runs, so that a preemption can stop inside it."""
        d = cmd.duration_ns
        if d:
            if self._buf is None:  # a WORK on the ring itself
                self._ahead.append((t, t + d, None, 0, 0, 0, self.rptr))
            else:
                self._ahead.append((t, t + d, self._buf_addr, self._pc - cmd.length, self._pc, self._end, self.rptr))
        self.busy_ns += d
        return t + d

    def _indirect(self, cmd, t: int) -> int | None:
        """INDIRECT: push a return point (the next packet) and fetch the called buffer whole; its
        packets run next. A buffer named by :meth:`fault_on_buffer` or :meth:`hang_on_buffer`
        faults or hangs the engine instead, at this instant."""
        addr = cmd.addr
        bus = self.gpu.bus
        if bus is not None:
            bus.fetched(self.index, addr, cmd.size, t, self._buf is not None, self.address_space)
        if self._buf is None:
            self._top_end = addr + cmd.size
        if self._fault_buffers and addr in self._fault_buffers:
            address, fatal = self._fault_buffers.pop(addr)
            self.fault_address = address
            self.fault_fatal = fatal
            self._at(t, self._raise_fault, f"page fault at {address:#x}")
            return None
        if self._hang_buffers and addr in self._hang_buffers:
            self._hang_buffers.discard(addr)
            self._at(t, self.hang)
            return None
        if self._buf is not None:
            self._stack.append((self._buf, self._pc, self._end))
        self._buf_addr = addr
        if self.address_space:
            if not self._fetch_virtual(cmd, t):
                return None
        else:
            self._buf = self.mem.read(addr if addr < _APERTURE_BASE else self.gpu.translate(addr), cmd.size)
        self._pc = 0
        self._end = cmd.size
        return t

    def _fetch_virtual(self, cmd, t: int) -> bool:
        """INDIRECT in virtual mode: read the buffer page by page. A page fault stops the engine
        at the INDIRECT's instant ``t`` (False: the loop must return)."""
        try:
            self._buf = self.gpu.mmu.read(self.address_space, cmd.addr, cmd.size)
        except EngineFault as exc:
            self._at(t, self._fault_now, exc)
            return False
        self._vdepth += 1
        return True

    def _transfer(self, cmd, t: int) -> int | None:
        """FILL, COPY, UPDATE_PAGE_TABLE: moving ``size`` bytes takes ``ceil(size / bandwidth)`` ns;
        then the command lands."""
        d = ceil(cmd.size / self.bandwidth)
        self.busy_ns += d
        return self._land(cmd, t + d)

    def _land(self, cmd, t: int) -> int | None:
        """A command others can see takes effect at local time ``t``: performed now when ``t`` has
        come, else when a timer brings now to ``t``."""
        if t > self.sim.now:
            self._pending = cmd
            self._t = t
            self._timer = self.sim.at(t, self._run, irql=DEVICE)
            return None
        self._ahead.clear()
        return _PERFORM[cmd.opcode](self, cmd, t)

    # -- perform: each visible command at its instant ---------------------------------------------
    def _fill(self, cmd, t: int) -> int:
        """FILL: write the little-endian u32 ``pattern`` over ``size`` bytes from ``dst``."""
        pattern = cmd.pattern.to_bytes(4, "little")
        if self.address_space:
            self.gpu.mmu.fill(self.address_space, cmd.dst, cmd.size, pattern)
        else:
            self.mem.fill(self.gpu.translate(cmd.dst), cmd.size, pattern)
        return t

    def _copy(self, cmd, t: int) -> int:
        """COPY: ``size`` bytes from ``src`` to ``dst``, like memmove."""
        if self.address_space:
            mmu = self.gpu.mmu
            mmu.write(self.address_space, cmd.dst, mmu.read(self.address_space, cmd.src, cmd.size))
        else:
            self.mem.copy(self.gpu.translate(cmd.src), self.gpu.translate(cmd.dst), cmd.size)
        return t

    def _fence(self, cmd, t: int) -> int:
        """FENCE: write the u64 ``value`` at ``addr``; with FENCE_INTERRUPT, then raise the engine's
        interrupt (on the ring, that ends a submission: a boundary, and a step in stepped mode)."""
        addr = cmd.addr
        if self.address_space or addr >= _APERTURE_BASE:
            addr = self._address(addr, True)
        self.mem.write_u64(addr, cmd.value)
        if cmd.flags & _FENCE_INTERRUPT:
            if self._buf is None:
                self._boundary = True
                bus = self.gpu.bus
                if bus is not None:
                    bus.ring_fence(self.index, cmd.value)
            self.interrupts += 1
            self.gpu.irq.assert_cause(self._irq_bit)
            if self.mode == "stepped":
                self._steps -= 1
        return t

    def _wait(self, cmd, t: int) -> int | None:
        """WAIT: block the engine until the compare holds. It watches the location and checks again
        whenever it is written (:meth:`_memory_changed`), rather than polling; a hardware scheduler
        hears of a stall of its ring."""
        addr = cmd.addr
        if self.address_space or addr >= _APERTURE_BASE:
            addr = self._address(addr, False)
        if self._wait_satisfied(cmd, addr):
            return t
        self._pending = cmd
        self.state = WAITING
        self._t = t
        self._watch = self.mem.watch(addr, self._memory_changed)
        if self.listener is not None and not self._stack:
            self.listener.engine_stalled(self)
        return None

    def _flip(self, cmd, t: int) -> int | None:
        """FLIP: latch ``surface`` for display ``source`` as ``interval`` says: at once for 0, else
        at a vsync, the engine stalled until then. With FLIP_NO_WAIT the flip waits in the source's
        pending-flip registers instead (a full queue stalls the engine until the next latch). In
        stepped mode it latches at once."""
        src = self.gpu.display_source(cmd.source)
        surface = cmd.surface
        if self.address_space:
            surface = self.gpu.mmu.translate(self.address_space, surface)
        if self.mode == "stepped":
            src.latch(surface, t)
        elif cmd.flags & _FLIP_NO_WAIT:
            if src.full:
                v = src.next_vsync(t + 1)
                self.busy_ns += v - t
                self._resume_at(v, cmd)  # this FLIP again, after the next latch
                return None
            src.queue_flip(surface, cmd.interval, t)
        else:
            v = src.flip_time(t, cmd.interval)
            if v > t:
                self.busy_ns += v - t
                self._resume_at(v, _Latch(src, surface))
                return None
            src.latch(surface, t, at_vsync=cmd.interval > 0)
        return t

    def _timestamp(self, cmd, t: int) -> int:
        """TIMESTAMP: write the engine's time in ns as a u64 at ``addr``."""
        addr = cmd.addr
        if self.address_space or addr >= _APERTURE_BASE:
            addr = self._address(addr, True)
        self.mem.write_u64(addr, t)
        return t

    def _privileged(self, cmd) -> None:
        """The MMU packets run only from the ring or from a buffer fetched in physical mode."""
        if self._vdepth:
            raise EngineFault(f"{self.name}: privileged command {cmd.name} in a virtual buffer")

    def _set_address_space(self, cmd, t: int) -> int:
        """SET_ADDRESS_SPACE (privileged): set the address-space register (0: physical addressing);
        a root that is not page aligned faults the engine."""
        self._privileged(cmd)
        if cmd.root & _PAGE_MASK:
            raise EngineFault(f"{self.name}: address space root {cmd.root:#x} is not page aligned")
        self.address_space = cmd.root
        return t

    def _update_page_table(self, cmd, t: int) -> int:
        """UPDATE_PAGE_TABLE (privileged): write the entries at ``table + 8 * start_index``; the TLB
        keeps what it cached until a FLUSH_TLB."""
        self._privileged(cmd)
        if cmd.addr & _PAGE_MASK:
            raise EngineFault(f"{self.name}: page table {cmd.addr:#x} is not page aligned")
        if cmd.entries:
            data = struct.pack(f"<{len(cmd.entries)}Q", *cmd.entries)
            self.mem.write(self.gpu.translate(cmd.addr + 8 * cmd.start_index), data)
        return t

    def _flush_tlb(self, cmd, t: int) -> int:
        """FLUSH_TLB (privileged): drop the cached translations of ``[start, end)`` in ``root``."""
        self._privileged(cmd)
        self.gpu.mmu.flush(cmd.root, cmd.va_start, cmd.va_end)
        return t

    def _native_fence(self, cmd, t: int) -> int:
        """NATIVE_FENCE: write a native fence's CurrentValue; the context-management processor (the
        hardware scheduler) compares it with the MonitoredValue and decides whether the CPU hears of
        it. An engine without a hardware scheduler faults."""
        listener = self.listener
        if listener is None:
            raise EngineFault(f"{self.name}: NATIVE_FENCE needs the hardware scheduler (the "
                              f"context-management processor compares with MonitoredValue)")
        addr = self._address(cmd.addr, True)
        monitored = self._address(cmd.src, False)
        self.mem.write_u64(addr, cmd.value)
        listener.native_fence_written(self, addr, cmd.value, monitored)
        return t

    def _owed_work(self, cmd: _Owed, t: int) -> int:
        """WORK a preemption left owed (:meth:`load_context`): it runs first, as the WORK it came from."""
        d = cmd.ns
        self._ahead.append((t, t + d, cmd.addr, cmd.pc, cmd.pc, cmd.end, self.rptr))
        self.busy_ns += d
        return t + d

    def _latch(self, cmd: _Latch, t: int) -> int:
        """A FLIP that stalled the engine latches at its vsync."""
        cmd.source.latch(cmd.surface, t, at_vsync=True)
        return t

    # -- waits ------------------------------------------------------------------------------------
    def _wait_satisfied(self, cmd, addr: int) -> bool:
        """Whether WAIT ``cmd`` holds; ``addr``: the memory address it watches."""
        if cmd.flags & C.WAIT_32BIT:
            return C.wait_holds(cmd.flags & C.WAIT_COMPARE_MASK, self.mem.read_u32(addr), cmd.value, 32)
        return C.wait_holds(cmd.flags & C.WAIT_COMPARE_MASK, self.mem.read_u64(addr), cmd.value)

    def _memory_changed(self, addr: int) -> None:
        # ``addr`` is the watched memory address: a virtual WAIT is not translated again.
        if self.state == WAITING and self._wait_satisfied(self._pending, addr):
            self._watch.cancel()
            self._watch = None
            self._pending = None
            self.state = RUNNING
            self._t = self.sim.now
            self.sim.soon(self._run, irql=DEVICE)


#: Issue: what the command processor does with each opcode as it decodes it (docs/gpu-commands.md,
#: "How an engine executes each packet"). NOP, WORK and INDIRECT are done there; the commands that
#: move bytes take their transfer time and then land; every other command lands straight away.
_ISSUE: dict[int, Any] = {
    C.NOP: EngineExecute._nop,
    C.WORK: EngineExecute._work,
    C.FILL: EngineExecute._transfer,
    C.COPY: EngineExecute._transfer,
    C.FENCE: EngineExecute._land,
    C.WAIT: EngineExecute._land,
    C.FLIP: EngineExecute._land,
    C.TIMESTAMP: EngineExecute._land,
    C.INDIRECT: EngineExecute._indirect,
    C.SET_ADDRESS_SPACE: EngineExecute._land,
    C.UPDATE_PAGE_TABLE: EngineExecute._transfer,
    C.FLUSH_TLB: EngineExecute._land,
    C.NATIVE_FENCE: EngineExecute._land,
}
#: Stepped mode: work and transfers take no time.
_ISSUE_STEPPED: dict[int, Any] = {**_ISSUE, C.WORK: EngineExecute._nop, C.FILL: EngineExecute._land,
                                  C.COPY: EngineExecute._land, C.UPDATE_PAGE_TABLE: EngineExecute._land}
#: Perform: each command that lands, at its instant, and the two internal pseudo-commands.
_PERFORM: dict[int, Any] = {
    C.FILL: EngineExecute._fill,
    C.COPY: EngineExecute._copy,
    C.FENCE: EngineExecute._fence,
    C.WAIT: EngineExecute._wait,
    C.FLIP: EngineExecute._flip,
    C.TIMESTAMP: EngineExecute._timestamp,
    C.SET_ADDRESS_SPACE: EngineExecute._set_address_space,
    C.UPDATE_PAGE_TABLE: EngineExecute._update_page_table,
    C.FLUSH_TLB: EngineExecute._flush_tlb,
    C.NATIVE_FENCE: EngineExecute._native_fence,
    _OWED: EngineExecute._owed_work,
    _LATCH: EngineExecute._latch,
}
