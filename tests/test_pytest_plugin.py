"""wddmsim's pytest plugin (src/wddmsim/testing/, docs/testing.md): its options, the
conformance suite as items with the verdicts ``wddmsim verify`` gives, failures that name the rule,
usage errors for bad options, the fixtures, and the example test file a driver team copies.

Runs of pytest on small projects go through ``pytester`` in this process (fast) except one in a
subprocess, which loads the plugin through its entry point as a driver team's pytest would. The
fixture tests at the end use the plugin as this project's own run loads it."""

from __future__ import annotations

import re
import shutil
import textwrap
from importlib.metadata import entry_points
from pathlib import Path

import pytest

from wddmsim.kmd import ReferenceDriver
from wddmsim.testing import WddmRun, build_run
from wddmsim.testing.plugin import MARKER
from wddmsim.verify import select, verify

ROOT = Path(__file__).parents[1]
EXAMPLE = ROOT / "examples" / "tests" / "test_my_driver.py"

#: Drivers with one bug each, as a driver team's files would hold them.
BROKEN = '''
from pathlib import Path

from wddmsim.kmd import ReferenceDriver


class NoNotifyDpc(ReferenceDriver):
    """The DPC forgets DxgkCbNotifyDpc (rule 39)."""

    def DxgkDdiDpcRoutine(self, MiniportDeviceContext):
        pass


class Raises(ReferenceDriver):
    """DxgkDdiSubmitCommand raises on the second buffer: a driver fault (bug check 0x1E)."""

    def DxgkDdiSubmitCommand(self, hAdapter, pSubmitCommand):
        if pSubmitCommand.SubmissionFenceId == 2:
            raise ZeroDivisionError("ring maths")
        return super().DxgkDdiSubmitCommand(hAdapter, pSubmitCommand)


class BadEngine(ReferenceDriver):
    """Reports DMA_COMPLETED with EngineOrdinal 1 on an adapter that is not linked (rule 19)."""

    def _report_completed(self, node):
        value = self._completed(node)
        if value == node.last_reported:
            return False
        node.last_reported = value
        data = node.interrupt_data
        data.InterruptType = 1
        data.DmaCompleted.SubmissionFenceId = value
        data.DmaCompleted.NodeOrdinal = node.ordinal
        data.DmaCompleted.EngineOrdinal = 1
        self.dxgk.DxgkCbNotifyInterrupt(self.dxgk.DeviceHandle, data)
        return True


class Counted(ReferenceDriver):
    """Writes a line to constructed.txt each time an adapter is built with it."""

    def __init__(self, info):
        with open(Path(__file__).parent / "constructed.txt", "a") as f:
            f.write("x\\n")
        super().__init__(info)


class NoStart(ReferenceDriver):
    """Its constructor fails: Windows never starts the adapter."""

    def __init__(self, info):
        raise RuntimeError("no firmware")
'''

OK = "def test_ok():\n    pass\n"


def outcomes(rec) -> dict[str, str]:
    """Node id -> outcome of an inline run's tests."""
    out = {}
    for r in rec.getreports("pytest_runtest_logreport"):
        if r.when == "call" or (r.when == "setup" and not r.passed):
            out[r.nodeid] = r.outcome
    return out


def _line_of(entry: str) -> int:
    """The line of BROKEN (as ``makepyfile`` writes it) where the first ``def DxgkDdi<entry>...`` is."""
    lines = textwrap.dedent(BROKEN).strip().splitlines()
    return next(i for i, line in enumerate(lines, 1) if line.lstrip().startswith(f"def DxgkDdi{entry}"))


def suite_ids(*only: str) -> list[str]:
    return [f"wddmsim-verify::{c.id}" for c in select(list(only))]


# -- installed, and silent when not asked for -------------------------------------------------------
def test_the_plugin_is_installed_through_the_pytest11_entry_point():
    (ep,) = [e for e in entry_points(group="pytest11") if e.name == "wddmsim"]
    assert ep.value == "wddmsim.testing.plugin"


