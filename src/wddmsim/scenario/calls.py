"""The ``[[call]]`` tables: D3DKMT calls the scenario's processes make while the run goes on.

A call happens at a time and, with ``every``, again and again; it changes a context's priority or a
process's priority class, signals, waits for or destroys a monitored fence, moves a context's work
to another node, steps a GPU in stepped mode, or gives a context new scheduling hints. Each
:class:`Call` checks that it has the fields of its ``api`` and no others; whether the process,
context, fence or node it names exists is checked with the whole scenario (:mod:`.consistency`).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BeforeValidator, Field, model_validator

from ..dxgkrnl.hints import HINTS
from .bounds import MAX_COUNT, MAX_DURATION
from .fields import U64, WHY_COUNT, WHY_FENCE_VALUE, Duration, ScenarioModel, int_in, time_in
from .problems import quoted
from .processes import PROCESS_PRIORITIES, HintTime, Utilization, Weight

__all__ = ["CALL_APIS", "MAX_CALL_OBJECTS", "MOVABLE_WORKLOADS", "Call", "CallApi"]


#: The D3DKMT calls a ``[[call]]`` table may make, and the one call that is the test bench's.
CALL_APIS = (
    "SetContextSchedulingPriority", "SetProcessSchedulingPriorityClass",
    "SignalSynchronizationObjectFromCpu", "WaitForSynchronizationObjectFromCpu", "DestroySynchronizationObject",
    "MoveWork", "StepEngine", "SetSchedulingHints",
)
CallApi = Literal[
    "SetContextSchedulingPriority", "SetProcessSchedulingPriorityClass",
    "SignalSynchronizationObjectFromCpu", "WaitForSynchronizationObjectFromCpu", "DestroySynchronizationObject",
    "MoveWork", "StepEngine", "SetSchedulingHints",
]
def _one_or_list(check):
    """A value written once or as a list of such values, held as a list; ``check(value)`` returns a
    reason when one entry is bad."""
    def validate(value):
        many = isinstance(value, list)
        items = value if many else [value]
        if many and not items:
            raise ValueError("needs at least one entry")
        for i, item in enumerate(items):
            reason = check(item)
            if reason:
                raise ValueError(f"entry {i}: {reason}" if many else reason)
        return items
    return validate


def _priority(value) -> str | None:
    if not isinstance(value, int) or isinstance(value, bool):
        return f"expected an integer -7..7, got {value!r}"
    if not -7 <= value <= 7:
        return f"must be -7..7, got {value}"
    return None


def _class(value) -> str | None:
    if value not in PROCESS_PRIORITIES:
        return f"must be one of {quoted(PROCESS_PRIORITIES)}, got {value!r}"
    return None


def _fence_value(value) -> str | None:
    if not isinstance(value, int) or isinstance(value, bool):
        return f"expected an integer, got {value!r}"
    if not 0 <= value <= (1 << 64) - 1:
        return f"must be 0 .. 2**64-1, got {value}"
    return None


def _fence_name(value) -> str | None:
    if not isinstance(value, str) or not value:
        return f"expected a fence name, got {value!r}"
    return None


_Priorities = Annotated[list[int_in(-7, 7, "what D3DKMTSetContextSchedulingPriority accepts")],
                        BeforeValidator(_one_or_list(_priority))]
_Classes = Annotated[list[str], BeforeValidator(_one_or_list(_class))]
_FenceValues = Annotated[list[int_in(0, U64, WHY_FENCE_VALUE)], BeforeValidator(_one_or_list(_fence_value))]
_FenceNames = Annotated[list[str], BeforeValidator(_one_or_list(_fence_name))]


def _node_name(value) -> str | None:
    if not isinstance(value, str) or not value:
        return f"expected a node name, got {value!r}"
    return None


_NodeNames = Annotated[list[str], BeforeValidator(_one_or_list(_node_name))]

#: Workload kinds whose work a MoveWork call can move (they submit plain packets and wait for
#: their own packets only).
MOVABLE_WORKLOADS = ("compute_batch", "bursty", "script")
#: D3DDDI_MAX_OBJECT_SIGNALED and D3DDDI_MAX_OBJECT_WAITED_ON
MAX_CALL_OBJECTS = 32


class Call(ScenarioModel):
    """A call a process makes through the D3DKMT API while the run goes on, at ``at`` and, with
    ``every``, again every ``every`` (or a time drawn evenly between ``every`` and ``every_max``
    from the run's seed) up to ``count`` calls (unset: one call, or until the run ends with
    ``every``).

    - ``SetContextSchedulingPriority``: ``process``, ``context``, ``priority`` (-7..7, or a list
      the calls take in turn);
    - ``SetProcessSchedulingPriorityClass``: ``process``, ``priority_class`` (a class name, or a
      list the calls take in turn);
    - ``SignalSynchronizationObjectFromCpu``: ``process`` signals ``fence`` (a name or up to 32
      names) to ``value`` (one per fence); each repeat adds ``step`` to every value; ``rewind``
      sets AllowFenceRewind;
    - ``WaitForSynchronizationObjectFromCpu``: a thread of ``process`` waits until ``fence``
      reaches ``value`` (every fence, or with ``wait_any`` one of them), at most ``timeout``;
      each repeat adds ``step``;
    - ``DestroySynchronizationObject``: ``process`` destroys ``fence`` (one name); its pending waiters
      return STATUS_INVALID_HANDLE;
    - ``MoveWork``: ``process`` moves the work of ``context`` to ``node`` (a name, or a list the
      calls take in turn). A context stays on the node it was created on, so this is what an
      application does: D3DKMTCreateContext on that node the first time, and its next packets go
      there once the previous context retired its last one;
    - ``StepEngine``: not a D3DKMT call but the test bench's hand on a GPU in stepped mode
      (``adapter.engine_mode = "stepped"``): ``node``'s engine runs through ``steps`` more
      submissions;
    - ``SetSchedulingHints``: not a D3DKMT call but the model's extension for research policies
      (docs/policies.md): ``process`` gives ``context`` new hints, any of ``weight``, ``period``,
      ``deadline``, ``utilization``; the others keep their values.
    """

    api: CallApi
    at: Duration = 0
    process: str | None = Field(default=None, min_length=1)
    context: str | None = Field(default=None, min_length=1)
    priority: _Priorities | None = None
    priority_class: _Classes | None = None
    fence: _FenceNames | None = None
    value: _FenceValues | None = None
    step: int_in(0, U64, "added to the values at each repeat: a 64-bit number") = 1
    #: SignalSynchronizationObjectFromCpu: D3DDDICB_SIGNALFLAGS.AllowFenceRewind (a value below the
    #: fence's current one moves it back instead of being refused)
    rewind: bool = False
    timeout: Duration | None = None
    wait_any: bool = False
    node: _NodeNames | None = None
    steps: int_in(1, 1_000_000, "the model's limit on one StepEngine call") = 1
    every: time_in(1_000, MAX_DURATION, "a D3DKMT call from user mode costs microseconds; the longest run is "
                                      "1 hour") | None = None
    every_max: Duration | None = None
    count: int_in(1, MAX_COUNT, WHY_COUNT) | None = None
    #: SetSchedulingHints: the hints it sets (those left out keep their values)
    weight: Weight | None = None
    period: HintTime | None = None
    deadline: HintTime | None = None
    utilization: Utilization | None = None

    def fences(self) -> list[str]:
        return list(self.fence or ())

    def values(self) -> list[int]:
        return list(self.value or ())

    @model_validator(mode="after")
    def _fields_of_api(self) -> Call:
        api = self.api
        uses = {
            "SetContextSchedulingPriority": {"process", "context", "priority"},
            "SetProcessSchedulingPriorityClass": {"process", "priority_class"},
            "SignalSynchronizationObjectFromCpu": {"process", "fence", "value", "step", "rewind"},
            "WaitForSynchronizationObjectFromCpu": {"process", "fence", "value", "step", "timeout", "wait_any"},
            "DestroySynchronizationObject": {"process", "fence"},
            "MoveWork": {"process", "context", "node"},
            "StepEngine": {"node", "steps"},
            "SetSchedulingHints": {"process", "context", "weight", "period", "deadline", "utilization"},
        }[api]
        defaults = {"step": 1, "wait_any": False, "steps": 1, "rewind": False}
        for key in ("process", "context", "priority", "priority_class", "fence", "value", "step", "rewind",
                    "timeout", "wait_any", "node", "steps", "weight", "period", "deadline", "utilization"):
            have = getattr(self, key)
            if key not in uses and have is not None and have != defaults.get(key):
                raise ValueError(f"{key} is not a field of a {api} call")
        missing = [k for k in sorted(uses - {"step", "rewind", "timeout", "wait_any", "steps", *HINTS})
                   if getattr(self, k) is None]
        if api == "SetSchedulingHints" and all(getattr(self, k) is None for k in HINTS):
            raise ValueError(f"a SetSchedulingHints call needs at least one of {', '.join(HINTS)}")
        if missing:
            raise ValueError(f"a {api} call needs {', '.join(missing)}")
        if api == "StepEngine" and len(self.node) != 1:
            raise ValueError("a StepEngine call names one node")
        if api == "DestroySynchronizationObject":
            if len(self.fence) != 1:
                raise ValueError("a DestroySynchronizationObject call names one fence")
        elif self.fence is not None:
            names, values = self.fences(), self.values()
            if not 1 <= len(names) <= MAX_CALL_OBJECTS:
                raise ValueError(f"fence names 1 to {MAX_CALL_OBJECTS} objects (D3DDDI_MAX_OBJECT_SIGNALED, "
                                 f"D3DDDI_MAX_OBJECT_WAITED_ON), got {len(names)}")
            if len(values) != len(names):
                raise ValueError(f"value needs one entry per fence: {len(names)} fence(s), {len(values)} value(s)")
        if self.every_max is not None:
            if self.every is None:
                raise ValueError("every_max needs every (the shortest gap)")
            if self.every_max < self.every:
                raise ValueError(f"every_max ({self.every_max} ns) is below every ({self.every} ns)")
        if self.count is not None and self.count > 1 and self.every is None:
            raise ValueError("count above 1 needs every (the gap between calls)")
        return self
