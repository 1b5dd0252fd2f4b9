"""The run's summary, the one object every output shows (:mod:`wddmsim.output.summary` gives its
words): per node, per context and per process, the displays, memory, the modelled CPU cost, the
WDDM 2.x figures, the verifier's violations and the ledger's totals, and after a bug check its
``bugcheck`` (a mixin of :class:`wddmsim.runner.system.System`).

Deterministic: no wall-clock figure, so the summary is the same on every run of the same scenario
and seed. Follows docs/timeline.md ("The run summary") and docs/scheduling.md ("Scheduling quality
in the summary").
"""

from __future__ import annotations


class RunSummary:
    """Mixin of :class:`~wddmsim.runner.system.System`: :meth:`summary` and the figures it is made
    of (see the module doc)."""

    # state set up by System.__init__: scenario, seed, sim, gpu, adapter, costs, contexts,
    # processes, ledger, crash

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


def _mean(stats) -> int | None:
    """The mean of a :class:`LatencyStats`, rounded down to a whole ns (None when empty)."""
    return stats.total // stats.count if stats.count else None
