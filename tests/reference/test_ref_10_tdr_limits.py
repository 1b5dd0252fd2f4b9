"""Reference scenario 10: the TDR limits (TdrLimitCount 5 within TdrLimitTime 60 s).

Pass criteria: of 6 adapter hangs within 60 s the first 5 recover and the 6th stops the system;
engine timeouts are capped one lower and end with the application blocked from the GPU (0x142).

Which bug check the 6th hang is: every recovered hang writes a 0x117 VIDEO_TDR_TIMEOUT_DETECTED live
dump, but Microsoft's page for 0x117 says that code is never used for a real bug check; its page for
0x116 VIDEO_TDR_FAILURE says the system bug-checks with 0x116 when too many TDRs occur in a short
time (by default more than five in one minute). So the stop is 0x116, after five 0x117 live dumps."""

from __future__ import annotations

from wddmsim.ddi.bugcheck import BugCheckCode
from wddmsim.scenario import scenario_from_dict
from wddmsim.runner.system import System
from wddmsim.trace import ListSink

MS = 1_000_000
S = 1_000_000_000
ZERO = {"render": 0, "patch": 0, "submit": 0, "isr": 0, "dpc": 0, "present": 0}


def hangs(count, every, *, per_engine, duration="80s"):
    """``count`` processes, the i-th submitting one packet at ``i * every`` that hangs (the 3D
    engine stops 1 ms later)."""
    sc = scenario_from_dict({
        "name": "tdr_limits", "duration": duration,
        "adapter": {"cpu_cost": ZERO, "nodes": [{"name": "3D", "engine": "3d", "command_cost": 0,
                                                 "preemption": "interval"}]},
        "driver": {"ddi_version": "wddm2_0", "per_engine_reset": per_engine},
        "fault": [{"kind": "hang", "node": "3D", "at": i * every + MS} for i in range(count)],
        "process": [{"name": f"app{i}", "context": [{"name": "c", "node": "3D", "workload": {
            "kind": "script", "packets": [{"at": i * every, "work": "10ms"}, {"at": i * every + 4500 * MS,
                                                                            "work": "1ms"}]}}]}
            for i in range(count)],
    }, "<ref10>")
    trace = ListSink()
    system = System(sc, trace=trace)
    return system, trace, system.run()


def test_the_sixth_adapter_hang_within_a_minute_stops_the_system():
    system, trace, r = hangs(6, 5 * S, per_engine=False)
    # Each hang is reset 4 s after its packet started (watchdog 2 s, then TdrDelay 2 s).
    resets = [i * 5 * S + 4 * S for i in range(5)]
    assert [e["t"] for e in trace.of("AdapterReset")] == resets
    assert [(e["t"], e["code"]) for e in trace.of("LiveDump")] == [(t, 0x117) for t in resets]
    # The first five recover: each app's device is in error, the others run on.
    assert [(e["t"], e["device"]) for e in trace.of("DeviceError")] == [
        (t, c.device.handle) for t, c in zip(resets, system.contexts)]
    # The sixth, at 29 s, is more than TdrLimitCount within TdrLimitTime: bug check 0x116.
    assert [e["t"] for e in trace.of("TdrDetected")] == resets + [29 * S]
    bc = r.bugcheck.bugcheck
    assert (bc.code, bc.p4, r.end) == (BugCheckCode.VIDEO_TDR_FAILURE, 6, 29 * S)
    assert len(trace.of("AdapterReset")) == 5 and r.summary["tdr"]["adapter_resets"] == 5


def test_six_adapter_hangs_spread_over_more_than_a_minute_all_recover():
    """13 s apart the sixth hang (at 69 s) comes when the first has left the 60 s window."""
    system, trace, r = hangs(6, 13 * S, per_engine=False, duration="80s")
    assert [e["t"] for e in trace.of("AdapterReset")] == [i * 13 * S + 4 * S for i in range(6)]
    assert r.bugcheck is None and r.summary["tdr"]["adapter_resets"] == 6


def test_engine_timeouts_are_capped_one_lower_and_block_the_application():
    """With per-engine reset, four engine timeouts within the minute are tolerated
    (TdrLimitCount - 1); the fifth blocks the offending process from the GPU: a 0x142
    VIDEO_TDR_APPLICATION_BLOCKED live dump naming it, its devices in error. Nothing stops the
    system: engine timeouts do not count toward the adapter limit."""
    system, trace, r = hangs(6, 5 * S, per_engine=True)
    resets = [i * 5 * S + 4 * S for i in range(6)]
    assert [e["t"] for e in trace.of("EngineReset")] == resets
    dumps = [(e["t"], e["code"], e["p4"]) for e in trace.of("LiveDump")]
    blocked = system.contexts[4].process.pid
    # The fifth and the sixth (five and six within the minute) each block their process.
    sixth = system.contexts[5].process.pid
    assert dumps == [(t, 0x141, 0) for t in resets[:5]] + [(resets[4], 0x142, blocked), (resets[5], 0x141, 0),
                                                           (resets[5], 0x142, sixth)]
    assert r.bugcheck is None and r.summary["tdr"]["adapter_resets"] == 0
    # The blocked application's next call fails: device removed.
    assert (system.contexts[4].removed_at, system.contexts[4].api_error) == (resets[4] + 500 * MS, "STATUS_DEVICE_REMOVED")


def test_five_adapter_hangs_within_a_minute_all_recover():
    system, trace, r = hangs(5, 5 * S, per_engine=False, duration="40s")
    assert [e["t"] for e in trace.of("AdapterReset")] == [i * 5 * S + 4 * S for i in range(5)]
    assert r.bugcheck is None
