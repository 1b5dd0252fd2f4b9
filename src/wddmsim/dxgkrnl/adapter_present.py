"""The adapter's presents, :class:`AdapterPresent` (one of the mixins :class:`~.adapter.Adapter` is
made of): ``DxgkDdiPresent`` (a blt, or a flip on a VidPn source), the redirected flip of a
flip-model frame the compositor composes (D3DKMTPresent with RedirectedFlip, no DMA buffer of its
own: :mod:`.composition`, or an overlay plane's flip: :mod:`.planeassign`), and
``DxgkDdiSetVidPnSourceAddress`` for an MMIO flip (:mod:`.present` schedules those).

It follows Microsoft's DXGK_FLIPCAPS page: the OS sends only the flips the driver declared
(``FlipOnVSyncWithNoWait``, ``FlipInterval``: rules 87 and 88, FlipWithNoWaitNeedsCap and
FlipIntervalSupported), and an MMIO flip (``FlipOnVSyncMmIo``) asks for no DMA buffer. Each
``DxgkDdiSetVidPnSourceAddress`` is judged after the call (rules 83, 85 and 86: VidPnContextCount,
StereoFlagsExclusive, SetVidPnInvalidParameterOnlySharedPrimary). Rule numbers are the rule
catalogue's: ``wddmsim rules N`` prints rule N, docs/rules.md lists them all.
"""

from __future__ import annotations

from ..ddi import rules as R
from ..ddi.ntstatus import NTSTATUS
from .adapter_render import FLAG_VIRTUAL_MACHINE_DATA
from .composition import PresentToken
from .errors import ApiError
from .objects import Allocation, Context, Packet
from .present import FLAG_FLIP, FLAG_FLIP_NO_WAIT
from .vidsch import FLAG_NULL_RENDERING, FLAG_PRESENT

SUCCESS = int(NTSTATUS.STATUS_SUCCESS)


