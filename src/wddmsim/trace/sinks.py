"""Event sinks: JSON Lines to a file (streamed, so memory does not grow with the run), or a list
in memory for tests.

Every line is one JSON object ``{"t": <ns>, "event": <name>, ...fields}`` with keys in the order
emitted. The first line is ``LogStart`` with ``format``, ``version``, the scenario name and seed.

Spec: docs/events.md.
"""

from __future__ import annotations

import json
from typing import IO

EVENTS_FORMAT = "wddmsim-events"
EVENTS_VERSION = 1

_dumps = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode


class ListSink:
    """Keeps events as dicts (tests, small runs)."""

    def __init__(self):
        self.events: list[dict] = []

    def emit(self, t: int, event: str, fields: dict) -> None:
        rec = {"t": t, "event": event}
        rec.update(fields)
        self.events.append(rec)

    def of(self, *names: str) -> list[dict]:
        """Events whose name is one of ``names``."""
        return [e for e in self.events if e["event"] in names]


class JsonlSink:
    """Streams events to a file as JSON Lines."""

    def __init__(self, target: str | IO[str]):
        if isinstance(target, str):
            self._file = open(target, "w", encoding="utf-8")
            self._owned = True
        else:
            self._file = target
            self._owned = False
        self._write = self._file.write
        self.count = 0

    def emit(self, t: int, event: str, fields: dict) -> None:
        rec = {"t": t, "event": event}
        rec.update(fields)
        self._write(_dumps(rec))
        self._write("\n")
        self.count += 1

    def close(self) -> None:
        if self._owned:
            self._file.close()
        else:
            self._file.flush()


def read_events(path: str, typed: bool = False) -> list:
    """Read a JSON Lines event log back: a list of dicts, or with ``typed`` the typed records of
    :mod:`wddmsim.trace.records` (one class per event, fields as attributes)."""
    with open(path, encoding="utf-8") as f:
        events = [json.loads(line) for line in f if line.strip()]
    if typed:
        from .records import record

        return [record(e) for e in events]
    return events


class TeeSink:
    """Sends every event to several sinks."""

    def __init__(self, *sinks):
        self.sinks = sinks

    def emit(self, t: int, event: str, fields: dict) -> None:
        for s in self.sinks:
            s.emit(t, event, fields)

    def close(self) -> None:
        """Close the sinks that can be closed (files)."""
        for s in self.sinks:
            close = getattr(s, "close", None)
            if close is not None:
                close()
