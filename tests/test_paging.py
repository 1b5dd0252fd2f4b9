"""Paging and the null-context switch (Microsoft's DxgkDdiBuildPagingBuffer, DXGK_SUBMITCOMMANDFLAGS
and "GPU preemption" pages; rules 4, 11, 12, 15, 61, 68): allocations evicted and brought back
through DxgkDdiBuildPagingBuffer and Flags.Paging submissions that share one paging buffer, their
data surviving every round trip, the zero-length ContextSwitch submission before evicting a running
device's allocation, paging packets keeping their fence ids when preempted, and the critical
statuses of DxgkDdiBuildPagingBuffer."""

from __future__ import annotations

import pytest

from wddmsim.ddi.bugcheck import BugCheckCode, VidSchError
from wddmsim.ddi.ntstatus import NTSTATUS
from wddmsim.kmd import ReferenceDriver
from wddmsim.ddi.enums import DXGK_BUILDPAGINGBUFFER_OPERATION as OP
from wddmsim.scenario import ScenarioError, scenario_from_dict
from wddmsim.runner.system import System
from wddmsim.trace import ListSink
from wddmsim.workloads.generators import pattern_of

ZERO = {"render": 0, "patch": 0, "submit": 0, "isr": 0, "dpc": 0, "present": 0}
KIB = 1024
SEGMENTS = lambda vram: [{"name": "VRAM", "kind": "memory", "size": vram},  # noqa: E731
                         {"name": "Aperture", "kind": "aperture", "size": "1MiB", "cpu_visible": True}]


def build(processes, *, vram="256KiB", nodes=None, faults=(), driver=None):
    adapter = {"cpu_cost": ZERO, "segments": SEGMENTS(vram)}
    if nodes is not None:
        adapter["nodes"] = nodes
    sc = scenario_from_dict({"name": "paging", "duration": "50ms", "adapter": adapter, "fault": list(faults),
                             "process": processes}, "<test>")
    trace = ListSink()
    return System(sc, trace=trace, driver=driver), trace


def pressure(name, node="3D", **w):
    return {"name": name, "context": [{"name": "c", "node": node, "workload": dict({"kind": "memory_pressure"}, **w)}]}


SIX = pressure("app", allocations=6, size="64KiB", touch=2, work="100us", interval="1ms", count=12)


def submissions(trace):
    return [e for e in trace.of("DdiCall") if e["name"] == "DxgkDdiSubmitCommand"]


