"""A sweep's rows: one flat dict per run, its CSV, and a pandas DataFrame.

A row holds, in this order: one column per swept setting (named by its dotted scenario path, the
value the run gave it), ``seed``, ``error`` (None, or why the run failed: a setting the schema
refuses, a driver that does not start, a bug check, an exception), then every figure of the run's
summary (:mod:`wddmsim.output.summary`: the object ``wddmsim run --json`` prints, its tables draw and its
report holds, so a row shows the same figures) with dotted names: tables by key, arrays by entry
number from 0 (``nodes.0.busy_pct``, ``contexts.1.latency_p99_ns``, ``tdr.engine_resets``,
``packets_completed``; ``bugcheck.code`` for a run that stopped). A
name such as a context's ``game.exe/render`` holds dots and slashes, so arrays are flattened by
number, which is the order the summary lists them in (the scenario's order). The summary's own
``seed`` is the row's ``seed``. The summary carries no wall-clock figure (``run`` prints those on
standard error); as a guard, a top-level figure named for the wall clock (``wall_s``) is left out,
so the rows of a sweep are the same byte for byte whatever executor or number of workers ran it.

A row of a sweep asked for latencies (``sweep(..., latency=True)``, ``wddmsim sweep --report``)
that ran also carries ``_latency``, which is no column (neither the CSV nor ``--json`` has
it): per context, in the summary's order, its whole latency histogram (``[[latency ns, packets],
...]``, buckets of four significant digits), from which the policy comparison draws exact
distributions.

:func:`first_failure` is the line that says why the first failed row failed, for ``wddmsim sweep``
to print after its count of failed runs (``10 runs, 10 failed`` alone leaves the reader to open
the CSV): ``first failure (scheduler.quantum=1ms, seed 1): TEXT``, the row's settings and seed,
then its error on one line.

The CSV's columns are the union of every row's keys, in the order they first appear (the rows'
order is the sweep's); a cell is empty for None or a figure a run does not have, ``true`` or
``false`` for a boolean and the shortest exact text for a number.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

__all__ = ["WALL_CLOCK", "columns", "first_failure", "flatten", "make_row", "public", "rows_to_csv",
           "rows_to_dataframe", "write_csv"]

#: Summary figures measured on the wall clock, which differ from one run of the same scenario and
#: seed to the next: they are not part of a row. Any other top-level key that speaks of the wall
#: clock or of a real-time factor (``wall`` or ``real_time``/``realtime`` in its name) is left out
#: as well.
WALL_CLOCK = ("wall_s", "real_time_factor", "realtime_factor", "rtf")


def _wall_clock(key: str) -> bool:
    k = key.lower()
    return k in WALL_CLOCK or "wall" in k or "real_time" in k or "realtime" in k


def flatten(value: Any, prefix: str = "", out: dict | None = None) -> dict:
    """``value`` (a summary) as one level of dotted keys: tables by key, arrays by entry number.
    An empty table or array gives no key; wall-clock figures are left out at the top level."""
    out = {} if out is None else out
    if isinstance(value, Mapping):
        for key, item in value.items():
            if not prefix and _wall_clock(str(key)):
                continue
            flatten(item, f"{prefix}.{key}" if prefix else str(key), out)
    elif isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            flatten(item, f"{prefix}.{i}" if prefix else str(i), out)
    else:
        out[prefix] = value
    return out


def make_row(settings: Mapping[str, Any], seed: int | None, summary: Mapping | None, error: str | None) -> dict:
    """One run's row: its settings, ``seed`` (the summary's own when None is given), ``error``,
    then the summary's figures flattened."""
    row = dict(settings)
    hidden = {}
    if summary is not None and any(str(k).startswith("_") for k in summary):
        hidden = {k: v for k, v in summary.items() if str(k).startswith("_")}
        summary = {k: v for k, v in summary.items() if not str(k).startswith("_")}
    figures = flatten(summary) if summary is not None else {}
    row["seed"] = seed if seed is not None else figures.get("seed")
    row["error"] = error
    for key, value in figures.items():
        if key != "seed" and key not in row:
            row[key] = value
    row.update(hidden)
    return row


def first_failure(rows: Iterable[Mapping]) -> str | None:
    """The line saying why the first row with an error failed: ``first failure (SETTING=VALUE,
    ..., seed N): ERROR``, the settings being the row's columns before ``seed`` (:func:`make_row`'s
    order) and the error's lines joined with spaces; None when no row failed."""
    for row in rows:
        error = row.get("error")
        if not error:
            continue
        keys = list(row)
        settings = keys[:keys.index("seed")] if "seed" in keys else []
        where = [f"{k}={row[k]}" for k in settings] + ([f"seed {row['seed']}"] if row.get("seed") is not None else [])
        text = " ".join(str(error).split())
        return f"first failure ({', '.join(where)}): {text}" if where else f"first failure: {text}"
    return None


def public(row: Mapping) -> dict:
    """``row`` without what is not a column (``_latency``: the runs' latency histograms)."""
    return {k: v for k, v in row.items() if not str(k).startswith("_")}


def columns(rows: Iterable[Mapping]) -> list[str]:
    """The union of the rows' keys, in the order they first appear (but ``_latency`` and any other
    key that starts with ``_``, which is not a column)."""
    seen: dict[str, None] = {}
    for row in rows:
        for key in row:
            if not str(key).startswith("_"):
                seen.setdefault(key, None)
    return list(seen)


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    return str(value)


def rows_to_csv(rows: Sequence[Mapping]) -> str:
    """The rows as CSV text (a header of :func:`columns`, ``\\n`` line ends)."""
    cols = columns(rows)
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(cols)
    for row in rows:
        writer.writerow([_cell(row.get(c)) for c in cols])
    return buf.getvalue()


def write_csv(rows: Sequence[Mapping], path) -> None:
    """Write the rows as CSV (:func:`rows_to_csv`) to ``path``, UTF-8."""
    with open(path, "w", encoding="utf-8", newline="") as f:
        f.write(rows_to_csv(rows))


def rows_to_dataframe(rows: Sequence[Mapping]):
    """The rows as a pandas ``DataFrame`` with the columns of :func:`columns` (pandas is not a
    dependency of wddmsim: this raises ImportError saying how to install it when it is missing)."""
    try:
        import pandas as pd
    except ImportError:
        raise ImportError("rows_to_dataframe needs pandas, which wddmsim does not install: pip install pandas "
                          "(the rows themselves are plain dicts)") from None
    return pd.DataFrame(list(rows), columns=columns(rows))
