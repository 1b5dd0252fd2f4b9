"""Compare a real PresentMon capture with a model run, swap chain by swap chain.

Each swap chain is summarised (:func:`chain_stats`) by the columns PresentMon's own console summary
and README describe (GameTechDev/PresentMon ``README-ConsoleApplication.md``): MsBetweenPresents
(frame time), MsInPresentAPI, MsUntilDisplayed (display latency from the present call), MsGPUBusy,
the PresentMode and the dropped (not displayed) presents.

Percentiles are nearest-rank: the p-th percentile of n sorted values is the value at rank
ceil(p/100 * n) (1-based), always one of the values, so the median of an even count is the lower
middle value. Frames whose value is NA are left out of that column's statistics.

:func:`compare` pairs the real chains with the model's by (application, process id, swap chain
address; the address as a number, since v1 pads it to 16 digits) and checks, for every real chain
with at least ``min_presents`` presents:

=========================  ===========================================================================
target                     passes when
=========================  ===========================================================================
application                the same executable name
runtime                    the same (most common) PresentRuntime
sync interval              the same (most common) SyncInterval
present mode               frame i of the model is in the PresentMode of frame i of the real chain for
                           at least 90% of the frames; frames without a partner count as misses
presents                   the model's count within 5% of the real one
MsBetweenPresents median   within 2%
MsGPUBusy median           within 10%
MsInPresentAPI median      within 1 ms or within 20%
MsUntilDisplayed median    within one refresh period of the display
presents per second        the compositor's chains only (dwm.exe): its cadence, the number of
                           MsBetweenPresents values over their sum (1000 / the mean frame time),
                           within 5%; its median interval is the MsBetweenPresents median (2%)
=========================  ===========================================================================

The refresh period is passed in, or the median MsBetweenDisplayChange of the real capture's
dwm.exe chain (the compositor presents at most once a refresh, and mostly on consecutive ones
while anything changes), else of all its frames. Percentages are
of the real value. A chain missing from the model fails every target; a median neither side has
(e.g. MsUntilDisplayed of a chain never displayed) passes, and one only the model has is not
checked (passes, said in the detail).
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import asdict, dataclass
from typing import Callable, Iterable, Sequence

from rich.console import Console
from rich.table import Table

from .capture import Capture, ChainKey, Frame, frames_by_chain, refresh_period_ns

METRICS = {  # PresentMon column -> Frame field
    "MsBetweenPresents": "between_presents",
    "MsInPresentAPI": "in_present",
    "MsUntilDisplayed": "until_displayed",
    "MsGPUBusy": "gpu_busy",
}


def nearest_rank(values: Sequence[float], p: float) -> float | None:
    """The p-th percentile (0 < p <= 100) by nearest rank: the sorted value at rank ceil(p/100*n)."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(1, math.ceil(p / 100 * len(ordered))) - 1]


@dataclass(frozen=True)
class Summary:
    """One column's statistics over a chain, in ms: how many frames have it, median and p95."""

    count: int
    median: float | None
    p95: float | None


@dataclass(frozen=True)
class ChainStats:
    """A swap chain summarised: its key, presents, the most common present mode (and the fraction of
    frames in it), runtime and sync interval, dropped presents, and per-column :class:`Summary`."""

    key: ChainKey
    presents: int
    present_mode: str
    present_mode_fraction: float
    runtime: str
    sync_interval: int
    dropped: int
    metrics: dict[str, Summary]
    #: presents a second over the chain's MsBetweenPresents (their count over their sum); None
    #: without two presents
    presents_per_second: float | None = None

    @property
    def application(self) -> str:
        return self.key[0]

    def median(self, column: str) -> float | None:
        """The median of a column of :data:`METRICS`, ms."""
        return self.metrics[column].median


def _most_common(values: Iterable) -> tuple[object, int]:
    return Counter(values).most_common(1)[0]


def presents_per_second(frames: Iterable[Frame]) -> float | None:
    """The chain's present rate: how many MsBetweenPresents values over their sum in seconds (1000
    over the mean frame time in ms), to 3 decimals; None when no frame has the value. The first
    present of a model chain has no MsBetweenPresents (nothing before it) and so does not count,
    as the capture's baseline present has no row."""
    gaps = [f.between_presents for f in frames if f.between_presents is not None]
    total = sum(gaps)
    return round(len(gaps) * 1e9 / total, 3) if gaps and total > 0 else None


def is_compositor(key: ChainKey) -> bool:
    """Whether the chain is the desktop compositor's (dwm.exe)."""
    return key[0].lower() == "dwm.exe"


