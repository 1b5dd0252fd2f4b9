"""Injected faults and how each ends (Microsoft's DXGKARGCB_NOTIFY_INTERRUPT_DATA and
DXGK_PAGE_FAULT_FLAGS pages, its TDR pages and Bug Check 0x119 VIDEO_SCHEDULER_INTERNAL_ERROR): GPU
page faults reported with DXGK_INTERRUPT_DMA_PAGE_FAULTED and its flag rules, driver entry points
returning errors, and an interrupt storm. Asserted in virtual time and on the event log."""

from __future__ import annotations

import pytest

from wddmsim.ddi.bugcheck import BugCheckCode, VidSchError
from wddmsim.ddi.ntstatus import NTSTATUS
from wddmsim.gpu.device import APERTURE_BASE
from wddmsim.kmd import ReferenceDriver
from wddmsim.scenario import ScenarioError, scenario_from_dict

from test_tdr import GUILTY, MS, S, build, ctx_summary, recovery_calls, script

PAGE_FAULT = [{"kind": "page_fault", "process": "bad", "context": "c", "packet": 2}]
UNSUCCESSFUL = int(NTSTATUS.STATUS_UNSUCCESSFUL)


def fault_report(trace):
    (e,) = [e for e in trace.of("Callback") if "DmaPageFaulted" in e.get("args", {})]
    return e["t"], e["args"]["DmaPageFaulted"]


def start_of(trace, fence):
    return next(e["t"] for e in trace.of("DmaPacketStart") if e["fence"] == fence)


@pytest.mark.rule(52)
@pytest.mark.parametrize("per_engine,flags,calls", [
    (None, 0x8, ["DxgkDdiQueryDependentEngineGroup", "DxgkDdiResetEngine"]),          # ENGINE_RESET_REQUIRED
    (False, 0x4, ["DxgkDdiResetFromTimeout", "DxgkDdiRestartFromTimeout"]),           # ADAPTER_RESET_REQUIRED
])
def test_page_fault_resets_as_the_flags_say_and_only_the_faulting_device_goes_to_error(per_engine, flags, calls):
    system, trace = build(GUILTY, faults=PAGE_FAULT, per_engine=per_engine)
    r = system.run()
    t, pf = fault_report(trace)
    fence = pf["FaultedFenceId"]
    # The fault lands the instant bad's second packet starts; recovery runs at once at PASSIVE_LEVEL.
    assert t == start_of(trace, fence)
    assert pf["PageFaultFlags"] == flags and pf["FaultedVirtualAddress"] == APERTURE_BASE
    assert pf["FaultedPrimitiveAPISequenceNumber"] == 2**64 - 1 and pf["FaultedBindTableEntry"] == 2**32 - 1
    assert [(e["t"], e["fence"], e["flags"]) for e in trace.of("PageFault")] == [(t, fence, flags)]
    assert recovery_calls(trace) == [(t, name) for name in calls]
    # A fault is not a timeout: no live dump, nothing counted toward the TDR limits.
    assert trace.of("LiveDump") == [] and trace.of("TdrDetected") == []
    assert [(e["t"], e["reason"]) for e in trace.of("DeviceError")] == [(t, "page fault")]
    bad, good, other = (ctx_summary(r, n) for n in ("bad", "good", "other"))
    assert (bad["completed"], bad["aborted"], bad["device_error"], bad["api_error"]) == (1, 1, True, "STATUS_DEVICE_REMOVED")
    assert (good["completed"], good["device_error"], other["completed"]) == (6, False, 4)
    assert r.summary["gpu_faults"] == 1 and r.bugcheck is None


@pytest.mark.rule(53)
def test_fatal_hardware_error_is_bug_check_0x119_c():
    faults = [dict(PAGE_FAULT[0], fatal=True)]
    system, trace = build(GUILTY, faults=faults)
    r = system.run()
    bc = r.bugcheck.bugcheck
    assert (bc.code, bc.p1) == (BugCheckCode.VIDEO_SCHEDULER_INTERNAL_ERROR, VidSchError.FATAL_PAGE_FAULT)
    assert r.bugcheck.rule == 53 and r.end == fault_report(trace)[0]


class FenceInvalidWithFence(ReferenceDriver):
    """Reports FENCE_INVALID yet names a fence, and asks for no reset: both forbidden (rule 51)."""

    def _report_page_fault(self, node):
        real = self.dxgk.DxgkCbNotifyInterrupt

        def tamper(handle, data):
            data.DmaPageFaulted.PageFaultFlags = 0x2
            return real(handle, data)

        self.dxgk.DxgkCbNotifyInterrupt = tamper
        try:
            super()._report_page_fault(node)
        finally:
            del self.dxgk.DxgkCbNotifyInterrupt


@pytest.mark.rule(51)
@pytest.mark.parametrize("verifier", ["strict", "report"])
def test_inconsistent_fault_flags_are_bug_check_0x119_d_in_every_mode(verifier):
    system, trace = build(GUILTY, faults=PAGE_FAULT, driver=FenceInvalidWithFence)
    system.adapter.verifier.mode = verifier
    r = system.run()
    bc = r.bugcheck.bugcheck
    assert (bc.code, bc.p1) == (BugCheckCode.VIDEO_SCHEDULER_INTERNAL_ERROR, VidSchError.INVALID_DMA_FAULT_PARAMETERS)
    assert r.bugcheck.rule == 51


