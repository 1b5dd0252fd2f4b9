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
MS_NS = 1_000_000


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


@pytest.mark.rule(14)
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


# -- hardware scheduling: nodes from the GPU scheduler's turns --------------------------------------
def test_hardware_run_and_saved_log_give_the_same_report(tmp_path):
    runner = CliRunner()
    r1, r2, log = tmp_path / "r1", tmp_path / "r2", tmp_path / "e.jsonl"
    example = str(ROOT / "examples" / "hardware_scheduling.toml")
    res = runner.invoke(main, ["run", example, "--report", str(r1), "--events", str(log)])
    assert res.exit_code == 0, res.output
    assert runner.invoke(main, ["report", str(log), "-o", str(r2)]).exit_code == 0
    # The game presents, so the frame-time plot is there too.
    assert sorted(p.name for p in r1.iterdir()) == ["context_latency.png", "frame_times.png", "node_utilisation.png",
                                                    "queue_depths.png", "summary.json", "summary.md"]
    for name in ("summary.json", "summary.md"):
        assert (r1 / name).read_bytes() == (r2 / name).read_bytes()


def test_hardware_report_numbers_agree_with_the_run_summary():
    sc = load_scenario(str(ROOT / "examples" / "hardware_scheduling.toml"))
    trace = ListSink()
    result = System(sc, trace=trace).run()
    s = summarize(trace.events)
    by_node = {n["name"]: n for n in result.summary["nodes"]}
    for n in s["nodes"]:
        # The run's figure is the engine's own count, which counts the frame running at the end in
        # full (capped at 100 %); the turns stop at the end: within 0.01 %.
        assert n["busy_pct"] == pytest.approx(by_node[n["name"]]["busy_pct"], abs=0.01), n["name"]
        assert n["packets"] == by_node[n["name"]]["packets"]
    by_ctx = {c["context"]: c for c in result.summary["contexts"]}
    for c in s["contexts"]:
        assert c["retired"] == by_ctx[c["context"]]["completed"]
        assert c["latency_max_ns"] == by_ctx[c["context"]]["latency_max_ns"]


def test_hardware_report_of_two_contexts_on_one_engine_is_exact():
    """``a`` (two 3 ms buffers) and ``b`` (one 1 ms buffer) share the 3D engine for 20 ms: 7 ms of
    turns, 35 %; VidMm's two page-table buffers ran on the copy engine until b's were written."""
    from test_chrome_trace import hw_scenario
    from wddm2util import run

    from wddmsim.report_plots import hw_depths

    system, result, events = run(hw_scenario())
    a, b = system.contexts
    a_run = next(e["t"] for e in events if e["event"] == "HwContextState" and e["context"] == a.hDriver)
    b_ready = next(e["t"] for e in events if e["event"] == "HwContextState" and e["context"] == b.hDriver)
    s = summarize(events)
    vidmm_pct = round(100 * b_ready / (20 * MS_NS), 3)
    assert s["nodes"] == [{"node": 0, "name": "3D_0", "packets": 3, "busy_pct": 35.0},
                          {"node": 1, "name": "COPY_0", "packets": 2, "busy_pct": vidmm_pct}]
    assert [(n["packets"], n["busy_pct"]) for n in result.summary["nodes"]] == [(3, 35.0), (2, vidmm_pct)]
    # Buffers with the driver: VidMm's two at 0; a's two once its page tables were written (when it
    # got the engine), b's once its were; each leaves at its retirement (b's after its 1 ms turn).
    assert hw_depths(events) == [(0, 1, 1), (0, 1, 1), (a_run, 0, 1), (a_run, 0, 1), (a_run, 1, -1),
                                  (b_ready, 0, 1), (b_ready, 1, -1), (a_run + 3 * MS_NS, 0, -1),
                                  (a_run + 4 * MS_NS, 0, -1), (a_run + 7 * MS_NS, 0, -1)]


def test_hardware_engine_reset_counts_as_an_incident():
    from test_hwqueue import hang_scenario
    from wddm2util import run

    system, result, events = run(hang_scenario())
    s = summarize(events)
    assert s["incidents"] == {"TdrDetected": 1, "DeviceError": 1, "HwEngineReset": 1}
    assert "- HwEngineReset: 1" in markdown(s)

