"""What a user-mode display driver is asked to do, and what it answers.

A WDDM driver is a pair: the kernel-mode miniport (``DxgkDdi*``, :mod:`wddmsim.ddi.interface`) and
a user-mode driver the graphics runtime loads into every process that uses the adapter. The
runtime hands the user-mode driver the application's work; the user-mode driver turns it into
command buffers in its GPU's command set, with whatever private data its kernel-mode half expects,
and the runtime gives those to the kernel:

- without GPU virtual addressing, through the render callback (``pfnRenderCb``, which reaches the
  kernel-mode driver's ``DxgkDdiRender``): the command buffer carries no addresses yet, and a patch
  location list says where each allocation's address goes;
- with GPU virtual addressing (WDDM 2.0 and later), through the submit callback
  (``pfnSubmitCommandCb``, or a hardware queue's submit): the buffer holds the allocations' GPU
  virtual addresses, it may start with a wait on a monitored fence and end with a monitored fence's
  write, and on a hardware queue whose node does not release progress fences itself its last
  instruction writes the queue's progress fence. The private data travels with it to
  ``DxgkDdiSubmitCommandVirtual`` or ``DxgkDdiSubmitCommandToHwQueue``.

This module defines the model's vocabulary for that exchange: the operations an application asks
for (:class:`Work`, :class:`Fill`, :class:`Copy`, :class:`Timestamp`, :class:`Write`), the fence
writes and waits around them (:class:`FenceValue`), the request (:class:`BufferRequest`), the answer
(:class:`CommandBuffer`) and the protocol a user-mode driver implements
(:class:`UserModeDriver`). A driver pair names its user-mode half with the kernel-mode class's
``UserModeDriverName`` (``"module:Class"``; the model's stand-in for the ``UserModeDriverName``
registry value a driver's INF sets); without one, the reference user-mode driver is used.

Microsoft's pages: "User-mode display drivers" and "Submitting a command buffer"
(https://learn.microsoft.com/windows-hardware/drivers/display/), d3dumddi/ns-d3dumddi-_d3dddicb_render
and d3dumddi/ns-d3dumddi-_d3dddicb_submitcommand (https://learn.microsoft.com/windows-hardware/drivers/ddi/).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Protocol, Union


@dataclass(frozen=True)
class Target:
    """Where an operation reads or writes: ``offset`` bytes into ``allocation`` (an allocation the
    application created), or the raw GPU address ``address`` when ``allocation`` is None (a
    deliberately bad address, in fault-injection tests)."""

    allocation: Any = None
    offset: int = 0
    address: int = 0


@dataclass(frozen=True)
class Work:
    """``ns`` nanoseconds of GPU work (a draw or a dispatch, as far as the model cares)."""

    ns: int


@dataclass(frozen=True)
class Fill:
    """Fill ``size`` bytes at ``dst`` with the 32-bit ``pattern``."""

    dst: Target
    size: int
    pattern: int


@dataclass(frozen=True)
class Copy:
    """Copy ``size`` bytes from ``src`` to ``dst``."""

    src: Target
    dst: Target
    size: int


@dataclass(frozen=True)
class Timestamp:
    """Write the GPU's time (ns) as a 64-bit value at ``dst``."""

    dst: Target


@dataclass(frozen=True)
class Write:
    """Write the 64-bit ``value`` at ``dst`` (no interrupt)."""

    dst: Target
    value: int


Operation = Union[Work, Fill, Copy, Timestamp, Write]


@dataclass(frozen=True)
class FenceValue:
    """A monitored fence as the GPU sees it: its GPU virtual address in the submitting process,
    a value, and the width the GPU compares and writes (32 for a No64BitAtomics adapter)."""

    address: int
    value: int
    bits: int = 64


@dataclass(frozen=True)
class NativeFenceValue:
    """A native GPU fence as the GPU sees it: the GPU virtual addresses of its CurrentValue (which
    the buffer writes) and of its MonitoredValue (which the GPU's scheduler compares the value
    with), in the submitting process, and the value."""

    address: int
    value: int
    monitored: int


@dataclass(frozen=True, init=False)
class BufferRequest:
    """One command buffer the runtime asks for.

    ``ops``: the work, in order. ``virtual``: GPU virtual addressing (allocations' ``va`` go into
    the buffer, no patch list) or not (a patch list for the kernel to fill in). ``wait``: the buffer
    first waits until that fence reaches the value (greater or equal). ``signal``: the buffer ends
    with the write of that value (a :class:`NativeFenceValue`: a native fence write). ``progress``: after everything, the write of the hardware queue's
    progress fence (only when the node leaves it to the buffer). ``context``: the runtime's handle
    of the context the buffer is for."""

    ops: tuple
    virtual: bool = False
    wait: FenceValue | None = None
    signal: FenceValue | NativeFenceValue | None = None
    progress: FenceValue | None = None
    context: int = 0

    def __init__(self, ops: tuple, virtual: bool = False, wait: FenceValue | None = None,
                 signal: FenceValue | NativeFenceValue | None = None, progress: FenceValue | None = None,
                 context: int = 0):
        # One per command buffer: the fields go straight into the instance dictionary, as the
        # generated frozen __init__ would put them, without its six object.__setattr__ calls.
        d = self.__dict__
        d["ops"] = ops
        d["virtual"] = virtual
        d["wait"] = wait
        d["signal"] = signal
        d["progress"] = progress
        d["context"] = context


@dataclass(frozen=True, init=False)
class CommandBuffer:
    """A user-mode driver's answer: the ``commands`` in its GPU's command set, the
    ``allocations`` the buffer uses (the allocation list, in order), the ``patches``
    ``(allocation index, offset in commands, offset in the allocation)`` where the kernel writes
    an allocation's address (physical addressing only), and the ``private`` data for the
    kernel-mode driver (GPU virtual addressing; empty when the driver has none)."""

    commands: bytes
    allocations: tuple = ()
    patches: tuple = ()
    private: bytes = b""

    def __init__(self, commands: bytes, allocations: tuple = (), patches: tuple = (), private: bytes = b""):
        # One per command buffer (see BufferRequest.__init__).
        d = self.__dict__
        d["commands"] = commands
        d["allocations"] = allocations
        d["patches"] = patches
        d["private"] = private


@dataclass(frozen=True)
class UmdAdapterInfo:
    """What a user-mode driver learns about its adapter when the runtime opens it: the bytes its
    kernel-mode half answered to ``DXGKQAITYPE_UMDRIVERPRIVATE`` (empty when it answered none) and
    the driver pair's settings table from the scenario."""

    private_driver_data: bytes = b""
    settings: Mapping[str, Any] = field(default_factory=dict)


class UserModeDriver(Protocol):
    """The user-mode half of a driver pair.

    Constructed once per adapter with a :class:`UmdAdapterInfo`. ``build`` turns a
    :class:`BufferRequest` into a :class:`CommandBuffer`; it is called in the application's thread,
    costs no modelled time of its own (the runtime's calls do) and must not keep the request.
    It raises ``ValueError`` for a request it cannot build (an operation its GPU has no command for);
    the application's call then fails."""

    def __init__(self, info: UmdAdapterInfo) -> None: ...

    def build(self, request: BufferRequest) -> CommandBuffer: ...
