"""A windowed flip-model swap chain on an overlay plane, end to end, in exact virtual time on the
event log: the compositor's rule (workloads/overlayplanes.py: the only new window in
``independent_flip_after`` compositions in a row, a free plane, DxgkDdiCheckMultiPlaneOverlaySupport3
answering Supported), the OS's plane flips (dxgkrnl/planeassign.py, through
DxgkDdiSetVidPnSourceAddressWithMultiPlaneOverlay3) with each sync interval, the compositor
composing another window on plane 0 meanwhile, the window leaving its plane, drivers that say no or
have no planes, PresentMon's "Hardware Composed: Independent Flip" per frame, the timeline's plane
lane, the shipped example and the replay's choice of driver.

Zero CPU costs, zero command costs, a 60 Hz display (vsyncs every 16 666 667 ns), the reference
driver at WDDM 2.1 with two planes per source (plane 0 the primary, plane 1 free for a window)."""

from __future__ import annotations

import csv
import json
import tomllib
from pathlib import Path

from click.testing import CliRunner

from wddmsim.cli import main
from wddmsim.ddi.ntstatus import NTSTATUS
from wddmsim.kmd import ReferenceDriver
from wddmsim.scenario import load_scenario, scenario_from_dict
from wddmsim.runner.system import System
from wddmsim.trace import ListSink
from wddmsim.trace.chrome import chrome_trace
from wddmsim.trace.presentmon import present_rows
from wddmsim.workloads.overlayplanes import IDLE_REFRESHES

from test_chrome_trace import validate

ROOT = Path(__file__).parent.parent
EXAMPLE = ROOT / "examples" / "overlays.toml"
CAPTURES = ROOT / "tests" / "data" / "presentmon"
ZERO = {"render": 0, "patch": 0, "submit": 0, "isr": 0, "dpc": 0, "present": 0}
MS = 1_000_000
V = 16_666_667  # the refresh period
MPO = {"ddi_version": "wddm2_1", "overlay_planes": 2}
DWM = {"pid": 1268, "cpu": "100us", "work": "1ms"}
CHECK = "DxgkDdiCheckMultiPlaneOverlaySupport3"
FLIP = "DxgkDdiSetVidPnSourceAddressWithMultiPlaneOverlay3"
HCIF = "Hardware Composed: Independent Flip"


def vsync(k: int) -> int:
    return k * V


def run(processes, driver=MPO, driver_cls=None, duration="300ms"):
    data = {"name": "overlays", "duration": duration,
            "adapter": {"cpu_cost": ZERO, "displays": [60.0],
                        "nodes": [{"name": "3D", "engine": "3d", "command_cost": 0}]},
            "compositor": [DWM], "process": processes}
    if driver is not None:
        data["driver"] = dict(driver)
    trace = ListSink()
    kw = {} if driver_cls is None else {"driver": driver_cls}
    r = System(scenario_from_dict(data, "<test>"), trace=trace, **kw).run()
    assert r.bugcheck is None and r.summary["violations"] == []
    return trace


def app(name, workload):
    return {"name": name, "context": [{"name": "c", "node": "3D", "workload": {"kind": "swap_chain", **workload}}]}


def video(frames, **kw):
    return app("video.exe", {"swap_effect": "flip", "frames": frames, **kw})


def every(first_ms: int, step_ms: int, n: int, gpu: str = "1ms") -> list[dict]:
    return [{"start": f"{first_ms + step_ms * k}ms", "cpu": "1ms", "gpu": gpu} for k in range(n)]


def presents(trace, process):
    pids = {e["process"]: e["name"] for e in trace.of("ProcessCreate")}
    return [e for e in trace.of("Present") if pids[e["process"]] == process]


def shown(trace, ps):
    """The display time of each present (None: dropped)."""
    at = {(e["context"], e["seq"]): e["displayed"] for e in trace.of("Displayed")}
    return [at.get((p["context"], p["seq"])) for p in ps]


def rows(trace, app_name):
    return [r for r in present_rows(trace.events) if r["Application"] == app_name]


def calls(trace, name):
    return [e for e in trace.of("DdiCall") if e["name"] == name]


def plane_flips(trace):
    return [(e["t"], e["present_id"], e["enabled"], e["immediate"]) for e in trace.of("MpoFlip")]


