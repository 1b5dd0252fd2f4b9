"""The OS's side of the hardware flip queue (WDDM 3.0): flips queued ahead of their vsync, with a
target flip time, cancelled, and learnt from the flip queue log; rule 91 judged on every crossing.

Microsoft's "Hardware flip queue" page describes a display controller that holds several future
flips per plane: the OS submits each one with ``TargetFlipTime`` and its plane's ``PresentId``
(``DxgkDdiSetVidPnSourceAddressWithMultiPlaneOverlay3``), may take back the queued tail
(``DxgkDdiCancelFlips``), says from which PresentId it needs a vsync interrupt
(``DxgkDdiSetInterruptTargetPresentId``) and learns what was shown when from a log it hands the
driver (``DxgkDdiSetFlipQueueLogBuffer``), which the driver fills and points at with
``DXGK_INTERRUPT_CRTC_VSYNC_WITH_MULTIPLANE_OVERLAY3`` (or on ``DxgkDdiUpdateFlipQueueLog``).

When the OS uses it (:class:`HwFlips`, the adapter's ``hwflips``): the driver declares
``DXGK_DRIVERCAPS.MaxHwQueuedFlips`` above 1 after the OS allowed the feature, which it does for a
WDDM 3.0 or later driver run with hardware scheduling (the page: Windows requires GPU hardware
scheduling for it). A flip present (``D3DKMTPresent`` with mode ``flip`` or ``flip_no_wait``,
:meth:`HwFlips.present`) then goes through it:

- the present call blocks while its VidPn source has ``MaxHwQueuedFlips`` presents not yet known
  shown or dropped (the depth the driver declared per source), then enters the scheduler
  (``Present``). It has no DMA buffer: the flip waits until the context's hardware queue's progress
  fence reaches the value of the buffers submitted before the present (its rendering is done), and
  only then is submitted, from a device-IRQL call of the OS, ahead of its vsync;
- the OS's flips are plane 0 (the source's primary) of their source, with the plane's next
  PresentId. Their ``TargetFlipTime`` follows the page's mapping of present intervals: with sync
  interval N >= 1, the vsync the OS expects the previous flip of the plane at, plus N refresh
  periods, less half a period against drift; a flip with no previous one, or with sync interval 0,
  targets the time of its submission. A target never goes below one still queued on the plane;
- with sync interval 0 (tearing is not modelled: the flip shows at a vsync) and with
  ``FlipWithNoWait``, a newer flip whose rendering is done replaces the older ones not yet on
  screen: those not yet submitted are dropped at once, and the OS first asks the driver for its log
  (``DxgkDdiUpdateFlipQueueLog``), then cancels the queued tail from the oldest flip it does not
  know completed (``DxgkDdiCancelFlips``); the driver answers the first PresentId it cancelled and
  those from it to the last are ``FlipReplaced`` and dropped, the ones before it complete as usual;
- the interrupt target: none (UINT64_MAX) with nothing queued, 0 (every vsync) while a thread waits
  for a vertical blank, else the last PresentId queued: the OS sleeps through the batch and reads
  its log once at its end, where a present call waiting for room, or a drain, goes on (the page's
  example: the CPU is woken only when the frame the application waits for is done). The OS keeps
  ``DxgkDdiControlInterrupt`` on while flips are queued (the page: with it off, no target raises
  anything); with no flip left and every
  target UINT64_MAX, it turns it off two refresh periods later (the page's 2-stage disable), for a
  ``VSyncPowerSaveAware`` driver;
- the log: :data:`LOG_ENTRIES` entries per plane, circular. At each OVERLAY3 report (and after
  ``DxgkDdiUpdateFlipQueueLog``) the OS reads from the entry after the last one it read up to the
  plane's ``FirstFreeFlipQueueLogEntryIndex``: an entry with a timestamp shows its present from that
  time (``Displayed``, its ``displayed`` the log's time; ``PlaneDisplayed``), one with
  ``DXGK_HWFLIPQUEUE_TIMESTAMP_CANCELLED`` drops it (``Dropped``, ``PlaneDropped``);
- STATUS_RETRY with ``OutputFlags.HwFlipQueueDrainNeeded``: the flip waits until every flip queued on
  the plane (``HwFlipQueueDrainAllSources``: on every source) is known done and its target time has
  come, and is submitted again (with a new PresentId). STATUS_RETRY again with nothing queued is the
  page's invalid-parameter failure: bug check 0x119 (parameter 1 = 0xB,
  FAILED_SETVIDPNSOURCEMPO_COMMAND).

Times: the page passes them in QPC units (``KeQueryPerformanceCounter``). The model's counter runs
at 10 MHz (:data:`~wddmsim.dxgkrnl.callbacks.QPC_FREQUENCY`) from virtual time 0: a target of ``t``
ns goes out as ``t // 100`` ticks (a target at most 99 ns earlier changes no vsync: it is half a
period ahead), and a log timestamp of ``k`` ticks is read as ``100 * k`` ns.

Rule 91 (HwFlipQueueOrdering, ``wddmsim rules 91``, docs/rules.md): the judge
(:class:`wddmsim.ddi.rules.flipqueue.FlipQueueJudge`) sees every submission, every cancel answer and
every log entry read; what it finds goes to the verifier (bug check 0xC4, parameter 1 = 91, in
strict mode).

Decisions and limits: the OS flips plane 0 only (an application's full-screen independent flip);
the log is never destroyed and given again; ``PrePresentNeeded`` is not honoured (a resubmission
is made at device IRQL); no flip changes ``Duration``; mode changes and power transitions are not
modelled. Microsoft's pages: "Hardware flip queue" (display/hardware-flip-queue),
d3dkmddi/nc-d3dkmddi-dxgkddi_cancelflips, ns-d3dkmddi-dxgk_cancelflips_plane,
nc-d3dkmddi-dxgkddi_setinterrupttargetpresentid, nc-d3dkmddi-dxgkddi_setflipqueuelogbuffer,
nc-d3dkmddi-dxgkddi_updateflipqueuelog, ns-d3dkmddi-dxgk_flipqueue_log_entry,
ns-d3dkmddi-dxgk_multiplane_overlay_vsync_info3, ns-d3dkmddi-_dxgkarg_setvidpnsourceaddresswithmultiplaneoverlay3
(TargetFlipTime) and ns-d3dkmddi-_dxgk_drivercaps (MaxHwQueuedFlips).
"""

