"""The names a scenario's ``[scheduler] policy`` may take: a shipped policy by its short name, or a
researcher's class as ``"package.module:Class"`` / ``"path/to/file.py:Class"``.

A name resolves per scheduling mode: under software scheduling it names a policy of the OS's
scheduler (:data:`SHIPPED`), under hardware scheduling one of the GPU's own scheduler
(:data:`SHIPPED_GPU`); :func:`mode_problem` says when a shipped name has no policy in the mode.

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


#: Shipped policies of the GPU's own scheduler, for hardware scheduling (``[adapter] scheduling =
#: "hardware"``): short name -> (module under ``wddmsim.policies``, class, one line). ``windows``
#: (and ``priority_quantum``) is the firmware's band policy (``gpu/policy.py``, ``BandPolicy``),
#: the default; the rest run behind the GPU-side protocol (:mod:`wddmsim.policies.hwprotocol`).
#: A name in both tables names a different policy in each mode.
SHIPPED_GPU: dict[str, tuple[str, str, str]] = {
    "windows": ("builtin", "BandPolicy", "the band rules Windows programs: bands, priorities, quanta, grace "
                                         "periods, the NORMAL share"),
    "priority_quantum": ("builtin", "BandPolicy", "the same as windows (its older name)"),
    "round_robin": ("hw_round_robin", "RoundRobin", "runnable contexts take the engine in turn for a slice, "
                                                    "ignoring bands"),
    "fifo": ("hw_fifo", "Fifo", "the context runnable longest runs until it has nothing runnable, never preempted"),
}


def mode_problem(name: str, hardware: bool, cls_name: str | None = None) -> str | None:
    """Why the shipped policy ``name`` cannot schedule in this mode (``hardware``: the GPU's
    scheduler decides), or None. A class is checked when it is loaded: then ``cls_name`` is the
    class of the other mode's protocol that ``name`` loaded."""
    if cls_name is None and (is_class_spec(name) or name in (SHIPPED_GPU if hardware else SHIPPED)):
        return None
    if hardware:
        what = f" ({cls_name} is a wddmsim.policies.Policy)" if cls_name else ""
        return (f"policy {name} schedules the OS's software queues{what}; under hardware scheduling name a GPU "
                f"policy: {', '.join(SHIPPED_GPU)} (wddmsim policies), or a wddmsim.policies.HwPolicy class")
    what = f" ({cls_name} is a wddmsim.policies.HwPolicy)" if cls_name else ""
    return (f"policy {name} schedules the GPU's hardware contexts{what}; under software scheduling name an OS "
            f"policy: {', '.join(SHIPPED)} (wddmsim policies), or a wddmsim.policies.Policy class")


def is_class_spec(name: str) -> bool:
    """``name`` names a class (``module:Class`` or ``file.py:Class``) rather than a shipped policy."""
    return ":" in name


def check_policy_name(name: str) -> str | None:
    """Why ``name`` cannot be a policy's name, or None when it can (a class name is checked for
    its shape only: whether it loads is known when the run is built)."""
    if name in SHIPPED or name in SHIPPED_GPU:
        return None
    if is_class_spec(name):
        where, _, cls = name.rpartition(":")
        if where and cls.isidentifier():
            return None
        return f"{name!r}: expected 'package.module:Class' or 'path/to/file.py:Class'"
    shipped = [*SHIPPED, *(n for n in SHIPPED_GPU if n not in SHIPPED)]
    return (f"unknown scheduling policy {name!r}; the shipped ones are {', '.join(shipped)}, "
            "or name a class as 'path/to/file.py:Class'")
