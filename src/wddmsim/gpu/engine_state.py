"""An engine's state and registers, and what stops it from outside the command stream: faults,
hangs and resets.

:class:`EngineState` is the first layer of :class:`~wddmsim.gpu.engine.Engine`, which adds
:mod:`.engine_execute` (what each command does), :mod:`.engine_preempt` (preemption and context
save) and, in :mod:`.engine` itself, the command processor. It holds every attribute of an engine,
the ring registers (:meth:`~EngineState.program_ring`, :meth:`~EngineState.doorbell`, ``ring_used``)
and the two modes (:meth:`~EngineState.set_mode`; :meth:`~EngineState.step` in ``stepped`` mode).

Faults for recovery tests: :meth:`Engine.hang` (now, or when the engine starts executing a given
buffer, :meth:`Engine.hang_on_buffer`) stops all progress: no fence lands, no preemption answers.
:meth:`Engine.reset` (the driver's engine reset) stops whatever was running, empties the ring and
makes the engine usable again. A fault (a malformed packet, an address nothing backs, a page
fault, :meth:`Engine.fault_on_buffer`) stops the engine too; a page fault fills ``fault_address``,
``fault_level``, ``fault_write`` and ``fault_root``. Every fault latches those registers in a
:class:`FaultRecord` (``fault_latch``) for the driver, held until it acknowledges it or the engine
is reset.

Compiled with the rest of the engine (``wddmsim._native.COMPILED``, one mypyc group, so the calls
between the engine's modules stay native): every packet goes through it.

Spec: docs/gpu.md ("Engines").
"""

from __future__ import annotations

from typing import Any, NamedTuple

from ..sim import Simulator
from .engineparts import EngineFault  # interpreted in every build: interpreted code subclasses it

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


class EngineState:
    """An engine's attributes, ring registers, modes, faults, hangs and resets: the first layer of
    :class:`~wddmsim.gpu.engine.Engine` (see the module doc)."""

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
    def _run(self) -> None:
        """The command processor (:meth:`wddmsim.gpu.engine.Engine._run`): the registers start it,
        and the handlers' timers and memory watches resume it."""
        raise NotImplementedError

    # -- faults -----------------------------------------------------------------------------------
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
