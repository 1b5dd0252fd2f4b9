"""Run reports: ``wddmsim run ... --report DIR`` and ``wddmsim report EVENTS.jsonl -o DIR``.

Both build the report from the event log alone, so a saved log gives the same folder as the run:

- ``summary.json`` and ``summary.md``: the run's summary (:mod:`wddmsim.summary`), the one object
  ``wddmsim run`` prints and ``--json`` gives, read from the log's last line (``LogEnd``); the
  Markdown holds the terminal's tables with every column (:func:`wddmsim.summaryview.markdown`),
  its incidents (resets, live dumps, devices in error, verifier reports) and the bug check;
- ``node_utilisation.png``: each node's busy fraction per time bucket;
- ``context_latency.png``: each context's latency distribution (cumulative);
- ``frame_times.png``: time between display changes per VidPn source (when there are presents);
- ``queue_depths.png``: packets on each node's hardware queue over time.

Under hardware scheduling (no DmaPacket events; :mod:`wddmsim.trace.hwcontexts`) the utilisation plot
draws a node's busy time as the union of its contexts' turns on its engine (``HwContextState``
``running`` to the next state change), as the GPU's scheduler logged them; the queue depth is
the buffers with the driver (``DxgkDdiSubmitCommandToHwQueue`` returned success) not yet retired
(``QueuePacketStop``).

The plots are drawn by :mod:`wddmsim.report_plots` (matplotlib's Agg backend, no display needed).
"""

from __future__ import annotations

import json
import os

from .summary import from_log
from .summaryview import markdown

__all__ = ["markdown", "summarize", "write_report"]


def summarize(events: list[dict]) -> dict:
    """The report's numbers: the run summary the event log carries (:func:`wddmsim.summary.from_log`;
    :class:`wddmsim.summary.NoSummary` when it has none)."""
    return from_log(events)


def write_report(events: list[dict], out_dir: str) -> list[str]:
    """Write the report folder: the summary (JSON and Markdown), then the plots
    (:func:`wddmsim.report_plots.write_plots`); returns the files written."""
    from .report_plots import write_plots

    os.makedirs(out_dir, exist_ok=True)
    s = summarize(events)
    written = []

    def save(name: str, text: str) -> None:
        path = os.path.join(out_dir, name)
        with open(path, "w") as f:
            f.write(text)
        written.append(path)

    save("summary.json", json.dumps(s, indent=2) + "\n")
    save("summary.md", markdown(s))
    return written + write_plots(events, out_dir)
