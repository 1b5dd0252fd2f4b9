"""Run reports: ``wddmsim run ... --report DIR`` and ``wddmsim report EVENTS.jsonl -o DIR``.

Both build the report from the event log alone, so a saved log gives the same folder as the run:

- ``summary.json`` and ``summary.md``: per node (packets that ran, busy % as the OS sees it:
  the union of DmaPacketStart..DmaPacketStop), per context (packets queued and retired, latency
  p50/p99/max from QueuePacketStart to QueuePacketStop), per VidPn source (presents, displayed,
  dropped, frame time), and the run's preemptions, timeouts, resets and bug check;
- ``node_utilisation.png``: each node's busy fraction per time bucket;
- ``context_latency.png``: each context's latency distribution (cumulative);
- ``frame_times.png``: time between display changes per VidPn source (when there are presents);
- ``queue_depths.png``: packets on each node's hardware queue over time.

Under hardware scheduling (no DmaPacket events; :mod:`wddmsim.trace.hwsched`) a node's busy time
is the union of its contexts' turns on its engine (``HwContextState`` ``running`` to the next state
change), as the GPU's scheduler logged them, and its packets are the buffers submitted to its
hardware queues (``QueuePacketStart``), as the run's own summary counts them; the queue depth is
the buffers with the driver (``DxgkDdiSubmitCommandToHwQueue`` returned success) not yet retired
(``QueuePacketStop``). Hardware engine resets (``HwEngineReset``) count among the incidents.

The plots are drawn by :mod:`wddmsim.report_plots` (matplotlib's Agg backend, no display needed).
"""

from __future__ import annotations

import json
import os
from collections import defaultdict

from .trace.hwsched import is_hardware, running_turns

MS = 1e6


def _pct(values: list[int], p: float):
    if not values:
        return None
    s = sorted(values)
    return s[min(len(s) - 1, max(0, round(p / 100 * len(s) + 0.5) - 1))]


def summarize(events: list[dict]) -> dict:
    """The report's numbers, from the event log."""
    start = next((e for e in events if e["event"] == "LogStart"), {})
    end = events[-1]["t"] if events else 0  # LogEnd's t when the log is whole
    nodes: dict[int, str] = {}
    names: dict[int, str] = {}
    for e in events:
        if e["event"] == "AdapterStart":
            nodes = {n["ordinal"]: n["name"] for n in e["nodes"]}
        elif e["event"] == "ContextCreate":
            names[e["context"]] = e["name"]
    running: dict = {}
    spans = defaultdict(list)
    queued: dict = {}
    lat = defaultdict(list)
    counts = defaultdict(lambda: [0, 0])
    displayed = defaultdict(list)
    presents = defaultdict(int)
    dropped = defaultdict(int)
    incidents = defaultdict(int)
    bugcheck = None
    for e in events:
        ev = e["event"]
        if ev == "DmaPacketStart":
            running[(e["node"], e["fence"])] = e["t"]
        elif ev == "DmaPacketStop":
            t0 = running.pop((e["node"], e["fence"]), None)
            if t0 is not None:
                spans[e["node"]].append((t0, e["t"]))
        elif ev == "QueuePacketStart":
            queued.setdefault((e["context"], e["seq"]), e["t"])
            counts[e["context"]][0] += 1
        elif ev == "QueuePacketStop":
            t0 = queued.pop((e["context"], e["seq"]), None)
            if t0 is not None and e["status"] == "Completed":
                lat[e["context"]].append(e["t"] - t0)
                counts[e["context"]][1] += 1
        elif ev == "Present":
            presents[e["source"]] += 1
        elif ev == "Displayed":
            displayed[e["source"]].append(e["displayed"])
        elif ev == "Dropped":
            dropped[e["source"]] += 1
        elif ev in ("PreemptRequest", "TdrDetected", "EngineReset", "AdapterReset", "PageFault", "DeviceError",
                    "HwEngineReset"):
            incidents[ev] += 1
        elif ev == "BugCheck":
            bugcheck = {k: e[k] for k in ("code", "name", "p1", "p2", "p3", "p4", "rule", "message")}
    for node, t0 in running.items():  # still running when the log ended
        spans[node[0]].append((t0, end))
    packets = {node: len(v) for node, v in spans.items()}
    if is_hardware(events):
        spans, packets = _turn_spans(events), _hw_buffers(events)
    node_rows = []
    for ordinal, name in sorted(nodes.items()):
        busy = _union(spans.get(ordinal, []))
        node_rows.append({"node": ordinal, "name": name, "packets": packets.get(ordinal, 0),
                          "busy_pct": round(100 * busy / end, 3) if end else 0.0})
    ctx_rows = []
    for ctx, name in names.items():
        v = lat.get(ctx, [])
        ctx_rows.append({"context": name, "queued": counts[ctx][0], "retired": counts[ctx][1],
                         "latency_min_ns": min(v) if v else None,
                         "latency_mean_ns": sum(v) // len(v) if v else None,
                         "latency_p50_ns": _pct(v, 50), "latency_p99_ns": _pct(v, 99),
                         "latency_max_ns": max(v) if v else None})
    src_rows = []
    for source in sorted(set(presents) | set(displayed)):
        shown = displayed.get(source, [])
        gaps = [b - a for a, b in zip(shown, shown[1:])]
        src_rows.append({"source": source, "presents": presents.get(source, 0), "displayed": len(shown),
                         "dropped": dropped.get(source, 0), "frame_time_p50_ns": _pct(gaps, 50),
                         "frame_time_p99_ns": _pct(gaps, 99)})
    return {"scenario": start.get("scenario", ""), "seed": start.get("seed", 0), "virtual_time_ns": end,
            "nodes": node_rows, "contexts": ctx_rows, "displays": src_rows, "incidents": dict(incidents),
            "bugcheck": bugcheck}


