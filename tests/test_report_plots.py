"""The report's plots (:mod:`wddmsim.output.report_plots`), read from the figure objects: one row per node
with idle nodes included, the latency distribution on a log axis, the queue depth per time bucket
(mean and most) beside the share of the run at each depth, with whole-number ticks and the queue
size dashed, frame times with the refresh period's multiples
dashed, and every axis labelled with its unit. The numbers behind them are checked exactly."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest
from matplotlib.ticker import MaxNLocator

from wddmsim.output import report_plots as rp
from wddmsim.scenario import load_scenario
from wddmsim.runner.system import System
from wddmsim.trace import ListSink

ROOT = Path(__file__).parent.parent
MS_NS = 1_000_000


@cache
def run(example: str, until: int | None = None) -> list[dict]:
    """The event log of an example (one run per example for the whole module; no plot changes
    the events)."""
    sc = load_scenario(str(ROOT / "examples" / f"{example}.toml"))
    trace = ListSink()
    System(sc, trace=trace).run(until=until)
    return trace.events


@pytest.fixture(scope="module")
def game():
    """game_and_compute for 200 ms: 3D and compute busy, the copy engine idle, blt presents."""
    return run("game_and_compute", 200 * MS_NS)


def titles(fig) -> list[tuple[str, str]]:
    return [(ax.get_title(loc="left"), ax.get_title(loc="right")) for ax in fig.axes]


def dashed(ax) -> list[float]:
    return [line.get_ydata()[0] for line in ax.lines if line.get_linestyle() == "--"]


def adapter(*nodes: str) -> list[dict]:
    return [{"t": 0, "event": "LogStart", "format": "wddmsim-events", "version": 1, "scenario": "x", "seed": 1},
            {"t": 0, "event": "AdapterStart", "nodes": [{"ordinal": i, "name": n, "hw_queue_depth": 2}
                                                        for i, n in enumerate(nodes)]}]


# -- node utilisation -------------------------------------------------------------------------------
def test_utilisation_has_one_row_per_node_idle_ones_included(game):
    fig = rp.utilisation_figure(game)
    assert fig.get_suptitle() == "Node utilisation (DMA packets running): busy share of each 2 ms"
    assert titles(fig) == [("3D_0", "57.5 % busy over the run"), ("Compute_0", "100.0 % busy over the run"),
                           ("COPY_0", "idle for the whole run")]
    for ax in fig.axes:
        assert ax.get_ylabel() == "busy (%)" and ax.get_ylim() == (0, 108)
        assert list(ax.get_yticks()) == [0, 50, 100]
    assert fig.axes[-1].get_xlabel() == "virtual time (ms)" and fig.axes[-1].get_xlim() == (0, 200)


def test_hardware_scheduled_utilisation_names_the_turns():
    fig = rp.utilisation_figure(run("hardware_scheduling"))
    assert fig.get_suptitle() == "Node utilisation (hardware contexts running): busy share of each 1 ms"
    assert [left for left, _ in titles(fig)] == ["3D_0", "COPY_0"]


@pytest.mark.parametrize(("end", "width"), [(200 * MS_NS, 2 * MS_NS), (500 * MS_NS, 5 * MS_NS),
                                             (1200 * MS_NS, 20 * MS_NS), (3000 * MS_NS, 50 * MS_NS),
                                             (100 * MS_NS, MS_NS), (30, 1)])
def test_buckets_have_a_round_width_giving_50_to_100_of_them(end, width):
    assert rp.bucket_width(end) == width


def test_utilisation_per_bucket_is_exact_and_the_short_last_bucket_counts_its_own_length():
    assert rp.utilisation([(0, 5), (8, 25)], 25, 10) == [70.0, 100.0, 100.0]
    assert rp.utilisation([], 25, 10) == [0.0, 0.0, 0.0]


def test_busy_spans_merge_and_a_packet_running_at_the_end_runs_to_it():
    events = adapter("3D_0") + [
        {"t": 10, "event": "DmaPacketStart", "node": 0, "fence": 1},
        {"t": 30, "event": "DmaPacketStop", "node": 0, "fence": 1},
        {"t": 30, "event": "DmaPacketStart", "node": 0, "fence": 2},
        {"t": 50, "event": "DmaPacketStop", "node": 0, "fence": 2},
        {"t": 70, "event": "DmaPacketStart", "node": 0, "fence": 3},
        {"t": 100, "event": "LogEnd"}]
    assert rp.busy_spans(events) == {0: [(10, 50), (70, 100)]}


# -- latency ----------------------------------------------------------------------------------------
def test_latency_is_a_cumulative_distribution_on_a_log_axis():
    fig = rp.latency_figure(run("preemption"))
    ax = fig.axes[0]
    assert ax.get_xscale() == "log"
    assert ax.get_xlabel() == "latency (ms, log scale)" and ax.get_ylabel() == "fraction of the context's packets"
    assert [t.get_text() for t in fig.legends[0].get_texts()] == [
        "game.exe/render: 24 packets, p50 1.02 ms, p99 2.02 ms", "background.exe/job: 8 packets, p50 24 ms, p99 46 ms"]
    curves = [line for line in ax.lines if line.get_drawstyle() == "steps-post"]
    assert len(curves) == 2 and all(line.get_ydata()[0] == 0.0 and line.get_ydata()[-1] == 1.0 for line in curves)
    assert [line.get_ydata()[0] for line in ax.lines if line.get_linestyle() == ":"] == [0.5, 0.99]


def test_a_timeout_does_not_squash_the_other_latencies():
    """tdr.toml: one packet waits 2 s for the timeout, the copies take 70 us: both ends in view,
    each decade as wide as the next."""
    ax = rp.latency_figure(run("tdr")).axes[0]
    low, high = ax.get_xlim()
    assert ax.get_xscale() == "log" and low < 0.0698 and high > 2000


def test_vidmm_contexts_are_named_by_their_work_and_node():
    """paging.toml: VidMm's paging and null-context-switch contexts have no ContextCreate."""
    fig = rp.latency_figure(run("paging"))
    assert [t.get_text() for t in fig.legends[0].get_texts()] == [
        "streamer.exe/render: 50 packets, p50 0.659 ms, p99 4.25 ms",
        "VidMm paging on COPY_0: 341 packets, p50 0.218 ms, p99 4.02 ms",
        "viewer.exe/render: 20 packets, p50 4.02 ms, p99 4.24 ms",
        "VidMm context_switch on 3D_0: 9 packets, p50 3.94 ms, p99 4 ms"]
    assert "VidMm (paging)" in rp.run_facts(run("hardware_scheduling")).contexts.values()


