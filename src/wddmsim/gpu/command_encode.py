"""Writing the simulated GPU's packets: the encoders, the chainable command buffer, and encode.

One function per opcode (:func:`work`, :func:`fence`, ...) returns the packet's bytes after
checking that each field fits its width (a ``TypeError`` for a value that is not an integer, a
``ValueError`` naming the field for one that does not fit); :class:`CommandBuffer` chains them
into a buffer and patches address fields later; :func:`encode` gives the bytes of a decoded
:class:`~wddmsim.gpu.command_decode.Command` back. :func:`fence` also records the packet it built
in :mod:`.command_decode`'s ring-packet memo, so that the engine's fetch of a new fence value
decodes nothing. Every name here is importable from :mod:`.commands`.

Spec: docs/gpu-commands.md ("The opcodes", "The Python API").
"""

from __future__ import annotations

import operator
import struct

from .command_decode import _MEMO_ENTRIES, _PACKETS, Command, CommandError, _make
from .command_table import (
    COPY, FENCE, FENCE_INTERRUPT, FILL, FLIP, FLIP_NO_WAIT, FLUSH_TLB, INDIRECT, MAX_PACKET_DWORDS, NATIVE_FENCE,
    NOP, PACKET_DWORDS, PAGE_TABLE_ENTRIES, SET_ADDRESS_SPACE, TIMESTAMP, UPDATE_PAGE_TABLE, WAIT, WAIT_32BIT,
    WAIT_EQ, WAIT_GEQ, WAIT_NEQ, WORK, _COPY_S, _FENCE_S, _FILL_S, _FLIP_S, _FLUSH_TLB_S, _H_COPY, _H_FENCE,
    _H_FILL, _H_FLIP, _H_FLUSH_TLB, _H_INDIRECT, _H_NATIVE_FENCE, _H_SET_ADDRESS_SPACE, _H_TIMESTAMP, _H_WAIT,
    _H_WORK, _INDIRECT_S, _NATIVE_FENCE_S, _SET_ADDRESS_SPACE_S, _TIMESTAMP_S, _U32_MAX, _U32_S, _U64_MAX, _U64_S,
    _UPDATE_PAGE_TABLE_S, _WAIT_S, _WORK_S, _hdr,
)

# ---------------------------------------------------------------------------------- encoding


def _u(name: str, value: int, top: int, width: str) -> int:
    if type(value) is int and 0 <= value <= top:
        return value  # the common case, without the index conversion
    try:
        value = operator.index(value)
    except TypeError:
        raise TypeError(f"{name} must be an integer, not {type(value).__name__}") from None
    if not 0 <= value <= top:
        raise ValueError(f"{name}={value} does not fit in a {width}")
    return value


def _u32(name: str, value: int) -> int:
    if type(value) is int and 0 <= value <= _U32_MAX:
        return value
    return _u(name, value, _U32_MAX, "u32")


def _u64(name: str, value: int) -> int:
    if type(value) is int and 0 <= value <= _U64_MAX:
        return value
    return _u(name, value, _U64_MAX, "u64")


def _compare_flags(compare: int, bits: int) -> int:
    if compare not in (WAIT_GEQ, WAIT_EQ, WAIT_NEQ):
        raise ValueError(f"compare={compare!r} is not WAIT_GEQ, WAIT_EQ or WAIT_NEQ")
    if bits == 64:
        return compare
    if bits == 32:
        return compare | WAIT_32BIT
    raise ValueError(f"bits={bits!r} is not 32 or 64")


def header(opcode: int, flags: int, dwords: int) -> int:
    """The 32-bit header word of a packet (no check that the opcode exists)."""
    _u("opcode", opcode, 0xFF, "u8")
    _u("flags", flags, 0xFF, "u8")
    _u("dwords", dwords, MAX_PACKET_DWORDS, "u16")
    return _hdr(opcode, flags, dwords)


