"""The kernel's timer handle and its stop exception, kept in a module of their own.

:mod:`.kernel` is compiled by mypyc where a compiler is present (see ``wddmsim._native``); these
two classes stay interpreted Python in every build: :class:`Timer` subclasses ``list``, which a
compiled class cannot, and :class:`StopSimulation` is subclassed by interpreted code (the bug
check's ``BugCheckStop``), which a compiled class would forbid. :mod:`.kernel` re-exports both.
"""

from __future__ import annotations

__all__ = ["StopSimulation", "Timer"]


class StopSimulation(Exception):
    """Raised by a callback to end :meth:`Simulator.run` at once (a bug check, a stop request)."""


class Timer(list):
    """Handle of one scheduled callback: ``[key, seq, callback, arg]``.

    It is the heap entry itself, so holding it costs nothing extra. :meth:`cancel` makes the
    kernel skip it; ``time`` and ``irql`` say when and at which class it was due.
    """

    __slots__ = ()

    @property
    def time(self) -> int:
        return self[0] >> 2

    @property
    def irql(self) -> int:
        return self[0] & 3

    @property
    def cancelled(self) -> bool:
        return self[2] is None

    def cancel(self) -> None:
        """Do not run this timer. Harmless if it already ran or was cancelled."""
        self[2] = None
