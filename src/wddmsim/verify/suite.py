"""The conformance suite of ``wddmsim verify``: scenarios by area, each with what a driver that
keeps the contract must show.

Every case is a small scenario on the suite's GPU (:data:`GPU`: a 3D engine, a compute engine and
a copy engine, one 60 Hz display) and a list of expectations about the run. A case runs only when
the driver declares what it needs (:class:`Declared`, read from the driver's
``DXGK_DRIVERCAPS``, node metadata and interface version at adapter start): a preemption case needs
``PreemptionAware``, an engine-reset case ``SupportPerEngineTDR``, the hardware-queue cases
hardware scheduling, and so on. The rest are listed as not applicable, with the reason.

Every case, whatever it tests, fails on a bug check, a driver fault or a broken rule (the verifier
runs in strict mode, with the ground-truth checks); its own expectations then say what the run must
have done: every packet retired, a preemption answered with the work resubmitted and finished, a
hung packet's device in error and everyone else's work done, a flip shown no earlier than its
interval allows... Expectations hold for any legal driver: they speak of what the OS saw and what
the GPU did, never of how a particular driver goes about it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

MS = 1_000_000
US = 1_000

#: The suite's GPU: what every case's adapter is built from.
NODES = [
    {"name": "3D", "engine": "3d"},
    {"name": "Compute", "engine": "compute"},
    {"name": "Copy", "engine": "copy"},
]


@dataclass(frozen=True)
class Declared:
    """What the driver declared at adapter start, as the suite sees it."""

    version: str  # the DDI version's name (``wddm2_0`` ...)
    version_value: int
    nodes: int  # nodes the OS schedules
    multi_engine_aware: bool
    preemption_aware: bool
    per_engine_reset: bool
    cancel_aware: bool
    virtual_addressing: bool
    hardware_scheduling: bool
    flip_interval: bool
    flip_no_wait: bool
    page_faults: bool
    mmio_flips: bool = False
    overlays: bool = False  # SupportMultiPlaneOverlay with MaxOverlayPlanes >= 1
    #: MaxHwQueuedFlips > 1 once the OS enabled the hardware flip queue (WDDM 3.0, hardware scheduling)
    hw_flip_queue: bool = False

    def lacks(self, needs: tuple[str, ...]) -> str | None:
        """Why a case that ``needs`` these does not apply to this driver (None: it does)."""
        why = {
            "multiple_nodes": (self.nodes >= 2, "the driver schedules one node (not multiple-engine aware)"),
            "preemption": (self.preemption_aware, "the driver is not PreemptionAware"),
            "engine_reset": (self.per_engine_reset, "the driver does not report SupportPerEngineTDR"),
            "no_engine_reset": (not self.per_engine_reset, "the driver reports SupportPerEngineTDR"),
            "cancel": (self.cancel_aware, "the driver is not CancelCommandAware"),
            "gpu_va": (self.virtual_addressing, "the driver does not support GPU virtual addressing"),
            "hardware_scheduling": (self.hardware_scheduling, "the driver does not support hardware scheduling"),
            "flip_interval": (self.flip_interval, "the driver does not report FlipCaps.FlipInterval"),
            "flip_no_wait": (self.flip_no_wait, "the driver does not report FlipCaps.FlipOnVSyncWithNoWait"),
            "mmio_flips": (self.mmio_flips, "the driver does not report FlipCaps.FlipOnVSyncMmIo (its flips are "
                                            "DMA-buffer commands)"),
            "overlays": (self.overlays, "the driver does not report SupportMultiPlaneOverlay (no overlay planes)"),
            "hw_flip_queue": (self.hw_flip_queue, "the driver does not declare the hardware flip queue "
                                                  "(DXGK_DRIVERCAPS.MaxHwQueuedFlips > 1, WDDM 3.0)"),
            "page_faults": (self.page_faults, "the driver's DDI version has no DmaPageFaulted interrupt"),
            "no_page_faults": (not self.page_faults, "the driver reports page faults"),
        }
        for need in needs:
            ok, reason = why[need]
            if not ok:
                return reason
        return None


@dataclass
class Outcome:
    """A finished case: the system, its run result and summary, and the event log."""

    system: object
    result: object
    events: list

    @property
    def summary(self) -> dict:
        return self.result.summary

    def of(self, *names: str) -> list[dict]:
        return [e for e in self.events if e["event"] in names]

    def context(self, full_name: str) -> dict:
        return next(c for c in self.summary["contexts"] if c["context"] == full_name)


@dataclass(frozen=True)
class Case:
    """One scenario of the suite: ``scenario(declared)`` builds the scenario dict for this driver;
    ``expect(outcome)`` returns what went wrong (empty: the case passes)."""

    area: str
    name: str
    title: str
    scenario: Callable[[Declared], dict]
    expect: Callable[[Outcome], list[str]]
    needs: tuple[str, ...] = ()
    #: called with the built system before it runs (to seed memory the expectations read back)
    prepare: Callable[[object], None] | None = None

    @property
    def id(self) -> str:
        return f"{self.area}/{self.name}"


# -- building scenarios ----------------------------------------------------------------------------------
def scenario(name: str, processes: list, *, duration: str = "100ms", adapter: dict | None = None,
             faults: list | None = None, **top) -> dict:
    ad_spec = {"nodes": [dict(n) for n in NODES], **(adapter or {})}
    out = {"name": name, "duration": duration, "seed": 1, "adapter": ad_spec, "process": processes, **top}
    if faults:
        out["fault"] = faults
    return out


def process(name: str, *contexts, priority: str = "normal") -> dict:
    return {"name": name, "priority": priority, "context": list(contexts)}


def context(name: str, workload: dict, node: str = "3D", **extra) -> dict:
    return {"name": name, "node": node, "workload": workload, **extra}


def script(*packets) -> dict:
    """Packets ``(at, work)`` or ``(at, work, repeat)``."""
    return {"kind": "script", "packets": [
        {"at": p[0], "work": p[1], "repeat": p[2] if len(p) > 2 else 1} for p in packets]}


def batches(work: str, batch: int, count: int, interval: str = "0ns") -> dict:
    return {"kind": "compute_batch", "work": work, "batch": batch, "count": count, "interval": interval}


# -- expectations ---------------------------------------------------------------------------------------
def everything_retired(out: Outcome) -> list[str]:
    """Every context submitted something and every packet it submitted was retired."""
    bad = []
    for c in out.summary["contexts"]:
        if c["submitted"] == 0:
            bad.append(f"{c['context']} submitted nothing")
        elif c["completed"] != c["submitted"]:
            bad.append(f"{c['context']}: {c['completed']} of {c['submitted']} packets retired "
                       f"({c['cancelled']} cancelled, {c['aborted']} aborted)")
        if c["device_error"]:
            bad.append(f"{c['context']}: its device went to error")
        if c["api_error"]:
            bad.append(f"{c['context']}: the application got {c['api_error']}")
    return bad


def no_recovery(out: Outcome) -> list[str]:
    """No timeout, no reset: a driver that keeps up never makes the OS recover."""
    tdr = out.summary["tdr"]
    found = [f"{len(out.of('TdrDetected'))} timeout(s) detected"] if out.of("TdrDetected") else []
    if tdr["engine_resets"] or tdr["adapter_resets"]:
        found.append(f"{tdr['engine_resets']} engine and {tdr['adapter_resets']} adapter reset(s)")
    return found


def healthy(out: Outcome) -> list[str]:
    return everything_retired(out) + no_recovery(out)


def all_of(*checks: Callable[[Outcome], list[str]]) -> Callable[[Outcome], list[str]]:
    def run(out: Outcome) -> list[str]:
        found = []
        for check in checks:
            found += check(out)
        return found
    return run


def fences_in_order(out: Outcome) -> list[str]:
    """Every node's packets completed in their submission order (fences never go backwards)."""
    bad = []
    last: dict[int, int] = {}
    for e in out.of("DmaPacketStop"):
        if e["status"] != "Completed":
            continue
        node, fence = e["node"], e["fence"]
        if fence < last.get(node, 0):
            bad.append(f"node {node}: fence {fence} completed after fence {last[node]}")
        last[node] = max(last.get(node, 0), fence)
    return bad


