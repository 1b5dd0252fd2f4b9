"""The suite's cases about work getting done: submission, the hardware queue, processes and
devices, priorities, fences, paging and NullRendering (docs/verify.md, "The cases")."""

from __future__ import annotations

from .kit import (US, Case, Outcome, all_of, batches, context, fences_in_order, healthy, memory_is, no_recovery,
                  process, scenario, script)


def submission_cases() -> list[Case]:
    def single(d):
        return scenario("single", [process("app", context("c", script(("0ns", "1ms", 3))))])

    def back_to_back(d):
        return scenario("back_to_back", [process("app", context("c", batches("10us", 50, 4)))])

    def many_commands(d):
        return scenario("memory_ops", [process("app", context(
            "c", {"kind": "copy_stream", "size": "256KiB", "interval": "2ms", "count": 8}, node="3D"))])

    def copied(system) -> list[str]:
        """Ground truth: the destination holds the source's bytes (the workload's copies ran)."""
        src, dst = system.contexts[0].workload_allocations
        mem = system.gpu.memory
        return [] if mem.read(dst.address, dst.size) == mem.read(src.address, src.size) else \
            ["the copies did not move the source's bytes to the destination"]

    def seed_source(system) -> None:
        src, _ = system.contexts[0].workload_allocations
        system.gpu.memory.write(src.address, bytes(range(256)) * (src.size // 256))

    return [
        Case("submission", "single", "three packets of one context, one after another", single, healthy),
        Case("submission", "back_to_back", "200 short packets in batches of 50", back_to_back,
             all_of(healthy, fences_in_order)),
        Case("submission", "memory_ops", "copies between allocations: the bytes really move", many_commands,
             all_of(healthy, fences_in_order, memory_is(copied)), prepare=seed_source),
    ]


def queue_cases() -> list[Case]:
    def deep(d):
        return scenario("deep_queue", [process("app", context("c", batches("50us", 64, 4)))],
                        adapter={"hw_queue_depth": 16}, duration="200ms")

    def ring_wrap(d):
        return scenario("ring_wrap", [process("app", context("c", batches("1us", 500, 8)))],
                        adapter={"hw_queue_depth": 8}, duration="200ms")

    return [
        Case("queues", "deep", "a hardware queue 16 deep kept full", deep, all_of(healthy, fences_in_order)),
        Case("queues", "ring_wrap", "4000 packets: the driver's ring wraps many times", ring_wrap,
             all_of(healthy, fences_in_order)),
    ]


def process_cases() -> list[Case]:
    def several(d):
        return scenario("several", [
            process("game", context("render", script(("0ns", "500us", 20)), device=0),
                    context("ui", script(("0ns", "100us", 20)), device=1)),
            process("trainer", context("job", batches("300us", 8, 3), node="Compute")),
            process("uploader", context("copy", {"kind": "copy_stream", "size": "64KiB", "interval": "1ms",
                                                 "count": 10}, node="Copy")),
        ], duration="200ms")

    def one_node(d):
        return scenario("devices", [
            process("a", context("c0", script(("0ns", "500us", 10)), device=0),
                    context("c1", script(("0ns", "500us", 10)), device=1)),
            process("b", context("c", script(("0ns", "200us", 10)))),
        ])

    def destroy(d):
        return scenario("destroy", [
            process("app", context("doomed", script(("0ns", "2ms", 6)), destroy_at="3ms")),
            process("other", context("c", script(("0ns", "1ms", 4)))),
        ], duration="50ms")

    def destroyed(out: Outcome) -> list[str]:
        doomed = out.context("app/doomed")
        bad = []
        if not doomed["destroyed"]:
            bad.append("the context was not destroyed")
        if doomed["completed"] + doomed["cancelled"] != doomed["submitted"]:
            bad.append(f"doomed context: {doomed['completed']} retired + {doomed['cancelled']} cancelled "
                       f"!= {doomed['submitted']} submitted")
        if doomed["cancelled"] == 0:
            bad.append("no queued packet was cancelled by the destroy")
        other = out.context("other/c")
        if other["completed"] != other["submitted"]:
            bad.append("the other process's packets did not all retire")
        destroys = [e for e in out.of("DdiCall") if e["name"] == "DxgkDdiDestroyContext"]
        if out.system.adapter.multi_engine_aware and len(destroys) != 1:
            bad.append(f"DxgkDdiDestroyContext was called {len(destroys)} times")
        return bad + no_recovery(out)

    return [
        Case("processes", "several", "three processes, four contexts on three nodes", several,
             all_of(healthy, fences_in_order), needs=("multiple_nodes",)),
        Case("processes", "devices", "two processes, one with two devices, sharing a node", one_node,
             all_of(healthy, fences_in_order)),
        Case("processes", "destroy", "a context destroyed with packets queued", destroy, destroyed),
    ]


def priority_cases() -> list[Case]:
    def strict(d):
        return scenario("strict", [
            process("low", context("c", batches("2ms", 4, 5))),
            process("high", context("c", script(("1ms", "200us", 1), ("11ms", "200us", 1), ("21ms", "200us", 1)),
                                    priority=5), priority="high"),
        ], scheduler={"policy": "strict_priority"})

    def quantum(d):
        return scenario("quantum", [process(f"p{i}", context("c", batches("1ms", 4, 4))) for i in range(3)],
                        scheduler={"policy": "priority_quantum", "quantum": "2ms"})

    return [
        Case("priorities", "strict", "a high-priority context beside a busy low one", strict,
             all_of(healthy, fences_in_order)),
        Case("priorities", "quantum", "three equal contexts sharing a node by quantum", quantum,
             all_of(healthy, fences_in_order)),
    ]


def fence_cases() -> list[Case]:
    def cumulative(d):
        # Zero ISR cost and a slow DPC: several packets complete per interrupt and per DPC.
        return scenario("cumulative", [process("app", context("c", batches("5us", 32, 8)))],
                        adapter={"hw_queue_depth": 8, "cpu_cost": {"dpc": "50us"}})

    def monotonic(out: Outcome) -> list[str]:
        bad = []
        last: dict[int, int] = {}
        for e in out.of("Callback"):
            dc = e.get("args", {}).get("DmaCompleted")
            if not dc:
                continue
            node, fence = dc["NodeOrdinal"], dc["SubmissionFenceId"]
            if fence < last.get(node, 0):
                bad.append(f"node {node}: DMA_COMPLETED {fence} after {last[node]}")
            last[node] = fence
        return bad

    return [
        Case("fences", "cumulative", "completions reported while the DPC lags: fences cumulative and in order",
             cumulative, all_of(healthy, fences_in_order, monotonic)),
    ]


def paging_cases() -> list[Case]:
    def pressure(d):
        return scenario("pressure", [process("app", context("c", {
            "kind": "memory_pressure", "allocations": 12, "size": "1MiB", "touch": 3, "work": "100us",
            "interval": "500us", "count": 24}))],
            adapter={"segments": [{"name": "vram", "kind": "memory", "size": "4MiB"},
                                  {"name": "gart", "kind": "aperture", "size": "16MiB", "cpu_visible": True}]})

    def patterns(system) -> list[str]:
        """Ground truth: every allocation holds its own fill pattern, wherever VidMm put it."""
        from ..workloads.generators import pattern_of

        mem = system.gpu.memory
        bad = []
        for i, alloc in enumerate(system.contexts[0].workload_allocations):
            where = alloc.address if alloc.resident else alloc.backing
            if mem.read(where, 4) != pattern_of(i).to_bytes(4, "little"):
                bad.append(f"allocation {i} lost its contents through paging")
        return bad

    def paged(out: Outcome) -> list[str]:
        m = out.summary["memory"]
        return [] if m["evictions"] and m["bytes_paged_in"] else ["VidMm never had to evict and page in"]

    return [
        Case("paging", "pressure", "more allocations than video memory: evictions, page-ins, the null-context "
             "switch", pressure, all_of(healthy, paged, memory_is(patterns))),
    ]


def null_rendering_cases() -> list[Case]:
    def null(d):
        return scenario("null", [process("app", context("c", batches("1ms", 4, 4)))], adapter={"null_rendering": True})

    def nothing_ran(out: Outcome) -> list[str]:
        # Ground truth: the engines spent no time on the 16 ms of work asked (their busy time is
        # the fences' command cost alone).
        busy = sum(e.busy_ns for e in out.system.gpu.engines)
        bad = [] if busy < 160 * US else [f"the engines were busy {busy} ns with NullRendering on"]
        if out.summary["null_rendering_packets"] != sum(c["submitted"] for c in out.summary["contexts"]):
            bad.append("not every packet went with Flags.NullRendering")
        return bad

    return [Case("null_rendering", "all", "NullRendering: fences complete, nothing runs", null,
                 all_of(healthy, nothing_ran))]
