"""Hardware scheduling end to end (WDDM 2.x): hardware contexts and queues with progress fences,
DxgkDdiSubmitCommandToHwQueue and its arguments, RingBufferFenceRelease, MaxInFlightHwQueueBuffers,
private-data lifetime, presents with Flags.Present, GPU waits that hold one queue, suspend and
resume, timeouts, engine resets and page faults. Every time is exact virtual time."""

from __future__ import annotations

import pytest

from wddmsim.ddi.enums import DXGK_KERNEL_SUBMISSION_TYPE as KST
from wddmsim.ddi.ntstatus import NTSTATUS
from wddmsim.dxgkrnl import ApiError
from wddmsim.dxgkrnl.gpuva import VA_START
from wddmsim.dxgkrnl.wddm2 import UNMAPPED_VA
from wddmsim.gpu import commands as C
from wddmsim.kmd import ReferenceDriver
from wddmsim.runner.system import System
from zoo.hwqueues import KeepsPrivateData
from wddmsim.trace import ListSink
from wddmsim.umd import Work

from wddm2util import COSTS, MS, adapter, chain_processes, ddi_calls, run, scenario, stops

FENCE_WRITE = len(C.fence(0, 0))


def script(name: str, *packets, **context) -> dict:
    return {"name": name, "context": [{"name": "c", "node": "3D", **context, "workload": {
        "kind": "script", "packets": [dict(at=at, work=work, repeat=repeat) for at, work, repeat in packets]}}]}


def idle(name: str, **context) -> dict:
    """A process whose context submits only what the test submits (its script comes after the run)."""
    return script(name, ("1000s", 0, 1), **context)


def first_run(events, ctx) -> int:
    """When the GPU first put ``ctx`` on its engine (its page tables written by then), read from
    the log: HwQueueCreate gives the driver's handle HwContextState uses."""
    handle = next(e["hHwContext"] for e in events if e["event"] == "HwQueueCreate" and e["context"] == ctx.handle)
    return next(e["t"] for e in events if e["event"] == "HwContextState" and e["context"] == handle
                and e["state"] == "running")


@pytest.mark.rule(100, 125)
def test_contexts_and_queues_are_created_before_anything_is_submitted():
    system, result, events = run(scenario(adapter("hw"), [script("app", (0, "1ms", 3))]))
    assert result.bugcheck is None
    ctx = system.contexts[0]
    (q,) = ctx.hwqueues
    names = [e["name"] for e in events if e["event"] == "DdiCall"]
    mine = [n for n in names if n in ("DxgkDdiCreateHwContext", "DxgkDdiSetRootPageTable",
                                      "DxgkDdiSetContextSchedulingProperties", "DxgkDdiCreateHwQueue",
                                      "DxgkDdiSubmitCommandToHwQueue")]
    # VidMm's kernel context and queue first, then the application's; properties before any submit.
    assert mine[:4] == mine[4:8] == ["DxgkDdiCreateHwContext", "DxgkDdiSetRootPageTable",
                                     "DxgkDdiSetContextSchedulingProperties", "DxgkDdiCreateHwQueue"]
    assert names.index("DxgkDdiSetupPriorityBands") < names.index("DxgkDdiCreateHwContext")
    create = ddi_calls(events, "DxgkDdiCreateHwQueue")[1]["args"]
    assert create["hHwQueueProgressFence"] == q.progress.handle
    assert create["HwQueueProgressFenceCPUVirtualAddress"] == q.progress.cpu_va
    assert create["HwQueueProgressFenceGPUVirtualAddress"] == q.progress.gpu_va[ctx.device.process] >= VA_START
    assert create["HwQueueProgressFenceGPUVirtualAddress"] % 8 == create["HwQueueProgressFenceCPUVirtualAddress"] % 8 == 0
    (qc,) = [e for e in events if e["event"] == "HwQueueCreate" and e["context"] == ctx.handle]
    assert (qc["hwqueue"], qc["hHwQueue"], qc["hHwContext"], qc["band"]) == (q.handle, q.hDriver, ctx.hDriver, "normal")
    subs = [c for c in ddi_calls(events, "DxgkDdiSubmitCommandToHwQueue") if c["args"]["hHwQueue"] == q.hDriver]
    for i, c in enumerate(subs, 1):
        a = c["args"]
        assert c["irql"] == "DISPATCH_LEVEL" and c["status"] == "STATUS_SUCCESS"
        assert a["HwQueueProgressFenceId"] == i and a["Flags"]["Value"] == 0
        assert a["HwQueueProgressFenceGpuVa"] == create["HwQueueProgressFenceGPUVirtualAddress"]
        assert a["HwQueueProgressFenceCpuVa"] == q.progress.cpu_va
        assert a["DmaBufferSize"] == len(C.work(MS)) + FENCE_WRITE  # the UMD ends it with the progress write
        assert a["DmaBufferPrivateDataSize"] == 16 and a["DmaBufferVirtualAddress"] >= VA_START
    start = first_run(events, system.contexts[0])
    done = stops(events, system)
    # Back to back; each retires in the DPC its progress-fence interrupt queued (zero CPU costs).
    assert [(e["fence"], e["t"], e["hwqueue"]) for e in done] == [(i, start + i * MS, q.handle) for i in (1, 2, 3)]
    assert system.adapter.wddm2.fences.read(q.progress) == 3


