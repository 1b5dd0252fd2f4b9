"""GPU virtual addressing under the software scheduler (WDDM 2.0 GpuMmu), end to end: processes
with page tables VidMm writes through DxgkDdiBuildPagingBuffer, command buffers at GPU virtual
addresses submitted through DxgkDdiSubmitCommandVirtual, its STATUS_INVALID_PARAMETER and failure
rules (23, 24), page faults on unmapped addresses, and monitored-fence waits the OS holds per
context (rule 103), with dependency chains and ping-pong (reference scenarios 3 and 19)."""

from __future__ import annotations

import pytest

from wddmsim.ddi.enums import DXGK_BUILDPAGINGBUFFER_OPERATION as OP
from wddmsim.ddi.enums import DXGK_PAGETABLEUPDATEMODE
from wddmsim.ddi.ntstatus import NTSTATUS
from wddmsim.dxgkrnl import ApiError
from wddmsim.dxgkrnl.gpuva import VA_START
from wddmsim.dxgkrnl.wddm2 import UNMAPPED_VA
from wddmsim.gpu import commands as C
from wddmsim.kmd import ReferenceDriver
from wddmsim.scenario import ScenarioError, scenario_from_dict
from wddmsim.runner.system import System
from wddmsim.trace import ListSink
from wddmsim.umd import Fill, Target, Work

from wddm2util import COSTS, MS, ZERO, adapter, chain_processes, ddi_calls, run, scenario, stops

GPU_PHYSICAL = DXGK_PAGETABLEUPDATEMODE.DXGK_PAGETABLEUPDATE_GPU_PHYSICAL
ONE = [{"name": "app", "context": [{"name": "c", "node": "3D", "workload": {
    "kind": "script", "packets": [{"at": 0, "work": "1ms", "repeat": 3}]}}]}]


def paging_done(events, system) -> list[int]:
    """When VidMm's page-table paging packets completed (its system context's QueuePacketStop)."""
    mine = {c.handle for c in system.contexts}
    return [e["t"] for e in events if e["event"] == "QueuePacketStop" and e["kind"] == "paging" and e["context"] not in mine]


def test_buffers_reach_the_driver_through_submit_command_virtual():
    system, result, events = run(scenario(adapter("va"), ONE))
    assert result.bugcheck is None
    virt = ddi_calls(events, "DxgkDdiSubmitCommandVirtual")
    ctx = system.contexts[0]
    assert [c["args"]["SubmissionFenceId"] for c in virt] == [1, 2, 3]
    for c in virt:
        a = c["args"]
        assert c["irql"] == "PASSIVE_LEVEL" and c["status"] == "STATUS_SUCCESS"
        assert a["hContext"] == ctx.hDdi and a["NodeOrdinal"] == 0 and a["EngineOrdinal"] == 0
        assert a["DmaBufferVirtualAddress"] >= VA_START
        assert a["DmaBufferSize"] == len(C.work(MS))  # the user-mode driver's buffer, nothing added
        assert a["DmaBufferUmdPrivateDataSize"] == 16
        assert a["DmaBufferPrivateDataSize"] == ctx.info.DmaBufferPrivateDataSize
        assert a["Flags"]["Value"] == 0
    # No kernel rendering or patching for a GPU-VA context; DxgkDdiSubmitCommand only for paging.
    assert not ddi_calls(events, "DxgkDdiRender") and not ddi_calls(events, "DxgkDdiPatch")
    assert all(c["args"]["Flags"]["Paging"] == 1 and c["args"]["hContext"] == 0
               for c in ddi_calls(events, "DxgkDdiSubmitCommand"))
    # The process got a driver process object, which the device and the page-table updates name.
    (proc,) = ddi_calls(events, "DxgkDdiCreateProcess")
    hkmd = proc["args"]["hKmdProcess"]
    assert ddi_calls(events, "DxgkDdiCreateDevice")[0]["args"]["hKmdProcess"] == hkmd
    updates = [c["args"]["UpdatePageTable"] for c in ddi_calls(events, "DxgkDdiBuildPagingBuffer")
               if c["args"]["Operation"] == OP.DXGK_OPERATION_UPDATE_PAGE_TABLE]
    assert updates and all(u["hProcess"] == hkmd and u["UpdateMode"] == GPU_PHYSICAL for u in updates)
    (root,) = ddi_calls(events, "DxgkDdiSetRootPageTable")
    assert root["args"]["hContext"] == ctx.hDriver
    assert root["args"]["Address"]["SegmentOffset"] == system.adapter.wddm2.gpuva.space(ctx.device.process).root
    # The first buffer waits for its page tables: it starts when the paging packet completes; then
    # the three run back to back.
    first = paging_done(events, system)[0]
    starts = [e["t"] for e in events if e["event"] == "DmaPacketStart" and e["context"] == ctx.handle]
    assert starts == [first, first + MS, first + 2 * MS]
    assert [e["t"] for e in stops(events, system)] == [first + MS, first + 2 * MS, first + 3 * MS]


