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
from wddmsim.system import System
from wddmsim.trace import ListSink
from wddmsim.trace.chrome import chrome_trace

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
