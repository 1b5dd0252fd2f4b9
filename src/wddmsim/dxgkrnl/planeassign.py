"""Windows on overlay planes: the OS's side of a windowed flip-model swap chain that the compositor
handed to a plane of its own (PresentMon: "Hardware Composed: Independent Flip").

The compositor (:mod:`wddmsim.workloads.overlayplanes`) decides *when* a window may leave
composition; this module is what the OS then does:

- :meth:`OverlayPlanes.assign`: the lowest plane of the VidPn source no window holds (LayerIndex 1
  and up: plane 0 is the source's primary, the compositor's own swap chain) is chosen, and the
  configuration that would result (plane 0, every window already on a plane of the source, and
  this window on the new plane, with their surfaces and attributes) is asked of the driver with
  ``DxgkDdiCheckMultiPlaneOverlaySupport3`` (:meth:`wddmsim.dxgkrnl.mpoflip.MpoFlipper.check`).
  Only ``Supported`` assigns the plane (``PlaneAssign``). Nothing is asked of a driver that does not
  declare ``DXGK_DRIVERCAPS.SupportMultiPlaneOverlay`` with ``MaxOverlayPlanes`` >= 2 at WDDM 2.1 or
  later, nor when no plane is free.
- From then on a present of that window (``D3DKMTPresent`` with ``RedirectedFlip``, exactly the call
  a composed window makes: the application does not know) goes to its plane instead of the
  compositor (:meth:`OverlayPlanes.present`, logged as ``Present`` mode ``overlay_flip``): once the
  frame's rendering retires, the OS flips the plane to the frame's buffer with
  ``DxgkDdiSetVidPnSourceAddressWithMultiPlaneOverlay3`` at device IRQL
  (:meth:`wddmsim.dxgkrnl.mpoflip.MpoFlipper.flip`, one plane per call) and the frame is
  ``Displayed`` when the driver's ``CRTC_VSYNC_WITH_MULTIPLANE_OVERLAY2`` names its PresentId
  (:mod:`.overlays`), or ``Dropped`` when a later write of the plane won first. The compositor does
  not compose the window and keeps composing the others on plane 0.
- The sync interval as for an independent flip (:mod:`.present`): sync interval 0 with tearing
  allowed is ``FlipImmediate`` (shown when the call returns); sync interval 0 otherwise is
  ``FlipOnNextVSync`` made as soon as the frame is ready, so the newest frame ready before a vsync
  is the one shown and the ones it overwrote are dropped (IDXGISwapChain::Present: "discard this
  frame if a newer frame is queued"); sync interval N >= 1 shows every frame, in order, for at
  least N refreshes: one flip of the plane waits for the display at a time, and the next is made
  no sooner than N - 1 periods after the vsync that showed the previous one, so it latches N
  periods after it. The window's first frame on the plane follows its last composed frame the same
  way (with sync interval 0 both may reach the screen at one vsync, the plane's on top).
- :meth:`OverlayPlanes.release` takes the window off its plane (``PlaneRelease``, with the reason
  the compositor or the OS had): its next presents are composed again; the frames it already
  presented to the plane are still flipped there, and once the last of them is shown or dropped
  the OS disables the plane with one more flip (``Enabled`` 0). The plane is free for another
  window when that flip has reached the screen. The OS itself releases a window whose plane flip
  the driver did not make (a status other than STATUS_SUCCESS: the frame is dropped) or that it
  could not ask for (:class:`wddmsim.dxgkrnl.mpoflip.MpoError`).

Limits: the model has no window geometry: the rectangles asked and flipped are the surface's own
(``SURFACE_W`` x ``SURFACE_H``) and nothing moves, so the configuration never changes while a
window holds its plane; a frame composed after a release may be hidden under the plane until the
disable flip latches (at most a refresh). The OS does not call again after STATUS_RETRY
(:mod:`.mpoflip`).

Microsoft's pages: "Multiplane overlay support" (windows-hardware/drivers/display),
d3dkmddi/nc-d3dkmddi-dxgkddi_checkmultiplaneoverlaysupport3,
d3dkmddi/nc-d3dkmddi-dxgkddi_setvidpnsourceaddresswithmultiplaneoverlay3,
"For best performance, use DXGI flip model" (independent flip, multiplane overlays) and
IDXGISwapChain::Present (https://learn.microsoft.com/).
"""

