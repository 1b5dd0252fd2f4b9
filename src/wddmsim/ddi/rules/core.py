"""The machinery of the DDI contract rules: violations, the facts around a structure, the rule
registry and :func:`check`.

A rule is one numbered item of the rule catalogue (``wddmsim rules``) that can be judged from a single DDI
structure (a ctypes instance built by :mod:`wddmsim.ddi.codec`) plus a few facts the caller knows
around it (the DDI's return status, the adapter's node count, the last fence reported, ...). Each
rule is a plain function registered with :func:`rule`; its docstring becomes the rule's summary.
A fact left at ``None`` is unknown, and a rule that needs an unknown fact says nothing.

Rules run at every DDI crossing, so they only read attributes: no decoding, no allocation on the
path where nothing is wrong. A rule function returns an empty list (or ``None``) when the structure
is fine, and otherwise a list whose items are a message or a ``(message, BugCheck)`` pair;
:func:`rule` wraps it so that :attr:`Rule.check` returns :class:`Violation` objects.

Spec: the rule catalogue (docs/rules.md); Microsoft's "Bug Check 0x119: VIDEO_SCHEDULER_INTERNAL_ERROR"
page (its parameters).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Callable, Iterable

from ..fenceid import from_ddi
from ..bugcheck import BugCheck, BugCheckCode, VidSchError
from ..layout import members
from ..versions import LATEST, DdiVersion, ddi_version

__all__ = [
    "Facts",
    "Rule",
    "RULES",
    "Violation",
    "check",
    "rule",
    "rules_for",
    "reserved_bits",
    "u32",
    "layout_version",
    "vidsch_bugcheck",
    "WDDM2_0",
    "WDDM2_4",
    "WDDM2_5",
]

#: Versions the rules compare against.
WDDM2_0: DdiVersion = ddi_version("wddm2_0")
WDDM2_4: DdiVersion = ddi_version("wddm2_4")
WDDM2_5: DdiVersion = ddi_version("wddm2_5")


@dataclass(frozen=True)
class Violation:
    """One broken rule: its ``rule`` number and ``name``, a ``message`` that names the
    member, the value seen and what the rule requires, and the ``bugcheck`` Windows stops with for
    it (``None`` where Windows does not stop; parameters 3 and 4, addresses and internal data, are
    left 0 for the caller to fill)."""

    rule: int
    name: str
    message: str
    bugcheck: BugCheck | None = None

    def __str__(self) -> str:
        return f"rule {self.rule} ({self.name}): {self.message}"


@dataclass
class Facts:
    """What the caller knows around a structure. Every fact is optional: ``None`` means unknown,
    and a rule whose fact is unknown is not judged.

    Adapter and driver:
      ``version``: the DDI version the driver was built for (default :data:`versions.LATEST`).
      ``multi_engine_aware``: ``DXGK_VIDSCHCAPS.MultiEngineAware``; when False the OS ignores the
      reported node count, so only node 0 exists (rule 20).
      ``node_count``: ``GpuEngineTopology.NbAsymetricProcessingNodes`` (rules 15, 20).
      ``linked_adapter_count``: engines per node, i.e. adapters in the link (default 1; rule 19).
      ``physical_adapter_count``: physical GPUs behind the adapter (rule 46; when unknown,
      ``linked_adapter_count`` stands in).
      ``vidpn_source_count``: number of VidPn sources (rule 9).
      ``flip_interval_supported``: ``DXGK_FLIPCAPS.FlipInterval`` (rule 88).
      ``dma_buffer_segment_set``: the submitting context's ``DXGK_CONTEXTINFO.DmaBufferSegmentSet``
      (rule 16).

    The call and its outcome:
      ``status``: the NTSTATUS the DDI returned (rules 1, 23, 25, 58; 115 is judged only when it is
      unknown or success).
      ``running_context_paging``: the context running on the node was executing a paging
      operation when a ContextSwitch submission arrived (rule 12).
      ``previously_preempted``: this packet was submitted before and preempted (rule 13).
      ``fence_signaled`` / ``work_executed``: observed outcome of a NullRendering packet (rule 14).
      ``paging_buffer_size_before``: ``DmaBufferSize`` of a paging buffer before DxgkDdiPatch
      (rule 27; the structure is the one seen after the call).
      ``patch_locations``: the ``D3DDDI_PATCHLOCATIONLIST`` elements ``pPatchLocationList`` points
      at, as ctypes instances (rule 30).
      ``broadcast_context_count``: contexts a flip is broadcast to besides its own (rule 83).

    Fences, per node (the caller passes the facts of the node the structure names):
      ``last_submitted_fence``, ``last_completed_fence``: as the scheduler tracks them (rules 32,
      33, 36, 115); ``submitted_fences``: every fence id handed to SubmitCommand on the node and
      not yet retired, where known (rule 32); ``outstanding_preemption_fences``: PreemptionFenceIds
      of PreemptCommand requests not yet answered (rule 35).

    Hardware queues:
      ``last_progress_fence_id``: the previous HwQueueProgressFenceId on this queue (rule 92).
      ``queue_busy``: another thread is inside DxgkDdiSubmitCommandToHwQueue for this queue (93).
      ``buffer_origin``: ``"umd"`` or ``"present"`` (DdiPresentToHwQueue), rule 94.
      ``private_data_reads_after_return``: reads of pDmaBufferPrivateData seen after the call
      returned (rule 95).
      ``max_in_flight``: ``DXGK_NODEMETADATA_FLAGS.MaxInFlightHwQueueBuffers`` of the queue's node
      (0 = unlimited); ``in_flight``: hardware-queue command buffers already handed to the KMD on
      that node and not yet completed, this submission not counted (rule 105).
      ``scheduling_properties_set``: DxgkDdiSetContextSchedulingProperties has been called for the
      hardware context that owns the queue (rule 125).

    Hardware scheduling:
      ``last_suspend_fence``: the contextSuspendFence of the previous DxgkDdiSuspendContext on the
      same context (rule 104); ``already_suspended``: the context was already suspended when
      DxgkDdiSuspendContext was called (rule 104, with ``status``).
      ``has_inc_base_priority``: the process that asked for the context's priority holds
      SE_INC_BASE_PRIORITY_NAME (rule 126).

    Multiplane overlays:
      ``max_overlay_planes``: ``DXGK_DRIVERCAPS.MaxOverlayPlanes`` (0 without SupportMultiPlaneOverlay);
      ``mpo_layer_indexes``: the LayerIndex of each entry of a multiplane-overlay vsync report's
      ``pMultiPlaneOverlayVsyncInfo`` array, as the OS read it (rule 50).
    """

    version: DdiVersion = LATEST
    multi_engine_aware: bool | None = None
    node_count: int | None = None
    linked_adapter_count: int | None = 1
    physical_adapter_count: int | None = None
    dma_buffer_segment_set: int | None = None
    vidpn_source_count: int | None = None
    flip_interval_supported: bool | None = None
    running_context_paging: bool | None = None
    previously_preempted: bool | None = None
    status: int | None = None
    fence_signaled: bool | None = None
    work_executed: bool | None = None
    paging_buffer_size_before: int | None = None
    patch_locations: list | None = None
    broadcast_context_count: int | None = None
    last_progress_fence_id: int | None = None
    queue_busy: bool | None = None
    buffer_origin: str | None = None
    private_data_reads_after_return: int | None = None
    last_submitted_fence: int | None = None
    last_completed_fence: int | None = None
    submitted_fences: set[int] | frozenset[int] | None = None
    outstanding_preemption_fences: set[int] | frozenset[int] | None = field(default=None)
    max_in_flight: int | None = None
    in_flight: int | None = None
    scheduling_properties_set: bool | None = None
    last_suspend_fence: int | None = None
    already_suspended: bool | None = None
    has_inc_base_priority: bool | None = None
    max_overlay_planes: int | None = None
    mpo_layer_indexes: tuple[int, ...] | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.version, DdiVersion):
            self.version = ddi_version(self.version)


@dataclass(frozen=True)
class Rule:
    """A registered rule: its ``number`` in the rule catalogue and CamelCase ``name``, the DDI
    ``structs`` it is judged on, a one-line ``summary`` (the first paragraph of its docstring) and
    ``check(obj, facts) -> list[Violation]``."""

    number: int
    name: str
    structs: tuple[str, ...]
    summary: str
    check: Callable[[Any, Facts], list[Violation]]


#: Every registered rule by number.
RULES: dict[int, Rule] = {}

_by_struct: dict[str, tuple[Rule, ...]] = {}


def _summary(doc: str | None) -> str:
    if not doc:
        return ""
    para = doc.strip().split("\n\n", 1)[0]
    return " ".join(line.strip() for line in para.splitlines())


def rule(number: int, name: str, structs: tuple[str, ...] = ()):
    """Register the decorated function as rule ``number`` of the catalogue, judged on every structure
    named in ``structs``. The function takes ``(obj, facts)`` and returns a list of findings (a
    message, or ``(message, BugCheck)``); the registered :attr:`Rule.check` turns them into
    :class:`Violation` objects."""
    if isinstance(structs, str):
        structs = (structs,)

    def deco(fn: Callable[[Any, Facts], Iterable | None]):
        if number in RULES:
            raise ValueError(f"rule {number} is registered twice ({RULES[number].name}, {name})")

        def run(obj, facts: Facts) -> list[Violation]:
            found = fn(obj, facts)
            if not found:
                return []
            out = []
            for f in found:
                if isinstance(f, tuple):
                    out.append(Violation(number, name, f[0], f[1]))
                else:
                    out.append(Violation(number, name, f, None))
            return out

        run.__name__ = fn.__name__
        run.__qualname__ = fn.__qualname__
        run.__module__ = fn.__module__
        run.__doc__ = fn.__doc__
        RULES[number] = Rule(number, name, tuple(structs), _summary(fn.__doc__), run)
        _by_struct.clear()
        return fn

    return deco


def _index() -> dict[str, tuple[Rule, ...]]:
    if not _by_struct:
        table: dict[str, list[Rule]] = {}
        for r in sorted(RULES.values(), key=lambda r: r.number):
            for s in r.structs:
                table.setdefault(s, []).append(r)
        _by_struct.update({k: tuple(v) for k, v in table.items()})
    return _by_struct


def _key(struct_name: str) -> str:
    return struct_name.strip().lstrip("_").upper()


def rules_for(struct_name: str) -> list[Rule]:
    """The rules judged on ``struct_name`` (case-insensitive, leading underscore allowed), by number."""
    return list(_index().get(_key(struct_name), ()))


def check(struct_name: str, obj, facts: Facts | None = None) -> list[Violation]:
    """Run every rule registered for ``struct_name`` on ``obj`` and return what they found, in
    rule-number order. ``facts=None`` means nothing is known beyond the structure itself."""
    rules = _by_struct.get(struct_name) or _index().get(_key(struct_name), ())
    if facts is None:
        facts = Facts()
    out: list[Violation] = []
    for r in rules:
        found = r.check(obj, facts)
        if found:
            out.extend(found)
    return out


# -- helpers shared by the rule modules -------------------------------------------------------


def vidsch_bugcheck(p1: VidSchError | int, p2: int = 0, p3: int = 0, p4: int = 0) -> BugCheck:
    """Bug check 0x119 VIDEO_SCHEDULER_INTERNAL_ERROR with parameter 1 ``p1`` (values are taken
    as unsigned 32-bit where they are status codes or fence ids)."""
    return BugCheck(
        BugCheckCode.VIDEO_SCHEDULER_INTERNAL_ERROR,
        int(p1),
        p2 & 0xFFFFFFFFFFFFFFFF,
        p3 & 0xFFFFFFFFFFFFFFFF,
        p4 & 0xFFFFFFFFFFFFFFFF,
    )


@lru_cache(maxsize=None)
def _reserved_mask(record, version: DdiVersion) -> int:
    """The bits of a flag union's ``Value`` that are reserved at ``version``: the ``Reserved``
    bitfield's range in the layout (plus any bit the storage has beyond the named bits)."""
    mask = 0
    defined = 0
    value_size = 4
    for ml in members(record, "x64", version):
        if ml.bit_width is None:
            if ml.path == "Value":
                value_size = ml.size
            continue
        bits = ((1 << ml.bit_width) - 1) << (ml.bit_offset + 8 * ml.offset)
        if ml.path == "Reserved" or ml.path.endswith(".Reserved"):
            mask |= bits
        else:
            defined |= bits
    return (mask | ~defined) & ((1 << (8 * value_size)) - 1)