def _turn_spans(events: list[dict]) -> dict[int, list[tuple[int, int]]]:
    """Hardware scheduling: per node, ``(start, end)`` of its contexts' turns on its engine (the
    GPU's ``HwContextState`` log; a turn open at the end of the log ends there)."""
    spans = defaultdict(list)
    for turn in running_turns(events):
        spans[turn.engine].append((turn.start, turn.end))
    return spans


def _hw_buffers(events: list[dict]) -> dict[int, int]:
    """Hardware scheduling: per node, the buffers submitted to its hardware queues."""
    count: dict[int, int] = defaultdict(int)
    for e in events:
        if e["event"] == "QueuePacketStart" and e["hwqueue"]:
            count[e["node"]] += 1
    return count


def _union(spans: list[tuple[int, int]]) -> int:
    total, cur_s, cur_e = 0, None, None
    for s, e in sorted(spans):
        if cur_e is None or s > cur_e:
            if cur_e is not None:
                total += cur_e - cur_s
            cur_s, cur_e = s, e
        else:
            cur_e = max(cur_e, e)
    if cur_e is not None:
        total += cur_e - cur_s
    return total


def _ms(ns) -> str:
    return "-" if ns is None else f"{ns / MS:.3f} ms"


def markdown(s: dict) -> str:
    out = [f"# {s['scenario']} (seed {s['seed']})", "", f"Virtual time: {_ms(s['virtual_time_ns'])}.", "",
           "## Nodes", "", "| node | packets | busy % |", "|---|---|---|"]
    out += [f"| {n['name']} | {n['packets']} | {n['busy_pct']:.1f} |" for n in s["nodes"]]
    out += ["", "## Contexts (latency: queued to retired)", "",
            "| context | queued | retired | min | mean | p50 | p99 | max |", "|---|---|---|---|---|---|---|---|"]
    out += [f"| {c['context']} | {c['queued']} | {c['retired']} | {_ms(c['latency_min_ns'])} | "
            f"{_ms(c['latency_mean_ns'])} | {_ms(c['latency_p50_ns'])} | "
            f"{_ms(c['latency_p99_ns'])} | {_ms(c['latency_max_ns'])} |" for c in s["contexts"]]
    if s["displays"]:
        out += ["", "## Displays", "", "| source | presents | displayed | dropped | frame p50 | frame p99 |",
                "|---|---|---|---|---|---|"]
        out += [f"| {d['source']} | {d['presents']} | {d['displayed']} | {d['dropped']} | "
                f"{_ms(d['frame_time_p50_ns'])} | {_ms(d['frame_time_p99_ns'])} |" for d in s["displays"]]
    if s["incidents"]:
        out += ["", "## Incidents", ""] + [f"- {k}: {v}" for k, v in sorted(s["incidents"].items())]
    if s["bugcheck"]:
        b = s["bugcheck"]
        out += ["", "## Bug check", "", f"0x{b['code']:X} {b['name']} ({b['p1']:#x}, {b['p2']:#x}, {b['p3']:#x}, "
                f"{b['p4']:#x}): {b['message']}"]
    return "\n".join(out) + "\n"


def write_report(events: list[dict], out_dir: str) -> list[str]:
    """Write the report folder: the summary (JSON and Markdown), then the plots
    (:func:`wddmsim.report_plots.write_plots`); returns the files written."""
    from .report_plots import write_plots

    os.makedirs(out_dir, exist_ok=True)
    s = summarize(events)
    written = []

    def save(name: str, text: str) -> None:
        path = os.path.join(out_dir, name)
        with open(path, "w") as f:
            f.write(text)
        written.append(path)

    save("summary.json", json.dumps(s, indent=2) + "\n")
    save("summary.md", markdown(s))
    return written + write_plots(events, out_dir)
