"""The ``wddmsim`` script and ``python -m wddmsim``: the command line of :mod:`wddmsim.cli`.

The command line imports click before it reads its arguments, and a command's modules (rich, the
model) when it runs: a tenth of a second or less for ``--version``, a few tenths before a run
starts (benchmarks/startup.py). A Ctrl-C (SIGINT) in that time would end the process with Python's
KeyboardInterrupt traceback; here it ends with the line every interrupted command prints and exit
status 130, as a Ctrl-C later on does (:mod:`wddmsim.runner.stop`, :class:`wddmsim.cli.util.WddmsimGroup`).
"""

from __future__ import annotations

import sys

#: What a command interrupted outside a run prints on standard error (the same line as
#: :class:`wddmsim.cli.util.WddmsimGroup`'s, which this module does not import: it imports nothing).
INTERRUPTED_LINE = "wddmsim: interrupted by SIGINT"


def main() -> None:
    """Import the command line and run it, a Ctrl-C during the import included."""
    try:
        from .cli.app import main as command_line
    except KeyboardInterrupt:
        print(INTERRUPTED_LINE, file=sys.stderr)
        raise SystemExit(130) from None  # runstop.EXIT_INTERRUPTED, not imported: it may not be yet
    command_line(prog_name="wddmsim")