def test_without_options_the_plugin_adds_no_items_no_hooks_and_no_marker(pytester):
    pytester.makepyfile(test_a=OK)
    config = pytester.parseconfigure()
    assert config.pluginmanager.has_plugin("wddmsim")
    assert not config.pluginmanager.has_plugin("wddmsim-verify-suite")
    assert not any(line.startswith(MARKER) for line in config.getini("markers"))
    result = pytester.runpytest("--collect-only", "-q")
    assert result.ret == 0
    assert result.outlines[:2] == ["test_a.py::test_ok", ""]
    result.stdout.fnmatch_lines(["1 test collected in *"])


def test_the_options_are_listed_in_their_own_group(pytester):
    result = pytester.runpytest("--help")
    result.stdout.fnmatch_lines(["wddmsim: test a WDDM display miniport driver:", "  --wddm-driver=SPEC*",
                                 "  --wddm-set=KEY=VALUE*", "  --wddm-only=AREA*"])


# -- the suite as items -----------------------------------------------------------------------------------
def test_the_reference_driver_passes_the_submission_area_one_item_per_case(pytester):
    pytester.makepyfile(test_a=OK)
    result = pytester.runpytest("-v", "--wddm-driver", "wddmsim.kmd:ReferenceDriver", "--wddm-only", "submission")
    ids = suite_ids("submission")
    assert "wddmsim-verify::submission/single" in ids and len(ids) == 3
    result.assert_outcomes(passed=len(ids) + 1)
    result.stdout.fnmatch_lines([f"{i} PASSED*" for i in ids])


def test_every_case_gets_the_verdict_wddmsim_verify_gives(pytester):
    report = verify(ReferenceDriver)
    rec = pytester.inline_run("-rs", "--wddm-driver", "wddmsim.kmd:ReferenceDriver")
    want = {f"wddmsim-verify::{r.case.id}": {"pass": "passed", "n/a": "skipped"}[r.verdict] for r in report.results}
    assert outcomes(rec) == want
    assert report.count("n/a") > 0 and report.count("fail") == 0
    reasons = {r.nodeid: r.longrepr for r in rec.getreports("pytest_runtest_logreport") if r.skipped}
    assert reasons == {f"wddmsim-verify::{r.case.id}": (f"wddmsim-verify::{r.case.id}", None,
                                                         f"Skipped: n/a: {r.reason}")
                       for r in report.results if r.verdict == "n/a"}


def test_skips_say_which_case_and_why(pytester):
    result = pytester.runpytest("-rs", "--wddm-driver", "wddmsim.kmd:ReferenceDriver", "--wddm-only", "tdr")
    result.assert_outcomes(passed=1, skipped=1)
    result.stdout.fnmatch_lines(["SKIPPED [1] wddmsim-verify::tdr/adapter_reset: n/a: "
                                 "the driver reports SupportPerEngineTDR"])


def test_settings_reach_the_suite(pytester):
    # Without SupportPerEngineTDR the adapter-reset case applies and the engine-reset one does not.
    rec = pytester.inline_run("--wddm-driver", "wddmsim.kmd:ReferenceDriver", "--wddm-only", "tdr",
                              "--wddm-set", "per_engine_reset=false")
    assert outcomes(rec) == {"wddmsim-verify::tdr/engine_reset": "skipped",
                             "wddmsim-verify::tdr/adapter_reset": "passed"}


def test_a_driver_that_forgets_notify_dpc_fails_naming_rule_39(pytester):
    pytester.makepyfile(broken_driver=BROKEN)
    result = pytester.runpytest("--wddm-driver", "broken_driver.py:NoNotifyDpc", "--wddm-only", "submission")
    result.assert_outcomes(failed=len(suite_ids("submission")))
    result.stdout.fnmatch_lines([
        "_* wddmsim-verify submission/single: three packets of one context, one after another _*",
        "FAIL submission/single: three packets of one context, one after another",
        "  Rule 39 (DpcNotifiesDpc): An ISR that reported events queues a DPC before it returns, and that DPC "
        "calls DxgkCbNotifyDpc so the scheduler can act on them.",
        "  rule 39 (DpcNotifiesDpc): the DPC returned without calling DxgkCbNotifyDpc although 1 event(s) were "
        "reported with DxgkCbNotifyInterrupt since the last one",
        # The DPC broke it, not the ISR's callback logged last: its code in the driver's file.
        f"  The entry point that broke it: DxgkDdiDpcRoutine (NoNotifyDpc, broken_driver.py:{_line_of('Dpc')})",
        "  Windows would stop with:",
        "    BugCheck 0xC4 (DRIVER_VERIFIER_DETECTED_VIOLATION) {0x27, 0x0, 0x0, 0x0}",
        '  The last crossing logged before the stop (t=1008300 ns; the stop: t=1009300 ns): Callback '
        'DxgkCbNotifyInterrupt {"InterruptType":"DXGK_INTERRUPT_DMA_COMPLETED","DmaCompleted":{"SubmissionFenceId":1,'
        '"NodeOrdinal":0,"EngineOrdinal":0},"Flags":0}',
    ])
    result.stdout.fnmatch_lines(["FAILED wddmsim-verify::submission/single*"])
    # The failure is the case's, not a traceback through the plugin.
    assert "testing/plugin.py" not in result.stdout.str()


