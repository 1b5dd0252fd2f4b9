"""MMIO flips (issue 27; Microsoft's DXGK_FLIPCAPS page, FlipOnVSyncMmIo; DxgkDdiSetVidPnSourceAddress,
DXGKARG_SETVIDPNSOURCEADDRESS and DXGK_SETVIDPNSOURCEADDRESS_FLAGS; "Hardware flip queue", its
pre-WDDM 3.0 model): the reference driver declares FlipOnVSyncMmIo, so DxgkDdiPresent gets no DMA
buffer for a flip, the flip's packet is an empty submission that orders it after the context's
rendering, and the OS programs it with DxgkDdiSetVidPnSourceAddress at device IRQL when that
completes: FlipOnNextVSync for an interval of 1..4 (shown at the first vsync after the call, the call
made no sooner than N - 1 periods after the previous flip's vsync), FlipImmediate for interval 0
(shown when the call returns). A no-wait flip replaces the queued one not yet on screen (reported
dropped). Exact virtual times on a 60 Hz grid (period 16 666 667 ns): the application presents at
each frame's start, its 1 ms of work completes 1 ms later, and that is when the OS programs the flip."""

from __future__ import annotations

import pytest

from wddmsim.scenario import scenario_from_dict
from wddmsim.runner.system import System
from wddmsim.trace import ListSink

ZERO = {"render": 0, "patch": 0, "submit": 0, "isr": 0, "dpc": 0, "present": 0}
MS = 1_000_000
V = 16_666_667  # one refresh at 60 Hz, ns


def run(mode, fps, *, interval=1, count=12, max_queued=1, driver=None):
    sc = scenario_from_dict({
        "name": "mmio", "duration": "400ms", **({"driver": driver} if driver else {}),
        "adapter": {"cpu_cost": ZERO, "max_queued_flips": max_queued, "displays": [60.0],
                    "nodes": [{"name": "3D", "engine": "3d", "command_cost": 0}]},
        "process": [{"name": "game", "context": [{"name": "c", "node": "3D", "workload": {
            "kind": "frame_loop", "fps": fps, "work": "1ms", "present_mode": mode, "sync_interval": interval,
            "count": count}}]}],
    }, "<test>")
    trace = ListSink()
    system = System(sc, trace=trace)
    r = system.run()
    assert r.bugcheck is None and r.summary["violations"] == []
    return system, trace, r


def shown(trace):
    return [(e["seq"], e["displayed"]) for e in trace.of("Displayed")]


def calls(trace):
    return [e for e in trace.of("DdiCall") if e["name"] == "DxgkDdiSetVidPnSourceAddress"]


@pytest.mark.rule(84)
def test_interval_1_each_flip_is_programmed_when_its_rendering_is_done_and_shown_at_the_next_vsync():
    system, trace, r = run("flip", 50)
    # Frame k is presented at 20k ms, its rendering done at 20k + 1 ms; the OS programs the flip then
    # and the display latches it at the first vsync after: 6V and 12V show nothing new.
    assert [e["t"] for e in calls(trace)] == [20 * k * MS + MS for k in range(12)]
    assert shown(trace) == [(2 * k + 2, t * V) for k, t in enumerate((1, 2, 3, 4, 5, 7, 8, 9, 10, 11, 13, 14))]
    for e in calls(trace):
        assert e["irql"] == "DIRQL" and e["status"] == "STATUS_SUCCESS"
        assert (e["args"]["Flags"]["FlipOnNextVSync"], e["args"]["Flags"]["FlipImmediate"]) == (1, 0)
    # The driver reported each with CRTC_VSYNC naming the flip's surface at that vsync.
    flips = {e["seq"]: e["surface"] for e in trace.of("MmioFlip")}
    vsyncs = {e["t"]: e["address"] for e in trace.of("VSync")}
    assert all(vsyncs[t] == flips[seq] for seq, t in shown(trace))
    # No DMA buffer for the flip, and nothing of a flip in its (empty) submission.
    presents = [e["args"] for e in trace.of("DdiCall") if e["name"] == "DxgkDdiPresent"]
    assert presents and all(a["pDmaBuffer"] == 0 and a["Flags"]["Flip"] == 1 for a in presents)
    subs = [e["args"] for e in trace.of("DdiCall") if e["name"] == "DxgkDdiSubmitCommand"
            and e["args"]["Flags"]["Present"]]
    assert len(subs) == 12
    assert all(a["DmaBufferSubmissionStartOffset"] == a["DmaBufferSubmissionEndOffset"]
               and a["Flags"]["Flip"] == 0 and a["Flags"]["FlipWithNoWait"] == 0 for a in subs)
    assert len(trace.of("Flip")) == 12  # DxgKrnl's Flip event still marks each flip entering the flip queue
    assert system.adapter.vidsch.presents.mmio_calls == 12


