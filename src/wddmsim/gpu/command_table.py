"""The simulated GPU's command table: opcodes, flags, field offsets and packet sizes.

Each opcode's number and name (:data:`OPCODE_NAMES`), the privileged and reserved ones, the flag
bits each opcode defines, the byte offsets of the address fields a driver patches, each packet's
fixed size in dwords (:data:`PACKET_DWORDS`), and the header word (bits 0..7 opcode, 8..15 flags,
16..31 length in dwords, header included) with the ``struct`` layout of each whole packet, which
:mod:`.command_encode` packs and :mod:`.command_decode` reads. Every name here is importable from
:mod:`.commands`.

Spec: docs/gpu-commands.md ("Packet format", "The opcodes").
"""

from __future__ import annotations

import struct

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
