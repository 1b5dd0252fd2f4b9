"""The zoo (tests/zoo): every deliberately broken driver is caught by ``wddmsim verify``, which names
the rule it breaks and stops with the bug check Windows would raise; a driver Windows would not start
is refused at adapter start with the rule in the reason (``wddmsim verify`` exits 2). The reference
driver passes every area the zoo uses, with the same settings: what fails is the break."""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner

import zoo
from wddmsim.cli import main
from wddmsim.ddi.rules import RULES
from wddmsim.dxgkrnl.errors import AdapterStartError
from wddmsim.kmd import ReferenceDriver
from wddmsim.scenario import scenario_from_dict
from wddmsim.runner.system import System
from wddmsim.verify import verify
from wddmsim.verify.runner import probe
from wddmsim.verify.suite import CASES

ZOO = zoo.load()
RUNTIME = [b for b in ZOO if b.kind == "runtime"]
START = [b for b in ZOO if b.kind == "start"]

#: Names of the rules checked outside the registered ones (callbacks, VidMm, hardware scheduling).
UNREGISTERED = {38: "NotifyInterruptAtDirql", 39: ("IsrQueuesDpc", "DpcNotifiesDpc"), 41: "IsrCallbacks",
                42: "DmaBeforeCrtc", 43: "IsrDismissesInterrupt", 48: "VsyncReportedWhileEnabled", 49: "ControlInterruptOnlyVsync", 54: "HwQueueFaultHandleArm",
                56: "SuspendFenceIssued", 57: "NoInterruptBeforeResume", 69: "PagingBufferAdvanceExact",
                75: "FailedSystemCommandBugChecks", 108: "ResetFromTimeoutSucceeds",
                21: "NoPrivateDataValidationWhenEmpty", 37: "LastCompletedAdvancesOnlyOnCompletion",
                65: "PreemptionGranularityCoarsest",
                96: "ProgressFenceReleaseTiming",
                110: "NoGpuMemoryAccessAfterReset",
                114: "ResetEngineLeavesQueueEmpty", 84: "MmioFlipPath", 91: "HwFlipQueueOrdering"}

runner = CliRunner(mix_stderr=False) if "mix_stderr" in CliRunner.__init__.__code__.co_varnames else CliRunner()


def params(items):
    return [pytest.param(b, id=b.id, marks=[pytest.mark.rule(b.rule)] if b.rule is not None else [])
            for b in items]


def rule_names(number: int) -> tuple[str, ...]:
    if number in RULES:
        return (RULES[number].name,)
    names = UNREGISTERED[number]
    return names if isinstance(names, tuple) else (names,)


@pytest.mark.parametrize("broken", params(RUNTIME))
def test_verify_names_the_rule_the_driver_breaks(broken):
    report = verify(broken.cls, settings=broken.settings, only=[broken.area])
    assert not report.passed
    first = next(r for r in report.results if r.verdict == "fail")
    f = first.failure
    assert (first.area, f.rule) == (broken.area, broken.rule), f.messages
    assert f.rule_name in rule_names(broken.rule)
    assert (f.bugcheck["code"], f.bugcheck["p1"]) == broken.stop
    assert f.crash["rule"] == {"number": broken.rule, "name": f.rule_name}
    assert f.traceback is None  # caught by the OS, not a driver fault


def _report_mode_rules(broken) -> list[int]:
    """The rules broken in the first case of the driver's area where anything is, with the verifier
    recording instead of stopping (mode ``report``): the violations, then the bug check's rule."""
    declared = probe(broken.cls, broken.settings)
    for case in CASES:
        if case.area != broken.area or declared.lacks(case.needs):
            continue
        system = System(scenario_from_dict(case.scenario(declared), f"<zoo {case.id}>"), driver=broken.cls,
                        settings=broken.settings, verifier="report")
        if case.prepare is not None:
            case.prepare(system)
        result = system.run()
        found = [v.rule for _, v in system.adapter.verifier.violations]
        if result.bugcheck is not None:
            found.append(result.bugcheck.rule)
        if found:
            return found
    return []


# A DxgkDdiCreateContext failure that the verifier only records fails the scenario's context
# creation, before anything runs: System() raises the application's ApiError (no run to look at).
_BUILDS_NO_SYSTEM = (76,)


# A completion reported on the wrong node is caught first from the ground truth (rule 37); run on,
# its fences soon pass what was submitted on the other node as well (rule 32): two rules by nature.
_BREAKS_TWO = ("CompletesOnWrongNode",)


@pytest.mark.parametrize("broken", params([b for b in RUNTIME if b.rule not in _BUILDS_NO_SYSTEM
                                           and b.cls.__name__ not in _BREAKS_TWO]))
def test_the_driver_breaks_that_rule_alone(broken):
    """Run on in verifier mode ``report``, the case records the driver's rule and no other (until
    the run ends or Windows would stop in any mode)."""
    found = _report_mode_rules(broken)
    assert found and set(found) == {broken.rule}, found


@pytest.mark.parametrize("broken", params(START))
def test_windows_does_not_start_the_adapter(broken):
    with pytest.raises(AdapterStartError) as err:
        verify(broken.cls, settings=broken.settings, only=["submission"])
    assert [p for p in err.value.problems if broken.refusal in p] != []
    if broken.rule is not None:
        assert all(f"(rule {broken.rule})" in p for p in err.value.problems)


@pytest.mark.parametrize("broken", params(START))
def test_the_cli_exits_2_for_a_driver_windows_does_not_start(broken):
    r = runner.invoke(main, ["verify", broken.spec, "--only", "submission"])
    assert r.exit_code == 2
    assert "the adapter does not start" in r.stderr and broken.refusal in re.sub(r"\s+", " ", r.stderr)


@pytest.mark.rule(39)
def test_the_cli_names_the_rule_and_exits_1():
    broken = next(b for b in RUNTIME if b.cls is zoo.submission.IsrWithoutDpc)
    r = runner.invoke(main, ["verify", broken.spec, "--only", "submission", "--json"])
    assert r.exit_code == 1
    out = json.loads(r.stdout)
    failed = [c for c in out["cases"] if c["verdict"] == "fail"]
    assert [c["scenario"] for c in failed] == ["single", "back_to_back", "memory_ops"]
    assert (failed[0]["failure"]["rule"], failed[0]["failure"]["rule_name"]) == (39, "IsrQueuesDpc")
    assert failed[0]["failure"]["bugcheck"]["code"] == 0xC4 and failed[0]["failure"]["bugcheck"]["p1"] == 39


def test_the_zoo_is_large_and_varied():
    assert len(ZOO) >= 30
    assert len({b.rule for b in ZOO if b.rule is not None}) >= 25
    assert len({b.id for b in ZOO}) == len(ZOO)
    assert all(b.what for b in ZOO)  # each says what it does wrong


@pytest.mark.parametrize("area, settings", sorted({(b.area, tuple(sorted(b.settings.items()))) for b in RUNTIME}),
                         ids=lambda v: v if isinstance(v, str) else ",".join(f"{k}={x}" for k, x in v) or "default")
def test_the_reference_driver_passes_every_area_the_zoo_uses(area, settings):
    report = verify(ReferenceDriver, settings=dict(settings), only=[area])
    assert report.passed, [(r.name, r.reason) for r in report.results if r.verdict == "fail"]
    assert [r.name for r in report.results if r.verdict == "pass"]