def test_latencies_are_per_context_from_queued_to_completed():
    events = adapter("3D_0") + [
        {"t": 0, "event": "QueuePacketStart", "context": 7, "seq": 1},
        {"t": 5, "event": "QueuePacketStart", "context": 7, "seq": 2},
        {"t": 40, "event": "QueuePacketStop", "context": 7, "seq": 1, "status": "Completed"},
        {"t": 45, "event": "QueuePacketStop", "context": 7, "seq": 2, "status": "Cancelled"}]
    assert rp.latencies(events) == {7: [40]}


# -- frame times ------------------------------------------------------------------------------------
def test_frame_times_have_one_row_per_source_with_its_refresh_multiples_dashed():
    """flips.toml: a 60 Hz source whose frames stay up one or two refreshes, a 144 Hz one whose
    frames stay up one or two."""
    fig = rp.frame_figure(run("flips"))
    assert titles(fig) == [
        ("VidPn source 0: 49 display changes", "refresh 60 Hz (16.667 ms, dashed: whole refreshes)"),
        ("VidPn source 1: 114 display changes, 86 presents dropped (x)",
         "refresh 144 Hz (6.944 ms, dashed: whole refreshes)")]
    assert dashed(fig.axes[0]) == [16.666667, 33.333334]
    # (69 display changes, 101 dropped, up to six refreshes before issue 27: the game's MMIO flips no
    # longer stall the shared 3D engine until their vsync, so the composed frames run sooner.)
    assert dashed(fig.axes[1]) == pytest.approx([k * 6.944444 for k in range(1, 3)], abs=1e-9)
    for ax in fig.axes:
        assert ax.get_ylabel() == "frame time (ms)" and ax.get_ylim()[0] == 0
    assert fig.axes[-1].get_xlabel() == "virtual time (ms)"


