"""Reference scenario 11: the guilty context. A's packet hangs while B and C have work queued on
the same engine.

Pass criteria: A's later submissions fail (device removed); B's and C's packets are submitted again
and complete; B and C see no error. With per-engine reset (DxgkDdiResetEngine) and with an
adapter-wide reset (DxgkDdiResetFromTimeout) alike."""

from __future__ import annotations

import pytest

from wddmsim.scenario import scenario_from_dict
from wddmsim.runner.system import System
from wddmsim.trace import ListSink

MS = 1_000_000
S = 1_000_000_000
ZERO = {"render": 0, "patch": 0, "submit": 0, "isr": 0, "dpc": 0, "present": 0}


@pytest.mark.parametrize("per_engine, reset_event", [(True, "EngineReset"), (False, "AdapterReset")])
def test_only_the_guilty_context_is_punished(per_engine, reset_event):
    work = [{"at": "1ms", "work": "5ms", "repeat": 3}]
    sc = scenario_from_dict({
        "name": "guilty", "duration": "10s",
        "adapter": {"cpu_cost": ZERO, "nodes": [{"name": "3D", "engine": "3d", "command_cost": 0,
                                                 "preemption": "interval"}]},
        "driver": {"ddi_version": "wddm2_0", "per_engine_reset": per_engine},
        "fault": [{"kind": "hang", "process": "A", "context": "c", "packet": 1}],
        "process": [
            {"name": "A", "context": [{"name": "c", "node": "3D", "workload": {
                "kind": "script", "packets": [{"at": 0, "work": "10ms"}, {"at": "5s", "work": "1ms"}]}}]},
            {"name": "B", "context": [{"name": "c", "node": "3D", "workload": {"kind": "script", "packets": work}}]},
            {"name": "C", "context": [{"name": "c", "node": "3D", "workload": {"kind": "script", "packets": work}}]},
        ],
    }, "<ref11>")
    trace = ListSink()
    system = System(sc, trace=trace)
    r = system.run()
    a, b, c = system.contexts
    (tdr,) = trace.of("TdrDetected")
    t = tdr["t"]
    assert (tdr["fence"], tdr["context"]) == (1, a.handle)
    (reset,) = trace.of(reset_event)
    assert (reset["t"], reset["device"]) == (t, a.device.handle)
    # A: its hung packet is aborted, its device is hung, its next submission (5 s) is refused.
    assert [(e["t"], e["seq"], e["status"]) for e in trace.of("QueuePacketStop") if e["context"] == a.handle] == [
        (t, 1, "Aborted")]
    assert [(e["t"], e["device"]) for e in trace.of("DeviceError")] == [(t, a.device.handle)]
    assert (a.removed_at, a.api_error) == (5 * S, "STATUS_DEVICE_REMOVED")
    assert system.kmt.GetDeviceState(a.device) == "HUNG"
    # B and C: what the reset took off the hardware is submitted again with Resubmission 1 and a
    # new fence id; all of their packets complete, in order, and neither sees an error.
    taken = [(e["context"], e["seq"]) for e in trace.of("DmaPacketStop") if e["t"] == t and e["status"] == "Reset"]
    assert taken and {ctx for ctx, _ in taken} <= {b.handle, c.handle}
    first_start = {}
    for e in trace.of("DmaPacketStart"):
        if e["t"] >= t:
            first_start.setdefault((e["context"], e["seq"]), e)
    assert all(first_start[p]["resubmission"] == 1 for p in taken)
    hdd = {b.handle: b.hDdi, c.handle: c.hDdi}
    resubmitted = [(e["args"]["hContext"], e["args"]["SubmissionFenceId"]) for e in trace.of("DdiCall")
                   if e["name"] == "DxgkDdiSubmitCommand" and e["t"] >= t and e["args"]["Flags"]["Resubmission"]]
    assert [(hdd[p[0]], first_start[p]["fence"]) for p in taken] == resubmitted[:len(taken)]
    assert all(first_start[p]["fence"] > tdr["fence"] for p in taken)
    for ctx in (b, c):
        done = [(e["seq"], e["status"]) for e in trace.of("QueuePacketStop") if e["context"] == ctx.handle]
        assert done == [(1, "Completed"), (2, "Completed"), (3, "Completed")]
        assert system.kmt.GetDeviceState(ctx.device) == "ACTIVE" and not ctx.api_error
    summary = {s["context"]: (s["completed"], s["aborted"], s["cancelled"], s["device_error"]) for s in r.summary["contexts"]}
    assert summary == {"A/c": (0, 1, 0, True), "B/c": (3, 0, 0, False), "C/c": (3, 0, 0, False)}
    assert r.bugcheck is None
