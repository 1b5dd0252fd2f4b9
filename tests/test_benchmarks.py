"""Every benchmark still runs, on tiny sizes, and its figures keep the common shape (a scenario-schema
change once broke ``--mode hardware`` unnoticed). Only correctness here: speed and memory are
measured by running ``benchmarks/``."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _bench(name: str):
    """The module ``benchmarks/NAME.py`` (``benchmarks/`` is no package)."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _throughput():
    return _bench("throughput")


# With GPU virtual addresses VidMm's page-table write for each of the two processes is retired too.
@pytest.mark.parametrize(("mode", "expected"), [("physical", 64), ("gpu_va", 66), ("hardware", 66)])
def test_every_benchmark_mode_retires_every_packet(mode, expected):
    bench = _throughput()
    retired, wall = bench.run_model(2, 64, mode=mode)
    assert retired == expected and wall > 0


def test_the_sweep_benchmark_measures_identical_rows_on_both_executors():
    module = _bench("sweep")
    fig = module.measure("5ms", seeds="1-2", workers=2)
    assert (fig["benchmark"], fig["runs"], fig["rows_identical"], fig["failed_runs"], fig["target"]) == (
        "sweep", 4, True, 0, 1.8)
    assert fig["met"] == (fig["speedup"] >= 1.8) and fig["serial_s"] > 0 and fig["pool_s"] > 0


def test_headline_figure_follows_the_benchmarks_convention():
    bench = _throughput()
    fig = bench.headline(packets=64, repeat=1)
    # 8 contexts of one batch of 16 each (a context submits at least one batch).
    assert fig["benchmark"] == "throughput" and fig["packets"] == 128
    assert fig["baseline_ratio"] == bench.BASELINE_RATIO == 0.006
    assert fig["target_ratio"] == 0.024 and fig["met"] is (fig["ratio"] >= 0.024)
    assert fig["packets_per_s"] > 0 and fig["ratio"] > 0


def test_profile_splits_a_packet_by_component():
    module = _bench("profile_path")
    fig = module.profile(64, functions=3)
    assert fig["benchmark"] == "profile_path" and fig["packets"] == 128
    assert len(fig["functions"]) == 3
    assert {"gateway + verifier", "driver (reference KMD)", "ground truth"} <= set(fig["components"])
    assert module.component("/x/src/wddmsim/dxgkrnl/groundtruth.py") == "ground truth"
    assert module.component("/x/src/wddmsim/dxgkrnl/vidsch.py").startswith("OS scheduler")


def test_memory_benchmark_measures_a_streamed_run_in_its_own_process():
    bench = _bench("memory")
    rows = [bench.peak_rss(n) for n in (128, 256)]
    assert [r["packets"] for r in rows] == [128, 256]
    for r in rows:
        assert r["benchmark"] == "memory" and r["figure"] == "peak_rss" and r["log"] == "streamed"
        assert r["peak_rss_mib"] >= r["before_rss_mib"] > 0 and r["log_mib"] > 0
        assert r["met"] is (r["peak_rss_mib"] * 2**20 < bench.TARGET_BYTES)
    growth = bench.flatness(rows)
    assert growth["packets"] == [128, 256] and growth["growth_mib"] == round(rows[1]["peak_rss_mib"] - rows[0]["peak_rss_mib"], 1)


def test_memory_benchmark_lazy_figure_compares_a_billion_with_the_count_that_lasts_the_run():
    fig = _bench("memory").lazy(repeat=1)
    # The same 190 packets retire in the 10 ms whether 60 or 10^9 batches are described; 10 batches: 40.
    assert {k: v["packets"] for k, v in fig["counts"].items()} == {"10": 40, "60": 190, "1000000000": 190}
    assert fig["same_packets"] is True and fig["ratio_billion_to_covering"] > 0
    assert fig["met"] is (fig["ratio_billion_to_covering"] <= 1.25)


def test_realtime_benchmark_gives_one_factor_per_scenario_with_and_without_the_log():
    bench = _bench("realtime")
    names = [name for name, _ in bench.scenarios()]
    assert names[0] == "demo" and len(names) == 1 + len(list((ROOT / "examples").glob("*.toml")))
    (fig,) = bench.figures(quick=True, only=["deep_queue"])
    assert fig["scenario"] == "deep_queue" and fig["virtual_s"] == 0.02
    assert fig["rtf"] > 0 and fig["rtf_log"] > 0 and fig["log_mib"] > 0 and fig["log_cost"] > 0


def test_flatness_figures_cover_every_mode_and_context_count():
    bench = _throughput()
    figs = bench.flatness(packets=64, repeat=1, contexts=(1, 2))
    names = [f["figure"] for f in figs]
    assert names == ["flatness_physical", "flatness_gpu_va", "flatness_hardware", "flatness_hardware_no_in_flight_cap",
                     "mode_parity"]
    uncapped = figs.pop(3)
    assert uncapped["driver"] == {"engines": {"3D": {"max_in_flight_hw_queue_buffers": 0}}} and "target" not in uncapped
    assert uncapped["retired"] == {"1": 65, "2": 66} and uncapped["value"] >= 1.0
    for f in figs[:3]:
        assert f["benchmark"] == "throughput" and set(f["packets_per_s"]) == {"1", "2"}
        assert f["value"] >= 1.0 and f["met"] == (f["value"] <= 1.2) and f["target"] == 1.2
        # 32 packets a context are two batches of 16; with GPU virtual addresses each process's
        # page-table write is retired too
        assert f["retired"] == ({"1": 64, "2": 64} if f["mode"] == "physical" else {"1": 65, "2": 66})
    parity = figs[3]
    assert parity["contexts"] == 2 and set(parity["packets_per_s"]) == {"physical", "gpu_va", "hardware"}
    assert 0 < parity["value"] <= 1.0 and parity["met"] == (parity["value"] >= 0.5)


