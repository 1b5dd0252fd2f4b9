"""The zoo: deliberately broken display miniport drivers, each breaking one contract rule of
the project's rule catalogue (``wddmsim rules``), and what must catch it.

Every driver is a small subclass of the reference driver (:class:`wddmsim.kmd.ReferenceDriver`) that
overrides one method the way a real driver gets it wrong, registered with :func:`breaks`: the rule
it breaks, the ``wddmsim verify`` area whose cases catch it, the settings it runs with, and its kind:

- ``runtime``: ``verify(driver, only=[area], settings=...)`` fails, and the first failing case's
  failure names the rule (``failure.rule``), with the bug check Windows would raise;
- ``start``: Windows would not start the adapter (a capability combination, node metadata, a
  missing entry point): ``verify`` raises :class:`~wddmsim.dxgkrnl.errors.AdapterStartError` whose
  reasons name the rule (``refusal``: the text a reason contains), and ``wddmsim verify`` exits 2.

``tests/test_zoo.py`` runs them all. From the command line (the zoo is a package under ``tests``)::

    PYTHONPATH=tests uv run wddmsim verify zoo.submission:IsrWithoutDpc --only submission

The modules are by area: :mod:`.submission`, :mod:`.fences`, :mod:`.preemption`, :mod:`.faults`,
:mod:`.flips`, :mod:`.interrupts`, :mod:`.tdr`, :mod:`.paging`, :mod:`.processes`, :mod:`.gpu_va`, :mod:`.hwqueues`,
:mod:`.start`, and :mod:`.groundtruth` (drivers only the GPU's ground truth catches: Windows would
see nothing wrong).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from wddmsim.kmd import ReferenceDriver

#: The stops zoo drivers end in.
C4 = 0xC4  # DRIVER_VERIFIER_DETECTED_VIOLATION, parameter 1 = the rule
VIDSCH = 0x119  # VIDEO_SCHEDULER_INTERNAL_ERROR
TDR_FAILURE = 0x116  # VIDEO_TDR_FAILURE


@dataclass(frozen=True)
class Broken:
    """One zoo driver and what must catch it (see the module doc)."""

    cls: type
    rule: int | None
    area: str | None
    settings: dict = field(default_factory=dict)
    kind: str = "runtime"
    refusal: str = ""
    #: ``runtime``: the bug check Windows stops with, (code, parameter 1) (0xC4 with the rule
    #: number where Windows has no stop of its own: the verifier's report)
    stop: tuple[int, int] | None = None

    @property
    def slug(self) -> str:
        return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "-", self.cls.__name__).lower()

    @property
    def id(self) -> str:
        """``rule039-isr-without-dpc``; ``start-<slug>`` for a refusal that names no rule."""
        return f"rule{self.rule:03d}-{self.slug}" if self.rule is not None else f"start-{self.slug}"

    @property
    def spec(self) -> str:
        """How ``wddmsim verify`` names it (with ``tests`` on PYTHONPATH)."""
        return f"{self.cls.__module__}:{self.cls.__qualname__}"

    @property
    def what(self) -> str:
        return " ".join((self.cls.__doc__ or "").strip().split("\n\n")[0].split())


#: Every registered zoo driver, in registration order.
ZOO: list[Broken] = []

KINDS = ("runtime", "start")


def breaks(rule: int | None, area: str | None = None, *, stop: tuple[int, int] | None = None,
           settings: dict | None = None, kind: str = "runtime", refusal: str = ""):
    """Register the decorated driver class: it breaks ``rule``, the ``area`` of the verify suite
    catches it with bug check ``stop`` = (code, parameter 1) (``kind="start"``: the adapter does
    not start; ``refusal`` is in the reason)."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    if kind == "runtime" and (area is None or rule is None or stop is None):
        raise ValueError("a runtime zoo driver names the rule it breaks, the area that catches it and the stop")
    if kind == "start" and not refusal:
        raise ValueError("a start zoo driver names the text of Windows' refusal")

    def deco(cls):
        ZOO.append(Broken(cls, rule, area, dict(settings or {}), kind, refusal, stop))
        return cls

    return deco


class _Edited:
    """The OS's interface as a driver sees it, with every interrupt it reports passed through
    ``edit(data)`` first (the driver's own bug, before the OS sees the structure)."""

    def __init__(self, real, edit):
        self._real = real
        self._edit = edit

    def __getattr__(self, name):
        return getattr(self._real, name)

    def DxgkCbNotifyInterrupt(self, hAdapter, pNotifyInterruptData):
        self._edit(pNotifyInterruptData)
        return self._real.DxgkCbNotifyInterrupt(hAdapter, pNotifyInterruptData)


class EditsInterrupts(ReferenceDriver):
    """The reference driver, with :meth:`edit` applied to every interrupt it reports: a zoo driver
    that gets one member of one interrupt type wrong overrides :meth:`edit`."""

    def DxgkDdiStartDevice(self, DxgkInterface):
        return super().DxgkDdiStartDevice(_Edited(DxgkInterface, self.edit))

    def edit(self, data) -> None:  # pragma: no cover - every subclass overrides it
        raise NotImplementedError


def load() -> list[Broken]:
    """Every zoo driver (importing the modules registers them)."""
    return list(ZOO)


from . import (  # noqa: E402,F401  (registers the drivers)
    faults,
    fences,
    flips,
    gpu_va,
    groundtruth,
    hwqueues,
    interrupts,
    paging,
    preemption,
    processes,
    start,
    submission,
    tdr,
)