from __future__ import annotations

from collections import deque

from ..ddi.versions import ddi_version
from ..sim import DEVICE
from .composition import PresentToken
from .mpoflip import SUCCESS, MpoError, PlaneRequest, flipper
from .overlays import NOT_SHOWN

_WDDM2_1 = ddi_version("wddm2_1").value
#: the surface every workload renders (the model has no window geometry)
_SURFACE_W = 128
_SURFACE_H = 128
_RECTS = {"SrcRect": (0, 0, _SURFACE_W, _SURFACE_H), "DstRect": (0, 0, _SURFACE_W, _SURFACE_H),
          "ClipRect": (0, 0, _SURFACE_W, _SURFACE_H)}


class PlaneWindow:
    """One window on one plane: its frames on their way to the plane."""

    __slots__ = ("source", "layer", "context", "surface", "ready", "inflight", "waiting", "before", "last_shown",
                 "last_present", "leaving", "disabling", "timer", "shown", "dropped")

    def __init__(self, source: int, layer: int, context, surface):
        self.source = source
        self.layer = layer
        self.context = context
        #: the allocation the plane was asked about (the window's back buffer)
        self.surface = surface
        #: frames whose rendering retired, not yet flipped (sync interval N >= 1: in order)
        self.ready: deque = deque()
        #: frames presented to the plane, not yet shown or dropped
        self.inflight = 0
        #: the plane flip of a sync-interval-N frame waiting for its vsync (one at a time)
        self.waiting = None
        #: the window's last composed frame, while it has not reached the screen: a frame with sync
        #: interval N >= 1 is flipped on the plane only after it (in order)
        self.before = None
        #: when the plane last showed a frame of the window (a vsync), -1 before the first
        self.last_shown = -1
        #: when the window's last present call to the plane began
        self.last_present = -1
        #: the reason it is leaving the plane, once released
        self.leaving: str | None = None
        #: the flip disabling the plane was made
        self.disabling = False
        self.timer = None
        self.shown = 0
        self.dropped = 0


