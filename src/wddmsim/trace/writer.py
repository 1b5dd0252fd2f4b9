"""The event log's writer process: the JSON Lines sink hands it events in batches and it encodes
and writes them, so that a run does not spend its own time on the log's text.

This is how Event Tracing for Windows keeps tracing cheap for the traced code: a provider's events
go into buffers, and a separate logger session writes full buffers to the log file ("About Event
Tracing", "Event Tracing Sessions"). Here :class:`LogWriter` keeps the events of a batch as they
were emitted (a ``DdiCall``'s structure as its raw bytes, see :data:`wddmsim.trace.lines.RAW`),
pickles each full batch and sends it through a pipe to a child process, which reads the structures,
encodes the lines with the same :class:`~wddmsim.trace.lines.Lines` the sink uses in process, and
writes them to the file in the order emitted: the file is byte for byte the one the in-process sink
writes.

The child is forked where the platform forks (Linux) and the process has one thread; elsewhere it
is spawned. It ignores SIGINT and SIGTERM (a terminal's Ctrl-C reaches the whole process group), so
that :meth:`LogWriter.close` of an interrupted run still writes every event emitted before it; if
the run's process is killed, the writer closes the file with the whole lines it was sent and exits
quietly. :meth:`LogWriter.size` asks it for the bytes written so far (``--max-log-bytes``,
:mod:`wddmsim.runner.stop`). An error
in the child is sent back to the run's process: never a silently short log. One that says the
file cannot be written (an :class:`OSError`: a full disk, a file system gone read-only) does not
stop the run: the writer keeps every line it wrote, the run's process sends it nothing more and
goes on, and :meth:`LogWriter.close` raises it as a :class:`~wddmsim.trace.output.WriteFailed`
(``PATH: cannot write: REASON``), so that the run's other outputs and its summary are still made
(``wddmsim run`` prints them, then that line). Any other error (an event whose value JSON cannot
write: a bug) is raised in the run's process at the next batch or at :meth:`LogWriter.close`.
Text is encoded as :mod:`wddmsim.trace.output` says (a lone surrogate escaped, never an encoding
error). When the child cannot be started (a daemonic pool worker, no ``fork`` or ``spawn``),
:func:`start` returns None and the sink writes in its own process.
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
import signal
import sys
import threading
import traceback

from .lines import Lines
from .output import WriteFailed, encoded_size, open_text

#: Events per batch: large enough that a send's cost is spread thin, small enough that the pipe
#: and the child's memory stay small (a batch is about 100 KB pickled, 2 MB of text).
BATCH = 2048
_PROTOCOL = pickle.HIGHEST_PROTOCOL
#: The message that asks the writer how many bytes it has written (a pickle never is one byte).
SIZE = b"?"
#: The signals the writer ignores: a terminal's Ctrl-C reaches the whole process group, and a
#: SIGTERM may too; the run's process decides when the log ends (:mod:`wddmsim.runner.stop`).
_IGNORED = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM") if hasattr(signal, name))


#: Seconds close() waits for the writer to exit once it has answered (or failed), before it
#: stops it: the answer says the log is complete, so only a writer that will not exit is cut.
JOIN_TIMEOUT = 30


class LogWriterError(RuntimeError):
    """The writer process stopped before writing every event (it died, or its pipe broke)."""


def _serve(conn, path: str, other=None) -> None:
    """The child: write each batch's lines to ``path`` until the empty message, then answer
    ``("ok", events)``; answer :data:`SIZE` with ``("bytes", n)``, the bytes of every line
    written so far; on an error answer ``("error", exception, traceback text)`` and read (and
    drop) what is still sent, so the run's process never waits on a full pipe. When the run's
    process is gone (killed: its end of the pipe closed), close the file, whose lines are whole,
    and exit quietly. ``other``: the run's end of the pipe, which a forked child holds a copy of:
    it is closed first, so that the child sees the end of the pipe when the run's process dies."""
    if other is not None:
        other.close()
    for sig in _IGNORED:
        signal.signal(sig, signal.SIG_IGN)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, set(_IGNORED))  # blocked by start() until ignored here
    events = 0
    size = 0
    try:
        lines = Lines()
        with open_text(path, buffering=1 << 20) as f:
            write = f.write
            while True:
                try:
                    data = conn.recv_bytes()
                except EOFError:
                    return  # the run's process died: the file is closed with what it was sent
                if not data:
                    break
                if data == SIZE:
                    conn.send(("bytes", size))
                    continue
                batch = pickle.loads(data)
                text = lines.text(batch)
                write(text)
                size += encoded_size(text)
                events += len(batch)
        conn.send(("ok", events))
    except BaseException as exc:  # noqa: BLE001 - every failure goes back to the run's process
        text = "".join(traceback.format_exception(exc))
        try:
            try:
                conn.send(("error", exc, text))
            except (BrokenPipeError, EOFError):
                return  # nobody is left to tell
            except Exception:  # noqa: BLE001 - the exception itself does not pickle: send its text
                conn.send(("error", LogWriterError(f"{type(exc).__name__}: {exc}"), text))
        except OSError:
            return
        try:
            while conn.recv_bytes():
                pass
        except (EOFError, OSError):
            pass
    finally:
        conn.close()


