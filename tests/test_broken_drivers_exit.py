"""Driver code that calls ``sys.exit()`` (issue 29, case 3): a failure with its reason, never a pass.

``wddmsim verify`` of a driver whose entry point, constructor or module calls ``sys.exit(0)``
printed nothing and exited 0, and ``wddmsim run`` ended silently with status 0. ``SystemExit`` is
the driver's code ending abnormally, like any other exception: in an entry point a driver fault
(bug check 0x1E, ``run`` exits 3, ``verify`` fails the case); in the constructor (the driver's or
its user-mode half's) or while the adapter starts, the driver does not load (exit 2, the same
reason and traceback a constructor raising ValueError gets). Outside the gateway, in the middle of
a verify case (the user-mode driver's code), the case fails naming the exception and where it was
raised, and so does any exception raised there by the user's code; an exception of the model's
own still propagates. ``KeyboardInterrupt`` (a person's Ctrl-C) is never a driver fault.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import operator
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from wddmsim.cli import main
from wddmsim.dxgkrnl.errors import AdapterStartError
from wddmsim.kmd import ReferenceDriver
from wddmsim.dxgkrnl.loader import load_class
from wddmsim.scenario import scenario_from_dict
from wddmsim.runner.system import System
from wddmsim.umd import ReferenceUmd
from wddmsim.verify import probe, run_case, select, verify

ROOT = Path(__file__).parents[1]
DEEP_QUEUE = str(ROOT / "examples" / "deep_queue.toml")
runner = CliRunner(mix_stderr=False) if "mix_stderr" in CliRunner.__init__.__code__.co_varnames else CliRunner()

APP = [{"name": "app", "context": [{"name": "c", "node": "3D", "workload": {
    "kind": "script", "packets": [{"at": 0, "work": "1ms", "repeat": 3}]}}]}]
UNHANDLED_EXCEPTION = 0xC0000144


def build(driver) -> System:
    return System(scenario_from_dict({"name": "exits", "duration": "50ms", "process": APP}, "<t>"), driver=driver)


DRIVERS = '''
import sys

from wddmsim.kmd import ReferenceDriver
from wddmsim.umd import ReferenceUmd


class ExitsInSubmit(ReferenceDriver):
    def DxgkDdiSubmitCommand(self, hAdapter, pSubmitCommand):
        sys.exit(0)


class ExitsInConstructor(ReferenceDriver):
    def __init__(self, info):
        sys.exit(0)


class RaisesInConstructor(ReferenceDriver):
    def __init__(self, info):
        raise ValueError("bad")


class ExitingUmd(ReferenceUmd):
    def build(self, request):
        sys.exit(0)


class RaisingUmd(ReferenceUmd):
    def build(self, request):
        raise ValueError("no room in the command buffer")


class WithExitingUmd(ReferenceDriver):
    UserModeDriverName = __file__ + ":ExitingUmd"


class WithRaisingUmd(ReferenceDriver):
    UserModeDriverName = __file__ + ":RaisingUmd"


class ExitsInVersion(ReferenceDriver):
    @property
    def DXGKDDI_INTERFACE_VERSION(self):
        sys.exit(0)

    @DXGKDDI_INTERFACE_VERSION.setter
    def DXGKDDI_INTERFACE_VERSION(self, value):
        pass
'''


@pytest.fixture
def drivers(tmp_path) -> Path:
    path = tmp_path / "exits.py"
    path.write_text(DRIVERS)
    return path


def driver(drivers: Path, name: str):
    return load_class(f"{drivers}:{name}", "driver")


# -- in an entry point: a driver fault ---------------------------------------------------------------------------
@pytest.mark.parametrize("exc, said", [(SystemExit(0), "SystemExit: 0"), (SystemExit(), "SystemExit"),
                                       (GeneratorExit(), "GeneratorExit")])
def test_a_base_exception_in_an_entry_point_is_a_driver_fault(exc, said):
    class Exits(ReferenceDriver):
        def DxgkDdiSubmitCommand(self, hAdapter, pSubmitCommand):
            raise exc

    crash = build(Exits).run().bugcheck
    assert crash is not None
    bc = crash.bugcheck
    assert (int(bc.code), bc.p1, bc.p2, bc.p3, bc.p4) == (0x1E, UNHANDLED_EXCEPTION, 0, 0, 0)
    assert crash.message == f"driver fault: DxgkDdiSubmitCommand raised {said}"
    assert crash.ddi == "DxgkDdiSubmitCommand" and "raise exc" in crash.traceback


def test_a_keyboard_interrupt_in_an_entry_point_passes_through():
    class Interrupted(ReferenceDriver):
        def DxgkDdiSubmitCommand(self, hAdapter, pSubmitCommand):
            raise KeyboardInterrupt

    system = build(Interrupted)
    with pytest.raises(KeyboardInterrupt):
        system.run()


def test_verify_fails_a_driver_that_exits_in_an_entry_point(drivers):
    report = verify(driver(drivers, "ExitsInSubmit"), only=["submission/single"])
    assert not report.passed and report.count("fail") == 1
    f = report.results[0].failure
    assert f.messages == ["driver fault: DxgkDdiSubmitCommand raised SystemExit: 0"]
    assert (f.bugcheck["code"], f.bugcheck["p1"]) == (0x1E, UNHANDLED_EXCEPTION)
    assert "sys.exit(0)" in f.traceback


def test_verify_on_the_command_line_exits_1_not_0(drivers):
    r = runner.invoke(main, ["verify", f"{drivers}:ExitsInSubmit", "--only", "submission/single", "--json"])
    assert r.exit_code == 1, r.output
    (case,) = json.loads(r.stdout)["cases"]
    assert (case["verdict"], case["reason"]) == ("fail", "driver fault: DxgkDdiSubmitCommand raised SystemExit: 0")


def test_run_exits_3_with_the_bug_check_not_0(drivers):
    r = runner.invoke(main, ["run", DEEP_QUEUE, "--driver", f"{drivers}:ExitsInSubmit", "--crash-record",
                             str(drivers.parent / "crash.json")])
    assert r.exit_code == 3, r.output
    assert "Why it stopped: driver fault: DxgkDdiSubmitCommand raised SystemExit: 0" in r.stdout.splitlines()
    assert "BugCheck 0x1E (KMODE_EXCEPTION_NOT_HANDLED) {0xC0000144, 0x0, 0x0, 0x0}" in r.stdout


# -- in the constructor, or while the adapter starts: the driver does not load ------------------------------------
def test_sys_exit_in_the_constructor_is_refused_as_a_raising_constructor_is(drivers):
    problems = {}
    for name in ("ExitsInConstructor", "RaisesInConstructor"):
        with pytest.raises(AdapterStartError) as err:
            build(driver(drivers, name))
        (problems[name],) = err.value.problems
    exits, raises = problems["ExitsInConstructor"], problems["RaisesInConstructor"]
    assert exits.splitlines()[0] == "the driver's constructor raised SystemExit: 0"
    assert raises.splitlines()[0] == "the driver's constructor raised ValueError: bad"
    assert exits.rstrip().endswith("sys.exit(0)\nSystemExit: 0")
    assert raises.rstrip().endswith('raise ValueError("bad")\nValueError: bad')


@pytest.mark.parametrize("command", ["run", "verify"])
def test_sys_exit_in_the_constructor_is_exit_2_on_the_command_line(drivers, command):
    spec = f"{drivers}:ExitsInConstructor"
    args = ["run", DEEP_QUEUE, "--driver", spec] if command == "run" else ["verify", spec]
    r = runner.invoke(main, args)
    assert r.exit_code == 2, r.output
    where = "deep_queue" if command == "run" else spec
    assert r.stderr.splitlines()[0] == (f"wddmsim: error: {where}: the adapter does not start: the driver's "
                                        f"constructor raised SystemExit: 0")
    assert r.stdout == ""


def test_sys_exit_in_the_user_mode_drivers_constructor_does_not_load_the_driver():
    class ExitingUmd(ReferenceUmd):
        def __init__(self, info):
            sys.exit(3)

    class WithUmd(ReferenceDriver):
        pass

    WithUmd.UserModeDriverName = f"{__name__}:ExitingUmdHere"
    globals()["ExitingUmdHere"] = ExitingUmd
    try:
        with pytest.raises(AdapterStartError) as err:
            build(WithUmd)
    finally:
        del globals()["ExitingUmdHere"]
    (problem,) = err.value.problems
    assert problem.splitlines()[0] == "the user-mode driver's constructor raised SystemExit: 3"
    assert "sys.exit(3)" in problem


def test_sys_exit_in_a_property_the_os_reads_at_start_does_not_load_the_driver(drivers):
    with pytest.raises(AdapterStartError) as err:
        build(driver(drivers, "ExitsInVersion"))
    (problem,) = err.value.problems
    assert problem.splitlines() == [
        "the driver's code raised SystemExit: 0 while the adapter started",
        "Traceback (most recent call last):",
        f'  File "{drivers}", line 44, in DXGKDDI_INTERFACE_VERSION',
        "    sys.exit(0)",
        "SystemExit: 0"]


def test_verify_refuses_a_driver_that_exits_while_it_is_probed(drivers):
    with pytest.raises(AdapterStartError) as err:
        verify(driver(drivers, "ExitsInVersion"), only=["submission/single"])
    assert err.value.problems[0].splitlines()[0] == "the driver's code raised SystemExit: 0 while the adapter started"


# -- outside an entry point, during a verify case -------------------------------------------------------------------
@pytest.mark.parametrize("cls, said, line", [
    ("WithExitingUmd", "SystemExit: 0", 25),
    ("WithRaisingUmd", "ValueError: no room in the command buffer", 30),
])
def test_a_case_fails_when_the_user_mode_drivers_code_ends_abnormally(drivers, cls, said, line):
    report = verify(driver(drivers, cls), only=["submission/single"])
    assert not report.passed and report.count("fail") == 1
    result = report.results[0]
    message = f"the driver's code raised {said} outside a DDI entry point ({drivers}, line {line}, in build)"
    assert (result.verdict, result.reason) == ("fail", message)
    f = result.failure
    assert f.messages == [message] and f.bugcheck is None
    assert f.traceback.splitlines()[0] == "Traceback (most recent call last):"
    assert f.traceback.rstrip().endswith(said)
    assert "wddmsim" not in f.traceback


def test_verify_on_the_command_line_fails_a_driver_whose_user_mode_half_exits(drivers):
    r = runner.invoke(main, ["verify", f"{drivers}:WithExitingUmd", "--only", "submission/single"])
    assert r.exit_code == 1, r.output
    said = (f"FAIL submission/single: three packets of one context, one after another the driver's code raised "
            f"SystemExit: 0 outside a DDI entry point ({drivers}, line 25, in build)")
    assert said in " ".join(r.stdout.split())  # the table may wrap a long path


def test_an_exception_of_the_models_own_still_propagates_from_a_case():
    """An exception with no frame of the user's code is the model's bug, not the driver's."""
    (case,) = select(["submission/single"])
    d = probe(ReferenceDriver)
    broken = dataclasses.replace(case, prepare=functools.partial(operator.truediv, 1))  # 1 / system: TypeError
    with pytest.raises(TypeError):
        run_case(broken, ReferenceDriver, d)


