"""Reference scenario 27: a native GPU fence and its conditional CPU interrupt (WDDM 3.2).

A producer's hardware queue on the 3D engine runs 100 buffers of 1 ms; buffer k ends with a
native fence write of k (values 1..100, one per buffer). Two CPU threads of the producer's process
wait for the fence: one for 50 (from 0 ns), one for 100 (from 1 ms). A consumer's queue on the
compute engine holds one buffer that starts with a GPU wait for 75 on the fence's CurrentValue.
Pass criteria:

- the fence's MonitoredValue, which the OS keeps at the smallest value a CPU waiter waits for minus
  one through DxgkDdiUpdateMonitoredValues, goes 49 (the first waiter), 99 (50 reached, the second
  waiter left), then UINT64_MAX (no waiter left);
- the GPU raises exactly two NATIVE_FENCE_SIGNALED interrupts for the hundred writes, at 50 and at
  100, the only writes above MonitoredValue; each CPU waiter is released at the interrupt's instant;
- the consumer's buffer starts the instant the GPU writes 75, released by the GPU's scheduler with
  no interrupt for it and no OS waiter behind it.

Every CPU cost and command cost is zero, so times are exact: the copy engine first writes the
producer's page tables (PT = 517 ns: 8272 bytes at 16 bytes/ns, one page more than the consumer's,
the fence's MonitoredValue) and the consumer's (516 ns more); the producer's buffer k ends at
PT + k ms. Microsoft's "Native GPU fence objects" page describes the mechanism; docs/scheduling.md
("Native GPU fences") the model's.
"""

from __future__ import annotations

from pathlib import Path

from wddmsim.scenario import load_scenario, scenario_from_dict
from wddmsim.runner.system import System
from wddmsim.trace import ListSink

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "native_fence.toml"
MS = 1_000_000
ZERO = {"render": 0, "patch": 0, "submit": 0, "isr": 0, "dpc": 0, "present": 0}
U64_MAX = (1 << 64) - 1
PT = 517  # the producer's page tables, written by the copy engine before its first buffer
PT_CONSUMER = PT + 516  # then the consumer's


def T(k: int) -> int:
    """When the producer's buffer k ends and the GPU writes k to the fence."""
    return PT + k * MS


def _scenario():
    return scenario_from_dict({
        "name": "ref27", "duration": "150ms",
        "adapter": {"scheduling": "hardware", "cpu_cost": ZERO, "nodes": [
            {"name": "3D", "engine": "3d", "command_cost": 0},
            {"name": "Compute", "engine": "compute", "command_cost": 0},
            {"name": "Copy", "engine": "copy", "command_cost": 0}]},
        "driver": {"ddi_version": "wddm3_2", "native_fence": True},
        "fence": [{"name": "nf", "native": True}],
        "process": [
            {"name": "producer", "context": [{"name": "c", "node": "3D", "workload": {"kind": "script", "packets": [
                {"at": 0, "work": "1ms", "repeat": 100, "signal_fence": "nf", "signal_value": 1, "signal_step": 1}]}}]},
            {"name": "consumer", "context": [{"name": "c", "node": "Compute", "workload": {"kind": "script", "packets": [
                {"at": 0, "work": "1ms", "wait_fence": "nf", "wait_value": 75, "wait_by": "gpu"}]}}]}],
        "call": [
            {"at": 0, "api": "WaitForSynchronizationObjectFromCpu", "process": "producer", "fence": "nf", "value": 50},
            {"at": "1ms", "api": "WaitForSynchronizationObjectFromCpu", "process": "producer", "fence": "nf",
             "value": 100}]}, "<ref27>")


def _run(sc=None, name: str = "nf"):
    trace = ListSink()
    system = System(sc or _scenario(), trace=trace)
    mem = system.adapter.memory
    fence = system.fences[name]
    current: list[tuple[int, int]] = []
    monitored: list[tuple[int, int]] = []
    mem.watch(fence.cpu_va, lambda a: current.append((system.sim.now, mem.read_u64(a))))
    mem.watch(fence.monitored_va, lambda a: monitored.append((system.sim.now, mem.read_u64(a))))
    result = system.run()
    assert result.bugcheck is None
    return system, trace.events, fence, current, monitored


def _native_interrupts(events):
    return [e for e in events if e["event"] == "Callback" and e["name"] == "DxgkCbNotifyInterrupt"
            and e["args"]["InterruptType"] == "DXGK_INTERRUPT_NATIVE_FENCE_SIGNALED"]


def test_the_driver_creates_the_fence_with_monitored_value_at_its_maximum():
    system, events, fence, _, _ = _run()
    (create,) = [e for e in events if e["event"] == "DdiCall" and e["name"] == "DxgkDdiCreateNativeFence"]
    assert (create["t"], create["irql"], create["status"]) == (0, "PASSIVE_LEVEL", "STATUS_SUCCESS")
    args = create["args"]
    # The OS's handle goes in (the driver keeps it: the interrupt names it) and the driver's comes
    # out (logged after the call); CurrentValue and MonitoredValue in the system process's space.
    assert (args["hGlobalNativeFence"], args["Type"]) == (fence.hDriver, 0)
    assert system.driver.native_fences[fence.hDriver].os_handle == fence.handle != fence.hDriver
    assert (args["CurrentValueSystemProcessGpuVa"], args["MonitoredValueSystemProcessGpuVa"]) \
        == (fence.cpu_va, fence.monitored_va)
    assert system.adapter.caps.NativeGpuFence


