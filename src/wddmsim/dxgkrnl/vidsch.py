"""VidSch, the packet-based GPU scheduler: a software queue per context, a hardware queue per
node, fence ids per node, submission through ``DxgkDdiSubmitCommand`` and completion from the
driver's interrupt and DPC.

A packet's trip:

1. QUEUED: the API rendered it; it waits in its context's software queue (``QueuePacketStart``).
2. The node's worker thread (PASSIVE_LEVEL) sees a free hardware-queue slot, asks the policy which
   ready context goes next, and takes that context's oldest packet. Patching and submitting cost
   ``patch + submit`` ns of CPU time, after which:
3. SUBMITTED: the packet gets the node's next fence id; ``DxgkDdiPatch`` runs at PASSIVE_LEVEL if
   the packet has patch locations; the worker raises to DISPATCH_LEVEL and calls
   ``DxgkDdiSubmitCommand`` with a ``DXGKARG_SUBMITCOMMAND`` whose every member is filled as
   Microsoft's DXGKARG_SUBMITCOMMAND page says. A failure stops the model with bug check 0x119 (0x2,
   status, argument address, internal datum). The packet enters the hardware queue
   (``DmaPacketStart`` when it is at the bottom, i.e. the GPU is taken to be running it).
4. COMPLETED_ISR: the driver's ISR reports ``DMA_COMPLETED`` with fence F; every packet of the node
   with a fence up to F is complete (cumulative; ``DmaPacketStop``, preceded by a ``DmaPacketStart``
   at the same instant for a packet that ran unseen behind the bottom one), the next one starts.
5. RETIRED: in the DPC (``DxgkCbNotifyDpc``) completed packets leave the hardware queue, their
   buffers are freed, CPU waiters wake (``QueuePacketStop``), and the worker looks for more work.

A driver that reports a fence never submitted on that node, or a fence older than the last one
reported, stops the model with bug check 0x119/0x1 (rules 32 CompletedFenceWasSubmitted and 33
CompletedFenceMonotonic).

Fence ids are per node, start at 1 and increase by one per submission (the documentation does not
say whether the sequence is per node, per engine or per adapter; the model decides per node). They
are 32-bit; this part of the model does not wrap them (4 billion packets a node).

Spec: Microsoft's reference pages for DxgkDdiSubmitCommand, DXGKARG_SUBMITCOMMAND,
DXGK_SUBMITCOMMANDFLAGS, DxgkDdiPatch, DxgkDdiInterruptRoutine and DxgkCbNotifyInterrupt; their
"Submitting a command buffer" and "Supplying fence identifiers" pages; "Bug Check 0x119:
VIDEO_SCHEDULER_INTERNAL_ERROR"; rules 1-22 and 32-34 of the rule catalogue (``wddmsim rules N``
prints rule N, docs/rules.md lists them all).
"""

from __future__ import annotations

import ctypes
from collections import deque
from itertools import islice

from ..ddi import layout
from ..ddi import rules as R
from ..ddi.fenceid import U32, from_ddi
from ..ddi.bugcheck import BugCheck, BugCheckCode, VidSchError
from ..ddi.ntstatus import NTSTATUS
from ..ddi.registry import RECORDS
from ..sim import DISPATCH, PASSIVE
from .crash import BugCheckStop, CrashRecord
from .deadlines import ContextJobs
from .groundtruth import GroundTruth
from .preemption import Preemptor
from .present import FLIP_FLAGS, PRESENT_FLAGS, Presents
from .stats import LatencyStats
from .tdr import Tdr
from .vidmm import VidMm

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


