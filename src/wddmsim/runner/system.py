"""Assembly: wire a scenario into a running system (the only code, with the CLI, that knows every
part): the event kernel, the GPU, the reference driver, the OS adapter and its API, and the
workloads; then run it and summarise.

Only this package's assembly modules (and the CLI) import every part; the parts know each other
only through the interfaces they are handed. :class:`System` is built here (the GPU, the driver
and its user-mode half, the adapter started, the wiring between them), run by :meth:`System.run`
and checked against its ledger when the run ends. What the scenario creates on the started
adapter (processes, contexts, fences, compositors, workloads, timed changes, faults) is
:mod:`wddmsim.runner.system_scenario`'s, the summary :mod:`wddmsim.runner.system_summary`'s, and
the errors that stop a machine from being built :mod:`wddmsim.runner.system_errors`'s; their names
are importable from here as before.
"""

from __future__ import annotations

import copy
import time
from dataclasses import dataclass, field

from ..ddi.interface import DeviceInfo
from ..dxgkrnl import D3DKMT, Adapter, ApiError, BugCheckStop, CpuCost
from ..policies.load import PolicyLoadError, make_policies
from ..dxgkrnl.errors import AdapterStartError
from ..dxgkrnl.tdr import TdrConfig
from ..dxgkrnl.crash import CrashRecord
from ..gpu.device import GPU, EngineSpec
from ..kmd import ReferenceDriver
from ..sim import Simulator
from ..trace.ledger import KindsFilter, Ledger, LedgerError, Violation, _NoLedger
from ..trace.sinks import EVENTS_FORMAT, EVENTS_VERSION
from ..dxgkrnl.loader import LoadError, load_class
from ..umd import ReferenceUmd, UmdAdapterInfo
from ..workloads.runtime import Runtime
from .system_errors import ConfigError, _construct, _said, _start_stop, _traceback
from .system_scenario import ScenarioObjects
from .system_summary import RunSummary, _mean

#: How many of its latest state changes each hardware scheduler keeps during a run
#: (:attr:`wddmsim.gpu.device.GPU.history`).
HW_HISTORY = 1024


def _bands(b) -> dict:
    """The scenario's [adapter.bands] as the adapter's band table (ns per band name)."""
    def per(times):
        return {"idle": times.idle, "normal": times.normal, "focus": times.focus, "realtime": times.realtime}
    return {"grace": per(b.grace), "quantum": per(b.quantum), "process_grace": per(b.process_grace),
            "normal_share": b.normal_share}


def _driver_class(spec):
    """The driver class ``spec`` names (a class, a name, or None for the reference driver)."""
    if spec is None:
        return ReferenceDriver
    if isinstance(spec, str):
        try:
            return load_class(spec, "driver")
        except LoadError as e:
            raise ConfigError([("driver.class", str(e))]) from None
    return spec


def validated_settings(driver_cls, table: dict) -> dict:
    """The driver's settings table, validated by its ``Settings`` model when it has one."""
    model = getattr(driver_cls, "Settings", None)
    if model is None or not hasattr(model, "model_validate"):
        return dict(table)
    from pydantic import ValidationError

    from ..scenario.schema import field_path

    try:
        return model.model_validate(table).model_dump()
    except ValidationError as e:
        raise ConfigError([("driver." + field_path(err["loc"]) if err["loc"] else "driver",
                            err["msg"].removeprefix("Value error, ")) for err in e.errors()]) from None


@dataclass
class RunResult:
    """What a run produced: where time ended, the bug check if any, and the summary. ``wall_s``
    (the run's wall-clock seconds) is not in the summary: the summary is the same on every run of
    the same scenario and seed, and wall time is not (see :mod:`wddmsim.runner.cost`)."""

    end: int
    wall_s: float
    bugcheck: CrashRecord | None
    summary: dict = field(default_factory=dict)
    #: why the run stopped before its end time (``interrupted``, ``max_events``, ``max_log_bytes``:
    #: :mod:`wddmsim.runner.stop`), None when it did not
    stopped: str | None = None

    @property
    def real_time_factor(self) -> float | None:
        """Virtual seconds run per wall second (None when no wall time was measured)."""
        return self.end / 1e9 / self.wall_s if self.wall_s > 0 else None


