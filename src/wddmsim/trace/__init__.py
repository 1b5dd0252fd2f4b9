"""Event records and where they go. The core parts are handed a sink object with one method,
``emit(t, event, fields)``, or None when tracing is off; nothing in the core imports this package.

Spec: docs/events.md.
"""

from .records import EVENT_FIELDS, EventRecord, read_events, read_records, record, rows
from .sinks import EVENTS_FORMAT, EVENTS_VERSION, JsonlSink, ListSink, TeeSink

__all__ = ["EVENTS_FORMAT", "EVENTS_VERSION", "EVENT_FIELDS", "EventRecord", "JsonlSink", "ListSink", "TeeSink",
           "read_events", "read_records", "record", "rows"]
