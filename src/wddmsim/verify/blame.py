"""Which entry point of the driver's broke a rule, and where its code is: what a failure of
``wddmsim verify`` points at (docs/verify.md, "Reading a failure").

The crossing logged last before a stop is not always the driver's code that broke the rule: a DPC
that returns without calling ``DxgkCbNotifyDpc`` is judged as it returns, and its call is not in the
log, so the last crossing is the ISR's ``DxgkCbNotifyInterrupt`` of an earlier interrupt. The entry
point responsible (:func:`responsible`) is found in this order:

1. the one the crash record names (``ddi``): a driver fault, the DDI watchdog, a status rule, a
   DPC or interrupt storm;
2. the one that was running when the verifier found the violation (the gateway's ``active``,
   noted by :class:`WatchingSink` as the ``VerifierViolation`` event goes by): the rule was broken
   by a callback the driver made from it, or by the structure it passed to one;
3. for the checks the OS makes as the ISR or the DPC returns, by the violation's name
   (:data:`ON_RETURN`): the routine that left its duty undone;
4. the entry point the violation's message is about, when the message starts with its name
   (``DxgkDdiSetVidPnSourceAddress programmed the flip of ...``);
5. the crossing at the stop's own time: a DDI call, or the entry point that made the callback.

None when nothing says (some ground-truth checks of what the GPU did, an expectation of the case).

:func:`definition` finds that entry point along the driver class's MRO and, where Python can tell
(``inspect``), the file and line where its code starts.
"""

from __future__ import annotations

import inspect
import os
import re
from dataclasses import dataclass
from typing import Callable

from ..trace import ListSink

#: The violations the OS finds as the ISR or the DPC returns, by name: the routine responsible.
ON_RETURN = {
    "IsrQueuesDpc": "DxgkDdiInterruptRoutine",  # rule 39: the ISR reported events and queued no DPC
    "IsrDismissesInterrupt": "DxgkDdiInterruptRoutine",  # rule 43: its return against the GPU's status
    "DpcNotifiesDpc": "DxgkDdiDpcRoutine",  # rule 39: the DPC returned without DxgkCbNotifyDpc
}

#: A violation's message that is about one entry point starts with its name (after the rule's
#: ``rule N (Name): `` and a ground-truth check's ``ground truth: ``).
_SUBJECT = re.compile(r"(?:rule \d+ \(\w+\): )?(?:ground truth: )?(DxgkDdi\w+)\b")


class WatchingSink(ListSink):
    """A :class:`~wddmsim.trace.ListSink` that also notes which entry point was running when the
    verifier found a violation and when the driver made a callback. ``running`` (set once the
    system is built) says which: the DDI gateway's ``active``."""

    def __init__(self):
        super().__init__()
        self.running: Callable[[], str | None] | None = None
        #: (time, rule, the entry point running) of each ``VerifierViolation``
        self.violations: list[tuple[int, int, str | None]] = []
        #: index in ``events`` of each ``Callback`` -> the entry point that made it
        self.callers: dict[int, str | None] = {}

    def emit(self, t: int, event: str, fields: dict) -> None:
        if self.running is not None:
            if event == "VerifierViolation":
                self.violations.append((t, fields.get("rule"), self.running()))
            elif event == "Callback":
                self.callers[len(self.events)] = self.running()
        super().emit(t, event, fields)


def responsible(record, events: list[dict], sink: WatchingSink | None = None,
                crossing: int | None = None) -> str | None:
    """The entry point whose code broke the rule of ``record`` (a crash record), in the order of the
    module doc; ``events`` the run's log, ``sink`` the sink that noted it (None: steps 2 and the
    callback half of 5 are skipped), ``crossing`` the index in ``events`` of the last crossing."""
    if record.ddi:
        return record.ddi
    if sink is not None:
        running = [name for t, rule, name in sink.violations if t == record.time and rule == record.rule]
        if running and running[-1]:
            return running[-1]
    if record.rule_name in ON_RETURN:
        return ON_RETURN[record.rule_name]
    m = _SUBJECT.match(record.message or "")
    if m:
        return m.group(1)
    return crossing_entry(events, crossing, sink) if crossing is not None and \
        events[crossing]["t"] == record.time else None


def crossing_entry(events: list[dict], index: int, sink: WatchingSink | None) -> str | None:
    """The driver's entry point a crossing belongs to: a DDI call's own name, the entry point that
    made a callback (None where the sink did not note it)."""
    e = events[index]
    if e["event"] == "DdiCall":
        return e.get("name")
    return sink.callers.get(index) if sink is not None else None


@dataclass(frozen=True)
class Definition:
    """Where an entry point's code is: the class along the driver's MRO that defines it, and the
    file and first line of its code (None where Python cannot tell)."""

    entry: str
    owner: str  # the class's qualified name (its file says where it lives)
    own: bool  # defined by the driver class itself (not inherited)
    file: str | None = None
    line: int | None = None

    @property
    def where(self) -> str:
        """``tests/zoo/submission.py:86``, or ``""``."""
        if self.file is None:
            return ""
        return f"{self.file}:{self.line}" if self.line is not None else self.file

    def as_json(self) -> dict:
        return {"name": self.entry, "class": self.owner, "inherited": not self.own, "file": self.file,
                "line": self.line}


def definition(driver_cls, entry: str) -> Definition | None:
    """Where ``driver_cls``'s code for ``entry`` is (see :class:`Definition`); None when no class of
    its MRO defines it as a function. The file is given relative to the current directory when it
    is inside it."""
    for klass in getattr(driver_cls, "__mro__", ()):
        if entry not in vars(klass):
            continue
        fn = vars(klass)[entry]
        if isinstance(fn, (staticmethod, classmethod)):
            fn = fn.__func__
        fn = inspect.unwrap(fn) if callable(fn) else fn
        if not inspect.isfunction(fn):
            return None
        try:
            path = inspect.getsourcefile(fn)
            line = inspect.getsourcelines(fn)[1]
        except (OSError, TypeError):
            path, line = getattr(fn.__code__, "co_filename", None), fn.__code__.co_firstlineno
        return Definition(entry, klass.__qualname__, klass is driver_cls, _shown(path) if path else None, line)
    return None


def _shown(path: str) -> str:
    """``path`` relative to the current directory when it is inside it, else absolute."""
    full = os.path.abspath(path)
    try:
        rel = os.path.relpath(full)
    except ValueError:  # another drive (Windows)
        return full
    return full if rel.startswith(os.pardir) else rel
