"""Event sinks: JSON Lines to a file (streamed, so memory does not grow with the run), or a list
in memory for tests.

Every line is one JSON object ``{"t": <ns>, "event": <name>, ...fields}`` with keys in the order
emitted. The first line is ``LogStart`` with ``format``, ``version``, the scenario name and seed.

Spec: docs/events.md.
"""

from __future__ import annotations

import sys
import weakref
from typing import IO

from ..ddi.readers import Members
from . import writer as _writer
from .lines import Lines
from .output import WriteFailed, open_text

EVENTS_FORMAT = "wddmsim-events"
EVENTS_VERSION = 1


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


class KindsSink(ListSink):
    """A :class:`ListSink` that keeps only the events named in ``kinds`` (what one reader of the
    log needs: a long run's PresentMon rows without its DDI calls)."""

    def __init__(self, kinds):
        super().__init__()
        self.kinds = frozenset(kinds)

    def emit(self, t: int, event: str, fields: dict) -> None:
        if event in self.kinds:
            super().emit(t, event, fields)


class JsonlSink:
    """Streams events to a file as JSON Lines.

    Each line is exactly ``json.dumps(record, separators=(",", ":"), ensure_ascii=False)`` of the
    event, made by :class:`~wddmsim.trace.lines.Lines`. Given a path, the sink hands its events in
    batches to a writer process that encodes and writes them (:mod:`wddmsim.trace.writer`), so the
    run's own process spends almost nothing on the log; ``process=False``, a file given open, or a
    platform where no child process can start, and it encodes and writes them itself. The bytes are
    the same either way. The sink takes a ``DdiCall``'s structure as its raw bytes
    (``raw_args``): no member is read during the run.

    Events are written when their batch is full and at :meth:`close`, which must be called (it
    raises the writer's error, if there was one).

    A file that cannot be written (a full disk) does not stop the run that emits the events: the
    lines written so far stay, the sink drops every later event, :attr:`error` says why, and
    :meth:`close` raises it, a :class:`~wddmsim.trace.output.WriteFailed` (``PATH: cannot write:
    REASON``). Text is encoded as :mod:`wddmsim.trace.output` says: a lone surrogate in a string
    is written as JSON's escape ``\\udcXX``, which reads back as the same string."""

    #: the gateway may hand a DdiCall's structure as raw bytes (:data:`wddmsim.trace.lines.RAW`)
    raw_args = True

    def __init__(self, target: str | IO[str], *, process: bool = True):
        self._lines = Lines()
        self._writer = None
        self.count = 0
        self._error: WriteFailed | None = None
        self._size = 0  # in process: the bytes written when last measured
        self.path = target if isinstance(target, str) else str(getattr(target, "name", "<event log>"))
        if isinstance(target, str):
            self._file = open_text(target, buffering=1 << 20)
            self._owned = True
            if process:
                self._writer = _writer.start(target)
                if self._writer is not None:
                    self._file.close()  # the writer opens the file again (it is empty)
                    self._file = None
                    self._batch = self._writer.batch
                    self.emit = self._emit_batched
                    # A sink nobody closed still writes its last batch when it is collected or
                    # the interpreter exits (before multiprocessing stops its daemonic children).
                    self._finalizer = weakref.finalize(self, _close_forgotten, self._writer)
                    return
        else:
            self._file = target
            self._owned = False
        self._write = self._file.write

    @property
    def in_process(self) -> bool:
        """Whether this process writes the lines itself (no writer process)."""
        return self._writer is None

    @property
    def error(self) -> WriteFailed | None:
        """Why the file could not be written (the events from then on were dropped), or None."""
        return self._writer.error if self._writer is not None else self._error

    def emit(self, t: int, event: str, fields: dict) -> None:
        """Write one event's line (in process)."""
        self.count += 1
        try:
            self._write(self._lines.line(t, event, fields))
        except OSError as e:
            self._failed(e)

    def _failed(self, error: OSError) -> None:
        """The file cannot be written (in process): keep why, and drop the events from now on (no
        later line is written, even where the file would take it again: the log has no gap)."""
        if self._error is None:
            self._error = WriteFailed(self.path, error)
        self._write = _discard

    def _emit_batched(self, t: int, event: str, fields: dict) -> None:
        batch = self._batch
        batch.append((t, event, fields))
        self.count += 1
        if len(batch) >= _writer.BATCH:
            self._writer.send()
            self._batch = self._writer.batch

    def size(self) -> int:
        """The bytes of the log's lines emitted so far, exactly (the writer process is asked, after
        it has written them; in process, the file is flushed and its position read)."""
        if self._writer is not None:
            size = self._writer.size()
            self._batch = self._writer.batch  # the batch was sent: the next events go to a new one
            return size
        if self._error is None:
            try:
                self._file.flush()
                self._size = self._file.buffer.tell() if hasattr(self._file, "buffer") else self._file.tell()
            except OSError as e:
                self._failed(e)
        return self._size

    def close(self) -> None:
        """Write every event emitted and close the file (or flush a file given open). With a writer
        process: wait until it has written them, and raise its error if it failed. A file that
        could not be written: :attr:`error` raised, once."""
        if self._writer is not None:
            self._finalizer.detach()
            self._writer.close()
            return
        if self._file is None:
            return
        try:
            if self._owned:
                self._file.close()
            else:
                self._file.flush()
        except OSError as e:
            self._failed(e)
        finally:
            self._file = None
        if self._error is not None:
            raise self._error


def _discard(text: str) -> None:
    """Where an event's line goes once its file has failed: nowhere."""


def _close_forgotten(writer) -> None:
    """Close the writer of a sink that was never closed; its error, if any, goes to stderr."""
    try:
        writer.close()
    except Exception as e:  # noqa: BLE001 - at exit there is nobody left to raise to
        print(f"wddmsim: {e}", file=sys.stderr)


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
