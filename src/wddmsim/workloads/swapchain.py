"""An application presenting through a swap chain (the scenario's ``swap_chain`` workload): the
frames it renders and how its runtime presents them. The present mode is not the application's
choice: it follows from the swap chain and from what the compositor decides.

Each frame starts at its ``start`` (or when the previous present call returned, if later), works
``cpu`` on the CPU, and calls Present. Its rendering (``gpu`` of GPU time, one DMA buffer) is
submitted ``submit`` after the frame's start, or with the present. At most ``max_frame_latency``
frames are queued: the present of frame N first waits until frame N - max_frame_latency has
retired (DXGI's ``SetMaximumFrameLatency``), inside the call.

How the present goes, by ``swap_effect``:

- ``copy`` (blt model: D3D9 windowed, DXGI's DISCARD/SEQUENTIAL, GDI): a copy of the back buffer
  into the window's redirection surface, ``DXGK_SUBMITCOMMANDFLAGS.RedirectedPresent``; the
  compositor composes it (PresentMon: "Composed: Copy with GPU GDI"). The D3D9 runtime throttles a
  windowed present with a sync interval other than 0 to the display: the call first waits for the
  vertical blank (``D3DKMTWaitForVerticalBlankEvent``), then flushes the frame and the copy, so
  the call lasts up to a refresh and the compositor takes the copy at the vsync after.
- ``flip`` (flip model): while the compositor composes the window, a redirected flip
  (``D3DKMTPresent`` with RedirectedFlip, "Composed: Flip"); a windowed one the compositor put on
  an overlay plane makes the same call, and the OS flips the plane to its back buffer instead
  ("Hardware Composed: Independent Flip", :mod:`wddmsim.dxgkrnl.planeassign`); once the compositor has stepped aside
  for it (a swap chain covering the display, :mod:`.compositor`), a flip of its own buffer on the
  VidPn source ("Hardware: Independent Flip"): with sync interval N >= 1 a flip with
  ``FlipInterval`` N, each frame shown in order for at least N refreshes; with sync interval 0 a
  flip with ``FlipWithNoWait``, immediate (``FlipInterval`` 0) when the swap chain allows tearing,
  else at the next vsync (1), a newer frame replacing one not yet on screen (IDXGISwapChain::Present:
  sync interval 0 "discard this frame if a newer frame is queued").
- ``exclusive`` (a full-screen exclusive swap chain): a flip of its own buffer with the sync
  interval as ``FlipInterval`` (-1, the runtime's default, is 1), "Hardware: Legacy Flip", each
  frame shown in order; it owns the display while it presents. Through the legacy runtimes (D3D9,
  and "Other": a runtime PresentMon does not see) a flip with an interval waits for the vertical
  retrace (D3DPRESENT_INTERVAL_ONE: "the driver will wait for the vertical retrace period"): the OS
  makes it no sooner than the first vsync after the present call (``legacy``,
  :mod:`wddmsim.dxgkrnl.present`), so that it reaches the screen at the vsync after that one.

Spec: Microsoft's "DXGI flip model", "IDXGISwapChain::Present" (sync interval,
DXGI_PRESENT_ALLOW_TEARING), "D3DPRESENT" (D3DPRESENT_INTERVAL_ONE: wait for the vertical blank,
then present) and "D3DKMTWaitForVerticalBlankEvent" pages (https://learn.microsoft.com/).
"""

from __future__ import annotations

from collections import deque

from ..umd import Work
from .surfaces import SURFACE_BYTES, SURFACE_H, SURFACE_W


