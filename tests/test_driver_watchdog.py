"""A driver call that never returns (issue 29): the DDI watchdog's verdict, never a hung process.

``wddmsim run --driver`` of a driver whose DxgkDdiSubmitCommand (or any entry point) loops forever
ignored SIGINT and SIGTERM (a SIGKILL after 10 minutes left the event log empty), and ``wddmsim
verify`` stopped on Ctrl-C with no verdict. Now a call that runs past the watchdog's limit of host
time (``WDDMSIM_DDI_WATCHDOG_S``, lowered to 1 s here) ends the run with bug check 0x133
DPC_WATCHDOG_VIOLATION (at DISPATCH_LEVEL or DIRQL) or 0x116 VIDEO_TDR_FAILURE with rule 111 (at
PASSIVE_LEVEL), exit status 3, the event log whole; a first SIGINT stops a call that keeps running
the same way (exit status 130), a second ends the process at once; ``verify`` fails the case and
goes on, and a Ctrl-C gives the verdict on the cases that ran.
"""

from __future__ import annotations

import bdb
import dis
import io
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from rich.console import Console

from wddmsim.dxgkrnl import gateway as gateway_module
from wddmsim.dxgkrnl import watchdog
from wddmsim.dxgkrnl.loader import load_class
from wddmsim.scenario import scenario_from_dict
from wddmsim.runner.system import System
from wddmsim.verify import verify
from wddmsim.verify.output import junit_xml, print_report, report_json

ROOT = Path(__file__).parents[1]
DEEP_QUEUE = str(ROOT / "examples" / "deep_queue.toml")
HW_SCHEDULING = str(ROOT / "examples" / "hardware_scheduling.toml")

pytestmark = pytest.mark.skipif(not hasattr(signal, "setitimer"), reason="the watchdog's timer is POSIX's")

DRIVERS = '''
import os
import time

from wddmsim.kmd import ReferenceDriver


def entered():
    """Tell the test the loop has begun (a file it waits for)."""
    mark = os.environ.get("LOOP_MARK")
    if mark:
        open(mark, "w").close()


class LoopsInSubmit(ReferenceDriver):
    def DxgkDdiSubmitCommand(self, hAdapter, pSubmitCommand):
        entered()
        while True:  # submit loop
            pass


class LoopsInDpc(ReferenceDriver):
    def DxgkDdiDpcRoutine(self, MiniportDeviceContext):
        while True:  # dpc loop
            pass


class LoopsInRender(ReferenceDriver):
    def DxgkDdiRender(self, hContext, pRender):
        while True:  # render loop
            pass


class SleepsInSubmit(ReferenceDriver):
    def DxgkDdiSubmitCommand(self, hAdapter, pSubmitCommand):
        time.sleep(3600)  # submit sleep


class SwallowsEverything(ReferenceDriver):
    def DxgkDdiSubmitCommand(self, hAdapter, pSubmitCommand):
        entered()
        while True:
            try:
                while True:  # swallowing loop
                    pass
            except BaseException:
                pass


class SwallowsOnce(ReferenceDriver):
    def DxgkDdiSubmitCommand(self, hAdapter, pSubmitCommand):
        try:
            while True:  # first loop
                pass
        except BaseException:
            pass
        while True:  # second loop
            pass


class LoopsOnTenthSubmit(ReferenceDriver):
    submitted = 0

    def DxgkDdiSubmitCommand(self, hAdapter, pSubmitCommand):
        self.submitted += 1
        if self.submitted >= 10:
            entered()
            while True:  # tenth loop
                pass
        return super().DxgkDdiSubmitCommand(hAdapter, pSubmitCommand)


class LoopsNestedInDpc(ReferenceDriver):
    in_dpc = False

    def DxgkDdiDpcRoutine(self, MiniportDeviceContext):
        self.in_dpc = True
        try:
            return super().DxgkDdiDpcRoutine(MiniportDeviceContext)
        finally:
            self.in_dpc = False

    def DxgkDdiSubmitCommandToHwQueue(self, hAdapter, pSubmitCommandToHwQueue):
        while self.in_dpc:  # nested loop
            pass
        return super().DxgkDdiSubmitCommandToHwQueue(hAdapter, pSubmitCommandToHwQueue)
'''


