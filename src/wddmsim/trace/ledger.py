"""The packet ledger: every piece of work the model creates is accounted for exactly once.

The ledger reads the event log's own vocabulary (docs/events.md), ``(t, event, fields)``, either
live (every run feeds it, with or without ``--events``: :class:`wddmsim.runner.system.System`) or from a
saved log (``wddmsim check LOG``), and keeps each open item's state and history. The items, their
lifecycles and the rules each event is checked against are :mod:`wddmsim.trace.ledger_rules`'s
(docs/ledger.md); this module feeds them, taking the usual case of each event in line, and gives
the verdict and the totals.

A broken rule is a :class:`Violation` (a model bug, never a driver's: the driver's mistakes are the
verifier's); :meth:`Ledger.check_now` gives them as of now, and :class:`LedgerError` carries each violation
with the offending item's whole history (its events, with their times). To keep memory flat an
item's history is dropped once it ends cleanly; the last few ended items' are kept (:data:`KEEP_CLOSED`
when a log is checked), so an event about one that ended recently still shows its history.
"""

from __future__ import annotations

from collections import OrderedDict, deque

from .ledgerreport import LedgerError, Violation
# The items' records and the rules' handlers; the names listed here lived in this module before
# the rules moved and are still importable from it.
from .ledger_rules import (
    _ABORTED, _DMA_NAMES, _DONE, _NONE, _QUEUED, _STARTED, _STOPS, _TAKEN, LedgerRules, _fence_name, _Frame,
    _Packet, _packet_name, _present_name,
)

__all__ = ["KINDS", "KEEP_CLOSED", "KindsFilter", "Ledger", "LedgerError", "Violation"]

#: the events the ledger reads (the model need not build any other for it)
KINDS = frozenset({"QueuePacketStart", "QueuePacketStop", "DmaPacketQueued", "DmaPacketStart", "DmaPacketStop",
                   "Present", "Flip", "Displayed", "Dropped", "EvictAllocation"})

#: how many ended items keep their history (for an event about an item that already ended) when
#: a saved log is checked; a live run keeps :data:`KEEP_CLOSED_RUN` (the histories of ended items
#: kept alive cost a run a few percent in memory management alone)
KEEP_CLOSED = 4096
KEEP_CLOSED_RUN = 64

#: the events the model hands the ledger by a direct call (:meth:`Ledger.queue_start` ...): the
#: event's name, then its fields' names in the order the event log writes them
_E_QSTART = ("QueuePacketStart", "context", "process", "node", "seq", "kind", "queued", "hwqueue", "progress_id")
_E_DQUEUED = ("DmaPacketQueued", "context", "node", "fence", "kind", "seq", "depth")
_E_DSTART = ("DmaPacketStart", "context", "node", "fence", "kind", "seq", "resubmission")
_E_DSTOP = ("DmaPacketStop", "context", "node", "fence", "kind", "seq", "status")
_E_QSTOP = ("QueuePacketStop", "context", "node", "fence", "kind", "seq", "status", "hwqueue")

_E_PRESENT = ("Present", "context", "process", "seq", "mode", "flip", "interval", "source", "width", "height",
              "cpu_start")
_E_FLIP = ("Flip", "context", "seq", "fence", "source", "interval", "no_wait", "surface")
_E_DISPLAYED = ("Displayed", "source", "context", "seq", "fence", "displayed", "latency")
_E_DROPPED = ("Dropped", "source", "context", "seq", "fence")
_E_EVICT = ("EvictAllocation", "allocation", "device", "process", "size", "segment", "reason", "content")


def _fields(names: tuple, values: tuple) -> dict:
    """The fields of an event handed by a direct call (``names``: one of the ``_E_`` tuples)."""
    return dict(zip(names[1:], values))


def _zero(*names) -> dict:
    return {n: 0 for n in names}


