"""The benchmark's scenarios still load and run in every mode (a scenario-schema change once broke
``--mode hardware`` unnoticed). Only correctness here: speed is measured by ``benchmarks/``."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _throughput():
    spec = importlib.util.spec_from_file_location("throughput", ROOT / "benchmarks" / "throughput.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# With GPU virtual addresses VidMm's page-table write for each of the two processes is retired too.
@pytest.mark.parametrize(("mode", "expected"), [("physical", 64), ("gpu_va", 66), ("hardware", 66)])
def test_every_benchmark_mode_retires_every_packet(mode, expected):
    bench = _throughput()
    retired, wall = bench.run_model(2, 64, mode=mode)
    assert retired == expected and wall > 0


def test_the_sweep_benchmark_measures_identical_rows_on_both_executors():
    spec = importlib.util.spec_from_file_location("sweep_bench", ROOT / "benchmarks" / "sweep.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    fig = module.measure("5ms", seeds="1-2", workers=2)
    assert (fig["benchmark"], fig["runs"], fig["rows_identical"], fig["failed_runs"], fig["target"]) == (
        "sweep", 4, True, 0, 1.8)
    assert fig["met"] == (fig["speedup"] >= 1.8) and fig["serial_s"] > 0 and fig["pool_s"] > 0
