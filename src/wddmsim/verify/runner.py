"""Running the conformance suite against a driver and judging each case.

:func:`verify` reads what the driver declares (a probe: the adapter is started with the driver and
its settings, and the OS's view of its capabilities is kept), runs every case that applies with
the verifier in strict mode, and returns a :class:`Report`. A case passes when the run ends without
a bug check and its expectations hold; a case whose needs the driver does not declare is ``"n/a"``
(not applicable), the word the table, JSON and JUnit XML use. For a failure the report keeps what a
driver engineer needs to find the bug: the rule broken (its number, name and words), the entry
point of the driver's that broke it and where its code is (:mod:`.blame`), the bug check Windows
would raise, the last crossing logged before the stop (the DDI call or callback) and whether it is
where the rule broke, the crash record decoded member by member, and the driver's traceback for a
driver fault.

The driver's code can end abnormally outside a DDI entry point too: in the user-mode driver, in a
property the OS reads, in its settings model. An exception from there (the traceback holds a frame
of the user's code), ``SystemExit`` from ``sys.exit()`` wherever it comes from, fails the case
with the exception and where it was raised (:func:`escaped`), never ends the suite: a driver's
``sys.exit(0)`` is not a pass. One raised while the driver is probed means the driver does not
start (:class:`~wddmsim.dxgkrnl.errors.AdapterStartError`). An exception with no frame of the
user's is the model's own and propagates; so does ``KeyboardInterrupt`` (a person's Ctrl-C).

A driver call that never returns (an endless loop in an entry point) is stopped by the DDI watchdog
after 10 s of host time (:mod:`wddmsim.dxgkrnl.watchdog`; ``WDDMSIM_DDI_WATCHDOG_S`` sets another
limit): the case fails with the watchdog's bug check (0x133 DPC_WATCHDOG_VIOLATION at DISPATCH_LEVEL
or DIRQL, 0x116 VIDEO_TDR_FAILURE at PASSIVE_LEVEL) naming the entry point and where its code was,
and the suite goes on with the next case.

With ``interruptible`` (``wddmsim verify`` asks for it), a SIGINT or SIGTERM while the cases run
(:func:`wddmsim.runner.stop.abandoning`) abandons the case under way, inside a driver's loop too, and
:func:`verify` returns the verdict on the cases that ran: :attr:`Report.interrupted` names the
signal, :attr:`Report.interrupted_case` the case abandoned; such a report never passes. A second
signal ends the process at once (exit status 130).
"""

from __future__ import annotations

import os
import sysconfig
import time
import traceback
from dataclasses import dataclass, field
from typing import Callable

from ..ddi import codec
from ..ddi.bugcheck import describe
from ..ddi.versions import ddi_version
from ..dxgkrnl.groundtruth import MARK as GROUND_TRUTH_MARK
from .blame import Definition, WatchingSink, crossing_entry, definition, responsible
from .suite import AREAS, CASES, Case, Declared, Outcome

#: Events kept around a failure: the crossings a driver engineer looks at first.
CROSSINGS = ("DdiCall", "Callback")
#: The verdict of a case the driver does not declare what it needs for: "not applicable", the word
#: the table, ``--json``, JUnit XML and the docs use.
NOT_APPLICABLE = "n/a"


@dataclass
class Failure:
    """Why a case failed."""

    messages: list[str] = field(default_factory=list)
    rule: int | None = None
    rule_name: str | None = None
    rule_words: str | None = None
    bugcheck: dict | None = None
    event: dict | None = None
    crash: dict | None = None
    traceback: str | None = None
    #: a ground-truth check (what the GPU model really ran, which Windows cannot see) found it
    ground_truth: bool = False
    #: the driver's entry point that broke the rule (:func:`.blame.responsible`; None: nothing says)
    entry: str | None = None
    #: where that entry point's code is in the driver's class (None: not known)
    definition: Definition | None = None
    #: ``event`` is the crossing where the rule broke (at the stop's time, in that entry point);
    #: False: only the last one logged before the stop
    at_crossing: bool = True


