"""How an event log ends: complete, or partial and why.

A run's log ends with one ``LogEnd`` line whose ``reason`` says why the run stopped. Two reasons
mean the run did what it was asked: ``time`` (it reached its end time) and ``bugcheck`` (it stopped
the way Windows would). The others mean it stopped early, with everything it had written still
valid (the summary, the trace and the report cover what ran): ``interrupted`` (SIGINT or SIGTERM),
``max_events`` and ``max_log_bytes`` (a budget the command line set ran out). A log with no
``LogEnd`` at all was cut short (the process was killed, the disk filled): what it holds is valid
up to its last whole line, and it carries no summary.

``wddmsim trace``, ``wddmsim report`` and ``wddmsim check`` read a log's ending with
:func:`log_ending` and say when it is partial.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..util.units import time_text

__all__ = ["COMPLETE_REASONS", "PARTIAL_REASONS", "LogEnding", "log_ending"]

#: LogEnd reasons of a run that did what it was asked, and what each means.
COMPLETE_REASONS = {
    "time": "the run reached its end time",
    "bugcheck": "the run stopped with a bug check",
}

#: LogEnd reasons of a run that stopped early, and what each means.
PARTIAL_REASONS = {
    "interrupted": "the run was interrupted (SIGINT or SIGTERM) before its end time",
    "max_events": "the run stopped when its --max-events budget ran out",
    "max_log_bytes": "the run stopped when its --max-log-bytes budget ran out",
}


@dataclass(frozen=True)
class LogEnding:
    """The end of one event log: ``reason`` is its ``LogEnd`` reason (None: the log has no
    ``LogEnd``, it was cut short), ``t`` the virtual time of its last event."""

    reason: str | None
    t: int | None

    @property
    def partial(self) -> bool:
        """True when the log does not cover the whole run it was asked for."""
        return self.reason not in COMPLETE_REASONS

    def describe(self) -> str:
        """One sentence saying how the log ends, for a person."""
        at = "" if self.t is None else f" at {time_text(self.t)} of virtual time"
        if self.reason is None:
            return f"the log has no LogEnd line: the run was cut short{at} and the log covers only what ran until then"
        text = COMPLETE_REASONS.get(self.reason) or PARTIAL_REASONS.get(self.reason)
        if text is None:
            return f"the log ends with an unknown reason {self.reason!r}{at}"
        if self.partial:
            return f"partial log: {text}{at}; everything in it covers only what ran until then"
        return f"{text}{at}"


def log_ending(events: list[dict]) -> LogEnding:
    """How ``events`` (a log read back as dicts) ends."""
    if not events:
        return LogEnding(None, None)
    last = events[-1]
    t = last.get("t") if isinstance(last.get("t"), int) else None
    if last.get("event") != "LogEnd":
        return LogEnding(None, t)
    reason = last.get("reason")
    return LogEnding(reason if isinstance(reason, str) else None, t)
