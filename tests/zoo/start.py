"""Drivers Windows would not start: capabilities, node metadata and entry points it refuses at
adapter start (``AdapterStartError``; ``wddmsim verify`` exits 2)."""

from __future__ import annotations

from wddmsim.ddi.ntstatus import NTSTATUS
from wddmsim.kmd import ReferenceDriver

from . import breaks


@breaks(63, kind="start", refusal="PreemptionAware = 1 needs MultiEngineAware = 1 (rule 63)")
class PreemptionWithoutMultiEngine(ReferenceDriver):
    """Reports PreemptionAware (and CancelCommandAware) without MultiEngineAware: Windows refuses the
    combination at adapter start."""

    def _caps(self):
        c = super()._caps()
        c.SchedulingCaps.MultiEngineAware = 0
        return c


@breaks(64, kind="start", refusal="PreemptionAware = 1 needs FlipOnVSyncMmIo = 1")
class PreemptionWithoutMmioFlip(ReferenceDriver):
    """Declares the Windows 8 preemption model but not MMIO flips (DXGK_FLIPCAPS.FlipOnVSyncMmIo):
    the scheduler of that model preempts while flips are pending, so Windows refuses the driver."""

    def _caps(self):
        c = super()._caps()
        c.FlipCaps.FlipOnVSyncMmIo = 0
        return c


@breaks(80, kind="start", refusal="a driver exposes exactly one 3-D engine per adapter (rule 80)")
class TwoThreeDEngines(ReferenceDriver):
    """DxgkDdiGetNodeMetadata reports its copy engine as DXGK_ENGINE_TYPE_3D too: a driver exposes one
    3-D engine per adapter."""

    def DxgkDdiGetNodeMetadata(self, hAdapter, NodeOrdinalAndAdapterIndex, pGetNodeMetadata):
        status = super().DxgkDdiGetNodeMetadata(hAdapter, NodeOrdinalAndAdapterIndex, pGetNodeMetadata)
        if pGetNodeMetadata.EngineType == 6:  # DXGK_ENGINE_TYPE_COPY
            pGetNodeMetadata.EngineType = 1
        return status


@breaks(81, kind="start", refusal="it succeeds for every NodeOrdinal below the node count (rule 81)")
class NodeMetadataOffByOne(ReferenceDriver):
    """DxgkDdiGetNodeMetadata answers STATUS_INVALID_PARAMETER for its last node (an off-by-one range
    check): it succeeds for every ordinal below the node count."""

    def DxgkDdiGetNodeMetadata(self, hAdapter, NodeOrdinalAndAdapterIndex, pGetNodeMetadata):
        if NodeOrdinalAndAdapterIndex & 0xFFFF >= self.hw.engine_count - 1:
            return int(NTSTATUS.STATUS_INVALID_PARAMETER)
        return super().DxgkDdiGetNodeMetadata(hAdapter, NodeOrdinalAndAdapterIndex, pGetNodeMetadata)


@breaks(118, kind="start",
        refusal="DxgkDdiResetEngine is missing: the driver reports SupportPerEngineTDR (rule 118)")
class PerEngineResetWithoutResetEngine(ReferenceDriver):
    """Reports SupportPerEngineTDR but has no DxgkDdiResetEngine."""

    DxgkDdiResetEngine = None


@breaks(None, kind="start",
        refusal="DxgkDdiSubmitCommandVirtual is missing: a DDI wddm2_0 or later driver implements it")
class Wddm2WithoutSubmitCommandVirtual(ReferenceDriver):
    """A WDDM 2.0 driver without DxgkDdiSubmitCommandVirtual: the interface version requires it, so
    DxgkInitialize fails."""

    DxgkDdiSubmitCommandVirtual = None