def nop(dwords: int = 1) -> bytes:
    """A NOP ``dwords`` long (1 .. 65535), payload zero: padding."""
    dwords = _u("dwords", dwords, MAX_PACKET_DWORDS, "u16")
    if dwords < 1:
        raise ValueError("dwords=0: a NOP is at least its header")
    return (dwords << 16).to_bytes(4, "little") + bytes(4 * (dwords - 1))


def work(duration_ns: int) -> bytes:
    """Keep the engine busy for ``duration_ns`` nanoseconds."""
    if type(duration_ns) is not int or not 0 <= duration_ns <= _U64_MAX:  # (the plain int passes inline)
        duration_ns = _u64("duration_ns", duration_ns)
    return _WORK_S.pack(_H_WORK, duration_ns)


def fill(dst: int, size: int, pattern: int) -> bytes:
    """Write the little-endian u32 ``pattern`` repeatedly over ``size`` bytes at ``dst``."""
    return _FILL_S.pack(_H_FILL, _u64("dst", dst), _u64("size", size), _u32("pattern", pattern))


def copy(src: int, dst: int, size: int) -> bytes:
    """Copy ``size`` bytes from ``src`` to ``dst`` (memmove semantics)."""
    return _COPY_S.pack(_H_COPY, _u64("src", src), _u64("dst", dst), _u64("size", size))


def fence(addr: int, value: int, interrupt: bool = False) -> bytes:
    """Write the u64 ``value`` at ``addr``; with ``interrupt`` raise the engine's interrupt after."""
    flags = FENCE_INTERRUPT if interrupt else 0
    if type(addr) is not int or not 0 <= addr <= _U64_MAX:  # (the plain int passes inline)
        addr = _u64("addr", addr)
    if type(value) is not int or not 0 <= value <= _U64_MAX:
        value = _u64("value", value)
    data = _FENCE_S.pack(_H_FENCE | flags << 8, addr, value)
    # What decode_packet(data) will give (a ring's FENCE carries a new value every time).
    if len(_PACKETS) >= _MEMO_ENTRIES:
        _PACKETS.clear()
    _PACKETS[data] = _make(Command, (FENCE, flags, _FENCE_S.size, None, None, None, None, None, addr, value, None,
                                     None, None, 0, None, None, None, None, None))
    return data


def wait(addr: int, value: int, compare: int = WAIT_GEQ, bits: int = 64) -> bytes:
    """Stall the engine until the u64 (or, with ``bits=32``, u32) at ``addr`` compares true."""
    flags = _compare_flags(compare, bits)
    value = _u32("value", value) if bits == 32 else _u64("value", value)
    return _WAIT_S.pack(_H_WAIT | flags << 8, _u64("addr", addr), value)


def native_fence(addr: int, value: int, monitored: int) -> bytes:
    """Write the u64 ``value`` at ``addr`` (a native fence's CurrentValue); the context-management
    processor then raises the CPU interrupt only if ``value`` is above the u64 at ``monitored``
    (the fence's MonitoredValue)."""
    return _NATIVE_FENCE_S.pack(_H_NATIVE_FENCE, _u64("addr", addr), _u64("value", value),
                                _u64("monitored", monitored))


def flip(source: int, surface: int, interval: int, no_wait: bool = False) -> bytes:
    """Show ``surface`` on display ``source`` (at the next vsync unless ``no_wait``)."""
    h = _H_FLIP | (FLIP_NO_WAIT << 8 if no_wait else 0)
    return _FLIP_S.pack(h, _u32("source", source), _u64("surface", surface), _u32("interval", interval))


def timestamp(addr: int) -> bytes:
    """Write the GPU time in nanoseconds as a u64 at ``addr``."""
    return _TIMESTAMP_S.pack(_H_TIMESTAMP, _u64("addr", addr))


