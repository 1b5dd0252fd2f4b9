"""The GPU's register interface: everything a driver may do to the hardware, and nothing else.

A real display driver never calls into its GPU: it reads and writes registers (MMIO) and shared
memory, and the GPU answers with interrupts. :class:`Mmio` is that boundary for the model. Each
method stands for one register access a hardware manual would list, and says in its docstring
which register, read or write, its side effects and when it is valid. ``GPU.mmio`` is built once
with the GPU; the assembly code hands it (through the GPU object, for now) to the driver, which
keeps it and the system memory it exposes (:attr:`Mmio.memory`) and touches nothing else.

The groups, in the order of docs/gpu-programming.md (the programming manual):

- identification (read-only, the configuration and capability space): :attr:`engine_count`,
  :meth:`engine_info`, :attr:`segments`, :attr:`display_count`, :meth:`flip_queue_depth`;
- system memory as the CPU sees it: :attr:`memory`;
- interrupts: :meth:`irq_status`, :meth:`irq_ack`, and this module's bit layout (:data:`FAULT_BIT`,
  :data:`UNKNOWN_BIT`, :func:`fence_bit`, :func:`preempt_bit`, :func:`vsync_bit`,
  :func:`suspend_bit`, :func:`native_fence_bit` and their shifts);
- an engine's ring under software scheduling: :meth:`program_ring`, :meth:`rptr`,
  :meth:`doorbell`, :meth:`reset_ring`;
- engine control and status: :meth:`status`, :meth:`preempt`, :meth:`preempt_state`,
  :meth:`reset_engine`;
- faults: :meth:`fault`, :meth:`fault_ack`;
- the GART: :meth:`map_aperture`;
- display: :meth:`scanout`, :meth:`vsync_interrupt`; the overlay planes: :meth:`plane_count`,
  :meth:`set_plane_address`, :meth:`plane_address`, :meth:`plane_enabled`, :meth:`plane_status`,
  :meth:`plane_status_ack`; the hardware flip queue (WDDM 3.0): :meth:`hw_flip_queue_submit`,
  :meth:`hw_flip_queue_depth`, :meth:`hw_flip_queue_pending`, :meth:`hw_flip_queue_cancel`,
  :meth:`hw_flip_queue_log`, :meth:`hw_flip_queue_interrupt_target`;
- the hardware scheduler's mailbox (WDDM 2.x hardware scheduling), one per engine: the
  ``sched_*`` methods.

Engines are numbered from 0 (the driver's node ordinals), display sources from 0. Every access
costs one method call and allocates nothing: the records it returns (segments, engine
information, a latched fault, the preemption save registers) are made once, by the hardware, when
their contents come to be.

Command encodings: docs/gpu-commands.md (:mod:`.commands`).
"""

from __future__ import annotations

from typing import NamedTuple

from .display import HW_FLIP_QUEUE_DEPTH, VSYNC_CAUSE_SHIFT
from .planes import PLANES_PER_SOURCE
from .engine import FAULTED as _ENGINE_FAULTED
from .engine import GRANULARITIES
from .engine import IDLE as _ENGINE_IDLE
from .engine import PREEMPT_CAUSE_SHIFT, FaultRecord, PreemptState
from .scheduler import NATIVE_FENCE_CAUSE_SHIFT, SUSPEND_CAUSE_SHIFT
from .interrupts import FAULT_BIT as _FAULT_BIT
from .interrupts import SPURIOUS_BIT as _SPURIOUS_BIT
from .memory import PAGE_SIZE

__all__ = [
    "PAGE_SIZE", "GRANULARITIES", "PLANES_PER_SOURCE", "HW_FLIP_QUEUE_DEPTH",
    "FENCE_SHIFT", "PREEMPT_SHIFT", "VSYNC_SHIFT", "SUSPEND_SHIFT", "NATIVE_FENCE_SHIFT", "FAULT_BIT",
    "UNKNOWN_BIT", "fence_bit", "preempt_bit", "vsync_bit", "suspend_bit", "native_fence_bit",
    "IDLE", "BUSY", "FAULTED", "PREEMPTED",
    "EngineInfo", "SegmentInfo", "FaultRecord", "PreemptState", "Mmio",
]

