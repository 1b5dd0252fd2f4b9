"""FIFO on the GPU (hardware scheduling): the context runnable longest gets the engine and keeps it
until it has nothing runnable, whatever its band.

Source: first-come, first-served (Silberschatz, Galvin and Gagne, *Operating System Concepts*,
"First-Come, First-Served Scheduling"); the GPU firmware of the time before preemption, which ran
each context's work to the end.

Settings: none.

Defining property: contexts get the engine in the order they became runnable, and the one on it is
never preempted (only a suspend or an engine reset takes it off): it leaves when its queues have
drained or wait on a fence, so one long buffer delays every context behind it, a realtime one too.
"""

from __future__ import annotations

from wddmsim.policies import HwPolicy


class Fifo(HwPolicy):
    name = "fifo"

    def pick(self, node, now):
        return self.os.ready(node)[0]  # in the order they became runnable
