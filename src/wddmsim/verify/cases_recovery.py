"""The suite's cases about interruption and recovery, and the GPU's address spaces: preemption,
timeout detection and recovery, GPU faults, GPU virtual addressing and hardware queues
(docs/verify.md, "The cases")."""

from __future__ import annotations

from .kit import (MS, US, Case, Outcome, all_of, batches, context, fences_in_order, healthy, process, scenario,
                  script)


def preemption_cases() -> list[Case]:
    def build(granularity: str):
        def make(d):
            adapter = {"nodes": [{"name": "3D", "engine": "3d", "preemption": granularity, "preemption_interval": "100us"},
                            {"name": "Compute", "engine": "compute"}, {"name": "Copy", "engine": "copy"}]}
            return scenario(f"preempt_{granularity}", [
                process("background", context("job", script(("0ns", "8ms", 4))), priority="below_normal"),
                process("game", context("render", script(("1ms", "300us", 1), ("9ms", "300us", 1), ("17ms", "300us", 1))),
                        priority="high"),
            ], adapter=adapter)
        return make

    def preempted(granularity: str):
        def check(out: Outcome) -> list[str]:
            bad = []
            n = out.summary["nodes"][0]
            if granularity != "none" and n["preemptions"] == 0:
                bad.append("no preemption was answered")
            # Ground truth: the GPU did exactly the work asked, no more (nothing ran twice) and no
            # less (nothing vanished in a preemption).
            engine = out.system.gpu.engines[0]
            want = 4 * 8 * MS + 3 * 300 * US
            if not want <= engine.busy_ns <= want + 200 * US:
                bad.append(f"the 3D engine worked {engine.busy_ns} ns for {want} ns of work")
            return bad
        return check

    return [Case("preemption", g, f"a high-priority context preempting 8 ms buffers ({g} granularity)",
                 build(g), all_of(healthy, preempted(g)), needs=("preemption",))
            for g in ("dma_buffer", "primitive", "interval", "none")]


def tdr_cases() -> list[Case]:
    def hang(d):
        return scenario("hang", [
            process("game", context("render", script(("0ns", "1ms", 6)))),
            process("other", context("c", script(("0ns", "500us", 4), ("4s", "500us", 2)),
                                     node="Copy" if d.nodes > 1 else "3D")),
        ], duration="5s", faults=[{"kind": "hang", "process": "game", "context": "render", "packet": 3}])

    def recovered(kind: str):
        def check(out: Outcome) -> list[str]:
            tdr = out.summary["tdr"]
            bad = []
            if not out.of("TdrDetected"):
                bad.append("the hang was never detected")
            if kind == "engine" and tdr["engine_resets"] != 1:
                bad.append(f"{tdr['engine_resets']} engine resets, expected 1")
            if kind == "adapter" and tdr["adapter_resets"] != 1:
                bad.append(f"{tdr['adapter_resets']} adapter resets, expected 1")
            game = out.context("game/render")
            if not game["device_error"]:
                bad.append("the hung context's device is not in error")
            if game["completed"] < 2:
                bad.append("the packets before the hung one did not retire")
            other = out.context("other/c")
            if other["completed"] != other["submitted"] or other["device_error"]:
                bad.append("the other process's work did not all finish after the reset")
            return bad
        return check

    return [
        Case("tdr", "engine_reset", "a hung packet: detection, engine reset, the others carry on", hang,
             recovered("engine"), needs=("engine_reset",)),
        Case("tdr", "adapter_reset", "a hung packet: detection, adapter reset, the others carry on", hang,
             recovered("adapter"), needs=("no_engine_reset",)),
    ]


def fault_cases() -> list[Case]:
    def page_fault(d):
        return scenario("page_fault", [
            process("app", context("c", script(("0ns", "1ms", 4)))),
            process("other", context("c", script(("0ns", "500us", 3), ("4s", "500us", 1)),
                                     node="Copy" if d.nodes > 1 else "3D")),
        ], duration="5s", faults=[{"kind": "page_fault", "process": "app", "context": "c", "packet": 2}])

    def fault_handled(reported: bool):
        def check(out: Outcome) -> list[str]:
            bad = []
            faults = out.of("PageFault")
            if reported and not faults:
                bad.append("the driver did not report the page fault (DXGK_INTERRUPT_DMA_PAGE_FAULTED)")
            if not reported and not out.of("TdrDetected"):
                bad.append("the stopped engine was never detected")
            app = out.context("app/c")
            if not app["device_error"]:
                bad.append("the faulting device is not in error")
            if app["completed"] < 1:
                bad.append("the packet before the fault did not retire")
            other = out.context("other/c")
            if other["completed"] != other["submitted"] or other["device_error"]:
                bad.append("the other process's work did not all finish")
            return bad
        return check

    def storm(d):
        return scenario("storm", [process("app", context("c", script(("0ns", "1ms", 4))))],
                        faults=[{"kind": "interrupt_storm", "at": "500us", "duration": "200us", "interval": "2us"}])

    return [
        Case("faults", "page_fault", "a GPU page fault: reported, recovered, only its device in error", page_fault,
             fault_handled(True), needs=("page_faults",)),
        Case("faults", "page_fault_timeout", "a GPU page fault the driver cannot report: the timeout finds it",
             page_fault, fault_handled(False), needs=("no_page_faults",)),
        Case("faults", "interrupt_storm", "100 interrupts no engine raised: dismissed, nothing lost", storm,
             healthy),
    ]


