"""The policy comparison of a sweep (``wddmsim sweep ... --set scheduler.policy=A,B --report DIR``,
:func:`wddmsim.output.report.write_comparison`), made from the sweep's rows rather than an event log:

- ``policy_comparison.png``: on the left each policy's packet latency distribution (cumulative,
  log time axis), pooled over every context of every run of the policy that went to its end; on
  the right each policy's deadline misses per run (the sum over the contexts of the summary's
  ``deadline_misses``; a context without a deadline has None or no such field), the bar the mean
  over its runs, the whisker from the fewest to the most.

The latency distribution is exact (to the histogram's four significant digits) where the rows
carry their contexts' latency histograms (``_latency``: a sweep asked for them, as ``--report``
does). Rows read back from a CSV or JSON file hold only each context's ``latency_min_ns``,
``latency_p50_ns``, ``latency_p99_ns``, ``latency_max_ns`` and ``completed``: such a context counts
as a distribution rising linearly between those four points (0, 0.5, 0.99 and 1 of its packets),
weighted by its packets completed (:func:`latency_cdf`), an estimate the panel's title names.

The figure is a :class:`matplotlib.figure.Figure` (no pyplot state, Agg to draw the PNG), so tests
can read its axes.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Mapping, Sequence

from matplotlib.figure import Figure

from .report_plots import LATENCY_FLOOR_MS, MS, STYLES, WIDTH, counted, log_ms_axis
from .sweep_plot import POLICY, value_label

#: a context's latency figures in a row and the fraction of its packets at or below each
_CDF_POINTS = (("latency_min_ns", 0.0), ("latency_p50_ns", 0.5), ("latency_p99_ns", 0.99), ("latency_max_ns", 1.0))
_CONTEXT_FIELD = re.compile(r"contexts\.(\d+)\.(\w+)")


def _context_fields(row: Mapping) -> dict[int, dict[str, object]]:
    """A row's ``contexts.N.field`` figures as ``{N: {field: value}}``, in context order."""
    out: dict[int, dict[str, object]] = {}
    for key, value in row.items():
        m = _CONTEXT_FIELD.fullmatch(key)
        if m:
            out.setdefault(int(m[1]), {})[m[2]] = value
    return dict(sorted(out.items()))


def _number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def context_latencies(row: Mapping) -> list[tuple[int, list[tuple[float, float]]]]:
    """Each context of a row with packets completed and its latency figures: ``(completed,
    [(latency ns, fraction of its packets), ...])`` at its min, p50, p99 and max."""
    out = []
    for fields in _context_fields(row).values():
        n = fields.get("completed")
        knots = [(fields.get(name), frac) for name, frac in _CDF_POINTS]
        if _number(n) and n > 0 and all(_number(v) for v, _ in knots):
            out.append((int(n), [(float(v), f) for v, f in knots]))
    return out


def _cdf_at(knots: list[tuple[float, float]], x: float) -> float:
    """The fraction of packets at or below ``x`` of a distribution rising linearly between
    ``knots`` (ascending latencies with their fractions; equal latencies take the highest)."""
    below = [i for i, (v, _) in enumerate(knots) if v <= x]
    if not below:
        return 0.0
    j = below[-1]
    if j == len(knots) - 1:
        return 1.0
    (v0, f0), (v1, f1) = knots[j], knots[j + 1]
    return f0 + (f1 - f0) * (x - v0) / (v1 - v0)


def exact_latencies(row: Mapping) -> list[tuple[int, list[tuple[float, float]]]] | None:
    """Each context of a row with packets retired and its whole latency distribution, from the
    histograms a sweep's run carries (``_latency``, :mod:`wddmsim.sweep.rows`): ``(packets,
    [(latency ns, fraction of its packets at or below it), ...])`` at every bucket (four
    significant digits). None for a row without them (rows read back from CSV or JSON)."""
    hist = row.get("_latency")
    if not isinstance(hist, list):
        return None
    out = []
    for buckets in hist:
        n = sum(c for _, c in buckets)
        if n:
            seen, knots = 0, []
            for v, c in buckets:
                seen += c
                knots.append((float(v), seen / n))
            out.append((n, knots))
    return out


