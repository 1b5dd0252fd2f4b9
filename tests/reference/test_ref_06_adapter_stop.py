"""Reference scenario 6: the adapter's GPU scheduler is stopped with work pending.

Pass criteria: the pending packet's fence completes with a cancelled status; the driver sees exactly
one cancel (DxgkDdiCancelCommand, for a packet that never reached the hardware) or one reset
(DxgkDdiResetFromTimeout, for the packets it holds) per packet; no CPU waiter hangs and nothing
leaks. Written as a scenario file uses it: ``[adapter] stop_at``."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from wddmsim.cli import main
from wddmsim.ddi.ntstatus import NTSTATUS
from wddmsim.scenario import scenario_from_dict
from wddmsim.runner.system import System
from wddmsim.trace import ListSink

MS = 1_000_000
ZERO = {"render": 0, "patch": 0, "submit": 0, "isr": 0, "dpc": 0, "present": 0}


def stop_scenario(processes, stop_at="5ms", **adapter):
    return scenario_from_dict({
        "name": "adapter_stop", "duration": "50ms",
        "adapter": {"cpu_cost": ZERO, "hw_queue_depth": 1, "stop_at": stop_at,
                    "nodes": [{"name": "3D", "engine": "3d", "command_cost": 0}], **adapter},
        "driver": {"cancel_aware": True},
        "process": [{"name": name, "context": [{"name": "c", "node": "3D", "workload": {
            "kind": "script", "packets": [{"at": at, "work": work} for at, work in packets]}}]}
            for name, packets in processes],
    }, "<ref06>")


def run_with_waiter(sc):
    """Run ``sc`` with a CPU thread waiting for the app's first packet (D3DKMT wait on its fence)."""
    trace = ListSink()
    system = System(sc, trace=trace)
    app = next(c for c in system.contexts if c.full_name == "app/c")
    baseline = system.adapter.pool.in_use
    woke = []

    def waiter():
        yield system.kmt.WaitForPacket(app, 1)
        woke.append(system.sim.now)

    system.sim.process(waiter())
    r = system.run()
    return system, trace, r, app, woke, baseline


def ddi(trace, name):
    return [e for e in trace.of("DdiCall") if e["name"] == name]


def test_a_packet_still_in_the_software_queue_is_cancelled_once():
    """The app's one packet waits behind another context's 10 ms packet (hardware queue depth 1):
    the stop at 5 ms cancels it through exactly one DxgkDdiCancelCommand, never a submission; the
    packet the driver holds is abandoned through exactly one adapter reset."""
    sc = stop_scenario([("busy", [(0, "10ms")]), ("app", [("1ms", "1ms"), ("20ms", "1ms")])])
    system, trace, r, app, woke, baseline = run_with_waiter(sc)
    busy = next(c for c in system.contexts if c.full_name == "busy/c")
    (stop,) = trace.of("AdapterStop")
    assert (stop["t"], stop["pending"], stop["on_hardware"]) == (5 * MS, 1, 1)
    # The app's packet: cancelled at 5 ms, its fence completing with status Cancelled.
    app_stops = [(e["t"], e["seq"], e["status"]) for e in trace.of("QueuePacketStop") if e["context"] == app.handle]
    assert app_stops == [(5 * MS, 1, "Cancelled")]
    cancels = ddi(trace, "DxgkDdiCancelCommand")
    assert [(e["t"], e["args"]["hContext"]) for e in cancels] == [(5 * MS, app.hDdi)]
    assert not [e for e in ddi(trace, "DxgkDdiSubmitCommand") if e["args"]["hContext"] == app.hDdi]
    # The busy context's packet, on the hardware: one reset, its fence also completes as cancelled.
    assert [e["t"] for e in ddi(trace, "DxgkDdiResetFromTimeout")] == [5 * MS]
    assert [e["t"] for e in ddi(trace, "DxgkDdiRestartFromTimeout")] == [5 * MS]
    assert [(e["t"], e["status"]) for e in trace.of("DmaPacketStop") if e["context"] == busy.handle] == [(5 * MS, "Reset")]
    assert [(e["t"], e["status"]) for e in trace.of("QueuePacketStop") if e["context"] == busy.handle] == [
        (5 * MS, "Cancelled")]
    # A stop is not a timeout.
    assert not trace.of("LiveDump") and not trace.of("TdrDetected") and r.bugcheck is None
    # The waiter wakes at the stop; the app's next submission, at 20 ms, meets STATUS_DEVICE_REMOVED.
    assert woke == [5 * MS]
    assert [(e["t"], e["reason"]) for e in trace.of("DeviceError")] == [(5 * MS, "adapter stopped")] * 2
    assert (app.removed_at, app.api_error) == (20 * MS, NTSTATUS.STATUS_DEVICE_REMOVED.name)
    # Nothing leaks: every packet buffer is back in the pool, every queue is empty.
    assert system.adapter.pool.in_use == baseline
    assert all(not c.queue for c in system.contexts) and all(not q.hw for q in system.adapter.vidsch.nodes)
    assert [(c["context"], c["submitted"], c["completed"], c["cancelled"]) for c in r.summary["contexts"]] == [
        ("busy/c", 1, 0, 1), ("app/c", 1, 0, 1)]


