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

from collections import deque

from ..dxgkrnl.errors import ApiError
from ..dxgkrnl.wddm2 import UNMAPPED_VA
from ..umd import BufferRequest, Copy, FenceValue, NativeFenceValue, Target, Write


class _Moves:
    """Where the work of one scenario context goes now: its contexts by node (the first is the one
    the scenario created), the one it submits to, the node asked for next, and which context and
    packet number each of the workload's submissions became.

    The last is kept as runs of consecutive numbers, and a run is dropped once its packets have all
    retired (a wait for one of them is over at once), so it holds the work in flight, not every
    submission made."""

    __slots__ = ("by_node", "current", "next", "count", "base", "spans", "gone")

    def __init__(self, ctx):
        self.by_node = {ctx.node: ctx}
        self.current = ctx
        self.next = None
        self.count = ctx.seq  # the submissions before the first move kept their own numbers
        self.base = ctx.seq
        #: [first workload number, context, its packet number there, how many], oldest first
        self.spans: deque[list] = deque()
        #: (context, packet number) of the last packet of the runs dropped
        self.gone: tuple | None = None

    def record(self, real, seq: int) -> int:
        """The workload's next submission became packet ``seq`` of ``real``: its number."""
        self.count += 1
        spans = self.spans
        last = spans[-1] if spans else None
        if last is not None and last[1] is real and last[2] + last[3] == seq:
            last[3] += 1
        else:
            spans.append([self.count, real, seq, 1])
        while len(spans) > 1:
            first = spans[0]
            end = first[2] + first[3] - 1
            if first[1].completed < end:
                break
            self.gone = (first[1], end)
            spans.popleft()
        return self.count

    def find(self, ctx, seq: int) -> tuple:
        """(context, packet number) of the workload's submission ``seq``."""
        if seq <= self.base or seq > self.count:
            return ctx, seq
        for first, real, real_seq, n in reversed(self.spans):
            if seq >= first:
                return real, real_seq + seq - first
        return self.gone  # retired: its run was dropped


#: The status an application's process ends with when its user-mode driver raised: Windows'
#: STATUS_UNHANDLED_EXCEPTION (ntstatus.h), the process's exit code.
STATUS_UNHANDLED_EXCEPTION = 0xC0000144


class UmdFault(ApiError):
    """The user-mode driver raised (an exception, ``sys.exit()``) while it built a command buffer.
    It runs in the application's process, so on Windows the application dies of it and the OS
    goes on: the workload ends here (``api_error`` names the fault in the summary), the run goes
    on, and the runtime keeps the fault in :attr:`Runtime.umd_faults` for the command line to say."""

    def __init__(self, ctx, exc: BaseException):
        import traceback

        frames = traceback.extract_tb(exc.__traceback__)
        where = f" ({frames[-1].filename}, line {frames[-1].lineno}, in {frames[-1].name})" if frames else ""
        said = str(exc)
        self.api_error = f"user-mode driver fault: {type(exc).__name__}" + (f": {said}" if said else "")
        self.where = where
        #: what the user-mode driver raised (a verify case fails on it: wddmsim.verify.runner)
        self.original = exc
        #: the line the command line shows for it
        self.line = f"{ctx.full_name}: its {self.api_error}{where}; the application's process ended"
        super().__init__(STATUS_UNHANDLED_EXCEPTION, self.api_error + where)


