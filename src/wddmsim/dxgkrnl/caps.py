"""What the OS learns of a driver before the adapter runs, and what makes it refuse to start one.

A miniport declares its ``DXGKDDI_INTERFACE_VERSION`` and its entry points when it loads
(``DxgkInitialize`` with ``DRIVER_INITIALIZATION_DATA``: a missing entry point the version calls for
fails the load); at adapter start it answers ``DxgkDdiQueryAdapterInfo(DXGKQAITYPE_DRIVERCAPS)``
with a ``DXGK_DRIVERCAPS`` written into memory the OS gives it. :class:`AdapterCaps` is the OS's
reading of those bytes. :func:`refusals` lists what Windows refuses at adapter start
(``DXGK_VIDSCHCAPS`` combinations, rule 63 SchedulingCapsDependencies; a preemption-aware driver
without MMIO flips, rule 64 PreemptionAwareNeedsMmioFlip; a ``WDDMVersion`` that is not the
interface version's; a node count outside 1..64, rule 20 NodeOrdinalInRange), and
:func:`missing_entry_points` what the version and the capabilities require that the driver lacks
(rule 118, PerEngineTdrEntryPoints, among them: ``SupportPerEngineTDR`` needs
``DxgkDdiQueryDependentEngineGroup`` and ``DxgkDdiResetEngine``). The numbers are the rule
catalogue's: ``wddmsim rules N`` prints rule N, docs/rules.md lists them all.

Microsoft's pages: d3dkmddi/ns-d3dkmddi-_dxgk_drivercaps, d3dkmddi/ns-d3dkmddi-_dxgk_vidschcaps,
d3dkmddi/ns-d3dkmddi-_dxgk_flipcaps, dispmprt/nf-dispmprt-dxgkinitialize
(https://learn.microsoft.com/windows-hardware/drivers/ddi/); "GPU preemption"
(https://learn.microsoft.com/windows-hardware/drivers/display/gpu-preemption) for rule 64.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..ddi.interface import required_entry_points
from ..ddi.versions import DXGK_WDDMVERSION, DdiVersion, ddi_version, wddm_version_of

_FLIP_BITS = ("FlipOnVSyncWithNoWait", "FlipOnVSyncMmIo", "FlipInterval", "FlipImmediateMmIo", "FlipIndependent")


@dataclass(frozen=True)
class AdapterCaps:
    """The OS's reading of the driver's ``DXGK_DRIVERCAPS`` (the members the model acts on, by
    their DDI names; ``raw`` is the structure as the driver wrote it)."""

    raw: object
    version: DdiVersion
    WDDMVersion: int
    MultiEngineAware: bool
    PreemptionAware: bool
    NoDmaPatching: bool
    CancelCommandAware: bool
    No64BitAtomics: bool
    NbAsymetricProcessingNodes: int
    InterruptMessageNumber: int
    MaxQueuedFlipOnVSync: int
    FlipCaps: dict = field(default_factory=dict)
    GraphicsPreemptionGranularity: int = 0
    ComputePreemptionGranularity: int = 0
    SupportPerEngineTDR: bool = False
    VirtualAddressingSupported: bool = False
    PagingNode: int = 0
    VSyncPowerSaveAware: bool = False
    NativeGpuFence: bool = False
    #: multiplane overlays (WDDM 1.3+): SupportMultiPlaneOverlay and MaxOverlayPlanes (planes shown
    #: at once on one output, the primary plane included; 0 where the driver's version lacks them)
    SupportMultiPlaneOverlay: bool = False
    MaxOverlayPlanes: int = 0
    #: the hardware flip queue's depth per VidPn source (WDDM 3.0; above 1 to use one; 0 where the
    #: driver's version lacks the member)
    MaxHwQueuedFlips: int = 0

    @classmethod
    def read(cls, raw, version: DdiVersion) -> "AdapterCaps":
        sc = raw.SchedulingCaps
        mm = raw.MemoryManagementCaps
        pc = getattr(raw, "PreemptionCaps", None)
        return cls(
            raw=raw, version=version,
            WDDMVersion=int(getattr(raw, "WDDMVersion", 0)),
            MultiEngineAware=bool(sc.MultiEngineAware),
            PreemptionAware=bool(getattr(sc, "PreemptionAware", 0)),
            NoDmaPatching=bool(getattr(sc, "NoDmaPatching", 0)),
            CancelCommandAware=bool(getattr(sc, "CancelCommandAware", 0)),
            No64BitAtomics=bool(getattr(sc, "No64BitAtomics", 0)),
            NbAsymetricProcessingNodes=int(raw.GpuEngineTopology.NbAsymetricProcessingNodes),
            InterruptMessageNumber=int(raw.InterruptMessageNumber),
            MaxQueuedFlipOnVSync=int(raw.MaxQueuedFlipOnVSync),
            FlipCaps={b: int(getattr(raw.FlipCaps, b)) for b in _FLIP_BITS if hasattr(raw.FlipCaps, b)},
            GraphicsPreemptionGranularity=int(pc.GraphicsPreemptionGranularity) if pc is not None else 0,
            ComputePreemptionGranularity=int(pc.ComputePreemptionGranularity) if pc is not None else 0,
            SupportPerEngineTDR=bool(getattr(raw, "SupportPerEngineTDR", 0)),
            VirtualAddressingSupported=bool(getattr(mm, "VirtualAddressingSupported", 0)),
            PagingNode=int(mm.PagingNode),
            VSyncPowerSaveAware=bool(getattr(sc, "VSyncPowerSaveAware", 0)),
            NativeGpuFence=bool(getattr(sc, "NativeGpuFence", 0)),
            SupportMultiPlaneOverlay=bool(getattr(raw, "SupportMultiPlaneOverlay", 0)),
            MaxOverlayPlanes=int(getattr(raw, "MaxOverlayPlanes", 0)),
            MaxHwQueuedFlips=int(getattr(raw, "MaxHwQueuedFlips", 0)),
        )

    @property
    def node_count(self) -> int:
        """Nodes the OS schedules: the reported count with MultiEngineAware, else one (rule 20)."""
        return self.NbAsymetricProcessingNodes if self.MultiEngineAware else 1


def refusals(caps: AdapterCaps) -> list[str]:
    """Why Windows would not start an adapter with these capabilities (empty: it starts)."""
    out = []
    if caps.PreemptionAware and not caps.MultiEngineAware:
        out.append("DXGK_DRIVERCAPS.SchedulingCaps: PreemptionAware = 1 needs MultiEngineAware = 1 (rule 63)")
    if caps.NoDmaPatching and not (caps.PreemptionAware and caps.MultiEngineAware):
        out.append("DXGK_DRIVERCAPS.SchedulingCaps: NoDmaPatching = 1 needs PreemptionAware = 1 and "
                   "MultiEngineAware = 1 (rule 63)")
    if caps.CancelCommandAware and not caps.MultiEngineAware:
        out.append("DXGK_DRIVERCAPS.SchedulingCaps: CancelCommandAware = 1 needs MultiEngineAware = 1 (rule 63)")
    if caps.PreemptionAware and not caps.FlipCaps.get("FlipOnVSyncMmIo"):
        # Microsoft's "GPU preemption" page: the Windows 8 scheduler preempts even while flips are
        # pending, so a driver of that model must flip through MMIO at the next vsync and set
        # DXGK_FLIPCAPS.FlipOnVSyncMmIo. Refused at start like the SchedulingCaps combinations.
        out.append("DXGK_DRIVERCAPS.FlipCaps: PreemptionAware = 1 needs FlipOnVSyncMmIo = 1: the Windows 8 "
                   "scheduler preempts while flips are pending, so a preemption-aware driver flips through "
                   "MMIO at the next vsync (rule 64)")
    if caps.MultiEngineAware and not 1 <= caps.NbAsymetricProcessingNodes <= 64:
        out.append(f"DXGK_DRIVERCAPS.GpuEngineTopology.NbAsymetricProcessingNodes = "
                   f"{caps.NbAsymetricProcessingNodes}: 1..64 nodes (rule 20)")
    if caps.version.value >= ddi_version("win7").value:
        want = wddm_version_of(caps.version)
        if caps.WDDMVersion != int(want):
            try:
                got = DXGK_WDDMVERSION(caps.WDDMVersion).name
            except ValueError:
                got = "no DXGK_WDDMVERSION"
            out.append(f"DXGK_DRIVERCAPS.WDDMVersion = 0x{caps.WDDMVersion:X} ({got}); a driver built for "
                       f"DXGKDDI_INTERFACE_VERSION {caps.version.name} reports 0x{int(want):X} ({want.name})")
    return out


def missing_entry_points(driver, version: DdiVersion, needs: dict[str, bool] | None = None) -> list[str]:
    """The entry points ``driver`` lacks for its version (and, with ``needs``, for the
    capabilities and OS choices named there), one line each saying why it is needed."""
    return [f"{name} is missing: {why}" for name, why in required_entry_points(version.value, needs)
            if not callable(getattr(driver, name, None))]