def test_ring_buffer_fence_release_moves_the_progress_write_from_the_buffer_to_the_driver():
    """RingBufferFenceRelease = 0: the UMD's buffer ends with the progress-fence write and kernel
    buffers get theirs from DxgkDdiSignalMonitoredFence. = 1: the driver writes it after the engine
    has left the buffer (a ring FENCE), the buffer is the application's commands only, and nothing
    asks the driver to append a write. Completion times are the same; the log tells them apart."""
    logs = {}
    for release in (0, 1):
        ad_spec = adapter("hw", node3d={"ring_buffer_fence_release": bool(release)}, nodes=None)
        ad_spec["nodes"][1]["ring_buffer_fence_release"] = bool(release)
        system, result, events = run(scenario(ad_spec, [script("app", (0, "1ms", 2))]))
        ctx = system.contexts[0]
        q = ctx.hwqueues[0]
        subs = [c["args"] for c in ddi_calls(events, "DxgkDdiSubmitCommandToHwQueue") if c["args"]["hHwQueue"] == q.hDriver]
        logs[release] = ([a["DmaBufferSize"] for a in subs], len(ddi_calls(events, "DxgkDdiSignalMonitoredFence")),
                         [(e["fence"], e["t"]) for e in stops(events, system)])
        assert system.adapter.wddm2.hw_scheduling.nodes[0].fence_release is bool(release)
    work = len(C.work(MS))
    assert logs[0][0] == [work + FENCE_WRITE] * 2 and logs[1][0] == [work] * 2
    assert logs[0][1] >= 1 and logs[1][1] == 0  # VidMm's page-table buffers at the start
    assert logs[0][2] == logs[1][2]


@pytest.mark.rule(105)
def test_max_in_flight_hw_queue_buffers_limits_what_the_driver_holds():
    """Rule 105: with MaxInFlightHwQueueBuffers = 1 the next buffer reaches the driver only after
    the DPC that retires the one before, from the OS's side (the DPC's work, then the call),
    although the applications submitted all at once; the slot goes to the queues in turn."""
    ad_spec = adapter("hw", COSTS, node3d={"max_in_flight_hw_queue_buffers": 1})
    system, result, events = run(scenario(ad_spec, [script("a", (0, "1ms", 2)), script("b", (0, "1ms", 2))]))
    assert result.bugcheck is None and not result.summary["violations"]
    q_handles = {q.hDriver for c in system.contexts for q in c.hwqueues}
    handed = [c["t"] for c in ddi_calls(events, "DxgkDdiSubmitCommandToHwQueue") if c["args"]["hHwQueue"] in q_handles]
    retired = [e["t"] for e in stops(events, system)]
    assert len(handed) == len(retired) == 4
    # Never two with the driver: each hand-over after the previous buffer retired.
    assert handed[1:] == [t + COSTS["dpc"] + COSTS["submit"] for t in retired[:3]]
    assert [b - a for a, b in zip(handed, retired)] == [MS + COSTS["isr"]] * 4
    a, b = system.contexts
    assert [e["context"] for e in stops(events, system)] == [a.handle, b.handle, a.handle, b.handle]


