"""What ``wddmsim verify`` prints for a driver that fails (src/wddmsim/verify/output.py, blame.py;
docs/verify.md, "Reading a failure"): each kind of failure once, with the cases it broke and the
driver's entry point that broke the rule with the file and line of its code; ``--json`` and
``--junit`` still one entry per case; the table as wide as ``COLUMNS`` says, piped or not; one
word, ``n/a``, for a case that does not apply."""

from __future__ import annotations

import inspect
import io
import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner
from rich.console import Console

import zoo
from wddmsim.cli import main
from wddmsim.dxgkrnl.loader import load_class
from wddmsim.kmd import ReferenceDriver
from wddmsim.kmd.driver_interrupts import InterruptDdi
from wddmsim.verify import verify
from wddmsim.verify.blame import Definition, WatchingSink, crossing_entry, responsible
from wddmsim.verify.output import entry_line, failure_groups, print_failure, print_report
from wddmsim.verify.runner import CaseResult, Failure, Report, probe
from wddmsim.verify.suite import CASES

#: Drivers with one bug each, as a driver team's file holds them.
DRIVERS = '''from wddmsim.kmd import ReferenceDriver


class NoNotifyDpc(ReferenceDriver):
    def DxgkDdiDpcRoutine(self, MiniportDeviceContext):
        pass


class _QueueDpcMuted:
    def __init__(self, real):
        self._real = real

    def __getattr__(self, name):
        return getattr(self._real, name)

    def DxgkCbQueueDpc(self, hAdapter):
        return True


class NoQueueDpc(ReferenceDriver):
    def DxgkDdiStartDevice(self, DxgkInterface):
        return super().DxgkDdiStartDevice(_QueueDpcMuted(DxgkInterface))
'''
#: The cases --only submission --only queues runs: all five fail the same way with NoNotifyDpc.
FIVE = ["submission/single", "submission/back_to_back", "submission/memory_ops", "queues/deep", "queues/ring_wrap"]
TITLE = "rule 39 (DpcNotifiesDpc) in DxgkDdiDpcRoutine"
ENTRY = "  The entry point that broke it: DxgkDdiDpcRoutine (NoNotifyDpc, drivers.py:5)"


@pytest.fixture
def here(tmp_path, monkeypatch):
    """A folder holding ``drivers.py``, the current directory (so the report names it ``drivers.py``)."""
    (tmp_path / "drivers.py").write_text(DRIVERS)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("COLUMNS", raising=False)
    return tmp_path


def _verify(*args, columns: int = 300):
    return CliRunner().invoke(main, ["verify", "drivers.py:NoNotifyDpc", "--only", "submission", "--only", "queues",
                                     *args], env={"COLUMNS": str(columns)})


# -- each kind of failure once, pointing at the driver's code -------------------------------------------
@pytest.mark.rule(39)
def test_a_dpc_that_never_notifies_is_one_block_naming_the_dpc_and_its_line(here):
    r = _verify()
    assert r.exit_code == 1, r.output
    lines = [line.rstrip() for line in r.output.splitlines()]
    head = lines.index(f"FAIL 5 cases (failure 1): {TITLE}")
    assert lines[head + 1:head + 6] == [
        "  submission (single, back_to_back, memory_ops), queues (deep, ring_wrap)",
        "  Shown for submission/single (three packets of one context, one after another):",
        "  Rule 39 (DpcNotifiesDpc): An ISR that reported events queues a DPC before it returns, and that DPC calls "
        "DxgkCbNotifyDpc so the scheduler can act on them.",
        "  rule 39 (DpcNotifiesDpc): the DPC returned without calling DxgkCbNotifyDpc although 1 event(s) were "
        "reported with DxgkCbNotifyInterrupt since the last one",
        ENTRY,
    ]
    # The ISR's callback logged last is not where the rule broke: the DPC, a microsecond later.
    assert ('  The last crossing logged before the stop (t=1008300 ns; the stop: t=1009300 ns): Callback '
            'DxgkCbNotifyInterrupt {"InterruptType":"DXGK_INTERRUPT_DMA_COMPLETED"') in r.output
    # Once, not once per case.
    assert [line for line in lines if line.startswith("FAIL")] == [f"FAIL 5 cases (failure 1): {TITLE}", lines[-1]]
    assert [r.output.count(s) for s in ("Rule 39 (DpcNotifiesDpc)", "Windows would stop with:",
                                        "The entry point that broke it")] == [1, 1, 1]
    # The table keeps a row per case, each saying which failure it is.
    assert sum(line.strip() == f"{TITLE} (failure 1)" for line in lines) == 5
    assert lines[-1].startswith("FAIL: 0 passed, 5 failed, 0 not applicable; ")


