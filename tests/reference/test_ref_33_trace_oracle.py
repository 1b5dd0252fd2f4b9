"""Reference scenario 33: the trace oracle round trip (PresentMon's GpuTrace, GPUView).

Two workloads under the software scheduler, with the default CPU costs: two clients sharing the
3D engine (a renderer oversubscribing it with 5 ms buffers beside a 1 ms / 10 ms interactive
client, the two-client set of reference scenario 20), and a game flipping at vsync on a 60 Hz
display, presenting every 10 ms and then every 20 ms (reference scenario 24) beside a compute
client. Each run writes its event log and its Chrome JSON (``--events``, ``--trace``). Pass:

- a GpuTrace-style reconstruction of each process's GPU busy time from the log's DmaPacket events
  (written here, independently of the model) matches the GPU's own account in the run summary
  (``processes[].gpu_busy_ns``) within 0.1 %, and the OS's view (``os_busy_ns``) exactly, even
  with 1 % of the DmaPacketStart / DmaPacketStop events dropped on purpose (chosen by a fixed
  rule, so the test is deterministic);
- the Chrome JSON has a track per engine and per context, and a flow arrow per packet from its
  submission (the context's queue slice) through its DMA packet to the interrupt that completed it.

The reconstruction works as GpuTrace does: per node the packets the driver was given
(DmaPacketQueued) run in order, each from the later of its own DmaPacketStart and its
predecessor's completion; a completion (DmaPacketStop, or failing that the DMA_COMPLETED or
DMA_PREEMPTED interrupt, which reports the last completed fence of the node: cumulative) ends
every packet up to its fence; a packet preempted off the hardware ends at the interrupt that took
it back. A missing DmaPacketStart is recovered as the later of the packet's DmaPacketQueued and
its predecessor's completion (when the OS starts it), a missing DmaPacketStop from the interrupt.
Docs: docs/events.md, docs/timeline.md (the trace), "Per-process GPU time" in docs/scheduling.md.
"""

from __future__ import annotations

import json
from collections import deque
from pathlib import Path

import pytest
from click.testing import CliRunner

from wddmsim.cli import main

DROP_EVERY = 100  # 1 % of the DmaPacketStart / DmaPacketStop events
DROP_PHASE = 37


def _two_clients(path: Path) -> Path:
    path.write_text('''name = "ref33_two_clients"
seed = 20
duration = "1s"

[[process]]
name = "renderer"

[[process.context]]
name = "frames"
node = "3D"
workload = { kind = "compute_batch", batch = 4, work = "5ms", interval = "1us" }

[[process]]
name = "ui"

[[process.context]]
name = "input"
node = "3D"
workload = { kind = "compute_batch", batch = 1, work = "1ms", interval = "9ms" }
''')
    return path


def _flips(path: Path) -> Path:
    # The game presents every 10 ms (100 fps) for 25 frames, then every 20 ms; each frame flips
    # at the next vsync (SyncInterval 1, 60 Hz), so the engine waits for vsyncs inside its buffers.
    path.write_text('''name = "ref33_flips"
seed = 24
duration = "1s"

[adapter]
displays = [60.0]

[[process]]
name = "game"
priority = "above_normal"

[[process.context]]
name = "fast"
node = "3D"
workload = { kind = "frame_loop", fps = 100, work = "4ms", present_mode = "flip", sync_interval = 1, count = 25 }

[[process.context]]
name = "slow"
node = "3D"
workload = { kind = "frame_loop", start = "500ms", fps = 50, work = "4ms", present_mode = "flip", sync_interval = 1 }

[[process]]
name = "trainer"

[[process.context]]
name = "compute"
node = "3D"
workload = { kind = "compute_batch", batch = 2, work = "2ms", interval = "3ms" }
''')
    return path


def _run(scenario: Path, tmp_path: Path):
    events, trace = tmp_path / f"{scenario.stem}.jsonl", tmp_path / f"{scenario.stem}.json"
    r = CliRunner().invoke(main, ["run", str(scenario), "--json", "--events", str(events), "--trace", str(trace)])
    assert r.exit_code == 0, r.output
    summary = json.loads(r.stdout)
    log = [json.loads(line) for line in events.read_text().splitlines()]
    return summary, log, json.loads(trace.read_text())


