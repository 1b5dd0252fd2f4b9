"""The event log as a timeline: Chrome trace event JSON that ui.perfetto.dev and chrome://tracing
open.

Layout (one process, the adapter):

- per node (every node of the adapter, one that ran nothing included), a hardware-queue track group
  drawn as GPUView draws it: row 0 holds the packet the GPU runs (``DmaPacketStart`` to
  ``DmaPacketStop``), the rows above hold the packets queued behind it (``DmaPacketQueued`` to
  ``DmaPacketStart``), each in the lowest row free at the time;
- per context (every context created), its CPU queue (``QueuePacketStart`` to ``QueuePacketStop``,
  or to the end of the log for a packet still queued then, status ``Pending``), stacked the same way;
- per VidPn source, its flip queue (present call to ``Displayed``), stacked, with a vsync marker at
  each display change and a ``SetVidPnSourceAddress`` marker at each MMIO flip the OS programmed;
- per overlay plane a window was put on, its frames (present call to ``Displayed`` or
  ``Dropped``), stacked, with a marker at each multiplane-overlay flip call (:mod:`.planelanes`);
- an interrupt track: one short slice per ``DxgkCbNotifyInterrupt``;
- flow arrows from each queue packet to its DMA packet to the interrupt that ended it (DMA_COMPLETED,
  or DMA_PREEMPTED for a packet taken back);
- counters: each node's hardware queue depth, each engine's ring occupancy (bytes, at each
  doorbell) and each context's software queue length;
- instant events for preemption requests, page faults, timeouts, resets, device errors, live dumps
  and bug checks.

Under hardware scheduling (a log with ``HwQueueCreate``; no DmaPacket events) the GPU's scheduler
says what runs (:mod:`.hwcontexts`):

- per engine, row 0 holds the hardware context the GPU runs, one slice per turn (``HwContextState``
  ``running`` to its next state change or queue switch) named by its ``process/context`` (VidMm's
  kernel context: ``VidMm (paging)``), its hardware queue in the args; the rows above hold the
  contexts ready for the engine, stacked;
- per hardware queue, its buffers (``QueuePacketStart`` to ``QueuePacketStop``) stacked, and a row
  of its progress fence's signals (1 ns slices);
- a flow per buffer from its queue slice through the turns it certainly ran in
  (:func:`.hwcontexts.certain_turns`) to the progress fence signal that retired it;
- counters: each engine's ready contexts, each hardware queue's software queue length, the value
  of each other monitored fence; ``HwEngineReset`` instants.

Times: the format counts microseconds; the model's nanoseconds become fractional microseconds.

Spec: the Trace Event Format (phases X, i, C, M, s/t/f), which Perfetto's UI and chrome://tracing open;
the tracks follow GPUView's hardware-queue and CPU-queue views.
"""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Iterable

from .hwcontexts import HwNames, Interval, buffer_lives, certain_turns, is_hardware, state_intervals
from .output import WriteFailed, open_text
from .planelanes import overlay_keys, plane_tracks

PID = 1
_INSTANTS = {"PreemptRequest", "PageFault", "TdrDetected", "EngineReset", "AdapterReset", "DeviceError",
             "LiveDump", "BugCheck", "ContextDestroy", "VerifierViolation", "HwEngineReset"}
INTERRUPT_TID = 1
_NODE_BASE = 1000  # node n: tids 1000 + 100 n + row
_CONTEXT_BASE = 100_000  # context k (in order of creation): tids 100000 + 100 k + row
_HWQUEUE_BASE = 200_000  # hardware queue q (in order of creation): tids 200000 + 100 q + row
_FENCE_ROW = 99  # the row of a hardware queue's progress fence signals
_SOURCE_BASE = 900_000  # VidPn source s: 900000 + 100 s + row
_TICK = 0.001  # µs: the length of an interrupt slice (1 ns)


def _us(t: int) -> float:
    return t / 1000.0


