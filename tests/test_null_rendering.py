"""Flags.NullRendering end to end (Microsoft's DXGK_SUBMITCOMMANDFLAGS page; rule 14): the driver
still inserts the packet and raises its fence, the GPU executes none of it, and what is left is the
submission path's own cost. Asserted in virtual time and on the event log."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from wddmsim.cli import main
from wddmsim.ddi.bugcheck import BugCheckCode
from wddmsim.gpu import commands as C
from wddmsim.kmd import ReferenceDriver
from wddmsim.scenario import scenario_from_dict
from wddmsim.runner.system import System
from wddmsim.trace import ListSink

COSTS = {"render": 5_000, "patch": 0, "submit": 2_000, "isr": 1_000, "dpc": 2_000, "present": 0}


def build(packets, *, null_rendering=False, driver=None, verifier="strict"):
    sc = scenario_from_dict({
        "name": "null", "duration": "1s",
        "adapter": {"nodes": [{"name": "3D", "engine": "3d", "command_cost": 0}], "cpu_cost": COSTS,
                    "null_rendering": null_rendering},
        "process": [{"name": "app", "context": [{"name": "c", "node": "3D", "workload": {
            "kind": "script", "packets": packets}}]}],
    }, "<test>")
    trace = ListSink()
    return System(sc, trace=trace, driver=driver, verifier=verifier), trace


def stops(trace):
    return [(e["t"], e["event"], e["fence"]) for e in trace.of("DmaPacketStop", "QueuePacketStop")]


def test_scenario_switch_leaves_only_the_submission_cost():
    system, trace = build([{"at": 0, "work": "1ms"}], null_rendering=True)
    r = system.run()
    # render 5 us -> queued at 5 us; patch+submit 2 us -> submitted at 7 us; the ring holds only the
    # fence, which lands at once; the ISR's 1 us, then the DPC retires it at 8 us.
    assert [(e["t"], e["event"]) for e in trace.of("QueuePacketStart", "DmaPacketStart")] == [
        (5_000, "QueuePacketStart"), (7_000, "DmaPacketStart")]
    assert stops(trace) == [(7_000, "DmaPacketStop", 1), (8_000, "QueuePacketStop", 1)]
    engine = system.gpu.engines[0]
    assert engine.busy_ns == 0 and engine.packets == 1  # one ring packet: the FENCE, no INDIRECT
    call = next(e for e in trace.of("DdiCall") if e["name"] == "DxgkDdiSubmitCommand")
    assert call["args"]["Flags"]["NullRendering"] == 1
    # The OS still hands the driver the whole range; the driver chose not to run it.
    assert call["args"]["DmaBufferSubmissionEndOffset"] == len(C.work(0))
    ctx = r.summary["contexts"][0]
    assert r.summary["null_rendering_packets"] == 1 and ctx["null_rendering"] == 1
    assert ctx["latency_max_ns"] == 3_000
    assert r.summary["violations"] == []


def test_without_the_switch_the_same_packet_runs_its_millisecond():
    system, trace = build([{"at": 0, "work": "1ms"}])
    r = system.run()
    assert stops(trace) == [(1_007_000, "DmaPacketStop", 1), (1_008_000, "QueuePacketStop", 1)]
    assert system.gpu.engines[0].busy_ns == 1_000_000
    assert r.summary["null_rendering_packets"] == 0


@pytest.mark.rule(34)
def test_per_submission_option_and_cumulative_completion():
    # A real 1 ms packet, then a NullRendering one queued behind it at the same moment: the second's
    # fence lands right after the first, and one interrupt reports both.
    system, trace = build([{"at": 0, "work": "1ms"}, {"at": 0, "work": "1ms", "null_rendering": True}])
    r = system.run()
    assert stops(trace) == [
        (1_007_000, "DmaPacketStop", 1), (1_007_000, "DmaPacketStop", 2),
        (1_008_000, "QueuePacketStop", 1), (1_008_000, "QueuePacketStop", 2)]
    assert system.gpu.engines[0].busy_ns == 1_000_000
    assert r.summary["contexts"][0]["null_rendering"] == 1
    flags = [e["args"]["Flags"]["NullRendering"] for e in trace.of("DdiCall") if e["name"] == "DxgkDdiSubmitCommand"]
    assert flags == [0, 1]


def test_null_rendering_fill_leaves_memory_untouched():
    for null in (False, True):
        system, _ = build([{"at": "1s", "work": 0}])
        kmt = system.kmt
        ctx = system.contexts[0]
        target = kmt.CreateAllocation(ctx.device, 4096)

        def client():
            yield from kmt.Render(ctx, C.fill(0, 4096, 0xA5A5A5A5), (target,), ((0, C.FILL_DST, 0),),
                                  null_rendering=null)

        system.sim.process(client())
        system.run(until=100_000)
        assert ctx.completed == 1
        expected = bytes(4096) if null else b"\xa5" * 4096
        assert system.gpu.memory.read(target.address, 4096) == expected


class IgnoresNullRendering(ReferenceDriver):
    """A driver that puts the DMA buffer on the ring even with Flags.NullRendering."""

    def DxgkDdiSubmitCommand(self, hAdapter, pSubmitCommand):
        pSubmitCommand.Flags.NullRendering = 0
        return super().DxgkDdiSubmitCommand(hAdapter, pSubmitCommand)


@pytest.mark.rule(14)
def test_a_driver_that_runs_a_null_rendering_buffer_breaks_rule_14():
    system, trace = build([{"at": 0, "work": "1ms"}], null_rendering=True, driver=IgnoresNullRendering)
    r = system.run()
    bc = r.bugcheck.bugcheck
    assert bc.code == BugCheckCode.DRIVER_VERIFIER_DETECTED_VIOLATION and bc.p1 == 14
    assert r.bugcheck.struct == "DXGKARG_SUBMITCOMMAND"
    assert "executed" in r.bugcheck.message
    # It stopped when the fence came back, after the millisecond the buffer ran.
    assert r.end == 1_007_000


@pytest.mark.rule(14)
def test_report_mode_records_rule_14_and_goes_on():
    system, trace = build([{"at": 0, "work": "1ms"}, {"at": 0, "work": "1ms"}], null_rendering=True,
                          driver=IgnoresNullRendering, verifier="report")
    r = system.run()
    assert r.bugcheck is None and r.summary["packets_completed"] == 2
    assert [(v["t"], v["rule"]) for v in r.summary["violations"]] == [(1_007_000, 14), (2_007_000, 14)]
    assert [e["rule"] for e in trace.of("VerifierViolation")] == [14, 14]


def test_example_and_summary_line(tmp_path):
    r = CliRunner().invoke(main, ["run", "examples/null_rendering.toml"])
    assert r.exit_code == 0, r.output
    assert "NullRendering:" in r.output and "submission path's own cost" in r.output