def test_a_rule_with_words_and_its_decoded_crash_record(pytester):
    pytester.makepyfile(broken_driver=BROKEN)
    result = pytester.runpytest("--wddm-driver", "broken_driver.py:BadEngine", "--wddm-only", "submission/single")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        "  Rule 19 (EngineOrdinalZeroUnlinked): EngineOrdinal is 0 everywhere on a non-linked adapter "
        "(``linked_adapter_count`` == 1), and below the number of linked adapters otherwise.",
        "  rule 19 (EngineOrdinalZeroUnlinked): DmaCompleted.EngineOrdinal is 1 but must be 0 on an adapter "
        "that is not linked",
        "    BugCheck 0xC4 (DRIVER_VERIFIER_DETECTED_VIOLATION) {0x13, *, 0x0, 0x0}",
        "  Crash record: DXGKARGCB_NOTIFY_INTERRUPT_DATA (x64, wddm2_0):",
        "    InterruptType = 1 (DXGK_INTERRUPT_DMA_COMPLETED)",
        "    DmaCompleted.SubmissionFenceId = 1",
        "    DmaCompleted.NodeOrdinal = 0",
        "    DmaCompleted.EngineOrdinal = 1",
    ])


def test_a_driver_fault_shows_the_bug_check_explained_the_record_and_the_drivers_traceback(pytester):
    pytester.makepyfile(broken_driver=BROKEN)
    result = pytester.runpytest("--wddm-driver", "broken_driver.py:Raises", "--wddm-only", "submission/single")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        "  driver fault: DxgkDdiSubmitCommand raised ZeroDivisionError: ring maths",
        f"  The entry point that broke it: DxgkDdiSubmitCommand (Raises, broken_driver.py:{_line_of('Submit')})",
        "  Windows would stop with:",
        "    BugCheck 0x1E (KMODE_EXCEPTION_NOT_HANDLED) {0xC0000094, 0x0, 0x0, 0x0}",
        "    Arg1 0xC0000094: the exception code*",
        # The fault is in DxgkDdiSubmitCommand, which raised before its call was logged.
        "  The last crossing logged before the stop (t=10000 ns; the stop: t=13000 ns): DdiCall DxgkDdiRender {*",
        "  Crash record: DXGKARG_SUBMITCOMMAND (x64, wddm2_0):",
        "    SubmissionFenceId = 2",
        "  The driver's traceback:",
        "    Traceback (most recent call last):",
        f'      File "{pytester.path / "broken_driver.py"}", line *, in DxgkDdiSubmitCommand',
        '        raise ZeroDivisionError("ring maths")',
        "    ZeroDivisionError: ring maths",
    ])


def test_the_driver_is_probed_once_per_session(pytester):
    pytester.makepyfile(broken_driver=BROKEN)
    rec = pytester.inline_run("--wddm-driver", "broken_driver.py:Counted", "--wddm-only", "submission")
    rec.assertoutcome(passed=3)
    # One adapter for the probe, one per case.
    assert (pytester.path / "constructed.txt").read_text() == "x\n" * 4


