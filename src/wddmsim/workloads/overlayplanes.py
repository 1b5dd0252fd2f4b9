"""The compositor's overlay planes: when dwm.exe hands a window a plane of its own, and when it takes
it back (PresentMon: "Hardware Composed: Independent Flip").

The rule the model's compositor follows (:class:`PlanePolicy`, one per compositor):

- **Promotion.** A windowed flip-model swap chain (``swap_effect = "flip"``, not ``fullscreen``)
  that was the only window with a new frame in ``independent_flip_after`` compositions in a row
  (the rule by which the compositor steps aside for a full-screen one; a composition with only a
  desktop update neither counts nor breaks the run) is offered a plane, while it presents, on a
  VidPn source whose driver declares ``SupportMultiPlaneOverlay`` with ``MaxOverlayPlanes`` >= 2 (plane
  0 is the compositor's own primary) and has a plane free. The OS asks
  ``DxgkDdiCheckMultiPlaneOverlaySupport3`` about plane 0, the windows already on planes and this
  window on the free plane (:meth:`wddmsim.dxgkrnl.planeassign.OverlayPlanes.assign`); only
  ``Supported`` puts it there. From the window's next present on, its frames flip on that plane and
  are not composed; the compositor goes on composing the other windows on plane 0 (unlike a
  full-screen independent flip, another window's frame does not end it).
- **A refusal.** When the driver answers not supported, the window stays composed and is not
  offered a plane again for the rest of its run (nothing about a window's configuration changes in
  the model), unless the driver set ``ReturnInfo.TryAgain``: then after another
  ``independent_flip_after`` compositions in a row. The same holds when the OS took the window off
  its plane because the driver did not make one of its plane flips.
- **Demotion.** The window leaves its plane, back to composition, when its application stops
  presenting (its last frame: reason ``stopped``) or when it has begun no present for
  :data:`IDLE_REFRESHES` refresh periods at a vsync the compositor wakes at (``idle``; a paused
  video); the OS disables the plane with one more flip once the frames already sent to it are
  shown. Its count of compositions starts again from 0, so it may be promoted again by the same
  rule.

Spec: Microsoft's "Multiplane overlay support" (windows-hardware/drivers/display) and "For best
performance, use DXGI flip model" pages (https://learn.microsoft.com/); the OS's side is
:mod:`wddmsim.dxgkrnl.planeassign`.
"""

from __future__ import annotations

#: refresh periods without a present after which a window on a plane goes back to composition (the
#: model's choice, as long as Windows' vsync idle timeout: 10 periods)
IDLE_REFRESHES = 10


class PlanePolicy:
    """One compositor's overlay-plane decisions (see the module doc)."""

    def __init__(self, compositor):
        self.comp = compositor
        self.kmt = compositor.kmt
        self.source = compositor.source
        self.after = compositor.independent_after
        #: windowed flip-model swap chains of the source, by context handle
        self.windows: dict = {}
        #: window -> compositions in a row it was the only new window of
        self.streak: dict[int, int] = {}
        #: windows the driver refused (not offered a plane again)
        self.refused: set[int] = set()
        #: windows the compositor put on a plane and has not taken back
        self.promoted: set[int] = set()
        self._max: int | None = None

    def add(self, chain) -> None:
        """A windowed flip-model swap chain was created on the source."""
        self.windows[chain.ctx.handle] = chain
        self.streak[chain.ctx.handle] = 0

    def max_planes(self) -> int:
        if self._max is None:
            self._max = self.kmt.OverlayPlanes()
        return self._max

    # -- at each vsync and composition -------------------------------------------------------------
    def tick(self, now: int) -> None:
        """At a vsync the compositor woke at: a window on a plane with no present for
        :data:`IDLE_REFRESHES` periods goes back to composition."""
        if not self.promoted:
            return
        period = self.kmt.adapter.vidsch.presents.sources[self.source].period_ns
        for handle in sorted(self.promoted):
            chain = self.windows[handle]
            layer, last = self.kmt.OverlayPlaneOf(chain.ctx)
            if layer is not None and now - last >= IDLE_REFRESHES * period:
                self._take_back(chain, "idle")

    def note(self, frames: list) -> None:
        """The compositor composes ``frames``: count each window's compositions in a row alone, and
        offer a plane to one that reached ``independent_flip_after``."""
        if not self.windows:
            return
        for handle in sorted(self.promoted):
            if self.kmt.OverlayPlaneOf(self.windows[handle].ctx)[0] is None:
                # The OS took it off its plane: the driver did not make one of its flips.
                self.promoted.discard(handle)
                self.refused.add(handle)
                self.streak[handle] = 0
        new = {f.context.handle for f in frames}
        for handle, chain in self.windows.items():
            if new == {handle}:
                self.streak[handle] += 1
                if (self.streak[handle] >= self.after and chain.presenting and handle not in self.refused
                        and handle not in self.promoted and self.max_planes() >= 2):
                    self._offer(chain)
            elif new:
                self.streak[handle] = 0

    def _offer(self, chain) -> None:
        handle = chain.ctx.handle
        layer, answer = self.kmt.AssignOverlayPlane(self.source, chain.ctx, chain.back[0],
                                                    primary=self.comp.buffers[0])
        if layer is not None:
            self.promoted.add(handle)
        elif answer is not None:  # the driver said no (None: no plane free, ask again later)
            self.streak[handle] = 0
            if not answer.try_again:
                self.refused.add(handle)

    def release(self, chain) -> None:
        """The window's application stopped presenting."""
        if chain.ctx.handle in self.promoted:
            self._take_back(chain, "stopped")

    def _take_back(self, chain, reason: str) -> None:
        handle = chain.ctx.handle
        self.promoted.discard(handle)
        self.streak[handle] = 0
        self.kmt.ReleaseOverlayPlane(chain.ctx, reason)