def test_monitored_value_goes_49_then_99_then_the_maximum():
    system, events, fence, current, monitored = _run()
    # What the driver wrote through MonitoredValueKernelCpuVa, and when.
    assert monitored == [(0, 49), (T(50), 99), (T(100), U64_MAX)]
    logged = [(e["t"], e["fence"], e["monitored"], e["current"]) for e in events
              if e["event"] == "NativeFenceMonitoredValue"]
    assert logged == [(0, fence.handle, 49, 0), (T(50), fence.handle, 99, 50), (T(100), fence.handle, U64_MAX, 100)]
    updates = [e for e in events if e["event"] == "DdiCall" and e["name"] == "DxgkDdiUpdateMonitoredValues"]
    assert [(e["t"], e["irql"], e["args"]["NumFences"], e["status"]) for e in updates] == [
        (0, "DIRQL", 1, "STATUS_SUCCESS"), (T(50), "DIRQL", 1, "STATUS_SUCCESS"),
        (T(100), "DIRQL", 1, "STATUS_SUCCESS")]
    # The second waiter (100, from 1 ms) does not move it: 50 is still the lowest.
    assert (fence.monitored, fence.updates) == (U64_MAX, 3)


def test_exactly_two_native_fence_interrupts_for_a_hundred_writes():
    system, events, fence, current, _ = _run()
    # The GPU writes k at the end of buffer k, one write per buffer.
    assert current == [(T(k), k) for k in range(1, 101)]
    sched = system.gpu.hw_scheduler(0)
    assert (sched.native_fence_writes, sched.native_fence_interrupts) == (100, 2)
    raised = _native_interrupts(events)
    assert [e["t"] for e in raised] == [T(50), T(100)]
    for e in raised:
        assert e["args"]["NativeFenceSignaled"]["NodeOrdinal"] == 0
        assert e["args"]["NativeFenceSignaled"]["SignaledNativeFenceCount"] == 1
    assert [(e["t"], e["fences"], e["all"]) for e in events if e["event"] == "NativeFenceSignaled"] == [
        (T(50), [fence.handle], 0), (T(100), [fence.handle], 0)]
    assert fence.interrupts == 2 and system.driver.native_interrupts == 2


def test_cpu_waiters_are_released_at_the_interrupt():
    system, events, fence, _, _ = _run()
    waits = [(e["t"], e["value"]) for e in events
             if e["event"] == "FenceWait" and e["fence"] == fence.handle]
    assert waits == [(0, 50), (MS, 100)]
    done = [(e["t"], e["value"], e["waiter"], e["status"], e["waited_ns"]) for e in events
            if e["event"] == "FenceWaitDone" and e["fence"] == fence.handle]
    assert done == [(T(50), 50, "cpu", "STATUS_SUCCESS", T(50)),
                    (T(100), 100, "cpu", "STATUS_SUCCESS", T(100) - MS)]
    assert fence.value == 100


def test_the_gpu_waiter_starts_when_75_is_written_without_the_cpu():
    system, events, fence, current, _ = _run()
    (consumer,) = system.contexts[1].hwqueues
    running = [e["t"] for e in events if e["event"] == "HwContextState" and e["engine"] == 1
               and e["state"] == "running"]
    # Loaded once its page tables are written, it stalls on the WAIT at once; the GPU's scheduler
    # puts it back the instant the fence reaches 75, and its 1 ms buffer retires 1 ms later.
    assert running == [PT_CONSUMER, T(75)]
    assert (T(75), 75) in current
    stops = [(e["t"], e["status"]) for e in events if e["event"] == "QueuePacketStop" and e["hwqueue"] == consumer.handle]
    assert stops == [(T(75) + MS, "Completed")]
    # No interrupt for it: MonitoredValue was 99 when 75 was written, so the only interrupt at that
    # instant is the producer's progress fence; the OS registered no waiter for 75.
    at75 = [e["args"]["InterruptType"] for e in events if e["t"] == T(75) and e["event"] == "Callback"
            and e["name"] == "DxgkCbNotifyInterrupt"]
    assert at75 == ["DXGK_INTERRUPT_MONITORED_FENCE_SIGNALED"]
    assert not [e for e in events if e["event"] == "FenceWait" and e["value"] == 75]
    # The OS handed the consumer's buffer to the driver once, when it was submitted.
    hq = [e for e in events if e["event"] == "HwQueueCreate" and e["hwqueue"] == consumer.handle][0]["hHwQueue"]
    submits = [e["t"] for e in events if e["event"] == "DdiCall" and e["name"] == "DxgkDdiSubmitCommandToHwQueue"
               and e["args"]["hHwQueue"] == hq]
    assert submits == [PT_CONSUMER]


def test_the_shipped_example_tells_the_same_story_with_default_costs():
    system, events, fence, current, monitored = _run(load_scenario(str(EXAMPLE)), "frames")
    assert [v for _, v in monitored] == [49, 99, U64_MAX]
    assert [v for _, v in current] == list(range(1, 101))
    raised = _native_interrupts(events)
    assert len(raised) == 2
    # Each interrupt comes with the write of 50 and of 100 (the ISR after the GPU's write).
    assert [t for t, v in current if v in (50, 100)] == [e["t"] for e in raised]