def memory_is(check: Callable[[object], list[str]]) -> Callable[[Outcome], list[str]]:
    """Ground truth: what the GPU left in memory."""
    return lambda out: check(out.system)


# -- the cases -------------------------------------------------------------------------------------------
def _submission_cases() -> list[Case]:
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


def _queue_cases() -> list[Case]:
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


def _process_cases() -> list[Case]:
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


def _priority_cases() -> list[Case]:
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


def _fence_cases() -> list[Case]:
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


def _paging_cases() -> list[Case]:
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


def _flip_cases() -> list[Case]:
    def flips(interval: int, mode: str = "flip"):
        def build(d):
            return scenario(f"flip_{mode}_{interval}", [process("game", context("render", {
                "kind": "frame_loop", "fps": 100, "packets_per_frame": 1, "work": "2ms", "present_mode": mode,
                "sync_interval": interval, "count": 8}))], duration="1s")
        return build

    def on_vsync(interval: int):
        def check(out: Outcome) -> list[str]:
            src = out.summary["displays"][0]
            period = out.system.gpu.displays[0].period_ns
            bad = []
            if src["displayed"] == 0:
                bad.append("no frame was displayed")
            if interval:
                shown = []  # (time, address) of every change of what the display scans out
                for e in out.of("VSync"):
                    if e["t"] % period:
                        bad.append(f"a CRTC_VSYNC was reported at {e['t']} ns, off the display's refresh grid")
                        break
                    if not shown or shown[-1][1] != e["address"]:
                        shown.append((e["t"], e["address"]))
                for (t0, _), (t1, _) in zip(shown, shown[1:]):
                    if t1 - t0 < interval * period:
                        bad.append(f"the display changed at {t0} and again at {t1} ns: sooner than FlipInterval "
                                   f"{interval} allows ({interval * period} ns)")
                        break
            return bad
        return check

    cases = [Case("flips", "blt", "blt presents to the primary", flips(1, "blt"), all_of(healthy, on_vsync(0))),
             Case("flips", "composed", "composed presents (RedirectedPresent)", flips(1, "composed"),
                  all_of(healthy, on_vsync(0)))]
    for interval in (0, 1):
        cases.append(Case("flips", f"interval_{interval}", f"flips with FlipInterval {interval}", flips(interval),
                          all_of(healthy, on_vsync(interval))))
    for interval in (2, 3, 4):
        cases.append(Case("flips", f"interval_{interval}", f"flips with FlipInterval {interval}", flips(interval),
                          all_of(healthy, on_vsync(interval)), needs=("flip_interval",)))
    cases.append(Case("flips", "no_wait", "FlipWithNoWait flips", flips(1, "flip_no_wait"),
                      all_of(healthy, on_vsync(0)), needs=("flip_no_wait",)))

    # MMIO flips (FlipOnVSyncMmIo): the OS programs each flip with DxgkDdiSetVidPnSourceAddress; the
    # verifier judges every call (rules 83, 86) and that each flip for the next vsync is reported
    # with CRTC_VSYNC naming its address (rule 84).
    def mmio(immediate: bool):
        def check(out: Outcome) -> list[str]:
            calls = [e for e in out.of("DdiCall") if e["name"] == "DxgkDdiSetVidPnSourceAddress"]
            bad = []
            if not calls:
                return ["the OS made no MMIO flip (no DxgkDdiSetVidPnSourceAddress call)"]
            for e in calls:
                flags = e["args"]["Flags"]
                if (flags["FlipImmediate"], flags["FlipOnNextVSync"]) != ((1, 0) if immediate else (0, 1)):
                    bad.append(f"DxgkDdiSetVidPnSourceAddress at {e['t']} ns: Flags {flags}")
                    break
            # Each flip the driver accepted is displayed (the last one, programmed for a vsync after the
            # run's end, may still wait).
            accepted = sum(1 for e in out.of("MmioFlip") if e["status"] == 0)
            displayed = out.summary["displays"][0]["displayed"]
            if not 0 <= accepted - displayed <= (0 if immediate else 1):
                bad.append(f"the driver accepted {accepted} MMIO flips but {displayed} were displayed")
            return bad
        return check

    cases.append(Case("flips", "mmio_interval_1", "MMIO flips at the next vsync (FlipOnNextVSync)", flips(1),
                      all_of(healthy, on_vsync(1), mmio(False)), needs=("mmio_flips",)))
    cases.append(Case("flips", "mmio_immediate", "immediate MMIO flips (FlipImmediate)", flips(0),
                      all_of(healthy, on_vsync(0), mmio(True)), needs=("mmio_flips",)))

    # MMIO flips with FlipWithNoWait at 100 fps on a 60 Hz display: a newer flip replaces one not yet
    # on screen (the OS calls again with the newer address before the vsync), so every flip the driver
    # accepted is either displayed or replaced, and the display still changes at most once a vsync.
    def replaced(out: Outcome) -> list[str]:
        accepted = sum(1 for e in out.of("MmioFlip") if e["status"] == 0)
        gone = len(out.of("FlipReplaced"))
        displayed = out.summary["displays"][0]["displayed"]
        if not accepted:
            return ["the OS made no MMIO flip (no DxgkDdiSetVidPnSourceAddress call)"]
        if not 0 <= accepted - displayed - gone <= 1:
            return [f"the driver accepted {accepted} MMIO flips: {displayed} were displayed and {gone} replaced by a "
                    f"newer one, which leaves {accepted - displayed - gone} unaccounted for"]
        return []

    cases.append(Case("flips", "mmio_no_wait", "MMIO FlipWithNoWait flips faster than the display: newer replaces older",
                      flips(1, "flip_no_wait"), all_of(healthy, on_vsync(1), replaced),
                      needs=("mmio_flips", "flip_no_wait")))
    cases.append(Case("flips", "hw_flip_queue", "the hardware flip queue: interval-1 flips queued ahead at 100 fps, "
                      "then interval-0 flips at 250 fps replacing queued ones (rule 91)", _hw_flip_queue,
                      all_of(healthy, _queued_flips_resolved), needs=("hardware_scheduling", "hw_flip_queue")))
    return cases


