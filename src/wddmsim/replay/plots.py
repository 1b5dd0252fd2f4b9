"""Plot a real capture against a model run: one PNG per swap chain, two panels over present time.

- frame time: MsBetweenPresents, the time from the chain's previous Present() call to this one;
- display latency: MsUntilDisplayed, the time from the Present() call until the frame reached the
  screen; a dropped (never displayed) present is marked with an x on the panel's floor.

Both as PresentMon's console README defines them (GameTechDev/PresentMon
``README-ConsoleApplication.md``). The x axis is the present's start in ms from each capture's own
origin (the earliest CPU or present start in it, see :mod:`.capture`). Chains are paired as
:func:`~.compare.compare` pairs them; a chain only one side has is drawn alone.

A chain that misses a target of the comparison (:func:`~.compare.compare`, the targets its
docstring lists: the same ones ``wddmsim replay`` prints and ``--check`` fails on) says so on its
figure: the title is red and ends ``- N of M targets missed``, and a red line under it names each
missed target with the real and the model's value and the tolerance (``target missed:
MsBetweenPresents median (real 16.667 ms, model 20.000 ms; within 2%)``; for a chain the model
lacks, one line saying so; at most four lines, the fourth then counting the rest); the panel whose
column a missed median belongs to (MsBetweenPresents: frame time; MsUntilDisplayed: display
latency) has its title in red with ``- target missed``. A chain that meets every target, or has
none (fewer presents than the comparison's minimum, or only in the model), is drawn as before.

Figures are :class:`matplotlib.figure.Figure` objects (:func:`chain_figure`, no pyplot state, for
tests to read), saved as PNGs with matplotlib's Agg renderer (no display needed).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Iterable, Sequence

from matplotlib.figure import Figure

from .capture import Capture, ChainKey, Frame, frames_by_chain
from .compare import MISSING, ChainComparison, _show, compare

__all__ = ["MAX_MISSED_LINES", "MISSED", "chain_figure", "missed_lines", "plot_comparison"]

_STYLE = {"real": dict(color="#1f77b4", linestyle="-", marker="o", markersize=2.5, linewidth=1.2),
          "model": dict(color="#d62728", linestyle="--", marker="s", markersize=2.5, linewidth=1.2)}
#: the colour of what says a target was missed
MISSED = "#c00000"
#: the most lines of missed targets under a figure's title (the last one then counts the rest)
MAX_MISSED_LINES = 4
#: the panel (0: frame time, 1: display latency) of each target a panel draws the column of
_PANEL_OF = {"MsBetweenPresents median": 0, "MsUntilDisplayed median": 1}
_PANEL_TITLES = ("Frame time (MsBetweenPresents)", "Display latency (MsUntilDisplayed: present call to screen)")


def _frames(source: Capture | Iterable[Frame]) -> list[Frame]:
    return list(source.frames if isinstance(source, Capture) else source)


def _file_name(index: int, key: ChainKey) -> str:
    app, pid, chain = key
    stem = re.sub(r"[^A-Za-z0-9._-]+", "_", app).strip("_") or "app"
    return f"{index:02d}-{stem}-{pid}-{chain}.png"


def _draw(axes, frames: list[Frame], side: str, label: str) -> None:
    frames = sorted(frames, key=lambda f: f.present_start)
    style = _STYLE[side]
    timed = [f for f in frames if f.between_presents is not None]
    axes[0].plot([f.present_start / 1e6 for f in timed], [f.between_presents / 1e6 for f in timed],
                 label=label, **style)
    shown = [f for f in frames if f.until_displayed is not None]
    axes[1].plot([f.present_start / 1e6 for f in shown], [f.until_displayed / 1e6 for f in shown],
                 label=label, **style)
    dropped = [f.present_start / 1e6 for f in frames if f.displayed is None]
    if dropped:
        axes[1].plot(dropped, [0.0] * len(dropped), linestyle="none", marker="x", markersize=8,
                     markeredgewidth=2, color=style["color"], clip_on=False, zorder=5,
                     label=f"{label}: dropped ({len(dropped)})")


def missed_lines(comparison: ChainComparison | None) -> list[str]:
    """The lines a chain's figure gives its missed targets: one per target (``target missed: NAME
    (real R, model M; TOLERANCE)``), or for a chain the model lacks the one line that says so; []
    when every target was met or the chain was not compared (None)."""
    if comparison is None or comparison.passed:
        return []
    if comparison.model is None:
        return [f"targets missed: all {len(comparison.targets)}, {MISSING}"]
    lines = []
    for t in comparison.targets:
        if not t.passed:
            unit = " ms" if t.name.endswith(" median") else ""
            real = _show(t.real) + (unit if t.real is not None else "")
            model = _show(t.model) + (unit if t.model is not None else "")
            lines.append(f"target missed: {t.name} (real {real}, model {model}; {t.tolerance})")
    return lines


def chain_figure(key: ChainKey, real_frames: Sequence[Frame], model_frames: Sequence[Frame],
                 comparison: ChainComparison | None = None, *, real_label: str = "real capture",
                 model_label: str = "model") -> Figure:
    """One swap chain's figure: frame time and display latency against present time, the real
    frames and the model's overlaid, the missed targets of ``comparison`` (this chain's, None when
    it was not compared) marked in red as the module's docstring says."""
    fig = Figure(figsize=(10, 6.5), dpi=100, layout="constrained")
    axes = fig.subplots(2, 1, sharex=True)
    if real_frames:
        _draw(axes, list(real_frames), "real", real_label)
    if model_frames:
        _draw(axes, list(model_frames), "model", model_label)
    app, pid, chain = key
    alone = "" if real_frames and model_frames else (
        f" - only in the {real_label if real_frames else model_label}")
    missed = missed_lines(comparison)
    title = f"{app} (pid {pid}), swap chain {chain}{alone}"
    if missed:
        failed = sum(not t.passed for t in comparison.targets)
        title += f" - {failed} of {len(comparison.targets)} targets missed"
        shown = missed if len(missed) <= MAX_MISSED_LINES else (
            missed[:MAX_MISSED_LINES - 1] + [f"and {len(missed) - MAX_MISSED_LINES + 1} more targets missed"])
        fig.suptitle(title + "\n" + "\n".join(shown), fontsize=12, color=MISSED)
    else:
        fig.suptitle(title, fontsize=12)
    late = {_PANEL_OF[t.name] for t in (comparison.targets if missed else ()) if not t.passed and t.name in _PANEL_OF}
    for i, (ax, text) in enumerate(zip(axes, _PANEL_TITLES)):
        if i in late:
            ax.set_title(f"{text} - target missed", fontsize=10, loc="left", color=MISSED)
        else:
            ax.set_title(text, fontsize=10, loc="left")
    axes[0].set_ylabel("frame time (ms)")
    axes[1].set_ylabel("display latency (ms)")
    axes[1].set_xlabel("present time (ms from the capture's start)")
    for ax in axes:
        ax.grid(True, alpha=0.3)
        ax.set_ylim(0, max(ax.get_ylim()[1], 1.0) * 1.1)  # from 0, headroom above the lines
        if ax.get_legend_handles_labels()[0]:
            ax.legend(loc="best", fontsize=8, framealpha=0.85)
    return fig


