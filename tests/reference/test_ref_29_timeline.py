"""Reference scenario 29: timeline semantics of monitored fences, from a scenario file.

A monitored fence is a 64-bit timeline that only goes forward (Microsoft's "Context monitoring"
page; D3DDDICB_SIGNALFLAGS.AllowFenceRewind is the one way back). The scenario signals points 3, 1, 2
out of order, from the GPU (buffers that end with a fence write) and from the CPU; waits for a
point nobody has signalled yet (on the CPU and for a GPU packet); signals point 0; and rewinds a
fence while a thread waits on it. Pass: the observed value is monotonic, each wait resolves at the
first point at or above its target, and the documented errors are returned. Times are virtual ns.
"""

from __future__ import annotations

from wddmsim.scenario import parse_scenario
from wddmsim.runner.system import System
from wddmsim.trace import ListSink

MS = 1_000_000
US = 1_000

SCENARIO = """
name = "timeline"
duration = "10ms"
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
name = "gpu"
[[fence]]
name = "cpu"
[[fence]]
name = "zero"
[[fence]]
name = "reset"

[[process]]
name = "app"
[[process.context]]
name = "writer"
node = "3D"
workload = { kind = "script", packets = [
  { at = "1ms", work = "100us", signal_fence = "gpu", signal_value = 3 },
  { at = "2ms", work = "100us", signal_fence = "gpu", signal_value = 1 },
  { at = "3ms", work = "100us", signal_fence = "gpu", signal_value = 2 },
] }
[[process.context]]
name = "reader"
node = "Copy"
workload = { kind = "script", packets = [{ at = 0, work = "50us", wait_fence = "gpu", wait_value = 2 }] }
[[adapter.nodes]]
name = "Copy"
engine = "copy"
command_cost = 0

[[call]]
api = "WaitForSynchronizationObjectFromCpu"
process = "app"
fence = "cpu"
value = 2
at = "500us"
[[call]]
api = "SignalSynchronizationObjectFromCpu"
process = "app"
fence = "cpu"
value = [3]
at = "1ms"
[[call]]
api = "SignalSynchronizationObjectFromCpu"
process = "app"
fence = "cpu"
value = 1
at = "2ms"
[[call]]
api = "SignalSynchronizationObjectFromCpu"
process = "app"
fence = "cpu"
value = 2
at = "3ms"

[[call]]
api = "WaitForSynchronizationObjectFromCpu"
process = "app"
fence = "gpu"
value = 3
at = "5ms"

[[call]]
api = "SignalSynchronizationObjectFromCpu"
process = "app"
fence = "zero"
value = 0
at = "1ms"

[[call]]
api = "SignalSynchronizationObjectFromCpu"
process = "app"
fence = "reset"
value = 5
at = "1ms"
[[call]]
api = "WaitForSynchronizationObjectFromCpu"
process = "app"
fence = "reset"
value = 8
at = "2ms"
[[call]]
api = "SignalSynchronizationObjectFromCpu"
process = "app"
fence = "reset"
value = 1
rewind = true
at = "3ms"
[[call]]
api = "SignalSynchronizationObjectFromCpu"
process = "app"
fence = "reset"
value = 8
at = "4ms"
"""


def run():
    trace = ListSink()
    system = System(parse_scenario(SCENARIO, "<ref29>"), trace=trace)
    result = system.run()
    assert result.bugcheck is None
    return system, result, trace.events