def _drop(log: list[dict]) -> tuple[list[dict], int]:
    """The log without every 100th DmaPacketStart / DmaPacketStop (by their order in the log)."""
    out, n, dropped = [], 0, 0
    for e in log:
        if e["event"] in ("DmaPacketStart", "DmaPacketStop"):
            n += 1
            if n % DROP_EVERY == DROP_PHASE:
                dropped += 1
                continue
        out.append(e)
    return out, dropped


def gputrace_busy(log: list[dict]) -> dict[str, int]:
    """Per process name, ns its packets ran at the bottom of their node's hardware queue,
    reconstructed from DmaPacket events (see the module doc)."""
    end_t = log[-1]["t"]
    pid_name = {e["process"]: e["name"] for e in log if e["event"] == "ProcessCreate"}
    ctx_pid = {e["context"]: e["process"] for e in log if e["event"] == "ContextCreate"}
    busy: dict[str, int] = {}
    nodes: dict[int, deque] = {}  # node -> [fence, context, queued_t, start_t or None]
    free_at: dict[int, int] = {}  # node -> when its last packet left the hardware

    def charge(ctx, ns):
        name = pid_name.get(ctx_pid.get(ctx), "System")
        busy[name] = busy.get(name, 0) + ns

    def finish(node: int, fence: int, t: int, taken_back: bool = False) -> None:
        """Every packet up to ``fence`` completes at ``t``; with ``taken_back`` the rest leave too."""
        q = nodes.get(node)
        while q and (q[0][0] <= fence or taken_back):
            f, ctx, queued, start = q.popleft()
            begin = max(start if start is not None else queued, free_at.get(node, 0))
            if begin < t:
                charge(ctx, t - begin)
                free_at[node] = t
            else:
                free_at[node] = max(free_at.get(node, 0), t)

    for e in log:
        ev, t = e["event"], e["t"]
        if ev == "DmaPacketQueued":
            nodes.setdefault(e["node"], deque()).append([e["fence"], e["context"], t, None])
        elif ev == "DmaPacketStart":
            for p in nodes.get(e["node"], ()):
                if p[0] == e["fence"]:
                    p[3] = t
        elif ev == "DmaPacketStop":
            finish(e["node"], e["fence"], t, taken_back=e["status"] != "Completed")
        elif ev == "Callback" and e["name"] == "DxgkCbNotifyInterrupt":
            a = e["args"]
            if "DmaCompleted" in a:
                finish(a["DmaCompleted"]["NodeOrdinal"], a["DmaCompleted"]["SubmissionFenceId"], t)
            elif "DmaPreempted" in a:
                p = a["DmaPreempted"]
                finish(p["NodeOrdinal"], p["LastCompletedFenceId"], t)
                finish(p["NodeOrdinal"], -1, t, taken_back=True)
    for node, q in nodes.items():  # still on the hardware when the run ended
        if q:
            f, ctx, queued, start = q[0]
            begin = max(start if start is not None else queued, free_at.get(node, 0))
            charge(ctx, max(0, end_t - begin))
    return busy


@pytest.mark.parametrize("build", [_two_clients, _flips], ids=["two_clients", "flips_at_vsync"])
def test_gputrace_reconstruction_matches_the_gpu_within_a_thousandth(build, tmp_path):
    summary, log, _ = _run(build(tmp_path / "s.toml"), tmp_path)
    assert summary["scheduling"] == "software" and not summary["violations"]
    truth = {p["process"]: p["gpu_busy_ns"] for p in summary["processes"]}
    os_view = {p["process"]: p["os_busy_ns"] for p in summary["processes"]}
    thinned, dropped = _drop(log)
    starts = sum(e["event"] == "DmaPacketStart" for e in log)
    stops = sum(e["event"] == "DmaPacketStop" for e in log)
    assert dropped == (starts + stops + DROP_EVERY - DROP_PHASE) // DROP_EVERY and dropped > 0
    for events in (log, thinned):
        rebuilt = gputrace_busy(events)
        for name, ns in truth.items():
            got = rebuilt.get(name, 0)
            assert ns > 50_000_000  # every process ran a real share of the second
            assert abs(got - ns) <= ns / 1000, (name, got, ns)
            assert got == os_view[name]