# -- promotion, and the plane's flips with each sync interval -------------------------------------------
def test_a_windowed_video_alone_in_two_compositions_goes_to_plane_1_and_each_frame_flips_there():
    trace = run([video(every(2, 17, 8, gpu="2ms"), sync_interval=1)])
    (assign,) = trace.of("PlaneAssign")
    # Frames 1 (3 ms) and 2 (20 ms) are composed at vsyncs 1 and 2, alone each time: at the second
    # composition, after its 100 us of CPU, the OS asks the driver about plane 0 + plane 1 and
    # assigns plane 1.
    (check,) = calls(trace, CHECK)
    assert (check["t"], check["irql"], check["args"]["PlaneCount"], check["args"]["Supported"]) == \
        (vsync(2) + 100_000, "PASSIVE_LEVEL", 2, 1)
    assert (assign["t"], assign["layer"]) == (vsync(2) + 100_000, 1)
    ps = presents(trace, "video.exe")
    assert [p["mode"] for p in ps] == ["composed_flip"] * 2 + ["overlay_flip"] * 6
    # Sync interval 1, in order: frame 3 (ready at 39 ms) is flipped once frame 2, the last composed
    # one, is on screen (vsync 3), and latches at vsync 4; every later frame is flipped at the vsync
    # that shows the one before.
    assert plane_flips(trace) == [(vsync(k), k - 2, 1, 0) for k in range(3, 9)] + [(vsync(9), 7, 0, 0)]
    assert shown(trace, ps) == [vsync(2), vsync(3)] + [vsync(k) for k in range(4, 10)]
    assert [(e["t"], e["present_id"]) for e in trace.of("PlaneDisplayed")] == \
        [(vsync(k), k - 3) for k in range(4, 11)]
    # The flips went to the driver at device IRQL, one plane each.
    assert {(e["irql"], e["args"]["PlaneCount"]) for e in calls(trace, FLIP)} == {("DIRQL", 1)}
    # The compositor composed the two frames and nothing after.
    assert len(presents(trace, "dwm.exe")) == 2
    # The application's last present ends its run: the plane is given back (reason "stopped") and,
    # once the frame is shown, disabled with one more flip (PresentId 7, shown at vsync 10).
    (release,) = trace.of("PlaneRelease")
    assert (release["t"], release["reason"], release["layer"]) == (122 * MS, "stopped", 1)
    assert [r["PresentMode"] for r in rows(trace, "video.exe")] == ["Composed: Flip"] * 2 + [HCIF] * 6
    assert [r["AllowsTearing"] for r in rows(trace, "video.exe")] == [0] * 8


def test_sync_interval_0_shows_the_newest_frame_at_each_vsync_and_the_replaced_ones_are_dropped():
    trace = run([video(every(2, 17, 2) + every(36, 5, 8), sync_interval=0)])
    ps = presents(trace, "video.exe")
    assert [p["mode"] for p in ps] == ["composed_flip"] * 2 + ["overlay_flip"] * 8
    assert {p["interval"] for p in ps[2:]} == {1}  # FlipOnNextVSync
    # Each frame is flipped as soon as its rendering is done (1 ms after its present call), not
    # waiting for the composed frame 2 nor for the plane's previous flip: the latest write before a
    # vsync wins.
    assert [t for t, *_ in plane_flips(trace)] == [38 * MS, 43 * MS, 48 * MS, 53 * MS, 58 * MS, 63 * MS, 68 * MS,
                                                   73 * MS, vsync(5)]
    assert shown(trace, ps) == [vsync(2), vsync(3), None, None, vsync(3), None, None, vsync(4), None, vsync(5)]
    assert [(e["t"], e["present_id"]) for e in trace.of("PlaneDropped")] == \
        [(vsync(3), 1), (vsync(3), 2), (vsync(4), 4), (vsync(4), 5), (vsync(5), 7)]
    # PresentMon: only a frame a multiplane vsync showed is Hardware Composed: Independent Flip.
    assert [r["PresentMode"] for r in rows(trace, "video.exe")] == \
        ["Composed: Flip"] * 4 + [HCIF] + ["Composed: Flip"] * 2 + [HCIF, "Composed: Flip", HCIF]


