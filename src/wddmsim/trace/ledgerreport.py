"""What the packet ledger (:mod:`wddmsim.trace.ledger`) reports: a :class:`Violation` (one broken
rule, with the offending item's history: its events and their times) and :class:`LedgerError`,
the model bug a run or ``wddmsim check`` fails with (docs/ledger.md).
"""

from __future__ import annotations

import textwrap


__all__ = ["LedgerError", "Violation", "exact_time"]

#: The columns a violation's description is wrapped at (a terminal's, as the summary's tables).
WIDTH = 100


class Violation:
    """One broken ledger rule: ``item`` names the item, ``message`` says what is wrong, ``history``
    is the item's events as ``(t, event, fields)``."""

    __slots__ = ("item", "message", "history", "t")

    def __reduce__(self):
        return (Violation, (self.t, self.item, self.message, self.history))

    def __init__(self, t: int, item: str, message: str, history: list):
        self.t = t
        self.item = item
        self.message = message
        # A live run's ledger keeps an event it was handed by a direct call as a flat tuple
        # ``(t, (event, *names), *values)``: made into ``(t, event, fields)`` here.
        self.history = [e if type(e[1]) is str else (e[0], e[1][0], dict(zip(e[1][1:], e[2:]))) for e in history]

    def describe(self, width: int = WIDTH) -> str:
        """The violation and the item's history, one event a line, each time exact with its unit
        (``1.0083 ms``) and every line wrapped at ``width`` columns."""
        lines = textwrap.wrap(f"{self.item}: {self.message} (at {exact_time(self.t)})", width,
                              subsequent_indent="  ", break_long_words=False, break_on_hyphens=False)
        if self.history:
            lines.append("  its history:")
            for t, event, fields in self.history:
                lines += textwrap.wrap(f"    {exact_time(t):>12}  {event} {_fields_text(fields)}", width,
                                       subsequent_indent=" " * 18, break_long_words=False, break_on_hyphens=False,
                                       drop_whitespace=True)
        else:
            lines.append("  its history is no longer kept (it ended long before)")
        return "\n".join(lines)

    def as_dict(self) -> dict:
        """The violation as JSON data."""
        return {"t": self.t, "item": self.item, "message": self.message,
                "history": [{"t": t, "event": e, **f} for t, e, f in self.history]}


def exact_time(ns: int) -> str:
    """A time in ns, exact, in the unit of its size with as many decimals as it needs: ``0 ns``,
    ``1 µs``, ``1.0083 ms``, ``15.891064 ms``, ``2 s`` (a history's events may be a few hundred ns
    apart, so nothing is rounded)."""
    for scale, unit in ((1_000_000_000, "s"), (1_000_000, "ms"), (1_000, "µs")):
        if abs(ns) >= scale:
            whole, part = divmod(abs(ns), scale)
            digits = f"{part:0{len(str(scale)) - 1}d}".rstrip("0")
            return f"{'-' if ns < 0 else ''}{whole}{'.' + digits if digits else ''} {unit}"
    return f"{ns} ns"


def _fields_text(fields: dict) -> str:
    return " ".join(f"{k}={v}" for k, v in fields.items() if k != "summary")


class LedgerError(Exception):
    """A model bug: the ledger found work the model lost track of (``violations``)."""

    def __init__(self, violations: list[Violation]):
        self.violations = violations
        first = violations[0]
        more = f" (and {len(violations) - 1} more)" if len(violations) > 1 else ""
        super().__init__(f"the model lost track of {first.item}{more}")

    def __reduce__(self):
        return (LedgerError, (self.violations,))  # whole across a sweep's worker processes

    def describe(self) -> str:
        """Every violation with its item's history."""
        return "\n".join(v.describe() for v in self.violations)