def test_data_survives_every_eviction_round_trip():
    system, trace = build([SIX])
    r = system.run()
    assert r.bugcheck is None and r.summary["violations"] == []
    assert r.summary["contexts"][0]["completed"] == 12
    # Six 64 KiB allocations take turns in a 256 KiB segment, two per packet.
    assert r.summary["memory"] == {
        "segments": [{"id": 1, "kind": "memory", "size": 256 * KIB, "used": 256 * KIB},
                     {"id": 2, "kind": "aperture", "size": 1024 * KIB, "used": 0}],
        "evictions": 20, "paging_submissions": 40, "bytes_paged_in": 20 * 64 * KIB, "bytes_paged_out": 20 * 64 * KIB,
        "context_switches": 0, "paging_node": 2, "bytes_mapped": 0, "bytes_unmapped": 0,
    }
    mem = system.gpu.memory
    allocs = system.contexts[0].workload_allocations
    assert [a.evictions for a in allocs] == [4, 4, 3, 3, 3, 3]
    for i, a in enumerate(allocs):
        where = a.address if a.resident else a.backing
        assert mem.read(where, a.size) == pattern_of(i).to_bytes(4, "little") * (a.size // 4), i


def test_a_packet_with_allocations_keeps_its_kind():
    """Render packets that name allocations are queued as render packets: the kind once took the
    segment preference of the packet's last allocation ("memory") from a shadowed loop variable."""
    system, trace = build([SIX])
    assert system.run().bugcheck is None
    kinds = [e["kind"] for e in trace.of("DmaPacketQueued")]
    assert kinds.count("render") == 12 and set(kinds) == {"render", "paging"}


@pytest.mark.rule(74)
def test_paging_submissions_share_a_buffer_with_their_own_private_data_ranges():
    system, trace = build([SIX])
    system.run()
    paging = [e["args"] for e in submissions(trace) if e["args"]["Flags"]["Paging"]]
    assert len(paging) == 40
    assert {a["hContext"] for a in paging} == {0} and {a["NodeOrdinal"] for a in paging} == {2}
    # Each batch is one paging buffer: its submissions start again at offset 0.
    batches = []
    for a in paging:
        if a["DmaBufferSubmissionStartOffset"] == 0:
            batches.append([])
        batches[-1].append(a)
    assert len(batches) == 10
    first = batches[0]
    assert len({a["DmaBufferPhysicalAddress"] for a in first}) == 1
    # One buffer, four submissions (out, in, out, in): consecutive command and private-data ranges.
    assert [(a["DmaBufferPrivateDataSubmissionStartOffset"], a["DmaBufferPrivateDataSubmissionEndOffset"])
            for a in first] == [(0, 16), (16, 32), (32, 48), (48, 64)]
    assert all(x["DmaBufferSubmissionEndOffset"] == y["DmaBufferSubmissionStartOffset"] for x, y in zip(first, first[1:]))
    builds = [e["args"]["Operation"] for e in trace.of("DdiCall") if e["name"] == "DxgkDdiBuildPagingBuffer"]
    assert len(builds) == 40
    # First eviction of never-written content would be a discard; here every evicted allocation was
    # written, so outs are TRANSFERs; first uses of evicted-at-creation allocations are FILLs.
    assert builds[:4] == [OP.DXGK_OPERATION_TRANSFER, OP.DXGK_OPERATION_FILL] * 2


NULL_SWITCH = [
    pressure("a", allocations=2, size="64KiB", touch=1, work="10ms", count=1),
    pressure("b", node="Copy", allocations=1, size="64KiB", touch=1, work="1ms", count=1, start="1ms"),
]
TWO_NODES = [{"name": "3D", "engine": "3d", "command_cost": 0}, {"name": "Copy", "engine": "copy", "command_cost": 0}]


@pytest.mark.rule(11, 12)
def test_null_context_switch_before_evicting_a_running_devices_allocation():
    system, trace = build(NULL_SWITCH, vram="128KiB", nodes=TWO_NODES)
    r = system.run()
    subs = [(e["t"], e["args"]["NodeOrdinal"], e["args"]["Flags"]["Value"], e["args"]["hContext"],
             e["args"]["DmaBufferSubmissionStartOffset"], e["args"]["DmaBufferSubmissionEndOffset"])
            for e in submissions(trace)]
    a_ctx, b_ctx = (c.hDriver for c in system.contexts)
    t = 10_004_096  # a's 10 ms packet ends, after the preemption VidMm's context asked for
    assert subs == [
        (0, 0, 0x0, a_ctx, 0, 36),
        # b's allocation needs a's idle one evicted while a runs on the 3D node: first the
        # zero-length ContextSwitch there (Paging 0: a was not paging), then the discard and fill.
        (t, 0, 0x40, 0, 0, 0),
        (t, 1, 0x1, 0, 0, 0), (t, 1, 0x1, 0, 0, 24),
        (t + 4096, 1, 0x0, b_ctx, 0, 36),
    ]
    assert r.summary["memory"]["context_switches"] == 1 and r.summary["violations"] == []


def evicting_while_running():
    """Three 64 KiB allocations, one per packet, in 128 KiB of VRAM, hardware queue depth 2: the
    third packet's page-in evicts the first's allocation while the second packet (the same device)
    runs."""
    return scenario_from_dict({
        "name": "switch", "duration": "20ms",
        "adapter": {"nodes": [{"name": "3D", "engine": "3d"}],
                    "segments": [{"name": "VRAM", "kind": "memory", "size": "128KiB"},
                                 {"name": "Aperture", "kind": "aperture", "size": "64KiB"}]},
        "process": [{"name": "app", "context": [{"name": "c", "node": "3D", "workload": {
            "kind": "memory_pressure", "allocations": 3, "size": "64KiB", "touch": 1, "work": "1ms",
            "interval": "0ns", "count": 4}}]}]}, "<switch>")


@pytest.mark.rule(10)
@pytest.mark.parametrize("version,switches", [("vista", 0), ("win7", 0), ("win8", 2), ("wddm2_0", 2)])
def test_the_null_context_switch_is_windows_8s(version, switches):
    """Flags.ContextSwitch exists from Windows 8: for an older driver VidMm's evictions wait for the
    device's running packet to retire instead of switching the engine to the null context."""
    r = System(evicting_while_running(), settings={"ddi_version": version}).run()
    assert r.bugcheck is None and r.summary["violations"] == []
    m = r.summary["memory"]
    assert (m["context_switches"], m["evictions"], r.summary["contexts"][0]["completed"]) == (switches, 2, 4)


@pytest.mark.rule(13, 61)
def test_preempted_paging_packets_keep_their_fence_ids():
    system, trace = build([SIX])
    vs = system.adapter.vidsch
    copy = vs.nodes[2]

    def preempt_during_paging():
        running = copy.hw[copy.stopped]
        vs.preemptor.request(copy, running.context, None, "test")

    system.sim.at(2_000_001, preempt_during_paging, irql=1)
    r = system.run()
    fences = [(e["t"], e["args"]["SubmissionFenceId"], e["args"]["Flags"]["Resubmission"])
              for e in submissions(trace) if e["args"]["NodeOrdinal"] == 2][:4]
    # Fence 2 was queued behind fence 1 when the copy engine was asked to stop (it finishes its
    # buffer first): it comes back first, with its own fence id and Resubmission = 1.
    # (64 KiB at 16 bytes/ns is 4096 ns, plus three packets' fetch at 100 ns each.)
    assert fences[:3] == [(2_000_000, 1, 0), (2_000_000, 2, 0), (2_004_396, 2, 1)]
    assert r.bugcheck is None and r.summary["contexts"][0]["completed"] == 12
    assert system.contexts[0].workload_allocations[0].resident is False


def test_packet_whose_allocations_cannot_all_be_resident_fails_at_render():
    system, trace = build([pressure("app", allocations=3, size="64KiB", touch=3, count=1)], vram="128KiB")
    r = system.run()
    assert r.summary["contexts"][0]["api_error"] == "STATUS_NO_MEMORY" and r.bugcheck is None


@pytest.mark.rule(68, 75)
@pytest.mark.parametrize("status, rule", [("STATUS_UNSUCCESSFUL", 68), ("STATUS_GRAPHICS_ALLOCATION_BUSY", 75),
                                          ("STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER", 75)])
def test_build_paging_buffer_critical_statuses(status, rule):
    """A paging operation the driver fails is bug check 0x119/0x5 DRIVER_FAULTED_SYSTEM_COMMAND: rule 68
    for a status outside the three allowed, rule 75 for ALLOCATION_BUSY on an allocation VidMm said
    is idle (waiting cannot help), or INSUFFICIENT_DMA_BUFFER with no progress in an empty buffer."""
    faults = [{"kind": "ddi_error", "ddi": "DxgkDdiBuildPagingBuffer", "status": status}]
    system, trace = build([SIX], faults=faults)
    r = system.run()
    bc = r.bugcheck.bugcheck
    assert (bc.code, bc.p1, bc.p2) == (BugCheckCode.VIDEO_SCHEDULER_INTERNAL_ERROR,
                                       VidSchError.DRIVER_FAULTED_SYSTEM_COMMAND, int(NTSTATUS[status]) & 0xFFFFFFFF)
    assert r.bugcheck.struct == "DXGKARG_BUILDPAGINGBUFFER" and r.end == 2_000_000 and r.bugcheck.rule == rule


class OverAdvances(ReferenceDriver):
    """Adds the whole DmaSize to pDmaBuffer instead of the bytes it wrote."""

    def DxgkDdiBuildPagingBuffer(self, hAdapter, a):
        size = a.DmaSize
        status = super().DxgkDdiBuildPagingBuffer(hAdapter, a)
        a.pDmaBuffer += size
        return status


class UnderCounts(ReferenceDriver):
    """Writes its commands but advances pDmaBuffer 8 bytes short of them."""

    def DxgkDdiBuildPagingBuffer(self, hAdapter, a):
        start = a.pDmaBuffer
        status = super().DxgkDdiBuildPagingBuffer(hAdapter, a)
        if a.pDmaBuffer - start >= 8:
            a.pDmaBuffer -= 8
        return status


@pytest.mark.parametrize("driver, words", [(OverAdvances, "must stay within the"),
                                           (UnderCounts, "past it: pDmaBuffer must move forward by exactly")])
def test_paging_buffer_pointer_advances_exactly_rule_69(driver, words):
    system, trace = build([SIX], driver=driver)
    r = system.run()
    assert (r.bugcheck.bugcheck.code, r.bugcheck.bugcheck.p1) == (BugCheckCode.DRIVER_VERIFIER_DETECTED_VIOLATION, 69)
    assert r.bugcheck.rule_name == "PagingBufferAdvanceExact" and words in r.bugcheck.message
    assert r.end == 2_000_000


@pytest.mark.rule(116)
def test_engine_reset_that_hits_a_paging_packet_escalates_to_an_adapter_reset():
    faults = [{"kind": "hang", "node": "Copy", "at": 2_000_001}]  # during the first paging transfer
    system, trace = build([SIX], faults=faults)
    r = system.run(until=5_000_000_000)
    names = [e["event"] for e in trace.events if e["event"] in ("TdrDetected", "EngineReset", "AdapterReset", "DeviceError")]
    assert names == ["TdrDetected", "EngineReset", "AdapterReset", "DeviceError"]
    t = trace.of("TdrDetected")[0]["t"]
    assert t == 2_000_000 + 4_000_000_000  # watchdog 2 s after the packet started, then TdrDelay 2 s
    assert trace.of("AdapterReset")[0]["promoted"] == 1
    (err,) = trace.of("DeviceError")
    assert err["device"] == system.contexts[0].device.handle and err["reason"] == "paging packet hit by an engine reset"
    assert r.bugcheck is None


def test_aperture_allocations_are_mapped_and_unmapped_not_copied():
    app = pressure("app", allocations=6, size="64KiB", touch=2, work="100us", interval="1ms", count=12,
                   segment="aperture")
    sc_segments = [{"name": "VRAM", "kind": "memory", "size": "256KiB"},
                   {"name": "Aperture", "kind": "aperture", "size": "256KiB", "cpu_visible": True}]
    sc = scenario_from_dict({"name": "ap", "duration": "50ms", "adapter": {"cpu_cost": ZERO, "segments": sc_segments},
                             "process": [app]}, "<test>")
    trace = ListSink()
    system = System(sc, trace=trace)
    r = system.run()
    assert r.bugcheck is None and r.summary["violations"] == []
    mem = r.summary["memory"]
    assert (mem["bytes_paged_in"], mem["bytes_paged_out"]) == (0, 0)
    # 24 mappings and 20 unmappings of 64 KiB: the four that stay mapped fill the 256 KiB aperture.
    assert (mem["bytes_mapped"], mem["bytes_unmapped"]) == (24 * 64 * KIB, 20 * 64 * KIB)
    assert mem["segments"][1] == {"id": 2, "kind": "aperture", "size": 256 * KIB, "used": 256 * KIB}
    ops = {e["args"]["Operation"] for e in trace.of("DdiCall") if e["name"] == "DxgkDdiBuildPagingBuffer"}
    assert ops == {OP.DXGK_OPERATION_MAP_APERTURE_SEGMENT, OP.DXGK_OPERATION_UNMAP_APERTURE_SEGMENT}
    # The fills went through the GART into each allocation's system memory.
    for i, a in enumerate(system.contexts[0].workload_allocations):
        assert system.gpu.memory.read(a.backing, a.size) == pattern_of(i).to_bytes(4, "little") * (a.size // 4)


def test_segment_budget_caps_what_vidmm_places():
    segs = [{"name": "VRAM", "kind": "memory", "size": "1MiB", "budget": "128KiB"},
            {"name": "Aperture", "kind": "aperture", "size": "1MiB", "cpu_visible": True}]
    app = pressure("app", allocations=4, size="64KiB", touch=1, interval="1ms", count=8)
    sc = scenario_from_dict({"name": "b", "duration": "50ms", "adapter": {"cpu_cost": ZERO, "segments": segs},
                             "process": [app]}, "<test>")
    r = System(sc).run()
    seg = r.summary["memory"]["segments"][0]
    assert (seg["size"], seg["used"]) == (128 * KIB, 128 * KIB)
    assert r.summary["memory"]["evictions"] == 6 and r.summary["contexts"][0]["completed"] == 8


def test_unmapped_aperture_pages_point_at_the_dummy_page():
    system, _ = build([SIX])
    vm = system.adapter.vidsch.vidmm
    pool = system.adapter.pool
    a = vm._args
    a.Operation = int(OP.DXGK_OPERATION_UNMAP_APERTURE_SEGMENT)
    a.pDmaBuffer = pool.alloc(4096)
    a.DmaSize = 4096
    a.pDmaBufferPrivateData = pool.alloc(4096)
    a.DmaBufferPrivateDataSize = 64
    u = a.UnmapApertureSegment
    u.SegmentId = 2
    u.OffsetInPages = 3
    u.NumberOfPages = 2
    u.DummyPage.QuadPart = vm.dummy_page
    assert system.driver.DxgkDdiBuildPagingBuffer(0, a) == 0
    base = system.adapter.segments[1].BaseAddress.QuadPart
    assert system.gpu.translate(base + 3 * 4096 + 5) == vm.dummy_page + 5
    assert system.gpu.translate(base + 4 * 4096) == vm.dummy_page
    with pytest.raises(Exception, match="not mapped"):
        system.gpu.translate(base + 5 * 4096)  # never mapped at all


# -- an adapter reset while paging is in flight ---------------------------------------------------------
SLOW_COPY = [{"name": "3D", "engine": "3d", "command_cost": 0},
             {"name": "Copy", "engine": "copy", "command_cost": 0, "copy_bandwidth": 0.016}]  # 64 KiB: 4.096 ms


def reset_during_paging(processes, faults, nodes=TWO_NODES):
    adapter = {"cpu_cost": ZERO, "nodes": nodes, "segments": SEGMENTS("128KiB")}
    sc = scenario_from_dict({"name": "reset", "duration": "5s", "adapter": adapter, "fault": faults,
                             "process": processes, "driver": {"per_engine_reset": False}}, "<reset>")
    trace = ListSink()
    return System(sc, trace=trace), trace


def test_adapter_reset_gives_paging_packets_taken_back_new_fence_ids():
    """A hang on the 3D node resets the whole adapter (no per-engine reset) while two paging
    packets are on the copy node. The reset makes every fence id submitted so far complete, so the
    two go back with the node's next ids, 4 and 5; kept ids
    2 and 3 would be reported below the last completed one, 0x119/0x1 for a legal driver."""
    hog = {"name": "hog", "context": [{"name": "c", "node": "3D", "workload": {
        "kind": "memory_pressure", "allocations": 1, "size": "4KiB", "touch": 1, "work": "1ms", "count": 1}}]}
    streamer = pressure("streamer", node="Copy", allocations=3, size="64KiB", touch=1, work="100us",
                        interval="0ns", count=3, start="3993ms")
    system, trace = reset_during_paging([hog, streamer], [{"kind": "hang", "process": "hog", "context": "c",
                                                           "packet": 1}], nodes=SLOW_COPY)
    r = system.run()
    assert r.bugcheck is None and r.summary["violations"] == []
    t = 4_000_000_000  # the hog's packet started at 0: watchdog 2 s, then TdrDelay 2 s
    paging = [(e["t"], e["args"]["SubmissionFenceId"]) for e in submissions(trace) if e["args"]["Flags"]["Paging"]]
    # Out and in for the streamer's second packet at 3.997196 s; the reset takes both back.
    assert paging[:4] == [(3_997_196_000, 2), (3_997_196_000, 3), (t, 4), (t, 5)]
    stops = [(e["fence"], e["status"]) for e in trace.of("DmaPacketStop") if e["kind"] == "paging"]
    assert stops[:4] == [(2, "Reset"), (3, "Reset"), (4, "Completed"), (5, "Completed")]
    hog_ctx, streamer_ctx = system.contexts
    assert [e["device"] for e in trace.of("DeviceError")] == [hog_ctx.device.handle]
    assert streamer_ctx.completed == 3 and r.end == 5_000_000_000
    for i, a in enumerate(streamer_ctx.workload_allocations):
        where = a.address if a.resident else a.backing
        assert system.gpu.memory.read(where, a.size) == pattern_of(i).to_bytes(4, "little") * (a.size // 4), i


def test_a_hung_paging_transfer_puts_its_allocations_device_in_error_never_the_system_device():
    """The copy engine hangs under the transfer that evicts a's first allocation (for a's third
    packet). The adapter reset abandons that transfer and puts a's device in error; VidMm's own
    device goes on, so b, whose first packet waited for paging across the reset, runs all four."""
    a = pressure("a", allocations=3, size="64KiB", touch=1, work="1ms", interval="0ns", count=3)
    b = pressure("b", allocations=1, size="64KiB", touch=1, work="1ms", interval="1ms", count=4, start="3ms")
    system, trace = reset_during_paging([a, b], [{"kind": "hang", "node": "Copy", "at": 1_000_001}])
    r = system.run()
    assert r.bugcheck is None and r.summary["violations"] == []
    a_ctx, b_ctx = system.contexts
    t = 4_002_008_192  # the transfer started at 2.008192 ms: watchdog 2 s, then TdrDelay 2 s
    (reset,) = trace.of("AdapterReset")
    assert (reset["t"], reset["node"], reset["device"]) == (t, 1, a_ctx.device.handle)
    assert [(e["device"], e["reason"]) for e in trace.of("DeviceError")] == [(a_ctx.device.handle, "adapter reset")]
    copy_stops = [(e["fence"], e["kind"], e["status"]) for e in trace.of("DmaPacketStop") if e["node"] == 1]
    assert copy_stops[:3] == [(1, "paging", "Aborted"), (2, "paging", "Reset"), (4, "paging", "Completed")]
    assert (a_ctx.completed, b_ctx.completed) == (2, 4)
    b_done = [e["t"] for e in trace.of("QueuePacketStop") if e["context"] == b_ctx.handle]
    assert b_done == [4_003_024_576, 4_004_028_672, 4_005_032_768, 4_006_036_864]


@pytest.mark.parametrize("version", ["vista", "win7"])
def test_paging_before_windows_8_has_no_node_ordinal_and_runs_on_the_paging_node(version):
    """Before the Windows 8 headers DXGKARG_SUBMITCOMMAND has no NodeOrdinal, and a paging
    submission has no context: the driver puts it on the ring of the node it named in
    DXGK_DRIVERCAPS (PagingNode, the copy engine here), and the run is the one a WDDM 2.0 driver gets."""
    sc = scenario_from_dict({"name": "paging", "duration": "50ms", "adapter": {"cpu_cost": ZERO, "segments": SEGMENTS("256KiB")},
                             "process": [SIX]}, "<test>")
    trace = ListSink()
    system = System(sc, trace=trace, settings={"ddi_version": version})
    r = system.run()
    assert r.bugcheck is None and r.summary["violations"] == []
    assert r.summary["contexts"][0]["completed"] == 12
    m = r.summary["memory"]
    assert (m["paging_node"], m["paging_submissions"], m["evictions"]) == (2, 40, 20)
    rings = []  # (paging?, NULL context?, the engine whose doorbell the driver rang inside the call)
    doorbell = None
    for e in trace.events:
        if e["event"] == "Doorbell":
            doorbell = e["engine"]
        elif e["event"] == "DdiCall" and e["name"] == "DxgkDdiSubmitCommand":  # logged when it returns
            assert "NodeOrdinal" not in e["args"]
            rings.append((e["args"]["Flags"]["Paging"], e["args"]["hContext"] == 0, doorbell))
            doorbell = None
    assert rings.count((1, True, 2)) == 40 and rings.count((0, False, 0)) == 12 and len(rings) == 52
    for i, a in enumerate(system.contexts[0].workload_allocations):
        where = a.address if a.resident else a.backing
        assert system.gpu.memory.read(where, a.size) == pattern_of(i).to_bytes(4, "little") * (a.size // 4), i


# -- the DxgkDdiBuildPagingBuffer protocol: AllocationIsIdle, ALLOCATION_BUSY, multipass ------------------
THREE_NODES_SLOW_COPY = [{"name": "3D", "engine": "3d", "command_cost": 0},
                         {"name": "Compute", "engine": "compute", "command_cost": 0},
                         {"name": "Copy", "engine": "copy", "command_cost": 0, "copy_bandwidth": 0.016}]


class RecordsPaging(ReferenceDriver):
    """The reference driver, recording each DxgkDdiBuildPagingBuffer call: (time, operation, the
    allocation, AllocationIsIdle of a transfer or discard, MultipassOffset in and out, status)."""

    calls: list = []
    sim = None  # the run's simulator, for the time of each call

    def answer(self, a) -> int:
        return super().DxgkDdiBuildPagingBuffer(0, a)

    def DxgkDdiBuildPagingBuffer(self, hAdapter, a):
        op = a.Operation
        idle = (a.Transfer.Flags.AllocationIsIdle if op == OP.DXGK_OPERATION_TRANSFER
                else a.DiscardContent.Flags.Value & 1 if op == OP.DXGK_OPERATION_DISCARD_CONTENT else None)
        offset = a.MultipassOffset
        status = self.answer(a)
        self.calls.append((self.sim.now, op, a.Transfer.hAllocation, idle, offset, a.MultipassOffset,
                           status & 0xFFFFFFFF))
        return status


class NeedsIdle(RecordsPaging):
    """A legal driver that moves only idle allocations (it might copy with the CPU): a transfer of
    an allocation VidMm does not say is idle is answered STATUS_GRAPHICS_ALLOCATION_BUSY."""

    def answer(self, a) -> int:
        if a.Operation == OP.DXGK_OPERATION_TRANSFER and not a.Transfer.Flags.AllocationIsIdle:
            return int(NTSTATUS.STATUS_GRAPHICS_ALLOCATION_BUSY)
        return super().answer(a)


def evicted_then_wanted_back(driver):
    """a (3D) uses its allocation X at 0 and again at 5 ms; b (compute) needs room at 1.604 ms and
    evicts X, whose 4.096 ms transfer out on the slow copy engine is still queued or running when
    a needs X back at 5 ms (b's first allocation B0 makes the room)."""
    a = pressure("a", allocations=1, size="64KiB", touch=1, work="1ms", interval="4ms", count=2)
    b = pressure("b", node="Compute", allocations=3, size="64KiB", touch=1, work="100us", interval="0ns", count=3,
                 start="1500us")
    sc = scenario_from_dict({"name": "idle", "duration": "50ms", "process": [a, b],
                             "adapter": {"cpu_cost": ZERO, "nodes": THREE_NODES_SLOW_COPY, "segments": SEGMENTS("192KiB")}},
                            "<idle>")
    driver.calls = []
    trace = ListSink()
    system = System(sc, trace=trace, driver=driver)
    driver.sim = system.sim
    return system, trace


TRANSFER, FILL, DISCARD = OP.DXGK_OPERATION_TRANSFER, OP.DXGK_OPERATION_FILL, OP.DXGK_OPERATION_DISCARD_CONTENT
BUSY = int(NTSTATUS.STATUS_GRAPHICS_ALLOCATION_BUSY)


@pytest.mark.rule(72)
def test_allocation_is_idle_is_set_only_when_the_gpu_is_done_with_the_allocation():
    system, trace = evicted_then_wanted_back(RecordsPaging)
    r = system.run()
    assert r.bugcheck is None and r.summary["violations"] == []
    x = system.contexts[0].workload_allocations[0].handle
    b0, _b1, b2 = (al.handle for al in system.contexts[1].workload_allocations)
    assert RecordsPaging.calls == [
        (1_604_096, TRANSFER, x, 1, 0, 0, 0),  # out: a's packet retired, nothing moves X
        (1_604_096, FILL, b2, None, 0, 0, 0),
        (4_000_000, TRANSFER, b0, 1, 0, 0, 0),  # out B0 to make room for X
        # X back in while its transfer out (1.604 to 5.700 ms) is still on the copy engine: not idle
        (4_000_000, TRANSFER, x, 0, 0, 0, 0),
    ]
    assert [c.completed for c in system.contexts] == [2, 3]


@pytest.mark.rule(72)
def test_allocation_busy_makes_vidmm_wait_for_the_allocation_and_ask_again():
    """STATUS_GRAPHICS_ALLOCATION_BUSY is a documented answer, not a failure: the paging worker
    waits until the GPU is done with the allocation (X's transfer out retires at 5.700096 ms) and
    asks again with AllocationIsIdle set; what it built before (B0 out) goes meanwhile."""
    system, trace = evicted_then_wanted_back(NeedsIdle)
    r = system.run()
    assert r.bugcheck is None and r.summary["violations"] == []
    x = system.contexts[0].workload_allocations[0].handle
    b0 = system.contexts[1].workload_allocations[0].handle
    assert NeedsIdle.calls[2:] == [
        (4_000_000, TRANSFER, b0, 1, 0, 0, 0),
        (4_000_000, TRANSFER, x, 0, 0, 0, BUSY),
        (5_700_096, TRANSFER, x, 1, 0, 0, 0),
    ]
    paging = [(e["t"], e["args"]["SubmissionFenceId"]) for e in submissions(trace) if e["args"]["Flags"]["Paging"]]
    assert paging == [(1_604_096, 1), (1_604_096, 2), (5_700_096, 3), (9_796_096, 4)]
    a_done = [e["t"] for e in trace.of("QueuePacketStop") if e["context"] == system.contexts[0].handle]
    assert a_done == [1_004_096, 18_992_192]  # its second packet waited for X's way back in
    assert system.adapter.vidsch.vidmm.busy_waits == 1 and [c.completed for c in system.contexts] == [2, 3]


def multipass_run():
    """Three 1 MiB allocations take turns in 2 MiB of VRAM; the driver asks for 4 KiB paging buffers
    and writes a transfer as one 28-byte COPY per 4 KiB page: 256 COPYs (7168 bytes) per transfer,
    at most 146 in a buffer."""
    app = pressure("app", allocations=3, size="1MiB", touch=1, work="100us", interval="1ms", count=4)
    sc = scenario_from_dict({"name": "multipass", "duration": "50ms", "process": [app],
                             "adapter": {"cpu_cost": ZERO, "segments": SEGMENTS("2MiB")},
                             "driver": {"paging_buffer_size": "4KiB", "paging_transfer_chunk": "4KiB"}}, "<multipass>")
    RecordsPaging.calls = []
    trace = ListSink()
    system = System(sc, trace=trace, driver=RecordsPaging)
    RecordsPaging.sim = system.sim
    return system, trace


@pytest.mark.rule(70, 74)
def test_multipass_transfer_keeps_the_drivers_multipass_offset_between_buffers():
    system, trace = multipass_run()
    r = system.run()
    assert r.bugcheck is None and r.summary["violations"] == []
    insufficient = int(NTSTATUS.STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER)
    first = 146 * 4096  # what the COPYs of a fresh 4 KiB buffer move
    steps = [(t, op, offset_in, offset_out, status) for t, op, _h, _i, offset_in, offset_out, status in RecordsPaging.calls]
    assert steps == [
        # 2 ms: allocation 2's first use: out allocation 0 in two passes, then the fill
        (2_000_000, TRANSFER, 0, first, insufficient), (2_000_000, TRANSFER, first, first, 0),
        (2_000_000, FILL, 0, 0, 0),
        # 3 ms: out allocation 1 in two passes; allocation 0 back in: 36 COPYs fit the 1016 bytes left,
        # then 146 in a new buffer, then the last 74
        (3_000_000, TRANSFER, 0, first, insufficient), (3_000_000, TRANSFER, first, first, 0),
        (3_000_000, TRANSFER, 0, 36 * 4096, insufficient), (3_000_000, TRANSFER, 36 * 4096, 182 * 4096, insufficient),
        (3_000_000, TRANSFER, 182 * 4096, 182 * 4096, 0),
    ]
    # Each part is its own paging submission: (start, end) of commands, and of private data.
    parts = [(e["args"]["DmaBufferSubmissionStartOffset"], e["args"]["DmaBufferSubmissionEndOffset"],
              e["args"]["DmaBufferPrivateDataSubmissionStartOffset"], e["args"]["DmaBufferPrivateDataSubmissionEndOffset"])
             for e in submissions(trace) if e["args"]["Flags"]["Paging"]]
    assert parts == [(0, 4088, 0, 16), (0, 3080, 0, 16), (3080, 3104, 16, 32),
                     (0, 4088, 0, 16), (0, 3080, 0, 16), (3080, 4088, 16, 32), (0, 4088, 0, 16), (0, 2072, 0, 16)]
    m = r.summary["memory"]
    assert (m["paging_submissions"], m["evictions"], m["bytes_paged_out"], m["bytes_paged_in"]) == (8, 2, 2 << 20, 2 << 20)
    assert system.adapter.vidsch.vidmm.multipass == 4 and system.driver.paging_passes == 4
    for i, a in enumerate(system.contexts[0].workload_allocations):
        where = a.address if a.resident else a.backing
        assert system.gpu.memory.read(where, a.size) == pattern_of(i).to_bytes(4, "little") * (a.size // 4), i


# -- residency fields of a scenario: budget, offer, reclaim ----------------------------------------------
@pytest.mark.parametrize("process, workload, message", [
    ({"budget": [{"at": "1ms", "size": "100"}]}, {},
     "process[0].budget[0].size: must be a multiple of 4096 bytes, 0 or more, got 100"),
    ({"budget": [{"at": "-1ms", "size": "64KiB"}]}, {},
     "process[0].budget[0].at: a duration cannot be negative, got '-1ms'"),
    ({}, {"offer": [{"at": "1ms", "allocations": [6]}]},
     "process[0].context[0].workload: offer[0].allocations: index 6 names no allocation (0..5)"),
    ({}, {"reclaim": [{"at": "1ms", "allocations": []}]},
     "process[0].context[0].workload.reclaim[0].allocations: needs at least 1 entry, got none (range: 1 .. 256; a "
     "call names each of the workload's allocations at most once)"),
])
def test_residency_fields_say_what_is_wrong(process, workload, message):
    app = dict(pressure("app", allocations=6, size="64KiB"), **process)
    app["context"][0]["workload"].update(workload)
    with pytest.raises(ScenarioError) as caught:
        scenario_from_dict({"name": "r", "adapter": {"segments": SEGMENTS("256KiB")}, "process": [app]}, "<r>")
    assert str(caught.value) == f"<r>: {message}"


def test_a_packet_never_overtakes_the_paging_that_brings_its_allocation_in():
    """Two contexts of one device, on the 3D and compute nodes. a's fourth packet needs X back (X was
    evicted for Z): VidMm transfers Y out and X in where Y was, on the slow copy engine (8.296 to
    16.488 ms). X now counts as resident, so b's copy of X at 9 ms needs no paging of its own, but it
    must wait for X's transfer in: run at once, it copied Y's bytes, still in X's new place."""
    from wddmsim.umd import Copy, Fill, Target

    idle = {"kind": "script", "packets": [{"at": "1s", "work": 0}]}
    app = {"name": "app", "context": [{"name": "a", "node": "3D", "workload": idle},
                                      {"name": "b", "node": "Compute", "workload": idle}]}
    sc = scenario_from_dict({"name": "overtake", "duration": "50ms", "process": [app], "adapter": {
        "cpu_cost": ZERO, "nodes": THREE_NODES_SLOW_COPY, "segments": SEGMENTS("192KiB")}}, "<overtake>")
    trace = ListSink()
    system = System(sc, trace=trace)
    kmt, rt = system.kmt, system.runtime
    a, b = system.contexts
    x, y, w, z = (kmt.CreateAllocation(a.device, 64 * KIB) for _ in range(4))  # z does not fit: evicted

    def app_a():
        yield from rt.submit(a, (Fill(Target(x), 64 * KIB, 0x11111111),))
        yield from rt.submit(a, (Fill(Target(y), 64 * KIB, 0x22222222),))
        yield 100_000
        yield from rt.submit(a, (Fill(Target(z), 64 * KIB, 0x44444444),))  # evicts x
        yield from rt.submit(a, (Fill(Target(x), 4, 0x11111111),))  # x back in, y out

    def app_b():
        yield from rt.submit(b, (Fill(Target(w), 64 * KIB, 0x33333333),))
        yield 9_000_000
        yield from rt.submit(b, (Copy(Target(x), Target(w), 64 * KIB),))

    system.sim.process(app_a())
    system.sim.process(app_b())
    r = system.run()
    assert r.bugcheck is None and r.summary["violations"] == []
    evicted = [(e["t"], e["allocation"]) for e in trace.of("EvictAllocation")]
    assert evicted == [(100_000, x.handle), (8_292_000, y.handle)]
    x_in = [e["t"] for e in trace.of("QueuePacketStop") if e["kind"] == "paging"][-1]
    b_start = [e["t"] for e in trace.of("DmaPacketStart") if e["context"] == b.handle]
    assert x_in == 16_488_096 and b_start == [0, 16_488_096]
    assert system.gpu.memory.read(w.address, 64 * KIB) == bytes.fromhex("11111111") * (16 * KIB)
