"""The names of the public Python API (:mod:`wddmsim.api`, docs/api.md), in one place: the API
module exports them and the package makes them reachable as ``wddmsim.NAME`` without importing the
API until one is used."""

API_NAMES = (
    "BugCheck",
    "ContextSummary",
    "CpuSummary",
    "CrashRecord",
    "DisplaySummary",
    "EventRecord",
    "FairnessSummary",
    "LiveDump",
    "MemorySummary",
    "NodeSummary",
    "ProcessSummary",
    "Result",
    "Scenario",
    "ScenarioError",
    "SegmentSummary",
    "Simulation",
    "Summary",
    "TdrSummary",
    "Violation",
    "load",
    "parse",
    "read_events",
    "run",
    "validate",
)