def test_a_driver_windows_would_not_start_fails_each_case_with_why(pytester):
    pytester.makepyfile(broken_driver=BROKEN)
    # -rN: no short summary, whose lines are cut to the terminal width unless CI is set.
    result = pytester.runpytest("--wddm-driver", "broken_driver.py:NoStart", "--wddm-only", "submission", "-rN")
    result.assert_outcomes(failed=3)
    assert result.stdout.str().count("broken_driver.py:NoStart: the adapter does not start:") == 3
    result.stdout.fnmatch_lines(["the driver's constructor raised RuntimeError: no firmware"])


def test_cases_deselect_with_k_m_and_deselect(pytester):
    pytester.makepyfile(test_a=OK)
    base = ["--wddm-driver", "wddmsim.kmd:ReferenceDriver", "--wddm-only", "submission"]
    rec = pytester.inline_run(*base, "-k", "submission and not memory")
    assert outcomes(rec) == {"wddmsim-verify::submission/single": "passed",
                             "wddmsim-verify::submission/back_to_back": "passed"}
    rec = pytester.inline_run(*base, "-k", "not wddmsim-verify")
    assert outcomes(rec) == {"test_a.py::test_ok": "passed"}
    rec = pytester.inline_run(*base, "-m", MARKER, "--deselect", "wddmsim-verify::submission/single")
    assert sorted(outcomes(rec)) == ["wddmsim-verify::submission/back_to_back", "wddmsim-verify::submission/memory_ops"]


def test_collect_only_lists_the_cases_without_running_the_driver(pytester):
    pytester.makepyfile(broken_driver=BROKEN)
    result = pytester.runpytest("--collect-only", "-q", "--wddm-driver", "broken_driver.py:Counted",
                                "--wddm-only", "fences", "--wddm-only", "queues/deep")
    assert result.outlines[:2] == ["wddmsim-verify::queues/deep", "wddmsim-verify::fences/cumulative"]
    assert not (pytester.path / "constructed.txt").exists()


def test_last_failed_reruns_the_cases_that_failed(pytester):
    pytester.makepyfile(broken_driver=BROKEN)
    area = ["--wddm-only", "submission"]
    pytester.runpytest("--wddm-driver", "broken_driver.py:Raises", *area, "-k", "not memory_ops").assert_outcomes(
        failed=2, deselected=1)
    rec = pytester.inline_run("--lf", "--wddm-driver", "wddmsim.kmd:ReferenceDriver", *area)
    assert outcomes(rec) == {"wddmsim-verify::submission/single": "passed",
                             "wddmsim-verify::submission/back_to_back": "passed"}


def test_a_subprocess_loads_the_plugin_through_its_entry_point(pytester):
    result = pytester.runpytest_subprocess("--wddm-driver", "wddmsim.kmd:ReferenceDriver", "--wddm-only", "fences")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["plugins: *wddmsim-0.1.0*"])


# -- usage errors -----------------------------------------------------------------------------------------
@pytest.mark.parametrize(("args", "message"), [
    (["--wddm-driver", "nosuchpkg.drv:Driver"],
     "ERROR: --wddm-driver: driver 'nosuchpkg.drv:Driver': no module named 'nosuchpkg.drv' "
     "(is it installed, or on PYTHONPATH?)"),
    (["--wddm-driver", "missing.py:Driver"], "ERROR: --wddm-driver: driver 'missing.py:Driver': file * does not exist"),
    (["--wddm-driver", "broken_driver.py:Nope"],
     "ERROR: --wddm-driver: driver 'broken_driver.py:Nope': broken_driver.py has no Nope; the drivers it defines: "
     "BadEngine, Counted, NoNotifyDpc, NoStart, Raises, ReferenceDriver"),
    (["--wddm-driver", "ReferenceDriver"],
     "ERROR: --wddm-driver: driver 'ReferenceDriver': expected 'package.module:Class' or 'path/to/file.py:Class'"),
    (["--wddm-driver", "wddmsim.kmd:ReferenceDriver", "--wddm-only", "bogus"],
     "ERROR: --wddm-only: no area or case called bogus; areas: *"),
    (["--wddm-only", "submission"],
     "ERROR: --wddm-only selects conformance cases, which are collected only with --wddm-driver"),
    (["--wddm-set", "ring_size"], "ERROR: --wddm-set 'ring_size': expected KEY=VALUE"),
    (["--wddm-driver", "wddmsim.kmd:ReferenceDriver", "--wddm-set", "ring_size=5000"],
     "ERROR: --wddm-set: driver.ring_size: must be a power of two and at least 4096 bytes, got 5000"),
])
def test_a_bad_option_is_a_usage_error_not_a_traceback(pytester, args, message):
    pytester.makepyfile(broken_driver=BROKEN, test_a=OK)
    result = pytester.runpytest(*args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])
    assert "Traceback" not in result.stderr.str() + result.stdout.str()


