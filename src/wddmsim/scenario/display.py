"""The desktop compositor (``[[compositor]]``): dwm.exe on one display, composing windowed
presents and desktop updates at the vsync and stepping aside for a full-screen flip.

:class:`Compositor` is its table, :class:`CompositorUpdate` one thing on the desktop it must draw;
:mod:`wddmsim.workloads.compositor` runs it. Its process id, display and node are checked against
the rest of the scenario in :mod:`.consistency`.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, field_validator

from .fields import U32, WHY_LIST_BIG, WHY_PID, WHY_SOURCE, Duration, ScenarioModel, entries_in, int_in, ns, ordered

__all__ = ["Compositor", "CompositorUpdate"]


class CompositorUpdate(ScenarioModel):
    """Something on the desktop the compositor must draw (a window the scenario does not run, the
    cursor, a caret): it composes at the first vsync at or after ``at``."""

    at: Duration
    #: CPU time from that vsync to its present (default: the compositor's ``cpu``)
    cpu: Duration | None = None
    #: GPU time of that composition (default: the compositor's ``work``)
    work: Duration | None = None


class Compositor(ScenarioModel):
    """The desktop compositor (dwm.exe) on one VidPn source: at each vsync with something new (a
    windowed present, a desktop update) it composes and flips its own swap chain; it steps aside
    for a full-screen flip-model swap chain (independent flip) and for an exclusive one. See
    :mod:`wddmsim.workloads.compositor`."""

    #: its process (created once; several [[compositor]] tables share it)
    process: str = Field(default="dwm.exe", min_length=1)
    pid: int_in(1, U32, WHY_PID) | None = None
    #: the node its composition runs on (default: the adapter's first)
    node: str | None = None
    vidpn_source: int_in(0, 15, WHY_SOURCE) = 0
    #: its swap chain's address as PresentMon shows it
    address: str | None = Field(default=None, pattern=r"^0x[0-9A-Fa-f]{1,16}$")
    #: CPU time from the vsync it wakes at to its present call
    cpu: Duration = ns("100us")
    #: GPU time of one composition
    work: Duration = ns("500us")
    #: compositions in a row of a full-screen flip-model swap chain, alone on the source, before
    #: the compositor lets it flip independently
    independent_flip_after: int_in(1, 1000, "the model's limit on compositions before an independent flip") = 2
    #: desktop updates, in increasing ``at`` order
    update: Annotated[list[CompositorUpdate], entries_in(0, 1_000_000, WHY_LIST_BIG)] = Field(default_factory=list)

    @field_validator("update")
    @classmethod
    def _updates_in_order(cls, value: list[CompositorUpdate]) -> list[CompositorUpdate]:
        return ordered(value, strict=False)
