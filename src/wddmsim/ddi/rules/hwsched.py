"""The DDI's rules on the hardware-scheduling calls of the WDDM 2.4 model: ``DXGKARG_SUSPENDCONTEXT`` (rule
104, SuspendFenceIncreases), ``DXGKARG_SETCONTEXTSCHEDULINGPROPERTIES`` (rules 122
RealtimeBandPriorityLevelRange, 123 InProcessPriorityRange and 126 PrivilegedPriorityBand) and
``DXGKARG_SETUPPRIORITYBANDS`` (rule 124, TargetNormalBandPercentageRange). The numbers are the
rule catalogue's: ``wddmsim rules N`` prints rule N, docs/rules.md lists them all.

Spec: Microsoft's pages for DXGKARG_SETUPPRIORITYBANDS, DXGKARG_SETCONTEXTSCHEDULINGPROPERTIES and
DXGK_SCHEDULING_PRIORITY_BAND (priority bands and context scheduling properties) and
DxgkDdiSuspendContext. Rules 100 (MonitoredFenceAddressAligned), 105 (MaxInFlightHwQueueBuffers)
and 125 (SchedulingPropertiesBeforeSubmit), judged on hardware-queue structures, live in
:mod:`.hwqueue`. The rules judge the DDI's structures; the OS's side of hardware scheduling is
:mod:`wddmsim.dxgkrnl.hwscheduling`, the driver's :mod:`wddmsim.kmd.wddm2`.

Decisions:

- Rule 104 has two halves on one structure. The fence half compares contextSuspendFence with
  ``facts.last_suspend_fence``. The status half reads ``facts.status``: anything but STATUS_SUCCESS
  or STATUS_PENDING is reported; with ``facts.already_suspended`` known, an already suspended
  context must get STATUS_SUCCESS and any other STATUS_PENDING. No bug check is documented for a
  wrong answer, so none is attached.
- Rule 122 judges the range of realtimeBandPriorityLevel only when priorityBand is REALTIME: for the
  other bands the member is documented as ignored, so any value there is accepted.
- Rule 126 is judged when ``facts.has_inc_base_priority`` is False and the band is FOCUS or REALTIME.
- Rule 127 (IdleBandNeverPreempts: the IDLE band never preempts another band) is not registered. Its
  structure-level half says gracePeriodForBand[IDLE] is ignored, which makes every value of that
  element valid, so DXGKARG_SETUPPRIORITYBANDS has nothing to violate; its behavioural half (an
  IDLE-band context is never the one preempting a context of another band) is a property of the GPU
  scheduler's choices, not of any structure that crosses the DDI, and belongs to the engine model's
  own checks.
"""

from __future__ import annotations

from ..enums import DXGK_SCHEDULING_PRIORITY_BAND as BAND
from ..ntstatus import NTSTATUS, status_name
from .core import Facts, rule, u32

SUSPEND = "DXGKARG_SUSPENDCONTEXT"
SCHEDPROPS = "DXGKARG_SETCONTEXTSCHEDULINGPROPERTIES"
BANDS = "DXGKARG_SETUPPRIORITYBANDS"

_SUCCESS = u32(int(NTSTATUS.STATUS_SUCCESS))
_PENDING = u32(int(NTSTATUS.STATUS_PENDING))
_REALTIME = int(BAND.DXGK_SCHEDULING_PRIORITY_BAND_REALTIME)
_PRIVILEGED_BANDS = (int(BAND.DXGK_SCHEDULING_PRIORITY_BAND_FOCUS), _REALTIME)

#: Documented ranges (DXGKARG_SETUPPRIORITYBANDS, DXGKARG_SETCONTEXTSCHEDULINGPROPERTIES).
REALTIME_LEVELS = (0, 31)
IN_PROCESS_PRIORITIES = (-7, 7)
MAX_TARGET_NORMAL_BAND_PERCENTAGE = 50


