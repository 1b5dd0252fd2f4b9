"""The reference display miniport driver: the DDI entry points of the packet-scheduling path,
implemented against the GPU model the way a real driver programs real hardware.

Spec: docs/driver.md, and Microsoft's reference page of each entry point.
"""

from .driver import ReferenceDriver

__all__ = ["ReferenceDriver"]
