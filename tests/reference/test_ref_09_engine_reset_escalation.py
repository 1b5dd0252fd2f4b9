"""Reference scenario 9: engine reset, then escalation to an adapter reset.

Pass criteria: a hang on a render node is recovered by DxgkDdiResetEngine, whose LastAbortedFenceId
is the hung packet's, and only that engine's contexts are affected; a failed engine reset, or a hang
on the paging node (the reset hits a paging transfer), goes on to a full adapter reset. Checked: the
DDI sequence and the set of contexts each recovery touches."""

from __future__ import annotations

from wddmsim.ddi.ntstatus import NTSTATUS
from wddmsim.kmd import ReferenceDriver
from wddmsim.scenario import scenario_from_dict
from wddmsim.runner.system import System
from wddmsim.trace import ListSink

MS = 1_000_000
S = 1_000_000_000
ZERO = {"render": 0, "patch": 0, "submit": 0, "isr": 0, "dpc": 0, "present": 0}
RECOVERY = ("DxgkDdiQueryEngineStatus", "DxgkDdiQueryDependentEngineGroup", "DxgkDdiResetEngine",
            "DxgkDdiResetFromTimeout", "DxgkDdiRestartFromTimeout")


def render_hang(driver=None):
    """bad's packet hangs on the 3D node; good's packet waits behind it on the same node's hardware
    queue; other runs a 2 s packet on the Copy node across the recovery."""
    sc = scenario_from_dict({
        "name": "engine_reset", "duration": "10s",
        "adapter": {"cpu_cost": ZERO, "nodes": [{"name": "3D", "engine": "3d", "command_cost": 0, "preemption": "interval"},
                                                {"name": "Copy", "engine": "copy", "command_cost": 0}]},
        "driver": {"ddi_version": "wddm2_0", "per_engine_reset": True},
        "fault": [{"kind": "hang", "process": "bad", "context": "c", "packet": 1}],
        "process": [{"name": name, "context": [{"name": "c", "node": node, "workload": {
            "kind": "script", "packets": [{"at": at, "work": work}]}}]}
            for name, node, at, work in (("bad", "3D", 0, "10ms"), ("good", "3D", "1ms", "10ms"),
                                         ("other", "Copy", "1500ms", "2s"))],
    }, "<ref09>")
    trace = ListSink()
    system = System(sc, trace=trace, driver=driver)
    return system, trace, system.run()


def recovery(trace):
    return [(e["t"], e["name"], e["args"].get("NodeOrdinal")) for e in trace.of("DdiCall") if e["name"] in RECOVERY]


def stops(trace, ctx):
    return [(e["t"], e["fence"], e["status"]) for e in trace.of("DmaPacketStop") if e["context"] == ctx.handle]


def test_a_render_node_hang_resets_that_engine_only():
    system, trace, r = render_hang()
    bad, good, other = system.contexts
    (tdr,) = trace.of("TdrDetected")
    t = tdr["t"]
    assert (tdr["node"], tdr["fence"], tdr["context"]) == (0, 1, bad.handle)
    assert recovery(trace) == [(t, "DxgkDdiQueryEngineStatus", 0), (t, "DxgkDdiQueryDependentEngineGroup", 0),
                               (t, "DxgkDdiResetEngine", 0)]
    reset_call = next(e for e in trace.of("DdiCall") if e["name"] == "DxgkDdiResetEngine")
    assert reset_call["args"]["LastAbortedFenceId"] == 1  # the hung packet's fence
    (reset,) = trace.of("EngineReset")
    assert (reset["t"], reset["node"], reset["last_aborted_fence"], reset["device"]) == (t, 0, 1, bad.device.handle)
    assert [e["code"] for e in trace.of("LiveDump")] == [0x141]
    # Affected: the 3D engine's contexts. bad's packet is aborted and its device hung; good's,
    # behind it on the hardware queue, is taken back and resubmitted (Resubmission 1, new fence).
    assert stops(trace, bad) == [(t, 1, "Aborted")]
    assert stops(trace, good) == [(t, 2, "Reset"), (t + 10 * MS, 4, "Completed")]
    good_subs = [(e["t"], e["args"]["SubmissionFenceId"], e["args"]["Flags"]["Resubmission"])
                 for e in trace.of("DdiCall") if e["name"] == "DxgkDdiSubmitCommand" and e["args"]["hContext"] == good.hDdi]
    assert good_subs == [(MS, 2, 0), (t, 4, 1)]
    # Not affected: the Copy engine's packet runs through the recovery and completes on time.
    assert stops(trace, other) == [(3500 * MS, 1, "Completed")]
    states = [system.kmt.GetDeviceState(c.device) for c in (bad, good, other)]
    assert states == ["HUNG", "ACTIVE", "ACTIVE"]
    assert r.summary["tdr"]["engine_resets"] == 1 and r.summary["tdr"]["adapter_resets"] == 0


