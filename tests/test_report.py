"""Report folders (``--report``, ``wddmsim report``): the same files from a run and from its saved
log, summary numbers that agree with the run's own summary, and readable PNG plots."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from wddmsim.cli import main
from wddmsim.report import markdown, summarize
from wddmsim.scenario import load_scenario
from wddmsim.system import System
from wddmsim.trace import ListSink

ROOT = Path(__file__).parent.parent
PNG = b"\x89PNG\r\n\x1a\n"


def test_run_and_saved_log_give_the_same_report(tmp_path):
    runner = CliRunner()
    r1, r2, log = tmp_path / "r1", tmp_path / "r2", tmp_path / "e.jsonl"
    res = runner.invoke(main, ["run", str(ROOT / "examples" / "flips.toml"), "--until", "200ms", "--report", str(r1),
                               "--events", str(log)])
    assert res.exit_code == 0, res.output
    res = runner.invoke(main, ["report", str(log), "-o", str(r2)])
    assert res.exit_code == 0 and "6 files" in res.output
    names = sorted(p.name for p in r1.iterdir())
    assert names == ["context_latency.png", "frame_times.png", "node_utilisation.png", "queue_depths.png",
                     "summary.json", "summary.md"]
    for name in ("summary.json", "summary.md"):
        assert (r1 / name).read_bytes() == (r2 / name).read_bytes()
    for name in names:
        if name.endswith(".png"):
            data = (r1 / name).read_bytes()
            assert data.startswith(PNG) and len(data) > 10_000, name


def test_report_numbers_agree_with_the_run_summary():
    sc = load_scenario(str(ROOT / "examples" / "game_and_compute.toml"))
    trace = ListSink()
    result = System(sc, trace=trace).run(until=200_000_000)
    s = summarize(trace.events)
    by_node = {n["name"]: n for n in result.summary["nodes"]}
    for n in s["nodes"]:
        assert n["busy_pct"] == pytest.approx(by_node[n["name"]]["busy_pct"], abs=0.01), n["name"]
    by_ctx = {c["context"]: c for c in result.summary["contexts"]}
    for c in s["contexts"]:
        assert c["retired"] == by_ctx[c["context"]]["completed"]
        assert c["latency_max_ns"] == by_ctx[c["context"]]["latency_max_ns"]
    md = markdown(s)
    assert md.startswith("# game_and_compute (seed 1)") and "| game.exe/render |" in md
    assert json.loads(json.dumps(s)) == s


def test_report_of_a_run_that_stopped_names_the_bug_check(tmp_path):
    from test_null_rendering import IgnoresNullRendering, build

    system, trace = build([{"at": 0, "work": "1ms"}], null_rendering=True, driver=IgnoresNullRendering)
    system.run()
    s = summarize(trace.events)
    assert s["bugcheck"]["code"] == 0xC4 and s["bugcheck"]["p1"] == 14
    assert "## Bug check" in markdown(s) and "DRIVER_VERIFIER_DETECTED_VIOLATION" in markdown(s)


def test_report_command_refuses_a_file_that_is_not_a_log(tmp_path):
    bad = tmp_path / "x.jsonl"
    bad.write_text("not json\n")
    r = CliRunner().invoke(main, ["report", str(bad), "-o", str(tmp_path / "out")])
    assert r.exit_code == 2 and "not a wddmsim event log" in r.output and "Traceback" not in r.output
