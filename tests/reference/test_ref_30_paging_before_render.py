"""Reference scenario 30, paging before render: a render packet uses an allocation that is not
resident, so a paging transfer must run first; lowering a process's video memory budget makes VidMm
evict; an offered allocation that was evicted is reclaimed as DISCARDED; a DMA page fault puts the
device in ERROR_DMAPAGEFAULT.

The run is examples/residency.toml: the game keeps four 64 KiB allocations and uses one per packet
(every 4.005 ms); it offers its fourth at 10 ms, the OS lowers its budget to 128 KiB at 22 ms, it
reclaims the fourth at 30 ms; the tool's second buffer faults.

Microsoft's pages: DxgkDdiBuildPagingBuffer, D3DKMTOfferAllocations, D3DKMTReclaimAllocations2
(D3DDDI_RECLAIM_RESULT_DISCARDED), D3DKMT_DEVICEEXECUTION_STATE (ERROR_DMAPAGEFAULT).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from wddmsim.ddi.enums import DXGK_BUILDPAGINGBUFFER_OPERATION as OP
from wddmsim.scenario import load_scenario
from wddmsim.runner.system import System
from wddmsim.trace import ListSink

EXAMPLE = Path(__file__).parent.parent.parent / "examples" / "residency.toml"
KIB = 1024
COPY = 1  # the paging node: the copy engine
BUDGET_AT, PAGE_IN_AT, RECLAIM_AT = 22_000_000, 24_035_000, 30_000_000


@pytest.fixture(scope="module")
def run():
    trace = ListSink()
    system = System(load_scenario(str(EXAMPLE)), trace=trace)
    result = system.run()
    assert result.bugcheck is None and result.summary["violations"] == []
    return system, trace, result


def builds(trace, t):
    """(operation, allocation) of each DxgkDdiBuildPagingBuffer at time ``t``."""
    out = []
    for e in trace.of("DdiCall"):
        if e["name"] == "DxgkDdiBuildPagingBuffer" and e["t"] == t:
            a = e["args"]
            arm = {OP.DXGK_OPERATION_TRANSFER: "Transfer", OP.DXGK_OPERATION_FILL: "Fill",
                   OP.DXGK_OPERATION_DISCARD_CONTENT: "DiscardContent"}[a["Operation"]]
            out.append((a["Operation"], a[arm]["hAllocation"]))
    return out


def test_a_paging_transfer_runs_first_signals_its_fence_and_the_render_packet_waits_on_it(run):
    system, trace, _ = run
    game = system.contexts[0]
    a0, _a1, a2, _a3 = (a.handle for a in game.workload_allocations)
    # The game's 7th packet uses allocation 2, evicted at 22 ms: VidMm transfers allocation 0 out
    # (the game's budget has room for two) and allocation 2 back in.
    assert builds(trace, PAGE_IN_AT) == [(OP.DXGK_OPERATION_TRANSFER, a0), (OP.DXGK_OPERATION_TRANSFER, a2)]
    paging = [(e["t"], e["args"]["SubmissionFenceId"], e["args"]["hContext"]) for e in trace.of("DdiCall")
              if e["name"] == "DxgkDdiSubmitCommand" and e["args"]["Flags"]["Paging"] and e["t"] >= PAGE_IN_AT][:2]
    assert paging == [(24_038_000, 3, 0), (24_041_000, 4, 0)]  # on the copy node, NULL context
    # The transfer in signals its paging fence: fence 4 of the copy node completes at 24.046792 ms.
    stop = [e for e in trace.of("DmaPacketStop") if e["node"] == COPY and e["fence"] == 4]
    assert [(e["t"], e["kind"], e["status"]) for e in stop] == [(24_046_792, "paging", "Completed")]
    # The render packet waits on it: submitted and started only after the paging packet retired.
    retired = [e["t"] for e in trace.of("QueuePacketStop") if e["node"] == COPY and e["fence"] == 4]
    assert retired == [24_047_792]
    render = [(e["event"], e["t"]) for e in trace.events if e["event"] in ("QueuePacketStart", "DmaPacketStart")
              and e["context"] == game.handle and e["seq"] == 7]
    assert render == [("QueuePacketStart", PAGE_IN_AT), ("DmaPacketStart", 24_050_792)]


def test_lowering_the_budget_evicts_and_the_next_use_pages_it_back_in(run):
    system, trace, result = run
    game = system.contexts[0]
    a0, _a1, a2, a3 = (a.handle for a in game.workload_allocations)
    assert [(e["t"], e["process"], e["budget"]) for e in trace.of("VideoMemoryBudget")] == [
        (BUDGET_AT, game.device.process.pid, 128 * KIB)]
    evicted = [(e["t"], e["allocation"], e["reason"], e["content"]) for e in trace.of("EvictAllocation")]
    assert evicted[:3] == [
        (BUDGET_AT, a3, "budget", "discarded"),  # offered: evicted first, its content dropped
        (BUDGET_AT, a2, "budget", "moved"),  # then the least recently used, transferred out
        (PAGE_IN_AT, a0, "budget", "moved"),  # room within the budget for allocation 2's way back
    ]
    assert builds(trace, BUDGET_AT) == [(OP.DXGK_OPERATION_DISCARD_CONTENT, a3), (OP.DXGK_OPERATION_TRANSFER, a2)]
    assert builds(trace, PAGE_IN_AT)[1] == (OP.DXGK_OPERATION_TRANSFER, a2)  # the next use pages it back in
    # From then on the game keeps 128 KiB resident.
    assert result.summary["memory"]["segments"][0]["used"] == 128 * KIB
    assert system.adapter.vidsch.vidmm.resident_bytes(game.device.process) == 128 * KIB
    assert game.completed == 15 and game.aborted == 0


def test_reclaim_after_offer_returns_discarded_when_evicted(run):
    system, trace, _ = run
    game = system.contexts[0]
    a3 = game.workload_allocations[3].handle
    assert [(e["t"], e["allocations"]) for e in trace.of("OfferAllocations")] == [(10_000_000, [a3])]
    assert [(e["t"], e["allocations"], e["results"]) for e in trace.of("ReclaimAllocations")] == [
        (RECLAIM_AT, [a3], ["DISCARDED"])]


def test_reclaim_of_an_offered_allocation_never_evicted_is_ok():
    sc = load_scenario(str(EXAMPLE))
    system = System(sc)
    system.run(until=1_000_000)
    kmt, game = system.kmt, system.contexts[0]
    allocs = list(game.workload_allocations[:2])
    kmt.OfferAllocations(game.device, allocs)
    assert kmt.ReclaimAllocations(game.device, allocs) == ["OK", "OK"]


def test_a_dma_page_fault_puts_the_device_in_error_dmapagefault(run):
    system, trace, _ = run
    game, tool = system.contexts
    (fault,) = trace.of("PageFault")
    assert (fault["t"], fault["node"], fault["fence"]) == (6_521_896, 0, 4)
    assert [(e["t"], e["device"], e["reason"]) for e in trace.of("DeviceError")] == [
        (6_521_896, tool.device.handle, "page fault")]
    assert system.kmt.GetDeviceState(tool.device) == "ERROR_DMAPAGEFAULT"
    assert system.kmt.GetDeviceState(game.device) == "ACTIVE"
