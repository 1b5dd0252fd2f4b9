"""Reference scenario 31: WDDM 2.x hardware queues and oversubscription.

Twelve hardware queues (twelve clients, one queue each) on a 3D engine whose hardware scheduler has
eight slots (``nodes[].hw_queue_slots = 8``). Every client submits two 1 ms buffers at once; the
first four submit two more at 30 ms, when their queues have long been unmapped. Pass criteria:

- each submission advances its queue's progress fence to its HwQueueProgressFenceId (the GPU writes
  exactly the ids, in order, each when its buffer ends; the OS retires the submission then);
- queues are mapped and unmapped only when idle (a queue leaves its slot with its ring drained and
  off the engine; a queue is mapped only into a free slot; no queue runs while unmapped);
- doorbells rung on an unmapped queue are kept and their buffers run after the queue is mapped;
- every queue eventually runs.

Every CPU cost and command cost is zero, so the times are exact: a process's first submission
waits for the paging buffer that writes its page tables (PT = 516 ns on the copy engine, one after
the other), the engine runs one queue at a time (the clients share the NORMAL band; a queue drains
in 2 ms, within its 2 ms quantum). Docs: docs/gpu.md, "Hardware queue slots".
"""

from __future__ import annotations

from pathlib import Path

from wddmsim.scenario import scenario_from_dict
from wddmsim.runner.system import System
from wddmsim.trace import ListSink

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "hw_queue_oversubscription.toml"
MS = 1_000_000
ZERO = {"render": 0, "patch": 0, "submit": 0, "isr": 0, "dpc": 0, "present": 0}
QUEUES = 12
SLOTS = 8
PT = 516  # the paging buffer writing one process's page tables (copy engine, 8256 bytes at 16 bytes/ns)
LATE = 30 * MS  # the first four clients' second submission
BUFFER = 16  # one INDIRECT on a queue's ring


def _scenario():
    def client(i: int) -> dict:
        packets = [{"at": "0ns", "work": "1ms", "repeat": 2}]
        if i < 4:
            packets.append({"at": "30ms", "work": "1ms", "repeat": 2})
        return {"name": f"client{i}", "context": [{"name": "c", "node": "3D", "workload": {
            "kind": "script", "packets": packets}}]}

    return scenario_from_dict({
        "name": "ref31", "duration": "60ms",
        "adapter": {"scheduling": "hardware", "cpu_cost": ZERO, "nodes": [
            {"name": "3D", "engine": "3d", "command_cost": 0, "hw_queue_slots": SLOTS},
            {"name": "Copy", "engine": "copy", "command_cost": 0}]},
        "driver": {"ddi_version": "wddm2_7"},
        "process": [client(i) for i in range(QUEUES)]}, "<ref31>")


def _run():
    trace = ListSink()
    system = System(_scenario(), trace=trace)
    writes: dict[int, list[tuple[int, int]]] = {}
    mem = system.adapter.memory
    for ctx in system.contexts:
        for q in ctx.hwqueues:
            writes[q.handle] = []
            mem.watch(q.progress.cpu_va, lambda addr, q=q: writes[q.handle].append((system.sim.now, mem.read_u64(addr))))
    result = system.run()
    assert result.bugcheck is None
    return system, trace.events, writes


def _handles(system, events):
    """Per client, in order: (the OS's hwqueue handle, the driver's hHwQueue, the driver's hHwContext)."""
    created = {e["hwqueue"]: e for e in events if e["event"] == "HwQueueCreate"}
    out = []
    for ctx in system.contexts:
        (q,) = ctx.hwqueues
        out.append((q.handle, created[q.handle]["hHwQueue"], created[q.handle]["hHwContext"]))
    return out


