"""The periodic vsync interrupt and DxgkDdiControlInterrupt: the OS turns DXGK_INTERRUPT_CRTC_VSYNC
on while a flip waits for its vsync or a thread waits for a vertical blank, the display then raises
it at every vsync whether a flip latched or not, and a VSyncPowerSaveAware driver's interrupt goes
off after 10 idle vsyncs (Microsoft's DxgkDdiControlInterrupt, DXGK_VIDSCHCAPS and "Saving energy
with VSync control" pages). Exact virtual times on a 60 Hz grid (period 16 666 667 ns)."""

from __future__ import annotations

import pytest

from wddmsim.ddi.bugcheck import BugCheckCode
from wddmsim.scenario import scenario_from_dict
from wddmsim.runner.system import System
from wddmsim.trace import ListSink

ZERO = {"render": 0, "patch": 0, "submit": 0, "isr": 0, "dpc": 0, "present": 0}
V = 16_666_667  # one refresh at 60 Hz, ns
CRTC = "DXGK_INTERRUPT_CRTC_VSYNC"


def system(workload=None, *, duration="400ms", driver=None, displays=(60.0,)):
    ctx = [{"name": "c", "node": "3D", "workload": workload}] if workload else []
    sc = scenario_from_dict({
        "name": "vsync", "duration": duration,
        "adapter": {"cpu_cost": ZERO, "displays": list(displays),
                    "nodes": [{"name": "3D", "engine": "3d", "command_cost": 0}]},
        **({"driver": driver} if driver else {}),
        "process": [{"name": "app", "context": ctx}] if ctx else [],
    }, "<test>")
    trace = ListSink()
    return System(sc, trace=trace), trace


def one_flip(count=1):
    return {"kind": "frame_loop", "fps": 60, "work": "1ms", "present_mode": "flip", "sync_interval": 1,
            "count": count}


def control_calls(trace):
    return [(e["t"], e["args"]["EnableInterrupt"], e["status"]) for e in trace.of("DdiCall")
            if e["name"] == "DxgkDdiControlInterrupt"]


def test_vsync_interrupts_at_every_period_while_on_and_none_after_the_idle_turn_off():
    s, trace = system(one_flip())
    r = s.run()
    assert r.bugcheck is None and r.summary["violations"] == []
    # The flip presented at 0 turns the interrupt on; the flip shows at V; 2V..11V are ten idle
    # vsyncs (nothing pending, nothing shown), so the OS turns it off at 11V.
    assert control_calls(trace) == [(0, 1, "STATUS_SUCCESS"), (11 * V, 0, "STATUS_SUCCESS")]
    assert [(e["t"], e["enabled"], e["reason"]) for e in trace.of("VSyncControl")] == [
        (0, 1, "flip"), (11 * V, 0, "idle")]
    shown = trace.of("Displayed")
    assert [e["displayed"] for e in shown] == [V]
    surface = trace.of("Flip")[0]["surface"]
    assert [(e["t"], e["address"]) for e in trace.of("VSync")] == [(k * V, surface) for k in range(1, 12)]
    # Every report came from the ISR, one interrupt per vsync; nothing after the turn-off.
    isr = [e["t"] for e in trace.of("Callback") if e["args"].get("InterruptType") == CRTC]
    assert isr == [k * V for k in range(1, 12)]
    display = s.gpu.displays[0]
    assert (display.vsync_interrupt, display.ticks) == (False, 11)
    assert s.adapter.vsync.enabled is False and (s.adapter.vsync.enables, s.adapter.vsync.disables) == (1, 1)


def test_an_idle_display_with_the_interrupt_off_schedules_nothing():
    s, trace = system(one_flip(), duration="10s")
    s.run(until=400_000_000)
    # After the turn-off at 11V the only timer left is the OS's TDR watchdog: the display
    # schedules nothing, and 10 s of run add no vsync, interrupt or timer of its own.
    assert [fn.__name__ for _key, _seq, fn, _arg in s.sim._heap if fn is not None] == ["_watchdog"]
    s.run()
    assert [e["t"] for e in trace.of("VSync")] == [k * V for k in range(1, 12)]
    assert s.sim.peek() is None and s.gpu.displays[0].ticks == 11
    # A run with no flip never turns the interrupt on at all.
    s, trace = system({"kind": "script", "packets": [{"at": 0, "work": "1ms", "repeat": 3}]}, duration="1s")
    s.run()
    assert control_calls(trace) == [] and trace.of("VSync") == [] and s.gpu.displays[0].ticks == 0