# -- the interrupt status register's bit layout ---------------------------------------------------
#: Bit ``FENCE_SHIFT + e``: engine *e* wrote a FENCE with FENCE_INTERRUPT (engines 0..61).
FENCE_SHIFT = 0
#: Bit ``PREEMPT_SHIFT + e``: engine *e* stopped for a preemption request (software scheduling).
PREEMPT_SHIFT = PREEMPT_CAUSE_SHIFT  # 64
#: Bit ``VSYNC_SHIFT + s``: display source *s* latched a flip at a vsync, or reached a vsync with its
#: vsync interrupt enabled (:meth:`Mmio.vsync_interrupt`).
VSYNC_SHIFT = VSYNC_CAUSE_SHIFT  # 96
#: Bit ``SUSPEND_SHIFT + e``: engine *e*'s hardware scheduler completed a context suspend.
SUSPEND_SHIFT = SUSPEND_CAUSE_SHIFT  # 128
#: Bit ``NATIVE_FENCE_SHIFT + e``: engine *e*'s hardware scheduler saw a NATIVE_FENCE write a value
#: above the fence's MonitoredValue (read which with :meth:`Mmio.sched_pop_native_signal`).
NATIVE_FENCE_SHIFT = NATIVE_FENCE_CAUSE_SHIFT  # 160
#: Bit 62: an engine stopped on a fault (see which with :meth:`Mmio.fault`).
FAULT_BIT = _FAULT_BIT
#: Bit 63: a cause no engine owns (a misbehaving device; the model's interrupt storms).
UNKNOWN_BIT = _SPURIOUS_BIT


def fence_bit(engine: int) -> int:
    """The status bit of engine ``engine``'s fence interrupt."""
    return 1 << (FENCE_SHIFT + engine)


def preempt_bit(engine: int) -> int:
    """The status bit of engine ``engine``'s preemption-done interrupt."""
    return 1 << (PREEMPT_SHIFT + engine)


def vsync_bit(source: int) -> int:
    """The status bit of display source ``source``'s vsync (a flip latched at a vsync, or any vsync
    while the source's vsync interrupt is enabled)."""
    return 1 << (VSYNC_SHIFT + source)


def suspend_bit(engine: int) -> int:
    """The status bit of engine ``engine``'s suspend-done interrupt (hardware scheduler)."""
    return 1 << (SUSPEND_SHIFT + engine)


def native_fence_bit(engine: int) -> int:
    """The status bit of engine ``engine``'s native-fence interrupt (hardware scheduler)."""
    return 1 << (NATIVE_FENCE_SHIFT + engine)


# -- the engine status register ---------------------------------------------------------------------
#: Nothing to do: the ring is empty (or was emptied) and nothing runs.
IDLE = "idle"
#: Fetching or executing, waiting on a WAIT or a vsync, held (stepped mode), or hung: hardware
#: cannot tell a hang from long work (which is why the OS has timeout detection).
BUSY = "busy"
#: Stopped on a fault; only :meth:`Mmio.reset_engine` (or the scheduler's reset) restarts it.
FAULTED = "faulted"
#: Stopped for a preemption request: the save registers hold where, and the ring stays halted until
#: :meth:`Mmio.reset_ring` empties it (a doorbell would restart the ring at its read pointer, past
#: the interrupted buffer).
PREEMPTED = "preempted"


class EngineInfo(NamedTuple):
    """An engine's capability registers."""

    #: "3d", "compute", "copy", "video_decode", "video_encode", "video_processing" or "other"
    kind: str
    #: where a preemption request stops it: "none", "dma_buffer", "primitive", "interval" or "instruction"
    preemption: str
    #: for "interval": every how many ns of WORK it can stop
    preemption_interval: int
    #: the engine's name in the GPU's documentation (the scenario's node name)
    name: str = ""
    #: how many hardware queues its hardware scheduler holds mapped at once (0: no limit); the
    #: scheduler maps and unmaps queues itself (docs/gpu.md, "Hardware queue slots")
    hw_queue_slots: int = 0


