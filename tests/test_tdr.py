"""Timeout detection and recovery (Microsoft's "Timeout detection and recovery (TDR)" and "TDR
changes in Windows 8" pages): a hang is detected by an unanswered preemption request, recovered by
an engine reset or an adapter reset, the guilty device goes to error while the others' packets are
resubmitted and complete, a long but preemptible packet is not reset, and the TDR limits end in the
documented bug checks. Asserted in virtual time and on the event log."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from wddmsim.cli import main
from wddmsim.ddi.bugcheck import BugCheckCode, VidSchError
from wddmsim.ddi.ntstatus import NTSTATUS
from wddmsim.kmd import ReferenceDriver
from wddmsim.runner.system import System
from wddmsim.trace import ListSink

from wddm2util import scenario_of

ZERO = {"render": 0, "patch": 0, "submit": 0, "isr": 0, "dpc": 0, "present": 0}
MS = 1_000_000
S = 1_000_000_000


def build(processes, *, faults=(), granularity="interval", per_engine=None, tdr=None, driver=None, duration="20s",
          policy="priority_quantum", version="wddm2_0"):
    sc = scenario_of({
        "name": "tdr", "duration": duration,
        "adapter": {"cpu_cost": ZERO, "per_engine_reset": per_engine, "ddi_version": version,
                    "nodes": [{"name": "3D", "engine": "3d", "command_cost": 0, "preemption": granularity},
                              {"name": "Copy", "engine": "copy", "command_cost": 0}]},
        "scheduler": {"policy": policy},
        "tdr": tdr or {},
        "fault": list(faults),
        "process": [{"name": name, "context": [{"name": "c", "node": node, "workload": w}]}
                    for name, node, w in processes],
    }, "<test>")
    trace = ListSink()
    return System(sc, trace=trace, driver=driver), trace


def script(*packets):
    return {"kind": "script", "packets": [{"at": at, "work": work} for at, work in packets]}


def events(trace, *names):
    return [(e["t"], e["event"]) for e in trace.events if e["event"] in names]


def recovery_calls(trace):
    return [(e["t"], e["name"]) for e in trace.of("DdiCall")
            if e["name"] in ("DxgkDdiQueryDependentEngineGroup", "DxgkDdiResetEngine", "DxgkDdiResetFromTimeout",
                             "DxgkDdiRestartFromTimeout")]


def ctx_summary(r, name):
    return next(c for c in r.summary["contexts"] if c["context"] == f"{name}/c")


# -- reference scenario 7: a hang ends in an adapter reset ---------------------------------------------------
@pytest.mark.rule(113, 119)
def test_hang_is_detected_by_an_unanswered_preemption_and_reset():
    system, trace = build([("app", "3D", script((0, "10ms"), ("5s", "1ms")))],
                          faults=[{"kind": "hang", "process": "app", "context": "c", "packet": 1}], per_engine=False)
    r = system.run()
    # The packet hangs as it starts; the watchdog asks to preempt it after 2 s; nothing answers in
    # TdrDelay (2 s more): the adapter is reset at 4 s.
    assert [(e["t"], e["reason"], e["fence"]) for e in trace.of("PreemptRequest")] == [(2 * S, "watchdog", 2)]
    assert [(e["t"], e["reason"], e["fence"]) for e in trace.of("TdrDetected")] == [(4 * S, "preemption_timeout", 1)]
    assert recovery_calls(trace) == [(4 * S, "DxgkDdiResetFromTimeout"), (4 * S, "DxgkDdiRestartFromTimeout")]
    assert [(e["t"], e["code"]) for e in trace.of("LiveDump")] == [(4 * S, 0x117)]
    assert [(e["t"], e["fence"], e["status"]) for e in trace.of("DmaPacketStop")] == [(4 * S, 1, "Aborted")]
    assert [(e["t"], e["reason"]) for e in trace.of("DeviceError")] == [(4 * S, "adapter reset")]
    # Every submitted fence counts as completed (fence 2 was the PreemptionFenceId, not a
    # submission); the app sees device-removed at its next call.
    assert system.adapter.vidsch.nodes[0].last_completed == 1
    app = ctx_summary(r, "app")
    assert (app["completed"], app["aborted"], app["device_error"]) == (0, 1, True)
    assert system.contexts[0].removed_at == 5 * S
    assert r.summary["tdr"]["adapter_resets"] == 1 and r.bugcheck is None


# -- reference scenario 8: a long packet that does preempt is not reset ------------------------------------------
def test_long_preemptible_packet_is_preempted_not_reset():
    system, trace = build([("app", "3D", script((0, "5s")))])
    r = system.run()
    reqs = [(e["t"], e["reason"]) for e in trace.of("PreemptRequest")]
    assert reqs == [(2 * S, "watchdog"), (4 * S, "watchdog")]
    assert not trace.of("TdrDetected")
    # Preempted at 2 s and 4 s (interval granularity: at once), resubmitted with Resubmission = 1
    # and a new fence each time; the total GPU time is still 5 s.
    subs = [(e["t"], e["args"]["SubmissionFenceId"], e["args"]["Flags"]["Resubmission"])
            for e in trace.of("DdiCall") if e["name"] == "DxgkDdiSubmitCommand"]
    assert subs == [(0, 1, 0), (2 * S, 3, 1), (4 * S, 5, 1)]
    assert trace.of("QueuePacketStop")[-1]["t"] == 5 * S
    assert system.gpu.engines[0].busy_ns == 5 * S
    assert r.summary["tdr"] == {"engine_resets": 0, "adapter_resets": 0, "live_dumps": []}


def test_long_packet_on_a_dma_buffer_engine_times_out():
    system, trace = build([("app", "3D", script((0, "5s")))], granularity="dma_buffer")
    r = system.run()
    # The engine can only stop at the end of the 5 s buffer: the request made at 2 s times out at 4 s.
    assert [(e["t"], e["reason"]) for e in trace.of("TdrDetected")] == [(4 * S, "preemption_timeout")]
    assert r.summary["tdr"]["engine_resets"] == 1 and ctx_summary(r, "app")["aborted"] == 1


# -- reference scenarios 9 and 11: engine reset, guilty context, escalation --------------------------------------
GUILTY = [
    ("bad", "3D", script((0, "10ms"), (0, "10ms"), ("5s", "10ms"))),
    ("good", "3D", {"kind": "compute_batch", "batch": 2, "work": "5ms", "count": 3}),
    ("other", "Copy", {"kind": "compute_batch", "batch": 2, "work": "5ms", "count": 2}),
]
HANG = [{"kind": "hang", "process": "bad", "context": "c", "packet": 2}]


def test_engine_reset_puts_only_the_guilty_device_in_error():
    system, trace = build(GUILTY, faults=HANG)
    r = system.run()
    (tdr,) = trace.of("TdrDetected")
    assert tdr["reason"] == "preemption_timeout"
    t = tdr["t"]
    assert recovery_calls(trace) == [(t, "DxgkDdiQueryDependentEngineGroup"), (t, "DxgkDdiResetEngine")]
    group = next(e for e in trace.of("DdiCall") if e["name"] == "DxgkDdiQueryDependentEngineGroup")
    assert group["args"]["DependentNodeOrdinalMask"] == 1
    # Before them the OS asked whether the node makes progress: the hung engine left the preemption
    # request unanswered, so the reference driver says it does not (rule 118's third entry point).
    (status,) = [e for e in trace.of("DdiCall") if e["name"] == "DxgkDdiQueryEngineStatus"]
    assert (status["t"], status["args"]["NodeOrdinal"], status["args"]["EngineStatus"]["Responsive"]) == (t, 0, 0)
    (reset,) = trace.of("EngineReset")
    reset_call = next(e for e in trace.of("DdiCall") if e["name"] == "DxgkDdiResetEngine")
    assert reset["last_aborted_fence"] == reset_call["args"]["LastAbortedFenceId"] == tdr["fence"]
    assert [e["code"] for e in trace.of("LiveDump")] == [0x141]
    bad, good, other = (ctx_summary(r, n) for n in ("bad", "good", "other"))
    assert (bad["completed"], bad["aborted"], bad["cancelled"], bad["device_error"]) == (1, 1, 0, True)
    # The others lose nothing: every packet completes and none sees an error.
    assert (good["completed"], good["aborted"], good["cancelled"], good["device_error"]) == (6, 0, 0, False)
    assert (other["completed"], other["device_error"]) == (4, False)
    assert not any(e["status"] in ("Aborted", "Cancelled") for e in trace.of("QueuePacketStop")
                   if e["context"] != system.contexts[0].handle)
    # bad's third packet, at 5 s, meets STATUS_DEVICE_REMOVED.
    assert system.contexts[0].removed_at == 5 * S
    assert r.summary["tdr"]["engine_resets"] == 1 and r.summary["tdr"]["adapter_resets"] == 0


class FailingResetEngine(ReferenceDriver):
    def DxgkDdiResetEngine(self, hAdapter, pResetEngine):
        return int(NTSTATUS.STATUS_UNSUCCESSFUL)


@pytest.mark.rule(116)
def test_failed_engine_reset_is_promoted_to_an_adapter_reset():
    system, trace = build(GUILTY, faults=HANG, driver=FailingResetEngine)
    r = system.run()
    t = trace.of("TdrDetected")[0]["t"]
    assert recovery_calls(trace) == [(t, "DxgkDdiQueryDependentEngineGroup"), (t, "DxgkDdiResetEngine"),
                                     (t, "DxgkDdiResetFromTimeout"), (t, "DxgkDdiRestartFromTimeout")]
    assert [(e["code"], e["p4"]) for e in trace.of("LiveDump")] == [(0x141, 0), (0x117, 9)]  # 9: promoted
    assert trace.of("AdapterReset")[0]["promoted"] == 1
    assert ctx_summary(r, "good")["completed"] == 6 and ctx_summary(r, "other")["completed"] == 4
    assert ctx_summary(r, "bad")["device_error"] and not ctx_summary(r, "good")["device_error"]


class BadAbortedFence(ReferenceDriver):
    def DxgkDdiResetEngine(self, hAdapter, pResetEngine):
        status = super().DxgkDdiResetEngine(hAdapter, pResetEngine)
        pResetEngine.LastAbortedFenceId += 100
        return status


@pytest.mark.rule(115)
def test_aborted_fence_outside_the_range_is_bug_check_0x119_a():
    system, trace = build(GUILTY, faults=HANG, driver=BadAbortedFence)
    r = system.run()
    bc = r.bugcheck.bugcheck
    node_queue = system.adapter.vidsch.nodes[0]
    assert (bc.code, bc.p1) == (BugCheckCode.VIDEO_SCHEDULER_INTERNAL_ERROR, VidSchError.REPORTED_INVALID_ABORTED_FENCE)
    assert bc.p2 == trace.of("TdrDetected")[0]["fence"] + 100 and bc.p3 == node_queue.last_completed
    assert r.bugcheck.struct == "DXGKARG_RESETENGINE"


class FailingRestart(ReferenceDriver):
    def DxgkDdiRestartFromTimeout(self, hAdapter):
        return int(NTSTATUS.STATUS_UNSUCCESSFUL)


@pytest.mark.rule(108)
def test_failed_restart_is_bug_check_0x116():
    system, trace = build(GUILTY, faults=HANG, per_engine=False, driver=FailingRestart)
    r = system.run()
    bc = r.bugcheck.bugcheck
    assert (bc.code, bc.p3) == (BugCheckCode.VIDEO_TDR_FAILURE, int(NTSTATUS.STATUS_UNSUCCESSFUL) & 0xFFFFFFFF)


# -- reference scenario 10: TDR limits ---------------------------------------------------------------------------
def six_hangs():
    procs, faults = [], []
    for i in range(6):
        at = i * 5 * S
        procs.append((f"app{i}", "3D", script((at, "10ms"))))
        faults.append({"kind": "hang", "node": "3D", "at": at + MS})
    return procs, faults


@pytest.mark.rule(112)
def test_sixth_adapter_timeout_within_a_minute_is_bug_check_0x116():
    procs, faults = six_hangs()
    system, trace = build(procs, faults=faults, per_engine=False, duration="60s")
    r = system.run()
    # Each hang is reset 4 s later (watchdog 2 s + TdrDelay 2 s): five recover, the sixth stops.
    assert [e["t"] for e in trace.of("AdapterReset")] == [i * 5 * S + 4 * S for i in range(5)]
    assert r.bugcheck.bugcheck.code == BugCheckCode.VIDEO_TDR_FAILURE and r.bugcheck.bugcheck.p4 == 6
    assert r.end == 25 * S + 4 * S


@pytest.mark.rule(121)
def test_engine_timeouts_are_capped_one_lower_and_the_last_process_is_blocked():
    procs, faults = six_hangs()
    system, trace = build(procs[:5], faults=faults[:5], duration="60s")
    r = system.run()
    assert [e["t"] for e in trace.of("EngineReset")] == [i * 5 * S + 4 * S for i in range(5)]
    # Four engine timeouts within the minute are tolerated (TdrLimitCount - 1); the fifth blocks the
    # offending process from the GPU with a 0x142 live dump naming it.
    assert [e["code"] for e in trace.of("LiveDump")] == [0x141] * 5 + [0x142]
    assert trace.of("LiveDump")[-1]["p4"] == system.contexts[4].process.pid
    assert [e["reason"] for e in trace.of("DeviceError")] == ["engine reset"] * 5
    assert r.bugcheck is None and r.summary["tdr"]["engine_resets"] == 5


# -- TdrLevel ------------------------------------------------------------------------------------------------------
def test_tdr_level_1_bug_checks_on_the_first_timeout():
    """TdrLevelBugcheck: no recovery; the stop is 0x116 VIDEO_TDR_FAILURE, since 0x117 only names
    the live dump of a recovered timeout and never stops the system (Microsoft's bug check pages)."""
    system, trace = build([("app", "3D", script((0, "10ms")))], tdr={"level": 1},
                          faults=[{"kind": "hang", "node": "3D", "at": MS}])
    r = system.run()
    bc = r.bugcheck.bugcheck
    assert (bc.code, bc.p4, r.end) == (BugCheckCode.VIDEO_TDR_FAILURE, 0, 4 * S)
    assert [(e["t"], e["reason"]) for e in trace.of("TdrDetected")] == [(4 * S, "preemption_timeout")]
    assert not trace.of("LiveDump") and not recovery_calls(trace)


def test_tdr_level_1_bug_checks_with_0x116_under_hardware_scheduling_too():
    from wddm2util import adapter, scenario

    sc = scenario(adapter("hw"), [{"name": "a", "context": [{"name": "c", "node": "3D", "workload": script((0, "1ms"))}]}],
                  duration="5s", tdr={"level": 1}, fault=[{"kind": "hang", "process": "a", "context": "c", "packet": 1}])
    trace = ListSink()
    r = System(sc, trace=trace).run()
    (tdr,) = trace.of("TdrDetected")
    bc = r.bugcheck.bugcheck
    assert (bc.code, bc.p4, r.end) == (BugCheckCode.VIDEO_TDR_FAILURE, 0, tdr["t"])
    assert tdr["reason"] == "no_progress" and not trace.of("LiveDump") and not trace.of("HwEngineReset")


@pytest.mark.rule(113)
def test_tdr_level_0_detects_nothing():
    system, trace = build([("app", "3D", script((0, "10ms")))], tdr={"level": 0},
                          faults=[{"kind": "hang", "node": "3D", "at": MS}])
    r = system.run()
    assert not trace.of("PreemptRequest") and not trace.of("TdrDetected") and r.bugcheck is None
    assert ctx_summary(r, "app")["completed"] == 0


@pytest.mark.rule(113)
def test_shorter_tdr_delay_and_watchdog():
    system, trace = build([("app", "3D", script((0, "10ms")))], tdr={"delay": "100ms", "watchdog": "50ms"},
                          faults=[{"kind": "hang", "node": "3D", "at": MS}], per_engine=False)
    system.run()
    assert [e["t"] for e in trace.of("PreemptRequest")] == [50 * MS]
    assert [e["t"] for e in trace.of("AdapterReset")] == [150 * MS]


def test_tdr_example_runs():
    r = CliRunner().invoke(main, ["run", "examples/tdr.toml"])
    assert r.exit_code == 0, r.output
    assert "Recovery: 1 engine reset, 0 adapter resets" in r.output
    assert "VIDEO_ENGINE_TIMEOUT_DETECTED" in r.output and "game.exe/render: device in error" in r.output


# -- a lost completion interrupt: DxgkDdiQueryCurrentFence before any timeout (rule 55) ------------------------
class LosesAnInterrupt(ReferenceDriver):
    """Its ISR drops the completion of fence 1 (a chipset that raised the interrupt before the fence
    write landed): the fence is in the slot, never reported."""

    def _report_completed(self, node):
        if self._completed(node) == 1 and not getattr(self, "lost", False):
            self.lost = True
            return False
        return super()._report_completed(node)


def test_a_lost_completion_is_found_by_query_current_fence_not_a_timeout():
    system, trace = build([("app", "3D", script((0, "10ms")))], driver=LosesAnInterrupt)
    r = system.run()
    # The watchdog fires 2 s after the packet started; the OS asks the driver, which reports fence 1
    # (inside the call) and answers it: the packet retires then, with no preemption and no reset.
    (call,) = [e for e in trace.of("DdiCall") if e["name"] == "DxgkDdiQueryCurrentFence"]
    assert (call["t"], call["args"]["NodeOrdinal"], call["args"]["CurrentFence"]) == (2 * S, 0, 1)
    assert [(e["t"], e["status"]) for e in trace.of("QueuePacketStop")] == [(2 * S, "Completed")]
    assert not trace.of("PreemptRequest") and not trace.of("TdrDetected")
    assert r.bugcheck is None and ctx_summary(r, "app")["completed"] == 1


class AnswersAnOlderFence(ReferenceDriver):
    def DxgkDdiQueryCurrentFence(self, hAdapter, pCurrentFence):
        status = super().DxgkDdiQueryCurrentFence(hAdapter, pCurrentFence)
        pCurrentFence.CurrentFence -= 1
        return status


class AnswersWithoutReporting(ReferenceDriver):
    def DxgkDdiQueryCurrentFence(self, hAdapter, pCurrentFence):
        pCurrentFence.CurrentFence = self._completed(self.nodes[pCurrentFence.NodeOrdinal])
        return int(NTSTATUS.STATUS_SUCCESS)


def test_query_current_fence_answers_are_judged_rule_55():
    hang = [{"kind": "hang", "process": "app", "context": "c", "packet": 2}]
    system, _ = build([("app", "3D", script((0, "10ms"), (0, "10ms")))], faults=hang, driver=AnswersAnOlderFence)
    r = system.run()
    assert (r.bugcheck.rule, r.end) == (55, 2 * S + 10 * MS)
    assert (r.bugcheck.bugcheck.code, r.bugcheck.bugcheck.p1) == (BugCheckCode.DRIVER_VERIFIER_DETECTED_VIOLATION, 55)
    assert "CurrentFence is 0 but must not be older than the last completed fence already reported" in r.bugcheck.message
    system, _ = build([("app", "3D", script((0, "10ms")))], driver=type("Lossy", (AnswersWithoutReporting,
                                                                               LosesAnInterrupt), {}))
    r = system.run()
    assert r.bugcheck.rule == 55 and r.end == 2 * S
    assert "a newer completed fence must be reported with DxgkCbNotifyInterrupt" in r.bugcheck.message


# -- what a reset does to fences, resubmissions and dependent engines ----------------------------------------------
@pytest.mark.rule(101)
@pytest.mark.parametrize("flags, jumps", [((), True), (("NoSignalMaxValueOnTdr",), False)])
def test_a_reset_under_the_software_scheduler_drives_the_devices_fences_to_the_maximum(flags, jumps):
    """Rule 101 under the packet scheduler with GPU virtual addresses: the fence a hung device was
    to signal jumps to 2**64-1 when the engine reset puts that device in error, so a CPU waiter
    on it wakes with success at the reset; with NoSignalMaxValueOnTdr it keeps its value and the
    waiter times out."""
    from wddm2util import adapter, scenario
    from wddmsim.umd import Work

    idle = {"kind": "script", "packets": [{"at": "1000s", "work": 0}]}
    sc = scenario(adapter("va"), [{"name": n, "context": [{"name": "c", "node": "3D", "workload": idle}]}
                                  for n in ("a", "b")], duration="6s")
    trace = ListSink()
    system = System(sc, trace=trace)
    kmt = system.kmt
    a, b = system.contexts
    fence = kmt.CreateSynchronizationObject(a.device, 0, ("Shared",) + flags)
    kmt.OpenSynchronizationObject(fence, b.device)
    wddm2 = system.adapter.wddm2
    seen = {}

    def work():
        wddm2.on_buffer = lambda c, seq, va: system.gpu.engines[0].hang_on_buffer(va)
        yield from system.runtime.submit(a, (Work(MS),), signal=(fence, 5))
        wddm2.on_buffer = None
        status = yield kmt.WaitForSynchronizationObjectFromCpu([fence], [5], timeout=5_500 * MS)
        seen["status"], seen["t"] = status, system.sim.now

    system.sim.process(work())
    system.run()
    (error,) = trace.of("DeviceError")
    assert (error["device"], error["reason"]) == (a.device.handle, "engine reset")
    if jumps:
        assert wddm2.fences.read(fence) == (1 << 64) - 1
        assert (seen["status"], seen["t"]) == (0, error["t"])
    else:
        assert wddm2.fences.read(fence) == 0
        assert (seen["status"], seen["t"]) == (int(NTSTATUS.STATUS_TIMEOUT), 5_500 * MS)


def test_an_adapter_reset_resubmits_the_innocent_packet_with_the_resubmission_flag():
    """The innocent context's packet that was on the hardware queue when the adapter was reset is
    submitted again at once, with Flags.Resubmission = 1 (DXGK_SUBMITCOMMANDFLAGS, WDDM 2.0) and a
    new fence id, and completes 10 ms later; the hung one is aborted."""
    system, trace = build([("bad", "3D", script((0, "10ms"))), ("good", "3D", script(("1ms", "10ms")))],
                          faults=[{"kind": "hang", "process": "bad", "context": "c", "packet": 1}], per_engine=False)
    r = system.run()
    bad, good = system.contexts
    (reset,) = trace.of("AdapterReset")
    t = reset["t"]
    subs = [(e["t"], e["args"]["hContext"], e["args"]["SubmissionFenceId"], e["args"]["Flags"]["Resubmission"])
            for e in trace.of("DdiCall") if e["name"] == "DxgkDdiSubmitCommand"]
    assert subs == [(0, bad.hDdi, 1, 0), (MS, good.hDdi, 2, 0), (t, good.hDdi, 4, 1)]
    stops = [(e["t"], e["context"], e["fence"], e["status"]) for e in trace.of("DmaPacketStop")]
    assert stops == [(t, bad.handle, 1, "Aborted"), (t, good.handle, 2, "Reset"), (t + 10 * MS, good.handle, 4, "Completed")]
    assert ctx_summary(r, "good")["completed"] == 1 and not ctx_summary(r, "good")["device_error"]


class DependentCopyEngine(ReferenceDriver):
    """A GPU whose 3D engine cannot be reset without its copy engine (node 1): the mask for node 0
    names both; the copy and video nodes are otherwise independent."""

    def DxgkDdiQueryDependentEngineGroup(self, hAdapter, pQueryDependentEngineGroup):
        status = super().DxgkDdiQueryDependentEngineGroup(hAdapter, pQueryDependentEngineGroup)
        if pQueryDependentEngineGroup.NodeOrdinal == 0:
            pQueryDependentEngineGroup.DependentNodeOrdinalMask = 0b011
        return status


def dependent_run(copy_preemption):
    sc = scenario_of({
        "name": "dep", "duration": "10s",
        "adapter": {"cpu_cost": ZERO, "per_engine_reset": True, "ddi_version": "wddm2_0",
                    "nodes": [{"name": "3D", "engine": "3d", "command_cost": 0, "preemption": "interval"},
                              {"name": "Copy", "engine": "copy", "command_cost": 0, "preemption": copy_preemption},
                              {"name": "Video", "engine": "video_decode", "command_cost": 0}]},
        "fault": [{"kind": "hang", "process": "bad", "context": "c", "packet": 1}],
        "process": [{"name": name, "context": [{"name": "c", "node": node, "workload": w}]} for name, node, w in (
            ("bad", "3D", script((0, "10ms"))), ("copier", "Copy", script(("3s", "3s"))),
            ("video", "Video", script(("3s", "3s"))))],
    }, "<test>")
    trace = ListSink()
    system = System(sc, trace=trace, driver=DependentCopyEngine)
    r = system.run()
    return system, trace, r


def resets_of(trace):
    return [(e["t"], e["args"]["NodeOrdinal"], e["args"]["LastAbortedFenceId"]) for e in trace.of("DdiCall")
            if e["name"] == "DxgkDdiResetEngine"]


@pytest.mark.rule(117)
def test_a_dependent_engine_that_cannot_be_preempted_is_reset_500_ms_later_with_the_node():
    """DxgkDdiQueryDependentEngineGroup answers 0b011 for the hung 3D node. The copy node (node 1)
    runs a 3 s buffer and stops only at buffer boundaries: the scheduler asks it to preempt, waits
    500 ms ("TDR changes in Windows 8"), then resets node 0 and node 1, whose running packet is
    aborted (its device in error); the video node, outside the mask, runs on untouched."""
    system, trace, r = dependent_run("dma_buffer")
    bad, copier, video = system.contexts
    (tdr,) = trace.of("TdrDetected")
    t = tdr["t"]
    assert (t, tdr["node"]) == (4 * S, 0)
    assert [(e["t"], e["node"], e["reason"]) for e in trace.of("PreemptRequest") if e["node"] < 2] == [
        (2 * S, 0, "watchdog"), (t, 1, "dependent_reset")]
    assert resets_of(trace) == [(t + 500 * MS, 0, 1), (t + 500 * MS, 1, 1)]
    events = [(e["t"], e["node"], e["last_aborted_fence"], e["device"], e["group_of"]) for e in trace.of("EngineReset")]
    assert events == [(t + 500 * MS, 0, 1, bad.device.handle, 0), (t + 500 * MS, 1, 1, copier.device.handle, 0)]
    assert [(e["t"], e["device"], e["reason"]) for e in trace.of("DeviceError")] == [
        (t + 500 * MS, copier.device.handle, "dependent engine reset"), (t + 500 * MS, bad.device.handle, "engine reset")]
    # The video node is outside the mask: its 3 s packet completes at 6 s.
    assert [(e["t"], e["status"]) for e in trace.of("QueuePacketStop") if e["context"] == video.handle] == [
        (6 * S, "Completed")]
    assert not ctx_summary(r, "video")["device_error"] and ctx_summary(r, "copier")["aborted"] == 1
    assert r.summary["tdr"]["engine_resets"] == 1 and r.bugcheck is None


@pytest.mark.rule(117)
def test_a_dependent_engine_that_preempts_is_not_reset():
    """The same, with a copy engine that stops mid-buffer: it answers the preemption at once, so
    only node 0 is reset, at once; the copy packet is resubmitted after the reset and finishes, its
    device untouched, its engine busy 3 s in all."""
    system, trace, r = dependent_run("interval")
    bad, copier, video = system.contexts
    t = trace.of("TdrDetected")[0]["t"]
    assert resets_of(trace) == [(t, 0, 1)]
    assert [(e["node"], e["group_of"]) for e in trace.of("EngineReset")] == [(0, 0)]
    assert [(e["t"], e["fence"], e["status"]) for e in trace.of("DmaPacketStop") if e["context"] == copier.handle] == [
        (t, 1, "Preempted"), (6 * S, 3, "Completed")]
    subs = [(e["t"], e["args"]["SubmissionFenceId"], e["args"]["Flags"]["Resubmission"]) for e in trace.of("DdiCall")
            if e["name"] == "DxgkDdiSubmitCommand" and e["args"]["hContext"] == copier.hDdi]
    assert subs == [(3 * S, 1, 0), (t, 3, 1)]
    assert [(e["device"], e["reason"]) for e in trace.of("DeviceError")] == [(bad.device.handle, "engine reset")]
    assert system.gpu.engines[1].busy_ns == 3 * S and r.bugcheck is None


class FaultNamesNoNode(ReferenceDriver):
    """Reports its hardware-queue page fault with NodeOrdinal 7 on a two-node adapter."""

    def _report_hwqueue_fault(self, node):
        notify = self.dxgk.DxgkCbNotifyInterrupt

        def bad_node(handle, data):
            data.HwQueuePageFaulted.NodeOrdinal = 7
            return notify(handle, data)

        self.dxgk.DxgkCbNotifyInterrupt = bad_node
        try:
            super()._report_hwqueue_fault(node)
        finally:
            self.dxgk.DxgkCbNotifyInterrupt = notify


@pytest.mark.parametrize("verifier", ["strict", "report", "off"])
def test_a_hwqueue_page_fault_naming_no_node_is_bug_check_0x119_1_in_every_mode(verifier):
    """HWQUEUE_PAGE_FAULTED whose NodeOrdinal names no node stops as every other interrupt with a
    bad node does (rule 20: 0x119 with P1 = 1, the fence it carries belongs to no node's sequence),
    never with an IndexError, whatever the verifier mode."""
    from wddm2util import adapter, scenario

    sc = scenario(adapter("hw"), [{"name": "a", "context": [{"name": "c", "node": "3D", "workload": {
        "kind": "script", "packets": [{"at": 0, "work": "1ms", "repeat": 3}]}}]}], duration="20ms",
        fault=[{"kind": "page_fault", "process": "a", "context": "c", "packet": 2}])
    trace = ListSink()
    system = System(sc, trace=trace, driver=FaultNamesNoNode, verifier=verifier)
    r = system.run()
    stop = r.bugcheck
    assert (stop.bugcheck.code, stop.bugcheck.p1) == (BugCheckCode.VIDEO_SCHEDULER_INTERNAL_ERROR,
                                                      VidSchError.DRIVER_REPORTED_INVALID_FENCE_ID)
    assert (stop.rule, stop.message) == (20, "rule 20 (NodeOrdinalInRange): HwQueuePageFaulted.NodeOrdinal 7 names no node")
    (cb,) = [e for e in trace.of("Callback") if e["name"] == "DxgkCbNotifyInterrupt"
             and e["args"]["InterruptType"] == "DXGK_INTERRUPT_HWQUEUE_PAGE_FAULTED"]
    assert r.end == cb["t"] and not trace.of("PageFault") and not trace.of("HwEngineReset")