def chain_stats(frames: Iterable[Frame]) -> ChainStats:
    """Summarise the frames of one swap chain (the key is the first frame's)."""
    frames = list(frames)
    if not frames:
        raise ValueError("chain_stats needs at least one frame")
    mode, in_mode = _most_common(f.present_mode for f in frames)
    metrics = {}
    for column, name in METRICS.items():
        values = [getattr(f, name) / 1e6 for f in frames if getattr(f, name) is not None]
        metrics[column] = Summary(len(values), nearest_rank(values, 50), nearest_rank(values, 95))
    return ChainStats(
        key=frames[0].key, presents=len(frames), present_mode=mode,
        present_mode_fraction=in_mode / len(frames), runtime=_most_common(f.runtime for f in frames)[0],
        sync_interval=_most_common(f.sync_interval for f in frames)[0],
        dropped=sum(f.displayed is None for f in frames), metrics=metrics,
        presents_per_second=presents_per_second(frames))


@dataclass(frozen=True)
class Target:
    """One checked target: the real and model values, the tolerance in words, and the verdict."""

    name: str
    real: object
    model: object
    tolerance: str
    passed: bool
    detail: str = ""


@dataclass
class ChainComparison:
    """A real swap chain against the model's (None: the model has no such chain)."""

    key: ChainKey
    real: ChainStats
    model: ChainStats | None
    targets: list[Target]

    @property
    def passed(self) -> bool:
        return all(t.passed for t in self.targets)

    def target(self, name: str) -> Target:
        return next(t for t in self.targets if t.name == name)


def _frames(source: Capture | Iterable[Frame]) -> list[Frame]:
    return list(source.frames if isinstance(source, Capture) else source)


def _pair_key(key: ChainKey) -> tuple[str, int, int]:
    return (key[0], key[1], int(key[2], 16))


def _numeric(name: str, real: float | None, model: float | None, tolerance: str,
             ok: Callable[[float, float], bool]) -> Target:
    if real is None:
        detail = "neither has a value" if model is None else "not checked: no real value"
        return Target(name, real, model, tolerance, True, detail)
    if model is None:
        return Target(name, real, model, tolerance, False, "the model has no value")
    return Target(name, real, model, tolerance, ok(real, model))


def _within(fraction: float) -> Callable[[float, float], bool]:
    return lambda r, m: abs(m - r) <= fraction * abs(r) + 1e-9


TARGET_NAMES = ("application", "runtime", "sync interval", "present mode", "presents",
                "MsBetweenPresents median", "MsGPUBusy median", "MsInPresentAPI median",
                "MsUntilDisplayed median")
#: the targets only a compositor's (dwm.exe) chain has, after :data:`TARGET_NAMES`: its cadence
COMPOSITOR_TARGET_NAMES = ("presents per second",)
MISSING = "no such swap chain in the model"


def _targets(real: list[Frame], model: list[Frame] | None, rs: ChainStats, refresh_ms: float | None
             ) -> tuple[ChainStats | None, list[Target]]:
    refresh = "one refresh" + (f" ({refresh_ms:.2f} ms)" if refresh_ms else " (unknown)")
    tolerances = ("same", "same", "same", ">= 90% of frames", "within 5%", "within 2%", "within 10%",
                  "1 ms or 20%", refresh)
    compositor = is_compositor(rs.key)
    if model is None:
        values = (rs.application, rs.runtime, rs.sync_interval, rs.present_mode, rs.presents,
                  *(rs.median(m) for m in ("MsBetweenPresents", "MsGPUBusy", "MsInPresentAPI",
                                           "MsUntilDisplayed")))
        if compositor:
            values, tolerances = values + (rs.presents_per_second,), tolerances + ("within 5%",)
        return None, [Target(n, v, None, t, False, MISSING)
                      for n, v, t in zip(TARGET_NAMES + COMPOSITOR_TARGET_NAMES, values, tolerances)]
    ms = chain_stats(model)
    matched = sum(a.present_mode == b.present_mode for a, b in zip(real, model))
    share = matched / max(len(real), len(model))

    def same(name: str, r: object, m: object) -> Target:
        return Target(name, r, m, "same", r == m)

    def median(i: int, column: str, ok: Callable[[float, float], bool]) -> Target:
        return _numeric(TARGET_NAMES[i], rs.median(column), ms.median(column), tolerances[i], ok)

    targets = [
        same("application", rs.application, ms.application),
        same("runtime", rs.runtime, ms.runtime),
        same("sync interval", rs.sync_interval, ms.sync_interval),
        Target("present mode", rs.present_mode, ms.present_mode, tolerances[3], share >= 0.9,
               f"{share:.1%} match"),
        _numeric("presents", rs.presents, ms.presents, tolerances[4], _within(0.05)),
        median(5, "MsBetweenPresents", _within(0.02)),
        median(6, "MsGPUBusy", _within(0.10)),
        median(7, "MsInPresentAPI", lambda r, m: abs(m - r) <= 1.0 or _within(0.20)(r, m)),
        median(8, "MsUntilDisplayed", lambda r, m: refresh_ms is not None and abs(m - r) <= refresh_ms),
    ]
    if compositor:
        # The compositor's cadence: it presents when something on the desktop changed, so its
        # rate says whether the model composed when the machine's compositor did.
        targets.append(_numeric("presents per second", rs.presents_per_second, ms.presents_per_second,
                                "within 5%", _within(0.05)))
    return ms, targets