class Runtime:
    """The user-mode runtime of one adapter: a user-mode driver and the kernel's thunks."""

    def __init__(self, kmt, umd):
        self.kmt = kmt
        self.umd = umd
        self.sim = kmt.sim
        #: Fault injection (set by the assembly code): (context handle, packet number) -> True for
        #: a buffer whose first command writes to an unmapped GPU virtual address.
        self.faulty: dict[tuple[int, int], bool] = {}
        #: Work moved between nodes (:meth:`move`): the scenario's context -> where its work goes.
        self.moves: dict = {}
        #: called with each context :meth:`move` creates (the assembly lists it in the summary)
        self.on_context = None
        #: VidPn source -> its desktop compositor (:class:`wddmsim.workloads.compositor.Compositor`)
        self.compositors: dict = {}
        #: the user-mode driver's faults (:class:`UmdFault`), in the order they happened
        self.umd_faults: list[UmdFault] = []

    def _build(self, ctx, request):
        """The user-mode driver's command buffer for ``request``; what it raises (anything but a
        person's Ctrl-C) is the application's death: :class:`UmdFault`."""
        try:
            return self.umd.build(request)
        except KeyboardInterrupt:
            raise
        except BaseException as e:  # noqa: BLE001 - the user's code failed in the application's process
            fault = UmdFault(ctx, e)
            self.umd_faults.append(fault)
            raise fault from None

    # -- moving work between nodes -----------------------------------------------------------------------
    def move(self, ctx, node: int, node_name: str = "") -> None:
        """The application moves the work of ``ctx`` to ``node``. A context stays on the node it
        was created on (DXGKARG_CREATECONTEXT.NodeOrdinal), so the application does what Windows
        leaves to it: D3DKMTCreateContext on ``node`` in the same device the first time (kept for
        later moves), and its next submission goes there once the previous context has retired
        its last packet (the application waits for it from the CPU, so the order of its work is
        kept and no packet is on two nodes)."""
        st = self.moves.get(ctx)
        if st is None:
            st = self.moves[ctx] = _Moves(ctx)
        target = st.by_node.get(node)
        if target is None:
            base = st.current if st.current.node == ctx.node else ctx
            name = f"{ctx.name}@{node_name or node}"
            target = st.by_node[node] = self.kmt.CreateContext(ctx.device, node, name, base.priority)
            target.hints = ctx.hints  # the application's hints follow its work
            if self.on_context is not None:
                self.on_context(target)
        st.next = None if target is st.current else target

    def release(self, ctx) -> None:
        """A job of ``ctx`` (a frame) begins now: its packets' deadlines count from here
        (:mod:`wddmsim.dxgkrnl.hints`), wherever its work was moved. The job keeps the relative
        deadline in force now (:mod:`wddmsim.dxgkrnl.deadlines`)."""
        now = self.sim.now
        ctx.job_release = now
        ctx.job_deadline = ctx.hints.relative_deadline
        st = self.moves.get(ctx) if self.moves else None
        if st is not None:
            for other in st.by_node.values():
                other.job_release = now
                other.job_deadline = other.hints.relative_deadline

    def _route(self, ctx):
        """Generator: the context a submission of ``ctx``'s work goes to now, after the previous
        one retired its last packet when the work just moved."""
        st = self.moves[ctx]
        nxt = st.next
        if nxt is not None:
            prev = st.current
            if prev.seq:
                yield self.kmt.WaitForPacket(prev, prev.seq)
            st.current = nxt
            if st.next is nxt:
                st.next = None
        return st.current

    def wait(self, ctx, seq: int):
        """An event to ``yield``: the workload's submission ``seq`` of ``ctx`` has retired
        (wherever its work was moved)."""
        st = self.moves.get(ctx) if self.moves else None
        if st is None:
            return self.kmt.WaitForPacket(ctx, seq)
        real, real_seq = st.find(ctx, seq)
        return self.kmt.WaitForPacket(real, real_seq)

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
        if self.moves and ctx in self.moves:
            st = self.moves[ctx]
            real = yield from self._route(ctx)
            seq = yield from self._submit(real, ops, wait=wait, signal=signal, queue=queue, private=private,
                                          progress_id=progress_id, null_rendering=null_rendering)
            return st.record(real, seq)
        return (yield from self._submit(ctx, ops, wait=wait, signal=signal, queue=queue, private=private,
                                        progress_id=progress_id, null_rendering=null_rendering))

    def _submit(self, ctx, ops, *, wait=None, signal=None, queue=None, private: bytes | None = None,
                progress_id: int | None = None, null_rendering: bool = False):
        kmt = self.kmt
        if not self.virtual:
            if wait is not None or signal is not None:
                from ..ddi.ntstatus import NTSTATUS
                from ..dxgkrnl.errors import ApiError

                raise ApiError(int(NTSTATUS.STATUS_NOT_SUPPORTED),
                               "GPU waits and signals in a command buffer need GPU virtual addressing")
            cb = self._build(ctx, BufferRequest(tuple(ops), virtual=False, context=ctx.handle))
            return (yield from kmt.Render(ctx, cb.commands, cb.allocations, cb.patches,
                                          null_rendering=null_rendering))
        if self.faulty and self.faulty.pop((ctx.handle, ctx.seq + 1), False):
            ops = (Write(Target(address=UNMAPPED_VA), 0), *ops)
        w = FenceValue(*kmt.MonitoredFenceWait(ctx, *wait)) if wait is not None else None
        if signal is None:
            s = None
        elif signal[0].native:
            s = NativeFenceValue(*kmt.NativeFenceSignal(ctx, *signal))
        else:
            s = FenceValue(*kmt.MonitoredFenceSignal(ctx, *signal))
        q, pid, write = kmt.HwQueueProgress(ctx, queue, progress_id)
        p = FenceValue(*write) if write is not None else None
        cb = self._build(ctx, BufferRequest(tuple(ops), virtual=True, wait=w, signal=s, progress=p, context=ctx.handle))
        return (yield from kmt.SubmitCommand(ctx, cb.commands, cb.private if private is None else private,
                                             queue=q, progress_id=pid, null_rendering=null_rendering))

    def present_composed(self, ctx, source, surface, size: int, vidpn_source: int = 0,
                         call_start: int | None = None):
        """A windowed present (generator): a copy of ``size`` bytes of ``source`` into the
        compositor's ``surface``, which shows it at the next vsync. ``call_start``: when the
        application's present call began, if earlier than now (it waited for its frame queue)."""
        cb = self._build(ctx, BufferRequest((Copy(Target(source), Target(surface), size),), context=ctx.handle))
        return (yield from self.kmt.PresentComposed(ctx, cb.commands, cb.allocations, cb.patches, vidpn_source,
                                                    call_start=call_start))

    def present_redirected_flip(self, ctx, ops, vidpn_source: int = 0, call_start: int | None = None,
                                sync_interval: int = 0, surface=None, allow_tearing: bool = False):
        """A flip-model present to the compositor (generator): ``ops`` (the rest of the frame, at
        least an empty flush) go with the present, which hands the frame to the compositor once
        they retire (or, for a window on an overlay plane, flips the back buffer ``surface`` there).
        Returns the flush packet's number."""
        cb = self._build(ctx, BufferRequest(tuple(ops), context=ctx.handle))
        return (yield from self.kmt.PresentRedirectedFlip(ctx, cb.commands, cb.allocations, cb.patches, vidpn_source,
                                                          call_start=call_start, sync_interval=sync_interval,
                                                          surface=surface, allow_tearing=allow_tearing))

    def swap_chain_created(self, ctx, fields: dict) -> None:
        """The runtime's record of a swap chain (as DXGI and D3D9 log theirs for PresentMon): the
        event log's ``SwapChainCreate``, with the context and process it presents from."""
        trace = self.kmt.adapter.trace
        if trace is not None:
            trace.emit(self.sim.now, "SwapChainCreate", {"context": ctx.handle, "process": ctx.device.process.pid,
                                                         **fields})