class Ledger(LedgerRules):
    """The ledger of one run (see the module doc). A live run feeds it by direct calls at the
    model's transition points (:meth:`queue_start`, :meth:`dma_queued`, ... with the values the
    event carries); a saved log is fed with :meth:`emit` or :meth:`feed` (an event sink: ``kinds``
    names the events it reads, every other one is ignored). Then :meth:`check_now`."""

    kinds = KINDS

    def __init__(self, keep_closed: int = KEEP_CLOSED_RUN):
        self.keep_closed = keep_closed
        self.violations: list[Violation] = []
        self._packets: dict = {}  # (context, seq) -> _Packet, open ones
        self._last_seq: dict = {}  # context -> highest seq created
        self._hwqueues: dict = {}  # hwqueue -> deque of open _Packet, in progress-id order
        self._last_progress: dict = {}  # hwqueue -> highest progress id submitted
        self._done: dict = {}  # node -> deque of packets whose DMA completed, not yet retired, in order
        self.lost = 0  # items reported lost (their violation said so); no longer tracked
        self._frames: dict = {}  # (context, seq) -> _Frame, pending ones
        self._closed: OrderedDict = OrderedDict()  # (what, key) -> history of an ended item
        self._evictions_open = 0  # evictions queued at this instant, waiting for their paging packet
        self._eviction_t = -1
        self._eviction_history: list = []
        self.per_context: dict = {}  # context -> [created, completed, cancelled, aborted]
        # The counts (a QueuePacketStop's status counts under its own name, for speed).
        self._plain = _zero("created", "Completed", "Cancelled", "Aborted", "resubmitted")
        self._paging = _zero("created", "Completed", "Cancelled", "Aborted", "resubmitted", "evictions")
        self._fences = _zero("created", "Completed", "Cancelled", "Aborted")
        self._dma = _zero("created", "completed", "preempted", "reset", "aborted")
        self._presents = _zero("created", "displayed", "dropped")
        self._handlers = {
            "QueuePacketStart": self._queue_start, "QueuePacketStop": self._queue_stop,
            "DmaPacketQueued": self._dma_queued, "DmaPacketStart": self._dma_start, "DmaPacketStop": self._dma_stop,
            "Present": self._present, "Flip": self._flip, "Displayed": self._shown, "Dropped": self._shown,
            "EvictAllocation": self._evict,
        }

    # -- feeding -------------------------------------------------------------------------------------
    def emit(self, t: int, event: str, fields: dict) -> None:
        """Read one event (any other than the ledger's :data:`KINDS` is ignored).

        Every run calls this some five times a packet, so the usual case of the software
        scheduler's packet events (every rule holds) is taken here in line; anything else goes to
        the event's handler, which checks every rule and reports what breaks."""
        if event == "DmaPacketStart":
            p = self._packets.get((fields["context"], fields["seq"]))
            if p is not None and p.dma == _QUEUED and fields["fence"] == p.fence:
                p.history.append((t, event, fields))
                p.dma = _STARTED
                return
        elif event == "DmaPacketStop":
            p = self._packets.get((fields["context"], fields["seq"]))
            if p is not None and p.dma == _STARTED and fields["status"] == "Completed" and fields["fence"] == p.fence:
                p.history.append((t, event, fields))
                p.dma = _DONE
                p.node = node = fields["node"]
                done = self._done.get(node)
                if done is None:
                    done = self._done[node] = deque()
                done.append(p)
                self._dma["completed"] += 1
                return
        elif event == "QueuePacketStop":
            key = (fields["context"], fields["seq"])
            p = self._packets.get(key)
            if p is not None and p.dma == _DONE and fields["status"] == "Completed" and not p.hwqueue:
                done = self._done[p.node]
                if done[0] is p:
                    p.history.append((t, event, fields))
                    done.popleft()
                    p.group["Completed"] += 1
                    p.counts[1] += 1
                    del self._packets[key]
                    if self.keep_closed:
                        closed = self._closed
                        closed[("packet", key)] = p.history
                        if len(closed) > self.keep_closed:
                            closed.popitem(last=False)
                    return
        elif event == "DmaPacketQueued":
            p = self._packets.get((fields["context"], fields["seq"]))
            if p is not None and p.dma == _NONE:
                p.history.append((t, event, fields))
                p.dma = _QUEUED
                p.fence = fields["fence"]
                p.submissions = 1
                self._dma["created"] += 1
                return
        h = self._handlers.get(event)
        if h is not None:
            h(t, event, fields)

    # -- the model's own feed ---------------------------------------------------------------------
    # A live run calls these at its transition points, with the values the event would carry (in
    # its fields' order): no event dictionary is built for the ledger. Each takes the usual case in
    # line and keeps the event in the packet's history as a flat tuple ``(t, NAMES, *values)``,
    # made into ``(t, event, fields)`` only when a violation shows it (ledgerreport.Violation);
    # anything else is the event, built as a dictionary, handed to the handler that :meth:`emit`
    # uses, so the rules checked and the messages are the same whichever way an event comes.

    def queue_start(self, t: int, context: int, process: int, node: int, seq: int, kind: str, queued: int,
                    hwqueue: int = 0, progress_id: int = 0) -> None:
        """``QueuePacketStart``: a packet enters its context's queue (a hardware queue's with
        ``hwqueue`` and its ``progress_id``)."""
        key = (context, seq)
        if not hwqueue and not self._evictions_open and seq > self._last_seq.get(context, 0) \
                and key not in self._packets:
            # The usual case of _open, in line: a software-scheduled packet, created once.
            self._last_seq[context] = seq
            p = _Packet(context, seq, kind, 0, progress_id,
                        [(t, _E_QSTART, context, process, node, seq, kind, queued, 0, progress_id)])
            self._packets[key] = p
            group = self._paging if kind == "paging" else self._plain
            group["created"] += 1
            counts = self.per_context.get(context)
            if counts is None:
                counts = self.per_context[context] = [0, 0, 0, 0]
            counts[0] += 1
            p.counts = counts
            p.group = group
            return
        self._open(t, context, seq, kind, hwqueue, progress_id,
                   (t, _E_QSTART, context, process, node, seq, kind, queued, hwqueue, progress_id))

    def dma_queued(self, t: int, context: int, node: int, fence: int, kind: str, seq: int, depth: int) -> None:
        """``DmaPacketQueued``: DxgkDdiSubmitCommand accepted the packet."""
        p = self._packets.get((context, seq))
        if p is not None and p.dma == _NONE:
            p.history.append((t, _E_DQUEUED, context, node, fence, kind, seq, depth))
            p.dma = _QUEUED
            p.fence = fence
            p.submissions = 1
            self._dma["created"] += 1
            return
        self._dma_queued(t, "DmaPacketQueued", {"context": context, "node": node, "fence": fence, "kind": kind,
                                                "seq": seq, "depth": depth})

    def dma_start(self, t: int, context: int, node: int, fence: int, kind: str, seq: int, resubmission: int) -> None:
        """``DmaPacketStart``: the packet reached the bottom of its node's hardware queue."""
        p = self._packets.get((context, seq))
        if p is not None and p.dma == _QUEUED and fence == p.fence:
            p.history.append((t, _E_DSTART, context, node, fence, kind, seq, resubmission))
            p.dma = _STARTED
            return
        self._dma_start(t, "DmaPacketStart", {"context": context, "node": node, "fence": fence, "kind": kind,
                                              "seq": seq, "resubmission": resubmission})

    def dma_stop(self, t: int, context: int, node: int, fence: int, kind: str, seq: int, status: str) -> None:
        """``DmaPacketStop``: the DMA submission completed, or was preempted, reset or aborted."""
        p = self._packets.get((context, seq))
        if p is not None and p.dma == _STARTED and status == "Completed" and fence == p.fence:
            p.history.append((t, _E_DSTOP, context, node, fence, kind, seq, status))
            p.dma = _DONE
            p.node = node
            done = self._done.get(node)
            if done is None:
                done = self._done[node] = deque()
            done.append(p)
            self._dma["completed"] += 1
            return
        self._dma_stop(t, "DmaPacketStop", {"context": context, "node": node, "fence": fence, "kind": kind,
                                            "seq": seq, "status": status})

    def queue_stop(self, t: int, context: int, node: int, fence: int, kind: str, seq: int, status: str,
                   hwqueue: int = 0) -> None:
        """``QueuePacketStop``: the packet is retired (``Completed``), ``Cancelled`` or ``Aborted``."""
        key = (context, seq)
        p = self._packets.get(key)
        if p is not None and status == "Completed":
            if p.hwqueue:
                q = self._hwqueues[p.hwqueue]
                ok = q[0] is p and fence == p.progress_id
                if ok:
                    q.popleft()
                    self._fences["Completed"] += 1
            else:
                ok = p.dma == _DONE
                if ok:
                    done = self._done[p.node]
                    ok = done[0] is p
                    if ok:
                        done.popleft()
            if ok:
                history = p.history
                history.append((t, _E_QSTOP, context, node, fence, kind, seq, status, hwqueue))
                p.group["Completed"] += 1
                p.counts[1] += 1
                del self._packets[key]
                if self.keep_closed:
                    closed = self._closed
                    closed[("packet", key)] = history
                    if len(closed) > self.keep_closed:
                        closed.popitem(last=False)
                return
        self._queue_stop(t, "QueuePacketStop", {"context": context, "node": node, "fence": fence, "kind": kind,
                                                "seq": seq, "status": status, "hwqueue": hwqueue})

    def present(self, t: int, context: int, process: int, seq: int, mode: str, flip: int, interval: int,
                source: int, width: int, height: int, cpu_start: int) -> None:
        """``Present``: a present entered the scheduler."""
        key = (context, seq)
        if key not in self._frames:
            self._frames[key] = _Frame(bool(flip), [(t, _E_PRESENT, context, process, seq, mode, flip, interval,
                                                     source, width, height, cpu_start)])
            self._presents["created"] += 1
            return
        self._present(t, "Present", _fields(_E_PRESENT, (context, process, seq, mode, flip, interval, source, width,
                                                         height, cpu_start)))

    def flip(self, t: int, context: int, seq: int, fence: int, source: int, interval: int, no_wait: int,
             surface: int) -> None:
        """``Flip``: the flip of a present went to the driver (or the display's flip queue)."""
        fr = self._frames.get((context, seq))
        if fr is not None and fr.flip:
            fr.history.append((t, _E_FLIP, context, seq, fence, source, interval, no_wait, surface))
            return
        self._flip(t, "Flip", _fields(_E_FLIP, (context, seq, fence, source, interval, no_wait, surface)))

    def displayed(self, t: int, source: int, context: int, seq: int, fence: int, displayed: int, latency: int) -> None:
        """``Displayed``: a present was shown."""
        key = (context, seq)
        fr = self._frames.pop(key, None)
        if fr is not None:
            fr.history.append((t, _E_DISPLAYED, source, context, seq, fence, displayed, latency))
            self._presents["displayed"] += 1
            self._remember("present", key, fr.history)
            return
        self._shown(t, "Displayed", _fields(_E_DISPLAYED, (source, context, seq, fence, displayed, latency)))

    def dropped(self, t: int, source: int, context: int, seq: int, fence: int) -> None:
        """``Dropped``: a present will never be shown."""
        key = (context, seq)
        fr = self._frames.pop(key, None)
        if fr is not None:
            fr.history.append((t, _E_DROPPED, source, context, seq, fence))
            self._presents["dropped"] += 1
            self._remember("present", key, fr.history)
            return
        self._shown(t, "Dropped", _fields(_E_DROPPED, (source, context, seq, fence)))

    def evict(self, t: int, allocation: int, device: int, process: int, size: int, segment: int, reason: str,
              content: str) -> None:
        """``EvictAllocation``: VidMm evicts an allocation (its paging packet follows at this instant)."""
        self._paging["evictions"] += 1
        self._evictions_open += 1
        self._eviction_t = t
        self._eviction_history.append((t, _E_EVICT, allocation, device, process, size, segment, reason, content))

    def feed(self, events) -> None:
        """Read a log's events (dicts as :func:`wddmsim.trace.read_events` gives them)."""
        emit = self.emit
        for e in events:
            fields = {k: v for k, v in e.items() if k not in ("t", "event")}
            emit(e.get("t", 0), e.get("event"), fields)

    # -- the end --------------------------------------------------------------------------------------
    def check_now(self, t: int, held: set | None = None, partial: bool = False) -> list[Violation]:
        """Every violation found so far, and, given ``held`` (the ``(context, seq)`` of every packet
        the model still holds), each packet the ledger has in flight that the model no longer holds
        or the other way round. What is open is in flight, never a violation by itself: a run's end
        time, a bug check and an early stop all leave work in flight. ``partial``: the events stop
        where the run was cut (a bug check, a partial log), maybe between an eviction and its
        paging packet. The ledger goes on."""
        found = list(self.violations)
        if self._evictions_open and not partial:
            found.append(Violation(self._eviction_t, "eviction", f"{self._evictions_open} eviction(s) queued with no "
                                   f"paging packet queued at the same instant", self._eviction_history))
        if held is not None:
            mine = set(self._packets)
            # A run cut by a bug check may have stopped inside a transition (a packet taken from
            # its queue, the DDI call that hands it on failing): the model no longer holds it
            # and no event says where it went. Only the other direction holds then.
            for key in ([] if partial else sorted(mine - held)):
                found.append(Violation(t, _packet_name(*key), "in flight by the ledger, but the model no longer holds "
                                       "it", self._packets[key].history))
            for key in sorted(held - mine):
                found.append(Violation(t, _packet_name(*key), "held by the model, but the ledger has it ended or "
                                       "never created", self._ended("packet", key) or []))
        return found

    def summary(self) -> dict:
        """The totals per item kind as of now (the run summary's ``ledger``): what is open counts
        as in flight (``pending`` for presents)."""
        def stops(c: dict, *more) -> dict:
            return {"created": c["created"], "completed": c["Completed"], "cancelled": c["Cancelled"],
                    "aborted": c["Aborted"], **{k: c[k] for k in more}, "in_flight": 0}

        out = {"packets": stops(self._plain, "resubmitted"), "paging": stops(self._paging, "resubmitted"),
               "dma_submissions": {**self._dma, "in_flight": 0}, "presents": {**self._presents, "pending": 0},
               "progress_fences": stops(self._fences)}
        out["paging"]["evictions"] = self._paging["evictions"]
        for p in self._packets.values():
            out["paging" if p.kind == "paging" else "packets"]["in_flight"] += 1
            if p.hwqueue:
                out["progress_fences"]["in_flight"] += 1
            if p.dma == _QUEUED or p.dma == _STARTED:
                out["dma_submissions"]["in_flight"] += 1
        out["presents"]["pending"] = len(self._frames)
        return out

    def open_items(self) -> list[str]:
        """The items still open (in flight), named, in creation order: packets, then presents."""
        return [_packet_name(*k) for k in self._packets] + [_present_name(*k) for k in self._frames]