def _context():
    """The start method: fork where the platform forks and only one thread runs (a fork copies the
    run's memory at no cost and imports nothing), else spawn."""
    methods = multiprocessing.get_all_start_methods()
    if "fork" in methods and sys.platform != "darwin" and threading.active_count() == 1:
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context("spawn")


class LogWriter:
    """The run's side of the writer process for the log at ``path`` (see the module doc)."""

    def __init__(self, path: str, process, conn):
        self.path = path
        self._process = process
        self._conn = conn
        self.batch: list = []
        self.events = 0
        self.failed = False  # its error was raised once; closing then only cleans up
        #: the file could not be written (the writer said why): nothing more is sent, close() raises it
        self.error: WriteFailed | None = None
        self._size = 0  # the bytes written, as the writer last answered

    def send(self) -> None:
        """Hand the current batch to the writer (raises the writer's error, if it failed; after
        a :attr:`error` the batch is dropped)."""
        batch, self.batch = self.batch, []
        self.events += len(batch)
        if self.error is not None:
            return
        if self._conn.poll():
            self._answer()
            if self.error is not None:
                return
        data = pickle.dumps(batch, _PROTOCOL)
        try:
            self._conn.send_bytes(data)
        except OSError:
            self._answer()

    def size(self) -> int:
        """The bytes of every line emitted so far: the batch is sent, and the writer answers once
        it has written everything before it (raises the writer's error, if it failed; after an
        :attr:`error`, the bytes it had written when last asked)."""
        if self.batch:
            self.send()
        if self.error is not None:
            return self._size
        try:
            self._conn.send_bytes(SIZE)
        except OSError:
            self._answer()
            return self._size
        reply = self._reply("bytes")
        if reply is not None:
            self.failed = False
            self._size = reply[1]
        return self._size

    def close(self) -> None:
        """Send what is left, wait until the writer has written every event and closed the file,
        and raise its error if it failed (:attr:`error`, the file that could not be written, as
        a :class:`~wddmsim.trace.output.WriteFailed`, once)."""
        if self._conn is None:
            return
        try:
            if self.failed:  # its error was raised: end the child's drain loop, raise nothing more
                try:
                    self._conn.send_bytes(b"")
                except OSError:
                    pass
                return
            if self.batch:
                self.send()
            try:
                self._conn.send_bytes(b"")
            except OSError:
                pass
            if self.error is None:
                self._answer(final=True)
            if self.error is not None:
                raise self.error
        finally:
            self._conn.close()
            self._conn = None
            self._process.join(JOIN_TIMEOUT)
            if self._process.is_alive():  # a writer that will not stop must not hang the run
                self._process.terminate()
                self._process.join()

    def _answer(self, final: bool = False) -> None:
        """Read the writer's answer: return after ``ok`` at the end or an :attr:`error`, raise otherwise."""
        reply = self._reply("ok")
        if reply is None:
            return
        if final and reply[1] == self.events:
            self.failed = False
            return
        raise LogWriterError(f"{self.path}: the event log's writer wrote {reply[1]} of {self.events} events")

    def _reply(self, expected: str) -> tuple | None:
        """The writer's next answer, which must be tagged ``expected``; its error (an answer of
        any other tag), or its end, raised; None when it says the file cannot be written (an
        :class:`OSError`, kept as :attr:`error`). ``failed`` is left True after a raise: the
        caller clears it."""
        self.failed = True  # until the answer says otherwise
        try:
            reply = self._conn.recv()
        except (EOFError, OSError):
            self._process.join()
            raise LogWriterError(f"{self.path}: the event log's writer process stopped (exit code "
                                 f"{self._process.exitcode}); the log is incomplete") from None
        if reply[0] == expected:
            return reply
        _, exc, text = reply
        if isinstance(exc, OSError):
            self.failed = False
            self.error = WriteFailed(self.path, exc)
            return None
        exc.add_note(f"in the event log's writer process, writing {self.path}:\n{text.rstrip()}")
        raise exc


def start(path: str) -> LogWriter | None:
    """A writer process for the log at ``path`` (which it creates or truncates), or None when no
    child process can be started here."""
    try:
        ctx = _context()
        ours, theirs = ctx.Pipe(duplex=True)
        process = ctx.Process(target=_serve, args=(theirs, path, ours), name="wddmsim event log writer", daemon=True)
        mask = hasattr(signal, "pthread_sigmask") and threading.current_thread() is threading.main_thread()
        if mask:  # the child is born with Ctrl-C and SIGTERM blocked, and ignores them before unblocking
            before = signal.pthread_sigmask(signal.SIG_BLOCK, set(_IGNORED))
        try:
            process.start()
        finally:
            if mask:
                signal.pthread_sigmask(signal.SIG_SETMASK, before)
    except (OSError, AssertionError, ValueError, RuntimeError):  # e.g. a daemonic process has no children
        return None
    theirs.close()
    return LogWriter(os.fspath(path), process, ours)
