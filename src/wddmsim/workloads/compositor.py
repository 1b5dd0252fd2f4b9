"""The desktop compositor (dwm.exe) of one display, as a process of the model.

What it does, after Microsoft's "Desktop Window Manager" and "DXGI flip model" pages:

- It wakes at every vsync of its VidPn source (``D3DKMTWaitForVerticalBlankEvent``).
- It composes when something on the desktop is new: a window's present whose GPU work has
  retired (:mod:`wddmsim.dxgkrnl.composition`), or a desktop update the scenario lists (a window
  it does not run, the cursor). Nothing new: no composition, no present. Its cadence is what
  changed: at most one present a vsync, none on an idle desktop, 30 a second for one window at
  30 fps on a 60 Hz display (tests/test_compositor_cadence.py); a replayed capture's dwm.exe
  cadence comes from this rule applied to the replayed windows' frames (docs/replay.md).
- A composition costs CPU time (from the vsync to its present call) and GPU time (its rendering,
  one DMA buffer); then it flips its own swap chain of two buffers, a flip that waits in the
  display's flip registers for the next vsync (``FlipWithNoWait``, ``FlipInterval`` 1), naming the
  windows' frames it composed, which reach the screen with that flip. PresentMon reports its
  presents as "Hardware: Legacy Flip" and the windows' as "Composed: ...".
- It takes each window's newest frame that was ready at the vsync it woke at (what it composes is
  decided then; its CPU work follows): a frame whose GPU work ends after the vsync waits for the
  next one, and older ready frames of a window are replaced, so dropped; but a flip-model frame
  presented with sync interval N >= 1 is shown for at least N refreshes, so such a window's
  frames are taken in order (:meth:`wddmsim.dxgkrnl.composition.Composition.acquire`).
- It steps aside for a flip-model swap chain that covers the display (independent flip): after
  :attr:`Compositor.independent_after` compositions in a row in which that swap chain was the only
  window with a new frame, it lets the swap chain flip to the screen itself and stops composing
  while no other window presents (desktop updates under a full-screen window are not seen). A new
  frame of another window ends it: the swap chain is composed again.
- It hands a windowed flip-model swap chain an overlay plane of its own when the driver offers one
  (:mod:`.overlayplanes`: after the same :attr:`Compositor.independent_after` compositions in a row
  alone, if DxgkDdiCheckMultiPlaneOverlaySupport3 says the configuration is supported): the window's
  frames then flip on that plane ("Hardware Composed: Independent Flip") and are not composed, while
  the compositor goes on composing the other windows on plane 0; it takes the plane back when the
  window stops presenting, for good or for :data:`.overlayplanes.IDLE_REFRESHES` refreshes.
- An exclusive (full-screen) swap chain owns the display while it runs: the compositor composes
  nothing until it ends.

Spec: Microsoft's "Desktop Window Manager" and "For best performance, use DXGI flip model"
(independent flip) pages (https://learn.microsoft.com/windows/win32/dwm, .../direct3ddxgi/).
"""

from __future__ import annotations

from collections import deque

from ..umd import Work
from .overlayplanes import PlanePolicy
from .surfaces import SURFACE_BYTES, SURFACE_H, SURFACE_W