def test_sync_interval_0_with_tearing_flips_the_plane_immediately():
    trace = run([video(every(2, 17, 5), sync_interval=0, allows_tearing=True)])
    ps = presents(trace, "video.exe")
    assert [(p["mode"], p["interval"]) for p in ps[2:]] == [("overlay_flip", 0)] * 3
    # FlipImmediate: on screen when the call returns, at the end of each frame's rendering.
    assert plane_flips(trace)[:3] == [(38 * MS, 1, 1, 1), (55 * MS, 2, 1, 1), (72 * MS, 3, 1, 1)]
    assert shown(trace, ps)[2:] == [38 * MS, 55 * MS, 72 * MS]
    assert [(r["PresentMode"], r["AllowsTearing"]) for r in rows(trace, "video.exe")][2:] == [(HCIF, 1)] * 3


def test_sync_interval_2_shows_every_frame_in_order_two_refreshes_each():
    trace = run([video(every(2, 17, 2) + every(36, 10, 5), sync_interval=2, max_frame_latency=8)])
    ps = presents(trace, "video.exe")
    # With sync interval 2 the compositor takes the window's frames one every two refreshes; the
    # second composition alone is at vsync 3. Frames 3 and 4 were presented before it: composed.
    assert (trace.of("PlaneAssign")[0]["t"], [p["mode"] for p in ps]) == \
        (vsync(3) + 100_000, ["composed_flip"] * 4 + ["overlay_flip"] * 3)
    # Every frame reaches the screen, two refreshes after the one before: the plane's first frame
    # follows the last composed one (vsync 8), each flip made one refresh after the vsync that
    # showed the previous frame.
    assert shown(trace, ps) == [vsync(k) for k in (2, 4, 6, 8, 10, 12, 14)]
    assert [t for t, _, enabled, _ in plane_flips(trace) if enabled] == [vsync(9), vsync(11), vsync(13)]
    assert not trace.of("PlaneDropped") and not trace.of("Dropped")


def test_the_compositor_keeps_composing_another_window_on_plane_0_while_the_video_stays_on_its_plane():
    chat = app("chat.exe", {"swap_effect": "copy", "sync_interval": 1,
                            "frames": [{"start": "60ms", "cpu": "1ms", "gpu": "500us"},
                                       {"start": "95ms", "cpu": "1ms", "gpu": "500us"}]})
    trace = run([video(every(2, 17, 8), sync_interval=1), chat])
    # The chat window's copies (61 and 96 ms) are composed at the next vsyncs (4 and 6) and shown
    # with the compositor's flips at vsyncs 5 and 7; unlike a full-screen independent flip, the
    # video stays on its plane: every frame after the promotion is an overlay flip.
    dwm = presents(trace, "dwm.exe")
    assert [p["cpu_start"] for p in dwm] == [vsync(k) + 100_000 for k in (1, 2, 4, 6)]
    assert shown(trace, presents(trace, "chat.exe")) == [vsync(5), vsync(7)]
    assert [p["mode"] for p in presents(trace, "video.exe")] == ["composed_flip"] * 2 + ["overlay_flip"] * 6
    assert shown(trace, presents(trace, "video.exe"))[2:] == [vsync(k) for k in range(4, 10)]
    assert [e["reason"] for e in trace.of("PlaneRelease")] == ["stopped"]
    assert len(calls(trace, CHECK)) == 1  # the chat window (blt model) is never offered a plane
    modes = {r["Application"]: {r["PresentMode"] for r in rows(trace, r["Application"])}
             for r in present_rows(trace.events)}
    assert modes == {"video.exe": {"Composed: Flip", HCIF}, "chat.exe": {"Composed: Copy with GPU GDI"},
                     "dwm.exe": {"Hardware: Legacy Flip"}}


# -- leaving the plane -----------------------------------------------------------------------------------
def test_a_window_that_stops_presenting_for_10_refreshes_goes_back_to_composition_and_comes_back():
    assert IDLE_REFRESHES == 10
    frames = every(2, 17, 5) + every(302, 17, 5)
    trace = run([video(frames, sync_interval=0)], duration="500ms")
    # The last present of the first burst begins at 71 ms; the first vsync at least 10 refreshes
    # later is vsync 15 (250 ms): the compositor takes the plane back there, and the OS disables it
    # with a flip that latches at vsync 16.
    releases = trace.of("PlaneRelease")
    assert [(e["t"], e["reason"]) for e in releases] == [(vsync(15), "idle"), (371 * MS, "stopped")]
    assert plane_flips(trace)[3] == (vsync(15), 4, 0, 0)
    # The second burst is composed twice (vsyncs 19 and 20) and goes back to the plane.
    assigns = trace.of("PlaneAssign")
    assert [e["t"] for e in assigns] == [vsync(2) + 100_000, vsync(20) + 100_000]
    assert [p["mode"] for p in presents(trace, "video.exe")] == \
        (["composed_flip"] * 2 + ["overlay_flip"] * 3) * 2
    assert len(calls(trace, CHECK)) == 2