from __future__ import annotations

import ctypes
from collections import deque

from ..ddi.bugcheck import BugCheck, BugCheckCode, VidSchError
from ..ddi.ntstatus import NTSTATUS
from ..ddi.rules.flipqueue import CANCELLED, FlipQueueJudge
from ..ddi.structs.flipqueue import DXGK_HWFLIPQUEUE_TIMESTAMP_CANCELLED
from ..sim import DEVICE, PASSIVE
from .callbacks import QPC_FREQUENCY
from .errors import ApiError
from .mpoflip import FLIP_DDI, RETRY, SUCCESS, PlaneRequest, flipper
from .objects import Packet
from .overlays import DROPPED, PlaneFlip
from .present import FLAG_FLIP, FLAG_FLIP_NO_WAIT, FLAG_PRESENT

#: ns per tick of the performance counter (QPC)
QPC_NS = 1_000_000_000 // QPC_FREQUENCY
#: entries of each plane's flip queue log (a model choice: far more than one batch of flips)
LOG_ENTRIES = 64
#: the interrupt target PresentId that asks for no vsync interrupt
NO_INTERRUPT = (1 << 64) - 1
#: the plane the OS's flips use: the source's primary
LAYER = 0
#: DXGK_SETVIDPNSOURCEADDRESS_OUTPUT_FLAGS bits
_DRAIN_NEEDED, _DRAIN_ALL_SOURCES = 0x2, 0x8
_ENTRY_SIZE = 16  # DXGK_FLIPQUEUE_LOG_ENTRY
_PTR = 8


