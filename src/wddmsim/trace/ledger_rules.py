"""The packet ledger's rules: each event checked against the lifecycle of the item it is about,
and every broken rule reported as a :class:`~wddmsim.trace.ledgerreport.Violation` with the item's
history (the mixin :class:`LedgerRules` of :class:`~wddmsim.trace.ledger.Ledger`, with the items'
records).

The items and their lifecycles (docs/ledger.md):

- a queue packet (``QueuePacketStart``, keyed by context and ``seq``; render, present and VidMm's
  ``paging`` and ``context_switch`` packets) ends with exactly one ``QueuePacketStop``:
  ``Completed``, ``Cancelled`` or ``Aborted``, or is still in flight when the run ended;
- its DMA submissions to the driver (``DmaPacketQueued``, after ``DxgkDdiSubmitCommand`` returned):
  one at a time, each started at most once (``DmaPacketStart``) and stopped exactly once
  (``DmaPacketStop``); a ``Preempted`` or ``Reset`` one is followed by a new submission of the
  same packet or by its ``QueuePacketStop`` saying why it was dropped; an ``Aborted`` one by its
  ``Aborted`` stop; a ``Completed`` one (which must have started) by its ``Completed`` stop and
  nothing else; a packet is never both completed and cancelled;
- a present (``Present``) is shown (``Displayed``) or ``Dropped`` exactly once, or still pending;
  a ``Flip`` names a flip present not yet shown or dropped;
- a paging operation: VidMm's ``paging`` packets follow the packet rules; each
  ``EvictAllocation`` is carried by a paging packet VidMm queues at the same instant;
- hardware scheduling: each hardware queue's progress fence ids (``QueuePacketStart``
  ``hwqueue``/``progress_id``) rise within the queue, and each completes (``QueuePacketStop``
  ``fence``) exactly once, in the queue's order, and never one that was not submitted.

Each handler here takes an event as ``(t, event, fields)`` and checks every rule about it; the
ledger's feeding methods take the usual case, where every rule holds, in line and hand anything
else to these, so the verdicts and the messages are the same whichever way an event comes. An
item lost to a violation is no longer tracked, so that one loss is one violation.
"""

from __future__ import annotations

from collections import deque

from .ledgerreport import Violation

# DMA states of a packet
_NONE, _QUEUED, _STARTED, _DONE, _TAKEN, _ABORTED = range(6)
_DMA_NAMES = ("never submitted", "queued to the driver", "running", "completed", "taken back", "aborted")


#: QueuePacketStop status -> its place in a context's counts [created, completed, cancelled, aborted]
_STOPS = {"Completed": 1, "Cancelled": 2, "Aborted": 3}


class _Packet:
    __slots__ = ("context", "seq", "kind", "hwqueue", "progress_id", "dma", "fence", "submissions", "history", "node",
                 "counts", "group")

    def __init__(self, context, seq, kind, hwqueue, progress_id, history):
        self.context = context
        self.seq = seq
        self.kind = kind
        self.hwqueue = hwqueue
        self.progress_id = progress_id
        self.dma = _NONE
        self.fence = 0
        self.submissions = 0
        self.history = history
        self.node = 0


class _Frame:
    __slots__ = ("flip", "history")

    def __init__(self, flip, history):
        self.flip = flip
        self.history = history


def _packet_name(ctx, seq) -> str:
    return f"packet {seq} of context {ctx}"


def _present_name(ctx, seq) -> str:
    return f"present {seq} of context {ctx}"


def _fence_name(hwq, progress_id) -> str:
    return f"progress fence {progress_id} of hardware queue {hwq}"


