"""The simulated GPU's command set: how packets are laid out, built, read back and listed.

A command buffer is a run of packets, little-endian and dword aligned. Each packet opens with a
32-bit header (bits 0..7 opcode, 8..15 flags, 16..31 length in dwords, header included) followed by
the opcode's fixed payload. The set is small and invented for the model, though shaped like real
front ends (AMD PM4, NVIDIA pushbuffer methods, tinygrad's HCQ queues): a stand-in for real work
(``WORK``), memory operations (``FILL``, ``COPY``), fences (``FENCE`` written by the GPU, ``WAIT``
polled by it, ``NATIVE_FENCE``: a native fence's CurrentValue written with the conditional
interrupt of hardware scheduling), display flips (``FLIP``), timestamps and a call into a second
buffer (``INDIRECT``);
three privileged packets drive the MMU (``SET_ADDRESS_SPACE``, ``UPDATE_PAGE_TABLE``,
``FLUSH_TLB``; see :mod:`.mmu`).

This module only knows bytes: the encoders (:func:`work`, :func:`fence`, ...) and the chainable
:class:`CommandBuffer` write packets; :func:`decode`, :func:`iter_commands` and :func:`disassemble`
read them, raising :class:`CommandError` for malformed ones. What a packet *does* and what it costs
in time is the engines' business (docs/gpu.md); the format is documented in docs/gpu-commands.md.
"""

from __future__ import annotations

import operator
import struct
from collections.abc import Iterator
from typing import NamedTuple

__all__ = [
    "NOP", "WORK", "FILL", "COPY", "FENCE", "WAIT", "FLIP", "TIMESTAMP", "INDIRECT",
    "SET_ADDRESS_SPACE", "UPDATE_PAGE_TABLE", "FLUSH_TLB", "NATIVE_FENCE",
    "OPCODE_NAMES", "PACKET_DWORDS", "RESERVED_OPCODES",
    "FENCE_INTERRUPT", "WAIT_GEQ", "WAIT_EQ", "WAIT_NEQ", "WAIT_COMPARE_MASK", "WAIT_32BIT",
    "FLIP_NO_WAIT",
    "FILL_DST", "COPY_SRC", "COPY_DST", "FENCE_ADDR", "WAIT_ADDR", "FLIP_SURFACE", "FLIP_SOURCE",
    "TIMESTAMP_ADDR", "INDIRECT_ADDR", "NATIVE_FENCE_ADDR", "NATIVE_FENCE_MONITORED",
    "HEADER_SIZE", "MAX_PACKET_DWORDS",
    "SET_ADDRESS_SPACE_ROOT", "UPDATE_PAGE_TABLE_ADDR", "UPDATE_PAGE_TABLE_ENTRIES", "FLUSH_TLB_ROOT",
    "PRIVILEGED_OPCODES", "PAGE_TABLE_ENTRIES",
    "header", "nop", "work", "fill", "copy", "fence", "wait", "flip", "timestamp", "indirect",
    "set_address_space", "update_page_table", "flush_tlb", "native_fence",
    "encode", "wait_holds",
    "CommandBuffer", "Command", "CommandError", "decode", "iter_commands", "disassemble",
]

# ---------------------------------------------------------------------------------- opcodes

NOP = 0x00
WORK = 0x01
FILL = 0x02
COPY = 0x03
FENCE = 0x04
WAIT = 0x05
FLIP = 0x06
TIMESTAMP = 0x07
INDIRECT = 0x08
# Privileged: the MMU's (docs/gpu.md, "Virtual addressing").
SET_ADDRESS_SPACE = 0x09
UPDATE_PAGE_TABLE = 0x0A
FLUSH_TLB = 0x0B
# Hardware scheduling: run by the context-management processor's side of an engine.
NATIVE_FENCE = 0x0C

OPCODE_NAMES: dict[int, str] = {
    NOP: "NOP", WORK: "WORK", FILL: "FILL", COPY: "COPY", FENCE: "FENCE", WAIT: "WAIT",
    FLIP: "FLIP", TIMESTAMP: "TIMESTAMP", INDIRECT: "INDIRECT",
    SET_ADDRESS_SPACE: "SET_ADDRESS_SPACE", UPDATE_PAGE_TABLE: "UPDATE_PAGE_TABLE",
    FLUSH_TLB: "FLUSH_TLB", NATIVE_FENCE: "NATIVE_FENCE",
}
#: Opcodes set aside for later and refused by the decoder (none at present).
RESERVED_OPCODES: frozenset[int] = frozenset()
#: Opcodes an engine runs only from the ring or from a buffer it fetched in physical mode.
PRIVILEGED_OPCODES = frozenset({SET_ADDRESS_SPACE, UPDATE_PAGE_TABLE, FLUSH_TLB})

