"""Rules on what the adapter's capabilities and topology allow: node and engine ordinals,
``DXGK_VIDSCHCAPS``, and flips as the flip capabilities permit (``DXGKARG_SETVIDPNSOURCEADDRESS``,
flip intervals in submissions): rules 19 (EngineOrdinalZeroUnlinked), 20 (NodeOrdinalInRange), 63
(SchedulingCapsDependencies), 83 (VidPnContextCount), 85 (StereoFlagsExclusive), 86
(SetVidPnInvalidParameterOnlySharedPrimary) and 88 (FlipIntervalSupported) of the rule catalogue
(``wddmsim rules 19 20 63 83 85 86 88``,
docs/rules.md).

Spec: Microsoft's pages for D3DDDI_FLIPINTERVAL_TYPE and DXGK_FLIPCAPS (flip intervals and flip
caps), "TDR changes in Windows 8" and DXGK_GPUENGINETOPOLOGY (nodes, engines, linked adapters),
DXGKARGCB_NOTIFY_INTERRUPT_DATA (EngineOrdinal in interrupts), DXGKARG_SETVIDPNSOURCEADDRESS
(context count and stereo flags) and DXGK_VIDSCHCAPS (its dependencies).

Decisions:
- Rules 19 and 20 run on every structure that carries NodeOrdinal/EngineOrdinal; for an interrupt
  they read the arm that InterruptType selects (arms without the member are not judged). With
  ``multi_engine_aware`` False the OS ignores the reported node count, so only node 0 exists.
  A ``node_count`` above 64 (DXGK_MAX_ASYMETRICAL_PROCESSING_NODES) is itself reported.
- Rule 83 treats every call without ModeChange as a flip. With ``broadcast_context_count`` known,
  ContextCount must be exactly 1 + that; otherwise it must be 1..1 + D3DDDI_MAX_BROADCAST_CONTEXT.
- Rule 88 is judged only with Flags.Flip (FlipInterval is read only then, rule 9,
  FlipMembersValid).
"""

from __future__ import annotations

from ..enums import D3DDDI_FLIPINTERVAL_TYPE as FI
from ..structs.display import D3DDDI_MAX_BROADCAST_CONTEXT
from ..structs.interrupt import INTERRUPT_ARM
from .core import Facts, rule

SUBMIT = "DXGKARG_SUBMITCOMMAND"
VIRTUAL = "DXGKARG_SUBMITCOMMANDVIRTUAL"
PATCH = "DXGKARG_PATCH"
PREEMPT = "DXGKARG_PREEMPTCOMMAND"
RESET = "DXGKARG_RESETENGINE"
QUERYFENCE = "DXGKARG_QUERYCURRENTFENCE"
NOTIFY = "DXGKARGCB_NOTIFY_INTERRUPT_DATA"
VIDSCHCAPS = "DXGK_VIDSCHCAPS"
SETVIDPN = "DXGKARG_SETVIDPNSOURCEADDRESS"

MAX_NODES = 64
_MULTI_INTERVAL = (int(FI.D3DDDI_FLIPINTERVAL_TWO), int(FI.D3DDDI_FLIPINTERVAL_THREE), int(FI.D3DDDI_FLIPINTERVAL_FOUR))


def _holder(obj):
    """(object holding the ordinals, prefix for messages): the selected arm of an interrupt, else
    the structure itself."""
    if hasattr(obj, "InterruptType"):
        arm = INTERRUPT_ARM.get(obj.InterruptType)
        if arm is None:
            return None, ""
        return getattr(obj, arm, None), arm + "."
    return obj, ""


@rule(19, "EngineOrdinalZeroUnlinked", structs=(SUBMIT, VIRTUAL, PATCH, PREEMPT, RESET, QUERYFENCE, NOTIFY))
def engine_ordinal_zero(obj, facts: Facts):
    """EngineOrdinal is 0 everywhere on a non-linked adapter (``linked_adapter_count`` == 1), and
    below the number of linked adapters otherwise."""
    links = facts.linked_adapter_count
    if links is None:
        return None
    holder, prefix = _holder(obj)
    engine = getattr(holder, "EngineOrdinal", None)
    if engine is None or engine < links:
        return None
    if links == 1:
        return [f"{prefix}EngineOrdinal is {engine} but must be 0 on an adapter that is not linked"]
    return [f"{prefix}EngineOrdinal is {engine} but must be < the {links} adapters in the link"]


@rule(20, "NodeOrdinalInRange", structs=(SUBMIT, VIRTUAL, PREEMPT, RESET, QUERYFENCE, NOTIFY))
def node_ordinal_in_range(obj, facts: Facts):
    """NodeOrdinal < GpuEngineTopology.NbAsymetricProcessingNodes <= 64.

    Judged when ``facts.node_count`` is known (or ``multi_engine_aware`` is False: one node)."""
    count = facts.node_count
    if facts.multi_engine_aware is False:
        count = 1
    if count is None:
        return None
    holder, prefix = _holder(obj)
    node = getattr(holder, "NodeOrdinal", None)
    out = []
    if count > MAX_NODES:
        out.append(f"the adapter reports {count} nodes but NbAsymetricProcessingNodes must be <= {MAX_NODES}")
    if node is not None and node >= count:
        out.append(f"{prefix}NodeOrdinal is {node} but must be < the node count ({count})")
    return out