class NodeQueue:
    """The OS side of one node: hardware queue, fence counters, worker state, statistics."""

    __slots__ = (
        "ordinal", "name", "depth", "hw", "stopped", "next_fence", "last_submitted",
        "last_completed", "worker_busy", "dispatch_timer", "submit_args", "patch_args", "facts",
        "notify_facts", "packets", "busy_ns", "busy_since", "engine_type", "submit_address",
        "max_depth_seen", "submit_fill", "submit_long", "preemption", "tdr", "virtual_args",
        "last_stop", "last_stop_ctx", "handoffs", "submitting", "idle_waiting_ns", "idle_since",
    )

    def __init__(self, ordinal: int, name: str, depth: int):
        self.ordinal = ordinal
        self.name = name
        self.depth = depth
        self.hw: deque = deque()  # packets handed to the driver, oldest first
        self.stopped = 0  # how many at the front of hw the ISR has completed
        self.next_fence = 1
        self.last_submitted = 0
        self.last_completed = 0
        self.worker_busy = False
        self.dispatch_timer = None
        self.submit_args = None
        self.patch_args = None
        self.facts: R.Facts | None = None
        self.notify_facts: R.Facts | None = None
        self.packets = 0
        self.busy_ns = 0
        self.busy_since = -1
        self.engine_type = 0
        self.submit_address = 0
        self.max_depth_seen = 0
        self.submit_fill = None
        self.submit_long = False
        self.preemption = None  # preemption.NodePreemption
        self.tdr = None  # tdr.NodeTdr
        self.virtual_args = None  # DXGKARG_SUBMITCOMMANDVIRTUAL (made at the first virtual submission)
        self.last_stop = 0  # when the last context to run stopped running, and which it was
        self.last_stop_ctx = None
        self.handoffs = LatencyStats()  # a context stops, a waiting other one starts: the gap
        self.submitting = None  # the packet the worker is patching and submitting (out of every queue)
        # Nothing to run on the hardware queue while the OS holds work for the node (a ready context,
        # or a packet being submitted): the time so far, and since when now (-1: not so now).
        self.idle_waiting_ns = 0
        self.idle_since = -1


