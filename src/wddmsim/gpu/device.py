"""The GPU as a whole: physical memory and its segments, the aperture, engines, the interrupt line
and the display controller.

Physical address map (the model's, documented in docs/gpu.md):

- system memory: ``[0, LOCAL_BASE)``, sparse pages (the CPU's RAM; DMA buffers in contiguous system
  memory live here);
- local memory segments: consecutive ranges from ``LOCAL_BASE`` (video memory);
- aperture segments: consecutive ranges from ``APERTURE_BASE``; each aperture page is mapped by the
  GART onto a system-memory page. An engine reaching an unmapped aperture page faults.

These are GPU *physical* addresses. An engine running in an address space (its ``address_space``
register) first turns the virtual addresses its commands carry into physical ones through the
GPU's MMU (:mod:`.mmu`, ``GPU.mmu``); page tables themselves are read at physical addresses.

A :class:`Segment` carries what ``DXGK_SEGMENTDESCRIPTOR`` describes (base address, size, whether it
is an aperture, whether the CPU sees it and at which CPU address); the driver turns it into the
DDI structure.

Spec: docs/gpu.md (memory and segments); Microsoft's "Specifying segments for DMA buffers" page
(aperture-only DMA buffer segments).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..sim import Simulator
from .display import DisplaySource
from . import engine as _engine_module
from .engine import Engine, EngineFault
from .scheduler import GpuScheduler
from .interrupts import FAULT_BIT, SPURIOUS_BIT, InterruptController
from .memory import PAGE_SIZE, PhysicalMemory
from .mmio import Mmio
from .mmu import GpuMmu

LOCAL_BASE = 0x100_0000_0000
APERTURE_BASE = 0x200_0000_0000
assert APERTURE_BASE == _engine_module._APERTURE_BASE  # the engine's fast path skips translate below it
#: Where the CPU sees CPU-visible local memory (a BAR), as a system physical address.
BAR_BASE = 0x80_0000_0000

# FAULT_BIT and SPURIOUS_BIT live in .interrupts; they are still importable from here.
__all__ = ["LOCAL_BASE", "APERTURE_BASE", "BAR_BASE", "FAULT_BIT", "SPURIOUS_BIT", "Segment", "EngineSpec",
           "GPU"]


@dataclass(frozen=True)
class Segment:
    """A GPU memory segment. ``index`` is its place in the GPU's list (DDI segment id = index + 1)."""

    index: int
    name: str
    kind: str  # "memory" or "aperture"
    base: int
    size: int
    cpu_visible: bool
    cpu_base: int  # CPU physical address of a CPU-visible memory segment, else 0

    @property
    def aperture(self) -> bool:
        return self.kind == "aperture"

    def contains(self, addr: int, size: int = 1) -> bool:
        return self.base <= addr and addr + size <= self.base + self.size


@dataclass(frozen=True)
class EngineSpec:
    """How to build one engine: its name, kind and timing parameters."""

    name: str
    kind: str
    command_cost: int = 100
    bandwidth: float = 16.0
    #: where a preemption request stops the engine (engine.GRANULARITIES) and, for "interval",
    #: every how many ns of WORK it can stop
    preemption: str = "dma_buffer"
    preemption_interval: int = 100_000
    #: ns the engine spends saving the state of a buffer it stopped mid-way (context save)
    preemption_save: int = 0
    #: hardware queue slots of its hardware scheduler (docs/gpu.md, "Hardware queue slots"); None:
    #: no limit, every queue stays mapped
    hw_queue_slots: int | None = None


