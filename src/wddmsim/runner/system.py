"""Assembly: wire a scenario into a running system (the only code, with the CLI, that knows every
part): the event kernel, the GPU, the reference driver, the OS adapter and its API, and the
workloads; then run it and summarise.

Only this module (and the CLI) imports every part; the parts know each other only through the
interfaces they are handed.
"""

from __future__ import annotations

import copy
import time
from dataclasses import dataclass, field

from ..ddi.interface import DeviceInfo
from ..dxgkrnl import D3DKMT, Adapter, ApiError, BugCheckStop, CpuCost
from ..dxgkrnl.hints import SchedulingHints
from ..policies.load import PolicyLoadError, make_policies
from ..dxgkrnl.errors import AdapterStartError
from ..dxgkrnl.tdr import TdrConfig
from ..dxgkrnl.crash import CrashRecord
from ..dxgkrnl.watchdog import NothingRan
from ..ddi.ntstatus import NTSTATUS
from ..gpu.device import APERTURE_BASE, GPU, SPURIOUS_BIT, EngineSpec
from ..kmd import ReferenceDriver
from ..sim import DEVICE, Simulator
from ..trace.ledger import KindsFilter, Ledger, LedgerError, Violation, _NoLedger
from ..trace.sinks import EVENTS_FORMAT, EVENTS_VERSION
from ..dxgkrnl.loader import LoadError, load_class
from ..umd import ReferenceUmd, UmdAdapterInfo
from ..workloads import start_workload
from ..workloads.runtime import Runtime
from ..workloads.calls import ScenarioCalls

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


def _traceback(e: BaseException, user_only: bool = False) -> str:
    """``e``'s traceback without this frame; with ``user_only``, without any frame of wddmsim's own."""
    import os
    import traceback

    if not user_only:
        return "".join(traceback.format_exception(type(e), e, e.__traceback__.tb_next if e.__traceback__ else None))
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep  # the wddmsim package
    te = traceback.TracebackException.from_exception(e)
    te.stack = traceback.StackSummary.from_list([f for f in te.stack
                                                 if not f.filename.startswith((here, "wddmsim" + os.sep))])
    return "".join(te.format())


def _construct(cls, info, who: str):
    """``cls(info)``, the user's constructor (DriverEntry and AddDevice, or the user-mode half's):
    whatever it raises, ``SystemExit`` (``sys.exit()``) included, means the driver does not load,
    an :class:`AdapterStartError` naming the exception with the constructor's traceback. Only
    ``KeyboardInterrupt`` (a person's Ctrl-C) passes through."""
    try:
        return cls(info)
    except (KeyboardInterrupt, NothingRan):
        raise  # a person's Ctrl-C (before the run began: NothingRan), not the constructor's failure
    except BaseException as e:  # noqa: BLE001 - the user's constructor failed: the driver does not load
        raise AdapterStartError([f"{who} raised {_said(e)}\n" + _traceback(e)]) from None


def _said(e: BaseException) -> str:
    """``ValueError: bad``, ``SystemExit: 0``; the type alone when the exception says nothing
    (``sys.exit()``)."""
    said = str(e)
    return f"{type(e).__name__}: {said}" if said else type(e).__name__


def _start_stop(record: CrashRecord) -> str:
    """The reason an adapter does not start when the driver made Windows stop during the start
    (an exception in DxgkDdiStartDevice, a status that is not an NTSTATUS...): the stop's message
    and bug check, with the driver's traceback after it for a driver fault."""
    text = f"{record.message} (Windows stops with {record.bugcheck} while it starts the adapter)"
    return text + ("\n" + record.traceback if record.traceback else "")


class ConfigError(Exception):
    """The scenario cannot be built: ``problems`` are ``(field path, reason)`` pairs."""

    def __init__(self, problems: list[tuple[str, str]]):
        super().__init__("; ".join(f"{p}: {r}" for p, r in problems))
        self.problems = problems


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