def _hw_flip_queue(d):
    """Under hardware scheduling: a video at 100 fps with sync interval 1 on the 60 Hz display (the
    OS queues flips ahead with their target times), then a game at 250 fps with sync interval 0 (each
    newer flip cancels the queued one not yet shown)."""
    loop = {"kind": "frame_loop", "packets_per_frame": 1, "present_mode": "flip"}
    return scenario("hw_flip_queue", [
        process("video", context("render", dict(loop, fps=100, work="2ms", sync_interval=1, count=10))),
        process("game", context("render", dict(loop, fps=250, work="500us", sync_interval=0, count=20,
                                               start="250ms"))),
    ], adapter={"scheduling": "hardware"}, duration="600ms")


def _queued_flips_resolved(out: Outcome) -> list[str]:
    """Every flip the driver queued is shown or dropped by the end, each shown one at a vsync no earlier
    than its TargetFlipTime (the log's time: QPC ticks, 100 ns), the interval-1 flips all shown, in
    order, a refresh apart at least."""
    period = out.system.gpu.displays[0].period_ns
    names = {e["context"]: e["name"] for e in out.of("ContextCreate")}
    queued = {(e["context"], e["seq"]): e for e in out.of("HwFlip") if e["status"] == 0}
    if not queued:
        return ["the OS queued no flip in the hardware flip queue"]
    bad = []
    shown = {(e["context"], e["seq"]): e["displayed"] for e in out.of("Displayed")}
    dropped = {(e["context"], e["seq"]) for e in out.of("Dropped")}
    for key, e in queued.items():
        if key not in shown and key not in dropped:
            bad.append(f"PresentId {e['present_id']} ({names[key[0]]}, present {key[1]}) was queued but never "
                       f"shown or dropped")
        elif key in shown:
            t = shown[key]
            if -t % period >= 100:
                bad.append(f"PresentId {e['present_id']} is shown at {t} ns, off the display's vsyncs")
            if t < e["target_ns"]:
                bad.append(f"PresentId {e['present_id']} is shown at {t} ns, before its TargetFlipTime "
                           f"({e['target_ns']} ns)")
    video = sorted((e["present_id"], shown.get(k)) for k, e in queued.items() if names[k[0]] == "video/render")
    if any(t is None for _, t in video):
        bad.append("a sync-interval-1 flip was dropped")
    times = [t for _, t in video if t is not None]
    bad += [f"sync-interval-1 flips shown at {a} and {b} ns: less than a refresh apart"
            for a, b in zip(times, times[1:]) if b - a < period - 100][:1]
    return bad[:3]


