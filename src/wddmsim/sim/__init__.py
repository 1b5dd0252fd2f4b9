"""The event kernel: virtual time in integer nanoseconds, events ordered by time, then by IRQL
class, then by the order they were scheduled; cancellable timers; generator processes; seeded
random streams named by purpose.

The IRQL classes are those of Microsoft's "Threading and synchronization model of display miniport
driver" page and each DDI's reference page.
This package imports nothing of the project.
"""

from .irql import DEVICE, DISPATCH, IRQL_NAMES, PASSIVE
from .kernel import Simulator, StopSimulation, Timer
from .process import Event, SimProcess
from .streams import stream_seed

__all__ = [
    "DEVICE",
    "DISPATCH",
    "IRQL_NAMES",
    "PASSIVE",
    "Event",
    "SimProcess",
    "Simulator",
    "StopSimulation",
    "Timer",
    "stream_seed",
]
