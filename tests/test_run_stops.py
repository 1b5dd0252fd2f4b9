"""Stopping a run early and cleanly (wddmsim.runner.stop): SIGINT and SIGTERM, --max-events and
--max-log-bytes, the log size estimate, and the commands that read a partial or cut log back."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from wddmsim.util.units import time_text
from wddmsim.cli import main
from wddmsim.cli.util import load_scenario_file
from wddmsim.runner.stop import CHECK_EVERY, SAME_SIGNAL_S, RunStop, interrupts
from wddmsim.runner.system import System
from wddmsim.trace import ListSink

ROOT = Path(__file__).resolve().parents[1]
GAME = str(ROOT / "examples" / "game_and_compute.toml")  # 500 ms, 4013 kernel events


def _log(path) -> list[dict]:
    return [json.loads(line) for line in Path(path).read_text().splitlines()]


def test_a_signal_stops_the_run_at_the_next_check_with_a_whole_log():
    """SIGINT raised by the model's own timer at 100 ms: the handler sets the flag, the run stops at
    the next check (event 1024), LogEnd says interrupted, and the old handler is back after."""
    sc = load_scenario_file(GAME)
    stop, sink = RunStop(), ListSink()
    before = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
    with interrupts(stop):
        system = System(sc, trace=sink)
        system.sim.at(100_000_000, lambda: signal.raise_signal(signal.SIGINT))
        result = system.run(stop=stop)
    assert (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)) == before
    assert (result.stopped, result.end, result.summary["events"], stop.signal) == ("interrupted", 126204750,
                                                                                   CHECK_EVERY, "SIGINT")
    end = sink.events[-1]
    assert (end["event"], end["t"], end["reason"], end["summary"]["virtual_time_ns"]) == \
        ("LogEnd", 126204750, "interrupted", 126204750)


def test_max_events_is_exact_and_the_same_in_slices():
    """The run stops after exactly N kernel events, with or without progress slices; a budget the
    run needs exactly is no stop at all."""
    sc = load_scenario_file(GAME)
    whole = ListSink()
    System(sc, trace=whole).run()
    for n, end in ((0, 0), (1000, 124053600), (4012, 498223700)):
        plain, sliced = ListSink(), ListSink()
        r = System(sc, trace=plain).run(stop=RunStop(max_events=n))
        System(sc, trace=sliced).run(stop=RunStop(max_events=n), on_progress=lambda now, limit: 777_777)
        assert (r.stopped, r.end, r.summary["events"]) == ("max_events", end, n)
        assert plain.events == sliced.events and plain.events[-1]["reason"] == "max_events"
        assert plain.events[:-1] == whole.events[:len(plain.events) - 1]
    r = System(sc).run(stop=RunStop(max_events=4013))
    assert (r.stopped, r.end, r.summary["events"]) == (None, 500_000_000, 4013)


def test_run_max_events_and_max_log_bytes_on_the_command_line(tmp_path):
    log = tmp_path / "e.jsonl"
    r = CliRunner().invoke(main, ["run", GAME, "--events", str(log), "--json", "--max-events", "1000"])
    assert r.exit_code == 5, r.output
    assert r.stderr.splitlines()[0] == ("wddmsim: stopped at 124.1 ms of virtual time: --max-events 1000 ran out; "
                                        "the outputs cover what ran until then")
    assert json.loads(r.stdout)["events"] == 1000
    assert (_log(log)[-1]["reason"], _log(log)[-1]["t"]) == ("max_events", 124053600)
    r = CliRunner().invoke(main, ["run", GAME, "--events", str(log), "--max-log-bytes", "200KB"])
    assert r.exit_code == 5, r.output
    assert r.stderr.splitlines()[:2] == [
        "event log: about 1.6 MB for 500 ms of virtual time (estimated from the first 50 ms); that is over "
        "--max-log-bytes 200 KB: the run will stop at about 60.7 ms",
        "wddmsim: stopped at 127.4 ms of virtual time: the event log reached --max-log-bytes 200000; "
        "the outputs cover what ran until then"]
    # The first check at or past 200 KB is the one at kernel event 1024; then the LogEnd line.
    assert os.path.getsize(log) == 397596 and _log(log)[-1]["summary"]["events"] == 1024
    r = CliRunner().invoke(main, ["run", GAME, "--max-log-bytes", "1MB"])
    assert r.exit_code == 2 and r.stderr == "wddmsim: error: --max-log-bytes: goes with --events FILE (it bounds that log)\n"
    r = CliRunner().invoke(main, ["run", GAME, "--events", str(log), "--max-log-bytes", "lots"])
    assert r.exit_code == 2 and r.stderr == ("wddmsim: error: --max-log-bytes: expected a size such as '64KiB' or "
                                             "'4096', got 'lots'\n")


def test_the_estimate_line_and_an_identical_log_without_it(tmp_path, monkeypatch):
    """A run of 1 s or more with --events gets the estimate first; the log is the same bytes when
    no probe runs."""
    import wddmsim.runner.logestimate as le

    with_probe, without = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    r = CliRunner().invoke(main, ["run", GAME, "--until", "1s", "--events", str(with_probe)])
    assert r.exit_code == 0, r.output
    assert r.stderr.splitlines()[0] == ("event log: about 3.2 MB for 1 s of virtual time "
                                        "(estimated from the first 100 ms)")
    monkeypatch.setattr(le, "LONG_NS", 10**12)
    r = CliRunner().invoke(main, ["run", GAME, "--until", "1s", "--events", str(without)])
    assert r.exit_code == 0 and not r.stderr.startswith("event log:")
    assert with_probe.read_bytes() == without.read_bytes()
    assert os.path.getsize(with_probe) == 3085563


def test_report_and_trace_of_a_stopped_log_say_partial(tmp_path):
    log = tmp_path / "e.jsonl"
    assert CliRunner().invoke(main, ["run", GAME, "--events", str(log), "--max-events", "1000"]).exit_code == 5
    said = (f"wddmsim: {log}: partial log: the run stopped when its --max-events budget ran out at 124.1 ms of "
            f"virtual time; everything in it covers only what ran until then\n")
    r = CliRunner().invoke(main, ["trace", str(log), "-o", str(tmp_path / "t.json")])
    assert (r.exit_code, r.stderr) == (0, said)
    assert json.loads((tmp_path / "t.json").read_text())["traceEvents"]
    r = CliRunner().invoke(main, ["report", str(log), "-o", str(tmp_path / "r")])
    assert (r.exit_code, r.stderr) == (0, said)
    assert (tmp_path / "r" / "summary.md").read_text().splitlines()[0] == (
        "> **Partial run:** the run stopped when its --max-events budget ran out at 124.1 ms of virtual time; "
        "everything in it covers only what ran until then.")


def test_a_log_cut_mid_line_is_read_to_its_last_whole_line(tmp_path):
    log, cut, bad = tmp_path / "e.jsonl", tmp_path / "cut.jsonl", tmp_path / "bad.jsonl"
    assert CliRunner().invoke(main, ["run", GAME, "--until", "50ms", "--events", str(log)]).exit_code == 0
    lines = log.read_bytes().split(b"\n")
    cut.write_bytes(b"\n".join(lines[:200]) + b"\n" + lines[200][:40])
    t = json.loads(lines[199])["t"]
    r = CliRunner().invoke(main, ["report", str(cut), "-o", str(tmp_path / "r")])
    assert r.exit_code == 0, r.output
    assert r.stderr == (
        f"wddmsim: warning: {cut}: its last line is cut short (40 bytes with no end of line): read up to line 200, "
        f"the last whole one\n"
        f"wddmsim: {cut}: the log has no LogEnd line: the run was cut short at {time_text(t)} of virtual time and the log "
        f"covers only what ran until then\n"
        f"wddmsim: {cut}: no run summary (it is written when a run ends): summary.md says so and summary.json is "
        f"not written\n")
    assert r.stdout == f"{tmp_path / 'r'}: 5 files from 200 log events\n"
    assert sorted(os.listdir(tmp_path / "r")) == ["context_latency.png", "frame_times.png", "node_utilisation.png",
                                                  "queue_depths.png", "summary.md"]
    assert (tmp_path / "r" / "summary.md").read_text().splitlines()[2:5] == [
        "# game_and_compute", "", "The run summary is missing: it is written in the log's LogEnd line when a run "
                                  "ends, and this log has none."]
    r = CliRunner().invoke(main, ["trace", str(cut), "-o", str(tmp_path / "t.json")])
    assert r.exit_code == 0 and r.stdout.endswith("from 200 log events\n")
    # A bad line that is not the last one is no cut: the log is refused.
    bad.write_bytes(b"\n".join(lines[:200] + [lines[200][:40]] + lines[201:300]) + b"\n")
    r = CliRunner().invoke(main, ["trace", str(bad), "-o", str(tmp_path / "t2.json")])
    assert r.exit_code == 2 and r.stderr.startswith(f"wddmsim: error: {bad}: not a wddmsim event log: ")


def test_sweep_max_events_marks_the_rows_stopped_early():
    from wddmsim.sweep import sweep

    rows = sweep(GAME, ["duration=200ms"], "1-2", workers=1, max_events=300)
    assert [(r["seed"], r["error"], r["events"]) for r in rows] == [
        (1, f"stopped early: --max-events 300 ran out at {rows[0]['virtual_time_ns']} ns of virtual time", 300),
        (2, f"stopped early: --max-events 300 ran out at {rows[1]['virtual_time_ns']} ns of virtual time", 300)]


def _wait_for(predicate, proc, what: str, limit: float = 60.0) -> None:
    """Poll until ``predicate()``; fail (after stopping ``proc``) if the process ends first."""
    deadline = time.monotonic() + limit
    while not predicate():
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            pytest.fail(f"the process ended or took too long before {what}: {proc.communicate()}")
        time.sleep(0.02)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _wddmsim(*args, **kw) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "wddmsim", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=ROOT, **kw)


@pytest.mark.skipif(not hasattr(os, "killpg"), reason="process groups are POSIX")
def test_ctrl_c_to_the_process_group_writes_every_output(tmp_path):
    """Ctrl-C as a terminal sends it (to the whole group, the log's writer included), mid-run: exit
    130, one line saying where, and every output whole and marked partial."""
    log, trace, csv, rep = tmp_path / "e.jsonl", tmp_path / "t.json", tmp_path / "p.csv", tmp_path / "r"
    proc = _wddmsim("run", GAME, "--until", "60s", "--events", str(log), "--trace", str(trace),
                    "--presentmon", str(csv), "--report", str(rep), start_new_session=True)
    _wait_for(lambda: _size(log) > 300_000, proc, "the log grew")
    os.killpg(proc.pid, signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "Aborted" not in err
    lines = err.splitlines()
    assert lines[0] == "event log: about 192 MB for 60 s of virtual time (estimated from the first 100 ms)"
    stopped = re.fullmatch(r"wddmsim: interrupted by SIGINT at (\S+ \S+) of virtual time; "
                           r"the outputs cover what ran until then", lines[1])
    assert stopped, lines
    end = _log(log)[-1]
    assert (end["event"], end["reason"], end["summary"]["virtual_time_ns"]) == ("LogEnd", "interrupted", end["t"])
    assert json.loads(trace.read_text())["traceEvents"]
    assert csv.read_text().startswith("Application,")
    assert sorted(os.listdir(rep)) == ["context_latency.png", "frame_times.png", "node_utilisation.png",
                                       "queue_depths.png", "summary.json", "summary.md"]
    assert (rep / "summary.md").read_text().startswith(
        f"> **Partial run:** the run was interrupted (SIGINT or SIGTERM) before its end time at {time_text(end['t'])} ")
    assert json.loads((rep / "summary.json").read_text()) == end["summary"]
    r = CliRunner().invoke(main, ["trace", str(log), "-o", str(tmp_path / "t2.json")])
    assert r.exit_code == 0 and r.stderr == (f"wddmsim: {log}: partial log: the run was interrupted (SIGINT or "
                                             f"SIGTERM) before its end time at {time_text(end['t'])} of virtual time; "
                                             f"everything in it covers only what ran until then\n")


def test_sigterm_to_the_run_ends_it_cleanly(tmp_path):
    log = tmp_path / "e.jsonl"
    proc = _wddmsim("run", GAME, "--until", "60s", "--events", str(log), "--json")
    _wait_for(lambda: _size(log) > 300_000, proc, "the log grew")
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert re.fullmatch(r"wddmsim: interrupted by SIGTERM at \S+ \S+ of virtual time; "
                        r"the outputs cover what ran until then", err.splitlines()[1]), err
    end = _log(log)[-1]
    assert (end["reason"], end["summary"]) == ("interrupted", json.loads(out))


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="finds the pool's workers in /proc")
def test_ctrl_c_stops_a_sweep_and_keeps_its_finished_rows(tmp_path):
    out = tmp_path / "rows.csv"
    proc = _wddmsim("sweep", GAME, "--seeds", "1-40", "--workers", "2", "-o", str(out), start_new_session=True)
    children = Path(f"/proc/{proc.pid}/task/{proc.pid}/children")

    def cpu_s() -> float:  # the workers' CPU time so far: a run of this scenario takes about 0.4 s
        total = 0
        for pid in children.read_text().split():
            try:
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            total += int(fields[11]) + int(fields[12])
        return total / os.sysconf("SC_CLK_TCK")

    _wait_for(lambda: cpu_s() >= 2.0, proc, "the workers ran a few runs")
    os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    said = re.match(rf"wddmsim: sweep interrupted by SIGINT: (\d+) of 40 runs finished; their rows are in {out}\n",
                    err)
    assert said, err
    done = int(said.group(1))
    assert 1 <= done < 40 and len(out.read_text().splitlines()) == done + 1


def test_replay_max_events_stops_the_model_run(tmp_path):
    r = CliRunner().invoke(main, ["replay", str(ROOT / "tests" / "data" / "presentmon" / "test_case_4.csv"),
                                  "--max-events", "500", "--json", "--report", str(tmp_path / "rep")])
    assert r.exit_code == 5, r.output
    rep = tmp_path / "rep"
    pngs = sorted(p.name for p in rep.glob("*.png"))  # one per swap chain of the capture
    assert pngs[0] == "01-dwm.exe-10376-0x1BF098B1ED0.png" and len(pngs) == 5
    assert r.stderr == "".join(f"wrote {rep / name}\n" for name in (
        *pngs, "model.csv", "capture.csv", "comparison.json")) + (
        "wddmsim: stopped at 333.6 ms of virtual time: --max-events 500 ran out; the model's outputs "
        "and the comparison cover what ran until then\n")
    printed = json.loads(r.stdout)
    # The comparison of what ran is still printed and written, and both say why it is partial.
    assert (printed["passed"], printed["stopped"]) == (False, "max_events")
    assert json.loads((tmp_path / "rep" / "comparison.json").read_text()) == printed


def test_a_whole_replay_says_it_did_not_stop():
    r = CliRunner().invoke(main, ["replay", str(ROOT / "tests" / "data" / "presentmon" / "test_case_0.csv"), "--json"])
    assert r.exit_code == 0, r.output
    assert (json.loads(r.stdout)["passed"], json.loads(r.stdout)["stopped"]) == (True, None)


@pytest.mark.skipif(not hasattr(os, "killpg"), reason="process groups are POSIX")
def test_a_ctrl_c_delivered_twice_at_once_is_one_ctrl_c(tmp_path):
    """A terminal's Ctrl-C reaches the whole process group, and ``uv run`` (the README's way to
    start wddmsim) forwards it to the command too: the command gets SIGINT twice within
    microseconds. That is one Ctrl-C: the outputs are written whole, exit 130."""
    log, trace, rep = tmp_path / "e.jsonl", tmp_path / "t.json", tmp_path / "r"
    proc = _wddmsim("run", GAME, "--until", "60s", "--events", str(log), "--trace", str(trace), "--report",
                    str(rep), start_new_session=True)
    _wait_for(lambda: _size(log) > 300_000, proc, "the log grew")
    os.killpg(proc.pid, signal.SIGINT)
    os.kill(proc.pid, signal.SIGINT)  # what uv run does with the SIGINT it got from the terminal
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "again while the outputs were written" not in err
    said = [line for line in err.splitlines() if line.startswith("wddmsim: ")]
    assert len(said) == 1 and re.fullmatch(r"wddmsim: interrupted by SIGINT at [0-9.]+ m?s of virtual time; the "
                                           r"outputs cover what ran until then", said[0]), err
    assert _log(log)[-1]["reason"] == "interrupted"
    assert json.loads(trace.read_text())["traceEvents"]
    assert (rep / "summary.md").read_text().startswith("> **Partial run:**")


def test_a_second_ctrl_c_while_the_outputs_are_written_stops_at_once(tmp_path):
    """The first Ctrl-C stops the run; one more while the report's plots are drawn (after its
    first one, before summary.md, which links them) ends the process at once, exit 130, with a line
    saying the outputs may be cut."""
    log, rep = tmp_path / "e.jsonl", tmp_path / "r"
    proc = _wddmsim("run", GAME, "--until", "60s", "--events", str(log), "--report", str(rep),
                    start_new_session=True)
    _wait_for(lambda: _size(log) > 300_000, proc, "the log grew")
    os.killpg(proc.pid, signal.SIGINT)
    first = time.monotonic()
    _wait_for(lambda: (rep / "node_utilisation.png").exists(), proc, "the report was begun")
    # Past the window in which a second signal is taken for the first one forwarded (uv run).
    time.sleep(max(0.0, first + SAME_SIGNAL_S + 0.05 - time.monotonic()))
    assert proc.poll() is None, "the plots were drawn before the second Ctrl-C could come"
    os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130
    assert err.splitlines()[-1] == ("wddmsim: SIGINT again while the outputs were written: stopped at once; "
                                    "the outputs may be incomplete")
    assert _log(log)[-1]["reason"] == "interrupted"  # the log was whole before the outputs began


def test_demo_interrupted_before_its_first_event(monkeypatch):
    """SIGINT as the demo's run starts: it stops at 0 ns, still prints its summary, exit 130."""
    import wddmsim.runner.stop as runstop

    original = runstop.run_checked

    def interrupted_first(sim, limit, stop=None, on_progress=None):
        signal.raise_signal(signal.SIGINT)
        return original(sim, limit, stop, on_progress)

    monkeypatch.setattr(runstop, "run_checked", interrupted_first)
    r = CliRunner().invoke(main, ["demo"])
    assert r.exit_code == 130, r.output
    assert r.stderr.splitlines()[0] == ("wddmsim: interrupted by SIGINT at 0 ns of virtual time; the outputs cover "
                                        "what ran until then")
    assert r.stdout.startswith("A game, a compute job, a copy stream and a bursty client sharing one GPU.")