# -- the fixtures in a project ----------------------------------------------------------------------------
def test_the_fixtures_follow_the_options(pytester):
    pytester.makepyfile(broken_driver=BROKEN, test_f='''
        def test_driver_and_settings(wddm_driver, wddm_settings, wddm_system):
            assert wddm_driver.__name__ == "Counted"
            assert wddm_settings == {"ring_size": 8192, "engines": {"Copy": {"ring_size": "16KiB"}}}
            wddm_settings["ring_size"] = 4096  # a copy: the next test sees the option's value
            run = wddm_system({"name": "s", "duration": "5ms", "process": [{"name": "p", "context": [
                {"name": "c", "node": "3D", "workload": {"kind": "script", "packets": [{"at": 0, "work": "1ms"}]}}]}]},
                settings={"engines": {"3D": {"ring_size": "32KiB"}}})
            assert type(run.system.driver).__name__ == "Counted"
            engines = run.system.driver_settings["engines"]
            assert (run.system.driver_settings["ring_size"], engines["Copy"]["ring_size"], engines["3D"]["ring_size"]) \\
                == (4096, 16384, 32768)

        def test_settings_again(wddm_settings):
            assert wddm_settings["ring_size"] == 8192
    ''')
    result = pytester.runpytest("--wddm-driver", "broken_driver.py:Counted", "--wddm-set", "ring_size=8192",
                                "--wddm-set", 'engines.Copy.ring_size="16KiB"', "-m", f"not {MARKER}")
    result.assert_outcomes(passed=2, deselected=len(select(None)))


def test_a_conftest_may_name_the_driver_by_overriding_wddm_driver(pytester):
    pytester.makepyfile(broken_driver=BROKEN)
    pytester.makeconftest('''
        import pytest
        from broken_driver import NoNotifyDpc

        @pytest.fixture(scope="session")
        def wddm_driver():
            return NoNotifyDpc
    ''')
    pytester.makepyfile(test_f='''
        def test_it(wddm_system):
            run = wddm_system({"name": "s", "duration": "5ms", "process": [{"name": "p", "context": [
                {"name": "c", "node": "3D", "workload": {"kind": "script", "packets": [{"at": 0, "work": "1ms"}]}}]}]})
            assert run.run().bugcheck.rule == 39
    ''')
    pytester.runpytest().assert_outcomes(passed=1)


def test_the_example_test_file_passes_with_the_reference_driver_and_fails_with_a_broken_one(pytester):
    (pytester.path / "tests").mkdir()
    shutil.copy(EXAMPLE, pytester.path / "tests" / EXAMPLE.name)
    shutil.copy(ROOT / "examples" / "deep_queue.toml", pytester.path / "deep_queue.toml")
    pytester.makepyfile(broken_driver=BROKEN)
    names = re.findall(r"^def (test_\w+)\(", EXAMPLE.read_text(), re.M)
    assert len(names) == 5
    rec = pytester.inline_run("tests")
    assert outcomes(rec) == {f"tests/{EXAMPLE.name}::{n}": "passed" for n in names}
    rec = pytester.inline_run("tests", "--wddm-driver", "broken_driver.py:NoNotifyDpc", "-k", "not wddmsim-verify")
    assert outcomes(rec) == {f"tests/{EXAMPLE.name}::{n}": "failed" for n in names}


def test_the_guide_shows_the_example_file_as_it_is():
    doc = (ROOT / "docs" / "testing.md").read_text()
    (block,) = re.findall(r"^`examples/tests/test_my_driver\.py`:\n\n```python\n(.*?)^```$", doc, re.M | re.S)
    assert block == EXAMPLE.read_text()


