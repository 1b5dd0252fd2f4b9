"""The DDI's rules on hardware queues and monitored fences: ``DXGKARG_SUBMITCOMMANDTOHWQUEUE``
(rules 92 ProgressFenceIncreases, 93 HwQueueSubmitNotReentrant, 94 HwQueueFlagsMatchOrigin, 95
HwQueuePrivateDataNotRetained, 100 MonitoredFenceAddressAligned, 105 MaxInFlightHwQueueBuffers and
125 SchedulingPropertiesBeforeSubmit), ``DXGKARG_CREATEHWQUEUE``, ``DXGKARG_SIGNALMONITOREDFENCE``
and the SignalMonitoredFence operation of ``DXGKARG_BUILDPAGINGBUFFER`` (rule 100). The numbers are
the rule catalogue's: ``wddmsim rules N`` prints rule N, docs/rules.md lists them all.

Spec: Microsoft's "Context monitoring" page (monitored fence values are 64 bits at 8-byte aligned
addresses), DxgkDdiCreateHwQueue (the progress fence increases with every submission),
DxgkDdiSubmitCommandToHwQueue and DXGKARG_SUBMITCOMMANDTOHWQUEUE (no reentrancy per queue, Flags per
buffer origin, private data freed on return), DxgkDdiSignalMonitoredFence, DXGK_NODEMETADATA_FLAGS
(MaxInFlightHwQueueBuffers) and DxgkDdiSetContextSchedulingProperties (scheduling properties before
the first submission). Rule 10 (SubmitFlagsReservedZero) also runs on the submission; it lives in
:mod:`.submit`.

Decisions: rule 94 also requires Flags.Present = 1 for a DdiPresentToHwQueue buffer (the
DXGKARG_SUBMITCOMMANDTOHWQUEUE page says such buffers carry it), and is not judged before WDDM 2.4,
whose layout has no Flags. Rule 95 is judged only from WDDM 2.4: before it the private data lived
until the GPU completed the buffer. Rule 100 judges every fence address a structure carries (a NULL
address is aligned); with No64BitAtomics the value behind it is 32 bits, but the "Context
monitoring" page still places it 8-byte aligned, so 8 is required in every case.
On DXGKARG_BUILDPAGINGBUFFER it is judged only when Operation is SIGNAL_MONITORED_FENCE. Rule 105 is
judged from WDDM 2.5, the version that introduced MaxInFlightHwQueueBuffers; rule 125 from WDDM
2.4, the first with DxgkDdiSetContextSchedulingProperties.
"""

from __future__ import annotations

from ..enums import DXGK_BUILDPAGINGBUFFER_OPERATION as OP
from .core import WDDM2_4, WDDM2_5, Facts, rule

HWQUEUE = "DXGKARG_SUBMITCOMMANDTOHWQUEUE"
CREATEHWQUEUE = "DXGKARG_CREATEHWQUEUE"
SIGNALFENCE = "DXGKARG_SIGNALMONITOREDFENCE"
BUILD = "DXGKARG_BUILDPAGINGBUFFER"

#: Monitored fence values are 64-bit; their CPU and GPU addresses are 8-byte aligned ("Context monitoring").
FENCE_ALIGNMENT = 8
_SIGNAL_MONITORED_FENCE = int(OP.DXGK_OPERATION_SIGNAL_MONITORED_FENCE)

#: The fence-address members of each structure rule 100 judges directly.
_FENCE_ADDRESSES = {
    HWQUEUE: ("HwQueueProgressFenceGpuVa", "HwQueueProgressFenceCpuVa"),
    CREATEHWQUEUE: ("HwQueueProgressFenceCPUVirtualAddress", "HwQueueProgressFenceGPUVirtualAddress"),
    SIGNALFENCE: ("MonitoredFenceGpuVa", "MonitoredFenceCpuVa"),
}


@rule(92, "ProgressFenceIncreases", structs=(HWQUEUE,))
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


