"""The simulator: a heap of timers over integer-nanosecond virtual time.

Time moves only when the kernel pops the next timer: ``now`` jumps to that timer's instant and its
callback runs. Nothing in the model reads a wall clock. Timers due at the same instant run in IRQL
order, the way a Windows CPU would take them: device IRQL (interrupt service routines, MMIO flips)
before DISPATCH_LEVEL (DPCs, DxgkDdiSubmitCommand, DxgkDdiPreemptCommand) before PASSIVE_LEVEL
(DxgkDdiRender, DxgkDdiPatch, user threads); within one class, in the order they were scheduled.
That order is total, so the same scenario and seed always give the same run.

A heap entry is a small list ``[key, seq, callback, arg]`` where ``key = time * 4 + irql``. The
list itself is the :class:`Timer` handle: cancelling clears its callback and the kernel skips it
when it surfaces (lazy deletion keeps both scheduling and cancelling O(log n) / O(1)).

Spec: the IRQL at which Microsoft's reference page of each DDI says it is called.
"""

from __future__ import annotations

from heapq import heappop, heappush
from typing import Any, Callable

from .irql import PASSIVE
from .process import Event, SimProcess
from .streams import make_stream
from .timer import StopSimulation, Timer

__all__ = ["Simulator", "StopSimulation", "Timer"]

_NO_ARG = object()