# ---------------------------------------------------------------------------------- flags

FENCE_INTERRUPT = 0x01  # FENCE: raise the engine's interrupt after the write

WAIT_GEQ = 0  # WAIT flags bits 0..1: memory >= value
WAIT_EQ = 1  # memory == value
WAIT_NEQ = 2  # memory != value (3 is invalid)
WAIT_COMPARE_MASK = 0x03
WAIT_32BIT = 0x04  # WAIT: compare the u32 at addr instead of the u64

FLIP_NO_WAIT = 0x01  # FLIP: show the surface now instead of at the next vsync

# ---------------------------------------------------------------------------------- layout

HEADER_SIZE = 4
MAX_PACKET_DWORDS = 0xFFFF

# Byte offsets, from the packet start, of the u64 address fields (for patching).
FILL_DST = 4
COPY_SRC = 4
COPY_DST = 12
FENCE_ADDR = 4
WAIT_ADDR = 4
FLIP_SURFACE = 8
FLIP_SOURCE = 4  # u32: the display source, set by the driver at submission
TIMESTAMP_ADDR = 4
INDIRECT_ADDR = 4
SET_ADDRESS_SPACE_ROOT = 4
UPDATE_PAGE_TABLE_ADDR = 4  # the table's physical address
UPDATE_PAGE_TABLE_ENTRIES = 20  # where the inline u64 entries start
FLUSH_TLB_ROOT = 4
NATIVE_FENCE_ADDR = 4  # CurrentValue
NATIVE_FENCE_MONITORED = 20  # MonitoredValue

#: Entries in one page table (UPDATE_PAGE_TABLE: start_index + count may not exceed it).
PAGE_TABLE_ENTRIES = 512

# Whole packets, header included; "<" packs without padding.
_WORK_S = struct.Struct("<IQ")  # duration_ns
_FILL_S = struct.Struct("<IQQI")  # dst, size, pattern
_COPY_S = struct.Struct("<IQQQ")  # src, dst, size
_FENCE_S = struct.Struct("<IQQ")  # addr, value
_WAIT_S = struct.Struct("<IQQ")  # addr, value
_FLIP_S = struct.Struct("<IIQI")  # source, surface, interval
_TIMESTAMP_S = struct.Struct("<IQ")  # addr
_INDIRECT_S = struct.Struct("<IQI")  # addr, size
_SET_ADDRESS_SPACE_S = struct.Struct("<IQ")  # root
_UPDATE_PAGE_TABLE_S = struct.Struct("<IQII")  # table, start_index, count; then count u64 entries
_FLUSH_TLB_S = struct.Struct("<IQQQ")  # root, start, end
_NATIVE_FENCE_S = struct.Struct("<IQQQ")  # CurrentValue address, value, MonitoredValue address

# The fixed size of each opcode, in dwords (NOP, UPDATE_PAGE_TABLE: the minimum).
PACKET_DWORDS: dict[int, int] = {
    NOP: 1,
    WORK: _WORK_S.size // 4,
    FILL: _FILL_S.size // 4,
    COPY: _COPY_S.size // 4,
    FENCE: _FENCE_S.size // 4,
    WAIT: _WAIT_S.size // 4,
    FLIP: _FLIP_S.size // 4,
    TIMESTAMP: _TIMESTAMP_S.size // 4,
    INDIRECT: _INDIRECT_S.size // 4,
    SET_ADDRESS_SPACE: _SET_ADDRESS_SPACE_S.size // 4,
    UPDATE_PAGE_TABLE: _UPDATE_PAGE_TABLE_S.size // 4,
    FLUSH_TLB: _FLUSH_TLB_S.size // 4,
    NATIVE_FENCE: _NATIVE_FENCE_S.size // 4,
}

