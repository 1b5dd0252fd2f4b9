"""Hardware contexts and hardware queues, :class:`HwContexts` (one of the mixins
:class:`~.hwscheduling.OsHwScheduling` is made of): their creation (``DxgkDdiCreateHwContext`` with
the context's root page table, ``DxgkDdiCreateHwQueue`` with a fresh progress fence), suspend and
resume, and their destruction (``DxgkDdiDestroyHwQueue`` for each queue, then
``DxgkDdiDestroyHwContext``, once the last buffer left the GPU).

Suspend and resume follow Microsoft's DxgkDdiSuspendContext page: ``DxgkDdiSuspendContext`` with a
new contextSuspendFence (rule 104, SuspendFenceIncreases), acknowledged at once or later with
``DXGK_INTERRUPT_SUSPEND_CONTEXT_COMPLETED`` carrying a fence the OS issued (rule 56,
SuspendFenceIssued: any other is bug check 0x119), then ``DxgkDdiResumeContext``; under hardware
scheduling they replace the null-context switch. Rule numbers are the rule catalogue's: ``wddmsim
rules N`` prints rule N, docs/rules.md lists them all.
"""

from __future__ import annotations

from ..ddi import layout
from ..ddi import rules as R
from ..ddi.bugcheck import BugCheck, BugCheckCode, VidSchError
from ..ddi.ntstatus import NTSTATUS
from ..ddi.registry import RECORDS
from ..sim import DISPATCH
from .crash import BugCheckStop, CrashRecord
from .errors import ApiError
from .hws_bands import CLASS_BAND
from .hws_state import HwNode, HwQueue

SUCCESS = int(NTSTATUS.STATUS_SUCCESS)
PENDING = int(NTSTATUS.STATUS_PENDING)


