"""The shape of a scenario: pydantic models for every table a scenario file may contain.

A scenario describes one simulated machine and what runs on it: the adapter (DDI version, engines
as nodes, memory segments, CPU costs of the driver's callbacks), the OS scheduler's policy, and the
processes with their GPU contexts, each driven by a workload generator. The field names here are
the TOML keys, one for one, and the simulator reads these models directly.

This module holds the whole file's table, :class:`Scenario`, and the ``[driver]`` table; the other
tables live in one module each, and every name is importable from here as well:

* :mod:`.adapter`: the GPU (nodes, segments, displays) and the OS's settings for it, hardware
  scheduling's priority bands among them;
* :mod:`.scheduler`: the ``[scheduler]`` table, the OS's scheduling policy and its settings;
* :mod:`.processes`: processes, their GPU contexts and the monitored fences they share;
* :mod:`.workloads`: what a context submits;
* :mod:`.calls`: D3DKMT calls made while the run goes on;
* :mod:`.faults`: injected faults and timeout detection and recovery;
* :mod:`.display`: the desktop compositor;
* :mod:`.consistency`: the checks that need more than one table, and the values the run takes
  otherwise than written;
* :mod:`.problems`: where a problem sits (:func:`field_path`) and how several travel as one error.

Three layers of checking happen:

* per field: types (strict, so ``"5"`` is not an integer), ranges, enumerations, and the unit
  syntax of durations and sizes (:mod:`wddmsim.util.units`), which arrive as ``int``
  nanoseconds and bytes;
* per adapter: names that must be unique and the node and segment kinds an adapter must have;
* per scenario, once every field is valid: contexts naming nodes that exist and names that must
  be unique among processes and among a process's contexts.

The tables are built from :mod:`.fields` (the base model and the kinds of value, each with its
range from :mod:`.bounds`). Once the scenario is consistent,
:func:`~.consistency.scenario_clamps` cuts what it takes otherwise than written, each with a
warning (:attr:`Scenario.warnings`).

The two cross-field layers report every problem they find in one pydantic error of type
:data:`CONFLICT_ERROR`, whose context carries the individual problems with their own field
locations; :mod:`wddmsim.scenario.loader` unpacks them into one message each.

A scenario's ``duration`` (the run's length) written as a bare number in a file or on the command
line is refused (:func:`wddmsim.util.units.parse_run_length`): ``duration = 5`` would be a run of
5 ns. docs/scenarios.md is the reference.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, PrivateAttr, model_validator

from ..util.units import parse_run_length
# The tables of the other modules, and the names their checks share, are imported here so that every
# name this module held before they moved stays importable from it (``__all__`` lists those it listed).
from .adapter import (DDI_VERSION_NAMES, ENGINES, AdapterTable, BandTime, Bands, BandTimes, CpuCostTable, EngineKind,
                      Node, Segment)
from .bounds import RUN_DURATION
from .calls import CALL_APIS, MAX_CALL_OBJECTS, MOVABLE_WORKLOADS, Call, CallApi
from .consistency import cross_field_problems, scenario_clamps
from .display import Compositor, CompositorUpdate
from .faults import FAULTABLE_DDIS, Fault, Tdr
from .fields import U64, WHY_CALLS, Duration, Location, ScenarioModel, Size, entries_in, int_in, ns
from .problems import CONFLICT_ERROR, UNKNOWN_SETTING, conflicts, field_path, quoted
from .processes import (PRIVILEGED_BANDS, PRIVILEGED_CLASSES, PROCESS_PRIORITIES, BudgetChange, Context, FenceSpec,
                        HintTime, ProcessPriority, ProcessTable, Utilization, Weight)
from .scheduler import Scheduler
from .workloads import (WORKLOAD_KINDS, Bursty, ComputeBatch, CopyStream, FrameLoop, Script, ScriptPacket, SwapChain,
                        SwapFrame, Workload)

__all__ = [
    "CALL_APIS",
    "CONFLICT_ERROR",
    "DDI_VERSION_NAMES",
    "ENGINES",
    "PROCESS_PRIORITIES",
    "WORKLOAD_KINDS",
    "AdapterTable",
    "Bursty",
    "Call",
    "ComputeBatch",
    "Context",
    "CopyStream",
    "CpuCostTable",
    "Duration",
    "FrameLoop",
    "Location",
    "Node",
    "ProcessTable",
    "Scenario",
    "Scheduler",
    "Script",
    "ScriptPacket",
    "Segment",
    "Size",
    "SwapChain",
    "SwapFrame",
    "Compositor",
    "Workload",
    "cross_field_problems",
    "field_path",
]

class Driver(BaseModel):
    """The ``[driver]`` table: which driver drives the adapter (``class``: ``"package.module:Class"``
    or ``"path/to/file.py:Class"``; default the reference driver) and its settings, every other key,
    which the driver's own ``Settings`` model validates when the run is built. ``driver =
    "mypkg.mod:MyDriver"`` (a string) names the class with no settings."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    class_: str | None = Field(default=None, alias="class", min_length=1)

    @property
    def settings(self) -> dict:
        """Every key but ``class``: the driver's settings table."""
        return dict(self.model_extra or {})


