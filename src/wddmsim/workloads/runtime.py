"""The graphics runtime of the workloads' processes: between an application's work and the
kernel's thunks, it asks the driver pair's user-mode half for each command buffer.

An application (a workload generator) says what it wants done (:mod:`wddmsim.umd` operations:
work, fills, copies, fence waits and signals); :meth:`Runtime.submit` gathers what the user-mode
driver needs from the kernel (fence and progress-fence addresses, checked), asks the user-mode
driver for the buffer (:meth:`wddmsim.umd.UserModeDriver.build`) and submits it through the right
thunk: ``D3DKMTRender`` with the allocation and patch lists on an adapter with physical
addressing, ``D3DKMTSubmitCommand`` with the private data under GPU virtual addressing. Presents
go through ``D3DKMTPresent`` (the kernel-mode driver builds them), except a composed present, whose
copy into the compositor's surface the user-mode driver builds.

Fault injection (the scenario's ``page_fault`` on a GPU-VA adapter) lives here too: a buffer told to
fault starts with a write to an address nothing maps, as a buggy application's would.

Microsoft's page: "Submitting a command buffer"
(https://learn.microsoft.com/windows-hardware/drivers/display/submitting-a-command-buffer).
"""

from __future__ import annotations

from ..dxgkrnl.wddm2 import UNMAPPED_VA
from ..umd import BufferRequest, Copy, FenceValue, Target, Write


class Runtime:
    """The user-mode runtime of one adapter: a user-mode driver and the kernel's thunks."""

    def __init__(self, kmt, umd):
        self.kmt = kmt
        self.umd = umd
        self.sim = kmt.sim
        #: Fault injection (set by the assembly code): (context handle, packet number) -> True for
        #: a buffer whose first command writes to an unmapped GPU virtual address.
        self.faulty: dict[tuple[int, int], bool] = {}

    @property
    def virtual(self) -> bool:
        """The adapter runs with GPU virtual addressing."""
        return self.kmt.adapter.wddm2 is not None

    def submit(self, ctx, ops, *, wait=None, signal=None, queue=None, private: bytes | None = None,
               progress_id: int | None = None, null_rendering: bool = False):
        """Submit ``ops`` on ``ctx`` (generator; returns the buffer's number in its context).

        ``wait`` / ``signal`` = (monitored fence, value): the buffer waits for the value first /
        writes it last (GPU virtual addressing only). ``queue``, ``progress_id``: the hardware queue
        and HwQueueProgressFenceId (hardware scheduling). ``private`` replaces the user-mode
        driver's private data (tests of a kernel-mode driver's validation)."""
        kmt = self.kmt
        if not self.virtual:
            if wait is not None or signal is not None:
                from ..ddi.ntstatus import NTSTATUS
                from ..dxgkrnl.errors import ApiError

                raise ApiError(int(NTSTATUS.STATUS_NOT_SUPPORTED),
                               "GPU waits and signals in a command buffer need GPU virtual addressing")
            cb = self.umd.build(BufferRequest(tuple(ops), virtual=False, context=ctx.handle))
            return (yield from kmt.Render(ctx, cb.commands, cb.allocations, cb.patches,
                                          null_rendering=null_rendering))
        if self.faulty and self.faulty.pop((ctx.handle, ctx.seq + 1), False):
            ops = (Write(Target(address=UNMAPPED_VA), 0), *ops)
        w = FenceValue(*kmt.MonitoredFenceWait(ctx, *wait)) if wait is not None else None
        s = FenceValue(*kmt.MonitoredFenceSignal(ctx, *signal)) if signal is not None else None
        q, pid, write = kmt.HwQueueProgress(ctx, queue, progress_id)
        p = FenceValue(*write) if write is not None else None
        cb = self.umd.build(BufferRequest(tuple(ops), virtual=True, wait=w, signal=s, progress=p, context=ctx.handle))
        return (yield from kmt.SubmitCommand(ctx, cb.commands, cb.private if private is None else private,
                                             queue=q, progress_id=pid, null_rendering=null_rendering))

    def present_composed(self, ctx, source, surface, size: int, vidpn_source: int = 0,
                         call_start: int | None = None):
        """A windowed present (generator): a copy of ``size`` bytes of ``source`` into the
        compositor's ``surface``, which shows it at the next vsync. ``call_start``: when the
        application's present call began, if earlier than now (it waited for its frame queue)."""
        cb = self.umd.build(BufferRequest((Copy(Target(source), Target(surface), size),), context=ctx.handle))
        return (yield from self.kmt.PresentComposed(ctx, cb.commands, cb.allocations, cb.patches, vidpn_source,
                                                    call_start=call_start))
