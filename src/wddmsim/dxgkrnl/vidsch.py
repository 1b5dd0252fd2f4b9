"""VidSch, the packet-based GPU scheduler: a software queue per context, a hardware queue per
node, fence ids per node, submission through ``DxgkDdiSubmitCommand`` and completion from the
driver's interrupt and DPC.

A packet's trip:

1. QUEUED: the API rendered it; it waits in its context's software queue (``QueuePacketStart``).
2. The node's worker thread (PASSIVE_LEVEL) sees a free hardware-queue slot, asks the policy which
   ready context goes next, and takes that context's oldest packet. Patching and submitting cost
   ``patch + submit`` ns of CPU time, after which:
3. SUBMITTED: the packet gets the node's next fence id, is patched and goes to the driver with
   ``DxgkDdiSubmitCommand``, then enters the node's hardware queue (:mod:`.vidsch_submit`).
4. COMPLETED_ISR: the driver's ISR reports ``DMA_COMPLETED`` with fence F; every packet of the node
   with a fence up to F is complete, the next one starts (:mod:`.vidsch_complete`).
5. RETIRED: in the DPC (``DxgkCbNotifyDpc``) completed packets leave the hardware queue and the
   worker looks for more work (:mod:`.vidsch_complete`).

This module holds steps 1 and 2: the software queues, the node's worker and what holds a ready
context back (a GPU wait before its next packet, rule 103 GpuWaitHoldsLaterWork; its page tables
being written; a full flip queue; paging). Steps 3 to 5 and the summary's scheduling figures
(:mod:`.vidsch_figures`) are base classes of :class:`VidSch`, one object, so the per-packet path
pays no extra call for the split; :class:`~.vidsch_node.NodeQueue` is a node's state. Every name is
importable from here as before.

Spec: Microsoft's reference pages for DxgkDdiSubmitCommand, DXGKARG_SUBMITCOMMAND,
DXGK_SUBMITCOMMANDFLAGS, DxgkDdiPatch, DxgkDdiInterruptRoutine and DxgkCbNotifyInterrupt; their
"Submitting a command buffer" and "Supplying fence identifiers" pages; "Bug Check 0x119:
VIDEO_SCHEDULER_INTERNAL_ERROR"; rules 1-22 and 32-34 of the rule catalogue (``wddmsim rules N``
prints rule N, docs/rules.md lists them all).
"""

from __future__ import annotations

import ctypes

from ..ddi import layout
from ..ddi import rules as R
from ..ddi.registry import RECORDS
from ..sim import DISPATCH, PASSIVE
from .deadlines import ContextJobs
from .groundtruth import GroundTruth
from .preemption import Preemptor
from .present import FLIP_FLAGS, Presents
from .tdr import Tdr
from .vidmm import VidMm
from .vidsch_complete import VidSchCompletion
from .vidsch_figures import VidSchFigures
from .vidsch_node import NodeQueue
# The submission's names stay importable from here (the adapter's modules import the flags).
from .vidsch_submit import (  # noqa: F401
    _FAILED_SUBMIT,
    _SUBMIT_MEMBERS,
    _SUBMIT_TAIL,
    _VIDSCH,
    FLAG_FLIP,
    FLAG_FLIP_NO_WAIT,
    FLAG_NULL_RENDERING,
    FLAG_PAGING,
    FLAG_PRESENT,
    INVALID_PARAMETER,
    SUCCESS,
    VidSchSubmission,
)


class VidSch(VidSchSubmission, VidSchCompletion, VidSchFigures):
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

    def _submit_later(self, packet) -> None:
        node_queue = self.nodes[packet.context.node]
        if node_queue.submitting is not packet:
            return  # an adapter stop took it back before the worker reached the driver (adapterstop.py)
        node_queue.worker_busy = False
        node_queue.submitting = None
        self._submit(node_queue, packet)
        self._dispatch(node_queue)

    # -- what holds a ready context back ---------------------------------------------------------
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

    def unblock(self, ctx, delay: int = 0) -> None:
        """A context held back (a full flip queue, paging, a GPU wait) may go on; its node's worker
        looks for work ``delay`` ns from now."""
        if ctx.queue and not ctx.ready and not ctx.device.error:
            ctx.ready = True
            self.policy.ready(ctx, self.sim.now)
            self._waiting(self.nodes[ctx.node], ctx, self.sim.now)
            self.idle_check(self.nodes[ctx.node])
            self._wake_worker(self.nodes[ctx.node], delay)
