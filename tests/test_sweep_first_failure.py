"""A sweep whose runs failed says why (:func:`wddmsim.sweep.first_failure`): the first failed row's
settings, seed and error on one line, for ``wddmsim sweep`` to print after ``N runs, N failed``."""

from __future__ import annotations

from pathlib import Path

from wddmsim.sweep import first_failure, sweep

DEEP_QUEUE = str(Path(__file__).resolve().parents[1] / "examples" / "deep_queue.toml")


def test_a_sweep_whose_every_run_failed_names_the_first_failure():
    rows = sweep(DEEP_QUEUE, ["scheduler.quantum=0ms,-1ms"], "1-2", workers=1)
    assert [bool(r["error"]) for r in rows] == [True] * 4
    assert first_failure(rows) == (
        "first failure (scheduler.quantum=0ms, seed 1): --set scheduler.quantum=0ms: scheduler.quantum: must be "
        "greater than 0, got 0 (range: above 0 .. 3600s; a span that must last, within the longest run (1 hour of "
        "virtual time))")


def test_the_first_failed_row_counts_and_its_error_is_one_line():
    rows = [{"driver.ring_size": 4096, "scheduler.quantum": "1ms", "seed": 1, "error": None, "events": 3},
            {"driver.ring_size": 8192, "scheduler.quantum": "2ms", "seed": 2,
             "error": "bug check 0x116 (VIDEO_TDR_FAILURE):\n  the engine did not answer", "events": 2},
            {"driver.ring_size": 8192, "scheduler.quantum": "2ms", "seed": 3, "error": "later", "events": 1}]
    assert first_failure(rows) == ("first failure (driver.ring_size=8192, scheduler.quantum=2ms, seed 2): bug check "
                                   "0x116 (VIDEO_TDR_FAILURE): the engine did not answer")
    # a run the schema refused before it had a seed, and a sweep of no setting
    assert first_failure([{"a.b": 0, "seed": None, "error": "refused"}]) == "first failure (a.b=0): refused"
    assert first_failure([{"seed": 7, "error": "x"}]) == "first failure (seed 7): x"
    assert first_failure([{"error": "x"}]) == "first failure: x"


def test_no_failed_run_gives_no_line():
    assert first_failure([]) is None
    assert first_failure([{"seed": 1, "error": None}, {"seed": 2, "error": ""}]) is None


def test_the_sweep_command_prints_the_first_failure_after_its_count(tmp_path):
    from click.testing import CliRunner

    from wddmsim.cli import main

    out = tmp_path / "rows.csv"
    r = CliRunner().invoke(main, ["sweep", DEEP_QUEUE, "--set", "scheduler.quantum=0ms,-1ms", "--seeds", "1-2",
                                  "--workers", "1", "-o", str(out)])
    lines = r.stderr.splitlines()
    assert lines[-2].startswith(f"4 runs, 4 failed, in ") and lines[-2].endswith(f" s; rows in {out}")
    assert lines[-1] == (
        "first failure (scheduler.quantum=0ms, seed 1): --set scheduler.quantum=0ms: scheduler.quantum: must be "
        "greater than 0, got 0 (range: above 0 .. 3600s; a span that must last, within the longest run (1 hour of "
        "virtual time))")
