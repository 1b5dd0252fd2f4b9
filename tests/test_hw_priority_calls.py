"""The priority calls under hardware scheduling (issue 26): D3DKMTSetContextSchedulingPriority and
D3DKMTSetProcessSchedulingPriorityClass reach the driver through
DxgkDdiSetContextSchedulingProperties, and the GPU's scheduler acts on the new properties at its next
decision (Microsoft's DxgkDdiSetContextSchedulingProperties page: the OS calls it when "a Direct3D
device changes priority", possibly "in the middle of context execution"; the change takes effect at
the next scheduling iteration of the band). Before, both were refused with STATUS_NOT_SUPPORTED.

Two hogs of 40 x 1 ms buffers, no CPU costs, preemption every 50 us, no NORMAL share: equal
contexts alternate by the 2 ms quantum from 516 ns (1029 ns for two contexts of one process, after
the page-table updates). A call at 5.3 ms, while a's buffer that began at 5 ms runs, raises b.
"""

from __future__ import annotations

import pytest

from wddmsim.ddi.ntstatus import NTSTATUS
from wddmsim.dxgkrnl.errors import ApiError
from wddmsim.runner.system import System
from wddmsim.trace import ListSink

from wddm2util import ZERO, MS, adapter, ddi_calls, run, scenario

US = 1000
WORKLOAD = {"kind": "script", "packets": [{"at": 0, "work": "1ms", "repeat": 40}]}


def build(call=(), *, same_process: bool = False, cap: int | None = None):
    node = {"preemption": "interval", "preemption_interval": "50us"}
    if cap is not None:
        node["max_in_flight_hw_queue_buffers"] = cap
    ad = adapter("hw", ZERO, node3d=node, bands={"normal_share": 0})
    if same_process:
        procs = [{"name": "p", "context": [{"name": "a", "node": "3D", "workload": WORKLOAD},
                                           {"name": "b", "node": "3D", "workload": WORKLOAD}]}]
    else:
        procs = [{"name": "a", "context": [{"name": "c", "node": "3D", "workload": WORKLOAD}]},
                 {"name": "b", "context": [{"name": "c", "node": "3D", "workload": WORKLOAD}]}]
    system, result, events = run(scenario(ad, procs, duration="1s", call=list(call)))
    assert result.bugcheck is None
    return system, events


def running(events, system, until: int) -> list:
    """(t, context name) of each HwContextState ``running`` of the scenario's contexts before ``until``."""
    by_hw = {e["hHwContext"]: e["context"] for e in events if e["event"] == "HwQueueCreate"}
    names = {c.handle: c.full_name for c in system.contexts}
    return [(e["t"], names[by_hw[e["context"]]]) for e in events if e["event"] == "HwContextState"
            and e["state"] == "running" and e["t"] < until and by_hw.get(e["context"]) in names]


def completions(events, ctx) -> list:
    return [e["t"] for e in events
            if e["event"] == "QueuePacketStop" and e["context"] == ctx.handle and e["status"] == "Completed"]


def properties_calls(events) -> list:
    """DxgkDdiSetContextSchedulingProperties after the start: (t, hContext, band, in-process priority)."""
    return [(e["t"], e["args"]["hContext"], e["args"]["priorityBand"], e["args"]["inProcessPriority"])
            for e in ddi_calls(events, "DxgkDdiSetContextSchedulingProperties") if e["t"] > 0]


def test_without_a_call_the_two_hogs_alternate_by_quantum():
    system, events = build()
    a, b = system.contexts
    t0 = 516
    assert running(events, system, 12 * MS) == [(t0 + 2 * MS * k, "ab"[k % 2] + "/c") for k in range(6)]
    assert completions(events, a)[-1] == t0 + 78 * MS and completions(events, b)[-1] == t0 + 80 * MS


def test_a_process_raised_to_high_moves_to_the_focus_band_and_runs_first():
    """SetProcessSchedulingPriorityClass(b, high) at 5.3 ms: DxgkDdiSetContextSchedulingProperties
    puts b's context in the FOCUS band at once; the GPU preempts a at its next 50 us point (5.300516
    ms, no FOCUS grace) and runs b's 38 remaining buffers to the end (43.300516 ms); a, preempted
    0.3 ms into its fourth buffer, finishes after, its 80 ms of work intact."""
    call = [{"api": "SetProcessSchedulingPriorityClass", "process": "b", "priority_class": "high", "at": "5300us"}]
    system, events = build(call)
    a, b = system.contexts
    t0 = 516
    assert [(e["t"], e["process"], e["priority_class"], e["previous"]) for e in events
            if e["event"] == "ProcessPriorityClass"] == [(5300 * US, b.process.pid, "high", "normal")]
    assert properties_calls(events) == [(5300 * US, b.hDriver, 2, 0)]  # DXGK_SCHEDULING_PRIORITY_BAND_FOCUS
    assert running(events, system, 50 * MS) == [(t0, "a/c"), (t0 + 2 * MS, "b/c"), (t0 + 4 * MS, "a/c"),
                                                (t0 + 5300 * US, "b/c"), (t0 + 43300 * US, "a/c")]
    assert completions(events, b) == [t0 + 3 * MS, t0 + 4 * MS] + [t0 + 5300 * US + k * MS for k in range(1, 39)]
    assert completions(events, a)[:4] == [t0 + MS, t0 + 2 * MS, t0 + 5 * MS, t0 + 44 * MS]
    assert completions(events, a)[-1] == t0 + 80 * MS
    assert b.band == "focus" and a.band == "normal" and b.process.priority_class == "high"


