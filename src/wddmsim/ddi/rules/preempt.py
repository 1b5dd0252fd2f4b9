"""Rules on preemption and per-engine reset requests: ``DXGKARG_PREEMPTCOMMAND`` and
``DXGKARG_RESETENGINE`` (rules 58 PreemptCommandSucceeds, 59 PreemptFlagsZero and 115
LastAbortedFenceInRange). The numbers are the rule catalogue's: ``wddmsim rules N`` prints rule N,
docs/rules.md lists them all.

Spec: Microsoft's pages for DxgkDdiPreemptCommand and DXGK_PREEMPTCOMMANDFLAGS (it must succeed;
its flags are all reserved), "TDR changes in Windows 8" and DxgkDdiResetEngine (the
LastAbortedFenceId range), and "Bug Check 0x119: VIDEO_SCHEDULER_INTERNAL_ERROR" (parameters 0x2 and
0xA).

Decisions: rule 115 is judged only after a successful (or unreported) ResetEngine: a failed one
falls back to an adapter-wide reset and its LastAbortedFenceId means nothing. Each bound is judged
when its fact is known; P3 of the bug check is the last completed fence when known, else 0.
Rules 19 (EngineOrdinalZeroUnlinked) and 20 (NodeOrdinalInRange) for these structures live in
:mod:`.caps`.
"""

from __future__ import annotations

from ..bugcheck import VidSchError
from ..ntstatus import NTSTATUS, status_name
from .core import Facts, reported_fence, rule, u32, vidsch_bugcheck

PREEMPT = "DXGKARG_PREEMPTCOMMAND"
RESET = "DXGKARG_RESETENGINE"

_SUCCESS = int(NTSTATUS.STATUS_SUCCESS)


@rule(58, "PreemptCommandSucceeds", structs=(PREEMPT,))
def preempt_succeeds(obj, facts: Facts):
    """DxgkDdiPreemptCommand returns STATUS_SUCCESS; otherwise bug check 0x119 (0x2, status).

    Judged when ``facts.status`` is known."""
    status = facts.status
    if status is None or u32(status) == _SUCCESS:
        return None
    return [(
        f"DxgkDdiPreemptCommand returned 0x{u32(status):08X} ({status_name(status)}) but must return STATUS_SUCCESS",
        vidsch_bugcheck(VidSchError.DRIVER_FAILED_SUBMIT_COMMAND, u32(status)),
    )]


@rule(59, "PreemptFlagsZero", structs=(PREEMPT,))
def preempt_flags_zero(obj, facts: Facts):
    """DXGK_PREEMPTCOMMANDFLAGS.Value is 0 (every bit is reserved)."""
    v = obj.Flags.Value
    if not v:
        return None
    return [f"Flags.Value is 0x{v:08X} but must be 0 (DXGK_PREEMPTCOMMANDFLAGS defines no bit)"]


@rule(115, "LastAbortedFenceInRange", structs=(RESET,))
def last_aborted_in_range(obj, facts: Facts):
    """After a successful ResetEngine, last completed <= LastAbortedFenceId <= last submitted; else
    bug check 0x119 (0xA, LastAbortedFenceId, last completed fence)."""
    if facts.status is not None and u32(facts.status) != _SUCCESS:
        return None
    raw = obj.LastAbortedFenceId
    aborted = reported_fence(raw, facts)
    done = facts.last_completed_fence
    sent = facts.last_submitted_fence
    if done is not None and aborted < done:
        why = f"must be >= the last completed fence ({done})"
    elif sent is not None and aborted > sent:
        why = f"must be <= the last submitted fence ({sent})"
    else:
        return None
    return [(
        f"LastAbortedFenceId is {raw} but {why}",
        vidsch_bugcheck(VidSchError.REPORTED_INVALID_ABORTED_FENCE, raw, (done or 0) & 0xFFFFFFFF),
    )]