def test_ctrl_c_outside_a_run_is_exit_130_with_one_line(monkeypatch):
    """A Ctrl-C while a command reads its input (no run to stop yet): one line, exit 130."""
    import wddmsim.cli.app as cli

    def interrupted(*args, **kw):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "load_scenario_file", interrupted)
    r = CliRunner().invoke(main, ["run", GAME])
    assert (r.exit_code, r.stderr) == (130, "wddmsim: interrupted by SIGINT\n")


def _catches_sigterm(pid: int) -> bool:
    with open(f"/proc/{pid}/status") as f:
        mask = next(int(line.split()[1], 16) for line in f if line.startswith("SigCgt:"))
    return bool(mask & (1 << (signal.SIGTERM - 1)))


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="reads the handlers from /proc (Linux)")
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_replay_reading_a_pipe_that_stays_open_ends_on_the_first_signal(sig):
    """``replay /dev/stdin`` fed by a pipe that never closes used to ignore SIGINT and SIGTERM (the
    handlers only set the run's stop flag, and no run had begun): a signal before the run now ends
    the command at once, exit 130, one line."""
    import subprocess
    import sys
    import time

    proc = subprocess.Popen([sys.executable, "-m", "wddmsim", "replay", "/dev/stdin"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        proc.stdin.write("Application,ProcessID\n")  # a first line, then nothing and no end
        proc.stdin.flush()
        # Wait until the command's handlers are in place (SIGTERM caught: bit 15 of SigCgt); it
        # then blocks reading the pipe.
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not _catches_sigterm(proc.pid):
            assert proc.poll() is None, proc.communicate()
            time.sleep(0.05)
        time.sleep(0.2)
        assert proc.poll() is None
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130
    assert err == f"wddmsim: interrupted by {signal.Signals(sig).name} before the run began; nothing ran\n"
    assert out == ""


FLOOD = """
name = "flood"
duration = "1s"
[adapter]
cpu_cost = { render = "1us", patch = 0, submit = 0, isr = 0, dpc = 0, present = 0 }
[[adapter.nodes]]
name = "3D"
engine = "3d"
[[process]]
name = "app"
[[process.context]]
name = "c"
node = "3D"
workload = { kind = "script", packets = [ { at = 0, work = "1ns", repeat = 200001 } ] }
"""


def test_a_log_estimated_far_past_a_busy_runs_gets_a_budget_by_default(tmp_path, monkeypatch):
    # A flood of a second is estimated at about 2.3 GB; with no --max-log-bytes it used to write it
    # all. It now stops at the default budget (here made 2 MB, the floor, for the test's speed).
    import wddmsim.runner.logestimate as logestimate

    monkeypatch.setattr(logestimate, "DEFAULT_BUDGET_FLOOR", 2_000_000)
    monkeypatch.setattr(logestimate, "BUSY_RATE", 100_000)  # ten times that for 1 s is 1 MB: the floor rules
    flood, log = tmp_path / "flood.toml", tmp_path / "flood.jsonl"
    flood.write_text(FLOOD)
    r = CliRunner().invoke(main, ["run", str(flood), "--events", str(log)])
    assert r.exit_code == 5, r.output
    lines = r.stderr.splitlines()
    assert lines[0].startswith("event log: about 2.3 GB for 1 s of virtual time (estimated from the first 410 us); "
                               "that is over --max-log-bytes 2.0 MB: the run will stop at about ")
    assert lines[1] == ("wddmsim: --max-log-bytes 2.0 MB applied by default: the log is estimated at over ten times a "
                        "busy run's (about 3 MB per virtual second); give --max-log-bytes SIZE to choose another bound")
    assert lines[2].startswith("wddmsim: stopped at ") and "--max-log-bytes 2000000" in lines[2]
    assert 2_000_000 <= os.path.getsize(log) < 3_000_000 and _log(log)[-1]["reason"] == "max_log_bytes"


def test_a_busy_run_within_ten_times_gets_no_default_budget(tmp_path):
    log = tmp_path / "game.jsonl"
    r = CliRunner().invoke(main, ["run", GAME, "--until", "1s", "--events", str(log)])
    assert r.exit_code == 0 and "applied by default" not in r.stderr
    assert _log(log)[-1]["reason"] == "time"