def line_of(marker: str) -> int:
    """The line of DRIVERS that carries ``marker`` (a comment)."""
    return next(i for i, text in enumerate(DRIVERS.splitlines(), start=1) if marker in text)


@pytest.fixture
def drivers(tmp_path) -> Path:
    path = tmp_path / "loopy.py"
    path.write_text(DRIVERS)
    return path


def wddmsim(*args, limit: str | None = "1", mark: Path | None = None, **kw) -> subprocess.Popen:
    env = dict(os.environ)
    env.pop(watchdog.ENV, None)
    if limit is not None:
        env[watchdog.ENV] = limit
    if mark is not None:
        env["LOOP_MARK"] = str(mark)
    return subprocess.Popen([sys.executable, "-m", "wddmsim", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, cwd=ROOT, env=env, **kw)


def run_driver(tmp_path, drivers, cls: str, scenario: str = DEEP_QUEUE, *extra, **kw):
    log, crash = tmp_path / "out.jsonl", tmp_path / "crash.json"
    proc = wddmsim("run", scenario, "--until", "100ms", "--driver", f"{drivers}:{cls}", "--events", str(log),
                   "--crash-record", str(crash), *extra, **kw)
    out, err = proc.communicate(timeout=120)
    return proc.returncode, out, err, log, crash


def events(log: Path) -> list[dict]:
    return [json.loads(line) for line in log.read_text().splitlines()]


def assert_whole(log: Path) -> dict:
    """The log ends with its BugCheck and LogEnd lines, and ``wddmsim check`` reads it whole."""
    evs = events(log)
    assert [e["event"] for e in evs[-2:]] == ["BugCheck", "LogEnd"]
    assert evs[-1]["reason"] == "bugcheck"
    check = subprocess.run([sys.executable, "-m", "wddmsim", "check", str(log)], capture_output=True, text=True,
                           cwd=ROOT, timeout=120)
    assert check.returncode == 0, check.stdout + check.stderr
    assert check.stdout.startswith(f"{log}: {len(evs)} events; the run stopped with a bug check at ")
    return evs[-2]


def wait_for(path: Path, proc: subprocess.Popen, limit: float = 60.0) -> None:
    deadline = time.monotonic() + limit
    while not path.exists():
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            pytest.fail(f"the driver's loop did not begin: {proc.communicate()}")
        time.sleep(0.02)


# -- the watchdog's verdict in a run ----------------------------------------------------------------
def test_a_submit_command_that_loops_is_bug_check_0x133_with_a_whole_log(tmp_path, drivers):
    rc, out, err, log, crash = run_driver(tmp_path, drivers, "LoopsInSubmit")
    message = (f"DxgkDdiSubmitCommand ran past the DDI watchdog's 1 s of host time at DISPATCH_LEVEL without "
               f"returning (stopped at loopy.py, line {line_of('# submit loop')}, in DxgkDdiSubmitCommand)")
    assert rc == 3, err
    record = json.loads(crash.read_text())
    assert (record["ddi"], record["message"], record["struct"]) == ("DxgkDdiSubmitCommand", message,
                                                                   "DXGKARG_SUBMITCOMMAND")
    bc = record["bugcheck"]
    assert (bc["code"], bc["name"], bc["p1"], bc["p3"], bc["p4"]) == (0x133, "DPC_WATCHDOG_VIOLATION", 0, 64, 0)
    assert 64 <= bc["p2"] < 64 * 3  # the host time it ran, in ticks of 15.625 ms: at least the limit
    assert record["traceback"].splitlines()[1:3] == [
        f'  File "{drivers}", line {line_of("# submit loop")}, in DxgkDdiSubmitCommand',
        "    while True:  # submit loop"]
    stop = assert_whole(log)
    assert (stop["code"], stop["p1"], stop["p3"], stop["rule"], stop["message"]) == (0x133, 0, 64, None, message)
    assert "Bug check at 0 ns:" in out and "BugCheck 0x133 (DPC_WATCHDOG_VIOLATION)" in out  # the summary
    assert err.splitlines()[0] == f"wrote {log}: the event log, {len(log.read_text().splitlines())} events"
    assert err.splitlines()[1].startswith("wall time ") and "Traceback" not in err


def test_a_dpc_that_loops_is_bug_check_0x133(tmp_path, drivers):
    rc, out, err, log, crash = run_driver(tmp_path, drivers, "LoopsInDpc")
    assert rc == 3, err
    record = json.loads(crash.read_text())
    assert record["message"] == (f"DxgkDdiDpcRoutine ran past the DDI watchdog's 1 s of host time at "
                                 f"DISPATCH_LEVEL without returning (stopped at loopy.py, line "
                                 f"{line_of('# dpc loop')}, in DxgkDdiDpcRoutine)")
    assert (record["ddi"], record["bugcheck"]["code"], record["bugcheck"]["p1"]) == ("DxgkDdiDpcRoutine", 0x133, 0)
    assert assert_whole(log)["message"] == record["message"]


def test_a_passive_level_entry_point_that_loops_is_0x116_rule_111(monkeypatch, drivers):
    """In process (the watchdog watches the main thread of any process): DxgkDdiRender runs at
    PASSIVE_LEVEL, where a thread stuck in the driver is rule 111's 0x116."""
    monkeypatch.setenv(watchdog.ENV, "1")
    r = System(scenario_from_dict(_APP, "<t>"), driver=load_class(f"{drivers}:LoopsInRender")).run()
    rec = r.bugcheck
    assert (rec.bugcheck.code, rec.bugcheck.p1, rec.bugcheck.p2, rec.bugcheck.p3, rec.bugcheck.p4) == (0x116, 0, 0, 0, 0)
    assert (rec.rule, rec.rule_name, rec.ddi) == (111, "ThreadsLeaveDriverInTime", "DxgkDdiRender")
    assert rec.message == (f"DxgkDdiRender ran past the DDI watchdog's 1 s of host time at PASSIVE_LEVEL without "
                           f"returning (stopped at loopy.py, line {line_of('# render loop')}, in DxgkDdiRender)")


def test_a_driver_blocked_in_a_sleep_is_stopped_too(monkeypatch, drivers):
    monkeypatch.setenv(watchdog.ENV, "1")
    t0 = time.monotonic()
    r = System(scenario_from_dict(_APP, "<t>"), driver=load_class(f"{drivers}:SleepsInSubmit")).run()
    assert time.monotonic() - t0 < 30
    assert r.bugcheck.message == (f"DxgkDdiSubmitCommand ran past the DDI watchdog's 1 s of host time at "
                                  f"DISPATCH_LEVEL without returning (stopped at loopy.py, line "
                                  f"{line_of('# submit sleep')}, in DxgkDdiSubmitCommand)")


def test_the_outermost_call_is_judged_and_the_nested_one_named(monkeypatch, drivers):
    """Under hardware scheduling the DPC's DxgkCbNotifyDpc makes the OS call
    DxgkDdiSubmitCommandToHwQueue inside it: a loop there stops the DPC, the call the OS made."""
    monkeypatch.setenv(watchdog.ENV, "1")
    from wddmsim.scenario import load_scenario

    r = System(load_scenario(HW_SCHEDULING), driver=load_class(f"{drivers}:LoopsNestedInDpc")).run(10**6)
    assert (r.bugcheck.ddi, r.bugcheck.bugcheck.code) == ("DxgkDdiDpcRoutine", 0x133)
    assert r.bugcheck.message == (
        f"DxgkDdiDpcRoutine ran past the DDI watchdog's 1 s of host time at DISPATCH_LEVEL without returning, "
        f"inside a nested call of DxgkDdiSubmitCommandToHwQueue (stopped at loopy.py, line "
        f"{line_of('# nested loop')}, in DxgkDdiSubmitCommandToHwQueue)")


def test_a_driver_that_swallows_the_stop_gets_it_again(monkeypatch, drivers):
    monkeypatch.setenv(watchdog.ENV, "0.5")
    r = System(scenario_from_dict(_APP, "<t>"), driver=load_class(f"{drivers}:SwallowsOnce")).run()
    assert r.bugcheck.message.endswith(f"(stopped at loopy.py, line {line_of('# second loop')}, "
                                       f"in DxgkDdiSubmitCommand)")


def test_a_debugger_holding_the_call_is_never_interrupted(monkeypatch):
    assert watchdog._debugged() is False
    monkeypatch.setattr(sys, "gettrace", lambda: bdb.Bdb().trace_dispatch)
    assert watchdog._debugged() is True


def test_the_limit_comes_from_the_environment(capsys):
    assert watchdog.limit({}) == watchdog.DEFAULT_LIMIT_S == 10.0
    assert watchdog.limit({watchdog.ENV: "2.5"}) == 2.5
    assert watchdog.limit({watchdog.ENV: "0"}) is None and watchdog.limit({watchdog.ENV: "off"}) is None
    assert watchdog.limit({watchdog.ENV: "soon"}) == 10.0
    assert watchdog.limit({watchdog.ENV: "soon"}) == 10.0
    assert capsys.readouterr().err == ("wddmsim: WDDMSIM_DDI_WATCHDOG_S='soon': not a number of seconds; the DDI "
                                       "watchdog stops a driver call at 10 s of host time\n")


def test_the_callers_hot_path_stores_nothing_for_the_watchdog():
    """The watchdog reads what the caller keeps anyway (``active``, ``calls``): the caller's own
    attribute stores are the IRQL's and the running entry point's, set and restored."""
    code = next(c for c in gateway_module.DdiGateway.caller.__code__.co_consts
                if isinstance(c, type(test_the_callers_hot_path_stores_nothing_for_the_watchdog.__code__))
                and c.co_name == "fast")
    stores = sorted(i.argval for i in dis.get_instructions(code) if i.opname == "STORE_ATTR")
    # set before the call, restored after it (the ``finally`` is compiled twice: return and exception)
    assert stores == ["active"] * 3 + ["irql"] * 3


def _forced_look(frame):
    """One look of the watchdog at ``frame`` as if the call had run past its limit: what it raised."""
    dog = watchdog._DOG
    watchdog._look(frame, 0.0)
    dog.ran = dog.limit + 1
    dog.last = time.monotonic()
    try:
        watchdog._tick(signal.SIGALRM, frame)
    except watchdog.DdiOverran as e:
        return e.name
    return None


def test_the_watchdog_stops_the_drivers_code_never_the_gateways_own(monkeypatch):
    """Inside the driver's method the look stops the call; after it returned (the gateway's
    ``returned`` hook, then logging and judging) it does not: nothing there could catch it."""
    from wddmsim.kmd import ReferenceDriver

    monkeypatch.setenv(watchdog.ENV, "1")
    seen = {}

    class Probe(ReferenceDriver):
        def DxgkDdiSubmitCommand(self, hAdapter, pSubmitCommand):
            if "inside" not in seen:
                seen["inside"] = _forced_look(sys._getframe())
                gw.returned = lambda name: seen.setdefault("after", _forced_look(sys._getframe()))
            return super().DxgkDdiSubmitCommand(hAdapter, pSubmitCommand)

    system = System(scenario_from_dict(_APP, "<t>"), driver=Probe)
    gw = system.adapter.ddi
    assert watchdog._DOG.armed and signal.getsignal(signal.SIGALRM) is watchdog._tick
    assert system.run().bugcheck is None
    assert seen == {"inside": "DxgkDdiSubmitCommand", "after": None}


def test_off_means_no_timer(monkeypatch):
    monkeypatch.setenv(watchdog.ENV, "off")
    System(scenario_from_dict(_APP, "<t>"))
    assert not watchdog._DOG.armed and signal.getsignal(signal.SIGALRM) is signal.SIG_DFL
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    monkeypatch.delenv(watchdog.ENV)
    System(scenario_from_dict(_APP, "<t>"))
    assert watchdog._DOG.armed and watchdog._DOG.limit == 10.0
    assert signal.getitimer(signal.ITIMER_REAL)[1] == watchdog.PERIOD_S


def test_the_watchdogs_timer_stops_before_the_interpreter_ends(tmp_path):
    """The interpreter's end puts SIGALRM back to its default action, the end of the process: a
    timer still running then killed ``wddmsim run`` while it wrote a report (exit -14)."""
    script = tmp_path / "slow_exit.py"
    script.write_text(
        "import time\n"
        "from wddmsim.scenario import scenario_from_dict\n"
        "from wddmsim.runner.system import System\n"
        f"System(scenario_from_dict({_APP!r}, '<t>')).run()\n"
        "class SlowToGo:\n"
        "    def __del__(self):\n"
        "        time.sleep(1.0)\n"
        "keep = SlowToGo()\n")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stderr) == (0, "")


