"""The OS's side of one display adapter, :class:`Adapter`: it starts the driver, owns the objects
(processes, devices, contexts, allocations) and VidSch, builds the DMA buffers' arguments
(DxgkDdiRender, DxgkDdiPresent) and cancels and destroys.

The adapter talks to the driver only through the gateway (:mod:`.gateway`, every ``DxgkDdi*``
call) and the interface it hands the driver in ``DxgkDdiStartDevice`` (:mod:`.callbacks`, the
``DxgkCb*`` callbacks and the ISR and DPC dispatch). It never imports the driver or the GPU model:
the assembly code (``wddmsim.runner.system``) hands it a driver object and the system memory both share,
and connects the GPU's interrupt line to :meth:`Adapter.interrupt`.

This module holds the adapter's state and its interrupt entry; each of its other jobs is a mixin
class in a module of its own, which :class:`Adapter` combines:

- :mod:`.adapter_start`: the start, the adapter queries and the features the OS enables;
- :mod:`.adapter_objects`: processes, devices, contexts and allocations, created and destroyed;
- :mod:`.adapter_render`: the DMA packets of the submission path (DxgkDdiRender), freed and
  cancelled;
- :mod:`.adapter_present`: presents (DxgkDdiPresent, redirected flips, MMIO flips);
- :mod:`.adapter_priority`: priority changes while running.

CPU costs (:class:`CpuCost`) are model parameters in ns: the time a DDI call or an ISR/DPC takes,
during which the calling thread is busy.
"""

from __future__ import annotations

from dataclasses import dataclass

from .specialpool import SpecialPool
from ..ddi.bugcheck import BugCheck, BugCheckCode, VidSchError
from .crash import BugCheckStop, CrashRecord
from .errors import AdapterStartError, ApiError  # noqa: F401  (re-exported: callers import them from here)
from .callbacks import DxgkInterface
from .gateway import DdiGateway
from .objects import Allocation, Context, Device, HandleTable, Process
from .pool import KernelPool
from .tdr import TdrConfig
from .vidsch import VidSch
from .vsync import VsyncControl
from .adapter_start import (  # noqa: F401  (re-exported: the start's names, once defined here)
    ENGINE_TYPE_NAMES,
    MIN_VERSION_GPU_VA,
    MIN_VERSION_HARDWARE,
    MIN_VERSION_HW_FLIP_QUEUE,
    MIN_VERSION_NATIVE_FENCE,
    SUCCESS,
    _ENGINE_3D,
    _ENGINE_OTHER,
    AdapterStartup,
)
from .adapter_objects import AdapterObjects
from .adapter_render import (  # noqa: F401  (re-exported: the packets' names, once defined here)
    _CANCEL_MEMBERS,
    _RENDER_MEMBERS,
    FLAG_VIRTUAL_MACHINE_DATA,
    AdapterRender,
)
from .adapter_present import AdapterPresent
from .adapter_priority import AdapterPriority


@dataclass
class CpuCost:
    """Modelled CPU time, in ns, of the OS and driver work on the submission path."""

    render: int = 5_000
    patch: int = 1_000
    submit: int = 2_000
    isr: int = 1_000
    dpc: int = 2_000
    present: int = 5_000


class NoLedger:
    """The ledger of an adapter built without one (:class:`wddmsim.runner.system.System` always hands it
    the run's): every call is taken and nothing is kept."""

    def _skip(self, *args) -> None:
        pass

    queue_start = dma_queued = dma_start = dma_stop = queue_stop = _skip
    present = flip = displayed = dropped = evict = _skip


NO_LEDGER = NoLedger()


