"""The frame queue of a presenting application (DXGI's maximum frame latency,
``IDXGIDevice1::SetMaximumFrameLatency``): at most ``max_frame_latency`` frames are queued, so with
a maximum of 3 the fourth present is the first that blocks, until the oldest queued frame leaves
the queue; and it blocks inside the present call, where PresentMon's MsInPresentAPI sees it.
Exact virtual times, zero CPU costs. Also ``fps_changes``, the frame loop's later target rates."""

from __future__ import annotations

from wddmsim.scenario import scenario_from_dict
from wddmsim.runner.system import System
from wddmsim.trace import ListSink
from wddmsim.trace.presentmon import present_rows

ZERO = {"render": 0, "patch": 0, "submit": 0, "isr": 0, "dpc": 0, "present": 0}
MS = 1_000_000
BLT = 4_096  # the 128x128x4-byte blt of a present on the default engine, ns


def run(*, latency=3, present=True, count=6, mode="blt"):
    """A game that wants 1000 fps (a frame slot every 1 ms) but renders 10 ms frames: the GPU is the
    bottleneck and the frame queue fills."""
    sc = scenario_from_dict({
        "name": "latency", "duration": "200ms",
        "adapter": {"cpu_cost": ZERO, "nodes": [{"name": "3D", "engine": "3d", "command_cost": 0}]},
        "process": [{"name": "game", "context": [{"name": "c", "node": "3D", "workload": {
            "kind": "frame_loop", "fps": 1000, "work": "10ms", "present_mode": mode, "sync_interval": 0,
            "max_frame_latency": latency, "count": count, "present": present}}]}],
    }, "<test>")
    trace = ListSink()
    system = System(sc, trace=trace)
    r = system.run()
    assert r.bugcheck is None and r.summary["violations"] == []
    return trace


def test_the_fourth_present_blocks_until_the_first_frame_leaves_the_queue():
    trace = run()
    calls = [(e["cpu_start"], e["t"]) for e in trace.of("Present")]
    # Frame k (k = 1..6) is a 10 ms render and a 4.096 us blt. Frames 1-3 present at 0, 1, 2 ms and
    # return at once; frame 4's present begins at 3 ms with three frames queued and returns when
    # frame 1's present retires (10 ms + one blt); frames 5 and 6 each wait for the next one.
    assert calls == [(0, 0), (1 * MS, 1 * MS), (2 * MS, 2 * MS), (3 * MS, 10 * MS + BLT),
                     (10 * MS + BLT, 20 * MS + 2 * BLT), (20 * MS + 2 * BLT, 30 * MS + 3 * BLT)]
    retired = {e["seq"]: e["t"] for e in trace.of("QueuePacketStop")}
    assert [retired[2], retired[4]] == [calls[3][1], calls[4][1]]
    # Never more than three presents queued and not retired.
    queued = most = 0
    for e in trace.events:
        if e["event"] == "Present":
            queued += 1
            most = max(most, queued)
        elif e["event"] == "QueuePacketStop" and e["kind"] == "present":
            queued -= 1
    assert most == 3


def test_the_wait_shows_in_ms_in_present_api():
    rows = present_rows(run().events)
    assert [row["MsInPresentAPI"] for row in rows] == [0.0, 0.0, 0.0, 7.004096, 10.004096, 10.004096]
    assert [row["MsBetweenPresents"] for row in rows] == ["NA", 1.0, 1.0, 1.0, 7.004096, 10.004096]
    # The next frame's CPU work starts when the blocked present returns.
    assert [row["CPUStartTime"] for row in rows][3:] == [2.0, 10.004096, 20.008192]


def test_a_maximum_of_one_lets_one_frame_queue():
    trace = run(latency=1, count=3)
    calls = [(e["cpu_start"], e["t"]) for e in trace.of("Present")]
    # Frame 2's present waits for frame 1's, frame 3's for frame 2's.
    assert calls == [(0, 0), (1 * MS, 10 * MS + BLT), (10 * MS + BLT, 20 * MS + 2 * BLT)]


def test_without_a_present_the_frame_ends_with_the_same_wait():
    # (Unchanged by the move of the wait into the present: a frame without a present waits at its
    # end, where the present would be, which is where the next frame used to wait before starting.)
    trace = run(present=False, count=5)
    starts = [e["t"] for e in trace.of("QueuePacketStart")]
    # Frames 1-3 queue at 0, 1, 2 ms; frame 4 queues at 3 ms and then waits for frame 1 to retire
    # (10 ms) before its frame ends; frame 5 starts then.
    assert starts == [0, 1 * MS, 2 * MS, 3 * MS, 10 * MS]


# -- fps_changes: a frame loop whose target rate changes ---------------------------------------------------------
def test_fps_changes_space_the_frame_slots_anew():
    sc = scenario_from_dict({
        "name": "rates", "duration": "200ms",
        "adapter": {"cpu_cost": ZERO, "nodes": [{"name": "3D", "engine": "3d", "command_cost": 0}]},
        "process": [{"name": "game", "context": [{"name": "c", "node": "3D", "workload": {
            "kind": "frame_loop", "fps": 100, "work": "1ms", "count": 8, "start": "5ms",
            "fps_changes": [{"at": "30ms", "fps": 50}, {"at": "70ms", "fps": 200}]}}]}],
    }, "<test>")
    trace = ListSink()
    System(sc, trace=trace).run()
    # Slots at 5, 15, 25, 35 ms (100 fps until 5 + 30 ms), then 55, 75 ms (50 fps until 5 + 70 ms),
    # then every 5 ms: the gap after a slot is that of the rate in effect at the slot.
    assert [e["cpu_start"] for e in trace.of("Present")] == [t * MS for t in (5, 15, 25, 35, 55, 75, 80, 85)]


def test_fps_changes_must_be_in_order():
    import pytest

    from wddmsim.scenario import ScenarioError, parse_scenario

    text = """
name = "bad"
duration = "1s"
[[process]]
name = "g"
[[process.context]]
name = "c"
node = "3D"
workload = { kind = "frame_loop", fps = 100, work = "1ms", fps_changes = [{ at = "100ms", fps = 50 }, { at = "50ms", fps = 30 }, { at = "200ms", fps = 0 }] }
"""
    with pytest.raises(ScenarioError) as e:
        parse_scenario(text, "s.toml")
    assert e.value.problems == [
        "s.toml: process[0].context[0].workload.fps_changes[2].fps: must be greater than 0, got 0 (range: above 0 .. 1000; frames per second; no display and no frame limiter goes past 1000)",
    ]
    with pytest.raises(ScenarioError) as e:
        parse_scenario(text.replace(', { at = "200ms", fps = 0 }', ""), "s.toml")
    assert e.value.problems == [
        "s.toml: process[0].context[0].workload.fps_changes: [1].at must be later than [0].at (100ms), got 50ms",
    ]
