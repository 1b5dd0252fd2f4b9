"""Reference scenario 28: fence ids across the 32-bit wrap, and a 64-bit timeline at its limit.

A node's SubmissionFenceId is a UINT on the DDI (DXGKARG_SUBMITCOMMAND): the scenario starts the 3D
node's ids at 2**32 - 20 (``first_fence_id``) and runs 40 packets, so the ids the driver sees go
..., 2**32 - 1, 0, 1, ... . Pass: ordering and completion stay correct across the wrap, and a fence
reported beyond the last submitted one is flagged with bug check 0x119 (parameter 1 = 0x1). A
monitored fence, a 64-bit value, runs to 2**64 - 1 and no further. Times are virtual ns.
"""

from __future__ import annotations

import pytest

from wddmsim.ddi.ntstatus import NTSTATUS
from wddmsim.dxgkrnl.errors import ApiError
from wddmsim.kmd import ReferenceDriver
from wddmsim.scenario import ScenarioError, parse_scenario
from wddmsim.runner.system import System
from wddmsim.trace import ListSink

US = 1_000
FIRST = (1 << 32) - 20
U64_MAX = (1 << 64) - 1

WRAP = f"""
name = "fence_wrap"
duration = "5ms"
[adapter]
cpu_cost = {{ render = 0, patch = 0, submit = 0, isr = 0, dpc = 0, present = 0 }}
[[adapter.nodes]]
name = "3D"
engine = "3d"
command_cost = 0
first_fence_id = {FIRST}
[[process]]
name = "app"
[[process.context]]
name = "a"
node = "3D"
workload = {{ kind = "compute_batch", batch = 25, count = 1, work = "10us", sync = false }}
[[process.context]]
name = "b"
node = "3D"
priority = 1
workload = {{ kind = "script", packets = [{{ at = "15us", work = "10us", repeat = 15 }}] }}
"""


def run(driver=None):
    trace = ListSink()
    system = System(parse_scenario(WRAP, "<ref28>"), trace=trace, driver=driver)
    result = system.run()
    return system, result, trace.events


def test_forty_packets_run_in_order_and_complete_across_the_32bit_wrap():
    system, result, events = run()
    assert result.bugcheck is None
    # The ids the driver is handed (DxgkDdiSubmitCommand) cross 2**32 - 1 -> 0.
    ids = [e["args"]["SubmissionFenceId"] for e in events
           if e["event"] == "DdiCall" and e["name"] == "DxgkDdiSubmitCommand"]
    assert ids[0] == FIRST and (1 << 32) - 1 in ids and 0 in ids
    assert ids.index(0) == ids.index((1 << 32) - 1) + 1
    # The OS's own numbering goes on past 2**32 and every id it handed over came back exactly once:
    # 40 packets plus one resubmission (b's first packet preempts a).
    stops = [e for e in events if e["event"] == "DmaPacketStop"]
    done = [e["fence"] for e in stops if e["status"] == "Completed"]
    assert done == sorted(done) and len(done) == 40
    assert done[0] == FIRST and done[-1] > 1 << 32
    assert [e["fence"] for e in stops if e["status"] == "Preempted"] == [FIRST + 2]
    reported = [e["args"]["DmaCompleted"]["SubmissionFenceId"] for e in events
                if e["event"] == "Callback" and e["args"].get("InterruptType") == "DXGK_INTERRUPT_DMA_COMPLETED"]
    assert reported == [f & 0xFFFFFFFF for f in done]
    # Order within each context kept, every packet retired once; the higher-priority context ran
    # its 15 packets as soon as they came.
    names = {e["context"]: e["name"] for e in events if e["event"] == "ContextCreate"}
    seqs = {}
    for e in events:
        if e["event"] == "QueuePacketStop":
            seqs.setdefault(names[e["context"]], []).append(e["seq"])
    assert seqs == {"app/a": list(range(1, 26)), "app/b": list(range(1, 16))}
    # 42 ids in all: 40 packets, the preemption request's PreemptionFenceId, the resubmission.
    assert result.summary["nodes"][0]["last_fence"] == FIRST + 41


