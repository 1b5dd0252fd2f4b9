"""``wddmsim sweep --plot METRIC``: one figure of a sweep's rows drawn against one setting.

The x axis is the swept setting that takes more than one value; when several do, the caller
names one (``--x``) and each combination of the others is a line of its own, or names the one
setting whose values make the lines (``--series``; every other setting must then have a single
value). A point is the mean of the metric over the seeds of that setting's value; its error bar
runs from the smallest to the largest value among those seeds (the spread of the seeds, not a
confidence interval); the mean is kept between the two, so a float that every seed gave alike is
drawn with bars of length 0 (a sum rounded up would otherwise put the mean past the largest).
Rows with an error or without the metric are left out. Numeric settings give a numeric axis, any
other (``1ms``, ``dma_buffer``, a policy's name) one tick per value in the order the sweep gave
them. A line is labelled ``setting=value``, except a scheduler policy, labelled by its name alone
(``edf``; the class name ``Edf`` of a researcher's ``mypolicy.py:Edf``). A metric's unit comes
from its name: ``_ns`` is drawn in milliseconds, ``_pct`` in %, ``_s`` in seconds, ``_hz`` in Hz,
``_bytes`` in KiB.

The figure says what it shows in words: the title names the entry the metric belongs to (the
context, node, process or VidPn source, read from the row's own name column) and the figure
without its unit suffix (``contexts.0.latency_p99_ns`` is "game.exe/render: latency p99", the
y axis "latency p99 (ms)"), the subtitle the column and the number of seeds, and the x axis the
setting (with the node's name for a node's setting). A figure the summary names by a short key is
written out (:data:`WORDS`: ``jain`` is "Jain's fairness index"), and a fairness entry is named by
its node and priority (``fairness.0.jain`` is "3D_0, normal priority 0: Jain's fairness index").
Each point's mean is written beside it when there are at most 12 points. The y axis starts at 0
for a metric that is never negative, so a small difference is not drawn as a large one, except for
an index bounded on both sides (:data:`BOUNDED`: Jain's index and the shares, 0 to 1), whose
values crowd near one end (Jain's 0.95 to 1.0): its axis fits the data, from the lowest end of a
bar to the highest, with a tenth of that span (at least 1 % of the index's range) added on either
side, never below the index's floor nor above its ceiling by more than that margin; a numeric
setting spanning a factor of 16 or more
gets a log axis, ticked at the values swept. Lines over a named setting are dotted and shifted
apart a little so their bars do not hide each other. The figure is a
:class:`matplotlib.figure.Figure` (:func:`metric_figure`, for tests to read), saved as a PNG with
matplotlib's Agg backend (no display needed).
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from matplotlib.figure import Figure

__all__ = ["BOUNDED", "POLICY", "WORDS", "PlotError", "axis_unit", "choose_axes", "describe", "metric_figure",
           "plot_metric", "points", "policy_name", "series_label", "value_label", "value_range", "varying"]

#: Metric name endings, the factor from the summary's unit and the unit drawn.
_UNITS = (("_ns", 1e-6, "ms"), ("_pct", 1.0, "%"), ("_s", 1.0, "s"), ("_hz", 1.0, "Hz"), ("_bytes", 1 / 1024, "KiB"))


#: Figures whose key is too short to read as words: the key (without its unit suffix) -> the words.
WORDS = {"jain": "Jain's fairness index", "share": "share of the node's GPU time",
         "share_target": "share target of the node's GPU time"}

#: Indices bounded on both sides (the key without its unit suffix -> floor, ceiling): the y axis
#: fits their values (:func:`value_range`) instead of starting at 0.
BOUNDED = {"jain": (0.0, 1.0), "share": (0.0, 1.0), "share_target": (0.0, 1.0)}

#: The setting that names the OS scheduler's policy (docs/scenarios.md, ``[scheduler]``).
POLICY = "scheduler.policy"


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


def _distinct(values) -> list:
    """The values in the order they first appear, each once (lists and tables too, which a set
    cannot hold)."""
    out: list = []
    for v in values:
        if v not in out:
            out.append(v)
    return out


def varying(rows: Sequence[Mapping], settings: Sequence[str]) -> list[str]:
    """The settings that take more than one value among the rows."""
    return [s for s in settings if len(_distinct(row.get(s) for row in rows)) > 1]


def _numeric(values) -> bool:
    return all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)


def policy_name(value: Any) -> str:
    """A ``scheduler.policy`` value as a reader names the policy: a shipped one by its name
    (``edf``), a researcher's class by the class's name (``mypolicy.py:Edf`` and
    ``package.module:Edf`` are ``Edf``)."""
    text = str(value)
    head, sep, tail = text.rpartition(":")
    return tail if sep and head and tail else text


def value_label(setting: str, value: Any) -> str:
    """A setting's value as a tick or legend shows it: a policy by :func:`policy_name`, anything
    else as written."""
    return policy_name(value) if setting == POLICY else str(value)


def series_label(settings: Sequence[str], values: Sequence[Any]) -> str:
    """A line's label: ``setting=value`` for each setting that tells the lines apart, joined with
    commas; a scheduler policy by its name alone (``edf, adapter.hw_queue_depth=2``)."""
    return ", ".join(value_label(s, v) if s == POLICY else f"{s}={v}" for s, v in zip(settings, values))


def choose_axes(metric: str, settings: Sequence[str], moving: Sequence[str], x: str | None = None,
                series: str | None = None) -> tuple[str, list[str]]:
    """The x axis and the settings whose combinations make the lines, for ``--plot metric``
    with ``--x x`` and ``--series series`` (None: not given), ``settings`` the swept ones and
    ``moving`` those among them that take more than one value. Raises :class:`PlotError` with the
    line the command prints: an unknown setting, the same one for both, no x axis to be had, or,
    with ``series``, a third setting that varies too."""
    if x is not None and x not in settings:
        raise PlotError(f"--x {x}: not a swept setting; the settings are {', '.join(settings) or 'none'}")
    if series is not None:
        if series not in settings:
            raise PlotError(f"--series {series}: not a swept setting; the settings are "
                            f"{', '.join(settings) or 'none'}")
        if series == x:
            raise PlotError(f"--series {series}: is the x axis too; choose another setting for --x or --series")
    if x is None:
        candidates = [s for s in moving if s != series]
        if not candidates:
            if series is not None:
                raise PlotError(f"--series {series}: no other setting takes more than one value to put on the "
                                f"x axis; sweep one with --set PATH=V1,V2")
            raise PlotError(f"--plot {metric}: no setting takes more than one value; sweep one with --set PATH=V1,V2")
        if len(candidates) > 1:
            rest = "--series gives the lines" if series is not None else "the others give one line each"
            raise PlotError(f"--plot {metric}: several settings vary ({', '.join(candidates)}); choose the x axis "
                            f"with --x ({rest})")
        x = candidates[0]
    if series is None:
        return x, [s for s in moving if s != x]
    extra = [s for s in moving if s not in (x, series)]
    if extra:
        words = ", ".join(extra)
        raise PlotError(f"--series {series}: {words} {'varies' if len(extra) == 1 else 'vary'} too; with --x and "
                        f"--series every other setting takes one value (or leave out --series for a line per "
                        f"combination)")
    return x, [series]


def points(rows: Sequence[Mapping], metric: str, settings: Sequence[str], x: str | None = None,
           series: str | None = None) -> dict:
    """What :func:`plot_metric` draws: ``{"x": setting, "lines": {label: [(x value, mean, min, max,
    seeds), ...]}, "xs": [x values in the sweep's order]}`` in the metric's own unit; a line's
    label is :func:`series_label`'s (the metric's name when a single line is drawn over no other
    setting). ``series``: the setting whose values make the lines (:func:`choose_axes`). Raises
    :class:`PlotError`."""
    cols: list[str] = []
    for row in rows:
        cols.extend(k for k in row if k not in cols)
    if metric not in cols:
        near = difflib.get_close_matches(metric, cols, n=3)
        hint = f"; did you mean {', '.join(near)}?" if near else ""
        raise PlotError(f"--plot {metric}: no such figure in the rows{hint}")
    x, others = choose_axes(metric, settings, varying(rows, settings), x, series)
    xs = _distinct(row.get(x) for row in rows)
    lines: list[tuple] = []  # each line's values of ``others``, in the order they first appear
    values: list[list[list[float]]] = []  # per line, per x value: the metric over the seeds
    for row in rows:
        value = row.get(metric)
        if row.get("error") or value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise PlotError(f"--plot {metric}: not a number ({value!r}); choose a numeric figure")
        line = tuple(row.get(o) for o in others)
        if line not in lines:
            lines.append(line)
            values.append([[] for _ in xs])
        values[lines.index(line)][xs.index(row.get(x))].append(float(value))
    if not lines:
        raise PlotError(f"--plot {metric}: every run failed or lacks the figure; nothing to draw")
    drawn: dict[str, list[tuple]] = {}
    for line, by_x in zip(lines, values):
        label = series_label(others, line) or metric
        drawn[label] = [(xv, _mean(vs), min(vs), max(vs), len(vs)) for xv, vs in zip(xs, by_x) if vs]
    return {"x": x, "lines": drawn, "xs": xs}


def _mean(values: Sequence[float]) -> float:
    """The mean, never outside the smallest and largest value: their sum's rounding can put the
    quotient a hair past them (three 0.1s give 0.10000000000000002), which would make a seeds'
    bar end negative."""
    return min(max(math.fsum(values) / len(values), min(values)), max(values))


def plot_metric(rows: Sequence[Mapping], metric: str, settings: Sequence[str], path, x: str | None = None,
                series: str | None = None) -> dict:
    """Draw ``metric`` against the setting ``x`` (default: the one setting that varies, besides
    ``series``), one line per value of ``series`` (default: per combination of the other settings
    that vary), and write the PNG to ``path``. Returns what was drawn: ``{"x": setting, "lines":
    {label: [(x value, mean, min, max, seeds), ...]}}`` in the metric's own unit. Raises
    :class:`PlotError`."""
    drawn = points(rows, metric, settings, x, series)
    metric_figure(rows, metric, drawn).savefig(path, format="png")
    return {"x": drawn["x"], "lines": drawn["lines"]}


#: entries of the summary's arrays and the column that names each (docs/sweeps.md, "Rows")
_ENTRY_NAMES = {"contexts": "context", "nodes": "name", "processes": "process", "displays": "source",
                "fairness": "node"}


def _entry_name(rows: Sequence[Mapping], array: str, index: str) -> str | None:
    """The name of entry ``index`` of the summary's ``array`` (``game.exe/render`` for contexts 0;
    a fairness entry by its node and priority, ``3D_0, normal priority 0``), from the first row
    that carries it."""
    column = _ENTRY_NAMES[array]
    for row in rows:
        name = row.get(f"{array}.{index}.{column}")
        if name not in (None, ""):
            if array == "displays":
                return f"VidPn source {name}"
            if array == "fairness":
                klass, level = row.get(f"fairness.{index}.priority_class"), row.get(f"fairness.{index}.priority")
                if klass not in (None, "") and level is not None:
                    return f"{name}, {klass} priority {level}"
            return str(name)
    return None


def describe(rows: Sequence[Mapping], metric: str) -> tuple[str, str]:
    """The metric in words: what it is about (the context, node or process by name, a fairness
    entry by its node and priority, else the dotted prefix; '' for a top-level figure) and the
    figure without its unit suffix, a short key written out (:data:`WORDS`):
    ``contexts.0.latency_p99_ns`` -> ('game.exe/render', 'latency p99'), ``fairness.0.jain`` ->
    ('3D_0, normal priority 0', "Jain's fairness index")."""
    head, _, last = metric.rpartition(".")
    for suffix, _, _ in _UNITS:
        if last.endswith(suffix) and len(last) > len(suffix):
            last = last[: -len(suffix)]
            break
    what = WORDS.get(last, last.replace("_", " "))
    m = re.fullmatch(r"(contexts|nodes|processes|displays|fairness)\.(\d+)", head)
    if m:
        return _entry_name(rows, m[1], m[2]) or head, what
    return head, what


def _bounds(metric: str) -> tuple[float, float] | None:
    """The floor and ceiling of a bounded index (:data:`BOUNDED`), None for any other metric."""
    last = metric.rpartition(".")[2]
    for suffix, _, _ in _UNITS:
        if last.endswith(suffix) and len(last) > len(suffix):
            last = last[: -len(suffix)]
            break
    return BOUNDED.get(last)


def value_range(low: float, high: float, floor: float, ceiling: float) -> tuple[float, float]:
    """The y axis of a bounded index whose bars run from ``low`` to ``high``: that span with a
    tenth of it added on either side (at least 1 % of ``ceiling - floor``), not below ``floor``
    nor above ``ceiling`` by more than that margin (room for a point drawn on the ceiling)."""
    margin = max((high - low) / 10, (ceiling - floor) / 100)
    return max(floor, low - margin), min(ceiling + margin, high + margin)


def _setting_label(rows: Sequence[Mapping], setting: str) -> str:
    """The x axis's label: the setting's path, with the node's name for a node's setting."""
    m = re.match(r"adapter\.nodes\.(\d+)\.", setting)
    name = _entry_name(rows, "nodes", m[1]) if m else None
    return f"{setting} (node {name})" if name else setting


def metric_figure(rows: Sequence[Mapping], metric: str, drawn: dict) -> Figure:
    """The figure of :func:`points`' result ``drawn``: one line per combination of the other
    settings, each point the mean over the seeds with a bar from their min to their max and its
    value written beside it (up to 12 points), the y axis from 0 for a metric that is never
    negative (fitted to the values for a bounded index, :func:`value_range`), in the unit
    :func:`axis_unit` gives."""
    factor, unit = axis_unit(metric)
    xs, lines = drawn["xs"], drawn["lines"]
    numeric = _numeric(xs)
    fig = Figure(figsize=(8, 5), dpi=100, layout="constrained")
    ax = fig.add_subplot()
    total = sum(len(p) for p in lines.values())
    width = 0.25 if len(lines) > 1 and not numeric else 0.0
    for i, (label, pts) in enumerate(lines.items()):
        shift = (i - (len(lines) - 1) / 2) * width / max(len(lines) - 1, 1)
        pos = [p[0] if numeric else xs.index(p[0]) + shift for p in pts]
        mean = [p[1] * factor for p in pts]
        # mean - min and max - mean are >= 0 (points keeps the mean between them); the clamp
        # guards a caller's own points, as matplotlib refuses a negative bar
        low = [max(0.0, (p[1] - p[2]) * factor) for p in pts]
        high = [max(0.0, (p[3] - p[1]) * factor) for p in pts]
        ax.errorbar(pos, mean, yerr=[low, high], marker="o", capsize=5, label=label,
                    linestyle="-" if numeric else ":", linewidth=1.2 if numeric else 0.9)
        if total <= 12:
            for px, py in zip(pos, mean):
                ax.annotate(f"{py:.4g}", (px, py), xytext=(7, 4), textcoords="offset points", fontsize=8)
    if numeric:
        if all(v > 0 for v in xs) and max(xs) / min(xs) >= 16:
            ax.set_xscale("log")
        if len(xs) <= 12:
            ax.set_xticks(xs, [f"{v:g}" for v in xs])
            ax.minorticks_off()
    else:
        labels = [value_label(drawn["x"], v) for v in xs]
        # Many or long names (ten policies) would run into each other: slant them.
        slant = sum(len(t) for t in labels) > 60
        ax.set_xticks(range(len(xs)), labels, rotation=30 if slant else 0, ha="right" if slant else "center")
        ax.set_xlim(-0.5, len(xs) - 0.5)
    bounds = _bounds(metric)
    if bounds is not None:
        ax.set_ylim(*value_range(min(p[2] for pts in lines.values() for p in pts) * factor,
                                 max(p[3] for pts in lines.values() for p in pts) * factor, *bounds))
    elif all(p[2] >= 0 for pts in lines.values() for p in pts):
        ax.set_ylim(bottom=0, top=max(p[3] for pts in lines.values() for p in pts) * factor * 1.15 or 1)
    subject, what = describe(rows, metric)
    ax.set_xlabel(_setting_label(rows, drawn["x"]))
    ax.set_ylabel(f"{what} ({unit})" if unit else what)
    seeds = sorted({p[4] for pts in lines.values() for p in pts})
    count = f"{seeds[0]} seed" + ("" if seeds == [1] else "s") if len(seeds) == 1 else f"{seeds[0]} to {seeds[-1]} seeds"
    spread = ("bars from the smallest to the largest" if any(p[2] != p[3] for pts in lines.values() for p in pts)
              else "every seed gave the same value" if seeds != [1] else "one run per point")
    fig.suptitle(f"{subject}: {what}" if subject else what)
    ax.set_title(f"column {metric}; mean of {count}, {spread}", fontsize=9)
    ax.grid(True, alpha=0.3)
    if len(lines) > 1:
        ax.legend(fontsize=8)
    return fig