class AdapterPresent:
    """Blt and flip presents, redirected flips and MMIO flips."""

    def redirected_flip(self, packet: Packet, vidpn_source: int, call_start: int | None = None,
                        sync_interval: int = 0, surface: Allocation | None = None, allow_tearing: bool = False):
        """D3DKMTPresent with RedirectedFlip: ``packet``, the last of the frame (the present's flush),
        ends a flip-model frame that the compositor of ``vidpn_source`` composes once the packet
        retires (without a compositor the OS shows it at the next vsync after that), shown for at
        least ``sync_interval`` refreshes (0: replaced by a newer frame). No DMA buffer of its own:
        see :mod:`wddmsim.dxgkrnl.composition`. A window the compositor put on an overlay plane
        flips that plane to ``surface`` (its back buffer) instead, immediately when ``allow_tearing``
        (DXGI_PRESENT_ALLOW_TEARING) and the sync interval is 0: see
        :mod:`wddmsim.dxgkrnl.planeassign`. Returns the present's token."""
        ctx = packet.context
        if not 0 <= vidpn_source < len(self.vidsch.presents.sources):
            raise ApiError(int(NTSTATUS.STATUS_INVALID_PARAMETER), f"VidPn source {vidpn_source} does not exist")
        planes = self.vidsch.presents.planes
        if planes is not None and planes.layer_of(ctx) is not None:
            return planes.present(packet, vidpn_source, self.sim.now if call_start is None else call_start,
                                  sync_interval, allow_tearing, surface)
        token = PresentToken(packet, vidpn_source, self.sim.now if call_start is None else call_start, sync_interval)
        self.ledger.present(self.sim.now, ctx.handle, ctx.device.process.pid, packet.seq, "composed_flip", 0,
                            sync_interval, vidpn_source, 0, 0, token.present_t)
        if self.trace is not None:
            self.trace.emit(self.sim.now, "Present", {
                "context": ctx.handle, "process": ctx.device.process.pid, "seq": packet.seq, "mode": "composed_flip",
                "flip": 0, "interval": sync_interval, "source": vidpn_source, "width": 0, "height": 0,
                "cpu_start": token.present_t})
        presents = self.vidsch.presents
        presents.presented(token)
        if planes is not None:
            planes.composed(token)
        self.wait_event(ctx, packet.seq).add_callback(lambda _value: presents.completed(token, self.sim.now))
        return token

    def present(self, ctx: Context, source: Allocation, destination: Allocation | None, width: int, height: int,
                mode: str = "blt", flip_interval: int = 1, vidpn_source: int = 0,
                null_rendering: bool = False, call_start: int | None = None, independent: bool = False,
                composes: list | None = None, legacy: bool = False) -> Packet:
        """DxgkDdiPresent: a blt of ``width`` x ``height`` pixels to ``destination`` (``mode`` "blt"),
        or a flip of ``source`` on ``vidpn_source`` ("flip", "flip_no_wait") honouring
        ``flip_interval`` (0 immediate, 1..4 vsyncs). See :mod:`wddmsim.dxgkrnl.present`.
        ``independent``: the flip of a flip-model swap chain the compositor stepped aside for
        (logged as mode "independent_flip"); ``composes``: the compositor's flip, showing these
        composed frames (:mod:`wddmsim.dxgkrnl.composition`); ``legacy``: a flip of the legacy
        full-screen present path (D3D9's, D3DPRESENT_INTERVAL_ONE: it waits for a vertical retrace
        before it is made; see :mod:`wddmsim.dxgkrnl.present`)."""
        if ctx.device.error:
            raise ApiError(int(NTSTATUS.STATUS_DEVICE_REMOVED), "the device is in error")
        if mode not in ("blt", "flip", "flip_no_wait"):
            raise ValueError(f"present mode must be blt, flip or flip_no_wait, got {mode!r}")
        # The OS sends only the flips the driver declared in DXGK_FLIPCAPS (rules 87, 88). Without
        # FlipOnVSyncWithNoWait "the graphics pipeline must wait until the next vertical sync"
        # (Microsoft's DXGK_FLIPCAPS page): the present becomes a waiting flip. Without FlipInterval
        # only IMMEDIATE and ONE are supported: an interval of 2..4 fails the call, as a runtime
        # refuses a presentation interval the device's caps do not list.
        flip_caps = self.caps.FlipCaps
        if mode == "flip_no_wait" and not flip_caps.get("FlipOnVSyncWithNoWait"):
            mode = "flip"
        if mode != "blt" and flip_interval >= 2 and not flip_caps.get("FlipInterval"):
            raise ApiError(int(NTSTATUS.STATUS_NOT_SUPPORTED),
                           f"flip interval {flip_interval}: the driver does not report DXGK_FLIPCAPS.FlipInterval")
        if not 0 <= vidpn_source < len(self.vidsch.presents.sources):
            raise ApiError(int(NTSTATUS.STATUS_INVALID_PARAMETER), f"VidPn source {vidpn_source} does not exist")
        flip = mode != "blt"
        info = ctx.info
        block, total = self._packet_buffers(ctx, 0)
        dma = block
        priv = block + info.DmaBufferSize
        alist = priv + info.DmaBufferPrivateDataSize
        plist = alist + info.AllocationListSize * self._alist_size
        # Element 0 is always NULL; 1 = source, 2 = destination (DXGK_PRESENT_*_INDEX).
        self._write_allocation_list(alist, [None, source, destination])
        args = self._present_args
        args.pDmaBuffer = dma
        args.DmaSize = info.DmaBufferSize
        args.pDmaBufferPrivateData = priv
        args.DmaBufferPrivateDataSize = info.DmaBufferPrivateDataSize
        args.pAllocationList = alist
        args.pPatchLocationListOut = plist
        args.PatchLocationListOutSize = info.PatchLocationListSize
        args.MultipassOffset = 0
        args.SrcRect.left = args.SrcRect.top = 0
        args.SrcRect.right = width
        args.SrcRect.bottom = height
        args.DstRect.left = args.DstRect.top = 0
        args.DstRect.right = width
        args.DstRect.bottom = height
        args.FlipInterval = flip_interval if flip else 0
        # An MMIO flip: no DMA buffer is asked for (pDmaBuffer NULL, Microsoft's DXGK_FLIPCAPS page);
        # the OS flips it with DxgkDdiSetVidPnSourceAddress once its rendering is done.
        mmio = flip and self.mmio_flips
        if mmio:
            args.pDmaBuffer = 0
            args.DmaSize = 0
        args.Flags.Value = 0
        if flip:
            args.Flags.Flip = 1
            args.Flags.FlipWithNoWait = 1 if mode == "flip_no_wait" else 0
        else:
            args.Flags.Blt = 1
        args.DmaBufferSegmentId = 0
        args.DmaBufferPhysicalAddress.QuadPart = dma
        status = self.ddi.call("DxgkDdiPresent", ctx.hDdi, args)
        if status != SUCCESS:
            self.pool.free(block, total)
            raise ApiError(status, "DxgkDdiPresent failed")
        ctx.seq += 1
        p = Packet(ctx, ctx.seq, "present")
        p.allocations = (None, source, destination)
        p.flags = FLAG_PRESENT | (FLAG_FLIP if flip else 0) | (FLAG_FLIP_NO_WAIT if mode == "flip_no_wait" else 0)
        if null_rendering or self.null_rendering:
            p.flags |= FLAG_NULL_RENDERING
        if self._vm_flag and ctx.device.process.virtual_machine:
            p.flags |= FLAG_VIRTUAL_MACHINE_DATA
        p.vidpn_source = vidpn_source
        p.flip_interval = flip_interval if flip else 0
        p.surface = source.address
        p.present_t = self.sim.now if call_start is None else call_start
        p.dma = dma
        p.dma_size = info.DmaBufferSize
        p.end_off = 0 if mmio else args.pDmaBuffer - dma
        p.mmio = mmio
        p.vblank_wait = legacy and flip and flip_interval > 0
        p.priv = priv
        p.priv_size = 0 if mmio else info.DmaBufferPrivateDataSize  # an MMIO flip's driver wrote none
        p.alist = alist
        p.alist_n = 3
        p.plist = plist
        p.plist_n = (args.pPatchLocationListOut - plist) // self._plist_size
        p.buffers = (block, total)
        ctx.submitted += 1
        if self.on_packet is not None:
            self.on_packet(p)
        if composes is not None:
            self.vidsch.presents.composition(vidpn_source).attach(p, composes)
        self.ledger.present(self.sim.now, ctx.handle, ctx.device.process.pid, p.seq,
                            "independent_flip" if independent and flip else mode, int(flip), p.flip_interval,
                            vidpn_source, width, height, p.present_t)
        if self.trace is not None:
            self.trace.emit(self.sim.now, "Present", {"context": ctx.handle, "process": ctx.device.process.pid,
                                                     "seq": p.seq, "mode": "independent_flip" if independent and flip
                                                     else mode, "flip": int(flip),
                                                     "interval": p.flip_interval, "source": vidpn_source,
                                                     "width": width, "height": height, "cpu_start": p.present_t})
        self.vidsch.presents.presented(p)
        self.vidsch.enqueue(p)
        return p

    def set_vidpn_source_address(self, p: Packet, immediate: bool) -> int:
        """DxgkDdiSetVidPnSourceAddress for the MMIO flip ``p`` (device IRQL): its source, the
        surface's segment and address, ``ContextCount`` 1 (the model broadcasts no flip: the flip's
        own context, rule 83) and ``FlipImmediate`` (interval 0) or ``FlipOnNextVSync``. Judged
        after the call (rules 83, 85, 86); the driver's status is returned."""
        args = self._svsa_args
        if args is None:
            args = self._svsa_args = self.ddi.new("DXGKARG_SETVIDPNSOURCEADDRESS")
        source = p.allocations[1] if len(p.allocations) > 1 else None
        args.VidPnSourceId = p.vidpn_source
        args.PrimarySegment = source.segment_id if source is not None else 0
        args.PrimaryAddress.QuadPart = p.surface
        args.hAllocation = source.handle if source is not None else 0
        args.ContextCount = 1
        args.Context[0] = p.context.hDdi
        args.Flags.Value = 0
        if immediate:
            args.Flags.FlipImmediate = 1
        else:
            args.Flags.FlipOnNextVSync = 1
        return self.ddi.call("DxgkDdiSetVidPnSourceAddress", self.hAdapter, args, judge="after",
                             facts=R.Facts(version=self.version, broadcast_context_count=0,
                                           vidpn_source_count=len(self.display_refresh)))