class _ReportsAhead(ReferenceDriver):
    """Reports one fence id too far once the node's ids have wrapped: the id after the last one it
    was handed (a completion of a buffer never submitted)."""

    def _completed(self, node):
        value = super()._completed(node)
        if value == 3:
            return node.last_submitted + 1
        return value


@pytest.mark.rule(32)
def test_a_fence_reported_beyond_the_last_submitted_is_bug_check_0x119():
    system, result, events = run(driver=_ReportsAhead)
    bc = result.bugcheck
    assert bc is not None
    assert (bc.bugcheck.code, bc.bugcheck.p1) == (0x119, 0x1)
    assert bc.rule == 32
    # Parameter 2 is the 32-bit id the driver reported, just past the wrap.
    last = max(e["args"]["SubmissionFenceId"] for e in events
               if e["event"] == "DdiCall" and e["name"] == "DxgkDdiSubmitCommand" and e["args"]["SubmissionFenceId"] < 100)
    assert bc.bugcheck.p2 == last + 1 and bc.bugcheck.p2 < 100


TIMELINE = """
name = "timeline_limit"
duration = "5ms"
[adapter]
gpu_va = true
cpu_cost = { render = 0, patch = 0, submit = 0, isr = 0, dpc = 0, present = 0 }
[[adapter.nodes]]
name = "3D"
engine = "3d"
command_cost = 0
[driver]
ddi_version = "wddm2_1"
[[fence]]
name = "t"
initial = 18446744073709551595
[[process]]
name = "app"
[[process.context]]
name = "gpu"
node = "3D"
workload = { kind = "script", packets = [
  { at = 0, work = "10us", signal_fence = "t", signal_value = 18446744073709551605 },
  { at = 0, work = "10us", signal_fence = "t", signal_value = 18446744073709551615 },
] }
[[call]]
api = "WaitForSynchronizationObjectFromCpu"
process = "app"
fence = "t"
value = 18446744073709551615
[[call]]
api = "SignalSynchronizationObjectFromCpu"
process = "app"
fence = "t"
value = 18446744073709551596
at = "5us"
every = "1us"
count = 5
"""


#: The paging buffer that writes the process's page tables runs first on the node (516 ns).
PAGING = 516


def test_a_64bit_timeline_runs_to_its_maximum_without_wrapping():
    trace = ListSink()
    system = System(parse_scenario(TIMELINE, "<ref28>"), trace=trace)
    result = system.run()
    assert result.bugcheck is None
    fence = system.fences["t"]
    assert fence.value == U64_MAX
    signals = [(e["t"], e["value"], e["source"]) for e in trace.events if e["event"] == "FenceSignal"]
    assert signals == [(5 * US, U64_MAX - 19, "cpu"), (6 * US, U64_MAX - 18, "cpu"), (7 * US, U64_MAX - 17, "cpu"),
                       (8 * US, U64_MAX - 16, "cpu"), (9 * US, U64_MAX - 15, "cpu"),
                       (PAGING + 10 * US, U64_MAX - 10, "gpu"), (PAGING + 20 * US, U64_MAX, "gpu")]
    waits = [(e["t"], e["value"], e["status"]) for e in trace.events if e["event"] == "FenceWaitDone"]
    assert waits == [(PAGING + 20 * US, U64_MAX, "STATUS_SUCCESS")]
    # Past the maximum: a signal of 2**64 is refused (STATUS_INVALID_PARAMETER), by the API and by
    # the schema of a scenario file.
    with pytest.raises(ApiError) as err:
        system.kmt.SignalSynchronizationObjectFromCpu([fence], [U64_MAX + 1])
    assert err.value.status == NTSTATUS.STATUS_INVALID_PARAMETER
    with pytest.raises(ScenarioError) as bad:
        parse_scenario(TIMELINE.replace("value = 18446744073709551596", "value = 18446744073709551616"), "t.toml")
    assert bad.value.problems == ["t.toml: call[1].value: must be 0 .. 2**64-1, got 18446744073709551616"]