class HwFlip:
    """One flip present on its way through the hardware flip queue."""

    __slots__ = ("packet", "allocation", "queue", "value", "replacing", "present_id", "target_ns", "expected",
                 "plane_flip")

    def __init__(self, packet: Packet, allocation, queue, value: int, replacing: bool):
        self.packet = packet
        self.allocation = allocation
        self.queue = queue  # the hardware queue whose progress fence orders it after its rendering
        self.value = value  # ... and the value it waits for
        self.replacing = replacing
        self.present_id = 0
        self.target_ns = 0
        self.expected = -1  # the vsync the OS expects it at
        self.plane_flip: PlaneFlip | None = None


class _Source:
    __slots__ = ("index", "period", "open", "ready", "queued", "shown_at", "target", "log", "read", "blocked",
                 "drain", "pump", "retry")

    def __init__(self, index: int, period: int):
        self.index = index
        self.period = period
        self.open = 0  # presents neither shown nor dropped
        self.ready: deque[HwFlip] = deque()  # rendering done, not yet queued
        self.queued: list[HwFlip] = []  # queued with the driver, not yet known done, by PresentId
        self.shown_at = -1  # the log's time of the last flip shown
        self.target = 0  # the interrupt target PresentId the driver holds (0: never set)
        self.log = 0  # the log buffer's address (0: not given yet)
        self.read = 0  # the next log entry the OS reads
        self.blocked: list = []  # events of present calls waiting for room
        self.drain = 0  # 0: none; 1: this plane's queued flips; 2: every source's
        self.pump = None  # the pending device-IRQL call that submits
        self.retry = None  # the timer of a drained flip waiting for its target time