@dataclass
class CaseResult:
    """One case's verdict: ``"pass"``, ``"fail"`` or ``"n/a"`` (not applicable: the driver does not
    declare what the case needs; ``reason`` says what), the rules it exercised and how long it took."""

    case: Case
    verdict: str
    reason: str = ""
    rules: list[int] = field(default_factory=list)
    failure: Failure | None = None
    wall_s: float = 0.0

    @property
    def area(self) -> str:
        return self.case.area

    @property
    def name(self) -> str:
        return self.case.name


@dataclass
class Report:
    """The suite's verdict on one driver."""

    driver: str
    declared: Declared
    results: list[CaseResult]
    wall_s: float
    #: the signal that ended the suite before its last case (None: every case ran)
    interrupted: str | None = None
    #: the case abandoned when it came (None: it came between two cases)
    interrupted_case: str | None = None
    #: the cases the suite was to run (``results`` holds those that ran)
    planned: int = 0

    @property
    def passed(self) -> bool:
        return (self.interrupted is None and all(r.verdict != "fail" for r in self.results)
                and any(r.verdict == "pass" for r in self.results))

    def count(self, verdict: str) -> int:
        return sum(1 for r in self.results if r.verdict == verdict)

    @property
    def rules(self) -> list[int]:
        """Every rule some case exercised."""
        return sorted({n for r in self.results for n in r.rules})


def _rule_words(number: int | None) -> str | None:
    if number is None:
        return None
    from ..ddi.rules.catalog import catalog

    if not 1 <= number <= len(catalog()):
        return None
    return catalog()[number - 1].words or None


def declared(system) -> Declared:
    """What the driver declared, from the OS's view of it after adapter start: its interface
    version, its DXGK_DRIVERCAPS and its nodes' metadata."""
    adapter = system.adapter
    caps = adapter.caps
    version = adapter.version
    flip = caps.FlipCaps
    hws = version.value >= ddi_version("wddm2_5").value and bool(adapter.node_flags) and all(
        f is not None and f.ContextSchedulingSupported for f in adapter.node_flags)
    return Declared(
        version=version.name, version_value=version.value, nodes=len(adapter.vidsch.nodes),
        multi_engine_aware=bool(adapter.multi_engine_aware), preemption_aware=bool(adapter.preemption_aware),
        per_engine_reset=caps.SupportPerEngineTDR, cancel_aware=caps.CancelCommandAware and caps.MultiEngineAware,
        virtual_addressing=caps.VirtualAddressingSupported and version.value >= ddi_version("wddm2_0").value,
        hardware_scheduling=hws and caps.VirtualAddressingSupported,
        flip_interval=bool(flip.get("FlipInterval")), flip_no_wait=bool(flip.get("FlipOnVSyncWithNoWait")),
        mmio_flips=bool(flip.get("FlipOnVSyncMmIo")),
        overlays=caps.SupportMultiPlaneOverlay and caps.MaxOverlayPlanes >= 1,
        page_faults=version.value >= ddi_version("wddm2_0").value,
        hw_flip_queue=adapter.hwflips is not None,
    )


#: Where wddmsim's own code and Python's (the standard library, installed packages) live: a frame
#: anywhere else is the user's (:func:`escaped`). A compiled module of wddmsim's names its source
#: relative (``wddmsim/sim/kernel.py``); Python's own pseudo-files are ``<frozen ...>``, ``<string>``.
_NOT_USER = tuple(sorted({os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep}
                         | {os.path.abspath(p) + os.sep for k, p in sysconfig.get_paths().items()
                            if k in ("stdlib", "platstdlib", "purelib", "platlib") and p})) + ("wddmsim" + os.sep, "<")