@rule(93, "HwQueueSubmitNotReentrant", structs=(HWQUEUE,))
def hwqueue_not_reentrant(obj, facts: Facts):
    """No two threads are inside DxgkDdiSubmitCommandToHwQueue for the same hardware queue.

    Judged from ``facts.queue_busy``."""
    if not facts.queue_busy:
        return None
    return [
        f"hHwQueue 0x{obj.hHwQueue:X} already has a thread inside DxgkDdiSubmitCommandToHwQueue but calls "
        f"for one hardware queue must not overlap"
    ]


@rule(94, "HwQueueFlagsMatchOrigin", structs=(HWQUEUE,))
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


@rule(95, "HwQueuePrivateDataNotRetained", structs=(HWQUEUE,))
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


@rule(100, "MonitoredFenceAddressAligned", structs=(HWQUEUE, CREATEHWQUEUE, SIGNALFENCE, BUILD))
def fence_address_aligned(obj, facts: Facts):
    """Monitored fence addresses (CPU and GPU virtual) are 8-byte aligned: the progress fence VAs of
    DXGKARG_SUBMITCOMMANDTOHWQUEUE (WDDM 2.4 layout) and DXGKARG_CREATEHWQUEUE, MonitoredFenceGpuVa
    and MonitoredFenceCpuVa of DXGKARG_SIGNALMONITOREDFENCE, and SignalMonitoredFence.MonitoredFenceGpuVa
    of a SIGNAL_MONITORED_FENCE paging operation.

    Reads the structure only; no facts."""
    record = getattr(type(obj), "record", None)
    name = record.name if record is not None else ""
    if name == BUILD:
        if obj.Operation != _SIGNAL_MONITORED_FENCE or not hasattr(obj, "SignalMonitoredFence"):
            return None
        holder, names, prefix = obj.SignalMonitoredFence, ("MonitoredFenceGpuVa",), "SignalMonitoredFence."
    else:
        holder, names, prefix = obj, _FENCE_ADDRESSES.get(name, ()), ""
    out = []
    for member in names:
        address = getattr(holder, member, None)
        if address is None or address % FENCE_ALIGNMENT == 0:
            continue
        out.append(f"{prefix}{member} is 0x{address:X} but must be {FENCE_ALIGNMENT}-byte aligned "
                   f"(a monitored fence value is 64 bits)")
    return out


@rule(105, "MaxInFlightHwQueueBuffers", structs=(HWQUEUE,))
def max_in_flight(obj, facts: Facts):
    """At most MaxInFlightHwQueueBuffers command buffers are handed to the KMD at once when that
    field (DXGK_NODEMETADATA_FLAGS, WDDM 2.5) is nonzero.

    Judged from ``facts.max_in_flight`` (the node's MaxInFlightHwQueueBuffers, 0 = unlimited) and
    ``facts.in_flight`` (buffers already handed over and not completed, this one not counted)."""
    limit, busy = facts.max_in_flight, facts.in_flight
    if not limit or busy is None or busy < limit or facts.version.value < WDDM2_5.value:
        return None
    return [
        f"hHwQueue 0x{obj.hHwQueue:X} submission {obj.HwQueueProgressFenceId} would be command buffer "
        f"{busy + 1} in flight but the node's MaxInFlightHwQueueBuffers allows at most {limit}"
    ]


@rule(125, "SchedulingPropertiesBeforeSubmit", structs=(HWQUEUE,))
def scheduling_properties_first(obj, facts: Facts):
    """DxgkDdiSetContextSchedulingProperties for a new context happens before its first submission
    (hardware scheduling, WDDM 2.4 and later).

    Judged from ``facts.scheduling_properties_set`` (False: the hardware context that owns the
    queue has not received its scheduling properties yet)."""
    if facts.scheduling_properties_set is not False or facts.version.value < WDDM2_4.value:
        return None
    return [
        f"hHwQueue 0x{obj.hHwQueue:X} is submitted to before DxgkDdiSetContextSchedulingProperties was "
        f"called for its context but the properties must be set before the first submission"
    ]
