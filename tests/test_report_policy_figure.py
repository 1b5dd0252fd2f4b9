"""The policy comparison of a sweep's runs (``wddmsim sweep ... --report DIR``,
:func:`wddmsim.output.report.write_comparison`, :func:`wddmsim.output.report_compare.policy_figure`), read from the
figure: each policy's latency distribution pooled over its runs' contexts (estimated from each
context's min, p50, p99 and max, weighted by packets completed) and its deadline misses per run
(the sum over contexts of ``deadline_misses``; None or no field is no deadline)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from wddmsim.cli import main
from wddmsim.output.report import COMPARISON_FILE, ComparisonError, write_comparison
from wddmsim.output.report_compare import deadline_misses, latency_cdf, policy_figure, policy_groups

PRIORITIES = str(Path(__file__).resolve().parents[1] / "examples" / "priorities.toml")
POLICY = "scheduler.policy"
runner = CliRunner()


def _context(i: int, completed: int, knots_us, misses="absent") -> dict:
    lo, p50, p99, hi = (1000 * v for v in knots_us)
    out = {f"contexts.{i}.context": f"app{i}.exe/render", f"contexts.{i}.completed": completed,
           f"contexts.{i}.latency_min_ns": lo, f"contexts.{i}.latency_p50_ns": p50,
           f"contexts.{i}.latency_p99_ns": p99, f"contexts.{i}.latency_max_ns": hi}
    if misses != "absent":
        out[f"contexts.{i}.deadline_misses"] = misses
    return out


def _row(policy, seed, *contexts, error=None, **settings) -> dict:
    row = {POLICY: policy, **settings, "seed": seed, "error": error, "scenario": "study"}
    for c in contexts:
        row |= c
    return row


def _curves(fig):
    """The latency panel's curves: (legend label, x data in ms, fractions)."""
    ax = fig.axes[0]
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    lines = [ln for ln in ax.lines if not ln.get_label().startswith("_")]
    return [(label, list(ln.get_xdata()), list(ln.get_ydata())) for label, ln in zip(labels, lines)]


def test_one_context_of_one_run_passes_through_its_percentiles():
    row = _row("fifo", 1, _context(0, 50, (1, 2, 3, 4)))
    assert latency_cdf([row]) == ([(1000.0, 0.0), (2000.0, 0.5), (3000.0, 0.99), (4000.0, 1.0)], 50)


def test_runs_and_contexts_are_pooled_weighted_by_packets_completed():
    a = _row("fifo", 1, _context(0, 100, (1, 2, 3, 4)))
    b = _row("fifo", 2, _context(0, 100, (2, 4, 6, 8)), _context(1, 200, (2, 4, 6, 8)))
    points, packets = latency_cdf([a, b])
    assert packets == 400
    # (1 x context a + 3 x context b) / 4 at each latency either names
    assert [x for x, _ in points] == [1000.0, 2000.0, 3000.0, 4000.0, 6000.0, 8000.0]
    assert [f for _, f in points] == pytest.approx([0.0, 0.125, (0.99 + 3 * 0.25) / 4, 0.625,
                                                    (1 + 3 * 0.99) / 4, 1.0], rel=1e-15)


def test_a_context_without_packets_or_figures_counts_for_nothing():
    row = _row("fifo", 1, _context(0, 0, (1, 2, 3, 4)), {"contexts.1.completed": 5, "contexts.1.latency_min_ns": None})
    assert latency_cdf([row]) == ([], 0)


@pytest.mark.parametrize(("contexts", "misses"), [
    ([_context(0, 1, (1, 2, 3, 4), 1), _context(1, 1, (1, 2, 3, 4), 2), _context(2, 1, (1, 2, 3, 4), None)], 3),
    ([_context(0, 1, (1, 2, 3, 4), 0)], 0),
    ([_context(0, 1, (1, 2, 3, 4), None)], None),
    ([_context(0, 1, (1, 2, 3, 4))], None),
])
def test_a_runs_deadline_misses_are_the_sum_over_its_contexts_with_a_deadline(contexts, misses):
    assert deadline_misses(_row("edf", 1, *contexts)) == misses


def _study() -> list[dict]:
    """fifo: two runs (3 and 5 misses) and a failed one; windows: no deadline; a researcher's Edf:
    no misses in two runs."""
    return [
        _row("fifo", 1, _context(0, 100, (1, 2, 3, 4), 1), _context(1, 100, (1, 2, 3, 4), 2),
             **{"adapter.hw_queue_depth": 1}),
        _row("fifo", 2, _context(0, 100, (1, 2, 3, 4), 5), _context(1, 100, (1, 2, 3, 4), None),
             **{"adapter.hw_queue_depth": 2}),
        _row("fifo", 3, error="bug check 0x116 (VIDEO_TDR_FAILURE): x", **{"adapter.hw_queue_depth": 1}),
        _row("windows", 1, _context(0, 10, (2, 4, 6, 8)), **{"adapter.hw_queue_depth": 1}),
        _row("mypolicy.py:Edf", 1, _context(0, 30, (1, 1, 2, 2), 0), **{"adapter.hw_queue_depth": 1}),
        _row("mypolicy.py:Edf", 2, _context(0, 10, (1, 1, 2, 2), 0), **{"adapter.hw_queue_depth": 2}),
    ]


