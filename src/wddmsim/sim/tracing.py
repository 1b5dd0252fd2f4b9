"""Whether an event sink wants one kind of event.

A sink handed to the model may declare the events it reads in a ``kinds`` attribute (a set of event
names; None or no attribute: every event). The places that emit a costly event (a DDI call's
structure, an interrupt's arguments) ask :func:`wants` first, so a run whose only reader is the
packet ledger (:mod:`wddmsim.trace.ledger`) builds none of them.
"""

from __future__ import annotations

__all__ = ["wants"]


def wants(trace, event: str) -> bool:
    """True when ``trace`` (a sink, or None: no sink) wants events named ``event``."""
    if trace is None:
        return False
    kinds = getattr(trace, "kinds", None)
    return kinds is None or event in kinds
