"""wddmsim's public Python API: load or build a scenario, run it (at once or step by step), and
read what it produced as typed objects.

This module is the stable surface for Python users (docs/api.md is its guide); every other module
of the package is internal and may change without notice. It adds no behaviour of its own: a run
here is the run ``wddmsim run`` makes (the same System, summary, bug check and event log), so its
figures are those the command prints.

- Scenarios: :func:`load` (a TOML file), :func:`parse` (TOML text), :func:`validate` (a dict as
  :func:`tomllib.loads` gives, or a :class:`Scenario` to check again). A scenario is a pydantic
  model that validates a field when it is assigned; :func:`run` checks the whole scenario again
  (cross-table rules, such as a context naming a node that exists) before it builds anything.
- Runs: :func:`run` runs to the end (the scenario's duration, ``until``, or a bug check);
  :class:`Simulation` advances virtual time in steps with the state readable in between.
- Results: :class:`Result` with a typed :class:`Summary`, the :class:`CrashRecord` of a bug check
  (None without one) and the event log as typed records (docs/events.md).

Problems of the input are :class:`ScenarioError` (a file, field or setting named in each line;
what a scenario takes otherwise than written is in its ``warnings``);
an assignment a scenario model refuses is pydantic's ``ValidationError``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from .ddi.bugcheck import BugCheck  # noqa: F401  (exported: API_NAMES)
from .dxgkrnl.crash import CrashRecord
from .scenario import Scenario, ScenarioError
from .publicnames import API_NAMES
from .trace.records import EventRecord

__all__ = list(API_NAMES)

#: The verifier modes a run takes, as ``wddmsim run --verifier``.
_VERIFIER_MODES = ("strict", "report", "off")


# ------------------------------------------------------------------------------------- scenarios
def load(path: str | os.PathLike, *, overrides: Mapping[str, Any] | None = None) -> Scenario:
    """The scenario file at ``path``, validated. ``overrides`` maps a path as the file spells it
    (``"scheduler.quantum"``, ``"adapter.nodes.0.preemption"``) to the value it gets, as
    ``wddmsim run --set`` does, before validation. An empty ``name`` becomes the file's stem; a
    driver named by a relative file path is found next to the file.

    Raises :class:`ScenarioError` (``problems``: one line per problem, ``FILE: field: reason``)."""
    from .scenario import load_scenario

    return load_scenario(os.fspath(path), _overrides(overrides))


def parse(text: str, *, source: str = "<string>", overrides: Mapping[str, Any] | None = None) -> Scenario:
    """A scenario from TOML text. ``source`` names it in messages (and, unless written in angle
    brackets, gives the scenario its name when the text has none); ``overrides`` as for :func:`load`.
    Raises :class:`ScenarioError`."""
    from .scenario.loader import _parse_toml, scenario_from_dict

    if not isinstance(text, str):
        raise TypeError(f"text: expected TOML text (a str), got {type(text).__name__}")
    return scenario_from_dict(_parse_toml(text, source), source, _overrides(overrides))


def validate(data: Mapping[str, Any] | Scenario, *, overrides: Mapping[str, Any] | None = None) -> Scenario:
    """A validated scenario from ``data``: a dict shaped like the TOML file (durations and sizes as
    text such as ``"2ms"`` or as int ns and bytes), or a :class:`Scenario`, checked again as a
    whole. Always a new object; ``overrides`` as for :func:`load`. Raises :class:`ScenarioError`,
    whose lines start with the scenario's name (``<scenario>`` when it has none)."""
    from .scenario import scenario_from_dict

    if isinstance(data, Scenario):
        source = data.name or "<scenario>"
        data = data.model_dump(by_alias=True, exclude_none=True)
    elif isinstance(data, Mapping):
        name = data.get("name")
        source = name if isinstance(name, str) and name else "<scenario>"
    else:
        raise TypeError(f"data: expected a dict or a Scenario, got {type(data).__name__}")
    return scenario_from_dict(dict(data), source, _overrides(overrides))


