"""A driver entry point whose return value is not of its C type (issue 29, case 1).

An NTSTATUS or BOOLEAN entry point returns an integer; a C driver cannot return a ``str``, a
``float`` or, from a function that forgot its ``return``, Python's ``None``. Such a value is a
driver fault: bug check 0x1E KMODE_EXCEPTION_NOT_HANDLED, parameter 1 STATUS_ACCESS_VIOLATION,
a message naming the entry point and the value, never a TypeError traceback of the OS model's.
``wddmsim run`` exits 3 (a bug check) and ``wddmsim verify`` fails the driver with that reason; in
DxgkDdiStartDevice the adapter does not start (exit 2, one reason naming the bug check). What
stands for an integer (an ``IntEnum`` member such as ``NTSTATUS.STATUS_SUCCESS``, anything with
``__index__``) is taken as that integer, and held to the contract like one. A VOID entry point's
value is dropped, as C drops it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from wddmsim.cli import main
from wddmsim.ddi.ntstatus import NTSTATUS
from wddmsim.dxgkrnl.errors import AdapterStartError
from wddmsim.dxgkrnl.gateway import DdiGateway
from wddmsim.kmd import ReferenceDriver
from wddmsim.scenario import scenario_from_dict
from wddmsim.sim import Simulator
from wddmsim.runner.system import System
from wddmsim.verify import verify

ROOT = Path(__file__).parents[1]
DEEP_QUEUE = str(ROOT / "examples" / "deep_queue.toml")
runner = CliRunner(mix_stderr=False) if "mix_stderr" in CliRunner.__init__.__code__.co_varnames else CliRunner()

APP = [{"name": "app", "context": [{"name": "c", "node": "3D", "workload": {
    "kind": "script", "packets": [{"at": 0, "work": "1ms", "repeat": 3}]}}]}]

ACCESS_VIOLATION = 0xC0000005


def build(driver) -> System:
    return System(scenario_from_dict({"name": "returns", "duration": "50ms", "process": APP}, "<t>"), driver=driver)


def submit_returning(value):
    """A reference driver whose DxgkDdiSubmitCommand does its work, then returns ``value``."""

    class Submits(ReferenceDriver):
        def DxgkDdiSubmitCommand(self, hAdapter, pSubmitCommand):
            super().DxgkDdiSubmitCommand(hAdapter, pSubmitCommand)
            return value

    return Submits


def isr_returning(value):
    class Isr(ReferenceDriver):
        def DxgkDdiInterruptRoutine(self, MiniportDeviceContext, MessageNumber):
            super().DxgkDdiInterruptRoutine(MiniportDeviceContext, MessageNumber)
            return value

    return Isr


# -- the model: an NTSTATUS entry point ------------------------------------------------------------------
@pytest.mark.parametrize("value, shown", [
    ("ok", "'ok' (a str)"),
    (None, "None (a NoneType)"),
    (0.0, "0.0 (a float)"),
    (b"\0\0\0\0", "b'\\x00\\x00\\x00\\x00' (a bytes)"),
])
def test_an_ntstatus_that_is_not_an_integer_is_a_driver_fault(value, shown):
    result = build(submit_returning(value)).run()
    crash = result.bugcheck
    assert crash is not None
    bc = crash.bugcheck
    assert (int(bc.code), bc.p1, bc.p2, bc.p3, bc.p4) == (0x1E, ACCESS_VIOLATION, 0, 0, 0)
    assert crash.message == f"driver fault: DxgkDdiSubmitCommand returned {shown}, not an NTSTATUS (an integer)"
    assert (crash.ddi, crash.struct, crash.time) == ("DxgkDdiSubmitCommand", "DXGKARG_SUBMITCOMMAND", 8000)
    assert crash.traceback is None


def test_a_long_value_is_shown_cut_short():
    crash = build(submit_returning("x" * 200)).run().bugcheck
    assert crash.message == ("driver fault: DxgkDdiSubmitCommand returned '" + "x" * 76 + "... (a str), not an "
                             "NTSTATUS (an integer)")


class Index:
    """An integer that is not an ``int`` (as a numpy integer is): it has ``__index__``."""

    def __init__(self, n: int):
        self.n = n

    def __index__(self) -> int:
        return self.n


@pytest.mark.parametrize("value", [NTSTATUS.STATUS_SUCCESS, Index(0), False])
def test_what_stands_for_an_integer_is_taken_as_that_integer(value):
    result = build(submit_returning(value)).run()
    assert result.bugcheck is None and result.summary["packets_completed"] == 3


@pytest.mark.parametrize("value", [NTSTATUS.STATUS_INVALID_PARAMETER, Index(int(NTSTATUS.STATUS_INVALID_PARAMETER))])
def test_a_failing_status_that_is_not_a_plain_int_is_held_to_the_contract_as_an_int_is(value):
    """Returned as an IntEnum member, STATUS_INVALID_PARAMETER was handed back unchecked; it now
    stops the model exactly as the same status returned as an int does (rule 1)."""
    plain = build(submit_returning(int(NTSTATUS.STATUS_INVALID_PARAMETER))).run().bugcheck
    got = build(submit_returning(value)).run().bugcheck
    assert plain is not None and plain.rule == 1
    assert got is not None
    assert (got.bugcheck, got.message, got.rule, got.ddi) == (plain.bugcheck, plain.message, plain.rule, plain.ddi)


# -- the ISR (BOOLEAN) and the VOID entry points ------------------------------------------------------------
@pytest.mark.parametrize("value, shown", [("yes", "'yes' (a str)"), (None, "None (a NoneType)"),
                                          (1.0, "1.0 (a float)")])
def test_an_isr_that_returns_no_boolean_is_a_driver_fault(value, shown):
    crash = build(isr_returning(value)).run().bugcheck
    assert crash is not None
    bc = crash.bugcheck
    assert (int(bc.code), bc.p1) == (0x1E, ACCESS_VIOLATION)
    assert crash.message == f"driver fault: DxgkDdiInterruptRoutine returned {shown}, not a BOOLEAN (an integer)"
    assert crash.ddi == "DxgkDdiInterruptRoutine" and crash.time == 1_008_300


@pytest.mark.parametrize("value", [True, 1])
def test_an_isr_boolean_may_be_a_bool_or_an_int(value):
    result = build(isr_returning(value)).run()
    assert result.bugcheck is None and result.summary["packets_completed"] == 3


class Driver:
    """Just enough of a driver for a gateway: its DPC returns a string."""

    def DxgkDdiDpcRoutine(self, MiniportDeviceContext):
        return "done"


def test_a_void_entry_points_value_is_dropped():
    gateway = DdiGateway(Simulator(0), Driver())
    assert gateway.caller("DxgkDdiDpcRoutine")(0, log=False) is None
    assert gateway.calls == {"DxgkDdiDpcRoutine": 1}


def test_a_dpc_that_returns_something_runs_as_one_that_returns_nothing():
    class Dpc(ReferenceDriver):
        def DxgkDdiDpcRoutine(self, MiniportDeviceContext):
            super().DxgkDdiDpcRoutine(MiniportDeviceContext)
            return "whatever"

    result = build(Dpc).run()
    assert result.bugcheck is None and result.summary["packets_completed"] == 3


# -- at adapter start -------------------------------------------------------------------------------------------
def test_a_start_device_that_returns_a_string_does_not_start_the_adapter():
    class Starts(ReferenceDriver):
        def DxgkDdiStartDevice(self, *args):
            super().DxgkDdiStartDevice(*args)
            return "fine"

    with pytest.raises(AdapterStartError) as err:
        build(Starts)
    assert err.value.problems == [
        "driver fault: DxgkDdiStartDevice returned 'fine' (a str), not an NTSTATUS (an integer) (Windows stops "
        "with BugCheck 0x1E (KMODE_EXCEPTION_NOT_HANDLED) {0xC0000005, 0x0, 0x0, 0x0} while it starts the adapter)"]


def test_a_start_device_that_raises_does_not_start_the_adapter_and_shows_the_drivers_traceback():
    class Raises(ReferenceDriver):
        def DxgkDdiStartDevice(self, *args):
            raise ValueError("no device")

    with pytest.raises(AdapterStartError) as err:
        build(Raises)
    (problem,) = err.value.problems
    first, _, rest = problem.partition("\n")
    assert first == ("driver fault: DxgkDdiStartDevice raised ValueError: no device (Windows stops with BugCheck "
                     "0x1E (KMODE_EXCEPTION_NOT_HANDLED) {0xC0000144, 0x0, 0x0, 0x0} while it starts the adapter)")
    assert 'raise ValueError("no device")' in rest and rest.rstrip().endswith("ValueError: no device")


# -- the command line -------------------------------------------------------------------------------------------
DRIVERS = '''
from wddmsim.kmd import ReferenceDriver


class StrStatus(ReferenceDriver):
    def DxgkDdiSubmitCommand(self, hAdapter, pSubmitCommand):
        super().DxgkDdiSubmitCommand(hAdapter, pSubmitCommand)
        return "ok"


class StrIsr(ReferenceDriver):
    def DxgkDdiInterruptRoutine(self, MiniportDeviceContext, MessageNumber):
        super().DxgkDdiInterruptRoutine(MiniportDeviceContext, MessageNumber)
        return "yes"


class StrStart(ReferenceDriver):
    def DxgkDdiStartDevice(self, *args):
        super().DxgkDdiStartDevice(*args)
        return "fine"
'''


@pytest.fixture
def drivers(tmp_path) -> Path:
    path = tmp_path / "returns.py"
    path.write_text(DRIVERS)
    return path


@pytest.mark.parametrize("cls, message", [
    ("StrStatus", "driver fault: DxgkDdiSubmitCommand returned 'ok' (a str), not an NTSTATUS (an integer)"),
    ("StrIsr", "driver fault: DxgkDdiInterruptRoutine returned 'yes' (a str), not a BOOLEAN (an integer)"),
])
def test_run_stops_with_the_bug_check_and_exits_3(drivers, tmp_path, cls, message):
    crash = tmp_path / "crash.json"
    r = runner.invoke(main, ["run", DEEP_QUEUE, "--driver", f"{drivers}:{cls}", "--crash-record", str(crash)],
                      env={"COLUMNS": "100"})
    assert r.exit_code == 3, r.output
    lines = r.stdout.splitlines()
    head, _, tail = f"Why it stopped: {message}".rpartition(" (an ")
    assert lines[lines.index(f"{head} (an") + 1] == f"  {tail}"  # wrapped at 100 columns
    assert "BugCheck 0x1E (KMODE_EXCEPTION_NOT_HANDLED) {0xC0000005, 0x0, 0x0, 0x0}" in r.stdout
    assert "Traceback" not in r.stdout + r.stderr
    record = json.loads(crash.read_text())
    assert (record["message"], record["ddi"], record["bugcheck"]["code"]) == (message, message.split()[2], 0x1E)


def test_verify_fails_the_driver_with_the_reason(drivers):
    from wddmsim.dxgkrnl.loader import load_class

    report = verify(load_class(f"{drivers}:StrStatus", "driver"), only=["submission/single"])
    assert not report.passed and report.count("fail") == 1
    f = report.results[0].failure
    assert f.messages == ["driver fault: DxgkDdiSubmitCommand returned 'ok' (a str), not an NTSTATUS (an integer)"]
    assert (f.bugcheck["code"], f.bugcheck["p1"], f.rule) == (0x1E, ACCESS_VIOLATION, None)
    assert f.crash["decoded"]["SubmissionFenceId"] == "1"


def test_verify_on_the_command_line_exits_1(drivers):
    r = runner.invoke(main, ["verify", f"{drivers}:StrStatus", "--only", "submission/single", "--json"])
    assert r.exit_code == 1, r.output
    (case,) = json.loads(r.stdout)["cases"]
    assert (case["verdict"], case["reason"]) == (
        "fail", "driver fault: DxgkDdiSubmitCommand returned 'ok' (a str), not an NTSTATUS (an integer)")
    assert "Traceback" not in r.stderr


@pytest.mark.parametrize("command", ["run", "verify"])
def test_a_start_device_that_returns_a_string_is_exit_2_with_one_reason(drivers, command):
    args = ["run", DEEP_QUEUE, "--driver", f"{drivers}:StrStart"] if command == "run" else \
        ["verify", f"{drivers}:StrStart"]
    r = runner.invoke(main, args)
    assert r.exit_code == 2, r.output
    where = "deep_queue" if command == "run" else f"{drivers}:StrStart"
    assert r.stderr.strip() == (
        f"wddmsim: error: {where}: the adapter does not start: driver fault: DxgkDdiStartDevice returned 'fine' "
        f"(a str), not an NTSTATUS (an integer) (Windows stops with BugCheck 0x1E (KMODE_EXCEPTION_NOT_HANDLED) "
        f"{{0xC0000005, 0x0, 0x0, 0x0}} while it starts the adapter)")
