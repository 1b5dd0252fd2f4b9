"""Reference scenario 26: a CPU waiter and a GPU wait on the same monitored-fence value.

From a scenario file: one process's thread waits from the CPU
(D3DKMTWaitForSynchronizationObjectFromCpu) for the fence to reach 5, another process's packet
waits for the same value on the GPU side, and a third process signals 1, 2, 3, 4, 5 from the CPU
(D3DKMTSignalSynchronizationObjectFromCpu) 1 ms apart. Pass: each unblocks exactly when the value
reaches 5, not earlier; a wait or a signal takes at most 32 objects (D3DDDI_MAX_OBJECT_WAITED_ON,
D3DDDI_MAX_OBJECT_SIGNALED) and 33 is rejected; waiting on a destroyed fence returns an error and
does not hang. Times are virtual ns.
"""

from __future__ import annotations

import pytest

from wddmsim.ddi.ntstatus import NTSTATUS
from wddmsim.dxgkrnl.errors import ApiError
from wddmsim.scenario import ScenarioError, parse_scenario
from wddmsim.runner.system import System
from wddmsim.trace import ListSink

MS = 1_000_000
US = 1_000

ADAPTERS = {
    # The software scheduler: the OS holds the packet (D3DKMTWaitForSynchronizationObjectFromGpu).
    "os": """
[adapter]
gpu_va = true
cpu_cost = { render = 0, patch = 0, submit = 0, isr = 0, dpc = 0, present = 0 }
[[adapter.nodes]]
name = "3D"
engine = "3d"
command_cost = 0
[driver]
ddi_version = "wddm2_1"
""",
    # Hardware scheduling: a WAIT command at the head of the buffer; the GPU itself stalls on it.
    "gpu": """
[adapter]
scheduling = "hardware"
cpu_cost = { render = 0, patch = 0, submit = 0, isr = 0, dpc = 0, present = 0 }
[[adapter.nodes]]
name = "3D"
engine = "3d"
command_cost = 0
[driver]
ddi_version = "wddm2_7"
""",
}

HEAD = """
name = "fence_waits"
duration = "20ms"
"""

BODY = """
[[fence]]
name = "f"
[[process]]
name = "consumer"
[[process.context]]
name = "gpu"
node = "3D"
workload = {{ kind = "script", packets = [{{ at = "1ms", work = "100us", wait_fence = "f", wait_value = 5, wait_by = "{by}" }}] }}
[[process]]
name = "producer"
[[process.context]]
name = "idle"
node = "3D"
workload = {{ kind = "script", packets = [{{ at = 0, work = "10us" }}] }}

[[call]]
api = "WaitForSynchronizationObjectFromCpu"
process = "consumer"
fence = "f"
value = 5
at = "1ms"

[[call]]
api = "SignalSynchronizationObjectFromCpu"
process = "producer"
fence = "f"
value = 1
at = "2ms"
every = "1ms"
count = 5
"""


def run(by: str, extra: str = ""):
    text = HEAD + ADAPTERS[by] + BODY.format(by=by) + extra
    trace = ListSink()
    system = System(parse_scenario(text, "<ref26>"), trace=trace)
    result = system.run()
    return system, result, trace.events


@pytest.mark.parametrize("by", ["os", "gpu"])
def test_cpu_and_gpu_waiters_unblock_exactly_when_the_value_reaches_the_target(by):
    system, result, events = run(by)
    assert result.bugcheck is None
    signals = [(e["t"], e["value"]) for e in events if e["event"] == "FenceSignal" and e["source"] == "cpu"]
    assert signals == [(2 * MS, 1), (3 * MS, 2), (4 * MS, 3), (5 * MS, 4), (6 * MS, 5)]
    # The CPU waiter: pending from 1 ms, released at 6 ms, not one signal earlier.
    cpu = [e for e in events if e["event"] == "FenceWaitDone" and e["waiter"] == "cpu"]
    assert [(e["t"], e["value"], e["status"], e["waited_ns"]) for e in cpu] == [(6 * MS, 5, "STATUS_SUCCESS", 5 * MS)]
    call = [e for e in events if e["event"] == "ScenarioCall" and e["api"].startswith("WaitFor")]
    assert [(e["t"], e["issued"], e["status"]) for e in call] == [(6 * MS, 1 * MS, "STATUS_SUCCESS")]
    # The GPU side: the consumer's packet runs from 6 ms exactly, 100 us long.
    names = {e["context"]: e["name"] for e in events if e["event"] == "ContextCreate"}
    gpu = system.contexts[0]
    assert gpu.full_name == "consumer/gpu"
    assert gpu.completed == 1
    if by == "os":
        queue = [e for e in events if e["event"] == "FenceWaitDone" and e["waiter"] == "queue"]
        assert [(e["t"], e["status"]) for e in queue] == [(6 * MS, "STATUS_SUCCESS")]
        starts = [e["t"] for e in events if e["event"] == "DmaPacketStart" and names.get(e["context"]) == "consumer/gpu"]
        assert starts == [6 * MS]
        done = [e["t"] for e in events if e["event"] == "QueuePacketStop" and names.get(e["context"]) == "consumer/gpu"]
        assert done == [6 * MS + 100 * US]
    else:
        # Under hardware scheduling the buffer is on the GPU from 1 ms; its WAIT holds it until the
        # value is 5: its progress fence completes 100 us after the last signal.
        done = [e["t"] for e in events if e["event"] == "QueuePacketStop" and names.get(e["context"]) == "consumer/gpu"]
        assert done == [6 * MS + 100 * US]


