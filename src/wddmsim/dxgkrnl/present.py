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

MMIO flips (the adapter's ``mmio_flips``: the driver declares ``DXGK_FLIPCAPS.FlipOnVSyncMmIo``
and VidSch schedules in software, with physical DMA buffers or GPU virtual addresses): ``DxgkDdiPresent`` gets no DMA buffer
(``pDmaBuffer`` NULL, Microsoft's DXGK_FLIPCAPS page) and writes nothing. The flip's packet keeps its
place in its context's queue and reaches the driver as an empty submission (its fence only; no flip
flags), so its fence comes back once the context's rendering before it is done (a model decision: it
orders the flip after that rendering as Windows' scheduler does). The source's software flip queue
then holds it until the OS programs it with ``DxgkDdiSetVidPnSourceAddress`` at device IRQL
(:meth:`Presents._mmio_program`), one programmed flip per source at a time, the next once the CRTC_VSYNC
that shows the previous one is reported (the pre-WDDM 3.0 software flip queue of Microsoft's
"Hardware flip queue" page):

- interval 0: ``Flags.FlipImmediate``; shown when the call returns (the driver wrote the scanout
  address), replacing any flip programmed and not yet latched, which is dropped;
- interval N >= 1: ``Flags.FlipOnNextVSync``, programmed no sooner than N - 1 refresh periods after
  the vsync at which the previous flip took effect, so that it latches at the first vsync after the
  call: N periods after that one at the earliest. The driver reports it with CRTC_VSYNC (the new
  address); the OS counts it shown at that vsync;
- ``FlipWithNoWait`` (interval >= 1): a newer flip whose rendering is done replaces the queued ones
  not yet on screen: those not yet programmed are dropped at once, a programmed one is overwritten (the
  OS calls again with the newer address; the pending-address register keeps the latest) and reported
  dropped when the vsync shows the newer one. Such a flip never waits for a free slot of the flip
  queue (it takes the place of the flips it replaces): a flip-model swap chain presenting with sync
  interval 0 shows its newest frame at each vsync;
- a legacy flip (``Packet.vblank_wait``: an exclusive swap chain's flip through the D3D9 runtime's
  path, D3DPRESENT_INTERVAL_ONE "the driver will wait for the vertical retrace period") is programmed
  no sooner than the first vsync after its present call, so it latches at the vsync after that.

``ContextCount`` is 1 with the flip's own context in ``Context[0]`` (the model broadcasts no flip;
rule 83, VidPnContextCount). Rule 84 (MmioFlipPath): a flip programmed for the next vsync is reported by a CRTC_VSYNC
naming its address no later than :data:`~wddmsim.dxgkrnl.vsync.LATE_PERIODS` periods after the
vsync it latches at. Rule 86 (SetVidPnInvalidParameterOnlySharedPrimary): the driver may refuse the
call with STATUS_INVALID_PARAMETER only for ``SharedPrimaryTransition`` (which the model never sets);
a refused flip is not shown and is reported dropped. The rules: ``wddmsim rules 83 84 86``,
docs/rules.md.

Under hardware scheduling a flip of a driver with the hardware flip queue (WDDM 3.0,
``MaxHwQueuedFlips`` > 1) has no packet: :mod:`.hwflipqueue` queues it with the display ahead of its
vsync and reports it here (:meth:`Presents.flip_shown`, :meth:`Presents.flip_dropped`) once the
flip queue log says what became of it.

Per source the model records, as PresentMon would: presents, frames displayed, frames dropped (a
present replaced before any vsync showed it), the time between display changes and the latency
from the present call to the display.

