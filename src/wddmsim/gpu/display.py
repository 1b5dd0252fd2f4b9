"""The display controller: VidPn sources that scan out a surface at a fixed refresh rate.

Each source has a vsync grid: vsyncs fall at whole multiples of the refresh period from time 0.
A FLIP command (``commands.flip``) changes the surface a source scans out:

- interval 0 (immediate): the new surface is latched at once, mid-frame (tearing allowed);
- interval N >= 1: at the first vsync that is at least N periods after the previous latch (one
  flip per vsync at most with N = 1; every other vsync with N = 2, ...). Without ``FLIP_NO_WAIT``
  the engine stalls until then; with it the flip goes into the source's pending-flip registers
  (``max_pending`` deep, latched in order, one per vsync) and the engine carries on.

Every latch at a vsync raises the source's vsync interrupt cause (bit ``VSYNC_CAUSE_SHIFT +
index``) so the driver can report ``DXGK_INTERRUPT_CRTC_VSYNC`` with the address now scanned out.
Immediate flips raise nothing: they complete with the command.

The periodic vsync interrupt: while its enable register is set (:meth:`DisplaySource.set_vsync_interrupt`,
which a driver writes when the OS calls ``DxgkDdiControlInterrupt`` for ``DXGK_INTERRUPT_CRTC_VSYNC``),
the source raises the same cause at every vsync of its grid, whether or not a flip latched there:
Microsoft's DxgkDdiControlInterrupt page asks for the interrupt "during every vertical retrace
period" once enabled. Cleared, the source schedules nothing; a latch at a vsync still raises the
cause (the flip-done event a flip's completion depends on). Disabling keeps the phase (the grid is
fixed from time 0), as ``DXGK_VSYNC_DISABLE_KEEP_PHASE`` asks.

The scanout-address registers (MMIO flips, :meth:`DisplaySource.program_address`): a write of the
address register with "immediate" shows the surface at once (no vsync cause); without it the address
waits in the source's pending-address register and latches at the first vsync strictly after the
write (a write at a vsync instant latches at the next one), raising the vsync cause like any latch at
a vsync. A second write before the latch replaces the pending address (one register: the latest
write wins).

Overlay planes (multiplane overlays; :mod:`wddmsim.gpu.planes`, the source's ``planes``): plane 0
is the scanout-address register above; planes 1 and up have address and enable registers of their
own with the same latch rules, and every plane's latch at a vsync raises the vsync cause and sets
its bit in the source's plane latch status register.

The hardware flip queue (WDDM 3.0; :class:`HwFlipQueue`, the source's ``hwq``): per plane a queue of
flips, each a PresentId, a surface and a target flip time, written ahead of time
(:meth:`HwFlipQueue.submit`, at most ``depth`` waiting per plane). The head of a plane's queue
latches at the first vsync at or after its target time and strictly after its submission, and no
sooner than the vsync after the plane's previous latch (each queued frame stays on screen at least
one refresh); the others wait behind it, in order. When several flips of the plane have reached
their target time by that vsync (and were written before it), the most recently queued of them is
the one shown and the older ones are logged cancelled, as Microsoft's page asks of the hardware
("Multiple flips with an expired TargetFlipTime"). A latch appends ``(PresentId, vsync time)`` to the
plane's flip queue log and, when the PresentId reaches the plane's interrupt target
(:meth:`HwFlipQueue.set_interrupt_target`: 0 every latch, ``UINT64_MAX`` none), raises the vsync
cause. :meth:`HwFlipQueue.cancel` takes back the waiting flips from a PresentId to the last one
written, logging each with :data:`HWFLIPQUEUE_TIMESTAMP_CANCELLED`. A model decision: the log keeps
every entry (no ring buffer to wrap); ``len(log)`` is the first free entry index.

Spec: docs/gpu.md (display controller); Microsoft's pages
d3dkmddi/nc-d3dkmddi-dxgkddi_controlinterrupt and d3dkmddi/ne-d3dkmddi-_dxgk_crtc_vsync_state; for the
hardware flip queue, "Hardware flip queue" (display/hardware-flip-queue), DXGK_FLIPQUEUE_LOG_ENTRY,
DXGK_CANCELFLIPS_PLANE and DXGKARG_SETINTERRUPTTARGETPRESENTID.
"""

from __future__ import annotations

from collections import deque

from ..sim import DEVICE

