"""Reference scenario 8: a false timeout. A 5 s packet on an engine that can be preempted is long,
not hung: the watchdog's preemption request is acknowledged within TdrDelay, so nothing is reset;
the packet is submitted again with Flags.Resubmission; it finishes, and the engine spent exactly
5 s on it.

The fence id of the resubmission: Microsoft's "GPU preemption" page (Windows 8 model) says that
preempted non-paging commands are resubmitted with newly assigned fence ids, and only preempted
paging commands keep their original ones. The model follows it, so the resubmissions carry new
fence ids (3 and 5), not the first submission's 1; the packet is still the same one (its seq and
its context)."""

from __future__ import annotations

from wddmsim.scenario import scenario_from_dict
from wddmsim.runner.system import System
from wddmsim.trace import ListSink

S = 1_000_000_000
TDR_DELAY = 2 * S
ZERO = {"render": 0, "patch": 0, "submit": 0, "isr": 0, "dpc": 0, "present": 0}


def test_a_long_preemptible_packet_is_preempted_and_resubmitted_not_reset():
    sc = scenario_from_dict({
        "name": "long_job", "duration": "10s",
        "adapter": {"cpu_cost": ZERO, "nodes": [{"name": "3D", "engine": "3d", "command_cost": 0,
                                                 "preemption": "interval"}]},
        "driver": {"ddi_version": "wddm2_0"},
        "process": [{"name": "app", "context": [{"name": "c", "node": "3D", "workload": {
            "kind": "script", "packets": [{"at": 0, "work": "5s"}]}}]}],
    }, "<ref08>")
    trace = ListSink()
    system = System(sc, trace=trace)
    r = system.run()
    (app,) = system.contexts
    # The watchdog asks for preemption at 2 s and (after the resubmission ran 2 s more) at 4 s.
    requests = [(e["t"], e["reason"], e["fence"]) for e in trace.of("PreemptRequest")]
    assert requests == [(2 * S, "watchdog", 2), (4 * S, "watchdog", 4)]
    # Each is acknowledged by DMA_PREEMPTED well within TdrDelay (at once: interval granularity).
    answers = [(e["t"], e["args"]["DmaPreempted"]["PreemptionFenceId"]) for e in trace.of("Callback")
               if e["name"] == "DxgkCbNotifyInterrupt" and e["args"]["InterruptType"] == "DXGK_INTERRUPT_DMA_PREEMPTED"]
    assert answers == [(2 * S, 2), (4 * S, 4)]
    assert all(t - req < TDR_DELAY for (t, _), (req, _, _) in zip(answers, requests))
    # So no timeout and no reset of any kind.
    assert not trace.of("TdrDetected") and not trace.of("LiveDump")
    assert not [e for e in trace.of("DdiCall") if e["name"] in (
        "DxgkDdiResetEngine", "DxgkDdiResetFromTimeout", "DxgkDdiRestartFromTimeout")]
    assert r.summary["tdr"] == {"engine_resets": 0, "adapter_resets": 0, "live_dumps": []}
    # The same packet (seq 1) is submitted three times: first with Resubmission 0, then twice with
    # Resubmission 1, each time under a new fence id (see the module doc).
    subs = [(e["t"], e["args"]["SubmissionFenceId"], e["args"]["Flags"]["Resubmission"])
            for e in trace.of("DdiCall") if e["name"] == "DxgkDdiSubmitCommand"]
    assert subs == [(0, 1, 0), (2 * S, 3, 1), (4 * S, 5, 1)]
    starts = [(e["t"], e["seq"], e["fence"], e["resubmission"]) for e in trace.of("DmaPacketStart")]
    assert starts == [(0, 1, 1, 0), (2 * S, 1, 3, 1), (4 * S, 1, 5, 1)]
    assert [(e["t"], e["fence"], e["status"]) for e in trace.of("DmaPacketStop")] == [
        (2 * S, 1, "Preempted"), (4 * S, 3, "Preempted"), (5 * S, 5, "Completed")]
    # It finishes at 5 s, and the engine's own busy time is still 5 s.
    assert [(e["t"], e["seq"], e["status"]) for e in trace.of("QueuePacketStop")] == [(5 * S, 1, "Completed")]
    assert system.gpu.engines[0].busy_ns == 5 * S
    c = r.summary["contexts"][0]
    assert (c["submitted"], c["completed"], c["preempted"], c["device_error"]) == (1, 1, 2, False)
    assert system.kmt.GetDeviceState(app.device) == "ACTIVE" and r.bugcheck is None
