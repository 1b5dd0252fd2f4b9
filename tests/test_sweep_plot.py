"""``wddmsim sweep --plot``'s figure (:func:`wddmsim.output.sweep_plot.metric_figure`), read from the
figure object: the metric named in words with its unit, the entry it belongs to by name, the
setting on the x axis, the y axis from 0, each point's value written beside it, several lines
shifted apart, and a log axis for a numeric setting over a wide range."""

from __future__ import annotations

from pathlib import Path

import pytest

from wddmsim.sweep import sweep
from wddmsim.output.sweep_plot import describe, metric_figure, plot_metric, points

PREEMPTION = str(Path(__file__).resolve().parents[1] / "examples" / "preemption.toml")
SETTING = "adapter.nodes.0.preemption"


@pytest.fixture(scope="module")
def rows():
    """preemption.toml with the 3D engine's granularity at DMA buffer and primitive, seeds 1-2."""
    return sweep(PREEMPTION, [f"{SETTING}=dma_buffer,primitive"], "1-2", workers=1)


def test_the_figure_names_the_metric_the_context_and_the_setting_in_words(rows):
    drawn = points(rows, "contexts.0.latency_p99_ns", [SETTING])
    assert drawn == {"x": SETTING, "xs": ["dma_buffer", "primitive"], "lines": {"contexts.0.latency_p99_ns": [
        ("dma_buffer", 22_000_000.0, 22_000_000.0, 22_000_000.0, 2),
        ("primitive", 19_380_000.0, 19_380_000.0, 19_380_000.0, 2)]}}
    fig = metric_figure(rows, "contexts.0.latency_p99_ns", drawn)
    ax = fig.axes[0]
    assert fig.get_suptitle() == "game.exe/render: latency p99"
    assert ax.get_title() == "column contexts.0.latency_p99_ns; mean of 2 seeds, every seed gave the same value"
    assert ax.get_ylabel() == "latency p99 (ms)"
    assert ax.get_xlabel() == "adapter.nodes.0.preemption (node 3D_0)"
    assert [t.get_text() for t in ax.get_xticklabels()] == ["dma_buffer", "primitive"]
    assert ax.get_xlim() == (-0.5, 1.5)
    assert ax.get_ylim()[0] == 0
    assert [t.get_text() for t in ax.texts] == ["22", "19.38"]


@pytest.mark.parametrize(("metric", "words"), [
    ("contexts.1.latency_max_ns", ("background.exe/job", "latency max")),
    ("nodes.0.busy_pct", ("3D_0", "busy")),
    ("processes.0.gpu_busy_ns", ("game.exe", "gpu busy")),
    ("displays.0.frame_time_p99_ns", ("VidPn source 0", "frame time p99")),
    ("packets_completed", ("", "packets completed")),
    ("tdr.engine_resets", ("tdr", "engine resets")),
])
def test_a_metric_in_words(rows, metric, words):
    assert describe(rows, metric) == words


def _rows(values: dict, seeds=(1, 2)) -> list[dict]:
    return [{"driver.ring_size": size, "scheduler.quantum": q, "seed": s, "error": "", "events": v + s}
            for (size, q), v in values.items() for s in seeds]


def test_a_numeric_setting_over_a_wide_range_gets_a_log_axis_ticked_at_its_values():
    rows = _rows({(4096, "1ms"): 10, (16384, "1ms"): 20, (65536, "1ms"): 30})
    drawn = points(rows, "events", ["driver.ring_size", "scheduler.quantum"])
    ax = metric_figure(rows, "events", drawn).axes[0]
    assert ax.get_xscale() == "log"
    assert list(ax.get_xticks()) == [4096, 16384, 65536]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["4096", "16384", "65536"]
    assert ax.get_title() == "column events; mean of 2 seeds, bars from the smallest to the largest"
    assert ax.get_ylabel() == "events" and [t.get_text() for t in ax.texts] == ["11.5", "21.5", "31.5"]


def test_lines_over_a_named_setting_are_shifted_apart_and_labelled():
    rows = _rows({(4096, "1ms"): 10, (4096, "2ms"): 20, (8192, "1ms"): 30, (8192, "2ms"): 40}, seeds=(1,))
    drawn = points(rows, "events", ["driver.ring_size", "scheduler.quantum"], x="scheduler.quantum")
    fig = metric_figure(rows, "events", drawn)
    ax = fig.axes[0]
    assert ax.get_xscale() == "linear"
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["driver.ring_size=4096", "driver.ring_size=8192"]
    # each errorbar container's line: x positions 0 and 1, moved apart by the 0.25 spread
    xs = [list(c.lines[0].get_xdata()) for c in ax.containers]
    assert xs == [[-0.125, 0.875], [0.125, 1.125]]
    assert ax.get_title() == "column events; mean of 1 seed, one run per point"


def test_plot_metric_writes_the_png_and_returns_the_points(rows, tmp_path):
    out = tmp_path / "p.png"
    assert plot_metric(rows, "nodes.0.busy_pct", [SETTING], out)["x"] == SETTING
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
