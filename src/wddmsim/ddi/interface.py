"""The two sides of the DDI as Python protocols: the entry points a display miniport driver
implements (``DxgkDdi*``) and the callbacks the OS hands it at start (``DxgkCb*``), plus the
members of ``DXGK_DRIVERCAPS`` the model reads.

Calls carry the real ``DXGKARG_*`` ctypes structures; pointers inside them are addresses in the
simulated system memory and handles are numbers. A driver is any object with these methods; the
OS calls only the entry points and never looks inside the driver, and the driver reaches the OS
only through the :class:`DxgkrnlInterface` it was given.

Spec: DESIGN.md section 2; ddi-facts.md sections 1, 2.1, 2.7, 2.8, 3.2, 3.3, 4.1, 4.5, 8.1, 12.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Protocol, runtime_checkable


@dataclass
class DriverCaps:
    """The members of ``DXGK_DRIVERCAPS`` the model reads, by their DDI names.

    ``SchedulingCaps`` is the ``DXGK_VIDSCHCAPS`` bit field value (``MultiEngineAware`` is bit 0);
    ``NbAsymetricProcessingNodes`` is ``GpuEngineTopology.NbAsymetricProcessingNodes``;
    ``WDDMVersion`` is the driver's ``DXGKDDI_INTERFACE_VERSION`` value.
    """

    WDDMVersion: int
    SchedulingCaps: int
    NbAsymetricProcessingNodes: int = 1
    InterruptMessageNumber: int = 0
    MaxQueuedFlipOnVSync: int = 1
    FlipCaps: dict[str, int] = field(default_factory=dict)
    #: D3DKMDT_PREEMPTION_CAPS (DXGK_DRIVERCAPS.PreemptionCaps, WDDM 1.2 and later)
    GraphicsPreemptionGranularity: int = 0
    ComputePreemptionGranularity: int = 0
    #: DXGK_DRIVERCAPS.SupportPerEngineTDR (WDDM 1.2): DxgkDdiQueryDependentEngineGroup and
    #: DxgkDdiResetEngine are implemented
    SupportPerEngineTDR: bool = False

    @property
    def MultiEngineAware(self) -> bool:
        return bool(self.SchedulingCaps & 1)

    @property
    def CancelCommandAware(self) -> bool:
        """DXGK_VIDSCHCAPS.CancelCommandAware (bit 4)."""
        return bool(self.SchedulingCaps & 0x10)

    @property
    def No64BitAtomics(self) -> bool:
        """DXGK_VIDSCHCAPS.No64BitAtomics (bit 5, WDDM 2.0): monitored fences are 32-bit values."""
        return bool(self.SchedulingCaps & 0x20)

    @property
    def PreemptionAware(self) -> bool:
        """DXGK_VIDSCHCAPS.PreemptionAware (bit 2)."""
        return bool(self.SchedulingCaps & 4)


@runtime_checkable
class DxgkrnlInterface(Protocol):
    """What the OS gives a driver at ``DxgkDdiStartDevice`` (``DXGKRNL_INTERFACE`` and the kernel
    services a miniport uses).

    ``DeviceHandle`` is the OS's handle for the adapter, passed back in every callback.
    """

    DeviceHandle: int

    def DxgkCbNotifyInterrupt(self, hAdapter: int, pNotifyInterruptData: Any) -> None:
        """Report an interrupt event (device IRQL only; never re-entrantly)."""

    def DxgkCbQueueDpc(self, hAdapter: int) -> bool:
        """Queue the driver's DPC; FALSE when one is already pending."""

    def DxgkCbNotifyDpc(self, hAdapter: int) -> None:
        """From the DPC: let the scheduler process the fences reported since the last DPC."""

    def DxgkCbSynchronizeExecution(
        self, hAdapter: int, SynchronizeRoutine: Callable[[Any], bool], Context: Any, MessageNumber: int
    ) -> tuple[int, bool]:
        """Run ``SynchronizeRoutine(Context)`` synchronised with the ISR (at device IRQL)."""

    def MmAllocateContiguousMemory(self, NumberOfBytes: int) -> int:
        """Page-aligned, physically contiguous, nonpaged system memory; returns its address."""

    def DxgkCbInvalidateHwContext(self, pInvalidateHwContext: Any) -> None:
        """From DxgkDdiResetHwEngine (hardware scheduling): a running hardware context the reset hit
        (``DXGKARGCB_INVALIDATEHWCONTEXT.hHwContext``, Dxgkrnl's handle); its device goes to error."""