# -- the user-mode half during a run -------------------------------------------------------------------
_UMD_SOURCE = '''
import sys
from wddmsim.kmd import ReferenceDriver
from wddmsim.umd import ReferenceUmd


class RaisingUmd(ReferenceUmd):
    calls = 0

    def build(self, request):
        type(self).calls += 1
        if type(self).calls > 2:
            raise ValueError("umd broke")
        return super().build(request)


class ExitingUmd(ReferenceUmd):
    def build(self, request):
        sys.exit(0)


class WithRaisingUmd(ReferenceDriver):
    UserModeDriverName = "{path}:RaisingUmd"


class WithExitingUmd(ReferenceDriver):
    UserModeDriverName = "{path}:ExitingUmd"
'''


@pytest.mark.parametrize("kmd, said", [("WithRaisingUmd", "ValueError: umd broke"), ("WithExitingUmd", "SystemExit: 0")])
def test_a_user_mode_driver_that_raises_during_a_run_ends_its_application_and_says_so(tmp_path, kmd, said):
    # It runs in the application's process: the application dies of it, the OS goes on. The run
    # used to end with a traceback (an exception) or silently with status 0 (sys.exit()).
    path = tmp_path / "umds.py"
    path.write_text(_UMD_SOURCE.replace("{path}", str(path)))
    r = runner.invoke(main, ["run", DEEP_QUEUE, "--until", "20ms", "--driver", f"{path}:{kmd}", "--json"])
    assert r.exception is None or isinstance(r.exception, SystemExit)
    assert r.exit_code == 0, r.output
    faults = [line for line in r.stderr.splitlines() if "user-mode driver fault" in line]
    assert faults and all(line.startswith("wddmsim: ") and f"its user-mode driver fault: {said} ({path}, line "
                                                            in line and line.endswith("the application's process ended")
                                                            for line in faults)
    contexts = json.loads(r.stdout)["contexts"]
    assert {c["api_error"] for c in contexts} == {f"user-mode driver fault: {said}"}
