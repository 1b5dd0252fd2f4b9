"""Preemption and resubmission end to end (reference scenarios 22 and 23; Microsoft's "GPU
preemption" page and its DxgkDdiPreemptCommand, DXGK_SUBMITCOMMANDFLAGS and preemption-granularity
pages): DxgkDdiPreemptCommand with a new PreemptionFenceId, the engine stopping at its granularity
with its progress saved, DMA_PREEMPTED with PreemptionFenceId and LastCompletedFenceId, preempted
packets back to VidSch and resubmitted with new fence ids and Flags.Resubmission, the same total GPU
work, and the preemption latency per granularity."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from wddmsim.cli import main
from wddmsim.ddi.bugcheck import BugCheckCode, VidSchError
from wddmsim.ddi.ntstatus import NTSTATUS
from wddmsim.gpu import commands as C
from wddmsim.kmd import ReferenceDriver
from wddmsim.runner.system import System
from wddmsim.trace import ListSink

from wddm2util import scenario_of

ZERO = {"render": 0, "patch": 0, "submit": 0, "isr": 0, "dpc": 0, "present": 0}
MS = 1_000_000


def build(granularity="dma_buffer", *, low=((0, "10ms"), (0, "2ms")), high=((3_050_000, "1ms"),), interval="100us",
          version="wddm2_0", preemption=None, policy="priority_quantum", quantum="2ms", driver=None,
          verifier="strict", equal=False):
    def proc(name, prio, packets):
        return {"name": name, "priority": prio, "context": [{"name": "c", "node": "3D", "workload": {
            "kind": "script", "packets": [{"at": at, "work": w} for at, w in packets]}}]}
    sc = scenario_of({
        "name": "preempt", "duration": "1s",
        "adapter": {"ddi_version": version, "cpu_cost": ZERO, "preemption_aware": preemption,
                    "nodes": [{"name": "3D", "engine": "3d", "command_cost": 0, "preemption": granularity,
                               "preemption_interval": interval}]},
        "scheduler": {"policy": policy, "quantum": quantum},
        "process": [proc("low", "normal" if equal else "below_normal", low),
                    proc("high", "normal" if equal else "high", high)],
    }, "<test>")
    trace = ListSink()
    return System(sc, trace=trace, driver=driver, verifier=verifier), trace


def packets(trace):
    """(t, event, fence, status) for DMA packet starts and stops."""
    return [(e["t"], e["event"], e["fence"], e.get("status")) for e in trace.of("DmaPacketStart", "DmaPacketStop")]


def preempted_reports(trace):
    return [(e["t"], e["args"]["DmaPreempted"]["PreemptionFenceId"], e["args"]["DmaPreempted"]["LastCompletedFenceId"])
            for e in trace.of("Callback") if "DmaPreempted" in e.get("args", {})]


def submits(trace):
    return [(e["t"], e["args"]["SubmissionFenceId"], e["args"]["Flags"]["Resubmission"])
            for e in trace.of("DdiCall") if e["name"] == "DxgkDdiSubmitCommand"]


@pytest.mark.rule(62)
def test_interval_granularity_stops_mid_packet_and_conserves_work():
    system, trace = build("interval")
    r = system.run()
    # The high packet (fence 4 after PreemptionFenceId 3) arrives at 3.05 ms; the 10 ms WORK stops at
    # the next 100 us of its own work, 3.1 ms: 50 us of preemption latency.
    assert [(e["t"], e["fence"], e["reason"]) for e in trace.of("PreemptRequest")] == [(3_050_000, 3, "priority")]
    preempt_call = next(e for e in trace.of("DdiCall") if e["name"] == "DxgkDdiPreemptCommand")
    assert preempt_call["args"]["PreemptionFenceId"] == 3 and preempt_call["args"]["NodeOrdinal"] == 0
    assert preempted_reports(trace) == [(3_100_000, 3, 0)]
    assert packets(trace) == [
        (0, "DmaPacketStart", 1, None),
        (3_100_000, "DmaPacketStop", 1, "Preempted"), (3_100_000, "DmaPacketStop", 2, "Preempted"),
        (3_100_000, "DmaPacketStart", 4, None),
        (4_100_000, "DmaPacketStop", 4, "Completed"), (4_100_000, "DmaPacketStart", 5, None),
        (11_000_000, "DmaPacketStop", 5, "Completed"), (11_000_000, "DmaPacketStart", 6, None),
        (13_000_000, "DmaPacketStop", 6, "Completed"),
    ]
    # New fence ids, Resubmission = 1 on the two low packets the second time.
    assert submits(trace) == [(0, 1, 0), (0, 2, 0), (3_100_000, 4, 0), (3_100_000, 5, 1), (4_100_000, 6, 1)]
    # 6.9 ms left of the first low packet ran from 4.1 ms: 10 + 2 + 1 ms of GPU work in all.
    assert system.gpu.engines[0].busy_ns == 13 * MS
    node = r.summary["nodes"][0]
    assert (node["preemption"], node["preemptions"], node["preempt_latency_max_ns"]) == ("interval", 1, 50_000)
    assert [c["preempted"] for c in r.summary["contexts"]] == [2, 0]
    assert r.summary["violations"] == [] and r.summary["packets_completed"] == 3


def test_dma_buffer_granularity_waits_for_the_running_buffer_and_drops_only_the_queued_one():
    system, trace = build("dma_buffer")
    r = system.run()
    # Latency = the remainder of the running buffer (reference scenario 23): 10 - 3.05 = 6.95 ms.
    assert preempted_reports(trace) == [(10 * MS, 3, 1)]
    assert packets(trace) == [
        (0, "DmaPacketStart", 1, None),
        (10 * MS, "DmaPacketStop", 1, "Completed"), (10 * MS, "DmaPacketStart", 2, None),
        (10 * MS, "DmaPacketStop", 2, "Preempted"), (10 * MS, "DmaPacketStart", 4, None),
        (11 * MS, "DmaPacketStop", 4, "Completed"), (11 * MS, "DmaPacketStart", 5, None),
        (13 * MS, "DmaPacketStop", 5, "Completed"),
    ]
    assert submits(trace)[-1] == (10 * MS, 5, 1)
    assert r.summary["nodes"][0]["preempt_latency_max_ns"] == 6_950_000
    assert system.gpu.engines[0].busy_ns == 13 * MS


def test_primitive_granularity_finishes_the_running_command_and_resumes_after_it():
    system, trace = build("primitive", low=((900 * MS, 0),), high=((900 * MS, 0),))
    kmt = system.kmt
    low, high = system.contexts
    draws = b"".join(C.work(MS) for _ in range(10))  # ten 1 ms primitives

    def low_client():
        yield from kmt.Render(low, draws)

    def high_client():
        yield 3_050_000
        yield from kmt.Render(high, C.work(MS))

    system.sim.process(low_client())
    system.sim.process(high_client())
    r = system.run(until=100 * MS)
    # The fourth primitive (3..4 ms) finishes; the remaining six run after the high packet.
    assert preempted_reports(trace) == [(4 * MS, 2, 0)]
    assert packets(trace) == [
        (0, "DmaPacketStart", 1, None), (4 * MS, "DmaPacketStop", 1, "Preempted"),
        (4 * MS, "DmaPacketStart", 3, None), (5 * MS, "DmaPacketStop", 3, "Completed"),
        (5 * MS, "DmaPacketStart", 4, None), (11 * MS, "DmaPacketStop", 4, "Completed"),
    ]
    assert system.gpu.engines[0].busy_ns == 11 * MS
    assert r.summary["nodes"][0]["preempt_latency_max_ns"] == 950_000


def test_granularity_none_runs_everything_queued_first():
    system, trace = build("none")
    r = system.run()
    assert preempted_reports(trace) == [(12 * MS, 3, 2)]
    assert [s for s in packets(trace) if s[3] == "Preempted"] == []
    assert r.summary["nodes"][0]["preempt_latency_max_ns"] == 8_950_000


def test_quantum_expiry_preempts_an_equal_priority_context():
    system, trace = build("interval", low=((0, "10ms"),), high=((500_000, "10ms"),), equal=True, quantum="2ms")
    r = system.run()
    reqs = [(e["t"], e["reason"]) for e in trace.of("PreemptRequest")]
    # Turns of 2 ms: low runs 0-2 ms, high 2-4, low 4-6, ...; each stop is exact (interval 100 us).
    assert reqs[:4] == [(2 * MS, "quantum"), (4 * MS, "quantum"), (6 * MS, "quantum"), (8 * MS, "quantum")]
    assert all(lat == 0 for lat in [r.summary["nodes"][0]["preempt_latency_max_ns"]])
    assert system.gpu.engines[0].busy_ns == 20 * MS
    assert r.summary["packets_completed"] == 2 and r.summary["violations"] == []


@pytest.mark.rule(13)
def test_wddm1_driver_never_sees_resubmission():
    system, trace = build("interval", version="win8")
    r = system.run()
    calls = [e for e in trace.of("DdiCall") if e["name"] == "DxgkDdiSubmitCommand"]
    assert len(calls) == 5 and all("Resubmission" not in e["args"]["Flags"] for e in calls)
    assert all(e["args"]["Flags"]["Value"] == 0 for e in calls)
    assert r.summary["contexts"][0]["preempted"] == 2 and system.gpu.engines[0].busy_ns == 13 * MS


@pytest.mark.parametrize("version,aware", [("win7", None), ("wddm2_0", False)])
def test_without_preemption_awareness_the_high_packet_waits(version, aware):
    system, trace = build("interval", version=version, preemption=aware)
    r = system.run()
    assert not trace.of("PreemptRequest")
    assert not any(e["name"] == "DxgkDdiPreemptCommand" for e in trace.of("DdiCall"))
    assert r.summary["preemption_aware"] is False
    high_done = [e["t"] for e in trace.of("DmaPacketStop") if e["fence"] == 3]
    assert high_done == [13 * MS]  # behind both low packets already on the hardware queue


def test_preemption_with_nothing_running_is_reported_by_the_driver_itself():
    system, trace = build("interval", low=((0, "1ms"),), high=((900 * MS, 0),))
    system.run(until=5 * MS)
    vs = system.adapter.vidsch
    node_queue = vs.nodes[0]
    ctx = system.contexts[0]
    # The GPU finished and reported everything; ask anyway (the race the seed describes, where the
    # request arrives after the last completion).
    vs.preemptor.request(node_queue, ctx, ctx)
    system.run(until=6 * MS)
    assert system.gpu.engines[0].preemptions == 0  # the hardware was not asked
    reports = [e for e in trace.of("Callback") if "DmaPreempted" in e.get("args", {})]
    assert [(e["t"], e["irql"], e["args"]["DmaPreempted"]["LastCompletedFenceId"]) for e in reports] == [
        (5 * MS, "DIRQL", 1)]
    assert node_queue.preemption.fence == 0 and node_queue.preemption.count == 1


class WrongPreemptionFence(ReferenceDriver):
    def _report_preempted(self, node):
        node.preempt_fence += 7
        return super()._report_preempted(node)


@pytest.mark.rule(35)
def test_a_wrong_preemption_fence_breaks_rule_35():
    system, trace = build("interval", driver=WrongPreemptionFence)
    r = system.run()
    bc = r.bugcheck.bugcheck
    assert bc.code == BugCheckCode.DRIVER_VERIFIER_DETECTED_VIOLATION and bc.p1 == 35
    assert r.end == 3_100_000 and "10" in r.bugcheck.message


class FailingPreempt(ReferenceDriver):
    def DxgkDdiPreemptCommand(self, hAdapter, pPreemptCommand):
        return int(NTSTATUS.STATUS_UNSUCCESSFUL)


@pytest.mark.rule(58)
def test_a_failed_preempt_command_is_bug_check_0x119_2():
    system, trace = build("interval", driver=FailingPreempt)
    r = system.run()
    bc = r.bugcheck.bugcheck
    assert (bc.code, bc.p1, bc.p2) == (BugCheckCode.VIDEO_SCHEDULER_INTERNAL_ERROR,
                                       VidSchError.DRIVER_FAILED_SUBMIT_COMMAND, int(NTSTATUS.STATUS_UNSUCCESSFUL))
    assert r.bugcheck.struct == "DXGKARG_PREEMPTCOMMAND" and bc.p3 == system.adapter.vidsch.nodes[0].preemption.address
    assert r.end == 3_050_000


def test_driver_reports_its_preemption_caps():
    system, _ = build("interval")
    caps = system.adapter.caps
    assert caps.PreemptionAware and caps.GraphicsPreemptionGranularity == 300
    system, _ = build("dma_buffer", version="vista")
    assert not system.adapter.caps.PreemptionAware and system.adapter.caps.GraphicsPreemptionGranularity == 0


def test_preemption_example_runs_and_shows_latency():
    r = CliRunner().invoke(main, ["run", "examples/preemption.toml"])
    assert r.exit_code == 0, r.output
    assert "preempt" in r.output


@pytest.mark.rule(8, 28)
def test_a_preempted_packet_with_patch_locations_is_patched_again():
    sc = scenario_of({
        "name": "repatch", "duration": "50ms",
        "adapter": {"cpu_cost": ZERO, "nodes": [{"name": "3D", "engine": "3d", "command_cost": 0}]},
        "process": [
            {"name": "low", "priority": "below_normal", "context": [{"name": "c", "node": "3D", "workload": {
                "kind": "copy_stream", "size": "16MiB", "interval": "100us", "count": 2}}]},
            {"name": "high", "priority": "high", "context": [{"name": "c", "node": "3D", "workload": {
                "kind": "script", "packets": [{"at": "200us", "work": "1ms"}]}}]},
        ],
    }, "<test>")
    trace = ListSink()
    system = System(sc, trace=trace)
    r = system.run()
    low = system.contexts[0]
    patches = [(e["t"], e["args"]["SubmissionFenceId"]) for e in trace.of("DdiCall")
               if e["name"] == "DxgkDdiPatch" and e["args"]["hContext"] == low.hDdi]
    # The second copy was queued behind the first (a 16 MiB copy is one primitive: it finishes)
    # when the high packet came: taken back, then patched again under its new fence.
    assert [f for _, f in patches] == [1, 2, 5]
    resub = [e["args"] for e in trace.of("DdiCall") if e["name"] == "DxgkDdiSubmitCommand"
             and e["args"]["SubmissionFenceId"] == 5]
    assert resub[0]["Flags"]["Resubmission"] == 1 and resub[0]["hContext"] == low.hDdi
    assert r.summary["contexts"][0]["completed"] == 2 and r.summary["violations"] == []