def test_the_reference_driver_reports_what_its_queue_ring_holds_so_a_burst_never_overflows_it():
    """3000 command buffers on one hardware queue at once. With no MaxInFlightHwQueueBuffers the OS
    may hand them all over, and the reference driver's 16 KiB queue ring used to fill up: it failed
    DxgkDdiSubmitCommandToHwQueue and the run ended in 0x119/0x2. Unset, the driver now reports what
    the ring is sure to hold (454 buffers of INDIRECT + FENCE), and every buffer retires; 0 set on
    purpose still means no limit."""
    burst = script("app", (0, "10us", 3000))
    system, result, events = run(scenario(adapter("hw"), [burst]))
    assert result.bugcheck is None and not result.summary["violations"]
    # What the OS read from DXGK_NODEMETADATA_FLAGS.MaxInFlightHwQueueBuffers of each node.
    assert [n.max_in_flight for n in system.adapter.wddm2.hw_scheduling.nodes] == [454, 454]
    app = next(c for c in result.summary["contexts"] if c["context"] == "app/c")
    assert (app["submitted"], app["completed"]) == (3000, 3000)

    system, result, events = run(scenario(adapter("hw", node3d={"max_in_flight_hw_queue_buffers": 0}), [burst]))
    assert [n.max_in_flight for n in system.adapter.wddm2.hw_scheduling.nodes] == [0, 454]
    bc = result.bugcheck
    assert (int(bc.bugcheck.code), bc.bugcheck.p1) == (0x119, 0x2)


@pytest.mark.rule(95)
def test_private_data_is_poisoned_when_the_call_returns_and_a_late_read_is_caught():
    """Rule 95: the private data lives only during DxgkDdiSubmitCommandToHwQueue. The model keeps it
    in a guarded page, poisoned on return; a driver that reads it later stops the model."""
    system, result, events = run(scenario(adapter("hw"), [script("app", (0, "1ms", 1))]))
    hw = system.adapter.wddm2.hw_scheduling
    (page, (raw, pid)), = [(p, v) for p, v in hw._live_private.items() if v[1] == 1][-1:]
    system.gpu.memory.open_pages(page, 4096)  # peek as the OS would, without tripping the guard
    assert system.gpu.memory.read(page, 16) == b"\xcc" * 16
    system.gpu.memory.close_pages(page, 4096)

    system, result, events = run(scenario(adapter("hw"), [script("app", (0, "1ms", 1))]), driver=KeepsPrivateData)
    bc = result.bugcheck
    assert (int(bc.bugcheck.code), bc.bugcheck.p1, bc.rule) == (0xC4, 95, 95)
    assert "was read 1 time(s) after DxgkDdiSubmitCommandToHwQueue returned" in bc.message
    assert bc.struct == "DXGKARG_SUBMITCOMMANDTOHWQUEUE"


@pytest.mark.rule(92)
def test_progress_fence_ids_strictly_increase_and_may_skip():
    sc = scenario(adapter("hw"), [idle("app")], duration="20ms")
    system = System(sc)
    ctx = system.contexts[0]
    seen = {}

    def app():
        yield from system.runtime.submit(ctx, (Work(MS),), progress_id=5)
        yield from system.runtime.submit(ctx, (Work(MS),), progress_id=9)
        try:
            yield from system.runtime.submit(ctx, (Work(MS),), progress_id=9)
        except ApiError as e:
            seen["status"] = e.status

    system.sim.process(app())
    assert system.run().bugcheck is None
    q = ctx.hwqueues[0]
    assert seen["status"] == int(NTSTATUS.STATUS_INVALID_PARAMETER)
    assert (q.completed, system.adapter.wddm2.fences.read(q.progress)) == (2, 9)


