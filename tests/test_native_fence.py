"""Native GPU fences beside reference scenario 27: the re-read after DxgkDdiUpdateMonitoredValues,
waits that time out or lose their fence, what the OS refuses, and the GPU command without a
hardware scheduler. Times are exact (every CPU and command cost zero)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from wddmsim.cli import main
from wddmsim.ddi.ntstatus import NTSTATUS
from wddmsim.dxgkrnl.errors import AdapterStartError, ApiError
from wddmsim.kmd import ReferenceDriver
from wddmsim.scenario import scenario_from_dict
from wddmsim.runner.system import System
from wddmsim.trace import ListSink

MS = 1_000_000
U64_MAX = (1 << 64) - 1
ZERO = {"render": 0, "patch": 0, "submit": 0, "isr": 0, "dpc": 0, "present": 0}
NODES = [{"name": "3D", "engine": "3d", "command_cost": 0}, {"name": "Copy", "engine": "copy", "command_cost": 0}]
APP = {"name": "app", "context": [{"name": "c", "node": "3D", "workload": {
    "kind": "script", "packets": [{"at": 0, "work": "1ms"}]}}]}


def _scenario(calls, *, driver=None, scheduling="hardware", native=True, duration="20ms", process=None):
    return scenario_from_dict({
        "name": "nf", "duration": duration,
        "adapter": {"scheduling": scheduling, "cpu_cost": ZERO, "nodes": NODES},
        "driver": driver or {"ddi_version": "wddm3_2", "native_fence": True},
        "fence": [{"name": "nf", "native": native}] if native is not None else [],
        "process": [process or APP], "call": calls}, "<nf>")


def _run(sc, **kw):
    trace = ListSink()
    system = System(sc, trace=trace, **kw)
    result = system.run()
    assert result.bugcheck is None
    return system, trace.events


def _monitored(events):
    return [(e["t"], e["monitored"], e["current"]) for e in events if e["event"] == "NativeFenceMonitoredValue"]


def _done(events):
    return [(e["t"], e["value"], e["status"]) for e in events if e["event"] == "FenceWaitDone"
            and e["waiter"] == "cpu"]


class RacingGpu(ReferenceDriver):
    """A GPU write lands while the first MonitoredValue update is under way: CurrentValue reaches 7
    after the GPU compared it with the old MonitoredValue (UINT64_MAX), so it raised no interrupt."""

    raced = False

    def DxgkDdiUpdateMonitoredValues(self, pUpdateMonitoredValues):
        if not self.raced:
            self.raced = True
            (f,) = self.native_fences.values()
            self.mem.write_u64(f.current, 7)
        return super().DxgkDdiUpdateMonitoredValues(pUpdateMonitoredValues)


def test_a_signal_that_races_the_update_is_not_lost():
    wait = {"at": "1ms", "api": "WaitForSynchronizationObjectFromCpu", "process": "app", "fence": "nf", "value": 5}
    system, events = _run(_scenario([wait]), driver=RacingGpu)
    # The OS reads CurrentValue again after the call returns: 7 satisfies the waiter at once, and
    # MonitoredValue goes back to UINT64_MAX. No interrupt was needed (none came).
    assert _monitored(events) == [(MS, 4, 7), (MS, U64_MAX, 7)]
    assert _done(events) == [(MS, 5, "STATUS_SUCCESS")]
    assert not [e for e in events if e["event"] == "NativeFenceSignaled"]


def test_without_the_race_the_same_wait_stays_pending():
    """The control: with the plain driver nothing writes 7, the waiter waits to the end."""
    wait = {"at": "1ms", "api": "WaitForSynchronizationObjectFromCpu", "process": "app", "fence": "nf", "value": 5}
    system, events = _run(_scenario([wait]))
    assert _monitored(events) == [(MS, 4, 0)]
    assert _done(events) == []
    assert system.fences["nf"].monitored == 4


def test_monitored_value_follows_a_timeout_and_the_lowest_waiter():
    calls = [
        {"at": 0, "api": "WaitForSynchronizationObjectFromCpu", "process": "app", "fence": "nf", "value": 1000},
        {"at": "1ms", "api": "WaitForSynchronizationObjectFromCpu", "process": "app", "fence": "nf", "value": 10,
         "timeout": "2ms"}]
    system, events = _run(_scenario(calls))
    # 1000 first (999); 10 comes lower (9); when 10 times out the lowest is 1000 again.
    assert _monitored(events) == [(0, 999, 0), (MS, 9, 0), (3 * MS, 999, 0)]
    assert _done(events) == [(3 * MS, 10, "STATUS_TIMEOUT")]


def test_destroying_the_fence_ends_its_waiters_and_tells_the_driver():
    calls = [
        {"at": 0, "api": "WaitForSynchronizationObjectFromCpu", "process": "app", "fence": "nf", "value": 3},
        {"at": "2ms", "api": "DestroySynchronizationObject", "process": "app", "fence": "nf"}]
    system, events = _run(_scenario(calls))
    assert _done(events) == [(2 * MS, 3, "STATUS_INVALID_HANDLE")]
    (destroy,) = [e for e in events if e["event"] == "DdiCall" and e["name"] == "DxgkDdiDestroyNativeFence"]
    assert (destroy["t"], destroy["status"]) == (2 * MS, "STATUS_SUCCESS")
    assert system.driver.native_fences == {}
    assert _monitored(events) == [(0, 2, 0)]  # a destroyed fence's MonitoredValue is not written again


def test_the_os_refuses_what_a_native_fence_does_not_do():
    system = System(_scenario([{"at": 0, "api": "WaitForSynchronizationObjectFromCpu", "process": "app",
                                "fence": "nf", "value": 1}]))
    kmt, fence, ctx = system.kmt, system.fences["nf"], system.contexts[0]
    with pytest.raises(ApiError) as e:
        kmt.SignalSynchronizationObjectFromCpu([fence], [1], rewind=True)
    assert e.value.status == int(NTSTATUS.STATUS_INVALID_PARAMETER) and "AllowFenceRewind" in str(e.value)
    with pytest.raises(ApiError) as e:
        kmt.SignalSynchronizationObjectFromCpu([fence, fence], [1, 2])
    assert "named twice" in str(e.value)
    with pytest.raises(ApiError) as e:
        kmt.WaitForSynchronizationObjectFromGpu(ctx, fence, 1)
    assert e.value.status == int(NTSTATUS.STATUS_NOT_SUPPORTED)
    with pytest.raises(ApiError) as e:
        kmt.MonitoredFenceSignal(ctx, fence, 1)
    assert "native fence" in str(e.value)
    # A monitored fence's adapter without the cap has no native fences.
    plain = System(_scenario([], native=None, driver={"ddi_version": "wddm3_2"}))
    with pytest.raises(ApiError) as e:
        plain.kmt.CreateNativeFence(plain.contexts[0].device)
    assert e.value.status == int(NTSTATUS.STATUS_NOT_SUPPORTED) and "NativeGpuFence" in str(e.value)


class Eager(ReferenceDriver):
    """Reports NativeGpuFence without asking whether the OS enabled the feature."""

    def _caps(self):
        c = super()._caps()
        c.SchedulingCaps.NativeGpuFence = 1
        return c


@pytest.mark.parametrize("scheduling, version, why", [
    ("software", "wddm3_2", "under the software scheduler"),
    ("hardware", "wddm3_1", "this one is wddm3_1"),
])
def test_the_os_enables_native_fences_for_wddm3_2_under_hardware_scheduling_only(scheduling, version, why):
    sc = _scenario([], native=None, scheduling=scheduling, driver={"ddi_version": version, "native_fence": True})
    # The reference driver asks (DxgkCbIsFeatureEnabled) and does not report the cap: the adapter starts.
    system = System(sc)
    assert not system.adapter.caps.NativeGpuFence and system.adapter.native_fence_caps is None
    assert not system.driver.native_fence
    # A driver that reports it anyway does not start.
    with pytest.raises(AdapterStartError) as e:
        System(sc, driver=Eager)
    text = str(e.value)
    assert "DXGK_VIDSCHCAPS.NativeGpuFence" in text and "wddm3_2 drivers under hardware scheduling" in text
    assert why in text


class NoUpdate(ReferenceDriver):
    DxgkDdiUpdateMonitoredValues = None


def test_a_driver_reporting_native_fences_implements_their_entry_points():
    with pytest.raises(AdapterStartError) as e:
        System(_scenario([], native=None), driver=NoUpdate)
    assert "DxgkDdiUpdateMonitoredValues is missing: the driver reports NativeGpuFence" in str(e.value)


BAD = '''name = "bad"
[adapter]
scheduling = "{scheduling}"
[[adapter.nodes]]
name = "3D"
engine = "3d"
[[adapter.nodes]]
name = "Copy"
engine = "copy"
[driver]
{driver}
[[fence]]
name = "nf"
native = true
[[process]]
name = "app"
[[process.context]]
name = "c"
node = "3D"
workload = {{ kind = "script", packets = [{{ at = "0ns", work = "1ms", wait_fence = "nf", wait_value = 1, wait_by = "{wait_by}" }}] }}
{call}
'''
GOOD = dict(scheduling="hardware", driver='ddi_version = "wddm3_2"\nnative_fence = true', wait_by="gpu", call="")


@pytest.mark.parametrize("change, field, reason", [
    ({"scheduling": "software"}, "fence[0].native", "native GPU fences need hardware scheduling"),
    ({"driver": 'ddi_version = "wddm3_2"'}, "fence[0].native", "driver.native_fence = true"),
    ({"wait_by": "os"}, "packets[0].wait_by", "the GPU waits for it by itself"),
    ({"call": '[[call]]\napi = "SignalSynchronizationObjectFromCpu"\nprocess = "app"\nfence = "nf"\nvalue = 1\n'
              'at = "0ns"\nrewind = true'},
     "call[0].rewind", "AllowFenceRewind is not modelled on native fences"),
])
def test_bad_native_fence_input_exits_2_naming_the_field(tmp_path, change, field, reason):
    path = tmp_path / "bad.toml"
    path.write_text(BAD.format(**{**GOOD, **change}))
    r = CliRunner().invoke(main, ["run", str(path)])
    assert r.exit_code == 2, r.output
    assert "bad.toml" in r.output and field in r.output and reason in r.output, r.output
    assert "Traceback" not in r.output
    good = tmp_path / "good.toml"
    good.write_text(BAD.format(**GOOD))
    assert CliRunner().invoke(main, ["run", str(good)]).exit_code == 0


def test_a_native_fence_write_needs_the_hardware_scheduler():
    """Without a context-management processor nothing can compare with MonitoredValue: the engine
    faults before writing."""
    from test_engine import make, submit

    from wddmsim.gpu import commands as C

    sim, gpu, e, irqs = make()
    submit(gpu, e, C.native_fence(0x2000, 1, 0x2008))
    sim.run()
    assert e.state == "faulted" and "NATIVE_FENCE needs the hardware scheduler" in e.fault
    assert gpu.memory.read_u64(0x2000) == 0


def test_the_run_summary_counts_native_fences():
    from pathlib import Path

    example = Path(__file__).resolve().parents[1] / "examples" / "native_fence.toml"
    r = CliRunner().invoke(main, ["run", str(example)])
    assert r.exit_code == 0, r.output
    assert ("Native fences: 1 live, 2 NATIVE_FENCE_SIGNALED interrupts, 3 MonitoredValue updates, 0 CPU "
            "signals") in r.output


class WideStride(ReferenceDriver):
    def _native_caps(self):
        c = super()._native_caps()
        c.MonitoredValueStride = 64
        return c


class OddStride(ReferenceDriver):
    def _native_caps(self):
        c = super()._native_caps()
        c.MonitoredValueStride = 4
        return c


class NoSystemMapping(ReferenceDriver):
    def _native_caps(self):
        c = super()._native_caps()
        c.MapToGpuSystemProcess = 0
        return c


def _two_fences():
    calls = [{"at": 0, "api": "WaitForSynchronizationObjectFromCpu", "process": "app", "fence": name, "value": 1}
             for name in ("a", "b")]
    return scenario_from_dict({
        "name": "nf2", "duration": "5ms", "adapter": {"scheduling": "hardware", "cpu_cost": ZERO, "nodes": NODES},
        "driver": {"ddi_version": "wddm3_2", "native_fence": True},
        "fence": [{"name": "a", "native": True}, {"name": "b", "native": True}],
        "process": [APP], "call": calls}, "<nf2>")


@pytest.mark.parametrize("driver, stride", [(ReferenceDriver, 8), (WideStride, 64)])
def test_monitored_values_are_packed_by_the_driver_stride(driver, stride):
    system = System(_two_fences(), driver=driver)
    a, b = system.fences["a"], system.fences["b"]
    assert b.monitored_va - a.monitored_va == stride
    assert a.monitored_va // 4096 == b.monitored_va // 4096
    assert system.adapter.native_fence_caps.MapToGpuSystemProcess == 1


def test_the_os_checks_the_native_fence_caps():
    with pytest.raises(AdapterStartError) as e:
        System(_two_fences(), driver=OddStride)
    assert "DXGK_NATIVE_FENCE_CAPS.MonitoredValueStride = 4" in str(e.value)
    # Without MapToGpuSystemProcess the OS passes no system-process addresses; the reference
    # driver's scheduler needs them, so it refuses the fence and the creation fails.
    with pytest.raises(ApiError) as e:
        System(_two_fences(), driver=NoSystemMapping)
    assert e.value.status == int(NTSTATUS.STATUS_INVALID_PARAMETER) and "DxgkDdiCreateNativeFence" in str(e.value)


class NullArray(ReferenceDriver):
    """Reports NATIVE_FENCE_SIGNALED without naming the fences (pSignaledNativeFenceArray NULL), as
    a GPU that cannot tell which fences it signalled may."""

    def _native_isr(self, status, node):
        if not status & (1 << (self._native_shift + node.ordinal)):
            return
        while self.hw.sched_pop_native_signal(node.ordinal) is not None:
            pass
        data = node.interrupt_data
        from wddmsim.ddi.enums import DXGK_INTERRUPT_TYPE as T

        data.InterruptType = int(T.DXGK_INTERRUPT_NATIVE_FENCE_SIGNALED)
        ns = data.NativeFenceSignaled
        ns.NodeOrdinal, ns.SignaledNativeFenceCount, ns.pSignaledNativeFenceArray = node.ordinal, 0, 0
        self.dxgk.DxgkCbNotifyInterrupt(self.dxgk.DeviceHandle, data)


def test_a_null_signalled_array_makes_the_os_read_every_waited_native_fence():
    producer = {"name": "app", "context": [{"name": "c", "node": "3D", "workload": {"kind": "script", "packets": [
        {"at": 0, "work": "1ms", "repeat": 3, "signal_fence": "nf", "signal_value": 1, "signal_step": 1}]}}]}
    wait = {"at": 0, "api": "WaitForSynchronizationObjectFromCpu", "process": "app", "fence": "nf", "value": 2}
    system, events = _run(_scenario([wait], process=producer), driver=NullArray)
    pt = 517  # the copy engine writes the process's page tables first
    assert [(e["t"], e["fences"], e["all"]) for e in events if e["event"] == "NativeFenceSignaled"] == \
        [(pt + 2 * MS, [], 1)]
    assert _done(events) == [(pt + 2 * MS, 2, "STATUS_SUCCESS")]
    assert _monitored(events) == [(0, 1, 0), (pt + 2 * MS, U64_MAX, 2)]
    assert system.fences["nf"].interrupts == 1


def test_a_cpu_signal_goes_through_the_driver_and_releases_gpu_and_cpu_waiters():
    """SignalSynchronizationObjectFromCpu of 5 at 2 ms: the OS checks it, the driver writes
    CurrentValue (DxgkDdiUpdateCurrentValuesFromCpu), the compute queue waiting on the GPU for 5
    starts at that instant, the CPU waiter for 5 is released, MonitoredValue goes back to the
    maximum; no native-fence interrupt is involved."""
    nodes = NODES[:1] + [{"name": "Compute", "engine": "compute", "command_cost": 0}] + NODES[1:]
    consumer = {"name": "consumer", "context": [{"name": "c", "node": "Compute", "workload": {"kind": "script",
                "packets": [{"at": 0, "work": "1ms", "wait_fence": "nf", "wait_value": 5, "wait_by": "gpu"}]}}]}
    sc = scenario_from_dict({
        "name": "cpusignal", "duration": "10ms", "adapter": {"scheduling": "hardware", "cpu_cost": ZERO, "nodes": nodes},
        "driver": {"ddi_version": "wddm3_2", "native_fence": True}, "fence": [{"name": "nf", "native": True}],
        "process": [APP, consumer],
        "call": [{"at": 0, "api": "WaitForSynchronizationObjectFromCpu", "process": "app", "fence": "nf", "value": 5},
                 {"at": "2ms", "api": "SignalSynchronizationObjectFromCpu", "process": "app", "fence": "nf",
                  "value": 5}]}, "<cpusignal>")
    system, events = _run(sc)
    fence = system.fences["nf"]
    (call,) = [e for e in events if e["event"] == "DdiCall" and e["name"] == "DxgkDdiUpdateCurrentValuesFromCpu"]
    assert (call["t"], call["irql"], call["args"]["NumFences"], call["args"]["Flags"]["Value"], call["status"]) == \
        (2 * MS, "DISPATCH_LEVEL", 1, 0, "STATUS_SUCCESS")
    assert system.adapter.memory.read_u64(fence.cpu_va) == 5 and fence.value == 5
    assert [(e["t"], e["value"], e["source"]) for e in events if e["event"] == "FenceSignal"
            and e["fence"] == fence.handle] == [(2 * MS, 5, "cpu")]
    assert _done(events) == [(2 * MS, 5, "STATUS_SUCCESS")]
    assert _monitored(events) == [(0, 4, 0), (2 * MS, U64_MAX, 5)]
    running = [e["t"] for e in events if e["event"] == "HwContextState" and e["engine"] == 1 and e["state"] == "running"]
    assert running[-1] == 2 * MS
    (q,) = system.contexts[1].hwqueues
    assert [e["t"] for e in events if e["event"] == "QueuePacketStop" and e["hwqueue"] == q.handle] == [3 * MS]
    assert not [e for e in events if e["event"] == "NativeFenceSignaled"]
    assert system.adapter.wddm2.native.cpu_signals == 1
