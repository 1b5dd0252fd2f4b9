"""VidSch's submission: a packet the worker took gets its fence id, is patched and goes to the
driver with ``DxgkDdiSubmitCommand`` (or ``DxgkDdiSubmitCommandVirtual``), then enters its node's
hardware queue and, at the bottom of it, starts.

Step 3 of a packet's trip (:mod:`.vidsch`): SUBMITTED. The packet gets the node's next fence id;
``DxgkDdiPatch`` runs at PASSIVE_LEVEL if the packet has patch locations; the worker raises to
DISPATCH_LEVEL and calls ``DxgkDdiSubmitCommand`` with a ``DXGKARG_SUBMITCOMMAND`` whose every
member is filled as Microsoft's DXGKARG_SUBMITCOMMAND page says. A failure stops the model with bug
check 0x119 (0x2, status, argument address, internal datum). The packet enters the hardware queue
(``DmaPacketStart`` when it is at the bottom, i.e. the GPU is taken to be running it).

Fence ids are per node, start at 1 and increase by one per submission (the documentation does not
say whether the sequence is per node, per engine or per adapter; the model decides per node). They
are 32-bit; this part of the model does not wrap them (4 billion packets a node). A preempted (or
reset) paging packet keeps its fence id when it is submitted again.

Spec: Microsoft's reference pages for DxgkDdiSubmitCommand, DXGKARG_SUBMITCOMMAND,
DXGK_SUBMITCOMMANDFLAGS, DxgkDdiSubmitCommandVirtual and DxgkDdiPatch; their "Submitting a command
buffer" and "Supplying fence identifiers" pages; "Bug Check 0x119: VIDEO_SCHEDULER_INTERNAL_ERROR";
rules 1-24 of the rule catalogue (``wddmsim rules N`` prints rule N, docs/rules.md lists them all).
"""

from __future__ import annotations

from ..ddi import layout
from ..ddi import rules as R
from ..ddi.fenceid import U32
from ..ddi.bugcheck import BugCheck, BugCheckCode, VidSchError
from ..ddi.ntstatus import NTSTATUS
from ..ddi.registry import RECORDS
from ..sim import DISPATCH
from .present import FLIP_FLAGS
from .vidsch_node import NodeQueue

SUCCESS = int(NTSTATUS.STATUS_SUCCESS)
INVALID_PARAMETER = int(NTSTATUS.STATUS_INVALID_PARAMETER)
_VIDSCH = BugCheckCode.VIDEO_SCHEDULER_INTERNAL_ERROR
_FAILED_SUBMIT = VidSchError.DRIVER_FAILED_SUBMIT_COMMAND

#: DXGK_SUBMITCOMMANDFLAGS bits the scheduler sets.
FLAG_PAGING = 0x1
FLAG_PRESENT = 0x2
FLAG_NULL_RENDERING = 0x8
FLAG_FLIP = 0x10
FLAG_FLIP_NO_WAIT = 0x20


_SUBMIT_MEMBERS = (
    "hContext", "DmaBufferSegmentId", "DmaBufferPhysicalAddress", "DmaBufferSize",
    "DmaBufferSubmissionStartOffset", "DmaBufferSubmissionEndOffset", "pDmaBufferPrivateData",
    "DmaBufferPrivateDataSize", "DmaBufferPrivateDataSubmissionStartOffset",
    "DmaBufferPrivateDataSubmissionEndOffset", "SubmissionFenceId", "VidPnSourceId", "FlipInterval",
    "Flags.Value", "EngineOrdinal",
)
_SUBMIT_TAIL = ("DmaBufferVirtualAddress", "NodeOrdinal")


