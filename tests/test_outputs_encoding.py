"""Text that was not UTF-8 where it came from (issue 29): a byte such as 0xE9 in ``--set
name=caf\\xe9`` reaches Python as a lone surrogate (``'caf\\udce9'``), which UTF-8 cannot encode.
Every output writes it escaped instead of failing (:mod:`wddmsim.trace.output`): the event log as
JSON's own escape ``\\udce9``, which reads back as the same string, so the log is never left short
or empty by an encoding error; summary.md and the summary on standard output as the visible text
``\\udce9``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from wddmsim.cli import main
from wddmsim.trace import JsonlSink, read_events

runner = CliRunner(mix_stderr=False) if "mix_stderr" in CliRunner.__init__.__code__.co_varnames else CliRunner()

PRIORITIES = str(Path(__file__).parent.parent / "examples" / "priorities.toml")
NAME = "caf\udce9"  # what Python makes of the bytes b"caf\xe9" on a command line
LOG_START = b'{"t":0,"event":"LogStart","format":"wddmsim-events","version":1,"scenario":"caf\\udce9","seed":2}\n'


def test_a_name_that_was_not_utf8_is_written_escaped_in_the_log_and_the_report(tmp_path):
    log, report = tmp_path / "log.jsonl", tmp_path / "r"
    r = runner.invoke(main, ["run", PRIORITIES, "--until", "1ms", "--set", f"name={NAME}", "--events", str(log),
                             "--report", str(report)])
    assert r.exit_code == 0, r.stderr
    assert "Traceback" not in r.stderr
    data = log.read_bytes()
    assert data.startswith(LOG_START) and data.count(b"\n") == 37
    events = read_events(str(log))
    assert events[0]["scenario"] == NAME and events[-1]["event"] == "LogEnd"
    assert (report / "summary.md").read_text(encoding="utf-8").startswith("# caf\\udce9 (seed 2)\n")
    assert json.loads((report / "summary.json").read_text())["scenario"] == NAME
    # the report command reads the log back and writes the same folder
    again = runner.invoke(main, ["report", str(log), "-o", str(tmp_path / "again")])
    assert again.exit_code == 0
    assert (tmp_path / "again" / "summary.md").read_bytes() == (report / "summary.md").read_bytes()


def test_the_writer_process_and_the_sink_in_process_write_the_same_escape(tmp_path):
    logs = []
    for tag, process in (("writer", True), ("here", False)):
        sink = JsonlSink(str(tmp_path / f"{tag}.jsonl"), process=process)
        assert sink.in_process is not process
        sink.emit(0, "LogStart", {"format": "wddmsim-events", "version": 1, "scenario": NAME, "seed": 2})
        sink.close()
        logs.append((tmp_path / f"{tag}.jsonl").read_bytes())
    assert logs == [LOG_START, LOG_START]


def test_the_summary_on_a_strict_utf8_stdout_is_written_escaped(tmp_path):
    """Under a UTF-8 locale other than C (en_US.UTF-8), Python's stdout refuses a lone surrogate:
    the summary's first line shows it escaped, and the run ends normally."""
    env = {**os.environ, "PYTHONIOENCODING": "utf-8"}
    done = subprocess.run([sys.executable, "-m", "wddmsim", "run", PRIORITIES, "--until", "1ms", "--set",
                           f"name={NAME}", "--events", str(tmp_path / "log.jsonl")],
                          capture_output=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    assert done.stdout.startswith(b"caf\\udce9  seed 2  virtual time 1.000 ms")
    assert (tmp_path / "log.jsonl").read_bytes().startswith(LOG_START)


def test_the_log_estimate_of_a_long_run_counts_an_escaped_name_instead_of_failing(tmp_path):
    # A run of 1 s or more with --events measures its log on its first 100 ms first; that count
    # used to encode the name as plain UTF-8, fail, and leave the log at a few KB.
    log = tmp_path / "log.jsonl"
    game = str(Path(PRIORITIES).with_name("game_and_compute.toml"))
    r = runner.invoke(main, ["run", game, "--until", "1s", "--set", f"name={NAME}", "--events", str(log)])
    assert r.exit_code == 0, r.stderr
    assert r.stderr.startswith("event log: about 3.2 MB for 1 s of virtual time (estimated from the first 100 ms)")
    events = read_events(str(log))
    assert events[0]["scenario"] == NAME and events[-1]["event"] == "LogEnd" and events[-1]["reason"] == "time"