def indirect(addr: int, size: int) -> bytes:
    """Run the ``size`` bytes of commands at ``addr``, then carry on after this packet."""
    if type(addr) is not int or not 0 <= addr <= _U64_MAX:  # (the plain int passes inline)
        addr = _u64("addr", addr)
    if type(size) is not int or not 0 <= size <= _U32_MAX:
        size = _u32("size", size)
    return _INDIRECT_S.pack(_H_INDIRECT, addr, size)


def set_address_space(root: int) -> bytes:
    """Privileged: from here on the engine's addresses are virtual, in the address space whose
    root table is at physical address ``root`` (0: back to physical addressing)."""
    return _SET_ADDRESS_SPACE_S.pack(_H_SET_ADDRESS_SPACE, _u64("root", root))


def update_page_table(table: int, start_index: int, entries) -> bytes:
    """Privileged: write the u64 ``entries`` into the page table at physical address ``table``,
    from entry ``start_index`` on. ``start_index + len(entries)`` may not exceed 512
    (:class:`CommandError`, a ``ValueError``)."""
    table = _u64("table", table)
    start_index = _u32("start_index", start_index)
    values = entries if type(entries) is list else list(entries)
    count = len(values)
    try:
        packed = struct.pack(f"<{count}Q", *values)
    except (struct.error, TypeError):
        packed = None
    if packed is None:
        values = [_u64("entries[]", e) for e in values]  # names a bad entry
        packed = struct.pack(f"<{count}Q", *values)
    if start_index + count > PAGE_TABLE_ENTRIES:
        raise CommandError(0, f"start_index={start_index} + {count} entries run past the table's {PAGE_TABLE_ENTRIES}")
    dwords = PACKET_DWORDS[UPDATE_PAGE_TABLE] + 2 * count
    return _UPDATE_PAGE_TABLE_S.pack(_hdr(UPDATE_PAGE_TABLE, 0, dwords), table, start_index, count) + packed


def flush_tlb(root: int, start: int, end: int) -> bytes:
    """Privileged: drop the TLB's translations of virtual ``[start, end)`` in the address space
    rooted at ``root`` (0: in every address space)."""
    return _FLUSH_TLB_S.pack(_H_FLUSH_TLB, _u64("root", root), _u64("start", start), _u64("end", end))


# ---------------------------------------------------------------------------------- builder