def test_json_and_junit_keep_every_case_and_name_the_group_and_the_entry_point(here):
    r = _verify("--json", "--junit", "v.xml")
    assert r.exit_code == 1, r.output
    out = json.loads(r.output)
    assert out["failure_groups"] == [{"group": 1, "title": TITLE, "rule": 39, "rule_name": "DpcNotifiesDpc",
                                      "entry_point": "DxgkDdiDpcRoutine", "where": "drivers.py:5", "cases": FIVE,
                                      "shown": "submission/single"}]
    assert [f"{c['area']}/{c['scenario']}" for c in out["cases"]] == FIVE
    for case in out["cases"]:
        f = case["failure"]
        assert (f["group"], f["rule"], f["broke_at_crossing"]) == (1, 39, False)
        assert f["entry_point"] == {"name": "DxgkDdiDpcRoutine", "class": "NoNotifyDpc", "inherited": False,
                                    "file": "drivers.py", "line": 5}
    suite = ET.parse(here / "v.xml").getroot().find("testsuite")
    failures = [tc.find("failure") for tc in suite.iter("testcase")]
    assert len(failures) == 5 and all(f is not None for f in failures)
    assert all(ENTRY.strip() in f.text.splitlines() for f in failures)


def test_an_inherited_entry_point_is_named_with_the_class_and_line_it_comes_from(here):
    report = verify(load_class("drivers.py:NoQueueDpc"), only=["submission/single"])
    f = report.results[0].failure
    assert (f.rule, f.rule_name, f.entry, f.at_crossing) == (39, "IsrQueuesDpc", "DxgkDdiInterruptRoutine", True)
    code = InterruptDdi.DxgkDdiInterruptRoutine
    source = os.path.relpath(inspect.getsourcefile(code))
    source = source if not source.startswith("..") else os.path.abspath(source)
    line = inspect.getsourcelines(code)[1]
    assert f.definition == Definition("DxgkDdiInterruptRoutine", "InterruptDdi", False, source, line)
    assert entry_line(f) == (f"The entry point that broke it: DxgkDdiInterruptRoutine (inherited from InterruptDdi, "
                             f"{source}:{line})")


def test_a_rule_broken_inside_a_callback_is_at_the_crossing_it_broke_at(monkeypatch):
    monkeypatch.delenv("COLUMNS", raising=False)
    report = verify(zoo.submission.EngineOrdinalOne, only=["submission/single"])
    r = report.results[0]
    assert (r.failure.entry, r.failure.at_crossing) == ("DxgkDdiInterruptRoutine", True)
    con = Console(file=io.StringIO(), width=400, color_system=None)
    print_failure(con, r)
    crossing = [line for line in con.file.getvalue().splitlines() if "crossing" in line]
    assert len(crossing) == 1 and crossing[0].startswith(
        f"  The crossing it broke at (t={r.failure.event['t']} ns): Callback DxgkCbNotifyInterrupt {{")