def test_the_gpu_translates_through_the_page_tables_vidmm_wrote():
    system, result, events = run(scenario(adapter("va"), ONE))
    wddm2 = system.adapter.wddm2
    ctx = system.contexts[0]
    area = wddm2._areas[ctx.handle]
    root = wddm2.gpuva.space(ctx.device.process).root
    mmu = system.gpu.mmu
    for off in (0, 4096, 4 << 20 - 1):
        assert mmu.translate(root, area.va + off) == area.base + off
    with pytest.raises(Exception, match="fault"):
        mmu.translate(root, UNMAPPED_VA)
    # Every page-table operation went through DxgkDdiBuildPagingBuffer as a Paging submission.
    ops = {c["args"]["Operation"] for c in ddi_calls(events, "DxgkDdiBuildPagingBuffer")}
    assert ops == {OP.DXGK_OPERATION_UPDATE_PAGE_TABLE}
    assert wddm2.gpuva.summary()["paging_buffers"] == len(paging_done(events, system)) >= 1


def test_the_driver_switches_address_spaces_between_processes():
    """Two processes use the same GPU virtual address for different memory: each buffer fills its
    own allocation, which needs the driver's SET_ADDRESS_SPACE before the other process's buffer."""
    procs = [{"name": n, "context": [{"name": "c", "node": "3D", "workload": {
        "kind": "script", "packets": [{"at": "10ms", "work": 0}]}}]} for n in ("a", "b")]
    system = System(scenario(adapter("va"), procs, duration="20ms"))
    kmt = system.kmt
    allocs = [kmt.CreateAllocation(ctx.device, 4096) for ctx in system.contexts]
    assert allocs[0].va == allocs[1].va and allocs[0].address != allocs[1].address

    def fill(ctx, alloc, pattern):
        yield from system.runtime.submit(ctx, (Fill(Target(alloc), 4096, pattern),))

    for ctx, alloc, pattern in zip(system.contexts, allocs, (0x11111111, 0x22222222)):
        system.sim.process(fill(ctx, alloc, pattern))
    assert system.run().bugcheck is None
    mem = system.gpu.memory
    assert mem.read(allocs[0].address, 4096) == bytes.fromhex("11") * 4096
    assert mem.read(allocs[1].address, 4096) == bytes.fromhex("22") * 4096


