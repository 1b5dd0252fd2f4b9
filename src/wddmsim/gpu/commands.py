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

These modules only know bytes, one job each: :mod:`.command_table` is the command table (opcodes,
flags, field offsets, packet sizes); :mod:`.command_encode` writes packets (the encoders
:func:`work`, :func:`fence`, ..., the chainable :class:`CommandBuffer`, :func:`encode`);
:mod:`.command_decode` reads them (:func:`decode`, :func:`iter_commands` and their memoized forms
for the engines), raising :class:`CommandError` for malformed ones; and this module lists them
(:func:`disassemble`), says when a WAIT holds (:func:`wait_holds`) and is where every one of those
names is imported from. What a packet *does* and what it costs in time is the engines' business
(docs/gpu.md); the format is documented in docs/gpu-commands.md.
"""

from __future__ import annotations

from .command_decode import (  # noqa: F401 (importable from here)
    Command, CommandError, decode, decode_cached, decode_packet, iter_commands, scan,
)
from .command_encode import (  # noqa: F401 (importable from here)
    CommandBuffer, copy, encode, fence, fill, flip, flush_tlb, header, indirect, native_fence, nop,
    set_address_space, timestamp, update_page_table, wait, work,
)
from .command_table import (  # noqa: F401 (importable from here)
    COPY, COPY_DST, COPY_SRC, FENCE, FENCE_ADDR, FENCE_INTERRUPT, FILL, FILL_DST, FLIP, FLIP_NO_WAIT, FLIP_SOURCE,
    FLIP_SURFACE, FLUSH_TLB, FLUSH_TLB_ROOT, HEADER_SIZE, INDIRECT, INDIRECT_ADDR, MAX_PACKET_DWORDS, NATIVE_FENCE,
    NATIVE_FENCE_ADDR, NATIVE_FENCE_MONITORED, NOP, OPCODE_NAMES, PACKET_DWORDS, PAGE_TABLE_ENTRIES,
    PRIVILEGED_OPCODES, RESERVED_OPCODES, SET_ADDRESS_SPACE, SET_ADDRESS_SPACE_ROOT, TIMESTAMP, TIMESTAMP_ADDR,
    UPDATE_PAGE_TABLE, UPDATE_PAGE_TABLE_ADDR, UPDATE_PAGE_TABLE_ENTRIES, WAIT, WAIT_32BIT, WAIT_ADDR,
    WAIT_COMPARE_MASK, WAIT_EQ, WAIT_GEQ, WAIT_NEQ, WORK, _U32_MAX,
)

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