class FailingResetEngine(ReferenceDriver):
    def DxgkDdiResetEngine(self, hAdapter, pResetEngine):
        return int(NTSTATUS.STATUS_UNSUCCESSFUL)


def test_a_failed_engine_reset_escalates_to_an_adapter_reset_of_every_engine():
    system, trace, r = render_hang(FailingResetEngine)
    bad, good, other = system.contexts
    t = trace.of("TdrDetected")[0]["t"]
    assert recovery(trace) == [(t, "DxgkDdiQueryEngineStatus", 0), (t, "DxgkDdiQueryDependentEngineGroup", 0),
                               (t, "DxgkDdiResetEngine", 0), (t, "DxgkDdiResetFromTimeout", None),
                               (t, "DxgkDdiRestartFromTimeout", None)]
    (reset,) = trace.of("AdapterReset")
    assert (reset["t"], reset["promoted"], reset["device"]) == (t, 1, bad.device.handle)
    assert not trace.of("EngineReset")
    # 0x141 for the engine timeout, then 0x117 with P4 9 (TdrEngineTimeoutPromotedToAdapterReset).
    assert [(e["code"], e["p4"]) for e in trace.of("LiveDump")] == [(0x141, 0), (0x117, 9)]
    # Affected: every engine. The Copy engine's packet is taken back too and runs again in full.
    assert stops(trace, bad) == [(t, 1, "Aborted")]
    assert stops(trace, good) == [(t, 2, "Reset"), (t + 10 * MS, 4, "Completed")]
    assert stops(trace, other) == [(t, 1, "Reset"), (t + 2 * S, 2, "Completed")]
    states = [system.kmt.GetDeviceState(c.device) for c in (bad, good, other)]
    assert states == ["HUNG", "ACTIVE", "ACTIVE"]
    assert r.summary["tdr"]["engine_resets"] == 0 and r.summary["tdr"]["adapter_resets"] == 1


def test_a_hang_on_the_paging_node_escalates_to_an_adapter_reset():
    """The Copy node (VidMm's paging node) hangs during the first paging transfer of a process under
    memory pressure: the engine reset hits a paging packet, so an adapter-wide reset follows and
    the device whose allocation was being moved goes to error."""
    sc = scenario_from_dict({
        "name": "paging_hang", "duration": "50ms",
        "adapter": {"cpu_cost": ZERO, "segments": [
            {"name": "VRAM", "kind": "memory", "size": "256KiB"},
            {"name": "Aperture", "kind": "aperture", "size": "1MiB", "cpu_visible": True}]},
        "fault": [{"kind": "hang", "node": "Copy", "at": 2_000_001}],
        "process": [{"name": "app", "context": [{"name": "c", "node": "3D", "workload": {
            "kind": "memory_pressure", "allocations": 6, "size": "64KiB", "touch": 2, "work": "100us",
            "interval": "1ms", "count": 12}}]}],
    }, "<ref09-paging>")
    trace = ListSink()
    system = System(sc, trace=trace)
    r = system.run(until=5 * S)
    (app,) = system.contexts
    copy = next(i for i, n in enumerate(sc.adapter.nodes) if n.name == "Copy")
    (tdr,) = trace.of("TdrDetected")
    t = tdr["t"]
    assert (t, tdr["node"]) == (2 * MS + 4 * S, copy)  # watchdog 2 s after the transfer started, TdrDelay 2 s
    assert recovery(trace) == [(t, "DxgkDdiQueryEngineStatus", copy), (t, "DxgkDdiQueryDependentEngineGroup", copy),
                               (t, "DxgkDdiResetEngine", copy), (t, "DxgkDdiResetFromTimeout", None),
                               (t, "DxgkDdiRestartFromTimeout", None)]
    assert [e["event"] for e in trace.events if e["event"] in ("EngineReset", "AdapterReset", "DeviceError")] == [
        "EngineReset", "AdapterReset", "DeviceError"]
    assert trace.of("AdapterReset")[0]["promoted"] == 1
    assert [(e["t"], e["device"], e["reason"]) for e in trace.of("DeviceError")] == [
        (t, app.device.handle, "paging packet hit by an engine reset")]
    assert system.kmt.GetDeviceState(app.device) == "RESET" and r.bugcheck is None
