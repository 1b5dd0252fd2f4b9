"""Hardware scheduling under MaxInFlightHwQueueBuffers: freed slots go to the highest band first
(issue 26).

The OS holds a node's buffers back once the driver has ``MaxInFlightHwQueueBuffers`` of them; the
queues held wait in line. Before the fix a freed slot went to the first queue in line whatever its
band, so a REALTIME queue's buffer waited behind one buffer of every lower-band queue in line. Now
the highest band waiting is served first, and within a band the line keeps arrival order (one buffer
per turn, so no queue keeps the node). Zero CPU costs; every buffer takes 100 us on the engine, the
first starting 516 ns in (the page-table update before it).
"""

from __future__ import annotations

from wddm2util import ZERO, adapter, ddi_calls, run, scenario

US = 1000
T0 = 516  # when the first buffer starts: every buffer then completes at T0 + k x 100 us


def clients(n: int, repeat: int, priority: str = "normal", prefix: str = "n", at: int = 0) -> list:
    return [{"name": f"{prefix}{i}", "priority": priority, "context": [{"name": "c", "node": "3D", "workload": {
        "kind": "script", "packets": [{"at": at, "work": "100us", "repeat": repeat}]}}]} for i in range(n)]


def handed(events, system) -> list:
    """The scenario's contexts' names, in the order their buffers went to the driver, with when."""
    by_queue = {e["hHwQueue"]: e["context"] for e in events if e["event"] == "HwQueueCreate"}
    names = {c.handle: c.full_name for c in system.contexts}
    return [(e["t"], names[by_queue[e["args"]["hHwQueue"]]]) for e in ddi_calls(events, "DxgkDdiSubmitCommandToHwQueue")
            if by_queue[e["args"]["hHwQueue"]] in names]


def completed(events, ctx) -> list:
    return [e["t"] for e in events
            if e["event"] == "QueuePacketStop" and e["context"] == ctx.handle and e["status"] == "Completed"]


def test_a_realtime_buffer_takes_the_next_freed_slot_before_forty_normal_queues():
    """Forty normal-band clients, 20 x 100 us each, all queued at 0; one in flight at a time. A
    realtime client submits one 100 us buffer at 1.05 ms: it goes to the driver at the next
    completion, 1.1 ms, and completes at 1.2 ms. Before, it waited for its turn behind the forty
    queues in line and completed at 5.2 ms."""
    procs = clients(40, 20) + [{"name": "rt", "priority": "realtime", "context": [{"name": "c", "node": "3D",
                               "workload": {"kind": "script", "packets": [{"at": 1_050_000, "work": "100us"}]}}]}]
    system, result, events = run(scenario(adapter("hw", ZERO, node3d={"max_in_flight_hw_queue_buffers": 1}), procs,
                                          duration="1s"))
    assert result.bugcheck is None
    rt = system.contexts[-1]
    order = handed(events, system)
    assert [t for t, name in order if name == "rt/c"] == [T0 + 1100 * US]
    assert completed(events, rt) == [T0 + 1200 * US]
    # The normal clients' turns keep arrival order, one buffer each, around the realtime one. n0's
    # page tables are written first: it takes the slot, its next buffer heads the line, the others
    # join behind it as their own page tables are written; then n0, n1, ..., n39, n0, ... until n0,
    # one buffer ahead, has none left.
    normal = [name for _t, name in order if name != "rt/c"]
    assert normal == ["n0/c"] + [f"n{k % 40}/c" for k in range(760)] + [f"n{k}/c" for k in range(1, 40)]
    assert order[:13] == ([(T0, "n0/c")] + [(T0 + (k + 1) * 100 * US, f"n{k}/c") for k in range(10)]
                          + [(T0 + 1100 * US, "rt/c"), (T0 + 1200 * US, "n10/c")])


def test_freed_slots_go_to_focus_then_normal_then_idle():
    """Idle, normal and focus clients (the band of their process class), 3 x 100 us each, two in
    flight at most, all queued at 0 in that order. i0's page tables are written first: it takes
    both slots; every slot freed after goes to the highest band in line: focus, then normal, then
    idle, arrival order within a band (before the fix: i0, i1, n0, n1, f0, f1, i0, ... in turn)."""
    procs = (clients(2, 3, "idle", "i") + clients(2, 3, "normal", "n") + clients(2, 3, "high", "f"))
    system, result, events = run(scenario(adapter("hw", ZERO, node3d={"max_in_flight_hw_queue_buffers": 2}), procs,
                                          duration="1s"))
    assert result.bugcheck is None
    order = [name for _t, name in handed(events, system)]
    assert order == ["i0/c", "i0/c"] + ["f0/c", "f1/c"] * 3 + ["n0/c", "n1/c"] * 3 + ["i0/c", "i1/c", "i1/c", "i1/c"]
