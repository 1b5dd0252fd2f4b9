"""Determinism kept: the same scenario and seed give a byte-identical event log whatever outputs are
asked for beside it (``--trace``, ``--presentmon``, ``--report``, ``--json``, budgets that do not
run out), for a
hardware-scheduling example, a fault-injected one and a scenario rebuilt from a PresentMon capture
by ``wddmsim replay --emit``; and a ``sweep`` gives the same rows, and each of its runs the same log, in
the sweep's process pool of two workers as one after the other in this process.

tests/test_event_log_file.py checks the same for game_and_compute alone; tests/test_sweep.py the
rows of game_and_compute on a pool and on Dask.
"""

from __future__ import annotations

import json
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest
from click.testing import CliRunner

from wddmsim.cli import main
from wddmsim.sweep import plan, rows_to_csv, sweep
from wddmsim.sweep.executors import _context
from wddmsim.sweep.rows import make_row
from wddmsim.testing.fuzz import run_scenario
from wddmsim.trace import read_events

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
CAPTURE = ROOT / "tests" / "data" / "presentmon" / "test_case_0.csv"


def _invoke(*args: str):
    r = CliRunner().invoke(main, list(args))
    assert r.exit_code in (0, 3), r.output
    return r


@pytest.fixture(scope="module")
def replayed(tmp_path_factory) -> Path:
    """The scenario ``wddmsim replay --emit`` rebuilds from a PresentMon capture."""
    path = tmp_path_factory.mktemp("replay") / "test_case_0.toml"
    r = CliRunner().invoke(main, ["replay", str(CAPTURE), "--emit", str(path)])
    assert r.exit_code == 0, r.output
    return path


# The report (its plots) is the slow output: one case asks for it, the others for the rest.
@pytest.mark.parametrize(("scenario", "until", "seed", "report"), [
    ("hardware_scheduling.toml", "20ms", "3", False),
    ("faults.toml", "60ms", "11", True),
    ("replayed", "150ms", "2", False),
])
def test_the_log_is_byte_identical_whatever_outputs_are_asked_for(tmp_path, replayed, scenario, until, seed, report):
    path = str(replayed if scenario == "replayed" else EXAMPLES / scenario)
    base = ["run", path, "--until", until, "--seed", seed]
    _invoke(*base, "--events", str(tmp_path / "alone.jsonl"))
    more = ["--report", str(tmp_path / "report")] if report else []
    with_all = _invoke(*base, "--events", str(tmp_path / "all.jsonl"), "--trace", str(tmp_path / "t.json"),
                       "--presentmon", str(tmp_path / "p.csv"), "--json", "--max-events", "100000000",
                       "--max-log-bytes", "1GiB", *more)
    json_only = _invoke(*base, "--json")
    alone = (tmp_path / "alone.jsonl").read_bytes()
    assert (tmp_path / "all.jsonl").read_bytes() == alone
    assert with_all.stdout == json_only.stdout
    events = read_events(str(tmp_path / "alone.jsonl"))
    assert events[-1]["event"] == "LogEnd" and events[-1]["summary"] == json.loads(json_only.stdout)
    assert len(events) > 100 and (tmp_path / "t.json").stat().st_size > 0


SWEEP = str(EXAMPLES / "faults.toml")
SETS = ["duration=15ms", "scheduler.quantum=1ms,3ms"]
SEEDS = "1-2"


def test_a_sweep_gives_the_same_rows_and_logs_in_its_pool_as_serially(tmp_path):
    serial = sweep(SWEEP, SETS, SEEDS, workers=1)
    pooled = sweep(SWEEP, SETS, SEEDS, workers=2)
    assert pooled == serial and rows_to_csv(pooled) == rows_to_csv(serial) and len(serial) == 4
    runs, work = plan(SWEEP, SETS, SEEDS)
    here = []
    for run in runs:
        path = tmp_path / f"here-{run.index}.jsonl"
        here.append(run_scenario(work[run.index], seed=run.seed, events_path=str(path)))
    with ProcessPoolExecutor(max_workers=2, mp_context=_context()) as pool:
        there = list(pool.map(lambda_free_run, [(work[r.index], r.seed, str(tmp_path / f"pool-{r.index}.jsonl"))
                                                for r in runs]))
    assert there == here
    for run, row in zip(runs, serial):
        log = (tmp_path / f"here-{run.index}.jsonl").read_bytes()
        assert (tmp_path / f"pool-{run.index}.jsonl").read_bytes() == log
        # the row is the summary the run's LogEnd carries
        summary = read_events(str(tmp_path / f"here-{run.index}.jsonl"))[-1]["summary"]
        assert make_row(run.settings, run.seed, summary, None) == row


def lambda_free_run(task):
    """One run of the sweep in a pool worker, its log written there (a module-level function, so
    the pool can send it)."""
    scenario, seed, path = task
    return run_scenario(scenario, seed=seed, events_path=path)
