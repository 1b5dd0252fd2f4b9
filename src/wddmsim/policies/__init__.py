"""Scheduling policies for research: the protocol a researcher's policy follows
(:mod:`.protocol`), the host that runs one inside the OS scheduler (:mod:`.host`), loading one by
name (:mod:`.load`), and the shipped reference policies, one file each (``fifo``, ``round_robin``,
``priority``, ``fair``, ``edf``, ``llf``, ``partition``, ``mlfq``). Under hardware scheduling the
GPU's own scheduler takes a policy the same way: :class:`HwPolicy` (:mod:`.hwprotocol`), run by
:mod:`.hwhost`, shipped ``hw_round_robin`` and ``hw_fifo``. docs/policies.md is the guide.

The package stands above the OS (``dxgkrnl``) and the GPU's scheduler interface (``gpu.policy``): it
imports them, and neither imports it (tests/test_architecture.py). Only the protocol is imported here.
"""

from .hwprotocol import HwOs, HwPolicy, HwSchedContext
from .protocol import Duration, Os, Policy, PolicyError, SchedContext, SchedPacket

__all__ = ["Duration", "HwOs", "HwPolicy", "HwSchedContext", "Os", "Policy", "PolicyError", "SchedContext",
           "SchedPacket"]