class HwFlips:
    """The hardware flip queue of one adapter, the OS's side (see the module doc)."""

    def __init__(self, adapter, depth: int):
        self.adapter = adapter
        self.sim = adapter.sim
        self.depth = depth
        self.judge = FlipQueueJudge()
        self.sources = [_Source(i, round(1e9 / hz)) for i, hz in enumerate(adapter.display_refresh)]
        self._waiting: dict = {}  # hardware queue -> flips waiting for its progress fence, in order
        self._last_seq: dict = {}  # context -> the seq of its last flip present
        self._off = None  # the timer of the 2-stage vsync turn-off
        self.submitted = self.cancels = self.cancelled = self.retries = self.log_reads = 0

    # -- the present call --------------------------------------------------------------------------------
    def present(self, ctx, allocation, mode: str, interval: int, source: int, width: int, height: int,
                call_start: int, queue=None):
        """D3DKMTPresent of a flip (generator; returns the seq the application may wait on)."""
        if not isinstance(source, int) or not 0 <= source < len(self.sources):
            raise ApiError(int(NTSTATUS.STATUS_INVALID_PARAMETER),
                           f"VidPn source {source!r}: the adapter has sources 0..{len(self.sources) - 1}")
        if allocation is None:
            raise ApiError(int(NTSTATUS.STATUS_INVALID_PARAMETER), "a flip needs the surface to show")
        src = self.sources[source]
        while src.open >= self.depth and not ctx.device.error:
            ev = self.sim.event()
            src.blocked.append(ev)
            yield ev
        if ctx.device.error:
            raise ApiError(int(NTSTATUS.STATUS_DEVICE_REMOVED), "the device is in error")
        seq = ctx.seq
        if self._last_seq.get(ctx) == seq:
            raise ApiError(int(NTSTATUS.STATUS_INVALID_PARAMETER),
                           "nothing was submitted since this context's last flip: its present has no frame")
        self._last_seq[ctx] = seq
        adapter = self.adapter
        if not src.log:
            self._give_log(src)
        q = queue or ctx.hwqueues[0]
        p = Packet(ctx, seq, "present")
        p.flags = FLAG_PRESENT | FLAG_FLIP | (FLAG_FLIP_NO_WAIT if mode == "flip_no_wait" else 0)
        p.vidpn_source = source
        p.flip_interval = interval
        p.surface = allocation.address
        p.present_t = call_start
        p.fence = q.last_id
        adapter.ledger.present(self.sim.now, ctx.handle, ctx.device.process.pid, seq, mode, 1, interval, source, width,
                               height, call_start)
        if adapter.trace is not None:
            adapter.trace.emit(self.sim.now, "Present", {
                "context": ctx.handle, "process": ctx.device.process.pid, "seq": seq, "mode": mode, "flip": 1,
                "interval": interval, "source": source, "width": width, "height": height, "cpu_start": call_start})
        adapter.vidsch.presents.presented(p)
        adapter.vsync.needed("flip")  # the interrupt targets work only while it is on
        src.open += 1
        f = HwFlip(p, allocation, q, q.last_id, interval == 0 or mode == "flip_no_wait")
        if q.progress.value >= f.value:
            self._ready(f)
        else:
            self._waiting.setdefault(q, deque()).append(f)
        return seq

    def _give_log(self, src: _Source) -> None:
        """DxgkDdiSetFlipQueueLogBuffer for the plane (PASSIVE_LEVEL, before its first flip)."""
        adapter = self.adapter
        src.log = adapter.pool.alloc(LOG_ENTRIES * _ENTRY_SIZE)
        adapter.memory.write(src.log, bytes(LOG_ENTRIES * _ENTRY_SIZE))
        args = adapter.ddi.new("DXGKARG_SETFLIPQUEUELOGBUFFER")
        args.VidPnSourceId = src.index
        args.LayerIndex = LAYER
        args.NumberOfEntries = LOG_ENTRIES
        args.LogBufferAddress = src.log
        adapter.ddi.call("DxgkDdiSetFlipQueueLogBuffer", adapter.hAdapter, args)

    # -- rendering done -------------------------------------------------------------------------------------
    def progressed(self, q) -> None:
        """The DPC read ``q``'s progress fence: the flips waiting for it whose value it reached are ready."""
        waiting = self._waiting.get(q)
        value = q.progress.value
        while waiting and waiting[0].value <= value:
            self._ready(waiting.popleft())

    def context_gone(self, ctx) -> None:
        """``ctx`` was destroyed or its device went to error: its flips not yet queued never will be."""
        for q in ctx.hwqueues:
            for f in self._waiting.pop(q, ()):
                self._resolve(f, None)
        for src in self.sources:
            for f in [f for f in src.ready if f.packet.context is ctx]:
                src.ready.remove(f)
                self._resolve(f, None)
            if not src.ready:
                src.drain = 0

    def _ready(self, f: HwFlip) -> None:
        src = self.sources[f.packet.vidpn_source]
        if f.replacing:
            while src.ready:
                old = src.ready.popleft()
                self._replaced(src, old, f)
                self._resolve(old, None)
        src.ready.append(f)
        self._soon(src)

    # -- the device-IRQL calls ------------------------------------------------------------------------------
    def _soon(self, src: _Source) -> None:
        if src.pump is None:
            src.pump = self.sim.soon(self._pump, src, irql=DEVICE)

    def _pump(self, src: _Source) -> None:
        """Queue the source's ready flips as far as the queue and a drain allow; then the target."""
        src.pump = None
        while src.ready:
            f = src.ready[0]
            if src.drain:
                if any(s.queued for s in (self.sources if src.drain == 2 else (src,))):
                    break
                if self.sim.now < f.target_ns:
                    if src.retry is None:
                        src.retry = self.sim.at(f.target_ns, self._retry, src, DEVICE)
                    break
            if f.replacing and src.queued:
                self._cancel_tail(src, f)
            if len(src.queued) >= self.depth or self._submit(src, f) == RETRY:
                break
        self._retarget(src)

    def _retry(self, src: _Source) -> None:
        src.retry = None
        self._pump(src)

    def _target(self, src: _Source, f: HwFlip, now: int) -> int:
        """The flip's target time in ns (see the module doc)."""
        anchor = src.queued[-1].expected if src.queued else src.shown_at
        interval = f.packet.flip_interval
        t = anchor + interval * src.period - src.period // 2 if interval and anchor >= 0 else now
        if src.queued:
            t = max(t, src.queued[-1].target_ns)
        return max(t, 0)

    def _submit(self, src: _Source, f: HwFlip) -> int:
        """DxgkDdiSetVidPnSourceAddressWithMultiPlaneOverlay3 with TargetFlipTime: returns the status
        (STATUS_SUCCESS: queued; STATUS_RETRY with a drain: it stays first in line; else dropped)."""
        adapter = self.adapter
        now = self.sim.now
        target = self._target(src, f, now)
        qpc = target // QPC_NS
        p = f.packet
        fl = flipper(adapter)
        status, (pf,) = fl.flip(src.index, [PlaneRequest(LAYER, p.surface, True, False, None, p.context, f.allocation)],
                                on_done=lambda pf, f=f: self._plane_done(f, pf), target_flip_time=qpc,
                                hold_on_retry=True)
        output = fl.last_output
        drain = 0
        if status == SUCCESS:
            src.ready.popleft()
            f.present_id = pf.present_id
            f.target_ns = qpc * QPC_NS
            f.plane_flip = pf
            last = src.queued[-1].expected if src.queued else (src.shown_at if src.shown_at >= 0 else -1)
            f.expected = _next_vsync(max(f.target_ns, now + 1, last + 1), src.period)
            src.queued.append(f)
            src.drain = 0
            self.submitted += 1
            self._judge(self.judge.submitted(src.index, LAYER, f.present_id, qpc), "DXGK_MULTIPLANE_OVERLAY_PLANE3")
        elif status == RETRY and output & _DRAIN_NEEDED:
            drain = 2 if output & _DRAIN_ALL_SOURCES else 1
            if src.drain and not src.queued:
                self._invalid_retry(src, pf.present_id, status)
            src.drain = drain
            f.target_ns = qpc * QPC_NS
            self.retries += 1
            if not any(s.queued for s in (self.sources if drain == 2 else (src,))):
                self._soon(src)  # nothing to wait for: made again at once (or at its target time)
        else:
            src.ready.popleft()  # refused: never shown (the model's OS does not call again)
            self._resolve(f, None)
        tr = adapter.trace
        if status == SUCCESS:
            adapter.ledger.flip(now, p.context.handle, p.seq, p.fence, src.index, p.flip_interval,
                                int(bool(p.flags & FLAG_FLIP_NO_WAIT)), p.surface)
        if tr is not None:
            tr.emit(now, "HwFlip", {"source": src.index, "layer": LAYER, "present_id": pf.present_id,
                                    "context": p.context.handle, "seq": p.seq, "interval": p.flip_interval,
                                    "target": qpc, "target_ns": qpc * QPC_NS, "expected": f.expected if
                                    status == SUCCESS else -1, "status": status, "drain": drain})
            if status == SUCCESS:
                tr.emit(now, "Flip", {"context": p.context.handle, "seq": p.seq, "fence": p.fence,
                                      "source": src.index, "interval": p.flip_interval,
                                      "no_wait": int(bool(p.flags & FLAG_FLIP_NO_WAIT)), "surface": p.surface})
        return RETRY if drain else status

    def _invalid_retry(self, src: _Source, present_id: int, status: int) -> None:
        """STATUS_RETRY again with nothing queued: the page's invalid-parameter failure."""
        bc = BugCheck(BugCheckCode.VIDEO_SCHEDULER_INTERNAL_ERROR, VidSchError.FAILED_SETVIDPNSOURCEMPO_COMMAND,
                      status & 0xFFFFFFFF, 0, 0)
        self.adapter.ddi.stop(FLIP_DDI, None, 0, bc, status, message=(
            f"{FLIP_DDI} returned STATUS_RETRY with OutputFlags.HwFlipQueueDrainNeeded for PresentId {present_id} "
            f"of VidPn source {src.index} plane {LAYER}, after the drain it asked for: no flip is pending on any "
            f"source, so the OS treats it as an invalid-parameter failure (\"Hardware flip queue\")"))

    def _cancel_tail(self, src: _Source, newer: HwFlip) -> None:
        """The newer flip replaces the queued ones: the log first, then DxgkDdiCancelFlips."""
        adapter = self.adapter
        args = adapter.ddi.new("DXGKARG_UPDATEFLIPQUEUELOG")
        args.VidPnSourceId = src.index
        args.LayerIndex = LAYER
        if adapter.ddi.call("DxgkDdiUpdateFlipQueueLog", adapter.hAdapter, args) == SUCCESS:
            self._read_log(src, int(args.FirstFreeFlipQueueLogEntryIndex))
        if not src.queued:
            return
        requested = src.queued[0].present_id
        last = src.queued[-1].present_id
        ddi = adapter.ddi
        plane = ddi.new("DXGK_CANCELFLIPS_PLANE")
        plane.PresentIdCancelRequested = requested
        plane.LayerIndex = LAYER
        size = _PTR + ctypes.sizeof(plane)
        block = adapter.pool.alloc(size)
        try:
            adapter.memory.write(block, (block + _PTR).to_bytes(_PTR, "little") + bytes(plane))
            args = ddi.new("DXGKARG_CANCELFLIPS")
            args.VidPnSourceId = src.index
            args.PlaneCount = 1
            args.ppPlanes = block
            status = ddi.call("DxgkDdiCancelFlips", adapter.hAdapter, args)
            plane = type(plane).from_buffer_copy(adapter.memory.read(block + _PTR, ctypes.sizeof(plane)))
        finally:
            adapter.pool.free(block, size)
        answer = int(plane.PresentIdCancelled) if status == SUCCESS else 0
        self.cancels += 1
        found = self._judge(self.judge.cancelled(src.index, LAYER, requested, answer), "DXGK_CANCELFLIPS_PLANE",
                            plane)
        if adapter.trace is not None:
            adapter.trace.emit(self.sim.now, "HwFlipCancel", {"source": src.index, "layer": LAYER,
                                                              "requested": requested, "cancelled": answer,
                                                              "last": last})
        if not answer or found:
            return  # nothing cancelled (or an answer outside the run: the OS keeps waiting for the log)
        for f in [f for f in src.queued if f.present_id >= answer]:
            self.cancelled += 1
            self._replaced(src, f, newer)
            flipper(adapter).overlays.drop(f.plane_flip)  # resolves the present through _plane_done

    def _retarget(self, src: _Source) -> None:
        """DxgkDdiSetInterruptTargetPresentId when the PresentId the OS needs an interrupt for changed."""
        adapter = self.adapter
        control = adapter.vsync
        if not src.queued:
            want = NO_INTERRUPT
        elif control.waiters[src.index]:
            want = 0
        else:
            want = src.queued[-1].present_id
        if want != src.target and (src.log or want != NO_INTERRUPT):
            args = adapter.ddi.new("DXGKARG_SETINTERRUPTTARGETPRESENTID")
            args.VidPnSourceId = src.index
            args.LayerIndex = LAYER
            args.InterruptTargetPresentId = want
            adapter.ddi.call("DxgkDdiSetInterruptTargetPresentId", adapter.hAdapter, args)
            src.target = want
            if adapter.trace is not None:
                adapter.trace.emit(self.sim.now, "HwFlipTarget", {"source": src.index, "layer": LAYER,
                                                                  "present_id": want})
        if src.target:
            control.quiet.add(src.index)  # rule 48: the target, not every vsync, says when to interrupt
        else:
            control.quiet.discard(src.index)
        if want == NO_INTERRUPT and self._off is None and self._idle():
            self._off = self.sim.after(2 * src.period, self._turn_off, irql=PASSIVE)

    def _idle(self) -> bool:
        """No flip present open, and every plane the OS flipped asks for no interrupt."""
        return all(not s.open and (s.target == NO_INTERRUPT or not s.log) for s in self.sources)

    def _turn_off(self) -> None:
        """The page's second stage: two periods after the last target asked for no interrupt, the
        vsync interrupt goes off (a VSyncPowerSaveAware driver; nobody waiting for a vertical blank)."""
        self._off = None
        control = self.adapter.vsync
        if control.enabled and control.power_save and not any(control.waiters) and self._idle():
            control._control(False, "idle")

    def vblank_wanted(self, source: int) -> None:
        """A thread waits for ``source``'s vertical blank: every vsync must interrupt meanwhile."""
        if 0 <= source < len(self.sources) and self.sources[source].queued:
            self._soon(self.sources[source])

    # -- what the driver reported ---------------------------------------------------------------------------
    def reported(self, source: int, planes: list[tuple[int, int]]) -> None:
        """CRTC_VSYNC_WITH_MULTIPLANE_OVERLAY3 (device IRQL, inside the driver's callback): read each
        plane's log up to its first free index; the next calls are made from a call of the OS's own."""
        if not 0 <= source < len(self.sources):
            return
        src = self.sources[source]
        for layer, first_free in planes:
            if layer == LAYER and src.log:
                self._read_log(src, first_free)
        self._soon(src)
        for other in self.sources:
            if other.drain == 2:
                self._soon(other)  # it waits for every source's queued flips

    def _read_log(self, src: _Source, first_free: int) -> None:
        adapter = self.adapter
        count = (first_free - src.read) % LOG_ENTRIES
        if not count:
            return
        self.log_reads += 1
        cls = adapter.ddi.cls("DXGK_FLIPQUEUE_LOG_ENTRY")
        entries = []
        for i in range(count):
            at = src.log + ((src.read + i) % LOG_ENTRIES) * _ENTRY_SIZE
            e = cls.from_buffer_copy(adapter.memory.read(at, _ENTRY_SIZE))
            stamp = int(e.PresentTimestamp)
            entries.append((int(e.PresentId), CANCELLED if stamp == DXGK_HWFLIPQUEUE_TIMESTAMP_CANCELLED
                            else stamp * QPC_NS, e, at))
        src.read = first_free % LOG_ENTRIES
        found = self.judge.completed(src.index, LAYER, [(pid, t) for pid, t, _, _ in entries])
        if found:  # the crash record shows the entry the first finding names
            bad = next((x for x in entries if f"PresentId {x[0]} " in found[0].message), entries[0])
            self._judge(found, "DXGK_FLIPQUEUE_LOG_ENTRY", bad[2], bad[3])
        else:
            self._judge(found, "DXGK_FLIPQUEUE_LOG_ENTRY")
        tr = adapter.trace
        ov = flipper(adapter).overlays
        for pid, t, _, _ in entries:
            if tr is not None:
                tr.emit(self.sim.now, "HwFlipLog", {"source": src.index, "layer": LAYER, "present_id": pid,
                                                    "shown": t})
            f = next((f for f in src.queued if f.present_id == pid), None)
            if f is None:
                continue  # resolved already (the OS cancelled it), or never queued (the judge's)
            if t == CANCELLED:
                ov.drop(f.plane_flip)
            else:
                src.shown_at = max(src.shown_at, t)
                ov.plane_shown(src.index, LAYER, pid, t)

    # -- resolution ---------------------------------------------------------------------------------------
    def _plane_done(self, f: HwFlip, pf: PlaneFlip) -> None:
        """The plane flip was resolved (overlays.py): shown at ``pf.shown``, or dropped."""
        self._resolve(f, pf.shown if pf.shown != DROPPED else None)

    def _resolve(self, f: HwFlip, shown: int | None) -> None:
        p = f.packet
        src = self.sources[p.vidpn_source]
        if f in src.queued:
            src.queued.remove(f)
        src.open -= 1
        presents = self.adapter.vidsch.presents
        if shown is None:
            presents.flip_dropped(p)
        else:
            presents.flip_shown(p, shown)
        if src.blocked and src.open < self.depth:
            waiting, src.blocked = src.blocked, []
            for ev in waiting:
                ev.succeed(self.sim.now)

    def _replaced(self, src: _Source, old: HwFlip, new: HwFlip) -> None:
        tr = self.adapter.trace
        if tr is not None:
            o, n = old.packet, new.packet
            tr.emit(self.sim.now, "FlipReplaced", {"source": src.index, "context": o.context.handle, "seq": o.seq,
                                                   "fence": o.fence, "by_context": n.context.handle,
                                                   "by_seq": n.seq, "by_fence": n.fence})

    def _judge(self, found: list, struct: str, obj=None, address: int = 0) -> list:
        """Rule 91's findings go to the verifier (strict: bug check 0xC4, parameter 1 = 91, parameter 2
        the structure's address)."""
        verifier = self.adapter.verifier
        if verifier.mode == "off":
            return []
        verifier.judged_rules.add(91)
        if found:
            verifier.handle(found, struct, obj, address)
        return found

    def busy(self) -> bool:
        """A flip present is neither shown nor dropped yet (the vsync interrupt is still needed)."""
        return any(s.open for s in self.sources)


def _next_vsync(t: int, period: int) -> int:
    return -(-t // period) * period