assert (_FILL_S.size, _COPY_S.size, _FLIP_S.size, _INDIRECT_S.size) == (24, 28, 20, 16)
assert (_SET_ADDRESS_SPACE_S.size, _UPDATE_PAGE_TABLE_S.size, _FLUSH_TLB_S.size) == (12, 20, 28)


def _hdr(opcode: int, flags: int, dwords: int) -> int:
    return opcode | flags << 8 | dwords << 16


_H_WORK = _hdr(WORK, 0, PACKET_DWORDS[WORK])
_H_FILL = _hdr(FILL, 0, PACKET_DWORDS[FILL])
_H_COPY = _hdr(COPY, 0, PACKET_DWORDS[COPY])
_H_FENCE = _hdr(FENCE, 0, PACKET_DWORDS[FENCE])
_H_WAIT = _hdr(WAIT, 0, PACKET_DWORDS[WAIT])
_H_FLIP = _hdr(FLIP, 0, PACKET_DWORDS[FLIP])
_H_TIMESTAMP = _hdr(TIMESTAMP, 0, PACKET_DWORDS[TIMESTAMP])
_H_INDIRECT = _hdr(INDIRECT, 0, PACKET_DWORDS[INDIRECT])
_H_SET_ADDRESS_SPACE = _hdr(SET_ADDRESS_SPACE, 0, PACKET_DWORDS[SET_ADDRESS_SPACE])
_H_FLUSH_TLB = _hdr(FLUSH_TLB, 0, PACKET_DWORDS[FLUSH_TLB])
_H_NATIVE_FENCE = _hdr(NATIVE_FENCE, 0, PACKET_DWORDS[NATIVE_FENCE])

_U32_MAX = 0xFFFF_FFFF
_U64_MAX = 0xFFFF_FFFF_FFFF_FFFF
_U32_S = struct.Struct("<I")
_U64_S = struct.Struct("<Q")

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


# ---------------------------------------------------------------------------------- decoding


class CommandError(ValueError):
    """A malformed packet. ``offset`` is where the packet starts in the data that was decoded."""

    def __init__(self, offset: int, reason: str):
        super().__init__(f"bad command at offset 0x{offset:x}: {reason}")
        self.offset = offset
        self.reason = reason


class Command(NamedTuple):
    """One decoded packet. ``length`` is in bytes; fields the opcode does not have are None.

    ``offset`` is where the packet started in the decoded data, so ``offset + length`` (``end``)
    is where the next one starts. INDIRECT puts its byte count in ``size``. SET_ADDRESS_SPACE has
    ``root``; FLUSH_TLB ``root``, ``va_start`` and ``va_end``; UPDATE_PAGE_TABLE puts the table's
    address in ``addr`` (also ``table``), has ``start_index`` and ``entries`` (a tuple of u64), and
    the bytes of entries it writes (8 per entry) in ``size``. NATIVE_FENCE has the CurrentValue
    address in ``addr``, the value in ``value`` and the MonitoredValue address in ``src`` (the word
    it reads; also ``monitored``).
    """

    opcode: int
    flags: int
    length: int
    duration_ns: int | None = None
    dst: int | None = None
    size: int | None = None
    pattern: int | None = None
    src: int | None = None
    addr: int | None = None
    value: int | None = None
    source: int | None = None
    surface: int | None = None
    interval: int | None = None
    offset: int | None = None
    root: int | None = None
    start_index: int | None = None
    entries: tuple[int, ...] | None = None
    va_start: int | None = None
    va_end: int | None = None

    @property
    def name(self) -> str:
        return OPCODE_NAMES.get(self.opcode, f"0x{self.opcode:02x}")

    @property
    def end(self) -> int:
        """Where the next packet starts."""
        return (self.offset or 0) + self.length

    @property
    def table(self) -> int | None:
        """UPDATE_PAGE_TABLE: the physical address of the table written."""
        return self.addr if self.opcode == UPDATE_PAGE_TABLE else None

    @property
    def monitored(self) -> int | None:
        """NATIVE_FENCE: the address of the MonitoredValue it compares with."""
        return self.src if self.opcode == NATIVE_FENCE else None

    @property
    def interrupt(self) -> bool:
        """FENCE: raise the interrupt after the write."""
        return self.opcode == FENCE and bool(self.flags & FENCE_INTERRUPT)

    @property
    def no_wait(self) -> bool:
        """FLIP: do not wait for vsync."""
        return self.opcode == FLIP and bool(self.flags & FLIP_NO_WAIT)

    @property
    def compare(self) -> int | None:
        """WAIT: WAIT_GEQ, WAIT_EQ or WAIT_NEQ."""
        return self.flags & WAIT_COMPARE_MASK if self.opcode == WAIT else None

    @property
    def bits(self) -> int | None:
        """WAIT: 32 or 64, the width of the memory word compared."""
        if self.opcode != WAIT:
            return None
        return 32 if self.flags & WAIT_32BIT else 64


