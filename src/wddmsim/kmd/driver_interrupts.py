"""The reference driver's interrupt path: ``DxgkDdiInterruptRoutine`` and ``DxgkDdiDpcRoutine``,
the ISR's reports of the engines' fences and faults, and ``DxgkDdiQueryCurrentFence`` (a mixin of
:class:`~wddmsim.kmd.driver.ReferenceDriver`).

- ``DxgkDdiInterruptRoutine``: returns FALSE if the GPU did not interrupt; otherwise dismisses the
  causes, reads each interrupting node's fence slot and reports a newer fence with
  ``DXGK_INTERRUPT_DMA_COMPLETED``, then queues its DPC. A node that interrupted without its fence
  moving had a buffer write a monitored fence: from WDDM 2.2, with GPU virtual addresses in use,
  that is ``MONITORED_FENCE_SIGNALED`` (kmd/wddm2.py). An engine's preemption cause is answered
  with ``DMA_PREEMPTED`` (kmd/driver_preemption.py), a source's vsync with ``CRTC_VSYNC``
  (kmd/driver_display.py); under hardware scheduling each node's causes are kmd/wddm2.py's.
- ``DxgkDdiDpcRoutine``: ``DxgkCbNotifyDpc``.
- Page faults (WDDM 2.0 and later): when an engine stops on a fault the ISR reports
  ``DXGK_INTERRUPT_DMA_PAGE_FAULTED`` with the fence of the submission that was executing (or 0 and
  ``FENCE_INVALID`` when none was), ``ENGINE_RESET_REQUIRED`` (``ADAPTER_RESET_REQUIRED`` without
  per-engine reset), ``FATAL_HARDWARE_ERROR`` when the hardware says so, the faulting address and
  a general ``PAGE_FAULT`` error code. Older drivers cannot report it; the OS's timeout finds them.
- ``DxgkDdiQueryCurrentFence``: reports any newer completed fence through ``DxgkCbNotifyInterrupt``
  (inside ``DxgkCbSynchronizeExecution``) before returning it.

Spec: Microsoft's reference pages of DxgkDdiInterruptRoutine, DxgkDdiDpcRoutine,
DXGKARGCB_NOTIFY_INTERRUPT_DATA and DxgkDdiQueryCurrentFence, and its "Threading and
synchronization model of display miniport driver" page; docs/driver.md (section 6).
"""

from __future__ import annotations

import ctypes

from ..ddi.enums import DXGK_INTERRUPT_TYPE
from ..ddi.fenceid import after
from ..ddi.ntstatus import NTSTATUS
from ..gpu.mmio import FAULT_BIT, PREEMPT_SHIFT, UNKNOWN_BIT
from .driver_submission import _Node

SUCCESS = int(NTSTATUS.STATUS_SUCCESS)
_DMA_COMPLETED = int(DXGK_INTERRUPT_TYPE.DXGK_INTERRUPT_DMA_COMPLETED)
_DMA_PAGE_FAULTED = int(DXGK_INTERRUPT_TYPE.DXGK_INTERRUPT_DMA_PAGE_FAULTED)
_FENCE_INVALID = 0x2
_ADAPTER_RESET_REQUIRED = 0x4
_ENGINE_RESET_REQUIRED = 0x8
_FATAL_HARDWARE_ERROR = 0x10
#: "unknown" values of the page-fault arm (d3dkmddi.h, WDDM 2.0)
PRIMITIVE_API_SEQUENCE_NUMBER_UNKNOWN = 0xFFFF_FFFF_FFFF_FFFF
BIND_TABLE_ENTRY_UNKNOWN = 0xFFFF_FFFF