@pytest.mark.parametrize("build", [_two_clients, _flips], ids=["two_clients", "flips_at_vsync"])
def test_chrome_json_has_a_track_per_engine_and_context_and_a_flow_per_packet(build, tmp_path):
    _, log, trace = _run(build(tmp_path / "s.toml"), tmp_path)
    evs = trace["traceEvents"]
    thread = {e["tid"]: e["args"]["name"] for e in evs if e["ph"] == "M" and e["name"] == "thread_name"}
    tid_of = {name: tid for tid, name in thread.items()}
    assert len(tid_of) == len(thread)  # track names are unique
    # One track per engine (node) and per context, one that ran nothing included.
    nodes = next(e for e in log if e["event"] == "AdapterStart")["nodes"]
    assert len(nodes) == 3  # 3D, Compute and Copy: only 3D runs anything here
    for n in nodes:
        assert f"{n['name']} running" in tid_of
    contexts = [e for e in log if e["event"] == "ContextCreate"]
    assert len(contexts) == 2 if build is _two_clients else 3
    for c in contexts:
        assert f"{c['name']} queue" in tid_of
    # Complete events on one track nest or are disjoint (what a viewer needs to draw them).
    slices: dict[int, list] = {}
    for e in evs:
        if e["ph"] == "X":
            assert e["dur"] >= 0 and e["tid"] in thread
            slices.setdefault(e["tid"], []).append((e["ts"], e["ts"] + e["dur"]))
    for spans in slices.values():
        spans.sort(key=lambda s: (s[0], -s[1]))
        stack: list[float] = []
        for a, b in spans:
            while stack and stack[-1] <= a + 1e-6:
                stack.pop()
            assert not stack or b <= stack[-1] + 1e-6
            stack.append(b)
    # A flow per DMA packet the GPU ran: from its submission (its QueuePacketStart, on its context's
    # queue track) through its DMA slice (DmaPacketStart, on the node's running track) to the
    # interrupt that ended it (DMA_COMPLETED, or DMA_PREEMPTED for a packet taken back).
    flows: dict[int, dict] = {}
    for e in evs:
        if e["ph"] in ("s", "t", "f"):
            assert e["ph"] not in flows.setdefault(e["id"], {})
            flows[e["id"]][e["ph"]] = e
    ctx_name = {c["context"]: c["name"] for c in contexts}
    node_name = {n["ordinal"]: n["name"] for n in nodes}
    submitted = {}
    for e in log:
        if e["event"] == "QueuePacketStart":
            submitted.setdefault((e["context"], e["seq"]), e["t"])
    starts = {(e["node"], e["fence"]): e for e in log if e["event"] == "DmaPacketStart"}
    interrupts = {e["t"] for e in log if e["event"] == "Callback" and e["name"] == "DxgkCbNotifyInterrupt"
                  and ("DmaCompleted" in e["args"] or "DmaPreempted" in e["args"])}
    ran = [(starts[(e["node"], e["fence"])], e) for e in log
           if e["event"] == "DmaPacketStop" and (e["node"], e["fence"]) in starts]
    assert len(ran) > 150 and len(flows) == len(ran)
    expected = sorted(
        (round(submitted[(start["context"], start["seq"])] / 1000, 3), round(start["t"] / 1000, 3),
         round(stop["t"] / 1000, 3), ctx_name[start["context"]], node_name[start["node"]])
        for start, stop in ran)
    assert all(stop["t"] in interrupts for _, stop in ran)
    got = []
    for f in flows.values():
        s, t, end = f["s"], f["t"], f["f"]
        assert " queue" in thread[s["tid"]] and thread[t["tid"]].endswith(" running")
        assert thread[end["tid"]] == "Interrupts (DxgkCbNotifyInterrupt)"
        # The interrupt track spreads interrupts of one instant by 1 ns: compare to the microsecond.
        got.append((round(s["ts"], 3), round(t["ts"], 3), round(end["ts"], 3),
                    thread[s["tid"]].rsplit(" queue", 1)[0], thread[t["tid"]].removesuffix(" running")))
    got.sort()
    assert [g[:2] + g[3:] for g in got] == [x[:2] + x[3:] for x in expected]
    assert all(abs(g[2] - x[2]) < 0.01 for g, x in zip(got, expected))
