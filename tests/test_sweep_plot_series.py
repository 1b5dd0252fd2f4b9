"""``wddmsim sweep --plot`` with several settings: every seed giving the same float no longer
crashes the error bars (issue 26), a scheduler policy's lines are labelled by the policy's name,
string-valued settings make lines, and ``--series`` says which setting makes them (every other
setting but ``--x`` single-valued, else one line and exit status 2 before anything runs)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from wddmsim.cli import main
from wddmsim.output.sweep_plot import PlotError, choose_axes, metric_figure, plot_metric, points, policy_name

PRIORITIES = str(Path(__file__).resolve().parents[1] / "examples" / "priorities.toml")
POLICY = "scheduler.policy"
DEPTH = "adapter.hw_queue_depth"
QUANTUM = "scheduler.quantum"
runner = CliRunner()


def _bars(ax) -> list[list[tuple[float, float]]]:
    """Per errorbar line, each point's bar as ((x, low end), (x, high end))."""
    return [[tuple(map(tuple, seg)) for seg in c.lines[2][0].get_segments()] for c in ax.containers]


# -- the crash -------------------------------------------------------------------------------------
def test_every_seed_giving_the_same_float_draws_bars_of_length_zero(tmp_path):
    # three seeds of 0.1: their sum / 3 is 0.10000000000000002, past the largest value; the bar's
    # upper length max - mean was negative and matplotlib refused it ('yerr' must not contain
    # negative values). The mean is now kept between the smallest and the largest.
    rows = [{QUANTUM: q, "seed": s, "error": None, "nodes.0.busy_pct": v}
            for q, v in (("1ms", 0.1), ("2ms", 7 / 3)) for s in (1, 2, 3)]
    drawn = plot_metric(rows, "nodes.0.busy_pct", [QUANTUM], tmp_path / "p.png")
    assert drawn["lines"] == {"nodes.0.busy_pct": [("1ms", 0.1, 0.1, 0.1, 3), ("2ms", 7 / 3, 7 / 3, 7 / 3, 3)]}
    assert (tmp_path / "p.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    ax = metric_figure(rows, "nodes.0.busy_pct", points(rows, "nodes.0.busy_pct", [QUANTUM])).axes[0]
    assert _bars(ax) == [[((0.0, 0.1), (0.0, 0.1)), ((1.0, 7 / 3), (1.0, 7 / 3))]]
    assert ax.get_title() == "column nodes.0.busy_pct; mean of 3 seeds, every seed gave the same value"


def test_a_mean_given_past_its_range_is_drawn_with_bars_of_length_zero():
    # points of a caller's own making, the mean past the largest value: the figure clamps the
    # upper bar's length at 0 (the lower one runs down to the smallest value)
    drawn = {"x": QUANTUM, "xs": ["1ms"], "lines": {"m": [("1ms", 0.10000000000000002, 0.1, 0.1, 3)]}}
    ax = metric_figure([], "m", drawn).axes[0]
    assert _bars(ax) == [[((0.0, 0.1), (0.0, 0.10000000000000002))]]


def test_the_mean_of_different_values_is_unchanged():
    rows = [{QUANTUM: "1ms", "seed": s, "error": None, "m": v} for s, v in ((1, 1.0), (2, 2.0), (3, 6.0))]
    assert points(rows, "m", [QUANTUM], x=QUANTUM)["lines"] == {"m": [("1ms", 3.0, 1.0, 6.0, 3)]}


# -- policies as lines -----------------------------------------------------------------------------
@pytest.mark.parametrize(("value", "name"), [
    ("edf", "edf"), ("mypolicy.py:Edf", "Edf"), ("research.policies:Edf", "Edf"),
    ("policies/edf.py:EarliestDeadline", "EarliestDeadline"), ("strict_priority", "strict_priority"),
])
def test_a_policy_is_named_by_its_name_or_its_class(value, name):
    assert policy_name(value) == name


def _policy_rows(policies, depths=(1, 2, 4), seeds=(1, 2), quanta=("2ms",)) -> list[dict]:
    """Rows as a sweep gives them: POLICY, DEPTH and QUANTUM swept, the metric a sum of indices."""
    return [{POLICY: p, DEPTH: d, QUANTUM: q, "seed": s, "error": None, "contexts.0.context": "game.exe/render",
             "contexts.0.latency_p99_ns": 1_000_000 * (10 * i + d + k) + s}
            for i, p in enumerate(policies) for d in depths for k, q in enumerate(quanta) for s in seeds]


def test_each_policy_is_a_line_over_the_x_setting_labelled_by_its_name():
    rows = _policy_rows(["fifo", "windows", "mypolicy.py:Edf"])
    drawn = points(rows, "contexts.0.latency_p99_ns", [POLICY, DEPTH, QUANTUM], x=DEPTH)
    assert list(drawn["lines"]) == ["fifo", "windows", "Edf"]
    assert drawn["lines"]["Edf"] == [(1, 21_000_001.5, 21_000_001.0, 21_000_002.0, 2),
                                     (2, 22_000_001.5, 22_000_001.0, 22_000_002.0, 2),
                                     (4, 24_000_001.5, 24_000_001.0, 24_000_002.0, 2)]
    ax = metric_figure(rows, "contexts.0.latency_p99_ns", drawn).axes[0]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["fifo", "windows", "Edf"]
    assert [list(c.lines[0].get_xdata()) for c in ax.containers] == [[1, 2, 4]] * 3
    assert [list(c.lines[0].get_ydata()) for c in ax.containers] == [
        [pytest.approx(v) for v in (1.0000015, 2.0000015, 4.0000015)],
        [pytest.approx(v) for v in (11.0000015, 12.0000015, 14.0000015)],
        [pytest.approx(v) for v in (21.0000015, 22.0000015, 24.0000015)]]
    assert ax.get_xlabel() == DEPTH


def test_policies_on_the_x_axis_are_ticked_by_name_and_a_string_setting_makes_the_lines():
    rows = _policy_rows(["fifo", "mypolicy.py:Edf"], depths=(1,), quanta=("1ms", "2ms"))
    drawn = points(rows, "contexts.0.latency_p99_ns", [POLICY, DEPTH, QUANTUM], x=POLICY)
    assert drawn["xs"] == ["fifo", "mypolicy.py:Edf"]
    assert list(drawn["lines"]) == ["scheduler.quantum=1ms", "scheduler.quantum=2ms"]
    ax = metric_figure(rows, "contexts.0.latency_p99_ns", drawn).axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["fifo", "Edf"]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["scheduler.quantum=1ms", "scheduler.quantum=2ms"]


def test_a_policy_among_other_line_settings_is_named_alone():
    rows = _policy_rows(["fifo", "edf"], depths=(1, 2), quanta=("1ms", "2ms"), seeds=(1,))
    drawn = points(rows, "contexts.0.latency_p99_ns", [POLICY, DEPTH, QUANTUM], x=DEPTH)
    assert list(drawn["lines"]) == ["fifo, scheduler.quantum=1ms", "fifo, scheduler.quantum=2ms",
                                    "edf, scheduler.quantum=1ms", "edf, scheduler.quantum=2ms"]


def test_unhashable_values_make_lines_too():
    rows = [{"displays.0.refresh": r, DEPTH: d, "seed": 1, "error": None, "m": d}
            for r in ([60], [60, 144]) for d in (1, 2)]
    drawn = points(rows, "m", ["displays.0.refresh", DEPTH], x=DEPTH)
    assert drawn["lines"] == {"displays.0.refresh=[60]": [(1, 1.0, 1.0, 1.0, 1), (2, 2.0, 2.0, 2.0, 1)],
                              "displays.0.refresh=[60, 144]": [(1, 1.0, 1.0, 1.0, 1), (2, 2.0, 2.0, 2.0, 1)]}


# -- --series --------------------------------------------------------------------------------------
def test_series_names_the_lines_and_the_x_axis_follows():
    rows = _policy_rows(["fifo", "edf"], quanta=("2ms",))
    drawn = points(rows, "contexts.0.latency_p99_ns", [POLICY, DEPTH, QUANTUM], series=POLICY)
    assert drawn["x"] == DEPTH and list(drawn["lines"]) == ["fifo", "edf"]
    drawn = points(rows, "contexts.0.latency_p99_ns", [POLICY, DEPTH, QUANTUM], series=DEPTH)
    assert drawn["x"] == POLICY and list(drawn["lines"]) == [f"{DEPTH}={d}" for d in (1, 2, 4)]


@pytest.mark.parametrize(("x", "series", "message"), [
    (DEPTH, POLICY, "--series scheduler.policy: scheduler.quantum varies too; with --x and --series every other "
                    "setting takes one value (or leave out --series for a line per combination)"),
    (None, POLICY, "--plot m: several settings vary (adapter.hw_queue_depth, scheduler.quantum); choose the x axis "
                   "with --x (--series gives the lines)"),
    (DEPTH, DEPTH, "--series adapter.hw_queue_depth: is the x axis too; choose another setting for --x or --series"),
    (DEPTH, "seed", "--series seed: not a swept setting; the settings are scheduler.policy, adapter.hw_queue_depth, "
                    "scheduler.quantum"),
])
def test_series_refuses_what_it_cannot_draw(x, series, message):
    settings = [POLICY, DEPTH, QUANTUM]
    with pytest.raises(PlotError) as e:
        choose_axes("m", settings, settings, x, series)
    assert str(e.value) == message


def test_series_needs_another_setting_that_varies():
    with pytest.raises(PlotError, match="^--series scheduler.policy: no other setting takes more than one value"):
        choose_axes("m", [POLICY, DEPTH], [POLICY], None, POLICY)
    assert choose_axes("m", [POLICY, DEPTH], [POLICY, DEPTH], None, POLICY) == (DEPTH, [POLICY])
    assert choose_axes("m", [POLICY, DEPTH], [DEPTH], None, POLICY) == (DEPTH, [POLICY])


# -- the command -----------------------------------------------------------------------------------
def _sweep(*args: str):
    return runner.invoke(main, ["sweep", PRIORITIES, "--seeds", "1-2", "--workers", "1", *args])


def test_the_command_refuses_a_third_varying_setting_with_series_before_running():
    r = _sweep("--set", f"{POLICY}=strict_priority,priority_quantum", "--set", f"{QUANTUM}=1ms,2ms",
               "--set", f"{DEPTH}=1,2", "--json", "--plot", "contexts.0.latency_p99_ns", "--x", DEPTH,
               "--series", POLICY)
    assert r.exit_code == 2
    assert r.stderr == ("wddmsim: error: --series scheduler.policy: scheduler.quantum varies too; with --x and "
                        "--series every other setting takes one value (or leave out --series for a line per "
                        "combination)\n")
    assert r.stdout == ""


@pytest.mark.parametrize(("args", "message"), [
    (["--json", "--series", POLICY], "wddmsim: error: --series: goes with --plot METRIC\n"),
    (["--json", "--set", f"{DEPTH}=1,2", "--plot", "events", "--series", POLICY],
     "wddmsim: error: --series scheduler.policy: not a swept setting; the settings are adapter.hw_queue_depth\n"),
    (["--json", "--set", f"{DEPTH}=1,2", "--plot", "events", "--x", DEPTH, "--series", DEPTH],
     "wddmsim: error: --series adapter.hw_queue_depth: is the x axis too; choose another setting for --x or "
     "--series\n"),
])
def test_bad_series_input_is_one_line_and_exit_2(args, message):
    r = _sweep(*args)
    assert r.exit_code == 2 and r.stderr == message


def test_the_command_draws_one_line_per_policy_with_a_string_setting_single_valued(tmp_path):
    png = tmp_path / "p.png"
    r = _sweep("--set", f"{POLICY}=strict_priority,priority_quantum", "--set", f"{QUANTUM}=1ms",
               "--set", f"{DEPTH}=1,2", "--json", "--plot", "contexts.0.latency_p99_ns", "--x", DEPTH,
               "--series", POLICY, "--plot-file", str(png))
    assert r.exit_code == 0, r.stderr
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert r.stderr.endswith(f"plot of contexts.0.latency_p99_ns in {png}\n")
    rows = json.loads(r.stdout)
    drawn = points(rows, "contexts.0.latency_p99_ns", [POLICY, QUANTUM, DEPTH], x=DEPTH, series=POLICY)
    assert list(drawn["lines"]) == ["strict_priority", "priority_quantum"]
    assert [[(p[0], p[4]) for p in pts] for pts in drawn["lines"].values()] == [[(1, 2), (2, 2)]] * 2
    # without --series the quantum, taking one value, makes no lines of its own: the same figure
    assert points(rows, "contexts.0.latency_p99_ns", [POLICY, QUANTUM, DEPTH], x=DEPTH)["lines"] == drawn["lines"]


def test_the_command_draws_a_string_setting_as_series(tmp_path):
    png = tmp_path / "q.png"
    r = _sweep("--set", f"{QUANTUM}=1ms,4ms", "--set", f"{DEPTH}=1,2", "--json", "--plot",
               "contexts.2.latency_max_ns", "--series", QUANTUM, "--plot-file", str(png))
    assert r.exit_code == 0, r.stderr
    rows = json.loads(r.stdout)
    drawn = points(rows, "contexts.2.latency_max_ns", [QUANTUM, DEPTH], series=QUANTUM)
    assert drawn["x"] == DEPTH
    assert list(drawn["lines"]) == ["scheduler.quantum=1ms", "scheduler.quantum=4ms"]
