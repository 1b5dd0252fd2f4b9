"""Scheduling priority changes while contexts run, :class:`AdapterPriority` (one of the mixins
:class:`~.adapter.Adapter` is made of): D3DKMTSetContextSchedulingPriority (a context's priority
within its process, -7..7), D3DKMTSetProcessSchedulingPriorityClass (the process's
D3DKMT_SCHEDULINGPRIORITYCLASS) and the model's own SetSchedulingHints (:mod:`.hints`, no Windows
call).

It follows Microsoft's pages for those two thunks: a value outside their range, or a destroyed
context, fails with STATUS_INVALID_PARAMETER. Under the software scheduler VidSch's policy ranks the
contexts anew and the scheduler looks again at their nodes (a raised priority may preempt the
running context); under hardware scheduling the driver is told through
``DxgkDdiSetContextSchedulingProperties``, which Microsoft's page for it allows in the middle of a
context's execution (:meth:`.hwscheduling.OsHwScheduling.reprioritize`). Packets already queued
keep their order (the model's choice).
"""

from __future__ import annotations

from ..ddi.ntstatus import NTSTATUS
from .errors import ApiError
from .objects import PRIORITY_CLASSES, Context, Process


class AdapterPriority:
    """Context priorities, process priority classes and scheduling hints, changed while running."""

    def _hardware_scheduling(self):
        """The OS's hardware scheduling (:mod:`.hwscheduling`), None under the software scheduler:
        there the priority calls reach the driver through DxgkDdiSetContextSchedulingProperties and
        the GPU's scheduler decides."""
        return self.wddm2.hw_scheduling if self.wddm2 is not None else None

    def _reprioritized(self, contexts) -> None:
        """The scheduler looks again at the nodes of ``contexts`` whose priority changed: a raised
        priority may preempt the running context, a ready one may be picked sooner."""
        vs = self.vidsch
        for ordinal in sorted({c.node for c in contexts if c.ready}):
            node_queue = vs.nodes[ordinal]
            vs._wake_worker(node_queue)
            if vs.preemptor.enabled:
                vs.preemptor.consider(node_queue)

    def set_scheduling_hints(self, ctx: Context, changes: dict) -> None:
        """The model's SetSchedulingHints (no Windows call: :mod:`.hints`): ``changes`` maps hint
        names (weight, period, deadline, utilization) to new values; the others keep theirs. The
        policy is told (a research policy's ``on_changed``) and looks again at the node."""
        if ctx.destroyed:
            raise ApiError(int(NTSTATUS.STATUS_INVALID_PARAMETER), "the context was destroyed")
        for key, value in changes.items():
            setattr(ctx.hints, key, value)
        if self.trace is not None:
            self.trace.emit(self.sim.now, "SchedulingHints", {"context": ctx.handle, **ctx.hints.as_dict()})
        changed = getattr(self.vidsch.policy, "changed", None)
        if changed is not None:
            changed([ctx])
        self._reprioritized([ctx])

    def set_context_priority(self, ctx: Context, priority: int) -> None:
        """D3DKMTSetContextSchedulingPriority: the context's priority within its process, -7..7
        (STATUS_INVALID_PARAMETER outside it, or for a destroyed context). Packets already queued
        keep their order; from now on the scheduler ranks the context by the new priority."""
        if ctx.destroyed:
            raise ApiError(int(NTSTATUS.STATUS_INVALID_PARAMETER), "the context was destroyed")
        if not isinstance(priority, int) or not -7 <= priority <= 7:
            raise ApiError(int(NTSTATUS.STATUS_INVALID_PARAMETER), f"context priority {priority!r} outside -7..7")
        old = ctx.priority
        hw = self._hardware_scheduling()
        if hw is not None:
            hw.reprioritize([ctx], lambda: setattr(ctx, "priority", priority), lambda: setattr(ctx, "priority", old),
                            reband=False)
        else:
            self.vidsch.policy.reprioritize([ctx], lambda: setattr(ctx, "priority", priority))
        if self.trace is not None:
            self.trace.emit(self.sim.now, "ContextPriority", {"context": ctx.handle, "priority": priority,
                                                              "previous": old})
        if hw is None:
            self._reprioritized([ctx])

    def set_process_priority_class(self, process: Process, priority_class: str) -> None:
        """D3DKMTSetProcessSchedulingPriorityClass: the process's D3DKMT_SCHEDULINGPRIORITYCLASS
        (STATUS_INVALID_PARAMETER for an unknown class); every context of the process is ranked by
        it from now on."""
        if priority_class not in PRIORITY_CLASSES:
            raise ApiError(int(NTSTATUS.STATUS_INVALID_PARAMETER),
                           f"priority class {priority_class!r}; the classes are {', '.join(PRIORITY_CLASSES)}")
        old = process.priority_class
        contexts = [c for d in process.devices for c in d.contexts if not c.destroyed]
        hw = self._hardware_scheduling()
        if hw is not None:
            hw.reprioritize(contexts, lambda: setattr(process, "priority_class", priority_class),
                            lambda: setattr(process, "priority_class", old), reband=True)
        else:
            self.vidsch.policy.reprioritize(contexts, lambda: setattr(process, "priority_class", priority_class))
        if self.trace is not None:
            self.trace.emit(self.sim.now, "ProcessPriorityClass", {"process": process.pid,
                                                                   "priority_class": priority_class,
                                                                   "previous": old})
        if hw is None:
            self._reprioritized(contexts)
