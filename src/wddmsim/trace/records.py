"""The event log read back: its events as dicts or typed records, and flat rows for a data frame.

:func:`read_events` reads a JSON Lines log, as :mod:`wddmsim.trace.sinks` writes it, back into
dicts; :func:`read_events_cut` reads one whose last line was cut mid-way up to its last whole line. ``EVENT_FIELDS`` is the schema of format ``wddmsim-events`` version 1 in code: each event's fields,
exactly as docs/events.md lists them (``tests/test_events_doc.py`` holds code, document and model
to each other). :func:`read_records` gives a log back as one record class per event, each with
``t``, ``event`` and its fields as attributes (``getattr(r, "for")`` for the one field named by a
Python keyword). :func:`rows` flattens events into dicts of scalars (nested members as dotted
keys, lists as JSON text) that ``pandas.DataFrame(rows(...))`` takes in one call; nothing here
needs pandas.

Spec: docs/events.md.
"""

from __future__ import annotations

import json
from typing import Iterable

from ..util.inputbound import LOG_LINE_MAX, size_text

EVENT_FIELDS: dict[str, tuple[str, ...]] = {
    "LogStart": ("format", "version", "scenario", "seed"),
    "AdapterStart": ("ddi_version", "multi_engine_aware", "nodes", "segments"),
    "ProcessCreate": ("process", "name", "priority_class"),
    "ContextCreate": ("context", "process", "device", "node", "name", "priority", "hContext"),
    "DdiCall": ("name", "irql", "args", "status"),
    "Callback": ("name", "irql", "args"),
    "QueuePacketStart": ("context", "process", "node", "seq", "kind", "queued", "hwqueue", "progress_id"),
    "DmaPacketQueued": ("context", "node", "fence", "kind", "seq", "depth"),
    "DmaPacketStart": ("context", "node", "fence", "kind", "seq", "resubmission"),
    "DmaPacketStop": ("context", "node", "fence", "kind", "seq", "status"),
    "PreemptRequest": ("node", "fence", "reason", "running", "for", "queued"),
    "QueuePacketStop": ("context", "node", "fence", "kind", "seq", "status", "hwqueue"),
    "SwapChainCreate": ("context", "process", "source", "address", "runtime", "swap_effect", "sync_interval",
                        "allows_tearing", "present_flags", "fullscreen"),
    "Present": ("context", "process", "seq", "mode", "flip", "interval", "source", "width", "height", "cpu_start"),
    "Flip": ("context", "seq", "fence", "source", "interval", "no_wait", "surface"),
    "MmioFlip": ("source", "context", "seq", "fence", "surface", "interval", "immediate", "status"),
    "FlipReplaced": ("source", "context", "seq", "fence", "by_context", "by_seq", "by_fence"),
    "VSync": ("source", "address"),
    "PlaneVSync": ("source", "layer"),
    "MpoFlip": ("source", "layer", "present_id", "surface", "enabled", "immediate", "status"),
    "PlaneDisplayed": ("source", "layer", "present_id", "latency"),
    "PlaneDropped": ("source", "layer", "present_id"),
    "HwFlip": ("source", "layer", "present_id", "context", "seq", "interval", "target", "target_ns", "expected",
               "status", "drain"),
    "HwFlipCancel": ("source", "layer", "requested", "cancelled", "last"),
    "HwFlipLog": ("source", "layer", "present_id", "shown"),
    "HwFlipTarget": ("source", "layer", "present_id"),
    "PlaneAssign": ("source", "layer", "context"),
    "PlaneRelease": ("source", "layer", "context", "reason"),
    "VSyncControl": ("enabled", "reason", "status"),
    "Doorbell": ("engine", "wptr", "rptr", "ring_used", "ring_size"),
    "Displayed": ("source", "context", "seq", "fence", "displayed", "latency"),
    "Dropped": ("source", "context", "seq", "fence"),
    "PageFault": ("node", "fence", "flags", "address", "hwqueue"),
    "TdrDetected": ("node", "reason", "fence", "context"),
    "EngineReset": ("node", "last_aborted_fence", "device", "group_of"),
    "AdapterStop": ("pending", "on_hardware"),
    "AdapterReset": ("node", "promoted", "device"),
    "EvictAllocation": ("allocation", "device", "process", "size", "segment", "reason", "content"),
    "VideoMemoryBudget": ("process", "budget"),
    "OfferAllocations": ("device", "allocations"),
    "ReclaimAllocations": ("device", "allocations", "results"),
    "LiveDump": ("code", "name", "p4"),
    "ContextDestroy": ("context", "in_flight"),
    "ContextPriority": ("context", "priority", "previous"),
    "ProcessPriorityClass": ("process", "priority_class", "previous"),
    "ScenarioCall": ("api", "process", "status", "issued"),
    "DeviceError": ("device", "process", "reason"),
    "HwQueueCreate": ("hwqueue", "context", "node", "progress_fence", "band", "flags", "hHwQueue", "hHwContext"),
    "HwContextState": ("engine", "context", "state", "queue"),
    "HwQueueMap": ("engine", "queue", "context", "slot", "rptr", "wptr"),
    "HwQueueUnmap": ("engine", "queue", "context", "slot", "rptr", "wptr"),
    "HwEngineReset": ("node", "reason", "contexts"),
    "FenceSignal": ("fence", "value", "source", "rewind"),
    "FenceWait": ("fence", "value", "waiter"),
    "FenceWaitDone": ("fence", "value", "waiter", "status", "waited_ns"),
    "NativeFenceMonitoredValue": ("fence", "monitored", "current"),
    "NativeFenceSignaled": ("node", "fences", "all"),
    "VerifierViolation": ("rule", "name", "message"),
    "BugCheck": ("code", "name", "p1", "p2", "p3", "p4", "rule", "message"),
    "LogEnd": ("reason", "summary"),
}


