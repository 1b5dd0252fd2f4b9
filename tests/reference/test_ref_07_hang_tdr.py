"""Reference scenario 7: a packet that never completes ends in a TDR.

Pass criteria: the preemption request is made when the timeout starts; no DMA_PREEMPTED arrives
within TdrDelay (2 s); DxgkDdiResetFromTimeout, then DxgkDdiRestartFromTimeout; every submitted
fence id counts as completed; the device goes from active to hung and the application gets
device-removed; the TDR is counted."""

from __future__ import annotations

from wddmsim.scenario import scenario_from_dict
from wddmsim.runner.system import System
from wddmsim.trace import ListSink

MS = 1_000_000
S = 1_000_000_000
ZERO = {"render": 0, "patch": 0, "submit": 0, "isr": 0, "dpc": 0, "present": 0}


def test_a_hang_is_reset_after_an_unanswered_preemption_request():
    sc = scenario_from_dict({
        "name": "hang", "duration": "10s",
        "adapter": {"cpu_cost": ZERO, "nodes": [{"name": "3D", "engine": "3d", "command_cost": 0, "preemption": "interval"},
                                                {"name": "Copy", "engine": "copy", "command_cost": 0}]},
        "driver": {"ddi_version": "wddm2_0", "per_engine_reset": False},
        "fault": [{"kind": "hang", "process": "app", "context": "c", "packet": 1}],
        "process": [
            {"name": "app", "context": [{"name": "c", "node": "3D", "workload": {
                "kind": "script", "packets": [{"at": 0, "work": "10ms"}, {"at": "5s", "work": "1ms"}]}}]},
            {"name": "other", "context": [{"name": "c", "node": "Copy", "workload": {
                "kind": "script", "packets": [{"at": "1s", "work": "10ms"}, {"at": "4500ms", "work": "10ms"}]}}]},
        ],
    }, "<ref07>")
    trace = ListSink()
    system = System(sc, trace=trace)
    app, other = system.contexts
    states = []
    fences = []
    system.sim.at(4 * S - 1, lambda: states.append(system.kmt.GetDeviceState(app.device)))
    system.sim.at(4 * S + 1, lambda: fences.extend((q.last_completed, q.last_submitted)
                                                   for q in system.adapter.vidsch.nodes))
    r = system.run()
    # The watchdog asks for preemption 2 s after the packet started: TdrDelay starts with it.
    (req,) = trace.of("PreemptRequest")
    assert (req["t"], req["reason"], req["node"], req["running"]) == (2 * S, "watchdog", 0, app.handle)
    # No DMA_PREEMPTED answers it within TdrDelay (nor ever): the node times out exactly 2 s later.
    interrupts = [e["args"]["InterruptType"] for e in trace.of("Callback") if e["name"] == "DxgkCbNotifyInterrupt"]
    assert "DXGK_INTERRUPT_DMA_PREEMPTED" not in interrupts
    (tdr,) = trace.of("TdrDetected")
    assert (tdr["t"], tdr["reason"], tdr["fence"], tdr["context"]) == (req["t"] + 2 * S, "preemption_timeout", 1,
                                                                         app.handle)
    # The adapter-wide reset: ResetFromTimeout, then RestartFromTimeout, nothing else in between.
    calls = [(e["t"], e["name"]) for e in trace.of("DdiCall") if e["t"] == tdr["t"]]
    assert calls == [(4 * S, "DxgkDdiResetFromTimeout"), (4 * S, "DxgkDdiRestartFromTimeout")]
    # Right after the reset every submitted fence id counts as completed, on every node.
    assert fences == [(1, 1), (1, 1)]
    assert [(e["t"], e["fence"], e["status"]) for e in trace.of("DmaPacketStop") if e["context"] == app.handle] == [
        (4 * S, 1, "Aborted")]
    # Device state: active until the reset, hung after it; the app's next call (5 s) is refused.
    assert states == ["ACTIVE"] and system.kmt.GetDeviceState(app.device) == "HUNG"
    assert [(e["t"], e["device"], e["reason"]) for e in trace.of("DeviceError")] == [
        (4 * S, app.device.handle, "adapter reset")]
    assert (app.removed_at, app.api_error) == (5 * S, "STATUS_DEVICE_REMOVED")
    # The other process is untouched and goes on after the reset.
    assert system.kmt.GetDeviceState(other.device) == "ACTIVE"
    assert [(e["t"], e["status"]) for e in trace.of("QueuePacketStop") if e["context"] == other.handle] == [
        (S + 10 * MS, "Completed"), (4500 * MS + 10 * MS, "Completed")]
    # The TDR is counted: one adapter reset, one 0x117 live dump, no bug check.
    assert r.summary["tdr"] == {"engine_resets": 0, "adapter_resets": 1,
                                "live_dumps": [{"t": 4 * S, "code": 0x117, "p4": 0}]}
    assert r.bugcheck is None
