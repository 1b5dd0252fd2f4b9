"""Plot a real capture against a model run: one PNG per swap chain, two panels over present time.

- frame time: MsBetweenPresents, the time from the chain's previous Present() call to this one;
- display latency: MsUntilDisplayed, the time from the Present() call until the frame reached the
  screen; a dropped (never displayed) present is marked with an x on the panel's floor.

Both as PresentMon's console README defines them (GameTechDev/PresentMon
``README-ConsoleApplication.md``). The x axis is the present's start in ms from each capture's own
origin (the earliest CPU or present start in it, see :mod:`.capture`). Chains are paired as
:func:`~.compare.compare` pairs them; a chain only one side has is drawn alone. Uses matplotlib's
Agg backend (no display needed).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Iterable

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after choosing the backend)

from .capture import Capture, ChainKey, Frame, frames_by_chain  # noqa: E402

_STYLE = {"real": dict(color="#1f77b4", linestyle="-", marker="o", markersize=2.5, linewidth=1.2),
          "model": dict(color="#d62728", linestyle="--", marker="s", markersize=2.5, linewidth=1.2)}


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


def plot_comparison(real: Capture | Iterable[Frame], model: Capture | Iterable[Frame],
                    out_dir: str | Path, *, real_label: str = "real capture",
                    model_label: str = "model") -> list[Path]:
    """Write one PNG per swap chain into ``out_dir`` (created if needed): frame time and display
    latency against present time, the real frames and the model's overlaid. Returns the paths, in
    the real capture's chain order, then the chains only the model has."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    real_chains = frames_by_chain(_frames(real))
    model_chains = frames_by_chain(_frames(model))

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
        fig, axes = plt.subplots(2, 1, sharex=True, figsize=(10, 6.5), constrained_layout=True)
        if real_frames:
            _draw(axes, real_frames, "real", real_label)
        if model_frames:
            _draw(axes, model_frames, "model", model_label)
        app, pid, chain = key
        alone = "" if real_frames and model_frames else (
            f" - only in the {real_label if real_frames else model_label}")
        fig.suptitle(f"{app} (pid {pid}), swap chain {chain}{alone}", fontsize=12)
        axes[0].set_title("Frame time (MsBetweenPresents)", fontsize=10, loc="left")
        axes[0].set_ylabel("frame time (ms)")
        axes[1].set_title("Display latency (MsUntilDisplayed: present call to screen)", fontsize=10,
                          loc="left")
        axes[1].set_ylabel("display latency (ms)")
        axes[1].set_xlabel("present time (ms from the capture's start)")
        for ax in axes:
            ax.grid(True, alpha=0.3)
            ax.set_ylim(0, max(ax.get_ylim()[1], 1.0) * 1.1)  # from 0, headroom above the lines
            if ax.get_legend_handles_labels()[0]:
                ax.legend(loc="best", fontsize=8, framealpha=0.85)
        path = out_dir / _file_name(index, key)
        fig.savefig(path, dpi=100)
        plt.close(fig)
        paths.append(path)
    return paths