class System(ScenarioObjects, RunSummary):
    """One adapter with its GPU, driver, OS and workloads, built from a scenario model.

    ``driver``: the driver's class, or its name (``"package.module:Class"``, ``"file.py:Class"``);
    default the scenario's ``[driver]`` class, else the reference driver. ``settings``: the driver's
    settings, over the scenario's ``[driver]`` table. A settings table the driver's ``Settings``
    model refuses is a :class:`ConfigError` (``driver.<key>``); a driver Windows would not start is an
    :class:`~wddmsim.dxgkrnl.errors.AdapterStartError`, and so is one whose code ends abnormally
    before the system can run: its constructor (or its user-mode half's) raising anything,
    ``SystemExit`` included, or a stop while the adapter starts (a driver fault in
    DxgkDdiStartDevice, an entry point's value that is not an integer: the reason names the bug
    check Windows makes)."""

    def __init__(self, scenario, *, seed: int | None = None, trace=None, verifier: str = "strict",
                 driver=None, settings: dict | None = None, engine_mode: str | None = None, _ledger: bool = True):
        self.scenario = scenario
        self.seed = scenario.seed if seed is None else seed
        self.trace = trace
        #: the packet ledger every run keeps (:mod:`wddmsim.trace.ledger`), checked at the end of :meth:`run`;
        #: the model feeds it by direct calls at its transition points, log or no log. ``_ledger=False``
        #: is for benchmarks/logcost.py alone (what the ledger costs): a ledger that keeps nothing.
        self.ledger = Ledger() if _ledger else _NoLedger()
        #: what the model emits events to: ``trace`` (None when no log: no event is built)
        model_trace = KindsFilter.around(trace)
        self.sim = sim = Simulator(self.seed)
        adapter = scenario.adapter
        driver_cls = _driver_class(driver if driver is not None else scenario.driver.class_)
        table = {**scenario.driver.settings, **(settings or {})}
        self.driver_settings = validated_settings(driver_cls, table)
        if trace is not None:
            trace.emit(0, "LogStart", {"format": EVENTS_FORMAT, "version": EVENTS_VERSION,
                                       "scenario": scenario.name, "seed": self.seed})
        self.gpu = GPU(
            sim,
            [EngineSpec(n.name, n.engine, n.command_cost, n.copy_bandwidth, n.preemption, n.preemption_interval,
                        n.preemption_save, n.hw_queue_slots)
             for n in adapter.nodes],
            [(s.name, s.kind, s.size, s.cpu_visible) for s in adapter.segments],
            display_refresh_hz=list(adapter.displays), max_queued_flips=adapter.max_queued_flips,
        )
        # A run keeps the hardware schedulers' latest state changes only (the event log has them all).
        self.gpu.history = HW_HISTORY
        for e in self.gpu.engines:
            e.set_mode(engine_mode or adapter.engine_mode)
        self.gpu.trace = trace  # the GPU's own events (Doorbell, HwContextState): none is the ledger's
        # DriverEntry and AddDevice: the driver gets its device (registers, memory) and settings.
        info = DeviceInfo(gpu=self.gpu.mmio, memory=self.gpu.memory, settings=self.driver_settings)
        self.driver = _construct(driver_cls, info, "the driver's constructor")
        c = adapter.cpu_cost
        self.costs = CpuCost(render=c.render, patch=c.patch, submit=c.submit, isr=c.isr, dpc=c.dpc, present=c.present)
        depths = [n.hw_queue_depth or adapter.hw_queue_depth for n in adapter.nodes]
        try:
            # Under hardware scheduling the policy named is the GPU's scheduler's (its firmware's
            # band rules unless another is named): it is put on the GPU before the driver starts it.
            policy, gpu_policy = make_policies(scenario.scheduler.policy, scenario.scheduler.settings,
                                               adapter.scheduling == "hardware")
        except PolicyLoadError as e:
            raise ConfigError(e.problems) from None
        if gpu_policy is not None:
            gpu_policy.bind(self.gpu, os_context=self._os_hw_context)
        self.adapter = Adapter(sim, self.driver, self.gpu.memory, policy=policy, hw_queue_depth=depths,
                               costs=self.costs, verifier=verifier, trace=model_trace, null_rendering=adapter.null_rendering,
                               tdr=TdrConfig(scenario.tdr.level, scenario.tdr.delay, scenario.tdr.watchdog,
                                             scenario.tdr.limit_count, scenario.tdr.limit_time),
                               displays=list(adapter.displays),
                               budgets={i + 1: sg.budget for i, sg in enumerate(adapter.segments) if sg.budget},
                               scheduling=adapter.scheduling, bands=_bands(adapter.bands), gpu_va=bool(adapter.gpu_va),
                               ledger=self.ledger)
        self.gpu.irq.connect(self.adapter.interrupt)
        # Ground truth for the verifier (rule 43): the GPU's interrupt status register.
        irq = self.gpu.irq
        self.adapter.dxgk.interrupt_status = lambda: irq.status
        try:
            self.adapter.start()
        except BugCheckStop as stop:
            # A driver fault (or a broken rule) while the adapter starts, before the system exists
            # to run: the adapter does not start, and the reason says which stop Windows makes.
            raise AdapterStartError([_start_stop(stop.record)]) from None
        except SystemExit as e:  # sys.exit() in driver code the OS reads outside an entry point (a property)
            raise AdapterStartError([f"the driver's code raised {_said(e)} while the adapter started\n"
                                     + _traceback(e, user_only=True)]) from None
        for i, (n, _) in enumerate(zip(adapter.nodes, self.adapter.vidsch.nodes)):
            if n.first_fence_id != 1:
                self.adapter.vidsch.first_fence(i, n.first_fence_id)
        # The verifier's ground truth (dxgkrnl/groundtruth.py): what the GPU really fetched and ran.
        self.gpu.bus = self.adapter.vidsch.truth
        # The GPU's own account of what preemption stops cost its engines, for the summary's
        # per-context preemption_cost_ns (Windows cannot see it).
        self.adapter.vidsch.preemptor.gpu_account = self._preemption_cost(self.gpu.engines)
        if self.gpu.bus is not None:
            self.gpu.bus.engines = self.gpu.engines
        self.kmt = D3DKMT(self.adapter)
        # The driver pair's user-mode half, which learns what its kernel-mode half tells it.
        umd_name = getattr(driver_cls, "UserModeDriverName", None)
        try:
            umd_cls = load_class(umd_name, "user-mode driver") if umd_name else ReferenceUmd
        except LoadError as e:
            raise AdapterStartError([str(e)]) from None
        self.umd = _construct(umd_cls, UmdAdapterInfo(self.adapter.umd_private_data, self.driver_settings),
                              "the user-mode driver's constructor")
        self.runtime = Runtime(self.kmt, self.umd)
        #: a bug check raised while the scenario's objects were created (a DDI answer the OS stops
        #: on, e.g. DxgkDdiCreateContext breaking rule 76): :meth:`run` ends at once with it
        self._early_stop: BugCheckStop | None = None
        self.crash: CrashRecord | None = None  # the bug check that stopped the run, once it has
        self.contexts: list = []
        self.processes: list = []
        self.fences: dict = {}
        try:
            truth = self.gpu.bus
            if truth is not None and self.adapter.preemption_aware:
                caps = self.adapter.caps
                truth.preemption_caps(caps.GraphicsPreemptionGranularity, caps.ComputePreemptionGranularity)
            self._build_processes()
            self._inject_faults()
        except BugCheckStop as stop:
            self._early_stop = stop

    def _os_hw_context(self, cid: int):
        """The OS's hardware context the GPU's scheduler calls ``cid`` (the driver's handle, which the
        reference driver gives the firmware), or None: for a GPU research policy's names and hints."""
        wddm2 = self.adapter.wddm2
        hw = wddm2.hw_scheduling if wddm2 is not None else None
        return hw.context(cid) if hw is not None else None

    @staticmethod
    def _preemption_cost(engines):
        """``account(node)``: the engine time node ``node``'s engine has spent on preemption stops
        since the last call (:attr:`wddmsim.gpu.engine.Engine.preempt_cost_ns`)."""
        marks = [0] * len(engines)

        def account(node: int) -> int:
            if node >= len(engines):
                return 0
            total = engines[node].preempt_cost_ns
            d, marks[node] = total - marks[node], total
            return d

        return account

    # -- running ------------------------------------------------------------------------------------
    def run(self, until: int | None = None, on_progress=None, stop=None) -> RunResult:
        """Run to ``until`` ns (default: the scenario's duration) or to a bug check.

        ``on_progress(now, limit)`` is called as virtual time advances, first after a thousandth
        of the run; it may return how many virtual ns to run before the next call (a progress bar
        asks for slices of a tenth of a wall second), else the slices stay a thousandth. Running in
        slices changes nothing in the run (timers keep their absolute times and order). ``stop``:
        a :class:`~wddmsim.runner.stop.RunStop` (a signal's flag, ``--max-events``,
        ``--max-log-bytes``) that may end the run early, at the current virtual time; the result's
        ``stopped`` and the ``LogEnd`` reason then say why. The event log's last line, ``LogEnd``,
        carries the run's summary."""
        from .stop import run_checked

        limit = self.scenario.duration if until is None else until
        if stop is not None:
            stop.running = True  # a signal from here on stops the run cleanly (wddmsim.runner.stop)
        t0 = time.perf_counter()
        crash = None
        stopped = None
        try:
            if self._early_stop is not None:
                raise self._early_stop
            if on_progress is None and stop is None:
                self.sim.run(until=limit)
            else:
                stopped = run_checked(self.sim, limit, stop, on_progress)
        except BugCheckStop as halt:
            crash = halt.record
            if self.trace is not None:
                bc = crash.bugcheck
                self.trace.emit(self.sim.now, "BugCheck", {
                    "code": int(bc.code), "name": bc.name, "p1": bc.p1, "p2": bc.p2, "p3": bc.p3, "p4": bc.p4,
                    "rule": crash.rule, "message": crash.message,
                })
        wall = time.perf_counter() - t0
        self.crash = crash
        summary = self.summary()
        found = self.check_ledger(summary)
        if self.trace is not None:
            self.trace.emit(self.sim.now, "LogEnd", {"reason": "bugcheck" if crash is not None else stopped or "time",
                                                     "summary": copy.deepcopy(summary)})
        if found:
            raise LedgerError(found)
        result = RunResult(self.sim.now, wall, crash, stopped=None if crash is not None else stopped)
        result.summary = summary
        return result

    # -- the packet ledger ---------------------------------------------------------------------------
    def check_ledger(self, summary: dict) -> list[Violation]:
        """The ledger's violations so far, with what the model itself holds and counts checked
        against it: the packets in its queues are the ledger's in-flight ones, and its counters
        (per context, VidSch's, the hardware scheduler's, the displays') agree with the ledger's
        totals. ``summary`` is this run's (:meth:`summary`). After a bug check, which may strike in
        the middle of a transition (a counter moved, its event not yet emitted), only what the
        model holds is checked: each such packet is one the ledger has in flight."""
        led = self.ledger
        if type(led) is _NoLedger:
            return []
        now = self.sim.now
        found = led.check_now(now, self._held(), partial=self.crash is not None)
        if self.crash is not None:
            return found
        totals = summary["ledger"]

        def differ(what: str, model, ledger) -> None:
            if model != ledger:
                found.append(Violation(now, what, f"the model counts {model}, the ledger {ledger}", []))

        for ctx in self.contexts:
            mine = led.per_context.get(ctx.handle, [0, 0, 0, 0])
            differ(f"the packets of context {ctx.handle} ({ctx.full_name}): submitted, completed, cancelled, aborted",
                   [ctx.submitted, ctx.completed, ctx.cancelled, ctx.aborted], mine)
        vs = self.adapter.vidsch
        wddm2 = self.adapter.wddm2
        hws = wddm2.hw_scheduling if wddm2 is not None else None
        dma, pf = totals["dma_submissions"], totals["progress_fences"]
        differ("the DMA submissions (VidSch's packets submitted)", vs.packets_submitted, dma["created"])
        retired = totals["packets"]["completed"] + totals["paging"]["completed"] - pf["completed"]
        differ("the packets VidSch retired", vs.packets_retired, retired)
        if hws is not None:
            differ("the progress fences completed (the hardware scheduler's completions)", hws.completions,
                   pf["completed"])
        shown = summary["displays"]
        differ("the presents: presented, displayed, dropped",
               [sum(s["presents"] for s in shown), sum(s["displayed"] for s in shown),
                sum(s["dropped"] for s in shown)],
               [totals["presents"]["created"], totals["presents"]["displayed"], totals["presents"]["dropped"]])
        return found

    def _held(self) -> set:
        """``(context, seq)`` of every packet the model holds now: in a software queue, being
        submitted, on a hardware queue, taken back by a preemption, or (hardware scheduling) in a
        hardware queue's OS-side queue or with the driver."""
        vs = self.adapter.vidsch
        held = set()
        for ctx in list(self.adapter.contexts) + list(vs.vidmm._system_contexts.values()):
            for p in ctx.queue:
                held.add((ctx.handle, p.seq))
        for q in vs.nodes:
            packets = list(q.hw) + list(q.preemption.preempted)
            if q.submitting is not None:
                packets.append(q.submitting)
            for p in packets:
                held.add((p.context.handle, p.seq))
        wddm2 = self.adapter.wddm2
        hws = wddm2.hw_scheduling if wddm2 is not None else None
        if hws is not None:
            for node in hws.nodes:
                for q in node.queues:
                    for e in list(q.pending) + list(q.in_flight):
                        if e.kind == "buffer":
                            held.add((q.context.handle, e.seq))
        return held


__all__ = ["ApiError", "ConfigError", "LedgerError", "RunResult", "System"]
