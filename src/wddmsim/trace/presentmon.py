"""PresentMon-style frame metrics from an event log: one row per present, with PresentMon's column
names where the model knows the value.

| column | here |
|---|---|
| Application | the presenting process's name |
| ProcessID | its process id |
| SwapChainAddress | the ``address`` of the context's ``SwapChainCreate`` (a ``swap_chain`` workload's, the compositor's); without one, the presenting context's handle and VidPn source as one number (context << 8 \\| source) |
| PresentRuntime | the ``runtime`` of the ``SwapChainCreate``; without one ``Other`` |
| SyncInterval | the application's sync interval from the ``SwapChainCreate``; without one the present's FlipInterval (0 for blt and composed presents) |
| PresentFlags | the ``present_flags`` of the ``SwapChainCreate``; else 0 |
| AllowsTearing | 1 for an immediate flip (interval 0), else 0 |
| PresentMode | ``Hardware: Legacy Flip`` (flip, flip_no_wait), ``Hardware: Independent Flip`` (independent_flip), ``Hardware: Legacy Copy to front buffer`` (blt), ``Composed: Copy with GPU GDI`` (composed), ``Composed: Flip`` (composed_flip), ``Hardware Composed: Independent Flip`` (overlay_flip that a plane showed; one dropped before any vsync showed it: ``Composed: Flip``) |
| CPUStartTime | when the CPU started the frame: the previous present on the swap chain returned (the first frame: when its first packet was queued), ms from the start of the run |
| MsBetweenPresents | from the previous present call on the swap chain to this one (NA for the first) |
| MsInPresentAPI | from the present call's start to its return; 0 for a runtime ``Other`` (PresentMon sees no present call of one) |
| MsGPULatency | from CPUStartTime to the first GPU work of the frame |
| MsGPUTime | from the frame's first GPU work to the end of the present's GPU work |
| MsGPUBusy | the time the frame's packets (the context's packets after the previous present, up to and including this one) were running on their nodes, rebuilt from DmaPacketStart/Stop as PresentMon rebuilds its per-node queues; under hardware scheduling, the presenting context's turns on its engine inside the frame's window (below) |
| MsGPUWait | MsGPUTime minus MsGPUBusy |
| MsUntilDisplayed | from the present call's start to the display (NA when dropped) |
| MsBetweenDisplayChange | from the previous display change on the source (NA when dropped, or for the first) |
| DisplayedTime | when it appeared, ms (NA when dropped) |

A present still waiting for its display when the log ends is left out.

A window's present flipped on an overlay plane (mode ``overlay_flip``) is "Hardware Composed:
Independent Flip" only when it was displayed: PresentMon gives that mode to a flip-model present
when a multiplane vsync that shows it has more than one plane on (its VSyncDPCMultiPlane handling
in PresentData/PresentMonTraceConsumer.cpp), and a window's plane is always shown over the
compositor's plane 0. No vsync names a plane flip replaced before it reached the screen, so
PresentMon keeps the mode the present's history token gave it, "Composed: Flip", and so does this
table.

Under hardware scheduling there are no DmaPacket events; the GPU columns come from the GPU
scheduler's log instead (``HwContextState``, :mod:`.hwcontexts`), as PresentMon does with the
scheduling log. The frame's *window* runs from the ``QueuePacketStart`` of its first buffer (but
no earlier than the previous present's ``QueuePacketStop`` on the swap chain) to the present
buffer's ``QueuePacketStop``; the presenting context's *turns* are its ``running`` intervals on its
engine (any of its hardware queues). Then

- first GPU work = the start of the first part of a turn inside the window;
- end of the present's GPU work = the end of the last part of a turn inside the window (the
  context left the engine, or, when it kept running, the present's retirement);
- MsGPUBusy = the total time of the turns inside the window, so the frames of a swap chain
  count each instant of the context's engine time at most once;
- MsGPULatency, MsGPUTime and MsGPUWait follow from these as above (NA without a turn in the
  window).

Spec: PresentMon's console-application README (GameTechDev/PresentMon: its CSV columns); docs/events.md.
"""

from __future__ import annotations

import csv
from collections import defaultdict
from typing import Iterable

from .hwcontexts import HwNames, clip, is_hardware, running_turns
from .output import WriteFailed, open_text

