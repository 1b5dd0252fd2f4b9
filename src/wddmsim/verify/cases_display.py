"""The suite's cases about the display and interrupts: presents and flips (blt, composed, flip
intervals, FlipWithNoWait, MMIO flips, the hardware flip queue) and DxgkDdiControlInterrupt with
the overlay planes' vsyncs (docs/verify.md, "The cases")."""

from __future__ import annotations

from .kit import US, Case, Outcome, all_of, context, healthy, process, scenario, script


def flip_cases() -> list[Case]:
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


def interrupt_cases() -> list[Case]:
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
