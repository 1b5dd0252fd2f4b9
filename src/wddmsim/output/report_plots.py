"""The report folder's plots (``wddmsim run --report DIR``, ``wddmsim report``), from the event log
alone, as :mod:`wddmsim.output.report` reads it (docs/events.md; docs/timeline.md, "Reports"):

- ``node_utilisation.png``: one row per node of the adapter, idle ones included: the node's busy
  share of each time bucket (a round width giving 50 to 100 buckets over the run), busy meaning a
  DMA packet between its ``DmaPacketStart`` and ``DmaPacketStop`` (the OS's view, as GPUView
  draws it) or, under hardware scheduling, a hardware context's turn on the engine
  (:func:`wddmsim.trace.hwcontexts.running_turns`);
- ``context_latency.png``: each context's packet latency (``QueuePacketStart`` to its
  ``QueuePacketStop`` ``Completed``) as a cumulative distribution on a logarithmic time axis, so a
  few packets that waited seconds (a timeout) do not squash the rest against the left edge;
- ``frame_times.png`` (only when something presented): one row per VidPn source, the time between
  the source's display changes (distinct ``Displayed`` instants: two presents shown at the same
  vsync are one change), dashed lines at whole multiples of the source's refresh period and the
  presents that were dropped marked on the floor;
- ``queue_depths.png``: one row per node, idle ones included, of the packets the node holds: DMA
  packets from ``DmaPacketQueued`` to ``DmaPacketStop`` with the node's hardware queue size
  (``AdapterStart`` ``hw_queue_depth``) dashed, or under hardware scheduling the buffers the driver
  holds (``DxgkDdiSubmitCommandToHwQueue`` succeeded, not yet ``QueuePacketStop``). A busy node's
  depth changes thousands of times a second, so it is not drawn step by step (a solid band) but
  per time bucket (the utilisation's width): the time-weighted mean depth of each bucket, filled,
  and the most held at once in it, dotted; beside it, on the same whole-number depth axis, the
  share of the run spent at each depth (a time-weighted histogram, :func:`depth_times`).

The log does not carry the refresh rates: vsyncs fall on whole multiples of a source's period
from time 0 (docs/scenarios.md, ``displays``), so the period is the greatest common divisor of the
instants known to be vsyncs (``VSync`` events, and ``Displayed`` of every present except a flip
with ``FlipInterval`` 0, which is shown when its packet completes). A source whose frames only
appear every other vsync gives twice its period; lines are then drawn at the even multiples only,
still at true vsync distances. A period under 1 ms (above the 1000 Hz a scenario allows) is taken
as unknown.

A sweep's runs give one more figure, the policy comparison, made from the sweep's rows rather
than an event log: :mod:`wddmsim.output.report_compare`.

Figures are built as :class:`matplotlib.figure.Figure` objects (no pyplot state, Agg to draw the
PNG), so tests can read their axes; :func:`write_plots` saves them.
"""

from __future__ import annotations

import math
import os
import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, LogLocator, MaxNLocator, NullFormatter

from ..trace.hwcontexts import HwNames, is_hardware, running_turns
from ..trace.output import WriteFailed

MS = 1e6
#: the shortest refresh period a scenario allows (1000 Hz, docs/scenarios.md)
MIN_PERIOD_NS = 1_000_000
#: refresh-period multiples drawn on a frame-time row at most
MAX_REFRESH_LINES = 8
#: latencies below this are drawn at it on the log axis (a packet retired at once)
LATENCY_FLOOR_MS = 1e-3
WIDTH = 10.0  # inches; rows are ROW_HEIGHT each, plus room for titles and labels
_ROW_HEIGHT = 1.35
STYLES = ("-", "--", "-.", ":")
#: a queue's depths up to which every share of the run is labelled, under 1 % too
MAX_LABELLED_DEPTHS = 6


@dataclass(frozen=True)
class RunFacts:
    """What every plot needs from the log: its end, the adapter's nodes and contexts."""

    end: int  # the last event's time (LogEnd's when the log is whole), ns
    nodes: dict[int, str]  # node ordinal -> name, from AdapterStart
    queue_sizes: dict[int, int]  # node ordinal -> hw_queue_depth, from AdapterStart
    contexts: dict[int, str]  # context handle -> name (see run_facts)
    hardware: bool  # hardware-scheduled (no DmaPacket events)


