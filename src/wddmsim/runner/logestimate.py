"""The event log's size, estimated before a long run starts.

``wddmsim run --events`` grows its log with the run (about 3 MB per virtual second on the
examples). Before a run of :data:`LONG_NS` of virtual time or more (or any run with
``--max-log-bytes``), :func:`estimate_log` runs a short probe of the same scenario, seed and driver:
its first :data:`PROBE_NS` of virtual time (a tenth of the run at most, and at most
:data:`PROBE_EVENTS` kernel events), into a sink that counts the log's bytes and writes nothing.
The model is deterministic, so the probe makes the very lines the run will begin with; the estimate
is their size scaled to the run's length, plus the size of the probe's ``LogEnd`` line. The probe
is its own :class:`~wddmsim.runner.system.System`: the run and its log are the same bytes with or without
it. Its cost is bounded by :data:`PROBE_EVENTS`: on the shipped examples it takes 13 to 215 ms of
wall time (measured once the model's modules are loaded, as they are when ``wddmsim run`` probes:
it has built the run's own system by then).

:func:`estimate_line` is the line ``wddmsim run`` prints on standard error, e.g. ``event log: about
7.5 MB for 5 s of virtual time (estimated from the first 100 ms)``, with what ``--max-log-bytes``
will do when the estimate is over it.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..trace.output import encoded_size

__all__ = ["BUSY_RATE", "DEFAULT_BUDGET_FLOOR", "FAR_OVER", "LONG_NS", "PROBE_EVENTS", "PROBE_NS", "LogEstimate",
           "default_budget", "estimate_line", "estimate_log", "size_text", "wants_estimate"]

#: What a busy run's log takes per virtual second: about 3 MB (the examples' own logs).
BUSY_RATE = 3_000_000
#: How far over :data:`BUSY_RATE` an estimate must be for the run to get a log budget by default:
#: ten times a busy run's log is no study of scheduling but a flood (a script repeating a packet
#: hundreds of thousands of times in a second, NullRendering at full speed).
FAR_OVER = 10
#: The smallest default budget, whatever the run's length.
DEFAULT_BUDGET_FLOOR = 100_000_000

#: Runs at least this long (virtual ns) get the estimate before they start.
LONG_NS = 1_000_000_000
#: Virtual time the probe runs at most.
PROBE_NS = 100_000_000
#: Kernel events the probe runs at most.
PROBE_EVENTS = 2048


@dataclass(frozen=True)
class LogEstimate:
    """The estimate: ``bytes`` for a run of ``duration`` ns, from a probe of ``probe_ns`` ns that
    wrote ``probe_bytes`` (its ``LogEnd`` line included) in ``probe_events`` kernel events."""

    bytes: int
    duration: int
    probe_ns: int
    probe_bytes: int
    probe_events: int

    def time_at(self, size: int) -> int:
        """The virtual ns at which the log is estimated to reach ``size`` bytes."""
        if self.bytes <= 0:
            return self.duration
        return min(self.duration, size * self.duration // self.bytes)


class _ByteCount:
    """A text file that counts the UTF-8 bytes written to it, the last line's apart."""

    def __init__(self):
        self.bytes = 0
        self.last = 0

    def write(self, text: str) -> int:
        n = encoded_size(text)  # as the log writes it (a name that was not UTF-8 is escaped)
        self.bytes += n
        self.last = n
        return len(text)

    def flush(self) -> None:
        """Nothing to flush: nothing is written."""


def wants_estimate(duration: int, max_log_bytes: int | None) -> bool:
    """Whether a run of ``duration`` ns with an event log gets the estimate: a long one, or one
    with a log budget."""
    return duration >= LONG_NS or max_log_bytes is not None


def estimate_log(scenario, duration: int, *, stop=None, **system_kw) -> LogEstimate | None:
    """Probe ``scenario`` (built as ``System(scenario, **system_kw)``) and estimate the log of a
    run of ``duration`` ns; None when the probe cannot tell (it ended in a bug check, or no
    virtual time passed). ``stop``: the command's :class:`~wddmsim.runner.stop.RunStop`: after a
    signal during the probe (short, so it is not looked at) there is no estimate, and the run
    stops before it starts."""
    from .stop import RunStop
    from .system import System
    from ..trace import JsonlSink

    count = _ByteCount()
    sink = JsonlSink(count, process=False)
    probe_stop = RunStop(max_events=PROBE_EVENTS)
    system = System(scenario, trace=sink, **system_kw)
    result = system.run(min(PROBE_NS, max(1, duration // 10)), stop=probe_stop)
    sink.close()
    if result.bugcheck is not None or (stop is not None and stop.reason is not None):
        return None
    t = result.end
    if t <= 0:
        return None
    body = count.bytes - count.last
    return LogEstimate(body * duration // t + count.last, duration, t, count.bytes, result.summary["events"])


def default_budget(est: LogEstimate) -> int | None:
    """The ``--max-log-bytes`` a run gets when its command line gives none: None when the estimated
    log is within :data:`FAR_OVER` times a busy run's (:data:`BUSY_RATE` per virtual second), else
    that much for the run's length (at least :data:`DEFAULT_BUDGET_FLOOR`) when the estimate is past
    it. A flood of a second thus stops at 100 MB instead of writing 460 MB; an hour of a busy run
    (some 11 GB) is never stopped by default."""
    allowed = max(DEFAULT_BUDGET_FLOOR, FAR_OVER * BUSY_RATE * est.duration // 1_000_000_000)
    return allowed if est.bytes > allowed else None


def size_text(n: int) -> str:
    """A size for a person, in decimal units with two or three significant digits: ``31 MB``,
    ``1.5 MB``, ``420 KB``."""
    for unit, scale in (("GB", 10**9), ("MB", 10**6), ("KB", 10**3)):
        if n >= scale:
            v = n / scale
            return f"{v:.0f} {unit}" if v >= 10 else f"{v:.1f} {unit}"
    return f"{n} B"


def _time(ns: int) -> str:
    for unit, scale in (("s", 10**9), ("ms", 10**6), ("us", 10**3)):
        if ns >= scale:
            return f"{ns / scale:.3g} {unit}"
    return f"{ns} ns"


def estimate_line(est: LogEstimate, max_log_bytes: int | None = None) -> str:
    """The line for standard error: the estimated size, and when it is over ``max_log_bytes``,
    about when the budget will stop the run."""
    line = (f"event log: about {size_text(est.bytes)} for {_time(est.duration)} of virtual time "
            f"(estimated from the first {_time(est.probe_ns)})")
    if max_log_bytes is not None and est.bytes > max_log_bytes:
        line += (f"; that is over --max-log-bytes {size_text(max_log_bytes)}: "
                 f"the run will stop at about {_time(est.time_at(max_log_bytes))}")
    return line