_APP = {"name": "loops", "duration": "50ms", "process": [{"name": "app", "context": [{"name": "c", "node": "3D",
        "workload": {"kind": "script", "packets": [{"at": 0, "work": "1ms", "repeat": 3}]}}]}]}


# -- signals while the driver loops -------------------------------------------------------------------
def test_the_first_sigint_stops_a_call_that_keeps_running_with_a_whole_log(tmp_path, drivers):
    """The watchdog's own limit is far away (60 s): the SIGINT stops the call that has run over a
    second, the log is whole, exit status 130."""
    mark = tmp_path / "looping"
    log, crash = tmp_path / "out.jsonl", tmp_path / "crash.json"
    proc = wddmsim("run", DEEP_QUEUE, "--until", "100ms", "--driver", f"{drivers}:LoopsInSubmit", "--events",
                   str(log), "--crash-record", str(crash), limit="60", mark=mark)
    wait_for(mark, proc)
    time.sleep(1.5)
    t0 = time.monotonic()
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert time.monotonic() - t0 < 10
    assert proc.returncode == 130, err
    record = json.loads(crash.read_text())
    said = re.fullmatch(r"interrupted by SIGINT inside DxgkDdiSubmitCommand, which had run (\d+\.\d) s of host time "
                        rf"at DISPATCH_LEVEL without returning \(stopped at loopy.py, line "
                        rf"{line_of('# submit loop')}, in DxgkDdiSubmitCommand\)", record["message"])
    assert said and float(said.group(1)) >= 1.0, record["message"]
    assert record["bugcheck"]["code"] == 0x133
    assert assert_whole(log)["message"] == record["message"]
    assert err.splitlines()[0] == ("wddmsim: interrupted by SIGINT at 0 ns of virtual time; the outputs cover "
                                   "what ran until then")


