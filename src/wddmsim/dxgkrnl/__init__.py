"""The OS model: handles and objects, the D3DKMT-style API, VidSch (queues, policy, fence ids,
submission, completion), the callbacks drivers call, the verifier, bug checks and crash records.

It reaches a driver only through the DDI (``wddmsim.ddi.interface``) and never imports the
reference driver or the GPU model.

Spec: Microsoft's WDDM display-driver documentation (learn.microsoft.com/windows-hardware/drivers/display
and the d3dkmddi reference pages); the rules are listed by ``wddmsim rules``.
"""

from .adapter import Adapter, ApiError, CpuCost
from .crash import BugCheckStop, CrashRecord
from .kmt import D3DKMT
from .policy import PriorityQuantum, StrictPriority, make_policy
from .verifier import Verifier

__all__ = [
    "D3DKMT",
    "Adapter",
    "ApiError",
    "BugCheckStop",
    "CpuCost",
    "CrashRecord",
    "PriorityQuantum",
    "StrictPriority",
    "Verifier",
    "make_policy",
]