#: A source's vsync interrupt cause is bit ``VSYNC_CAUSE_SHIFT + index`` of the interrupt status.
VSYNC_CAUSE_SHIFT = 96
#: Flips each plane's hardware flip queue holds (a model choice; a driver reports its hardware's
#: depth as DXGK_DRIVERCAPS.MaxHwQueuedFlips)
HW_FLIP_QUEUE_DEPTH = 8


class DisplaySource:
    """One VidPn source: refresh rate, current scanout address, pending flips and counters."""

    __slots__ = ("index", "refresh_hz", "period_ns", "scanout", "flips", "last_flip_time", "last_vsync_latch",
                 "pending", "max_pending", "gpu", "_timer", "vsyncs_reported", "vsync_interrupt", "_tick",
                 "ticks", "mmio_pending", "_mmio_timer", "hwq", "planes")

    def __init__(self, index: int, refresh_hz: float = 60.0, gpu=None, max_pending: int = 1):
        if refresh_hz <= 0:
            raise ValueError(f"refresh rate must be positive, got {refresh_hz}")
        self.index = index
        self.refresh_hz = refresh_hz
        self.period_ns = round(1e9 / refresh_hz)
        self.scanout = 0
        self.flips = 0
        self.last_flip_time: int | None = None
        self.last_vsync_latch: int | None = None  # the vsync of the last latch made at a vsync
        self.pending: deque = deque()  # (surface, interval) flips waiting in the registers
        self.max_pending = max_pending
        self.gpu = gpu
        self._timer = None
        self.vsyncs_reported = 0
        #: the periodic vsync interrupt's enable register (cleared at reset)
        self.vsync_interrupt = False
        self._tick = None
        #: vsyncs at which the periodic interrupt raised the cause
        self.ticks = 0
        #: the pending scanout address an MMIO write left for the next vsync (None: nothing pending)
        self.mmio_pending: int | None = None
        self._mmio_timer = None
        #: the hardware flip queue (WDDM 3.0), made on first use (:meth:`flip_queue`)
        self.hwq: HwFlipQueue | None = None
        #: the overlay planes' registers (multiplane overlays), made on first use (:meth:`plane_set`)
        self.planes = None

    def plane_set(self):
        """The source's planes (:class:`wddmsim.gpu.planes.SourcePlanes`), made on first use."""
        if self.planes is None:
            from .planes import SourcePlanes

            self.planes = SourcePlanes(self)
        return self.planes

    def flip_queue(self, depth: int | None = None) -> "HwFlipQueue":
        """The source's hardware flip queue (made on first use, ``depth`` flips per plane)."""
        if self.hwq is None:
            self.hwq = HwFlipQueue(self, HW_FLIP_QUEUE_DEPTH if depth is None else depth)
        return self.hwq

    def vsync_cause(self) -> int:
        """The source's vsync interrupt cause bit (``VSYNC_CAUSE_SHIFT + index``)."""
        return 1 << (VSYNC_CAUSE_SHIFT + self.index)

    def next_vsync(self, t: int) -> int:
        """The first vsync at or after ``t``."""
        p = self.period_ns
        return -(-t // p) * p

    def flip_time(self, t: int, interval: int) -> int:
        """When a flip asked for at ``t`` with ``interval`` takes effect."""
        if interval <= 0:
            return t
        v = self.next_vsync(t)
        if self.last_vsync_latch is not None:
            v = max(v, self.last_vsync_latch + interval * self.period_ns)
        return v

    def latch(self, surface: int, t: int, at_vsync: bool = False) -> None:
        """Show ``surface`` from time ``t``; a latch at a vsync raises the vsync cause."""
        self.scanout = surface
        self.flips += 1
        self.last_flip_time = t
        if at_vsync:
            self.last_vsync_latch = t
            if self.gpu is not None:
                self.gpu.irq.assert_cause(1 << (VSYNC_CAUSE_SHIFT + self.index))

    # -- the periodic vsync interrupt -----------------------------------------------------------------
    def set_vsync_interrupt(self, enable: bool) -> None:
        """Write the vsync interrupt enable register. Set: the cause is raised at every vsync from
        the next one (strictly after now); cleared: no more periodic causes, and nothing scheduled."""
        enable = bool(enable)
        if enable == self.vsync_interrupt:
            return
        self.vsync_interrupt = enable
        if enable:
            sim = self.gpu.sim
            self._tick = sim.at(self.next_vsync(sim.now + 1), self._vsync_tick, irql=DEVICE)
        elif self._tick is not None:
            self._tick.cancel()
            self._tick = None

    def _vsync_tick(self) -> None:
        self.ticks += 1
        self.gpu.irq.assert_cause(1 << (VSYNC_CAUSE_SHIFT + self.index))
        sim = self.gpu.sim
        self._tick = sim.at(sim.now + self.period_ns, self._vsync_tick, irql=DEVICE)

    # -- the scanout-address registers (MMIO flips) ----------------------------------------------------
    def program_address(self, surface: int, immediate: bool) -> None:
        """Write the scanout address (see the module doc): at once with ``immediate``, else at the
        first vsync strictly after now."""
        sim = self.gpu.sim
        if immediate:
            if self._mmio_timer is not None:
                self._mmio_timer.cancel()
                self._mmio_timer = None
            self.mmio_pending = None
            self.latch(surface, sim.now)
            return
        self.mmio_pending = surface
        if self._mmio_timer is None:
            self._mmio_timer = sim.at(self.next_vsync(sim.now + 1), self._latch_mmio, irql=0)

    def _latch_mmio(self) -> None:
        self._mmio_timer = None
        surface, self.mmio_pending = self.mmio_pending, None
        if surface is not None:
            if self.planes is not None:
                self.planes.primary_latched()  # plane 0's enable bit and latch status (gpu/planes.py)
            self.latch(surface, self.gpu.sim.now, at_vsync=True)

    # -- pending-flip registers (FLIP with FLIP_NO_WAIT) --------------------------------------------
    @property
    def full(self) -> bool:
        return len(self.pending) >= self.max_pending

    def queue_flip(self, surface: int, interval: int, t: int) -> None:
        """Queue a no-wait flip asked for at ``t``; it latches at its vsync without stalling anyone."""
        if interval <= 0 and not self.pending:
            self.latch(surface, t)
            return
        self.pending.append((surface, max(interval, 1)))
        if self._timer is None:
            self._schedule(t)

    def _schedule(self, t: int) -> None:
        surface, interval = self.pending[0]
        when = self.flip_time(t, interval)
        self._timer = self.gpu.sim.at(when, self._latch_pending, irql=0)

    def _latch_pending(self) -> None:
        self._timer = None
        surface, _interval = self.pending.popleft()
        now = self.gpu.sim.now
        self.latch(surface, now, at_vsync=True)
        if self.pending:
            self._schedule(now + 1)


#: ``PresentTimestamp`` of a flip queue log entry for a flip cancelled before it was shown
#: (DXGK_HWFLIPQUEUE_TIMESTAMP_CANCELLED; the model's value: no time is ever negative)
HWFLIPQUEUE_TIMESTAMP_CANCELLED = -1
#: an interrupt target PresentId that asks for no latch interrupt (UINT64_MAX)
NO_INTERRUPT = (1 << 64) - 1


class HwFlipQueue:
    """One VidPn source's hardware flip queue (see the module doc): per plane the waiting flips
    ``(present_id, surface, target_ns, submitted_ns)``, the log of completed and cancelled ones and
    what each plane scans out."""

    __slots__ = ("source", "depth", "waiting", "log", "scanout", "last_latch", "last_id", "interrupt_target",
                 "_timers", "_cancelled")

    def __init__(self, source: DisplaySource, depth: int = HW_FLIP_QUEUE_DEPTH):
        if depth < 1:
            raise ValueError(f"flip queue depth must be at least 1, got {depth}")
        self.source = source
        self.depth = depth
        self.waiting: dict[int, deque] = {}
        self.log: dict[int, list[tuple[int, int]]] = {}
        self.scanout: dict[int, int] = {}
        self.last_latch: dict[int, int] = {}  # plane -> the vsync of its last latch
        self.last_id: dict[int, int] = {}  # plane -> the last PresentId written
        self.interrupt_target: dict[int, int] = {}
        self._timers: dict[int, object] = {}
        #: plane -> [(the PresentId after whose latch they are logged, cancelled PresentIds)]
        self._cancelled: dict[int, list] = {}

    def full(self, plane: int) -> bool:
        q = self.waiting.get(plane)
        return q is not None and len(q) >= self.depth

    def pending(self, plane: int) -> int:
        """How many flips of ``plane`` wait in the queue (written, not yet latched or cancelled)."""
        q = self.waiting.get(plane)
        return len(q) if q is not None else 0

    def submit(self, plane: int, present_id: int, surface: int, target_ns: int) -> bool:
        """Write one flip into ``plane``'s queue; False (nothing written) when the queue is full."""
        q = self.waiting.setdefault(plane, deque())
        if len(q) >= self.depth:
            return False
        now = self.source.gpu.sim.now
        q.append((present_id, surface, max(0, target_ns), now))
        self.last_id[plane] = present_id
        if plane not in self._timers:
            self._schedule(plane)
        return True

    def latch_time(self, plane: int) -> int | None:
        """When the head of ``plane``'s queue latches (None: nothing waits)."""
        q = self.waiting.get(plane)
        if not q:
            return None
        _pid, _surface, target, submitted = q[0]
        src = self.source
        t = max(target, submitted + 1)
        last = self.last_latch.get(plane)
        if last is not None:
            t = max(t, last + 1)
        return src.next_vsync(t)

    def _schedule(self, plane: int) -> None:
        when = self.latch_time(plane)
        if when is None:
            self._timers.pop(plane, None)
            return
        self._timers[plane] = self.source.gpu.sim.at(when, self._latch, plane, irql=0)

    def _latch(self, plane: int) -> None:
        self._timers.pop(plane, None)
        q = self.waiting.get(plane)
        if not q:
            return
        src = self.source
        now = src.gpu.sim.now
        log = self.log.setdefault(plane, [])
        # Of the flips whose target time has come by this vsync (written before it), the most
        # recently queued is shown; the older ones are cancelled (Microsoft's page).
        expired = 1
        while expired < len(q) and q[expired][2] <= now and q[expired][3] < now:
            expired += 1
        for _ in range(expired - 1):
            gone = q.popleft()[0]
            log.append((gone, HWFLIPQUEUE_TIMESTAMP_CANCELLED))
            self._log_held(plane, gone, log)
        present_id, surface, _target, _submitted = q.popleft()
        self.scanout[plane] = surface
        self.last_latch[plane] = now
        log.append((present_id, now))
        self._log_held(plane, present_id, log)
        target = self.interrupt_target.get(plane, 0)
        raise_cause = target != NO_INTERRUPT and present_id >= target
        if plane == 0:
            # the primary plane is the source's scanout: the vsync latch path reports it
            src.scanout = surface
            src.flips += 1
            src.last_flip_time = now
            src.last_vsync_latch = now
        else:
            src.flips += 1
        if raise_cause and src.gpu is not None:
            src.gpu.irq.assert_cause(1 << (VSYNC_CAUSE_SHIFT + src.index))
        if q:
            self._schedule(plane)

    def _log_held(self, plane: int, present_id: int, log: list) -> None:
        """Log the runs cancelled while ``present_id`` still waited before them (their turn in the log)."""
        held = self._cancelled.get(plane)
        while held and held[0][0] == present_id:
            log.extend((pid, HWFLIPQUEUE_TIMESTAMP_CANCELLED) for pid in held.pop(0)[1])

    def cancel(self, plane: int, first_present_id: int) -> int:
        """Cancel ``plane``'s waiting flips from ``first_present_id`` to the last written. Each is
        logged cancelled, in PresentId order: at once when no flip before them still waits, else
        right after the last of those latches. Returns the first PresentId cancelled
        (``first_present_id`` when every flip of the range still waited), or 0 when none was."""
        q = self.waiting.get(plane)
        if not q:
            return 0
        keep = [e for e in q if e[0] < first_present_id]
        gone = [e[0] for e in q if e[0] >= first_present_id]
        if not gone:
            return 0
        q.clear()
        q.extend(keep)
        held = self._cancelled.get(plane)
        if held:
            # runs cancelled before, waiting to be logged after a flip cancelled now, follow this run
            for entry in [h for h in held if h[0] >= first_present_id]:
                held.remove(entry)
                gone.extend(entry[1])
        if keep:
            self._cancelled.setdefault(plane, []).append((keep[-1][0], gone))
        else:
            log = self.log.setdefault(plane, [])
            log.extend((pid, HWFLIPQUEUE_TIMESTAMP_CANCELLED) for pid in gone)
            timer = self._timers.pop(plane, None)
            if timer is not None:
                timer.cancel()
        return gone[0]

    def set_interrupt_target(self, plane: int, present_id: int) -> None:
        """The PresentId whose latch (and every later one) raises the vsync cause: 0 every latch,
        :data:`NO_INTERRUPT` none."""
        self.interrupt_target[plane] = present_id

    def first_free_log_index(self, plane: int) -> int:
        """The index after the last log entry written for ``plane``."""
        return len(self.log.get(plane, ()))