class _Rows:
    """Assigns intervals to the lowest row free at their start (GPUView's stacking)."""

    def __init__(self):
        self.ends: list[float] = []

    def place(self, start: float, end: float) -> int:
        for row, last in enumerate(self.ends):
            if last <= start:
                self.ends[row] = end
                return row
        self.ends.append(end)
        return len(self.ends) - 1


def chrome_trace(events: Iterable[dict]) -> dict:
    """The Chrome trace (a JSON-ready dict) of an event log (the dicts of ``read_events``): the
    tracks in the order the module's doc lists them, then the names of the process and the tracks."""
    events = list(events)
    hw = HwNames(events) if is_hardware(events) else None
    log = _Names(events)
    out: list[dict] = []
    names: dict[int, str] = {}  # tid -> track name
    cpu_slices, lengths = _queue_slices(events)
    dma_slices, depths = _dma_slices(events)
    flip_slices, vsyncs = _flip_slices(events)
    interrupts = [(e["t"], e["args"]) for e in events
                  if e["event"] == "Callback" and e["name"] == "DxgkCbNotifyInterrupt"]
    rings = [(e["t"], e["engine"], e["ring_used"]) for e in events if e["event"] == "Doorbell"]

    packet_at = _dma_tracks(dma_slices, log, names, out)
    queue_at = _queue_tracks(cpu_slices, log, hw, names, out)
    interrupt_at = _interrupt_track(interrupts, names, out)
    flow_id = _packet_flows(packet_at, queue_at, interrupt_at, out)
    _flip_tracks(flip_slices, vsyncs, log, names, out)
    plane_tracks(events, log.context, names, out, _us)
    _counters(depths, rings, lengths, log, hw, out)
    if hw is not None:
        _hw_timeline(events, hw, log.nodes, queue_at, names, out, flow_id)
    _instants(events, out)
    if hw is None:
        _idle_tracks(log, names)
    out.append({"name": "process_name", "ph": "M", "pid": PID, "tid": 0, "args": {"name": log.adapter}})
    for tid, name in sorted(names.items()):
        out.append({"name": "thread_name", "ph": "M", "pid": PID, "tid": tid, "args": {"name": name}})
        out.append({"name": "thread_sort_index", "ph": "M", "pid": PID, "tid": tid, "args": {"sort_index": tid}})
    return {"traceEvents": out, "displayTimeUnit": "ns",
            "otherData": {"generator": "wddmsim", "format": "Chrome trace event JSON; ts in microseconds"}}


class _Names:
    """What the log names: the adapter (its scenario and seed), each node, each context (and the
    order contexts were created in, which orders their tracks)."""

    def __init__(self, events: list[dict]):
        self.adapter = "Adapter"
        self.nodes: dict[int, str] = {}  # ordinal -> name
        self.contexts: dict[int, str] = {}  # context handle -> name
        self.order: dict[int, int] = {}  # context handle -> index in order of creation
        for e in events:
            ev = e["event"]
            if ev == "LogStart":
                self.adapter = f"Adapter: {e.get('scenario', '')} (seed {e.get('seed', 0)})"
            elif ev == "AdapterStart":
                for n in e["nodes"]:
                    self.nodes[n["ordinal"]] = n["name"]
            elif ev == "ContextCreate":
                self.order[e["context"]] = len(self.order)
                self.contexts[e["context"]] = e["name"]

    def context(self, handle: int):
        """A context's name, or its handle for one the log never created."""
        return self.contexts.get(handle, handle)


# -- pairing the lifecycle events into slices ---------------------------------------------------------
def _queue_slices(events: list[dict]) -> tuple[list, list]:
    """Each packet's time in its context's software queue (``QueuePacketStart`` to
    ``QueuePacketStop``; a packet still queued when the log ends: to the end, status ``Pending``) as
    ``(context, start, end, seq, fence, status, node, hwqueue)``, and the queue lengths as
    ``(t, context, queued, hwqueue)``."""
    queued: dict = {}  # (context, seq) -> QueuePacketStart t
    where: dict = {}  # (context, seq) -> (node, hardware queue) of its QueuePacketStart
    slices, lengths = [], []
    for e in events:
        ev = e["event"]
        if ev == "QueuePacketStart":
            key = (e["context"], e["seq"])
            queued.setdefault(key, e["t"])
            where.setdefault(key, (e["node"], e.get("hwqueue", 0)))
            lengths.append((e["t"], e["context"], e["queued"], e.get("hwqueue", 0)))
        elif ev == "QueuePacketStop":
            start = queued.pop((e["context"], e["seq"]), None)
            if start is not None:
                slices.append((e["context"], start, e["t"], e["seq"], e["fence"], e["status"], e["node"],
                               e.get("hwqueue", 0)))
    end_t = events[-1]["t"] if events else 0
    for (ctx, seq), start in queued.items():
        node, hwq = where[(ctx, seq)]
        slices.append((ctx, start, max(start, end_t), seq, 0, "Pending", node, hwq))
    return slices, lengths