class HwContexts:
    """Hardware contexts and queues: created, suspended and resumed, destroyed."""

    # -- contexts and queues --------------------------------------------------------------------------
    def create_context(self, ctx, *, band: str | None = None, realtime_level: int = 0, quantum: int | None = None,
                       grace_same: int = 0, grace_lower: int = 0) -> None:
        """DxgkDdiCreateHwContext, the root page table, then DxgkDdiSetContextSchedulingProperties
        (before anything can be submitted, rule 125)."""
        adapter = self.adapter
        args = layout.ctype(RECORDS["DXGKARG_CREATEHWCONTEXT"], adapter.arch, adapter.version)()
        args.hHwContext = ctx.handle
        args.NodeOrdinal = ctx.node
        args.EngineAffinity = 1
        status = adapter.ddi.call("DxgkDdiCreateHwContext", ctx.device.hDriver, args)
        if status != SUCCESS:
            raise ApiError(status, "DxgkDdiCreateHwContext failed")
        ctx.hDriver = ctx.hDdi = args.hHwContext
        self._by_driver_handle[ctx.hDriver] = ctx
        ctx.hw = True
        ctx.hwqueues = []
        self.gpuva.set_root(ctx)
        ctx.band = band or CLASS_BAND[ctx.device.process.priority_class]
        ctx.sched = {"realtime_level": realtime_level, "quantum": quantum, "grace_same": grace_same,
                     "grace_lower": grace_lower}
        self.set_properties(ctx)

    def context(self, hHwContext: int):
        """The hardware context the driver calls ``hHwContext``, or None."""
        return self._by_driver_handle.get(hHwContext)

    def create_queue(self, ctx, flags=()) -> HwQueue:
        """DxgkDdiCreateHwQueue with a fresh progress fence (initial value 0)."""
        adapter = self.adapter
        q = HwQueue(ctx, len(ctx.hwqueues), frozenset(flags))
        q.handle = adapter.handles.add(q)
        q.progress = self.fences.create(ctx.device.process, ctx.device, 0, ())
        args = layout.ctype(RECORDS["DXGKARG_CREATEHWQUEUE"], adapter.arch, adapter.version)()
        args.hHwQueue = q.handle
        for name in flags:
            setattr(args.Flags, name, 1)
        args.hHwQueueProgressFence = q.progress.handle
        args.HwQueueProgressFenceCPUVirtualAddress = q.progress.cpu_va
        args.HwQueueProgressFenceGPUVirtualAddress = q.progress.gpu_va.get(ctx.device.process, 0)
        status = adapter.ddi.call("DxgkDdiCreateHwQueue", ctx.hDriver, args, facts=R.Facts(version=adapter.version),
                             address=self._submit_address)
        if status != SUCCESS:
            adapter.handles.remove(q.handle)
            raise ApiError(status, "DxgkDdiCreateHwQueue failed")
        q.hDriver = args.hHwQueue
        self._created += 1
        q.key = (ctx.node, self._created)
        self._by_progress[q.progress] = q
        ctx.hwqueues.append(q)
        self.nodes[ctx.node].queues.append(q)
        self.queues.append(q)
        if self.trace is not None:
            self.trace.emit(self.sim.now, "HwQueueCreate", {
                "hwqueue": q.handle, "context": ctx.handle, "node": ctx.node, "progress_fence": q.progress.handle,
                "band": ctx.band, "flags": sorted(flags), "hHwQueue": q.hDriver, "hHwContext": ctx.hDriver})
        return q

    # -- suspend and resume ------------------------------------------------------------------------------
    def suspend(self, ctx):
        """DxgkDdiSuspendContext: an event that triggers when the GPU holds nothing of ``ctx``
        (with the contextSuspendFence acknowledged). Rule 104 is judged on the call."""
        adapter = self.adapter
        ev = self.sim.event()
        last = self._last_suspend.get(ctx.handle, 0)
        fence = last + 1
        args = layout.ctype(RECORDS["DXGKARG_SUSPENDCONTEXT"], adapter.arch, adapter.version)()
        args.hContext = ctx.hDriver
        args.contextSuspendFence = fence
        already = ctx.suspended
        self._last_suspend[ctx.handle] = fence
        ctx.suspended = True
        self.suspends += 1
        status = adapter.ddi.call("DxgkDdiSuspendContext", adapter.hAdapter, args, address=self._submit_address, judge="after",
                             facts=R.Facts(version=adapter.version, last_suspend_fence=last, already_suspended=already))
        if status == SUCCESS:
            ev.succeed(fence)
        elif status == PENDING:
            self._suspend_waits.setdefault(ctx.hDriver, []).append((fence, ev, ctx))
            self.tdr.suspend_pending(ctx, fence)
        else:
            raise ApiError(status, "DxgkDdiSuspendContext failed")
        return ev

    def suspend_completed(self, data) -> None:
        """DXGK_INTERRUPT_SUSPEND_CONTEXT_COMPLETED (device IRQL): rule 56, then the waiters of
        every suspend up to the acknowledged fence."""
        s = data.SuspendContextCompleted
        ctx = self._by_driver_handle.get(s.hContext)
        issued = self._last_suspend.get(ctx.handle, 0) if ctx is not None else 0
        if not 0 < s.ContextSuspendFence <= issued:
            adapter = self.adapter
            bc = BugCheck(BugCheckCode.VIDEO_SCHEDULER_INTERNAL_ERROR, VidSchError.INCORRECT_SUSPEND_FENCE,
                          s.ContextSuspendFence, s.hContext, issued)
            raise BugCheckStop(CrashRecord(
                time=self.sim.now, bugcheck=bc, rule=56, rule_name="SuspendFenceIssued",
                message=f"SUSPEND_CONTEXT_COMPLETED for context 0x{s.hContext:x} carries ContextSuspendFence "
                        f"{s.ContextSuspendFence}, which the OS did not issue (last issued: {issued})",
                struct="DXGKARGCB_NOTIFY_INTERRUPT_DATA", arch=adapter.arch, ddi_version=adapter.version.name,
                address=adapter.interrupt_address, data=bytes(data)))
        keep = []
        for fence, ev, c in self._suspend_waits.get(s.hContext, ()):  # none left: a stale acknowledgment
            if fence <= s.ContextSuspendFence:
                self.tdr.suspend_acknowledged(c, fence)
                self.sim.soon(ev.succeed, fence, DISPATCH)
            else:
                keep.append((fence, ev, c))
        self._suspend_waits[s.hContext] = keep

    def resume(self, ctx) -> None:
        """DxgkDdiResumeContext: the GPU may schedule ``ctx`` again."""
        adapter = self.adapter
        args = layout.ctype(RECORDS["DXGKARG_RESUMECONTEXT"], adapter.arch, adapter.version)()
        args.hContext = ctx.hDriver
        adapter.ddi.call("DxgkDdiResumeContext", adapter.hAdapter, args, fail="DxgkDdiResumeContext failed")
        ctx.suspended = False
        self.resumes += 1
        for q in ctx.hwqueues:
            self._feed(q)

    # -- destroying a context ---------------------------------------------------------------------------
    def cancel_queues(self, ctx) -> None:
        """D3DKMTDestroyContext: ``ctx``'s buffers still queued by the OS never reach the driver."""
        node = self.nodes[ctx.node]
        for q in ctx.hwqueues:
            q.destroyed = True
            self._cancel_pending(q, node)
        if self.adapter.hwflips is not None:
            self.adapter.hwflips.context_gone(ctx)  # its flips still waiting for their rendering

    def _cancel_pending(self, q: HwQueue, node: HwNode) -> None:
        """Everything ``q`` still holds on the OS's side goes: buffers (``Cancelled``), its GPU
        wait, its place in line for an in-flight slot."""
        while q.pending:
            e = q.pending.popleft()
            if e.kind == "buffer":
                self._drop(q, e, "Cancelled")
        if q.wait_token is not None:
            q.wait_token.cancel()
            q.wait_token = None
        if q.in_line >= 0:
            node.waiting.remove(q)

    def destroy(self, ctx) -> None:
        """The last buffer of destroyed ``ctx`` left the GPU: DxgkDdiDestroyHwQueue for each of its
        queues, then DxgkDdiDestroyHwContext."""
        adapter = self.adapter
        node = self.nodes[ctx.node]
        for q in ctx.hwqueues:
            adapter.ddi.call("DxgkDdiDestroyHwQueue", q.hDriver, log_args={"hHwQueue": q.hDriver})
            node.queues.remove(q)
            self.queues.remove(q)
            self._by_progress.pop(q.progress, None)
            self._new_head.discard(q)
            adapter.handles.remove(q.handle)
        adapter.ddi.call("DxgkDdiDestroyHwContext", ctx.hDriver, log_args={"hHwContext": ctx.hDriver})
        self._by_driver_handle.pop(ctx.hDriver, None)