def test_the_figure_draws_one_curve_per_policy_and_its_deadline_misses():
    rows = _study()
    assert list(policy_groups(rows)) == ["fifo", "windows", "Edf"]
    fig = policy_figure(rows)
    assert fig.get_suptitle() == ("Scheduler policies compared: study (5 runs, each policy pooled over "
                                  "adapter.hw_queue_depth, seeds)")
    assert _curves(fig) == [
        ("fifo: 2 runs, 400 packets, 1 failed", [0.001, 0.001, 0.002, 0.003, 0.004], [0.0, 0.0, 0.5, 0.99, 1.0]),
        ("windows: 1 run, 10 packets", [0.002, 0.002, 0.004, 0.006, 0.008], [0.0, 0.0, 0.5, 0.99, 1.0]),
        ("Edf: 2 runs, 40 packets", [0.001, 0.001, 0.002], [0.0, 0.5, 1.0]),
    ]
    lat = fig.axes[0]
    assert lat.get_legend().get_title().get_text() == POLICY
    assert lat.get_xscale() == "log" and lat.get_xlabel() == "latency (ms, log scale)"
    miss = fig.axes[1]
    assert [t.get_text() for t in miss.get_xticklabels()] == ["fifo", "windows", "Edf"]
    bars = miss.patches
    assert [(b.get_x() + b.get_width() / 2, b.get_height()) for b in bars] == [(0.0, 4.0), (2.0, 0.0)]
    # the whisker: fifo's runs missed 3 and 5
    segments = [tuple(map(tuple, s)) for c in miss.containers if hasattr(c, "errorbar") and c.errorbar
                for s in c.errorbar.lines[2][0].get_segments()]
    assert segments == [((0.0, 3.0), (0.0, 5.0)), ((2.0, 0.0), (2.0, 0.0))]
    texts = [(t.get_text(), t.get_position()) for t in miss.texts]
    assert ("no deadline", (1, 0)) in texts
    assert [a.get_text() for a in miss.texts if a.get_text() != "no deadline"] == ["4", "0"]
    assert miss.get_ylim() == (0.0, 6.0)
    assert miss.get_ylabel() == "deadline misses per run"


def test_without_any_deadline_the_panel_says_so():
    rows = [_row("fifo", 1, _context(0, 10, (1, 2, 3, 4))), _row("edf", 1, _context(0, 10, (1, 2, 3, 4), None))]
    fig = policy_figure(rows)
    assert fig.get_suptitle() == "Scheduler policies compared: study (2 runs)"
    miss = fig.axes[1]
    assert len(miss.patches) == 0 and [t.get_text() for t in miss.texts] == ["no context has a deadline"]


def test_two_classes_of_one_name_keep_their_whole_values():
    rows = [_row("a.py:Edf", 1, _context(0, 10, (1, 2, 3, 4))), _row("b.py:Edf", 1, _context(0, 10, (1, 2, 3, 4)))]
    assert list(policy_groups(rows)) == ["a.py:Edf", "b.py:Edf"]


def test_write_comparison_writes_the_png_or_says_why_not(tmp_path):
    assert write_comparison(_study(), str(tmp_path / "r")) == [str(tmp_path / "r" / COMPARISON_FILE)]
    assert (tmp_path / "r" / COMPARISON_FILE).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(ComparisonError) as e:
        write_comparison([{"seed": 1, "error": None}], str(tmp_path / "s"))
    assert str(e.value) == ("the rows have no scheduler.policy column; sweep the policies with "
                            "--set scheduler.policy=A,B,...")
    with pytest.raises(ComparisonError) as e:
        write_comparison([_row("fifo", 1, error="x"), _row("edf", 1, error="y")], str(tmp_path / "s"))
    assert str(e.value) == "every run failed (2 of 2); no policy to compare"
    assert not (tmp_path / "s").exists()


# -- the command -----------------------------------------------------------------------------------
def test_sweep_report_writes_the_comparison_of_the_swept_policies(tmp_path):
    out = tmp_path / "cmp"
    r = runner.invoke(main, ["sweep", PRIORITIES, "--set", f"{POLICY}=strict_priority,priority_quantum",
                             "--seeds", "1-2", "--workers", "1", "--json", "--report", str(out)])
    assert r.exit_code == 0, r.stderr
    assert r.stderr.endswith(f"policy comparison in {out / COMPARISON_FILE}\n")
    assert (out / COMPARISON_FILE).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    rows = json.loads(r.stdout)
    labels = [label for label, _, _ in _curves(policy_figure(rows))]
    packets = {p: latency_cdf([row for row in rows if row[POLICY] == p])[1]
               for p in ("strict_priority", "priority_quantum")}
    assert labels == [f"{p}: 2 runs, {n} packets" for p, n in packets.items()]
    assert all(n > 0 for n in packets.values())


def test_sweep_report_needs_the_policy_swept_and_refuses_before_running(tmp_path):
    r = runner.invoke(main, ["sweep", PRIORITIES, "--set", "scheduler.quantum=1ms,2ms", "--json",
                             "--report", str(tmp_path / "cmp")])
    assert r.exit_code == 2
    assert r.stderr == (f"wddmsim: error: --report {tmp_path / 'cmp'}: compares scheduler policies; sweep them "
                        f"with --set scheduler.policy=A,B,...\n")
    assert r.stdout == "" and not (tmp_path / "cmp").exists()


def test_rows_that_carry_their_histograms_give_the_exact_distribution():
    from wddmsim.output.report_compare import latency_cdf

    rows = [{"scheduler.policy": "edf", "seed": 1, "error": None, "_latency": [[[1000, 1], [2000, 1]], [[3000, 2]]]},
            {"scheduler.policy": "edf", "seed": 2, "error": None, "_latency": [[], [[2000, 4]]]}]
    assert latency_cdf(rows) == ([(1000.0, 0.125), (2000.0, 0.75), (3000.0, 1.0)], 8)
