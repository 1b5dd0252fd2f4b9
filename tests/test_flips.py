"""Presents and flips on vsync (reference scenario 24; Microsoft's DXGK_SUBMITCOMMANDFLAGS,
D3DDDI_FLIPINTERVAL_TYPE and DXGK_FLIPCAPS pages): flips only at vsync, FlipInterval honoured, a
frame that misses its vsync shown one interval later, the flip queue limited by
MaxQueuedFlipOnVSync, composed presents dropped when replaced before a vsync, and each submission
flag (Present, Flip, FlipWithNoWait, RedirectedPresent) in the event log with VidPnSourceId and
FlipInterval. Exact virtual times on a 60 Hz grid (period 16 666 667 ns). The DMA-buffer flip path:
a driver without DXGK_FLIPCAPS.FlipOnVSyncMmIo (tests/test_mmio_flips.py has the MMIO path)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from wddmsim.cli import main
from wddmsim.scenario import ScenarioError, scenario_from_dict
from wddmsim.runner.system import System
from wddmsim.trace import ListSink

ZERO = {"render": 0, "patch": 0, "submit": 0, "isr": 0, "dpc": 0, "present": 0}
MS = 1_000_000
V = 16_666_667  # one refresh at 60 Hz, ns


#: A reference driver whose flips are DMA-buffer commands: it declares no FlipOnVSyncMmIo (and so is
#: not PreemptionAware, which needs it: rule 64). These tests are the DMA-buffer flip path, which stays
#: for such drivers; tests/test_mmio_flips.py has the MMIO path the reference driver takes by default.
DMA_FLIPS = {"mmio_flips": False, "preemption_aware": False}


def run(mode, fps, *, interval=1, work="1ms", count=12, max_queued=1, displays=(60.0,), source=0):
    sc = scenario_from_dict({
        "name": "flip", "duration": "400ms", "driver": DMA_FLIPS,
        "adapter": {"cpu_cost": ZERO, "max_queued_flips": max_queued, "displays": list(displays),
                    "nodes": [{"name": "3D", "engine": "3d", "command_cost": 0}]},
        "process": [{"name": "game", "context": [{"name": "c", "node": "3D", "workload": {
            "kind": "frame_loop", "fps": fps, "work": work, "present_mode": mode, "sync_interval": interval,
            "count": count, "vidpn_source": source}}]}],
    }, "<test>")
    trace = ListSink()
    system = System(sc, trace=trace)
    r = system.run()
    assert r.bugcheck is None and r.summary["violations"] == []
    return system, trace, r


def displayed(trace):
    return [(e["displayed"], e["latency"]) for e in trace.of("Displayed")]


def test_flips_happen_only_at_vsync_and_frames_pace_at_50_fps():
    system, trace, r = run("flip", 50)
    # Frame n is presented at 20n ms (+1 ms of GPU work) and shown at the first vsync after.
    shown = displayed(trace)
    assert [t for t, _ in shown] == [k * V for k in (1, 2, 3, 4, 5, 7, 8, 9, 10, 11, 13, 14)]
    assert all(t % V == 0 for t, _ in shown)
    assert [lat for _, lat in shown[:6]] == [V, 2 * V - 20 * MS, 3 * V - 40 * MS, 4 * V - 60 * MS, 5 * V - 80 * MS,
                                             7 * V - 100 * MS]
    vs = [e for e in trace.of("Callback") if "CrtcVsync" in e.get("args", {})]
    # The first flip (presented at 0) turns the vsync interrupt on: from then on every vsync is
    # reported, a flip latched there or not (6V and 12V show nothing new), to the end of the run
    # at 400 ms; 10 idle vsyncs after the last flip (14V) would turn it off at 24V, past the end.
    assert [e["t"] for e in vs] == [k * V for k in range(1, 24)]
    control = [(e["t"], e["args"]) for e in trace.of("DdiCall") if e["name"] == "DxgkDdiControlInterrupt"]
    assert control == [(0, {"InterruptType": "DXGK_INTERRUPT_CRTC_VSYNC", "EnableInterrupt": 1})]
    # DxgKrnl-style events: one Flip per flip handed to the driver, one VSync per vsync reported,
    # with the address the source scans out then: the flip's at a latch, the previous one's between.
    flips = trace.of("Flip")
    assert len(flips) == 12 and {(f["interval"], f["no_wait"], f["source"]) for f in flips} == {(1, 0, 0)}
    latched = dict(zip((t for t, _ in shown), (f["surface"] for f in flips)))
    scanned, expect = 0, []
    for k in range(1, 24):
        scanned = latched.get(k * V, scanned)
        expect.append((k * V, scanned))
    assert [(e["t"], e["address"]) for e in trace.of("VSync")] == expect
    assert all(e["irql"] == "DIRQL" and e["args"]["CrtcVsync"]["VidPnTargetId"] == 0 for e in vs)
    d = r.summary["displays"][0]
    assert (d["presents"], d["displayed"], d["dropped"]) == (12, 12, 0)
    # Every fifth frame stays up for two refreshes: 16.67 ms (the exact shortest, 16,666,667 ns) and 33.33 ms between display changes.
    assert (d["frame_time_p50_ns"], d["frame_time_p99_ns"]) == (16_666_667, 33_330_000)


def test_at_100_fps_with_interval_1_the_application_is_held_to_the_refresh():
    system, trace, r = run("flip", 100)
    shown = displayed(trace)
    assert [t for t, _ in shown] == [k * V for k in range(1, 13)]  # one flip per vsync, none dropped
    # Latency grows until the frame queue is full (3 frames ahead + the flip waiting), then holds.
    assert [lat for _, lat in shown][-4:] == [4 * V] * 4
    assert r.summary["displays"][0]["dropped"] == 0


def test_a_frame_whose_gpu_work_misses_the_vsync_is_shown_one_interval_later():
    system, trace, r = run("flip", 20, work="17ms", count=3)
    # 17 ms of work ends after the 16.67 ms vsync: each frame waits for the next one.
    assert displayed(trace) == [(2 * V, 2 * V), (5 * V, 5 * V - 50 * MS), (8 * V, 8 * V - 100 * MS)]


@pytest.mark.parametrize("interval,expected", [
    (0, [(k * 10 * MS + MS, MS) for k in range(4)]),            # immediate: shown when its packet ends
    (2, [(V, V), (3 * V, 3 * V - 20 * MS), (5 * V, 5 * V - 40 * MS), (7 * V, 7 * V - 60 * MS)]),
])
def test_flip_interval_is_honoured(interval, expected):
    fps = 100 if interval == 0 else 50
    system, trace, r = run("flip", fps, interval=interval, count=4)
    assert displayed(trace) == expected
    flips = [e for e in trace.of("DdiCall") if e["name"] == "DxgkDdiSubmitCommand" and e["args"]["Flags"]["Flip"]]
    assert {e["args"]["FlipInterval"] for e in flips} == {interval}


@pytest.mark.rule(90)
@pytest.mark.parametrize("max_queued", [1, 2])
def test_the_flip_queue_holds_at_most_max_queued_flips(max_queued):
    system, trace, r = run("flip_no_wait", 100, max_queued=max_queued)
    assert system.adapter.caps.MaxQueuedFlipOnVSync == max_queued
    pending, most = 0, 0
    for e in trace.events:
        if e["event"] == "DmaPacketQueued" and e["kind"] == "present":
            pending += 1
            most = max(most, pending)
        elif e["event"] in ("Displayed", "Dropped"):
            pending -= 1
    assert most == max_queued
    assert [t for t, _ in displayed(trace)] == [k * V for k in range(1, 13)]


def test_composed_presents_replaced_before_a_vsync_are_dropped():
    system, trace, r = run("composed", 100)
    d = r.summary["displays"][0]
    # 12 presents 10 ms apart over 7 refreshes: each vsync shows the newest, the others are dropped.
    assert (d["presents"], d["displayed"], d["dropped"]) == (12, 7, 5)
    assert [t for t, _ in displayed(trace)] == [k * V for k in range(1, 8)]
    renders = [e for e in trace.of("DdiCall") if e["name"] == "DxgkDdiSubmitCommand"
               and e["args"]["Flags"]["RedirectedPresent"]]
    assert len(renders) == 12 and all(not e["args"]["Flags"]["Present"] for e in renders)


@pytest.mark.parametrize("mode,flags", [
    ("blt", {"Present": 1, "Flip": 0, "FlipWithNoWait": 0, "RedirectedPresent": 0}),
    ("flip", {"Present": 1, "Flip": 1, "FlipWithNoWait": 0, "RedirectedPresent": 0}),
    ("flip_no_wait", {"Present": 1, "Flip": 1, "FlipWithNoWait": 1, "RedirectedPresent": 0}),
    ("composed", {"Present": 0, "Flip": 0, "FlipWithNoWait": 0, "RedirectedPresent": 1}),
])
def test_each_present_flag_in_the_event_log(mode, flags):
    system, trace, r = run(mode, 50, count=2, displays=(60.0, 144.0), source=1)
    subs = [e["args"] for e in trace.of("DdiCall") if e["name"] == "DxgkDdiSubmitCommand"]
    presents = [a for a in subs if a["Flags"]["Present"] or a["Flags"]["RedirectedPresent"]]
    assert len(presents) == 2
    for a in presents:
        assert {k: a["Flags"][k] for k in flags} == flags
        # VidPnSourceId and FlipInterval carry meaning only with the flip flags (rule 9).
        assert a["VidPnSourceId"] == (1 if flags["Flip"] else 0)
        assert a["FlipInterval"] == (1 if flags["Flip"] and not flags["FlipWithNoWait"] or
                                     flags["Flip"] else 0)
    d = r.summary["displays"]
    assert d[0]["presents"] == 0 and d[1]["presents"] == 2 and d[1]["refresh_hz"] == 144.0
    assert all(t % round(1e9 / 144) == 0 for t, _ in displayed(trace))


def test_vidpn_source_must_exist():
    with pytest.raises(ScenarioError, match=r"vidpn_source: VidPn source 1 does not exist"):
        scenario_from_dict({"name": "x", "process": [{"name": "g", "context": [{"name": "c", "node": "3D", "workload": {
            "kind": "frame_loop", "fps": 60, "work": "1ms", "vidpn_source": 1}}]}]}, "<t>")


def test_flips_example_shows_the_display_table():
    r = CliRunner().invoke(main, ["run", "examples/flips.toml"])
    assert r.exit_code == 0, r.output
    assert "Displays" in r.output and "60 Hz" in r.output and "144 Hz" in r.output


def test_null_rendered_flips_are_dropped_and_free_the_flip_queue():
    sc = scenario_from_dict({
        "name": "flip", "duration": "200ms",
        "adapter": {"cpu_cost": ZERO, "null_rendering": True, "nodes": [{"name": "3D", "engine": "3d", "command_cost": 0}]},
        "process": [{"name": "game", "context": [{"name": "c", "node": "3D", "workload": {
            "kind": "frame_loop", "fps": 100, "work": "1ms", "present_mode": "flip", "count": 6}}]}],
    }, "<test>")
    trace = ListSink()
    r = System(sc, trace=trace).run()
    d = r.summary["displays"][0]
    # Nothing ran, so nothing was shown; no flip waits in the queue forever.
    assert (d["presents"], d["displayed"], d["dropped"]) == (6, 0, 6)
    assert r.summary["contexts"][0]["completed"] == 12


# -- the OS sends only the flips the driver declared (rules 87, 88) ------------------------------------------
from wddmsim.ddi.bugcheck import BugCheckCode  # noqa: E402
from wddmsim.kmd import ReferenceDriver  # noqa: E402
from zoo.flips import FlipsAtTheNextVsync


def _with_flip_caps(**caps):
    class Caps(ReferenceDriver):
        def _caps(self):
            c = super()._caps()
            for name, value in caps.items():
                setattr(c.FlipCaps, name, value)
            return c
    return Caps


def _system(mode, interval, driver, fps=30):
    sc = scenario_from_dict({
        "name": "caps", "duration": "200ms", "driver": DMA_FLIPS,
        "adapter": {"cpu_cost": ZERO, "nodes": [{"name": "3D", "engine": "3d", "command_cost": 0}]},
        "process": [{"name": "game", "context": [{"name": "c", "node": "3D", "workload": {
            "kind": "frame_loop", "fps": fps, "work": "1ms", "present_mode": mode, "sync_interval": interval,
            "count": 4}}]}],
    }, "<test>")
    trace = ListSink()
    return System(sc, trace=trace, driver=driver), trace


@pytest.mark.rule(87)
def test_without_flip_on_vsync_with_no_wait_the_os_sends_waiting_flips_rule_87():
    system, trace = _system("flip_no_wait", 1, _with_flip_caps(FlipOnVSyncWithNoWait=0))
    r = system.run()
    assert r.bugcheck is None and r.summary["displays"][0]["displayed"] == 4
    flips = [e["args"]["Flags"] for e in trace.of("DdiCall")
             if e["name"] == "DxgkDdiSubmitCommand" and e["args"]["Flags"]["Present"]]
    assert [(f["Flip"], f["FlipWithNoWait"]) for f in flips] == [(1, 0)] * 4
    assert {e["mode"] for e in trace.of("Present")} == {"flip"}


@pytest.mark.rule(88)
def test_without_flip_interval_intervals_two_to_four_fail_the_call_rule_88():
    system, trace = _system("flip", 2, _with_flip_caps(FlipInterval=0))
    r = system.run()
    assert r.bugcheck is None and not trace.of("Flip")
    assert r.summary["contexts"][0]["api_error"] == "STATUS_NOT_SUPPORTED"
    # Interval 1 (and 0) is always supported.
    system, trace = _system("flip", 1, _with_flip_caps(FlipInterval=0))
    assert system.run().summary["displays"][0]["displayed"] == 4


@pytest.mark.rule(88)
def test_a_flip_that_takes_effect_before_its_interval_breaks_rule_88():
    system, trace = _system("flip", 2, FlipsAtTheNextVsync, fps=100)
    r = system.run()
    bc = r.bugcheck
    assert (bc.bugcheck.code, bc.bugcheck.p1, bc.rule_name) == (BugCheckCode.DRIVER_VERIFIER_DETECTED_VIOLATION, 88,
                                                                  "FlipIntervalSupported")
    # Frame 1 is shown at the first vsync; frame 2 (presented at 10 ms) at the next one, one period
    # later where FlipInterval 2 asks for two. The reference driver shows it at 3V.
    assert r.end == 2 * V and bc.struct == "DXGKARGCB_NOTIFY_INTERRUPT_DATA"
    assert f"{V} ns after the previous flip took effect" in bc.message