class LedgerRules:
    """Mixin of :class:`~wddmsim.trace.ledger.Ledger`: the handler of each event the ledger reads,
    checking every rule about it (see the module doc)."""

    # state set up by Ledger.__init__: violations, keep_closed, lost, per_context, _packets,
    # _last_seq, _hwqueues, _last_progress, _done, _frames, _closed, the eviction state
    # (_evictions_open, _eviction_t, _eviction_history) and the counts (_plain, _paging, _fences,
    # _dma, _presents)

    def _violate(self, t: int, item: str, message: str, history) -> None:
        self.violations.append(Violation(t, item, message, history))

    def _ended(self, what: str, key) -> list | None:
        return self._closed.get((what, key))

    def _remember(self, what: str, key, history: list) -> None:
        if not self.keep_closed:
            return
        closed = self._closed
        closed[(what, key)] = history
        if len(closed) > self.keep_closed:
            closed.popitem(last=False)

    # -- queue packets --------------------------------------------------------------------------------
    def _queue_start(self, t, event, f) -> None:
        self._open(t, f["context"], f["seq"], f.get("kind", "render"), f.get("hwqueue", 0), f.get("progress_id", 0),
                   (t, event, f))

    def _open(self, t, ctx, seq, kind, hwq, progress_id, entry) -> None:
        """A QueuePacketStart (``entry``, as its history keeps it): the packet is created."""
        key = (ctx, seq)
        packets = self._packets
        if key in packets or seq <= self._last_seq.get(ctx, 0):
            old = packets.get(key)
            hist = old.history if old is not None else (self._ended("packet", key) or [])
            self._violate(t, _packet_name(ctx, seq), "created twice (a second QueuePacketStart)", hist + [entry])
            return
        self._last_seq[ctx] = seq
        if self._evictions_open:
            # VidMm queues an eviction's paging packet at the instant it queues the eviction.
            if kind == "paging":
                self._evictions_open = 0
                self._eviction_history = []
            elif t != self._eviction_t:
                self._eviction_unpaired(t)
        p = _Packet(ctx, seq, kind, hwq, progress_id, [entry])
        packets[key] = p
        group = self._paging if kind == "paging" else self._plain
        group["created"] += 1
        counts = self.per_context.get(ctx)
        if counts is None:
            counts = self.per_context[ctx] = [0, 0, 0, 0]
        counts[0] += 1
        p.counts = counts
        p.group = group
        if hwq:
            self._fences["created"] += 1
            last = self._last_progress.get(hwq, 0)
            if p.progress_id <= last:
                self._violate(t, _fence_name(hwq, p.progress_id),
                              f"progress fence id {p.progress_id} is not above the queue's previous {last}", p.history)
            else:
                self._last_progress[hwq] = p.progress_id
            q = self._hwqueues.get(hwq)
            if q is None:
                q = self._hwqueues[hwq] = deque()
            q.append(p)

    def _missing(self, t, event, f) -> None:
        """An event about a packet the ledger has not open: ended already, or never created."""
        key = (f["context"], f["seq"])
        hist = self._ended("packet", key)
        what = event if event in ("DmaPacketQueued", "DmaPacketStart") else f"{event} {f.get('status')}"
        ended = hist is not None or key[1] <= self._last_seq.get(key[0], 0)
        why = "after the packet ended" if ended else "for a packet never created (no QueuePacketStart)"
        self._violate(t, _packet_name(*key), f"{what} {why}", (hist or []) + [(t, event, f)])

    def _queue_stop(self, t, event, f) -> None:
        key = (f["context"], f["seq"])
        p = self._packets.get(key)
        if p is None:
            self._missing(t, event, f)
            return
        p.history.append((t, event, f))
        status = f["status"]
        ok = True
        if p.hwqueue:
            q = self._hwqueues[p.hwqueue]
            fence = f.get("fence")
            if fence != p.progress_id:
                self._violate(t, _packet_name(*key), f"its QueuePacketStop names progress fence {fence}, it was "
                                                     f"submitted with {p.progress_id}", p.history)
                ok = False
            if status == "Completed":
                while q[0] is not p:
                    # An older buffer of the queue never completed: its completion was lost.
                    lost = q.popleft()
                    self._violate(t, _fence_name(lost.hwqueue, lost.progress_id),
                                  f"never completed, but progress fence {p.progress_id} after it in the same queue "
                                  f"did", lost.history + [(t, event, f)])
                    self._lose(lost)
                q.popleft()
            else:
                q.remove(p)
            pf = self._fences
            if status in pf:
                pf[status] += 1
        else:
            dma = p.dma
            if status == "Completed":
                if dma != _DONE:
                    self._violate(t, _packet_name(*key), f"retired as Completed while its DMA submission is "
                                                         f"{_DMA_NAMES[dma]}", p.history)
                    ok = False
                else:
                    done = self._done[p.node]
                    while done[0] is not p:
                        # The DPC retires a node's completed packets in order: an older one was lost.
                        lost = done.popleft()
                        self._violate(t, _packet_name(lost.context, lost.seq),
                                      f"completed on the GPU but never retired, while packet {p.seq} of context "
                                      f"{p.context} completed after it on node {p.node} and was retired",
                                      lost.history + [(t, event, f)])
                        self._lose(lost)
                    done.popleft()
            elif status == "Cancelled" and dma != _NONE and dma != _TAKEN:
                self._violate(t, _packet_name(*key), f"cancelled while its DMA submission is {_DMA_NAMES[dma]}",
                              p.history)
                ok = False
            elif status == "Aborted" and (dma == _QUEUED or dma == _STARTED or dma == _DONE):
                self._violate(t, _packet_name(*key), f"aborted while its DMA submission is {_DMA_NAMES[dma]}",
                              p.history)
                ok = False
        i = _STOPS.get(status)
        if i is None:
            self._violate(t, _packet_name(*key), f"QueuePacketStop with unknown status {status!r}", p.history)
            ok = False
        else:
            p.group[status] += 1
            p.counts[i] += 1
        del self._packets[key]
        if ok:
            self._remember("packet", key, p.history)

    # -- DMA submissions ------------------------------------------------------------------------------
    def _lose(self, p) -> None:
        """Stop tracking ``p``, reported lost (so that one loss is one violation)."""
        self._packets.pop((p.context, p.seq), None)
        if p.hwqueue:
            q = self._hwqueues.get(p.hwqueue)
            if q is not None and p in q:
                q.remove(p)
        self.lost += 1

    def _dma_queued(self, t, event, f) -> None:
        p = self._packets.get((f["context"], f["seq"]))
        if p is None:
            self._missing(t, event, f)
            return
        p.history.append((t, event, f))
        if p.dma != _NONE and p.dma != _TAKEN:
            self._violate(t, _packet_name(p.context, p.seq),
                          f"submitted to the driver again while its DMA submission is {_DMA_NAMES[p.dma]}", p.history)
            return
        p.dma = _QUEUED
        p.fence = f["fence"]
        p.submissions += 1
        self._dma["created"] += 1
        if p.submissions > 1:
            p.group["resubmitted"] += 1

    def _dma_start(self, t, event, f) -> None:
        p = self._packets.get((f["context"], f["seq"]))
        if p is None:
            self._missing(t, event, f)
            return
        p.history.append((t, event, f))
        if p.dma != _QUEUED or f["fence"] != p.fence:
            self._violate(t, _packet_name(p.context, p.seq),
                          f"DmaPacketStart (fence {f['fence']}) while its DMA submission is {_DMA_NAMES[p.dma]} "
                          f"(fence {p.fence})", p.history)
            return
        p.dma = _STARTED

    def _dma_stop(self, t, event, f) -> None:
        p = self._packets.get((f["context"], f["seq"]))
        if p is None:
            self._missing(t, event, f)
            return
        p.history.append((t, event, f))
        status = f["status"]
        dma = p.dma
        if (dma != _QUEUED and dma != _STARTED) or f["fence"] != p.fence:
            self._violate(t, _packet_name(p.context, p.seq),
                          f"DmaPacketStop {status} (fence {f['fence']}) while its DMA submission is "
                          f"{_DMA_NAMES[dma]} (fence {p.fence})", p.history)
            return
        d = self._dma
        if status == "Completed":
            if dma != _STARTED:
                self._violate(t, _packet_name(p.context, p.seq), "DMA submission completed without a DmaPacketStart",
                              p.history)
            p.dma = _DONE
            p.node = node = f["node"]
            done = self._done.get(node)
            if done is None:
                done = self._done[node] = deque()
            done.append(p)
            d["completed"] += 1
        elif status == "Preempted" or status == "Reset":
            p.dma = _TAKEN
            d["preempted" if status == "Preempted" else "reset"] += 1
        elif status == "Aborted":
            p.dma = _ABORTED
            d["aborted"] += 1
        else:
            self._violate(t, _packet_name(p.context, p.seq), f"DmaPacketStop with unknown status {status!r}",
                          p.history)

    # -- presents -------------------------------------------------------------------------------------
    def _present(self, t, event, f) -> None:
        key = (f["context"], f["seq"])
        entry = (t, event, f)
        if key in self._frames:
            self._violate(t, _present_name(*key), "presented twice", self._frames[key].history + [entry])
            return
        self._frames[key] = _Frame(bool(f.get("flip")), [entry])
        self._presents["created"] += 1

    def _flip(self, t, event, f) -> None:
        key = (f["context"], f["seq"])
        fr = self._frames.get(key)
        if fr is None:
            hist = self._ended("present", key)
            why = "after the present was shown or dropped" if hist is not None else "with no Present before it"
            self._violate(t, _present_name(*key), f"Flip {why}", (hist or []) + [(t, event, f)])
            return
        fr.history.append((t, event, f))
        if not fr.flip:
            self._violate(t, _present_name(*key), "Flip of a present that carries no flip", fr.history)

    def _shown(self, t, event, f) -> None:
        key = (f["context"], f["seq"])
        fr = self._frames.pop(key, None)
        if fr is None:
            hist = self._ended("present", key)
            why = "a second time" if hist is not None else "with no Present before it"
            self._violate(t, _present_name(*key), f"{event} {why}", (hist or []) + [(t, event, f)])
            return
        fr.history.append((t, event, f))
        self._presents["displayed" if event == "Displayed" else "dropped"] += 1
        self._remember("present", key, fr.history)

    # -- paging ---------------------------------------------------------------------------------------
    def _evict(self, t, event, f) -> None:
        self._paging["evictions"] += 1
        self._evictions_open += 1
        self._eviction_t = t
        self._eviction_history.append((t, event, f))

    def _eviction_unpaired(self, t) -> None:
        self._violate(self._eviction_t, "eviction", f"{self._evictions_open} eviction(s) queued with no paging "
                                                    f"packet queued at the same instant", self._eviction_history)
        self._evictions_open = 0
        self._eviction_history = []