def _user_frames(exc: BaseException) -> list:
    return [f for f in traceback.extract_tb(exc.__traceback__) if not f.filename.startswith(_NOT_USER)]


def escaped(exc: BaseException) -> tuple[str, str] | None:
    """What to say of ``exc``, an exception that escaped a run outside the DDI gateway, when it is
    the driver's code that ended abnormally (a ``SystemExit``, or any exception with a frame of the
    user's code in its traceback): ``(message, the traceback's user frames)``; None when it is the
    model's own. ``KeyboardInterrupt`` is never the driver's."""
    if isinstance(exc, KeyboardInterrupt):
        return None
    frames = _user_frames(exc)
    if not frames and not isinstance(exc, SystemExit):
        return None
    said = str(exc)
    what = f"{type(exc).__name__}: {said}" if said else type(exc).__name__
    where = f" ({frames[-1].filename}, line {frames[-1].lineno}, in {frames[-1].name})" if frames else ""
    te = traceback.TracebackException.from_exception(exc)
    te.stack = traceback.StackSummary.from_list(frames)
    return f"the driver's code raised {what} outside a DDI entry point{where}", "".join(te.format())


def _build(scenario: dict, driver_cls, settings, trace=None):
    from ..scenario import scenario_from_dict
    from ..runner.system import System

    return System(scenario_from_dict(scenario, f"<verify {scenario['name']}>"), trace=trace,
                  driver=driver_cls, settings=settings, verifier="strict")


def probe(driver_cls, settings=None) -> Declared:
    """Start an adapter with the driver on the suite's GPU and read what it declares. A driver that
    supports hardware scheduling at WDDM 3.0 or later is started once more under it: the OS enables
    the hardware flip queue only there, and a driver declares MaxHwQueuedFlips only once enabled."""
    from dataclasses import replace

    from .suite import process, context, scenario, script

    procs = [process("probe", context("c", script(("1s", "0ns"))))]
    try:
        d = declared(_build(scenario("probe", procs), driver_cls, settings))
        if d.hardware_scheduling and d.version_value >= ddi_version("wddm3_0").value:
            hw = _build(scenario("probe", procs, adapter={"scheduling": "hardware"}), driver_cls, settings)
            d = replace(d, hw_flip_queue=hw.adapter.hwflips is not None)
    except BaseException as e:  # noqa: BLE001 - the driver's code ended abnormally (the module doc)
        said = escaped(e)
        if said is None:
            raise
        from ..dxgkrnl.errors import AdapterStartError

        raise AdapterStartError([said[0] + "\n" + said[1]]) from None
    return d


def run_case(case: Case, driver_cls, d: Declared, settings=None) -> CaseResult:
    """Run one case with the driver (see the module doc)."""
    t0 = time.perf_counter()
    reason = d.lacks(case.needs)
    if reason is not None:
        return CaseResult(case, NOT_APPLICABLE, reason)
    trace = WatchingSink()
    try:
        system = _build(case.scenario(d), driver_cls, settings, trace)
        trace.running = lambda: system.adapter.ddi.active
        if case.prepare is not None:
            case.prepare(system)
        result = system.run()
        if system.runtime.umd_faults:
            # The user-mode driver raised in an application's process: the run went on without
            # that application (as Windows does); the case fails on the first such fault.
            raise system.runtime.umd_faults[0].original
    except BaseException as e:  # noqa: BLE001 - the driver's code ended abnormally (the module doc)
        said = escaped(e)
        if said is None:
            raise
        failure = Failure(messages=[said[0]], traceback=said[1])
        return CaseResult(case, "fail", said[0], [], failure, time.perf_counter() - t0)
    out = Outcome(system, result, trace.events)
    rules = sorted(system.adapter.rules_exercised())
    failure = None
    if result.bugcheck is not None:
        failure = failure_of(result.bugcheck, trace.events, trace, driver_cls)
    else:
        found = case.expect(out)
        if found:
            failure = Failure(messages=found)
    verdict = "fail" if failure is not None else "pass"
    return CaseResult(case, verdict, failure.messages[0] if failure else "", rules, failure,
                      time.perf_counter() - t0)


