"""``wddmsim sweep --plot`` of a bounded index (:mod:`wddmsim.output.sweep_plot`): Jain's fairness
index is named in words, with its node and priority, instead of ``fairness.0: jain``, and its y
axis fits the values (:func:`~wddmsim.output.sweep_plot.value_range`) instead of starting at 0,
which hid the 0.95 to 1.0 where schedulers differ."""

from __future__ import annotations

from pathlib import Path

import pytest

from wddmsim.output.sweep_plot import BOUNDED, WORDS, describe, metric_figure, points, value_range
from wddmsim.sweep import sweep

MMIO_FLIPS = str(Path(__file__).resolve().parents[1] / "examples" / "mmio_flips.toml")
POLICY = "scheduler.policy"


def _rows(values: dict[str, list[float]], metric: str = "fairness.0.jain") -> list[dict]:
    """Rows of a policy sweep: per policy, one row per seed with ``metric`` at the value given."""
    return [{POLICY: policy, "seed": seed, "error": None, "fairness.0.node": "3D_0",
             "fairness.0.priority_class": "normal", "fairness.0.priority": 0, metric: value}
            for policy, vs in values.items() for seed, value in enumerate(vs, 1)]


def test_the_fairness_index_is_named_in_words_with_its_node_and_priority():
    rows = sweep(MMIO_FLIPS, [f"{POLICY}=windows,fifo"], workers=1)
    assert [r["error"] for r in rows] == [None, None]
    assert describe(rows, "fairness.0.jain") == ("3D_0, normal priority 0", "Jain's fairness index")
    fig = metric_figure(rows, "fairness.0.jain", points(rows, "fairness.0.jain", [POLICY]))
    assert fig.get_suptitle() == "3D_0, normal priority 0: Jain's fairness index"
    assert fig.axes[0].get_ylabel() == "Jain's fairness index"
    assert fig.axes[0].get_title() == "column fairness.0.jain; mean of 1 seed, one run per point"
    # both runs gave 0.961538: the axis is that value with the least margin, 0.01, either side
    assert fig.axes[0].get_ylim() == pytest.approx((0.951538, 0.971538))


def test_a_share_is_named_in_words_and_a_signed_figure_is_not():
    rows = [{"contexts.0.context": "game.exe/render"}]
    assert describe(rows, "contexts.0.share") == ("game.exe/render", "share of the node's GPU time")
    assert describe(rows, "contexts.0.share_error") == ("game.exe/render", "share error")
    assert WORDS["jain"] == "Jain's fairness index" and BOUNDED["jain"] == (0.0, 1.0)


@pytest.mark.parametrize(("values", "ylim"), [
    # 0.96 to 1.0: a span of 0.04, whose tenth is under the least margin (1 % of the range, 0.01)
    ({"windows": [0.96, 0.98], "fifo": [0.99, 1.0]}, (0.95, 1.01)),
    # 0.5 to 1.0: a tenth of the span, 0.05, either side
    ({"windows": [0.5, 0.6], "fifo": [0.9, 1.0]}, (0.45, 1.05)),
    # near the floor: never below 0
    ({"windows": [0.004, 0.3], "fifo": [0.5, 0.5]}, (0.0, 0.5496)),
])
def test_the_y_axis_of_jains_index_fits_its_values(values, ylim):
    rows = _rows(values)
    fig = metric_figure(rows, "fairness.0.jain", points(rows, "fairness.0.jain", [POLICY]))
    assert fig.axes[0].get_ylim() == pytest.approx(ylim)


def test_value_range_and_the_metrics_that_still_start_at_0():
    assert value_range(0.96, 1.0, 0.0, 1.0) == pytest.approx((0.95, 1.01))
    assert value_range(1.0, 1.0, 0.0, 1.0) == pytest.approx((0.99, 1.01))
    assert value_range(0.0, 0.0, 0.0, 1.0) == pytest.approx((0.0, 0.01))
    # a latency is not bounded above: its axis starts at 0, as before
    rows = _rows({"windows": [20e6, 22e6], "fifo": [21e6, 21e6]}, metric="contexts.0.latency_p99_ns")
    ax = metric_figure(rows, "contexts.0.latency_p99_ns",
                       points(rows, "contexts.0.latency_p99_ns", [POLICY])).axes[0]
    assert ax.get_ylim() == pytest.approx((0.0, 22 * 1.15))
