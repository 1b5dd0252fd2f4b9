"""Ending a run early and cleanly: on SIGINT or SIGTERM, or when a budget of the command line
(``--max-events``, ``--max-log-bytes``) runs out.

A :class:`RunStop` is what a command hands :meth:`wddmsim.runner.system.System.run`: the budgets and the
flag a signal sets. The run goes in chunks of at most :data:`CHECK_EVERY` kernel events
(:func:`run_checked`) and looks at the flag and the budgets between chunks, never inside the
model's callbacks: the run stops between two kernel events, at the virtual time of the last one
run, with the model's state whole, so the summary, the event log's ``LogEnd`` (reason
``interrupted``, ``max_events`` or ``max_log_bytes``, see :mod:`wddmsim.trace.ending`) and every
output made from the log are written as for a run that ended at its time. The chunks change
nothing in the run (timers keep their times and order); the only cost is a return to this loop
every :data:`CHECK_EVERY` events (a few per wall second).

- ``max_events``: exact; the run stops when that many kernel events have run (the summary's
  ``events``) and more are due before its end time. A run that needs exactly that many ends at its
  time.
- ``max_log_bytes``: the log's size is asked from its writer at every multiple of
  :data:`CHECK_EVERY` kernel events, and the run stops at the first one where the log holds that
  many bytes or more. The checks fall on the same events in every run, so the stop is the same
  every time; the log ends past the budget by the lines of at most :data:`CHECK_EVERY` kernel
  events (a few hundred KB on the examples) and its ``LogEnd`` line.

:func:`interrupts` installs the handlers for a command and puts the previous ones back after it
(the API and the tests run in-process). A SIGINT or SIGTERM before the run begins (the command
still reading its inputs, ``replay /dev/stdin`` from a pipe that stays open, or building the
system) ends the command at once, exit status 130, with a line saying nothing ran. Once the run
has begun, the first SIGINT or SIGTERM sets the flag. A driver call that does not return (an
endless loop in an entry point) never lets the run reach the flag: the DDI watchdog
(:mod:`wddmsim.dxgkrnl.watchdog`) stops such a call once it has run ``SIGNAL_GRACE_S`` (1 s) of host
time after the signal (at once when it already had), the way it stops any call at its limit: a bug
check whose message says ``interrupted by SIGINT inside <entry point>``, so that the event log, the
summary and the crash record are written whole; the exit status is still 130. A second signal,
wherever the command is (a driver that loops and catches the watchdog's exception, the outputs
being written, the command unwinding from the first), ends the process at once with exit status
130 and one line on standard error (``wddmsim: SIGINT again before the run ended: stopped at
once; the outputs are incomplete``; ``... again before the run began: ...; nothing ran``; ``...
again while the outputs were written: ... may be incomplete``). One that comes within :data:`SAME_SIGNAL_S` of the first is the same Ctrl-C,
forwarded by a launcher such as ``uv run``, and changes nothing. The event log's writer process
ignores both signals and writes every event it is sent (:mod:`wddmsim.trace.writer`).

:func:`abandoning` is the same for a command that cannot stop cleanly inside a run (``verify``
between its cases): the first signal raises :class:`Interrupted` (a ``KeyboardInterrupt``) where the
main thread is, inside a driver's loop too, so that the command can give its verdict on what ran;
a second one ends the process at once.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from contextlib import contextmanager
from typing import Callable

__all__ = ["BUDGET_REASONS", "CHECK_EVERY", "EXIT_BUDGET", "EXIT_INTERRUPTED", "Interrupted", "RunStop", "abandoning",
           "exit_status", "interrupts", "run_checked", "stop_line"]

#: Kernel events between two looks at the stop flag and the budgets (about a tenth of a wall
#: second on the examples).
CHECK_EVERY = 1024
#: Exit status of a command whose run SIGINT or SIGTERM stopped (128 + SIGINT, as a shell reports).
EXIT_INTERRUPTED = 130
#: Exit status of a run a budget (``--max-events``, ``--max-log-bytes``) stopped: its outputs are
#: whole and valid but cover less than the scenario asked for.
EXIT_BUDGET = 5
#: A second signal this soon (wall seconds) after the first is the same one delivered twice: a
#: terminal sends Ctrl-C to the whole foreground process group, and a launcher in that group (``uv
#: run``) forwards it to the command as well.
SAME_SIGNAL_S = 0.5
#: The stop reasons a budget gives.
BUDGET_REASONS = ("max_events", "max_log_bytes")

_SIGNALS = ("SIGINT", "SIGTERM")


class RunStop:
    """When a run should stop early. ``max_events``: kernel events at most; ``max_log_bytes``:
    bytes of the event log at most, measured by ``log_bytes()`` (the sink's exact size so far).
    ``reason`` is None until the run is asked to stop (``interrupted``) or a budget runs out;
    ``signal`` names the signal that stopped it; ``running`` is True from the moment the run
    begins (:func:`run_checked`; a signal before it, while the command still reads its inputs or
    builds the system, ends the process at once: there is no run to stop); ``outputs`` is True once
    the run has ended and the command writes its outputs (a second signal then ends the process at
    once)."""

    def __init__(self, max_events: int | None = None, max_log_bytes: int | None = None,
                 log_bytes: Callable[[], int] | None = None):
        self.max_events = max_events
        self.max_log_bytes = max_log_bytes
        self.log_bytes = log_bytes
        self.reason: str | None = None
        self.signal: str | None = None
        self.signals = 0
        self.first_signal_at: float | None = None  # time.monotonic() of the first signal
        self.running = False
        self.outputs = False
        self._bytes_checked_at = -1

    @property
    def interrupted(self) -> bool:
        """Whether a signal asked the command to stop."""
        return self.signal is not None

    def interrupt(self, name: str = "SIGINT") -> None:
        """Ask the run to stop as signal ``name`` does (what the handler calls)."""
        self.signals += 1
        if self.signal is None:
            self.signal = name
            self.first_signal_at = time.monotonic()
        if self.reason is None and not self.outputs:
            self.reason = "interrupted"

    def _over_log_budget(self) -> bool:
        return (self.max_log_bytes is not None and self.log_bytes is not None
                and self.log_bytes() >= self.max_log_bytes)


def run_checked(sim, limit: int, stop: RunStop | None = None, on_progress=None) -> str | None:
    """Run ``sim`` to ``limit`` ns in chunks, looking at ``stop`` between them; return the reason
    it stopped early (``interrupted``, ``max_events``, ``max_log_bytes``) or None when it reached
    ``limit``. ``on_progress(now, limit)`` as for :meth:`wddmsim.runner.system.System.run`: called after
    each slice of virtual time (first a thousandth of the run), it may answer the next slice's
    length in ns. A budget stops the run at the time of its last kernel event, whatever the
    slices: the same stop on a terminal (a progress bar) as in a pipe."""
    stop = stop or RunStop()
    stop.running = True
    step = max(1, limit // 1000) if on_progress is not None else None
    while True:
        if stop.reason is not None:
            return stop.reason
        target = limit if step is None else min(limit, sim.now + step)
        while True:
            n = CHECK_EVERY - sim.events_run % CHECK_EVERY  # the checks fall on the same events every run
            if stop.max_events is not None:
                n = min(n, max(0, stop.max_events - sim.events_run))
            sim.run(until=target, max_events=n)
            if stop.reason is not None:
                return stop.reason
            reason = _budget_out(sim, stop, limit)
            if reason is not None:
                stop.reason = reason
                sim.now = sim.last_time  # no timer ran after it: a slice only moved the clock on
                return reason
            if not sim.exhausted:
                break
        if on_progress is not None:
            asked = on_progress(sim.now, limit)
            if asked:
                step = max(1, int(asked))
        if sim.now >= limit:
            return None


def _budget_out(sim, stop: RunStop, limit: int) -> str | None:
    """The budget that has run out with work still due before ``limit``, or None. The log's size
    is looked at once per multiple of :data:`CHECK_EVERY` kernel events."""
    out = None
    count = sim.events_run
    if stop.max_events is not None and count >= stop.max_events:
        out = "max_events"
    elif count % CHECK_EVERY == 0 and count != stop._bytes_checked_at and stop.max_log_bytes is not None:
        stop._bytes_checked_at = count
        if stop._over_log_budget():
            out = "max_log_bytes"
    if out is None:
        return None
    due = sim.peek()
    return out if due is not None and due <= limit else None


def _again(stop: RunStop, name: str, said: str | None = None) -> bool:
    """A signal ``name`` after the first: True when it is the first one again (forwarded by a
    launcher within :data:`SAME_SIGNAL_S`); False for the first; a second signal ends the process
    at once, exit status 130, with one line on standard error (``said`` after the signal's name,
    else what a run's outputs are then)."""
    if stop.first_signal_at is not None and time.monotonic() - stop.first_signal_at < SAME_SIGNAL_S:
        return True  # the first one again, forwarded by a launcher (uv run): it is being handled
    if not stop.signals:
        return False
    if said is not None:
        line = f"wddmsim: {name} again {said}"
    elif stop.outputs:
        line = f"wddmsim: {name} again while the outputs were written: stopped at once; the outputs may be incomplete"
    elif not stop.running:
        line = f"wddmsim: {name} again before the run began: stopped at once; nothing ran"
    else:
        line = f"wddmsim: {name} again before the run ended: stopped at once; the outputs are incomplete"
    try:
        sys.stderr.write(line + "\n")
        sys.stderr.flush()
    finally:
        os._exit(EXIT_INTERRUPTED)


def _driver_call(name: str, frame) -> None:
    """The first signal of a run, for a driver call that may never return (the module doc): the DDI
    watchdog stops it after its grace (it may raise here, in the driver's loop)."""
    watchdog = sys.modules.get("wddmsim.dxgkrnl.watchdog")  # not imported: no driver was ever called
    if watchdog is not None:
        watchdog.signalled(name, frame)


@contextmanager
def interrupts(stop: RunStop):
    """Within the block, SIGINT and SIGTERM ask ``stop``'s run to stop (:meth:`RunStop.interrupt`)
    instead of raising KeyboardInterrupt or ending the process (a driver call that does not return
    is stopped by the DDI watchdog, see the module doc); a second signal ends the process at once,
    exit status 130, unless it comes within :data:`SAME_SIGNAL_S` of the first (the same Ctrl-C,
    forwarded by ``uv run``). The previous handlers come back after the block. Outside the main
    thread (where Python takes no signal handler) it changes nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield stop
        return

    def handler(signum, frame) -> None:
        name = signal.Signals(signum).name
        if _again(stop, name):
            return
        if not stop.running and not stop.outputs:
            # No run yet: the command is reading its inputs (a pipe that stays open, a slow file)
            # or building the system. Nothing ran, so there is nothing to stop cleanly: end now
            # (a blocking read is interrupted, and the command's cleanup runs as it unwinds; a
            # driver call it interrupts, in the log's estimate, lets it through: NothingRan, which
            # lives with the DDI watchdog, loaded once a driver was called).
            stop.interrupt(name)
            sys.stderr.write(f"wddmsim: interrupted by {name} before the run began; nothing ran\n")
            sys.stderr.flush()
            watchdog = sys.modules.get("wddmsim.dxgkrnl.watchdog")
            raise (watchdog.NothingRan if watchdog is not None else SystemExit)(EXIT_INTERRUPTED)
        stop.interrupt(name)
        if not stop.outputs:
            _driver_call(name, frame)

    previous = _install(handler)
    try:
        yield stop
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)
        watchdog = sys.modules.get("wddmsim.dxgkrnl.watchdog")
        if watchdog is not None:
            watchdog.settled()


def _install(handler) -> dict:
    """``handler`` for SIGINT and SIGTERM (where the platform has them): the handlers it replaced."""
    previous = {}
    for name in _SIGNALS:
        sig = getattr(signal, name, None)
        if sig is not None:
            previous[sig] = signal.signal(sig, handler)
    return previous


class Interrupted(KeyboardInterrupt):
    """The first SIGINT or SIGTERM inside :func:`abandoning`: ``signal`` names it."""

    def __init__(self, name: str):
        super().__init__(name)
        self.signal = name


@contextmanager
def abandoning():
    """Within the block, the first SIGINT or SIGTERM raises :class:`Interrupted` where the main
    thread is (a driver's endless loop included: the gateway lets a ``KeyboardInterrupt`` through),
    so that the command abandons what it was doing and says what it did until then (``verify``'s
    partial verdict); a second one ends the process at once, exit status 130 (one within
    :data:`SAME_SIGNAL_S` of the first is the same Ctrl-C, forwarded by ``uv run``). Yields the
    :class:`RunStop` whose ``signal`` names the signal. After a signal, the block's end waits until
    :data:`SAME_SIGNAL_S` has passed since it, so that the same Ctrl-C forwarded late does not
    reach the command's next step. Outside the main thread it changes nothing."""
    stop = RunStop()
    stop.running = True
    if threading.current_thread() is not threading.main_thread():
        yield stop
        return

    def handler(signum, frame) -> None:
        name = signal.Signals(signum).name
        if _again(stop, name, "before the verdict on what ran was given: stopped at once"):
            return
        stop.interrupt(name)
        raise Interrupted(name)

    previous = _install(handler)
    try:
        yield stop
    finally:
        if stop.first_signal_at is not None:
            left = SAME_SIGNAL_S - (time.monotonic() - stop.first_signal_at)
            if left > 0:
                time.sleep(left)
        for sig, old in previous.items():
            signal.signal(sig, old)


def stop_line(stop: RunStop, t: int) -> str | None:
    """The line for standard error that says where (virtual time ``t`` ns) and why a run stopped
    early, or None when it did not."""
    from ..output.summaryview import time_text

    at = f"at {time_text(t).strip()} of virtual time"
    if stop.reason == "interrupted":
        return f"wddmsim: interrupted by {stop.signal} {at}; the outputs cover what ran until then"
    if stop.reason == "max_events":
        return (f"wddmsim: stopped {at}: --max-events {stop.max_events} ran out; "
                f"the outputs cover what ran until then")
    if stop.reason == "max_log_bytes":
        return (f"wddmsim: stopped {at}: the event log reached --max-log-bytes {stop.max_log_bytes}; "
                f"the outputs cover what ran until then")
    if stop.interrupted:
        return f"wddmsim: {stop.signal} while the outputs were written: they are complete"
    return None


def exit_status(stop: RunStop, status: int) -> int:
    """The command's exit status: 130 after a signal, else 5 after a budget ran out (unless the
    run's own ``status`` says more: a bug check), else ``status``."""
    if stop.interrupted:
        return EXIT_INTERRUPTED
    if stop.reason in BUDGET_REASONS and status == 0:
        return EXIT_BUDGET
    return status