class Adapter(AdapterStartup, AdapterObjects, AdapterRender, AdapterPresent, AdapterPriority):
    """One adapter: driver binding, objects, VidSch, callbacks, interrupt and DPC dispatch (its jobs'
    mixins: see the module doc)."""

    def __init__(
        self,
        sim,
        driver,
        memory,
        *,
        policy,
        hw_queue_depth: int | list[int] = 2,
        costs: CpuCost | None = None,
        verifier: str = "strict",
        trace=None,
        arch: str = "x64",
        null_rendering: bool = False,
        tdr: TdrConfig | None = None,
        displays: list[float] = (60.0,),
        budgets: dict[int, int] | None = None,
        scheduling: str = "software",
        bands: dict | None = None,
        gpu_va: bool = False,
        ledger=None,
    ):
        self.sim = sim
        #: the packet ledger (:class:`wddmsim.trace.ledger.Ledger`, the System's), fed at the model's
        #: transition points by direct calls whether or not ``trace`` (the event sink, None when no
        #: log) is there; an adapter built without one keeps no account
        self.ledger = ledger if ledger is not None else NO_LEDGER
        #: "software" (VidSch picks packets) or "hardware" (the GPU schedules hardware queues)
        self.scheduling = scheduling
        #: GPU virtual addressing (WDDM 2.0 GpuMmu); hardware scheduling always has it
        self.gpu_va = gpu_va or scheduling == "hardware"
        #: flips go through DxgkDdiSetVidPnSourceAddress (decided at start from DXGK_FLIPCAPS)
        self.mmio_flips = False
        #: the OS's side of the hardware flip queue (dxgkrnl/hwflipqueue.py), made at start when it is on
        self.hwflips = None
        self._svsa_args = None
        self._bands = bands
        self.wddm2 = None
        self.driver = driver
        self.memory = memory
        #: every submission carries Flags.NullRendering (the scenario switch)
        self.null_rendering = null_rendering
        self.tdr_config = tdr or TdrConfig()
        self.display_refresh = list(displays)  # VidPn sources' refresh rates (the modes the OS set)
        self.budgets = dict(budgets or {})  # segment id -> bytes VidMm may use
        #: Instrumentation for the assembly code (fault injection): called with each new Packet.
        self.on_packet = None
        self.trace = trace
        self.arch = arch
        self.costs = costs or CpuCost()
        self.pool = KernelPool()
        #: guarded kernel pages (Driver Verifier's special pool): see dxgkrnl/specialpool.py
        self.special_pool = SpecialPool(memory)
        self.handles = HandleTable()
        self.hAdapter = 0
        self.processes: list[Process] = []
        self.devices: list[Device] = []
        self.contexts: list[Context] = []
        self.allocations: list[Allocation] = []
        self._policy = policy
        self._depth = hw_queue_depth
        self._verifier_mode = verifier
        self.vidsch: VidSch | None = None
        self.vsync: VsyncControl | None = None
        self.interrupt_address = 0
        #: the OS's one door into the driver (every DxgkDdi* call)
        self.ddi = DdiGateway(sim, driver, arch=arch, trace=trace)
        self._render_call = self.ddi.caller("DxgkDdiRender")
        #: what the driver is handed in DxgkDdiStartDevice: the callbacks, the ISR and DPC dispatch
        self.dxgk = DxgkInterface(self)  # it arms ``ddi.returned`` when an entry point has something to judge

    # -- trace helpers ------------------------------------------------------------------------------
    def args_of(self, obj) -> dict:
        """Every member of a DDI structure by its DDI name (see :meth:`DdiGateway.args_of`)."""
        return self.ddi.args_of(obj)

    # -- interrupts ---------------------------------------------------------------------------------
    @property
    def interrupts(self) -> int:
        """Interrupts delivered to the driver's ISR."""
        return self.dxgk.interrupts

    @property
    def dpcs(self) -> int:
        """DPCs run."""
        return self.dxgk.dpcs

    @property
    def vsyncs(self) -> int:
        """CRTC_VSYNC events reported."""
        return self.dxgk.vsyncs

    def rules_exercised(self) -> set[int]:
        """Every contract rule this adapter's run judged at least once (``wddmsim verify``)."""
        truth = self.vidsch.truth
        return (self.verifier.exercised() | self.ddi.rules_exercised() | self.dxgk.rules_exercised()
                | (truth.judged if truth is not None else set())
                | ({48} if self.vsync is not None and self.vsync.watched else set()))

    def interrupt(self, message_number: int) -> bool:
        """The GPU's line fired (see :meth:`DxgkInterface.interrupt`)."""
        return self.dxgk.interrupt(message_number)

    def invalid_interrupt(self, data, message: str) -> None:
        """The driver reported an interrupt whose NodeOrdinal names no node (rule 20,
        NodeOrdinalInRange): the fence it carries cannot belong to any node's fence sequence, so
        the scheduler stops as for an invalid fence id, bug check 0x119/0x1 (the bug check page
        documents no code of its own for a bad node), in every verifier mode."""
        bc = BugCheck(BugCheckCode.VIDEO_SCHEDULER_INTERNAL_ERROR, VidSchError.DRIVER_REPORTED_INVALID_FENCE_ID)
        raise BugCheckStop(CrashRecord(
            time=self.sim.now, bugcheck=bc, message=f"rule 20 (NodeOrdinalInRange): {message}",
            struct="DXGKARGCB_NOTIFY_INTERRUPT_DATA", arch=self.arch, ddi_version=self.version.name,
            address=self.interrupt_address, data=bytes(data), rule=20, rule_name="NodeOrdinalInRange",
        ))