@rule(63, "SchedulingCapsDependencies", structs=(VIDSCHCAPS,))
def scheduling_caps_dependencies(obj, facts: Facts):
    """PreemptionAware = 1 requires MultiEngineAware = 1; NoDmaPatching = 1 requires PreemptionAware = 1
    and MultiEngineAware = 1; CancelCommandAware = 1 requires MultiEngineAware = 1 (else adapter
    initialization fails)."""
    multi = obj.MultiEngineAware
    preempt = getattr(obj, "PreemptionAware", 0)
    out = []
    if preempt and not multi:
        out.append("MultiEngineAware is 0 but must be 1 when PreemptionAware is 1")
    if getattr(obj, "NoDmaPatching", 0):
        if not preempt:
            out.append("PreemptionAware is 0 but must be 1 when NoDmaPatching is 1")
        if not multi:
            out.append("MultiEngineAware is 0 but must be 1 when NoDmaPatching is 1")
    if getattr(obj, "CancelCommandAware", 0) and not multi:
        out.append("MultiEngineAware is 0 but must be 1 when CancelCommandAware is 1")
    return out


@rule(83, "VidPnContextCount", structs=(SETVIDPN,))
def vidpn_context_count(obj, facts: Facts):
    """SetVidPnSourceAddress: ContextCount is 0 for a ModeChange; for a flip it is 1 + the number of
    broadcast contexts."""
    count = obj.ContextCount
    if obj.Flags.ModeChange:
        if count == 0:
            return None
        return [f"ContextCount is {count} but must be 0 when Flags.ModeChange is 1"]
    extra = facts.broadcast_context_count
    if extra is not None:
        if count == 1 + extra:
            return None
        return [f"ContextCount is {count} but must be {1 + extra} (1 + {extra} broadcast contexts) for a flip"]
    if 1 <= count <= 1 + D3DDDI_MAX_BROADCAST_CONTEXT:
        return None
    return [f"ContextCount is {count} but must be 1..{1 + D3DDDI_MAX_BROADCAST_CONTEXT} (1 + broadcast contexts) for a flip"]


_INVALID_PARAMETER = 0xC000000D


@rule(86, "SetVidPnInvalidParameterOnlySharedPrimary", structs=(SETVIDPN,))
def setvidpn_invalid_parameter(obj, facts: Facts):
    """DxgkDdiSetVidPnSourceAddress may answer STATUS_INVALID_PARAMETER only for a shared-primary
    transition.

    Judged after the call, with its status in ``facts.status``."""
    if facts.status is None or facts.status & 0xFFFFFFFF != _INVALID_PARAMETER:
        return None
    if getattr(obj.Flags, "SharedPrimaryTransition", 0):
        return None
    return [
        "DxgkDdiSetVidPnSourceAddress returned STATUS_INVALID_PARAMETER but Flags.SharedPrimaryTransition is 0: "
        "that status is allowed only for a shared-primary transition"
    ]


@rule(85, "StereoFlagsExclusive", structs=(SETVIDPN,))
def stereo_flags_exclusive(obj, facts: Facts):
    """FlipStereo and FlipStereoTemporaryMono are never both set; FlipStereoTemporaryMono and
    FlipStereoPreferRight are never both set."""
    flags = obj.Flags
    mono = getattr(flags, "FlipStereoTemporaryMono", 0)
    if not mono:
        return None
    out = []
    if flags.FlipStereo:
        out.append("Flags.FlipStereo and Flags.FlipStereoTemporaryMono are both 1 but must not be set together")
    if flags.FlipStereoPreferRight:
        out.append("Flags.FlipStereoTemporaryMono and Flags.FlipStereoPreferRight are both 1 but must not be set together")
    return out


@rule(88, "FlipIntervalSupported", structs=(SUBMIT, VIRTUAL))
def flip_interval_supported(obj, facts: Facts):
    """FlipInterval TWO..FOUR only if DXGK_FLIPCAPS.FlipInterval = 1; IMMEDIATE and ONE are always
    supported.

    Judged with Flags.Flip when ``facts.flip_interval_supported`` is known."""
    if facts.flip_interval_supported is not False or not obj.Flags.Flip:
        return None
    interval = obj.FlipInterval
    if interval not in _MULTI_INTERVAL:
        return None
    return [
        f"FlipInterval is {interval} ({FI(interval).name}) but must be IMMEDIATE or ONE: the driver "
        f"does not report DXGK_FLIPCAPS.FlipInterval"
    ]