def _overrides(given: Mapping[str, Any] | None) -> list:
    """``{"path": value}`` as the loader's assignments (messages name them ``overrides PATH=VALUE``)."""
    if not given:
        return []
    from .scenario.overrides import Override, OverrideError, parse_path

    if not isinstance(given, Mapping):
        raise TypeError(f"overrides: expected a dict of path -> value, got {type(given).__name__}")
    out = []
    for key, value in given.items():
        try:
            out.append(Override(parse_path(str(key), "overrides"), value, f"{key}={value}", "overrides"))
        except OverrideError as e:
            raise ScenarioError("overrides", [str(e)], [str(e)]) from None
    return out


def _as_scenario(given) -> Scenario:
    """What :func:`run` and :class:`Simulation` take: a Scenario (checked again as a whole), a dict,
    or a file path (``str`` or ``os.PathLike``)."""
    if isinstance(given, (Scenario, Mapping)):
        return validate(given)
    if isinstance(given, (str, os.PathLike)):
        return load(given)
    raise TypeError(f"scenario: expected a Scenario, a dict or a file path, got {type(given).__name__}")


# ------------------------------------------------------------------------------------- summary
def _typed(cls, data: Mapping, **nested):
    """``cls`` built from the summary entry ``data``: each field from the key of its name, the
    ``nested`` ones through the converter given."""
    return cls(**{f.name: nested[f.name](data[f.name]) if f.name in nested else data[f.name] for f in fields(cls)})


@dataclass(frozen=True)
class NodeSummary:
    """One node (an engine the OS schedules): the Nodes table of ``wddmsim run``. Under hardware
    scheduling ``packets`` counts the buffers submitted to its queues, ``busy_pct`` is the
    GPU's own figure and ``idle_while_waiting_ns`` (nothing to run on its hardware queue while the
    OS held work for it, docs/scheduling.md) is None."""

    node: int
    name: str
    engine: str
    packets: int
    busy_pct: float
    gpu_busy_pct: float
    hw_queue_depth: int
    max_queued: int
    last_fence: int
    preemption: str
    preemptions: int
    preempt_latency_p50_ns: int | None
    preempt_latency_max_ns: int | None
    handoffs: int
    handoff_min_ns: int | None
    handoff_mean_ns: int | None
    handoff_max_ns: int | None
    idle_while_waiting_ns: int | None


@dataclass(frozen=True)
class ContextSummary:
    """One GPU context, ``context`` named ``"process/context"``: packets submitted and completed,
    latency from submitted to completed, GPU time and worst wait, and how it ended: device in
    error, ``api_error`` (the NTSTATUS name of the API call that failed and stopped its
    application, ``""`` when none did), destroyed. The research figures (docs/scheduling.md,
    "Scheduling quality in the summary"): its ``weight`` hint; ``share`` of its node's GPU time
    against ``share_target``, the share its weight asks for among the contexts that contended,
    and ``share_error``, the difference; its ``jobs`` judged against their deadlines,
    ``deadline_misses`` and tardiness (None without a deadline); ``preemptions`` of its running
    packets and ``preemption_cost_ns``, what they cost by the GPU's own account. Every figure but
    ``weight`` after ``latency_max_ns`` is None under hardware scheduling."""

    context: str
    node: str
    submitted: int
    completed: int
    null_rendering: int
    preempted: int
    aborted: int
    cancelled: int
    device_error: bool
    api_error: str
    destroyed: bool
    latency_min_ns: int | None
    latency_mean_ns: int | None
    latency_p50_ns: int | None
    latency_p99_ns: int | None
    latency_max_ns: int | None
    gpu_ns: int | None
    worst_wait_ns: int | None
    weight: float
    share: float | None
    share_target: float | None
    share_error: float | None
    deadline_misses: int | None
    jobs: int | None
    tardiness_p50_ns: int | None
    tardiness_p99_ns: int | None
    tardiness_max_ns: int | None
    preemptions: int | None
    preemption_cost_ns: int | None


@dataclass(frozen=True)
class DisplaySummary:
    """One display (VidPN source): presents, frames shown and dropped, frame time and latency from
    the present call to the display."""

    source: int
    refresh_hz: float
    presents: int
    displayed: int
    dropped: int
    frame_time_p50_ns: int | None
    frame_time_p99_ns: int | None
    latency_p50_ns: int | None
    latency_p99_ns: int | None
    latency_max_ns: int | None


@dataclass(frozen=True)
class ProcessSummary:
    """One process's GPU time: the GPU's own account and the OS's view (None where not measured)."""

    process: str
    pid: int
    gpu_busy_ns: int | None
    os_busy_ns: int | None