class EventRecord:
    """One event: ``t`` (virtual ns), ``event`` (its name) and its fields as attributes."""

    __slots__ = ("t", "event", "fields")
    FIELDS: tuple[str, ...] = ()

    def __init__(self, t: int, event: str, fields: dict):
        self.t = t
        self.event = event
        self.fields = fields

    def __getattr__(self, name: str):
        try:
            return self.fields[name]
        except KeyError:
            raise AttributeError(f"{self.event} has no field {name!r}") from None

    def as_dict(self) -> dict:
        return {"t": self.t, "event": self.event, **self.fields}

    def __eq__(self, other) -> bool:
        return isinstance(other, EventRecord) and self.as_dict() == other.as_dict()

    def __repr__(self) -> str:
        inner = ", ".join(f"{k}={v!r}" for k, v in self.fields.items())
        return f"{self.event}(t={self.t}, {inner})"


RECORD_TYPES: dict[str, type] = {
    name: type(name, (EventRecord,), {"__slots__": (), "FIELDS": fields,
                                      "__doc__": f"A ``{name}`` event: fields {', '.join(fields)}."})
    for name, fields in EVENT_FIELDS.items()
}


def record(event: dict) -> EventRecord:
    """The typed record of one event dict; a ValueError names an unknown event or wrong fields."""
    name = event.get("event")
    cls = RECORD_TYPES.get(name)
    if cls is None:
        raise ValueError(f"unknown event {name!r}")
    fields = {k: v for k, v in event.items() if k not in ("t", "event")}
    if set(fields) != set(cls.FIELDS):
        raise ValueError(f"{name} at t={event.get('t')}: fields {sorted(fields)}, expected {sorted(cls.FIELDS)}")
    return cls(event["t"], name, fields)


def _event(line: bytes, number: int) -> dict:
    """One line of an event log as its event: a JSON object in UTF-8, else a ValueError naming the
    line (JSON nested deeper than the decoder can follow is one too, not a RecursionError)."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ValueError(f"line {number}: not UTF-8 text (byte 0x{line[e.start]:02x} at column {e.start + 1})") from None
    try:
        event = json.loads(text)
    except RecursionError:
        raise ValueError(f"line {number}: nested too deeply to read") from None
    except ValueError as e:
        raise ValueError(f"line {number}: {e}") from None
    if not isinstance(event, dict):
        raise ValueError(f"line {number}: a JSON {type(event).__name__}, not an event (a JSON object)")
    return event


def read_events(path: str, typed: bool = False) -> list:
    """Read a JSON Lines event log back: a list of dicts, or with ``typed`` their typed records
    (:func:`record`: one class per event, fields as attributes). A line that is not JSON is a
    ValueError (:func:`read_events_cut` reads a log whose last line was cut mid-way)."""
    events, whole, tail = _read_lines(path)
    if tail is not None:
        events.append(_event(tail, whole + 1))  # raises: the last line is not JSON
    if typed:
        return [record(e) for e in events]
    return events


def read_events_cut(path: str) -> tuple[list[dict], str | None]:
    """Read a log that may have been cut during a write (its process killed, the disk full): its
    events up to its last whole line, and None, or the sentence that says a last line was cut and
    left out. Only the last line may be cut (it is not JSON and no end of line follows it); a bad
    line anywhere else is a ValueError, as for :func:`read_events`."""
    events, whole, tail = _read_lines(path)
    if tail is None:
        return events, None
    return events, (f"its last line is cut short ({len(tail)} bytes with no end of line): read up to line {whole}, "
                    f"the last whole one")


def _read_lines(path: str) -> tuple[list[dict], int, bytes | None]:
    """The events of the log at ``path`` read line by line, each line at most
    :data:`~wddmsim.util.inputbound.LOG_LINE_MAX` long (a longer one is a ValueError: no event is, and
    ``/dev/zero`` is no log); the number of whole lines (with an end of line); and the last line
    when it has no end of line and is not an event (None otherwise)."""
    events: list[dict] = []
    whole = 0
    with open(path, "rb") as f:
        while True:
            line = f.readline(LOG_LINE_MAX + 1)
            if line.endswith(b"\n"):
                whole += 1
                if line.strip():
                    events.append(_event(line, whole))
                continue
            if len(line) > LOG_LINE_MAX:
                raise ValueError(f"line {whole + 1}: longer than {size_text(LOG_LINE_MAX)}, the limit for one event")
            if line.strip():
                try:
                    events.append(_event(line, whole + 1))
                except ValueError:
                    return events, whole, line
            return events, whole, None


def read_records(path: str) -> list[EventRecord]:
    """An event log file as typed records (``read_events(path, typed=True)``)."""
    return read_events(path, typed=True)


def _flatten(prefix: str, value, out: dict) -> None:
    if isinstance(value, dict):
        for k, v in value.items():
            _flatten(f"{prefix}.{k}" if prefix else k, v, out)
    elif isinstance(value, list):
        out[prefix] = json.dumps(value)
    else:
        out[prefix] = value


def rows(events: Iterable, event: str | None = None) -> list[dict]:
    """Flat rows (``t``, ``event`` and the fields, nested members dotted) of the events, or of one
    kind of event only: ready for ``pandas.DataFrame(rows(...))``."""
    out = []
    for e in events:
        d = e.as_dict() if isinstance(e, EventRecord) else e
        if event is not None and d["event"] != event:
            continue
        row: dict = {}
        _flatten("", d, row)
        out.append(row)
    return out
