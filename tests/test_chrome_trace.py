"""The timeline export (``--trace``, ``wddmsim trace``) follows the Trace Event Format's rules that
ui.perfetto.dev and chrome://tracing rely on, and shows what the event log holds: every DMA packet
that ran on its node's running row, queued ones stacked above, flows from queue packet to DMA
packet to interrupt, counters, vsync markers and recovery instants."""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from pathlib import Path

import pytest
from click.testing import CliRunner

from wddmsim.cli import main
from wddmsim.scenario import load_scenario
from wddmsim.runner.system import System
from wddmsim.trace import ListSink
from wddmsim.trace.chrome import chrome_trace
from wddmsim.umd import Work

ROOT = Path(__file__).parent.parent
PHASES = {"X", "i", "C", "M", "s", "t", "f"}
EPS = 1e-6  # µs: timestamps are floats, nanoseconds have three decimals


def events_of(name: str, until: int = 300_000_000) -> list[dict]:
    sc = load_scenario(str(ROOT / "examples" / f"{name}.toml"))
    trace = ListSink()
    System(sc, trace=trace).run(until=min(sc.duration, until))
    return trace.events


def validate(trace: dict) -> None:
    """The format's rules the viewers depend on."""
    json.dumps(trace)  # serialisable
    evs = trace["traceEvents"]
    named = {(e["pid"], e["tid"]) for e in evs if e["ph"] == "M" and e["name"] == "thread_name"}
    slices = defaultdict(list)
    for e in evs:
        assert e["ph"] in PHASES, e
        assert isinstance(e["name"], str) and e["name"] and isinstance(e["pid"], int), e
        if e["ph"] == "M":
            assert e["name"] in ("process_name", "thread_name", "thread_sort_index") and "args" in e
            continue
        assert isinstance(e["ts"], (int, float)) and e["ts"] >= 0, e
        if e["ph"] == "X":
            assert e["dur"] >= 0 and (e["pid"], e["tid"]) in named, e
            slices[(e["pid"], e["tid"])].append((e["ts"], e["ts"] + e["dur"]))
        elif e["ph"] == "i":
            assert e["s"] in ("g", "p", "t"), e
        elif e["ph"] == "C":
            assert e["args"] and all(isinstance(v, (int, float)) for v in e["args"].values()), e
    # Complete events on one thread nest or are disjoint (never partly overlap).
    for key, spans in slices.items():
        spans.sort(key=lambda s: (s[0], -s[1]))
        stack: list[float] = []
        for start, end in spans:
            while stack and stack[-1] <= start + EPS:
                stack.pop()
            assert not stack or end <= stack[-1] + EPS, (key, start, end, stack)
            stack.append(end)
    # Flows: one start and one finish per id, every step inside a slice of its thread.
    flows = defaultdict(list)
    for e in evs:
        if e["ph"] in ("s", "t", "f"):
            flows[e["id"]].append(e)
    for fid, steps in flows.items():
        phases = Counter(s["ph"] for s in steps)
        assert phases["s"] == 1 and phases["f"] == 1, (fid, phases)
        for s in steps:
            spans = slices[(s["pid"], s["tid"])]
            assert any(a - EPS <= s["ts"] <= b + EPS for a, b in spans), (fid, s)


@pytest.mark.parametrize("name", ["preemption", "flips", "faults", "paging"])
def test_trace_follows_the_format_and_holds_every_packet(name):
    events = events_of(name)
    trace = chrome_trace(events)
    validate(trace)
    evs = trace["traceEvents"]
    thread = {e["tid"]: e["args"]["name"] for e in evs if e["ph"] == "M" and e["name"] == "thread_name"}
    running = [e for e in evs if e["ph"] == "X" and e["cat"] == "dma" and thread[e["tid"]].endswith("running")]
    started = [e for e in events if e["event"] == "DmaPacketStart"]
    stopped = {(e["node"], e["fence"]) for e in events if e["event"] == "DmaPacketStop"}
    assert len(running) == sum(1 for e in started if (e["node"], e["fence"]) in stopped)
    counters = [e for e in evs if e["ph"] == "C"]
    assert len(counters) == sum(1 for e in events if e["event"] in ("DmaPacketQueued", "QueuePacketStart", "Doorbell"))
    rings = [e for e in counters if e["name"].endswith("ring occupancy")]
    assert rings and all(0 < e["args"]["bytes"] for e in rings)


