"""``wddmsim sweep`` and :func:`wddmsim.sweep.sweep`: the cross product of settings and seeds, one
exact row per run in the product's order, the same rows byte for byte in this process, on a pool
of two workers and on a Dask cluster; failures as error rows; CSV, JSON, plot and progress bar."""

from __future__ import annotations

import csv
import io
import json
import re
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from rich.console import Console

from wddmsim.cli import main
from wddmsim.sweep import (DaskMissing, SweepError, columns, flatten, parse_seeds, parse_setting, public, rows_to_csv,
                           rows_to_dataframe, sweep)
from wddmsim.output.sweep_plot import PlotError, axis_unit, plot_metric
from wddmsim.sweep.progress import SweepProgress
from wddmsim.sweep.runner import run_one

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
GAME = str(EXAMPLES / "game_and_compute.toml")
PREEMPTION = str(EXAMPLES / "preemption.toml")
JITTER = "process.0.context.0.workload.jitter"
#: four runs of 20 ms: the game's frame jitter off and on, seeds 1 and 2
SETS = ["duration=20ms", f"{JITTER}=0.0,0.25"]
SEEDS = "1-2"

runner = CliRunner(mix_stderr=False) if "mix_stderr" in CliRunner.__init__.__code__.co_varnames else CliRunner()


@pytest.fixture(scope="module")
def serial_rows():
    return sweep(GAME, SETS, SEEDS, workers=1)


# ------------------------------------------------------------------------------------------ grid
@pytest.mark.parametrize(("text", "seeds"), [
    ("1-10", list(range(1, 11))), ("1,3,5", [1, 3, 5]), ("1-3,7", [1, 2, 3, 7]), ("0", [0]), (" 4 - 5 , 9", [4, 5, 9]),
    ("7,2-3", [7, 2, 3]),
])
def test_seed_lists(text, seeds):
    assert parse_seeds(text) == seeds


@pytest.mark.parametrize(("text", "reason"), [
    ("3-1", "runs backwards"), ("a", "'a' is not a seed"), ("1,,2", "'' is not a seed"), ("1-3,2", "seed 2 is given twice"),
    ("-1", "is not a seed"), ("1-", "is not a seed"), ("1.5", "is not a seed"),
])
def test_bad_seed_lists(text, reason):
    with pytest.raises(SweepError, match=reason):
        parse_seeds(text)


def test_a_setting_takes_several_values_each_a_toml_value_or_a_string():
    s = parse_setting("adapter.nodes[0].preemption=dma_buffer, primitive")
    assert s.column == "adapter.nodes.0.preemption"
    assert [v.value for v in s.values] == ["dma_buffer", "primitive"]
    assert [v.text for v in s.values] == ["adapter.nodes.0.preemption=dma_buffer", "adapter.nodes.0.preemption=primitive"]
    assert [v.value for v in parse_setting("adapter.displays=[60,144],[60]").values] == [[60, 144], [60]]
    assert [v.value for v in parse_setting("x=1,2.5,true,\"a,b\"").values] == [1, 2.5, True, "a,b"]
    with pytest.raises(SweepError, match="an empty value"):
        parse_setting("scheduler.quantum=1ms,,2ms")


def test_rows_follow_the_cross_product_first_setting_slowest_seeds_fastest(serial_rows):
    assert [(r["duration"], r[JITTER], r["seed"]) for r in serial_rows] == [
        ("20ms", 0.0, 1), ("20ms", 0.0, 2), ("20ms", 0.25, 1), ("20ms", 0.25, 2)]
    assert columns(serial_rows)[:5] == ["duration", JITTER, "seed", "error", "scenario"]


# ------------------------------------------------------------------------------------------ rows
def test_exact_rows_of_a_tiny_sweep(serial_rows):
    figures = [(r["error"], r["virtual_time_ns"], r["packets_completed"], r["contexts.0.latency_max_ns"],
                r["contexts.0.latency_p50_ns"], r["contexts.1.completed"], r["nodes.1.busy_pct"]) for r in serial_rows]
    assert figures == [
        (None, 20_000_000, 24, 3_990_200, 2_994_000, 9, 99.96),
        (None, 20_000_000, 24, 3_990_200, 2_994_000, 9, 99.96),  # no jitter: the seed changes nothing
        (None, 20_000_000, 24, 4_429_425, 3_393_000, 9, 99.96),
        (None, 20_000_000, 24, 4_612_805, 3_416_000, 9, 99.96),  # jitter: each seed its own frames
    ]
    r = serial_rows[0]
    assert (r["scenario"], r["contexts.0.context"], r["contexts.1.context"], r["nodes.0.name"]) == (
        "game_and_compute", "game.exe/render", "trainer.exe/compute", "3D_0")
    assert "wall_s" not in r and not any(k.startswith("wall") for k in columns(serial_rows))