def latency_cdf(rows: Sequence[Mapping]) -> tuple[list[tuple[float, float]], int]:
    """The pooled latency distribution of ``rows`` (runs that went to their end) and the packets
    it counts: ``([(latency ns, fraction of the packets at or below it), ...], packets)`` at every
    latency a context's figures name, ascending, each context weighted by its packets. A row that
    carries its histograms (a sweep's own rows) counts exactly (:func:`exact_latencies`); one
    that does not (rows read back from a file) is estimated by a linear rise between its min,
    p50, p99 and max (:func:`context_latencies`). ``([], 0)`` when no context retired a packet."""
    exact: dict[float, int] = defaultdict(int)  # latency -> packets, over the exact contexts
    estimated = []
    for row in rows:
        hist = row.get("_latency")
        if isinstance(hist, list):
            for buckets in hist:
                for v, c in buckets:
                    exact[float(v)] += c
        else:
            estimated += context_latencies(row)
    total = sum(exact.values()) + sum(n for n, _ in estimated)
    if not total:
        return [], 0
    xs = sorted(set(exact) | {v for _, knots in estimated for v, _ in knots})
    out, below = [], 0
    for x in xs:
        below += exact.get(x, 0)
        out.append((x, (below + sum(n * _cdf_at(knots, x) for n, knots in estimated)) / total))
    return out, total


def deadline_misses(row: Mapping) -> int | None:
    """A run's deadline misses: the sum over its contexts of the summary's ``deadline_misses``;
    None when no context has a deadline (the field None, or not in the row)."""
    values = [f["deadline_misses"] for f in _context_fields(row).values()
              if _number(f.get("deadline_misses"))]
    return int(sum(values)) if values else None


def row_settings(rows: Sequence[Mapping]) -> list[str]:
    """The swept settings of a sweep's rows: the columns before ``seed`` (docs/sweeps.md, "Rows")."""
    out: list[str] = []
    for row in rows:
        for key in row:
            if key == "seed":
                break
            if key not in out:
                out.append(key)
    return out


def policy_groups(rows: Sequence[Mapping], setting: str = POLICY) -> dict[str, list[Mapping]]:
    """The rows by the value of ``setting`` (the scheduler policy), in the order the values first
    appear, each labelled by its name (:func:`wddmsim.output.sweep_plot.value_label`; the whole value
    where two values would give one name). Failed runs are in their policy's group."""
    values: list = []
    for row in rows:
        if setting in row and row[setting] not in values:
            values.append(row[setting])
    names = [value_label(setting, v) for v in values]
    if len(set(names)) < len(names):
        names = [str(v) for v in values]
    return {name: [row for row in rows if setting in row and row[setting] == v] for name, v in zip(names, values)}