def test_preemption_trace_has_stacked_queues_flows_and_instants():
    trace = chrome_trace(events_of("preemption"))
    evs = trace["traceEvents"]
    names = {e["args"]["name"] for e in evs if e["ph"] == "M" and e["name"] == "thread_name"}
    assert {"3D_0 running", "3D_0 queued 1", "Interrupts (DxgkCbNotifyInterrupt)"} <= names
    instants = Counter(e["name"] for e in evs if e["ph"] == "i")
    assert instants["PreemptRequest"] > 0
    # Every flow that starts on a queue ends on an interrupt or its DMA slice.
    assert Counter(e["ph"] for e in evs if e["ph"] in "stf")["s"] > 0


def test_flip_trace_marks_vsyncs_on_the_source_track():
    trace = chrome_trace(events_of("flips"))
    vsyncs = [e for e in trace["traceEvents"] if e["ph"] == "i" and e["cat"] == "vsync"]
    period60 = 1e6 / 60
    src0 = [e["ts"] for e in vsyncs if e["tid"] == 900_000]
    assert src0 and all(abs(ts / period60 - round(ts / period60)) < 1e-6 for ts in src0)


def test_cli_run_trace_and_trace_command_agree(tmp_path):
    runner = CliRunner()
    t1, log, t2 = tmp_path / "t.json", tmp_path / "e.jsonl", tmp_path / "t2.json"
    r = runner.invoke(main, ["run", str(ROOT / "examples" / "preemption.toml"), "--trace", str(t1), "--events", str(log)])
    assert r.exit_code == 0, r.output
    r = runner.invoke(main, ["trace", str(log), "-o", str(t2)])
    assert r.exit_code == 0 and "trace events from" in r.output
    assert t1.read_bytes() == t2.read_bytes()
    validate(json.loads(t1.read_text()))


def test_trace_command_refuses_what_is_not_an_event_log(tmp_path):
    bad = tmp_path / "x.jsonl"
    bad.write_text('{"t": 0, "event": "Other"}\n')
    r = CliRunner().invoke(main, ["trace", str(bad), "-o", str(tmp_path / "o.json")])
    assert r.exit_code == 2 and "not a wddmsim event log" in r.output and "Traceback" not in r.output
    r = CliRunner().invoke(main, ["trace", str(tmp_path / "missing.jsonl"), "-o", str(tmp_path / "o.json")])
    assert r.exit_code == 2 and "cannot read" in r.output


# -- hardware scheduling: engines from the GPU scheduler's log, buffers per hardware queue ---------
def hw_scenario():
    """Two processes on one 3D engine (hardware scheduling, zero CPU costs, preemption every
    100 us): ``a`` queues two 3 ms buffers, ``b`` one 1 ms buffer, all at 0. ``a`` gets the engine
    first, is preempted after its 2 ms quantum for ``b``, then runs to the end."""
    from test_hwqueue import script
    from wddm2util import adapter, scenario

    ad_spec = adapter("hw", node3d={"preemption": "interval", "preemption_interval": "100us"})
    return scenario(ad_spec, [script("a", (0, "3ms", 2)), script("b", (0, "1ms", 1))], duration="20ms")


def hw_trace():
    from wddm2util import run

    system, result, events = run(hw_scenario())
    return system, events, chrome_trace(events)


def slices_on(trace: dict, track: str) -> list[tuple]:
    """(name, start ns, end ns) of the complete events on the named track, in time order."""
    evs = trace["traceEvents"]
    tids = {e["tid"] for e in evs if e["ph"] == "M" and e["name"] == "thread_name" and e["args"]["name"] == track}
    return sorted((e["name"], round(e["ts"] * 1000), round((e["ts"] + e["dur"]) * 1000))
                  for e in evs if e["ph"] == "X" and e["tid"] in tids)