@dataclass(frozen=True)
class LiveDump:
    """A live dump the OS wrote during recovery: when, its bug check code, parameter 4."""

    t: int
    code: int
    p4: int


@dataclass(frozen=True)
class TdrSummary:
    """Timeout detection and recovery: engine and adapter resets, live dumps."""

    engine_resets: int
    adapter_resets: int
    live_dumps: tuple[LiveDump, ...]


@dataclass(frozen=True)
class FairnessSummary:
    """Jain's fairness index of GPU time among contexts of one priority contending for a node."""

    node: str
    priority_class: str
    priority: int
    contexts: tuple[str, ...]
    gpu_ns: tuple[int, ...]
    jain: float


@dataclass(frozen=True)
class SegmentSummary:
    """One memory segment: its id, kind, size and bytes in use at the end."""

    id: int
    kind: str
    size: int
    used: int


@dataclass(frozen=True)
class MemorySummary:
    """Video memory: segments, evictions and the paging they caused."""

    segments: tuple[SegmentSummary, ...]
    evictions: int
    paging_submissions: int
    bytes_paged_in: int
    bytes_paged_out: int
    context_switches: int
    paging_node: int
    bytes_mapped: int
    bytes_unmapped: int


@dataclass(frozen=True)
class CpuSummary:
    """Modelled CPU time of the submission path and its share per application submission."""

    total_ns: int
    submissions: int
    per_submission_ns: float


@dataclass(frozen=True)
class Violation:
    """A contract rule broken (reported with ``verifier="report"``): when, the rule, the message."""

    t: int
    rule: int
    name: str
    message: str


def _tuple_of(cls, **nested):
    return lambda items: tuple(_typed(cls, item, **nested) for item in items)


@dataclass(frozen=True)
class Summary:
    """What a run produced, as ``wddmsim run --json`` prints it, with typed members. The same on
    every run of the same scenario and seed (no wall-clock figure in it). ``wddm2`` (GPU virtual
    addresses, monitored fences, hardware queues; None before WDDM 2.0) and ``ledger`` (the packet
    ledger's totals per item kind, docs/ledger.md) stay plain dicts of the JSON summary;
    :meth:`as_dict` gives the whole summary as that dict."""

    scenario: str
    seed: int
    virtual_time_ns: int
    events: int
    packets_submitted: int
    packets_completed: int
    makespan_ns: int
    null_rendering_packets: int
    resubmissions: int
    preemption_aware: bool
    tdr: TdrSummary
    interrupts: int
    dpcs: int
    gpu_faults: int
    nodes: tuple[NodeSummary, ...]
    contexts: tuple[ContextSummary, ...]
    fairness: tuple[FairnessSummary, ...]
    processes: tuple[ProcessSummary, ...]
    displays: tuple[DisplaySummary, ...]
    memory: MemorySummary
    scheduling: str
    policy: str
    cpu: CpuSummary
    gpu_va: bool
    wddm2: dict | None
    violations: tuple[Violation, ...]
    ledger: dict

    @classmethod
    def from_dict(cls, data: Mapping) -> Summary:
        """The typed summary of the dict ``System.summary()`` (and ``wddmsim run --json``) gives."""
        summary = _typed(
            cls, data,
            tdr=lambda d: _typed(TdrSummary, d, live_dumps=_tuple_of(LiveDump)),
            nodes=_tuple_of(NodeSummary), contexts=_tuple_of(ContextSummary),
            fairness=_tuple_of(FairnessSummary, contexts=tuple, gpu_ns=tuple),
            processes=_tuple_of(ProcessSummary), displays=_tuple_of(DisplaySummary),
            memory=lambda d: _typed(MemorySummary, d, segments=_tuple_of(SegmentSummary)),
            cpu=lambda d: _typed(CpuSummary, d), violations=_tuple_of(Violation),
        )
        object.__setattr__(summary, "_data", dict(data))
        return summary

    def as_dict(self) -> dict:
        """The summary as the plain dict ``wddmsim run --json`` prints (a copy)."""
        import copy

        return copy.deepcopy(self._data)

    def node(self, name: str) -> NodeSummary:
        """The node called ``name`` (``"3D"``); a KeyError lists the names there are."""
        return _find(self.nodes, "name", name, "node")

    def context(self, name: str) -> ContextSummary:
        """The context ``"process/context"`` (``"game.exe/render"``); a KeyError lists them."""
        return _find(self.contexts, "context", name, "context")

    def display(self, source: int) -> DisplaySummary:
        """The display of VidPN source ``source`` (0, 1, ...); a KeyError lists them."""
        return _find(self.displays, "source", source, "display")


