"""Scenario files: TOML descriptions of a simulated machine and its GPU workloads.

:mod:`.units` reads and writes durations and sizes, :mod:`.schema` holds the pydantic models the
simulator consumes, and :mod:`.loader` turns a file into a validated :class:`Scenario` or a
:class:`ScenarioError` listing every problem in it. docs/scenarios.md is the reference.
"""

from .loader import ScenarioError, load_scenario, parse_scenario, scenario_from_dict
from .schema import Scenario
from ..units import format_duration, parse_duration, parse_size

__all__ = [
    "Scenario",
    "ScenarioError",
    "format_duration",
    "load_scenario",
    "parse_duration",
    "parse_scenario",
    "parse_size",
    "scenario_from_dict",
]
