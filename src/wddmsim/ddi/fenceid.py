"""Submission fence ids: 32 bits on the DDI, a sequence without end in the OS.

``SubmissionFenceId`` (DXGKARG_SUBMITCOMMAND, DXGKARG_PATCH, DXGKARG_CANCELCOMMAND),
``PreemptionFenceId`` (DXGKARG_PREEMPTCOMMAND) and the ids a driver reports back
(``DXGKARGCB_NOTIFY_INTERRUPT_DATA``'s DmaCompleted, DmaPreempted and DmaFaulted arms,
``DXGKARG_QUERYCURRENTFENCE.CurrentFence``, ``DXGKARG_RESETENGINE.LastAbortedFenceId``) are UINTs:
a node that has submitted 2**32 buffers wraps to 0 and goes on. Microsoft's pages give the members'
types ("DXGKARG_SUBMITCOMMAND structure", "Supplying Fence Identifiers") and nothing more; what the
model does with them is its decision:

* the OS numbers a node's submissions 1, 2, 3, ... without end and hands the driver the low 32 bits
  (:func:`to_ddi`);
* an id the driver reports is read as the sequence number nearest after the node's last completed
  one (:func:`from_ddi`): a forward distance below 2**31 is progress, anything else lies behind.
  The ids outstanding on a node are never 2**31 apart (a hardware queue holds a few buffers), so
  this is exact for every id a correct driver can report; a report beyond the last submitted one
  still stops the model with bug check 0x119 (rule 32, CompletedFenceWasSubmitted:
  ``wddmsim rules 32``, docs/rules.md);
* a driver compares ids the same way (:func:`after`), as serial numbers.
"""

from __future__ import annotations

__all__ = ["U32", "after", "from_ddi", "to_ddi"]

U32 = 0xFFFFFFFF
_HALF = 1 << 31


def to_ddi(fence: int) -> int:
    """The UINT a DDI structure carries for the OS's fence sequence number ``fence``."""
    return fence & U32


def from_ddi(raw: int, last_completed: int) -> int:
    """The sequence number a 32-bit id ``raw`` from the driver stands for, read relative to the
    node's ``last_completed`` one: ahead when its forward distance is below 2**31, else behind."""
    ahead = (raw - last_completed) & U32
    if ahead < _HALF:
        return last_completed + ahead
    return last_completed - ((last_completed - raw) & U32)


def after(a: int, b: int) -> bool:
    """32-bit id ``a`` comes after ``b`` (serial-number order: a forward distance 1 .. 2**31 - 1)."""
    return 0 < ((a - b) & U32) < _HALF