class Simulator:
    """Virtual time and the timer heap.

    ``seed`` seeds every named random stream (:meth:`stream`). ``now`` is the current instant in
    nanoseconds and ``irql`` the class of the callback running now (PASSIVE_LEVEL between runs).
    """

    __slots__ = ("now", "irql", "seed", "_heap", "_seq", "_streams", "events_run", "exhausted", "last_time")

    def __init__(self, seed: int = 0):
        self.now = 0
        self.irql = PASSIVE
        self.seed = seed
        self._heap: list[Timer] = []
        self._seq = 0
        self._streams: dict[str, Any] = {}
        self.events_run = 0
        #: whether the last :meth:`run` stopped because its ``max_events`` ran out before ``until``
        self.exhausted = False
        #: the virtual time of the last timer run (``now`` may have moved on to a ``run``'s ``until``)
        self.last_time = 0

    # -- scheduling -----------------------------------------------------------------------------
    def at(self, time: int, callback: Callable, arg: Any = _NO_ARG, irql: int = PASSIVE) -> Timer:
        """Run ``callback()`` (or ``callback(arg)``) at absolute ``time`` ns, at ``irql``."""
        if time < self.now:
            raise ValueError(f"cannot schedule in the past: {time} < now {self.now}")
        self._seq += 1
        entry = Timer((time * 4 + irql, self._seq, callback, arg))
        heappush(self._heap, entry)
        return entry

    def after(self, delay: int, callback: Callable, arg: Any = _NO_ARG, irql: int = PASSIVE) -> Timer:
        """Run ``callback`` ``delay`` ns from now (``delay`` >= 0), at ``irql``."""
        if delay < 0:
            raise ValueError(f"negative delay {delay}")
        self._seq += 1
        entry = Timer(((self.now + delay) * 4 + irql, self._seq, callback, arg))
        heappush(self._heap, entry)
        return entry

    def soon(self, callback: Callable, arg: Any = _NO_ARG, irql: int = PASSIVE) -> Timer:
        """Run ``callback`` at this instant, after what is already due now at ``irql``."""
        self._seq += 1
        entry = Timer((self.now * 4 + irql, self._seq, callback, arg))
        heappush(self._heap, entry)
        return entry

    def every(self, start: int, stop: int, interval: int, callback: Callable, arg: Any = _NO_ARG,
              irql: int = PASSIVE) -> int:
        """Run ``callback`` (or ``callback(arg)``) at ``start``, ``start + interval``, ... up to but
        not including ``stop``, at ``irql``; returns how many times it will run.

        Only one timer is in the heap at a time, re-armed as it fires, so a fine period costs no
        memory up front. Each firing still takes its place among timers due at the same instant as
        if all of them had been scheduled by this call, one after the other: their sequence numbers
        are reserved now, so the run is the one the same :meth:`at` calls would give."""
        if interval <= 0:
            raise ValueError(f"interval must be positive, got {interval}")
        if start < self.now:
            raise ValueError(f"cannot schedule in the past: {start} < now {self.now}")
        count = max(0, -(-(stop - start) // interval))
        if not count:
            return 0
        first = self._seq + 1
        self._seq += count
        heap = self._heap

        def fire(k: int) -> None:
            if k + 1 < count:
                heappush(heap, Timer(((start + (k + 1) * interval) * 4 + irql, first + k + 1, fire, k + 1)))
            if arg is _NO_ARG:
                callback()
            else:
                callback(arg)

        heappush(heap, Timer((start * 4 + irql, first, fire, 0)))
        return count

    def process(self, generator) -> SimProcess:
        """Start a generator as a :class:`~wddmsim.sim.process.SimProcess` at this instant."""
        return SimProcess(self, generator)

    def event(self) -> Event:
        """A new untriggered :class:`~wddmsim.sim.process.Event`."""
        return Event(self)

    # -- randomness -----------------------------------------------------------------------------
    def stream(self, name: str):
        """The ``random.Random`` for purpose ``name``, seeded from the run's seed and the name.

        Two runs with the same seed draw the same numbers from the same stream, whatever other
        streams were used in between.
        """
        s = self._streams.get(name)
        if s is None:
            s = self._streams[name] = make_stream(self.seed, name)
        return s

    # -- running --------------------------------------------------------------------------------
    @property
    def pending(self) -> int:
        """Timers still in the heap (cancelled ones included until they surface)."""
        return len(self._heap)

    def peek(self) -> int | None:
        """Time of the next live timer, or None when nothing is scheduled."""
        heap = self._heap
        while heap and heap[0][2] is None:
            heappop(heap)
        return (heap[0][0] >> 2) if heap else None

    def step(self) -> bool:
        """Run the next live timer. False when nothing is left."""
        heap = self._heap
        while heap:
            entry = heappop(heap)
            fn = entry[2]
            if fn is None:
                continue
            key = entry[0]
            self.now = key >> 2
            self.irql = key & 3
            entry[2] = None
            self.events_run += 1
            self.last_time = self.now
            arg = entry[3]
            if arg is _NO_ARG:
                fn()
            else:
                fn(arg)
            self.irql = PASSIVE
            return True
        return False

    def run(self, until: int | None = None, max_events: int | None = None) -> int:
        """Run timers in order until none is left or the next is later than ``until`` ns.

        With ``until`` given, ``now`` ends at ``until`` (if time got that far). A callback may
        raise :class:`StopSimulation` to end the run early. ``max_events``: run at most that many
        timers; when they run out before ``until`` is reached, ``now`` stays at the last timer
        run and :attr:`exhausted` is True (the rest runs on the next call, in the same order).
        Returns ``now``.
        """
        heap = self._heap
        # Sentinels instead of None tests keep the loop's cost per timer what it was.
        limit = -1 if until is None else until * 4 + 3
        budget = -1 if max_events is None else max_events
        count = 0
        self.exhausted = False
        try:
            while heap:
                entry = heap[0]
                if entry[0] > limit >= 0:
                    break
                fn = entry[2]
                if fn is None:
                    heappop(heap)
                    continue
                if count == budget:
                    self.exhausted = True
                    if count:
                        self.last_time = self.now
                    return self.now
                heappop(heap)
                key = entry[0]
                self.now = key >> 2
                self.irql = key & 3
                entry[2] = None
                count += 1
                arg = entry[3]
                if arg is _NO_ARG:
                    fn()
                else:
                    fn(arg)
            if count:
                self.last_time = self.now
            if until is not None and until > self.now:
                self.now = until
            return self.now
        finally:
            self.irql = PASSIVE
            self.events_run += count
