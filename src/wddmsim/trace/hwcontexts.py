"""The hardware-scheduling view of an event log (WDDM 2.x, ``adapter.scheduling = "hardware"``):
which hardware context each engine ran, and when, with the OS's names for it.

Under hardware scheduling the log has no DmaPacket events: the GPU's context-management processor
picks what runs and logs every change of a hardware context's state as ``HwContextState``
(engine, the driver's hHwContext, ``idle`` / ``ready`` / ``running`` / ``suspended``, the driver's
hHwQueue put on the engine). A context that goes ``running`` owns the engine until its next state
change; ``running`` again for the same context means it moved to another of its queues. The
timeline (:mod:`.chrome`), the frame metrics (:mod:`.presentmon`) and the report
(:mod:`wddmsim.output.report`) read the engines' work from here:

- :func:`is_hardware`: whether a log is hardware-scheduled (it has ``HwQueueCreate`` events);
- :class:`HwNames`: the driver's handles to the OS's (from ``HwQueueCreate``), contexts to names
  (from ``ContextCreate``; VidMm's kernel context has none and is :data:`VIDMM_NAME`), and a
  label per hardware queue;
- :func:`state_intervals`: every interval a context spent in one state on its engine, a
  ``running`` one split where the context moved to another queue;
- :func:`running_turns`: the ``running`` intervals (a context's *turns* on its engine);
- :func:`clip`: the parts of intervals inside a window (busy time in a window);
- :func:`buffer_lives`: each buffer's time in its hardware queue;
- :func:`certain_turns`: the turns a buffer of a hardware queue certainly ran in.

Intervals still open when the log ends are closed at its last event (``LogEnd``), with
``ended`` set to ``""``. Contexts start idle, which the GPU does not log.

Spec: docs/events.md (HwQueueCreate, HwContextState); gpu/scheduler.py's module doc (the scheduling
rules and log); Microsoft's "DXGK_SCHEDULING_LOG_CONTEXT_STATE enumeration" page; PresentMon issue
#265 (GameTechDev/PresentMon: GPU time from the scheduling log under hardware scheduling).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from typing import Iterable, NamedTuple

#: The name of VidMm's kernel context (page-table paging), which has no ``ContextCreate``.
VIDMM_NAME = "VidMm (paging)"


class Interval(NamedTuple):
    """A hardware context's time in one state on one engine, in virtual ns."""

    engine: int
    hw_context: int  # the driver's hHwContext
    hw_queue: int  # the driver's hHwQueue on the engine (running), else -1
    state: str
    start: int
    end: int
    ended: str  # the state that ended it ("running": moved to another queue; "": the log ended)


def is_hardware(events: Iterable[dict]) -> bool:
    """Whether the log is of a hardware-scheduled adapter (it created hardware queues)."""
    return any(e["event"] == "HwQueueCreate" for e in events)


class HwNames:
    """Names and handles of a log's hardware contexts and queues (``HwQueueCreate`` maps the
    driver's hHwContext and hHwQueue to the OS's context and hardware-queue handles,
    ``ContextCreate`` the OS's context to ``process/context``)."""

    def __init__(self, events: Iterable[dict]):
        self.context_of_hw: dict[int, int] = {}  # hHwContext -> OS context
        self.queue_of_hw: dict[int, int] = {}  # hHwQueue -> OS hardware queue
        self.queues: dict[int, dict] = {}  # OS hardware queue -> its HwQueueCreate, in creation order
        self.context_names: dict[int, str] = {}  # OS context -> process/context
        self.queue_order: dict[int, int] = {}  # OS hardware queue -> 0-based creation order
        for e in events:
            if e["event"] == "HwQueueCreate":
                self.context_of_hw[e["hHwContext"]] = e["context"]
                self.queue_of_hw[e["hHwQueue"]] = e["hwqueue"]
                self.queues[e["hwqueue"]] = e
                self.queue_order.setdefault(e["hwqueue"], len(self.queue_order))
            elif e["event"] == "ContextCreate":
                self.context_names[e["context"]] = e["name"]

    def context_name(self, context: int) -> str:
        """``process/context`` of an OS context; VidMm's kernel context (no ``ContextCreate``,
        only a hardware queue) is :data:`VIDMM_NAME`; anything else its number."""
        name = self.context_names.get(context)
        if name is not None:
            return name
        if any(q["context"] == context for q in self.queues.values()):
            return VIDMM_NAME
        return str(context)

    def hw_context_name(self, hw_context: int) -> str:
        """The name of the context behind a driver hHwContext."""
        context = self.context_of_hw.get(hw_context)
        return f"hHwContext {hw_context}" if context is None else self.context_name(context)

    def queue_index(self, hwqueue: int) -> int:
        """The hardware queue's number among its context's queues (1 for the first created)."""
        q = self.queues.get(hwqueue)
        if q is None:
            return 1
        mine = [h for h, c in self.queues.items() if c["context"] == q["context"]]
        return mine.index(hwqueue) + 1

    def queue_label(self, hwqueue: int) -> str:
        """``process/context hw queue K``: the K-th hardware queue of the context."""
        q = self.queues.get(hwqueue)
        if q is None:
            return f"hw queue {hwqueue}"
        return f"{self.context_name(q['context'])} hw queue {self.queue_index(hwqueue)}"

    def progress_fences(self) -> dict[int, int]:
        """Progress fence handle -> its OS hardware queue."""
        return {q["progress_fence"]: h for h, q in self.queues.items()}