class _NoLedger(Ledger):
    """A ledger that keeps nothing: ``System(_ledger=False)``, for benchmarks/logcost.py alone (the
    ledger's cost is that run's time against the usual one's). Every run of the product keeps the
    real one."""

    def _skip(self, *args) -> None:
        pass

    emit = queue_start = dma_queued = dma_start = dma_stop = queue_stop = _skip
    present = flip = displayed = dropped = evict = _skip


class KindsFilter:
    """The sink the model sees when the run's sink declares the events it reads (``kinds``): only
    those reach it. ``kinds`` and ``raw_args`` are the sink's. (The ledger is fed apart, by direct
    calls: :class:`Ledger`.)"""

    def __init__(self, sink):
        self.sink = sink
        self.kinds = frozenset(sink.kinds)
        self.raw_args = getattr(sink, "raw_args", False)
        self._sink = sink.emit

    @classmethod
    def around(cls, sink):
        """``sink`` as the model should see it: itself, unless it declares ``kinds`` (None: None)."""
        if sink is None or getattr(sink, "kinds", None) is None:
            return sink
        return cls(sink)

    def emit(self, t: int, event: str, fields: dict) -> None:
        """Hand one event to the sink if it wants it."""
        if event in self.kinds:
            self._sink(t, event, fields)