def test_a_packet_the_worker_holds_for_patching_is_cancelled_and_never_submitted():
    """The app's packet leaves its software queue at 1 ms for the worker, which patches and submits
    it in 100 us; the stop at 1.05 ms comes in between. The packet never reached the driver: it is
    pending (one DxgkDdiCancelCommand, its fence Cancelled) and nothing is submitted after the stop.
    (It used to be reported as nothing pending, then submitted at 1.1 ms and run to completion.)"""
    sc = stop_scenario([("app", [("1ms", "1ms")])], stop_at="1050us",
                       cpu_cost={**ZERO, "patch": "100us"})
    system, trace, r, app, woke, baseline = run_with_waiter(sc)
    (stop,) = trace.of("AdapterStop")
    assert (stop["t"], stop["pending"], stop["on_hardware"]) == (1_050_000, 1, 0)
    assert [(e["t"], e["args"]["hContext"]) for e in ddi(trace, "DxgkDdiCancelCommand")] == [(1_050_000, app.hDdi)]
    assert not ddi(trace, "DxgkDdiSubmitCommand") and not ddi(trace, "DxgkDdiPatch")
    assert not trace.of("DmaPacketQueued") and not trace.of("DmaPacketStart")
    assert [(e["t"], e["seq"], e["status"]) for e in trace.of("QueuePacketStop")] == [(1_050_000, 1, "Cancelled")]
    assert woke == [1_050_000] and r.bugcheck is None
    assert system.adapter.pool.in_use == baseline
    q = system.adapter.vidsch.nodes[0]
    assert (q.submitting, q.worker_busy, len(app.queue)) == (None, False, 0)
    assert [(c["context"], c["submitted"], c["completed"], c["cancelled"]) for c in r.summary["contexts"]] == [
        ("app/c", 1, 0, 1)]


def test_a_packet_the_driver_holds_is_reset_once_and_never_cancelled():
    """The app's one packet is on the hardware when the scheduler stops: exactly one reset, no
    DxgkDdiCancelCommand, and its fence completes as cancelled."""
    sc = stop_scenario([("app", [(0, "10ms")])])
    system, trace, r, app, woke, baseline = run_with_waiter(sc)
    (stop,) = trace.of("AdapterStop")
    assert (stop["t"], stop["pending"], stop["on_hardware"]) == (5 * MS, 0, 1)
    assert not ddi(trace, "DxgkDdiCancelCommand")
    assert [e["t"] for e in ddi(trace, "DxgkDdiResetFromTimeout")] == [5 * MS]
    assert [(e["t"], e["fence"], e["status"]) for e in trace.of("DmaPacketStop")] == [(5 * MS, 1, "Reset")]
    assert [(e["t"], e["fence"], e["status"]) for e in trace.of("QueuePacketStop")] == [(5 * MS, 1, "Cancelled")]
    assert woke == [5 * MS] and r.bugcheck is None
    assert system.adapter.pool.in_use == baseline
    # The GPU is idle after the stop: the engine ran 5 ms of the 10 ms packet, nothing after.
    assert system.gpu.engines[0].busy_ns == 5 * MS


def test_a_stop_with_nothing_pending_calls_the_driver_for_nothing():
    """The app's packet ran from 0 to 1 ms: the stop at 5 ms finds nothing pending, so the driver
    sees no cancel and no reset; the device still goes to error and the next submission, at 8 ms,
    meets STATUS_DEVICE_REMOVED."""
    sc = stop_scenario([("app", [(0, "1ms"), ("8ms", "1ms")])])
    system, trace, r, app, woke, baseline = run_with_waiter(sc)
    (stop,) = trace.of("AdapterStop")
    assert (stop["t"], stop["pending"], stop["on_hardware"]) == (5 * MS, 0, 0)
    assert not ddi(trace, "DxgkDdiResetFromTimeout") and not ddi(trace, "DxgkDdiCancelCommand")
    assert [(e["t"], e["status"]) for e in trace.of("QueuePacketStop")] == [(MS, "Completed")]
    assert [(e["t"], e["reason"]) for e in trace.of("DeviceError")] == [(5 * MS, "adapter stopped")]
    assert woke == [MS] and (app.removed_at, app.api_error) == (8 * MS, NTSTATUS.STATUS_DEVICE_REMOVED.name)
    assert system.adapter.pool.in_use == baseline


@pytest.mark.parametrize("adapter, driver, message", [
    ('stop_at = "20ms"', "", "adapter.stop_at: the adapter stop at 20ms is not before the end of the run (duration 10ms)"),
    ('stop_at = -3', "", "adapter.stop_at: a duration cannot be negative, got -3"),
    ('scheduling = "hardware"\nstop_at = "2ms"', '[driver]\nddi_version = "wddm2_7"\n',
     'adapter.stop_at: an adapter stop is modelled under the software scheduler only; remove stop_at or use '
     'scheduling = "software"'),
])
def test_a_bad_stop_at_is_one_line_naming_file_and_field_exit_2(tmp_path, adapter, driver, message):
    path = tmp_path / "stop.toml"
    path.write_text(f'duration = "10ms"\n[adapter]\n{adapter}\n{driver}[[process]]\nname = "a"\n[[process.context]]\n'
                    'name = "c"\nnode = "3D"\nworkload = { kind = "script", packets = [{ at = 0, work = "1ms" }] }\n')
    r = CliRunner().invoke(main, ["run", str(path)])
    assert r.exit_code == 2
    assert r.output == f"wddmsim: error: {path}: {message}\n"
