"""Rule 49, ControlInterruptOnlyVsync: DxgkDdiControlInterrupt answers STATUS_NOT_IMPLEMENTED for every
interrupt type but DXGK_INTERRUPT_CRTC_VSYNC (Microsoft's DxgkDdiControlInterrupt page; the types are
the DXGK_INTERRUPT_TYPE page's). The OS model, as Windows, asks only CRTC_VSYNC in a run; the verify
case ``interrupts/control_interrupt`` asks the others, and the gateway judges every crossing."""

from __future__ import annotations

from pathlib import Path

import pytest

from wddmsim.ddi.enums import DXGK_INTERRUPT_TYPE as T
from wddmsim.ddi.ntstatus import NTSTATUS
from wddmsim.dxgkrnl.controlinterrupt import ask_other_types, other_types
from wddmsim.kmd import ReferenceDriver
from wddmsim.dxgkrnl.loader import load_class
from wddmsim.scenario import scenario_from_dict
from wddmsim.runner.system import System
from wddmsim.trace import ListSink
from wddmsim.verify import verify
from wddmsim.verify.suite import CASES

from zoo.interrupts import ControlsEveryVsyncType

NOT_IMPLEMENTED = int(NTSTATUS.STATUS_NOT_IMPLEMENTED)
INVALID_PARAMETER = int(NTSTATUS.STATUS_INVALID_PARAMETER)
MinimalDriver = load_class(f"{Path(__file__).parents[1] / 'examples' / 'drivers' / 'minimal.py'}:MinimalDriver", "driver")
CASE = next(c for c in CASES if c.id == "interrupts/control_interrupt")

#: The types the case asks a WDDM 2.0 driver: every one its header defines but CRTC_VSYNC.
WDDM2_0_TYPES = ["DXGK_INTERRUPT_DMA_COMPLETED", "DXGK_INTERRUPT_DMA_PREEMPTED", "DXGK_INTERRUPT_DMA_FAULTED",
                 "DXGK_INTERRUPT_DISPLAYONLY_VSYNC", "DXGK_INTERRUPT_DISPLAYONLY_PRESENT_PROGRESS",
                 "DXGK_INTERRUPT_CRTC_VSYNC_WITH_MULTIPLANE_OVERLAY",
                 "DXGK_INTERRUPT_MICACAST_CHUNK_PROCESSING_COMPLETE", "DXGK_INTERRUPT_DMA_PAGE_FAULTED"]


def test_the_types_asked_are_those_the_drivers_version_defines_but_crtc_vsync():
    assert other_types("vista") == [1, 2, 4]
    assert [T(t).name for t in other_types("wddm2_0")] == WDDM2_0_TYPES
    assert other_types("wddm3_1") == [t for t in range(1, 21) if t != 3]
    assert int(T.DXGK_INTERRUPT_CRTC_VSYNC) not in other_types("latest")


def _calls(events, *, vsync: bool = False):
    return [(e["args"]["InterruptType"], e["args"]["EnableInterrupt"], e["status"]) for e in events
            if e["event"] == "DdiCall" and e["name"] == "DxgkDdiControlInterrupt"
            and (e["args"]["InterruptType"] == "DXGK_INTERRUPT_CRTC_VSYNC") == vsync]


def _run_case(driver, *, verifier="strict", settings=None):
    trace = ListSink()
    system = System(scenario_from_dict(CASE.scenario(None), "<control_interrupt>"), trace=trace, driver=driver,
                    settings=settings, verifier=verifier)
    CASE.prepare(system)
    return system, system.run(), trace.events


@pytest.mark.rule(49)
@pytest.mark.parametrize("driver, types", [
    (ReferenceDriver, WDDM2_0_TYPES),
    (MinimalDriver, ["DXGK_INTERRUPT_DMA_COMPLETED", "DXGK_INTERRUPT_DMA_PREEMPTED", "DXGK_INTERRUPT_DMA_FAULTED"]),
], ids=["reference", "minimal"])
def test_the_reference_and_minimal_drivers_answer_not_implemented(driver, types):
    cls = driver
    report = verify(cls, only=["interrupts/control_interrupt"])
    assert [(r.case.id, r.verdict) for r in report.results] == [("interrupts/control_interrupt", "pass")]
    assert 49 in report.results[0].rules
    system, result, events = _run_case(cls)
    assert result.bugcheck is None and system.adapter.verifier.violations == []
    asked = [e for e in events if e["event"] == "DdiCall" and e["name"] == "DxgkDdiControlInterrupt"]
    assert {e["t"] for e in asked} == {1_500_000} and {e["irql"] for e in asked} == {"PASSIVE_LEVEL"}
    assert _calls(events) == [(t, enable, "STATUS_NOT_IMPLEMENTED") for t in types for enable in (1, 0)]
    assert _calls(events, vsync=True) == []  # nothing in the case needs the vsync interrupt
    assert not any(d.vsync_interrupt for d in system.gpu.displays)


