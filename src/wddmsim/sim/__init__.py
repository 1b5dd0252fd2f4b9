"""The event kernel: virtual time in integer nanoseconds, events ordered by time, then by IRQL
class, then by the order they were scheduled; cancellable timers; generator processes; seeded
random streams named by purpose.

Spec: DESIGN.md section 3 (time and determinism); ddi-facts.md section 12 (the IRQL classes).
This package imports nothing of the project.
"""

from .kernel import DEVICE, DISPATCH, IRQL_NAMES, PASSIVE, Simulator, StopSimulation, Timer
from .process import Event, Process
from .streams import stream_seed

__all__ = [
    "DEVICE",
    "DISPATCH",
    "IRQL_NAMES",
    "PASSIVE",
    "Event",
    "Process",
    "Simulator",
    "StopSimulation",
    "Timer",
    "stream_seed",
]