class SwapChainApp:
    """One swap chain and the application thread presenting through it."""

    def __init__(self, rt, ctx, w, compositor=None):
        self.rt = rt
        self.kmt = rt.kmt
        self.sim = rt.sim
        self.ctx = ctx
        self.w = w
        self.source = w.vidpn_source
        self.compositor = compositor
        #: the application is between its first and last present
        self.presenting = False
        dev = ctx.device
        kmt = self.kmt
        self.back = (kmt.CreateAllocation(dev, SURFACE_BYTES), kmt.CreateAllocation(dev, SURFACE_BYTES))
        #: the window's redirection surface (a blt-model swap chain copies into it)
        self.surface = kmt.CreateAllocation(dev, SURFACE_BYTES) if w.swap_effect == "copy" else None
        address = w.address or hex((ctx.handle << 8) | w.vidpn_source)
        rt.swap_chain_created(ctx, {"source": w.vidpn_source, "address": address, "runtime": w.runtime,
                                    "swap_effect": w.swap_effect, "sync_interval": w.sync_interval,
                                    "allows_tearing": int(w.allows_tearing), "present_flags": w.present_flags,
                                    "fullscreen": int(w.fullscreen)})
        if compositor is not None and w.swap_effect == "flip":
            if w.fullscreen:
                compositor.add_fullscreen(self)
            else:
                compositor.add_windowed(self)

    def frames(self):
        """(start, cpu, gpu, submit) of each frame, from the workload's start: the explicit
        frames, or frames at ``fps`` (rendering submitted at the frame's start)."""
        w = self.w
        if w.frames:
            for f in w.frames:
                yield f.start, f.cpu, f.gpu, f.submit
            return
        period = round(1e9 / w.fps)
        n = 0
        while w.count is None or n < w.count:
            yield n * period, w.cpu, w.work, 0
            n += 1

    def run(self):
        """Generator: the application's frames."""
        sim = self.sim
        rt = self.rt
        ctx = self.ctx
        w = self.w
        base = sim.now + w.start
        queued: deque[int] = deque(maxlen=w.max_frame_latency)
        frame = 0
        try:
            for start, cpu, gpu, submit in self.frames():
                frame += 1
                if base + start > sim.now:
                    yield base + start - sim.now
                began = sim.now
                rendered = False
                if submit is not None and submit < cpu:
                    if submit:
                        yield submit
                    yield from rt.submit(ctx, (Work(gpu),))
                    rendered = True
                if began + cpu > sim.now:
                    yield began + cpu - sim.now
                call = sim.now
                if not self.presenting:
                    self.presenting = True
                    if w.swap_effect == "exclusive" and self.compositor is not None:
                        self.compositor.claim(self)
                if len(queued) == w.max_frame_latency:
                    yield rt.wait(ctx, queued[0])
                seq = yield from self._present(frame, call, () if rendered else (Work(gpu),))
                queued.append(seq)
        except GeneratorExit:
            # Closed with the run, or collected after it: the model has ended, and nothing may happen
            # in it any more (an event emitted now would land in the log whenever the collector ran).
            self.presenting = False
            raise
        except BaseException:
            self._stopped()
            raise
        self._stopped()

    def _stopped(self) -> None:
        """The application stopped presenting: the compositor takes back what it gave it."""
        self.presenting = False
        if self.compositor is not None:
            self.compositor.release(self)

    def _present(self, frame: int, call: int, rest: tuple):
        """The present of ``frame`` for a call that began at ``call``; ``rest``: the frame's
        rendering when it goes with the present. Generator; returns the last packet's number."""
        w = self.w
        kmt = self.kmt
        rt = self.rt
        ctx = self.ctx
        buf = self.back[frame % 2]
        if w.swap_effect == "copy":
            if w.runtime == "D3D9" and w.sync_interval != 0:
                yield kmt.WaitForVerticalBlankEvent(self.source)
            if rest:
                yield from rt.submit(ctx, rest)
            return (yield from rt.present_composed(ctx, buf, self.surface, SURFACE_BYTES, self.source, call_start=call))
        if w.swap_effect == "flip" and (self.compositor is None or self.compositor.independent is not self):
            return (yield from rt.present_redirected_flip(ctx, rest or (Work(0),), self.source, call_start=call,
                                                          sync_interval=max(0, w.sync_interval), surface=buf,
                                                          allow_tearing=w.allows_tearing))
        if rest:
            yield from rt.submit(ctx, rest)
        mode = "flip"
        if w.swap_effect == "flip":
            interval = w.sync_interval if w.sync_interval > 0 else (0 if w.allows_tearing else 1)
            if w.sync_interval <= 0:
                mode = "flip_no_wait"  # sync interval 0: the newest frame at the next vsync (or at once)
        else:
            interval = 1 if w.sync_interval < 0 else w.sync_interval
        return (yield from kmt.Present(ctx, buf, None, SURFACE_W, SURFACE_H, mode, interval, self.source,
                                       call_start=call, independent=w.swap_effect == "flip",
                                       legacy=w.swap_effect == "exclusive" and w.runtime != "DXGI"))