def _dma_slices(events: list[dict]) -> tuple[list, list]:
    """Each DMA packet's time in its node's hardware queue (``DmaPacketQueued`` to
    ``DmaPacketStart``, or to ``DmaPacketStop`` for one taken back before it ran, status ``queued``)
    and on the GPU (``DmaPacketStart`` to ``DmaPacketStop``, its status), as ``(node, status, start,
    end, context, seq, fence, kind)``; and the hardware queue depths as ``(t, node, depth)``."""
    queued: dict = {}  # (node, fence) -> (t, context, seq)
    running: dict = {}  # (node, fence) -> (t, context, seq, kind)
    slices, depths = [], []
    for e in events:
        ev = e["event"]
        if ev == "DmaPacketQueued":
            queued[(e["node"], e["fence"])] = (e["t"], e["context"], e["seq"])
            depths.append((e["t"], e["node"], e["depth"]))
        elif ev == "DmaPacketStart":
            key = (e["node"], e["fence"])
            q = queued.pop(key, None)
            if q is not None and q[0] < e["t"]:
                slices.append((e["node"], "queued", q[0], e["t"], e["context"], e["seq"], e["fence"], e["kind"]))
            running[key] = (e["t"], e["context"], e["seq"], e["kind"])
        elif ev == "DmaPacketStop":
            key = (e["node"], e["fence"])
            r = running.pop(key, None)
            if r is not None:
                slices.append((e["node"], e["status"], r[0], e["t"], e["context"], e["seq"], e["fence"], r[3]))
                continue
            q = queued.pop(key, None)  # taken back before it ran: it spent its time queued
            if q is not None:
                slices.append((e["node"], "queued", q[0], e["t"], e["context"], e["seq"], e["fence"], e["kind"]))
    return slices, depths


def _flip_slices(events: list[dict]) -> tuple[list, list]:
    """Each frame's time in its VidPn source's flip queue (the ``Present`` call to ``Displayed`` or
    ``Dropped``) as ``(source, start, end, context, seq, result)``, and the display changes and
    the MMIO flips programmed (``MmioFlip``) as ``(t, source, label)``."""
    presents: dict = {}  # (context, seq) -> (t, source)
    slices, vsyncs = [], []
    overlay = overlay_keys(events)  # a window's frames on its overlay plane: on the plane's lane
    for e in events:
        ev = e["event"]
        if overlay and ev in ("Present", "Displayed", "Dropped") and (e["context"], e["seq"]) in overlay:
            continue
        if ev == "Present":
            presents[(e["context"], e["seq"])] = (e["t"], e["source"])
        elif ev == "Displayed":
            p = presents.pop((e["context"], e["seq"]), None)
            shown = e.get("displayed", e["t"])  # a hardware flip queue's log time precedes the event
            start = p[0] if p is not None else shown - e["latency"]
            slices.append((e["source"], start, shown, e["context"], e["seq"], "Displayed"))
            vsyncs.append((shown, e["source"], "vsync (display change)"))
        elif ev == "Dropped":
            p = presents.pop((e["context"], e["seq"]), None)
            if p is not None:
                slices.append((e["source"], p[0], e["t"], e["context"], e["seq"], "Dropped"))
        elif ev == "MmioFlip":
            # DxgkDdiSetVidPnSourceAddress programmed a flip: a marker on its source's flip queue
            vsyncs.append((e["t"], e["source"], "SetVidPnSourceAddress " + ("immediate" if e["immediate"] else
                                                                            "next vsync") + f" #{e['seq']}"))
    return slices, vsyncs