_make = tuple.__new__
_unpack_header = _U32_S.unpack_from

# Payload-only structs for unpack_from(data, offset + 4).
_P_WORK = struct.Struct("<Q").unpack_from
_P_FILL = struct.Struct("<QQI").unpack_from
_P_COPY = struct.Struct("<QQQ").unpack_from
_P_PAIR = struct.Struct("<QQ").unpack_from  # FENCE and WAIT
_P_FLIP = struct.Struct("<IQI").unpack_from
_P_TIMESTAMP = _P_WORK
_P_INDIRECT = struct.Struct("<QI").unpack_from
_P_SET_ADDRESS_SPACE = _P_WORK
_P_UPDATE_PAGE_TABLE = struct.Struct("<QII").unpack_from
_P_FLUSH_TLB = _P_COPY

# The decoders build the Command tuple directly, every field in order (see Command):
# opcode, flags, length, duration_ns, dst, size, pattern, src, addr, value, source, surface,
# interval, offset, root, start_index, entries, va_start, va_end. The literal Nones keep the hot
# path (WORK, FENCE, INDIRECT) cheap.


def _d_nop(data, off, flags, length):
    return _make(Command, (NOP, flags, length, None, None, None, None, None, None, None, None, None, None,
                           off, None, None, None, None, None))


def _d_work(data, off, flags, length):
    (d,) = _P_WORK(data, off + 4)
    return _make(Command, (WORK, flags, length, d, None, None, None, None, None, None, None, None, None,
                           off, None, None, None, None, None))


def _d_fill(data, off, flags, length):
    dst, size, pattern = _P_FILL(data, off + 4)
    return _make(Command, (FILL, flags, length, None, dst, size, pattern, None, None, None, None, None, None,
                           off, None, None, None, None, None))


def _d_copy(data, off, flags, length):
    src, dst, size = _P_COPY(data, off + 4)
    return _make(Command, (COPY, flags, length, None, dst, size, None, src, None, None, None, None, None,
                           off, None, None, None, None, None))


def _d_fence(data, off, flags, length):
    addr, value = _P_PAIR(data, off + 4)
    return _make(Command, (FENCE, flags, length, None, None, None, None, None, addr, value, None, None, None,
                           off, None, None, None, None, None))


def _d_wait(data, off, flags, length):
    if flags & WAIT_COMPARE_MASK == WAIT_COMPARE_MASK:
        raise CommandError(off, "WAIT compare 3 is invalid (0 GEQ, 1 EQ, 2 NEQ)")
    addr, value = _P_PAIR(data, off + 4)
    return _make(Command, (WAIT, flags, length, None, None, None, None, None, addr, value, None, None, None,
                           off, None, None, None, None, None))


def _d_native_fence(data, off, flags, length):
    addr, value, monitored = _P_COPY(data, off + 4)
    return _make(Command, (NATIVE_FENCE, flags, length, None, None, None, None, monitored, addr, value, None, None,
                           None, off, None, None, None, None, None))


def _d_flip(data, off, flags, length):
    source, surface, interval = _P_FLIP(data, off + 4)
    return _make(Command, (FLIP, flags, length, None, None, None, None, None, None, None, source, surface, interval,
                           off, None, None, None, None, None))


def _d_timestamp(data, off, flags, length):
    (addr,) = _P_TIMESTAMP(data, off + 4)
    return _make(Command, (TIMESTAMP, flags, length, None, None, None, None, None, addr, None, None, None, None,
                           off, None, None, None, None, None))


def _d_indirect(data, off, flags, length):
    addr, size = _P_INDIRECT(data, off + 4)
    return _make(Command, (INDIRECT, flags, length, None, None, size, None, None, addr, None, None, None, None,
                           off, None, None, None, None, None))