@pytest.mark.rule(49)
def test_a_driver_that_controls_the_overlay_vsync_types_is_caught_with_the_rules_name():
    report = verify(ControlsEveryVsyncType, only=["interrupts/control_interrupt"])
    assert not report.passed
    (r,) = report.results
    f = r.failure
    assert (r.verdict, f.rule, f.rule_name, f.ground_truth) == ("fail", 49, "ControlInterruptOnlyVsync", False)
    assert f.messages == [
        "rule 49 (ControlInterruptOnlyVsync): DxgkDdiControlInterrupt(DXGK_INTERRUPT_CRTC_VSYNC_WITH_MULTIPLANE_OVERLAY, "
        "TRUE) returned 0x00000000 (STATUS_SUCCESS) but must return STATUS_NOT_IMPLEMENTED: only "
        "DXGK_INTERRUPT_CRTC_VSYNC is controlled"]
    assert f.rule_words == ("DxgkDdiControlInterrupt answers STATUS_NOT_IMPLEMENTED for every interrupt type other "
                            "than CRTC_VSYNC.")
    assert (f.bugcheck["code"], f.bugcheck["p1"], f.bugcheck["p2"]) == (0xC4, 49, 0)
    assert (f.event["event"], f.event["name"], f.event["t"], f.event["args"], f.event["status"]) == (
        "DdiCall", "DxgkDdiControlInterrupt", 1_500_000,
        {"InterruptType": "DXGK_INTERRUPT_CRTC_VSYNC_WITH_MULTIPLANE_OVERLAY", "EnableInterrupt": 1},
        "STATUS_SUCCESS")
    assert f.crash["rule"] == {"number": 49, "name": "ControlInterruptOnlyVsync"}


class AnswersInvalidParameter(ReferenceDriver):
    """Answers STATUS_INVALID_PARAMETER (a status outside the entry point's contract) for every type but
    CRTC_VSYNC."""

    def DxgkDdiControlInterrupt(self, hAdapter, InterruptType, EnableInterrupt):
        if InterruptType != int(T.DXGK_INTERRUPT_CRTC_VSYNC):
            return INVALID_PARAMETER
        return super().DxgkDdiControlInterrupt(hAdapter, InterruptType, EnableInterrupt)


@pytest.mark.rule(49)
def test_in_report_mode_every_wrong_answer_is_recorded_and_the_run_goes_on():
    system, result, events = _run_case(AnswersInvalidParameter, verifier="report")
    assert result.bugcheck is None
    found = [(t, v.rule, v.name, v.message) for t, v in system.adapter.verifier.violations]
    assert found == [
        (1_500_000, 49, "ControlInterruptOnlyVsync",
         f"DxgkDdiControlInterrupt({name}, {enable}) returned 0xC000000D (STATUS_INVALID_PARAMETER) but must return "
         f"STATUS_NOT_IMPLEMENTED: only DXGK_INTERRUPT_CRTC_VSYNC is controlled")
        for name in WDDM2_0_TYPES for enable in ("TRUE", "FALSE")]
    assert _calls(events) == [(t, e, "STATUS_INVALID_PARAMETER") for t in WDDM2_0_TYPES for e in (1, 0)]
    # The OS carries on: every packet retired.
    ctx = result.summary["contexts"][0]
    assert (ctx["submitted"], ctx["completed"]) == (5, 5)
    assert [e["rule"] for e in events if e["event"] == "VerifierViolation"] == [49] * 16


@pytest.mark.rule(49)
def test_the_case_catches_the_invalid_parameter_answer_in_strict_mode():
    report = verify(AnswersInvalidParameter, only=["interrupts/control_interrupt"])
    f = report.results[0].failure
    assert (f.rule, f.bugcheck["code"], f.bugcheck["p1"]) == (49, 0xC4, 49)
    assert f.messages[0].startswith("rule 49 (ControlInterruptOnlyVsync): DxgkDdiControlInterrupt("
                                    "DXGK_INTERRUPT_DMA_COMPLETED, TRUE) returned 0xC000000D")


def test_crtc_vsync_calls_are_not_this_rules_business():
    """A run that only turns the vsync interrupt on and off never judges rule 49."""
    from test_vsync_control import one_flip, system as vsync_system

    s, trace = vsync_system(one_flip())
    s.run()
    assert _calls(trace.events, vsync=True) and not _calls(trace.events)
    assert 49 not in s.adapter.rules_exercised()


def test_nothing_is_judged_with_the_verifier_off():
    system, result, events = _run_case(AnswersInvalidParameter, verifier="off")
    assert result.bugcheck is None and system.adapter.verifier.violations == []
    assert 49 not in system.adapter.verifier.judged_rules
    assert len(_calls(events)) == 16


def test_ask_other_types_returns_each_answer():
    system, _, _ = _run_case(ReferenceDriver)
    assert ask_other_types(system.adapter) == [(t, e, NOT_IMPLEMENTED) for t in other_types("wddm2_0")
                                               for e in (True, False)]
