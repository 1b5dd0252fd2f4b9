"""docs/limits.md lists every bound with the value of the constant it names: each row's value is
the code's, so changing a limit without the page (or the page without the code) fails here."""

from __future__ import annotations

import re
from pathlib import Path

from wddmsim.util import inputbound
from wddmsim.dxgkrnl import callbacks
from wddmsim.scenario import bounds
from wddmsim.sweep.grid import MAX_RUNS
from wddmsim.trace import ledger

DOC = (Path(__file__).resolve().parents[1] / "docs" / "limits.md").read_text()
MIB = 1 << 20


def _row(constant: str) -> str:
    rows = [line for line in DOC.splitlines() if line.startswith("|") and constant in line]
    assert len(rows) == 1, (constant, rows)
    return rows[0]


def test_every_input_bound_is_the_codes_value():
    assert "| 64 MiB |" in _row("inputbound.SCENARIO_MAX") and inputbound.SCENARIO_MAX == 64 * MIB
    assert "| 16 MiB |" in _row("inputbound.RECORD_MAX") and inputbound.RECORD_MAX == 16 * MIB
    assert "| 1 MiB |" in _row("inputbound.STRUCT_MAX") and inputbound.STRUCT_MAX == 1 * MIB
    assert "| 64 MiB |" in _row("inputbound.LOG_LINE_MAX") and inputbound.LOG_LINE_MAX == 64 * MIB
    assert "| 1 hour" in _row("bounds.MAX_DURATION") and bounds.MAX_DURATION == 3600 * 10**9
    storm = _row("MAX_STORM_INTERRUPTS")
    assert "1,000,000 interrupts, at least 1 µs apart" in storm
    assert (bounds.MAX_STORM_INTERRUPTS, bounds.MIN_STORM_INTERVAL) == (1_000_000, 1_000)
    assert "1,000,000 packets" in _row("`MAX_REPEAT`") and bounds.MAX_REPEAT == 1_000_000
    assert "10^9 units" in _row("`MAX_COUNT`") and bounds.MAX_COUNT == 10**9
    assert "100,000 runs" in _row("grid.MAX_RUNS") and MAX_RUNS == 100_000


def test_every_run_guard_is_the_codes_value():
    assert "| 1000 |" in _row("callbacks.STORM_LIMIT") and callbacks.STORM_LIMIT == 1000
    assert "| 10,000 |" in _row("callbacks.DPC_LIMIT") and callbacks.DPC_LIMIT == 10_000
    kept = _row("KEEP_CLOSED_RUN")
    assert re.search(r"the last 64 items in a run, 4096 when `check` reads a log", kept)
    assert (ledger.KEEP_CLOSED_RUN, ledger.KEEP_CLOSED) == (64, 4096)


def test_the_default_log_budget_is_the_codes_value():
    from wddmsim.runner import logestimate

    row = _row("logestimate.FAR_OVER")
    assert "ten times a busy run's log (3 MB per virtual second), at least 100 MB" in row
    assert (logestimate.FAR_OVER, logestimate.BUSY_RATE, logestimate.DEFAULT_BUDGET_FLOOR) == (10, 3_000_000, 10**8)


def test_the_ddi_watchdog_is_the_codes_value():
    from wddmsim.dxgkrnl import watchdog

    assert "| 10 s of host time" in _row("watchdog.DEFAULT_LIMIT_S") and watchdog.DEFAULT_LIMIT_S == 10.0
    assert "1 s after the signal" in _row("watchdog.SIGNAL_GRACE_S") and watchdog.SIGNAL_GRACE_S == 1.0
