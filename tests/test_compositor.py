"""The desktop compositor (dwm.exe) and the present modes PresentMon reports, in exact virtual time
on the event log: a D3D9 window's copy (its present waits for the vertical blank; the compositor
takes what was ready at the vsync it wakes at, shows it at the next), a flip-model window composed
then flipping independently once the compositor steps aside, its return to composition when
another window presents, an exclusive swap chain owning the display, frames replaced before a
composition, and windowed presents without a compositor. Zero CPU costs, zero command costs, a
60 Hz display (vsyncs every 16 666 667 ns)."""

from __future__ import annotations

import pytest

from wddmsim.scenario import ScenarioError, scenario_from_dict
from wddmsim.runner.system import System
from wddmsim.trace import ListSink
from wddmsim.trace.presentmon import present_rows

ZERO = {"render": 0, "patch": 0, "submit": 0, "isr": 0, "dpc": 0, "present": 0}
MS = 1_000_000
V = 16_666_667  # the refresh period


def vsync(k: int) -> int:
    return k * V


def run(processes, compositor=None, duration="300ms"):
    data = {"name": "desk", "duration": duration,
            "adapter": {"cpu_cost": ZERO, "displays": [60.0],
                        "nodes": [{"name": "3D", "engine": "3d", "command_cost": 0}]},
            "process": processes}
    if compositor is not None:
        data["compositor"] = compositor
    sc = scenario_from_dict(data, "<test>")
    trace = ListSink()
    r = System(sc, trace=trace).run()
    assert r.bugcheck is None and r.summary["violations"] == []
    return trace


def app(name, workload, pid=None):
    p = {"name": name, "context": [{"name": "c", "node": "3D", "workload": {"kind": "swap_chain", **workload}}]}
    if pid is not None:
        p["pid"] = pid
    return p


def presents(trace, process=None):
    pids = {e["process"]: e["name"] for e in trace.of("ProcessCreate")}
    return [e for e in trace.of("Present") if process is None or pids[e["process"]] == process]


def shown(trace):
    return {(e["context"], e["seq"]): e["displayed"] for e in trace.of("Displayed")}


DWM = {"pid": 1268, "address": "0x224B280A1C0", "cpu": "100us", "work": "1ms"}


def test_a_d3d9_copy_waits_for_the_vblank_and_reaches_the_screen_two_vsyncs_later():
    trace = run([app("d3d9.exe", {"runtime": "D3D9", "swap_effect": "copy", "sync_interval": -1,
                                  "frames": [{"start": "1ms", "gpu": "500us"}]}, pid=9620)], [DWM])
    (p,) = presents(trace, "d3d9.exe")
    # The call begins at 1 ms, waits for the vertical blank (vsync 1), then submits the frame's
    # rendering and the copy into the redirection surface (RedirectedPresent).
    assert (p["mode"], p["cpu_start"], p["t"]) == ("composed", 1 * MS, vsync(1))
    # The copy is ready half a millisecond after vsync 1: the compositor, which woke at vsync 1,
    # takes it at vsync 2, composes (100 us CPU, 1 ms GPU) and flips; the flip latches at vsync 3.
    (dwm,) = presents(trace, "dwm.exe")
    assert (dwm["mode"], dwm["cpu_start"], dwm["interval"]) == ("flip_no_wait", vsync(2) + 100_000, 1)
    s = shown(trace)
    assert s[(p["context"], p["seq"])] == vsync(3)
    assert s[(dwm["context"], dwm["seq"])] == vsync(3)
    rows = {r["Application"]: r for r in present_rows(trace.events)}
    assert rows["d3d9.exe"]["PresentMode"] == "Composed: Copy with GPU GDI"
    assert rows["d3d9.exe"]["ProcessID"] == 9620
    assert rows["d3d9.exe"]["PresentRuntime"] == "D3D9" and rows["d3d9.exe"]["SyncInterval"] == -1
    assert rows["d3d9.exe"]["MsUntilDisplayed"] == round((vsync(3) - MS) / 1e6, 6)
    assert rows["dwm.exe"]["PresentMode"] == "Hardware: Legacy Flip"
    assert rows["dwm.exe"]["SwapChainAddress"] == "0x224B280A1C0" and rows["dwm.exe"]["ProcessID"] == 1268


def test_a_full_screen_flip_model_window_is_composed_twice_then_flips_independently():
    frames = [{"start": f"{2 + 17 * k}ms", "gpu": "1ms"} for k in range(6)]
    trace = run([app("game.exe", {"swap_effect": "flip", "fullscreen": True, "sync_interval": 0,
                                  "allows_tearing": True, "frames": frames})], [DWM])
    modes = [e["mode"] for e in presents(trace, "game.exe")]
    assert modes == ["composed_flip", "composed_flip"] + ["independent_flip"] * 4
    # The compositor composed the two frames and nothing after: it stepped aside.
    assert len(presents(trace, "dwm.exe")) == 2
    rows = [r for r in present_rows(trace.events) if r["Application"] == "game.exe"]
    assert [r["PresentMode"] for r in rows] == ["Composed: Flip"] * 2 + ["Hardware: Independent Flip"] * 4
    # Independent flips with sync interval 0 and tearing allowed are immediate: shown when their
    # packet completes, 1 ms (its rendering) after the present, and PresentMon sees tearing. The
    # first (36 ms) waits behind the compositor's last flip, which latches at vsync 3: flips
    # latch in order.
    assert [r["MsUntilDisplayed"] for r in rows[2:]] == [round((vsync(3) - 36 * MS) / 1e6, 6), 1.0, 1.0, 1.0]
    assert [r["AllowsTearing"] for r in rows] == [0, 0, 1, 1, 1, 1]