# -- wddm_system and WddmRun, as this project's own run loads the plugin ----------------------------------
THREE = {"name": "three", "duration": "10ms", "process": [{"name": "app", "context": [{
    "name": "c", "node": "3D", "workload": {"kind": "script", "packets": [{"at": "0ns", "work": "1ms", "repeat": 3}]}}]}]}

THREE_TOML = """
name = "three"
duration = "10ms"
[[process]]
name = "app"
context = [{ name = "c", node = "3D", workload = { kind = "script", packets = [{ at = "0ns", work = "1ms", repeat = 3 }] } }]
"""


class NoNotifyDpc(ReferenceDriver):
    def DxgkDdiDpcRoutine(self, MiniportDeviceContext):
        pass


def test_wddm_driver_defaults_to_the_reference_driver(wddm_driver, wddm_settings):
    assert wddm_driver is ReferenceDriver
    assert wddm_settings == {}


def test_a_run_from_a_dict_answers_questions_about_its_log_exactly(wddm_system):
    run = wddm_system(THREE)
    assert run.result is None and run.now == 0 and run.duration == 10_000_000
    assert run.run() is run
    assert run.bugcheck is None and run.explain() == ""
    assert run.count("DdiCall", name="DxgkDdiSubmitCommand") == 3
    assert run.times("DdiCall", name="DxgkDdiSubmitCommand") == [8000, 13000, 1014300]
    assert run.times("DmaPacketStop", status="Completed") == [1008300, 2008600, 3008900]
    assert [e["fence"] for e in run.events("QueuePacketStop")] == [1, 2, 3]
    assert run.count("Callback", name="DxgkCbNotifyInterrupt", args__InterruptType="DXGK_INTERRUPT_DMA_COMPLETED") == 3
    assert run.times("Callback", name="DxgkCbNotifyInterrupt",
                     args__DmaCompleted__SubmissionFenceId=lambda f: f >= 2) == [2008600, 3008900]
    assert run.first("QueuePacketStop")["t"] == 1009300 and run.last("QueuePacketStop")["t"] == 3009900
    assert run.first("TdrDetected") is None and run.last("PageFault") is None
    assert run.count("DmaPacketStart", "DmaPacketStop") == 6
    assert run.count() == len(run.all_events) == 37
    assert run.all_events[0]["event"] == "LogStart" and run.all_events[-1] == {"t": 10_000_000, "event": "LogEnd",
                                                                               "reason": "time",
                                                                               "summary": run.summary}
    assert run.context("app/c")["completed"] == 3 and run.summary["packets_completed"] == 3
    assert repr(run) == "<WddmRun 'three' at 10000000 ns, 37 events>"


def test_a_run_from_toml_text_or_a_file_is_the_same_run(wddm_system, tmp_path):
    (tmp_path / "three.toml").write_text(THREE_TOML)
    runs = [wddm_system(THREE).run(), wddm_system(THREE_TOML).run(), wddm_system(tmp_path / "three.toml").run(),
            wddm_system(str(tmp_path / "three.toml")).run()]
    assert all(r.all_events == runs[0].all_events for r in runs[1:])


def test_a_relative_path_is_found_from_the_test_files_directory(wddm_system):
    run = wddm_system("../examples/deep_queue.toml").run()
    assert run.last("QueuePacketStop", status="Completed")["t"] == 100_000_000
    assert run.count("QueuePacketStop", status="Completed") == 100


def test_a_run_taken_in_steps_is_the_run_taken_at_once(wddm_system):
    whole = wddm_system(THREE).run()
    stepped = wddm_system(THREE)
    assert stepped.run(until="1ms").now == 1_000_000
    assert stepped.count("QueuePacketStop") == 0 and stepped.all_events[-1] == {"t": 1_000_000, "event": "LogEnd",
                                                                                "reason": "time",
                                                                                "summary": stepped.summary}
    assert stepped.run(until="1.5ms").count("QueuePacketStop") == 1
    assert stepped.run(until=2_009_600).count("QueuePacketStop") == 2
    assert stepped.summary["packets_completed"] == 2
    stepped.run()
    assert stepped.all_events == whole.all_events
    assert stepped.count("LogEnd") == 1
    assert stepped.summary == whole.summary
    with pytest.raises(ValueError, match="cannot run back to 5000000 ns: the run is at 10000000 ns already"):
        stepped.run(until="5ms")