@pytest.mark.rule(24)
def test_invalid_parameter_puts_the_device_in_error_and_counts_the_fence_after_earlier_packets():
    """Rule 24: the refused buffer's fence completes once the packets before it are done; the
    device is in error (its queued packets are cancelled, its next call fails); others go on."""
    procs = [{"name": "a", "context": [{"name": "c", "node": "3D", "workload": {
                 "kind": "script", "packets": [{"at": "20ms", "work": 0}]}}]},
             {"name": "b", "context": [{"name": "c", "node": "3D", "workload": {
                 "kind": "script", "packets": [{"at": "1ms", "work": "1ms", "repeat": 2}]}}]}]
    trace = ListSink()
    system = System(scenario(adapter("va"), procs, duration="30ms"), trace=trace)
    a, b = system.contexts
    seen = {}

    def app():
        yield from system.runtime.submit(a, (Work(3 * MS),))
        yield from system.runtime.submit(a, (Work(MS),), private=b"bad!" + bytes(12))  # malformed private data
        yield from system.runtime.submit(a, (Work(MS),))
        yield 10 * MS
        try:
            yield from system.runtime.submit(a, (Work(MS),))
        except ApiError as e:
            seen["status"] = e.status

    system.sim.process(app())
    result = system.run()
    events = trace.events
    assert result.bugcheck is None
    virt = [c for c in ddi_calls(events, "DxgkDdiSubmitCommandVirtual") if c["args"]["hContext"] == a.hDdi]
    assert [c["status"] for c in virt] == ["STATUS_SUCCESS", "STATUS_INVALID_PARAMETER"]
    (err,) = [e for e in events if e["event"] == "DeviceError"]
    assert err["device"] == a.device.handle and err["t"] == virt[1]["t"]
    first = paging_done(events, system)[0]
    done = [(e["seq"], e["t"], e["status"]) for e in events if e["event"] == "QueuePacketStop" and e["context"] == a.handle]
    # Packet 1 runs 3 ms from the page tables; the refused packet 2 counts as complete with it;
    # packet 3 never left the software queue.
    assert done == [(3, virt[1]["t"], "Cancelled"), (1, first + 3 * MS, "Completed"), (2, first + 3 * MS, "Completed")]
    assert a.completed == 2 and a.cancelled == 1 and seen["status"] == int(NTSTATUS.STATUS_DEVICE_REMOVED)
    assert [e["t"] for e in stops(events, system) if e["context"] == b.handle] == [first + 4 * MS, first + 5 * MS]


class FailsVirtualSubmission(ReferenceDriver):
    def DxgkDdiSubmitCommandVirtual(self, hAdapter, pSubmitCommandVirtual):
        return int(NTSTATUS.STATUS_UNSUCCESSFUL)


@pytest.mark.rule(23)
def test_any_other_status_is_bug_check_0x119_2_rule_23():
    system, result, events = run(scenario(adapter("va"), ONE), driver=FailsVirtualSubmission)
    bc = result.bugcheck
    assert (int(bc.bugcheck.code), bc.bugcheck.p1, bc.bugcheck.p2) == (0x119, 0x2, int(NTSTATUS.STATUS_UNSUCCESSFUL))
    assert (bc.rule, bc.struct) == (23, "DXGKARG_SUBMITCOMMANDVIRTUAL")
    assert events[-2]["event"] == "BugCheck" and events[-2]["rule"] == 23


def test_a_write_to_an_unmapped_virtual_address_is_a_gpu_page_fault():
    sc = scenario(adapter("va", per_engine_reset=True), ONE,
                  fault=[{"kind": "page_fault", "process": "app", "context": "c", "packet": 2}])
    system, result, events = run(sc)
    assert result.bugcheck is None
    (pf,) = [e for e in events if e["event"] == "PageFault"]
    ctx = system.contexts[0]
    first = paging_done(events, system)[0]
    # The write is the buffer's first command: the fault comes as packet 2 starts.
    assert (pf["t"], pf["address"], pf["fence"], pf["hwqueue"]) == (first + MS, UNMAPPED_VA, 2, 0)
    root = system.adapter.wddm2.gpuva.space(ctx.device.process).root
    # The MMU's walk stopped at the root (level 2): nothing is mapped below VA_START.
    assert system.gpu.faults == [(pf["t"], "3D", f"page fault at {UNMAPPED_VA:#x} (write, level 2, root {root:#x}): "
                                               f"entry 0 of the level-2 table at {root:#x} is not valid")]
    assert ctx.device.error and [e["reason"] for e in events if e["event"] == "DeviceError"] == ["page fault"]
    assert ctx.completed == 1


def fence_app(system, work):
    """Build a system, a shared fence, and start ``work(kmt, contexts, fence)``."""
    kmt = system.kmt
    fence = kmt.CreateSynchronizationObject(system.contexts[0].device, 0, ("Shared",))
    for ctx in system.contexts[1:]:
        kmt.OpenSynchronizationObject(fence, ctx.device)
    system.sim.process(work(kmt, system.contexts, fence))
    return fence


def two_idle_contexts():
    return [{"name": n, "context": [{"name": "c", "node": "3D", "workload": {
        "kind": "script", "packets": [{"at": "50ms", "work": 0}]}}]} for n in ("a", "b")]


