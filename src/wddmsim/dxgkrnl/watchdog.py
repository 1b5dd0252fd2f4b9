"""The DDI watchdog: a driver call that never returns ends in a verdict, never in a hung process.

Windows does not let a driver keep a processor forever. A DPC or an ISR that runs past its time
allotment, or a processor that stays at DISPATCH_LEVEL or above too long, is bug check 0x133
DPC_WATCHDOG_VIOLATION (Microsoft's "Bug Check 0x133 DPC_WATCHDOG_VIOLATION": parameter 1 is 0
when one DPC or ISR ran past its allotment, parameter 2 the time it ran and parameter 3 the
allotment, both in clock ticks). A thread that stays inside the display driver is the case of
``TdrDdiDelay`` ("TDR registry keys": "the number of seconds that the OS allows threads to leave
the driver", 5 s by default, after which it stops with bug check 0x116 VIDEO_TDR_FAILURE; the
rule catalogue's rule 111, ThreadsLeaveDriverInTime: ``wddmsim rules 111``, docs/rules.md).

In the model the driver's Python code takes no virtual time, so a driver whose entry point loops
(``while True: pass`` in DxgkDdiSubmitCommand) never lets the clock advance: no virtual-time
watchdog can see it. This one counts **host time** (the wall clock of the machine running the
model): a call of the driver that has run :data:`DEFAULT_LIMIT_S` (10 s) without returning is
stopped inside the driver's code, and the gateway (:mod:`wddmsim.dxgkrnl.gateway`) turns that into
the verdict Windows has for it, by the IRQL the processor was at:

- DISPATCH_LEVEL or DIRQL (the ISR, the DPC, DxgkDdiSubmitCommand, DxgkDdiPreemptCommand, a
  DxgkCbSynchronizeExecution routine...): bug check 0x133 DPC_WATCHDOG_VIOLATION, parameter 1 0,
  parameter 2 the host time it ran and parameter 3 the watchdog's limit, in clock ticks of
  15.625 ms (:data:`TICK_S`, Windows' default clock interval);
- PASSIVE_LEVEL: bug check 0x116 VIDEO_TDR_FAILURE, parameters 0, the crash record naming rule 111.
  The model has no TDR recovery waiting on the thread (the rule is not modelled as Windows judges
  it: the GPU's own timeout and TdrDdiDelay would come first); it stops where Windows would end up,
  with the thread still inside the driver.

The crash record names the entry point, says it ran past the watchdog's limit of host time and
where the driver's code was when it was stopped, and carries that traceback. The run then ends as
after any bug check: exit status 3, the event log whole (``BugCheck`` then ``LogEnd``), the summary.

The limit: 10 s of host time. The longest call the shipped examples make takes about 30 ms of host
time (the first call of a run, which warms caches), ordinary ones well under 2 ms; 10 s is some
300 times that, room for a slow or loaded machine and for a driver written for clarity rather than
speed, and short enough that a person sees the verdict before reaching for Ctrl-C. The environment
variable :data:`ENV` (``WDDMSIM_DDI_WATCHDOG_S``) sets another limit in seconds; ``0`` or ``off``
turns the watchdog off, timer and all, for a debugger other than pdb (a call held at a pdb prompt is
recognised and never interrupted); a first Ctrl-C then no longer stops a looping call (below), a
second one still ends the process.

How it stays off the hot path: the gateway's caller (about four per simulated packet) does nothing
for it. A process timer (``setitimer(ITIMER_REAL)``, every :data:`PERIOD_S`, 0.25 s) raises
SIGALRM, whose handler runs in the main thread between two bytecodes of whatever runs there: it
walks the stack for the gateway's caller frames, and the outermost one, with the entry point's name
and its call count (``DdiGateway.calls``, which the caller already keeps), identifies the call. A
call seen at consecutive ticks has run that long; each tick counts at most :data:`CAP_S`, so a
process that was stopped (Ctrl-Z) or starved does not count the time it did not run. When the call
has run the limit the handler raises :class:`DdiOverran` right there, inside the driver's loop;
the gateway's caller of that outermost call catches it (a nested call lets it through) and stops.
A blocking wait in the driver (``time.sleep``, a lock) is interrupted too: SIGALRM is installed
with SA_RESTART, so only waits that are never restarted (sleeps, selects, semaphores) see it.

The timer runs only while a gateway made in the main thread exists (and is stopped at the
interpreter's exit, which puts SIGALRM's default action, the end of the process, back), and only
when nobody else uses SIGALRM (a handler of its own, a timer armed): then the watchdog is off for
the process. A driver
called from another thread is not watched (a signal handler runs in the main thread only). A forked
child (the event log's writer, a sweep's pool worker) inherits no timer and arms its own.

A first SIGINT or SIGTERM during a run (:mod:`wddmsim.runner.stop`) asks the run to stop between two
kernel events, which a driver that loops never reaches: :func:`signalled` stops the call the same
way once it has run :data:`SIGNAL_GRACE_S` (1 s) without returning, counted from the signal or
from its start if it began after it (at once when it had already run that long). The verdict is the
same bug check, with a message that says the signal interrupted it; the exit status is 130.
"""