def test_at_100_fps_the_next_flip_is_programmed_at_the_vsync_that_shows_the_previous_one():
    system, trace, r = run("flip", 100)
    # One programmed flip per source at a time: the next is programmed in the vsync's processing.
    assert [e["t"] for e in calls(trace)][:4] == [MS, V, 2 * V, 3 * V]
    assert [t for _, t in shown(trace)] == [k * V for k in range(1, 13)]


def test_interval_2_each_flip_stays_two_refreshes():
    system, trace, r = run("flip", 100, interval=2, count=4)
    # The next call waits for one period after the previous flip's vsync: it latches a period later.
    assert [e["t"] for e in calls(trace)] == [MS, 2 * V, 4 * V, 6 * V]
    assert [t for _, t in shown(trace)] == [V, 3 * V, 5 * V, 7 * V]


def test_interval_0_is_an_immediate_mmio_flip_shown_when_the_call_returns():
    system, trace, r = run("flip", 50, interval=0)
    assert [(e["t"], e["args"]["Flags"]["FlipImmediate"], e["args"]["Flags"]["FlipOnNextVSync"])
            for e in calls(trace)] == [(20 * k * MS + MS, 1, 0) for k in range(12)]
    assert shown(trace) == [(2 * k + 2, 20 * k * MS + MS) for k in range(12)]
    assert r.summary["displays"][0]["dropped"] == 0


def test_a_no_wait_flip_replaces_the_queued_one_not_yet_on_screen():
    system, trace, r = run("flip_no_wait", 200, max_queued=3)
    # A frame every 5 ms, done 1 ms later: the OS programs it, then the next one overwrites it (the
    # pending-address register keeps the latest) until a vsync shows the newest.
    assert [(e["t"], e["seq"], e["by_seq"]) for e in trace.of("FlipReplaced")] == [
        (6 * MS, 2, 4), (11 * MS, 4, 6), (16 * MS, 6, 8),
        (26 * MS, 10, 12), (31 * MS, 12, 14),
        (41 * MS, 16, 18), (46 * MS, 18, 20),
        (56 * MS, 22, 24)]
    assert [(e["t"], e["seq"]) for e in trace.of("Dropped")] == [
        (t, seq) for t, seq, _ in [(6 * MS, 2, 4), (11 * MS, 4, 6), (16 * MS, 6, 8), (26 * MS, 10, 12),
                                   (31 * MS, 12, 14), (41 * MS, 16, 18), (46 * MS, 18, 20), (56 * MS, 22, 24)]]
    assert shown(trace) == [(8, V), (14, 2 * V), (20, 3 * V), (24, 4 * V)]
    d = r.summary["displays"][0]
    assert (d["presents"], d["displayed"], d["dropped"]) == (12, 4, 8)
    assert system.adapter.vidsch.presents.sources[0].replaced == 8


def test_with_interval_1_and_no_no_wait_flips_are_never_replaced():
    system, trace, r = run("flip", 200, max_queued=3, count=8)
    assert not trace.of("FlipReplaced") and not trace.of("Dropped")
    # In order, one per refresh.
    assert shown(trace) == [(2 * k + 2, (k + 1) * V) for k in range(8)]


