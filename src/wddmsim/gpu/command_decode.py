"""Reading the simulated GPU's packets: the decoder, the packet walk and their memos.

:func:`decode` reads the packet at an offset into a :class:`Command` (an immutable named tuple;
fields the opcode does not have are None), refusing a malformed one with a :class:`CommandError`
that says where and why; :func:`iter_commands` walks a buffer packet by packet. The engines read
through the memoized forms, :func:`decode_cached` (a fetched DMA buffer's packets) and
:func:`decode_packet` (a ring packet, keyed by its bytes), and the verifier through :func:`scan`;
each memo is bounded and a hit is what decoding again would give. Every name here is importable
from :mod:`.commands`.

Spec: docs/gpu-commands.md ("Packet format", "Errors").
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from typing import NamedTuple

from .command_table import (
    COPY, FENCE, FENCE_INTERRUPT, FILL, FLIP, FLIP_NO_WAIT, FLUSH_TLB, INDIRECT, NATIVE_FENCE, NOP, OPCODE_NAMES,
    PAGE_TABLE_ENTRIES, RESERVED_OPCODES, SET_ADDRESS_SPACE, TIMESTAMP, UPDATE_PAGE_TABLE, WAIT, WAIT_32BIT,
    WAIT_COMPARE_MASK, WORK, _COPY_S, _FENCE_S, _FILL_S, _FLIP_S, _FLUSH_TLB_S, _INDIRECT_S, _NATIVE_FENCE_S,
    _SET_ADDRESS_SPACE_S, _TIMESTAMP_S, _U32_S, _UPDATE_PAGE_TABLE_S, _WAIT_S, _WORK_S,
)


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