def test_a_row_is_the_summary_run_json_prints_flattened(serial_rows):
    r = runner.invoke(main, ["run", GAME, "--json", "--seed", "2", "--set", "duration=20ms", "--set", f"{JITTER}=0.25"])
    summary = json.loads(r.stdout)
    flat = flatten(summary)
    row = serial_rows[3]
    assert {k: v for k, v in public(row).items() if k not in ("duration", JITTER, "error")} == {
        k: v for k, v in flat.items() if k != "wall_s"}
    # Asked for, a row carries beside its columns each context's whole latency histogram, which
    # adds up to the packets it retired and spans its min and max.
    assert "_latency" not in row
    (row,) = sweep(GAME, {"duration": "20ms", JITTER: 0.25}, [2], workers=1, latency=True)
    for i, hist in enumerate(row["_latency"]):
        assert sum(c for _, c in hist) == row[f"contexts.{i}.completed"]
        low, high = row[f"contexts.{i}.latency_min_ns"], row[f"contexts.{i}.latency_max_ns"]
        assert hist[0][0] == low and hist[-1][0] <= high < hist[-1][0] * 1.001  # four significant digits
    assert "_latency" not in columns([row])


def test_flatten_tables_by_key_arrays_by_number():
    assert flatten({"a": 1, "wall_s": 0.5, "t": {"x": [10, {"y": None}], "e": []}, "l": [{"n": "a.b"}]}) == {
        "a": 1, "t.x.0": 10, "t.x.1.y": None, "l.0.n": "a.b"}


def test_a_failing_run_is_an_error_row_and_the_sweep_goes_on():
    rows = sweep(PREEMPTION, {"duration": "20ms", "scheduler.quantum": ["0ms", "1ms"]}, [1, 2], workers=1)
    assert [(r["scheduler.quantum"], r["seed"], r["error"]) for r in rows] == [
        ("0ms", 1, "--set scheduler.quantum=0ms: scheduler.quantum: must be greater than 0, got 0 (range: above 0 .. 3600s; a span that must last, within the longest run (1 hour of virtual time))"),
        ("0ms", 2, "--set scheduler.quantum=0ms: scheduler.quantum: must be greater than 0, got 0 (range: above 0 .. 3600s; a span that must last, within the longest run (1 hour of virtual time))"),
        ("1ms", 1, None), ("1ms", 2, None)]
    assert "packets_completed" not in rows[0] and rows[2]["packets_completed"] == 4
    lines = rows_to_csv(rows).splitlines()
    assert lines[1] == '20ms,0ms,1,"--set scheduler.quantum=0ms: scheduler.quantum: must be greater than 0, got 0 (range: above 0 .. 3600s; a span that must last, within the longest run (1 hour of virtual time))"' + "," * (
        len(columns(rows)) - 4)


def test_a_driver_that_does_not_load_and_a_bug_check_are_error_rows():
    rows = sweep(str(EXAMPLES / "deep_queue.toml"), {"driver.class": "no_such_module_x:Driver"}, workers=1)
    assert rows == [{"driver.class": "no_such_module_x:Driver", "seed": 0, "error":
                     "deep_queue: driver.class: driver 'no_such_module_x:Driver': no module named 'no_such_module_x' "
                     "(is it installed, or on PYTHONPATH?)"}]
    (row,) = sweep(str(EXAMPLES / "tdr_failure.toml"), workers=1)
    assert row["error"] == ("bug check 0x116 (VIDEO_TDR_FAILURE): DxgkDdiResetFromTimeout returned STATUS_UNSUCCESSFUL; "
                            "it must return STATUS_SUCCESS (rule 108)")
    assert (row["bugcheck.code"], row["bugcheck.rule"], row["virtual_time_ns"]) == (0x116, 108, 1_033_341_334)


def test_an_exception_in_a_run_is_its_error_text():
    summary, error = run_one(object(), 1)
    assert summary is None and error.startswith("AttributeError: 'object' object has no attribute")


def test_a_path_the_scenario_does_not_have_stops_the_sweep_before_it_runs():
    with pytest.raises(SweepError, match=r"^--set scheduler.quantun=1ms: scheduler.quantun: unknown field; "
                                         r"did you mean 'quantum'\?$"):
        sweep(PREEMPTION, ["scheduler.quantun=1ms,2ms"], workers=1)
    with pytest.raises(SweepError, match=r"adapter.nodes has 2 entries; there is no entry 5"):
        sweep(PREEMPTION, {"adapter.nodes.5.preemption": ["none"]}, workers=1)
    with pytest.raises(SweepError, match="given twice"):
        sweep(PREEMPTION, ["duration=1ms", "duration=2ms"], workers=1)


def test_rows_to_dataframe_says_how_to_get_pandas(monkeypatch, serial_rows):
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(ImportError, match="pip install pandas"):
        rows_to_dataframe(serial_rows)


