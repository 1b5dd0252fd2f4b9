"""The OS's records of hardware scheduling (WDDM 2.x): a hardware queue with its progress fence
(:class:`HwQueue`), one item of a queue (:class:`Entry`: a buffer, a GPU wait or a queued signal), a
node's view (:class:`HwNode`) and the line of queues a node's ``MaxInFlightHwQueueBuffers`` cap
holds back (:class:`WaitLine`). :mod:`.hwscheduling` and its mixins act on them.

The four priority bands (:data:`BANDS`, lowest first) are those of Microsoft's
DxgkDdiSetupPriorityBands page (idle, normal, focus, realtime); the wait line serves them highest
first, as the GPU would preempt a lower band's buffer for a higher one's anyway.
"""

from __future__ import annotations

from collections import deque

BANDS = ("idle", "normal", "focus", "realtime")
BAND_INDEX = {name: i for i, name in enumerate(BANDS)}
PAGE = 4096


class HwQueue:
    """A hardware queue of one hardware context, with its progress fence."""

    __slots__ = ("handle", "context", "hDriver", "flags", "progress", "last_id", "handed", "pending", "in_flight",
                 "wait_token", "destroyed", "submitted", "completed", "name", "index", "held_until", "key", "in_line")

    def __init__(self, context, index: int, flags: frozenset):
        self.handle = 0
        self.context = context
        self.index = index
        self.name = f"{context.full_name}#{index}"
        self.hDriver = 0
        self.flags = flags  # D3DDDI_CREATEHWQUEUEFLAGS names
        self.progress = None  # MonitoredFence
        self.last_id = 0  # highest HwQueueProgressFenceId accepted from the application
        self.handed = 0  # highest HwQueueProgressFenceId handed to the driver
        self.pending: deque = deque()  # Entry, in submission order
        self.in_flight: deque = deque()  # buffers handed to the driver, oldest first
        self.wait_token = None  # the fence wait holding the head
        self.held_until = 0  # after a released wait: when the OS's submission of the next buffer ends
        self.destroyed = False
        self.submitted = 0
        self.completed = 0
        self.key = (0, 0)  # (node, creation order): the order the OS goes through queues in
        self.in_line = -1  # the band whose line of its node's ``waiting`` it is in, -1: none (no search)


class Entry:
    """One item of a queue: a buffer (``kind`` "buffer"), a GPU wait or a queued signal."""

    __slots__ = ("kind", "progress_id", "va", "size", "private", "seq", "queued", "submitted", "fence",
                 "value", "present", "ran_at")

    def __init__(self, kind: str):
        self.ran_at = None  # when an engine finished its buffer (dxgkrnl/groundtruth.py); None: untracked
        self.kind = kind
        self.progress_id = 0
        self.va = 0
        self.size = 0
        self.private = b""
        self.seq = 0
        self.queued = 0
        self.submitted = -1
        self.fence = None
        self.value = 0
        self.present = None  # a present blt: its Packet record for the display statistics


class WaitLine:
    """The queues a node's MaxInFlightHwQueueBuffers cap holds back, one line per priority band: a
    freed slot goes to the first queue of the highest band waiting (arrival order within a band),
    so a REALTIME queue's buffer is not held behind lower bands' buffers the GPU would preempt
    anyway. A queue's ``in_line`` is the band index it waits under, -1 when not in line."""

    __slots__ = ("lines", "count")

    def __init__(self):
        self.lines = tuple(deque() for _ in BANDS)
        self.count = 0

    def __bool__(self) -> bool:
        return self.count > 0

    def __len__(self) -> int:
        return self.count

    def append(self, q) -> None:
        band = BAND_INDEX[q.context.band]
        self.lines[band].append(q)
        q.in_line = band
        self.count += 1

    def remove(self, q) -> None:
        self.lines[q.in_line].remove(q)
        q.in_line = -1
        self.count -= 1

    def popleft(self):
        """The first queue of the highest band waiting."""
        for line in reversed(self.lines):
            if line:
                q = line.popleft()
                q.in_line = -1
                self.count -= 1
                return q
        raise IndexError("no queue waits")

    def rebanded(self, q) -> None:
        """``q``'s context changed band: it waits at the back of its new band's line."""
        if q.in_line >= 0 and q.in_line != BAND_INDEX[q.context.band]:
            self.remove(q)
            self.append(q)


class HwNode:
    """The OS's view of one node under hardware scheduling."""

    __slots__ = ("ordinal", "max_in_flight", "in_flight", "fence_release", "waiting", "queues", "timer",
                 "resetting", "resets", "progress_t", "granted")

    def __init__(self, ordinal: int, max_in_flight: int, fence_release: bool):
        self.ordinal = ordinal
        self.max_in_flight = max_in_flight  # 0: unlimited
        self.in_flight = 0
        self.fence_release = fence_release
        self.waiting = WaitLine()  # queues held by the in-flight cap, in line by band
        self.granted = 0  # freed slots kept for waiting queues until the OS's submission into them
        self.queues: list[HwQueue] = []
        self.timer = None  # the watchdog (hwtdr)
        self.resetting = False  # between DxgkDdiResetHwEngine and DxgkDdiResumeHwEngine
        self.resets = 0
        self.progress_t = 0  # when a buffer of the node last completed (or the node became busy)
