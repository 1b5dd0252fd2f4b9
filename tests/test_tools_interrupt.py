"""Ctrl-C and SIGTERM end the long tools cleanly: ``tools/fuzz.py`` and ``benchmarks/all.py`` stop
at once with one line on standard error, no traceback, and exit status 130 (as ``wddmsim`` does);
the fuzzer's pool workers, which ignore SIGINT themselves, are gone with it.

Each tool runs in a process of its own, as a person starts it; the signal goes to that process
alone (what ``kill`` or a launcher forwarding Ctrl-C does; a terminal would also signal the
workers, which ignore it) once its first line is out."""

from __future__ import annotations

import importlib.util
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: wall seconds a tool may take to end after the signal (the fuzzer's workers were running minutes on)
ENDS_WITHIN_S = 15.0


def start(*args: str, cwd: Path = ROOT) -> tuple[subprocess.Popen, list[str]]:
    """The tool started with ``args``; the lines of its standard error, filled by a reader thread."""
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"}
    proc = subprocess.Popen([sys.executable, *args], cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    lines: list[str] = []

    def read() -> None:
        for line in proc.stderr:
            lines.append(line.rstrip("\n"))

    threading.Thread(target=read, daemon=True).start()
    threading.Thread(target=proc.stdout.read, daemon=True).start()  # keep the pipe from filling
    return proc, lines


def first_line(proc: subprocess.Popen, lines: list[str], limit: float = 120.0) -> str:
    """The tool's first line on standard error, once it is out (polled, never a blind sleep)."""
    deadline = time.monotonic() + limit
    while not lines:
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            pytest.fail(f"no first line: exit status {proc.wait()}, {lines}")
        time.sleep(0.02)
    return lines[0]


def children(pid: int) -> set[int]:
    """The processes whose parent is ``pid`` (from /proc)."""
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.add(int(entry.name))
    return found


def alive(pid: int) -> bool:
    """Whether ``pid`` is a process that has not ended (a zombie has)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def ended(proc: subprocess.Popen, lines: list[str]) -> tuple[int, float, list[str]]:
    """Exit status, the seconds it took, and the standard error lines, once ``proc`` ends."""
    t0 = time.monotonic()
    try:
        status = proc.wait(timeout=ENDS_WITHIN_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        pytest.fail(f"still running {ENDS_WITHIN_S} s after the signal: {lines}")
    took = time.monotonic() - t0
    time.sleep(0.1)  # the reader thread takes the last line
    return status, took, lines


#: (campaign arguments, batches): 80 batches of 5 scenarios, minutes of work on two workers; 2 batches
#: of 500 command lines, most run by wddmsim's command line inside the worker, whose own handler takes
#: a SIGTERM as the end of the command it runs.
CAMPAIGNS = {
    "scenarios": (["--decode", "0", "--scenarios", "400", "--toml", "0", "--cli", "0"], 80),
    "cli": (["--decode", "0", "--scenarios", "0", "--toml", "0", "--cli", "1000"], 2),
}


def descendants(pid: int) -> set[int]:
    """Every process under ``pid``."""
    found, todo = set(), [pid]
    while todo:
        kids = children(todo.pop())
        found |= kids
        todo += kids
    return found


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads the process table from /proc")
@pytest.mark.parametrize("campaign, sig", [("scenarios", signal.SIGINT), ("scenarios", signal.SIGTERM),
                                           ("cli", signal.SIGINT)], ids=["scenarios-SIGINT", "scenarios-SIGTERM",
                                                                         "cli-SIGINT"])
def test_the_fuzzer_ends_on_a_signal_with_one_line_and_its_workers_gone(tmp_path, campaign, sig):
    out = tmp_path / "fuzz"
    args, batches = CAMPAIGNS[campaign]
    proc, lines = start(str(ROOT / "tools" / "fuzz.py"), *args, "--workers", "2", "--out", str(out), cwd=tmp_path)
    assert first_line(proc, lines) == f"fuzz: {batches} batches on 2 worker processes (seed 0)"
    workers = children(proc.pid)
    assert len(workers) == 2 and all(alive(w) for w in workers)
    time.sleep(0.5)  # the batches under way
    under = descendants(proc.pid)
    proc.send_signal(sig)
    status, took, err = ended(proc, lines)
    assert status == 130, err
    assert len(err) == 2, err
    said = re.fullmatch(rf"fuzz: interrupted by {sig.name} after (\d+) of {batches} batches; no failing input found",
                        err[1])
    assert said and int(said[1]) < batches, err  # the batches finished before the signal, as fast as they ran
    assert not any("Traceback" in line for line in err)
    deadline = time.monotonic() + 5
    while any(alive(p) for p in under) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert [p for p in under if alive(p)] == [], "a worker, or a process it ran, outlived the fuzzer"
    assert took < ENDS_WITHIN_S and not out.exists()


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_all_benchmarks_end_on_a_signal_with_one_line(sig):
    # The throughput benchmark at its full size runs far longer than it takes the signal to come.
    proc, lines = start("benchmarks/all.py", "--only", "throughput")
    assert first_line(proc, lines).startswith("# 1 benchmarks; CPUs ")
    proc.send_signal(sig)
    status, _, err = ended(proc, lines)
    assert status == 130, err
    assert err[1:] == [f"all.py: interrupted by {sig.name} during throughput; none of the 1 benchmarks ran whole"]
    assert not any("Traceback" in line for line in err)


def test_the_line_says_which_benchmarks_ran_whole():
    spec = importlib.util.spec_from_file_location("bench_all", ROOT / "benchmarks" / "all.py")
    every = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(every)
    progress = every.Progress(planned=9, current="logcost", finished=1)
    assert every.interrupted_line("SIGTERM", progress) == (
        "all.py: interrupted by SIGTERM during logcost; 1 of 9 benchmarks ran whole, their figures are above")
    assert every.interrupted_line("SIGINT", every.Progress(planned=2)) == (
        "all.py: interrupted by SIGINT before the first benchmark; none of the 2 benchmarks ran whole")


def test_a_worker_ended_inside_a_callback_python_cannot_unwind_says_nothing(capsys, monkeypatch):
    """A worker's SIGTERM can land inside a weak reference's callback, where Python cannot pass the
    exception on and prints "Exception ignored in ..." with a traceback: the fuzzer's workers drop
    that one exception (their next SIGTERM ends them), and report any other as Python does."""
    import weakref

    spec = importlib.util.spec_from_file_location("fuzz_tool", ROOT / "tools" / "fuzz.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    monkeypatch.setattr(sys, "unraisablehook", tool._unraisable)

    class Thing:
        pass

    def raised_in_a_callback(exc):
        thing = Thing()

        def callback(ref):
            raise exc

        ref = weakref.ref(thing, callback)
        del thing  # the callback runs here, and its exception cannot be raised to anyone
        return ref

    raised_in_a_callback(tool.WorkerEnd())
    assert capsys.readouterr().err == ""
    raised_in_a_callback(ValueError("a real one"))
    err = capsys.readouterr().err
    assert err.startswith("Exception ignored in: ") and err.rstrip().endswith("ValueError: a real one")
