"""Reference scenario 25: the present queue limit and interval-0 overwrite. A game whose GPU work
(10 ms a frame) is slower than the rate it wants (a frame slot every 1 ms) presents with
SyncInterval 0 and a maximum frame latency of 3 (IDXGIDevice1::SetMaximumFrameLatency):

- the 4th present blocks the application, inside the present call, until the 1st frame has left
  the queue, and every later one waits for its own oldest frame: PresentMon's MsInPresentAPI grows
  from 0 to the frame time;
- with overwrite, only the newest of the presents waiting for a vsync is shown at it; the others are
  dropped (DisplayedTime NA), counted exactly.

What the model has of overwrite is the compositor's: a windowed present (``composed``: a copy into
the composition surface) waits for the next vsync, and a newer one that arrives first replaces it,
as DWM shows only the latest frame of a window at each composition. Overwrite of queued *flips*
(several updates to one plane within a vsync period, the latest winning:
DXGK_DRIVERCAPS.MaxQueuedMultiPlaneOverlayFlipVSync, WDDM 2.1) belongs to the multiplane-overlay
flip path (DxgkDdiSetVidPnSourceAddressWithMultiPlaneOverlay3), which the model does not have: its
flips are DMA-buffer flips built by DxgkDdiPresent, where FlipInterval 0 is an immediate flip
(D3DDDI_FLIPINTERVAL_IMMEDIATE) that is shown when it runs. The first part is asserted on those
immediate flips as well."""

from __future__ import annotations

import tomllib

from wddmsim.scenario import scenario_from_dict
from wddmsim.runner.system import System
from wddmsim.trace import ListSink
from wddmsim.trace.presentmon import NA, present_rows

V = 16_666_667  # one refresh at 60 Hz, ns
MS = 1_000_000


def scenario(mode: str, fps: int, work: str, count: int) -> str:
    return f"""
name = "ref25"
duration = "1s"

[adapter]
displays = [60.0]
cpu_cost = {{ render = 0, patch = 0, submit = 0, isr = 0, dpc = 0, present = 0 }}

[[adapter.nodes]]
name = "3D"
engine = "3d"
command_cost = 0

[[process]]
name = "game.exe"
[[process.context]]
name = "render"
node = "3D"
workload = {{ kind = "frame_loop", fps = {fps}, work = "{work}", present_mode = "{mode}", sync_interval = 0, max_frame_latency = 3, count = {count} }}
"""


def run(mode: str, fps: int = 1000, work: str = "10ms", count: int = 12):
    trace = ListSink()
    system = System(scenario_from_dict(tomllib.loads(scenario(mode, fps, work, count)), "ref25.toml"), trace=trace)
    r = system.run()
    assert r.bugcheck is None and r.summary["violations"] == []
    return trace, r


def most_queued(trace) -> int:
    """The most presents that had returned to the application and not yet retired, at any time."""
    queued = most = 0
    for e in trace.events:
        if e["event"] == "Present":
            queued += 1
            most = max(most, queued)
        elif e["event"] == "QueuePacketStop" and e["kind"] == "present":
            queued -= 1
    return most


def test_the_fourth_present_blocks_with_sync_interval_0():
    trace, r = run("flip", count=6)
    calls = [(e["cpu_start"], e["t"]) for e in trace.of("Present")]
    # Frame k's 10 ms of work, then its immediate flip (no GPU time): frames 1-3 present at 0, 1
    # and 2 ms and return at once; the 4th present begins at 3 ms and returns at 10 ms, when frame
    # 1's flip completes; then each waits 10 ms for the next one.
    assert calls == [(0, 0), (1 * MS, 1 * MS), (2 * MS, 2 * MS), (3 * MS, 10 * MS), (10 * MS, 20 * MS),
                     (20 * MS, 30 * MS)]
    assert most_queued(trace) == 3
    rows = present_rows(trace.events)
    assert [row["MsInPresentAPI"] for row in rows] == [0.0, 0.0, 0.0, 7.0, 10.0, 10.0]
    # Immediate flips are shown when they run, with tearing; none waits for a vsync, none is dropped.
    assert [row["DisplayedTime"] for row in rows] == [10.0, 20.0, 30.0, 40.0, 50.0, 60.0]
    assert {row["AllowsTearing"] for row in rows} == {1}
    assert r.summary["displays"][0]["dropped"] == 0


def shown_by_overwrite(trace):
    """Independently of the model: each vsync shows the newest present whose copy completed since
    the previous vsync (at or before it); every other present is dropped. {seq: display time or None}."""
    done = [(e["t"], e["seq"]) for e in trace.of("DmaPacketStop") if e["kind"] == "present"]
    out = {seq: None for _, seq in done}
    newest: dict[int, int] = {}
    for t, seq in done:  # in completion order
        newest[-(-t // V) * V] = seq
    for vsync, seq in newest.items():
        out[seq] = vsync
    return out


def check_overwrite(trace, r):
    expect = shown_by_overwrite(trace)
    shown = {e["seq"]: e["displayed"] for e in trace.of("Displayed")}
    dropped = {e["seq"] for e in trace.of("Dropped")}
    assert shown == {s: t for s, t in expect.items() if t is not None}
    assert dropped == {s for s, t in expect.items() if t is None}
    # One display change per vsync at most, each at a vsync.
    assert all(t % V == 0 for t in shown.values()) and len(set(shown.values())) == len(shown)
    rows = present_rows(trace.events)
    d = r.summary["displays"][0]
    assert sum(row["DisplayedTime"] == NA for row in rows) == d["dropped"] == len(dropped)
    assert d["displayed"] == len(shown) and d["presents"] == len(rows)
    return rows, d


def test_with_overwrite_the_fourth_present_blocks_and_only_the_newest_is_shown():
    trace, r = run("composed")
    rows, d = check_overwrite(trace, r)
    # The same queue limit: the 4th present waits from 3 ms until frame 1 retires (10 ms + its
    # 4.096 us copy).
    assert [row["MsInPresentAPI"] for row in rows[:6]] == [0.0, 0.0, 0.0, 7.004096, 10.004096, 10.004096]
    assert most_queued(trace) == 3
    # A frame every 10.004 ms on a 16.67 ms refresh: frames 2, 5, 7 and 10 are replaced by a newer
    # one before the vsync that would have shown them.
    assert [row["DisplayedTime"] == NA for row in rows] == [
        k in (2, 5, 7, 10) for k in range(1, 13)]
    assert (d["presents"], d["displayed"], d["dropped"]) == (12, 8, 4)
    assert [row["DisplayedTime"] for row in rows if row["DisplayedTime"] != NA] == [
        round(k * V / 1e6, 6) for k in range(1, 9)]


def test_overwrite_when_the_application_presents_four_times_a_refresh():
    # 1 ms of work every 4 ms: nothing blocks, and of each vsync's four presents three are dropped.
    trace, r = run("composed", fps=250, work="1ms", count=20)
    rows, d = check_overwrite(trace, r)
    assert {row["MsInPresentAPI"] for row in rows} == {0.0}
    assert (d["presents"], d["displayed"], d["dropped"]) == (20, 5, 15)
    shown = [(e["seq"] // 2, e["displayed"]) for e in trace.of("Displayed")]
    # Frame k presents at 4(k-1) ms; its copy is done 1.004 ms later; each vsync shows the last one done.
    assert shown == [(4, V), (9, 2 * V), (13, 3 * V), (17, 4 * V), (20, 5 * V)]