def test_each_submission_advances_its_queue_progress_fence_to_its_id():
    system, events, writes = _run()
    handles = _handles(system, events)
    for i, (os_q, hq, _) in enumerate(handles):
        # The ids the OS handed the driver for this queue (HwQueueProgressFenceId), in order.
        ids = [e["args"]["HwQueueProgressFenceId"] for e in events
               if e["event"] == "DdiCall" and e["name"] == "DxgkDdiSubmitCommandToHwQueue" and e["args"]["hHwQueue"] == hq]
        assert ids == ([1, 2, 3, 4] if i < 4 else [1, 2])
        # The GPU writes exactly those values, each when its buffer ends: client i's turn is the
        # i-th 2 ms after PT; the second round of the first four runs from 30 ms, one after another.
        start = 2 * i * MS + PT
        expected = [(start + MS, 1), (start + 2 * MS, 2)]
        if i < 4:
            late = LATE + 2 * i * MS
            expected += [(late + MS, 3), (late + 2 * MS, 4)]
        assert writes[os_q] == expected
        # The OS retires each submission when the fence reaches its id (the DPC costs nothing).
        retired = [(e["t"], e["fence"]) for e in events if e["event"] == "QueuePacketStop" and e["hwqueue"] == os_q]
        assert retired == expected
        assert system.contexts[i].hwqueues[0].progress.value == expected[-1][1]


def test_queues_are_mapped_and_unmapped_only_when_idle():
    system, events, _ = _run()
    handles = _handles(system, events)
    hq = [h for _, h, _ in handles]
    slot_events = [(e["t"], e["event"], e["queue"], e["slot"], e["rptr"], e["wptr"]) for e in events
                   if e["event"] in ("HwQueueMap", "HwQueueUnmap")]
    expected = []
    # The first eight queues take the free slots as their first doorbells come (one PT apart).
    for k in range(SLOTS):
        expected.append(((k + 1) * PT, "HwQueueMap", hq[k], k, 0, 2 * BUFFER))
    # Queues 8..11 wait; each time a queue drains it leaves its slot to the next in line.
    for k in range(4):
        t = 2 * (k + 1) * MS + PT
        expected.append((t, "HwQueueUnmap", hq[k], k, 2 * BUFFER, 2 * BUFFER))
        expected.append((t, "HwQueueMap", hq[SLOTS + k], k, 0, 2 * BUFFER))
    # At 30 ms clients 0..3 ring again on unmapped queues: each takes the slot of the queue idle
    # longest (queues 4..7, which ran before 8..11), and keeps its read pointer.
    for k in range(4):
        expected.append((LATE, "HwQueueUnmap", hq[4 + k], 4 + k, 2 * BUFFER, 2 * BUFFER))
        expected.append((LATE, "HwQueueMap", hq[k], 4 + k, 2 * BUFFER, 4 * BUFFER))
    assert slot_events == expected
    # Unmapped only when idle: its ring drained, and it is not on the engine.
    occupant: dict[int, int] = {}  # slot -> queue
    mapped: set[int] = set()
    for e in events:
        ev = e["event"]
        if ev == "HwContextState" and e["engine"] == 0:
            if e["state"] == "running":
                assert e["queue"] in mapped, f"queue {e['queue']} runs while unmapped at {e['t']}"
        elif ev == "HwQueueUnmap":
            # Idle: its ring drained (the log may name its context leaving the engine just after,
            # at the same instant) and not run again until it is mapped again (the check above).
            assert e["rptr"] == e["wptr"]
            occupant.pop(e["slot"])
            mapped.remove(e["queue"])
        elif ev == "HwQueueMap":
            assert e["slot"] not in occupant  # only into a free slot
            assert e["queue"] not in mapped
            occupant[e["slot"]] = e["queue"]
            mapped.add(e["queue"])
        assert len(mapped) <= SLOTS
    sched = system.gpu.hw_scheduler(0)
    assert (sched.slots, sched.maps, sched.unmaps) == (SLOTS, 16, 8)