# -- tracks -------------------------------------------------------------------------------------------
def _dma_tracks(slices: list, log: _Names, names: dict, out: list) -> dict:
    """Per node, the packet the GPU runs on row 0 and the packets queued behind it stacked above.
    Returns where each packet ran, ``(context, seq, fence) -> (tid, start, end, node)``, for flows."""
    rows: dict[int, _Rows] = defaultdict(_Rows)
    packet_at: dict = {}
    for node, status, start, end, ctx, seq, fence, kind in sorted(slices, key=lambda s: (s[2], s[3])):
        row = 1 + rows[node].place(_us(start), _us(end)) if status == "queued" else 0
        tid = _NODE_BASE + 100 * node + row
        label = log.nodes.get(node, f"node {node}")
        names[tid] = f"{label} running" if row == 0 else f"{label} queued {row}"
        out.append({"name": f"{kind} {log.context(ctx)} #{seq}", "cat": "dma", "ph": "X", "pid": PID, "tid": tid,
                    "ts": _us(start), "dur": _us(end - start),
                    "args": {"fence": fence, "context": ctx, "seq": seq, "status": status if row == 0 else "Queued"}})
        if row == 0:
            packet_at[(ctx, seq, fence)] = (tid, _us(start), _us(end), node)
    return packet_at


def _queue_tracks(slices: list, log: _Names, hw: HwNames | None, names: dict, out: list) -> dict:
    """Per context (per hardware queue under hardware scheduling), its software queue's packets,
    stacked. Returns where each packet's slice starts, ``(context, seq) -> (tid, ts)``, for flows."""
    rows: dict = defaultdict(_Rows)  # context, or ("hw", hardware queue) -> its rows
    queue_at: dict = {}
    for ctx, start, end, seq, fence, status, node, hwq in sorted(slices, key=lambda s: (s[1], s[2])):
        hwq = hwq if hw is not None else 0
        if hwq:
            row = rows[("hw", hwq)].place(_us(start), _us(end))
            tid, names[tid] = _hw_queue_track(hw, hwq, row)
        else:
            row = rows[ctx].place(_us(start), _us(end))
            tid = _CONTEXT_BASE + 100 * log.order.get(ctx, len(log.order)) + row
            names[tid] = f"{log.context(ctx)} queue" + (f" {row}" if row else "")
        args = {"fence": fence, "status": status, "node": node}
        if hwq:
            args["hwqueue"] = hwq
        out.append({"name": f"#{seq}", "cat": "queue", "ph": "X", "pid": PID, "tid": tid, "ts": _us(start),
                    "dur": _us(end - start), "args": args})
        queue_at[(ctx, seq)] = (tid, _us(start))
    return queue_at


def _interrupt_track(interrupts: list, names: dict, out: list) -> dict:
    """One short slice per ``DxgkCbNotifyInterrupt``, so that flows can end on them. Returns the
    slice of each interrupt that ended a DMA packet (DMA_COMPLETED, or DMA_PREEMPTED taking it
    back), ``(node, t) -> ts``."""
    names[INTERRUPT_TID] = "Interrupts (DxgkCbNotifyInterrupt)"
    interrupt_at: dict = {}
    last_ts = -1.0
    for t, args in interrupts:
        ts = _us(t)
        if ts <= last_ts:
            ts = last_ts + _TICK  # slices on one track must not overlap
        last_ts = ts + _TICK
        kind = args.get("InterruptType", "")
        out.append({"name": kind.replace("DXGK_INTERRUPT_", ""), "cat": "interrupt", "ph": "X", "pid": PID,
                    "tid": INTERRUPT_TID, "ts": ts, "dur": _TICK, "args": args})
        dc = args.get("DmaCompleted") or args.get("DmaPreempted")
        if dc is not None:
            interrupt_at.setdefault((dc["NodeOrdinal"], t), ts)
    return interrupt_at