class CommandBuffer:
    """Builds a command buffer packet by packet; every packet method returns ``self``.

    ``cb = CommandBuffer().wait(0x1000, 3).copy(0x2000, 0x3000, 64).fence(0x1000, 4, interrupt=True)``

    ``data`` is the bytes so far, ``len(cb)`` their length, ``offsets`` where each packet starts.
    :meth:`mark` gives the offset the next packet will start at, for patching its address fields
    later (``off = cb.mark(); cb.copy(0, 0, n); cb.patch_u64(off + COPY_SRC, src)``).
    """

    __slots__ = ("_buf", "offsets")

    def __init__(self) -> None:
        self._buf = bytearray()
        self.offsets: list[int] = []

    def _add(self, packet: bytes) -> CommandBuffer:
        self.offsets.append(len(self._buf))
        self._buf += packet
        return self

    @property
    def data(self) -> bytes:
        return bytes(self._buf)

    def __bytes__(self) -> bytes:
        return bytes(self._buf)

    def __len__(self) -> int:
        return len(self._buf)

    def __repr__(self) -> str:
        return f"<CommandBuffer {len(self.offsets)} packets, {len(self._buf)} bytes>"

    def mark(self) -> int:
        """The byte offset where the next packet will start."""
        return len(self._buf)

    def patch_u32(self, offset: int, value: int) -> CommandBuffer:
        """Overwrite the u32 at byte ``offset`` of the buffer built so far."""
        return self._patch(offset, value, _U32_S, _u32)

    def patch_u64(self, offset: int, value: int) -> CommandBuffer:
        """Overwrite the u64 at byte ``offset`` of the buffer built so far."""
        return self._patch(offset, value, _U64_S, _u64)

    def _patch(self, offset: int, value: int, word: struct.Struct, fits) -> CommandBuffer:
        """Overwrite the little-endian ``word`` at ``offset`` with ``value``, checked by ``fits``."""
        if not 0 <= offset <= len(self._buf) - word.size:
            raise ValueError(f"offset {offset} is outside the buffer ({len(self._buf)} bytes)")
        word.pack_into(self._buf, offset, fits("value", value))
        return self

    def nop(self, dwords: int = 1) -> CommandBuffer:
        return self._add(nop(dwords))

    def work(self, duration_ns: int) -> CommandBuffer:
        return self._add(work(duration_ns))

    def fill(self, dst: int, size: int, pattern: int) -> CommandBuffer:
        return self._add(fill(dst, size, pattern))

    def copy(self, src: int, dst: int, size: int) -> CommandBuffer:
        return self._add(copy(src, dst, size))

    def fence(self, addr: int, value: int, interrupt: bool = False) -> CommandBuffer:
        return self._add(fence(addr, value, interrupt))

    def wait(self, addr: int, value: int, compare: int = WAIT_GEQ, bits: int = 64) -> CommandBuffer:
        return self._add(wait(addr, value, compare, bits))

    def native_fence(self, addr: int, value: int, monitored: int) -> CommandBuffer:
        return self._add(native_fence(addr, value, monitored))

    def flip(self, source: int, surface: int, interval: int, no_wait: bool = False) -> CommandBuffer:
        return self._add(flip(source, surface, interval, no_wait))

    def timestamp(self, addr: int) -> CommandBuffer:
        return self._add(timestamp(addr))

    def indirect(self, addr: int, size: int) -> CommandBuffer:
        return self._add(indirect(addr, size))

    def set_address_space(self, root: int) -> CommandBuffer:
        return self._add(set_address_space(root))

    def update_page_table(self, table: int, start_index: int, entries) -> CommandBuffer:
        return self._add(update_page_table(table, start_index, entries))

    def flush_tlb(self, root: int, start: int, end: int) -> CommandBuffer:
        return self._add(flush_tlb(root, start, end))


def encode(cmd: Command) -> bytes:
    """The bytes of a decoded packet (flags bits this model does not define are kept)."""
    op = cmd.opcode
    if op == NOP:
        packet = nop(cmd.length // 4)
    elif op == WORK:
        packet = work(cmd.duration_ns)
    elif op == FILL:
        packet = fill(cmd.dst, cmd.size, cmd.pattern)
    elif op == COPY:
        packet = copy(cmd.src, cmd.dst, cmd.size)
    elif op == FENCE:
        packet = fence(cmd.addr, cmd.value)
    elif op == WAIT:
        packet = _WAIT_S.pack(_H_WAIT, _u64("addr", cmd.addr), _u64("value", cmd.value))
    elif op == FLIP:
        packet = flip(cmd.source, cmd.surface, cmd.interval)
    elif op == TIMESTAMP:
        packet = timestamp(cmd.addr)
    elif op == INDIRECT:
        packet = indirect(cmd.addr, cmd.size)
    elif op == SET_ADDRESS_SPACE:
        packet = set_address_space(cmd.root)
    elif op == UPDATE_PAGE_TABLE:
        packet = update_page_table(cmd.addr, cmd.start_index, cmd.entries)
    elif op == FLUSH_TLB:
        packet = flush_tlb(cmd.root, cmd.va_start, cmd.va_end)
    elif op == NATIVE_FENCE:
        packet = native_fence(cmd.addr, cmd.value, cmd.src)
    else:
        raise ValueError(f"cannot encode opcode 0x{op:02x}")
    flags = _u("flags", cmd.flags, 0xFF, "u8")
    return packet[:1] + bytes((flags,)) + packet[2:]
