"""The reference display miniport driver: the DDI entry points of the packet-scheduling path,
implemented against the GPU model the way a real driver programs real hardware.

Spec: ddi-facts.md sections 1-4, 12; docs/driver.md.
"""

from .driver import ReferenceDriver

__all__ = ["ReferenceDriver"]
