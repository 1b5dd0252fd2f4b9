"""Drivers the fence cases catch: completed fences reported out of order."""

from __future__ import annotations

from wddmsim.kmd import ReferenceDriver

from . import VIDSCH, breaks


@breaks(33, "fences", stop=(VIDSCH, 0x1))
class RepeatsThePreviousFence(ReferenceDriver):
    """After reporting a node's newest completed fence it reports the one before it as well (it walks
    its completion list in the wrong direction): reported completed fences go backwards."""

    def _report_completed(self, node):
        reported = super()._report_completed(node)
        value = node.last_reported
        if reported and value >= 2:
            data = node.interrupt_data
            data.DmaCompleted.SubmissionFenceId = value - 1
            self.dxgk.DxgkCbNotifyInterrupt(self.dxgk.DeviceHandle, data)
        return reported
