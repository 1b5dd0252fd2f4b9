"""Overlay planes of a display source: the scan-out registers multiplane overlays program.

Each VidPn source scans out :data:`PLANES_PER_SOURCE` planes, composed by the display controller
(the model keeps no pixels: a plane is an address and an enable bit, and its z-order is only its
number). Plane 0 is the source's primary: its address register is the source's scanout address
register (:meth:`~wddmsim.gpu.display.DisplaySource.program_address`, what ``scanout`` reads and MMIO
flips write), so everything that flips the primary keeps working unchanged; this module adds plane
0's enable bit. Planes 1 and up have an address register and an enable bit of their own.

Each plane follows the primary's latch rules: a write with "immediate" shows at once (mid-frame,
no interrupt); any other write waits in the plane's pending registers (address and enable bit
together) and latches at the first vsync strictly after the write (a write at a vsync instant
latches at the next one); a second write before that latch replaces the pending one (one register:
the latest write wins); an immediate write drops whatever was pending. A latch at a vsync raises
the source's vsync cause (``VSYNC_CAUSE_SHIFT + source``), as a primary flip does, and sets the
plane's bit in the source's plane latch status register, which tells the driver's ISR which planes
took a new address at this vsync. The register is read (:meth:`SourcePlanes.status`) and cleared
by writing ones (:meth:`SourcePlanes.ack`); bit 0 is set by every latch of the primary's pending
address, whoever wrote it.

A model decision: a plane's enable bit takes effect with its address; a disabled plane keeps its
address register (what it would show when enabled again). Microsoft's pages for the DDI that
drives these registers: d3dkmddi/nc-d3dkmddi-dxgkddi_setvidpnsourceaddresswithmultiplaneoverlay3,
ns-d3dkmddi-_dxgk_multiplane_overlay_plane3 and ns-d3dkmddi-_dxgk_plane_specific_input_flags
(Enabled, FlipImmediate, FlipOnNextVSync); the manual's section: docs/gpu-programming.md.
"""

from __future__ import annotations

#: Planes each VidPn source scans out, the primary (plane 0) included (a model choice; a driver
#: reports how many it uses as DXGK_DRIVERCAPS.MaxOverlayPlanes)
PLANES_PER_SOURCE = 4


class _Plane:
    __slots__ = ("address", "enabled", "pending", "timer", "latches", "last_latch")

    def __init__(self):
        self.address = 0  # planes 1 and up: the address scanned out (plane 0's lives in the source)
        self.enabled = True
        self.pending: tuple[int, bool] | None = None  # (address, enabled) waiting for the next vsync
        self.timer = None
        self.latches = 0  # latches at a vsync
        self.last_latch: int | None = None


class SourcePlanes:
    """The planes of one :class:`~wddmsim.gpu.display.DisplaySource` (see the module doc)."""

    __slots__ = ("source", "planes", "_status")

    def __init__(self, source, count: int = PLANES_PER_SOURCE):
        if count < 1:
            raise ValueError(f"a source has at least its primary plane, got {count} planes")
        self.source = source
        self.planes = [_Plane() for _ in range(count)]
        self._status = 0

    @property
    def count(self) -> int:
        return len(self.planes)

    def _plane(self, plane: int) -> _Plane:
        if not 0 <= plane < len(self.planes):
            raise ValueError(f"display source {self.source.index} has planes 0..{len(self.planes) - 1}, not {plane}")
        return self.planes[plane]

    def address(self, plane: int) -> int:
        """The address ``plane`` scans out now (plane 0: the source's scanout register)."""
        p = self._plane(plane)
        return self.source.scanout if plane == 0 else p.address

    def enabled(self, plane: int) -> bool:
        """Whether ``plane`` is shown now."""
        return self._plane(plane).enabled

    def program(self, plane: int, address: int, enabled: bool = True, immediate: bool = False) -> None:
        """Write ``plane``'s address and enable bit: at once with ``immediate``, else at the first
        vsync strictly after now (the latest write before that vsync wins)."""
        p = self._plane(plane)
        enabled = bool(enabled)
        if plane == 0:
            # The primary's address register is the source's; its pending address latches in
            # DisplaySource._latch_mmio, which calls primary_latched for the enable bit.
            p.pending = None if immediate else (address, enabled)
            if immediate:
                p.enabled = enabled
            self.source.program_address(address, immediate)
            return
        sim = self.source.gpu.sim
        if immediate:
            if p.timer is not None:
                p.timer.cancel()
                p.timer = None
            p.pending = None
            p.address = address
            p.enabled = enabled
            return
        p.pending = (address, enabled)
        if p.timer is None:
            p.timer = sim.at(self.source.next_vsync(sim.now + 1), self._latch, plane, irql=0)

    def _latch(self, plane: int) -> None:
        p = self.planes[plane]
        p.timer = None
        pending, p.pending = p.pending, None
        if pending is None:
            return
        p.address, p.enabled = pending
        self._latched(p, plane)
        src = self.source
        src.gpu.irq.assert_cause(src.vsync_cause())

    def primary_latched(self) -> None:
        """The source latched its pending scanout address at a vsync (plane 0): its enable bit
        follows, and the latch shows in the status register. The source raises the vsync cause."""
        p = self.planes[0]
        if p.pending is not None:
            p.enabled = p.pending[1]
            p.pending = None
        self._latched(p, 0)

    def _latched(self, p: _Plane, plane: int) -> None:
        p.latches += 1
        p.last_latch = self.source.gpu.sim.now
        self._status |= 1 << plane

    # -- the plane latch status register ----------------------------------------------------------
    def status(self) -> int:
        """Bit ``p`` set: plane ``p`` latched a pending address at a vsync since the bit was cleared."""
        return self._status

    def ack(self, bits: int) -> None:
        """Clear the status bits in ``bits`` (write-one-to-clear)."""
        self._status &= ~bits