class VidSch:
    """The scheduler of one adapter."""

    def __init__(self, adapter, policy, hw_queue_depths: list[int]):
        self.adapter = adapter
        self.sim = adapter.sim
        self.policy = policy
        self.driver = adapter.driver
        self.ddi = adapter.ddi
        self._submit_command = self.ddi.caller("DxgkDdiSubmitCommand")
        self.trace = adapter.trace
        #: the packet ledger, fed here by direct calls (:mod:`wddmsim.trace.ledger`)
        self.ledger = adapter.ledger
        self.verifier = adapter.verifier
        self.costs = adapter.costs
        self.mea = adapter.multi_engine_aware
        arch, version = adapter.arch, adapter.version
        submit_cls = layout.ctype(RECORDS["DXGKARG_SUBMITCOMMAND"], arch, version)
        patch_cls = layout.ctype(RECORDS["DXGKARG_PATCH"], arch, version)
        # DXGKARG_SUBMITCOMMAND is filled member by member in declaration order; NodeOrdinal and
        # DmaBufferVirtualAddress exist from Windows 8 / Windows 7 headers on.
        submit_long = hasattr(submit_cls, "NodeOrdinal")
        submit_fill = layout.filler(submit_cls, _SUBMIT_MEMBERS + (_SUBMIT_TAIL if submit_long else ()))
        self.nodes: list[NodeQueue] = []
        for i, depth in enumerate(hw_queue_depths):
            node_queue = NodeQueue(i, adapter.node_names[i], depth)
            node_queue.submit_args = submit_cls()
            node_queue.submit_fill = submit_fill
            node_queue.submit_long = submit_long
            node_queue.patch_args = patch_cls()
            # The argument blocks live at fixed kernel addresses (parameter 3 of a 0x119 stop).
            node_queue.submit_address = adapter.pool.alloc(4096)
            node_queue.facts = R.Facts(
                version=version,
                multi_engine_aware=self.mea,
                node_count=len(hw_queue_depths),
                dma_buffer_segment_set=0,
                status=SUCCESS,
                previously_preempted=False,
                flip_interval_supported=bool(adapter.caps.FlipCaps.get("FlipInterval")),  # rule 88
            )
            node_queue.notify_facts = R.Facts(version=version, multi_engine_aware=self.mea, node_count=len(hw_queue_depths))
            self.nodes.append(node_queue)
        self.packets_submitted = 0
        self.packets_retired = 0
        self.last_retired_ns = 0  # when the last packet was retired (the run's makespan)
        self.null_rendering_packets = 0
        self.resubmissions = 0  # submissions of packets taken back by a preemption or a reset
        self.virtual_submissions = 0  # DxgkDdiSubmitCommandVirtual calls
        #: contexts released from a GPU wait, not yet submitted again: when the signal came (the
        #: interrupt that reported the GPU's write, or the CPU's signal), for the wake-up latency
        self._woken: dict = {}
        self.stopped = False  # the adapter was stopped (dxgkrnl/adapterstop.py): nothing more is submitted
        self._submit_cls = submit_cls
        self._plist_cls = layout.ctype(RECORDS["D3DDDI_PATCHLOCATIONLIST"], arch, version)
        self._plist_size = ctypes.sizeof(self._plist_cls)
        self._retire_pending = False
        #: where pDmaBufferPrivateData points when a submission has none: a special-pool page no
        #: one may read (rule 21)
        self.empty_private = adapter.special_pool.take(self._empty_private_read)
        #: what the GPU really ran, held against the driver's reports (None: verifier off)
        #: process -> ns its packets spent at the bottom of a node's hardware queue, DmaPacketStart
        #: to DmaPacketStop (the OS's view of its GPU time; :meth:`charge`)
        self.os_busy: dict = {}
        self.truth = GroundTruth(self, self.verifier) if self.verifier.mode != "off" else None
        self.presents = Presents(self, adapter.display_refresh, adapter.caps.MaxQueuedFlipOnVSync)
        self.vidmm = VidMm(adapter)
        self.preemptor = Preemptor(self)
        self.tdr = Tdr(self, adapter.tdr_config)
        #: a research policy's host (wddmsim.policies.host), told of every packet's queueing, start,
        #: completion and preemption; None under the OS's own policies, which need none of it
        self._observer = policy if getattr(policy, "observes", False) else None
        if self._observer is not None:
            policy.attach(self)

    # -- 1. queueing ----------------------------------------------------------------------------
    def enqueue(self, packet) -> None:
        """A rendered packet enters its context's software queue."""
        ctx = packet.context
        now = self.sim.now
        packet.queued = now
        packet.release = ctx.job_release if ctx.job_release >= 0 else now
        own = ctx.job_release < 0  # each packet is a job of its own
        relative = ctx.hints.relative_deadline if own else ctx.job_deadline
        if ctx.jobs is None and relative is not None:
            ctx.jobs = ContextJobs()
        if ctx.jobs is not None:
            ctx.jobs.queued(packet, own, relative)
        ctx.queue.append(packet)
        self.ledger.queue_start(now, ctx.handle, ctx.device.process.pid, ctx.node, packet.seq, packet.kind,
                                len(ctx.queue))
        tr = self.trace
        if tr is not None:
            tr.emit(now, "QueuePacketStart", {
                "context": ctx.handle, "process": ctx.device.process.pid, "node": ctx.node,
                "seq": packet.seq, "kind": packet.kind, "queued": len(ctx.queue), "hwqueue": 0, "progress_id": 0,
            })
        if self.stopped:
            ctx.queue.pop()
            self.adapter.cancel_packet(packet)  # the adapter was stopped: it never runs
            return
        if self._observer is not None:
            self._observer.queued(packet)
        if not ctx.ready:
            ctx.ready = True
            self.policy.ready(ctx, now)
            node_queue = self.nodes[ctx.node]
            self._waiting(node_queue, ctx, now)
            self.idle_check(node_queue)
            self._wake_worker(node_queue)
            if self.preemptor.enabled:
                self.preemptor.consider(node_queue)

    # -- 2. the worker ----------------------------------------------------------------------------
    def _wake_worker(self, node_queue: NodeQueue, delay: int = 0) -> None:
        if node_queue.worker_busy or node_queue.dispatch_timer is not None:
            return
        if delay:
            node_queue.dispatch_timer = self.sim.after(delay, self._dispatch, node_queue, PASSIVE)
        else:
            node_queue.dispatch_timer = self.sim.soon(self._dispatch, node_queue, PASSIVE)

    def _dispatch(self, node_queue: NodeQueue) -> None:
        """Fill free hardware-queue slots of ``node_queue`` with packets the policy picks."""
        node_queue.dispatch_timer = None
        if node_queue.worker_busy:
            # The node's worker is patching and submitting a packet (``_submit_later`` dispatches
            # again when it is done). A wake-up scheduled while it began that submission must not
            # start a second worker: the two would fill the hardware queue past its depth.
            return
        if node_queue.preemption.fence or self.stopped or node_queue.tdr.held_for is not None:
            # Nothing more goes to the node until the driver answers the preemption, nor while the
            # reset of an engine it depends on waits for it (dxgkrnl/tdr.py).
            return
        policy = self.policy
        sim = self.sim
        submit_cost = self.costs.submit
        patch_submit_cost = self.costs.patch + submit_cost
        while len(node_queue.hw) < node_queue.depth and not node_queue.preemption.fence:
            ctx = policy.pick(node_queue.ordinal, sim.now)
            if ctx is None:
                self.idle_check(node_queue)
                return
            head = ctx.queue[0]
            if ctx.gates is not None and not self._gates_open(ctx, head):
                # A GPU wait before this packet is not satisfied yet (rule 103).
                ctx.ready = False
                policy.idle(ctx)
                self._blocked(node_queue, ctx)
                continue
            if head.va and not self._space_ready(ctx):
                # The process's page tables are being written: its buffers wait (GPU VA).
                ctx.ready = False
                policy.idle(ctx)
                self._blocked(node_queue, ctx)
                continue
            if head.flags & FLIP_FLAGS and not self.presents.can_submit(head):
                # The source's flip queue is full: the context waits for a vsync to free a slot.
                ctx.ready = False
                policy.idle(ctx)
                self._blocked(node_queue, ctx)
                self.presents.block(ctx, head)
                continue
            if (head.allocations or head.deps) and not self.vidmm.ready(head):
                # Its allocations are being paged in (or wait for room), or it waits for a
                # null-context switch: hold the context.
                ctx.ready = False
                policy.idle(ctx)
                self._blocked(node_queue, ctx)
                self.vidmm.block(ctx)
                continue
            packet = ctx.queue.popleft()
            if not ctx.queue:
                ctx.ready = False
                policy.idle(ctx)
            cost = submit_cost if packet.va else patch_submit_cost
            if cost:
                # The worker spends cost ns patching and submitting; it is busy until then.
                node_queue.worker_busy = True
                node_queue.submitting = packet
                sim.after(cost, self._submit_later, packet, PASSIVE)
                self.idle_check(node_queue)
                return
            self._submit(node_queue, packet)

    # -- waits, GPU time and hand-offs (the summary's scheduling figures) ------------------------
    def idle_check(self, node_queue: NodeQueue) -> None:
        """Called where ``node_queue``'s state may have changed: its hardware queue holds nothing to
        run (nothing at the bottom) while the OS holds work for it (the policy has a ready context
        there, or the worker is submitting a packet), or not; the summary's
        ``idle_while_waiting_ns`` adds up the stretches of the first."""
        if len(node_queue.hw) == node_queue.stopped and (
                node_queue.submitting is not None or self.policy.has_ready(node_queue.ordinal)):
            if node_queue.idle_since < 0:
                node_queue.idle_since = self.sim.now
        elif node_queue.idle_since >= 0:
            node_queue.idle_waiting_ns += self.sim.now - node_queue.idle_since
            node_queue.idle_since = -1

    def idle_waiting(self, node_queue: NodeQueue) -> int:
        """``node_queue``'s idle time while the OS held work for it, the stretch going on included."""
        since = node_queue.idle_since
        return node_queue.idle_waiting_ns + (self.sim.now - since if since >= 0 else 0)

    def _waiting(self, node_queue: NodeQueue, ctx, now: int) -> None:
        """``ctx`` has work it could run: unless it runs now, its wait starts."""
        if ctx.wait_since < 0 and not (node_queue.stopped < len(node_queue.hw) and node_queue.hw[node_queue.stopped].context is ctx):
            ctx.wait_since = now

    def _blocked(self, node_queue: NodeQueue, ctx) -> None:
        """``ctx`` is held back by something other than the GPU (a GPU wait, paging, a full flip
        queue): unless a packet of it waits on the hardware queue, its wait ends here."""
        if ctx.wait_since >= 0 and not any(p.context is ctx for p in islice(node_queue.hw, node_queue.stopped, None)):
            w = self.sim.now - ctx.wait_since
            if w > ctx.worst_wait:
                ctx.worst_wait = w
            ctx.wait_since = -1

    def stopped_running(self, node_queue: NodeQueue, ctx, now: int) -> None:
        """``ctx``'s run on ``node_queue`` (since ``node_queue.busy_since``) ended now (completed or preempted)."""
        ctx.gpu_ns += now - node_queue.busy_since
        node_queue.last_stop = now
        node_queue.last_stop_ctx = ctx

    def _runs(self, node_queue: NodeQueue, ctx, now: int) -> None:
        """A packet of ``ctx`` starts on ``node_queue``: its wait, if any, ends; if another context ran
        before it while it waited, the gap between the two is a hand-off."""
        since = ctx.wait_since
        if since < 0:
            return
        w = now - since
        if w > ctx.worst_wait:
            ctx.worst_wait = w
        ctx.wait_since = -1
        prev = node_queue.last_stop_ctx
        if prev is not None and prev is not ctx and since <= node_queue.last_stop:
            node_queue.handoffs.add(now - node_queue.last_stop)
            prev.contended = ctx.contended = True

    def worst_wait(self, ctx) -> int:
        """``ctx``'s longest wait so far, the one still going on included."""
        w = ctx.worst_wait
        if ctx.wait_since >= 0 and not ctx.destroyed and not ctx.device.error:
            node_queue = self.nodes[ctx.node]
            if ctx.ready or any(p.context is ctx for p in islice(node_queue.hw, node_queue.stopped, None)):
                w = max(w, self.sim.now - ctx.wait_since)
        return w

    def _gates_open(self, ctx, head) -> bool:
        """True if no unsatisfied GPU wait of ``ctx`` stands before ``head``; else the first such
        wait is armed to put the context back when the fence reaches its value."""
        gates = ctx.gates
        while gates:
            gate = gates[0]
            if gate[0] >= head.seq:
                return True  # the wait comes after this packet
            fence, value, token = gate[1], gate[2], gate[3]
            if fence.destroyed or self.adapter.wddm2.fences.read(fence) >= value:
                if token is not None:
                    token.cancel()
                gates.popleft()
                continue
            if token is None:
                gate[3] = self.adapter.wddm2.fences.wait_queue(fence, value, lambda _status, c=ctx: self._gate_released(c))
                if gate[3].done:
                    continue  # satisfied after all (the value was in memory)
            return False
        return True

    def _gate_released(self, ctx) -> None:
        """The fence reached a GPU wait's value: the context may go on. The wake-up latency runs
        from the signal (a GPU write is seen in the DPC of the interrupt that reported it) to the
        context's next submission."""
        gates = ctx.gates
        if gates and gates[0][3] is not None and gates[0][3].done:
            gates.popleft()
        self._woken[ctx] = self.adapter.dxgk.isr_at if self.sim.irql == DISPATCH else self.sim.now
        self._resume(ctx)

    def _resume(self, ctx) -> None:
        """Unblock ``ctx`` from a release that ran in the DPC (after the DPC's cost, as after a
        retirement) or elsewhere (at once)."""
        self.unblock(ctx, self.costs.dpc if self.sim.irql == DISPATCH else 0)

    def _space_ready(self, ctx) -> bool:
        """True if the context's process has no page-table update pending or on the GPU; else the
        context comes back when the paging buffer that writes them retires."""
        return self.adapter.wddm2.gpuva.when_ready(ctx.device.process, lambda c=ctx: self._resume(c))

    def first_fence(self, ordinal: int, fence: int) -> None:
        """Number node ``ordinal``'s submissions from ``fence`` on (before anything is submitted
        there). The OS's sequence goes on past 2**32; the DDI carries its low 32 bits
        (:mod:`wddmsim.ddi.fenceid`)."""
        node_queue = self.nodes[ordinal]
        if node_queue.last_submitted != node_queue.next_fence - 1 or node_queue.hw:
            raise RuntimeError(f"node {ordinal} has submitted already")
        node_queue.next_fence = fence
        node_queue.last_submitted = node_queue.last_completed = fence - 1

    def _submit_later(self, packet) -> None:
        node_queue = self.nodes[packet.context.node]
        if node_queue.submitting is not packet:
            return  # an adapter stop took it back before the worker reached the driver (adapterstop.py)
        node_queue.worker_busy = False
        node_queue.submitting = None
        self._submit(node_queue, packet)
        self._dispatch(node_queue)

    # -- 3. patch and submit --------------------------------------------------------------------
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

    # -- 4. completion at device IRQL ----------------------------------------------------------
    def dma_completed(self, data) -> None:
        """``DXGK_INTERRUPT_DMA_COMPLETED``: every packet up to the fence is complete."""
        dc = data.DmaCompleted
        ordinal = dc.NodeOrdinal
        if not 0 <= ordinal < len(self.nodes):
            self.adapter.invalid_interrupt(data, f"DmaCompleted.NodeOrdinal {ordinal} names no node")
            return
        node_queue = self.nodes[ordinal]
        if node_queue.tdr.resetting:
            return  # interrupts from a node being reset are ignored (per-engine reset)
        fence = from_ddi(dc.SubmissionFenceId, node_queue.last_completed)  # a 32-bit id, read past any wrap
        facts = node_queue.notify_facts
        facts.last_submitted_fence = node_queue.last_submitted
        facts.last_completed_fence = node_queue.last_completed
        found = self.verifier.find("DXGKARGCB_NOTIFY_INTERRUPT_DATA", data, facts)
        if fence > node_queue.last_submitted or fence < node_queue.last_completed:
            # Rules 32 and 33: an invalid fence id stops the model (0x119/0x1) in every mode.
            if not found:
                found = [R.Violation(32 if fence > node_queue.last_submitted else 33, "CompletedFence",
                                     f"fence {fence} outside [{node_queue.last_completed}, {node_queue.last_submitted}]", None)]
            bc = BugCheck(BugCheckCode.VIDEO_SCHEDULER_INTERNAL_ERROR, VidSchError.DRIVER_REPORTED_INVALID_FENCE_ID,
                          dc.SubmissionFenceId, node_queue.last_submitted & U32, node_queue.last_completed & U32)
            # Strict mode stops inside handle(); the others record the violation, then stop here.
            self.verifier.handle(found, "DXGKARGCB_NOTIFY_INTERRUPT_DATA", data, self.adapter.interrupt_address,
                                 bugcheck=bc)
            raise BugCheckStop(CrashRecord(
                time=self.sim.now, bugcheck=bc, message=str(found[0]),
                struct="DXGKARGCB_NOTIFY_INTERRUPT_DATA", arch=self.adapter.arch,
                ddi_version=self.adapter.version.name, address=self.adapter.interrupt_address,
                data=bytes(data), rule=found[0].rule, rule_name=found[0].name,
            ))
        if found:
            self.verifier.handle(found, "DXGKARGCB_NOTIFY_INTERRUPT_DATA", data, self.adapter.interrupt_address)
        if self.truth is not None:
            self.truth.completing(node_queue, fence, preempted=False)
        self.complete_through(node_queue, fence)

    def complete_through(self, node_queue: NodeQueue, fence: int) -> None:
        """Every packet of ``node_queue`` with a fence up to ``fence`` is complete (cumulative); the next
        one, if any, starts. A packet behind the bottom one that the same interrupt completes
        reached the bottom and ran unseen: it gets its ``DmaPacketStart`` now, just before its
        ``DmaPacketStop``, so every packet that ran has both, in order."""
        node_queue.last_completed = fence
        hw = node_queue.hw
        first = i = node_queue.stopped
        n = len(hw)
        now = self.sim.now
        tr = self.trace
        led = self.ledger
        ordinal = node_queue.ordinal
        while i < n:
            p = hw[i]
            if p.fence > fence:
                break
            if i > first:
                p.started = now
                self.emit_start(node_queue, p, now)
                if self._observer is not None:
                    self._observer.packet_started(ordinal, p)
            p.done = now
            if p.flags & FLAG_NULL_RENDERING and self.truth is not None:
                self.truth.null_rendering_done(node_queue, p)
            if p.flags & PRESENT_FLAGS:
                self.presents.completed(p, now)
            led.dma_stop(now, p.context.handle, ordinal, p.fence, p.kind, p.seq, "Completed")
            if tr is not None:
                tr.emit(now, "DmaPacketStop", {
                    "context": p.context.handle, "node": ordinal, "fence": p.fence, "kind": p.kind,
                    "seq": p.seq, "status": "Completed",
                })
            if self._observer is not None:
                self._observer.packet_completed(ordinal, p, now - p.started if p.started >= 0 else 0)
            i += 1
        if i > node_queue.stopped:
            ran = hw[node_queue.stopped].context
            # charge() and stopped_running(), inline (once per interrupt).
            d = now - node_queue.busy_since
            node_queue.busy_ns += d
            proc = ran.device.process
            os_busy = self.os_busy
            os_busy[proc] = os_busy.get(proc, 0) + d
            ran.gpu_ns += d
            node_queue.last_stop = now
            node_queue.last_stop_ctx = ran
            node_queue.stopped = i
            if i < n and hw[i].context is ran:
                self._start(node_queue, hw[i])  # the same context goes on
                return
            if ran.wait_since < 0 and (ran.ready or any(p.context is ran for p in islice(hw, i, None))):
                ran.wait_since = now  # it has more work, and another context (or no one) runs
            if i < n:
                self._start(node_queue, hw[i])
            else:
                self.idle_check(node_queue)

    def charge(self, node_queue: NodeQueue, bottom, now: int) -> None:
        """The node was busy, as the OS sees it, from ``busy_since`` (the DmaPacketStart of
        ``bottom``, the packet at the bottom of its hardware queue) to ``now`` (its DmaPacketStop):
        count it for the node and for ``bottom``'s process (the per-process view GPUView draws)."""
        d = now - node_queue.busy_since
        node_queue.busy_ns += d
        proc = bottom.context.device.process
        self.os_busy[proc] = self.os_busy.get(proc, 0) + d

    def off_hardware(self, p) -> None:
        """``p`` was taken off the hardware without completing (preempted, reset, aborted)."""
        if self.truth is not None:
            self.truth.left(p)
        if p.allocations:
            self.vidmm.retired(p)

    def retired_from(self, ctx) -> None:
        """A packet of ``ctx`` left the hardware for good: finish a pending destroy."""
        if ctx.destroyed and ctx.hDriver and not ctx.in_flight:
            self.adapter.finish_destroy(ctx)

    def unblock(self, ctx, delay: int = 0) -> None:
        """A context held back (a full flip queue, paging, a GPU wait) may go on; its node's worker
        looks for work ``delay`` ns from now."""
        if ctx.queue and not ctx.ready and not ctx.device.error:
            ctx.ready = True
            self.policy.ready(ctx, self.sim.now)
            self._waiting(self.nodes[ctx.node], ctx, self.sim.now)
            self.idle_check(self.nodes[ctx.node])
            self._wake_worker(self.nodes[ctx.node], delay)

    def dma_preempted(self, data) -> None:
        """``DXGK_INTERRUPT_DMA_PREEMPTED`` (see :mod:`wddmsim.dxgkrnl.preemption`)."""
        self.preemptor.dma_preempted(data)
        ordinal = data.DmaPreempted.NodeOrdinal
        if 0 <= ordinal < len(self.nodes):
            self.idle_check(self.nodes[ordinal])

    # -- 5. retirement in the DPC ----------------------------------------------------------------
    def retire(self) -> None:
        """``DxgkCbNotifyDpc``: retire completed packets on every node, wake waiters and workers."""
        now = self.sim.now
        tr = self.trace
        led = self.ledger
        wake_delay = self.costs.dpc
        truth = self.truth
        free_packet = self.adapter.free_packet
        has_ready = self.policy.has_ready
        for node_queue in self.nodes:
            requeued = node_queue.preemption.answered and self.preemptor.requeue(node_queue)
            if requeued:
                self.idle_check(node_queue)
            if not node_queue.stopped:
                if requeued and has_ready(node_queue.ordinal):
                    self._wake_worker(node_queue, wake_delay)
                continue
            hw = node_queue.hw
            for _ in range(node_queue.stopped):
                p = hw.popleft()
                p.retired = now
                if truth is not None:
                    truth.left(p)
                ctx = p.context
                ctx.completed += 1
                ctx.gpu_packets += 1
                ctx.latencies.add(now - p.queued)
                if p.job is not None:
                    ctx.jobs.completed(p)
                self.packets_retired += 1
                free_packet(p)
                if p.allocations:
                    self.vidmm.retired(p)
                elif ctx.system:
                    self.vidmm.paging_retired(p)
                led.queue_stop(now, ctx.handle, node_queue.ordinal, p.fence, p.kind, p.seq, "Completed", 0)
                if tr is not None:
                    tr.emit(now, "QueuePacketStop", {
                        "context": ctx.handle, "node": node_queue.ordinal, "fence": p.fence, "kind": p.kind,
                        "seq": p.seq, "status": "Completed", "hwqueue": 0,
                    })
                if ctx.waiters:
                    self._wake_waiters(ctx)
                if ctx.destroyed:
                    self.retired_from(ctx)
            node_queue.stopped = 0
            self.last_retired_ns = now
            if has_ready(node_queue.ordinal):
                self._wake_worker(node_queue, wake_delay)

    def _wake_waiters(self, ctx) -> None:
        done = ctx.completed
        keep = []
        for target, event in ctx.waiters:
            if done >= target:
                event.succeed(done)
            else:
                keep.append((target, event))
        ctx.waiters = keep
