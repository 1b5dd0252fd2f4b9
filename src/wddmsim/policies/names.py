"""The names a scenario's ``[scheduler] policy`` may take: a shipped policy by its short name, or a
researcher's class as ``"package.module:Class"`` / ``"path/to/file.py:Class"``.

This module knows names only (the scenario schema checks a name with it before anything is
loaded); :mod:`wddmsim.policies.load` turns a name into a class.
"""

from __future__ import annotations

#: Shipped policies: short name -> (module under ``wddmsim.policies``, class, one line on what it does).
#: ``windows`` and ``priority_quantum`` are the OS's own policy (``dxgkrnl/policy.py``), the
#: default; ``strict_priority`` is its strict sibling. The rest run behind the research protocol
#: (:mod:`wddmsim.policies.protocol`), each one file a researcher can copy.
SHIPPED: dict[str, tuple[str, str, str]] = {
    "windows": ("builtin", "PriorityQuantum", "Windows-like: priority, round robin by quantum, starvation boost"),
    "priority_quantum": ("builtin", "PriorityQuantum", "the same as windows (its older name)"),
    "strict_priority": ("builtin", "StrictPriority", "the OS's strict priority, packet by packet within a priority"),
    "fifo": ("fifo", "Fifo", "arrival order of packets, whoever queued first (drm_sched's default)"),
    "round_robin": ("round_robin", "RoundRobin", "ready contexts take turns, one packet each"),
    "priority": ("priority", "Priority", "strict priority, highest effective priority first, FIFO within one"),
    "fair": ("fair", "FairShare", "weighted fair share by virtual GPU runtime (CFS-like)"),
    "edf": ("edf", "Edf", "earliest deadline first, preempting at the granularity the driver has"),
    "llf": ("llf", "LeastLaxity", "least laxity first: deadline minus the work it still needs"),
    "partition": ("partition", "UtilizationPartition", "each context capped at its utilization hint"),
    "mlfq": ("mlfq", "Mlfq", "multilevel feedback queue: heavy users sink, a periodic boost lifts all"),
}


def is_class_spec(name: str) -> bool:
    """``name`` names a class (``module:Class`` or ``file.py:Class``) rather than a shipped policy."""
    return ":" in name


def check_policy_name(name: str) -> str | None:
    """Why ``name`` cannot be a policy's name, or None when it can (a class name is checked for
    its shape only: whether it loads is known when the run is built)."""
    if name in SHIPPED:
        return None
    if is_class_spec(name):
        where, _, cls = name.rpartition(":")
        if where and cls.isidentifier():
            return None
        return f"{name!r}: expected 'package.module:Class' or 'path/to/file.py:Class'"
    return (f"unknown scheduling policy {name!r}; the shipped ones are {', '.join(SHIPPED)}, "
            "or name a class as 'path/to/file.py:Class'")