def test_a_driver_older_than_wddm_2_cannot_report_the_fault_and_the_timeout_finds_it():
    system, trace = build([("app", "3D", script((0, "10ms")))],
                          faults=[{"kind": "page_fault", "process": "app", "context": "c", "packet": 1}])
    r = system.run()
    assert fault_report(trace)[1]["PageFaultFlags"] == 0x8  # WDDM 2.0 reports it
    # A WDDM 1.2 driver's interrupt data has no DmaPageFaulted arm: the engine stays stopped.
    old, old_trace = build([("app", "3D", script((0, "10ms")))], version="win8",
                           faults=[{"kind": "page_fault", "process": "app", "context": "c", "packet": 1}])
    r = old.run()
    assert not [e for e in old_trace.of("Callback") if "DmaPageFaulted" in e.get("args", {})]
    assert [(e["t"], e["reason"]) for e in old_trace.of("TdrDetected")] == [(4 * S, "preemption_timeout")]
    assert r.summary["tdr"]["engine_resets"] == 1


# -- driver entry points returning an error --------------------------------------------------------------------
@pytest.mark.rule(1)
def test_failing_submit_command_is_bug_check_0x119_2():
    faults = [{"kind": "ddi_error", "ddi": "DxgkDdiSubmitCommand", "call": 3}]
    system, trace = build([("app", "3D", script((0, "1ms"), (0, "1ms"), (0, "1ms")))], faults=faults)
    r = system.run()
    bc = r.bugcheck.bugcheck
    assert (bc.code, bc.p1, bc.p2) == (BugCheckCode.VIDEO_SCHEDULER_INTERNAL_ERROR,
                                       VidSchError.DRIVER_FAILED_SUBMIT_COMMAND, UNSUCCESSFUL)
    assert bc.p4 == 3  # node 0, fence 3
    assert r.end == 1 * MS  # the third packet is submitted when a slot frees


@pytest.mark.rule(25)
def test_failing_patch_is_bug_check_0x119_3():
    copy = {"kind": "copy_stream", "size": "64KiB", "interval": "1ms", "count": 3}
    faults = [{"kind": "ddi_error", "ddi": "DxgkDdiPatch", "call": 2, "status": "STATUS_INVALID_PARAMETER"}]
    system, trace = build([("app", "Copy", copy)], faults=faults)
    r = system.run()
    bc = r.bugcheck.bugcheck
    assert (bc.code, bc.p1) == (BugCheckCode.VIDEO_SCHEDULER_INTERNAL_ERROR, VidSchError.DRIVER_FAILED_PATCH_COMMAND)
    assert r.bugcheck.rule == 25 and r.end == 1 * MS


def test_failing_render_ends_the_application_not_the_system():
    faults = [{"kind": "ddi_error", "ddi": "DxgkDdiRender", "call": 2}]
    system, trace = build([("app", "3D", script((0, "1ms"), (5 * MS, "1ms"))),
                           ("other", "3D", script((0, "1ms"), (5 * MS, "1ms")))], faults=faults)
    r = system.run()
    assert r.bugcheck is None
    # The second DxgkDdiRender of the run is other's first: other's application ends there.
    app, other = ctx_summary(r, "app"), ctx_summary(r, "other")
    assert (app["completed"], app["api_error"]) == (2, "")
    assert (other["completed"], other["submitted"], other["api_error"]) == (0, 0, "STATUS_UNSUCCESSFUL")
    render = [e for e in trace.of("DdiCall") if e["name"] == "DxgkDdiRender"]
    assert render[1]["status"] == "STATUS_UNSUCCESSFUL"


@pytest.mark.rule(108)
def test_failing_reset_from_timeout_is_bug_check_0x116():
    faults = [{"kind": "hang", "node": "3D", "at": MS},
              {"kind": "ddi_error", "ddi": "DxgkDdiResetFromTimeout"}]
    system, trace = build([("app", "3D", script((0, "10ms")))], faults=faults, per_engine=False)
    r = system.run()
    assert r.bugcheck.bugcheck.code == BugCheckCode.VIDEO_TDR_FAILURE and r.end == 4 * S


# -- interrupt storm ------------------------------------------------------------------------------------------
def test_interrupt_storm_is_dismissed_interrupt_by_interrupt():
    storm = [{"kind": "interrupt_storm", "at": "1ms", "duration": "100us", "interval": "1us"}]
    quiet, _ = build([("app", "3D", script((0, "5ms")))])
    base = quiet.run().summary["interrupts"]
    system, trace = build([("app", "3D", script((0, "5ms")))], faults=storm)
    r = system.run()
    assert r.summary["interrupts"] == base + 100
    assert system.driver.unknown_causes == 100
    assert ctx_summary(r, "app")["completed"] == 1 and r.bugcheck is None


# -- scenario validation ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("fault,message", [
    ({"kind": "ddi_error", "ddi": "DxgkDdiNope"}, "ddi must be one of"),
    ({"kind": "ddi_error", "ddi": "DxgkDdiPatch", "status": "STATUS_SUCCESS"}, "NTSTATUS error"),
    ({"kind": "page_fault", "node": "3D", "at": "1ms"}, "a page_fault names process, context and packet"),
    ({"kind": "interrupt_storm", "at": "1ms"}, "needs at, duration and interval"),
    ({"kind": "hang", "node": "Nope", "at": "1ms"}, "no node named 'Nope'"),
    ({"kind": "hang", "process": "app", "context": "x", "packet": 1}, "no context 'x'"),
])
def test_bad_faults_are_reported_with_their_field(fault, message):
    with pytest.raises(ScenarioError) as err:
        scenario_from_dict({"name": "x", "fault": [fault], "process": [
            {"name": "app", "context": [{"name": "c", "node": "3D", "workload": script((0, "1ms"))}]}]}, "f.toml")
    text = str(err.value)
    assert "f.toml" in text and "fault[0]" in text and message in text