@pytest.mark.rule(83, 85)
def test_every_mmio_flip_names_its_own_context_alone_rule_83():
    system, trace, r = run("flip", 50, count=4)
    assert [e["args"]["ContextCount"] for e in calls(trace)] == [1] * 4
    # No stereo flag either (rule 85 judges every call; the OS never asks for stereo).
    assert all(not any(e["args"]["Flags"][f] for f in ("FlipStereo", "FlipStereoTemporaryMono", "FlipStereoPreferRight"))
               for e in calls(trace))
    ctx = system.adapter.contexts[0] if isinstance(system.adapter.contexts, list) else \
        next(iter(system.adapter.contexts.values()))
    args = system.adapter._svsa_args
    assert args.Context[0] == ctx.hDdi and args.ContextCount == 1
    assert {83, 84, 86} <= system.adapter.verifier.exercised()


def test_a_driver_without_flip_on_vsync_mmio_keeps_dma_buffer_flips():
    system, trace, r = run("flip", 50, count=4, driver={"mmio_flips": False, "preemption_aware": False})
    assert not calls(trace) and len(trace.of("Flip")) == 4
    assert [t for _, t in shown(trace)] == [V, 2 * V, 3 * V, 4 * V]


def test_an_immediate_flip_replaces_a_programmed_one_before_its_vsync():
    """Two swap chains on one source: a's flip (interval 1) is programmed at 1 ms for the vsync at V;
    b's immediate flip at 6 ms is shown at once and a's is dropped, never shown."""
    sc = scenario_from_dict({
        "name": "mix", "duration": "100ms",
        "adapter": {"cpu_cost": ZERO, "max_queued_flips": 2, "displays": [60.0],
                    "nodes": [{"name": "3D", "engine": "3d", "command_cost": 0}]},
        "process": [
            {"name": "a", "context": [{"name": "c", "node": "3D", "workload": {
                "kind": "frame_loop", "fps": 50, "work": "1ms", "present_mode": "flip", "sync_interval": 1,
                "count": 2}}]},
            {"name": "b", "context": [{"name": "c", "node": "3D", "workload": {
                "kind": "frame_loop", "fps": 50, "start": "5ms", "work": "1ms", "present_mode": "flip",
                "sync_interval": 0, "count": 1}}]}],
    }, "<test>")
    trace = ListSink()
    system = System(sc, trace=trace)
    r = system.run()
    assert r.bugcheck is None and r.summary["violations"] == []
    a, b = (c.handle for c in system.adapter.contexts)
    assert [(e["t"], e["args"]["Flags"]["FlipImmediate"]) for e in calls(trace)] == [(MS, 0), (6 * MS, 1), (21 * MS, 0)]
    assert [(e["t"], e["context"], e["seq"], e["by_context"], e["by_seq"]) for e in trace.of("FlipReplaced")] == [
        (6 * MS, a, 2, b, 2)]
    assert [(e["t"], e["context"], e["seq"]) for e in trace.of("Dropped")] == [(6 * MS, a, 2)]
    assert [(e["context"], e["seq"], e["displayed"]) for e in trace.of("Displayed")] == [(b, 2, 6 * MS), (a, 4, 2 * V)]


def test_the_perfetto_flip_queue_lane_marks_each_mmio_flip():
    from wddmsim.trace.chrome import chrome_trace

    system, trace, r = run("flip", 50, count=4)
    out = chrome_trace(trace.events)
    events = out["traceEvents"] if isinstance(out, dict) else out
    marks = [e for e in events if e.get("cat") == "mmio_flip"]
    assert [(e["name"], e["ts"]) for e in marks] == [
        (f"SetVidPnSourceAddress next vsync #{2 * k + 2}", (20 * k + 1) * 1000) for k in range(4)]
    lanes = {e["args"]["name"] for e in events if e.get("ph") == "M" and e.get("name") == "thread_name"}
    assert "VidPn source 0 flip queue" in lanes
