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

Faults for recovery tests: :meth:`Engine.hang` (now, or when the engine starts executing a given
buffer, :meth:`Engine.hang_on_buffer`) stops all progress: no fence lands, no preemption answers.
:meth:`Engine.reset` (the driver's engine reset) stops whatever was running, empties the ring and
makes the engine usable again.

Virtual addressing: the ``address_space`` register (set by SET_ADDRESS_SPACE; 0, the default, is
physical addressing) makes every address a command carries a GPU virtual address, translated by
``gpu.mmu`` (:mod:`.mmu`); the ring is always read physically. The MMU packets (SET_ADDRESS_SPACE,
UPDATE_PAGE_TABLE, FLUSH_TLB) are privileged: they fault in a buffer fetched in virtual mode. A
page fault stops the engine like any fault and fills ``fault_address``, ``fault_level``,
``fault_write`` and ``fault_root``. Every fault latches those registers in a :class:`FaultRecord`
(``fault_latch``) for the driver, held until it acknowledges it or the engine is reset.

Drivers reach engines only through the register interface, :mod:`.mmio` (``GPU.mmio``).

Hardware scheduling (:mod:`.scheduler`): a ``listener`` (None by default) owns the ring registers
and is told when a preemption stops the engine, when the ring drains and when the ring (or a buffer
it called) stalls on a WAIT (``engine_stopped``/``engine_drained``/``engine_stalled``), instead of
the CPU's preemption cause, and after :meth:`Engine.reset` (``engine_reset``). :meth:`Engine.save_context` and :meth:`Engine.load_context` save and
restore one ring's execution (an :class:`EngineContext`: ring registers, stop point, WORK owed, a
WAIT to perform again, the address-space register); :attr:`Engine.waiting_on` names the WAIT it
stalled on. With a listener, a preemption also rewinds the read pointer over ring packets fetched
ahead of the stop point, so they run after the resume.

Engines know nothing of WDDM: they see memory, a doorbell and an interrupt bit.