def _find(items, key: str, wanted, what: str):
    for item in items:
        if getattr(item, key) == wanted:
            return item
    have = ", ".join(repr(getattr(i, key)) for i in items) or "none"
    raise KeyError(f"no {what} {wanted!r}; there are: {have}")


# ------------------------------------------------------------------------------------- results
class Result:
    """A finished run: ``scenario`` (its name), ``seed``, ``end`` (the virtual time it ended at, ns),
    ``wall_s`` (wall-clock seconds it took, the one figure that differs from run to run),
    ``summary`` (:class:`Summary`), ``crash`` (the :class:`CrashRecord` of the bug check that
    stopped it, or None) and ``events`` (the event log as typed records, see :attr:`events`)."""

    __slots__ = ("scenario", "seed", "end", "wall_s", "summary", "crash", "_events", "_log_path")

    def __init__(self, *, scenario: str, seed: int, end: int, wall_s: float, summary: Summary,
                 crash: CrashRecord | None, events: list[EventRecord] | None, log_path: str | None):
        self.scenario = scenario
        self.seed = seed
        self.end = end
        self.wall_s = wall_s
        self.summary = summary
        self.crash = crash
        self._events = events
        self._log_path = log_path

    @property
    def events(self) -> list[EventRecord] | None:
        """The event log as typed records (one class per event, fields as attributes): the events
        collected with ``events=True``, or the file written with ``events=PATH`` read back (on
        first use); None when no log was kept here (``events=None`` or a sink of your own)."""
        if self._events is None and self._log_path is not None:
            self._events = read_events(self._log_path)
        return self._events

    def __repr__(self) -> str:
        how = f"stopped by {self.crash.bugcheck}" if self.crash is not None else "ran to the end"
        return f"<Result {self.scenario!r} seed {self.seed}: {how} at {self.end} ns>"


def read_events(path: str | os.PathLike) -> list[EventRecord]:
    """An event log file (JSON Lines, docs/events.md) as typed records."""
    from .trace.records import read_records

    return read_records(os.fspath(path))


# ------------------------------------------------------------------------------------- running
class _HeldEnd:
    """A sink in front of another that holds back the run's ``LogEnd`` until the run really ends:
    a run taken in steps ends its log once, where it stops."""

    def __init__(self, sink):
        self.sink = sink
        self._emit = sink.emit
        self.end: tuple[int, dict] | None = None

    @property
    def raw_args(self) -> bool:
        return getattr(self.sink, "raw_args", False)

    def emit(self, t: int, event: str, fields: dict) -> None:
        if event == "LogEnd":
            self.end = (t, fields)
        else:
            self._emit(t, event, fields)

    def end_log(self, t: int) -> None:
        """Write the last ``LogEnd`` held (one ``reason: time`` at ``t`` when no step ran)."""
        t_end, fields = self.end if self.end is not None else (t, {"reason": "time"})
        self._emit(t_end, "LogEnd", fields)


def _time(value, what: str) -> int:
    from .util.units import parse_duration

    try:
        return parse_duration(value)
    except ValueError as e:
        raise ValueError(f"{what}: {e}") from None


def _run_length(value) -> int:
    """``until``: a duration within the range of a run's length (``wddmsim run --until`` takes the
    same), or :class:`ValueError` naming it."""
    from .scenario.bounds import RUN_DURATION

    end = _time(value, "until")
    problem = RUN_DURATION.problem(end)
    if problem:
        raise ValueError(f"until: {problem}")
    return end