def test_the_refresh_period_comes_from_vsyncs_and_vsync_timed_frames(game):
    # game_and_compute presents with blt: no VSync events, its frames show at vsyncs
    assert rp.refresh_periods(game) == {0: 16_666_667}
    assert rp.refresh_periods(run("flips")) == {0: 16_666_667, 1: 6_944_444}


def test_an_immediate_flip_does_not_set_the_period_and_an_unknown_one_draws_no_lines():
    events = adapter("3D_0")
    for seq, t in ((1, 1_234_567), (2, 3_000_001)):
        events += [{"t": t - 100, "event": "Present", "context": 5, "seq": seq, "flip": 1, "interval": 0, "source": 0},
                   {"t": t, "event": "Displayed", "source": 0, "context": 5, "seq": seq, "displayed": t}]
    assert rp.refresh_periods(events) == {0: None}
    fig = rp.frame_figure(events)
    assert titles(fig) == [("VidPn source 0: 2 display changes",
                            "refresh period unknown (no vsync-timed frame in the log)")]
    assert dashed(fig.axes[0]) == []


def test_presents_shown_at_one_vsync_are_one_display_change():
    """desktop.toml: the compositor's frame and the windows composed into it are shown together."""
    events = run("desktop")
    assert sum(e["event"] == "Displayed" for e in events) == 101
    assert len(rp.display_changes(events)[0]) == 64


def test_no_frame_plot_without_presents():
    assert rp.frame_figure(adapter("3D_0") + [{"t": 10, "event": "LogEnd"}]) is None


# -- queue depth ------------------------------------------------------------------------------------
def test_queue_depth_is_drawn_per_bucket_with_the_share_at_each_depth_beside_it(game):
    """A busy node's depth changes thousands of times a second: drawn per bucket (each one's
    mean, filled, and the most at once, dotted) and, on the right, the share of the run spent at
    each depth, not step by step (a solid band)."""
    fig = rp.queue_figure(game)
    assert fig.get_suptitle() == ("Hardware queue depth (DMA packets submitted to the node, not yet completed)\n"
                                  "left: the mean of each 2 ms (filled) and the most at once (dotted); right: the "
                                  "share of the run at each depth")
    left, right = fig.axes[0::2], fig.axes[1::2]
    assert titles(fig)[0::2] == [("3D_0", "at most 2, 1.15 on average"), ("Compute_0", "at most 2, 1.94 on average"),
                                 ("COPY_0", "no packets")]
    assert [ax.get_title(loc="left") for ax in right] == ["share of the run"] * 3
    for ax in left:
        assert not any(line.get_drawstyle() == "steps-post" for line in ax.lines)  # no step-by-step band
        assert len(ax.patches) == 3  # the mean filled and outlined, the most dotted: one stairs each
        assert ax.patches[2].get_linestyle() == ":"
        assert isinstance(ax.yaxis.get_major_locator(), MaxNLocator)
        assert all(float(t).is_integer() for t in ax.get_yticks())
        assert ax.get_ylabel() == "packets" and ax.get_ylim() == (-0.45, 2.6)
        assert dashed(ax) == [2] and [t.get_text() for t in ax.texts] == ["queue size 2"]
    # 3D_0: 85.07 ms empty, 0.79 ms at 1, 114.13 ms at 2 of the 200 ms
    assert [t.get_text() for t in right[0].texts] == ["43 %", "<1 %", "57 %"]
    assert [round(bar.get_width(), 4) for bar in right[0].patches] == [42.5358, 0.3972, 57.0669]
    assert [t.get_text() for t in right[1].texts] == ["<1 %", "6 %", "94 %"]
    assert [t.get_text() for t in right[2].texts] == ["100 %"]
    assert fig.axes[-2].get_xlabel() == "virtual time (ms)" and fig.axes[-1].get_xlabel() == "% of the run"


