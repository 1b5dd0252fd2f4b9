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

    __slots__ = ("packet", "context", "seq", "present_t", "vidpn_source", "displayed", "flags")

    def __init__(self, packet, vidpn_source: int, present_t: int):
        self.packet = packet
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

    __slots__ = ("presents", "source", "ready", "carried")

    def __init__(self, presents, source: int):
        self.presents = presents
        self.source = source
        #: window (context handle) -> its ready frames not yet composed, oldest first
        self.ready: dict[int, deque] = {}
        #: the compositor's flip packet -> the frames it composed
        self.carried: dict = {}

    def arrived(self, frame, t: int) -> None:
        """A windowed present's GPU work retired at ``t``: it may be composed from now on."""
        self.ready.setdefault(frame.context.handle, deque()).append(frame)

    def pending(self) -> set[int]:
        """The windows (context handles) with a ready frame no composition has taken yet."""
        return {handle for handle, frames in self.ready.items() if frames}

    def acquire(self) -> list:
        """The compositor takes the newest ready frame of each window, in window order; the older
        ready frames of a window were replaced before any composition and are dropped."""
        taken = []
        for frames in self.ready.values():
            if not frames:
                continue
            newest = frames.pop()
            while frames:
                self.presents.drop_frame(self.source, frames.popleft())
            taken.append(newest)
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
