"""Rules on what a driver answers in an entry point's argument structure or status, judged by the OS
after the call returns: ``DXGKARG_QUERYCURRENTFENCE`` (rule 55, QueryCurrentFenceReportsNewer),
``DXGKARG_CANCELCOMMAND`` (rule 67, CancelCommandSucceeds), ``DXGKARG_CREATECONTEXT`` (rule 76,
CreateContextStatus) and ``DXGKARG_QUERYDEPENDENTENGINEGROUP`` (rule 117,
DependentEngineGroupIncludesNode). The numbers are the rule catalogue's: ``wddmsim rules N`` prints
rule N, docs/rules.md lists them all.

Microsoft's pages:
d3dkmddi/nc-d3dkmddi-dxgkddi_querycurrentfence, d3dkmddi/nc-d3dkmddi-dxgkddi_cancelcommand,
d3dkmddi/nc-d3dkmddi-dxgkddi_createcontext, d3dkmddi/nc-d3dkmddi-dxgkddi_querydependentenginegroup
(https://learn.microsoft.com/windows-hardware/drivers/ddi/).

Decisions:

- Rule 55 is judged after DxgkDdiQueryCurrentFence returned STATUS_SUCCESS (the page allows an
  error when the fence cannot be read; nothing is then judged). ``facts.last_completed_fence`` is
  the OS's view *after* the call: it includes what the driver reported with DxgkCbNotifyInterrupt
  during it. An answer above it is a hardware-completed fence the driver did not report first; an
  answer below it goes back on what was reported. Neither has a stop code of its own (0xC4).
- Rule 67 judges the status only; that the OS calls DxgkDdiCancelCommand only for a
  CancelCommandAware driver is the OS's own doing.
- Rule 76: STATUS_SUCCESS, STATUS_NO_MEMORY and STATUS_GRAPHICS_DRIVER_MISMATCH; any other status
  breaks the contract (a driver must support any number of contexts). Windows fails the
  application's call; the page names no stop code (0xC4).
- Rule 117 is judged after a successful call only (``facts.status`` known and STATUS_SUCCESS): a
  failed one makes the OS reset the adapter instead ("TDR changes in Windows 8"), with nothing to judge in the
  mask.
"""

from __future__ import annotations

from ..bugcheck import VidSchError
from ..ntstatus import NTSTATUS, status_name
from .core import Facts, reported_fence, rule, u32, vidsch_bugcheck

QUERYFENCE = "DXGKARG_QUERYCURRENTFENCE"
CANCEL = "DXGKARG_CANCELCOMMAND"
CREATECONTEXT = "DXGKARG_CREATECONTEXT"
DEPENDENT = "DXGKARG_QUERYDEPENDENTENGINEGROUP"

_SUCCESS = u32(int(NTSTATUS.STATUS_SUCCESS))
_CREATE_CONTEXT_FAILURES = {u32(int(NTSTATUS.STATUS_NO_MEMORY)), u32(int(NTSTATUS.STATUS_GRAPHICS_DRIVER_MISMATCH))}


def _status_text(status: int) -> str:
    return f"0x{u32(status):08X} ({status_name(status)})"


@rule(55, "QueryCurrentFenceReportsNewer", structs=(QUERYFENCE,))
def query_current_fence(obj, facts: Facts):
    """DxgkDdiQueryCurrentFence answers the node's last completed fence, and reports a newer
    hardware-completed fence with DxgkCbNotifyInterrupt (at device IRQL) before it returns: the
    CurrentFence it answers is the last completed fence the OS has seen reported.

    Judged after a successful call against ``facts.last_completed_fence`` (the OS's view once the
    call returned)."""
    if facts.status is not None and u32(facts.status) != _SUCCESS:
        return None
    done = facts.last_completed_fence
    if done is None:
        return None
    fence = reported_fence(obj.CurrentFence, facts)
    if fence == done:
        return None
    if fence > done:
        return [f"CurrentFence is {fence} but the last completed fence reported on node {obj.NodeOrdinal} is {done}: "
                f"a newer completed fence must be reported with DxgkCbNotifyInterrupt before "
                f"DxgkDdiQueryCurrentFence returns"]
    return [f"CurrentFence is {fence} but must not be older than the last completed fence already reported on "
            f"node {obj.NodeOrdinal} ({done})"]


@rule(67, "CancelCommandSucceeds", structs=(CANCEL,))
def cancel_succeeds(obj, facts: Facts):
    """DxgkDdiCancelCommand returns STATUS_SUCCESS; any other status is bug check 0x119 (0x9, status).

    Judged when ``facts.status`` is known."""
    status = facts.status
    if status is None or u32(status) == _SUCCESS:
        return None
    return [(
        f"DxgkDdiCancelCommand returned {_status_text(status)} but must return STATUS_SUCCESS",
        vidsch_bugcheck(VidSchError.FAILED_CANCEL_COMMAND, u32(status)),
    )]


@rule(76, "CreateContextStatus", structs=(CREATECONTEXT,))
def create_context_status(obj, facts: Facts):
    """DxgkDdiCreateContext fails only with STATUS_NO_MEMORY or STATUS_GRAPHICS_DRIVER_MISMATCH (a
    driver supports any number of contexts).

    Judged when ``facts.status`` is known."""
    status = facts.status
    if status is None:
        return None
    s = u32(status)
    if s == _SUCCESS or s in _CREATE_CONTEXT_FAILURES:
        return None
    return [f"DxgkDdiCreateContext returned {_status_text(status)} for node {obj.NodeOrdinal} but may fail only with "
            f"STATUS_NO_MEMORY or STATUS_GRAPHICS_DRIVER_MISMATCH"]


@rule(117, "DependentEngineGroupIncludesNode", structs=(DEPENDENT,))
def dependent_group_includes_node(obj, facts: Facts):
    """DxgkDdiQueryDependentEngineGroup's DependentNodeOrdinalMask includes the queried node's own
    bit; a mask without it is bug check 0x119 (0x8, INVALID_NODE_MASK).

    Judged after a successful call (``facts.status`` is STATUS_SUCCESS)."""
    if facts.status is None or u32(facts.status) != _SUCCESS:
        return None
    node = obj.NodeOrdinal
    mask = obj.DependentNodeOrdinalMask
    if node < 64 and mask >> node & 1:
        return None
    return [(
        f"DependentNodeOrdinalMask is 0x{mask:X} but must include bit {node}, the node being reset",
        vidsch_bugcheck(VidSchError.INVALID_NODE_MASK, node, mask),
    )]
