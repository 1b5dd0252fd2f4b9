"""Scenario files: TOML descriptions of a simulated machine and its GPU workloads.

:mod:`wddmsim.util.units` reads and writes durations and sizes, :mod:`.schema` holds the pydantic models the
simulator consumes (each kind of table in a module of its own: :mod:`.adapter`, :mod:`.scheduler`,
:mod:`.processes`, :mod:`.workloads`, :mod:`.calls`, :mod:`.faults`, :mod:`.display`, with the checks
across tables in :mod:`.consistency`; the kinds of value in :mod:`.fields`, the range of each and its
reason in :mod:`.bounds`), and :mod:`.loader` turns a file into a validated :class:`Scenario` or a
:class:`ScenarioError` listing every problem in it; :mod:`.overrides` makes ``--set PATH=VALUE``
assignments on a file's data before validation. docs/scenarios.md is the reference.
"""

from .loader import ScenarioError, load_scenario, parse_scenario, read_scenario_data, resolve_driver_path, scenario_from_dict
from .overrides import Override, OverrideError, parse_override
from .schema import Scenario
from ..util.units import format_duration, parse_duration, parse_size

__all__ = [
    "Override",
    "OverrideError",
    "Scenario",
    "ScenarioError",
    "format_duration",
    "load_scenario",
    "parse_duration",
    "parse_override",
    "parse_scenario",
    "parse_size",
    "read_scenario_data",
    "resolve_driver_path",
    "scenario_from_dict",
]
