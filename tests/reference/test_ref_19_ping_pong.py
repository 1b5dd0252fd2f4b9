"""Reference scenario 19: ping-pong.

Two contexts alternate 1000 packets of 1 ms, each waiting for the other's previous packet through
a shared monitored fence. The makespan is 1000 ms plus one fence-signal -> wait-unblock -> submit
latency per hand-over (999 of them between the first packet's start and the last one's end): the
GPU's fence write raises an interrupt (ISR), the DPC sees the value and releases the waiting
context, and the OS submits its packet (DxgkDdiSubmitCommandVirtual). The run summary reports
that latency on its own (``wddm2.fence_wake_latency``).
"""

from __future__ import annotations

import pytest

from reference.refsys import MS
from wddm2util import COSTS, ZERO, adapter, chain_processes, run, scenario, stops

PACKETS = 1000


def ping_pong(cost):
    sc = scenario(adapter("va", cost), chain_processes(2, PACKETS // 2), duration="2s", fence=[{"name": "f"}])
    system, result, events = run(sc)
    assert result.bugcheck is None and result.summary["violations"] == []
    return system, result, events


@pytest.mark.parametrize("cost", [ZERO, COSTS], ids=["zero_cost", "default_cost"])
def test_makespan_is_the_work_plus_one_wake_latency_per_hand_over(cost):
    system, result, events = ping_pong(cost)
    done = stops(events, system)
    a, b = (c.handle for c in system.contexts)
    assert [e["context"] for e in done] == [a, b] * (PACKETS // 2)
    gpu = [e for e in events if e["event"] in ("DmaPacketStart", "DmaPacketStop") and e["kind"] == "render"]
    latency = cost["isr"] + cost["dpc"] + cost["submit"]
    starts = [e["t"] for e in gpu if e["event"] == "DmaPacketStart"]
    stops_gpu = [e["t"] for e in gpu if e["event"] == "DmaPacketStop"]
    # Each hand-over: the previous packet's end (its fence write) to the next one's start.
    assert [s - e for e, s in zip(stops_gpu, starts[1:])] == [latency] * (PACKETS - 1)
    assert stops_gpu[-1] - starts[0] == PACKETS * MS + (PACKETS - 1) * latency


@pytest.mark.parametrize("cost", [ZERO, COSTS], ids=["zero_cost", "default_cost"])
def test_the_model_reports_the_wake_latency_separately(cost):
    """The run summary carries the fence-signal -> wait-unblock -> submit latency on its own: one
    sample per hand-over, each the ISR + DPC + submission, and the makespan is the work plus their
    sum."""
    system, result, events = ping_pong(cost)
    latency = cost["isr"] + cost["dpc"] + cost["submit"]
    wake = result.summary["wddm2"]["fence_wake_latency"]
    assert wake == {"count": PACKETS - 1, "total_ns": (PACKETS - 1) * latency, "min_ns": latency,
                    "mean_ns": float(latency), "max_ns": latency}
    gpu = [e["t"] for e in events if e["event"] in ("DmaPacketStart", "DmaPacketStop") and e["kind"] == "render"]
    assert gpu[-1] - gpu[0] == PACKETS * MS + wake["total_ns"]


def test_hardware_scheduling_reports_the_same_latency_for_os_held_queue_waits():
    """Under hardware scheduling with the waits held by the OS (``wait = "os"``), each hand-over
    is the same ISR + DPC + DxgkDdiSubmitCommandToHwQueue."""
    sc = scenario(adapter("hw", COSTS), chain_processes(2, PACKETS // 2), duration="2s", fence=[{"name": "f"}])
    system, result, events = run(sc)
    assert result.bugcheck is None and result.summary["violations"] == []
    latency = COSTS["isr"] + COSTS["dpc"] + COSTS["submit"]
    assert result.summary["wddm2"]["fence_wake_latency"] == {
        "count": PACKETS - 1, "total_ns": (PACKETS - 1) * latency, "min_ns": latency, "mean_ns": float(latency),
        "max_ns": latency}
    assert system.adapter.wddm2.fences.read(system.fences["f"]) == PACKETS