def _band_name(band: int) -> str:
    try:
        return BAND(band).name
    except ValueError:
        return f"band {band}"


@rule(104, "SuspendFenceIncreases", structs=(SUSPEND,))
def suspend_fence_increases(obj, facts: Facts):
    """contextSuspendFence values for one context strictly increase; DxgkDdiSuspendContext returns
    STATUS_SUCCESS if the context is already suspended and STATUS_PENDING otherwise.

    Judged from ``facts.last_suspend_fence`` (the previous suspend fence of the context) and from
    ``facts.status`` with ``facts.already_suspended``."""
    out = []
    fence, last = obj.contextSuspendFence, facts.last_suspend_fence
    if last is not None and fence <= last:
        out.append(f"contextSuspendFence is {fence} but must be > the context's previous suspend fence ({last})")
    status = facts.status
    if status is not None:
        got = u32(status)
        text = f"0x{got:08X} ({status_name(status)})"
        if got not in (_SUCCESS, _PENDING):
            out.append(f"DxgkDdiSuspendContext returned {text} but must return STATUS_SUCCESS or STATUS_PENDING")
        elif facts.already_suspended is True and got != _SUCCESS:
            out.append(f"DxgkDdiSuspendContext returned {text} for hContext 0x{obj.hContext:X} but must return "
                       f"STATUS_SUCCESS for a context that is already suspended")
        elif facts.already_suspended is False and got != _PENDING:
            out.append(f"DxgkDdiSuspendContext returned {text} for hContext 0x{obj.hContext:X} but must return "
                       f"STATUS_PENDING while the suspension has not completed")
    return out


@rule(122, "RealtimeBandPriorityLevelRange", structs=(SCHEDPROPS,))
def realtime_level_range(obj, facts: Facts):
    """realtimeBandPriorityLevel is in [0, 31] for a context in the REALTIME band (it is ignored for
    the other bands).

    Reads the structure only; no facts."""
    if obj.priorityBand != _REALTIME:
        return None
    level = obj.realtimeBandPriorityLevel
    low, high = REALTIME_LEVELS
    if low <= level <= high:
        return None
    return [f"realtimeBandPriorityLevel is {level} but must be {low}..{high} in the REALTIME band"]


@rule(123, "InProcessPriorityRange", structs=(SCHEDPROPS,))
def in_process_priority_range(obj, facts: Facts):
    """inProcessPriority is in [-7, +7] (default 0).

    Reads the structure only; no facts."""
    priority = obj.inProcessPriority
    low, high = IN_PROCESS_PRIORITIES
    if low <= priority <= high:
        return None
    return [f"inProcessPriority is {priority} but must be {low}..+{high}"]


@rule(124, "TargetNormalBandPercentageRange", structs=(BANDS,))
def target_normal_percentage_range(obj, facts: Facts):
    """targetNormalBandPercentage is in [0, 50].

    Reads the structure only; no facts."""
    percentage = obj.targetNormalBandPercentage
    if percentage <= MAX_TARGET_NORMAL_BAND_PERCENTAGE:
        return None
    return [f"targetNormalBandPercentage is {percentage} but must be 0..{MAX_TARGET_NORMAL_BAND_PERCENTAGE}"]


@rule(126, "PrivilegedPriorityBand", structs=(SCHEDPROPS,))
def privileged_band(obj, facts: Facts):
    """The FOCUS and REALTIME bands are only for callers holding SE_INC_BASE_PRIORITY_NAME.

    Judged from ``facts.has_inc_base_priority``."""
    band = obj.priorityBand
    if facts.has_inc_base_priority is not False or band not in _PRIVILEGED_BANDS:
        return None
    return [
        f"priorityBand is {band} ({_band_name(band)}) for hContext 0x{obj.hContext:X} but the FOCUS and "
        f"REALTIME bands need the caller to hold SE_INC_BASE_PRIORITY_NAME"
    ]
