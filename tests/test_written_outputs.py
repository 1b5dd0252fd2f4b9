"""Every file ``wddmsim run`` and ``wddmsim replay`` write is said on standard error, one line per
file with its path (``wrote PATH: WHAT``), after the outputs are written and before the timing
line; a file that could not be written is said only as its failure."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from wddmsim.cli import main

ROOT = Path(__file__).parents[1]
FLIPS = str(ROOT / "examples" / "flips.toml")
CAPTURE = str(ROOT / "tests" / "data" / "presentmon" / "test_case_4.csv")


def test_run_says_each_file_it_wrote(tmp_path):
    log, trace, pm, rep = tmp_path / "e.jsonl", tmp_path / "t.json", tmp_path / "p.csv", tmp_path / "r"
    r = CliRunner().invoke(main, ["run", FLIPS, "--until", "50ms", "--events", str(log), "--trace", str(trace),
                                  "--presentmon", str(pm), "--report", str(rep)])
    assert r.exit_code == 0, r.stderr
    events = len(log.read_text().splitlines())
    trace_events = len(json.loads(trace.read_text())["traceEvents"])
    presents = len(pm.read_text().splitlines()) - 1  # the header
    assert (events, trace_events, presents) == (380, 345, 12)
    assert r.stderr.splitlines()[:-1] == [
        f"wrote {log}: the event log, 380 events",
        f"wrote {trace}: the timeline as Chrome trace JSON, 345 trace events",
        f"wrote {pm}: PresentMon CSV, 12 presents",
        *(f"wrote {rep / name}" for name in ("summary.json", "summary.md", "node_utilisation.png",
                                             "context_latency.png", "frame_times.png", "queue_depths.png")),
    ]
    assert r.stderr.splitlines()[-1].startswith("wall time ")
    assert sorted(p.name for p in rep.iterdir()) == sorted(["summary.json", "summary.md", "node_utilisation.png",
                                                            "context_latency.png", "frame_times.png",
                                                            "queue_depths.png"])


def test_run_without_outputs_says_only_its_timing(tmp_path):
    r = CliRunner().invoke(main, ["run", FLIPS, "--until", "10ms"])
    assert r.exit_code == 0 and len(r.stderr.splitlines()) == 1 and r.stderr.startswith("wall time ")


def test_a_file_that_failed_is_not_said_written(tmp_path, monkeypatch):
    import errno

    import wddmsim.trace.chrome as chrome
    from wddmsim.trace.output import WriteFailed

    def full_disk(events, path):
        raise WriteFailed(path, OSError(errno.ENOSPC, "No space left on device"))

    monkeypatch.setattr(chrome, "write_chrome_trace", full_disk)
    trace, pm = tmp_path / "t.json", tmp_path / "p.csv"
    r = CliRunner().invoke(main, ["run", FLIPS, "--until", "10ms", "--trace", str(trace), "--presentmon", str(pm)])
    assert r.exit_code == 2
    lines = r.stderr.splitlines()
    assert lines[0] == f"wrote {pm}: PresentMon CSV, 1 present"
    assert lines[1].startswith("wall time ")
    assert lines[2:] == [f"wddmsim: error: {trace}: cannot write: No space left on device"]


def test_replay_says_each_file_it_wrote(tmp_path):
    emit, log, pm, trace, rep = (tmp_path / n for n in ("s.toml", "e.jsonl", "m.csv", "t.json", "rep"))
    r = CliRunner().invoke(main, ["replay", CAPTURE, "--emit", str(emit), "--events", str(log), "--presentmon", str(pm),
                                  "--trace", str(trace), "--report", str(rep), "--json"])
    assert r.exit_code == 0, r.stderr
    events = len(log.read_text().splitlines())
    trace_events = len(json.loads(trace.read_text())["traceEvents"])
    presents = len(pm.read_text().splitlines()) - 1
    pngs = sorted(p.name for p in rep.glob("*.png"))
    assert len(pngs) == 5 and pngs[0] == "01-dwm.exe-10376-0x1BF098B1ED0.png"
    assert r.stderr.splitlines() == [
        f"wrote {emit}: the scenario rebuilt from the capture",
        f"wrote {log}: the event log, {events} events",
        f"wrote {pm}: the model's frames in the capture's column set, {presents} presents",
        f"wrote {trace}: the timeline as Chrome trace JSON, {trace_events} trace events",
        *(f"wrote {rep / name}" for name in (*pngs, "model.csv", "capture.csv", "comparison.json")),
    ]
    assert events > 1000 and trace_events > 1000 and presents > 100