def run_facts(events: list[dict]) -> RunFacts:
    """The log's end, nodes, hardware queue sizes and context names: ``process/context`` from
    ContextCreate; VidMm's system contexts, which have none, by what their first packet is and
    where it runs (``VidMm paging on COPY_0``; under hardware scheduling ``VidMm (paging)``, as
    :class:`~wddmsim.trace.hwcontexts.HwNames` calls it)."""
    nodes: dict[int, str] = {}
    sizes: dict[int, int] = {}
    contexts: dict[int, str] = {}
    unnamed: dict[int, tuple[str, int]] = {}
    for e in events:
        if e["event"] == "AdapterStart":
            nodes = {n["ordinal"]: n["name"] for n in e["nodes"]}
            sizes = {n["ordinal"]: n["hw_queue_depth"] for n in e["nodes"] if "hw_queue_depth" in n}
        elif e["event"] == "ContextCreate":
            contexts[e["context"]] = e["name"]
        elif e["event"] == "QueuePacketStart" and e["context"] not in contexts:
            unnamed.setdefault(e["context"], (e["kind"], e["node"]))
    hardware = is_hardware(events)
    hw_names = HwNames(events) if hardware else None
    for ctx, (kind, node) in unnamed.items():
        if ctx not in contexts:
            contexts[ctx] = hw_names.context_name(ctx) if hw_names else f"VidMm {kind} on {nodes.get(node, node)}"
    return RunFacts(events[-1]["t"] if events else 0, dict(sorted(nodes.items())), sizes, contexts, hardware)


# -- the numbers drawn ------------------------------------------------------------------------------
def busy_spans(events: list[dict], hardware: bool | None = None) -> dict[int, list[tuple[int, int]]]:
    """Per node, the ``(start, end)`` of its busy intervals, merged where they overlap: DMA packets
    running, or under hardware scheduling the contexts' turns. One still open at the end of the
    log ends there."""
    if hardware is None:
        hardware = is_hardware(events)
    spans: dict[int, list[tuple[int, int]]] = defaultdict(list)
    if hardware:
        for turn in running_turns(events):
            spans[turn.engine].append((turn.start, turn.end))
    else:
        running: dict[tuple[int, int], int] = {}
        for e in events:
            if e["event"] == "DmaPacketStart":
                running[(e["node"], e["fence"])] = e["t"]
            elif e["event"] == "DmaPacketStop" and (e["node"], e["fence"]) in running:
                spans[e["node"]].append((running.pop((e["node"], e["fence"])), e["t"]))
        end = events[-1]["t"] if events else 0
        for (node, _), t0 in running.items():
            spans[node].append((t0, end))
    return {node: _merge(v) for node, v in spans.items()}