class RetriesMpoFlips(ReferenceDriver):
    """Answers every plane flip STATUS_RETRY with OutputFlags.PrePresentNeeded (call again at
    PASSIVE_LEVEL, which the model's OS does not do)."""

    def DxgkDdiSetVidPnSourceAddressWithMultiPlaneOverlay3(self, hAdapter, pArgs):
        pArgs.OutputFlags.PrePresentNeeded = 1
        return int(NTSTATUS.STATUS_RETRY)


def test_a_plane_flip_the_driver_does_not_make_sends_the_window_back_to_composition_for_good():
    trace = run([video(every(2, 17, 6), sync_interval=0)], driver_cls=RetriesMpoFlips)
    # Frame 3's flip (38 ms) is refused: it is dropped, the OS takes the window off its plane
    # ("refused") and tries to disable the plane (refused too: the plane is freed anyway).
    assert [(e["t"], e["status"]) for e in calls(trace, FLIP)] == [(38 * MS, "STATUS_RETRY")] * 2
    assert [(e["t"], e["reason"]) for e in trace.of("PlaneRelease")] == [(38 * MS, "refused")]
    ps = presents(trace, "video.exe")
    assert [p["mode"] for p in ps] == ["composed_flip"] * 2 + ["overlay_flip"] + ["composed_flip"] * 3
    assert shown(trace, ps)[2] is None
    # The window is composed from then on and never offered a plane again.
    assert len(calls(trace, CHECK)) == 1 and len(trace.of("PlaneAssign")) == 1
    assert all(s is not None for s in shown(trace, ps)[3:])


# -- drivers that say no -----------------------------------------------------------------------------------
class RefusesPlanes(ReferenceDriver):
    """Declares two planes but answers every DxgkDdiCheckMultiPlaneOverlaySupport3 not supported."""

    def DxgkDdiCheckMultiPlaneOverlaySupport3(self, hAdapter, pCheckMultiPlaneOverlaySupport):
        args = pCheckMultiPlaneOverlaySupport
        args.Supported = 0
        args.ReturnInfo.Value = 0
        args.ReturnInfo.FailingPlane = 1
        return int(NTSTATUS.STATUS_SUCCESS)


class TryAgainOnce(ReferenceDriver):
    """Answers the first support question not supported with ReturnInfo.TryAgain, then as the
    reference driver."""

    def DxgkDdiCheckMultiPlaneOverlaySupport3(self, hAdapter, pCheckMultiPlaneOverlaySupport):
        self.asked = getattr(self, "asked", 0) + 1
        if self.asked > 1:
            return super().DxgkDdiCheckMultiPlaneOverlaySupport3(hAdapter, pCheckMultiPlaneOverlaySupport)
        args = pCheckMultiPlaneOverlaySupport
        args.Supported = 0
        args.ReturnInfo.Value = 0
        args.ReturnInfo.TryAgain = 1
        return int(NTSTATUS.STATUS_SUCCESS)


def test_a_driver_answering_not_supported_keeps_the_window_composed():
    trace = run([video(every(2, 17, 8), sync_interval=1)], driver_cls=RefusesPlanes)
    # Asked once, at the second composition alone; refused without TryAgain: never asked again.
    assert [(e["t"], e["args"]["Supported"]) for e in calls(trace, CHECK)] == [(vsync(2) + 100_000, 0)]
    assert not trace.of("PlaneAssign") and not trace.of("MpoFlip") and not calls(trace, FLIP)
    assert {p["mode"] for p in presents(trace, "video.exe")} == {"composed_flip"}
    assert {r["PresentMode"] for r in rows(trace, "video.exe")} == {"Composed: Flip"}
    assert len(presents(trace, "dwm.exe")) == 8  # the compositor composes every frame