def test_a_context_raised_in_its_process_runs_first():
    """SetContextSchedulingPriority(p/b, 3) at 5.3 ms: inProcessPriority 3 in the NORMAL band; a
    context loses to one of its own process with a higher in-process priority (after its
    gracePeriodLowerPriority, 0 here), so b runs from 5.301029 ms until it has nothing left."""
    call = [{"api": "SetContextSchedulingPriority", "process": "p", "context": "b", "priority": 3, "at": "5300us"}]
    system, events = build(call, same_process=True)
    a, b = system.contexts
    t0 = 1029
    assert [(e["t"], e["context"], e["priority"], e["previous"]) for e in events
            if e["event"] == "ContextPriority"] == [(5300 * US, b.handle, 3, 0)]
    assert properties_calls(events) == [(5300 * US, b.hDriver, 1, 3)]  # NORMAL band, in-process priority 3
    assert running(events, system, 50 * MS) == [(t0, "p/a"), (t0 + 2 * MS, "p/b"), (t0 + 4 * MS, "p/a"),
                                                (t0 + 5300 * US, "p/b"), (t0 + 43300 * US, "p/a")]
    assert completions(events, b)[-1] == t0 + 43300 * US
    assert completions(events, a)[-1] == t0 + 80 * MS
    assert b.priority == 3 and b.band == "normal"


def test_a_raised_queue_waiting_for_an_in_flight_slot_moves_to_its_new_band_line():
    """One buffer in flight at a time: the two queues take turns for the slot. At 4.3 ms a is first
    in line and b behind it; b's process is raised to high: b's queue moves to the FOCUS band's line
    and takes the next freed slot (5.000516 ms), and every slot after it until it has no buffer
    left; then a's. (Had it kept its place, a would have had the slot at 5 ms.)"""
    call = [{"api": "SetProcessSchedulingPriorityClass", "process": "b", "priority_class": "high", "at": "4300us"}]
    system, events = build(call, cap=1)
    a, b = system.contexts
    by_queue = {e["hHwQueue"]: e["context"] for e in events if e["event"] == "HwQueueCreate"}
    names = {c.handle: c.full_name[0] for c in system.contexts}
    handed = [(e["t"], names[by_queue[e["args"]["hHwQueue"]]]) for e in ddi_calls(events, "DxgkDdiSubmitCommandToHwQueue")
              if by_queue[e["args"]["hHwQueue"]] in names]
    # a's first buffer, its second (at the head of the line: b's page tables were written after
    # a's), then b, a, b; from 5 ms b's 38 others in a row, then a's 37.
    assert "".join(n for _t, n in handed) == "aabab" + "b" * 38 + "a" * 37
    assert handed[5] == (516 + 5 * MS, "b")
    assert completions(events, b)[-1] == 516 + 43 * MS


def test_the_thunks_under_hardware_scheduling_and_a_failing_driver_call():
    """The thunks themselves: accepted (no STATUS_NOT_SUPPORTED); a priority outside -7..7 is still
    STATUS_INVALID_PARAMETER before the driver is called; a failure of the driver's call fails the
    thunk with the driver's status and leaves the old priority, band and class in place, with no
    event."""
    from wddm2util import with_driver
    from wddmsim.scenario import scenario_from_dict

    ad = adapter("hw", ZERO)
    sc = scenario_from_dict(with_driver({"name": "t", "duration": "10ms", "adapter": ad, "process": [
        {"name": "p", "context": [{"name": "a", "node": "3D", "workload": WORKLOAD},
                                  {"name": "b", "node": "3D", "workload": WORKLOAD}]}]}), "<t>")
    trace = ListSink()
    system = System(sc, trace=trace)
    kmt = system.kmt
    a, b = system.contexts
    ddi = system.adapter.ddi
    name = "DxgkDdiSetContextSchedulingProperties"
    kmt.SetContextSchedulingPriority(a, -2)
    assert (a.priority, a.band) == (-2, "normal")
    with pytest.raises(ApiError) as err:
        kmt.SetContextSchedulingPriority(a, 9)
    assert err.value.status == NTSTATUS.STATUS_INVALID_PARAMETER and a.priority == -2
    # The second context's call of the class change fails: a, told first, is put back.
    ddi.fail_call(name, ddi.calls[name] + 2, int(NTSTATUS.STATUS_UNSUCCESSFUL))  # (counted from 1)
    with pytest.raises(ApiError) as err:
        kmt.SetProcessSchedulingPriorityClass(a.process, "high")
    assert err.value.status == NTSTATUS.STATUS_UNSUCCESSFUL
    assert a.process.priority_class == "normal" and (a.band, b.band) == ("normal", "normal")
    bands = [(e["args"]["hContext"], e["args"]["priorityBand"]) for e in trace.events
             if e["event"] == "DdiCall" and e["name"] == name][-3:]
    assert bands == [(a.hDriver, 2), (b.hDriver, 2), (a.hDriver, 1)]  # b's refused; a's undone
    assert [e["event"] for e in trace.events if e["event"] in ("ContextPriority", "ProcessPriorityClass")] == [
        "ContextPriority"]
    kmt.SetProcessSchedulingPriorityClass(a.process, "realtime")
    assert (a.band, b.band) == ("realtime", "realtime")