def _merge(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for a, b in sorted(spans):
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


def bucket_width(end: int) -> int:
    """A round bucket width (1, 2 or 5 times a power of ten ns) that cuts ``end`` into 50 to 100
    buckets (fewer for a run shorter than 50 ns)."""
    target = max(end / 100, 1)
    power = 10 ** math.floor(math.log10(target))
    for step in (1, 2, 5, 10):
        if step * power >= target:
            return step * power
    raise AssertionError("unreachable: 10 * power >= target")


def utilisation(spans: list[tuple[int, int]], end: int, width: int) -> list[float]:
    """The busy % of each ``width`` bucket of ``[0, end]`` (the last one may be shorter, and is
    measured against its own length)."""
    n = max(1, -(-end // width))
    busy = [0] * n
    for a, b in spans:
        while a < b:
            i = a // width
            if i >= n:
                break
            edge = min(b, (i + 1) * width)
            busy[i] += edge - a
            a = edge
    return [100 * v / (min(end, (i + 1) * width) - i * width) if end > i * width else 0.0 for i, v in enumerate(busy)]


def latencies(events: list[dict]) -> dict[int, list[int]]:
    """Per context (in the order of their first packet), the latencies (ns) of its completed
    packets, QueuePacketStart to QueuePacketStop, in retirement order."""
    queued: dict[tuple[int, int], int] = {}
    out: dict[int, list[int]] = defaultdict(list)
    for e in events:
        if e["event"] == "QueuePacketStart":
            queued.setdefault((e["context"], e["seq"]), e["t"])
        elif e["event"] == "QueuePacketStop":
            t0 = queued.pop((e["context"], e["seq"]), None)
            if t0 is not None and e["status"] == "Completed":
                out[e["context"]].append(e["t"] - t0)
    return dict(out)


def display_changes(events: list[dict]) -> dict[int, list[int]]:
    """Per VidPn source (in source order), the distinct instants (ns) it began to show a new
    frame; several presents shown at one vsync (a composed frame) are one change."""
    out: dict[int, list[int]] = defaultdict(list)
    for e in events:
        if e["event"] == "Displayed":
            ts = out[e["source"]]
            if not ts or ts[-1] != e["displayed"]:
                ts.append(e["displayed"])
    return {s: sorted(set(v)) for s, v in sorted(out.items())}


def refresh_periods(events: list[dict]) -> dict[int, int | None]:
    """Per VidPn source that presented or showed a frame (``Present``, ``Displayed``), its refresh
    period in ns as the log shows it (the module's docstring says how), or None where the log
    cannot tell."""
    immediate = {(e["context"], e["seq"]) for e in events
                 if e["event"] == "Present" and e.get("flip") and e.get("interval") == 0}
    gcd: dict[int, int] = {}
    seen: set[int] = set()
    for e in events:
        ev = e["event"]
        if ev in ("Present", "Displayed"):
            seen.add(e["source"])
        if ev == "VSync" or (ev == "Displayed" and (e["context"], e["seq"]) not in immediate):
            gcd[e["source"]] = math.gcd(gcd.get(e["source"], 0), e["t"])
    return {s: gcd[s] if gcd.get(s, 0) >= MIN_PERIOD_NS else None for s in sorted(seen)}


def dropped_presents(events: list[dict]) -> dict[int, list[int]]:
    """Per VidPn source, when each dropped present was replaced (``Dropped``), ns."""
    out: dict[int, list[int]] = defaultdict(list)
    for e in events:
        if e["event"] == "Dropped":
            out[e["source"]].append(e["t"])
    return dict(out)


def queue_levels(events: list[dict], hardware: bool | None = None) -> dict[int, list[tuple[int, int]]]:
    """Per node, ``(t, packets held)`` after every change (DMA packets queued and not stopped; under
    hardware scheduling, the buffers with the driver), starting from ``(0, 0)``."""
    if hardware is None:
        hardware = is_hardware(events)
    if hardware:
        changes = hw_depths(events)
    else:
        changes = [(e["t"], e["node"], 1 if e["event"] == "DmaPacketQueued" else -1) for e in events
                   if e["event"] in ("DmaPacketQueued", "DmaPacketStop")]
    out: dict[int, list[tuple[int, int]]] = {}
    for t, node, change in changes:
        steps = out.setdefault(node, [(0, 0)])
        level = steps[-1][1] + change
        if steps[-1][0] == t:
            steps[-1] = (t, level)
        else:
            steps.append((t, level))
    return out


def hw_depths(events: list[dict]) -> list[tuple[int, int, int]]:
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


def time_mean(steps: list[tuple[int, int]], end: int) -> float:
    """The time-weighted mean of a step series over ``[0, end]``."""
    if end <= 0:
        return 0.0
    total = 0
    for (t, level), (t_next, _) in zip(steps, steps[1:] + [(end, 0)]):
        total += level * (min(t_next, end) - min(t, end))
    return total / end


def _segments(steps: list[tuple[int, int]], end: int):
    """The step series as ``(start, stop, level)`` over ``[0, end]``, the spans of no length left out."""
    for (t, level), (t_next, _) in zip(steps, steps[1:] + [(end, 0)]):
        a, b = min(t, end), min(t_next, end)
        if b > a:
            yield a, b, level


def depth_times(steps: list[tuple[int, int]], end: int) -> list[int]:
    """The ns of ``[0, end]`` a step series (:func:`queue_levels`' per node) spent at each depth,
    indexed by depth from 0 to the deepest it reached for some time: a time-weighted histogram."""
    times: list[int] = [0]
    for a, b, level in _segments(steps, end):
        if level >= len(times):
            times += [0] * (level + 1 - len(times))
        times[level] += b - a
    return times


def bucket_depths(steps: list[tuple[int, int]], end: int, width: int) -> tuple[list[float], list[int]]:
    """Per ``width`` bucket of ``[0, end]`` (the last one may be shorter, and is measured against
    its own length, as :func:`utilisation`'s): the step series' time-weighted mean, and the most it
    held for some time in the bucket."""
    n = max(1, -(-end // width))
    area = [0] * n
    most = [0] * n
    for a, b, level in _segments(steps, end):
        while a < b:
            i = a // width
            edge = min(b, (i + 1) * width)
            area[i] += level * (edge - a)
            most[i] = max(most[i], level)
            a = edge
    means = [v / (min(end, (i + 1) * width) - i * width) if end > i * width else 0.0 for i, v in enumerate(area)]
    return means, most


# -- the figures ------------------------------------------------------------------------------------
def _rows(n: int, title: str, row_height: float = _ROW_HEIGHT) -> tuple[Figure, list]:
    fig = Figure(figsize=(WIDTH, 1.1 + row_height * max(n, 1)), dpi=100, layout="constrained")
    axes = fig.subplots(max(n, 1), 1, sharex=True, squeeze=False)[:, 0]
    fig.suptitle(title)
    return fig, list(axes)


def _row_titles(ax, left: str, right: str) -> None:
    ax.set_title(left, loc="left", fontsize=9, fontweight="bold")
    ax.set_title(right, loc="right", fontsize=9)


def _time_axis(axes: list, end: int) -> None:
    axes[-1].set_xlim(0, max(end, 1) / MS)
    axes[-1].set_xlabel("virtual time (ms)")


def utilisation_figure(events: list[dict]) -> Figure:
    """``node_utilisation.png``: one row per node (idle ones too), its busy % per time bucket."""
    facts = run_facts(events)
    end = max(facts.end, 1)
    width = bucket_width(end)
    spans = busy_spans(events, facts.hardware)
    what = "hardware contexts running" if facts.hardware else "DMA packets running"
    fig, axes = _rows(len(facts.nodes), f"Node utilisation ({what}): busy share of each {width / MS:g} ms")
    for ax, (node, name) in zip(axes, facts.nodes.items()):
        node_spans = spans.get(node, [])
        values = utilisation(node_spans, end, width)
        edges = [min(i * width, end) / MS for i in range(len(values) + 1)]
        ax.stairs(values, edges, fill=True, alpha=0.35, color="C0")
        ax.stairs(values, edges, color="C0", linewidth=1)
        busy = sum(b - a for a, b in node_spans)
        _row_titles(ax, name, f"{100 * busy / end:.1f} % busy over the run" if busy else "idle for the whole run")
        ax.set_ylim(0, 108)  # room above 100 % so a busy bucket's edge is not the frame's
        ax.set_yticks([0, 50, 100])
        ax.set_ylabel("busy (%)")
        ax.grid(alpha=0.3)
    if not facts.nodes:
        _row_titles(axes[0], "no nodes in the log", "")
    _time_axis(axes, end)
    return fig


def log_ms_axis(ax, low_ms: float, high_ms: float) -> None:
    ax.set_xscale("log")
    decades = math.log10(max(high_ms, low_ms * 10) / low_ms)
    ax.xaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0) if decades <= 2.5 else (1.0,)))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlim(low_ms / 1.5, high_ms * 1.5)


def latency_figure(events: list[dict]) -> Figure:
    """``context_latency.png``: each context's latency distribution, cumulative, on a log axis."""
    facts = run_facts(events)
    lat = latencies(events)
    fig = Figure(figsize=(WIDTH, 5.2), dpi=100, layout="constrained")
    ax = fig.add_subplot()
    fig.suptitle("Packet latency per context, submitted to completed (QueuePacketStart to QueuePacketStop)")
    drawn = [(ctx, sorted(max(v / MS, LATENCY_FLOOR_MS) for v in values)) for ctx, values in lat.items() if values]
    for i, (ctx, values) in enumerate(drawn):
        n = len(values)
        p50, p99 = (values[min(n - 1, max(0, round(p * n + 0.5) - 1))] for p in (0.5, 0.99))
        ax.step([values[0]] + values, [0.0] + [(k + 1) / n for k in range(n)], where="post",
                linestyle=STYLES[i % len(STYLES)], linewidth=1.6,
                label=f"{facts.contexts.get(ctx, str(ctx))}: {counted(n, 'packet')}, p50 {p50:.3g} ms, p99 {p99:.3g} ms")
    if drawn:
        log_ms_axis(ax, min(v[0] for _, v in drawn), max(v[-1] for _, v in drawn))
        for frac, name in ((0.5, "p50"), (0.99, "p99")):
            ax.axhline(frac, color="grey", linewidth=0.8, linestyle=":")
            ax.text(1.005, frac, name, transform=ax.get_yaxis_transform(), va="center", fontsize=8, color="grey")
        fig.legend(loc="outside lower center", ncols=min(2, len(drawn)), fontsize="small")
    else:
        ax.set_xscale("log")
        ax.text(0.5, 0.5, "no packet was retired", transform=ax.transAxes, ha="center", va="center")
    idle = [name for ctx, name in facts.contexts.items() if not lat.get(ctx)]
    if idle:
        ax.set_title("no packet retired: " + ", ".join(idle), loc="left", fontsize=8)
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("latency (ms, log scale)")
    ax.set_ylabel("fraction of the context's packets")
    ax.grid(alpha=0.3)
    ax.grid(alpha=0.1, which="minor")
    return fig


def frame_figure(events: list[dict]) -> Figure | None:
    """``frame_times.png``: one row per VidPn source, time between its display changes, with its
    refresh period's multiples dashed and its dropped presents marked; None without presents."""
    periods = refresh_periods(events)
    if not periods:
        return None
    facts = run_facts(events)
    changes = display_changes(events)
    drops = dropped_presents(events)
    fig, axes = _rows(len(periods), "Time between display changes per VidPn source", 2.2)
    for ax, (source, period) in zip(axes, periods.items()):
        ts = changes.get(source, [])
        gaps = [(b - a) / MS for a, b in zip(ts, ts[1:])]
        if gaps:
            ax.plot([t / MS for t in ts[1:]], gaps, marker=".", markersize=5, linewidth=0.8)
        top = max(gaps + [period / MS if period else 0.0, 1.0])
        if period:
            for k in range(1, min(MAX_REFRESH_LINES, math.ceil(top * MS / period - 1e-9)) + 1):
                ax.axhline(k * period / MS, color="tab:green", linewidth=0.9, linestyle="--", alpha=0.7)
                ax.text(1.005, k * period / MS, f"{k}x", transform=ax.get_yaxis_transform(), va="center",
                        fontsize=7, color="tab:green")
            refresh = f"refresh {1e9 / period:.4g} Hz ({period / MS:.3f} ms, dashed: whole refreshes)"
        else:
            refresh = "refresh period unknown (no vsync-timed frame in the log)"
        dropped = drops.get(source, [])
        if dropped:
            ax.plot([t / MS for t in dropped], [0.0] * len(dropped), linestyle="none", marker="x", color="tab:red",
                    markersize=6, clip_on=False, zorder=5)
        shown = f"VidPn source {source}: {counted(len(ts), 'display change')}"
        _row_titles(ax, shown + (f", {counted(len(dropped), 'present')} dropped (x)" if dropped else ""), refresh)
        ax.set_ylim(0, top * 1.15)
        ax.set_ylabel("frame time (ms)")
        ax.grid(alpha=0.3)
    _time_axis(axes, facts.end)
    return fig


def counted(n: int, thing: str) -> str:
    return f"{n} {thing}" + ("" if n == 1 else "s")


def queue_figure(events: list[dict]) -> Figure:
    """``queue_depths.png``: one row per node (idle ones too). On the left, over time, each bucket's
    time-weighted mean depth (filled) and the most the node held at once in it (dotted), with the
    queue size dashed; on the right, sharing the depth axis, the share of the run the node spent
    at each depth (:func:`depth_times`). A busy node's depth changes thousands of times a second,
    which drawn step by step is a solid band; the buckets and the shares stay readable."""
    facts = run_facts(events)
    end = max(facts.end, 1)
    width = bucket_width(end)
    levels = queue_levels(events, facts.hardware)
    what = ("buffers with the driver: submitted to a hardware queue, not yet retired" if facts.hardware
            else "DMA packets submitted to the node, not yet completed")
    n = max(len(facts.nodes), 1)
    fig = Figure(figsize=(WIDTH, 1.5 + _ROW_HEIGHT * n), dpi=100, layout="constrained")
    grid = fig.subplots(n, 2, sharex="col", sharey="row", squeeze=False, width_ratios=[5, 1])
    fig.suptitle(f"Hardware queue depth ({what})\nleft: the mean of each {width / MS:g} ms (filled) and the most "
                 f"at once (dotted); right: the share of the run at each depth")
    for (ax, share_ax), (node, name) in zip(grid, facts.nodes.items()):
        steps = levels.get(node, [(0, 0)])
        means, most = bucket_depths(steps, end, width)
        edges = [min(i * width, end) / MS for i in range(len(means) + 1)]
        ax.stairs(means, edges, fill=True, alpha=0.35, color="C1")
        ax.stairs(means, edges, color="C1", linewidth=1)
        ax.stairs(most, edges, color="C1", linewidth=0.9, linestyle=":")
        times = depth_times(steps, end)
        top = len(times) - 1
        size = None if facts.hardware else facts.queue_sizes.get(node)
        if size:
            ax.axhline(size, color="grey", linestyle="--", linewidth=0.9)
            ax.text(0.995, size, f"queue size {size}", transform=ax.get_yaxis_transform(), ha="right",
                    va="bottom", fontsize=7, color="grey")
            top = max(top, size)
        mean = time_mean(steps, end)
        right = (f"at most {len(times) - 1}, {mean:.2f} on average" if mean >= 0.005 else
                 f"at most {len(times) - 1}, under 0.005 on average") if len(times) > 1 else "no packets"
        _row_titles(ax, name, right)
        shares = [100 * t / end for t in times]
        share_ax.barh(range(len(shares)), shares, height=0.6, color="C1", alpha=0.6)
        for depth, pct in enumerate(shares):
            # every bar is labelled on a shallow queue; on a deep one only those of 1 % or more
            if pct >= 1 or (pct and len(shares) <= MAX_LABELLED_DEPTHS):
                share_ax.annotate(f"{pct:.0f} %" if pct >= 1 else "<1 %", (pct, depth), xytext=(2, 0),
                                  textcoords="offset points", va="center", fontsize=7)
        share_ax.set_xlim(0, 130)  # room for the label of a bar at 100 %
        share_ax.set_xticks([0, 50, 100])
        share_ax.set_title("share of the run", fontsize=8, loc="left")
        share_ax.grid(alpha=0.3, axis="x")
        ax.set_ylim(-0.45, top + 0.6)  # below 0: room for the bar of depth 0
        ax.yaxis.set_major_locator(MaxNLocator(integer=True, min_n_ticks=1))
        ax.set_ylabel("packets")
        ax.grid(alpha=0.3)
    if not facts.nodes:
        _row_titles(grid[0][0], "no nodes in the log", "")
    grid[-1][0].set_xlim(0, end / MS)
    grid[-1][0].set_xlabel("virtual time (ms)")
    grid[-1][1].set_xlabel("% of the run")
    return fig


#: Each figure's file, its heading and one line saying what it shows, in the order they are
#: written; ``summary.md`` embeds the figures written under these headings (:mod:`wddmsim.output.report`).
FIGURES: dict[str, tuple[str, str]] = {
    "node_utilisation.png": ("Node utilisation", "Each node's busy share of each time bucket: DMA packets running "
                             "(the OS's view), or under hardware scheduling its hardware contexts' turns on the "
                             "engine."),
    "context_latency.png": ("Packet latency per context", "Each context's latency, submitted to completed, as a "
                            "cumulative distribution on a logarithmic time axis."),
    "frame_times.png": ("Frame times", "Each VidPn source's time between display changes, with whole refresh "
                        "periods dashed and dropped presents marked x."),
    "queue_depths.png": ("Hardware queue depth", "Each node's packets held, per time bucket (the mean filled, the "
                         "most at once dotted), and the share of the run it spent at each depth."),
}


def plot_figures(events: list[dict]) -> list[tuple[str, Figure]]:
    """The report's figures, each with its file name (:data:`FIGURES`' order), the frame times
    only when something presented."""
    figures = [("node_utilisation.png", utilisation_figure(events)), ("context_latency.png", latency_figure(events)),
               ("frame_times.png", frame_figure(events)), ("queue_depths.png", queue_figure(events))]
    return [(name, fig) for name, fig in figures if fig is not None]


def save_figures(figures: list[tuple[str, Figure]], out_dir: str, failed: list | None = None) -> list[str]:
    """Save :func:`plot_figures`' figures into ``out_dir`` (which exists); returns the paths
    written. A file that cannot be written: with ``failed`` (a list), its name and error are
    appended there and the next one is written; without, a
    :class:`~wddmsim.trace.output.WriteFailed` naming it is raised."""
    written = []
    for name, fig in figures:
        path = os.path.join(out_dir, name)
        try:
            fig.savefig(path)
        except OSError as e:
            if failed is None:
                raise WriteFailed(path, e) from None
            failed.append((name, e))
            continue
        written.append(path)
    return written


def write_plots(events: list[dict], out_dir: str, failed: list | None = None) -> list[str]:
    """Write the report's PNGs into ``out_dir`` (which exists); returns the paths written, in the
    order the module's docstring lists them. A file that cannot be written: with ``failed`` (a
    list), its name and error are appended there and the next plot is written; without, a
    :class:`~wddmsim.trace.output.WriteFailed` naming it is raised."""
    return save_figures(plot_figures(events), out_dir, failed)