def test_hardware_example_trace_follows_the_format_and_holds_every_turn_and_buffer():
    events = events_of("hardware_scheduling")
    trace = chrome_trace(events)
    validate(trace)
    evs = trace["traceEvents"]
    thread = {e["tid"]: e["args"]["name"] for e in evs if e["ph"] == "M" and e["name"] == "thread_name"}
    names = set(thread.values())
    assert {"3D_0 running", "3D_0 ready 1", "COPY_0 running", "VidMm (paging) hw queue 1", "game/render hw queue 1",
            "trainer/compute hw queue 1", "indexer/background hw queue 1",
            "game/render hw queue 1 progress fence"} <= names
    handles = {str(e["context"]) for e in events if e["event"] == "HwQueueCreate"}
    assert not [name for name in names if any(h in name for h in handles)]  # VidMm's context is named, not numbered
    # One running slice per HwContextState "running" (each lasts to the context's next change).
    running = [e for e in evs if e["ph"] == "X" and thread[e["tid"]].endswith(" running")]
    assert len(running) == sum(1 for e in events if e["event"] == "HwContextState" and e["state"] == "running")
    contexts = {e["name"] for e in events if e["event"] == "ContextCreate"}
    assert {e["name"] for e in running} == contexts | {"VidMm (paging)"}  # every context ran, by name
    # Every buffer on its hardware queue's rows (retired, or still queued when the log ends: to the
    # end, status Pending), every progress fence signal on its row.
    everything = [e for e in evs if e["ph"] == "X" and e["cat"] == "queue"]
    queue = [e for e in everything if e["args"]["status"] != "Pending"]
    assert len(queue) == sum(1 for e in events if e["event"] == "QueuePacketStop")
    stopped = {(e["context"], e["seq"]) for e in events if e["event"] == "QueuePacketStop"}
    pending = {(e["context"], e["seq"]) for e in events if e["event"] == "QueuePacketStart"} - stopped
    assert len(everything) - len(queue) == len(pending) > 0
    assert all(e["ts"] + e["dur"] == events[-1]["t"] / 1000 for e in everything if e["args"]["status"] == "Pending")
    assert all(e["args"]["hwqueue"] and " hw queue " in thread[e["tid"]] for e in everything)
    signals = [e for e in evs if e["ph"] == "X" and e["cat"] == "fence"]
    assert len(signals) == sum(1 for e in events if e["event"] == "FenceSignal")
    # No DMA packets under hardware scheduling; a flow per retired buffer.
    assert not [e for e in evs if e.get("cat") == "dma"]
    assert sum(1 for e in evs if e["ph"] == "s") == len(queue)
    counters = Counter(e["name"] for e in evs if e["ph"] == "C")
    # One software-queue sample per buffer queued on the game's hardware queue: a render and a
    # present buffer for each of its 15 frames (the last two still running when the run ends).
    (game,) = [e["context"] for e in events if e["event"] == "ContextCreate" and e["name"] == "game/render"]
    queued = [e for e in events if e["event"] == "QueuePacketStart" and e["context"] == game]
    retired = [e for e in queue if thread[e["tid"]].startswith("game/render hw queue 1")]
    assert counters["3D_0 ready contexts"] > 0 and counters["game/render hw queue 1 software queue"] == len(queued)
    assert (len(queued), len(retired)) == (30, 28)


def test_hardware_trace_running_and_ready_rows_are_the_scheduler_turns():
    system, events, trace = hw_trace()
    validate(trace)
    a, b = system.contexts
    r0 = next(e["t"] for e in events if e["event"] == "HwContextState" and e["context"] == a.hDriver)
    ms = 1_000_000
    # a runs its 2 ms quantum, b (ready since its page tables were written) runs its 1 ms buffer, a
    # finishes: 1 ms of its first buffer and 3 ms of its second.
    assert slices_on(trace, "3D_0 running") == [("a/c", r0, r0 + 2 * ms), ("a/c", r0 + 3 * ms, r0 + 7 * ms),
                                                ("b/c", r0 + 2 * ms, r0 + 3 * ms)]
    b_ready = next(e["t"] for e in events if e["event"] == "HwContextState" and e["context"] == b.hDriver)
    assert slices_on(trace, "3D_0 ready 1") == [("a/c", r0 + 2 * ms, r0 + 3 * ms), ("b/c", b_ready, r0 + 2 * ms)]
    (turn,) = [e for e in trace["traceEvents"] if e["ph"] == "X" and e["name"] == "b/c" and e["cat"] == "hwcontext"
               and e["args"]["state"] == "running"]
    (q,) = b.hwqueues
    assert turn["args"] == {"context": b.handle, "hHwContext": b.hDriver, "state": "running", "then": "idle",
                            "hwqueue": q.handle, "hHwQueue": q.hDriver, "queue": "b/c hw queue 1"}
    # Each hardware queue's buffers, stacked; the progress fence signals under them.
    assert slices_on(trace, "a/c hw queue 1") == [("#1", 0, r0 + 4 * ms)]
    assert slices_on(trace, "a/c hw queue 1 row 1") == [("#2", 0, r0 + 7 * ms)]
    assert slices_on(trace, "a/c hw queue 1 progress fence") == [("signal 1", r0 + 4 * ms, r0 + 4 * ms + 1),
                                                                 ("signal 2", r0 + 7 * ms, r0 + 7 * ms + 1)]
    assert slices_on(trace, "VidMm (paging) hw queue 1")[0][0] == "#1"
    counts = [(round(e["ts"] * 1000), e["args"]["contexts"]) for e in trace["traceEvents"]
              if e["ph"] == "C" and e["name"] == "3D_0 ready contexts"]
    assert counts == [(r0, 0), (b_ready, 1), (r0 + 3 * ms, 0)]