def failure_of(record, events: list[dict], sink: WatchingSink | None = None, driver_cls=None) -> Failure:
    """A failure from a crash record: the stop, the rule, the entry point that broke it (with where
    its code is, given the driver's class), the last crossing before, the record. ``sink``, the
    run's :class:`~.blame.WatchingSink`, tells the entry point running at the violation."""
    bc = record.bugcheck
    index = next((i for i in range(len(events) - 1, -1, -1) if events[i]["event"] in CROSSINGS), None)
    event = events[index] if index is not None else None
    entry = responsible(record, events, sink, index)
    at_crossing = False
    if event is not None and event["t"] == record.time:
        belongs = crossing_entry(events, index, sink)
        at_crossing = entry is None or belongs is None or belongs == entry
    crash = record.to_json()
    if record.struct and record.data:
        try:
            from ..ddi.registry import RECORDS

            rec = RECORDS[record.struct]
            crash["decoded"] = {f.path: f.text for f in codec.decode(rec, record.data, record.arch, record.ddi_version)}
        except Exception:  # noqa: BLE001 - a record the decoder cannot read is shown raw
            crash["decoded"] = None
    return Failure(
        messages=[record.message], rule=record.rule, rule_name=record.rule_name, rule_words=_rule_words(record.rule),
        bugcheck={"code": int(bc.code), "name": bc.name, "p1": bc.p1, "p2": bc.p2, "p3": bc.p3, "p4": bc.p4,
                  "explained": describe(bc)},
        event=event, crash=crash, traceback=record.traceback, ground_truth=GROUND_TRUTH_MARK in record.message,
        entry=entry, definition=definition(driver_cls, entry) if driver_cls is not None and entry else None,
        at_crossing=at_crossing)


def select(only: tuple[str, ...] | list[str] | None) -> list[Case]:
    """The cases of the areas (or ``area/name`` ids) in ``only`` (all when empty)."""
    if not only:
        return list(CASES)
    wanted = set(only)
    unknown = [w for w in wanted if w not in AREAS and w not in {c.id for c in CASES}]
    if unknown:
        raise ValueError(f"no area or case called {', '.join(sorted(unknown))}; areas: {', '.join(AREAS)}")
    return [c for c in CASES if c.area in wanted or c.id in wanted]


def verify(driver_cls, *, settings=None, only=None, name: str | None = None,
           on_case: Callable[[CaseResult], None] | None = None, interruptible: bool = False) -> Report:
    """Run the suite (or the areas in ``only``) against ``driver_cls``; ``on_case`` is called after
    each case (a progress display). ``interruptible``: a SIGINT or SIGTERM while the cases run ends
    the suite with the verdict on the cases that ran (the module doc); without it, a Ctrl-C raises
    ``KeyboardInterrupt`` as anywhere else."""
    from contextlib import nullcontext

    from ..runner.stop import abandoning

    t0 = time.perf_counter()
    cases = select(only)
    d = probe(driver_cls, settings)
    results = []
    signal_name = current = None
    with abandoning() if interruptible else nullcontext() as stop:
        try:
            for case in cases:
                current = case
                r = run_case(case, driver_cls, d, settings)
                results.append(r)
                current = None
                if on_case is not None:
                    on_case(r)
        except KeyboardInterrupt as e:
            if not interruptible:
                raise
            signal_name = getattr(e, "signal", None) or (stop.signal if stop is not None else None) or "SIGINT"
    return Report(name or f"{driver_cls.__module__}:{driver_cls.__qualname__}", d, results,
                  time.perf_counter() - t0, interrupted=signal_name,
                  interrupted_case=current.id if signal_name is not None and current is not None else None,
                  planned=len(cases))