def _d_set_address_space(data, off, flags, length):
    (root,) = _P_SET_ADDRESS_SPACE(data, off + 4)
    return _make(Command, (SET_ADDRESS_SPACE, flags, length, None, None, None, None, None, None, None, None, None,
                           None, off, root, None, None, None, None))


def _d_update_page_table(data, off, flags, length):
    fixed = _UPDATE_PAGE_TABLE_S.size
    if length < fixed:
        raise CommandError(off, f"UPDATE_PAGE_TABLE length {length // 4} dwords is shorter than its fixed part {fixed // 4}")
    table, start, count = _P_UPDATE_PAGE_TABLE(data, off + 4)
    if length != fixed + 8 * count:
        raise CommandError(off, f"UPDATE_PAGE_TABLE of {count} entries is {fixed // 4 + 2 * count} dwords, "
                                f"not {length // 4}")
    if start + count > PAGE_TABLE_ENTRIES:
        raise CommandError(off, f"UPDATE_PAGE_TABLE entries {start}..{start + count - 1} run past the table's "
                                f"{PAGE_TABLE_ENTRIES}")
    entries = struct.unpack_from(f"<{count}Q", data, off + fixed)
    return _make(Command, (UPDATE_PAGE_TABLE, flags, length, None, None, 8 * count, None, None, table, None, None,
                           None, None, off, None, start, entries, None, None))


def _d_flush_tlb(data, off, flags, length):
    root, start, end = _P_FLUSH_TLB(data, off + 4)
    return _make(Command, (FLUSH_TLB, flags, length, None, None, None, None, None, None, None, None, None, None,
                           off, root, None, None, start, end))


# opcode -> (fixed length in bytes or 0 for "any", decoder)
_DECODERS = {
    NOP: (0, _d_nop),
    WORK: (_WORK_S.size, _d_work),
    FILL: (_FILL_S.size, _d_fill),
    COPY: (_COPY_S.size, _d_copy),
    FENCE: (_FENCE_S.size, _d_fence),
    WAIT: (_WAIT_S.size, _d_wait),
    FLIP: (_FLIP_S.size, _d_flip),
    TIMESTAMP: (_TIMESTAMP_S.size, _d_timestamp),
    INDIRECT: (_INDIRECT_S.size, _d_indirect),
    SET_ADDRESS_SPACE: (_SET_ADDRESS_SPACE_S.size, _d_set_address_space),
    UPDATE_PAGE_TABLE: (0, _d_update_page_table),  # variable: checked by the decoder
    FLUSH_TLB: (_FLUSH_TLB_S.size, _d_flush_tlb),
    NATIVE_FENCE: (_NATIVE_FENCE_S.size, _d_native_fence),
}


_FIXED = {op: entry[0] for op, entry in _DECODERS.items()}  # 0: any length (NOP, UPDATE_PAGE_TABLE)
_DECODE = {op: entry[1] for op, entry in _DECODERS.items()}


def _refuse(offset: int, h: int, limit: int) -> CommandError:
    """The error for a header the fast path did not accept."""
    opcode = h & 0xFF
    length = (h >> 16) * 4
    if opcode in RESERVED_OPCODES:
        return CommandError(offset, f"reserved opcode 0x{opcode:02x} ({OPCODE_NAMES[opcode]})")
    if opcode not in _DECODERS:
        return CommandError(offset, f"unknown opcode 0x{opcode:02x}")
    name = OPCODE_NAMES[opcode]
    if length == 0:
        return CommandError(offset, f"{name} with length 0")
    fixed = _DECODERS[opcode][0]
    if fixed and length < fixed:
        return CommandError(offset, f"{name} length {length // 4} dwords is shorter than its fixed {fixed // 4}")
    if fixed and length != fixed:
        return CommandError(offset, f"{name} length {length // 4} dwords differs from its fixed {fixed // 4}")
    return CommandError(offset, f"{name} of {length} bytes runs past the end at 0x{limit:x}")