# ------------------------------------------------------------------------------------- executors
def test_the_same_rows_serial_on_two_workers_and_on_dask(serial_rows):
    distributed = pytest.importorskip("distributed")
    pool_rows = sweep(GAME, SETS, SEEDS, workers=2)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as cluster:
        dask_rows = sweep(GAME, SETS, SEEDS, dask=cluster.scheduler_address)
        with distributed.Client(cluster) as client:
            client_rows = sweep(GAME, SETS, SEEDS, dask=client)
    text = rows_to_csv(serial_rows)
    assert rows_to_csv(pool_rows) == text and rows_to_csv(dask_rows) == text and rows_to_csv(client_rows) == text
    assert pool_rows == serial_rows and dask_rows == serial_rows


def test_the_cli_sends_the_runs_to_a_dask_scheduler(tmp_path, serial_rows):
    distributed = pytest.importorskip("distributed")
    out = tmp_path / "dask.csv"
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as cluster:
        r = runner.invoke(main, ["sweep", GAME, *sum((["--set", s] for s in SETS), []), "--seeds", SEEDS,
                                 "--dask", cluster.scheduler_address, "-o", str(out)])
    assert r.exit_code == 0, r.output
    assert out.read_text() == rows_to_csv(serial_rows)


def test_dask_missing_says_how_to_install_it(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "distributed", None)
    with pytest.raises(DaskMissing, match=r"pip install 'wddmsim\[cluster\]'"):
        sweep(PREEMPTION, ["duration=1ms"], dask="tcp://127.0.0.1:1")
    r = runner.invoke(main, ["sweep", PREEMPTION, "--set", "duration=1ms", "--dask", "tcp://127.0.0.1:1",
                             "-o", str(tmp_path / "x.csv")])
    assert r.exit_code == 2
    assert r.stderr.strip() == ("wddmsim: error: --dask: Dask is not installed: pip install 'wddmsim[cluster]' "
                                "(or, in a clone, uv sync --extra cluster)")