def test_hardware_queue_depth_counts_the_drivers_buffers_without_a_queue_size():
    fig = rp.queue_figure(run("hardware_scheduling"))
    assert fig.get_suptitle().splitlines()[0] == ("Hardware queue depth (buffers with the driver: submitted to a "
                                                  "hardware queue, not yet retired)")
    assert [left for left, _ in titles(fig)[0::2]] == ["3D_0", "COPY_0"] and all(dashed(ax) == [] for ax in fig.axes)


def test_queue_levels_and_their_time_mean_are_exact():
    events = adapter("3D_0", "COPY_0") + [
        {"t": 0, "event": "DmaPacketQueued", "node": 0},
        {"t": 0, "event": "DmaPacketQueued", "node": 0},
        {"t": 10, "event": "DmaPacketStop", "node": 0},
        {"t": 30, "event": "DmaPacketStop", "node": 0},
        {"t": 40, "event": "LogEnd"}]
    levels = rp.queue_levels(events)
    assert levels == {0: [(0, 2), (10, 1), (30, 0)]}
    assert rp.time_mean(levels[0], 40) == (2 * 10 + 1 * 20) / 40
    assert titles(rp.queue_figure(events))[0::2] == [("3D_0", "at most 2, 1.00 on average"), ("COPY_0", "no packets")]
    rare = adapter("3D_0") + [{"t": 0, "event": "DmaPacketQueued", "node": 0},
                              {"t": 1, "event": "DmaPacketStop", "node": 0}, {"t": 1000, "event": "LogEnd"}]
    assert titles(rp.queue_figure(rare))[0::2] == [("3D_0", "at most 1, under 0.005 on average")]


def test_time_at_each_depth_and_the_bucket_means_are_exact():
    """The steps 0..3 at 0, 1 at 3, 0 at 5, 2 at 7, 0 at 13 over [0, 16] in buckets of 5: the ns at
    each depth (a time-weighted histogram) and each bucket's time-weighted mean and most."""
    steps = [(0, 0), (3, 1), (5, 0), (7, 2), (13, 0)]
    assert rp.depth_times(steps, 16) == [3 + 2 + 3, 2, 6]
    means, most = rp.bucket_depths(steps, 16, 5)
    # [0,5): 1 for 2 ns; [5,10): 2 for 3 ns; [10,15): 2 for 3 ns; [15,16): empty, measured on its 1 ns
    assert means == [2 / 5, 6 / 5, 6 / 5, 0.0] and most == [1, 2, 2, 0]
    # the end cuts a step short; a level that lasts no time (the last step at the end) is not counted
    assert rp.depth_times([(0, 3), (4, 5)], 4) == [0, 0, 0, 4]
    assert rp.bucket_depths([(0, 3), (4, 5)], 4, 10) == ([3.0], [3])
    # a depth the log never reached for some time is 0 ns, and an empty log is all at depth 0
    assert rp.depth_times([(0, 0), (2, 2), (4, 0)], 10) == [8, 0, 2]
    assert rp.depth_times([(0, 0)], 7) == [7]


def test_the_share_of_a_deep_queue_labels_only_its_bars_of_1_percent_or_more():
    """Past six depths the bars under 1 % go without a label, so the labels do not pile up."""
    steps = [(0, 8)] + [(100 + i, 7 - i) for i in range(8)]  # 8 for 100 ns, then 7..0 for 1 ns each
    events = adapter("3D_0") + [{"t": 0, "event": "DmaPacketQueued", "node": 0}] * 8 + [
        {"t": t, "event": "DmaPacketStop", "node": 0} for t, _ in steps[1:]] + [{"t": 1000, "event": "LogEnd"}]
    assert rp.depth_times(rp.queue_levels(events)[0], 1000) == [893, 1, 1, 1, 1, 1, 1, 1, 100]
    share = rp.queue_figure(events).axes[1]
    assert [t.get_text() for t in share.texts] == ["89 %", "10 %"]


def test_write_plots_writes_the_four_pngs_in_order(tmp_path, game):
    names = [Path(p).name for p in rp.write_plots(game, str(tmp_path))]
    assert names == ["node_utilisation.png", "context_latency.png", "frame_times.png", "queue_depths.png"]
    assert all((tmp_path / n).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for n in names)
