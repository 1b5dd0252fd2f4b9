"""benchmarks/logcost.py still runs: each way of logging on a tiny run, the figure's keys, the log
written. Only correctness here: the cost itself is measured by running the benchmark."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _logcost():
    spec = importlib.util.spec_from_file_location("logcost", ROOT / "benchmarks" / "logcost.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_log_cost_figure_of_a_tiny_run():
    bench = _logcost()
    fig = bench.measure("tiny", bench._throughput_scenario(2, 64), None, repeat=1)
    assert fig["benchmark"] == "logcost" and fig["figure"] == "event log cost: tiny"
    assert fig["packets"] == 64 and fig["target"] == 1.5 and fig["met"] == (fig["ratio"] <= 1.5)
    assert fig["log_bytes"] > 64 * 1000 and fig["bytes_per_packet"] == round(fig["log_bytes"] / 64)
    assert all(fig[f"{w}_s"] > 0 and fig[f"{w}_cpu_s"] > 0 for w in ("off", "null", "inproc", "file"))
    assert fig["file_total_cpu_s"] >= fig["file_cpu_s"] and fig["total_cpu_ratio"] >= fig["cpu_ratio"] > 0


def test_each_way_runs_the_same_packets(tmp_path):
    bench = _logcost()
    sc = bench._throughput_scenario(2, 32)
    path = str(tmp_path / "events.jsonl")
    logs = {}
    for way in ("off", "null", "inproc", "file"):
        assert bench.run_once(sc, None, way, path)[3] == 32
        if way in ("inproc", "file"):
            logs[way] = Path(path).read_bytes()
    assert logs["inproc"] == logs["file"] and logs["file"].count(b"\n") > 32 * 8