def test_another_window_presenting_ends_the_independent_flip():
    game = [{"start": f"{2 + 17 * k}ms", "gpu": "1ms"} for k in range(8)]
    trace = run([app("game.exe", {"swap_effect": "flip", "fullscreen": True, "sync_interval": 1, "frames": game}),
                 app("popup.exe", {"swap_effect": "flip", "sync_interval": 1,
                                   "frames": [{"start": "80ms", "gpu": "100us"}]})], [DWM])
    modes = [e["mode"] for e in presents(trace, "game.exe")]
    # Frames 3 and 4 (at 36 and 53 ms) flip independently; the popup's frame (80 ms) is composed
    # at vsync 5 (83.3 ms), which ends it: frame 6 (87 ms) on is composed again, and after two
    # compositions alone the game flips independently once more.
    assert modes[:5] == ["composed_flip", "composed_flip", "independent_flip", "independent_flip", "independent_flip"]
    assert modes[5] == "composed_flip"
    assert modes[-1] == "independent_flip"


def test_an_exclusive_swap_chain_owns_the_display():
    excl = [{"start": f"{5 + 17 * k}ms", "gpu": "1ms"} for k in range(4)]
    comp = dict(DWM, update=[{"at": "20ms"}, {"at": "40ms"}, {"at": "120ms"}])
    trace = run([app("excl.exe", {"runtime": "Other", "swap_effect": "exclusive", "sync_interval": 1,
                                  "frames": excl})], [comp])
    ps = presents(trace, "excl.exe")
    assert [e["mode"] for e in ps] == ["flip"] * 4
    # A legacy flip waits for the vertical retrace after its present call (D3DPRESENT_INTERVAL_ONE):
    # the frame presented at 5 ms is made at vsync 1 and latches at vsync 2; each later one, presented
    # between two vsyncs, reaches the screen two vsyncs after its call.
    assert [shown(trace)[(e["context"], e["seq"])] for e in ps] == [vsync(2), vsync(3), vsync(4), vsync(5)]
    assert [e["cpu_start"] for e in ps] == [5_000_000 + 17_000_000 * k for k in range(4)]
    # The updates at 20 and 40 ms fall while the exclusive swap chain presents: not composed; the
    # one at 120 ms is composed at the next vsync (133.3 ms).
    assert [e["cpu_start"] for e in presents(trace, "dwm.exe")] == [vsync(8) + 100_000]
    rows = [r for r in present_rows(trace.events) if r["Application"] == "excl.exe"]
    assert {r["PresentMode"] for r in rows} == {"Hardware: Legacy Flip"}
    assert {r["MsInPresentAPI"] for r in rows} == {0}  # runtime Other: PresentMon sees no present call


def test_a_window_frame_replaced_before_a_composition_is_dropped():
    frames = [{"start": "20ms", "gpu": "1ms"}, {"start": "25ms", "gpu": "1ms"}]
    trace = run([app("win.exe", {"swap_effect": "flip", "sync_interval": 0, "frames": frames})], [DWM])
    p1, p2 = presents(trace, "win.exe")
    dropped = [(e["context"], e["seq"]) for e in trace.of("Dropped")]
    assert dropped == [(p1["context"], p1["seq"])]
    # Both were ready at vsync 2 (33.3 ms): the newer is composed then and shown at vsync 3.
    assert shown(trace)[(p2["context"], p2["seq"])] == vsync(3)


def test_without_a_compositor_the_os_shows_a_windowed_present_at_the_next_vsync():
    trace = run([app("win.exe", {"swap_effect": "flip", "sync_interval": 1,
                                 "frames": [{"start": "2ms", "gpu": "1ms"}]})])
    (p,) = presents(trace)
    assert p["mode"] == "composed_flip"
    assert shown(trace)[(p["context"], p["seq"])] == vsync(1)


def test_synthetic_frames_at_a_rate():
    trace = run([app("rate.exe", {"swap_effect": "flip", "fps": 100, "cpu": "1ms", "work": "2ms", "count": 5})], [DWM])
    assert [e["cpu_start"] for e in presents(trace, "rate.exe")] == [1 * MS + 10 * MS * k for k in range(5)]