class VidSchSubmission:
    """The submission of :class:`~wddmsim.dxgkrnl.vidsch.VidSch` (a base class of it: one object,
    so the per-packet path pays no extra call for the split). It uses the attributes VidSch's
    ``__init__`` sets (``adapter``, ``sim``, ``ddi``, ``_submit_command``, ``trace``, ``ledger``,
    ``verifier``, ``nodes``, ``vidmm``, ``presents``, ``preemptor``, ``tdr``, ``truth``, the
    counters) and its worker's and figures' methods."""

    # -- 3. patch and submit --------------------------------------------------------------------
    def first_fence(self, ordinal: int, fence: int) -> None:
        """Number node ``ordinal``'s submissions from ``fence`` on (before anything is submitted
        there). The OS's sequence goes on past 2**32; the DDI carries its low 32 bits
        (:mod:`wddmsim.ddi.fenceid`)."""
        node_queue = self.nodes[ordinal]
        if node_queue.last_submitted != node_queue.next_fence - 1 or node_queue.hw:
            raise RuntimeError(f"node {ordinal} has submitted already")
        node_queue.next_fence = fence
        node_queue.last_submitted = node_queue.last_completed = fence - 1

    def _submit(self, node_queue: NodeQueue, packet) -> None:
        ctx = packet.context
        if packet.fence and packet.flags & FLAG_PAGING:
            fence = packet.fence  # a preempted (or reset) paging packet keeps its fence id
        else:
            fence = node_queue.next_fence
            node_queue.next_fence = fence + 1
            packet.fence = fence
        flags = packet.flags
        if packet.allocations:
            self.vidmm.submitted(packet)
        if packet.plist_n:
            self._patch(node_queue, packet)
        if packet.va:
            self._submit_virtual(node_queue, packet, fence, flags)
            self._submitted(node_queue, packet, fence, flags)
            return
        # Every member as Microsoft's page says: the private-data range starts at 0 for a non-paging
        # packet; VidPnSourceId and FlipInterval mean something only with the flip flags.
        # An MMIO flip's packet carries no DMA buffer: the driver gets an empty submission (its fence
        # only, ordered after the context's rendering) that is no flip to it; the OS flips it with
        # DxgkDdiSetVidPnSourceAddress when the fence comes back (dxgkrnl/present.py).
        sub_flags = flags & ~FLIP_FLAGS if packet.mmio else flags
        vidpn = packet.vidpn_source if sub_flags & (FLAG_FLIP | FLAG_FLIP_NO_WAIT) else 0
        interval = packet.flip_interval if sub_flags & FLAG_FLIP else 0
        args = node_queue.submit_args
        # A paging buffer serves several submissions: each has its own private-data range.
        priv_end = packet.priv_size if packet.priv_end < 0 else packet.priv_end
        if packet.priv_size:
            priv = packet.priv
        else:
            priv = self.empty_private
            self.verifier.judged_rules.add(21)
        if node_queue.submit_long:
            node_queue.submit_fill(args, ctx.hDdi, 0, packet.dma, packet.dma_size, packet.start_off, packet.end_off,
                           priv, packet.priv_size, packet.priv_start, priv_end, fence & U32, vidpn, interval, sub_flags,
                           0, 0, node_queue.ordinal)
        else:
            node_queue.submit_fill(args, ctx.hDdi, 0, packet.dma, packet.dma_size, packet.start_off, packet.end_off,
                           priv, packet.priv_size, packet.priv_start, priv_end, fence & U32, vidpn, interval, sub_flags, 0)
        self._submit_command(self.adapter.hAdapter, args, address=node_queue.submit_address,
                      facts=self._submission_facts(node_queue, packet, args, packet.dma), judge="after",
                      bugcheck=(_VIDSCH, _FAILED_SUBMIT, node_queue.submit_address, (node_queue.ordinal << 32) | packet.fence & U32))
        self._submitted(node_queue, packet, fence, flags)

    def _submitted(self, node_queue: NodeQueue, packet, fence: int, flags: int) -> None:
        """The driver accepted ``packet``: it enters the node's hardware queue."""
        sim = self.sim
        ctx = packet.context
        tr = self.trace
        if flags & FLAG_NULL_RENDERING:
            ctx.null_packets += 1
            self.null_rendering_packets += 1
        packet.submitted = sim.now
        if self._woken:
            signalled = self._woken.pop(ctx, None)
            if signalled is not None:
                self.adapter.wddm2.fences.wake_latency.add(sim.now - signalled)
        if flags & FLIP_FLAGS and self.presents.submitted(packet):
            no_wait = int(bool(flags & FLAG_FLIP_NO_WAIT))
            self.ledger.flip(sim.now, ctx.handle, packet.seq, fence, packet.vidpn_source, packet.flip_interval,
                             no_wait, packet.surface)
            if tr is not None:
                tr.emit(sim.now, "Flip", {
                    "context": ctx.handle, "seq": packet.seq, "fence": fence, "source": packet.vidpn_source,
                    "interval": packet.flip_interval, "no_wait": no_wait, "surface": packet.surface,
                })
        if fence > node_queue.last_submitted:
            node_queue.last_submitted = fence
        node_queue.packets += 1
        self.packets_submitted += 1
        hw = node_queue.hw
        hw.append(packet)
        if len(hw) > node_queue.max_depth_seen:
            node_queue.max_depth_seen = len(hw)
        self.ledger.dma_queued(sim.now, ctx.handle, node_queue.ordinal, fence, packet.kind, packet.seq, len(hw))
        if tr is not None:
            tr.emit(sim.now, "DmaPacketQueued", {
                "context": ctx.handle, "node": node_queue.ordinal, "fence": fence, "kind": packet.kind,
                "seq": packet.seq, "depth": len(hw),
            })
        if len(hw) - node_queue.stopped == 1:
            self._start(node_queue, packet)
        elif self.preemptor.enabled and packet.context is not hw[node_queue.stopped].context:
            self.preemptor.consider(node_queue)  # it waits behind another context's packet
        self.idle_check(node_queue)

    def _empty_private_read(self, addr: int, size: int) -> None:
        """Rule 21: the driver read the private data of a submission that has none (its
        ``pDmaBufferPrivateData`` is this special-pool page; DXGKARG_SUBMITCOMMAND,
        https://learn.microsoft.com/windows-hardware/drivers/ddi/d3dkmddi/ns-d3dkmddi-_dxgkarg_submitcommand)."""
        verifier = self.verifier
        if verifier.mode == "off":
            return
        verifier.judged_rules.add(21)
        during = self.ddi.active or "no entry point"
        verifier.handle([R.Violation(21, "NoPrivateDataValidationWhenEmpty",
                                     f"the driver read {size} bytes at pDmaBufferPrivateData ({addr:#x}) in {during}, "
                                     f"but DmaBufferPrivateDataSize is 0: there is no private data to read", None)],
                        "", None, 0)

    def _submission_facts(self, node_queue: NodeQueue, packet, args, address: int) -> R.Facts:
        """The verifier's facts for a submission of ``packet`` (judged by the gateway after the
        call, with the status it returned: rules 1 and 23). A NullRendering packet keeps the
        structure as submitted: rule 14 is judged on it when its fence comes back (``address``:
        where its buffer is, for the bus observer)."""
        facts = node_queue.facts
        facts.status = SUCCESS
        facts.previously_preempted = packet.preempted
        if packet.preempted:
            self.resubmissions += 1
        if packet.flags & FLAG_NULL_RENDERING:
            packet.submit_bytes = bytes(args)
        if self.truth is not None:
            # Before the call: the driver's doorbell may start the engine inside it.
            self.truth.submitted(packet)
        return facts

    def _submit_virtual(self, node_queue: NodeQueue, packet, fence: int, flags: int) -> None:
        """DxgkDdiSubmitCommandVirtual (GPU virtual addressing), at PASSIVE_LEVEL.

        STATUS_INVALID_PARAMETER (the driver found the DMA buffer or its private data malformed)
        puts the device in error; the packet still enters the hardware queue, and the OS counts
        its fence complete once every packet before it is done (rule 24). Any other failure is
        bug check 0x119/0x2 (rule 23)."""
        adapter = self.adapter
        ctx = packet.context
        if node_queue.virtual_args is None:
            node_queue.virtual_args = layout.ctype(RECORDS["DXGKARG_SUBMITCOMMANDVIRTUAL"], adapter.arch, adapter.version)()
        args = node_queue.virtual_args
        args.hContext = ctx.hDdi
        args.DmaBufferVirtualAddress = packet.va
        args.DmaBufferSize = packet.dma_size
        args.pDmaBufferPrivateData = packet.priv if packet.priv_size else self.empty_private
        args.DmaBufferPrivateDataSize = packet.priv_size
        args.DmaBufferUmdPrivateDataSize = packet.umd_priv
        args.SubmissionFenceId = fence & U32
        args.VidPnSourceId = 0
        args.FlipInterval = 0
        args.Flags.Value = flags
        args.EngineOrdinal = 0
        args.NodeOrdinal = node_queue.ordinal
        status = self.ddi.call("DxgkDdiSubmitCommandVirtual", adapter.hAdapter, args, address=node_queue.submit_address,
                               facts=self._submission_facts(node_queue, packet, args, packet.va), judge="after",
                               bugcheck=(_VIDSCH, _FAILED_SUBMIT, node_queue.submit_address, (node_queue.ordinal << 32) | fence & U32))
        self.virtual_submissions += 1
        if status == INVALID_PARAMETER:
            packet.rejected = True
            self.tdr.device_error(ctx.device, "DxgkDdiSubmitCommandVirtual returned STATUS_INVALID_PARAMETER")

    def _patch(self, node_queue: NodeQueue, packet) -> None:
        p = node_queue.patch_args
        ctx = packet.context
        p.hContext = ctx.hDdi
        p.DmaBufferSegmentId = 0
        p.DmaBufferPhysicalAddress.QuadPart = packet.dma
        p.pDmaBuffer = packet.dma
        p.DmaBufferSize = packet.dma_size
        p.DmaBufferSubmissionStartOffset = packet.start_off
        p.DmaBufferSubmissionEndOffset = packet.end_off
        p.pDmaBufferPrivateData = packet.priv
        p.DmaBufferPrivateDataSize = packet.priv_size
        p.DmaBufferPrivateDataSubmissionStartOffset = 0
        p.DmaBufferPrivateDataSubmissionEndOffset = packet.priv_size
        p.pAllocationList = packet.alist
        p.AllocationListSize = packet.alist_n
        p.pPatchLocationList = packet.plist
        p.PatchLocationListSize = packet.plist_n
        p.PatchLocationListSubmissionStart = 0
        p.PatchLocationListSubmissionLength = packet.plist_n
        p.SubmissionFenceId = packet.fence & U32
        p.Flags.Value = packet.flags & 0xF
        p.EngineOrdinal = 0
        address = node_queue.submit_address + 0x400
        facts = node_queue.facts
        if self.verifier.mode != "off":
            # Rule 30 reads the patch-location list the driver built in DxgkDdiRender/DxgkDdiPresent.
            facts.patch_locations = (self._plist_cls * packet.plist_n).from_buffer_copy(
                self.adapter.memory.read(packet.plist, packet.plist_n * self._plist_size))
        try:
            self.ddi.call("DxgkDdiPatch", self.adapter.hAdapter, p, facts=facts, judge="after", address=address,
                          bugcheck=lambda status: BugCheck(_VIDSCH, VidSchError.DRIVER_FAILED_PATCH_COMMAND, address,
                                                           packet.fence, node_queue.ordinal))
        finally:
            facts.patch_locations = None

    def _start(self, node_queue: NodeQueue, packet) -> None:
        now = self.sim.now
        packet.started = now
        node_queue.busy_since = now
        if packet.context.wait_since >= 0:
            self._runs(node_queue, packet.context, now)
        self.ledger.dma_start(now, packet.context.handle, node_queue.ordinal, packet.fence, packet.kind, packet.seq,
                              int(packet.preempted))
        if self.trace is not None:
            self.emit_start(node_queue, packet, now, False)
        if self._observer is not None:
            self._observer.packet_started(node_queue.ordinal, packet)
        if packet.rejected:
            # Refused by DxgkDdiSubmitCommandVirtual: the GPU never runs it; every packet before it
            # is done, so the OS counts its fence complete now (rule 24) and retires it.
            self.complete_through(node_queue, packet.fence)
            if not self._retire_pending:
                self._retire_pending = True
                self.sim.soon(self._retire_rejected, irql=DISPATCH)
            return
        self.preemptor.started(node_queue, packet)

    def emit_start(self, node_queue: NodeQueue, packet, now: int, ledger: bool = True) -> None:
        """``DmaPacketStart`` of ``packet`` at ``now``: to the ledger (unless ``ledger`` is false:
        the caller told it), and to the trace when it is on."""
        if ledger:
            self.ledger.dma_start(now, packet.context.handle, node_queue.ordinal, packet.fence, packet.kind,
                                  packet.seq, int(packet.preempted))
        tr = self.trace
        if tr is not None:
            tr.emit(now, "DmaPacketStart", {
                "context": packet.context.handle, "node": node_queue.ordinal, "fence": packet.fence,
                "kind": packet.kind, "seq": packet.seq, "resubmission": int(packet.preempted),
            })

    def _retire_rejected(self) -> None:
        self._retire_pending = False
        self.retire()
