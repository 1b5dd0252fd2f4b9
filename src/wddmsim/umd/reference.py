"""The reference user-mode driver: the user-mode half of :class:`wddmsim.kmd.ReferenceDriver`.

It encodes each operation as one packet of the GPU's command set (docs/gpu-commands.md):
:class:`~.interface.Work` as WORK, :class:`~.interface.Fill` as FILL, :class:`~.interface.Copy` as
COPY, :class:`~.interface.Timestamp` as TIMESTAMP and :class:`~.interface.Write` as a FENCE without
interrupt. With physical addressing an allocation's address is left 0 and a patch location says
where it goes (the allocation list holds each allocation once, in order of first use); with GPU
virtual addressing the allocation's GPU virtual address is written in place. Around the work: a
WAIT (greater or equal; 32-bit on a No64BitAtomics fence) first, the fence write with interrupt
last (a NATIVE_FENCE for a native fence: CurrentValue, with the MonitoredValue the GPU compares
with), and the progress-fence write after it.

Its private data, for GPU virtual addressing only, is one 16-byte record: the magic its
kernel-mode half answers to ``DXGKQAITYPE_UMDRIVERPRIVATE`` (``RWMD``), the context handle, the
buffer's size and the size of the application's part. The kernel-mode half checks the magic and
refuses a buffer without it (STATUS_INVALID_PARAMETER).
"""

from __future__ import annotations

import struct

from ..gpu import commands as C
from .interface import (BufferRequest, CommandBuffer, Copy, Fill, NativeFenceValue, Timestamp, UmdAdapterInfo, Work,
                        Write)

#: The record's magic when the kernel-mode half tells none ("RWMD").
DEFAULT_MAGIC = 0x444D_5752
_RECORD = struct.Struct("<IIII")
U32 = 0xFFFF_FFFF


class ReferenceUmd:
    """Builds command buffers for the GPU model (see the module doc)."""

    def __init__(self, info: UmdAdapterInfo | None = None):
        data = info.private_driver_data if info is not None else b""
        self.magic = struct.unpack_from("<I", data)[0] if len(data) >= 4 else DEFAULT_MAGIC
        self.buffers = 0  # command buffers built

    def build(self, request: BufferRequest) -> CommandBuffer:
        virtual = request.virtual
        buf = bytearray()
        allocations: list = []
        where: dict[int, int] = {}
        patches: list = []

        def address(target, field_offset: int) -> int:
            """The address to encode for ``target``; a patch location for physical allocations."""
            alloc = target.allocation
            if alloc is None:
                return target.address
            if virtual:
                return alloc.va + target.offset
            i = where.get(id(alloc))
            if i is None:
                i = where[id(alloc)] = len(allocations)
                allocations.append(alloc)
            patches.append((i, len(buf) + field_offset, target.offset))
            return 0

        w = request.wait
        if w is not None:
            buf += C.wait(w.address, w.value & U32 if w.bits == 32 else w.value, bits=w.bits)
        start = len(buf)
        for op in request.ops:
            kind = type(op)
            if kind is Work:
                buf += C.work(max(0, int(op.ns)))
            elif kind is Fill:
                buf += C.fill(address(op.dst, C.FILL_DST), op.size, op.pattern)
            elif kind is Copy:
                src = address(op.src, C.COPY_SRC)
                buf += C.copy(src, address(op.dst, C.COPY_DST), op.size)
            elif kind is Timestamp:
                buf += C.timestamp(address(op.dst, C.TIMESTAMP_ADDR))
            elif kind is Write:
                buf += C.fence(address(op.dst, C.FENCE_ADDR), op.value)
            else:
                raise ValueError(f"the reference user-mode driver has no command for {kind.__name__}")
        app = len(buf) - start
        for f in (request.signal, request.progress):
            if type(f) is NativeFenceValue:
                buf += C.native_fence(f.address, f.value, f.monitored)
            elif f is not None:
                buf += C.fence(f.address, f.value & U32 if f.bits == 32 else f.value, interrupt=True)
        private = _RECORD.pack(self.magic, request.context & U32, len(buf), app) if virtual else b""
        self.buffers += 1
        return CommandBuffer(bytes(buf), tuple(allocations), tuple(patches), private)