COLUMNS = (
    "Application", "ProcessID", "SwapChainAddress", "PresentRuntime", "SyncInterval", "PresentFlags", "AllowsTearing",
    "PresentMode", "CPUStartTime", "MsBetweenPresents", "MsInPresentAPI", "MsGPULatency", "MsGPUTime", "MsGPUBusy",
    "MsGPUWait", "MsUntilDisplayed", "MsBetweenDisplayChange", "DisplayedTime",
)
NA = "NA"
#: The events the rows are made of: a sink that keeps only these (:class:`~wddmsim.trace.sinks.KindsSink`)
#: gives the same rows for a fraction of the memory.
ROW_EVENTS = frozenset({
    "ProcessCreate", "ContextCreate", "SwapChainCreate", "Present", "QueuePacketStart", "QueuePacketStop",
    "DmaPacketStart", "DmaPacketStop", "Displayed", "Dropped", "HwQueueCreate", "HwContextState", "LogEnd",
})
_MODES = {"flip": "Hardware: Legacy Flip", "flip_no_wait": "Hardware: Legacy Flip",
          "blt": "Hardware: Legacy Copy to front buffer", "composed": "Composed: Copy with GPU GDI",
          "composed_flip": "Composed: Flip", "independent_flip": "Hardware: Independent Flip",
          "overlay_flip": "Hardware Composed: Independent Flip"}
#: the mode of an ``overlay_flip`` present no plane showed (PresentMon decides the mode at the vsync)
_OVERLAY_DROPPED = "Composed: Flip"


def _ms(ns: int | None) -> str | float:
    return NA if ns is None else round(ns / 1e6, 6)


def present_rows(events: Iterable[dict], times: bool = False) -> list[dict]:
    """The PresentMon rows of an event log, in present order. With ``times`` each row also holds
    the frame's times in ns under keys that start with ``_`` (not CSV columns): ``_present_start``,
    ``_frame_start``, ``_present_return``, ``_gpu_start``, ``_gpu_end``, ``_gpu_busy``,
    ``_displayed`` (None when dropped), and its ``_source`` and event-log ``_mode``."""
    apps: dict[int, str] = {}
    chains: dict[int, dict] = {}  # context -> its SwapChainCreate
    ctx_process: dict[int, int] = {}
    presents = []  # dicts in order
    by_key: dict = {}
    runs: dict = {}  # (context) -> list of [start, stop, seq] of DMA packets that ran
    open_runs: dict = {}  # (node, fence) -> (start, context, seq)
    shown: dict = {}  # (context, seq) -> displayed time; None when dropped
    queued_at: dict = {}  # (context, seq) -> QueuePacketStart time
    retired_at: dict = {}  # (context, seq) -> QueuePacketStop time
    events = list(events)
    turns = _context_turns(events) if is_hardware(events) else None
    for e in events:
        ev = e["event"]
        if ev == "ProcessCreate":
            apps[e["process"]] = e["name"]
        elif ev == "ContextCreate":
            ctx_process[e["context"]] = e["process"]
        elif ev == "SwapChainCreate":
            chains[e["context"]] = e
        elif ev == "Present":
            p = dict(e)
            presents.append(p)
            by_key[(e["context"], e["seq"])] = p
        elif ev == "QueuePacketStart":
            queued_at.setdefault((e["context"], e["seq"]), e["t"])
        elif ev == "QueuePacketStop":
            retired_at[(e["context"], e["seq"])] = e["t"]
        elif ev == "DmaPacketStart":
            open_runs[(e["node"], e["fence"])] = (e["t"], e["context"], e["seq"])
        elif ev == "DmaPacketStop":
            r = open_runs.pop((e["node"], e["fence"]), None)
            if r is not None:
                runs.setdefault(r[1], []).append((r[0], e["t"], r[2]))
        elif ev == "Displayed":
            shown[(e["context"], e["seq"])] = e["displayed"]
        elif ev == "Dropped":
            shown[(e["context"], e["seq"])] = None
    rows = []
    last_present: dict = {}  # swap chain -> (call start, seq, return)
    window_end: dict = {}  # swap chain -> the previous present's QueuePacketStop (hardware scheduling)
    last_display: dict = {}  # source -> time
    for p in presents:
        key = (p["context"], p["seq"])
        if key not in shown:
            continue  # still waiting when the log ended
        chain = (p["context"] << 8) | p["source"]
        prev = last_present.get(chain)
        if prev:
            frame_start = prev[2]
        else:
            first = [queued_at[(p["context"], q)] for q in range(1, p["seq"] + 1) if (p["context"], q) in queued_at]
            frame_start = min(first + [p["cpu_start"]])
        first_seq = prev[1] + 1 if prev else 1
        if turns is None:
            gpu_start, gpu_end, busy = _packet_gpu(runs.get(p["context"], []), first_seq, p["seq"])
        else:
            lo, hi = _window(queued_at, retired_at, p["context"], first_seq, p["seq"], window_end.get(chain, 0))
            gpu_start, gpu_end, busy = _turn_gpu(turns[p["context"]], lo, hi)
            window_end[chain] = window_end.get(chain, 0) if hi is None else hi
        gpu_time = gpu_end - gpu_start if gpu_start is not None and gpu_end is not None else None
        disp = shown[key]
        prev_disp = last_display.get(p["source"])
        sc = chains.get(p["context"])
        runtime = sc["runtime"] if sc else "Other"
        in_present = p["t"] - p["cpu_start"] if sc is None or runtime != "Other" else 0
        row = {
            "Application": apps.get(p["process"], ""), "ProcessID": p["process"],
            "SwapChainAddress": sc["address"] if sc else hex(chain), "PresentRuntime": runtime,
            "SyncInterval": sc["sync_interval"] if sc else p["interval"], "PresentFlags": sc["present_flags"] if sc else 0,
            "AllowsTearing": int(p["flip"] == 1 and p["interval"] == 0), "PresentMode": _mode(p["mode"], disp),
            "CPUStartTime": _ms(frame_start),
            "MsBetweenPresents": _ms(p["cpu_start"] - prev[0]) if prev else NA,
            "MsInPresentAPI": _ms(in_present),
            "MsGPULatency": _ms(gpu_start - frame_start) if gpu_start is not None else NA,
            "MsGPUTime": _ms(gpu_time), "MsGPUBusy": _ms(busy),
            "MsGPUWait": _ms(gpu_time - busy) if gpu_time is not None else NA,
            "MsUntilDisplayed": _ms(disp - p["cpu_start"]) if disp is not None else NA,
            "MsBetweenDisplayChange": _ms(disp - prev_disp) if disp is not None and prev_disp is not None else NA,
            "DisplayedTime": _ms(disp) if disp is not None else NA,
        }
        if times:
            row |= {
                "_present_start": p["cpu_start"], "_frame_start": frame_start, "_present_return": p["t"],
                "_gpu_start": gpu_start, "_gpu_end": gpu_end, "_gpu_busy": busy, "_displayed": disp,
                "_source": p["source"], "_mode": p["mode"],
            }
        rows.append(row)
        last_present[chain] = (p["cpu_start"], p["seq"], p["t"])
        if disp is not None:
            last_display[p["source"]] = disp
    return rows