def reserved_bits(flags_obj, version: DdiVersion) -> int:
    """The reserved bits set in ``flags_obj`` (a flag union instance from :mod:`wddmsim.ddi.layout`)
    for a driver of DDI ``version``. The mask comes from the flag union's layout at the older of
    ``version`` and the version the instance was built for: a bit the instance's own layout does
    not define cannot be a defined flag, and a bit added after the driver's version is reserved for
    that driver."""
    cls = type(flags_obj)
    return flags_obj.Value & _reserved_mask(cls.record, layout_version(flags_obj, version))


def layout_version(obj, version: DdiVersion) -> DdiVersion:
    """The older of ``version`` and the DDI version ``obj``'s ctypes class was built for."""
    built = getattr(type(obj), "ddi_version", version)
    return version if version.value <= built.value else built


def reported_fence(raw: int, facts: "Facts") -> int:
    """A 32-bit fence id the driver reported, as the node's fence sequence number: read past any
    wrap relative to ``facts.last_completed_fence`` (:mod:`wddmsim.ddi.fenceid`); ``raw`` itself
    when that is unknown."""
    done = facts.last_completed_fence
    return raw if done is None else from_ddi(raw, done)


def u32(value: int) -> int:
    """``value`` as an unsigned 32-bit number (for NTSTATUS values read as signed)."""
    return value & 0xFFFFFFFF
