"""Scheduling policies for research: the protocol a researcher's policy follows
(:mod:`.protocol`), the host that runs one inside the OS scheduler (:mod:`.host`), loading one by
name (:mod:`.load`), and the shipped reference policies, one file each (``fifo``, ``round_robin``,
``priority``, ``fair``, ``edf``, ``llf``, ``partition``, ``mlfq``). docs/policies.md is the guide.

Only the protocol is imported here, so that the OS's objects may name it without importing the
scheduler back.
"""

from .protocol import Os, Policy, PolicyError, SchedContext, SchedPacket

__all__ = ["Os", "Policy", "PolicyError", "SchedContext", "SchedPacket"]