# ------------------------------------------------------------------------------------------- CLI
def test_the_cli_writes_the_csv_and_prints_json(tmp_path, serial_rows):
    out = tmp_path / "rows.csv"
    r = runner.invoke(main, ["sweep", GAME, "--set", SETS[0], "--set", SETS[1], "--seeds", SEEDS, "--workers", "1",
                             "-o", str(out), "--json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout) == serial_rows
    assert out.read_text() == rows_to_csv(serial_rows)
    read = list(csv.DictReader(io.StringIO(out.read_text())))
    assert [(d["seed"], d["error"], d["contexts.0.latency_max_ns"]) for d in read] == [
        ("1", "", "3990200"), ("2", "", "3990200"), ("1", "", "4429425"), ("2", "", "4612805")]
    assert "4 runs, 0 failed" in r.stderr


@pytest.mark.parametrize(("args", "message"), [
    (["--set", "adapter.nodez=1,2", "--json"],
     "wddmsim: error: --set adapter.nodez=1: adapter.nodez: unknown field; did you mean 'nodes'?"),
    (["--set", "duration", "--json"], "wddmsim: error: --set 'duration': expected PATH=VALUE[,VALUE...]"),
    (["--seeds", "3-1", "--json"], "wddmsim: error: --seeds 3-1: the range 3-1 runs backwards"),
    (["--seeds", "1-1000000000000", "--json"],
     "wddmsim: error: --seeds 1-1000000000000: more than 100,000 seeds; a sweep takes at most 100,000 runs "
     "(split it into several sweeps)"),
    (["--set", "scheduler.quantum=1ms,2ms,3ms,4ms,5ms", "--set", "seed=1,2,3,4,5,6,7,8,9", "--seeds", "1-3000",
      "--json"],
     "wddmsim: error: the sweep has 135,000 runs (5 x 9 x 3000), more than the 100,000 one sweep takes: "
     "split it into several sweeps"),
    ([], "wddmsim: error: sweep: give -o FILE.csv for the rows, --json to print them, or both"),
    (["--json", "--workers", "2", "--dask", "tcp://x:1"], "wddmsim: error: --workers and --dask: choose one"),
    (["--json", "--x", "duration"], "wddmsim: error: --x: goes with --plot METRIC"),
    (["--json", "--set", "duration=1ms,2ms", "--plot", "events", "--x", "seed"],
     "wddmsim: error: --x seed: not a swept setting; the settings are duration"),
])
def test_bad_sweep_input_exits_2_with_a_message(args, message):
    r = runner.invoke(main, ["sweep", PREEMPTION, *args])
    assert r.exit_code == 2, r.output
    assert r.stderr.startswith(message) and "Traceback" not in r.stderr


def test_plot_writes_a_png_of_mean_and_min_max_over_seeds(tmp_path, serial_rows):
    out = tmp_path / "rows.csv"
    r = runner.invoke(main, ["sweep", GAME, "--set", SETS[0], "--set", SETS[1], "--seeds", SEEDS, "--workers", "1",
                             "-o", str(out), "--plot", "contexts.0.latency_max_ns"])
    assert r.exit_code == 0, r.output
    png = tmp_path / "rows-contexts.0.latency_max_ns.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    drawn = plot_metric(serial_rows, "contexts.0.latency_max_ns", ["duration", JITTER], tmp_path / "p.png")
    assert drawn == {"x": JITTER, "lines": {"contexts.0.latency_max_ns": [
        (0.0, 3_990_200.0, 3_990_200.0, 3_990_200.0, 2), (0.25, 4_521_115.0, 4_429_425.0, 4_612_805.0, 2)]}}
    assert axis_unit("contexts.0.latency_max_ns") == (1e-6, "ms") and axis_unit("nodes.0.busy_pct") == (1.0, "%")


def test_plot_needs_a_known_metric_and_one_x_axis(tmp_path, serial_rows):
    with pytest.raises(PlotError, match="did you mean contexts.0.latency_max_ns"):
        plot_metric(serial_rows, "contexts.0.latency_mx_ns", ["duration", JITTER], tmp_path / "p.png")
    with pytest.raises(PlotError, match="no setting takes more than one value"):
        plot_metric(serial_rows, "events", ["duration"], tmp_path / "p.png")
    with pytest.raises(PlotError, match=r"not a number \('game_and_compute'\)"):
        plot_metric(serial_rows, "scenario", ["duration", JITTER], tmp_path / "p.png")
    rows = sweep(PREEMPTION, ["duration=10ms,20ms", "adapter.nodes.0.preemption=interval,dma_buffer"], workers=1)
    with pytest.raises(PlotError, match=r"several settings vary \(duration, adapter.nodes.0.preemption\)"):
        plot_metric(rows, "packets_completed", ["duration", "adapter.nodes.0.preemption"], tmp_path / "p.png")
    drawn = plot_metric(rows, "packets_completed", ["duration", "adapter.nodes.0.preemption"], tmp_path / "p.png",
                        x="duration")
    assert drawn["lines"] == {"adapter.nodes.0.preemption=interval": [("10ms", 2.0, 2.0, 2.0, 1), ("20ms", 4.0, 4.0, 4.0, 1)],
                              "adapter.nodes.0.preemption=dma_buffer": [("10ms", 1.0, 1.0, 1.0, 1),
                                                                        ("20ms", 1.0, 1.0, 1.0, 1)]}
    assert (tmp_path / "p.png").stat().st_size > 0


def test_the_progress_bar_counts_runs_with_an_eta():
    buf = io.StringIO()
    with SweepProgress(Console(file=buf, force_terminal=True, width=120), label="preemption") as bar:
        sweep(PREEMPTION, ["duration=5ms,10ms,15ms"], workers=1, progress=bar)
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", buf.getvalue())
    assert "preemption" in text and "3/3 runs" in text and "ETA" in text
    quiet = io.StringIO()
    bar = SweepProgress(Console(file=quiet, force_terminal=False))
    bar(1, 2)
    bar.close()
    assert quiet.getvalue() == "" and not bar.enabled


def test_a_pool_started_by_the_fork_server_gives_the_same_rows(monkeypatch, serial_rows):
    # with another thread running the pool does not fork this process: a fork server starts workers
    from wddmsim.sweep import executors

    monkeypatch.setattr(executors.threading, "active_count", lambda: 2)
    assert executors._context().get_start_method() in ("forkserver", "spawn")
    assert rows_to_csv(sweep(GAME, SETS, SEEDS, workers=2)) == rows_to_csv(serial_rows)


def test_a_files_own_problem_stops_the_sweep_unless_a_setting_mends_it(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('duration = "fast"\n[[process]]\nname = "a"\n[[process.context]]\nname = "c"\nnode = "3D"\n'
                   'workload = { kind = "frame_loop", fps = 60, work = "1ms" }\n')
    with pytest.raises(SweepError, match=r"^.*bad.toml: duration: expected a duration such as '2ms' or '250us', got 'fast'$"):
        sweep(bad, ["process.0.context.0.workload.fps=30,60"], workers=1)
    rows = sweep(bad, ["duration=50ms,60ms"], workers=1)
    assert [(r["duration"], r["error"], r["packets_completed"]) for r in rows] == [("50ms", None, 6), ("60ms", None, 8)]
    r = runner.invoke(main, ["sweep", str(tmp_path / "nope.toml"), "--json"])
    assert (r.exit_code, r.stderr) == (2, f"wddmsim: error: {tmp_path / 'nope.toml'}: cannot read: no such file\n")