def _mode(mode: str, displayed: int | None) -> str:
    """PresentMon's name of a present's ``mode`` (the event log's), shown at ``displayed`` (None:
    dropped); an overlay flip no plane showed is "Composed: Flip" (the module doc)."""
    if mode == "overlay_flip" and displayed is None:
        return _OVERLAY_DROPPED
    return _MODES.get(mode, mode)


def _packet_gpu(runs: list, first_seq: int, seq: int) -> tuple:
    """Software scheduler: (first GPU work, end of the present's GPU work, busy ns) of the frame of
    packets ``first_seq..seq``, from their DMA packet runs ``(start, stop, seq)``."""
    frame = [r for r in runs if first_seq <= r[2] <= seq]
    own = [r for r in frame if r[2] == seq]
    gpu_start = min((r[0] for r in frame), default=None)
    gpu_end = max((r[1] for r in own), default=None)
    return gpu_start, gpu_end, sum(r[1] - r[0] for r in frame)


def _window(queued_at: dict, retired_at: dict, ctx: int, first_seq: int, seq: int, floor: int) -> tuple:
    """Hardware scheduling: the window ``(lo, hi)`` of the frame of buffers ``first_seq..seq`` of
    ``ctx``: from its first buffer's QueuePacketStart, but not before ``floor`` (the previous
    present's QueuePacketStop on the swap chain), to the present's QueuePacketStop (None if unknown)."""
    first = min((queued_at[(ctx, q)] for q in range(first_seq, seq + 1) if (ctx, q) in queued_at), default=None)
    return (None if first is None else max(first, floor)), retired_at.get((ctx, seq))


def _turn_gpu(turns: list, lo: int | None, hi: int | None) -> tuple:
    """Hardware scheduling: (first GPU work, end of the present's GPU work, busy ns) of a frame
    whose window is ``[lo, hi]``, from the presenting context's turns ``(start, end)`` (see the
    module doc); Nones and 0 without a turn in the window."""
    if lo is None or hi is None:
        return None, None, 0
    parts = clip(turns, lo, hi)
    if not parts:
        return None, None, 0
    return parts[0][0], parts[-1][1], sum(b - a for a, b in parts)


def _context_turns(events: list[dict]) -> dict[int, list[tuple[int, int]]]:
    """OS context -> ``(start, end)`` of its turns on its engine, from ``HwContextState``."""
    names = HwNames(events)
    turns: dict[int, list] = defaultdict(list)
    for iv in running_turns(events):
        turns[names.context_of_hw.get(iv.hw_context, -1)].append((iv.start, iv.end))
    return turns


def write_presentmon_csv(events: Iterable[dict], path: str) -> int:
    """Write the rows to ``path`` as CSV; returns how many. A file that cannot be written is a
    :class:`~wddmsim.trace.output.WriteFailed` naming it."""
    rows = present_rows(events)
    try:
        with open_text(path, newline="") as f:
            w = csv.DictWriter(f, fieldnames=COLUMNS)
            w.writeheader()
            w.writerows(rows)
    except OSError as e:
        raise WriteFailed(path, e) from None
    return len(rows)
