"""The display controller: VidPn sources that scan out a surface at a fixed refresh rate.

Each source has a vsync grid: vsyncs fall at whole multiples of the refresh period from time 0.
A FLIP command latches a new scanout address at the next vsync (the engine stalls until then,
as a tear-free flip without no-wait does), or at once with FLIP_NO_WAIT. The source counts the
flips it showed and keeps the time of the last one. Vsync interrupts, flip queues and frame
statistics come with the present-and-flip part of the model.

Spec: DESIGN.md section 4 (display controller); ddi-facts.md section 7.
"""

from __future__ import annotations


class DisplaySource:
    """One VidPn source: refresh rate, current scanout address and flip counters."""

    __slots__ = ("index", "refresh_hz", "period_ns", "scanout", "flips", "last_flip_time")

    def __init__(self, index: int, refresh_hz: float = 60.0):
        if refresh_hz <= 0:
            raise ValueError(f"refresh rate must be positive, got {refresh_hz}")
        self.index = index
        self.refresh_hz = refresh_hz
        self.period_ns = round(1e9 / refresh_hz)
        self.scanout = 0
        self.flips = 0
        self.last_flip_time: int | None = None

    def next_vsync(self, t: int) -> int:
        """The first vsync at or after ``t``."""
        p = self.period_ns
        return -(-t // p) * p

    def latch(self, surface: int, t: int) -> None:
        """Show ``surface`` from time ``t``."""
        self.scanout = surface
        self.flips += 1
        self.last_flip_time = t
