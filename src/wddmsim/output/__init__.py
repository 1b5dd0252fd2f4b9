"""What a run leaves behind for a person: the summary and the report.

- :mod:`.summary`: the run's summary as one object (from a live run or read back from its event log);
- :mod:`.summaryview`: the summary's tables on a terminal and in Markdown;
- :mod:`.report`, :mod:`.report_plots`, :mod:`.report_compare`: ``--report DIR``, a folder with the
  summary, the figures and, for a sweep, the policies against each other.

The event log, the Chrome trace, the PresentMon CSV and the packet ledger are :mod:`wddmsim.trace`.
"""
