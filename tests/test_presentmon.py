"""PresentMon-style frame metrics (``--presentmon``): PresentMon's columns, values that follow from
the event log exactly, NA for dropped frames, and GPU busy rebuilt from the DMA packet events
agreeing with the engine's own ground truth."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from click.testing import CliRunner

from wddmsim.cli import main
from wddmsim.trace.presentmon import COLUMNS, NA, present_rows

from test_flips import V, run

ROOT = Path(__file__).parent.parent


def test_flip_rows_at_50_fps():
    system, trace, r = run("flip", 50, count=6)
    rows = present_rows(trace.events)
    assert [list(row) for row in rows][0] == list(COLUMNS)
    assert len(rows) == 6
    assert {row["PresentMode"] for row in rows} == {"Hardware: Legacy Flip"}
    assert [row["SyncInterval"] for row in rows] == [1] * 6 and [row["AllowsTearing"] for row in rows] == [0] * 6
    # The application presents every 20 ms (its 1 ms packet, then the present): shown at the next vsync.
    assert [row["MsBetweenPresents"] for row in rows] == [NA] + [20.0] * 5
    assert [row["DisplayedTime"] for row in rows] == [round(k * V / 1e6, 6) for k in (1, 2, 3, 4, 5, 7)]
    assert [row["MsBetweenDisplayChange"] for row in rows] == [NA] + [round(V / 1e6, 6)] * 4 + [round(2 * V / 1e6, 6)]
    disp = [e for e in trace.of("Displayed")]
    assert [row["MsUntilDisplayed"] for row in rows] == [round(e["latency"] / 1e6, 6) for e in disp]
    # CPU costs are zero: no time in the present call. A frame's CPU start is the previous present's
    # return; the application then sleeps until its next 20 ms slot, which the GPU latency counts.
    assert {row["MsInPresentAPI"] for row in rows} == {0.0}
    assert [row["MsGPULatency"] for row in rows] == [0.0] + [20.0] * 5


def test_dropped_composed_frames_have_na_display_columns():
    system, trace, r = run("composed", 100, count=12)
    rows = present_rows(trace.events)
    dropped = [row for row in rows if row["DisplayedTime"] == NA]
    assert len(dropped) == r.summary["displays"][0]["dropped"] == 5
    assert all(row["MsUntilDisplayed"] == NA and row["MsBetweenDisplayChange"] == NA for row in dropped)
    assert {row["PresentMode"] for row in rows} == {"Composed: Copy with GPU GDI"}


def test_gpu_busy_from_the_log_matches_the_engine():
    system, trace, r = run("blt", 50, work="3ms", count=8)
    rows = present_rows(trace.events)
    assert len(rows) == 8
    busy_ms = sum(row["MsGPUBusy"] for row in rows)
    # Every packet of every frame is counted once: what the engine itself measured.
    assert busy_ms == pytest.approx(system.gpu.engines[0].busy_ns / 1e6, abs=1e-6 * len(rows))
    assert all(row["MsGPUWait"] == pytest.approx(row["MsGPUTime"] - row["MsGPUBusy"], abs=1e-6) for row in rows)


def test_cli_writes_the_csv(tmp_path):
    out = tmp_path / "p.csv"
    r = CliRunner().invoke(main, ["run", str(ROOT / "examples" / "flips.toml"), "--presentmon", str(out)])
    assert r.exit_code == 0, r.output
    with open(out) as f:
        rows = list(csv.DictReader(f))
    assert list(rows[0]) == list(COLUMNS)
    apps = {row["Application"] for row in rows}
    assert apps == {"game.exe", "player.exe"}
    assert any(row["DisplayedTime"] == "NA" for row in rows if row["Application"] == "player.exe")


# -- hardware scheduling: GPU columns from the scheduler's turns ------------------------------------
def hw_frames(preemption: dict):
    """A game presenting (blt) at 50 fps with 3 ms frames, and a background job of 2 ms buffers, in
    two processes on one 3D engine under hardware scheduling (zero CPU costs)."""
    from wddm2util import adapter, run, scenario

    game = {"name": "game", "context": [{"name": "r", "node": "3D", "workload": {
        "kind": "frame_loop", "fps": 50, "work": "3ms"}}]}
    bg = {"name": "bg", "context": [{"name": "c", "node": "3D", "workload": {
        "kind": "compute_batch", "batch": 2, "work": "2ms"}}]}
    return run(scenario(adapter("hw", node3d=preemption), [game, bg], duration="60ms"))


MS = 1_000_000
BLT = 128 * 128 * 4 // 16  # ns: the present's copy at the copy engine's 16 bytes per ns


def test_hardware_scheduling_gpu_columns_from_the_context_turns():
    """Each frame: 3 ms of work and the present's blt. The game is preempted after its 2 ms quantum
    for the background job's turn, so each frame's GPU time has 2 ms of waiting in it."""
    system, result, events = hw_frames({"preemption": "interval", "preemption_interval": "100us"})
    game = system.contexts[0]
    rows = present_rows(events)
    assert len(rows) == 3
    turns = [e["t"] for e in events if e["event"] == "HwContextState" and e["context"] == game.hDriver
             and e["state"] == "running"]
    # Frame 1 was queued at 0; the job got the engine first (its page tables were written first)
    # and held it for its 2 ms quantum.
    job_first = next(e["t"] for e in events if e["event"] == "HwContextState" and e["state"] == "running"
                     and e["context"] == system.contexts[1].hDriver)
    assert turns[0] == job_first + 2 * MS
    assert [row["MsGPUBusy"] for row in rows] == [(3 * MS + BLT) / 1e6] * 3
    assert [row["MsGPUTime"] for row in rows] == [(5 * MS + BLT) / 1e6] * 3
    assert [row["MsGPUWait"] for row in rows] == [2.0] * 3
    # The game's turns come in pairs, before and after the job's; a frame's CPU start is the previous
    # present's return (0, 0, 20 ms), its first GPU work the first turn of its pair.
    assert [row["CPUStartTime"] for row in rows] == [0.0, 0.0, 20.0]
    assert [row["MsGPULatency"] for row in rows] == [turns[0] / 1e6, turns[2] / 1e6, (turns[4] - 20 * MS) / 1e6]
    # Every instant the game held the engine is counted once: its own busy time on the GPU.
    busy = system.gpu.engines[0].listener.busy_ns(game.hDriver)
    assert round(sum(row["MsGPUBusy"] for row in rows) * 1e6) == busy == 3 * (3 * MS + BLT)


def test_hardware_scheduling_frame_without_preemption_has_no_gpu_wait():
    """With DMA-buffer preemption the game's frame runs in one turn: busy equals its GPU time."""
    system, result, events = hw_frames({})
    rows = present_rows(events)
    assert rows and all(row["MsGPUWait"] == 0.0 and row["MsGPUBusy"] == (3 * MS + BLT) / 1e6 for row in rows)


def test_the_row_events_alone_give_the_same_rows():
    from wddmsim.scenario import load_scenario
    from wddmsim.runner.system import System
    from wddmsim.trace import ListSink, TeeSink
    from wddmsim.trace.presentmon import ROW_EVENTS
    from wddmsim.trace.sinks import KindsSink

    root = __import__("pathlib").Path(__file__).parents[1]
    everything, kept = ListSink(), KindsSink(ROW_EVENTS)
    System(load_scenario(root / "examples" / "desktop.toml"), trace=TeeSink(everything, kept)).run()
    assert len(kept.events) < len(everything.events) / 2
    rows = present_rows(everything.events, times=True)
    assert len(rows) > 100 and present_rows(kept.events, times=True) == rows