def _packet_flows(packet_at: dict, queue_at: dict, interrupt_at: dict, out: list) -> int:
    """A flow per DMA packet from its queue packet to its DMA slice to the interrupt that ended it
    (else back to its DMA slice). Returns the last flow id used."""
    flow_id = 0
    for (ctx, seq, fence), (tid, start, end, node) in packet_at.items():
        src = queue_at.get((ctx, seq))
        if src is None:
            continue
        flow_id += 1
        end_ts = interrupt_at.get((node, round(end * 1000)))
        finish = (INTERRUPT_TID, end_ts) if end_ts is not None else (tid, start)
        out.append({"name": "packet", "cat": "flow", "ph": "s", "id": flow_id, "pid": PID, "tid": src[0], "ts": src[1]})
        out.append({"name": "packet", "cat": "flow", "ph": "t", "id": flow_id, "pid": PID, "tid": tid, "ts": start,
                    "bp": "e"})
        out.append({"name": "packet", "cat": "flow", "ph": "f", "id": flow_id, "pid": PID, "tid": finish[0],
                    "ts": finish[1], "bp": "e"})
    return flow_id


def _flip_tracks(slices: list, vsyncs: list, log: _Names, names: dict, out: list) -> None:
    """Per VidPn source, its flip queue's frames stacked, and a vsync marker at each display change."""
    rows: dict[int, _Rows] = defaultdict(_Rows)
    for source, start, end, ctx, seq, what in sorted(slices, key=lambda s: (s[1], s[2])):
        row = rows[source].place(_us(start), _us(end))
        tid = _SOURCE_BASE + 100 * source + row
        names[tid] = f"VidPn source {source} flip queue" + (f" {row}" if row else "")
        out.append({"name": f"{log.context(ctx)} #{seq}", "cat": "present", "ph": "X", "pid": PID, "tid": tid,
                    "ts": _us(start), "dur": _us(end - start), "args": {"result": what}})
    for t, source, label in vsyncs:
        tid = _SOURCE_BASE + 100 * source
        names.setdefault(tid, f"VidPn source {source} flip queue")
        out.append({"name": label, "cat": "vsync" if label.startswith("vsync") else "mmio_flip", "ph": "i", "s": "t",
                    "pid": PID, "tid": tid, "ts": _us(t)})


def _counters(depths: list, rings: list, lengths: list, log: _Names, hw: HwNames | None, out: list) -> None:
    """Each node's hardware queue depth, each engine's ring occupancy (at each doorbell) and each
    context's (or hardware queue's) software queue length."""
    for t, node, depth in depths:
        out.append({"name": f"{log.nodes.get(node, node)} hardware queue depth", "ph": "C", "pid": PID,
                    "ts": _us(t), "args": {"packets": depth}})
    for t, engine, used in rings:
        out.append({"name": f"{log.nodes.get(engine, engine)} ring occupancy", "ph": "C", "pid": PID, "ts": _us(t),
                    "args": {"bytes": used}})
    for t, ctx, length, hwq in lengths:
        owner = hw.queue_label(hwq) if hwq and hw is not None else log.context(ctx)
        out.append({"name": f"{owner} software queue", "ph": "C", "pid": PID, "ts": _us(t),
                    "args": {"packets": length}})


def _instants(events: list[dict], out: list) -> None:
    """An instant for each preemption request, page fault, timeout, reset, device error, live dump,
    bug check, context destruction and verifier violation, its fields in the args."""
    for e in events:
        if e["event"] in _INSTANTS:
            args = {k: v for k, v in e.items() if k not in ("t", "event")}
            out.append({"name": e["event"], "cat": "recovery", "ph": "i", "s": "g", "pid": PID, "tid": 0,
                        "ts": _us(e["t"]), "args": args})


def _idle_tracks(log: _Names, names: dict) -> None:
    """A track for every engine (node) and every context, even one that ran or queued nothing, as
    GPUView lists every node: a viewer shows that the engine stayed idle."""
    for node, label in log.nodes.items():
        names.setdefault(_NODE_BASE + 100 * node, f"{label} running")
    for ctx, k in log.order.items():
        names.setdefault(_CONTEXT_BASE + 100 * k, f"{log.context(ctx)} queue")


