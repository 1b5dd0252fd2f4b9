"""``wddmsim sweep --plot METRIC``: one figure of a sweep's rows drawn against one setting.

The x axis is the swept setting that takes more than one value; when several do, the caller
names one (``--x``) and each combination of the others is a line of its own. A point is the mean
of the metric over the seeds of that setting's value; its error bar runs from the smallest to the
largest value among those seeds (the spread of the seeds, not a confidence interval). Rows with an
error or without the metric are left out. Numeric settings give a numeric axis, any other (``1ms``,
``dma_buffer``) one tick per value in the order the sweep gave them. A metric's unit comes from its
name: ``_ns`` is drawn in milliseconds, ``_pct`` in %, ``_s`` in seconds, ``_hz`` in Hz, ``_bytes``
in KiB. The figure is a PNG drawn with matplotlib's Agg backend (no display needed).
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["PlotError", "axis_unit", "plot_metric", "varying"]

#: Metric name endings, the factor from the summary's unit and the unit drawn.
_UNITS = (("_ns", 1e-6, "ms"), ("_pct", 1.0, "%"), ("_s", 1.0, "s"), ("_hz", 1.0, "Hz"), ("_bytes", 1 / 1024, "KiB"))


class PlotError(ValueError):
    """A plot that cannot be drawn: an unknown metric or setting, no setting to put on the x axis,
    no value to draw. ``str()`` says which and why."""


def axis_unit(metric: str) -> tuple[float, str]:
    """The factor from the metric's own unit to the one drawn, and that unit's name ('' for
    none): ``latency_p99_ns`` -> (1e-6, 'ms')."""
    for suffix, factor, unit in _UNITS:
        if metric.endswith(suffix):
            return factor, unit
    return 1.0, ""


def varying(rows: Sequence[Mapping], settings: Sequence[str]) -> list[str]:
    """The settings that take more than one value among the rows."""
    out = []
    for s in settings:
        values = []
        for row in rows:
            if row.get(s) not in values:
                values.append(row.get(s))
        if len(values) > 1:
            out.append(s)
    return out


def _numeric(values) -> bool:
    return all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)


def plot_metric(rows: Sequence[Mapping], metric: str, settings: Sequence[str], path, x: str | None = None) -> dict:
    """Draw ``metric`` against the setting ``x`` (default: the one setting that varies) and write
    the PNG to ``path``. Returns what was drawn: ``{"x": setting, "lines": {label: [(x value, mean,
    min, max, seeds), ...]}}`` in the metric's own unit. Raises :class:`PlotError`."""
    cols: list[str] = []
    for row in rows:
        cols.extend(k for k in row if k not in cols)
    if metric not in cols:
        near = difflib.get_close_matches(metric, cols, n=3)
        hint = f"; did you mean {', '.join(near)}?" if near else ""
        raise PlotError(f"--plot {metric}: no such figure in the rows{hint}")
    moving = varying(rows, settings)
    if x is None:
        if not moving:
            raise PlotError(f"--plot {metric}: no setting takes more than one value; sweep one with --set PATH=V1,V2")
        if len(moving) > 1:
            raise PlotError(f"--plot {metric}: several settings vary ({', '.join(moving)}); choose the x axis "
                            f"with --x (the others give one line each)")
        x = moving[0]
    elif x not in settings:
        raise PlotError(f"--x {x}: not a swept setting; the settings are {', '.join(settings) or 'none'}")
    others = [s for s in moving if s != x]
    groups: dict[tuple, dict[Any, list[float]]] = {}
    for row in rows:
        value = row.get(metric)
        if row.get("error") or value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise PlotError(f"--plot {metric}: not a number ({value!r}); choose a numeric figure")
        line = tuple(row.get(o) for o in others)
        groups.setdefault(line, {}).setdefault(row.get(x), []).append(float(value))
    if not groups:
        raise PlotError(f"--plot {metric}: every run failed or lacks the figure; nothing to draw")
    xs: list[Any] = []
    for row in rows:
        if row.get(x) not in xs:
            xs.append(row.get(x))
    drawn: dict[str, list[tuple]] = {}
    for line, points in groups.items():
        label = ", ".join(f"{o}={v}" for o, v in zip(others, line)) or metric
        drawn[label] = [(xv, sum(vs) / len(vs), min(vs), max(vs), len(vs)) for xv in xs if (vs := points.get(xv))]
    _draw(drawn, metric, x, xs, path)
    return {"x": x, "lines": drawn}


def _draw(drawn: dict[str, list[tuple]], metric: str, x: str, xs: list, path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    factor, unit = axis_unit(metric)
    numeric = _numeric(xs)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    try:
        for label, points in drawn.items():
            pos = [p[0] if numeric else xs.index(p[0]) for p in points]
            mean = [p[1] * factor for p in points]
            low = [(p[1] - p[2]) * factor for p in points]
            high = [(p[3] - p[1]) * factor for p in points]
            ax.errorbar(pos, mean, yerr=[low, high], marker="o", capsize=4, label=label)
        if not numeric:
            ax.set_xticks(range(len(xs)), [str(v) for v in xs])
        ax.set_xlabel(x)
        ax.set_ylabel(f"{metric} ({unit})" if unit else metric)
        seeds = max(p[4] for points in drawn.values() for p in points)
        ax.set_title(f"{metric}: mean over {seeds} seed(s), bars from min to max", fontsize=10)
        ax.grid(True, alpha=0.3)
        if len(drawn) > 1:
            ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(path, format="png", dpi=100)
    finally:
        plt.close(fig)
