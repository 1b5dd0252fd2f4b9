"""Run reports: ``wddmsim run ... --report DIR`` and ``wddmsim report EVENTS.jsonl -o DIR``.

Both build the report from the event log alone, so a saved log gives the same folder as the run:

- ``summary.json`` and ``summary.md``: the run's summary (:mod:`wddmsim.summary`), the one object
  ``wddmsim run`` prints and ``--json`` gives, read from the log's last line (``LogEnd``); the
  Markdown holds the terminal's tables with every column (:func:`wddmsim.summaryview.markdown`),
  its incidents (resets, live dumps, devices in error, verifier reports) and the bug check;
- ``node_utilisation.png``: each node's busy fraction per time bucket;
- ``context_latency.png``: each context's latency distribution (cumulative);
- ``frame_times.png``: time between display changes per VidPn source (when there are presents);
- ``queue_depths.png``: packets on each node's hardware queue over time.

Under hardware scheduling (no DmaPacket events; :mod:`wddmsim.trace.hwsched`) the utilisation plot
draws a node's busy time as the union of its contexts' turns on its engine (``HwContextState``
``running`` to the next state change), as the GPU's scheduler logged them; the queue depth is
the buffers with the driver (``DxgkDdiSubmitCommandToHwQueue`` returned success) not yet retired
(``QueuePacketStop``).

Plots use matplotlib's Agg backend (no display needed).
"""

from __future__ import annotations

import json
import os
from collections import defaultdict

from .summary import from_log
from .summaryview import markdown
from .trace.hwsched import HwNames, is_hardware, running_turns

__all__ = ["markdown", "summarize", "write_report"]

MS = 1e6


def summarize(events: list[dict]) -> dict:
    """The report's numbers: the run summary the event log carries (:func:`wddmsim.summary.from_log`;
    :class:`wddmsim.summary.NoSummary` when it has none)."""
    return from_log(events)


def _turn_spans(events: list[dict]) -> dict[int, list[tuple[int, int]]]:
    """Hardware scheduling: per node, ``(start, end)`` of its contexts' turns on its engine (the
    GPU's ``HwContextState`` log; a turn open at the end of the log ends there)."""
    spans = defaultdict(list)
    for turn in running_turns(events):
        spans[turn.engine].append((turn.start, turn.end))
    return spans


def _hw_depths(events: list[dict]) -> list[tuple[int, int, int]]:
    """Hardware scheduling: ``(t, node, change)`` of the buffers with the driver: +1 when
    DxgkDdiSubmitCommandToHwQueue returned success, -1 when that buffer's QueuePacketStop came."""
    names = HwNames(events)
    held: dict[tuple[int, int], int] = {}  # (OS hardware queue, progress id) -> node
    out = []
    for e in events:
        if e["event"] == "DdiCall" and e["name"] == "DxgkDdiSubmitCommandToHwQueue" and e["status"] == "STATUS_SUCCESS":
            hwq = names.queue_of_hw.get(e["args"]["hHwQueue"])
            if hwq in names.queues:
                held[(hwq, e["args"]["HwQueueProgressFenceId"])] = node = names.queues[hwq]["node"]
                out.append((e["t"], node, 1))
        elif e["event"] == "QueuePacketStop" and (e["hwqueue"], e["fence"]) in held:
            out.append((e["t"], held.pop((e["hwqueue"], e["fence"])), -1))
    return out


def write_report(events: list[dict], out_dir: str) -> list[str]:
    """Write the report folder; returns the files written."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

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
    end = max(s["virtual_time_ns"], 1)
    nodes = {n["node"]: n["name"] for n in s["nodes"]}
    names = {}
    for e in events:
        if e["event"] == "ContextCreate":
            names[e["context"]] = e["name"]

    def figure(name: str, title: str, xlabel: str, ylabel: str, draw) -> None:
        fig, ax = plt.subplots(figsize=(9, 4.5), dpi=100)
        drew = draw(ax)
        ax.set_title(title)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        if drew:
            ax.legend(loc="best", fontsize="small")
        ax.grid(alpha=0.3)
        fig.tight_layout()
        path = os.path.join(out_dir, name)
        fig.savefig(path)
        plt.close(fig)
        written.append(path)

    # Node utilisation per bucket.
    buckets = 50
    width = end / buckets
    spans = defaultdict(list)
    running = {}
    for e in events:
        if e["event"] == "DmaPacketStart":
            running[(e["node"], e["fence"])] = e["t"]
        elif e["event"] == "DmaPacketStop" and (e["node"], e["fence"]) in running:
            spans[e["node"]].append((running.pop((e["node"], e["fence"])), e["t"]))
    hardware = is_hardware(events)
    if hardware:
        spans = _turn_spans(events)

    def utilisation(ax):
        xs = [(i + 0.5) * width / MS for i in range(buckets)]
        for node, name in nodes.items():
            busy = [0.0] * buckets
            for a, b in spans.get(node, []):
                i = int(a // width)
                while a < b and i < buckets:
                    edge = (i + 1) * width
                    busy[i] += min(b, edge) - a
                    a = min(b, edge)
                    i += 1
            ax.plot(xs, [100 * v / width for v in busy], label=name)
        ax.set_ylim(0, 105)
        return bool(nodes)

    what = "hardware contexts running" if hardware else "DMA packets running"
    figure("node_utilisation.png", f"Node utilisation ({what})", "virtual time (ms)", "busy (%)", utilisation)

    def latency(ax):
        queued, lat = {}, defaultdict(list)
        for e in events:
            if e["event"] == "QueuePacketStart":
                queued.setdefault((e["context"], e["seq"]), e["t"])
            elif e["event"] == "QueuePacketStop" and e["status"] == "Completed":
                t0 = queued.pop((e["context"], e["seq"]), None)
                if t0 is not None:
                    lat[e["context"]].append((e["t"] - t0) / MS)
        for ctx, values in lat.items():
            values.sort()
            n = len(values)
            ax.step(values, [(i + 1) / n for i in range(n)], where="post", label=names.get(ctx, str(ctx)))
        return bool(lat)

    figure("context_latency.png", "Packet latency per context (queued to retired), cumulative",
           "latency (ms)", "fraction of packets", latency)

    if any(d["presents"] for d in s["displays"]):
        def frames(ax):
            shown = defaultdict(list)
            for e in events:
                if e["event"] == "Displayed":
                    shown[e["source"]].append(e["displayed"])
            for source, ts in shown.items():
                ax.plot([t / MS for t in ts[1:]], [(b - a) / MS for a, b in zip(ts, ts[1:])], marker=".",
                        label=f"VidPn source {source}")
            return bool(shown)

        figure("frame_times.png", "Time between display changes per VidPn source", "virtual time (ms)",
               "frame time (ms)", frames)

    def depths(ax):
        level = defaultdict(int)
        series = defaultdict(lambda: ([0.0], [0]))
        if hardware:
            changes = _hw_depths(events)
        else:
            changes = [(e["t"], e["node"], 1 if e["event"] == "DmaPacketQueued" else -1) for e in events
                       if e["event"] in ("DmaPacketQueued", "DmaPacketStop")]
        for t, node, change in changes:
            level[node] += change
            xs, ys = series[node]
            xs.append(t / MS)
            ys.append(level[node])
        for node, (xs, ys) in series.items():
            ax.step(xs, ys, where="post", label=nodes.get(node, str(node)))
        return bool(series)

    figure("queue_depths.png", "Hardware queue depth (packets submitted, not yet completed)", "virtual time (ms)",
           "packets", depths)
    return written