# -- hardware scheduling --------------------------------------------------------------------------------
def _hw_queue_track(hw: HwNames, hwqueue: int, row: int) -> tuple[int, str]:
    """The tid and name of row ``row`` of a hardware queue's buffers (hardware queues in creation
    order, VidMm's first)."""
    index = hw.queue_order.get(hwqueue, len(hw.queue_order))
    name = hw.queue_label(hwqueue) + (f" row {row}" if row else "")
    return _HWQUEUE_BASE + 100 * index + row, name


def _hw_timeline(events: list[dict], hw: HwNames, node_names: dict, queue_slices: dict, names: dict, out: list,
                 flow_id: int) -> int:
    """The hardware-scheduling tracks: per engine the running and ready contexts, per hardware queue
    its progress fence signals, flows from each buffer to its queue's turns and its signal, and
    counters of ready contexts and monitored fence values. Returns the last flow id used."""
    intervals = state_intervals(events)
    _hw_engine_rows(intervals, hw, node_names, names, out)
    signals = _hw_fence_rows(events, hw, names, out)
    _hw_ready_counters(events, node_names, out)
    return _hw_flows(events, intervals, hw, queue_slices, signals, out, flow_id)


def _engine_tid(engine: int, row: int) -> int:
    return _NODE_BASE + 100 * engine + row


def _hw_engine_rows(intervals: list[Interval], hw: HwNames, node_names: dict, names: dict, out: list) -> None:
    """Per engine, GPUView's hardware-queue picture for hardware scheduling: row 0 holds the context
    the GPU's scheduler runs (one slice per turn, named by the context, its hardware queue in the
    args); the rows above hold the contexts ready for the engine, each in the lowest free row."""
    ready_rows: dict[int, _Rows] = defaultdict(_Rows)
    for iv in intervals:
        if iv.state == "running":
            row = 0
        elif iv.state == "ready" and iv.end > iv.start:
            row = 1 + ready_rows[iv.engine].place(_us(iv.start), _us(iv.end))
        else:
            continue
        tid = _engine_tid(iv.engine, row)
        label = node_names.get(iv.engine, f"node {iv.engine}")
        names[tid] = f"{label} running" if row == 0 else f"{label} ready {row}"
        out.append({"name": hw.hw_context_name(iv.hw_context), "cat": "hwcontext", "ph": "X", "pid": PID, "tid": tid,
                    "ts": _us(iv.start), "dur": _us(iv.end - iv.start), "args": _turn_args(iv, hw)})


def _turn_args(iv: Interval, hw: HwNames) -> dict:
    """The args of a running or ready slice: the OS's and the driver's handles, and what came next
    (``running``: the context moved to another of its queues; ``log end``: still so at the end)."""
    args = {"context": hw.context_of_hw.get(iv.hw_context, 0), "hHwContext": iv.hw_context,
            "state": iv.state, "then": iv.ended or "log end"}
    if iv.state == "running":
        hwqueue = hw.queue_of_hw.get(iv.hw_queue, 0)
        args.update(hwqueue=hwqueue, hHwQueue=iv.hw_queue, queue=hw.queue_label(hwqueue))
    return args


def _hw_fence_rows(events: list[dict], hw: HwNames, names: dict, out: list) -> dict[int, list]:
    """Each progress fence's signals as 1 ns slices on a row under its hardware queue's rows (where
    the buffers' flows end); other monitored fences as value counters. Returns, per hardware queue,
    ``(t, value, ts)`` of its signals in order."""
    progress = hw.progress_fences()
    signals: dict[int, list] = defaultdict(list)
    last: dict[int, float] = {}
    for e in events:
        if e["event"] != "FenceSignal":
            continue
        hwq = progress.get(e["fence"])
        if hwq is None:
            out.append({"name": f"monitored fence {e['fence']}", "ph": "C", "pid": PID, "ts": _us(e["t"]),
                        "args": {"value": e["value"]}})
            continue
        tid, _ = _hw_queue_track(hw, hwq, _FENCE_ROW)
        names[tid] = f"{hw.queue_label(hwq)} progress fence"
        ts = max(_us(e["t"]), last.get(tid, -1.0))
        last[tid] = ts + _TICK  # slices on one track must not overlap
        out.append({"name": f"signal {e['value']}", "cat": "fence", "ph": "X", "pid": PID, "tid": tid, "ts": ts,
                    "dur": _TICK, "args": {k: e[k] for k in ("fence", "value", "source", "rewind")}})
        signals[hwq].append((e["t"], e["value"], ts))
    return signals