def test_all_runs_every_benchmark_file_and_keeps_going_past_a_broken_one(monkeypatch, capsys):
    every = _bench("all")
    assert sorted(f"{n}.py" for n in every.BENCHMARKS) == sorted(
        p.name for p in (ROOT / "benchmarks").glob("*.py") if p.name != "all.py")
    for name in every.BENCHMARKS:
        assert callable(every.load(name).figures), name

    class Broken:
        @staticmethod
        def figures(quick):
            raise RuntimeError("no such machine")

    class Fine:
        @staticmethod
        def figures(quick):
            return [{"figure": "rate", "ratio": 0.5, "target": 0.25, "met": True}]

    monkeypatch.setattr(every, "load", {"broken": Broken, "fine": Fine}.__getitem__)
    figs, ok = every.run(["broken", "fine"], quick=True)
    assert not ok and [f["figure"] for f in figs] == ["error", "rate"]
    assert figs[0]["error"] == "RuntimeError: no such machine" and figs[1]["benchmark"] == "fine"
    lines = capsys.readouterr().out.splitlines()
    assert [json.loads(line)["figure"] for line in lines] == ["error", "rate"]
    table = every.table(figs).splitlines()
    assert table[1].split() == ["fine", "rate", "ratio", "0.5", "0.25", "yes"]
    assert table[2].split()[:2] == ["broken", "error"] and table[2].split()[-1] == "NO"


def test_the_log_cost_figure_of_a_tiny_run():
    bench = _bench("logcost")
    fig = bench.measure("tiny", bench._throughput_scenario(2, 64), None, repeat=1)
    assert fig["benchmark"] == "logcost" and fig["figure"] == "event log cost: tiny"
    assert fig["packets"] == 64 and fig["target"] == 1.5 and fig["met"] == (fig["ratio"] <= 1.5)
    assert fig["log_bytes"] > 64 * 1000 and fig["bytes_per_packet"] == round(fig["log_bytes"] / 64)
    assert all(fig[f"{w}_s"] > 0 and fig[f"{w}_cpu_s"] > 0 for w in ("off", "null", "inproc", "file"))
    assert fig["file_total_cpu_s"] >= fig["file_cpu_s"] and fig["total_cpu_ratio"] >= fig["cpu_ratio"] > 0


def test_each_way_runs_the_same_packets(tmp_path):
    bench = _bench("logcost")
    sc = bench._throughput_scenario(2, 32)
    path = str(tmp_path / "events.jsonl")
    logs = {}
    for way in ("off", "null", "inproc", "file"):
        assert bench.run_once(sc, None, way, path)[3] == 32
        if way in ("inproc", "file"):
            logs[way] = Path(path).read_bytes()
    assert logs["inproc"] == logs["file"] and logs["file"].count(b"\n") > 32 * 8


def test_the_study_benchmark_times_a_whole_study_with_no_failed_run():
    fig = _bench("study").measure("1", workers=1)
    assert (fig["benchmark"], fig["runs"], fig["policies"], fig["workloads"], fig["failed_runs"], fig["target"]) == (
        "study", 30, 10, 3, 0, 180.0)
    assert fig["met"] == (fig["wall_s"] <= 180.0)


def test_the_ledger_cost_figure_runs_the_same_packets_with_the_ledger_on_and_off():
    fig = _bench("logcost").ledger_cost(packets=128, repeat=1)  # 8 contexts, batches of 16
    assert fig["benchmark"] == "logcost" and fig["figure"] == "ledger_cost" and fig["packets"] == 128
    assert fig["ledger_on_s"] > 0 and fig["ledger_off_s"] > 0 and fig["target"] == 1.05
    assert fig["met"] == (fig["ratio"] <= 1.05)


def test_the_startup_figures_time_the_script_in_fresh_processes():
    bench = _bench("startup")
    fig = bench.measure("version", repeat=1, uv=False, cached=False, profile=False)
    assert (fig["benchmark"], fig["figure"], fig["command"], fig["target"]) == (
        "startup", "startup_version", ["wddmsim", "--version"], 0.2)
    assert fig["script_s"] > 0 and fig["uv_run_s"] is None and fig["judged_on"] == "script_s"
    assert fig["met"] is (fig["startup_s"] < 0.2)
    fig = bench.measure("run_1ms", repeat=1, uv=False, cached=True, profile=True)
    assert fig["figure"] == "startup_run_1ms" and fig["target"] == 0.5 and fig["script_cached_s"] > 0
    assert "pydantic" in fig["imports_ms"] and all(ms >= 0 for ms in fig["imports_ms"].values())
