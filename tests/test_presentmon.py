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
