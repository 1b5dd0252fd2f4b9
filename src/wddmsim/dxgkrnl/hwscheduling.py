"""The OS's side of hardware scheduling (WDDM 2.x), :class:`OsHwScheduling`: hardware contexts,
hardware queues with progress fences, and ``DxgkDdiSubmitCommandToHwQueue``. The driver's side is
:mod:`wddmsim.kmd.wddm2`, the GPU's :mod:`wddmsim.gpu.scheduler`.

The GPU (its context-management processor, programmed by the driver) picks what runs; the OS
only feeds queues and retires what the progress fences say is done. A submission's life goes
through three states: ENQUEUED_SW (held by the OS), APPENDED (with the driver) and SIGNALED (its
progress fence reached its value).

This module holds the state of one adapter; each job is a mixin class in a module of its own, which
:class:`OsHwScheduling` combines:

- :mod:`.hws_state`: the records (hardware queues, their entries, nodes, the in-flight cap's line);
- :mod:`.hws_bands`: the priority bands and the contexts' scheduling properties;
- :mod:`.hws_contexts`: hardware contexts and queues, created, suspended and resumed, destroyed;
- :mod:`.hws_submit`: the first two states, submission into the queues and on to the driver;
- :mod:`.hws_retire`: the third state, completion, and the work dropped by a device in error;
- :mod:`.hws_present`: blt presents (``DxgkDdiPresentToHwQueue``, ``DxgkDdiSignalMonitoredFence``).

Timeouts, engine resets and page faults are :mod:`.hwtdr`'s. Decisions where the documentation is
silent are in the modules that make them; docs/scheduling.md has them all.

Spec: Microsoft's reference pages for DxgkDdiSetupPriorityBands, DxgkDdiSetContextSchedulingProperties,
DxgkDdiSuspendContext, DxgkDdiCreateHwQueue and DxgkDdiSubmitCommandToHwQueue; rules 56, 92-95, 100,
103-105 and 122-126 of the rule catalogue (``wddmsim rules N`` prints rule N, docs/rules.md lists
them all).
"""

from __future__ import annotations

from itertools import count

from ..ddi import layout
from ..ddi.ntstatus import NTSTATUS
from ..ddi.registry import RECORDS
from .hwtdr import HwTdr
from .hws_state import (  # noqa: F401  (re-exported: the records' names, once defined here)
    BAND_INDEX,
    BANDS,
    PAGE,
    Entry,
    HwNode,
    HwQueue,
    WaitLine,
)
from .hws_bands import CLASS_BAND, HwBands  # noqa: F401  (CLASS_BAND: re-exported)
from .hws_contexts import HwContexts
from .hws_submit import HwSubmission
from .hws_retire import _KEY, HwRetire  # noqa: F401  (_KEY: re-exported)
from .hws_present import (  # noqa: F401  (re-exported: the presents' names, once defined here)
    KERNEL_SUBMISSION_PRESENTBLT,
    PRESENT_DMA_SIZE,
    PRESENT_PRIVATE_SIZE,
    HwPresents,
)

SUCCESS = int(NTSTATUS.STATUS_SUCCESS)
PENDING = int(NTSTATUS.STATUS_PENDING)
INVALID_PARAMETER = int(NTSTATUS.STATUS_INVALID_PARAMETER)
DEVICE_REMOVED = int(NTSTATUS.STATUS_DEVICE_REMOVED)


class OsHwScheduling(HwBands, HwContexts, HwSubmission, HwRetire, HwPresents):
    """The OS's hardware-scheduling state of one adapter (its jobs' mixins: see the module doc)."""

    def __init__(self, adapter, fences, gpuva, *, bands: dict | None = None):
        self.adapter = adapter
        self.sim = adapter.sim
        self.fences = fences
        self.gpuva = gpuva
        self.trace = adapter.trace
        self.ledger = adapter.ledger
        self.nodes: list[HwNode] = []
        self.queues: list[HwQueue] = []
        self.bands = bands or {}
        self.submissions = 0
        self.completions = 0
        self.last_completion_ns = 0  # when the last buffer completed (the run's makespan)
        self.presents = 0
        self.deferred_submissions = 0  # buffers the OS submitted itself after holding them behind a wait
        #: queues released from an OS-held wait, not yet submitted again: when the signal came (the
        #: interrupt that reported the GPU's write, or the CPU's signal), for the wake-up latency
        self._woken: dict = {}
        self.suspends = 0
        self.resumes = 0
        self._suspend_waits: dict[int, list] = {}  # driver context handle -> [(fence, event, context)]
        self._by_driver_handle: dict[int, object] = {}  # driver context handle -> hardware context
        self._last_suspend: dict[int, int] = {}  # context handle -> last contextSuspendFence issued
        self._live_private: dict[int, tuple] = {}  # special-pool page -> the submission it was handed with
        self._submit_cls = layout.ctype(RECORDS["DXGKARG_SUBMITCOMMANDTOHWQUEUE"], adapter.arch, adapter.version)
        self._args = self._submit_cls()
        self._submit_address = adapter.pool.alloc(PAGE)  # where the arguments live (bug check P3)
        #: ``release(context, va)``: the buffer at ``va`` of the context's command area is free again.
        self.release = None
        self.tdr = HwTdr(self)
        # The model's bookkeeping for retire (not the OS's): queues by progress fence, queues whose
        # oldest buffer in flight is new since the last retire, and a creation counter.
        self._by_progress: dict = {}
        self._new_head: set[HwQueue] = set()
        self._created = 0
        self._tick = count()

    def summary(self) -> dict:
        return {"submissions": self.submissions, "completions": self.completions, "presents": self.presents,
                "suspends": self.suspends, "resumes": self.resumes, "engine_resets": self.tdr.engine_resets,
                "adapter_resets": self.tdr.adapter_resets, "page_faults": self.tdr.page_faults,
                "queues": len(self.queues)}