def _system(by="os"):
    return System(parse_scenario(HEAD + ADAPTERS[by] + BODY.format(by=by), "<ref26>"))


def test_at_most_32_objects_per_wait_and_per_signal_and_33_is_rejected():
    system = _system()
    kmt = system.kmt
    dev = system.contexts[0].device
    fences = [kmt.CreateSynchronizationObject(dev) for _ in range(33)]
    kmt.SignalSynchronizationObjectFromCpu(fences[:32], [1] * 32)
    assert all(f.value == 1 for f in fences[:32])
    event = kmt.WaitForSynchronizationObjectFromCpu(fences[:32], [1] * 32)
    assert event.value == NTSTATUS.STATUS_SUCCESS
    for call in (lambda: kmt.SignalSynchronizationObjectFromCpu(fences, [2] * 33),
                 lambda: kmt.WaitForSynchronizationObjectFromCpu(fences, [1] * 33)):
        with pytest.raises(ApiError) as err:
            call()
        assert err.value.status == NTSTATUS.STATUS_INVALID_PARAMETER
    assert fences[0].value == 1  # the refused signal changed nothing


def test_a_scenario_file_with_33_objects_is_refused_naming_the_field():
    names = "".join(f'[[fence]]\nname = "f{i}"\n' for i in range(33))
    call = ('[[call]]\napi = "WaitForSynchronizationObjectFromCpu"\nprocess = "consumer"\n'
            f"fence = {[f'f{i}' for i in range(33)]!r}\nvalue = {[1] * 33!r}\n".replace("'", '"'))
    with pytest.raises(ScenarioError) as err:
        parse_scenario(HEAD + ADAPTERS["os"] + BODY.format(by="os") + names + call, "ref26.toml")
    assert err.value.problems == [
        "ref26.toml: call[2]: fence names 1 to 32 objects (D3DDDI_MAX_OBJECT_SIGNALED, D3DDDI_MAX_OBJECT_WAITED_ON), "
        "got 33"]


def test_waiting_on_a_destroyed_fence_returns_an_error_and_does_not_hang():
    """The fence is destroyed at 4 ms, while both waiters pend: the CPU wait returns
    STATUS_INVALID_HANDLE then, the OS-held packet is let go then, and a wait issued later fails
    at once."""
    extra = """
[[call]]
api = "DestroySynchronizationObject"
process = "producer"
fence = "f"
at = "3500us"

[[call]]
api = "WaitForSynchronizationObjectFromCpu"
process = "consumer"
fence = "f"
value = 1
at = "4ms"
"""
    system, result, events = run("os", extra)
    assert result.bugcheck is None
    calls = [(e["t"], e["api"], e["issued"], e["status"]) for e in events if e["event"] == "ScenarioCall"]
    assert calls == [
        (2 * MS, "SignalSynchronizationObjectFromCpu", 2 * MS, "STATUS_SUCCESS"),
        (3 * MS, "SignalSynchronizationObjectFromCpu", 3 * MS, "STATUS_SUCCESS"),
        (3500 * US, "DestroySynchronizationObject", 3500 * US, "STATUS_SUCCESS"),
        (3500 * US, "WaitForSynchronizationObjectFromCpu", 1 * MS, "STATUS_INVALID_HANDLE"),
        (4 * MS, "WaitForSynchronizationObjectFromCpu", 4 * MS, "STATUS_INVALID_HANDLE"),
        (4 * MS, "SignalSynchronizationObjectFromCpu", 4 * MS, "STATUS_INVALID_HANDLE"),
        (5 * MS, "SignalSynchronizationObjectFromCpu", 5 * MS, "STATUS_INVALID_HANDLE"),
        (6 * MS, "SignalSynchronizationObjectFromCpu", 6 * MS, "STATUS_INVALID_HANDLE"),
    ]
    # The packet held behind the GPU wait is not left hanging: it runs once the fence is gone.
    gpu = system.contexts[0]
    assert gpu.completed == 1
    names = {e["context"]: e["name"] for e in events if e["event"] == "ContextCreate"}
    starts = [e["t"] for e in events if e["event"] == "DmaPacketStart" and names.get(e["context"]) == "consumer/gpu"]
    assert starts == [3500 * US]
    queue = [(e["t"], e["status"]) for e in events if e["event"] == "FenceWaitDone" and e["waiter"] == "queue"]
    assert queue == [(3500 * US, "STATUS_INVALID_HANDLE")]