class Simulation:
    """One run, advanced in steps: build it, :meth:`step` through virtual time reading
    :attr:`summary`, :attr:`events` and :attr:`crash` in between, and :meth:`run` it to the end or
    :meth:`close` it where it is; both give its :class:`Result`. Steps change nothing in the run:
    the events and summary of a run taken in steps are those of the same run taken at once.

    ``scenario``: a :class:`Scenario` (checked again as a whole), a dict, or a file path.
    ``seed``: the seed of every random stream (default the scenario's). ``driver``: the driver's
    class, or its name (``"package.module:Class"``, ``"path/file.py:Class"``); default the
    scenario's ``[driver]``, else the reference driver. ``settings``: driver settings over the
    scenario's ``[driver]`` table. ``until``: where the run ends (ns, or a duration such as
    ``"500ms"``, at most 1 hour as a scenario's ``duration``; default the scenario's duration). ``events``: the event log: None (none kept),
    True (kept in memory), a file path (written as JSON Lines), or a sink of your own (any object
    with ``emit(t, event, fields)``; you close it). ``verifier``: ``"strict"`` (a broken contract
    rule stops the run with its bug check), ``"report"`` (listed in the summary's violations) or
    ``"off"``.

    Raises :class:`ScenarioError` when the run cannot be built (a bad scenario or driver setting,
    a driver Windows would not start, an application call that fails at creation). Use it in a
    ``with`` block, or call :meth:`run` or :meth:`close`, so that an event log file is closed.
    """

    def __init__(self, scenario, *, seed: int | None = None, driver=None, settings: Mapping[str, Any] | None = None,
                 until: int | str | None = None, events=None, verifier: str = "strict"):
        if verifier not in _VERIFIER_MODES:
            raise ValueError(f"verifier: must be one of {', '.join(_VERIFIER_MODES)}, got {verifier!r}")
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
            raise ValueError(f"seed: must be a whole number, 0 or more, got {seed!r}")
        sc = _as_scenario(scenario)
        self._end = sc.duration if until is None else _run_length(until)
        if self._end > sc.duration:
            # The run lasts to ``until``: the scenario is checked with that duration, so every bound
            # that depends on the run's length (a storm's interrupts, a repeat against the time
            # left) holds for the run made, as for wddmsim run --until.
            sc = validate(sc, overrides={"duration": self._end})
        self._list = self._file = None
        self._own = None  # a sink this object opened and closes
        if events is None or events is False:
            sink = None
        elif events is True:
            from .trace import ListSink

            sink = self._list = ListSink()
        elif isinstance(events, (str, os.PathLike)):
            from .trace import JsonlSink

            self._file = os.fspath(events)
            sink = self._own = JsonlSink(self._file)
        elif callable(getattr(events, "emit", None)):
            sink = events
        else:
            raise TypeError(f"events: expected None, True, a file path or a sink with emit(), got {type(events).__name__}")
        self._log = _HeldEnd(sink) if sink is not None else None
        try:
            self._system = _build(sc, seed=seed, trace=self._log, verifier=verifier, driver=driver,
                                  settings=dict(settings) if settings else None)
        except BaseException:
            if self._own is not None:
                self._own.close()
            raise
        self._ran = False
        self._crash: CrashRecord | None = None
        self._wall = 0.0
        self._result: Result | None = None
        self._typed: list[EventRecord] = []

    # -- where the run is ----------------------------------------------------------------------------
    @property
    def now(self) -> int:
        """The virtual time reached, ns."""
        return self._system.sim.now

    @property
    def end(self) -> int:
        """Where :meth:`run` stops when no bug check stops it first, ns."""
        return self._end

    @property
    def next_time(self) -> int | None:
        """When the next scheduled event is due, ns (None when nothing is scheduled)."""
        return self._system.sim.peek()

    @property
    def done(self) -> bool:
        """True once the run can go no further: a bug check stopped it, it reached :attr:`end`,
        or it was closed."""
        return self._result is not None or self._crash is not None or (self._ran and self.now >= self._end)

    @property
    def crash(self) -> CrashRecord | None:
        """The bug check that stopped the run (its :class:`CrashRecord`), or None."""
        return self._crash

    @property
    def summary(self) -> Summary:
        """The summary as of :attr:`now`."""
        if self._result is not None:
            return self._result.summary
        return Summary.from_dict(self._system.summary())

    @property
    def events(self) -> list[EventRecord] | None:
        """The events so far as typed records, when kept in memory (``events=True``), else None."""
        if self._list is None:
            return None
        from .trace.records import record

        kept = self._list.events
        self._typed.extend(record(e) for e in kept[len(self._typed):])
        return list(self._typed)

    # -- moving on -----------------------------------------------------------------------------------
    def step(self, until: int | str | None = None, *, by: int | str | None = None) -> bool:
        """Advance virtual time: to ``until`` (ns or a duration), ``by`` a span, or, with neither,
        through the next instant at which something is scheduled. Never past :attr:`end`; a bug
        check stops it where it happens. Returns whether the run can go on (not :attr:`done`);
        once done, a step does nothing."""
        if until is not None and by is not None:
            raise TypeError("step: give until or by, not both")
        if self.done:
            return False
        if until is not None:
            target = _time(until, "until")
            if target < self.now:
                raise ValueError(f"until: cannot go back to {target} ns, the run is at {self.now} ns")
        elif by is not None:
            target = self.now + _time(by, "by")
        else:
            upcoming = self.next_time
            target = self._end if upcoming is None else upcoming
        self._advance(min(target, self._end))
        return not self.done

    def run(self) -> Result:
        """Run to :attr:`end` (or to a bug check) and close; the run's :class:`Result`."""
        if not self.done:
            self._advance(self._end)
        return self.close()

    def close(self) -> Result:
        """End the run where it is: its log ends here (and a log file is closed); the
        :class:`Result` as of :attr:`now`. Called again, it gives the same Result. A run closed
        before its first step runs what is due at time 0 first, so that a bug check raised while
        the scenario's objects were made (a DxgkDdiCreateContext answer the OS stops on) is in it."""
        if self._result is not None:
            return self._result
        if not self._ran:
            self._advance(self.now)  # a bug check raised while the scenario's objects were made
        summary = Summary.from_dict(self._system.summary())
        try:
            if self._log is not None:
                self._log.end_log(self.now)
        finally:
            if self._own is not None:
                self._own.close()
        events = self.events
        self._result = Result(scenario=summary.scenario, seed=summary.seed, end=self.now, wall_s=self._wall,
                              summary=summary, crash=self._crash, events=events,
                              log_path=self._file)
        return self._result

    def _advance(self, target: int) -> None:
        out = self._system.run(until=target)
        self._ran = True
        self._wall += out.wall_s
        self._crash = out.bugcheck

    def __enter__(self) -> Simulation:
        return self

    def __exit__(self, *exc) -> None:
        if self._result is None:
            if exc[0] is None:
                self.close()
            elif self._own is not None:
                from .trace.ledger import LedgerError

                if isinstance(exc[1], LedgerError) and self._log is not None and self._log.end is not None:
                    # The ledger fails a run after its LogEnd: the log stays whole for `wddmsim check`.
                    self._log.end_log(self.now)
                self._own.close()

    def __repr__(self) -> str:
        state = "closed" if self._result is not None else (
            f"stopped by {self._crash.bugcheck}" if self._crash is not None else f"at {self.now} ns of {self._end}")
        return f"<Simulation {self._system.scenario.name!r} {state}>"