@pytest.mark.rule(103)
def test_a_gpu_wait_holds_only_its_own_context():
    """Rule 103: A's buffer waits for the fence; B's three buffers on the same node run meanwhile;
    A's starts exactly when the CPU signals."""
    trace = ListSink()
    system = System(scenario(adapter("va"), two_idle_contexts(), duration="60ms"), trace=trace)

    def work(kmt, ctxs, fence):
        a, b = ctxs
        kmt.WaitForSynchronizationObjectFromGpu(a, fence, 1)
        yield from system.runtime.submit(a, (Work(MS),))
        for _ in range(3):
            yield from system.runtime.submit(b, (Work(MS),))
        yield 5 * MS
        kmt.SignalSynchronizationObjectFromCpu([fence], [1])

    fence = fence_app(system, work)
    assert system.run().bugcheck is None
    a, b = system.contexts
    events = trace.events
    starts = {(e["context"], e["seq"]): e["t"] for e in events if e["event"] == "DmaPacketStart"}
    first = starts[(b.handle, 1)]
    assert [starts[(b.handle, i)] for i in (1, 2, 3)] == [first, first + MS, first + 2 * MS]
    assert starts[(a.handle, 1)] == 5 * MS
    waits = [e for e in events if e["event"] in ("FenceWait", "FenceWaitDone") and e["fence"] == fence.handle]
    assert [(e["event"], e["t"], e.get("waited_ns")) for e in waits] == [("FenceWait", 0, None), ("FenceWaitDone", 5 * MS, 5 * MS)]


def test_the_os_signals_after_the_packets_before_the_call():
    trace = ListSink()
    system = System(scenario(adapter("va", COSTS), two_idle_contexts(), duration="40ms"), trace=trace)
    seen = {}

    def work(kmt, ctxs, fence):
        a, _ = ctxs
        yield from system.runtime.submit(a, (Work(2 * MS),))
        kmt.SignalSynchronizationObjectFromGpu(a, fence, 7)
        status = yield kmt.WaitForSynchronizationObjectFromCpu([fence], [7])
        seen["t"], seen["status"] = system.sim.now, status

    fence_app(system, work)
    assert system.run().bugcheck is None
    (stop,) = [e for e in stops(trace.events, system) if e["context"] == system.contexts[0].handle]
    assert seen == {"t": stop["t"], "status": 0}
    sig = [e for e in trace.events if e["event"] == "FenceSignal"]
    assert [(e["t"], e["value"], e["source"]) for e in sig] == [(stop["t"], 7, "queue")]