def test_a_vertical_blank_wait_turns_the_interrupt_on_and_wakes_at_the_next_vsync():
    s, trace = system({"kind": "script", "packets": [{"at": 0, "work": "1ms"}]}, duration="1s",
                      displays=(60.0, 50.0))
    woke = []

    def waiter():
        t = yield s.kmt.WaitForVerticalBlankEvent(1)  # 50 Hz: vsyncs at k x 20 ms
        woke.append((s.sim.now, t))
        s.sim.process(later())

    def later():
        yield 300_000_000  # idle for 300 ms, then wait again: on again, from the next vsync
        t = yield s.kmt.WaitForVerticalBlankEvent(1)
        woke.append((s.sim.now, t))

    s.sim.process(waiter())
    s.run()
    assert woke == [(20_000_000, 20_000_000), (340_000_000, 340_000_000)]
    # Both sources tick while on (the DDI names no source) and each counts its own idle vsyncs (a
    # vsync that only wakes a waiter shows nothing new): the interrupt goes off when both have had
    # ten, source 1 (20 ms) at 200 ms, source 0 (V) at 10V = 166.7 ms, so at 200 ms; on again at
    # 320 ms for the second wait, off again ten 50 Hz vsyncs after 340 ms.
    assert control_calls(trace) == [(0, 1, "STATUS_SUCCESS"), (200_000_000, 0, "STATUS_SUCCESS"),
                                    (320_000_000, 1, "STATUS_SUCCESS"), (520_000_000, 0, "STATUS_SUCCESS")]
    assert [e["reason"] for e in trace.of("VSyncControl")] == ["vblank", "idle", "vblank", "idle"]
    src1 = [e["t"] for e in trace.of("VSync") if e["source"] == 1]
    assert src1 == [20_000_000 * k for k in range(1, 11)] + [20_000_000 * k for k in range(17, 27)]
    src0 = [e["t"] for e in trace.of("VSync") if e["source"] == 0]
    assert src0 == [k * V for k in range(1, 12)] + [k * V for k in range(20, 32)]


def test_without_vsync_power_save_the_interrupt_stays_on():
    s, trace = system(one_flip(), driver={"vsync_power_save_aware": False})
    s.run()
    assert s.adapter.caps.VSyncPowerSaveAware is False
    assert control_calls(trace) == [(0, 1, "STATUS_SUCCESS")]
    assert [e["t"] for e in trace.of("VSync")] == [k * V for k in range(1, 24)]  # to the end, 400 ms


def test_control_interrupt_answers_not_implemented_for_other_types():
    from wddmsim.ddi.enums import DXGK_INTERRUPT_TYPE as T
    from wddmsim.ddi.ntstatus import NTSTATUS

    s, _ = system(one_flip())
    drv = s.adapter.driver
    assert drv.DxgkDdiControlInterrupt(drv.hAdapter, int(T.DXGK_INTERRUPT_DMA_COMPLETED), True) == int(
        NTSTATUS.STATUS_NOT_IMPLEMENTED)
    assert not s.gpu.displays[0].vsync_interrupt


def test_every_driver_implements_control_interrupt():
    from wddmsim.dxgkrnl.errors import AdapterStartError
    from wddmsim.kmd import ReferenceDriver

    class NoVsyncControl(ReferenceDriver):
        DxgkDdiControlInterrupt = None

    sc = system(one_flip())[0].scenario
    with pytest.raises(AdapterStartError) as err:
        System(sc, driver=NoVsyncControl)
    assert err.value.problems == ["DxgkDdiControlInterrupt is missing: every driver implements it"]


def test_under_hardware_scheduling_the_isr_reports_the_vsyncs_too():
    sc = scenario_from_dict({
        "name": "hw", "duration": "300ms", "driver": {"ddi_version": "wddm2_7"},
        "adapter": {"cpu_cost": ZERO, "scheduling": "hardware",
                    "nodes": [{"name": "3D", "engine": "3d", "command_cost": 0},
                              {"name": "Copy", "engine": "copy", "command_cost": 0}]},
        "process": [{"name": "app", "context": [{"name": "c", "node": "3D", "workload": {
            "kind": "script", "packets": [{"at": 0, "work": "1ms"}]}}]}],
    }, "<test>")
    trace = ListSink()
    s = System(sc, trace=trace)
    woke = []

    def waiter():
        woke.append((yield s.kmt.WaitForVerticalBlankEvent(0)))

    s.sim.process(waiter())
    r = s.run()
    assert r.bugcheck is None and woke == [V]
    assert [e["t"] for e in trace.of("VSync")] == [k * V for k in range(1, 11)]
    assert control_calls(trace) == [(0, 1, "STATUS_SUCCESS"), (10 * V, 0, "STATUS_SUCCESS")]


@pytest.mark.rule(48)
def test_a_driver_silent_while_the_interrupt_is_on_breaks_rule_48():
    from zoo.flips import IgnoresVsyncControl

    sc = system(one_flip())[0].scenario
    trace = ListSink()
    r = System(sc, trace=trace, driver=IgnoresVsyncControl).run()
    # The flip latched at V is reported (a latch raises the cause without the periodic interrupt);
    # then nothing: more than two periods after V, at 3V + 1 ns, the verifier stops.
    bc = r.bugcheck
    assert (bc.bugcheck.code, bc.bugcheck.p1, bc.rule, bc.rule_name) == (
        BugCheckCode.DRIVER_VERIFIER_DETECTED_VIOLATION, 48, 48, "VsyncReportedWhileEnabled")
    assert r.end == 3 * V + 1 and [e["t"] for e in trace.of("VSync")] == [V]
    assert (f"no CRTC_VSYNC was reported for VidPn source 0 from {V} to {3 * V + 1} ns, more than 2 refresh "
            f"periods ({2 * V} ns)") in bc.message


def test_the_reference_driver_keeps_rule_48_and_the_run_counts_it_exercised():
    s, _ = system(one_flip())
    r = s.run()
    assert r.bugcheck is None and r.summary["violations"] == []
    assert 48 in s.adapter.rules_exercised()