def test_sigint_then_sigint_ends_a_driver_that_swallows_everything(tmp_path, drivers):
    """The driver catches BaseException in its loop, so no stop ever ends it: the second SIGINT
    ends the process at once with one line."""
    mark = tmp_path / "looping"
    proc = wddmsim("run", DEEP_QUEUE, "--until", "100ms", "--driver", f"{drivers}:SwallowsEverything", "--events",
                   str(tmp_path / "out.jsonl"), limit="60", mark=mark)
    wait_for(mark, proc)
    time.sleep(1.5)
    proc.send_signal(signal.SIGINT)
    time.sleep(1.0)  # past SAME_SIGNAL_S: a second Ctrl-C, not the first forwarded
    assert proc.poll() is None
    t0 = time.monotonic()
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert time.monotonic() - t0 < 5
    assert (proc.returncode, err) == (130, "wddmsim: SIGINT again before the run ended: stopped at once; the "
                                           "outputs are incomplete\n")


def test_sigint_in_the_logs_estimate_ends_the_command(tmp_path, drivers):
    """deep_queue runs 2 s: before it, the log's estimate runs the driver, which loops there. The
    signal comes before the run began: the command ends at once, not the driver's sys.exit (a driver
    fault that went on to the run)."""
    mark = tmp_path / "looping"
    proc = wddmsim("run", DEEP_QUEUE, "--driver", f"{drivers}:LoopsInSubmit", "--events", str(tmp_path / "o.jsonl"),
                   limit="60", mark=mark)
    wait_for(mark, proc)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert (proc.returncode, out, err) == (130, "", "wddmsim: interrupted by SIGINT before the run began; nothing ran\n")