def decode(data: bytes | bytearray | memoryview, offset: int = 0, end: int | None = None) -> Command:
    """The packet that starts at byte ``offset`` of ``data`` (which must not run past ``end``).

    Raises :class:`CommandError` for a truncated header, an unknown or reserved opcode, a length of
    zero, a length other than the opcode's (NOP: any length from one dword; UPDATE_PAGE_TABLE: its
    five dwords plus two per entry), a packet running past ``end`` or the end of ``data``, a WAIT
    with compare 3, or an UPDATE_PAGE_TABLE whose entries run past the table's 512.
    """
    limit = len(data)
    if end is not None and end < limit:
        limit = end
    if offset < 0 or offset + 4 > limit:
        raise CommandError(offset, f"no room for a packet header (data ends at 0x{limit:x})")
    (h,) = _unpack_header(data, offset)
    length = (h >> 16) << 2
    fixed = _FIXED.get(h & 0xFF)
    if length == 0 or (fixed != length and fixed != 0) or offset + length > limit:
        raise _refuse(offset, h, limit)
    return _DECODE[h & 0xFF](data, offset, (h >> 8) & 0xFF, length)


def iter_commands(data: bytes | bytearray | memoryview, start: int = 0, end: int | None = None) -> Iterator[Command]:
    """Each packet from ``start`` up to ``end`` (default: the end of ``data``), in order."""
    limit = len(data) if end is None or end > len(data) else end
    offset = start
    while offset < limit:
        cmd = decode(data, offset, limit)
        yield cmd
        offset += cmd.length


#: Memos of :func:`decode_cached` and :func:`scan`, keyed by a small buffer's bytes: a workload
#: sends the same few command buffers again and again. Bounded (cleared when full), so memory
#: stays constant; a hit gives what decoding again would.
_MEMO_BYTES = 1024
_MEMO_ENTRIES = 4096
_DECODED: dict = {}
_SCANNED: dict = {}
_PACKETS: dict = {}  # see decode_packet


def decode_cached(data: bytes | bytearray | memoryview, offset: int = 0, end: int | None = None) -> Command:
    """:func:`decode`, memoized for immutable ``bytes`` of at most 1 KiB (a DMA buffer the engine
    fetched). The Command is immutable, so one decode serves every buffer with the same bytes."""
    if type(data) is not bytes or len(data) > _MEMO_BYTES:
        return decode(data, offset, end)
    key = (data, offset, end)
    cmd = _DECODED.get(key)
    if cmd is None:
        cmd = decode(data, offset, end)
        if len(_DECODED) >= _MEMO_ENTRIES:
            _DECODED.clear()
        _DECODED[key] = cmd
    return cmd


def decode_packet(data: bytes) -> Command:
    """``decode(data, 0)`` for ``data`` holding exactly the packet a reader found by its header
    (a ring fetch), memoized by the bytes themselves: a hit is what decoding these bytes again
    gives, so whatever bytes sit in memory are what runs. :func:`fence` records its packets here
    when it builds them."""
    cmd = _PACKETS.get(data)
    if cmd is None:
        cmd = decode(data, 0)
        if len(_PACKETS) >= _MEMO_ENTRIES:
            _PACKETS.clear()
        _PACKETS[data] = cmd
    return cmd


def scan(data: bytes) -> tuple[tuple[tuple[int, int], ...], CommandError | None]:
    """``((offset, opcode), ...)`` of each packet of ``data`` that decodes, in order, and the
    :class:`CommandError` that stopped the walk (None: every byte decoded), as :func:`iter_commands`
    walks it; memoized for buffers of at most 1 KiB."""
    hit = _SCANNED.get(data) if type(data) is bytes else None
    if hit is not None:
        return hit
    out = []
    error = None
    try:
        for cmd in iter_commands(data):
            out.append((cmd.offset, cmd.opcode))
    except CommandError as exc:
        error = exc
    hit = (tuple(out), error)
    if type(data) is bytes and len(data) <= _MEMO_BYTES:
        if len(_SCANNED) >= _MEMO_ENTRIES:
            _SCANNED.clear()
        _SCANNED[data] = hit
    return hit


def wait_holds(compare: int, current: int, value: int, bits: int = 64) -> bool:
    """Whether a WAIT with ``compare`` is satisfied by memory holding ``current``. A 32-bit GEQ
    counts across the wrap: memory is at or past ``value`` when it is less than 2**31 ahead of it
    (the distance a 32-bit fence's outstanding values keep, rule 99); 64-bit compares are plain."""
    if compare == WAIT_GEQ:
        if bits == 32:
            return value <= _U32_MAX and (current - value) & _U32_MAX < 0x8000_0000
        return current >= value
    if compare == WAIT_EQ:
        return current == value
    if compare == WAIT_NEQ:
        return current != value
    raise ValueError(f"compare={compare!r} is not WAIT_GEQ, WAIT_EQ or WAIT_NEQ")


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