class InterruptDdi:
    """Mixin of :class:`~wddmsim.kmd.driver.ReferenceDriver`: the ISR, the DPC and the reports of
    the engines' fences and faults (see the module doc)."""

    # state set up by ReferenceDriver.__init__: hw (the GPU's register interface), dxgk (the OS's
    # callbacks), nodes, multi_engine_aware, per_engine_reset, hw_scheduling, roots, faults_seen,
    # unknown_causes, _can_report_faults, _fence_interrupt

    def DxgkDdiInterruptRoutine(self, MiniportDeviceContext: int, MessageNumber: int) -> bool:
        """FALSE if the GPU did not interrupt; else dismiss, report fences, queue the DPC."""
        hw = self.hw
        status = hw.irq_status()
        if not status:
            return False
        hw.irq_ack(status)
        if self.hw_scheduling:
            for node in self.nodes:
                self._hw_isr(status, node)
                if self._native_shift:
                    self._native_isr(status, node)
            if status & FAULT_BIT:
                self.faults_seen += 1
            if status & UNKNOWN_BIT:
                self.unknown_causes += 1
            self._report_vsyncs(status)
            self.dxgk.DxgkCbQueueDpc(self.dxgk.DeviceHandle)
            return True
        for node in self.nodes:
            if status & (1 << node.ordinal) and not self._report_completed(node) and self.roots \
                    and self._fence_interrupt:
                # The node's fence did not move: a buffer wrote a monitored fence with interrupt.
                self._report_monitored_fence(node)
        if status >> PREEMPT_SHIFT:
            for node in self.nodes:
                if status & (1 << (PREEMPT_SHIFT + node.ordinal)):
                    self._report_preempted(node)
        self._report_vsyncs(status)
        if status & UNKNOWN_BIT:
            self.unknown_causes += 1
        if status & FAULT_BIT:
            self.faults_seen += 1
            if self._can_report_faults:
                for node in self.nodes:
                    if hw.fault(node.ordinal) is not None:
                        # A fault record is latched: report it, then release the latch.
                        self._report_page_fault(node)
                        hw.fault_ack(node.ordinal)
        self.dxgk.DxgkCbQueueDpc(self.dxgk.DeviceHandle)
        return True

    def DxgkDdiDpcRoutine(self, MiniportDeviceContext: int) -> None:
        """Tell the scheduler to process what the ISR reported."""
        self.dxgk.DxgkCbNotifyDpc(self.dxgk.DeviceHandle)

    def _report_completed(self, node: _Node) -> bool:
        """Report the node's fence slot if it moved since the last report (device IRQL)."""
        value = self._completed(node)
        if value == node.last_reported:
            return False
        node.last_reported = value
        inflight = node.inflight
        while inflight and not after(inflight[0][0], value):
            inflight.popleft()
        data = node.interrupt_data
        data.InterruptType = _DMA_COMPLETED
        dc = data.DmaCompleted  # (each read of a ctypes member structure makes a new view)
        dc.SubmissionFenceId = value
        dc.NodeOrdinal = node.ordinal
        dc.EngineOrdinal = 0
        self.dxgk.DxgkCbNotifyInterrupt(self.dxgk.DeviceHandle, data)
        return True

    def _report_page_fault(self, node: _Node) -> None:
        """DMA_PAGE_FAULTED for the fault record the node's engine latched (device IRQL)."""
        fault = self.hw.fault(node.ordinal)
        done = self._completed(node)
        inflight = node.inflight
        while inflight and not after(inflight[0][0], done):
            inflight.popleft()
        flags = _ENGINE_RESET_REQUIRED if self.per_engine_reset else _ADAPTER_RESET_REQUIRED
        if not inflight:
            flags |= _FENCE_INVALID
        if fault.fatal:
            flags |= _FATAL_HARDWARE_ERROR
        data = node.interrupt_data
        ctypes.memset(ctypes.addressof(data), 0, ctypes.sizeof(data))
        data.InterruptType = _DMA_PAGE_FAULTED
        pf = data.DmaPageFaulted
        pf.FaultedFenceId = inflight[0][0] if inflight else 0
        pf.FaultedPrimitiveAPISequenceNumber = PRIMITIVE_API_SEQUENCE_NUMBER_UNKNOWN
        pf.FaultedPipelineStage = 0  # DXGK_RENDER_PIPELINE_STAGE_UNKNOWN
        pf.FaultedBindTableEntry = BIND_TABLE_ENTRY_UNKNOWN
        pf.PageFaultFlags = flags
        pf.FaultedVirtualAddress = fault.address
        pf.NodeOrdinal = node.ordinal
        pf.EngineOrdinal = 0
        pf.FaultErrorCode.IsDeviceSpecificCode = 0
        pf.FaultErrorCode.GeneralErrorCode = 0  # DXGK_GENERAL_ERROR_PAGE_FAULT
        self.dxgk.DxgkCbNotifyInterrupt(self.dxgk.DeviceHandle, data)

    def DxgkDdiQueryCurrentFence(self, hAdapter: int, pCurrentFence) -> int:
        """The node's last completed fence, reported first through NotifyInterrupt if it is new."""
        ordinal = pCurrentFence.NodeOrdinal if self.multi_engine_aware else 0
        if not 0 <= ordinal < len(self.nodes):
            return int(NTSTATUS.STATUS_INVALID_PARAMETER)
        node = self.nodes[ordinal]
        self.dxgk.DxgkCbSynchronizeExecution(self.dxgk.DeviceHandle, self._report_completed, node, 0)
        pCurrentFence.CurrentFence = node.last_reported
        return SUCCESS
