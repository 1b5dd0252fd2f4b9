"""The reference driver's settings: what a scenario's ``[driver]`` table may say to it.

Windows drivers read their settings from their registry key; the model hands a driver the
scenario's ``[driver]`` table instead (``DeviceInfo.settings``). These are the reference driver's
keys; another driver defines its own (a pydantic model as its class attribute ``Settings``, which
the loader validates the table with, so a mistake is reported as ``driver.<key>: <reason>``).

What they choose is what the driver then *declares* to the OS through ``DxgkDdiQueryAdapterInfo``
(``DXGK_DRIVERCAPS``), ``DxgkDdiGetNodeMetadata`` and its ``DXGK_CONTEXTINFO``: the OS reads the
capabilities there, never here.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, field_validator, model_validator

from ..ddi.versions import VERSION_NAMES, ddi_version
from ..gpu.mmio import HW_FLIP_QUEUE_DEPTH, PLANES_PER_SOURCE
from ..util.units import parse_size

PAGE = 4096

Size = Annotated[int, BeforeValidator(parse_size)]


def _ring(value: int) -> int:
    if value < PAGE or value & (value - 1):
        raise ValueError(f"must be a power of two and at least 4096 bytes, got {value}")
    return value


class EngineSettings(BaseModel):
    """Settings of one engine (the table's key is the engine's name, as the GPU reports it)."""

    model_config = ConfigDict(extra="forbid")

    #: bytes of this engine's ring (default: the driver's ``ring_size``)
    ring_size: Size | None = None
    #: hardware scheduling: the driver releases a hardware queue's progress fence with a ring
    #: FENCE after the buffer (DXGK_NODEMETADATA_FLAGS.RingBufferFenceRelease) instead of leaving
    #: the write to the buffer's last instruction
    ring_buffer_fence_release: bool = False
    #: hardware scheduling: command buffers the OS may hand the driver at once on this node
    #: (DXGK_NODEMETADATA_FLAGS.MaxInFlightHwQueueBuffers; 0 = no limit). Unset: as many as one
    #: hardware queue's ring holds, so the OS can never overflow it
    max_in_flight_hw_queue_buffers: int | None = Field(default=None, ge=0, le=0xFFFF)

    @field_validator("ring_size")
    @classmethod
    def _ring_shape(cls, value):
        return None if value is None else _ring(value)


class Settings(BaseModel):
    """The reference driver's settings (see the module doc)."""

    model_config = ConfigDict(extra="forbid")

    #: the DXGKDDI_INTERFACE_VERSION the driver is built for (``win7``, ``wddm2_0``, ``wddm2_7``...)
    ddi_version: str = "wddm2_0"
    #: DXGK_VIDSCHCAPS.MultiEngineAware: contexts and one node per engine; False: devices, one node
    multi_engine_aware: bool = True
    #: DXGK_VIDSCHCAPS.PreemptionAware; unset: true for a multiple-engine-aware driver of WDDM 1.2
    #: (win8) or later, the Windows 8 preemption model
    preemption_aware: bool | None = None
    #: DXGK_DRIVERCAPS.SupportPerEngineTDR; unset: as preemption_aware
    per_engine_reset: bool | None = None
    #: DXGK_VIDSCHCAPS.CancelCommandAware; unset: as preemption_aware
    cancel_aware: bool | None = None
    #: DXGK_FLIPCAPS.FlipOnVSyncMmIo (and FlipImmediateMmIo): flips through DxgkDdiSetVidPnSourceAddress;
    #: unset: as preemption_aware (which needs it, rule 64)
    mmio_flips: bool | None = None
    #: DXGK_VIDSCHCAPS.No64BitAtomics: the GPU's monitored fences are written 32 bits at a time
    no64bit_atomics: bool = False
    #: native GPU fences: DXGK_VIDSCHCAPS.NativeGpuFence is reported when the OS says it enabled them
    #: (DxgkCbIsFeatureEnabled; WDDM 3.2 drivers under hardware scheduling only)
    native_fence: bool = False
    #: DXGK_VIDSCHCAPS.VSyncPowerSaveAware: the OS may turn the vsync interrupt off while the
    #: display is idle (Vista SP1 and later OSes)
    vsync_power_save_aware: bool = True
    #: DXGK_VIDMMCAPS.VirtualAddressingSupported; unset: true from WDDM 2.0 on
    virtual_addressing: bool | None = None
    #: DXGK_NODEMETADATA_FLAGS.ContextSchedulingSupported on every node; unset: true from WDDM 2.5
    #: on (the hardware-queue DDIs the model uses arrive with it)
    hardware_scheduling: bool | None = None
    #: bytes of each engine's ring
    ring_size: Size = 65536
    #: DXGK_CONTEXTINFO.DmaBufferSize of every context
    dma_buffer_size: Size = 65536
    #: DXGK_QUERYSEGMENTOUT.PagingBufferSize: bytes of commands in each paging buffer VidMm hands
    #: DxgkDdiBuildPagingBuffer
    paging_buffer_size: Size = 65536
    #: the most bytes one COPY of a paging transfer moves (0: a whole transfer in one COPY). A
    #: transfer whose COPYs do not fit the room left in the paging buffer is written over several
    #: calls, its progress kept in MultipassOffset
    paging_transfer_chunk: Size = 0
    #: multiplane overlays: the planes the driver shows on each VidPn source, its primary included
    #: (DXGK_DRIVERCAPS.SupportMultiPlaneOverlay and MaxOverlayPlanes; the GPU has PLANES_PER_SOURCE),
    #: flipped by DxgkDdiSetVidPnSourceAddressWithMultiPlaneOverlay3 (WDDM 2.1 and later: kmd/overlay.py);
    #: 0: none declared
    overlay_planes: int = Field(default=0, ge=0, le=PLANES_PER_SOURCE)
    #: the hardware flip queue (WDDM 3.0): above 1, the flips the driver queues per VidPn source
    #: (DXGK_DRIVERCAPS.MaxHwQueuedFlips, at most the GPU's HW_FLIP_QUEUE_DEPTH per plane), declared when
    #: the OS enables the feature (DxgkCbIsFeatureEnabled; WDDM 3.0 drivers under hardware scheduling:
    #: kmd/flipqueue.py); needs ddi_version wddm3_0 or later and overlay_planes; 0 or 1: none
    max_hw_queued_flips: int = Field(default=0, ge=0, le=HW_FLIP_QUEUE_DEPTH)
    #: per-engine settings by engine name
    engines: dict[str, EngineSettings] = Field(default_factory=dict)

    @field_validator("ddi_version")
    @classmethod
    def _known_version(cls, value: str) -> str:
        if value not in VERSION_NAMES:
            raise ValueError(f"unknown DDI version {value!r}; expected one of: {', '.join(VERSION_NAMES)}")
        return ddi_version(value).name

    @field_validator("ring_size")
    @classmethod
    def _ring_shape(cls, value: int) -> int:
        return _ring(value)

    @field_validator("paging_transfer_chunk")
    @classmethod
    def _chunk_pages(cls, value: int) -> int:
        if value % PAGE:
            raise ValueError(f"must be 0 or a multiple of 4096 bytes, got {value}")
        return value

    @model_validator(mode="after")
    def _overlays_need_mpo3(self):
        if self.overlay_planes and ddi_version(self.ddi_version).value < ddi_version("wddm2_1").value:
            raise ValueError(f"overlay_planes = {self.overlay_planes} needs ddi_version wddm2_1 or later (the driver "
                             f"flips planes with DxgkDdiSetVidPnSourceAddressWithMultiPlaneOverlay3); it is "
                             f"{self.ddi_version}")
        return self

    @model_validator(mode="after")
    def _flip_queue_needs_wddm3_and_planes(self):
        n = self.max_hw_queued_flips
        if n > 1 and ddi_version(self.ddi_version).value < ddi_version("wddm3_0").value:
            raise ValueError(f"max_hw_queued_flips = {n} needs ddi_version wddm3_0 or later (the hardware flip "
                             f"queue is WDDM 3.0); it is {self.ddi_version}")
        if n > 1 and not self.overlay_planes:
            raise ValueError(f"max_hw_queued_flips = {n} needs overlay_planes of 1 or more: queued flips are "
                             f"DxgkDdiSetVidPnSourceAddressWithMultiPlaneOverlay3 calls")
        return self

    @field_validator("dma_buffer_size", "paging_buffer_size")
    @classmethod
    def _dma_pages(cls, value: int) -> int:
        if value < PAGE or value % PAGE:
            raise ValueError(f"must be a multiple of 4096 bytes and at least 4096, got {value}")
        return value