from __future__ import annotations

import atexit
import os
import signal
import sys
import threading
import time
import weakref

__all__ = ["CAP_S", "DEFAULT_LIMIT_S", "ENV", "PERIOD_S", "SIGNAL_GRACE_S", "TICK_S", "DdiOverran", "NothingRan", "limit",
           "signalled", "ticks", "watch"]

#: Host seconds a driver call may run before the watchdog stops it.
DEFAULT_LIMIT_S = 10.0
#: The environment variable that sets another limit, in seconds (``0`` or ``off``: no watchdog).
ENV = "WDDMSIM_DDI_WATCHDOG_S"
#: Seconds between two looks of the watchdog (the SIGALRM timer's interval).
PERIOD_S = 0.25
#: The most host time one look counts: a process stopped or starved between two looks does not
#: count the time it did not run.
CAP_S = 2 * PERIOD_S
#: After a first SIGINT or SIGTERM during a run, a driver call still running this long (host
#: seconds) is stopped the way the watchdog stops it.
SIGNAL_GRACE_S = 1.0
#: A clock tick, the unit of bug check 0x133's parameters 2 and 3: Windows' default clock interval.
TICK_S = 0.015625

_SIGNAL = getattr(signal, "SIGALRM", None)
_CAN_ARM = _SIGNAL is not None and hasattr(signal, "setitimer")


class DdiOverran(BaseException):
    """Raised inside the driver's code when its call ran too long (a ``BaseException``, so that a
    driver's ``except Exception`` does not swallow it). ``frame``: the outermost gateway caller's
    frame, whose call it stops; ``name``: that entry point; ``inner``: the entry point running when
    it was raised (another, nested call, or the same); ``ran``: host seconds the call ran; ``limit``:
    the watchdog's limit; ``irql``: the model's IRQL class when it was raised; ``signal``: the
    signal that asked for it (None: the watchdog's limit)."""

    def __init__(self, frame, name: str, inner: str, ran: float, limit: float | None, irql: int,
                 signal_name: str | None = None):
        super().__init__(f"{name} stopped after {ran:.1f} s of host time")
        self.frame = frame
        self.name = name
        self.inner = inner
        self.ran = ran
        self.limit = limit
        self.irql = irql
        self.signal = signal_name


class NothingRan(SystemExit):
    """The end of a command that a SIGINT or SIGTERM interrupted before its run began (exit status
    130, :func:`wddmsim.runner.stop.interrupts`), in a driver call the log's estimate made: not the
    driver's ``sys.exit()`` (a driver fault), so the gateway lets it through."""


def ticks(seconds: float) -> int:
    """``seconds`` in clock ticks of :data:`TICK_S` (bug check 0x133's unit)."""
    return int(seconds / TICK_S + 0.5)


def limit(environ=None) -> float | None:
    """The watchdog's limit in host seconds from :data:`ENV` (None: off); the default when unset.
    A value that is not a number of seconds is the default, with one line on standard error."""
    text = (os.environ if environ is None else environ).get(ENV, "").strip()
    if not text:
        return DEFAULT_LIMIT_S
    if text.lower() == "off":
        return None
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if value == 0:
        return None
    if not value > 0 or value == float("inf"):
        if text not in _WARNED:
            _WARNED.add(text)
            sys.stderr.write(f"wddmsim: {ENV}={text!r}: not a number of seconds; the DDI watchdog stops a "
                             f"driver call at {DEFAULT_LIMIT_S:g} s of host time\n")
        return DEFAULT_LIMIT_S
    return value


_WARNED: set[str] = set()


class _State:
    """The watchdog of this process (all of it is touched in the main thread only)."""

    def __init__(self):
        #: the gateways made in the main thread and still alive: the timer runs while there is one
        self.gateways = weakref.WeakSet()
        self.armed = False
        self.limit: float | None = DEFAULT_LIMIT_S
        #: the code of the gateway's caller (:meth:`wddmsim.dxgkrnl.gateway.DdiGateway.caller`)
        self.code = None
        #: the outermost call seen at the last look: (id of its gateway, entry point, call count)
        self.key = None
        #: host seconds it has run, as the looks counted them
        self.ran = 0.0
        self.last = 0.0
        #: a first SIGINT or SIGTERM of a run: its name, and what the call had run when it came
        self.asked: str | None = None
        self.ran_at_ask = 0.0
        self.at_exit = False


_DOG = _State()


def crossing(code) -> None:
    """The code object of the gateway's caller: a frame running it is a driver call."""
    _DOG.code = code


def watch(gateway) -> None:
    """A gateway was made: watch its calls (from the main thread only), arming the timer if needed.
    The limit is read again from the environment."""
    if threading.current_thread() is not threading.main_thread():
        return
    dog = _DOG
    dog.limit = limit()
    if dog.limit is None:  # off: no timer at all (a debugger that is not pdb)
        if dog.armed:
            _disarm()
        return
    dog.gateways.add(gateway)
    if not dog.armed:
        _arm()