def test_the_entry_point_responsible_is_found_in_its_order():
    """The crash record's own entry point, then the one running at the violation, then the routine a
    check as the ISR or DPC returns is about, then the entry point the message names, then the
    crossing at the stop's time (blame.py's module doc)."""
    from wddmsim.ddi.bugcheck import BugCheck
    from wddmsim.dxgkrnl.crash import CrashRecord

    def record(message: str, rule_name: str | None = None, ddi: str | None = None) -> CrashRecord:
        return CrashRecord(time=500, bugcheck=BugCheck(0xC4, 39), message=message, rule=39, rule_name=rule_name,
                           ddi=ddi)

    sink = WatchingSink()
    running = iter(["DxgkDdiInterruptRoutine", "DxgkDdiSubmitCommand"])
    sink.running = lambda: next(running)
    sink.emit(400, "Callback", {"name": "DxgkCbNotifyInterrupt"})  # made from the ISR
    sink.emit(500, "VerifierViolation", {"rule": 39, "name": "X", "message": "m"})  # during a submit
    events = sink.events + [{"t": 500, "event": "DdiCall", "name": "DxgkDdiRender"}]
    assert responsible(record("m", "X", ddi="DxgkDdiPatch"), events, sink, 2) == "DxgkDdiPatch"
    assert responsible(record("m", "X"), events, sink, 2) == "DxgkDdiSubmitCommand"
    assert responsible(record("m", "DpcNotifiesDpc"), events, None, 2) == "DxgkDdiDpcRoutine"
    assert responsible(record("rule 39 (X): ground truth: DxgkDdiResetEngine returned"), events, None,
                       2) == "DxgkDdiResetEngine"
    assert responsible(record("m", "X"), events, None, 2) == "DxgkDdiRender"
    assert responsible(record("m", "X"), events, None, 0) is None  # the callback is not at the stop's time
    assert crossing_entry(events, 0, sink) == "DxgkDdiInterruptRoutine"
    assert crossing_entry(events, 0, None) is None


def _result(case_id: str, failure: Failure) -> CaseResult:
    case = next(c for c in CASES if c.id == case_id)
    return CaseResult(case, "fail", failure.messages[0], [39], failure)


def test_failures_group_by_rule_entry_point_and_message_with_its_numbers_aside(monkeypatch):
    monkeypatch.delenv("COLUMNS", raising=False)

    def dpc(n: int) -> Failure:
        return Failure([f"rule 39 (DpcNotifiesDpc): the DPC returned although {n} event(s) were reported"], 39,
                       "DpcNotifiesDpc", entry="DxgkDdiDpcRoutine", at_crossing=False)

    isr = Failure(["rule 39 (IsrQueuesDpc): the ISR queued no DPC"], 39, "IsrQueuesDpc",
                  entry="DxgkDdiInterruptRoutine")
    results = [_result("submission/single", dpc(1)), _result("queues/deep", isr),
               _result("flips/blt", dpc(2)), _result("processes/destroy", Failure(["app/c: 2 of 6 retired"])),
               _result("priorities/strict", Failure(["low/c: 3 of 20 retired"]))]
    groups = failure_groups(results)
    assert [([r.case.id for r in g.results], g.label) for g in groups] == [
        (["submission/single", "flips/blt"], "rule 39 (DpcNotifiesDpc) in DxgkDdiDpcRoutine (failure 1)"),
        (["queues/deep"], "rule 39 (IsrQueuesDpc) in DxgkDdiInterruptRoutine (failure 2)"),
        (["processes/destroy"], "app/c: 2 of 6 retired (failure 3)"),
        (["priorities/strict"], "low/c: 3 of 20 retired (failure 4)"),
    ]
    report = Report("mine", probe(ReferenceDriver), results, 1.0)
    con = Console(file=io.StringIO(), width=300, color_system=None)
    print_report(con, report)
    heads = [line for line in con.file.getvalue().splitlines() if line.startswith("FAIL") or line.startswith("  Shown")]
    assert heads == [
        "FAIL 2 cases (failure 1): rule 39 (DpcNotifiesDpc) in DxgkDdiDpcRoutine",
        "  Shown for submission/single (three packets of one context, one after another); the other cases' messages "
        "differ from it only in their numbers:",
        "FAIL queues/deep (failure 2): a hardware queue 16 deep kept full",
        "FAIL processes/destroy (failure 3): a context destroyed with packets queued",
        "FAIL priorities/strict (failure 4): a high-priority context beside a busy low one",
        "FAIL: 0 passed, 5 failed, 0 not applicable; 1 rules exercised (1 judge the driver, 0 the GPU's ground truth, "
        "0 re-check what the OS built); 1.0 s",
    ]