class SegmentInfo(NamedTuple):
    """One memory segment as the configuration space describes it."""

    #: GPU physical address of its first byte
    base: int
    #: bytes
    size: int
    #: True: an aperture (its pages are system memory, mapped by the GART); False: local memory
    aperture: bool
    #: the CPU can read and write it directly
    cpu_visible: bool
    #: where the CPU sees it (a system physical address, the BAR) when it is CPU visible, else 0
    cpu_base: int


class Mmio:
    """The register interface of one :class:`~wddmsim.gpu.device.GPU` (see the module doc and
    docs/gpu-programming.md)."""

    __slots__ = ("_gpu", "_engines", "_irq", "_displays", "_engine_info", "_segments")

    def __init__(self, gpu):
        self._gpu = gpu
        self._engines = tuple(gpu.engines)
        self._irq = gpu.irq
        self._displays = tuple(gpu.displays)
        self._engine_info = tuple(EngineInfo(e.kind, e.granularity, e.preempt_interval, e.name, slots or 0)
                                  for e, slots in zip(self._engines, gpu._slots))
        self._segments = tuple(SegmentInfo(s.base, s.size, s.aperture, s.cpu_visible, s.cpu_base)
                               for s in gpu.segments)

    def __repr__(self) -> str:
        return f"<Mmio {len(self._engines)} engines, {len(self._segments)} segments, {len(self._displays)} displays>"

    # -- identification (read-only) ---------------------------------------------------------------
    @property
    def engine_count(self) -> int:
        """Read the engine count register: how many engines (nodes) the GPU has. Fixed at power on."""
        return len(self._engines)

    def engine_info(self, engine: int) -> EngineInfo:
        """Read engine ``engine``'s capability registers: its kind, preemption granularity,
        preemption interval, name and hardware queue slots (:class:`EngineInfo`). Fixed at power on;
        always valid."""
        return self._engine_info[engine]

    @property
    def segments(self) -> tuple[SegmentInfo, ...]:
        """Read the segment table: one :class:`SegmentInfo` per memory segment, in order (the DDI's
        segment id is the index + 1). Fixed at power on."""
        return self._segments

    @property
    def display_count(self) -> int:
        """Read the display count register: how many display (VidPN) sources there are."""
        return len(self._displays)

    def flip_queue_depth(self, source: int) -> int:
        """Read how many no-wait flips display source ``source``'s pending-flip registers hold
        (FLIP with FLIP_NO_WAIT; a full queue stalls the engine until the next latch)."""
        return self._displays[source].max_pending

    # -- system memory --------------------------------------------------------------------------------
    @property
    def memory(self):
        """System memory as the CPU sees it: the physical memory the GPU reads and writes
        (``read``, ``write``, ``read_u32``, ``read_u64``, ``write_u32``, ``write_u64``, ``fill``,
        ``copy``). The driver writes rings, DMA buffers and page tables there, and reads the fence
        slots the engines write. Not a register: plain memory, coherent with the GPU."""
        return self._gpu.memory

    # -- interrupts -----------------------------------------------------------------------------------
    def irq_status(self) -> int:
        """Read the interrupt status register: one bit per pending cause (layout: this module's
        ``*_SHIFT``, ``*_BIT`` and ``*_bit``). Reading clears nothing. 0 means this GPU did not
        interrupt (the line is shared: the ISR then returns FALSE)."""
        return self._irq.status

    def irq_ack(self, bits: int) -> None:
        """Write the interrupt acknowledge register: clear the causes in ``bits``
        (write-one-to-clear; other bits are untouched). Causes still pending when the ISR returns
        raise the interrupt again (the line is level-triggered). Valid at any time."""
        self._irq.ack(bits)

    # -- an engine's ring (software scheduling) ---------------------------------------------------------
    def program_ring(self, engine: int, base: int, size: int) -> None:
        """Write the ring base and size registers of ``engine``: the ring is ``size`` bytes of
        system memory at ``base`` (dword aligned, ``size`` >= 64); both pointers go to 0. Valid
        while the engine is idle or preempted, and never once its hardware scheduler exists (that
        owns the ring registers): otherwise ``EngineFault``."""
        self._engines[engine].program_ring(base, size)

    def rptr(self, engine: int) -> int:
        """Read ``engine``'s ring read pointer: the byte offset of the next packet it will fetch.
        The engine fetches ahead of execution, so the ring space before it is free to reuse."""
        return self._engines[engine].rptr

    def doorbell(self, engine: int, wptr: int) -> None:
        """Write ``engine``'s doorbell (its write pointer register): the packets up to byte offset
        ``wptr`` are ready. An idle (or preempted) engine starts fetching at once. ``wptr`` must be
        dword aligned and inside the ring, else ``EngineFault``."""
        self._engines[engine].doorbell(wptr)

    def reset_ring(self, engine: int) -> None:
        """Write ``engine``'s ring control register to empty the ring: both pointers to 0, the
        preemption save registers cleared, status idle. Use it after a preemption stop, once the
        save registers are read. Valid only while the engine is idle or preempted (``EngineFault``)."""
        self._engines[engine].reset_ring()

    # -- engine control and status -----------------------------------------------------------------------
    def status(self, engine: int) -> str:
        """Read ``engine``'s status register: :data:`IDLE`, :data:`BUSY`, :data:`FAULTED` or
        :data:`PREEMPTED`. A hung engine reads :data:`BUSY`. :data:`PREEMPTED` holds from the stop
        (when the preemption interrupt is raised) until :meth:`reset_ring`, a doorbell or a reset;
        under hardware scheduling the scheduler takes the stops and it never shows."""
        e = self._engines[engine]
        state = e.state
        if state == _ENGINE_IDLE:
            return PREEMPTED if e.stopped else IDLE
        return FAULTED if state == _ENGINE_FAULTED else BUSY

    def preempt(self, engine: int) -> None:
        """Write ``engine``'s preemption request bit: stop at the engine's granularity
        (:meth:`engine_info`). When it stops it fills the save registers (:meth:`preempt_state`),
        reads :data:`PREEMPTED` and raises :func:`preempt_bit`; an idle engine stops at once. A
        faulted or hung engine never answers (the OS's timeout finds it)."""
        self._engines[engine].request_preempt()

    def preempt_state(self, engine: int) -> PreemptState | None:
        """Read ``engine``'s preemption save registers: None when it stopped between DMA buffers
        (nothing owed), else a :class:`~wddmsim.gpu.engine.PreemptState`, the tuple (buffer
        address, or None for a WORK on the ring itself; byte offset of the next command in the
        buffer; the buffer's end; ns of WORK still owed), whose ``address_space`` is the root of the
        address space the buffer address belongs to (0: physical). Valid from the preemption stop
        until :meth:`reset_ring`, a reset or the next stop."""
        return self._engines[engine].preempt_state

    def reset_engine(self, engine: int) -> None:
        """Write ``engine``'s reset bit: it abandons whatever it runs (a hang included), empties
        its ring, clears its fault, preemption and address-space registers and reads :data:`IDLE`.
        Pending interrupt causes are not cleared. Under hardware scheduling this is
        :meth:`sched_reset` without its answer."""
        self._engines[engine].reset()

    # -- faults ---------------------------------------------------------------------------------------
    def fault(self, engine: int) -> FaultRecord | None:
        """Read ``engine``'s fault record: latched when the engine stopped on a fault (with
        :data:`FAULT_BIT`), a :class:`~wddmsim.gpu.engine.FaultRecord` (address, fatal, write,
        level, root), readable until :meth:`fault_ack` or a reset; None when nothing is latched."""
        return self._engines[engine].fault_latch

    def fault_ack(self, engine: int) -> None:
        """Write ``engine``'s fault acknowledge register: release the latched record (the engine
        stays faulted until reset). Acknowledging with nothing latched does nothing."""
        self._engines[engine].fault_latch = None

    # -- the GART -------------------------------------------------------------------------------------
    def map_aperture(self, aperture_addr: int, system_addr: int, size: int) -> None:
        """Write GART entries: the ``size`` bytes of aperture at GPU address ``aperture_addr`` now
        reach system memory at ``system_addr`` (all page aligned, else ``ValueError``); a page
        mapped earlier is remapped. Effective for the next engine access."""
        self._gpu.map_aperture(aperture_addr, system_addr, size)

    # -- display ----------------------------------------------------------------------------------------
    def scanout(self, source: int) -> int:
        """Read display source ``source``'s scanout address register: the GPU physical address
        of the surface it shows now (before the first flip, the firmware's framebuffer at the start
        of local memory)."""
        return self._displays[source].scanout

    def set_scanout_address(self, source: int, address: int, immediate: bool = False) -> None:
        """Write display source ``source``'s scanout address register (an MMIO flip): with
        ``immediate`` the surface at ``address`` is shown at once (no vsync cause); otherwise it
        waits in the pending-address register and latches at the first vsync strictly after this
        write, raising the vsync cause (:func:`vsync_bit`). A later write before that vsync replaces
        the pending address."""
        self._displays[source].program_address(address, immediate)

    def vsync_interrupt(self, source: int, enable: bool) -> None:
        """Write display source ``source``'s vsync interrupt enable register. Set, the source
        raises its vsync cause (:func:`vsync_bit`) at every vsync from the next one, a flip or not;
        cleared (the state at power-on), only a flip latched at a vsync raises it. Idempotent."""
        self._displays[source].set_vsync_interrupt(enable)

    # -- overlay planes (multiplane overlays; gpu/planes.py) ------------------------------------------------
    def plane_count(self, source: int) -> int:
        """Read how many planes display source ``source`` scans out, its primary (plane 0) included
        (:data:`PLANES_PER_SOURCE`). Fixed at power on."""
        _ = self._displays[source]  # an unknown source fails as in every display register
        return PLANES_PER_SOURCE

    def set_plane_address(self, source: int, plane: int, address: int, enabled: bool = True,
                          immediate: bool = False) -> None:
        """Write plane ``plane`` of display source ``source``: its address and enable bit. With
        ``immediate`` both take effect at once (no vsync cause); otherwise they wait in the plane's
        pending registers and latch at the first vsync strictly after this write, raising the
        vsync cause (:func:`vsync_bit`) and the plane's bit in :meth:`plane_status`; a later write
        before that vsync replaces them. Plane 0's address register is the source's scanout address
        register (:meth:`set_scanout_address`). A plane outside ``0..plane_count - 1``: ``ValueError``."""
        self._displays[source].plane_set().program(plane, address, enabled, immediate)

    def plane_address(self, source: int, plane: int) -> int:
        """Read the address plane ``plane`` of display source ``source`` scans out now (plane 0:
        :meth:`scanout`)."""
        return self._displays[source].plane_set().address(plane)

    def plane_enabled(self, source: int, plane: int) -> bool:
        """Read plane ``plane``'s enable bit (as latched: what the source shows now). All planes
        are enabled at power on."""
        return self._displays[source].plane_set().enabled(plane)

    def plane_status(self, source: int) -> int:
        """Read display source ``source``'s plane latch status register: bit ``p`` set when plane
        ``p`` latched a pending address at a vsync since the bit was last cleared. Reading clears
        nothing."""
        return self._displays[source].plane_set().status()

    def plane_status_ack(self, source: int, bits: int) -> None:
        """Write the plane latch status register: clear ``bits`` (write-one-to-clear)."""
        self._displays[source].plane_set().ack(bits)

    # -- the hardware flip queue (WDDM 3.0; gpu/display.py HwFlipQueue) -------------------------------------
    def hw_flip_queue_submit(self, source: int, plane: int, present_id: int, address: int, target_ns: int) -> bool:
        """Write one flip into display source ``source``'s hardware flip queue for ``plane``: it
        latches at the first vsync at or after ``target_ns`` (and after the plane's previous latch),
        in order; of several whose target has come by a vsync, the latest written is shown and the
        older ones are logged cancelled. False, and nothing written, when the plane's queue is full."""
        return self._displays[source].flip_queue().submit(plane, present_id, address, target_ns)

    def hw_flip_queue_depth(self, source: int) -> int:
        """Read how many flips each plane's hardware flip queue of display source ``source`` holds
        (8 unless the hardware was built otherwise)."""
        return self._displays[source].flip_queue().depth

    def hw_flip_queue_pending(self, source: int, plane: int) -> int:
        """Read how many flips wait in the plane's hardware flip queue (written, neither latched nor
        cancelled); a write finds room while this is below :meth:`hw_flip_queue_depth`."""
        return self._displays[source].flip_queue().pending(plane)

    def hw_flip_queue_cancel(self, source: int, plane: int, first_present_id: int) -> int:
        """Cancel the plane's queued flips from ``first_present_id`` on; the first PresentId
        cancelled, or 0 when none still waited (each cancelled one is logged cancelled)."""
        return self._displays[source].flip_queue().cancel(plane, first_present_id)

    def hw_flip_queue_log(self, source: int, plane: int, start: int = 0) -> list[tuple[int, int]]:
        """Read the plane's flip queue log from entry ``start``: ``(PresentId, vsync time)``, or the
        cancelled marker (:data:`~wddmsim.gpu.display.HWFLIPQUEUE_TIMESTAMP_CANCELLED`) for the time."""
        return self._displays[source].flip_queue().log.get(plane, [])[start:]

    def hw_flip_queue_interrupt_target(self, source: int, plane: int, present_id: int) -> None:
        """Write the plane's interrupt target PresentId (0: a vsync cause at every latch; UINT64_MAX: none)."""
        self._displays[source].flip_queue().set_interrupt_target(plane, present_id)

    # -- the hardware scheduler's mailbox (one per engine) -----------------------------------------------
    # The first command to an engine's scheduler starts it: from then on it owns the engine's ring
    # registers (program_ring, doorbell, rptr, reset_ring are not to be used on that engine). It
    # needs the engine idle with an empty ring then. Times are ns.

    def sched_bands(self, engine: int, grace, quantum, process_grace, normal_share_pct: int) -> None:
        """Mailbox command CONFIGURE_BANDS: per band (IDLE, NORMAL, FOCUS, REALTIME), four values
        each: the grace a context of the band gives a lower band it preempts, the quantum between
        processes of the band, the grace between processes of the band; and the share of the
        engine kept for NORMAL against FOCUS (0..50 %). Out-of-range values: ``ValueError``."""
        self._gpu.hw_scheduler(engine).configure_bands(grace, quantum, process_grace, normal_share_pct)

    def sched_create_context(self, engine: int, cid: int, process, address_space: int = 0) -> None:
        """Mailbox command CREATE_CONTEXT: context ``cid`` of ``process`` (any hashable: the
        contexts of one process compare their in-process priorities), whose queues run in the
        address space with root table ``address_space`` (0: physical). Created resumed, NORMAL
        band, level 0, priority 0. An existing cid: ``ValueError``."""
        self._gpu.hw_scheduler(engine).create_context(cid, process, address_space)

    def sched_set_context(self, engine: int, cid: int, band: int, realtime_level: int = 0,
                          in_process_priority: int = 0, quantum: int | None = None, grace_same: int = 0,
                          grace_lower: int = 0) -> None:
        """Mailbox command SET_CONTEXT: context ``cid``'s band (0 IDLE, 1 NORMAL, 2 FOCUS,
        3 REALTIME), realtime level (0..31), in-process priority (-7..+7), quantum (None: the
        band's), same- and lower-priority grace. Effective at the scheduler's next decision."""
        self._gpu.hw_scheduler(engine).set_context(cid, band, realtime_level, in_process_priority, quantum,
                                                   grace_same, grace_lower)

    def sched_destroy_context(self, engine: int, cid: int) -> None:
        """Mailbox command DESTROY_CONTEXT: forget context ``cid`` and its queues. Refused
        (``GpuSchedulerError``) while one of its queues is on the engine: suspend it first."""
        self._gpu.hw_scheduler(engine).destroy_context(cid)

    def sched_create_queue(self, engine: int, cid: int, qid: int, ring_base: int, ring_size: int) -> None:
        """Mailbox command CREATE_QUEUE: queue ``qid`` of context ``cid``, an empty ring of
        ``ring_size`` bytes at ``ring_base`` in system memory, in the engine ring's format."""
        self._gpu.hw_scheduler(engine).create_queue(cid, qid, ring_base, ring_size)

    def sched_destroy_queue(self, engine: int, qid: int) -> None:
        """Mailbox command DESTROY_QUEUE: forget queue ``qid``. Refused (``GpuSchedulerError``)
        while it is on the engine."""
        self._gpu.hw_scheduler(engine).destroy_queue(qid)

    def sched_doorbell(self, engine: int, qid: int, wptr: int) -> None:
        """Write queue ``qid``'s doorbell: its packets up to byte offset ``wptr`` are ready (dword
        aligned and inside its ring, else ``EngineFault``). The scheduler decides when they run."""
        self._gpu.hw_scheduler(engine).doorbell(qid, wptr)

    def sched_rptr(self, engine: int, qid: int) -> int:
        """Read queue ``qid``'s read pointer: how far its ring was fetched (space before it is free)."""
        return self._gpu.hw_scheduler(engine).queue_rptr(qid)

    def sched_suspend(self, engine: int, cid: int, fence: int) -> bool:
        """Mailbox command SUSPEND_CONTEXT: stop scheduling context ``cid``. Answers True if it
        was already suspended (nothing else happens). Otherwise it is preempted at once if on the
        engine, and when it holds no engine state ``(cid, fence)`` joins the completed-suspend
        queue (:meth:`sched_pop_suspend`) and :func:`suspend_bit` is raised."""
        return self._gpu.hw_scheduler(engine).suspend_context(cid, fence)

    def sched_resume(self, engine: int, cid: int) -> None:
        """Mailbox command RESUME_CONTEXT: context ``cid`` may be scheduled again."""
        self._gpu.hw_scheduler(engine).resume_context(cid)

    def sched_pop_suspend(self, engine: int) -> tuple[int, int] | None:
        """Read (and remove) the oldest entry of the completed-suspend queue: ``(cid, fence)``,
        or None when it is empty. Read it until None after :func:`suspend_bit`."""
        done = self._gpu.hw_scheduler(engine).completed_suspends
        return done.popleft() if done else None

    def sched_pop_native_signal(self, engine: int) -> tuple[int | None, int, int] | None:
        """Read (and remove) the oldest entry of the native-fence signal queue: ``(qid that ran,
        CurrentValue address, value written)`` of a NATIVE_FENCE that raised the interrupt, or None
        when it is empty. Read it until None after :func:`native_fence_bit`."""
        done = self._gpu.hw_scheduler(engine).native_signals
        return done.popleft() if done else None

    def sched_reset(self, engine: int, everything: bool = False) -> list[int]:
        """Mailbox command RESET: reset the engine now. Answers the cids that lost their state: the
        context that was on the engine (its queues' work is dropped: read pointers jump to the
        write pointers). Contexts preempted earlier keep theirs. ``everything`` (a reset of the
        whole GPU): every context with queued work loses it and is answered. Nothing runs, and no
        suspend completes, until :meth:`sched_restart`."""
        return self._gpu.hw_scheduler(engine).reset(everything)

    def sched_restart(self, engine: int) -> None:
        """Mailbox command RESUME: scheduling starts again after :meth:`sched_reset` (suspends that
        completed in between are reported now). Without a reset before it, it does nothing."""
        self._gpu.hw_scheduler(engine).resume()

    def sched_running_queue(self, engine: int) -> int | None:
        """Read the scheduler's current-queue register: the qid whose ring is loaded on the engine
        (after a fault: the queue that faulted), or None."""
        return self._gpu.hw_scheduler(engine).current_queue