def flows(trace: dict) -> dict[int, list[tuple]]:
    """Flow id -> its steps (phase, track name, ts in ns), in order."""
    evs = trace["traceEvents"]
    thread = {e["tid"]: e["args"]["name"] for e in evs if e["ph"] == "M" and e["name"] == "thread_name"}
    out = defaultdict(list)
    for e in evs:
        if e["ph"] in ("s", "t", "f"):
            out[e["id"]].append((e["ph"], thread[e["tid"]], round(e["ts"] * 1000)))
    return out


def test_hardware_trace_flows_go_through_the_turns_a_buffer_certainly_ran_in():
    system, events, trace = hw_trace()
    a, b = system.contexts
    r0 = next(e["t"] for e in events if e["event"] == "HwContextState" and e["context"] == a.hDriver)
    ms = 1_000_000
    by_queue = {steps[0][1]: steps for steps in flows(trace).values()}
    # a's first buffer was the oldest when a's queue first got the engine: it ran in that turn.
    assert by_queue["a/c hw queue 1"] == [("s", "a/c hw queue 1", 0), ("t", "3D_0 running", r0),
                                          ("f", "a/c hw queue 1 progress fence", r0 + 4 * ms)]
    # a's second buffer shared both turns with the first: the log cannot say where it began.
    assert by_queue["a/c hw queue 1 row 1"] == [("s", "a/c hw queue 1 row 1", 0),
                                                ("f", "a/c hw queue 1 progress fence", r0 + 7 * ms)]
    # b's only buffer ran in b's only turn.
    assert by_queue["b/c hw queue 1"] == [("s", "b/c hw queue 1", 0), ("t", "3D_0 running", r0 + 2 * ms),
                                          ("f", "b/c hw queue 1 progress fence", r0 + 3 * ms)]


def test_hardware_trace_of_an_engine_reset():
    """A buffer that hangs: the reset ends the turn, aborts the buffers, drives the progress fence
    to its maximum (where their flows end) and shows as an instant."""
    from test_hwqueue import hang_scenario
    from wddm2util import run

    system, result, events = run(hang_scenario())
    trace = chrome_trace(events)
    validate(trace)
    (reset,) = [e for e in events if e["event"] == "HwEngineReset"]
    t = reset["t"]
    instants = [e for e in trace["traceEvents"] if e["ph"] == "i" and e["name"] == "HwEngineReset"]
    assert [(round(e["ts"] * 1000), e["args"]["contexts"]) for e in instants] == [(t, [system.contexts[0].handle])]
    turns = [s for s in slices_on(trace, "3D_0 running") if s[0] == "a/c"]
    assert len(turns) == 1 and turns[0][2] == t
    assert slices_on(trace, "a/c hw queue 1 progress fence")[-1] == (f"signal {2**64 - 1}", t, t + 1)
    behind = ("a/c hw queue 1 row 1", "a/c hw queue 1 row 2")  # the hung buffer and the one after it
    aborted = [steps for steps in flows(trace).values() if steps[0][1] in behind]
    assert [steps[-1] for steps in aborted] == [("f", "a/c hw queue 1 progress fence", t)] * 2


def test_cli_trace_of_a_hardware_log_matches_the_run(tmp_path):
    runner = CliRunner()
    t1, log, t2 = tmp_path / "t.json", tmp_path / "e.jsonl", tmp_path / "t2.json"
    example = str(ROOT / "examples" / "hardware_scheduling.toml")
    assert runner.invoke(main, ["run", example, "--trace", str(t1), "--events", str(log)]).exit_code == 0
    assert runner.invoke(main, ["trace", str(log), "-o", str(t2)]).exit_code == 0
    assert t1.read_bytes() == t2.read_bytes()