def test_doorbells_on_unmapped_queues_are_kept_and_run_after_mapping():
    system, events, writes = _run()
    handles = _handles(system, events)
    submits = [e for e in events if e["event"] == "DdiCall" and e["name"] == "DxgkDdiSubmitCommandToHwQueue"]
    maps = [e for e in events if e["event"] == "HwQueueMap"]
    order = {id(e): n for n, e in enumerate(events)}
    # Queues 8..11 ring their doorbells before any slot is free: their first map comes after.
    for k in range(SLOTS, QUEUES):
        os_q, hq, hctx = handles[k]
        rung = [e for e in submits if e["args"]["hHwQueue"] == hq]
        assert [e["t"] for e in rung] == [(k + 1) * PT] * 2
        first_map = next(e for e in maps if e["queue"] == hq)
        assert first_map["t"] == 2 * (k - SLOTS + 1) * MS + PT
        assert order[id(first_map)] > order[id(rung[-1])]
        assert (first_map["rptr"], first_map["wptr"]) == (0, 2 * BUFFER)  # both buffers kept
        # They run after the mapping, one queue at a time: queue k's turn is the k-th.
        assert writes[os_q] == [(2 * k * MS + PT + MS, 1), (2 * (k + 1) * MS + PT, 2)]
    # Clients 0..3 ring again at 30 ms on queues unmapped since 2, 4, 6 and 8 ms.
    for k in range(4):
        os_q, hq, _ = handles[k]
        unmapped_at = next(e["t"] for e in events if e["event"] == "HwQueueUnmap" and e["queue"] == hq)
        assert unmapped_at == 2 * (k + 1) * MS + PT
        late = [e for e in submits if e["args"]["hHwQueue"] == hq and e["t"] == LATE]
        assert [e["args"]["HwQueueProgressFenceId"] for e in late] == [3, 4]
        remap = [e for e in maps if e["queue"] == hq][1]
        assert remap["t"] == LATE and order[id(remap)] > order[id(late[-1])]
        assert writes[os_q][2:] == [(LATE + 2 * k * MS + MS, 3), (LATE + 2 * (k + 1) * MS, 4)]


def test_every_queue_eventually_runs():
    system, events, _ = _run()
    handles = _handles(system, events)
    turns: dict[int, list[int]] = {}
    for e in events:
        if e["event"] == "HwContextState" and e["engine"] == 0 and e["state"] == "running":
            turns.setdefault(e["queue"], []).append(e["t"])
    for k, (_, hq, _) in enumerate(handles):
        expected = [2 * k * MS + PT] + ([LATE + 2 * k * MS] if k < 4 else [])
        assert turns[hq] == expected
    s = system.summary()
    assert [c["progress"] for c in s["wddm2"]["contexts"]] == [[4]] * 4 + [[2]] * 8
    (engine3d,) = [e for e in s["wddm2"]["engines"] if e["node"] == 0]
    assert (engine3d["hw_queue_slots"], engine3d["queue_maps"], engine3d["queue_unmaps"]) == (SLOTS, 16, 8)
    assert s["packets_completed"] == 2 * QUEUES + 2 * 4 + 12  # plus VidMm's 12 page-table buffers


def test_the_slot_count_is_validated(tmp_path):
    from click.testing import CliRunner

    from wddmsim.cli import main

    base = EXAMPLE.read_text()
    for bad, reason in (("0", "must be at least 1, got 0"), ("1025", "must be at most 1024, got 1025"),
                        ('"eight"', "expected an integer, got 'eight'")):
        path = tmp_path / "bad.toml"
        path.write_text(base.replace("hw_queue_slots = 8", f"hw_queue_slots = {bad}"))
        r = CliRunner().invoke(main, ["run", str(path)])
        assert r.exit_code == 2, r.output
        assert "bad.toml" in r.output and "adapter.nodes[0].hw_queue_slots" in r.output and reason in r.output
        assert "Traceback" not in r.output
    # The slots are the hardware scheduler's: refused with the software scheduler.
    path = tmp_path / "soft.toml"
    path.write_text(base.replace('scheduling = "hardware"', 'scheduling = "software"'))
    r = CliRunner().invoke(main, ["run", str(path)])
    assert r.exit_code == 2 and "hw_queue_slots are the hardware scheduler's" in r.output, r.output