class Miniport(Protocol):
    """The entry points of a display miniport driver on the packet-scheduling path."""

    def DxgkDdiStartDevice(self, DxgkInterface: DxgkrnlInterface) -> int: ...

    def DxgkDdiQueryAdapterInfo(self, hAdapter: int, Type: str) -> Any: ...

    def DxgkDdiGetNodeMetadata(self, hAdapter: int, NodeOrdinalAndAdapterIndex: int, pGetNodeMetadata: Any) -> int: ...

    def DxgkDdiCreateDevice(self, hAdapter: int, pCreateDevice: Any) -> int: ...

    def DxgkDdiCreateContext(self, hDevice: int, pCreateContext: Any) -> int: ...

    def DxgkDdiRender(self, hContext: int, pRender: Any) -> int: ...

    def DxgkDdiPresent(self, hContext: int, pPresent: Any) -> int: ...

    def DxgkDdiPatch(self, hAdapter: int, pPatch: Any) -> int: ...

    def DxgkDdiSubmitCommand(self, hAdapter: int, pSubmitCommand: Any) -> int: ...

    def DxgkDdiInterruptRoutine(self, MiniportDeviceContext: int, MessageNumber: int) -> bool: ...

    def DxgkDdiDpcRoutine(self, MiniportDeviceContext: int) -> None: ...

    def DxgkDdiQueryCurrentFence(self, hAdapter: int, pCurrentFence: Any) -> int: ...

    def DxgkDdiPreemptCommand(self, hAdapter: int, pPreemptCommand: Any) -> int: ...

    def DxgkDdiCancelCommand(self, hAdapter: int, pCancelCommand: Any) -> int: ...

    def DxgkDdiDestroyContext(self, hContext: int) -> int: ...

    def DxgkDdiQueryDependentEngineGroup(self, hAdapter: int, pQueryDependentEngineGroup: Any) -> int: ...

    def DxgkDdiResetEngine(self, hAdapter: int, pResetEngine: Any) -> int: ...

    def DxgkDdiResetFromTimeout(self, hAdapter: int) -> int: ...

    def DxgkDdiRestartFromTimeout(self, hAdapter: int) -> int: ...


class PagingMiniport(Protocol):
    """VidMm's entry point: paging buffers (evictions, page-ins, aperture mappings, and with GPU
    virtual addressing the page-table updates)."""

    def DxgkDdiBuildPagingBuffer(self, hAdapter: int, pBuildPagingBuffer: Any) -> int: ...


class GpuVaMiniport(Protocol):
    """The entry points of GPU virtual addressing (WDDM 2.0 GpuMmu), ddi-facts.md 2.4 and 6."""

    def DxgkDdiCreateProcess(self, hAdapter: int, pCreateProcess: Any) -> int: ...

    def DxgkDdiSetRootPageTable(self, hAdapter: int, pSetPageTable: Any) -> None: ...

    def DxgkDdiSubmitCommandVirtual(self, hAdapter: int, pSubmitCommandVirtual: Any) -> int: ...


class HwSchMiniport(Protocol):
    """The entry points of hardware scheduling (WDDM 2.x), ddi-facts.md 8.3, 8.4, 9.2-9.4, 10.4."""

    def DxgkDdiSetupPriorityBands(self, hAdapter: int, pSetupPriorityBands: Any) -> int: ...

    def DxgkDdiCreateHwContext(self, hDevice: int, pCreateHwContext: Any) -> int: ...

    def DxgkDdiDestroyHwContext(self, hHwContext: int) -> int: ...

    def DxgkDdiSetContextSchedulingProperties(self, hAdapter: int, pProps: Any) -> int: ...

    def DxgkDdiCreateHwQueue(self, hHwContext: int, pCreateHwQueue: Any) -> int: ...

    def DxgkDdiDestroyHwQueue(self, hHwQueue: int) -> int: ...

    def DxgkDdiSubmitCommandToHwQueue(self, hAdapter: int, pSubmitCommandToHwQueue: Any) -> int: ...

    def DxgkDdiSignalMonitoredFence(self, hContext: int, pSignalMonitoredFence: Any) -> int: ...

    def DxgkDdiPresentToHwQueue(self, hHwQueue: int, pPresent: Any) -> int: ...

    def DxgkDdiSuspendContext(self, hAdapter: int, pSuspendContext: Any) -> int: ...

    def DxgkDdiResumeContext(self, hAdapter: int, pResumeContext: Any) -> int: ...

    def DxgkDdiResetHwEngine(self, hAdapter: int, pResetHwEngine: Any) -> int: ...

    def DxgkDdiResumeHwEngine(self, hAdapter: int, pResumeHwEngine: Any) -> int: ...


#: ``DxgkDdiQueryAdapterInfo`` types the model asks for.
QUERY_DRIVERCAPS = "DXGKQAITYPE_DRIVERCAPS"
QUERY_SEGMENTS = "DXGKQAITYPE_QUERYSEGMENT"