Spec: docs/gpu.md (engines, command processor, two completion modes).
"""

from __future__ import annotations

import struct
from math import ceil
from typing import Any, NamedTuple

from ..sim import DEVICE, Simulator
from . import commands as C
# Interpreted in every build (interpreted code subclasses EngineFault; PreemptState is a tuple).
from .engineparts import EngineFault, PreemptState

#: An engine's preemption cause is bit ``PREEMPT_CAUSE_SHIFT + index`` of the interrupt status.
PREEMPT_CAUSE_SHIFT = 64
GRANULARITIES = ("none", "dma_buffer", "primitive", "interval", "instruction")
#: granularities that stop inside a DMA buffer, leaving saved progress
MID_BUFFER = ("primitive", "interval", "instruction")

IDLE = "idle"
RUNNING = "running"
WAITING = "waiting"
HELD = "held"
FAULTED = "faulted"
HUNG = "hung"

_PAGE_MASK = 0xFFF  # page tables and address-space roots are 4 KiB aligned
_decode_packet = C.decode_packet  # ring packets, memoized by their bytes
_decode_cached = C.decode_cached
# The flags the handlers test, as module globals (one lookup, not two).
_FENCE_INTERRUPT = C.FENCE_INTERRUPT
_FLIP_NO_WAIT = C.FLIP_NO_WAIT
#: Below the aperture a GPU physical address is the memory address (device.translate's first case;
#: device.py checks the two agree).
_APERTURE_BASE = 0x200_0000_0000


class Engine:
    """One engine of the GPU (3D, compute, copy, ...) with its ring and command processor."""

    __slots__ = (
        "gpu", "sim", "mem", "index", "name", "kind", "command_cost", "bandwidth",
        "ring_base", "ring_size", "rptr", "wptr", "mode", "state", "busy_ns", "packets",
        "fault", "_t", "_buf", "_pc", "_end", "_top_end", "_stack", "_pending", "_steps", "_watch",
        "_irq_bit", "interrupts", "granularity", "preempt_interval", "preempt_save", "preempt_state", "preemptions",
        "_preempt", "_ahead", "_buf_addr", "_timer", "_boundary", "_preempt_bit", "_hang_buffers",
        "_hung_since", "resets", "_fault_buffers", "fault_address", "fault_fatal", "fault_latch",
        "listener", "stopped",
        "address_space", "_vdepth", "fault_level", "fault_write", "fault_root", "preempt_cost_ns",
    )

    def __init__(self, gpu, index: int, name: str, kind: str, command_cost: int = 100, bandwidth: float = 16.0,
                 granularity: str = "dma_buffer", preempt_interval: int = 100_000, preempt_save: int = 0):
        if granularity not in GRANULARITIES:
            raise ValueError(f"preemption granularity must be one of {', '.join(GRANULARITIES)}, got {granularity!r}")
        if preempt_interval <= 0:
            raise ValueError("preemption interval must be positive")
        if preempt_save < 0:
            raise ValueError("preemption save time must not be negative")
        self.gpu = gpu
        self.sim: Simulator = gpu.sim
        self.mem = gpu.memory
        self.index = index
        self.name = name
        self.kind = kind
        self.command_cost = command_cost
        self.bandwidth = bandwidth
        self.ring_base = 0
        self.ring_size = 0
        self.rptr = 0
        self.wptr = 0
        self.mode = "timed"
        self.state = IDLE
        self.busy_ns = 0  # ground truth: ns spent executing commands
        self.packets = 0  # ring packets fetched
        self.interrupts = 0  # fence interrupts raised
        self.fault: str | None = None
        self._t = 0
        self._buf: Any = None  # bytes of the DMA buffer being executed, or None at ring level
        self._pc = 0
        self._end = 0
        self._top_end = 0  # where the buffer called from the ring ends (its address + size)
        self._stack: list = []
        self._pending: Any = None  # a decoded visible command waiting for its instant
        self._steps = 0
        self._watch: Any = None
        self._irq_bit = 1 << index
        self._preempt_bit = 1 << (PREEMPT_CAUSE_SHIFT + index)
        self.granularity = granularity
        self.preempt_interval = preempt_interval
        self.preempt_save = preempt_save  # ns to save the state of a buffer stopped mid-way
        # a PreemptState (buffer address or None, offset, end, owed) or None
        self.preempt_state: Any = None
        self.preemptions = 0  # preemption requests answered
        #: busy ns its preemption stops cost it: state saves, plus decodes redone after a resume
        #: (see the module doc); the GPU's own account, which no driver or OS reads
        self.preempt_cost_ns = 0
        self._preempt = False  # a preemption request is pending
        self._ahead: list = []  # WORK run ahead of now: (start, end, buf addr, pc before, pc after, buf end,
        #                         ring rptr after the packet that holds or called it)
        self._buf_addr = 0
        self._timer: Any = None
        self._boundary = True  # at the ring between submissions (after an interrupting FENCE)
        self._hang_buffers: set[int] = set()  # buffer addresses that hang the engine when reached
        self._hung_since = -1
        self.resets = 0
        self._fault_buffers: dict[int, tuple[int, bool]] = {}  # buffer -> (address it faults on, fatal)
        self.fault_address = 0  # the address of the last fault (0: not an address fault)
        self.fault_fatal = False  # the last fault is an unrecoverable hardware error
        #: The fault record latched when the engine faulted (a :class:`FaultRecord`), held until a
        #: driver acknowledges it (``Mmio.fault_ack``) or the engine is reset; None: nothing latched.
        self.fault_latch: FaultRecord | None = None
        #: Stopped by a preemption request (the CPU was told) and not restarted since: a status
        #: bit for the driver (``Mmio.status``), cleared by the ring reset, a doorbell, a step,
        #: ``program_ring`` or an engine reset. It changes nothing in how the engine runs.
        self.stopped = False
        # Hardware scheduling (gpu/scheduler.py): the GpuScheduler that owns this engine's ring, told
        # of preemption stops, drained rings and WAIT stalls instead of the CPU. None: the driver
        # programs the ring itself and preemption stops interrupt the CPU.
        self.listener: Any = None
        # Virtual addressing (gpu/mmu.py): the root table of the current address space, 0 for
        # physical addressing; how many of the buffers being executed (the current one and those
        # it returns to) were fetched in virtual mode, where privileged commands fault.
        self.address_space = 0
        self._vdepth = 0
        self.fault_level: int | None = None  # page fault: the table level where the walk stopped
        self.fault_write = False  # page fault: the access was a write
        self.fault_root = 0  # page fault: the address space's root

    # -- registers ----------------------------------------------------------------------------
    def program_ring(self, base: int, size: int) -> None:
        """Set the ring's memory and reset both pointers (the engine must be idle)."""
        if self.state not in (IDLE, HELD):
            raise EngineFault(f"{self.name}: ring reprogrammed while {self.state}")
        if self.listener is not None:
            raise EngineFault(f"{self.name}: the ring belongs to the hardware scheduler")
        if size < 64 or size & 3 or base & 3:
            raise ValueError(f"{self.name}: ring base and size must be dword aligned, size >= 64")
        self.ring_base = base
        self.ring_size = size
        self.rptr = self.wptr = 0
        self.stopped = False

    def doorbell(self, wptr: int) -> None:
        """The driver publishes new packets up to ``wptr``; an idle engine starts fetching."""
        if not 0 <= wptr < self.ring_size or wptr & 3:
            raise EngineFault(f"{self.name}: doorbell write pointer {wptr:#x} outside the ring")
        self.wptr = wptr
        tr = self.gpu.trace
        if tr is not None:
            tr.emit(self.sim.now, "Doorbell", {"engine": self.index, "wptr": wptr, "rptr": self.rptr,
                                               "ring_used": self.ring_used, "ring_size": self.ring_size})
        if self.state == IDLE:
            self.stopped = False
            if self.mode == "stepped":
                self.state = HELD
                return
            self.state = RUNNING
            self._t = self.sim.now
            self._run()

    @property
    def ring_used(self) -> int:
        """Bytes between the read and write pointers."""
        return (self.wptr - self.rptr) % self.ring_size if self.ring_size else 0

    @property
    def idle(self) -> bool:
        return self.state == IDLE

    # -- stepped mode ---------------------------------------------------------------------------
    def set_mode(self, mode: str) -> None:
        """``timed`` or ``stepped``. Switching to timed releases anything held."""
        if mode not in ("timed", "stepped"):
            raise ValueError(f"engine mode must be 'timed' or 'stepped', got {mode!r}")
        self.mode = mode
        if mode == "timed" and self.state == HELD:
            self.state = RUNNING
            self._t = self.sim.now
            self._run()

    def step(self, submissions: int = 1) -> None:
        """Stepped mode: run ring packets through the next ``submissions`` interrupting FENCEs
        (under a hardware scheduler, those of the context it has loaded, or of the next it loads)."""
        if self.mode != "stepped":
            raise EngineFault(f"{self.name}: step() needs stepped mode")
        self._steps += submissions
        if self.state == IDLE and self.listener is not None:
            # Under a hardware scheduler an idle engine has no context loaded: its ring registers
            # still hold the last context saved from it, which is not the engine's to run. The
            # steps wait for the scheduler's next load.
            return
        if self.state in (HELD, IDLE) and (self.rptr != self.wptr or self._buf is not None):
            self.stopped = False
            self.state = RUNNING
            self._t = self.sim.now
            self._run()

    # -- the command processor ------------------------------------------------------------------
    # Every command goes through two phases (docs/gpu-commands.md, "How an engine executes each
    # packet"). It is *issued* as it is decoded, at the engine's local time ``t``, which runs ahead
    # of now: it costs ``command_cost``, and the commands nobody else can see (NOP, WORK, INDIRECT)
    # are done there and then. Every other command *lands*: it is *performed* at its instant, at
    # once when ``t`` has come, else from a timer at ``t`` (the processor stops running ahead).
    # ``_ISSUE`` and ``_PERFORM``, below the class, give each opcode its handler. A handler takes
    # the command and ``t`` and returns the local time after it, or None where the engine stops
    # fetching: it waits for a timer, a memory write or a step, or it stopped.

    def _fault_now(self, exc: Any) -> None:
        """Stop on ``exc``; a page fault (mmu.PageFault) also fills the fault_* registers."""
        level = getattr(exc, "level", None)
        if level is not None:
            self.fault_address = exc.address
            self.fault_level = level
            self.fault_write = exc.write
            self.fault_root = exc.root
            self.fault_fatal = False
        self._raise_fault(str(exc))

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

    # -- hangs and resets -----------------------------------------------------------------------
    @property
    def ahead_ns(self) -> int:
        """Work the engine has counted (in ``busy_ns``) past now: its run-ahead while running."""
        return self._t - self.sim.now if self.state == RUNNING and self._t > self.sim.now else 0

    def hang(self) -> None:
        """Stop making progress now: nothing more lands, preemption requests go unanswered."""
        if self.state in (HUNG, FAULTED):
            return
        now = self.sim.now
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self.state == RUNNING and self._t > now:
            self.busy_ns -= self._t - now  # the run-ahead past now never happens
            bus = self.gpu.bus
            if bus is not None:
                bus.rewound(self.index, now)
        if self._watch is not None:
            self._watch.cancel()
            self._watch = None
        self._pending = None
        self._ahead.clear()
        self.state = HUNG
        self._hung_since = now

    def fault_on_buffer(self, address: int, fault_address: int, fatal: bool = False) -> None:
        """Fault (as on an unmapped ``fault_address``) when an INDIRECT to ``address`` is reached;
        ``fatal``: the hardware reports the fault as unrecoverable."""
        self._fault_buffers[address] = (fault_address, fatal)

    def hang_on_buffer(self, address: int) -> None:
        """Hang when an INDIRECT to ``address`` is reached (a packet that never finishes)."""
        self._hang_buffers.add(address)

    @property
    def hung(self) -> bool:
        return self.state == HUNG

    def settle_hang(self) -> None:
        """Count the time hung so far as busy now (the engine was occupied), the hang going on:
        what a context loaded from now on is charged for starts here."""
        if self.state == HUNG:
            now = self.sim.now
            self.busy_ns += now - self._hung_since
            self._hung_since = now

    def reset(self) -> None:
        """Engine reset: abandon whatever runs, empty the ring, clear a hang or a pending
        preemption. The time spent hung counts as busy (the engine was occupied)."""
        now = self.sim.now
        bus = self.gpu.bus
        if self.state == HUNG:
            self.busy_ns += now - self._hung_since
        elif self.state in (RUNNING, WAITING) and self._t > now:
            self.busy_ns -= self._t - now
            if bus is not None:
                bus.rewound(self.index, now)
        if bus is not None:
            bus.stopped(self.index, now)
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._watch is not None:
            self._watch.cancel()
            self._watch = None
        self._pending = None
        self._buf = None
        self._stack.clear()
        self._ahead.clear()
        self._preempt = False
        self._hung_since = -1
        self.fault = None
        self.fault_address = 0
        self.fault_fatal = False
        self.fault_latch = None
        self.stopped = False
        self.fault_level = None
        self.fault_write = False
        self.fault_root = 0
        self.address_space = 0
        self._vdepth = 0
        self.state = IDLE
        self._t = now
        self.rptr = self.wptr = 0
        self._boundary = True
        self.preempt_state = None
        self.resets += 1
        if self.listener is not None:
            self.listener.engine_reset(self)  # the hardware scheduler drops what it had loaded

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

    # -- faults -----------------------------------------------------------------------------------
    def _raise_fault(self, reason: str) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        bus = self.gpu.bus
        if self.state == RUNNING and self._t > self.sim.now:
            self.busy_ns -= self._t - self.sim.now
            if bus is not None:
                bus.rewound(self.index, self.sim.now)
        if bus is not None:
            bus.stopped(self.index, self.sim.now)
        self._pending = None
        self._ahead.clear()
        self.state = FAULTED
        self.fault = reason
        self.fault_latch = FaultRecord(self.fault_address, self.fault_fatal, self.fault_write, self.fault_level,
                                       self.fault_root)
        self.gpu.engine_faulted(self, reason)


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