class Compositor:
    """dwm.exe on one VidPn source: its state and its process (:meth:`run`)."""

    def __init__(self, rt, ctx, spec, address: str | None = None):
        self.rt = rt
        self.kmt = rt.kmt
        self.sim = rt.sim
        self.ctx = ctx
        self.source = spec.vidpn_source
        self.cpu = spec.cpu
        self.work = spec.work
        self.independent_after = spec.independent_flip_after
        self.updates: deque = deque(spec.update)
        #: the swap chain flipping independently now, if any
        self.independent = None
        #: the exclusive swap chain owning the display, if any
        self.exclusive = None
        #: full-screen flip-model swap chain -> compositions in a row it was the only new window of
        self.streak: dict = {}
        #: every full-screen flip-model swap chain of the source, by context handle
        self.fullscreen: dict = {}
        dev = ctx.device
        self.buffers = (self.kmt.CreateAllocation(dev, SURFACE_BYTES), self.kmt.CreateAllocation(dev, SURFACE_BYTES))
        self.compositions = 0
        #: the windows it hands overlay planes (:mod:`.overlayplanes`)
        self.planes = PlanePolicy(self)
        address = address or hex((ctx.handle << 8) | self.source)
        rt.swap_chain_created(ctx, {"source": self.source, "address": address, "runtime": "DXGI",
                                    "swap_effect": "flip", "sync_interval": 1, "allows_tearing": 0,
                                    "present_flags": 0, "fullscreen": 1})

    # -- what the swap chains of the source tell it -------------------------------------------------------
    def add_fullscreen(self, chain) -> None:
        """A flip-model swap chain covering the display was created on the source."""
        self.fullscreen[chain.ctx.handle] = chain
        self.streak[chain.ctx.handle] = 0

    def add_windowed(self, chain) -> None:
        """A windowed flip-model swap chain was created on the source (it may get an overlay plane)."""
        self.planes.add(chain)

    def claim(self, chain) -> None:
        """An exclusive swap chain takes the display."""
        self.exclusive = chain

    def release(self, chain) -> None:
        """A swap chain stopped presenting: an exclusive one gives the display back, an
        independent one is composed again."""
        if self.exclusive is chain:
            self.exclusive = None
        if self.independent is chain:
            self.independent = None
        if chain.ctx.handle in self.streak:
            self.streak[chain.ctx.handle] = 0
        self.planes.release(chain)

    # -- the process ----------------------------------------------------------------------------------------
    def run(self):
        """Generator: the compositor's loop, one turn per vsync of its source."""
        kmt = self.kmt
        source = self.source
        kmt.StartComposition(source)
        while True:
            yield kmt.WaitForVerticalBlankEvent(source)
            wake = self.sim.now
            self.planes.tick(wake)
            due = []
            updates = self.updates
            while updates and updates[0].at <= wake:
                due.append(updates.popleft())
            if self.exclusive is not None:
                continue  # the display is the exclusive swap chain's; the desktop is not seen
            # What is new is what was ready at the vsync; its CPU work follows.
            pending = kmt.CompositionPending(source)
            if self.independent is not None:
                if not pending:
                    continue  # the full-screen window covers the desktop: nothing to compose
                if pending - {self.independent.ctx.handle}:
                    self.independent = None  # another window presented: compose again
                # else: frames it presented before it went independent, composed once more
                due = []
            if not due and not pending:
                continue
            frames = kmt.AcquireComposedFrames(source)
            if not frames and not due:
                continue  # the ready frames must stay on screen longer (their sync interval)
            cpu = next((u.cpu for u in due if u.cpu is not None), self.cpu)
            if cpu:
                yield cpu
            self._promote(frames)
            work = max((u.work for u in due if u.work is not None), default=self.work)
            yield from self._compose(work, frames)

    def _promote(self, frames: list) -> None:
        """Count the compositions in a row each full-screen swap chain was the only new window of;
        at :attr:`independent_after` it flips independently from its next present. A windowed
        flip-model one may get an overlay plane (:meth:`.overlayplanes.PlanePolicy.note`)."""
        self.planes.note(frames)
        windows = {f.context.handle for f in frames}
        for handle, chain in self.fullscreen.items():
            if windows == {handle}:
                self.streak[handle] += 1
                if self.streak[handle] >= self.independent_after and chain.presenting:
                    self.independent = chain
            elif windows:
                self.streak[handle] = 0

    def _compose(self, work: int, frames: list):
        """Render the desktop (``work`` of GPU time) and flip to it, showing ``frames``."""
        self.compositions += 1
        yield from self.rt.submit(self.ctx, (Work(work),))
        buf = self.buffers[self.compositions % 2]
        yield from self.kmt.Present(self.ctx, buf, None, SURFACE_W, SURFACE_H, "flip_no_wait", 1, self.source,
                                    composes=frames)