@pytest.mark.rule(94)
def test_a_present_blt_is_built_by_present_to_hw_queue_and_carries_flags_present():
    sc = scenario(adapter("hw", COSTS), [idle("game")], duration="50ms")
    trace = ListSink()
    system = System(sc, trace=trace)
    kmt, ctx = system.kmt, system.contexts[0]
    back = kmt.CreateAllocation(ctx.device, 128 * 128 * 4)
    primary = kmt.CreateAllocation(ctx.device, 128 * 128 * 4)
    system.gpu.memory.fill(back.address, 128 * 128 * 4, b"\x5a\xa5\x5a\xa5")

    def game():
        yield from system.runtime.submit(ctx, (Work(5 * MS),))
        yield from kmt.Present(ctx, back, primary, 128, 128)

    system.sim.process(game())
    result = system.run()
    events = trace.events
    assert result.bugcheck is None
    (pres,) = ddi_calls(events, "DxgkDdiPresentToHwQueue")
    q = ctx.hwqueues[0]
    assert pres["args"]["Flags"]["Blt"] == 1 and pres["irql"] == "PASSIVE_LEVEL"
    (sig,) = [c for c in ddi_calls(events, "DxgkDdiSignalMonitoredFence") if c["args"]["hHwQueue"] == q.hDriver]
    assert sig["args"]["KernelSubmissionType"] == KST.DXGK_KERNEL_SUBMISSION_PRESENTBLT
    assert sig["args"]["MonitoredFenceValue"] == 2 and sig["args"]["MonitoredFenceGpuVa"] % 8 == 0
    subs = [c["args"] for c in ddi_calls(events, "DxgkDdiSubmitCommandToHwQueue") if c["args"]["hHwQueue"] == q.hDriver]
    assert [(a["HwQueueProgressFenceId"], a["Flags"]["Present"]) for a in subs] == [(1, 0), (2, 1)]
    assert subs[1]["DmaBufferVirtualAddress"] == pres["args"]["DmaBufferGpuVirtualAddress"]
    assert subs[1]["DmaBufferSize"] == len(C.copy(0, 0, 1)) + FENCE_WRITE
    assert subs[1]["DmaBufferPrivateDataSize"] == 64  # what DdiPresent filled in
    # The blt really copied; the display showed it at the vsync after the copy.
    assert system.gpu.memory.read(primary.address, 16) == b"\x5a\xa5\x5a\xa5" * 4
    (shown,) = [e for e in events if e["event"] == "Displayed"]
    (stop,) = [e for e in stops(events, system) if e["kind"] == "present"]
    period = round(1e9 / 60)
    assert shown["displayed"] == -(-stop["t"] // period) * period
    assert result.summary["displays"][0]["displayed"] == 1


@pytest.mark.rule(103)
def test_a_gpu_wait_in_a_buffer_holds_only_its_queue():
    """A context with two hardware queues: queue 0's buffer starts with a WAIT on a fence; queue 1
    and another context run meanwhile; queue 0's buffer runs when the CPU signals."""
    sc = scenario(adapter("hw"), [idle("a", hw_queues=2), idle("b")], duration="30ms")
    trace = ListSink()
    system = System(sc, trace=trace)
    kmt = system.kmt
    a, b = system.contexts
    fence = kmt.CreateSynchronizationObject(a.device, 0)

    def work():
        yield from system.runtime.submit(a, (Work(MS),), wait=(fence, 1), queue=a.hwqueues[0])
        yield from system.runtime.submit(a, (Work(MS),), queue=a.hwqueues[1])
        yield from system.runtime.submit(b, (Work(MS),))
        yield 10 * MS
        kmt.SignalSynchronizationObjectFromCpu([fence], [1])

    system.sim.process(work())
    assert system.run().bugcheck is None
    t = {(e["context"], e["hwqueue"]): e["t"] for e in stops(trace.events, system)}
    assert t[(a.handle, a.hwqueues[1].handle)] < 10 * MS and t[(b.handle, b.hwqueues[0].handle)] < 10 * MS
    assert t[(a.handle, a.hwqueues[0].handle)] == 11 * MS  # ran from the signal, no CPU in between
    states = [(e["t"], e["state"]) for e in trace.events if e["event"] == "HwContextState" and e["context"] == a.hDriver]
    assert (10 * MS, "running") in states


@pytest.mark.parametrize("wait, per_handoff", [("os", "isr+dpc+submit"), ("gpu", "none")])
def test_ping_pong_under_hardware_scheduling(wait, per_handoff):
    """Reference scenario 19 under hardware scheduling: an OS-held wait costs the ISR, the DPC and
    the OS's submission of the waiting buffer per hand-off; a GPU wait costs nothing on the CPU."""
    sc = scenario(adapter("hw", COSTS), chain_processes(2, 100, wait=wait), duration="1s", fence=[{"name": "f"}])
    system, result, events = run(sc)
    done = stops(events, system)
    assert result.bugcheck is None and len(done) == 200
    running = [e["t"] for e in events if e["event"] == "HwContextState" and e["state"] == "running"
               and e["context"] in {c.hDriver for c in system.contexts}]
    gap = COSTS["isr"] + COSTS["dpc"] + COSTS["submit"] if wait == "os" else 0
    assert [b - a for a, b in zip(running, running[1:])] == [MS + gap] * 199
    assert done[-1]["t"] - running[0] == 200 * MS + 199 * gap + COSTS["isr"]


def test_suspend_and_resume():
    """DxgkDdiSuspendContext returns STATUS_PENDING, the GPU stops the context at its granularity
    and acknowledges the fence with SUSPEND_CONTEXT_COMPLETED; nothing of it runs until
    DxgkDdiResumeContext. A second suspend of a suspended context returns STATUS_SUCCESS (rule 104)."""
    ad_spec = adapter("hw", node3d={"preemption": "interval", "preemption_interval": "100us"})
    sc = scenario(ad_spec, [script("app", (0, "10ms", 1))], duration="50ms")
    trace = ListSink()
    system = System(sc, trace=trace)
    kmt, ctx = system.kmt, system.contexts[0]
    seen = []

    def vidmm():
        yield 3 * MS
        fence = yield kmt.SuspendContext(ctx)
        seen.append((system.sim.now, fence))
        fence = yield kmt.SuspendContext(ctx)
        seen.append((system.sim.now, fence))
        yield 5 * MS
        kmt.ResumeContext(ctx)

    system.sim.process(vidmm())
    assert system.run().bugcheck is None
    events = trace.events
    calls = ddi_calls(events, "DxgkDdiSuspendContext")
    assert [(c["args"]["contextSuspendFence"], c["status"]) for c in calls] == [(1, "STATUS_PENDING"), (2, "STATUS_SUCCESS")]
    start = first_run(events, system.contexts[0])
    stop = start + -(-(3 * MS - start) // 100_000) * 100_000  # the next 100 us of the WORK
    assert seen == [(stop, 1), (stop, 2)]
    (ack,) = [e for e in events if e["event"] == "Callback" and e["name"] == "DxgkCbNotifyInterrupt"
              and e["args"]["InterruptType"] == "DXGK_INTERRUPT_SUSPEND_CONTEXT_COMPLETED"]
    assert ack["t"] == stop and ack["args"]["SuspendContextCompleted"]["ContextSuspendFence"] == 1
    (done,) = stops(events, system)
    assert done["t"] == start + 10 * MS + 5 * MS  # the 5 ms it was suspended, work conserved
    states = [e["state"] for e in events if e["event"] == "HwContextState" and e["context"] == ctx.hDriver]
    assert states == ["running", "suspended", "ready", "running", "idle"]


class AcksAFenceNeverIssued(ReferenceDriver):
    def DxgkDdiSuspendContext(self, hAdapter, a):
        a.contextSuspendFence += 10
        try:
            return super().DxgkDdiSuspendContext(hAdapter, a)
        finally:
            a.contextSuspendFence -= 10


@pytest.mark.rule(56)
def test_a_suspend_acknowledgment_of_a_fence_never_issued_is_0x119_0x11():
    sc = scenario(adapter("hw"), [script("app", (0, "10ms", 1), suspend_at="2ms")], duration="50ms")
    system, result, events = run(sc, driver=AcksAFenceNeverIssued)
    bc = result.bugcheck
    assert (int(bc.bugcheck.code), bc.bugcheck.p1, bc.bugcheck.p2, bc.rule) == (0x119, 0x11, 11, 56)


def hang_scenario(**extra):
    procs = [script("a", (0, "1ms", 3), **extra), script("b", (0, "1ms", 3))]
    return scenario(adapter("hw"), procs, duration="5s",
                    fault=[{"kind": "hang", "process": "a", "context": "c", "packet": 2}])


@pytest.mark.rule(113)
def test_a_hang_is_detected_by_no_progress_and_the_engine_reset_invalidates_only_its_context():
    system, result, events = run(hang_scenario())
    assert result.bugcheck is None
    a, b = system.contexts
    start = first_run(events, system.contexts[0])
    last_progress = start + MS  # a's first buffer
    (tdr,) = [e for e in events if e["event"] == "TdrDetected"]
    assert (tdr["t"], tdr["reason"], tdr["context"], tdr["fence"]) == (last_progress + 2_000_000_000, "no_progress", a.handle, 2)
    t = tdr["t"]
    (dump,) = [e for e in events if e["event"] == "LiveDump"]
    assert (dump["t"], dump["code"], dump["p4"]) == (t, 0x141, 0)
    (inv,) = [e for e in events if e["event"] == "Callback" and e["name"] == "DxgkCbInvalidateHwContext"]
    assert inv["args"]["hHwContext"] == a.handle and inv["t"] == t
    (reset,) = [e for e in events if e["event"] == "HwEngineReset"]
    assert (reset["t"], reset["node"], reset["contexts"]) == (t, 0, [a.handle])
    assert [c["t"] for c in ddi_calls(events, "DxgkDdiResumeHwEngine")] == [t]
    assert [(e["seq"], e["status"]) for e in events if e["event"] == "QueuePacketStop" and e["context"] == a.handle] == [
        (1, "Completed"), (2, "Aborted"), (3, "Aborted")]
    # The other process was starved behind the hung buffer; it runs once the engine resumes.
    assert [e["t"] for e in stops(events, system) if e["context"] == b.handle] == [t + MS, t + 2 * MS, t + 3 * MS]
    assert a.device.error and not b.device.error and result.summary["tdr"]["engine_resets"] == 1


@pytest.mark.rule(107)
def test_disable_gpu_timeout_exempts_a_queue():
    """Rule 107: the same hang on a queue created with DisableGpuTimeout is never reset."""
    system, result, events = run(hang_scenario(disable_gpu_timeout=True))
    assert not [e for e in events if e["event"] in ("TdrDetected", "HwEngineReset")]
    assert len(stops(events, system)) == 1


class InterruptsDuringReset(ReferenceDriver):
    def DxgkDdiResetHwEngine(self, hAdapter, a):
        status = super().DxgkDdiResetHwEngine(hAdapter, a)
        self.dxgk.DxgkCbSynchronizeExecution(self.dxgk.DeviceHandle, self._report_monitored_fence, self.nodes[0], 0)
        return status


class FailsResume(ReferenceDriver):
    def DxgkDdiResumeHwEngine(self, hAdapter, a):
        super().DxgkDdiResumeHwEngine(hAdapter, a)
        return int(NTSTATUS.STATUS_UNSUCCESSFUL)


@pytest.mark.rule(57)
def test_an_interrupt_between_reset_and_resume_is_0x119_0x10():
    system, result, events = run(hang_scenario(), driver=InterruptsDuringReset)
    bc = result.bugcheck
    assert (int(bc.bugcheck.code), bc.bugcheck.p1, bc.bugcheck.p3, bc.rule) == (0x119, 0x10, 0, 57)


@pytest.mark.rule(116)
def test_a_failed_resume_escalates_to_a_full_gpu_reset():
    system, result, events = run(hang_scenario(), driver=FailsResume)
    assert result.bugcheck is None
    (tdr,) = [e for e in events if e["event"] == "TdrDetected"]
    t = tdr["t"]
    names = [e["name"] for e in events if e["event"] == "DdiCall" and e["t"] == t]
    assert names == ["DxgkDdiResetHwEngine", "DxgkDdiResumeHwEngine", "DxgkDdiResetFromTimeout", "DxgkDdiRestartFromTimeout"]
    assert [(e["code"], e["p4"]) for e in events if e["event"] == "LiveDump"] == [(0x141, 0), (0x117, 9)]
    (reset,) = [e for e in events if e["event"] == "AdapterReset"]
    a, b = system.contexts
    # a's device was invalidated by the engine reset; b had buffers with the driver too: lost.
    assert (reset["promoted"], reset["device"]) == (1, b.device.handle)
    assert a.device.error and b.device.error and result.summary["tdr"]["adapter_resets"] == 1


@pytest.mark.rule(54)
def test_a_page_fault_names_the_queue_and_its_progress_fence():
    sc = scenario(adapter("hw"), [script("a", (0, "1ms", 3)), script("b", (0, "1ms", 2))], duration="20ms",
                  fault=[{"kind": "page_fault", "process": "a", "context": "c", "packet": 2}])
    system, result, events = run(sc)
    assert result.bugcheck is None
    a, b = system.contexts
    start = first_run(events, system.contexts[0])
    (pf,) = [e for e in events if e["event"] == "PageFault"]
    assert (pf["t"], pf["address"], pf["fence"], pf["hwqueue"]) == (start + MS, UNMAPPED_VA, 2, a.hwqueues[0].handle)
    assert pf["flags"] == 0x8 | 0x1  # ENGINE_RESET_REQUIRED, a write
    (reset,) = [e for e in events if e["event"] == "HwEngineReset"]
    assert (reset["t"], reset["reason"], reset["contexts"]) == (pf["t"], "page_fault", [a.handle])
    assert not [e for e in events if e["event"] in ("LiveDump", "TdrDetected")]  # a fault is not a timeout
    assert [e["t"] for e in stops(events, system) if e["context"] == b.handle] == [pf["t"] + MS, pf["t"] + 2 * MS]
    assert a.device.error and result.summary["wddm2"]["hw_scheduling"]["page_faults"] == 1


@pytest.mark.rule(101)
@pytest.mark.parametrize("flags, jumps", [((), True), (("NoSignalMaxValueOnTdr",), False)])
def test_a_reset_drives_fences_its_devices_could_signal_to_the_maximum(flags, jumps):
    """Rule 101: a fence the invalidated device signals jumps to 2**64-1 (a CPU waiter wakes with
    success) unless NoSignalMaxValueOnTdr."""
    sc = scenario(adapter("hw"), [idle("a"), idle("b")], duration="3s")
    system = System(sc)
    kmt = system.kmt
    a, b = system.contexts
    fence = kmt.CreateSynchronizationObject(a.device, 0, ("Shared",) + flags)
    kmt.OpenSynchronizationObject(fence, b.device)
    seen = {}

    def work():
        yield from hung_signal(kmt, system, a, fence)
        status = yield kmt.WaitForSynchronizationObjectFromCpu([fence], [5], timeout=2_500_000_000)
        seen["status"], seen["t"] = status, system.sim.now

    system.sim.process(work())
    system.run()
    fences = system.adapter.wddm2.fences
    if jumps:
        assert fences.read(fence) == (1 << 64) - 1 and seen["status"] == 0 and seen["t"] < 2_500_000_000
    else:
        assert fences.read(fence) == 0 and seen["status"] == int(NTSTATUS.STATUS_TIMEOUT)


def hung_signal(kmt, system, ctx, fence):
    """Submit a buffer that hangs and would have signalled ``fence`` to 5 (generator)."""
    wddm2 = system.adapter.wddm2
    wddm2.on_buffer = lambda c, seq, va: system.gpu.engines[0].hang_on_buffer(va)
    seq = yield from system.runtime.submit(ctx, (Work(MS),), signal=(fence, 5))
    wddm2.on_buffer = None
    return seq


def test_destroying_a_hardware_context_cancels_what_is_queued_and_lets_the_gpu_finish():
    """D3DKMTDestroyContext under hardware scheduling (reference scenario 5): with one buffer in
    flight at a time, the two still queued by the OS are cancelled; the one on the GPU finishes;
    then DxgkDdiDestroyHwQueue and DxgkDdiDestroyHwContext, and the handles are gone."""
    ad_spec = adapter("hw", node3d={"max_in_flight_hw_queue_buffers": 1})
    sc = scenario(ad_spec, [script("app", (0, "1ms", 3), destroy_at="500us")], duration="10ms")
    system, result, events = run(sc)
    ctx = system.contexts[0]
    q = ctx.hwqueues[0]
    start = first_run(events, ctx)
    done = [(e["seq"], e["status"], e["t"]) for e in events if e["event"] == "QueuePacketStop" and e["context"] == ctx.handle]
    assert done == [(2, "Cancelled", 500_000), (3, "Cancelled", 500_000), (1, "Completed", start + MS)]
    names = [(e["name"], e["t"]) for e in events if e["event"] == "DdiCall" and e["name"].startswith("DxgkDdiDestroy")]
    assert names == [("DxgkDdiDestroyHwQueue", start + MS), ("DxgkDdiDestroyHwContext", start + MS)]
    handles = system.adapter.handles
    assert handles.get(ctx.handle) is None and handles.get(q.handle) is None
    assert (ctx.completed, ctx.cancelled) == (1, 2) and not system.adapter.wddm2.hw_scheduling.queues[1:]


@pytest.mark.parametrize("wait", ["os", "gpu"])
def test_cross_context_dependency_chain_under_hardware_scheduling(wait):
    """Reference scenario 3 under hardware scheduling: 100 x 1 ms over 4 contexts in strict global
    order."""
    sc = scenario(adapter("hw", COSTS), chain_processes(4, 25, wait=wait), duration="1s", fence=[{"name": "f"}])
    system, result, events = run(sc)
    done = stops(events, system)
    order = {c.handle: i for i, c in enumerate(system.contexts)}
    assert result.bugcheck is None
    assert [order[e["context"]] for e in done] == [k % 4 for k in range(100)]
    assert system.adapter.wddm2.fences.read(system.fences["f"]) == 100


def test_gpu_waits_on_a_32_bit_fence_across_the_wrap():
    """No64BitAtomics under hardware scheduling: the user-mode driver's WAITs compare 32 bits and its
    fence writes carry the low 32 bits; a ping-pong from 2**32 - 3 runs through the wrap."""
    base = (1 << 32) - 3
    sc = scenario(adapter("hw", no64bit_atomics=True), chain_processes(2, 4, wait="gpu"), duration="50ms",
                  fence=[{"name": "f", "initial": base}])
    system, result, events = run(sc)
    f = system.fences["f"]
    assert result.bugcheck is None and f.bits == 32 and len(stops(events, system)) == 8
    assert system.adapter.wddm2.fences.read(f) == base + 8 and system.gpu.memory.read_u32(f.cpu_va) == 5
    running = [e["t"] for e in events if e["event"] == "HwContextState" and e["state"] == "running"
               and e["context"] in {c.hDriver for c in system.contexts}]
    assert [b - a for a, b in zip(running, running[1:])] == [MS] * 7  # the GPU hands over by itself
