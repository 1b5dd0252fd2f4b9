"""The scenario's ``[[call]]`` tables: D3DKMT calls the processes make while the run goes on.

Each table is one call, made at ``at`` and, with ``every``, repeated: every ``every`` ns, or after a
gap drawn evenly from ``every`` to ``every_max`` (the table's own random stream, so runs repeat
exactly), up to ``count`` calls. Each call is made when its time comes (a table is a counter, not
a list of calls), so a ``count`` of 10^9 costs only the calls the run reaches. The calls are the thunks an application has
(:class:`~wddmsim.dxgkrnl.kmt.D3DKMT`):

- ``D3DKMTSetContextSchedulingPriority`` and ``D3DKMTSetProcessSchedulingPriorityClass``, taking
  the listed priorities in turn (Microsoft's pages "D3DKMTSetContextSchedulingPriority function"
  and "D3DKMTSetProcessSchedulingPriorityClass function");
- ``D3DKMTSignalSynchronizationObjectFromCpu`` and ``D3DKMTWaitForSynchronizationObjectFromCpu``
  on the scenario's monitored fences, each repeat adding ``step`` to the values (pages
  "D3DKMT_SIGNALSYNCHRONIZATIONOBJECTFROMCPU" and "D3DKMT_WAITFORSYNCHRONIZATIONOBJECTFROMCPU");
  a wait is a thread of its own, so a repeat does not wait for the previous wait;
- ``D3DKMTDestroySynchronizationObject``: the fence's pending waiters return STATUS_INVALID_HANDLE;

``MoveWork``, the application's way of moving work to another node (a context is bound to its node
for life, DXGKARG_CREATECONTEXT.NodeOrdinal): D3DKMTCreateContext there the first time, then its
next packets go there once the previous context retired its last one
(:meth:`~wddmsim.workloads.runtime.Runtime.move`); and ``StepEngine``, which is no D3DKMT call but the test bench's hand on a GPU in stepped mode:
the node's engine runs through the next submissions; and ``SetSchedulingHints``, the model's
extension for research policies (no D3DKMT call): new scheduling hints for a context
(:mod:`wddmsim.dxgkrnl.hints`).

A call that fails returns its NTSTATUS to the application, as the thunk would: the run goes on. Every
call, when it returns, is an event ``ScenarioCall`` in the log with its status.
"""

from __future__ import annotations

from ..ddi.ntstatus import NTSTATUS, status_name
from ..dxgkrnl.errors import ApiError
from ..dxgkrnl.hints import HINTS

SUCCESS = int(NTSTATUS.STATUS_SUCCESS)


class ScenarioCalls:
    """Starts one simulator process per ``[[call]]`` table of ``system``'s scenario;
    ``processes``: the OS processes by scenario name."""

    def __init__(self, system, processes: dict):
        self.system = system
        self.kmt = system.kmt
        self.sim = system.sim
        self.trace = system.trace
        self.processes = processes
        self.contexts = {ctx.full_name: ctx for ctx in system.contexts}
        self.nodes = {n.name: i for i, n in enumerate(system.scenario.adapter.nodes)}
        #: (api, status name) -> how many calls returned so (a count, not a list: a table with
        #: ``every`` and no ``count`` may make calls all run long)
        self.returned: dict[tuple[str, str], int] = {}
        for i, call in enumerate(system.scenario.call):
            rng = self.sim.stream(f"call.{i}") if call.every_max is not None else None
            self.sim.process(self._calls(call, rng))

    def _calls(self, call, rng):
        sim = self.sim
        if call.at > sim.now:
            yield call.at - sim.now
        k = 0
        limit = call.count if call.count is not None else (None if call.every is not None else 1)
        while limit is None or k < limit:
            self._call(call, k)
            k += 1
            if call.every is None or (limit is not None and k >= limit):
                return
            gap = call.every if rng is None else rng.randint(call.every, call.every_max)
            yield gap

    def _call(self, call, k: int) -> None:
        kmt = self.kmt
        api = call.api
        process = self.processes.get(call.process) if call.process is not None else None
        issued = self.sim.now
        try:
            if api == "SetContextSchedulingPriority":
                ctx = self.contexts[f"{call.process}/{call.context}"]
                p = call.priority
                kmt.SetContextSchedulingPriority(ctx, p[k % len(p)])
            elif api == "SetProcessSchedulingPriorityClass":
                p = call.priority_class
                kmt.SetProcessSchedulingPriorityClass(process, p[k % len(p)])
            elif api == "DestroySynchronizationObject":
                kmt.DestroySynchronizationObject(self.system.fences[call.fence[0]])
            elif api == "MoveWork":
                name = call.node[k % len(call.node)]
                self.system.runtime.move(self.contexts[f"{call.process}/{call.context}"], self.nodes[name], name)
            elif api == "SetSchedulingHints":
                ctx = self.contexts[f"{call.process}/{call.context}"]
                kmt.SetSchedulingHints(ctx, **{k: getattr(call, k) for k in HINTS if getattr(call, k) is not None})
            elif api == "StepEngine":
                self.system.gpu.engines[self.nodes[call.node[0]]].step(call.steps)
            else:
                fences = [self.system.fences[name] for name in call.fences()]
                values = [v + k * call.step for v in call.values()]
                if api == "SignalSynchronizationObjectFromCpu":
                    kmt.SignalSynchronizationObjectFromCpu(fences, values, rewind=call.rewind)
                else:
                    event = kmt.WaitForSynchronizationObjectFromCpu(fences, values, timeout=call.timeout,
                                                                    wait_any=call.wait_any)
                    event.add_callback(lambda status: self._returned(api, process, status, issued))
                    return
        except ApiError as e:
            self._returned(api, process, e.status, issued)
            return
        self._returned(api, process, SUCCESS, issued)

    def _returned(self, api: str, process, status: int, issued: int) -> None:
        name = status_name(status)
        key = (api, name)
        self.returned[key] = self.returned.get(key, 0) + 1
        if self.trace is not None:
            self.trace.emit(self.sim.now, "ScenarioCall", {"api": api, "process": process.pid if process else 0,
                                                           "status": name, "issued": issued})