@pytest.mark.parametrize("cost", [ZERO, COSTS], ids=["zero_cost", "default_cost"])
def test_cross_context_dependency_chain(cost):
    """Reference scenario 3: 100 packets of 1 ms dealt round robin over 4 contexts, each waiting for
    the one before it through a monitored fence: strict global order, no deadlock, and a makespan of
    the work plus 99 wake-ups, each the ISR, the DPC and the submission of the next packet."""
    sc = scenario(adapter("va", cost), chain_processes(4, 25), fence=[{"name": "f"}])
    system, result, events = run(sc)
    assert result.bugcheck is None
    done = stops(events, system)
    order = {c.handle: i for i, c in enumerate(system.contexts)}
    assert [order[e["context"]] for e in done] == [k % 4 for k in range(100)]
    assert [e["seq"] for e in done] == [k // 4 + 1 for k in range(100)]
    starts = [e["t"] for e in events if e["event"] == "DmaPacketStart" and e["kind"] == "render"]
    wake = cost["isr"] + cost["dpc"] + cost["submit"]
    assert [b - a for a, b in zip(starts, starts[1:])] == [MS + wake] * 99
    assert done[-1]["t"] - starts[0] == 100 * MS + 99 * wake + cost["isr"]
    assert system.adapter.wddm2.fences.read(system.fences["f"]) == 100  # in memory; no waiter made the OS look


def test_ping_pong_reports_its_wake_up_latency():
    """Reference scenario 19: 2 contexts alternate 1000 x 1 ms with cross dependencies; makespan =
    1000 ms + 999 x the fence-signal -> wait-unblock -> submit latency (ISR + DPC + submit)."""
    sc = scenario(adapter("va", COSTS), chain_processes(2, 500), duration="2s", fence=[{"name": "f"}])
    system, result, events = run(sc)
    done = stops(events, system)
    assert len(done) == 1000
    starts = [e["t"] for e in events if e["event"] == "DmaPacketStart" and e["kind"] == "render"]
    latency = COSTS["isr"] + COSTS["dpc"] + COSTS["submit"]
    assert done[-1]["t"] - starts[0] == 1000 * MS + 999 * latency + COSTS["isr"]
    waits = [e["waited_ns"] for e in events if e["event"] == "FenceWaitDone"]
    assert len(waits) == 999 and min(waits) > 0


@pytest.mark.rule(13, 62)
def test_a_preempted_virtual_buffer_resumes_where_it_stopped():
    """A long buffer of a low-priority process is preempted mid-WORK at the interval granularity;
    it is submitted again through DxgkDdiSubmitCommandVirtual with Flags.Resubmission and finishes
    with its work conserved."""
    procs = [{"name": "low", "priority": "idle", "context": [{"name": "c", "node": "3D", "workload": {
                 "kind": "script", "packets": [{"at": 0, "work": "10ms"}]}}]},
             {"name": "high", "priority": "high", "context": [{"name": "c", "node": "3D", "workload": {
                 "kind": "script", "packets": [{"at": "2ms", "work": "1ms"}]}}]}]
    ad_spec = adapter("va", node3d={"preemption": "interval", "preemption_interval": "100us"})
    system, result, events = run(scenario(ad_spec, procs, duration="50ms"))
    assert result.bugcheck is None
    low, high = system.contexts
    virt = ddi_calls(events, "DxgkDdiSubmitCommandVirtual")
    assert [(c["args"]["hContext"], c["args"]["Flags"]["Resubmission"]) for c in virt] == [
        (low.hDdi, 0), (high.hDdi, 0), (low.hDdi, 1)]
    assert virt[0]["args"]["DmaBufferVirtualAddress"] == virt[2]["args"]["DmaBufferVirtualAddress"]
    first = min(paging_done(events, system))
    t = {(e["context"], e["status"]): e["t"] for e in stops(events, system)}
    # The low buffer starts when its page tables are written; the request at 2 ms stops it at the
    # next 100 us of its WORK; the high buffer runs 1 ms; the low one finishes the rest.
    stop = first + 20 * 100_000
    assert t[(high.handle, "Completed")] == stop + MS
    assert t[(low.handle, "Completed")] == first + 10 * MS + MS
    assert system.gpu.engines[0].busy_ns == 11 * MS


class RunsNullRenderingAnyway(ReferenceDriver):
    def DxgkDdiSubmitCommandVirtual(self, hAdapter, a):
        a.Flags.NullRendering = 0
        try:
            return super().DxgkDdiSubmitCommandVirtual(hAdapter, a)
        finally:
            a.Flags.NullRendering = 1


@pytest.mark.rule(14)
def test_null_rendering_on_virtual_submissions_and_rule_14():
    system, result, events = run(scenario(adapter("va", null_rendering=True), ONE))
    assert result.bugcheck is None and system.gpu.engines[0].busy_ns == 0
    assert all(c["args"]["Flags"]["NullRendering"] == 1 for c in ddi_calls(events, "DxgkDdiSubmitCommandVirtual"))
    assert len(stops(events, system)) == 3
    system, result, events = run(scenario(adapter("va", null_rendering=True), ONE), driver=RunsNullRenderingAnyway)
    assert (int(result.bugcheck.bugcheck.code), result.bugcheck.rule) == (0xC4, 14)
    assert result.bugcheck.struct == "DXGKARG_SUBMITCOMMANDVIRTUAL"


def test_an_allocation_that_does_not_fit_fails_at_creation():
    segs = [{"name": "vram", "kind": "memory", "size": "64KiB"}, {"name": "gart", "kind": "aperture", "size": "1MiB"}]
    system = System(scenario(adapter("va", segments=segs), ONE))
    dev = system.contexts[0].device
    system.kmt.CreateAllocation(dev, 48 << 10)
    with pytest.raises(ApiError) as e:
        system.kmt.CreateAllocation(dev, 32 << 10)
    assert e.value.status == int(NTSTATUS.STATUS_NO_MEMORY)
    aperture = system.kmt.CreateAllocation(dev, 32 << 10, "aperture")  # system memory, mapped directly
    assert system.gpu.mmu is not None and aperture.va >= VA_START


@pytest.mark.rule(99)
def test_32_bit_fences_cross_2_to_the_32_and_64_bit_fences_never_wrap():
    """No64BitAtomics: the GPU writes 32-bit values; a chain across 2**32 completes in order and
    the OS's 64-bit view goes past it. A 64-bit fence near its maximum refuses the signal that
    would wrap it (STATUS_INVALID_PARAMETER), after the packets below it ran."""
    base = (1 << 32) - 3
    sc = scenario(adapter("va", no64bit_atomics=True), chain_processes(2, 3), fence=[{"name": "f", "initial": base}])
    system, result, events = run(sc)
    f = system.fences["f"]
    assert result.bugcheck is None and f.bits == 32
    fences = system.adapter.wddm2.fences
    assert len(stops(events, system)) == 6 and fences.read(f) == base + 6 == (1 << 32) + 3
    assert system.gpu.memory.read_u32(f.cpu_va) == 3
    # The OS saw every value a waiter needed, past the wrap, in order.
    assert [e["value"] for e in events if e["event"] == "FenceSignal"] == [base + k for k in range(1, 6)]

    top = (1 << 64) - 3
    sc = scenario(adapter("va"), chain_processes(2, 3), fence=[{"name": "f", "initial": top}])
    system, result, events = run(sc)
    f = system.fences["f"]
    assert f.bits == 64 and system.adapter.wddm2.fences.read(f) == (1 << 64) - 1
    done = stops(events, system)
    assert len(done) == 2  # the packets signalling 2**64-2 and 2**64-1
    # Each member's second packet would signal past 2**64-1: refused before it was queued.
    assert {c.full_name: (c.completed, c.api_error) for c in system.contexts} == {
        "p0/c": (1, "STATUS_INVALID_PARAMETER"), "p1/c": (1, "STATUS_INVALID_PARAMETER")}


@pytest.mark.parametrize("changes, message", [
    ({"fence": [{"name": "f"}]}, "fence: monitored fences need GPU virtual addressing"),
    ({"adapter": {"gpu_va": True}, "fence": [{"name": "f"}],
      "process": chain_processes(2, 1, wait="gpu")}, "under the software scheduler GPU waits are the OS's"),
    ({"adapter": {"gpu_va": True}, "fence": [{"name": "f"}],
      "process": chain_processes(2, 1)[:1]}, "needs exactly one context at each position 0..1, found positions [0]"),
    ({"adapter": {"gpu_va": True}, "process": chain_processes(2, 1)},
     "no fence named 'f'; declare it in a [[fence]] table"),
    ({"adapter": {"gpu_va": True}, "process": [{"name": "a", "context": [{
        "name": "c", "node": "3D", "workload": {"kind": "memory_pressure", "allocations": 2, "size": 4096}}]}]},
     "memory_pressure needs VidMm to evict"),
    ({"process": [{"name": "a", "context": [{"name": "c", "node": "3D", "band": "focus", "workload": {
        "kind": "script", "packets": [{"at": 0, "work": 1}]}}]}]}, "band is a hardware-scheduling setting"),
    # Rule 126's privilege is checked where Windows checks it, before the driver sees the band: a
    # normal process asking for FOCUS used to run and stop with 0xC4 blaming the driver.
    ({"adapter": {"scheduling": "hardware"}, "process": [{"name": "a", "context": [{
        "name": "c", "node": "3D", "band": "focus", "workload": {"kind": "script", "packets": [{"at": 0, "work": 1}]}}]}]},
     "the focus band needs the SE_INC_BASE_PRIORITY_NAME privilege, which the model gives to processes of "
     "priority class high or realtime; process 'a' is normal"),
])
def test_scenario_errors_name_the_field_and_the_reason(changes, message):
    base = {"name": "t", "adapter": {}, "process": ONE}
    for key, value in changes.items():
        base[key] = {**base[key], **value} if key == "adapter" else value
    with pytest.raises(ScenarioError) as e:
        scenario_from_dict(base, "s.toml")
    assert message in str(e.value)
