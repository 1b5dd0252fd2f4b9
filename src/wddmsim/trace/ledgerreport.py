"""What the packet ledger (:mod:`wddmsim.trace.ledger`) reports: a :class:`Violation` (one broken
rule, with the offending item's history: its events and their times) and :class:`LedgerError`,
the model bug a run or ``wddmsim check`` fails with (docs/ledger.md).
"""

from __future__ import annotations

__all__ = ["LedgerError", "Violation"]


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

    def describe(self) -> str:
        """The violation and the item's history, one event a line."""
        lines = [f"{self.item}: {self.message} (at {self.t} ns)"]
        if self.history:
            lines.append("  its history:")
            lines.extend(f"    {t:>14} ns  {event} {_fields_text(fields)}" for t, event, fields in self.history)
        else:
            lines.append("  its history is no longer kept (it ended long before)")
        return "\n".join(lines)

    def as_dict(self) -> dict:
        """The violation as JSON data."""
        return {"t": self.t, "item": self.item, "message": self.message,
                "history": [{"t": t, "event": e, **f} for t, e, f in self.history]}


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