Spec: Microsoft's reference pages for DXGK_SUBMITCOMMANDFLAGS (Present, RedirectedPresent, Flip,
FlipWithNoWait), D3DDDI_FLIPINTERVAL_TYPE, DXGK_FLIPCAPS and DXGK_DRIVERCAPS; DxgkDdiSetVidPnSourceAddress,
DXGKARG_SETVIDPNSOURCEADDRESS and DXGK_SETVIDPNSOURCEADDRESS_FLAGS; the "Hardware flip queue" and
"GPUView flip queue" pages; reference scenario 24 (tests/reference/).
"""

from __future__ import annotations

from collections import deque

from ..ddi.ntstatus import NTSTATUS
from ..sim import DEVICE, DISPATCH, PASSIVE
from .stats import LatencyStats

_SUCCESS = int(NTSTATUS.STATUS_SUCCESS)

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
                 "last_display", "pending_flips", "candidate", "blocked", "last_vsync_flip",
                 "mmio_ready", "programmed", "programmed_latch", "mmio_timer", "mmio_queued", "replaced", "turn",
                 "waiting_since")

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
        # MMIO flips: rendering done, waiting to be programmed (in order); the one programmed for a
        # vsync and that vsync (the first after the call); the timer or queued call that programs the next
        self.mmio_ready: deque = deque()
        self.programmed = None
        self.programmed_latch = -1
        self.mmio_timer = None
        self.mmio_queued = False
        self.replaced = 0  # flips replaced by a newer one before reaching the screen (dropped)
        self.turn = None  # MMIO flips: the context that waited longest for a free slot goes first
        self.waiting_since: dict = {}  # context -> when it first found the flip queue full

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
        #: flips go through DxgkDdiSetVidPnSourceAddress (the adapter's choice, from DXGK_FLIPCAPS)
        self.mmio = bool(getattr(vidsch.adapter, "mmio_flips", False))
        self.mmio_calls = 0
        #: VidPn source -> its compositor's :class:`~wddmsim.dxgkrnl.composition.Composition`
        self.compositions: dict = {}
        #: the windows on overlay planes (:class:`~wddmsim.dxgkrnl.planeassign.OverlayPlanes`), made on first use
        self.planes = None

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
        src = self.sources[packet.vidpn_source]
        if self.mmio and packet.flags & FLAG_FLIP_NO_WAIT and packet.flip_interval:
            return True  # it replaces its source's flips not yet on screen instead of queueing behind them
        pending = src.pending_flips
        if len(pending) - (packet in pending) >= self.max_queued:
            return False
        turn = src.turn
        if turn is not None and turn is not packet.context:
            # A freed slot goes to the context that waited for it first (MMIO flips: without the
            # engine stalling on each flip, a context presenting faster would otherwise take every
            # slot and starve the others). The turn lapses when that context has no flip to offer.
            head = turn.queue[0] if turn.queue else None
            if (head is not None and not turn.destroyed and not turn.device.error and head.flags & FLIP_FLAGS
                    and head.vidpn_source == src.index):
                return False
            src.turn = None
        return True

    def block(self, ctx, packet) -> None:
        src = self.sources[packet.vidpn_source]
        src.blocked.append(ctx)
        if self.mmio:
            src.waiting_since.setdefault(ctx, self.sim.now)

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
            if src.waiting_since:
                src.waiting_since.pop(packet.context, None)
            if src.turn is packet.context:
                src.turn = None
                if src.blocked and len(src.pending_flips) < self.max_queued:
                    self._unblock(src)  # a slot is still free: the next in line may take it
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
            if packet.mmio:
                if packet in src.pending_flips:
                    self._mmio_arrived(src, packet)
                return
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
        if packet.mmio and packet in src.mmio_ready:
            src.mmio_ready.remove(packet)
        if packet in src.pending_flips:
            src.pending_flips.remove(packet)
            self._unblock(src)
        if dropped and packet.displayed == NOT_SHOWN:
            self._drop(src, packet)  # unless shown, or dropped already (replaced at a vsync)

    def vsync(self, source: int, address: int, t: int, data=None) -> None:
        """See :meth:`_vsync`; then the vsync control counts the report (idle unless a flip was
        shown at it or a present still waits to be shown) and wakes the source's vertical-blank
        waiters."""
        shown = self._vsync(source, address, t, data)
        adapter = self.vs.adapter
        control = adapter.vsync
        if control is not None:
            sources = self.sources
            hwflips = getattr(adapter, "hwflips", None)
            control.reported(source, shown or any(s.pending_flips for s in sources) or any(
                s.candidate is not None for s in sources) or (hwflips is not None and hwflips.busy()))

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
        if self.mmio:
            return self._mmio_vsync(src, address, t, data)
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

    # -- MMIO flips --------------------------------------------------------------------------------------------
    def _mmio_arrived(self, src: SourceStats, packet) -> None:
        """An MMIO flip's rendering is done (its empty submission's fence came back): into the
        source's software flip queue. A no-wait flip replaces the queued flips not yet programmed."""
        if packet.flags & FLAG_FLIP_NO_WAIT and packet.flip_interval:
            ready = src.mmio_ready
            while ready:
                self._replace(src, ready.popleft(), packet)
        src.mmio_ready.append(packet)
        self._mmio_soon(src)

    def _mmio_soon(self, src: SourceStats) -> None:
        """Program the source's next flip from a device-IRQL call of its own (the OS synchronizes
        with the ISR), unless one is queued already."""
        if not src.mmio_queued:
            src.mmio_queued = True
            self.sim.soon(self._mmio_program, src, irql=DEVICE)

    def _mmio_program(self, src: SourceStats) -> None:
        """DxgkDdiSetVidPnSourceAddress for the source's ready flips, in order (see the module doc)."""
        src.mmio_queued = False
        src.mmio_timer = None
        sim = self.sim
        while src.mmio_ready:
            p = src.mmio_ready[0]
            now = sim.now
            immediate = p.flip_interval == 0
            no_wait = bool(p.flags & FLAG_FLIP_NO_WAIT)
            overwrite = src.programmed is not None and (immediate or no_wait)
            if src.programmed is not None and not overwrite:
                return  # the next once the vsync showing the programmed one is reported
            due = -1
            if not immediate and src.last_vsync_flip >= 0:
                due = src.last_vsync_flip + (p.flip_interval - 1) * src.period_ns
            if p.vblank_wait:
                due = max(due, src.next_vsync(p.present_t + 1))  # the first vertical retrace after the call
            if now < due:
                if src.mmio_timer is None:
                    src.mmio_timer = sim.at(due, self._mmio_program, src, DEVICE)
                return
            src.mmio_ready.popleft()
            self.mmio_calls += 1
            status = self.vs.adapter.set_vidpn_source_address(p, immediate)
            tr = self.vs.trace
            if tr is not None:
                tr.emit(now, "MmioFlip", {"source": src.index, "context": p.context.handle, "seq": p.seq,
                                          "fence": p.fence, "surface": p.surface, "interval": p.flip_interval,
                                          "immediate": int(immediate), "status": status})
            if status != _SUCCESS:
                self.forget(p)  # refused: never shown
                continue
            old = src.programmed
            if immediate:
                if old is not None:
                    self._replace(src, old, p)
                src.programmed = None
                src.programmed_latch = -1
                self._flips_shown_through(src, p, now)  # shown when the call returns
                continue
            if old is not None:
                self._replace(src, old, p)
            src.programmed = p
            latch = src.next_vsync(now + 1)
            src.programmed_latch = latch
            self._watch_flip(src, p, latch)

    def _replace(self, src: SourceStats, old, new) -> None:
        """``old`` was replaced by the newer ``new`` before it reached the screen: dropped."""
        src.replaced += 1
        if old in src.pending_flips:
            src.pending_flips.remove(old)  # its place in the flip queue is free
            self._unblock(src)
        tr = self.vs.trace
        if tr is not None:
            tr.emit(self.sim.now, "FlipReplaced", {"source": src.index, "context": old.context.handle, "seq": old.seq,
                                                   "fence": old.fence, "by_context": new.context.handle,
                                                   "by_seq": new.seq, "by_fence": new.fence})
        self._drop(src, old)

    def _mmio_vsync(self, src: SourceStats, address: int, t: int, data) -> bool:
        """CRTC_VSYNC with MMIO flips: the programmed flip is shown when the report names its
        address at or after the vsync it latches at; then the next flip is programmed."""
        p = src.programmed
        if p is not None and not address:
            # A report without the address (rule 45, VsyncAddressNonNull) cannot show the flip; rule
            # 84 is not judged on it then (the broken report is already rule 45's).
            src.programmed_latch = -1
            return False
        if p is None or t < src.programmed_latch or p.surface != address:
            return False
        src.programmed = None
        src.programmed_latch = -1
        last = src.last_vsync_flip
        src.last_vsync_flip = t
        if p.flip_interval and last >= 0 and t - last < p.flip_interval * src.period_ns:
            self._early(src, p, t, last, data)
        if p in src.pending_flips:
            self._flips_shown_through(src, p, t)
        if src.mmio_ready:
            self._mmio_soon(src)
        return True

    def _watch_flip(self, src: SourceStats, p, latch: int) -> None:
        """Rule 84: the flip programmed for the vsync at ``latch`` is reported with CRTC_VSYNC within
        LATE_PERIODS periods of it."""
        verifier = self.vs.verifier
        if verifier.mode == "off":
            return
        from .vsync import LATE_PERIODS

        self.sim.at(latch + LATE_PERIODS * src.period_ns + 1, self._flip_reported, (src, p, latch), irql=PASSIVE)

    def _flip_reported(self, what) -> None:
        src, p, latch = what
        verifier = self.vs.verifier
        verifier.judged_rules.add(84)
        if src.programmed is not p or src.programmed_latch < 0 or self.vs.stopped:
            return
        from ..ddi import rules as R
        from .vsync import LATE_PERIODS

        src.programmed_latch = -1  # judged once; a late report still shows it
        verifier.handle([R.Violation(84, "MmioFlipPath", (
            f"DxgkDdiSetVidPnSourceAddress programmed the flip of present {p.seq} (fence {p.fence}) on VidPn source "
            f"{src.index} to 0x{p.surface:X} with Flags.FlipOnNextVSync; it latches at the vsync at {latch} ns, "
            f"but no CRTC_VSYNC naming that address was reported by {self.sim.now} ns ({LATE_PERIODS} refresh "
            f"periods later): after the vsync the driver reports the new scan-out address with "
            f"DXGK_INTERRUPT_CRTC_VSYNC and calls DxgkCbNotifyDpc"))], None, None, 0)

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
        self._unblock(src)

    def _unblock(self, src: SourceStats) -> None:
        """A slot of the source's flip queue is free: the contexts waiting for one may go on (with MMIO
        flips, the first that waited has the turn)."""
        if src.blocked:
            waiting, src.blocked = src.blocked, []
            if self.mmio and src.turn is None:
                since = src.waiting_since
                src.turn = min(waiting, key=lambda c: since.get(c, self.sim.now))
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

    def show_frame(self, source: int, frame, t: int, change: bool = False) -> None:
        """A composed frame reached the screen with its compositor's flip at ``t`` (the flip is the
        display change; the frame only counts as displayed). ``change``: the frame is a display
        change of its own (a window's frame on an overlay plane), counted once per instant."""
        src = self.sources[source]
        if change and t > src.last_display:
            if src.last_display >= 0:
                src.frame_times.add(t - src.last_display)
            src.last_display = t
        src.displayed += 1
        src.latency.add(t - frame.present_t)
        frame.displayed = t
        self._displayed(src, frame, t)
        planes = self.planes
        if planes is not None and planes.gates:
            planes.resolved(frame)  # a window on an overlay plane may wait for it

    def flip_shown(self, packet, t: int) -> None:
        """A flip of the hardware flip queue was shown from ``t`` (the flip queue log's time, which
        the OS reads later: dxgkrnl/hwflipqueue.py)."""
        self._show(self.sources[packet.vidpn_source], packet, t)

    def flip_dropped(self, packet) -> None:
        """A flip of the hardware flip queue that will never be shown (cancelled, or refused)."""
        self._drop(self.sources[packet.vidpn_source], packet)

    def drop_frame(self, source: int, frame) -> None:
        """A composed frame that will never reach the screen."""
        self._drop(self.sources[source], frame)

    def _displayed(self, src: SourceStats, packet, t: int) -> None:
        self.vs.ledger.displayed(self.sim.now, src.index, packet.context.handle, packet.seq, packet.fence, t,
                                 t - packet.present_t)
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
        self.vs.ledger.dropped(self.sim.now, src.index, packet.context.handle, packet.seq, packet.fence)
        tr = self.vs.trace
        if tr is not None:
            tr.emit(self.sim.now, "Dropped", {"source": src.index, "context": packet.context.handle,
                                             "seq": packet.seq, "fence": packet.fence})
        planes = self.planes
        if planes is not None and planes.gates:
            planes.resolved(packet)

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
