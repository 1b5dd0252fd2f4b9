"""The compositor's cadence in a replay: dwm.exe's presents come from the model's rule (it composes
when a window's frame is new, or the desktop changed, at most once a vsync) applied to the
replayed windows' frames; the rebuilt scenario keeps as desktop updates only the capture's dwm.exe
presents that no captured window's frame explains. Checked on captures the model made itself (a
40 fps window on a 60 Hz display: no desktop updates, and the replayed compositor presents at the
capture's times from the window's frames alone) and on the shipped captures (tests/data/presentmon),
in exact counts."""

from __future__ import annotations

from pathlib import Path

import pytest

from wddmsim.replay.capture import read_capture
from wddmsim.replay.columns import write_capture_csv
from wddmsim.replay.compare import compare
from wddmsim.replay.run import model_frames, replay
from wddmsim.replay.scenario import build_scenario, capture_shift, composed_displays, desktop_updates
from wddmsim.scenario import scenario_from_dict
from wddmsim.runner.system import System
from wddmsim.trace import ListSink

DATA = Path(__file__).parents[1] / "data" / "presentmon"
V = 16_666_667


def machine(update=()):
    """A 60 Hz desktop: dwm.exe and one window presenting 40 frames at 40 fps (flip model, sync
    interval 1), and the desktop updates ``update`` (times in ms). (40 fps, not 30: a capture in
    which dwm.exe only ever presents every other refresh looks like a 30 Hz display to the replay's
    display fit, docs/replay.md.)"""
    return {"name": "machine", "duration": "1100ms", "adapter": {"displays": [60.0]},
            "compositor": [{"pid": 1268, "address": "0x224B280A1C0", "cpu": "100us", "work": "1ms",
                            "update": [{"at": f"{t}ms"} for t in update]}],
            "process": [{"name": "Window.exe", "pid": 4000, "context": [{"name": "c", "node": "3D", "workload": {
                "kind": "swap_chain", "address": "0xABC0", "swap_effect": "flip", "sync_interval": 1, "fps": 40,
                "cpu": "1ms", "work": "1ms", "count": 40}}]}]}


def run(data, shift=0):
    col = ListSink()
    return replay(System(scenario_from_dict(data, "<test>"), trace=col), col, shift)


def capture_of(tmp_path, data, column_set="current"):
    """A PresentMon capture (in ``column_set``) of the model running ``data``."""
    col = ListSink()
    System(scenario_from_dict(data, "<machine>"), trace=col).run()
    return read_capture(write_capture_csv(model_frames(col.events, 0), tmp_path / "machine.csv", column_set))


def dwm(frames):
    return [f for f in frames if f.application == "dwm.exe"]


@pytest.mark.parametrize("column_set", ["current", "v1", "v2"])
def test_a_40_fps_window_alone_makes_the_replayed_compositor_present_at_the_captures_times(tmp_path, column_set):
    cap = capture_of(tmp_path, machine(), column_set)
    frames = dwm(cap.frames)
    # The machine's compositor: frame k (from 1 ms + 25 ms k, ready 2 ms later) is composed at the
    # vsync after it, ceil((3 ms + 25 ms k) / V): 40 presents, 1 or 2 refreshes apart.
    assert len(frames) == 40
    scenario = build_scenario(cap)
    # Every dwm.exe present of the capture showed the window's frame: no desktop update is kept.
    (comp,) = scenario["compositor"]
    assert comp["update"] == []
    result = run(scenario, capture_shift(cap))
    model = dwm(result.frames)
    # The model's compositor presents at the vsync after each of the window's frames: the
    # capture's vsyncs, from the window's frames alone (its present call 5 us later than the
    # capture's: the rebuilt compositor's CPU time is the capture's time from the vsync to the
    # call, and the model's own costs of waking come on top).
    assert len(model) == 40
    assert all(0 <= m.present_start - f.present_start < 10_000 for m, f in zip(model, frames))
    assert sorted({round(f.between_presents / V) for f in model[1:]}) == [1, 2]
    (c,) = [c for c in compare(cap, result.frames) if c.key[0] == "dwm.exe"]
    # 39 gaps over vsyncs 1 to 59 (the first gap is one refresh): 39 / (58 V) a second
    assert c.target("presents per second").model == round(39e9 / (58 * V), 3) == 40.345
    assert c.passed


def test_a_desktop_update_no_window_explains_is_kept(tmp_path):
    # The window's last frame (976 ms) is composed at vsync 59; the update at 1050 ms alone, at
    # vsync 63 (1050 ms + 0.1 ms of CPU).
    cap = capture_of(tmp_path, machine(update=[1050]))
    frames = dwm(cap.frames)
    assert len(frames) == 41
    kept = desktop_updates(frames, composed_displays(cap.frames))
    assert kept == frames[-1:]
    (comp,) = build_scenario(cap)["compositor"]
    assert len(comp["update"]) == 1
    result = run(build_scenario(cap), capture_shift(cap))
    model = dwm(result.frames)
    assert len(model) == 41
    assert all(0 <= m.present_start - f.present_start < 10_000 for m, f in zip(model, frames))


@pytest.mark.parametrize("name, presents, updates", [
    ("test_case_4.csv", 114, 76), ("test_case_4_v1.csv", 116, 77), ("test_case_4_v2.csv", 114, 77),
    ("test_case_0.csv", 197, 108), ("test_case_0_v1.csv", 199, 105), ("test_case_0_v2.csv", 197, 108)])
def test_the_shipped_captures_keep_only_the_dwm_presents_no_window_explains(name, presents, updates):
    """docs/replay.md, "The compositor's cadence": the rest of dwm.exe's presents showed a captured
    window's composed frame, and the model must make them from that window's frames."""
    cap = read_capture(DATA / name)
    frames = dwm(cap.frames)
    (comp,) = build_scenario(cap)["compositor"]
    assert (len(frames), len(comp["update"]), len(desktop_updates(frames, composed_displays(cap.frames)))) == (
        presents, updates, updates)