def gpu_va_cases() -> list[Case]:
    va = {"gpu_va": True}

    def basic(d):
        return scenario("va_basic", [process("a", context("c", script(("0ns", "1ms", 4)))),
                                     process("b", context("c", script(("0ns", "500us", 4))))], adapter=va)

    def chain(wait: str):
        def make(d):
            return scenario(f"va_chain_{wait}", [
                process(f"p{i}", context("c", {"kind": "chain", "fence": "f", "members": 3, "position": i,
                                               "work": "300us", "count": 4, "wait": wait}))
                for i in range(3)], adapter=va, fence=[{"name": "f"}])
        return make

    def page_fault(d):
        return scenario("va_fault", [
            process("app", context("c", script(("0ns", "1ms", 3)))),
            process("other", context("c", script(("0ns", "500us", 3), ("4s", "500us", 1)), node="Copy")),
        ], adapter=va, duration="5s", faults=[{"kind": "page_fault", "process": "app", "context": "c", "packet": 2}])

    def fault_handled(out: Outcome) -> list[str]:
        bad = [] if out.of("PageFault") else ["the driver did not report the page fault"]
        if not out.context("app/c")["device_error"]:
            bad.append("the faulting device is not in error")
        other = out.context("other/c")
        if other["completed"] != other["submitted"]:
            bad.append("the other process's work did not all finish")
        return bad

    return [
        Case("gpu_va", "basic", "two processes submitting at GPU virtual addresses", basic,
             all_of(healthy, fences_in_order), needs=("gpu_va",)),
        Case("gpu_va", "fence_chain", "three processes passing a monitored fence along (the OS waits)",
             chain("os"), healthy, needs=("gpu_va",)),
        Case("gpu_va", "page_fault", "a write to an address nothing maps: a real GPU page fault", page_fault,
             fault_handled, needs=("gpu_va", "page_faults")),
    ]


def hardware_cases() -> list[Case]:
    hw = {"scheduling": "hardware"}

    def basic(d):
        return scenario("hw_basic", [process("a", context("c", script(("0ns", "1ms", 4)))),
                                     process("b", context("c", script(("0ns", "500us", 4)), hw_queues=2))],
                        adapter=hw)

    def chain(d):
        return scenario("hw_chain", [
            process(f"p{i}", context("c", {"kind": "chain", "fence": "f", "members": 3, "position": i,
                                           "work": "300us", "count": 4, "wait": "gpu"}))
            for i in range(3)], adapter=hw, fence=[{"name": "f"}])

    def suspend(d):
        return scenario("hw_suspend", [process("a", context("c", batches("500us", 4, 6), suspend_at="2ms",
                                                            suspend_for="1ms"))], adapter=hw)

    def hang(d):
        return scenario("hw_hang", [
            process("game", context("render", script(("0ns", "1ms", 4)))),
            process("other", context("c", script(("0ns", "500us", 3), ("4s", "500us", 2)), node="Copy")),
        ], adapter=hw, duration="5s", faults=[{"kind": "hang", "process": "game", "context": "render", "packet": 2}])

    def reset(out: Outcome) -> list[str]:
        bad = []
        if not out.of("HwEngineReset") and not out.summary["tdr"]["adapter_resets"]:
            bad.append("the hang was never reset")
        if not out.context("game/render")["device_error"]:
            bad.append("the hung context's device is not in error")
        other = out.context("other/c")
        if other["completed"] != other["submitted"] or other["device_error"]:
            bad.append("the other process's work did not all finish")
        return bad

    def page_fault(d):
        return scenario("hw_fault", [
            process("app", context("c", script(("0ns", "1ms", 3)))),
            process("other", context("c", script(("0ns", "500us", 3), ("50ms", "500us", 1)), node="Copy")),
        ], adapter=hw, faults=[{"kind": "page_fault", "process": "app", "context": "c", "packet": 2}])

    def fault_handled(out: Outcome) -> list[str]:
        bad = [] if out.of("PageFault") else ["the driver did not report the page fault (HWQUEUE_PAGE_FAULTED)"]
        if not out.context("app/c")["device_error"]:
            bad.append("the faulting device is not in error")
        other = out.context("other/c")
        if other["completed"] != other["submitted"] or other["device_error"]:
            bad.append("the other process's work did not all finish")
        return bad

    return [
        Case("hardware_queues", "basic", "hardware queues of two contexts, one with two queues", basic,
             healthy, needs=("hardware_scheduling",)),
        Case("hardware_queues", "page_fault", "a GPU page fault on a hardware queue: reported with the queue's "
             "handle, only its device in error", page_fault, fault_handled, needs=("hardware_scheduling",)),
        Case("hardware_queues", "gpu_wait_chain", "a monitored fence passed along by GPU waits", chain, healthy,
             needs=("hardware_scheduling",)),
        Case("hardware_queues", "suspend", "a hardware context suspended and resumed mid-work", suspend, healthy,
             needs=("hardware_scheduling",)),
        Case("hardware_queues", "hang", "a hung hardware queue: DxgkDdiResetHwEngine, the others carry on", hang,
             reset, needs=("hardware_scheduling",)),
    ]
