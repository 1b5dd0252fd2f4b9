"""Presents, flips and what each VidPn source displayed.

Present modes (a workload's ``present_mode``):

- ``blt``: ``DxgkDdiPresent`` with ``Blt``, a copy of the back buffer to the primary
  (submission ``Flags.Present``). The primary is scanned out at the next vsync after the copy ends.
- ``flip``: ``DxgkDdiPresent`` with ``Flip`` and the present's sync interval as ``FlipInterval``
  (``Flags.Present | Flags.Flip``, ``VidPnSourceId``, ``FlipInterval``). The engine stalls until the
  flip latches at its vsync; the driver's ``CRTC_VSYNC`` names the address now scanned out.
  Interval 0 (immediate) is shown when its packet completes.
- ``flip_no_wait``: as ``flip`` with ``FlipWithNoWait`` as well (decision: the buffer still
  "contains a flip", so ``Flip`` stays set): the flip waits in the display's pending-flip registers
  and the engine carries on.
- ``composed``: the application renders a copy into a composition (redirection) surface with
  ``DxgkDdiRender`` (``Flags.RedirectedPresent``); the compositor shows it at the next vsync.

The flip queue: at most ``MaxQueuedFlipOnVSync`` flips of a source are submitted and not yet
displayed; a context whose next packet is a flip waits (out of the ready set) until a vsync frees a
slot.

Which flip a CRTC_VSYNC shows: the address it reports is compared with the oldest flip of its
source whose packet has reached the engine (the bottom of its node's hardware queue: a no-wait flip
is then programmed or about to be, a waiting flip sits in the engine until the vsync latches it,
and the packet's completion is reported after that vsync's); the display latches flips in order,
one per vsync. With the vsync interrupt on, a vsync at which no flip latched reports the address
still scanned out, which shows nothing new; a flip not yet run, or queued behind another, to that
same surface (a swap chain coming back to it) is not shown by it. Known limit: a no-wait flip to the very surface on screen (a no-op flip) counts as
shown at the first vsync after it reaches the engine, even if its interval asks for a later one.
A flip waiting for a vsync turns the vsync interrupt on (:mod:`wddmsim.dxgkrnl.vsync`), and every
processed CRTC_VSYNC is counted there for the idle turn-off.

Per source the model records, as PresentMon would: presents, frames displayed, frames dropped (a
present replaced before any vsync showed it), the time between display changes and the latency
from the present call to the display.

Spec: Microsoft's reference pages for DXGK_SUBMITCOMMANDFLAGS (Present, RedirectedPresent, Flip,
FlipWithNoWait), D3DDDI_FLIPINTERVAL_TYPE, DXGK_FLIPCAPS and DXGK_DRIVERCAPS; the "Hardware flip
queue" and "GPUView flip queue" pages; reference scenario 24 (tests/reference/).
"""

from __future__ import annotations

from collections import deque

from ..sim import DISPATCH
from .stats import LatencyStats

FLAG_PRESENT = 0x2
FLAG_REDIRECTED_PRESENT = 0x4
FLAG_FLIP = 0x10
FLAG_FLIP_NO_WAIT = 0x20
PRESENT_FLAGS = FLAG_PRESENT | FLAG_REDIRECTED_PRESENT
FLIP_FLAGS = FLAG_FLIP | FLAG_FLIP_NO_WAIT
FLAG_NULL_RENDERING = 0x8

#: ``displayed`` of a present not shown (yet), and of one dropped
NOT_SHOWN = -1
DROPPED = -2


