"""A run, in front of the model: the assembled machine and how a run is driven.

- :mod:`.system`: :class:`~.system.System`, one machine built from a scenario (the OS, the
  driver, the GPU, the applications) and run to an end;
- :mod:`.stop`: how a run ends early (Ctrl-C, SIGTERM, a bug check) and the exit status it gives;
- :mod:`.progress`, :mod:`.cost`, :mod:`.logestimate`: what a long run shows while it goes, what it
  cost, and the event log's size before it is written;
- :mod:`.compare`: one scenario under the software and the hardware scheduler, side by side.

This is assembly code: it knows every part of the model and no part of the model imports it.
"""