def _driver_table(value):
    if isinstance(value, str):
        return {"class": value}
    return value


class Scenario(ScenarioModel):
    """A whole scenario file."""

    #: shown in reports; the loader uses the file's stem when this is empty
    name: str = ""
    description: str = ""
    #: seed of every random choice in the run (jitter, gaps), so runs repeat exactly
    seed: int_in(0, U64, "a seed is a 64-bit unsigned number") = 0
    #: virtual time to simulate
    duration: Annotated[int, BeforeValidator(parse_run_length), RUN_DURATION] = ns("1s")
    adapter: AdapterTable = Field(default_factory=AdapterTable)
    #: the driver and its settings (the reference driver with its defaults when absent)
    driver: Annotated[Driver, BeforeValidator(_driver_table)] = Field(default_factory=Driver)
    scheduler: Scheduler = Field(default_factory=Scheduler)
    tdr: Tdr = Field(default_factory=Tdr)
    fault: Annotated[list[Fault], entries_in(0, 1000, "the model's limit on injected faults")] = Field(default_factory=list)
    #: monitored fences shared by the processes (chain workloads name them)
    fence: Annotated[list[FenceSpec], entries_in(0, 1024, "the model's limit on shared fences")] = Field(
        default_factory=list)
    process: Annotated[list[ProcessTable], entries_in(1, 1024, "the model's limit on processes")]
    #: D3DKMT calls the processes make while the run goes on
    call: Annotated[list[Call], entries_in(0, 10_000, WHY_CALLS)] = Field(default_factory=list)
    #: the desktop compositor, one table per display it composes
    compositor: Annotated[list[Compositor], entries_in(0, 16, "one compositor per display, and an adapter has at most 16")] = Field(
        default_factory=list)

    #: warnings of the values taken otherwise than written, with their locations
    _clamps: list = PrivateAttr(default_factory=list)
    #: what names the scenario in a warning (the loader's source, with its --set options)
    _source: str = PrivateAttr(default="<scenario>")

    @model_validator(mode="after")
    def _consistent(self) -> Scenario:
        problems = cross_field_problems(self)
        if problems:
            raise conflicts(problems)
        notes = scenario_clamps(self)
        if notes:  # a later assignment validates again: keep what the first validation cut
            earlier = getattr(self, "__pydantic_private__", None) or {}
            kept = list(earlier.get("_clamps") or ())
            self._clamps = kept + [note for note in notes if note not in kept]
        return self

    def __eq__(self, other: object) -> bool:
        # Two scenarios with the same values are equal, whatever names them in warnings.
        if not isinstance(other, BaseModel):
            return NotImplemented
        return type(self) is type(other) and self.__dict__ == other.__dict__

    __hash__ = None  # type: ignore[assignment]

    @property
    def warnings(self) -> list[str]:
        """The values the run takes otherwise than written or that cannot have their effect (a
        ``repeat`` cut to what fits, a fault after the end of the run), one line each:
        ``FILE: field.path: what happens``. Empty for most scenarios."""
        return [f"{self._source}: {field_path(loc)}: {msg}" for loc, msg in self._clamps]
