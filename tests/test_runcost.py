"""What a run cost (wall time, real-time factor, peak memory) goes to stderr, never into the
summary or the event log: ``run --json`` prints the same bytes on every run."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from click.testing import CliRunner

from wddmsim.cli import main
from wddmsim.runner.cost import memory_line, peak_rss_bytes, real_time_factor, timing_line

SCENARIO = """
name = "cost"
duration = "10ms"
[[process]]
name = "p"
[[process.context]]
name = "c"
node = "3D"
workload = { kind = "compute_batch", batch = 4, work = "100us" }
"""

TIMING = re.compile(r"wall time (\d+\.\d{3}) s for 10\.000 ms of virtual time: real-time factor (\S+) "
                    r"\(virtual s per wall s\)")
MEMORY = re.compile(r"peak memory (\d+\.\d) MiB resident \(the whole process; (\d+\.\d) MiB before the "
                    r"run began\)")


def test_the_lines_say_what_they_measure():
    assert real_time_factor(2_000_000_000, 0.5) == 4.0 and real_time_factor(10, 0.0) is None
    assert timing_line(250_000_000, 0.5) == ("wall time 0.500 s for 250.000 ms of virtual time: real-time factor 0.5 "
                                             "(virtual s per wall s)")
    assert timing_line(1, 0.0).endswith("real-time factor - (virtual s per wall s)")
    assert memory_line(300 << 20, 64 << 20) == ("peak memory 300.0 MiB resident (the whole process; "
                                                "64.0 MiB before the run began)")
    assert memory_line(None, None) == "peak memory: not available on this platform (no getrusage)"


def test_peak_rss_is_the_process_resident_peak():
    peak = peak_rss_bytes()
    if sys.platform.startswith("linux"):
        # /proc's VmHWM is the same peak, in kB.
        with open("/proc/self/status") as f:
            hwm = next(int(line.split()[1]) for line in f if line.startswith("VmHWM:"))
        assert peak == hwm * 1024 or abs(peak - hwm * 1024) <= 1 << 20
    else:
        assert peak is None or peak > 0


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux carries ru_maxrss over to a child")
def test_a_run_started_by_a_large_process_reports_its_own_peak_not_its_parents():
    # Linux keeps ru_maxrss across fork and exec: a child of a 300 MiB process read 300 MiB there.
    ballast = bytearray(300 << 20)
    for i in range(0, len(ballast), 4096):
        ballast[i] = 1  # touched, so resident
    out = subprocess.run([sys.executable, "-c", "from wddmsim.runner.cost import peak_rss_bytes; print(peak_rss_bytes())"],
                         capture_output=True, text=True, check=True, timeout=60)
    assert int(out.stdout) < 150 << 20
    assert peak_rss_bytes() >= 300 << 20
    del ballast


def test_run_json_is_the_same_bytes_every_time_and_the_cost_goes_to_stderr(tmp_path):
    path = tmp_path / "cost.toml"
    path.write_text(SCENARIO)
    runner = CliRunner()
    first = runner.invoke(main, ["run", str(path), "--json"])
    second = runner.invoke(main, ["run", str(path), "--json"])
    assert first.exit_code == second.exit_code == 0, first.stderr
    assert first.stdout == second.stdout
    summary = json.loads(first.stdout)
    assert "wall_s" not in summary and summary["virtual_time_ns"] == 10_000_000
    lines = first.stderr.splitlines()
    assert len(lines) == 1 and TIMING.fullmatch(lines[0])
    wall, factor = TIMING.fullmatch(lines[0]).groups()
    assert float(factor) > 0 and float(wall) >= 0


def test_run_memory_prints_the_peak_after_the_timing(tmp_path):
    path = tmp_path / "cost.toml"
    path.write_text(SCENARIO)
    r = CliRunner().invoke(main, ["run", str(path), "--memory"])
    assert r.exit_code == 0, r.stderr
    lines = r.stderr.splitlines()
    assert len(lines) == 2 and TIMING.fullmatch(lines[0])
    if sys.platform == "win32":
        assert lines[1] == memory_line(None, None)
    else:
        peak, before = map(float, MEMORY.fullmatch(lines[1]).groups())
        assert peak >= before > 0
    # The table output does not carry the wall time either.
    assert "DMA packets:" in r.stdout and "wall" not in r.stdout


def test_demo_prints_its_real_time_factor_on_stderr():
    r = CliRunner().invoke(main, ["demo"])
    assert r.exit_code == 0
    line = r.stderr.splitlines()[-1]
    assert re.fullmatch(r"wall time \d+\.\d{3} s for 250\.000 ms of virtual time: real-time factor \S+ "
                        r"\(virtual s per wall s\)", line)


def test_run_memory_with_a_streamed_log_names_the_writer_process(tmp_path):
    path = tmp_path / "cost.toml"
    path.write_text(SCENARIO)
    r = CliRunner().invoke(main, ["run", str(path), "--memory", "--events", str(tmp_path / "e.jsonl")])
    assert r.exit_code == 0, r.stderr
    assert r.stderr.splitlines()[0].startswith(f"wrote {tmp_path / 'e.jsonl'}: the event log, ")
    line = r.stderr.splitlines()[2]
    if sys.platform.startswith("linux"):
        m = re.fullmatch(r"peak memory (\d+\.\d) MiB resident \(the whole process; (\d+\.\d) MiB before "
                         r"the run began; the event log's writer process (\d+\.\d) MiB\)", line)
        assert m and all(float(v) > 0 for v in m.groups()), line
    assert memory_line(3 << 20, 2 << 20, 1 << 20).endswith("; the event log's writer process 1.0 MiB)")