def test_out_of_order_points_keep_the_observed_value_monotonic():
    system, result, events = run()
    f = system.fences
    handles = {fence.handle: name for name, fence in f.items()}
    signals = [(e["t"], handles[e["fence"]], e["value"], e["source"], e["rewind"])
               for e in events if e["event"] == "FenceSignal"]
    # GPU writes of 3, then 1, then 2: the OS sees 3 once. Memory ends holding the GPU's last
    # write (2); the API call at 5 ms reads it, counts one backward write and keeps the value at 3,
    # so the wait for 3 is satisfied at once.
    assert [s for s in signals if s[1] == "gpu"] == [(1 * MS + 100 * US, "gpu", 3, "gpu", 0)]
    assert system.adapter.wddm2.fences.read(f["gpu"]) == 2
    assert f["gpu"].value == 3
    assert result.summary["wddm2"]["fences"]["backward_gpu_writes"] == 1
    waited = [(e["t"], e["issued"], e["status"]) for e in events if e["event"] == "ScenarioCall" and e["t"] == 5 * MS]
    assert waited == [(5 * MS, 5 * MS, "STATUS_SUCCESS")]
    # CPU signals of 3, then 1, then 2: the lower ones are refused with STATUS_INVALID_PARAMETER.
    assert [s for s in signals if s[1] == "cpu"] == [(1 * MS, "cpu", 3, "cpu", 0)]
    calls = [(e["t"], e["status"]) for e in events if e["event"] == "ScenarioCall"
             and e["api"] == "SignalSynchronizationObjectFromCpu" and e["t"] in (1 * MS, 2 * MS, 3 * MS)]
    assert (2 * MS, "STATUS_INVALID_PARAMETER") in calls and (3 * MS, "STATUS_INVALID_PARAMETER") in calls
    assert f["cpu"].value == 3
    # The value each fence shows never goes down (no rewind asked for on these).
    for name in ("gpu", "cpu"):
        seen = [v for _, n, v, _, _ in signals if n == name]
        assert seen == sorted(seen)


def test_waits_for_points_not_signalled_yet_resolve_at_the_first_point_at_or_above_the_target():
    system, _, events = run()
    handles = {fence.handle: name for name, fence in system.fences.items()}
    done = [(e["t"], handles[e["fence"]], e["value"], e["waiter"], e["status"], e["waited_ns"])
            for e in events if e["event"] == "FenceWaitDone"]
    # The CPU waiter for 2 (from 0.5 ms) is released by the signal of 3 at 1 ms.
    assert (1 * MS, "cpu", 2, "cpu", "STATUS_SUCCESS", 500 * US) in done
    # The reader's packet waits from 0 for point 2 of the GPU timeline: released when the GPU's
    # write of 3 is seen, at 1.1 ms, and it runs then on its own node.
    assert (1 * MS + 100 * US, "gpu", 2, "queue", "STATUS_SUCCESS", 1 * MS + 100 * US) in done
    names = {e["context"]: e["name"] for e in events if e["event"] == "ContextCreate"}
    starts = [e["t"] for e in events if e["event"] == "DmaPacketStart" and names.get(e["context"]) == "app/reader"]
    assert starts == [1 * MS + 100 * US]


def test_a_signal_of_point_zero_succeeds_and_changes_nothing():
    system, _, events = run()
    zero = system.fences["zero"]
    assert zero.value == 0
    assert not [e for e in events if e["event"] == "FenceSignal" and e["fence"] == zero.handle]
    ok = [e for e in events if e["event"] == "ScenarioCall" and e["t"] == 1 * MS and e["status"] == "STATUS_SUCCESS"
          and e["api"] == "SignalSynchronizationObjectFromCpu"]
    assert len(ok) == 3  # the signals of cpu=3, zero=0 and reset=5 at 1 ms


def test_a_rewind_during_a_wait_leaves_the_waiter_waiting_for_its_target():
    system, _, events = run()
    reset = system.fences["reset"]
    signals = [(e["t"], e["value"], e["rewind"]) for e in events
               if e["event"] == "FenceSignal" and e["fence"] == reset.handle]
    assert signals == [(1 * MS, 5, 0), (3 * MS, 1, 1), (4 * MS, 8, 0)]
    done = [(e["t"], e["value"], e["status"], e["waited_ns"]) for e in events
            if e["event"] == "FenceWaitDone" and e["fence"] == reset.handle]
    assert done == [(4 * MS, 8, "STATUS_SUCCESS", 2 * MS)]