# -- verify -----------------------------------------------------------------------------------------
def test_verify_fails_each_looping_case_and_goes_on(tmp_path, drivers):
    proc = wddmsim("verify", f"{drivers}:LoopsInSubmit", "--only", "submission/single", "--only", "queues/deep",
                   "--json")
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 1, err
    got = json.loads(out)
    message = (f"DxgkDdiSubmitCommand ran past the DDI watchdog's 1 s of host time at DISPATCH_LEVEL without "
               f"returning (stopped at loopy.py, line {line_of('# submit loop')}, in DxgkDdiSubmitCommand)")
    assert [(c["area"], c["scenario"], c["verdict"], c["reason"]) for c in got["cases"]] == [
        ("submission", "single", "fail", message), ("queues", "deep", "fail", message)]
    assert {c["failure"]["bugcheck"]["name"] for c in got["cases"]} == {"DPC_WATCHDOG_VIOLATION"}
    assert got["interrupted"] is None and got["passed"] is False


def _interrupt_when_looping(mark: Path) -> threading.Thread:
    def later():
        deadline = time.monotonic() + 60
        while not mark.exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        time.sleep(0.2)
        os.kill(os.getpid(), signal.SIGINT)

    t = threading.Thread(target=later, daemon=True)
    t.start()
    return t


