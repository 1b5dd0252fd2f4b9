"""Rules on hardware-queue submission: ``DXGKARG_SUBMITCOMMANDTOHWQUEUE`` (rules 92, 93, 94, 95).

Spec: ddi-facts.md sections 9.2 (the progress fence increases with every submission), 9.3
(DxgkDdiSubmitCommandToHwQueue: no reentrancy per queue, Flags per buffer origin, private data freed
on return). Rule 10 (reserved flag bits) also runs on this structure; it lives in :mod:`.submit`.

Decisions: rule 94 also requires Flags.Present = 1 for a DdiPresentToHwQueue buffer (9.3 says such
buffers carry it), and is not judged before WDDM 2.4, whose layout has no Flags. Rule 95 is judged
only from WDDM 2.4: before it the private data lived until the GPU completed the buffer.
"""

from __future__ import annotations

from .core import WDDM2_4, Facts, rule

HWQUEUE = "DXGKARG_SUBMITCOMMANDTOHWQUEUE"


@rule(92, "ProgressFenceIncreases", "9.2, 9.3", structs=(HWQUEUE,))
def progress_fence_increases(obj, facts: Facts):
    """HwQueueProgressFenceId strictly increases across submissions to one hardware queue.

    Judged against ``facts.last_progress_fence_id``."""
    last = facts.last_progress_fence_id
    fence = obj.HwQueueProgressFenceId
    if last is None or fence > last:
        return None
    return [
        f"HwQueueProgressFenceId is {fence} but must be > the queue's previous progress fence id ({last})"
    ]


@rule(93, "HwQueueSubmitNotReentrant", "9.3", structs=(HWQUEUE,))
def hwqueue_not_reentrant(obj, facts: Facts):
    """No two threads are inside DxgkDdiSubmitCommandToHwQueue for the same hardware queue.

    Judged from ``facts.queue_busy``."""
    if not facts.queue_busy:
        return None
    return [
        f"hHwQueue 0x{obj.hHwQueue:X} already has a thread inside DxgkDdiSubmitCommandToHwQueue but calls "
        f"for one hardware queue must not overlap"
    ]


@rule(94, "HwQueueFlagsMatchOrigin", "9.3", structs=(HWQUEUE,))
def hwqueue_flags_origin(obj, facts: Facts):
    """Flags is 0 for UMD buffers and Flags.Present is 1 exactly for DdiPresentToHwQueue buffers.

    Judged from ``facts.buffer_origin`` (``"umd"`` or ``"present"``)."""
    origin = facts.buffer_origin
    flags = getattr(obj, "Flags", None)
    if origin is None or flags is None:
        return None
    if origin == "umd":
        if flags.Value:
            return [f"Flags.Value is 0x{flags.Value:08X} but must be 0 for a buffer the UMD submitted"]
        return None
    if origin == "present":
        if not flags.Present:
            return [f"Flags.Present is 0 (Flags.Value 0x{flags.Value:08X}) but must be 1 for a DdiPresentToHwQueue buffer"]
        return None
    raise ValueError(f"facts.buffer_origin is {origin!r}; expected 'umd' or 'present'")


@rule(95, "HwQueuePrivateDataNotRetained", "9.3", structs=(HWQUEUE,))
def private_data_not_retained(obj, facts: Facts):
    """pDmaBufferPrivateData of DxgkDdiSubmitCommandToHwQueue is not used after the call returns
    (WDDM 2.4 and later).

    Judged from ``facts.private_data_reads_after_return``."""
    reads = facts.private_data_reads_after_return
    if not reads or facts.version.value < WDDM2_4.value:
        return None
    return [
        f"pDmaBufferPrivateData (0x{obj.pDmaBufferPrivateData:X}) was read {reads} time(s) after "
        f"DxgkDdiSubmitCommandToHwQueue returned but must not be used once the call returns"
    ]
