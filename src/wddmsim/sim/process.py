"""Events and generator processes: readable sequential flows on top of the timer heap.

A process is a generator. It yields what it waits for and the kernel resumes it when that
happens:

- ``yield 1_000`` sleeps 1000 ns;
- ``yield event`` waits until the :class:`Event` is triggered and receives its value;
- ``yield other_process`` waits until that process ends and receives its return value.

A process resumes at the IRQL class it was started with (PASSIVE_LEVEL for user threads), at the
instant its wait ended, after what was already scheduled for that instant. An exception escaping a
process propagates out of :meth:`Simulator.run`, so a broken flow is never lost.
"""

from __future__ import annotations

from typing import Any, Callable, Generator, Protocol

from .irql import PASSIVE

_PENDING = object()


class Scheduler(Protocol):
    """What events and processes need of the simulator (:class:`~wddmsim.sim.kernel.Simulator`,
    which starts them): a callback at this instant, or after a delay, at an IRQL class."""

    def soon(self, callback: Callable, arg: Any = ..., irql: int = ...) -> object: ...

    def after(self, delay: int, callback: Callable, arg: Any = ..., irql: int = ...) -> object: ...


class Event:
    """Something that happens once; callbacks and waiting processes run when it is triggered.

    :meth:`succeed` triggers it now with a value; waiters resume at this instant, in the order
    they started waiting, each through the timer heap (so a trigger never runs a waiter inside
    the caller's stack).
    """

    __slots__ = ("sim", "value", "_callbacks")

    def __init__(self, sim: Scheduler):
        self.sim = sim
        self.value: Any = _PENDING
        self._callbacks: list[Callable[[Any], None]] | None = []

    @property
    def triggered(self) -> bool:
        return self.value is not _PENDING

    def succeed(self, value: Any = None) -> "Event":
        """Trigger the event with ``value``. Triggering twice is an error."""
        if self.value is not _PENDING:
            raise RuntimeError("event already triggered")
        self.value = value
        callbacks, self._callbacks = self._callbacks, None
        for cb in callbacks:
            self.sim.soon(cb, value, PASSIVE)
        return self

    def add_callback(self, callback: Callable[[Any], None]) -> None:
        """Call ``callback(value)`` when triggered (at once, through the heap, if it already is)."""
        if self._callbacks is None:
            self.sim.soon(callback, self.value, PASSIVE)
        else:
            self._callbacks.append(callback)


class SimProcess(Event):
    """A generator driven by the kernel; as an :class:`Event` it triggers with the return value.
    (A flow of the simulation, not an OS process: those are ``wddmsim.dxgkrnl.objects.Process``.)"""

    __slots__ = ("_gen", "irql", "name")

    def __init__(self, sim: Scheduler, generator: Generator, irql: int = PASSIVE, name: str = ""):
        super().__init__(sim)
        self._gen = generator
        self.irql = irql
        self.name = name
        sim.soon(self._resume, None, irql)

    def _resume(self, value: Any) -> None:
        try:
            target = self._gen.send(value)
        except StopIteration as stop:
            self.succeed(stop.value)
            return
        if type(target) is int:
            if target < 0:
                raise ValueError(f"process {self.name or self._gen!r} slept a negative time {target}")
            self.sim.after(target, self._resume, None, self.irql)
        elif isinstance(target, Event):
            target.add_callback(self._wake)
        else:
            raise TypeError(f"process {self.name or self._gen!r} yielded {target!r}; expected ns or an Event")

    def _wake(self, value: Any) -> None:
        # Event callbacks arrive at PASSIVE; a process started at another class resumes at its own.
        if self.irql == PASSIVE:
            self._resume(value)
        else:
            self.sim.soon(self._resume, value, self.irql)
