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

Spec: docs/gpu.md (display controller); Microsoft's pages
d3dkmddi/nc-d3dkmddi-dxgkddi_controlinterrupt and d3dkmddi/ne-d3dkmddi-_dxgk_crtc_vsync_state.
"""

from __future__ import annotations

from collections import deque

from ..sim import DEVICE

#: A source's vsync interrupt cause is bit ``VSYNC_CAUSE_SHIFT + index`` of the interrupt status.
VSYNC_CAUSE_SHIFT = 96


class DisplaySource:
    """One VidPn source: refresh rate, current scanout address, pending flips and counters."""

    __slots__ = ("index", "refresh_hz", "period_ns", "scanout", "flips", "last_flip_time", "last_vsync_latch",
                 "pending", "max_pending", "gpu", "_timer", "vsyncs_reported", "vsync_interrupt", "_tick",
                 "ticks", "mmio_pending", "_mmio_timer")

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
