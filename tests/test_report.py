"""Report folders (``--report``, ``wddmsim report``): the same files from a run and from its saved
log, the run's own summary in ``summary.json`` and ``summary.md``, and readable PNG plots."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from wddmsim.util.units import time_text
from wddmsim.cli import main
from wddmsim.output.report import markdown, summarize
from wddmsim.scenario import load_scenario
from wddmsim.runner.system import System
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


def test_the_report_summary_is_the_run_summary():
    sc = load_scenario(str(ROOT / "examples" / "game_and_compute.toml"))
    trace = ListSink()
    result = System(sc, trace=trace).run(until=200_000_000)
    s = summarize(trace.events)
    assert s == result.summary and s is not result.summary  # the log's copy, not the run's object
    md = markdown(s)
    assert md.startswith("# game_and_compute (seed 1)\n")
    render = next(c for c in s["contexts"] if c["context"] == "game.exe/render")
    assert (render["latency_min_ns"], render["latency_mean_ns"], render["latency_p50_ns"], render["latency_p99_ns"],
            render["latency_max_ns"], render["gpu_ns"]) == (757_798, 2_772_632, 2_925_000, 4_489_000, 4_489_857,
                                                             114_928_358)
    assert ("| game.exe/render | 3D_0 | 145 | 145 | 757.8 µs | 2.773 ms | 2.925 ms | 4.489 ms | 4.490 ms | 114.9 ms | "
            "3.000 µs | 1 | 100.0 % | - | - | 0 | 0 ns | 0 | 0 | 0 | 0 |") in md.splitlines()
    assert json.loads(json.dumps(s)) == s


@pytest.mark.rule(14)
def test_report_of_a_run_that_stopped_names_the_bug_check(tmp_path):
    from test_null_rendering import IgnoresNullRendering, build

    system, trace = build([{"at": 0, "work": "1ms"}], null_rendering=True, driver=IgnoresNullRendering)
    result = system.run()
    s = summarize(trace.events)
    assert s["bugcheck"] == result.summary["bugcheck"]
    assert (s["bugcheck"]["code"], s["bugcheck"]["p1"], s["bugcheck"]["rule"]) == (0xC4, 14, 14)
    md = markdown(s)
    assert "## Bug check at 1.007 ms\n\n- BugCheck 0xC4 (DRIVER_VERIFIER_DETECTED_VIOLATION)" in md
    assert f"- Rule broken: 14 (NullRenderingFenceOnly)\n- {s['bugcheck']['message']}\n" in md


def test_report_command_refuses_a_file_that_is_not_a_log(tmp_path):
    bad = tmp_path / "x.jsonl"
    bad.write_text("not json\n")
    r = CliRunner().invoke(main, ["report", str(bad), "-o", str(tmp_path / "out")])
    assert r.exit_code == 2 and "not a wddmsim event log" in r.output and "Traceback" not in r.output


def test_report_command_on_a_log_without_its_summary(tmp_path):
    """A log cut short (no LogEnd): the plots and a summary.md that says the summary is missing. One
    whose LogEnd has no summary (an older wddmsim): one line, exit status 2."""
    log = tmp_path / "e.jsonl"
    r = CliRunner().invoke(main, ["run", str(ROOT / "examples" / "deep_queue.toml"), "--until", "1ms",
                                  "--events", str(log)])
    assert r.exit_code == 0, r.output
    lines = log.read_text().splitlines()
    cut, old = tmp_path / "cut.jsonl", tmp_path / "old.jsonl"
    cut.write_text("\n".join(lines[:-1]) + "\n")
    end = json.loads(lines[-1])
    del end["summary"]
    old.write_text("\n".join(lines[:-1] + [json.dumps(end)]) + "\n")
    r = CliRunner().invoke(main, ["report", str(cut), "-o", str(tmp_path / "cut")])
    t = json.loads(lines[-2])["t"]
    assert r.exit_code == 0 and r.stderr == (
        f"wddmsim: {cut}: the log has no LogEnd line: the run was cut short at {time_text(t)} of virtual time and the log "
        f"covers only what ran until then\n"
        f"wddmsim: {cut}: no run summary (it is written when a run ends): summary.md says so and summary.json is "
        f"not written\n")
    assert not (tmp_path / "cut" / "summary.json").exists() and (tmp_path / "cut" / "node_utilisation.png").exists()
    r = CliRunner().invoke(main, ["report", str(old), "-o", str(tmp_path / "out")])
    assert r.exit_code == 2 and r.output == (f"wddmsim: error: {old}: its LogEnd line carries no run summary (a log "
                                             f"written by an older wddmsim): run the scenario again with --events\n")
    assert not (tmp_path / "out").exists()


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


def test_hardware_report_of_two_contexts_on_one_engine_is_exact():
    """``a`` (two 3 ms buffers) and ``b`` (one 1 ms buffer) share the 3D engine for 20 ms: 7 ms of
    turns, 35 %; VidMm's two page-table buffers ran on the copy engine until b's were written."""
    from test_chrome_trace import hw_scenario
    from wddm2util import run

    from wddmsim.output.report_plots import hw_depths

    system, result, events = run(hw_scenario())
    a, b = system.contexts
    a_run = next(e["t"] for e in events if e["event"] == "HwContextState" and e["context"] == a.hDriver)
    b_ready = next(e["t"] for e in events if e["event"] == "HwContextState" and e["context"] == b.hDriver)
    s = summarize(events)
    vidmm_pct = round(100 * b_ready / (20 * MS_NS), 3)
    assert s == result.summary
    assert [(n["name"], n["packets"], n["busy_pct"]) for n in s["nodes"]] == [("3D_0", 3, 35.0),
                                                                              ("COPY_0", 2, vidmm_pct)]
    # Buffers with the driver: VidMm's two at 0; a's two once its page tables were written (when it
    # got the engine), b's once its were; each leaves at its retirement (b's after its 1 ms turn).
    assert hw_depths(events) == [(0, 1, 1), (0, 1, 1), (a_run, 0, 1), (a_run, 0, 1), (a_run, 1, -1),
                                  (b_ready, 0, 1), (b_ready, 1, -1), (a_run + 3 * MS_NS, 0, -1),
                                  (a_run + 4 * MS_NS, 0, -1), (a_run + 7 * MS_NS, 0, -1)]


def test_a_hardware_engine_reset_is_among_the_incidents():
    """The reset, its live dump 0x141 and the device it put in error are in the report's Markdown."""
    from test_hwqueue import hang_scenario
    from wddm2util import run

    system, result, events = run(hang_scenario())
    s = summarize(events)
    assert s == result.summary
    assert (s["tdr"]["engine_resets"], s["wddm2"]["hw_scheduling"]["engine_resets"], s["wddm2"]["engines"][0]["resets"]) == (1, 1, 1)
    assert markdown(s).endswith("## Recovery\n\n1 engine reset, 0 adapter resets\n\n"
                                "- live dump 0x141 VIDEO_ENGINE_TIMEOUT_DETECTED at 2.001 s: Arg4 0x0: internal data "
                                "that depends on the context, if there is any (the model: the ordinal of the node that "
                                "timed out)\n"
                                "- a/c: device in error, 2 packets aborted, 0 cancelled\n\n"
                                "**Ledger:** every packet, flip, paging operation and progress fence is accounted for: "
                                "8 packets (0 in flight), 0 presents (0 pending), 8 progress fences (0 in flight)\n")