def _interrupt_cases() -> list[Case]:
    """DxgkDdiControlInterrupt asked for the interrupt types Windows never asks about (rule 49): the
    OS model asks each one TRUE then FALSE mid-work (:func:`wddmsim.dxgkrnl.controlinterrupt.ask_other_types`);
    the verifier judges every answer, and the work goes on as if nothing was asked."""
    ask_at = 1_500 * US

    def work(d):
        return scenario("control_interrupt", [process("app", context("c", script(("0ns", "1ms", 3), ("5ms", "1ms", 2))))])

    def ask(system) -> None:
        from ..dxgkrnl.controlinterrupt import ask_other_types
        from ..sim import PASSIVE

        system.sim.at(ask_at, ask_other_types, system.adapter, irql=PASSIVE)

    def not_implemented(out: Outcome) -> list[str]:
        from ..dxgkrnl.controlinterrupt import ENTRY, other_types
        from ..ddi.enums import DXGK_INTERRUPT_TYPE

        calls = [e for e in out.of("DdiCall") if e["name"] == ENTRY
                 and e["args"].get("InterruptType") != "DXGK_INTERRUPT_CRTC_VSYNC"]
        want = [(DXGK_INTERRUPT_TYPE(t).name, enable) for t in other_types(out.system.adapter.version)
                for enable in (1, 0)]
        asked = [(e["args"]["InterruptType"], e["args"]["EnableInterrupt"]) for e in calls]
        bad = [] if asked == want else [f"the OS asked {len(asked)} DxgkDdiControlInterrupt calls for other "
                                        f"interrupt types, not the {len(want)} expected"]
        bad += [f"DxgkDdiControlInterrupt({e['args']['InterruptType']}) answered {e['status']}, not "
                f"STATUS_NOT_IMPLEMENTED" for e in calls if e["status"] != "STATUS_NOT_IMPLEMENTED"]
        return bad

    # Multiplane overlays (rule 50): flips on the primary; whatever per-plane vsyncs the driver
    # reports (CRTC_VSYNC_WITH_MULTIPLANE_OVERLAY2/3) the OS reads and judges against MaxOverlayPlanes.
    def planes(d):
        return scenario("overlay_vsync", [process("game", context("render", {
            "kind": "frame_loop", "fps": 60, "packets_per_frame": 1, "work": "2ms", "present_mode": "flip",
            "sync_interval": 1, "count": 6}))], duration="200ms")

    def planes_in_range(out: Outcome) -> list[str]:
        caps = out.system.adapter.caps
        return [f"a plane vsync named LayerIndex {e['layer']} at {e['t']} ns; MaxOverlayPlanes is "
                f"{caps.MaxOverlayPlanes}" for e in out.of("PlaneVSync") if e["layer"] >= caps.MaxOverlayPlanes][:1]

    return [Case("interrupts", "control_interrupt", "DxgkDdiControlInterrupt asked for every interrupt type but "
                 "CRTC_VSYNC, mid-work: STATUS_NOT_IMPLEMENTED", work, all_of(healthy, not_implemented),
                 prepare=ask),
            Case("interrupts", "overlay_vsync", "flips with per-plane vsync reports: every LayerIndex below "
                 "MaxOverlayPlanes", planes, all_of(healthy, planes_in_range), needs=("overlays",))]


def _null_rendering_cases() -> list[Case]:
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


def _preemption_cases() -> list[Case]:
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


def _tdr_cases() -> list[Case]:
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


def _fault_cases() -> list[Case]:
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


def _gpu_va_cases() -> list[Case]:
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


def _hardware_cases() -> list[Case]:
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


#: Every case, in the order the table lists them.
CASES: list[Case] = (_submission_cases() + _queue_cases() + _process_cases() + _priority_cases() + _fence_cases()
                     + _paging_cases() + _flip_cases() + _interrupt_cases() + _null_rendering_cases() + _preemption_cases()
                     + _tdr_cases() + _fault_cases() + _gpu_va_cases() + _hardware_cases())

#: The areas, in order.
AREAS: tuple[str, ...] = tuple(dict.fromkeys(c.area for c in CASES))

_ids = [c.id for c in CASES]
assert len(_ids) == len(set(_ids)), "case ids are unique"
del _ids