class _Latch:
    """A flip waiting for its vsync inside the engine (internal pseudo-command)."""

    __slots__ = ("source", "surface")
    opcode = -1  # _LATCH (a literal, as _Owed.opcode)

    def __init__(self, source, surface: int):
        self.source = source
        self.surface = surface


#: Issue: what the command processor does with each opcode as it decodes it (docs/gpu-commands.md,
#: "How an engine executes each packet"). NOP, WORK and INDIRECT are done there; the commands that
#: move bytes take their transfer time and then land; every other command lands straight away.
_ISSUE: dict[int, Any] = {
    C.NOP: Engine._nop,
    C.WORK: Engine._work,
    C.FILL: Engine._transfer,
    C.COPY: Engine._transfer,
    C.FENCE: Engine._land,
    C.WAIT: Engine._land,
    C.FLIP: Engine._land,
    C.TIMESTAMP: Engine._land,
    C.INDIRECT: Engine._indirect,
    C.SET_ADDRESS_SPACE: Engine._land,
    C.UPDATE_PAGE_TABLE: Engine._transfer,
    C.FLUSH_TLB: Engine._land,
    C.NATIVE_FENCE: Engine._land,
}
#: Stepped mode: work and transfers take no time.
_ISSUE_STEPPED: dict[int, Any] = {**_ISSUE, C.WORK: Engine._nop, C.FILL: Engine._land, C.COPY: Engine._land,
                  C.UPDATE_PAGE_TABLE: Engine._land}
#: Perform: each command that lands, at its instant, and the two internal pseudo-commands.
_PERFORM: dict[int, Any] = {
    C.FILL: Engine._fill,
    C.COPY: Engine._copy,
    C.FENCE: Engine._fence,
    C.WAIT: Engine._wait,
    C.FLIP: Engine._flip,
    C.TIMESTAMP: Engine._timestamp,
    C.SET_ADDRESS_SPACE: Engine._set_address_space,
    C.UPDATE_PAGE_TABLE: Engine._update_page_table,
    C.FLUSH_TLB: Engine._flush_tlb,
    C.NATIVE_FENCE: Engine._native_fence,
    _OWED: Engine._owed_work,
    _LATCH: Engine._latch,
}


class FaultRecord(NamedTuple):
    """What an engine latches when it faults (:attr:`Engine.fault_latch`), for the driver to read
    until it acknowledges it: the faulting address (0: not an address fault), whether the hardware
    calls it unrecoverable, whether the access was a write, the page-table level where the walk
    stopped (None: not a page fault) and the address space's root table (0: physical)."""

    address: int
    fatal: bool
    write: bool
    level: int | None
    root: int