# ---------------------------------------------------------------------------------- listing

_COMPARE_NAMES = {WAIT_GEQ: "geq", WAIT_EQ: "eq", WAIT_NEQ: "neq"}
_KNOWN_FLAGS = {FENCE: FENCE_INTERRUPT, WAIT: WAIT_COMPARE_MASK | WAIT_32BIT, FLIP: FLIP_NO_WAIT}
_SHOWN_ENTRIES = 4  # UPDATE_PAGE_TABLE: entries listed before "+N more"


def _describe(cmd: Command) -> str:
    op = cmd.opcode
    if op == NOP:
        text = "NOP" if cmd.length == 4 else f"NOP dwords={cmd.length // 4}"
    elif op == WORK:
        text = f"WORK duration_ns={cmd.duration_ns}"
    elif op == FILL:
        text = f"FILL dst=0x{cmd.dst:x} size={cmd.size} pattern=0x{cmd.pattern:08x}"
    elif op == COPY:
        text = f"COPY src=0x{cmd.src:x} dst=0x{cmd.dst:x} size={cmd.size}"
    elif op == FENCE:
        text = f"FENCE addr=0x{cmd.addr:x} value={cmd.value}"
        if cmd.flags & FENCE_INTERRUPT:
            text += " +irq"
    elif op == WAIT:
        text = f"WAIT addr=0x{cmd.addr:x} value={cmd.value} cmp={_COMPARE_NAMES[cmd.flags & WAIT_COMPARE_MASK]}"
        if cmd.flags & WAIT_32BIT:
            text += " +u32"
    elif op == FLIP:
        text = f"FLIP source={cmd.source} surface=0x{cmd.surface:x} interval={cmd.interval}"
        if cmd.flags & FLIP_NO_WAIT:
            text += " +nowait"
    elif op == TIMESTAMP:
        text = f"TIMESTAMP addr=0x{cmd.addr:x}"
    elif op == INDIRECT:
        text = f"INDIRECT addr=0x{cmd.addr:x} size={cmd.size}"
    elif op == SET_ADDRESS_SPACE:
        text = f"SET_ADDRESS_SPACE root=0x{cmd.root:x}" + (" (physical)" if cmd.root == 0 else "")
    elif op == UPDATE_PAGE_TABLE:
        shown = " ".join(f"0x{e:x}" for e in cmd.entries[:_SHOWN_ENTRIES])
        if len(cmd.entries) > _SHOWN_ENTRIES:
            shown += f" +{len(cmd.entries) - _SHOWN_ENTRIES} more"
        text = f"UPDATE_PAGE_TABLE table=0x{cmd.addr:x} start={cmd.start_index} count={len(cmd.entries)} [{shown}]"
    elif op == NATIVE_FENCE:
        text = f"NATIVE_FENCE addr=0x{cmd.addr:x} value={cmd.value} monitored=0x{cmd.src:x}"
    else:  # FLUSH_TLB
        root = "all" if cmd.root == 0 else f"0x{cmd.root:x}"
        text = f"FLUSH_TLB root={root} start=0x{cmd.va_start:x} end=0x{cmd.va_end:x}"
    unknown = cmd.flags & ~_KNOWN_FLAGS.get(op, 0)
    if unknown:
        text += f" flags=0x{unknown:02x}"
    return text


def disassemble(data: bytes | bytearray | memoryview, base: int = 0, strict: bool = True) -> list[str]:
    """One line per packet: its address (``base`` + offset) and what it says.

    ``0x0010  FENCE addr=0x1000 value=7 +irq``. Flags bits the opcode does not define are shown as
    ``flags=0x..``. A malformed packet raises :class:`CommandError` (offset relative to ``data``);
    with ``strict=False`` it ends the listing with a line ``0x....  ?? <reason>`` instead.
    """
    lines = []
    offset = 0
    limit = len(data)
    while offset < limit:
        try:
            cmd = decode(data, offset, limit)
        except CommandError as e:
            if strict:
                raise
            lines.append(f"0x{base + offset:04x}  ?? {e.reason}")
            break
        lines.append(f"0x{base + offset:04x}  {_describe(cmd)}")
        offset += cmd.length
    return lines
