"""The scenario's objects on a started adapter: its processes, devices and contexts (with their
hardware-scheduling settings and hints), the shared monitored fences, the compositors, the
workloads that drive them, the timed changes (budgets, context suspensions, destructions, the
adapter's stop) and the injected faults (a mixin of :class:`wddmsim.runner.system.System`).

A scenario the driver cannot run is a :class:`~wddmsim.runner.system_errors.ConfigError` naming
the field: a context on a node the OS does not schedule (a driver that is not multiple-engine
aware gets node 0 only), a flip present mode under hardware scheduling without a hardware flip
queue. Follows docs/scenarios.md (the ``[[process]]``, ``[[fence]]``, ``[[compositor]]``,
``[[call]]`` and ``[[fault]]`` tables).
"""

from __future__ import annotations

from ..ddi.ntstatus import NTSTATUS
from ..dxgkrnl.hints import SchedulingHints
from ..gpu.device import APERTURE_BASE, SPURIOUS_BIT
from ..sim import DEVICE
from ..workloads import start_workload
from ..workloads.calls import ScenarioCalls
from .system_errors import ConfigError


class ScenarioObjects:
    """Mixin of :class:`~wddmsim.runner.system.System`: what the scenario creates on the adapter
    (see the module doc)."""

    # state set up by System.__init__: scenario, sim, gpu, adapter, kmt (the D3DKMT API), runtime,
    # contexts, processes, fences

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

    def _set_budget(self, arg) -> None:
        proc, size = arg
        self.adapter.vidsch.vidmm.set_budget(proc, size)

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