def test_try_again_asks_again_after_another_two_compositions_alone():
    trace = run([video(every(2, 17, 8), sync_interval=1)], driver_cls=TryAgainOnce)
    assert [(e["t"], e["args"]["Supported"], e["args"]["ReturnInfo"]["TryAgain"]) for e in calls(trace, CHECK)] == \
        [(vsync(2) + 100_000, 0, 1), (vsync(4) + 100_000, 1, 0)]
    assert [e["t"] for e in trace.of("PlaneAssign")] == [vsync(4) + 100_000]
    assert [p["mode"] for p in presents(trace, "video.exe")] == ["composed_flip"] * 4 + ["overlay_flip"] * 4


def test_a_driver_without_overlay_planes_never_promotes_a_window():
    for driver in ({"ddi_version": "wddm2_1"}, None):  # overlay_planes 0; the default driver (WDDM 2.0)
        trace = run([video(every(2, 17, 8), sync_interval=1)], driver=driver)
        assert not calls(trace, CHECK) and not calls(trace, FLIP)
        assert not trace.of("PlaneAssign") and not trace.of("MpoFlip")
        assert {r["PresentMode"] for r in rows(trace, "video.exe")} == {"Composed: Flip"}
        assert shown(trace, presents(trace, "video.exe")) == [vsync(k) for k in range(2, 10)]


def test_a_full_screen_window_still_flips_independently_and_never_gets_a_plane():
    game = app("game.exe", {"swap_effect": "flip", "fullscreen": True, "sync_interval": 0, "allows_tearing": True,
                            "frames": every(2, 17, 6)})
    trace = run([game])
    assert [p["mode"] for p in presents(trace, "game.exe")] == ["composed_flip"] * 2 + ["independent_flip"] * 4
    assert not calls(trace, CHECK) and not trace.of("PlaneAssign")


# -- the timeline ------------------------------------------------------------------------------------------
def _example_events(until=None):
    sc = load_scenario(str(EXAMPLE))
    trace = ListSink()
    System(sc, trace=trace).run(until=until)
    return trace.events


def test_the_trace_has_a_lane_per_plane_with_each_plane_flip_and_a_marker_per_mpo_flip_call():
    events = _example_events()
    trace = chrome_trace(events)
    validate(trace)
    evs = trace["traceEvents"]
    names = {e["tid"]: e["args"]["name"] for e in evs if e["ph"] == "M" and e["name"] == "thread_name"}
    lanes = {tid: n for tid, n in names.items() if " plane " in n}
    assert sorted(lanes.values())[0] == "VidPn source 0 plane 1"
    assert all(n.startswith("VidPn source 0 plane 1") for n in lanes.values())
    overlay = {(e["context"], e["seq"]) for e in events if e["event"] == "Present" and e["mode"] == "overlay_flip"}
    slices = [e for e in evs if e["ph"] == "X" and e["tid"] in lanes]
    assert len(slices) == len(overlay) == 22
    assert {e["args"]["result"] for e in slices} == {"Displayed"}
    # Each slice runs from the present call's return to the vsync that showed it.
    returned = {(e["context"], e["seq"]): e["t"] for e in events if e["event"] == "Present"}
    displayed = {(e["context"], e["seq"]): e["t"] for e in events if e["event"] == "Displayed"}
    spans = sorted((round(e["ts"] * 1000), round((e["ts"] + e["dur"]) * 1000)) for e in slices)
    assert spans == sorted((returned[k], displayed[k]) for k in overlay)
    # A marker at each DxgkDdiSetVidPnSourceAddressWithMultiPlaneOverlay3, on the plane's lane.
    mpo = [e for e in evs if e["ph"] == "i" and e.get("cat") == "mpo_flip"]
    flips = [e for e in events if e["event"] == "MpoFlip"]
    assert len(mpo) == len(flips) == 23 and {names[e["tid"]] for e in mpo} == {"VidPn source 0 plane 1"}
    assert [round(e["ts"] * 1000) for e in mpo] == [e["t"] for e in flips]
    assert mpo[-1]["name"] == "MPO flip #23 disable"
    # The overlay frames are not on the source's flip queue lane.
    queue = [e for e in evs if e["ph"] == "X" and names.get(e["tid"], "").startswith("VidPn source 0 flip queue")]
    assert len(queue) == sum(1 for e in events if e["event"] == "Present") - 22


