"""The event log's lines: each event as the one line of JSON that docs/events.md specifies.

:class:`Lines` turns an event ``(t, name, fields)`` into its line, exactly
``json.dumps({"t": t, "event": name, **fields}, separators=(",", ":"), ensure_ascii=False)``
followed by a newline, with an encoder made once per event name and field names
(:func:`_line_encoder`). A ``DdiCall`` whose ``args`` are still the structure's raw bytes
(:data:`RAW`, what the gateway hands a sink that asks for them) is read here, by the structure's
precompiled reader (:func:`wddmsim.ddi.readers.args_reader`), into the same members the gateway
would have read: the line is the same either way. The JSON Lines sink uses :class:`Lines` in its
own process or in its writer process (:mod:`wddmsim.trace.writer`).

Spec: docs/events.md.
"""

from __future__ import annotations

import json

from ..ddi.readers import Members, args_reader
from ..ddi.registry import RECORDS


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


class Lines:
    """Event lines, with the encoders and structure readers made so far (one per shape)."""

    def __init__(self):
        self._encoders: dict[tuple, object] = {}
        self._readers: dict[tuple, object] = {}

    def members(self, raw: tuple) -> Members:
        """The logged members of a structure from its raw form ``((structure, arch, version),
        bytes)`` (see :data:`RAW`)."""
        key, data = raw
        read = self._readers.get(key)
        if read is None:
            read = self._readers[key] = args_reader(RECORDS[key[0]], key[1], key[2])
        return read(data)

    def line(self, t, event: str, fields: dict) -> str:
        """The JSON line of one event (with its newline). A ``DdiCall``'s raw ``args`` are read
        into its members first (``fields`` is changed in place: it is the sink's own)."""
        if event == "DdiCall":
            args = fields.get("args")
            if type(args) is tuple:
                fields["args"] = self.members(args)
        shape = (event, *fields)
        encode = self._encoders.get(shape)
        if encode is None:
            encode = self._encoders[shape] = _line_encoder(event, shape[1:])
        return encode(t, fields)

    def text(self, events) -> str:
        """The lines of ``events`` (``(t, event, fields)`` each), in order, as one text."""
        line = self.line
        return "".join([line(t, event, fields) for t, event, fields in events])


#: How a sink asks the gateway for a DdiCall's structure as raw bytes: a sink whose ``raw_args``
#: is true receives ``args`` as the tuple ``((structure name, arch, DDI version name), bytes)``
#: and reads it with :meth:`Lines.members` (no member is read during the run).
RAW = "raw_args"