class SourceStats:
    """One VidPn source: what is waiting to be shown and what was shown."""

    __slots__ = ("index", "period_ns", "presents", "displayed", "dropped", "frame_times", "latency",
                 "last_display", "pending_flips", "candidate", "blocked", "last_vsync_flip")

    def __init__(self, index: int, refresh_hz: float):
        self.index = index
        self.period_ns = round(1e9 / refresh_hz)
        self.presents = 0
        self.displayed = 0
        self.dropped = 0
        self.frame_times = LatencyStats()  # between display changes
        self.latency = LatencyStats()  # present call to display
        self.last_display = -1
        self.pending_flips: deque = deque()  # flip packets submitted, not yet displayed
        self.candidate = None  # (packet, vsync) of a blt/composed present waiting for its vsync
        self.blocked: list = []  # contexts whose next packet is a flip that does not fit
        self.last_vsync_flip = -1  # when CRTC_VSYNC last reported a flip taking effect at a vsync

    def next_vsync(self, t: int) -> int:
        p = self.period_ns
        return -(-t // p) * p


class Presents:
    """Present bookkeeping for one adapter's VidSch."""

    def __init__(self, vidsch, refresh_rates: list[float], max_queued_flips: int):
        self.vs = vidsch
        self.sim = vidsch.sim
        self.sources = [SourceStats(i, hz) for i, hz in enumerate(refresh_rates)]
        self.max_queued = max(1, max_queued_flips)
        #: VidPn source -> its compositor's :class:`~wddmsim.dxgkrnl.composition.Composition`
        self.compositions: dict = {}

    def composition(self, source: int):
        """The composition of ``source``, made when its compositor starts."""
        comp = self.compositions.get(source)
        if comp is None:
            from .composition import Composition

            comp = self.compositions[source] = Composition(self, source)
        return comp

    # -- on the way in ----------------------------------------------------------------------------------------
    def can_submit(self, packet) -> bool:
        """A flip fits while fewer than MaxQueuedFlipOnVSync of its source's other flips are
        pending. A flip a preemption took back is still pending (it keeps its place in the source's
        order), and its own slot must not keep it from going back to the GPU."""
        pending = self.sources[packet.vidpn_source].pending_flips
        return len(pending) - (packet in pending) < self.max_queued

    def block(self, ctx, packet) -> None:
        self.sources[packet.vidpn_source].blocked.append(ctx)

    def submitted(self, packet) -> bool:
        """A present packet went to the driver (again, after a preemption or a reset, when it is a
        resubmission). True while the present is still to be shown or dropped: a resubmitted flip
        whose present already reached the screen, or was replaced, flips nothing new and stays
        counted once."""
        if packet.displayed != NOT_SHOWN:
            return False
        src = self.sources[packet.vidpn_source]
        if packet.flags & FLIP_FLAGS and packet not in src.pending_flips:
            src.pending_flips.append(packet)
        return True

    # -- on the way out ---------------------------------------------------------------------------------------
    def completed(self, packet, t: int) -> None:
        """A present packet's fence came back at ``t`` (device IRQL)."""
        src = self.sources[packet.vidpn_source]
        if packet.flags & FLAG_NULL_RENDERING:
            # Nothing ran, so nothing reached the screen.
            self.forget(packet, dropped=True)
            return
        if packet.flags & FLIP_FLAGS:
            if packet.flip_interval == 0 and packet in src.pending_flips:
                # Immediate: latched when the command ran, mid-frame.
                self._flips_shown_through(src, packet, t)
            return
        comp = self.compositions.get(packet.vidpn_source)
        if comp is not None:
            comp.arrived(packet, t)  # the compositor shows it with its next flip
            return
        self._settle(src, t)
        vsync = src.next_vsync(t)
        if src.candidate is not None:
            self._drop(src, src.candidate[0])  # replaced before its vsync came
        else:
            self.sim.at(vsync, self._settle_timer, src, DISPATCH)
        src.candidate = (packet, vsync)

    def _settle_timer(self, src: SourceStats) -> None:
        self._settle(src, self.sim.now)

    def forget(self, packet, dropped: bool = True) -> None:
        """A present that will never be shown (aborted, cancelled, null-rendered): counted as
        dropped, and its place in the flip queue freed."""
        src = self.sources[packet.vidpn_source]
        comp = self.compositions.get(packet.vidpn_source)
        if comp is not None:
            comp.forget(packet)
        if packet in src.pending_flips:
            src.pending_flips.remove(packet)
            if src.blocked:
                waiting, src.blocked = src.blocked, []
                for ctx in waiting:
                    self.vs.unblock(ctx)
        if dropped and packet.displayed == NOT_SHOWN:
            self._drop(src, packet)  # unless shown, or dropped already (replaced at a vsync)

    def vsync(self, source: int, address: int, t: int, data=None) -> None:
        """See :meth:`_vsync`; then the vsync control counts the report (idle unless a flip was
        shown at it or a present still waits to be shown) and wakes the source's vertical-blank
        waiters."""
        shown = self._vsync(source, address, t, data)
        control = self.vs.adapter.vsync
        if control is not None:
            sources = self.sources
            control.reported(source, shown or any(s.pending_flips for s in sources) or any(
                s.candidate is not None for s in sources))

    def _vsync(self, source: int, address: int, t: int, data=None) -> bool:
        """CRTC_VSYNC: ``source`` scans out ``address`` from ``t`` (``data``: the interrupt, for a
        crash record). A flip with FlipInterval N that takes effect sooner than N refresh periods
        after the previous flip that took effect at a vsync breaks its interval (rule 88; the OS
        asked for it because the driver reports DXGK_FLIPCAPS.FlipInterval, or N is 1). True when
        a flip was shown at it."""
        if not 0 <= source < len(self.sources):
            return False
        src = self.sources[source]
        self._settle(src, t)
        for p in src.pending_flips:
            if p.started < 0:
                # Not at the engine yet: no vsync can show it. A waiting flip that is there may
                # latch at this vsync, whose report can come before the packet's own completion
                # (the fence after the flip command runs once the flip has latched).
                continue
            # The display latches programmed flips in order: only the oldest can be what this
            # vsync shows; another address is the one still scanned out.
            if p.surface == address:
                last = src.last_vsync_flip
                src.last_vsync_flip = t
                if p.flip_interval and last >= 0 and t - last < p.flip_interval * src.period_ns:
                    self._early(src, p, t, last, data)
                self._flips_shown_through(src, p, t)
                return True
            break
        return False

    def _early(self, src: SourceStats, p, t: int, last: int, data) -> None:
        from ..ddi import rules as R

        verifier = self.vs.verifier
        if verifier.mode == "off":
            return
        verifier.handle([R.Violation(88, "FlipIntervalSupported", (
            f"CRTC_VSYNC reports the flip of present {p.seq} (fence {p.fence}, FlipInterval {p.flip_interval}) on "
            f"VidPn source {src.index} taking effect at {t} ns, {t - last} ns after the previous flip took effect: "
            f"a flip with FlipInterval {p.flip_interval} takes effect no sooner than {p.flip_interval} refresh "
            f"periods ({p.flip_interval * src.period_ns} ns) after the previous one"))],
            "DXGKARGCB_NOTIFY_INTERRUPT_DATA" if data is not None else None, data, self.vs.adapter.interrupt_address)

    def _flips_shown_through(self, src: SourceStats, packet, t: int) -> None:
        while src.pending_flips:
            p = src.pending_flips.popleft()
            if p is packet:
                self._show(src, p, t)
                break
            self._drop(src, p)
        if src.blocked:
            waiting, src.blocked = src.blocked, []
            for ctx in waiting:
                self.vs.unblock(ctx)

    def _settle(self, src: SourceStats, now: int) -> None:
        """A blt/composed present whose vsync has come is displayed."""
        cand = src.candidate
        if cand is not None and cand[1] <= now:
            src.candidate = None
            self._show(src, cand[0], cand[1])

    def _show(self, src: SourceStats, packet, t: int) -> None:
        src.displayed += 1
        src.latency.add(t - packet.present_t)
        if src.last_display >= 0:
            src.frame_times.add(t - src.last_display)
        src.last_display = t
        packet.displayed = t
        self._displayed(src, packet, t)
        comp = self.compositions.get(src.index)
        if comp is not None and comp.carried:
            comp.shown(packet, t)

    def show_frame(self, source: int, frame, t: int) -> None:
        """A composed frame reached the screen with its compositor's flip at ``t`` (the flip is the
        display change; the frame only counts as displayed)."""
        src = self.sources[source]
        src.displayed += 1
        src.latency.add(t - frame.present_t)
        frame.displayed = t
        self._displayed(src, frame, t)

    def drop_frame(self, source: int, frame) -> None:
        """A composed frame that will never reach the screen."""
        self._drop(self.sources[source], frame)

    def _displayed(self, src: SourceStats, packet, t: int) -> None:
        tr = self.vs.trace
        if tr is not None:
            tr.emit(self.sim.now, "Displayed", {
                "source": src.index, "context": packet.context.handle, "seq": packet.seq, "fence": packet.fence,
                "displayed": t, "latency": t - packet.present_t,
            })

    def _drop(self, src: SourceStats, packet) -> None:
        """``packet`` will never be shown: counted as dropped, once (a present already shown or
        dropped, then aborted or cancelled with its packet, is not counted again)."""
        if packet.displayed != NOT_SHOWN:
            return
        src.dropped += 1
        # Marked, so that a present replaced at a vsync while its packet was still on the hardware
        # is not dropped (and counted) a second time when that packet is cancelled or aborted later.
        packet.displayed = DROPPED
        comp = self.compositions.get(src.index)
        if comp is not None and comp.carried:
            comp.dropped(packet)
        tr = self.vs.trace
        if tr is not None:
            tr.emit(self.sim.now, "Dropped", {"source": src.index, "context": packet.context.handle,
                                             "seq": packet.seq, "fence": packet.fence})

    def presented(self, packet) -> None:
        """A present entered the scheduler (the application's present call returned). A flip that
        waits for a vsync needs the vsync interrupt."""
        self.sources[packet.vidpn_source].presents += 1
        if packet.flags & FLIP_FLAGS and packet.flip_interval:
            control = self.vs.adapter.vsync
            if control is not None:
                control.needed("flip")

    def summary(self, now: int) -> list[dict]:
        out = []
        for src in self.sources:
            self._settle(src, now)
            out.append({
                "source": src.index, "refresh_hz": round(1e9 / src.period_ns, 3), "presents": src.presents,
                "displayed": src.displayed, "dropped": src.dropped,
                "frame_time_p50_ns": src.frame_times.percentile(50), "frame_time_p99_ns": src.frame_times.percentile(99),
                "latency_p50_ns": src.latency.percentile(50), "latency_p99_ns": src.latency.percentile(99),
                "latency_max_ns": src.latency.max,
            })
        return out
