"""Run reports: ``wddmsim run ... --report DIR`` and ``wddmsim report EVENTS.jsonl -o DIR``.

Both build the report from the event log alone, so a saved log gives the same folder as the run:

- ``summary.json`` and ``summary.md``: the run's summary (:mod:`wddmsim.output.summary`), the one object
  ``wddmsim run`` prints and ``--json`` gives, read from the log's last line (``LogEnd``); the
  Markdown holds the terminal's tables with every column (:func:`wddmsim.output.summaryview.markdown`),
  its incidents (resets, live dumps, devices in error, verifier reports) and the bug check;
- ``node_utilisation.png``: each node's busy fraction per time bucket;
- ``context_latency.png``: each context's latency distribution (cumulative);
- ``frame_times.png``: time between display changes per VidPn source (when there are presents);
- ``queue_depths.png``: packets on each node's hardware queue over time (each time bucket's mean and
  most) and the share of the run at each depth.

``summary.md`` ends with a ``Figures`` section that embeds each PNG the report wrote (a Markdown
image link by its file name, relative to the folder, so the folder can be moved or published as a
whole) under its heading, with one line saying what it shows (:func:`figures_markdown`); a figure
that could not be written is not linked.

Under hardware scheduling (no DmaPacket events; :mod:`wddmsim.trace.hwcontexts`) the utilisation plot
draws a node's busy time as the union of its contexts' turns on its engine (``HwContextState``
``running`` to the next state change), as the GPU's scheduler logged them; the queue depth is
the buffers with the driver (``DxgkDdiSubmitCommandToHwQueue`` returned success) not yet retired
(``QueuePacketStop``).

The plots are drawn by :mod:`wddmsim.output.report_plots` (matplotlib's Agg backend, no display needed).

A sweep over scheduler policies (``wddmsim sweep ... --set scheduler.policy=A,B --report DIR``)
writes a comparison from its rows instead, :func:`write_comparison`:

- ``policy_comparison.png``: each policy's latency distribution over all its runs and its deadline
  misses per run (:func:`wddmsim.output.report_compare.policy_figure`).

A run that stopped early (a signal, a budget: :mod:`wddmsim.runner.stop`) or a log cut short is
partial: ``summary.md`` says so on its first line, in the words of :mod:`wddmsim.trace.ending`.

A file of the folder that cannot be written (a read-only folder, a full disk, a folder in the
way) does not stop the others: every file that can be written is, and then one
:class:`~wddmsim.trace.output.WriteFailed` says which could not and why, in one line
(:func:`failure`). The text files are written as :mod:`wddmsim.trace.output` says (UTF-8, a lone
surrogate escaped).
"""

from __future__ import annotations

import json
import os

from .summary import from_log
from .summaryview import markdown
from ..trace.ending import log_ending
from ..trace.output import WriteFailed, open_text, reason

__all__ = ["COMPARISON_FILE", "ComparisonError", "failure", "figures_markdown", "markdown", "partial_note",
           "summarize", "write_comparison", "write_report"]

#: the policy comparison's file in the report folder
COMPARISON_FILE = "policy_comparison.png"


class ComparisonError(ValueError):
    """Rows that give no policy comparison: none carries the policy's column, or every run failed.
    ``str()`` says which, in one line."""


def summarize(events: list[dict]) -> dict:
    """The report's numbers: the run summary the event log carries (:func:`wddmsim.output.summary.from_log`;
    :class:`wddmsim.output.summary.NoSummary` when it has none)."""
    return from_log(events)


def partial_note(events: list[dict]) -> str | None:
    """The line ``summary.md`` opens with when the log is partial (the run stopped early or was
    cut short, :mod:`wddmsim.trace.ending`), None for a complete one."""
    ending = log_ending(events)
    if not ending.partial:
        return None
    return f"> **Partial run:** {ending.describe().removeprefix('partial log: ')}."


def _make_folder(out_dir: str) -> None:
    """Create ``out_dir`` (and its parents), or a :class:`~wddmsim.trace.output.WriteFailed`
    saying why not."""
    try:
        os.makedirs(out_dir, exist_ok=True)
    except OSError as e:
        raise WriteFailed(out_dir, e, "cannot create the report folder") from None


