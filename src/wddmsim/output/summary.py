"""The run summary: one object, one vocabulary, the same figures wherever a run is shown.

:meth:`wddmsim.runner.system.System.summary` builds it (a dict of plain JSON values) when a run ends,
and every output is made from that one object:

- ``wddmsim run`` prints it as tables (:func:`wddmsim.output.summaryview.print_summary`; ``--wide`` for
  every column) and ``wddmsim run --json`` prints it as it is;
- the event log carries it in its last line (``LogEnd``'s ``summary``), so ``wddmsim report LOG``
  writes the same ``summary.json`` (the object) and ``summary.md`` (its tables, every column) as
  ``wddmsim run --report``;
- a sweep's row is the object flattened (:mod:`wddmsim.sweep.rows`).

The words are the DDI's and GPUView's (docs/timeline.md, "The run summary", has the full table):

- *submitted*: a context's packet that its application handed to the OS; it entered the
  context's software queue (GPUView's queue packet: ``QueuePacketStart``);
- *DMA packet*: a submission of a packet to the driver, ``DxgkDdiSubmitCommand`` returning
  success (``DmaPacketQueued``); a packet taken back by a preemption or a reset is submitted again,
  another DMA packet. Under hardware scheduling the driver gets *buffers* on its hardware queues;
- *completed*: the driver reported the packet's fence (``DMA_COMPLETED``) and the OS retired the
  packet in its DPC (``QueuePacketStop`` with status ``Completed``);
- *latency*: from submitted to completed;
- *busy*: the OS's view of a node, the time a DMA packet sat at the bottom of its hardware queue
  (``DmaPacketStart`` to ``DmaPacketStop``, as GPUView draws it); *GPU busy*: the engine's own
  account of its work.

Everything in the object follows from the scenario and the seed: two runs give the same bytes.
What the wall clock measures (a run's wall time, its real-time factor, ``--memory``'s peak
resident memory) is never in it; ``wddmsim run`` prints those on standard error. Percentiles come
from histograms that keep four significant digits (:mod:`wddmsim.dxgkrnl.stats`); counts, sums,
minimums and maximums are exact.
"""

from __future__ import annotations

__all__ = ["LOG_FIELD", "NoSummary", "from_log"]

#: The field of the log's ``LogEnd`` line that holds the summary.
LOG_FIELD = "summary"


class NoSummary(ValueError):
    """An event log that holds no run summary (cut short, or not written by ``wddmsim run``)."""


def from_log(events: list[dict]) -> dict:
    """The run summary an event log carries in its last line (``LogEnd``), or :class:`NoSummary`
    saying why there is none."""
    if not events or events[-1].get("event") != "LogEnd":
        last = events[-1].get("event") if events else None
        raise NoSummary(f"the log ends with {last or 'nothing'}, not LogEnd: the run was cut short, "
                        f"and the summary is written when it ends")
    summary = events[-1].get(LOG_FIELD)
    if not isinstance(summary, dict):
        raise NoSummary("its LogEnd line carries no run summary (a log written by an older wddmsim): "
                        "run the scenario again with --events")
    return summary
