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


def test_flatness_figures_cover_every_mode_and_context_count():
    bench = _throughput()
    figs = bench.flatness(packets=64, repeat=1, contexts=(1, 2))
    names = [f["figure"] for f in figs]
    assert names == ["flatness_physical", "flatness_gpu_va", "flatness_hardware", "mode_parity"]
    for f in figs[:3]:
        assert f["benchmark"] == "throughput" and set(f["packets_per_s"]) == {"1", "2"}
        assert f["value"] >= 1.0 and f["met"] == (f["value"] <= 1.2) and f["target"] == 1.2
        # 32 packets a context are two batches of 16; with GPU virtual addresses each process's
        # page-table write is retired too
        assert f["retired"] == ({"1": 64, "2": 64} if f["mode"] == "physical" else {"1": 65, "2": 66})
    parity = figs[3]
    assert parity["contexts"] == 2 and set(parity["packets_per_s"]) == {"physical", "gpu_va", "hardware"}
    assert 0 < parity["value"] <= 1.0 and parity["met"] == (parity["value"] >= 0.5)