def _hw_ready_counters(events: list[dict], node_names: dict, out: list) -> None:
    """Per engine, how many contexts are ready for it (waiting for the scheduler): its value after
    each instant at which it changed (changes within one instant, as one context leaves the engine
    and the next takes it, are one step)."""
    state: dict[tuple[int, int], str] = {}
    after: dict[tuple[int, int], int] = {}  # (t, engine) -> ready contexts after the last change at t
    for e in events:
        if e["event"] == "HwContextState":
            engine = e["engine"]
            state[(engine, e["context"])] = e["state"]
            after[(e["t"], engine)] = sum(1 for (eng, _), st in state.items() if eng == engine and st == "ready")
    last: dict[int, int] = {}
    for (t, engine), n in after.items():
        if last.get(engine) != n:
            last[engine] = n
            out.append({"name": f"{node_names.get(engine, engine)} ready contexts", "ph": "C", "pid": PID,
                        "ts": _us(t), "args": {"contexts": n}})


def _hw_flows(events: list[dict], intervals: list[Interval], hw: HwNames, queue_slices: dict, signals: dict,
              out: list, flow_id: int) -> int:
    """A flow per retired buffer: from its queue slice (QueuePacketStart), through each turn of its
    hardware queue on the engine in which it certainly ran (:func:`.hwcontexts.certain_turns`; none
    when the log cannot say), to the progress fence signal that retired it (its value reached the
    buffer's progress id), or, without one, to its last turn. Returns the last flow id used."""
    turns = defaultdict(list)
    for iv in intervals:
        if iv.state == "running":
            turns[hw.queue_of_hw.get(iv.hw_queue)].append(iv)
    for hwq, lives in buffer_lives(events).items():
        ran = certain_turns(turns.get(hwq, []), lives)
        for life, its_turns in zip(lives, ran):
            src = queue_slices.get((life.context, life.seq))
            if not life.status or src is None:
                continue
            steps = [(_engine_tid(iv.engine, 0), _us(max(iv.start, life.start))) for iv in its_turns]
            done = next((ts for t, value, ts in signals.get(hwq, [])
                         if life.start <= t <= life.end and value >= life.progress_id), None)
            if done is not None:
                finish = (_hw_queue_track(hw, hwq, _FENCE_ROW)[0], done)
            elif steps:
                finish = steps[-1]
            else:
                continue
            flow_id += 1
            _flow(out, flow_id, [("s", *src)] + [("t", *step) for step in steps] + [("f", *finish)])
    return flow_id


def _flow(out: list, flow_id: int, steps: list[tuple[str, int, float]]) -> None:
    """A buffer's flow events: ``(phase, tid, ts)`` each, bound to the enclosing slice."""
    for ph, tid, ts in steps:
        ev = {"name": "buffer", "cat": "flow", "ph": ph, "id": flow_id, "pid": PID, "tid": tid, "ts": ts}
        if ph != "s":
            ev["bp"] = "e"
        out.append(ev)


def write_chrome_trace(events: Iterable[dict], path: str) -> int:
    """Write the trace of ``events`` to ``path``; returns the number of trace events. A file that
    cannot be written is a :class:`~wddmsim.trace.output.WriteFailed` naming it."""
    trace = chrome_trace(events)
    try:
        with open_text(path) as f:
            json.dump(trace, f, separators=(",", ":"))
    except OSError as e:
        raise WriteFailed(path, e) from None
    return len(trace["traceEvents"])