def state_intervals(events: list[dict]) -> list[Interval]:
    """Every interval a hardware context spent in one state on its engine, from ``HwContextState``,
    sorted by start (then end, engine). A ``running`` interval ends at the context's next state
    change, or where it logs ``running`` again for another queue."""
    end = events[-1]["t"] if events else 0
    open_: dict[tuple[int, int], tuple[str, int, int]] = {}  # (engine, hHwContext) -> (state, queue, since)
    out: list[Interval] = []
    for e in events:
        if e["event"] != "HwContextState":
            continue
        key = (e["engine"], e["context"])
        prev = open_.pop(key, None)
        if prev is not None:
            out.append(Interval(key[0], key[1], prev[1], prev[0], prev[2], e["t"], e["state"]))
        open_[key] = (e["state"], e["queue"], e["t"])
    for (engine, ctx), (state, queue, since) in open_.items():
        out.append(Interval(engine, ctx, queue, state, since, end, ""))
    out.sort(key=lambda i: (i.start, i.end, i.engine))
    return out


def running_turns(events: list[dict]) -> list[Interval]:
    """The intervals in which a context owned its engine (state ``running``), by start."""
    return [i for i in state_intervals(events) if i.state == "running"]


def clip(intervals: Iterable[tuple[int, int]], lo: int, hi: int) -> list[tuple[int, int]]:
    """The parts of ``(start, end)`` intervals inside ``[lo, hi]``, in order; an interval that only
    touches the window's edge contributes nothing."""
    out = []
    for a, b in intervals:
        a, b = max(a, lo), min(b, hi)
        if a < b:
            out.append((a, b))
    return sorted(out)



class Life(NamedTuple):
    """A buffer's time in its hardware queue: ``QueuePacketStart`` to ``QueuePacketStop`` (or the
    end of the log, ``status`` ``""``, when it was still there)."""

    start: int
    end: int
    context: int
    seq: int
    progress_id: int
    status: str


def buffer_lives(events: list[dict]) -> dict[int, list[Life]]:
    """OS hardware queue -> the lives of its buffers, in submission order."""
    end = events[-1]["t"] if events else 0
    open_: dict[tuple[int, int], dict] = {}
    out: dict[int, list[Life]] = {}
    for e in events:
        if e["event"] == "QueuePacketStart" and e["hwqueue"]:
            open_[(e["context"], e["seq"])] = e
            out.setdefault(e["hwqueue"], [])
        elif e["event"] == "QueuePacketStop" and (e["context"], e["seq"]) in open_:
            s = open_.pop((e["context"], e["seq"]))
            out[s["hwqueue"]].append(Life(s["t"], e["t"], s["context"], s["seq"], s["progress_id"], e["status"]))
    for s in open_.values():
        out[s["hwqueue"]].append(Life(s["t"], end, s["context"], s["seq"], s["progress_id"], ""))
    for lives in out.values():
        lives.sort(key=lambda life: (life.start, life.seq))
    return out


def certain_turns(turns: list[Interval], lives: list[Life]) -> list[list[Interval]]:
    """For each buffer of one hardware queue (``lives`` in submission order, the queue's FIFO), the
    turns of that queue (sorted, disjoint) in which it certainly ran:

    1. for a completed buffer, the only turn during its life (it ran somewhere, and the queue ran
       nowhere else);
    2. a turn (longer than 0) during its life in which no other buffer of the queue was alive;
    3. a turn (longer than 0) that was the first during its life, when it was the oldest buffer
       alive at the turn (every older one retired, so done, before it began): the queue's work
       in that turn began with it.

    The scheduling log names queues, not buffers. A buffer retires (``QueuePacketStop``) a little
    after the GPU finished it, so in a later turn that held several buffers the log does not say
    where one ended and the next began; such turns are left out. Cancelled buffers never ran;
    an aborted one may not have (it may have waited behind the buffer a reset abandoned)."""
    begins, ends = [t.start for t in turns], [t.end for t in turns]
    starts, stops = sorted(life.start for life in lives), sorted(life.end for life in lives)
    alive = [bisect_left(starts, t.end) - bisect_right(stops, t.start) for t in turns]  # lives overlapping t
    heads = _heads(turns, lives)
    out = []
    for k, life in enumerate(lives):
        first, last = bisect_right(ends, life.start), bisect_left(begins, life.end)
        during = range(first, last)
        if life.status == "Cancelled":
            out.append([])
        elif len(during) == 1 and life.status == "Completed":
            out.append([turns[first]])
        else:
            out.append([turns[i] for i in during if turns[i].end > turns[i].start
                        and (alive[i] == 1 or (i == first and heads[i] == k))])
    return out


def _heads(turns: list[Interval], lives: list[Life]) -> list[int | None]:
    """Per turn, the index of the oldest buffer alive at its start that was not cancelled (None
    when none was queued before the turn ended)."""
    heads: list[int | None] = []
    p = 0
    for t in turns:
        while p < len(lives) and lives[p].end <= t.start:
            p += 1
        k = p
        while k < len(lives) and lives[k].start < t.end and (lives[k].status == "Cancelled" or lives[k].end <= t.start):
            k += 1
        heads.append(k if k < len(lives) and lives[k].start < t.end else None)
    return heads