def _build(sc: Scenario, **kw):
    """The System for ``sc``, or the :class:`ScenarioError` that says why it cannot be built, with
    the lines ``wddmsim run`` prints."""
    from .dxgkrnl import ApiError
    from .dxgkrnl.errors import AdapterStartError
    from .runner.system import ConfigError, System

    name = sc.name or "<scenario>"
    try:
        return System(sc, **kw)
    except ConfigError as e:
        raise ScenarioError(name, [f"{name}: {p}: {r}" for p, r in e.problems]) from None
    except AdapterStartError as e:
        raise ScenarioError(name, [f"{name}: the adapter does not start: {p}" for p in e.problems]) from None
    except ApiError as e:
        raise ScenarioError(name, [f"{name}: the scenario cannot start: {e}"]) from None


def run(scenario, *, seed: int | None = None, driver=None, settings: Mapping[str, Any] | None = None,
        until: int | str | None = None, events=None, verifier: str = "strict") -> Result:
    """Run ``scenario`` to its end (the scenario's duration or ``until``) or to a bug check, and
    return its :class:`Result`. The arguments are those of :class:`Simulation`."""
    with Simulation(scenario, seed=seed, driver=driver, settings=settings, until=until, events=events,
                    verifier=verifier) as sim:
        return sim.run()