def compare(real: Capture | Iterable[Frame], model: Capture | Iterable[Frame], *,
            refresh_period_ms: float | None = None, min_presents: int = 10) -> list[ChainComparison]:
    """Check the model against the real capture, one :class:`ChainComparison` per real swap chain
    with at least ``min_presents`` presents, in the real capture's order (see the module's table)."""
    real_frames, model_frames = _frames(real), _frames(model)
    if refresh_period_ms is None:
        period = refresh_period_ns(real_frames) or refresh_period_ns(model_frames)
        refresh_period_ms = None if period is None else period / 1e6
    model_chains = {_pair_key(k): v for k, v in frames_by_chain(model_frames).items()}
    out = []
    for key, frames in frames_by_chain(real_frames).items():
        if len(frames) < min_presents:
            continue
        frames = sorted(frames, key=lambda f: f.present_start)
        other = model_chains.get(_pair_key(key))
        if other is not None:
            other = sorted(other, key=lambda f: f.present_start)
        rs = chain_stats(frames)
        ms, targets = _targets(frames, other, rs, refresh_period_ms)
        out.append(ChainComparison(key, rs, ms, targets))
    return out


def _show(value: object) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)


def print_comparison(console: Console, comparisons: list[ChainComparison]) -> None:
    """Print one table per swap chain (real beside model, each target's verdict), within 100
    columns, and a closing line with how many chains meet every target."""
    width = min(console.width, 100)
    for c in comparisons:
        app, pid, chain = c.key
        met = sum(t.passed for t in c.targets)
        caption = f"{met} of {len(c.targets)} targets met" + ("" if c.model else f": {MISSING}")
        table = Table(title=f"{app} (pid {pid}, swap chain {chain})", width=width, title_justify="left",
                      caption=caption, caption_justify="left")
        table.add_column("target", ratio=6, overflow="fold")
        table.add_column("real", ratio=5, overflow="fold")
        table.add_column("model", ratio=5, overflow="fold")
        table.add_column("tolerance", ratio=4, overflow="fold")
        table.add_column("", width=4, no_wrap=True)
        for t in c.targets:
            model = _show(t.model) + (f" ({t.detail})" if t.detail and c.model else "")
            verdict = "[green]pass[/]" if t.passed else "[bold red]FAIL[/]"
            table.add_row(t.name, _show(t.real), model, t.tolerance, verdict)
        # The rest of the picture, without a target: the tails and the dropped frames.
        for column in METRICS:
            table.add_row(f"{column} p95", _show(c.real.metrics[column].p95),
                          _show(c.model.metrics[column].p95) if c.model else "-", "", "")
        table.add_row("dropped frames", _show(c.real.dropped), _show(c.model.dropped) if c.model else "-", "", "")
        console.print(table)
    good = sum(c.passed for c in comparisons)
    console.print(f"{good} of {len(comparisons)} swap chains meet every target")


def comparison_json(comparisons: list[ChainComparison], stopped: str | None = None) -> dict:
    """The comparisons as a JSON-ready dict: overall verdict, why the model's run stopped before
    its end time (``stopped``: a LogEnd reason such as ``interrupted`` or ``max_events``; None
    when it ran to its end, and then the comparison covers the whole capture), and per chain its
    key, verdict, the two summaries and the targets."""
    def stats(s: ChainStats | None) -> dict | None:
        if s is None:
            return None
        d = asdict(s)
        d.pop("key")
        return d

    return {
        "passed": all(c.passed for c in comparisons),
        "stopped": stopped,
        "chains": [{
            "application": c.key[0], "pid": c.key[1], "swap_chain": c.key[2], "passed": c.passed,
            "real": stats(c.real), "model": stats(c.model),
            "targets": [asdict(t) for t in c.targets],
        } for c in comparisons],
    }
