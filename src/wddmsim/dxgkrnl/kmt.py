"""The D3DKMT-style API that user-mode workloads call: the thunks a runtime uses to reach the
graphics kernel (``D3DKMTCreateDevice``, ``D3DKMTCreateContext``, ``D3DKMTRender``,
``D3DKMTPresent``, waiting for a packet from the CPU).

Calls that cost CPU time are generator functions for :mod:`wddmsim.sim` processes: use them with
``yield from``; the calling thread is busy for the modelled cost (``CpuCost.render`` /
``CpuCost.present``) before the packet reaches the scheduler. A failing call raises
:class:`~wddmsim.dxgkrnl.adapter.ApiError` with the NTSTATUS the application would see.

Spec: ddi-facts.md section 1 (steps 1-3), DESIGN.md section 2.
"""

from __future__ import annotations

from .adapter import Adapter
from .objects import Allocation, Context, Device, Process


class D3DKMT:
    """The thunk interface of one adapter."""

    def __init__(self, adapter: Adapter):
        self.adapter = adapter
        self.sim = adapter.sim

    def CreateProcess(self, name: str, priority_class: str = "normal") -> Process:
        return self.adapter.create_process(name, priority_class)

    def CreateDevice(self, process: Process) -> Device:
        return self.adapter.create_device(process)

    def CreateContext(self, device: Device, node: int, name: str = "", priority: int = 0) -> Context:
        return self.adapter.create_context(device, node, name, priority)

    def DestroyContext(self, context: Context) -> None:
        """Destroy ``context``: queued packets are cancelled, submitted ones finish first."""
        self.adapter.destroy_context(context)

    def CreateAllocation(self, device: Device, size: int, segment: str = "memory") -> Allocation:
        """Video memory of ``size`` bytes that prefers a ``segment`` kind ("memory" or "aperture")."""
        return self.adapter.create_allocation(device, size, segment)

    def Render(self, context: Context, command: bytes, allocations=(), patches=(), null_rendering: bool = False):
        """Submit a command buffer (generator): returns the packet's number in its context.

        ``null_rendering`` submits it with Flags.NullRendering: its fence completes, nothing runs."""
        cost = self.adapter.costs.render
        if cost:
            yield cost
        return self.adapter.render(context, command, allocations, patches, null_rendering=null_rendering).seq

    def Present(self, context: Context, source: Allocation, destination: Allocation, width: int, height: int,
                mode: str = "blt", sync_interval: int = 1, vidpn_source: int = 0):
        """Present ``source`` (generator): a ``width`` x ``height`` blt to ``destination``, or a flip
        (``mode`` "flip" / "flip_no_wait") with ``sync_interval`` as the FlipInterval."""
        start = self.sim.now
        cost = self.adapter.costs.present
        if cost:
            yield cost
        return self.adapter.present(context, source, destination, width, height, mode, sync_interval,
                                    vidpn_source, call_start=start).seq

    def PresentComposed(self, context: Context, command: bytes, allocations, patches, vidpn_source: int = 0):
        """A windowed present (generator): render ``command`` (a copy into the composition
        surface) with Flags.RedirectedPresent; the compositor shows it at the next vsync."""
        start = self.sim.now
        cost = self.adapter.costs.present
        if cost:
            yield cost
        return self.adapter.render(context, command, allocations, patches, redirected_present=vidpn_source,
                                   call_start=start).seq

    def WaitForPacket(self, context: Context, seq: int):
        """An event to ``yield``: it triggers when the context has retired packet ``seq``."""
        return self.adapter.wait_event(context, seq)
