"""Desktop composition, the OS's side: windowed presents waiting for the compositor, and which of
them reached the screen with the compositor's flip.

A windowed swap chain does not present to the screen. Its present is one of:

- a *copy* into the window's redirection surface (blt model: D3D9 windowed, DXGI's DISCARD and
  SEQUENTIAL swap effects, GDI): a DMA buffer with ``DXGK_SUBMITCOMMANDFLAGS.RedirectedPresent``
  (:meth:`wddmsim.dxgkrnl.adapter.Adapter.render`), which PresentMon calls "Composed: Copy with GPU
  GDI";
- a *redirected flip* (flip model: DXGI's FLIP_SEQUENTIAL and FLIP_DISCARD): no DMA buffer at all;
  ``D3DKMTPresent`` with ``RedirectedFlip`` hands the compositor the buffer the application just
  rendered, once its rendering is done (:class:`PresentToken`); PresentMon calls it "Composed:
  Flip".

Either becomes *ready* when its GPU work retires. The compositor (a user-mode process, dwm.exe,
:mod:`wddmsim.workloads.compositor`) wakes at a vsync, takes the newest ready frame of each window
(:meth:`Composition.acquire`; older ready frames of the same window were replaced before any
composition used them and are dropped), renders the desktop and flips its own swap chain, naming
the frames it composed (:meth:`Composition.attach`). When that flip is shown, so are they, at the
same vsync (:meth:`Composition.shown`); when it is dropped, so are they.

Without a compositor on the source the OS shows a ready windowed present at the next vsync itself
(:mod:`wddmsim.dxgkrnl.present`), as before a compositor existed.

Microsoft's pages: "DXGK_SUBMITCOMMANDFLAGS" (RedirectedPresent), "D3DKMT_PRESENTFLAGS"
(RedirectedFlip), "For best performance, use DXGI flip model" and "Desktop Window Manager"
(https://learn.microsoft.com/).
"""

from __future__ import annotations

from collections import deque


class PresentToken:
    """A redirected flip: the present of a flip-model swap chain handed to the compositor. It has
    no DMA buffer; it names the context's packet that ends the frame (``seq``) and is ready when
    that packet retires."""

    __slots__ = ("packet", "context", "seq", "present_t", "vidpn_source", "displayed", "flags", "sync_interval")

    #: a redirected flip goes to the compositor, never through DxgkDdiSetVidPnSourceAddress on its
    #: own (the present bookkeeping asks every present it forgets)
    mmio = False

    def __init__(self, packet, vidpn_source: int, present_t: int, sync_interval: int = 0):
        self.packet = packet
        self.sync_interval = sync_interval
        self.context = packet.context
        self.seq = packet.seq
        self.present_t = present_t
        self.vidpn_source = vidpn_source
        self.displayed = -1
        self.flags = packet.flags & 0x8  # Flags.NullRendering: nothing ran, nothing is shown

    @property
    def fence(self) -> int:
        """The fence of the packet that ends the frame (0 until it is submitted)."""
        return self.packet.fence


class Composition:
    """What the compositor of one VidPn source has to compose and what its flips carry."""

    __slots__ = ("presents", "source", "ready", "carried", "taken")

    def __init__(self, presents, source: int):
        self.presents = presents
        self.source = source
        #: window (context handle) -> its ready frames not yet composed, oldest first
        self.ready: dict[int, deque] = {}
        #: the compositor's flip packet -> the frames it composed
        self.carried: dict = {}
        #: window -> when the compositor last took a frame of it
        self.taken: dict[int, int] = {}

    def arrived(self, frame, t: int) -> None:
        """A windowed present's GPU work retired at ``t``: it may be composed from now on."""
        self.ready.setdefault(frame.context.handle, deque()).append(frame)

    def pending(self) -> set[int]:
        """The windows (context handles) with a ready frame no composition has taken yet."""
        return {handle for handle, frames in self.ready.items() if frames}

    def acquire(self, now: int) -> list:
        """The frames the compositor composes at ``now``, one per window, in window order: the
        newest ready frame, the older ready ones replaced before any composition and so dropped;
        but a flip-model frame presented with sync interval N >= 1 is shown for at least N
        refreshes, so its window's frames are taken in order, the next no sooner than N refreshes
        after the previous (IDXGISwapChain::Present)."""
        period = self.presents.sources[self.source].period_ns
        taken = []
        for handle, frames in self.ready.items():
            if not frames:
                continue
            last = self.taken.get(handle)
            held = getattr(frames[0], "sync_interval", 0)
            if held:
                if last is not None and now - last < held * period - period // 2:
                    continue  # the previous frame of this window has not been shown long enough
                frame = frames.popleft()
            else:
                frame = frames.pop()
                while frames:
                    self.presents.drop_frame(self.source, frames.popleft())
            self.taken[handle] = now
            taken.append(frame)
        return taken

    def attach(self, flip, frames: list) -> None:
        """The compositor's ``flip`` packet shows ``frames`` when it is shown."""
        if frames:
            self.carried[flip] = frames

    def shown(self, flip, t: int) -> None:
        """The compositor's ``flip`` was shown at ``t``: so were the frames it carries."""
        frames = self.carried.pop(flip, None)
        if frames:
            for f in frames:
                self.presents.show_frame(self.source, f, t)

    def dropped(self, flip) -> None:
        """The compositor's ``flip`` will never be shown: nor will the frames it carries."""
        frames = self.carried.pop(flip, None)
        if frames:
            for f in frames:
                self.presents.drop_frame(self.source, f)

    def forget(self, frame) -> bool:
        """A windowed present that will never be composed (its packet was cancelled or aborted):
        True when it was waiting here."""
        frames = self.ready.get(frame.context.handle)
        if frames and frame in frames:
            frames.remove(frame)
            return True
        return False
