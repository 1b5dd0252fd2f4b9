"""Scheduling policies for research: the protocol a researcher's policy follows
(:mod:`.protocol`), the host that runs one inside the OS scheduler (:mod:`.host`), loading one by
name (:mod:`.load`), and the shipped reference policies, one file each (``fifo``, ``round_robin``,
``priority``, ``fair``, ``edf``, ``llf``, ``partition``, ``mlfq``). docs/policies.md is the guide.

The package stands above the OS (``dxgkrnl``): it imports the OS's scheduler interface and errors,
and the OS never imports it (tests/test_import_rule.py). Only the protocol is imported here.
"""

from .protocol import Duration, Os, Policy, PolicyError, SchedContext, SchedPacket

__all__ = ["Duration", "Os", "Policy", "PolicyError", "SchedContext", "SchedPacket"]
