"""Priority bands and scheduling properties under hardware scheduling, :class:`HwBands` (one of the
mixins :class:`~.hwscheduling.OsHwScheduling` is made of): ``DxgkDdiSetupPriorityBands`` once at
start (each band's grace periods and quanta, the normal band's share; after the nodes'
hardware-queue caps are read), ``DxgkDdiSetContextSchedulingProperties`` for each hardware context
before its first submission (rule 125, SchedulingPropertiesBeforeSubmit) and again at every
D3DKMTSetContextSchedulingPriority or D3DKMTSetProcessSchedulingPriorityClass
(:meth:`HwBands.reprioritize`).

It follows Microsoft's reference pages for DxgkDdiSetupPriorityBands and
DxgkDdiSetContextSchedulingProperties (the call may come in the middle of a context's execution;
times in 100 ns units); a process's D3DKMT_SCHEDULINGPRIORITYCLASS gives its contexts' default band
(:data:`CLASS_BAND`). The calls' arguments are judged under rules 122-126. Rule numbers are the rule
catalogue's: ``wddmsim rules N`` prints rule N, docs/rules.md lists them all.
"""

from __future__ import annotations

from ..ddi import layout
from ..ddi import rules as R
from ..ddi.registry import RECORDS
from .errors import ApiError
from .hws_state import BANDS, HwNode

#: D3DKMT_SCHEDULINGPRIORITYCLASS of a process -> its contexts' default band.
CLASS_BAND = {"idle": "idle", "below_normal": "normal", "normal": "normal", "above_normal": "normal",
              "high": "focus", "realtime": "realtime"}


class HwBands:
    """The priority bands and each hardware context's scheduling properties."""

    # -- start ----------------------------------------------------------------------------------------
    def start(self, metadata: list) -> None:
        """The nodes' hardware-queue caps (DXGK_NODEMETADATA.Flags), then DxgkDdiSetupPriorityBands."""
        for ordinal, flags in enumerate(metadata):
            self.nodes.append(HwNode(ordinal, int(flags.MaxInFlightHwQueueBuffers), bool(flags.RingBufferFenceRelease)))
        adapter = self.adapter
        args = layout.ctype(RECORDS["DXGKARG_SETUPPRIORITYBANDS"], adapter.arch, adapter.version)()
        b = self.bands
        for i, name in enumerate(BANDS):
            args.gracePeriodForBand[i] = b.get("grace", {}).get(name, 0) // 100
            args.processQuantumForBand[i] = b.get("quantum", {}).get(name, 2_000_000) // 100
            args.processGracePeriodForBand[i] = b.get("process_grace", {}).get(name, 0) // 100
        args.targetNormalBandPercentage = b.get("normal_share", 10)
        adapter.ddi.call("DxgkDdiSetupPriorityBands", adapter.hAdapter, args, facts=R.Facts(version=adapter.version),
                    address=self._submit_address, fail="DxgkDdiSetupPriorityBands failed")


    def set_properties(self, ctx) -> None:
        """DxgkDdiSetContextSchedulingProperties (on creation and on every priority change)."""
        adapter = self.adapter
        args = layout.ctype(RECORDS["DXGKARG_SETCONTEXTSCHEDULINGPROPERTIES"], adapter.arch, adapter.version)()
        s = ctx.sched
        args.hContext = ctx.hDriver
        args.priorityBand = BANDS.index(ctx.band)
        args.realtimeBandPriorityLevel = s["realtime_level"] if ctx.band == "realtime" else 0
        args.inProcessPriority = ctx.priority
        q = s["quantum"]
        args.quantum = (q if q is not None else self.bands.get("quantum", {}).get(ctx.band, 2_000_000)) // 100
        args.gracePeriodSamePriority = s["grace_same"] // 100
        args.gracePeriodLowerPriority = s["grace_lower"] // 100
        # The model gives SE_INC_BASE_PRIORITY_NAME to processes of class high or realtime; a scenario
        # cannot give another process a FOCUS or REALTIME band (the schema refuses it, as Windows
        # refuses the request), so rule 126 holds by construction.
        privileged = ctx.system or ctx.device.process.priority_class in ("high", "realtime")
        adapter.ddi.call("DxgkDdiSetContextSchedulingProperties", adapter.hAdapter, args,
                    facts=R.Facts(version=adapter.version, has_inc_base_priority=privileged), address=self._submit_address,
                    fail="DxgkDdiSetContextSchedulingProperties failed")

    def reprioritize(self, contexts, change, undo, *, reband: bool) -> None:
        """D3DKMTSetContextSchedulingPriority or D3DKMTSetProcessSchedulingPriorityClass under
        hardware scheduling: ``change()`` records the new priority (a context's, or its process's
        class), then each of ``contexts`` gets DxgkDdiSetContextSchedulingProperties with its new
        properties, effective at the GPU's next scheduling decision in the band (Microsoft's
        DxgkDdiSetContextSchedulingProperties page: the call "can be made in the middle of context
        execution"). The context's priority is ``inProcessPriority``; with ``reband`` (a class
        change) the context moves to its new class's band, as when it was created (a band a
        scenario gave the context is replaced). A queue of the context waiting for an in-flight
        slot moves to the back of its new band's line. If the driver fails a call, ``undo()`` and
        the contexts already told get their old properties back, and the thunk fails with the
        driver's status."""
        change()
        done = []
        try:
            for ctx in contexts:
                old = ctx.band
                if reband:
                    ctx.band = CLASS_BAND[ctx.device.process.priority_class]
                try:
                    self.set_properties(ctx)
                except ApiError:
                    ctx.band = old
                    raise
                done.append((ctx, old))
        except ApiError:
            undo()
            for ctx, old in done:
                ctx.band = old
                self.set_properties(ctx)
            raise
        for ctx in contexts:
            line = self.nodes[ctx.node].waiting
            for q in ctx.hwqueues:
                line.rebanded(q)
