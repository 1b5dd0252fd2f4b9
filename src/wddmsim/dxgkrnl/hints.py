"""Scheduling hints: what an application tells the GPU scheduler beyond WDDM's priorities.

A model extension, not a Windows API: WDDM gives an application priorities only
(D3DKMTSetContextSchedulingPriority, D3DKMTSetProcessSchedulingPriorityClass). Research schedulers
take more (XSched's hints, a real-time task's period and deadline), so the model lets a scenario's
context table and a ``SetSchedulingHints`` call set them. The OS's own policies ignore them; a
research policy reads them (:mod:`wddmsim.policies.protocol`), and the summary measures deadline
misses and shares against them.
"""

from __future__ import annotations

#: The hints, by name: a context table's keys and a SetSchedulingHints call's.
HINTS = ("weight", "period", "deadline", "utilization")


class SchedulingHints:
    """One context's hints: ``weight`` (its share against the node's other contexts, default 1),
    ``period`` (ns between its jobs), ``deadline`` (ns after a job's release by which it should
    finish; unset with a period: the period) and ``utilization`` (the most of its node's GPU time
    it may take). None where not given."""

    __slots__ = ("weight", "period", "deadline", "utilization")

    def __init__(self, weight: float = 1.0, period: int | None = None, deadline: int | None = None,
                 utilization: float | None = None):
        self.weight = weight
        self.period = period
        self.deadline = deadline
        self.utilization = utilization

    @property
    def relative_deadline(self) -> int | None:
        """The deadline a job has from its release: ``deadline``, else ``period``, else None."""
        return self.deadline if self.deadline is not None else self.period

    def copy(self) -> SchedulingHints:
        return SchedulingHints(self.weight, self.period, self.deadline, self.utilization)

    def as_dict(self) -> dict:
        return {"weight": self.weight, "period": self.period, "deadline": self.deadline,
                "utilization": self.utilization}


DEFAULT = SchedulingHints()
