"""The compositor's own cadence, in exact virtual time: dwm.exe presents when something it composes
changed (a window's new frame, a desktop update), at most once a vsync, never on a vsync where
nothing changed. Zero CPU and command costs, a 60 Hz display (vsyncs every 16 666 667 ns); the
compositor's composition costs 100 us of CPU after the vsync and 1 ms of GPU time."""

from __future__ import annotations

from wddmsim.replay.compare import presents_per_second
from wddmsim.replay.run import model_frames
from wddmsim.scenario import scenario_from_dict
from wddmsim.runner.system import System
from wddmsim.trace import ListSink

ZERO = {"render": 0, "patch": 0, "submit": 0, "isr": 0, "dpc": 0, "present": 0}
MS = 1_000_000
V = 16_666_667  # the refresh period
DWM = {"pid": 1268, "address": "0x224B280A1C0", "cpu": "100us", "work": "1ms"}
IDLE = {"name": "idle.exe", "context": [{"name": "c", "node": "3D", "workload": {
    "kind": "compute_batch", "work": "1us", "count": 1}}]}


def run(processes, compositor, duration="1050ms"):
    sc = scenario_from_dict({"name": "cadence", "duration": duration,
                             "adapter": {"cpu_cost": ZERO, "displays": [60.0],
                                         "nodes": [{"name": "3D", "engine": "3d", "command_cost": 0}]},
                             "compositor": [compositor], "process": processes}, "<test>")
    trace = ListSink()
    r = System(sc, trace=trace).run()
    assert r.bugcheck is None and r.summary["violations"] == []
    return trace


def window(fps, count, sync_interval=1):
    return {"name": "win.exe", "pid": 4000, "context": [{"name": "c", "node": "3D", "workload": {
        "kind": "swap_chain", "swap_effect": "flip", "sync_interval": sync_interval, "fps": fps, "cpu": "1ms", "work": "1ms",
        "count": count}}]}


def dwm_presents(trace):
    dwm = next(e["process"] for e in trace.of("ProcessCreate") if e["name"] == "dwm.exe")
    return [e for e in trace.of("Present") if e["process"] == dwm]


def test_a_window_at_30_fps_on_a_60_hz_display_makes_the_compositor_present_30_times_a_second():
    trace = run([window(30, 30)], DWM)
    win = [e for e in trace.of("Present") if e not in dwm_presents(trace)]
    # Frame k starts at 1 ms + k * 33 333 333 ns, presents 1 ms later; its 1 ms of GPU work is
    # ready about 3 ms after its start, between vsyncs 2k and 2k+1.
    assert [e["cpu_start"] for e in win] == [MS + k * 33_333_333 for k in range(30)]
    # The compositor composes it at the vsync after (2k+1), 100 us of CPU later, and on no other
    # vsync: 30 presents, one every other refresh.
    assert [e["cpu_start"] for e in dwm_presents(trace)] == [(2 * k + 1) * V + 100_000 for k in range(30)]
    shown = {(e["context"], e["seq"]): e["displayed"] for e in trace.of("Displayed")}
    assert [shown[(e["context"], e["seq"])] for e in win] == [(2 * k + 2) * V for k in range(30)]
    # PresentMon's view: every dwm.exe present 2 refreshes (33.33 ms) after the one before, 30 a
    # second.
    dwm = [f for f in model_frames(trace.events, 0) if f.application == "dwm.exe"]
    assert len(dwm) == 30 and {f.between_presents for f in dwm[1:]} == {2 * V}
    assert presents_per_second(dwm) == 30.0


def test_an_idle_desktop_presents_nothing():
    trace = run([IDLE], DWM)
    assert dwm_presents(trace) == []
    assert [e for e in trace.of("Displayed")] == []


def test_a_desktop_update_is_composed_once_at_the_vsync_after_it():
    trace = run([IDLE], dict(DWM, update=[{"at": "20ms"}, {"at": "25ms"}, {"at": "500ms"}]))
    # 20 and 25 ms fall between vsyncs 1 and 2: one composition at vsync 2; 500 ms at vsync 30.
    assert [e["cpu_start"] for e in dwm_presents(trace)] == [2 * V + 100_000, 30 * V + 100_000]


def test_a_window_faster_than_the_display_gets_one_composition_a_vsync():
    # 100 fps on 60 Hz with sync interval 0: a new frame before every vsync (the older ones
    # replaced), never two compositions in one.
    trace = run([window(100, 50, sync_interval=0)], DWM, duration="600ms")
    starts = [e["cpu_start"] for e in dwm_presents(trace)]
    assert all((t - 100_000) % V == 0 for t in starts)
    assert len(set(starts)) == len(starts)
    vsyncs = [(t - 100_000) // V for t in starts]
    # frames from 1 ms to 491 ms (each ready 2 ms after its start): the vsyncs 1 to 30, each once
    assert vsyncs == list(range(1, 31))


def test_window_frames_and_desktop_updates_on_one_vsync_make_one_present():
    trace = run([window(30, 3)], dict(DWM, update=[{"at": "10ms"}, {"at": "200ms"}]))
    # The window's frames are composed at vsyncs 1, 3 and 5; the update at 10 ms falls before
    # vsync 1 (one composition for both), the one at 200 ms at vsync 12.
    assert [(e["cpu_start"] - 100_000) // V for e in dwm_presents(trace)] == [1, 3, 5, 12]