def plot_comparison(real: Capture | Iterable[Frame], model: Capture | Iterable[Frame],
                    out_dir: str | Path, *, real_label: str = "real capture",
                    model_label: str = "model", comparisons: Sequence[ChainComparison] | None = None) -> list[Path]:
    """Write one PNG per swap chain into ``out_dir`` (created if needed): frame time and display
    latency against present time, the real frames and the model's overlaid, a chain that missed a
    target marked (:func:`chain_figure`). ``comparisons``: :func:`~.compare.compare`'s result for
    these frames (None: it is computed here with its defaults, as ``wddmsim replay`` does).
    Returns the paths, in the real capture's chain order, then the chains only the model has."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    real, model = _frames(real), _frames(model)
    if comparisons is None:
        comparisons = compare(real, model)
    by_key = {c.key: c for c in comparisons}
    real_chains = frames_by_chain(real)
    model_chains = frames_by_chain(model)

    def pair(key: ChainKey) -> tuple[str, int, int]:
        return (key[0], key[1], int(key[2], 16))

    by_pair = {pair(k): k for k in model_chains}
    keys: list[tuple[ChainKey, list[Frame], list[Frame]]] = []
    used = set()
    for key, frames in real_chains.items():
        other = by_pair.get(pair(key))
        used.add(other)
        keys.append((key, frames, model_chains.get(other, []) if other else []))
    keys += [(k, [], v) for k, v in model_chains.items() if k not in used]

    paths = []
    for index, (key, real_frames, model_frames) in enumerate(keys, 1):
        fig = chain_figure(key, real_frames, model_frames, by_key.get(key) if real_frames else None,
                           real_label=real_label, model_label=model_label)
        path = out_dir / _file_name(index, key)
        fig.savefig(path, dpi=100)
        paths.append(path)
    return paths