def _arm() -> None:
    if not _CAN_ARM:
        return
    current = signal.getsignal(_SIGNAL)
    if current is not _tick:
        if current is not signal.SIG_DFL or signal.getitimer(signal.ITIMER_REAL) != (0.0, 0.0):
            return  # SIGALRM is someone else's: no watchdog in this process
        signal.signal(_SIGNAL, _tick)
    signal.siginterrupt(_SIGNAL, False)  # SA_RESTART: reads and writes go on; sleeps and waits do not
    dog = _DOG
    dog.armed = True
    dog.key = None
    dog.last = time.monotonic()
    if not dog.at_exit:  # the interpreter's end puts SIGALRM back to its default, which ends the process
        dog.at_exit = True
        atexit.register(_at_exit)
    signal.setitimer(signal.ITIMER_REAL, PERIOD_S, PERIOD_S)


def _at_exit() -> None:
    if _DOG.armed:
        _disarm()


def _disarm() -> None:
    dog = _DOG
    dog.armed = False
    dog.key = None
    signal.setitimer(signal.ITIMER_REAL, 0.0, 0.0)  # first: no SIGALRM comes after this
    if signal.getsignal(_SIGNAL) is _tick:
        signal.signal(_SIGNAL, signal.SIG_DFL)


def _forget() -> None:
    """In a forked child: no timer was inherited; a gateway made there arms its own."""
    dog = _DOG
    dog.armed = False
    dog.key = None
    dog.asked = None
    dog.gateways = weakref.WeakSet()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget)


def _outermost(frame):
    """The outermost gateway caller frame on the stack from ``frame`` (None: no driver call)."""
    code = _DOG.code
    outer = None
    while frame is not None:
        if frame.f_code is code:
            outer = frame
        frame = frame.f_back
    return outer


def _debugged() -> bool:
    """Whether a pdb (bdb) debugger traces the main thread: a person is stepping through the code."""
    trace = sys.gettrace()
    if trace is None or "bdb" not in sys.modules:
        return False
    return isinstance(getattr(trace, "__self__", None), sys.modules["bdb"].Bdb)


def _look(frame, dt: float):
    """One look at the main thread's stack: the outermost call's ``(frame, gateway, name)`` with
    ``dog.ran`` brought up to date, or None between calls."""
    dog = _DOG
    outer = _outermost(frame)
    if outer is None:
        dog.key = None
        return None
    names = outer.f_locals
    gateway, name = names.get("gateway"), names.get("name")
    if gateway is None or name is None:
        return None
    key = (id(gateway), name, gateway.calls.get(name))
    if key != dog.key:  # a new call: it has run since at least this look
        dog.key = key
        dog.ran = 0.0
        dog.ran_at_ask = 0.0
    else:
        dog.ran += dt
    return outer, gateway, name


def _stoppable(gateway) -> bool:
    """Whether the driver's code may be stopped here: inside a call (the outermost caller sets
    ``active`` around the driver's method; before and after it, judging and logging, it is None),
    and no pdb holds the thread."""
    return gateway.active is not None and not _debugged()


def _stop(outer, gateway, name: str, signal_name: str | None):
    dog = _DOG
    ran = dog.ran
    dog.ran = 0.0  # a driver that swallows it gets it again after as long
    dog.ran_at_ask = 0.0
    return DdiOverran(outer, name, gateway.active or name, ran, dog.limit, gateway.sim.irql, signal_name)


def _tick(signum, frame) -> None:
    """SIGALRM: one look (see the module doc); raises :class:`DdiOverran` for a call past the limit."""
    dog = _DOG
    now = time.monotonic()
    dt = min(max(now - dog.last, 0.0), CAP_S)
    dog.last = now
    if not dog.armed:
        return
    if not dog.gateways:
        _disarm()
        return
    seen = _look(frame, dt)
    if seen is None:
        return
    outer, gateway, name = seen
    over = dog.limit is not None and dog.ran >= dog.limit
    asked = dog.asked is not None and dog.ran - dog.ran_at_ask >= SIGNAL_GRACE_S
    if not (over or asked) or not _stoppable(gateway):
        return
    raise _stop(outer, gateway, name, None if over else dog.asked)


def signalled(name: str, frame) -> None:
    """A first SIGINT or SIGTERM (``name``) during a run (called from :mod:`wddmsim.runner.stop`'s
    handler, in the main thread, with the frame it interrupted): a driver call running now is
    stopped once it has run :data:`SIGNAL_GRACE_S` without returning, at once if it already has."""
    dog = _DOG
    if not dog.armed:
        return
    dog.asked = name
    seen = _look(frame, 0.0)
    if seen is None:
        return
    dog.ran_at_ask = dog.ran
    outer, gateway, entry = seen
    if dog.ran >= SIGNAL_GRACE_S and _stoppable(gateway):
        raise _stop(outer, gateway, entry, name)


def settled() -> None:
    """The run's signal handlers are gone (:func:`wddmsim.runner.stop.interrupts` ends): forget its signal."""
    _DOG.asked = None
    _DOG.ran_at_ask = 0.0
