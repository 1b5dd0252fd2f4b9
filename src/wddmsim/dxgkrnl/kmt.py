"""The D3DKMT-style API that user-mode workloads call: the thunks a runtime uses to reach the
graphics kernel (``D3DKMTCreateDevice``, ``D3DKMTCreateContext``, ``D3DKMTRender``,
``D3DKMTPresent``, waiting for a packet from the CPU).

Calls that cost CPU time are generator functions for :mod:`wddmsim.sim` processes: use them with
``yield from``; the calling thread is busy for the modelled cost (``CpuCost.render`` /
``CpuCost.present``) before the packet reaches the scheduler. A failing call raises
:class:`~wddmsim.dxgkrnl.adapter.ApiError` with the NTSTATUS the application would see.

Spec: Microsoft's "Submitting a command buffer" page (the user-mode driver's buffer reaching the
kernel through the runtime).
"""

from __future__ import annotations

from collections import deque

from ..ddi.ntstatus import NTSTATUS
from .adapter import Adapter
from .errors import ApiError
from .objects import Allocation, Context, Device, Process
from .planeassign import overlay_planes


class D3DKMT:
    """The thunk interface of one adapter."""

    def __init__(self, adapter: Adapter):
        self.adapter = adapter
        self.sim = adapter.sim

    def CreateProcess(self, name: str, priority_class: str = "normal", pid: int | None = None) -> Process:
        return self.adapter.create_process(name, priority_class, pid)

    def CreateDevice(self, process: Process) -> Device:
        return self.adapter.create_device(process)

    def CreateContext(self, device: Device, node: int, name: str = "", priority: int = 0,
                      hw: dict | None = None) -> Context:
        """A context; on a hardware-scheduled adapter a hardware context with its queues (``hw``:
        band, realtime_level, quantum, grace_same, grace_lower, queues = list of flag sets)."""
        return self.adapter.create_context(device, node, name, priority, hw)

    #: D3DKMT_DEVICEEXECUTION_STATE for a device in error, by why it went there: the device whose
    #: work timed out is hung; one a reset hit along with it is reset; a page fault, an adapter stop.
    _EXECUTION_STATE = {"engine reset": "HUNG", "adapter reset": "HUNG", "page fault": "ERROR_DMAPAGEFAULT",
                        "adapter stopped": "STOPPED"}

    def GetDeviceState(self, device: Device) -> str:
        """D3DKMTGetDeviceState with D3DKMT_DEVICESTATE_EXECUTION: the device's
        D3DKMT_DEVICEEXECUTION_STATE without its prefix (Microsoft's enumeration page): ``ACTIVE``;
        ``HUNG`` for the device whose work timed out; ``ERROR_DMAPAGEFAULT`` after a GPU page fault
        the driver reported; ``ERROR_DMAFAULT`` when the driver refused one of its DMA buffers;
        ``STOPPED`` after an adapter stop; ``RESET`` for one a reset hit otherwise (a dependent
        engine's reset, a paging transfer for it, its process blocked from the GPU)."""
        if not device.error:
            return "ACTIVE"
        reason = device.error_reason
        if "STATUS_INVALID_PARAMETER" in reason:
            return "ERROR_DMAFAULT"
        return self._EXECUTION_STATE.get(reason, "RESET")

    def StopAdapter(self) -> None:
        """Stop the adapter's GPU scheduler with whatever work is pending, as Windows does when the
        adapter is stopped (no D3DKMT call of its own: the OS's Plug and Play path). Queued packets
        are cancelled, the driver's are reset, every device goes to error
        (:mod:`wddmsim.dxgkrnl.adapterstop`)."""
        self.adapter.stopper.stop()

    def DestroyContext(self, context: Context) -> None:
        """Destroy ``context``: queued packets are cancelled, submitted ones finish first."""
        self.adapter.destroy_context(context)

    def SetContextSchedulingPriority(self, context: Context, priority: int) -> None:
        """D3DKMTSetContextSchedulingPriority: the context's priority within its process, -7..7;
        queued packets keep their order, the scheduler ranks the context anew."""
        self.adapter.set_context_priority(context, priority)

    def SetSchedulingHints(self, context: Context, **hints) -> None:
        """The model's extension for research policies, no D3DKMT thunk (:mod:`.hints`): new
        ``weight``, ``period``, ``deadline`` or ``utilization`` for ``context``; the others keep
        their values."""
        self.adapter.set_scheduling_hints(context, hints)

    def SetProcessSchedulingPriorityClass(self, process: Process, priority_class: str) -> None:
        """D3DKMTSetProcessSchedulingPriorityClass: the process's D3DKMT_SCHEDULINGPRIORITYCLASS
        ("idle" .. "realtime"), the base of every one of its contexts' priority."""
        self.adapter.set_process_priority_class(process, priority_class)

    def CreateAllocation(self, device: Device, size: int, segment: str = "memory") -> Allocation:
        """Video memory of ``size`` bytes that prefers a ``segment`` kind ("memory" or "aperture")."""
        return self.adapter.create_allocation(device, size, segment)

    def OfferAllocations(self, device: Device, allocations) -> None:
        """D3DKMTOfferAllocations: the application will not use these allocations until it
        reclaims them, and does not need their content: VidMm evicts them first when it needs room
        (or the process's budget drops) and then drops the content instead of moving it."""
        self._own(device, allocations)
        self.adapter.vidsch.vidmm.offer(allocations)
        self._emit("OfferAllocations", {"device": device.handle, "allocations": [a.handle for a in allocations]})

    def ReclaimAllocations(self, device: Device, allocations) -> list[str]:
        """D3DKMTReclaimAllocations2: the application wants these offered allocations back. One
        result each: "OK" (the content is there) or "DISCARDED" (evicted while offered, the content
        is gone: D3DDDI_RECLAIM_RESULT_DISCARDED; the allocation is usable again, its content
        undefined)."""
        self._own(device, allocations)
        results = self.adapter.vidsch.vidmm.reclaim(allocations)
        self._emit("ReclaimAllocations", {"device": device.handle, "allocations": [a.handle for a in allocations],
                                          "results": results})
        return results

    def _own(self, device: Device, allocations) -> None:
        if device.error:
            raise ApiError(int(NTSTATUS.STATUS_DEVICE_REMOVED), "the device is in error")
        for a in allocations:
            if a.device is not device:
                raise ApiError(int(NTSTATUS.STATUS_INVALID_PARAMETER),
                               f"allocation 0x{a.handle:X} belongs to another device")

    def _emit(self, name: str, fields: dict) -> None:
        if self.adapter.trace is not None:
            self.adapter.trace.emit(self.sim.now, name, fields)

    def Render(self, context: Context, command: bytes, allocations=(), patches=(), null_rendering: bool = False):
        """D3DKMTRender (generator): submit a command buffer the user-mode driver built, with its
        allocation list and patch locations ``(allocation index, offset, allocation offset)``;
        returns the packet's number in its context. The calling thread is busy ``CpuCost.render``
        (DxgkDdiRender). ``null_rendering`` submits it with Flags.NullRendering: its fence
        completes, nothing runs. Physical addressing only: a GPU-VA adapter takes
        :meth:`SubmitCommand`."""
        adapter = self.adapter
        if adapter.wddm2 is not None:
            raise ApiError(int(NTSTATUS.STATUS_NOT_SUPPORTED),
                           "this adapter uses GPU virtual addressing: submit with D3DKMTSubmitCommand")
        cost = adapter.costs.render
        if cost:
            yield cost
        return adapter.render(context, command, allocations, patches, null_rendering=null_rendering).seq

    def SubmitCommand(self, context: Context, buffer: bytes, private: bytes = b"", *, queue=None,
                      progress_id: int | None = None, null_rendering: bool = False):
        """D3DKMTSubmitCommand / D3DKMTSubmitCommandToHwQueue (generator): submit a command buffer
        the user-mode driver built for GPU virtual addressing, with its private data; returns its
        number in the context. Under the software scheduler it reaches the driver through
        DxgkDdiSubmitCommandVirtual (costing the application nothing: no DxgkDdiRender); under
        hardware scheduling it goes to ``queue`` (default the context's first) through
        DxgkDdiSubmitCommandToHwQueue in the calling thread (``CpuCost.submit``), as
        HwQueueProgressFenceId ``progress_id`` (default one above the queue's last)."""
        wddm2 = self._wddm2()
        cost = self.adapter.costs.submit if wddm2.hw_scheduling is not None else 0
        if cost:
            yield cost
        return wddm2.submit_buffer(context, buffer, private, queue=queue, progress_id=progress_id,
                                null_rendering=null_rendering).seq

    def MonitoredFenceWait(self, context: Context, fence, value: int) -> tuple[int, int, int]:
        """What a user-mode driver encodes for a GPU wait of ``context`` on ``fence`` reaching
        ``value`` (checked: a live fence without NoWait): (GPU virtual address, value, width)."""
        return self._wddm2().wait_value(context, fence, value)

    def MonitoredFenceSignal(self, context: Context, fence, value: int) -> tuple[int, int, int]:
        """What a user-mode driver encodes for the GPU's write of ``value`` to ``fence`` (checked:
        a 64-bit value, no NoSignal): (GPU virtual address, value, width)."""
        return self._wddm2().signal_value(context, fence, value)

    def NativeFenceSignal(self, context: Context, fence, value: int) -> tuple[int, int, int]:
        """What a user-mode driver encodes for the GPU's write of ``value`` to native fence
        ``fence``: (CurrentValue's GPU virtual address, value, MonitoredValue's GPU virtual address)."""
        return self._wddm2().native_signal_value(context, fence, value)

    def HwQueueProgress(self, context: Context, queue=None, progress_id: int | None = None):
        """Hardware scheduling: ``(queue, progress id, the progress-fence write a buffer ends with or
        None)`` for the next buffer of ``context`` (see :meth:`OsWddm2.progress_value`)."""
        wddm2 = self._wddm2()
        if wddm2.hw_scheduling is None:
            return None, None, None
        return wddm2.progress_value(context, queue, progress_id)

    def _wddm2(self):
        wddm2 = self.adapter.wddm2
        if wddm2 is None:
            raise ApiError(int(NTSTATUS.STATUS_NOT_SUPPORTED),
                           "this needs a WDDM 2.x adapter with GPU virtual addressing")
        return wddm2

    # -- monitored fences (D3DKMT*SynchronizationObject*) ----------------------------------------------
    def _fences(self):
        wddm2 = self.adapter.wddm2
        if wddm2 is None:
            raise ApiError(int(NTSTATUS.STATUS_NOT_SUPPORTED),
                           "monitored fences need a WDDM 2.x adapter with GPU virtual addressing")
        return wddm2.fences

    def CreateSynchronizationObject(self, device: Device, initial: int = 0, flags=()):
        """A D3DDDI_MONITORED_FENCE owned by ``device``'s process."""
        return self._fences().create(device.process, device, initial, tuple(flags))

    def CreateNativeFence(self, device: Device, initial: int = 0, flags=()):
        """D3DKMTCreateNativeFence (D3DDDI_NATIVEFENCE_TYPE_DEFAULT): a native GPU fence owned by
        ``device``'s process (WDDM 3.2 driver reporting NativeGpuFence, hardware scheduling)."""
        wddm2 = self.adapter.wddm2
        if wddm2 is None or wddm2.native is None:
            raise ApiError(int(NTSTATUS.STATUS_NOT_SUPPORTED),
                           "native GPU fences need hardware scheduling and a WDDM 3.2 driver that reports "
                           "DXGK_VIDSCHCAPS.NativeGpuFence")
        return wddm2.native.create(device.process, device, initial, tuple(flags))

    def OpenSynchronizationObject(self, fence, device: Device) -> None:
        """Use ``fence`` from another device (it is mapped into that device's process)."""
        self._fences().open(fence, device.process, device)

    def DestroySynchronizationObject(self, fence) -> None:
        """Destroy ``fence``: its pending waiters complete with STATUS_INVALID_HANDLE."""
        table = self._fences()
        if fence.native:
            self.adapter.wddm2.native.destroy(fence)
            return
        table.destroy(fence)

    def SignalSynchronizationObjectFromCpu(self, fences, values, rewind: bool = False) -> None:
        fences, values = list(fences), list(values)
        table = self._fences()
        native = [i for i, f in enumerate(fences) if f.native]
        if not native:
            table.signal_cpu(fences, values, rewind=rewind)
            return
        # Native fences are written by their driver (DxgkDdiUpdateCurrentValuesFromCpu), the others
        # as always; everything is checked before anything is signalled.
        nf = self.adapter.wddm2.native
        if rewind:
            raise ApiError(int(NTSTATUS.STATUS_INVALID_PARAMETER),
                           "AllowFenceRewind is not modelled on native fences: their CurrentValue only goes forward")
        if len({id(fences[i]) for i in native}) != len(native):
            raise ApiError(int(NTSTATUS.STATUS_INVALID_PARAMETER), "a native fence is named twice in one signal")
        table.check_cpu_signal(fences, values)
        plain = [i for i in range(len(fences)) if i not in native]
        if plain:
            table.signal_cpu([fences[i] for i in plain], [values[i] for i in plain])
        nf.signal_cpu([fences[i] for i in native], [values[i] for i in native])

    def WaitForSynchronizationObjectFromCpu(self, fences, values, timeout: int | None = None, wait_any: bool = False):
        """An event that triggers with STATUS_SUCCESS, STATUS_TIMEOUT or an error status. A native
        fence's MonitoredValue follows the wait (:mod:`wddmsim.dxgkrnl.nativefence`)."""
        fences = list(fences)
        table = self._fences()
        if any(f.native for f in fences):
            return self.adapter.wddm2.native.wait_cpu(fences, list(values), timeout=timeout, wait_any=wait_any)
        return table.wait_cpu(fences, list(values), timeout=timeout, wait_any=wait_any)

    def WaitForSynchronizationObjectFromGpu(self, context: Context, fence, value: int, queue=None) -> None:
        """Later buffers of the queue (hardware scheduling) or of the context (software scheduler)
        wait until ``fence`` reaches ``value``; other contexts and queues are not held (rule 103)."""
        fences = self._fences()
        wddm2 = self.adapter.wddm2
        if fence.native:
            raise ApiError(int(NTSTATUS.STATUS_NOT_SUPPORTED),
                           "the GPU waits for a native fence by itself (a WAIT on its CurrentValue in the buffer); "
                           "the OS does not hold queues behind one")
        fences.open(fence, context.device.process, context.device)
        if wddm2.hw_scheduling is not None:
            wddm2.hw_scheduling.wait(queue or context.hwqueues[0], fence, value)
            return
        if context.device.error:
            raise ApiError(int(NTSTATUS.STATUS_DEVICE_REMOVED), "the device is in error")
        fences.check_wait(fence, value)
        if context.gates is None:
            context.gates = deque()
        context.gates.append([context.seq, fence, value, None])  # holds the packets after these

    def SignalSynchronizationObjectFromGpu(self, context: Context, fence, value: int, queue=None) -> None:
        """The OS signals ``fence`` to ``value`` once the buffers submitted before this call on
        the queue (or the context) are done."""
        fences = self._fences()
        wddm2 = self.adapter.wddm2
        if fence.native:
            raise ApiError(int(NTSTATUS.STATUS_NOT_SUPPORTED),
                           "the GPU signals a native fence by itself (a native fence write in the buffer)")
        fences.open(fence, context.device.process, context.device)
        if wddm2.hw_scheduling is not None:
            wddm2.hw_scheduling.signal(queue or context.hwqueues[0], fence, value)
            return
        fences.register_signaler(fence, context.device)
        done = self.adapter.wait_event(context, context.seq)
        done.add_callback(lambda _ev: None if fence.destroyed else fences.signal_queued(fence, value, context.device))

    def SuspendContext(self, context: Context):
        """VidMm's suspension of a hardware context (an event: the GPU holds nothing of it)."""
        return self.adapter.wddm2.hw_scheduling.suspend(context)

    def ResumeContext(self, context: Context) -> None:
        self.adapter.wddm2.hw_scheduling.resume(context)

    def Present(self, context: Context, source: Allocation, destination: Allocation, width: int, height: int,
                mode: str = "blt", sync_interval: int = 1, vidpn_source: int = 0, call_start: int | None = None,
                independent: bool = False, composes: list | None = None, legacy: bool = False):
        """Present ``source`` (generator): a ``width`` x ``height`` blt to ``destination``, or a flip
        (``mode`` "flip" / "flip_no_wait") with ``sync_interval`` as the FlipInterval. Under hardware
        scheduling a blt is built by DxgkDdiPresentToHwQueue for the context's first hardware queue,
        and a flip exists only with the hardware flip queue (a WDDM 3.0 driver declaring
        MaxHwQueuedFlips > 1: dxgkrnl/hwflipqueue.py, which may block the call while the source's
        queue is full). ``call_start``: when the application's present call began, when that is
        earlier than this thunk (a runtime that blocked first for its frame queue; default now).
        ``independent``, ``composes``, ``legacy``: see :meth:`wddmsim.dxgkrnl.adapter.Adapter.present`."""
        start = self.sim.now if call_start is None else call_start
        cost = self.adapter.costs.present
        if cost:
            yield cost
        wddm2 = self.adapter.wddm2
        if wddm2 is not None and wddm2.hw_scheduling is not None:
            if mode != "blt":
                hwflips = self.adapter.hwflips
                if hwflips is None or mode not in ("flip", "flip_no_wait"):
                    raise ApiError(int(NTSTATUS.STATUS_NOT_SUPPORTED),
                                   "under hardware scheduling the model flips only through the hardware flip queue "
                                   "(a WDDM 3.0 driver declaring DXGK_DRIVERCAPS.MaxHwQueuedFlips > 1); other presents "
                                   "are blts (DxgkDdiPresentToHwQueue)")
                return (yield from hwflips.present(context, source, mode, sync_interval, vidpn_source, width, height,
                                                   start))
            return wddm2.hw_scheduling.present(context, source, destination, width, height, vidpn_source, call_start=start).seq
        return self.adapter.present(context, source, destination, width, height, mode, sync_interval,
                                    vidpn_source, call_start=start, independent=independent,
                                    composes=composes, legacy=legacy).seq

    def PresentComposed(self, context: Context, command: bytes, allocations, patches, vidpn_source: int = 0,
                        call_start: int | None = None):
        """A windowed present (generator): render ``command`` (a copy into the composition
        surface) with Flags.RedirectedPresent; the compositor shows it at the next vsync.
        ``call_start`` as for :meth:`Present`."""
        start = self.sim.now if call_start is None else call_start
        cost = self.adapter.costs.present
        if cost:
            yield cost
        return self.adapter.render(context, command, allocations, patches, redirected_present=vidpn_source,
                                   call_start=start).seq

    def PresentRedirectedFlip(self, context: Context, command: bytes, allocations, patches, vidpn_source: int = 0,
                              call_start: int | None = None, sync_interval: int = 0, surface: Allocation | None = None,
                              allow_tearing: bool = False):
        """A flip-model present to the compositor (generator): the present flushes ``command`` (the
        rest of the frame) with DxgkDdiRender, and D3DKMTPresent with RedirectedFlip hands the
        frame to the compositor of ``vidpn_source`` once that packet retires
        (:mod:`wddmsim.dxgkrnl.composition`), shown for at least ``sync_interval`` refreshes (0: a
        newer frame replaces it). A window the compositor put on an overlay plane flips its
        back buffer ``surface`` on that plane instead (``allow_tearing``: DXGI_PRESENT_ALLOW_TEARING;
        :mod:`wddmsim.dxgkrnl.planeassign`). Returns the flush packet's number."""
        start = self.sim.now if call_start is None else call_start
        cost = self.adapter.costs.present
        if cost:
            yield cost
        packet = self.adapter.render(context, command, allocations, patches)
        self.adapter.redirected_flip(packet, vidpn_source, call_start=start, sync_interval=sync_interval,
                                     surface=surface, allow_tearing=allow_tearing)
        return packet.seq

    def StartComposition(self, vidpn_source: int) -> None:
        """The compositor starts on ``vidpn_source``: windowed presents there wait for it from now
        on instead of being shown by the OS at the next vsync."""
        if not 0 <= vidpn_source < len(self.adapter.display_refresh):
            raise ApiError(int(NTSTATUS.STATUS_INVALID_PARAMETER), f"VidPn source {vidpn_source} does not exist")
        self.adapter.vidsch.presents.composition(vidpn_source)
        overlay_planes(self.adapter)  # windows it composes may go on overlay planes (planeassign.py)

    def CompositionPending(self, vidpn_source: int) -> set[int]:
        """The windows (context handles) of ``vidpn_source`` with a frame ready that no composition
        has taken."""
        return self.adapter.vidsch.presents.composition(vidpn_source).pending()

    def AcquireComposedFrames(self, vidpn_source: int) -> list:
        """The compositor takes the newest ready frame of each window of ``vidpn_source`` (older
        ones are dropped); it passes them to its flip (:meth:`Present` ``composes``)."""
        return self.adapter.vidsch.presents.composition(vidpn_source).acquire(self.sim.now)

    # -- overlay planes: the model's stand-in for the hand-off between dwm.exe and dxgkrnl (no D3DKMT
    # function of these names exists; Windows does this inside its composition and present paths) --
    def OverlayPlanes(self) -> int:
        """MaxOverlayPlanes when the OS may put windows on planes (0: never)."""
        return overlay_planes(self.adapter).max_planes()

    def AssignOverlayPlane(self, vidpn_source: int, context: Context, surface: Allocation, primary=None):
        """Put the window presenting from ``context`` on a free overlay plane of ``vidpn_source``
        if DxgkDdiCheckMultiPlaneOverlaySupport3 says the driver can show it there: ``(layer,
        answer)`` (:meth:`wddmsim.dxgkrnl.planeassign.OverlayPlanes.assign`)."""
        if not 0 <= vidpn_source < len(self.adapter.display_refresh):
            raise ApiError(int(NTSTATUS.STATUS_INVALID_PARAMETER), f"VidPn source {vidpn_source} does not exist")
        return overlay_planes(self.adapter).assign(vidpn_source, context, surface, primary)

    def ReleaseOverlayPlane(self, context: Context, reason: str) -> bool:
        """Take the window presenting from ``context`` off its overlay plane: composed again."""
        return overlay_planes(self.adapter).release(context, reason)

    def OverlayPlaneOf(self, context: Context) -> tuple[int | None, int]:
        """``(layer, last present)``: the overlay plane the window of ``context`` presents to
        (None: composed) and when its last present to it began."""
        planes = self.adapter.vidsch.presents.planes
        if planes is None:
            return None, -1
        return planes.layer_of(context), planes.last_present(context)

    def WaitForPacket(self, context: Context, seq: int):
        """An event to ``yield``: it triggers when the context has retired packet ``seq``."""
        return self.adapter.wait_event(context, seq)

    def WaitForVerticalBlankEvent(self, vidpn_source: int = 0):
        """D3DKMTWaitForVerticalBlankEvent: an event to ``yield``; it triggers (with the time) at
        the source's next CRTC_VSYNC. The OS turns the vsync interrupt on for it if it is off
        (see :mod:`wddmsim.dxgkrnl.vsync`)."""
        if not 0 <= vidpn_source < len(self.adapter.display_refresh):
            raise ApiError(int(NTSTATUS.STATUS_INVALID_PARAMETER), f"VidPn source {vidpn_source} does not exist")
        return self.adapter.vsync.wait(vidpn_source)