@pytest.mark.parametrize("change, message", [
    ({"compositor": [{"vidpn_source": 1}]}, "compositor[0].vidpn_source: VidPn source 1 does not exist"),
    ({"compositor": [{"pid": 1000}], "pid": 1000}, "compositor[0].pid: process id 1000 is also given to process[0].pid"),
    ({"compositor": [{"node": "Video"}]}, "compositor[0].node: no node named 'Video'"),
    ({"compositor": [{}, {}]}, "compositor[1].vidpn_source: VidPn source 0 already has a compositor"),
    ({"compositor": [{"update": [{"at": "20ms"}, {"at": "10ms"}]}]},
     "compositor[0].update: [1].at must be no earlier than [0].at (20ms), got 10ms"),
    ({"workload": {"fps": 60, "frames": [{"start": 0}]}}, "give fps or frames, not both"),
    ({"workload": {"frames": [{"start": "1ms", "cpu": "1ms", "submit": "2ms"}]}}, "is after the present call"),
])
def test_scenario_checks(change, message):
    proc = {"name": "a", "context": [{"name": "c", "node": "3D", "workload": {
        "kind": "swap_chain", **change.get("workload", {"fps": 60})}}]}
    if "pid" in change:
        proc["pid"] = change["pid"]
    data = {"process": [proc]}
    if "compositor" in change:
        data["compositor"] = change["compositor"]
    with pytest.raises(ScenarioError) as e:
        scenario_from_dict(data, "<t>")
    assert any(message in line for line in e.value.problems), e.value.problems


def test_one_program_twice_needs_a_pid_each_and_cannot_be_named_by_a_call():
    def proc(pid):
        p = {"name": "Presenter.exe", "context": [{"name": "c", "node": "3D", "workload": {"kind": "swap_chain", "fps": 60}}]}
        if pid:
            p["pid"] = pid
        return p

    scenario_from_dict({"process": [proc(100), proc(104)]}, "<t>")
    with pytest.raises(ScenarioError) as e:
        scenario_from_dict({"process": [proc(100), proc(None)]}, "<t>")
    assert "duplicate process name 'Presenter.exe'" in e.value.problems[0]
    with pytest.raises(ScenarioError) as e:
        scenario_from_dict({"process": [proc(100), proc(104)], "call": [
            {"at": "1ms", "api": "SetProcessSchedulingPriorityClass", "process": "Presenter.exe",
             "priority_class": "high"}]}, "<t>")
    assert "'Presenter.exe' names 2 processes" in "\n".join(e.value.problems)


def test_a_windowed_flip_with_sync_interval_1_shows_every_frame_for_a_refresh():
    # Three frames ready within one refresh (at 20, 22 and 24 ms, 1 ms of rendering each). With
    # sync interval 1 none is replaced: the compositor takes one per vsync, in order (vsyncs 2, 3,
    # 4) and each reaches the screen at the vsync after; with sync interval 0 the newest replaces
    # the others.
    frames = [{"start": f"{20 + 2 * k}ms", "gpu": "1ms"} for k in range(3)]
    one = run([app("win.exe", {"swap_effect": "flip", "sync_interval": 1, "frames": frames})], [DWM])
    s = shown(one)
    assert [s[(p["context"], p["seq"])] for p in presents(one, "win.exe")] == [vsync(3), vsync(4), vsync(5)]
    assert one.of("Dropped") == []
    assert [p["interval"] for p in presents(one, "win.exe")] == [1, 1, 1]
    zero = run([app("win.exe", {"swap_effect": "flip", "sync_interval": 0, "frames": frames})], [DWM])
    p3 = presents(zero, "win.exe")
    assert len(zero.of("Dropped")) == 2
    assert shown(zero)[(p3[2]["context"], p3[2]["seq"])] == vsync(3)


def test_an_independent_flip_with_sync_interval_0_shows_the_newest_frame_at_each_vsync():
    # 15 ms frames on a 60 Hz display, no tearing: once independent, each frame is shown at the first
    # vsync after its rendering (1 ms), and when two frames are ready before the same vsync the older
    # one is replaced (IDXGISwapChain::Present, sync interval 0: "discard this frame if a newer frame
    # is queued"): frame 11 (ready at 168 ms, programmed for vsync 11) is overwritten by frame 12,
    # ready at 183 ms, 0.33 ms before that vsync. The flip never waits for a slot of the flip queue.
    frames = [{"start": f"{2 + 15 * k}ms", "gpu": "1ms"} for k in range(14)]
    trace = run([app("game.exe", {"swap_effect": "flip", "fullscreen": True, "sync_interval": 0,
                                  "frames": frames})], [DWM])
    ps = presents(trace, "game.exe")
    assert [e["mode"] for e in ps] == ["composed_flip"] * 3 + ["independent_flip"] * 11
    assert {e["interval"] for e in ps[3:]} == {1}
    ctx = ps[0]["context"]
    screen = shown(trace)
    assert [screen.get((ctx, e["seq"])) for e in ps[3:]] == [vsync(k) for k in range(3, 11)] + [None] + [
        vsync(11), vsync(12)]
    assert [(e["seq"], e["by_seq"], e["t"]) for e in trace.of("FlipReplaced") if e["context"] == ctx] == [
        (ps[11]["seq"], ps[12]["seq"], 183 * MS)]
