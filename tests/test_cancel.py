"""Cancelling packets (reference scenario 5; Microsoft's DxgkDdiCancelCommand page): a context
destroyed mid-flight has its queued packets cancelled (DxgkDdiCancelCommand for a
CancelCommandAware driver), its submitted packets finish, DxgkDdiDestroyContext comes after the last
one, no CPU waiter hangs and nothing leaks; a device in error after a TDR cancels the same way."""

from __future__ import annotations

import pytest

from wddmsim.ddi.bugcheck import BugCheckCode, VidSchError
from wddmsim.ddi.ntstatus import NTSTATUS
from wddmsim.runner.system import System
from wddmsim.trace import ListSink

from test_tdr import MS, build, ctx_summary, script

from wddm2util import scenario_of

ZERO = {"render": 0, "patch": 0, "submit": 0, "isr": 0, "dpc": 0, "present": 0}


def destroy_scenario(cancel_aware=None, faults=()):
    sc = scenario_of({
        "name": "destroy", "duration": "1s",
        "adapter": {"cpu_cost": ZERO, "cancel_aware": cancel_aware,
                    "nodes": [{"name": "3D", "engine": "3d", "command_cost": 0}]},
        "fault": list(faults),
        "process": [{"name": "app", "context": [{
            "name": "c", "node": "3D", "destroy_at": "2500us",
            "workload": {"kind": "script", "packets": [{"at": 0, "work": "1ms", "repeat": 10},
                                                       {"at": "10ms", "work": "1ms"}]}}]}],
    }, "<test>")
    trace = ListSink()
    return System(sc, trace=trace), trace


@pytest.mark.parametrize("aware", [None, False])
def test_destroyed_context_cancels_queued_packets_and_lets_submitted_ones_finish(aware):
    system, trace = destroy_scenario(cancel_aware=aware)
    ctx = system.contexts[0]
    woke = []

    def waiter():
        yield system.kmt.WaitForPacket(ctx, 10)  # a packet that will be cancelled
        woke.append(system.sim.now)

    system.sim.process(waiter())
    handle = ctx.hDriver
    pool_before = system.adapter.pool.in_use
    r = system.run()
    stops = [(e["t"], e["seq"], e["status"]) for e in trace.of("QueuePacketStop")]
    # At 2.5 ms packet 3 runs and packet 4 waits on the hardware queue (depth 2); 5..10 are still
    # in the software queue: cancelled at once. 3 and 4 finish.
    assert stops == [(1 * MS, 1, "Completed"), (2 * MS, 2, "Completed")] + \
        [(2_500_000, seq, "Cancelled") for seq in range(5, 11)] + \
        [(3 * MS, 3, "Completed"), (4 * MS, 4, "Completed")]
    cancels = [e for e in trace.of("DdiCall") if e["name"] == "DxgkDdiCancelCommand"]
    if aware is None:
        assert [e["t"] for e in cancels] == [2_500_000] * 6
        assert {e["args"]["hContext"] for e in cancels} == {handle}
        assert system.driver.cancelled == 6
    else:
        assert cancels == [] and system.driver.cancelled == 0
    destroys = [(e["t"], e["args"]["hContext"]) for e in trace.of("DdiCall") if e["name"] == "DxgkDdiDestroyContext"]
    assert destroys == [(4 * MS, handle)]
    assert [e["t"] for e in trace.of("ContextDestroy")] == [2_500_000]
    # The waiter for a cancelled packet woke at the destroy; the app's next call failed.
    assert woke == [2_500_000]
    c = ctx_summary(r, "app")
    assert (c["completed"], c["cancelled"], c["destroyed"], c["api_error"]) == (4, 6, True, "STATUS_INVALID_HANDLE")
    assert system.driver.contexts == {}
    # Nothing leaks: every packet's buffers went back to the kernel pool.
    assert system.adapter.pool.in_use == pool_before
    assert len(trace.of("QueuePacketStop")) == 10


@pytest.mark.rule(67)
def test_failing_cancel_command_is_bug_check_0x119_9():
    system, trace = destroy_scenario(faults=[{"kind": "ddi_error", "ddi": "DxgkDdiCancelCommand", "call": 2}])
    r = system.run()
    bc = r.bugcheck.bugcheck
    assert (bc.code, bc.p1, bc.p2) == (BugCheckCode.VIDEO_SCHEDULER_INTERNAL_ERROR, VidSchError.FAILED_CANCEL_COMMAND,
                                       int(NTSTATUS.STATUS_UNSUCCESSFUL))
    assert r.bugcheck.struct == "DXGKARG_CANCELCOMMAND" and r.end == 2_500_000


def test_device_in_error_cancels_its_queue_only_what_never_reached_the_hardware_through_the_driver():
    procs = [("bad", "3D", script((0, "10ms"), (0, "10ms"), (0, "10ms"), (0, "10ms")))]
    system, trace = build(procs, faults=[{"kind": "hang", "process": "bad", "context": "c", "packet": 1}])
    r = system.run()
    t = trace.of("EngineReset")[0]["t"]
    # Packet 1 hung and is aborted; 2 was on the hardware queue and is taken back, then cancelled
    # with 3 and 4 when the device goes to error. Only 3 and 4 never reached the hardware queue:
    # DxgkDdiCancelCommand is for them alone (rule 67).
    cancels = [(e["t"], e["args"]["DmaBufferSubmissionEndOffset"]) for e in trace.of("DdiCall")
               if e["name"] == "DxgkDdiCancelCommand"]
    assert [when for when, _ in cancels] == [t, t]
    stops = [(e["seq"], e["status"]) for e in trace.of("QueuePacketStop") if e["t"] == t]
    assert sorted(stops) == [(1, "Aborted"), (2, "Cancelled"), (3, "Cancelled"), (4, "Cancelled")]
    assert system.driver.cancelled == 2
    c = ctx_summary(r, "bad")
    assert (c["aborted"], c["cancelled"], c["completed"]) == (1, 3, 0)
