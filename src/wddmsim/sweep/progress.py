"""The progress bar of ``wddmsim sweep`` on standard error: runs done of the total, the time
spent, and the estimated time left (rich's ETA, from the rate at which runs finish).

The bar starts at the first finished run, not before: by then the process pool has started its
workers (so they are forked from a process that runs no display thread), and the ETA has a rate
to go on. It is shown only when standard error is a terminal; elsewhere (a pipe, a CI log) the
sweep stays quiet.
"""

from __future__ import annotations

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

__all__ = ["SweepProgress"]


class SweepProgress:
    """A callable ``(done, total)`` for :func:`wddmsim.sweep.sweep` that draws the bar; use it as
    a context manager so the bar is taken down at the end (or on an error)."""

    def __init__(self, console: Console | None = None, label: str = "sweep"):
        self.console = console or Console(stderr=True)
        self.label = label
        self.bar: Progress | None = None
        self.task = None

    @property
    def enabled(self) -> bool:
        """Whether the bar is drawn (standard error is a terminal)."""
        return self.console.is_terminal

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled:
            return
        if self.bar is None:
            self.bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TextColumn("runs"),
                                TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(), console=self.console)
            self.bar.start()
            self.task = self.bar.add_task(self.label, total=total)
        self.bar.update(self.task, completed=done, total=total)

    def close(self) -> None:
        """Stop drawing; the last state of the bar stays on the terminal."""
        if self.bar is not None:
            self.bar.stop()
            self.bar = None

    def __enter__(self) -> SweepProgress:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