def test_ctrl_c_during_verify_gives_the_verdict_on_what_ran(tmp_path, monkeypatch, drivers):
    """submission/single passes (3 packets), queues/deep loops at its 10th: the SIGINT abandons it
    inside the driver's loop and the report covers the one case that ran."""
    mark = tmp_path / "looping"
    monkeypatch.setenv("LOOP_MARK", str(mark))
    monkeypatch.setenv(watchdog.ENV, "60")
    before = signal.getsignal(signal.SIGINT)
    waiter = _interrupt_when_looping(mark)
    report = verify(load_class(f"{drivers}:LoopsOnTenthSubmit"), only=["submission/single", "queues/deep"],
                    name="loopy", interruptible=True)
    waiter.join()
    assert signal.getsignal(signal.SIGINT) is before
    assert [(r.case.id, r.verdict) for r in report.results] == [("submission/single", "pass")]
    assert (report.interrupted, report.interrupted_case, report.planned, report.passed) == (
        "SIGINT", "queues/deep", 2, False)
    con = Console(file=io.StringIO(), width=200)
    print_report(con, report)
    text = con.file.getvalue().splitlines()
    assert "INTERRUPTED by SIGINT during queues/deep: 1 of 2 cases ran; the verdict covers only those" in text
    assert text[-1].startswith("PARTIAL: 1 passed, 0 failed, 0 not applicable; ")
    assert report_json(report)["interrupted"] == {"signal": "SIGINT", "case": "queues/deep", "ran": 1, "cases": 2}
    xml = junit_xml(report).decode()
    assert 'tests="2"' in xml and 'errors="1"' in xml and '<testcase classname="wddmsim.verify.queues" name="deep"' in xml


def test_verify_without_interruptible_lets_ctrl_c_through(tmp_path, monkeypatch, drivers):
    mark = tmp_path / "looping"
    monkeypatch.setenv("LOOP_MARK", str(mark))
    monkeypatch.setenv(watchdog.ENV, "60")
    waiter = _interrupt_when_looping(mark)
    with pytest.raises(KeyboardInterrupt):
        verify(load_class(f"{drivers}:LoopsInSubmit"), only=["submission/single"])
    waiter.join()


def test_ctrl_c_during_wddmsim_verify_prints_a_partial_verdict_exit_130(tmp_path, drivers):
    mark = tmp_path / "looping"
    proc = wddmsim("verify", f"{drivers}:LoopsOnTenthSubmit", "--only", "submission/single", "--only", "queues/deep",
                   limit="60", mark=mark)
    wait_for(mark, proc)
    time.sleep(0.2)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, (out, err)
    assert "INTERRUPTED by SIGINT during queues/deep: 1 of 2 cases ran; the verdict covers only those" in out
    assert out.splitlines()[-1].startswith("PARTIAL: 1 passed, 0 failed, 0 not applicable; ")