def test_a_bug_check_is_explained_and_ends_the_run(wddm_system):
    run = wddm_system(THREE, driver=NoNotifyDpc).run()
    assert run.bugcheck.rule == 39 and run.bugcheck.time == 1009300 and run.now == 1009300
    assert run.explain().splitlines()[:3] == [
        "FAIL three: stopped at 1009300 ns",
        "  Rule 39 (DpcNotifiesDpc): An ISR that reported events queues a DPC before it returns, and that DPC "
        "calls DxgkCbNotifyDpc so the scheduler can act on them.",
        "  rule 39 (DpcNotifiesDpc): the DPC returned without calling DxgkCbNotifyDpc although 1 event(s) were "
        "reported with DxgkCbNotifyInterrupt since the last one"]
    assert [e["event"] for e in run.all_events[-2:]] == ["BugCheck", "LogEnd"]
    with pytest.raises(RuntimeError, match=r"the run stopped with BugCheck 0xC4 .* at 1009300 ns: nothing runs after"):
        run.run()


def test_the_verifier_mode_and_seed_are_the_tests_to_choose(wddm_system):
    run = wddm_system(THREE, driver=NoNotifyDpc, verifier="report", seed=7).run()
    assert run.bugcheck is None
    assert run.system.seed == 7 and run.first("LogStart")["seed"] == 7
    # The run goes on: both buffers the GPU finished are reported, neither DPC notifies, nothing retires.
    assert run.times("VerifierViolation", rule=39) == [1009300, 2009600]
    assert run.context("app/c")["completed"] == 0 and run.summary["violations"][0]["name"] == "DpcNotifiesDpc"


def test_a_query_the_log_cannot_answer_is_an_error_not_an_empty_answer(wddm_system):
    run = wddm_system(THREE).run()
    with pytest.raises(ValueError, match="no event called DdiCal "):
        run.count("DdiCal")
    with pytest.raises(ValueError, match="DdiCall has no field 'ddi'; fields: args, event, irql, name, status, t"):
        run.events("DdiCall", ddi="DxgkDdiSubmitCommand")
    with pytest.raises(ValueError, match="any event has no field 'bogus'"):
        run.first(bogus=1)
    # A field named by a Python keyword, written with a trailing underscore.
    assert run.events("PreemptRequest", for_=1) == []


def test_what_cannot_be_built_says_why(wddm_system):
    from wddmsim.scenario import ScenarioError
    from wddmsim.runner.system import ConfigError

    with pytest.raises(ScenarioError, match=r"process: "):
        wddm_system({"name": "empty"})
    with pytest.raises(ConfigError, match="driver.ring_size: must be a power of two"):
        wddm_system(THREE, settings={"ring_size": 5000})
    with pytest.raises(TypeError, match="a scenario is a path, a dict, TOML text or a Scenario, not int"):
        wddm_system(3)


def test_the_summary_needs_a_run(wddm_system):
    run = wddm_system(THREE)
    with pytest.raises(RuntimeError, match="the system has not run yet"):
        run.summary
    assert isinstance(run, WddmRun) and repr(run) == "<WddmRun 'three' not run, 6 events>"
    # Building it started the adapter and created the process, its device and context.
    assert [e["event"] for e in run.all_events] == ["LogStart", "AdapterStart", "ProcessCreate", "DdiCall", "DdiCall",
                                                    "ContextCreate"]


def test_build_run_keeps_the_scenarios_driver_and_wddm_system_the_driver_under_test(wddm_system, tmp_path):
    (tmp_path / "broken_driver.py").write_text(BROKEN)
    (tmp_path / "three.toml").write_text(THREE_TOML + '\n[driver]\nclass = "broken_driver.py:NoNotifyDpc"\n')
    assert build_run(tmp_path / "three.toml").run().bugcheck.rule == 39
    assert build_run("three.toml", base_dir=tmp_path).run().bugcheck.rule == 39
    assert wddm_system(tmp_path / "three.toml").run().bugcheck is None
