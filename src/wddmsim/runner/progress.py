"""The progress bar of a long ``wddmsim run`` on a terminal.

:meth:`wddmsim.runner.system.System.run` calls the bar between slices of virtual time; the bar answers
with the next slice's length, so that each slice takes about :data:`SLICE_S` of wall time and the
bar moves smoothly whatever the scenario's pace. It shows virtual time done, the pace (virtual
time per wall second, smoothed over the last slices) and the time left at that pace (ETA). It
appears once a run has taken :data:`SHOW_AFTER_S` of wall time and disappears when the run ends
(a bug check included). What it shows is measured on the wall clock, so it goes to the terminal
only, never into the summary, ``--json`` or the event log.
"""

from __future__ import annotations

import time

from ..output.summaryview import time_text

__all__ = ["SHOW_AFTER_S", "SLICE_S", "RunProgress", "eta_text", "progress_for"]

#: Wall seconds a slice of virtual time should take.
SLICE_S = 0.1
#: Wall seconds before the bar appears (short runs show none).
SHOW_AFTER_S = 1.0
#: Weight of the newest slice in the smoothed pace.
_SMOOTHING = 0.3


def eta_text(seconds: float | None) -> str:
    """Wall seconds left as ``H:MM:SS``; ``-:--:--`` when not known yet."""
    if seconds is None:
        return "-:--:--"
    s = int(seconds + 0.5)
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}"


class RunProgress:
    """The bar: call it with ``(now, limit)`` in virtual ns after each slice; it returns the
    virtual ns the next slice should run (None until it has measured a pace). ``clock`` gives
    wall seconds (``time.perf_counter``)."""

    def __init__(self, con, clock=time.perf_counter):
        self.con = con
        self.clock = clock
        self.started = clock()
        self._wall = self.started
        self._virtual = 0
        self.pace: float | None = None  # virtual ns per wall second, smoothed
        self.bar = None
        self.task = None

    def __call__(self, now: int, limit: int) -> int | None:
        t = self.clock()
        wall, done = t - self._wall, now - self._virtual
        if wall > 0 and done > 0:
            pace = done / wall
            self.pace = pace if self.pace is None else (1 - _SMOOTHING) * self.pace + _SMOOTHING * pace
        self._wall, self._virtual = t, now
        if self.bar is None and t - self.started >= SHOW_AFTER_S:
            self._start(now, limit)
        elif self.bar is not None:
            self.bar.update(self.task, completed=now, **self.fields(now, limit))
        return max(1, int(self.pace * SLICE_S)) if self.pace else None

    def fields(self, now: int, limit: int) -> dict[str, str]:
        """The texts beside the bar: virtual time done of all, the pace, the time left."""
        left = (limit - now) / self.pace if self.pace else None
        return {"done": f"{time_text(now).rstrip()} / {time_text(limit).rstrip()}",
                "pace": "-" if not self.pace else f"{time_text(self.pace).rstrip()} per wall s",
                "eta": eta_text(left)}

    def _start(self, now: int, limit: int) -> None:
        from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

        self.bar = Progress(TextColumn("virtual time"), BarColumn(), TextColumn("{task.fields[done]}"),
                            TextColumn("{task.fields[pace]}"), TextColumn("ETA {task.fields[eta]}"),
                            TimeElapsedColumn(), console=self.con, transient=True)
        self.task = self.bar.add_task("", total=limit, completed=now, **self.fields(now, limit))
        self.bar.start()

    def finish(self) -> None:
        """Take the bar off the terminal (it is transient)."""
        if self.bar is not None:
            self.bar.stop()
            self.bar = None


def progress_for(con, as_json: bool) -> RunProgress | None:
    """A :class:`RunProgress` when output goes to a terminal and is not JSON, else None (quiet)."""
    return RunProgress(con) if con.is_terminal and not as_json else None