class OverlayPlanes:
    """The windows on overlay planes of one adapter (see the module doc); get it with
    :func:`overlay_planes`."""

    def __init__(self, adapter):
        self.adapter = adapter
        self.sim = adapter.sim
        self.presents = adapter.vidsch.presents
        #: context handle -> its window, while on a plane and not leaving
        self.active: dict[int, PlaneWindow] = {}
        #: (source, LayerIndex) -> the window holding the plane (leaving ones until the disable shows)
        self.planes: dict[tuple[int, int], PlaneWindow] = {}
        #: window (context handle) -> its last present handed to the compositor
        self.last_composed: dict[int, object] = {}
        #: a window's last composed frame not yet shown -> the window on a plane waiting for it
        self.gates: dict = {}
        self.assigned = 0
        self.released = 0
        self.checks = 0

    # -- what the driver offers ------------------------------------------------------------------------
    def max_planes(self) -> int:
        """MaxOverlayPlanes when the OS may put windows on planes (WDDM 2.1 and later with
        SupportMultiPlaneOverlay), else 0."""
        adapter = self.adapter
        caps = getattr(adapter, "caps", None)
        if caps is None or not caps.SupportMultiPlaneOverlay or adapter.version.value < _WDDM2_1:
            return 0
        return int(caps.MaxOverlayPlanes)

    def free_layer(self, source: int) -> int | None:
        """The lowest plane of ``source`` above the primary that no window holds, or None."""
        for layer in range(1, self.max_planes()):
            if (source, layer) not in self.planes:
                return layer
        return None

    def layer_of(self, context) -> int | None:
        """The plane the window of ``context`` presents to, or None (composed)."""
        win = self.active.get(context.handle)
        return None if win is None else win.layer

    def last_present(self, context) -> int:
        """When the window of ``context`` last began a present to its plane (-1: none yet)."""
        win = self.active.get(context.handle)
        return -1 if win is None else win.last_present

    # -- the compositor's requests ---------------------------------------------------------------------
    def assign(self, source: int, context, surface, primary=None):
        """Put the window of ``context`` (its back buffer ``surface``) on a free plane of ``source``
        if the driver supports the configuration (``primary``: plane 0's allocation). Returns
        ``(layer, answer)``: the plane (None when not assigned) and the driver's
        :class:`~wddmsim.dxgkrnl.mpoflip.SupportAnswer` (None when nothing was asked)."""
        if context.handle in self.active:
            return self.active[context.handle].layer, None
        layer = self.free_layer(source)
        if layer is None:
            return None, None
        planes = [PlaneRequest(0, allocation=primary, attributes=_RECTS)]
        planes += [PlaneRequest(w.layer, allocation=w.surface, attributes=_RECTS)
                   for (s, _), w in sorted(self.planes.items()) if s == source and w.leaving is None]
        planes.append(PlaneRequest(layer, allocation=surface, attributes=_RECTS))
        self.checks += 1
        answer = flipper(self.adapter).check(source, planes)
        if not answer.supported:
            return None, answer
        win = PlaneWindow(source, layer, context, surface)
        win.last_present = self.sim.now
        before = self.last_composed.pop(context.handle, None)
        if before is not None:
            if before.displayed >= 0:
                win.last_shown = before.displayed
            elif before.displayed == NOT_SHOWN:
                win.before = before
                self.gates[before] = win
        self.active[context.handle] = win
        self.planes[(source, layer)] = win
        self.assigned += 1
        tr = self.adapter.trace
        if tr is not None:
            tr.emit(self.sim.now, "PlaneAssign", {"source": source, "layer": layer, "context": context.handle})
        return layer, answer

    def release(self, context, reason: str) -> bool:
        """Take the window of ``context`` off its plane (``reason``: why); True when it was on one."""
        win = self.active.pop(context.handle, None)
        if win is None:
            return False
        win.leaving = reason
        self.released += 1
        tr = self.adapter.trace
        if tr is not None:
            tr.emit(self.sim.now, "PlaneRelease", {"source": win.source, "layer": win.layer,
                                                   "context": context.handle, "reason": reason})
        self._soon(win)
        return True

    # -- the window's presents -------------------------------------------------------------------------
    def composed(self, token) -> None:
        """A present of a window not on a plane was handed to the compositor (the last one counts)."""
        self.last_composed[token.context.handle] = token

    def resolved(self, frame) -> None:
        """A composed frame was shown or dropped: a window on a plane waiting for it goes on (called
        by :mod:`.present`)."""
        win = self.gates.pop(frame, None)
        if win is not None:
            win.before = None
            if frame.displayed >= 0:
                win.last_shown = max(win.last_shown, frame.displayed)
            self._soon(win)

    def present(self, packet, source: int, call_start: int, sync_interval: int, allow_tearing: bool, surface):
        """A present of a window on a plane: ``packet`` ends the frame; the plane flips to
        ``surface`` once it retires. Returns the present's token."""
        ctx = packet.context
        win = self.active[ctx.handle]
        token = PresentToken(packet, source, call_start, sync_interval)
        immediate = sync_interval == 0 and allow_tearing
        adapter = self.adapter
        adapter.ledger.present(self.sim.now, ctx.handle, ctx.device.process.pid, packet.seq, "overlay_flip", 1,
                               0 if immediate else max(1, sync_interval), source, _SURFACE_W, _SURFACE_H, call_start)
        if adapter.trace is not None:
            adapter.trace.emit(self.sim.now, "Present", {
                "context": ctx.handle, "process": ctx.device.process.pid, "seq": packet.seq, "mode": "overlay_flip",
                "flip": 1, "interval": 0 if immediate else max(1, sync_interval), "source": source,
                "width": _SURFACE_W, "height": _SURFACE_H, "cpu_start": call_start})
        self.presents.presented(token)
        if not immediate and adapter.vsync is not None:
            adapter.vsync.needed("flip")
        win.last_present = call_start
        win.inflight += 1
        frame = (token, surface if surface is not None else win.surface, immediate)
        adapter.wait_event(ctx, packet.seq).add_callback(lambda _value: self._arrived(win, frame))
        return token

    def _arrived(self, win: PlaneWindow, frame) -> None:
        """The frame's rendering retired: to the plane (a frame nothing rendered is not shown)."""
        token = frame[0]
        if token.flags & 0x8:  # Flags.NullRendering: nothing ran, nothing is shown
            self.presents.drop_frame(win.source, token)
            self._done(win)
            return
        win.ready.append(frame)
        self._soon(win)

    def _soon(self, win: PlaneWindow) -> None:
        if win.timer is None:
            win.timer = self.sim.soon(self._pump, win, irql=DEVICE)

    def _pump(self, win: PlaneWindow) -> None:
        """Flip the window's ready frames as their sync interval allows (device IRQL)."""
        win.timer = None
        now = self.sim.now
        period = self.presents.sources[win.source].period_ns
        while win.ready:
            token, surface, immediate = win.ready[0]
            held = token.sync_interval
            if held and not immediate:
                if win.waiting is not None or win.before is not None:
                    return  # the previous frame is not on screen yet: in order
                if win.last_shown >= 0:
                    due = win.last_shown + (held - 1) * period
                    if now < due:
                        win.timer = self.sim.at(due, self._pump, win, DEVICE)
                        return
            win.ready.popleft()
            self._flip(win, token, surface, immediate)
        if win.leaving is not None and not win.inflight and not win.disabling:
            self._disable(win)

    def _flip(self, win: PlaneWindow, token, surface, immediate: bool) -> None:
        try:
            result = flipper(self.adapter).flip(win.source, [PlaneRequest(
                win.layer, 0, True, immediate, None, token.context, surface)],
                on_done=lambda f: self._resolved(win, token, f))
        except MpoError:
            self.presents.drop_frame(win.source, token)
            self._done(win)
            self.release(token.context, "refused")
            return
        (f,) = result.flips
        if result.status != SUCCESS:
            self.release(token.context, "refused")  # the frame was dropped with the flip
        elif f.shown == NOT_SHOWN and token.sync_interval and not immediate:
            win.waiting = f

    def _resolved(self, win: PlaneWindow, token, f) -> None:
        """A plane flip of the window was shown or dropped (inside the driver's interrupt callback,
        or when the call returned): record it, and schedule the next flip."""
        if f.shown >= 0:
            win.shown += 1
            win.last_shown = f.shown
            self.presents.show_frame(win.source, token, f.shown, change=True)
        else:
            win.dropped += 1
            self.presents.drop_frame(win.source, token)
        if win.waiting is f:
            win.waiting = None
        self._done(win)

    def _done(self, win: PlaneWindow) -> None:
        win.inflight -= 1
        if win.ready or (win.leaving is not None and not win.inflight):
            self._soon(win)

    def _disable(self, win: PlaneWindow) -> None:
        """The last frame of a window leaving its plane is resolved: disable the plane with a flip;
        the plane is free once that reaches the screen (or the driver did not make it)."""
        key = (win.source, win.layer)

        def free(_flip) -> None:
            if self.planes.get(key) is win:
                del self.planes[key]

        win.disabling = True
        try:
            flipper(self.adapter).flip(win.source, [PlaneRequest(win.layer, 0, False)], on_done=free)
        except MpoError:
            free(None)


def overlay_planes(adapter) -> OverlayPlanes:
    """The adapter's :class:`OverlayPlanes` (made on first use)."""
    presents = adapter.vidsch.presents
    if presents.planes is None:
        presents.planes = OverlayPlanes(adapter)
    return presents.planes