class GPU:
    """The hardware: memory, segments, GART, engines, interrupt controller, display sources."""

    def __init__(
        self,
        sim: Simulator,
        engines: list[EngineSpec],
        segments: list[tuple[str, str, int, bool]],
        display_refresh_hz: list[float] = (60.0,),
        max_queued_flips: int = 1,
    ):
        self.sim = sim
        self.memory = PhysicalMemory()
        #: The MMU: page-table walks and the TLB for engines running in a virtual address space.
        self.mmu = GpuMmu(self)
        self.irq = InterruptController(sim)
        #: Bus observer (a logic analyser on the bus; the model's checkers use it as ground truth,
        #: a real OS never sees it), or None: nobody watches. ``bus.fetched(engine_index, address,
        #: size, t, nested, space)`` runs when an engine starts executing an indirect buffer
        #: (``nested``: called from another buffer, not from the ring); ``bus.finished(engine_index,
        #: end, t, space)`` when it has executed a buffer called from the ring up to its end address
        #: ``end``. ``space`` is the engine's address space (its root table; 0: physical addresses);
        #: ``t`` is the engine's local time, which may run ahead of the clock (see the module doc of
        #: :mod:`wddmsim.gpu.engine`). ``bus.rewound(engine_index, t)``: the work the engine had run
        #: ahead past ``t`` will not happen (a preemption stop inside it, a hang, a reset, a fault);
        #: ``bus.stopped(engine_index, t)``: the engine stopped at ``t`` (a preemption stop, a reset, a
        #: fault), leaving the buffer it was in, if any; ``bus.ring_fence(engine_index, value)``: an
        #: interrupting FENCE on the ring wrote ``value`` now (a submission boundary). With
        #: ``Engine.busy_ns`` read at each call an observer can tell exactly how much engine time
        #: each buffer, and each stretch of ring between submissions, took.
        self.bus = None
        #: Event sink for what the hardware itself can tell (``Doorbell``); None: nothing.
        self.trace = None
        #: How many of their latest changes the hardware schedulers keep in ``log`` and ``slot_log``
        #: (a test bench reads them): None keeps every one; a whole run sets a bound, so memory does
        #: not grow with the run (the event log has every change).
        self.history: int | None = None
        self.engines = [
            Engine(self, i, e.name, e.kind, e.command_cost, e.bandwidth, e.preemption, e.preemption_interval,
                   e.preemption_save)
            for i, e in enumerate(engines)
        ]
        self._slots = [e.hw_queue_slots for e in engines]
        if len(self.engines) > 62:
            raise ValueError("at most 62 engines (interrupt status bits)")
        self.segments: list[Segment] = []
        local, aperture, bar = LOCAL_BASE, APERTURE_BASE, BAR_BASE
        for i, (name, kind, size, cpu_visible) in enumerate(segments):
            if size <= 0 or size % PAGE_SIZE:
                raise ValueError(f"segment {name}: size must be a positive multiple of {PAGE_SIZE}")
            if kind == "memory":
                base = local
                local += size
                cpu_base = bar if cpu_visible else 0
                if cpu_visible:
                    bar += size
            elif kind == "aperture":
                base = aperture
                aperture += size
                cpu_base = 0
            else:
                raise ValueError(f"segment {name}: kind must be 'memory' or 'aperture', got {kind!r}")
            self.segments.append(Segment(i, name, kind, base, size, cpu_visible, cpu_base))
        self._aperture_end = aperture
        self.gart: dict[int, int] = {}  # aperture page number -> system page number
        self.displays = [DisplaySource(i, hz, self, max_queued_flips) for i, hz in enumerate(display_refresh_hz)]
        for d in self.displays:
            # At power-on every source scans out the firmware's framebuffer at the start of local
            # memory, until the first flip: a vsync before it has an address to report.
            d.scanout = LOCAL_BASE
        self.faults: list[tuple[int, str, str]] = []
        self._hw_schedulers: dict[int, GpuScheduler] = {}
        #: The policy of each engine's hardware scheduler (gpu/policy.py): ``hw_policy(engine_index)``
        #: makes it, called when the scheduler is made; None: the band rules (BandPolicy). Set it
        #: before the driver starts hardware scheduling (a model extension: on a real GPU it is the
        #: vendor's firmware).
        self.hw_policy = None
        #: The register interface (gpu/mmio.py): the only view of this GPU a driver is given.
        self.mmio = Mmio(self)

    # -- addressing -----------------------------------------------------------------------------
    def translate(self, addr: int) -> int:
        """The memory address behind a GPU physical address (aperture pages go through the GART)."""
        if addr < APERTURE_BASE:
            return addr
        if addr >= self._aperture_end:
            raise EngineFault(f"address {addr:#x} is beyond every segment")
        page = self.gart.get(addr // PAGE_SIZE)
        if page is None:
            raise EngineFault(f"aperture address {addr:#x} is not mapped")
        return page * PAGE_SIZE + addr % PAGE_SIZE

    def map_aperture(self, aperture_addr: int, system_addr: int, size: int) -> None:
        """Program the GART: map ``size`` bytes of aperture onto system memory (page aligned)."""
        if aperture_addr % PAGE_SIZE or system_addr % PAGE_SIZE or size % PAGE_SIZE:
            raise ValueError("aperture mappings are page aligned")
        for off in range(0, size, PAGE_SIZE):
            self.gart[(aperture_addr + off) // PAGE_SIZE] = (system_addr + off) // PAGE_SIZE

    def unmap_aperture(self, aperture_addr: int, size: int) -> None:
        for off in range(0, size, PAGE_SIZE):
            self.gart.pop((aperture_addr + off) // PAGE_SIZE, None)

    def display_source(self, index: int) -> DisplaySource:
        if not 0 <= index < len(self.displays):
            raise EngineFault(f"flip to display source {index}, which does not exist")
        return self.displays[index]

    # -- faults -----------------------------------------------------------------------------------
    def hw_scheduler(self, engine_index: int) -> GpuScheduler:
        """The context-management processor of an engine (hardware scheduling, gpu/scheduler.py),
        made on first use; from then on it owns the engine's ring registers."""
        hs = self._hw_schedulers.get(engine_index)
        if hs is None:
            if not 0 <= engine_index < len(self.engines):
                raise ValueError(f"no engine {engine_index}")
            policy = None if self.hw_policy is None else self.hw_policy(engine_index)
            hs = self._hw_schedulers[engine_index] = GpuScheduler(self, self.engines[engine_index],
                                                                 self._slots[engine_index], history=self.history,
                                                                 policy=policy)
        return hs

    def engine_faulted(self, engine: Engine, reason: str) -> None:
        """An engine stopped on a fault: record it and interrupt the CPU."""
        self.faults.append((self.sim.now, engine.name, reason))
        self.irq.assert_cause(FAULT_BIT)