def test_hardware_trace_of_a_context_with_two_queues():
    """Queue 1's buffer waits on a fence the CPU signals at 10 ms; queue 2's 2 ms buffer runs
    meanwhile. The context's turn on queue 1 ends at once (stalled) and it moves to queue 2
    (``then`` ``running``); queue 1 runs when the fence is signalled, shown as its counter."""
    from test_hwqueue import idle
    from wddm2util import MS, adapter, scenario

    system = System(scenario(adapter("hw"), [idle("a", hw_queues=2)], duration="30ms"), trace=ListSink())
    kmt, (a,) = system.kmt, system.contexts
    fence = kmt.CreateSynchronizationObject(a.device, 0)

    def work():
        yield from system.runtime.submit(a, (Work(MS),), wait=(fence, 1), queue=a.hwqueues[0])
        yield from system.runtime.submit(a, (Work(2 * MS),), queue=a.hwqueues[1])
        yield 10 * MS
        kmt.SignalSynchronizationObjectFromCpu([fence], [1])

    system.sim.process(work())
    system.run()
    events = system.trace.events
    trace = chrome_trace(events)
    validate(trace)
    r0 = next(e["t"] for e in events if e["event"] == "HwContextState" and e["context"] == a.hDriver)
    turns = [(round(e["ts"] * 1000), round((e["ts"] + e["dur"]) * 1000), e["args"]["queue"], e["args"]["then"])
             for e in trace["traceEvents"] if e["ph"] == "X" and e["name"] == "a/c" and e["args"]["state"] == "running"]
    assert turns == [(r0, r0, "a/c hw queue 1", "running"), (r0, r0 + 2 * MS, "a/c hw queue 2", "idle"),
                     (10 * MS, 11 * MS, "a/c hw queue 1", "idle")]
    by_queue = {steps[0][1]: steps for steps in flows(trace).values()}
    # Queue 1's buffer was alone in its queue in the turn that ran it; the turn of no length in
    # which it stalled on its wait is not drawn as one it ran in.
    assert by_queue["a/c hw queue 1"] == [("s", "a/c hw queue 1", 0), ("t", "3D_0 running", 10 * MS),
                                          ("f", "a/c hw queue 1 progress fence", 11 * MS)]
    assert by_queue["a/c hw queue 2"][1] == ("t", "3D_0 running", r0)
    counters = [(e["ts"], e["args"]) for e in trace["traceEvents"] if e["name"] == f"monitored fence {fence.handle}"]
    assert counters == [(10_000.0, {"value": 1})]