# -- the shipped example -----------------------------------------------------------------------------------
def test_the_overlays_example_promotes_the_player_and_composes_the_chat_window(tmp_path):
    out_csv, out_trace = tmp_path / "p.csv", tmp_path / "t.json"
    r = CliRunner().invoke(main, ["run", str(EXAMPLE), "--trace", str(out_trace), "--presentmon", str(out_csv)])
    assert r.exit_code == 0, r.output
    with out_csv.open() as f:
        table = list(csv.DictReader(f))
    counts: dict = {}
    for row in table:
        key = (row["Application"], row["PresentMode"])
        counts[key] = counts.get(key, 0) + 1
    # examples/README.md quotes these figures.
    assert counts == {("Player.exe", "Composed: Flip"): 2, ("Player.exe", HCIF): 22,
                      ("Chat.exe", "Composed: Copy with GPU GDI"): 10, ("dwm.exe", "Hardware: Legacy Flip"): 12}
    player = [float(row["MsUntilDisplayed"]) for row in table if row["Application"] == "Player.exe"]
    assert [round(x, 1) for x in player[:2]] == [24.7, 24.7] and {round(x, 1) for x in player[2:]} == {8.0}
    lanes = {e["args"]["name"] for e in json.loads(out_trace.read_text())["traceEvents"]
             if e["ph"] == "M" and e["name"] == "thread_name"}
    assert "VidPn source 0 plane 1" in lanes
    raw = tomllib.loads(EXAMPLE.read_text())
    assert raw["driver"] == MPO


# -- replay: overlay planes only where the capture's machine had them ---------------------------------------
def _replay(*args):
    return CliRunner().invoke(main, ["replay", *map(str, args)])


def test_a_capture_without_the_mode_replays_on_a_driver_without_overlay_planes(tmp_path):
    toml, model = tmp_path / "tc0.toml", tmp_path / "model.csv"
    r = _replay(CAPTURES / "test_case_0.csv", "--emit", toml, "--presentmon", model)
    assert r.exit_code == 0, r.output
    assert tomllib.loads(toml.read_text())["driver"] == {"overlay_planes": 0}
    with model.open() as f:
        modes = {row["PresentMode"] for row in csv.DictReader(f)}
    assert HCIF not in modes and "Composed: Flip" in modes


def test_a_capture_with_the_mode_replays_with_the_planes_on(tmp_path):
    # test_case_0 with its windowed flip-model swap chain (Presenter.exe 12268, "Composed: Flip")
    # shown as a window on an overlay plane instead.
    src = tmp_path / "mpo.csv"
    with (CAPTURES / "test_case_0.csv").open(newline="", encoding="utf-8-sig") as f:
        table = list(csv.reader(f))
    mode, pid = table[0].index("PresentMode"), table[0].index("ProcessID")
    for row in table[1:]:
        if row[pid] == "12268":
            row[mode] = HCIF
    with src.open("w", newline="") as f:
        csv.writer(f).writerows(table)
    toml, model = tmp_path / "mpo.toml", tmp_path / "model.csv"
    r = _replay(src, "--emit", toml, "--presentmon", model)
    assert r.exit_code == 0, r.output
    sc = tomllib.loads(toml.read_text())
    assert sc["driver"] == MPO
    chain = next(c["workload"] for p in sc["process"] for c in p["context"] if p["pid"] == 12268)
    assert (chain["swap_effect"], chain["fullscreen"]) == ("flip", False)  # a window, not the display
    with model.open() as f:
        got = [row["PresentMode"] for row in csv.DictReader(f) if row["ProcessID"] == "12268"]
    # The model composes its first frames, then puts it on a plane.
    assert got[:2] == ["Composed: Flip"] * 2 and got.count(HCIF) >= 14
    assert all(m in (HCIF, "Composed: Flip") for m in got)


def test_a_run_stopped_mid_presentation_emits_nothing_when_its_applications_are_collected():
    """A run that ends while the player is on its plane: closing the application's generator (with
    the run, or whenever the collector gets to it) is not the application stopping, so no
    PlaneRelease (or anything else) reaches the log after the run returned."""
    import gc

    from wddmsim.scenario import load_scenario
    from wddmsim.runner.system import System
    from wddmsim.trace.sinks import ListSink

    sink = ListSink()
    system = System(load_scenario(str(ROOT / "examples" / "overlays.toml")), trace=sink)
    system.run(until=300_000_000)
    n = len(sink.events)
    assert [e["event"] for e in sink.events].count("PlaneAssign") == 1
    del system
    gc.collect()
    assert len(sink.events) == n and not [e for e in sink.events if e["event"] == "PlaneRelease"]
