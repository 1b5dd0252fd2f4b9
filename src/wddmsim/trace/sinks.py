"""Event sinks: JSON Lines to a file (streamed, so memory does not grow with the run), or a list
in memory for tests.

Every line is one JSON object ``{"t": <ns>, "event": <name>, ...fields}`` with keys in the order
emitted. The first line is ``LogStart`` with ``format``, ``version``, the scenario name and seed.

Spec: docs/events.md.
"""

from __future__ import annotations

import json
from typing import IO

from ..ddi.readers import Members

EVENTS_FORMAT = "wddmsim-events"
EVENTS_VERSION = 1


def _default(o):
    raise TypeError(f"Object of type {type(o).__name__} is not JSON serializable")


_dumps = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode
try:  # CPython's own encoder, made once: json.JSONEncoder.encode builds a new one for every call
    from json.encoder import c_make_encoder, encode_basestring

    _encoder = c_make_encoder(None, _default, encode_basestring, None, ":", ",", False, False, True)

    def _fields(fields: dict) -> str:
        return "".join(_encoder(fields, 0))

    _string = encode_basestring
except ImportError:  # pragma: no cover - an interpreter without the C accelerator
    _fields = _string = _dumps


def _value(v) -> str:
    """The JSON text of a field's value that is neither an ``int`` nor a ``str``: a structure's
    members as the text their reader made (:class:`~wddmsim.ddi.readers.Members`), anything else
    by the C encoder."""
    return v.json if type(v) is Members else _fields(v)


def _line_encoder(event: str, keys: tuple[str, ...]):
    """``encode(t, fields) -> str``: the JSON line of an ``event`` whose fields have exactly
    ``keys`` in this order, made once per such shape. Each value is written by its type: an
    ``int`` as its decimal digits, a ``str`` by the C string encoder, anything else by
    :func:`_value`; the text is that of ``json.dumps`` of the whole event."""
    def const(text: str) -> str:
        return text.replace("%", "%%")

    template = ("{" + const(_dumps("t")) + ":%s," + const(_dumps("event") + ":" + _dumps(event))
                + "".join("," + const(_dumps(k)) + ":%s" for k in keys) + "}\n")
    names = [f"v{i}" for i in range(len(keys))]
    pick = "".join(f"{n}, " for n in names)
    exprs = "".join(f"{n} if type({n}) is int else _s({n}) if type({n}) is str else _o({n}), " for n in names)
    src = ("def encode(t, fields):\n"
           + (f"    {pick}= fields.values()\n" if names else "")
           + f"    return {template!r} % (t if type(t) is int else _o(t), {exprs})\n")
    ns = {"_s": _string, "_o": _value}
    exec(compile(src, f"<event line {event}>", "exec"), ns)  # noqa: S102 - generated above
    return ns["encode"]


class ListSink:
    """Keeps events as dicts (tests, small runs)."""

    def __init__(self):
        self.events: list[dict] = []

    def emit(self, t: int, event: str, fields: dict) -> None:
        rec = {"t": t, "event": event}
        rec.update(fields)
        args = fields.get("args")
        if type(args) is Members:
            rec["args"] = dict(args)  # kept as a plain dict: its JSON text is not needed here
        self.events.append(rec)

    def of(self, *names: str) -> list[dict]:
        """Events whose name is one of ``names``."""
        return [e for e in self.events if e["event"] in names]


class JsonlSink:
    """Streams events to a file as JSON Lines.

    Each line is written in one piece by an encoder made once per event name and field names
    (:func:`_line_encoder`): the constant parts are text already, integers and strings are written
    directly, a structure's members that their reader already holds as JSON text
    (``Members.json``) as that text, anything else by CPython's C encoder made once for the
    sink. The bytes are those of ``json.dumps(record, separators=(",", ":"),
    ensure_ascii=False)``."""

    def __init__(self, target: str | IO[str]):
        if isinstance(target, str):
            self._file = open(target, "w", encoding="utf-8", buffering=1 << 20)
            self._owned = True
        else:
            self._file = target
            self._owned = False
        self._write = self._file.write
        self._encoders: dict[tuple, object] = {}
        self.count = 0

    def emit(self, t: int, event: str, fields: dict) -> None:
        shape = (event, *fields)
        encode = self._encoders.get(shape)
        if encode is None:
            encode = self._encoders[shape] = _line_encoder(event, shape[1:])
        self._write(encode(t, fields))
        self.count += 1

    def close(self) -> None:
        """Close the file (or flush a file given open)."""
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