def failure(out_dir: str, failed: list[tuple[str, OSError]], total: int) -> WriteFailed:
    """The one error that says which of the report's ``total`` files (``failed``: each file's name
    in ``out_dir`` and its error) could not be written: ``DIR/NAME: cannot write: REASON`` for one
    file; for more, ``DIR: cannot write N of the report's TOTAL files (NAME, ...): REASON`` when
    they failed for the same reason, else each name with its reason."""
    if len(failed) == 1:
        name, error = failed[0]
        return WriteFailed(os.path.join(out_dir, name), error)
    reasons = {reason(e) for _, e in failed}
    names = ", ".join(name for name, _ in failed)
    action = f"cannot write {len(failed)} of the report's {total} files"
    if len(reasons) == 1:
        return WriteFailed(out_dir, failed[0][1], f"{action} ({names})")
    return WriteFailed(out_dir, "; ".join(f"{name}: {reason(e)}" for name, e in failed), action)


def figures_markdown(names: list[str]) -> str:
    """The ``Figures`` section of ``summary.md`` for the PNGs ``names`` (file names in the report
    folder, in the order written): per figure a heading, the line saying what it shows, and the
    image linked by its relative path; '' for none."""
    from .report_plots import FIGURES

    if not names:
        return ""
    out = ["## Figures", ""]
    for name in names:
        heading, line = FIGURES.get(name, (name, ""))
        out += [f"### {heading}", ""] + ([line, ""] if line else []) + [f"![{heading}]({name})", ""]
    return "\n".join(out)


def write_report(events: list[dict], out_dir: str) -> list[str]:
    """Write the report folder (created when missing): the summary (JSON and Markdown), then the
    plots (:func:`wddmsim.output.report_plots.plot_figures`); returns the files written, in that
    order. ``summary.md`` ends with the figures written (:func:`figures_markdown`). A partial log's
    ``summary.md`` says so on its first line; a log cut short (no ``LogEnd``) carries no summary:
    ``summary.md`` then says so, there is no ``summary.json``, and the plots are drawn from what
    the log holds. A file that cannot be written: every other one is written, then the
    :class:`~wddmsim.trace.output.WriteFailed` of :func:`failure` is raised."""
    from .report_plots import plot_figures, save_figures

    _make_folder(out_dir)
    note = partial_note(events)
    if log_ending(events).reason is None:
        s = None
    else:
        s = summarize(events)
    figures = plot_figures(events)
    order = ["summary.json", "summary.md", *(name for name, _ in figures)]
    written: list[str] = []
    failed: list[tuple[str, OSError]] = []

    def save(name: str, text: str) -> None:
        path = os.path.join(out_dir, name)
        try:
            with open_text(path) as f:
                f.write(text)
        except OSError as e:
            failed.append((name, e))
            return
        written.append(path)

    if s is not None:
        save("summary.json", json.dumps(s, indent=2) + "\n")
        md = markdown(s)
    else:
        md = (f"# {events[0].get('scenario', 'run') if events else 'run'}\n\nThe run summary is missing: it is "
              f"written in the log's LogEnd line when a run ends, and this log has none.\n")
    # The PNGs first, so that summary.md links only those written; the lists keep the order above.
    pngs = save_figures(figures, out_dir, failed)
    section = figures_markdown([os.path.basename(p) for p in pngs])
    md = md if note is None else f"{note}\n\n{md}"
    save("summary.md", f"{md}\n{section}".rstrip("\n") + "\n" if section else md)
    written += pngs
    written.sort(key=lambda path: order.index(os.path.basename(path)))
    failed.sort(key=lambda item: order.index(item[0]))
    if failed:
        raise failure(out_dir, failed, len(written) + len(failed))
    return written


def write_comparison(rows, out_dir: str, setting: str = "scheduler.policy") -> list[str]:
    """Write ``policy_comparison.png`` into ``out_dir`` (created when missing) from a sweep's rows
    (:func:`wddmsim.sweep.sweep`'s, or its ``--json`` read back) by the value of ``setting``:
    :func:`wddmsim.output.report_compare.policy_figure`. Returns the files written; raises
    :class:`ComparisonError` when no row has ``setting`` or every run failed, a
    :class:`~wddmsim.trace.output.WriteFailed` when the file cannot be written."""
    from .report_compare import policy_figure

    rows = list(rows)
    if not any(setting in row for row in rows):
        raise ComparisonError(f"the rows have no {setting} column; sweep the policies with --set {setting}=A,B,...")
    if all(row.get("error") for row in rows if setting in row):
        raise ComparisonError(f"every run failed ({len(rows)} of {len(rows)}); no policy to compare")
    _make_folder(out_dir)
    path = os.path.join(out_dir, COMPARISON_FILE)
    figure = policy_figure(rows, setting)
    try:
        figure.savefig(path)
    except OSError as e:
        raise WriteFailed(path, e) from None
    return [path]