# -- as wide as COLUMNS says ----------------------------------------------------------------------------
def _widest(text: str) -> int:
    return max(len(line.rstrip()) for line in text.splitlines())


def test_the_report_piped_fits_the_columns_it_is_given(here):
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"}
    r = subprocess.run([sys.executable, "-m", "wddmsim", "verify", "drivers.py:NoNotifyDpc", "--only", "submission",
                        "--only", "queues"], env={**env, "COLUMNS": "100"}, capture_output=True, text=True, timeout=300)
    assert r.returncode == 1, r.stderr
    assert _widest(r.stdout) <= 100 and "Traceback" not in r.stdout + r.stderr
    assert f"FAIL 5 cases (failure 1): {TITLE}" in r.stdout.splitlines()
    # Wider when COLUMNS says so (the declared line alone is 180 columns).
    assert 100 < _widest(_verify(columns=160).output) <= 160


# -- one word for a case that does not apply ------------------------------------------------------------
def test_a_case_that_does_not_apply_is_n_a_in_the_table_json_and_junit(tmp_path, monkeypatch):
    monkeypatch.delenv("COLUMNS", raising=False)
    junit = tmp_path / "v.xml"
    args = ["verify", "wddmsim.kmd:ReferenceDriver", "--only", "tdr"]
    table = CliRunner().invoke(main, [*args, "--junit", str(junit)])
    assert table.exit_code == 0, table.output
    row = next(line for line in table.output.splitlines() if "adapter_reset" in line)
    assert row.split() == ["tdr", "adapter_reset", "n/a"]
    text = CliRunner().invoke(main, [*args, "--json"]).output
    out = json.loads(text)
    assert out["counts"] == {"pass": 1, "fail": 0, "n/a": 1}
    assert [(c["scenario"], c["verdict"]) for c in out["cases"]] == [("engine_reset", "pass"), ("adapter_reset", "n/a")]
    assert "skip" not in text
    skipped = ET.parse(junit).getroot().find("testsuite/testcase[@name='adapter_reset']/skipped")
    assert skipped.get("message") == "n/a: the driver reports SupportPerEngineTDR"


def test_the_docs_use_the_same_word():
    doc = (Path(__file__).parents[1] / "docs" / "verify.md").read_text()
    assert '`"n/a"`' in doc and '"skip"' not in doc


@pytest.mark.rule(39)
def test_a_wrapped_failure_line_hangs_under_its_first(here):
    """At 100 columns a sentence of the failure wraps with its further lines two columns deeper,
    so each reads as one (rich's own wrap started them at column 0)."""
    r = _verify(columns=100)
    lines = r.output.splitlines()
    rule = next(i for i, line in enumerate(lines) if line.startswith("  Rule 39 (DpcNotifiesDpc): "))
    assert lines[rule:rule + 4] == [
        "  Rule 39 (DpcNotifiesDpc): An ISR that reported events queues a DPC before it returns, and that DPC",
        "    calls DxgkCbNotifyDpc so the scheduler can act on them.",
        "  rule 39 (DpcNotifiesDpc): the DPC returned without calling DxgkCbNotifyDpc although 1 event(s)",
        "    were reported with DxgkCbNotifyInterrupt since the last one",
    ]
    assert max(len(line) for line in lines) <= 100
    # The verdict too: its last words under it, two columns in.
    assert lines[-2].startswith("FAIL: 0 passed, 5 failed, 0 not applicable; ") and lines[-1].startswith("  ")
    assert lines[-1].rstrip().endswith(" s") and lines[-1] == lines[-1].rstrip()