def test_a_small_log_gives_exactly_these_trace_events():
    """Every kind of track of a software-scheduled log, to the letter: a packet that ran and one
    queued behind it (still running when the log ends, so it has no running slice), a queue packet
    still pending at the end, the interrupt that ended the first packet and the flow to it, a
    displayed frame, the counters, an instant, and the tracks of a node and a context that did
    nothing."""

    def ev(t, event, **fields):
        return {"t": t, "event": event, **fields}

    irq = {"InterruptType": "DXGK_INTERRUPT_DMA_COMPLETED", "DmaCompleted": {"SubmissionFenceId": 1, "NodeOrdinal": 0}}
    packet = {"context": 5, "node": 0, "kind": "Render"}
    events = [
        ev(0, "LogStart", format="wddmsim-events", version=1, scenario="tiny", seed=7),
        ev(0, "AdapterStart", ddi_version="wddm2_0", multi_engine_aware=True,
           nodes=[{"ordinal": 0, "name": "3D_0"}, {"ordinal": 1, "name": "COPY_0"}], segments=[]),
        ev(0, "ContextCreate", context=5, process=1, device=1, node=0, name="game", priority=2, hContext=1),
        ev(0, "ContextCreate", context=6, process=1, device=1, node=1, name="copier", priority=2, hContext=2),
        ev(1000, "QueuePacketStart", **packet, process=1, seq=1, queued=1, hwqueue=0, progress_id=0),
        ev(1000, "QueuePacketStart", **packet, process=1, seq=2, queued=2, hwqueue=0, progress_id=0),
        ev(2000, "DmaPacketQueued", **packet, fence=1, seq=1, depth=1),
        ev(2000, "DmaPacketStart", **packet, fence=1, seq=1, resubmission=False),
        ev(2500, "DmaPacketQueued", **packet, fence=2, seq=2, depth=2),
        ev(2600, "Doorbell", engine=0, wptr=64, rptr=0, ring_used=64, ring_size=4096),
        ev(5000, "DmaPacketStop", **packet, fence=1, seq=1, status="Completed"),
        ev(5000, "Callback", name="DxgkCbNotifyInterrupt", irql="DIRQL", args=irq),
        ev(5000, "DmaPacketStart", **packet, fence=2, seq=2, resubmission=False),
        ev(6000, "QueuePacketStop", **packet, fence=1, seq=1, status="Completed", hwqueue=0),
        ev(7000, "Present", context=5, process=1, seq=1, mode="flip", flip=1, interval=1, source=0, width=64,
           height=64, cpu_start=7000),
        ev(16000, "Displayed", source=0, context=5, seq=1, fence=3, displayed=16000, latency=9000),
        ev(17000, "PageFault", node=0, fence=2, flags=0, address=4096, hwqueue=0),
        ev(20000, "LogEnd", reason="duration"),
    ]
    trace = chrome_trace(events)
    validate(trace)
    slices = [e for e in trace["traceEvents"] if e["ph"] != "M"]
    assert slices == [
        {"name": "Render game #1", "cat": "dma", "ph": "X", "pid": 1, "tid": 1000, "ts": 2.0, "dur": 3.0,
         "args": {"fence": 1, "context": 5, "seq": 1, "status": "Completed"}},
        {"name": "Render game #2", "cat": "dma", "ph": "X", "pid": 1, "tid": 1001, "ts": 2.5, "dur": 2.5,
         "args": {"fence": 2, "context": 5, "seq": 2, "status": "Queued"}},
        {"name": "#1", "cat": "queue", "ph": "X", "pid": 1, "tid": 100000, "ts": 1.0, "dur": 5.0,
         "args": {"fence": 1, "status": "Completed", "node": 0}},
        {"name": "#2", "cat": "queue", "ph": "X", "pid": 1, "tid": 100001, "ts": 1.0, "dur": 19.0,
         "args": {"fence": 0, "status": "Pending", "node": 0}},
        {"name": "DMA_COMPLETED", "cat": "interrupt", "ph": "X", "pid": 1, "tid": 1, "ts": 5.0, "dur": 0.001,
         "args": irq},
        {"name": "packet", "cat": "flow", "ph": "s", "id": 1, "pid": 1, "tid": 100000, "ts": 1.0},
        {"name": "packet", "cat": "flow", "ph": "t", "id": 1, "pid": 1, "tid": 1000, "ts": 2.0, "bp": "e"},
        {"name": "packet", "cat": "flow", "ph": "f", "id": 1, "pid": 1, "tid": 1, "ts": 5.0, "bp": "e"},
        {"name": "game #1", "cat": "present", "ph": "X", "pid": 1, "tid": 900000, "ts": 7.0, "dur": 9.0,
         "args": {"result": "Displayed"}},
        {"name": "vsync (display change)", "cat": "vsync", "ph": "i", "s": "t", "pid": 1, "tid": 900000, "ts": 16.0},
        {"name": "3D_0 hardware queue depth", "ph": "C", "pid": 1, "ts": 2.0, "args": {"packets": 1}},
        {"name": "3D_0 hardware queue depth", "ph": "C", "pid": 1, "ts": 2.5, "args": {"packets": 2}},
        {"name": "3D_0 ring occupancy", "ph": "C", "pid": 1, "ts": 2.6, "args": {"bytes": 64}},
        {"name": "game software queue", "ph": "C", "pid": 1, "ts": 1.0, "args": {"packets": 1}},
        {"name": "game software queue", "ph": "C", "pid": 1, "ts": 1.0, "args": {"packets": 2}},
        {"name": "PageFault", "cat": "recovery", "ph": "i", "s": "g", "pid": 1, "tid": 0, "ts": 17.0,
         "args": {"node": 0, "fence": 2, "flags": 0, "address": 4096, "hwqueue": 0}},
    ]
    meta = [(e["name"], e["tid"], e["args"]) for e in trace["traceEvents"] if e["ph"] == "M"]
    tracks = [(1, "Interrupts (DxgkCbNotifyInterrupt)"), (1000, "3D_0 running"), (1001, "3D_0 queued 1"),
              (1100, "COPY_0 running"), (100000, "game queue"), (100001, "game queue 1"),
              (100100, "copier queue"), (900000, "VidPn source 0 flip queue")]
    assert meta == [("process_name", 0, {"name": "Adapter: tiny (seed 7)"})] + [
        m for tid, name in tracks
        for m in (("thread_name", tid, {"name": name}), ("thread_sort_index", tid, {"sort_index": tid}))]
    assert (trace["displayTimeUnit"], trace["otherData"]) == (
        "ns", {"generator": "wddmsim", "format": "Chrome trace event JSON; ts in microseconds"})