class System:
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

    def _build_processes(self) -> None:
        sc = self.scenario
        node_index = {n.name: i for i, n in enumerate(sc.adapter.nodes)}
        count = len(self.adapter.vidsch.nodes)
        problems = []
        for pi, p in enumerate(sc.process):
            for ci, c in enumerate(p.context):
                w = c.workload
                if (sc.adapter.scheduling == "hardware" and self.adapter.hwflips is None and w.kind == "frame_loop"
                        and w.present and w.present_mode in ("flip", "flip_no_wait")):
                    problems.append((f"process[{pi}].context[{ci}].workload.present_mode",
                                     f"under hardware scheduling the model flips only through the hardware flip "
                                     f"queue, and this driver declares none (a WDDM 3.0 driver reporting "
                                     f"DXGK_DRIVERCAPS.MaxHwQueuedFlips > 1: the reference driver's "
                                     f"max_hw_queued_flips, with overlay_planes); present_mode "
                                     f"{w.present_mode!r} is not modelled without it"))
                idx = node_index.get(c.node)
                if idx is not None and idx >= count:
                    problems.append((f"process[{pi}].context[{ci}].node",
                                     f"node {c.node!r} is not scheduled: the driver is not multiple-engine aware "
                                     f"(it does not report MultiEngineAware), so the OS uses node "
                                     f"{sc.adapter.nodes[0].name!r} only"))
        if problems:
            raise ConfigError(problems)
        self.contexts = []
        self.processes = []
        self._build_compositors(node_index)
        starts = []
        for p in sc.process:
            proc = self.kmt.CreateProcess(p.name, p.priority, p.pid)
            proc.virtual_machine = p.virtual_machine
            self.processes.append(proc)
            for change in p.budget:
                self.sim.at(change.at, self._set_budget, (proc, change.size))
            devices = {}
            for c in p.context:
                dev = devices.get(c.device)
                if dev is None:
                    dev = devices[c.device] = self.kmt.CreateDevice(proc)
                hw = None
                if sc.adapter.scheduling == "hardware":
                    flags = ("DisableGpuTimeout",) if c.disable_gpu_timeout else ()
                    hw = {"band": c.band, "realtime_level": c.realtime_level, "quantum": c.quantum,
                          "grace_same": c.grace_same, "grace_lower": c.grace_lower,
                          "queues": [flags] * c.hw_queues}
                ctx = self.kmt.CreateContext(dev, node_index[c.node], c.name, c.priority, hw)
                ctx.hints = SchedulingHints(c.weight, c.period, c.deadline, c.utilization)
                if c.suspend_at is not None:
                    self.sim.at(c.suspend_at, self._suspend, (ctx, c.suspend_for))
                self.contexts.append(ctx)
                starts.append((ctx, c, self.sim.stream(f"workload.{p.name}.{c.name}")))
        # The shared monitored fences, owned by the first context that names one, opened by the rest
        # (the first device of a process that names it in a [[call]] counts as such a user).
        self.fences = {}
        by_name = {p.name: proc for p, proc in zip(sc.process, self.processes)}
        for spec in sc.fence:
            users = [ctx.device for ctx, c, _ in starts if getattr(c.workload, "fence", None) == spec.name
                     or c.workload.kind == "script" and any(spec.name in p.fences() for p in c.workload.packets)]
            callers = [by_name[call.process].devices[0] for call in sc.call if spec.name in call.fences()]
            if not users and not callers:
                continue
            if spec.native:
                fence = self.kmt.CreateNativeFence((users or callers)[0], spec.initial, ("Shared",))
            else:
                fence = self.kmt.CreateSynchronizationObject((users or callers)[0], spec.initial, ("Shared",))
            for dev in users[1:]:
                self.kmt.OpenSynchronizationObject(fence, dev)
            for dev in callers:
                if dev not in fence.devices:
                    self.kmt.OpenSynchronizationObject(fence, dev)
            self.fences[spec.name] = fence
        self.runtime.on_context = self.contexts.append
        self.calls = ScenarioCalls(self, by_name)
        for ctx, c, rng in starts:
            start_workload(self.runtime, ctx, c.workload, rng, self.fences)
            if c.destroy_at is not None:
                self.sim.at(c.destroy_at, self.kmt.DestroyContext, ctx)
        if self.scenario.adapter.stop_at is not None:
            self.sim.at(self.scenario.adapter.stop_at, self.kmt.StopAdapter)

    def _build_compositors(self, node_index: dict) -> None:
        """The scenario's [[compositor]] tables: one dwm.exe process (or one per process name), a
        context per display on its node, started before the applications so that their swap
        chains find it (:mod:`wddmsim.workloads.compositor`)."""
        from ..workloads.compositor import Compositor
        from ..workloads.generators import _until_removed

        procs: dict = {}
        for spec in self.scenario.compositor:
            dev = procs.get(spec.process)
            if dev is None:
                proc = self.kmt.CreateProcess(spec.process, "high", spec.pid)
                self.processes.append(proc)
                dev = procs[spec.process] = self.kmt.CreateDevice(proc)
            node = node_index[spec.node] if spec.node is not None else 0
            ctx = self.kmt.CreateContext(dev, node, f"compose{spec.vidpn_source}", 0, None)
            self.contexts.append(ctx)
            comp = Compositor(self.runtime, ctx, spec, spec.address)
            self.runtime.compositors[spec.vidpn_source] = comp
            self.sim.process(_until_removed(self.sim, ctx, comp.run()))

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

    def _set_budget(self, arg) -> None:
        proc, size = arg
        self.adapter.vidsch.vidmm.set_budget(proc, size)

    def _cpu_cost(self) -> dict:
        """Modelled CPU time of the submission path (the scenario's [adapter.cpu_cost]) and its
        share per application submission:

        - software scheduling, physical DMA buffers: DxgkDdiRender per application submission,
          DxgkDdiPatch and DxgkDdiSubmitCommand per DDI submission;
        - software scheduling, GPU virtual addresses: DxgkDdiSubmitCommandVirtual per DDI
          submission (no render, no patch);
        - hardware scheduling: DxgkDdiSubmitCommandToHwQueue per buffer, twice for a buffer the OS
          held behind a GPU wait (the application's thunk, then the OS's call once the wait is
          satisfied);

        plus the ISR and the DPC per interrupt."""
        c = self.costs
        adapter = self.adapter
        vs = adapter.vidsch
        app = sum(ctx.submitted for ctx in self.contexts)
        total = adapter.interrupts * c.isr + adapter.dpcs * c.dpc
        wddm2 = adapter.wddm2
        if wddm2 is not None and wddm2.hw_scheduling is not None:
            # The application's call, plus the OS's own call for a buffer it held behind a wait.
            total += (wddm2.hw_scheduling.submissions + wddm2.hw_scheduling.deferred_submissions) * c.submit
        else:
            physical = vs.packets_submitted - vs.virtual_submissions
            total += vs.virtual_submissions * c.submit + physical * (c.patch + c.submit)
            total += sum(ctx.submitted - ctx.virtual_packets for ctx in self.contexts) * c.render
        return {"total_ns": total, "submissions": app, "per_submission_ns": round(total / app, 1) if app else 0.0}

    def _process_busy(self, elapsed: int) -> list[dict]:
        """Per process, its GPU time two ways. ``gpu_busy_ns``: the GPU's own account (software
        scheduler: engine time inside the process's DMA buffers, from the bus observer, None with
        the verifier off; hardware scheduling: its contexts' time on the engines by the GPU's
        scheduler). ``os_busy_ns``: the OS's view (software scheduler), the DmaPacketStart..
        DmaPacketStop spans of its packets at the bottom of their node's hardware queue, as GPUView
        draws them; None under hardware scheduling, which has no DmaPacket events. VidMm's own
        work counts for the process "System" (pid 4)."""
        vs = self.adapter.vidsch
        wddm2 = self.adapter.wddm2
        hw = wddm2 is not None and wddm2.hw_scheduling is not None
        procs: dict = {}

        def row(proc) -> dict:
            r = procs.get(proc)
            if r is None:
                r = procs[proc] = {"process": proc.name, "pid": proc.pid, "gpu_busy_ns": 0, "os_busy_ns": 0}
            return r

        for proc in self.processes:
            row(proc)
        if hw:
            for ctx in self.contexts:
                if ctx.hDriver:
                    row(ctx.device.process)["gpu_busy_ns"] += \
                        self.gpu.hw_scheduler(ctx.node).busy_ns(ctx.hDriver, elapsed=True)
            for r in procs.values():
                r["os_busy_ns"] = None
            return list(procs.values())
        for node_queue in vs.nodes:
            # The packet at the bottom of a busy node: its span so far.
            if len(node_queue.hw) > node_queue.stopped and node_queue.busy_since >= 0:
                row(node_queue.hw[node_queue.stopped].context.device.process)["os_busy_ns"] += elapsed - node_queue.busy_since
        for proc, ns in vs.os_busy.items():
            row(proc)["os_busy_ns"] += ns
        truth = vs.truth
        if truth is None:
            for r in procs.values():
                r["gpu_busy_ns"] = None
        else:
            for proc, ns in truth.gpu_busy(elapsed).items():
                row(proc)["gpu_busy_ns"] += ns
        return list(procs.values())

    def _wddm2_summary(self) -> dict | None:
        """GPU virtual addresses, monitored fences and (hardware scheduling) hardware queues."""
        wddm2 = self.adapter.wddm2
        if wddm2 is None:
            return None
        wake = wddm2.fences.wake_latency
        out = {"gpu_va": wddm2.gpuva.summary(), "fences": dict(wddm2.fences.stats),
               "fence_wake_latency": {"count": wake.count, "total_ns": wake.total, "min_ns": wake.min,
                                      "mean_ns": wake.mean, "max_ns": wake.max}}
        if wddm2.native is not None:
            out["native_fences"] = wddm2.native.summary()
        hw = wddm2.hw_scheduling
        if hw is not None:
            out["hw_scheduling"] = hw.summary()
            # The GPU's own view (its context-management processor), per engine and per context.
            scheds = {i: self.gpu.hw_scheduler(i) for i in range(len(hw.nodes))}
            out["engines"] = [{"node": i, "name": self.adapter.node_names[i], "context_switches": scheds[i].switches,
                               "queue_switches": scheds[i].queue_switches, "resets": hw.nodes[i].resets,
                               "hw_queue_slots": scheds[i].slots, "queue_maps": scheds[i].maps,
                               "queue_unmaps": scheds[i].unmaps}
                              for i in range(len(hw.nodes))]
            out["contexts"] = [{"context": ctx.full_name, "band": ctx.band, "queues": len(ctx.hwqueues),
                                "gpu_busy_ns": scheds[ctx.node].busy_ns(ctx.hDriver, elapsed=True) if ctx.hDriver else None,
                                "gpu_preemptions": scheds[ctx.node].preemptions(ctx.hDriver) if ctx.hDriver else None,
                                "progress": [q.progress.value for q in ctx.hwqueues]}
                               for ctx in self.contexts]
        return out

    def _suspend(self, arg) -> None:
        """Suspend a hardware context (as VidMm does before moving its memory), resume it later;
        nothing to do for a context destroyed or in error by then."""
        ctx, hold = arg
        if ctx.device.error or ctx.destroyed:
            return
        ev = self.kmt.SuspendContext(ctx)
        ev.add_callback(lambda _fence: self.sim.after(hold, self._resume, ctx))

    def _resume(self, ctx) -> None:
        if not ctx.destroyed and not ctx.device.error:
            self.kmt.ResumeContext(ctx)

    def _inject_faults(self) -> None:
        """The scenario's faults (``[[fault]]``): hangs, page faults, failing driver entry points,
        interrupt storms."""
        node_index = {n.name: i for i, n in enumerate(self.scenario.adapter.nodes)}
        by_packet: dict = {}
        for f in self.scenario.fault:
            if f.kind == "hang" and f.node is not None:
                self.sim.at(f.at, self.gpu.engines[node_index[f.node]].hang, irql=DEVICE)
            elif f.kind in ("hang", "page_fault"):
                ctx = next(c for c in self.contexts if c.full_name == f"{f.process}/{f.context}")
                by_packet[(ctx.handle, f.packet)] = (ctx, f)
            elif f.kind == "ddi_error":
                self._failing_ddi(f.ddi, f.call, int(NTSTATUS[f.status]))
            elif f.kind == "interrupt_storm":
                # One self-rearming timer, not one per interrupt: a fine storm costs nothing up front.
                self.sim.every(f.at, f.at + f.duration, f.interval, self.gpu.irq.assert_cause, SPURIOUS_BIT,
                               irql=DEVICE)
        if not by_packet:
            return
        engines = self.gpu.engines
        wddm2 = self.adapter.wddm2
        if wddm2 is not None:
            # GPU virtual addressing: the user-mode driver writes the buffer. A page fault is a
            # real one, a write to an address nothing maps; a hang or a fatal hardware error is
            # armed on the buffer's virtual address.
            for (handle, seq), (ctx, f) in by_packet.items():
                if f.kind == "page_fault" and not f.fatal:
                    self.runtime.faulty[(handle, seq)] = True

            def arm_va(ctx, seq, va) -> None:
                hit = by_packet.get((ctx.handle, seq))
                if hit is None:
                    return
                f = hit[1]
                if f.kind == "hang":
                    engines[ctx.node].hang_on_buffer(va)
                elif f.fatal:
                    engines[ctx.node].fault_on_buffer(va, va, True)

            wddm2.on_buffer = arm_va
            return

        def arm(packet) -> None:
            hit = by_packet.get((packet.context.handle, packet.seq))
            if hit is None:
                return
            ctx, f = hit
            if f.kind == "hang":
                engines[ctx.node].hang_on_buffer(packet.dma)
            else:
                # An access to the first aperture page, which nothing maps.
                engines[ctx.node].fault_on_buffer(packet.dma, APERTURE_BASE, f.fatal)

        self.adapter.on_packet = arm

    def _failing_ddi(self, name: str, call: int, status: int) -> None:
        """Make the ``call``-th call of the driver's entry point ``name`` return ``status``."""
        self.adapter.ddi.fail_call(name, call, status)

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

    def summary(self) -> dict:
        """The run's summary, the one object every output shows (see :mod:`wddmsim.output.summary` for
        its words): per node and per context, and after a bug check its ``bugcheck`` (code, name,
        parameters, rule, message). Deterministic: no wall-clock figure."""
        sim = self.sim
        elapsed = sim.now
        vs = self.adapter.vidsch
        nodes = []
        for node_queue, engine in zip(vs.nodes, self.gpu.engines):
            busy = node_queue.busy_ns + (elapsed - node_queue.busy_since if len(node_queue.hw) > node_queue.stopped and node_queue.busy_since >= 0 else 0)
            nodes.append({
                "node": node_queue.ordinal, "name": node_queue.name, "engine": engine.kind, "packets": node_queue.packets,
                "busy_pct": round(100.0 * busy / elapsed, 3) if elapsed else 0.0,
                "gpu_busy_pct": round(100.0 * min(engine.busy_ns, elapsed) / elapsed, 3) if elapsed else 0.0,
                "hw_queue_depth": node_queue.depth, "max_queued": node_queue.max_depth_seen,
                "last_fence": node_queue.last_completed, "preemption": engine.granularity,
                "preemptions": node_queue.preemption.count,
                "preempt_latency_p50_ns": node_queue.preemption.latencies.percentile(50),
                "preempt_latency_max_ns": node_queue.preemption.latencies.max,
                "handoffs": node_queue.handoffs.count, "handoff_min_ns": node_queue.handoffs.min,
                "handoff_mean_ns": _mean(node_queue.handoffs), "handoff_max_ns": node_queue.handoffs.max,
                "idle_while_waiting_ns": vs.idle_waiting(node_queue),
            })
        contexts = []
        research = self._research(elapsed)
        for ctx in self.contexts:
            lat = ctx.latencies
            contexts.append({
                "context": ctx.full_name, "node": vs.nodes[ctx.node].name, "submitted": ctx.submitted,
                "completed": ctx.completed, "null_rendering": ctx.null_packets, "preempted": ctx.preempted,
                "aborted": ctx.aborted, "cancelled": ctx.cancelled, "device_error": bool(ctx.device.error),
                "api_error": ctx.api_error, "destroyed": ctx.destroyed,
                "latency_min_ns": lat.min, "latency_mean_ns": _mean(lat), "latency_p50_ns": lat.percentile(50),
                "latency_p99_ns": lat.percentile(99), "latency_max_ns": lat.max,
                "gpu_ns": None if ctx.hw else ctx.gpu_ns,
                "worst_wait_ns": None if ctx.hw else vs.worst_wait(ctx),
                **research[ctx],
            })
        submitted, retired, makespan = vs.packets_submitted, vs.packets_retired, vs.last_retired_ns
        wddm2 = self.adapter.wddm2
        hw = wddm2 is not None and wddm2.hw_scheduling is not None
        if hw:
            # Hardware scheduling: DxgkDdiSubmitCommandToHwQueue calls and progress-fence completions.
            submitted, retired = wddm2.hw_scheduling.submissions, wddm2.hw_scheduling.completions
            makespan = max(makespan, wddm2.hw_scheduling.last_completion_ns)
            for n in nodes:
                n["busy_pct"] = n["gpu_busy_pct"]
                n["packets"] = sum(q.submitted for q in wddm2.hw_scheduling.nodes[n["node"]].queues)
                n["idle_while_waiting_ns"] = None
        out = {
            "scenario": self.scenario.name, "seed": self.seed, "virtual_time_ns": elapsed,
            "events": sim.events_run,
            "packets_submitted": submitted, "packets_completed": retired, "makespan_ns": makespan,
            "null_rendering_packets": vs.null_rendering_packets, "resubmissions": vs.resubmissions,
            "preemption_aware": bool(self.adapter.preemption_aware),
            "tdr": {"engine_resets": vs.tdr.engine_resets + (wddm2.hw_scheduling.tdr.engine_resets if hw else 0),
                    "adapter_resets": vs.tdr.adapter_resets + (wddm2.hw_scheduling.tdr.adapter_resets if hw else 0),
                    "live_dumps": [{"t": t, "code": c, "p4": p4} for t, c, p4 in vs.tdr.live_dumps]},
            "interrupts": self.adapter.interrupts, "dpcs": self.adapter.dpcs,
            "gpu_faults": len(self.gpu.faults),
            "nodes": nodes, "contexts": contexts, "fairness": [] if hw else self._fairness(),
            "processes": self._process_busy(elapsed),
            "displays": vs.presents.summary(elapsed),
            "memory": vs.vidmm.summary(),
            "scheduling": self.scenario.adapter.scheduling,
            "policy": self.scenario.scheduler.policy,
            "cpu": self._cpu_cost(),
            "gpu_va": bool(self.adapter.gpu_va),
            "wddm2": self._wddm2_summary(),
            "violations": [{"t": t, "rule": v.rule, "name": v.name, "message": v.message}
                           for t, v in self.adapter.verifier.violations],
            "ledger": self.ledger.summary(),
        }
        crash = self.crash
        if crash is not None:
            bc = crash.bugcheck
            out["bugcheck"] = {"code": int(bc.code), "name": bc.name, "p1": bc.p1, "p2": bc.p2, "p3": bc.p3,
                               "p4": bc.p4, "rule": crash.rule, "message": crash.message}
        return out


    def _research(self, elapsed: int) -> dict:
        """Per context, the summary's research figures (docs/scheduling.md, "Scheduling quality in
        the summary"): its weight, its share of its node's GPU time against the share its weight
        asks for, its jobs against their deadlines (:mod:`wddmsim.dxgkrnl.deadlines`) and the
        preemptions of its running packets with their cost by the GPU's own account. Measures are
        None under hardware scheduling (the GPU decides), as ``gpu_ns`` is."""
        vs = self.adapter.vidsch
        mine = [c for c in self.contexts if not c.system]
        node_ns: dict = {}
        weights: dict = {}
        for c in mine:
            node_ns[c.node] = node_ns.get(c.node, 0) + c.gpu_ns
            if c.contended:
                weights[c.node] = weights.get(c.node, 0) + c.hints.weight
        # Jobs whose packets the ISR completed and the DPC has not retired yet: finished at ``done``.
        done: dict = {}
        for node_queue in vs.nodes:
            # (A bug check may stop the model between the ISR's count and its queue's update.)
            for i in range(min(node_queue.stopped, len(node_queue.hw))):
                p = node_queue.hw[i]
                if p.job is not None:
                    n, last = done.get(p.job, (0, -1))
                    done[p.job] = (n + 1, max(last, p.done))
        out = {}
        for ctx in self.contexts:
            row = out[ctx] = {"weight": ctx.hints.weight}
            if ctx.hw:
                row.update(dict.fromkeys(("share", "share_target", "share_error", "deadline_misses", "jobs",
                                          "tardiness_p50_ns", "tardiness_p99_ns", "tardiness_max_ns",
                                          "preemptions", "preemption_cost_ns")))
                continue
            total = node_ns.get(ctx.node, 0)
            share = ctx.gpu_ns / total if total and not ctx.system else None
            target = ctx.hints.weight / weights[ctx.node] if ctx.contended and weights.get(ctx.node) else None
            row["share"] = None if share is None else round(share, 6)
            row["share_target"] = None if target is None else round(target, 6)
            row["share_error"] = None if share is None or target is None else round(share - target, 6)
            if ctx.jobs is None and ctx.hints.relative_deadline is None:
                misses = jobs = None
                tardiness = None
            elif ctx.jobs is None:
                misses, jobs, tardiness = 0, 0, None
            else:
                misses, tardiness = ctx.jobs.figures(elapsed, done)
                jobs = tardiness.count
            row["deadline_misses"] = misses
            row["jobs"] = jobs
            row["tardiness_p50_ns"] = tardiness.percentile(50) if tardiness is not None else None
            row["tardiness_p99_ns"] = tardiness.percentile(99) if tardiness is not None else None
            row["tardiness_max_ns"] = tardiness.max if tardiness is not None else None
            row["preemptions"] = ctx.preemptions
            row["preemption_cost_ns"] = ctx.preemption_cost
        return out

    def _fairness(self) -> list[dict]:
        """Jain's fairness index of GPU time, per node and effective priority, over the contexts of
        that priority that contended for the node (the node was handed from one to another while
        it waited) - (sum x)^2 / (n * sum x^2): 1 when they had equal shares, 1/n when one had all."""
        vs = self.adapter.vidsch
        groups: dict = {}
        for ctx in self.contexts:
            if ctx.contended and not ctx.hw:
                groups.setdefault((ctx.node, ctx.effective_priority), []).append(ctx)
        out = []
        for (node, prio), ctxs in sorted(groups.items(), key=lambda kv: (kv[0][0], -kv[0][1])):
            if len(ctxs) < 2:
                continue
            xs = [c.gpu_ns for c in ctxs]
            total, squares = sum(xs), sum(x * x for x in xs)
            out.append({
                "node": vs.nodes[node].name, "priority_class": ctxs[0].device.process.priority_class,
                "priority": ctxs[0].priority, "contexts": [c.full_name for c in ctxs], "gpu_ns": xs,
                "jain": round(total * total / (len(xs) * squares), 6) if squares else 1.0,
            })
        return out


def _mean(stats) -> int | None:
    """The mean of a :class:`LatencyStats`, rounded down to a whole ns (None when empty)."""
    return stats.total // stats.count if stats.count else None


__all__ = ["ApiError", "ConfigError", "LedgerError", "RunResult", "System"]