def policy_figure(rows: Sequence[Mapping], setting: str = POLICY) -> Figure:
    """``policy_comparison.png``: per value of ``setting`` (a scheduler policy), the pooled latency
    distribution of its runs (:func:`latency_cdf`, log time axis) on the left and its deadline
    misses per run (:func:`deadline_misses`: the bar their mean, the whisker their range) on the
    right. Rows with an error are left out (the legend counts them)."""
    groups = policy_groups(rows, setting)
    fig = Figure(figsize=(WIDTH + 2, 5.4), dpi=100, layout="constrained")
    lat_ax, miss_ax = fig.subplots(1, 2, gridspec_kw={"width_ratios": [2.3, 1]})
    ok_rows = [r for r in rows if not r.get("error")]
    scenario = next((r["scenario"] for r in ok_rows if r.get("scenario")), None)
    pooled = [s for s in row_settings(rows) + ["seed"] if s != setting and len({repr(r.get(s)) for r in rows}) > 1]
    over = f", each policy pooled over {', '.join('seeds' if s == 'seed' else s for s in pooled)}" if pooled else ""
    fig.suptitle("Scheduler policies compared" + (f": {scenario}" if scenario else "")
                 + f" ({counted(len(ok_rows), 'run')}{over})")

    curves = []
    idle = []
    for name, group in groups.items():
        good = [r for r in group if not r.get("error")]
        points, packets = latency_cdf(good)
        failed = len(group) - len(good)
        label = (f"{name}: {counted(len(good), 'run')}, {counted(packets, 'packet')}"
                 + (f", {failed} failed" if failed else ""))
        if points:
            curves.append((label, points))
        else:
            idle.append(name)
    for i, (label, points) in enumerate(curves):
        xs = [max(v / MS, LATENCY_FLOOR_MS) for v, _ in points]
        lat_ax.plot([xs[0]] + xs, [0.0] + [f for _, f in points], linestyle=STYLES[i % len(STYLES)],
                    linewidth=1.6, label=label)
    if curves:
        every = [max(v / MS, LATENCY_FLOOR_MS) for _, pts in curves for v, _ in pts]
        log_ms_axis(lat_ax, min(every), max(every))
        for frac, name in ((0.5, "p50"), (0.99, "p99")):
            lat_ax.axhline(frac, color="grey", linewidth=0.8, linestyle=":")
            lat_ax.text(1.005, frac, name, transform=lat_ax.get_yaxis_transform(), va="center", fontsize=8,
                        color="grey")
        lat_ax.legend(loc="lower right", fontsize="small", title=setting, title_fontsize="small")
    else:
        lat_ax.set_xscale("log")
        lat_ax.text(0.5, 0.5, "no run retired a packet", transform=lat_ax.transAxes, ha="center", va="center")
    how = ("each run's whole distribution" if all(isinstance(r.get("_latency"), list) for r in ok_rows)
           else "estimated from each run's min, p50, p99 and max")
    lat_ax.set_title(f"Packet latency, every context ({how})"
                     + (f"\nno packet retired: {', '.join(idle)}" if idle and curves else ""), fontsize=9)
    lat_ax.set_ylim(0, 1.02)
    lat_ax.set_xlabel("latency (ms, log scale)")
    lat_ax.set_ylabel("fraction of the policy's packets")
    lat_ax.grid(alpha=0.3)

    names = list(groups)
    per_run = {name: [m for r in group if not r.get("error") and (m := deadline_misses(r)) is not None]
               for name, group in groups.items()}
    shown = [(i, name, v) for i, (name, v) in enumerate(per_run.items()) if v]
    if shown:
        means = [sum(v) / len(v) for _, _, v in shown]
        low = [max(0.0, m - min(v)) for m, (_, _, v) in zip(means, shown)]
        high = [max(0.0, max(v) - m) for m, (_, _, v) in zip(means, shown)]
        miss_ax.bar([i for i, _, _ in shown], means, width=0.6, color="C3", alpha=0.75, yerr=[low, high],
                    capsize=4, error_kw={"linewidth": 1})
        for (i, _, v), m in zip(shown, means):
            # beside the bar's top, clear of the whisker through its middle
            miss_ax.annotate(f"{m:.4g}", (i + 0.3, m), xytext=(3, 0), textcoords="offset points", ha="left",
                             va="center", fontsize=8)
        top = max(max(v) for _, _, v in shown)
        miss_ax.set_ylim(0, top * 1.2 if top else 1)
    else:
        miss_ax.set_ylim(0, 1)
        miss_ax.text(0.5, 0.5, "no context has a deadline", transform=miss_ax.transAxes, ha="center", va="center")
    for i, name in enumerate(names):
        if shown and not per_run[name]:
            miss_ax.text(i, 0, "no deadline", ha="center", va="bottom", fontsize=8, color="grey", rotation=90)
    slant = sum(len(n) for n in names) > 30  # many or long names would run into each other
    miss_ax.set_xticks(range(len(names)), names, rotation=40 if slant else 0, ha="right" if slant else "center")
    miss_ax.set_xlim(-0.6, len(names) - 0.4)
    miss_ax.set_xlabel(setting)
    miss_ax.set_ylabel("deadline misses per run")
    miss_ax.set_title("Deadline misses, sum over contexts\n(mean of the runs; whisker: fewest to most)", fontsize=9)
    miss_ax.grid(alpha=0.3, axis="y")
    return fig
