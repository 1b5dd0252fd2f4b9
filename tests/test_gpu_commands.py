"""The GPU command set: exact bytes per opcode (worked out by hand from the header layout), decode
round trips over every field's range, each CommandError with its offset, and the disassembly."""

import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from wddmsim.gpu import commands as c
from wddmsim.gpu.commands import Command, CommandBuffer, CommandError, decode, disassemble, iter_commands

U32 = st.integers(0, 2**32 - 1)
U64 = st.integers(0, 2**64 - 1)


def h(text: str) -> bytes:
    return bytes.fromhex(text.replace(" ", ""))


# ------------------------------------------------------------------------ exact encodings

EXACT = [
    (c.nop(), "00000100"),
    (c.nop(3), "00000300 00000000 00000000"),
    (c.work(1000), "01000300 e803000000000000"),
    (c.fill(0x2000, 0x100, 0xDEADBEEF), "02000600 0020000000000000 0001000000000000 efbeadde"),
    (c.copy(0x1000, 0x2000, 0x30), "03000700 0010000000000000 0020000000000000 3000000000000000"),
    (c.fence(0x1000, 7), "04000500 0010000000000000 0700000000000000"),
    (c.fence(0x1000, 7, interrupt=True), "04010500 0010000000000000 0700000000000000"),
    (c.wait(0x1000, 5), "05000500 0010000000000000 0500000000000000"),
    (c.wait(0x1000, 5, c.WAIT_EQ, bits=32), "05050500 0010000000000000 0500000000000000"),
    (c.wait(0x1000, 5, c.WAIT_NEQ), "05020500 0010000000000000 0500000000000000"),
    (c.flip(1, 0x100000, 1, no_wait=True), "06010500 01000000 0000100000000000 01000000"),
    (c.flip(0, 0x123456789A, 0), "06000500 00000000 9a78563412000000 00000000"),
    (c.timestamp(0x3000), "07000300 0030000000000000"),
    (c.indirect(0x8000, 64), "08000400 0080000000000000 40000000"),
    (c.work(2**64 - 1), "01000300 ffffffffffffffff"),
    (c.set_address_space(0x5000), "09000300 0050000000000000"),
    (c.set_address_space(0), "09000300 0000000000000000"),
    (c.update_page_table(0x6000, 3, [0x7001, 0x8003]),
     "0a000900 0060000000000000 03000000 02000000 0170000000000000 0380000000000000"),
    (c.update_page_table(0x6000, 512, []), "0a000500 0060000000000000 00020000 00000000"),
    (c.flush_tlb(0, 0x1000, 0x3000), "0b000700 0000000000000000 0010000000000000 0030000000000000"),
]


@pytest.mark.parametrize("packet, expected", EXACT, ids=[e for _, e in EXACT])
def test_exact_bytes(packet, expected):
    assert packet == h(expected)


def test_opcode_values_and_sizes():
    assert (c.NOP, c.WORK, c.FILL, c.COPY, c.FENCE, c.WAIT, c.FLIP, c.TIMESTAMP, c.INDIRECT) == tuple(range(9))
    assert (c.SET_ADDRESS_SPACE, c.UPDATE_PAGE_TABLE, c.FLUSH_TLB, c.NATIVE_FENCE) == (0x09, 0x0A, 0x0B, 0x0C)
    assert c.PACKET_DWORDS == {0: 1, 1: 3, 2: 6, 3: 7, 4: 5, 5: 5, 6: 5, 7: 3, 8: 4, 9: 3, 10: 5, 11: 7, 12: 7}
    assert c.RESERVED_OPCODES == frozenset()
    assert c.PRIVILEGED_OPCODES == {c.SET_ADDRESS_SPACE, c.UPDATE_PAGE_TABLE, c.FLUSH_TLB}
    assert (c.FENCE_INTERRUPT, c.WAIT_GEQ, c.WAIT_EQ, c.WAIT_NEQ, c.WAIT_32BIT, c.FLIP_NO_WAIT) == (1, 0, 1, 2, 4, 1)


def test_field_offsets_point_at_the_address_fields():
    a = 0x1122334455667788
    assert struct.unpack_from("<Q", c.fill(a, 1, 0), c.FILL_DST)[0] == a
    assert struct.unpack_from("<Q", c.copy(a, 0, 0), c.COPY_SRC)[0] == a
    assert struct.unpack_from("<Q", c.copy(0, a, 0), c.COPY_DST)[0] == a
    assert struct.unpack_from("<Q", c.fence(a, 0), c.FENCE_ADDR)[0] == a
    assert struct.unpack_from("<Q", c.wait(a, 0), c.WAIT_ADDR)[0] == a
    assert struct.unpack_from("<Q", c.flip(0, a, 0), c.FLIP_SURFACE)[0] == a
    assert struct.unpack_from("<Q", c.timestamp(a), c.TIMESTAMP_ADDR)[0] == a
    assert struct.unpack_from("<Q", c.indirect(a, 0), c.INDIRECT_ADDR)[0] == a
    assert struct.unpack_from("<Q", c.set_address_space(a), c.SET_ADDRESS_SPACE_ROOT)[0] == a
    assert struct.unpack_from("<Q", c.update_page_table(a, 0, [7]), c.UPDATE_PAGE_TABLE_ADDR)[0] == a
    assert struct.unpack_from("<Q", c.update_page_table(0, 0, [a]), c.UPDATE_PAGE_TABLE_ENTRIES)[0] == a
    assert struct.unpack_from("<Q", c.flush_tlb(a, 0, 0), c.FLUSH_TLB_ROOT)[0] == a


def test_header_helper():
    assert c.header(c.FENCE, c.FENCE_INTERRUPT, 5) == 0x00050104
    with pytest.raises(ValueError, match="dwords"):
        c.header(0, 0, 0x10000)


# ------------------------------------------------------------------------ encoder validation


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: c.work(-1), "duration_ns"),
        (lambda: c.work(2**64), "duration_ns"),
        (lambda: c.fill(2**64, 0, 0), "dst"),
        (lambda: c.fill(0, -1, 0), "size"),
        (lambda: c.fill(0, 0, 2**32), "pattern"),
        (lambda: c.copy(-1, 0, 0), "src"),
        (lambda: c.copy(0, 2**64, 0), "dst"),
        (lambda: c.copy(0, 0, 2**64), "size"),
        (lambda: c.fence(2**64, 0), "addr"),
        (lambda: c.fence(0, -5), "value"),
        (lambda: c.wait(-1, 0), "addr"),
        (lambda: c.wait(0, 2**64), "value"),
        (lambda: c.wait(0, 2**32, bits=32), "value"),
        (lambda: c.wait(0, 0, compare=3), "compare"),
        (lambda: c.wait(0, 0, bits=16), "bits"),
        (lambda: c.flip(2**32, 0, 0), "source"),
        (lambda: c.flip(0, 2**64, 0), "surface"),
        (lambda: c.flip(0, 0, -1), "interval"),
        (lambda: c.timestamp(-1), "addr"),
        (lambda: c.indirect(2**64, 0), "addr"),
        (lambda: c.indirect(0, 2**32), "size"),
        (lambda: c.nop(0), "dwords"),
        (lambda: c.nop(0x10000), "dwords"),
        (lambda: c.set_address_space(2**64), "root"),
        (lambda: c.update_page_table(-1, 0, []), "table"),
        (lambda: c.update_page_table(0, 2**32, []), "start_index"),
        (lambda: c.update_page_table(0, 0, [1, 2**64]), "entries"),
        (lambda: c.update_page_table(0, 511, [1, 2]), "start_index"),
        (lambda: c.update_page_table(0, 0, [0] * 513), "start_index"),
        (lambda: c.flush_tlb(-1, 0, 0), "root"),
        (lambda: c.flush_tlb(0, 2**64, 0), "start"),
        (lambda: c.flush_tlb(0, 0, 2**64), "end"),
    ],
)
def test_encoders_reject_out_of_range(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_encoders_reject_non_integers():
    with pytest.raises(TypeError, match="duration_ns"):
        c.work(1.5)


def test_update_page_table_bounds_are_command_errors():
    with pytest.raises(CommandError, match="start_index=510 \\+ 3 entries run past the table's 512"):
        c.update_page_table(0x6000, 510, [1, 2, 3])
    assert len(c.update_page_table(0x6000, 0, [0] * 512)) == 20 + 8 * 512


# ------------------------------------------------------------------------ round trips


def fields(cmd: Command) -> dict:
    return {k: v for k, v in cmd._asdict().items() if v is not None}


def roundtrip(packet: bytes) -> Command:
    cmd = decode(packet)
    assert cmd.length == len(packet) and cmd.offset == 0 and cmd.end == len(packet)
    assert c.encode(cmd) == packet
    # the same packet after a prefix decodes the same, only offset moves
    moved = decode(c.nop(2) + packet, 8)
    assert moved._replace(offset=0) == cmd and moved.offset == 8
    assert decode(memoryview(bytearray(packet))) == cmd
    return cmd


@given(st.integers(1, 0xFFFF))
def test_roundtrip_nop(dwords):
    cmd = roundtrip(c.nop(dwords))
    assert fields(cmd) == {"opcode": c.NOP, "flags": 0, "length": 4 * dwords, "offset": 0}


@given(U64)
def test_roundtrip_work(d):
    assert fields(roundtrip(c.work(d))) == {"opcode": c.WORK, "flags": 0, "length": 12, "duration_ns": d, "offset": 0}


@given(U64, U64, U32)
def test_roundtrip_fill(dst, size, pattern):
    assert fields(roundtrip(c.fill(dst, size, pattern))) == {
        "opcode": c.FILL, "flags": 0, "length": 24, "dst": dst, "size": size, "pattern": pattern, "offset": 0,
    }


@given(U64, U64, U64)
def test_roundtrip_copy(src, dst, size):
    assert fields(roundtrip(c.copy(src, dst, size))) == {
        "opcode": c.COPY, "flags": 0, "length": 28, "src": src, "dst": dst, "size": size, "offset": 0,
    }


@given(U64, U64, st.booleans())
def test_roundtrip_fence(addr, value, irq):
    cmd = roundtrip(c.fence(addr, value, interrupt=irq))
    assert fields(cmd) == {"opcode": c.FENCE, "flags": int(irq), "length": 20, "addr": addr, "value": value, "offset": 0}
    assert cmd.interrupt is irq


@given(U64, st.sampled_from([c.WAIT_GEQ, c.WAIT_EQ, c.WAIT_NEQ]), st.sampled_from([32, 64]), st.data())
def test_roundtrip_wait(addr, compare, bits, data):
    value = data.draw(U32 if bits == 32 else U64)
    cmd = roundtrip(c.wait(addr, value, compare, bits))
    flags = compare | (c.WAIT_32BIT if bits == 32 else 0)
    assert fields(cmd) == {"opcode": c.WAIT, "flags": flags, "length": 20, "addr": addr, "value": value, "offset": 0}
    assert (cmd.compare, cmd.bits) == (compare, bits)


@given(U32, U64, U32, st.booleans())
def test_roundtrip_flip(source, surface, interval, no_wait):
    cmd = roundtrip(c.flip(source, surface, interval, no_wait))
    assert fields(cmd) == {
        "opcode": c.FLIP, "flags": int(no_wait), "length": 20,
        "source": source, "surface": surface, "interval": interval, "offset": 0,
    }
    assert cmd.no_wait is no_wait


@given(U64)
def test_roundtrip_timestamp(addr):
    assert fields(roundtrip(c.timestamp(addr))) == {"opcode": c.TIMESTAMP, "flags": 0, "length": 12, "addr": addr, "offset": 0}


@given(U64, U32)
def test_roundtrip_indirect(addr, size):
    assert fields(roundtrip(c.indirect(addr, size))) == {
        "opcode": c.INDIRECT, "flags": 0, "length": 16, "addr": addr, "size": size, "offset": 0,
    }


@given(U64)
def test_roundtrip_set_address_space(root):
    assert fields(roundtrip(c.set_address_space(root))) == {
        "opcode": c.SET_ADDRESS_SPACE, "flags": 0, "length": 12, "root": root, "offset": 0,
    }


@given(U64, st.integers(0, 512), st.data())
def test_roundtrip_update_page_table(table, start, data):
    entries = data.draw(st.lists(U64, max_size=min(512 - start, 40)))
    cmd = roundtrip(c.update_page_table(table, start, entries))
    assert fields(cmd) == {
        "opcode": c.UPDATE_PAGE_TABLE, "flags": 0, "length": 20 + 8 * len(entries), "addr": table,
        "size": 8 * len(entries), "start_index": start, "entries": tuple(entries), "offset": 0,
    }
    assert cmd.table == table


@given(U64, U64, U64)
def test_roundtrip_flush_tlb(root, start, end):
    assert fields(roundtrip(c.flush_tlb(root, start, end))) == {
        "opcode": c.FLUSH_TLB, "flags": 0, "length": 28, "root": root, "va_start": start, "va_end": end, "offset": 0,
    }


PACKET = st.one_of(
    st.integers(1, 8).map(c.nop),
    U64.map(c.work),
    st.tuples(U64, U64, U32).map(lambda a: c.fill(*a)),
    st.tuples(U64, U64, U64).map(lambda a: c.copy(*a)),
    st.tuples(U64, U64, st.booleans()).map(lambda a: c.fence(*a)),
    st.tuples(U64, U32, st.sampled_from([0, 1, 2]), st.sampled_from([32, 64])).map(lambda a: c.wait(*a)),
    st.tuples(U32, U64, U32, st.booleans()).map(lambda a: c.flip(*a)),
    U64.map(c.timestamp),
    st.tuples(U64, U32).map(lambda a: c.indirect(*a)),
    U64.map(c.set_address_space),
    st.tuples(U64, st.integers(0, 500), st.lists(U64, max_size=12)).map(lambda a: c.update_page_table(*a)),
    st.tuples(U64, U64, U64).map(lambda a: c.flush_tlb(*a)),
)


@given(st.lists(PACKET, max_size=20))
def test_a_stream_of_packets_decodes_in_order(packets):
    data = b"".join(packets)
    cmds = list(iter_commands(data))
    assert [c.encode(x) for x in cmds] == packets
    starts = [sum(map(len, packets[:i])) for i in range(len(packets))]
    assert [x.offset for x in cmds] == starts
    assert len(disassemble(data)) == len(packets)


# ------------------------------------------------------------------------ the builder


def test_builder_chains_and_records_offsets():
    cb = CommandBuffer()
    assert cb.wait(0x1000, 3) is cb
    off = cb.mark()
    cb.copy(0, 0, 64).fence(0x1000, 4, interrupt=True).nop(2)
    assert off == 20
    assert cb.offsets == [0, 20, 48, 68]
    assert len(cb) == 76
    cb.patch_u64(off + c.COPY_SRC, 0xAAAA).patch_u64(off + c.COPY_DST, 0xBBBB)
    assert cb.data == c.wait(0x1000, 3) + c.copy(0xAAAA, 0xBBBB, 64) + c.fence(0x1000, 4, True) + c.nop(2)
    assert bytes(cb) == cb.data
    assert isinstance(cb.data, bytes)


def test_builder_has_every_packet():
    cb = (
        CommandBuffer().nop().work(5).fill(1, 2, 3).copy(4, 5, 6).fence(7, 8).wait(9, 10, c.WAIT_NEQ, 32)
        .flip(11, 12, 13, True).timestamp(14).indirect(15, 16).set_address_space(0x1000)
        .update_page_table(0x2000, 17, [18, 19]).flush_tlb(20, 21, 22)
    )
    expected = (
        c.nop() + c.work(5) + c.fill(1, 2, 3) + c.copy(4, 5, 6) + c.fence(7, 8) + c.wait(9, 10, c.WAIT_NEQ, 32)
        + c.flip(11, 12, 13, True) + c.timestamp(14) + c.indirect(15, 16) + c.set_address_space(0x1000)
        + c.update_page_table(0x2000, 17, [18, 19]) + c.flush_tlb(20, 21, 22)
    )
    assert cb.data == expected
    assert [x.offset for x in iter_commands(cb.data)] == cb.offsets


def test_builder_patch_bounds():
    cb = CommandBuffer().work(1)
    with pytest.raises(ValueError):
        cb.patch_u64(8, 0)
    with pytest.raises(ValueError, match="value"):
        cb.patch_u32(0, 2**32)
    cb.patch_u32(8, 0xFFFFFFFF)


# ------------------------------------------------------------------------ errors


def raw(opcode: int, flags: int, dwords: int, payload_dwords: int | None = None) -> bytes:
    n = dwords - 1 if payload_dwords is None else payload_dwords
    return struct.pack("<I", opcode | flags << 8 | dwords << 16) + bytes(4 * n)


@pytest.mark.parametrize(
    "data, offset, reason",
    [
        (raw(0x0D, 0, 1), 0, "unknown opcode 0x0d"),
        (raw(0xFF, 0, 3), 0, "unknown opcode 0xff"),
        (raw(c.SET_ADDRESS_SPACE, 0, 2), 0, "SET_ADDRESS_SPACE length 2 dwords is shorter than its fixed 3"),
        (raw(c.FLUSH_TLB, 0, 8), 0, "FLUSH_TLB length 8 dwords differs from its fixed 7"),
        (raw(c.UPDATE_PAGE_TABLE, 0, 3), 0, "UPDATE_PAGE_TABLE length 3 dwords is shorter than its fixed part 5"),
        (struct.pack("<IQII", 0x7000A, 0x6000, 0, 2) + bytes(8), 0, "UPDATE_PAGE_TABLE of 2 entries is 9 dwords, not 7"),
        (struct.pack("<IQII", 0x5000A, 0x6000, 0, 1), 0, "UPDATE_PAGE_TABLE of 1 entries is 7 dwords, not 5"),
        (struct.pack("<IQII", 0x9000A, 0x6000, 511, 2) + bytes(16), 0,
         "UPDATE_PAGE_TABLE entries 511..512 run past the table's 512"),
        (struct.pack("<IQII", 0x7000A, 0x6000, 512, 1) + bytes(8), 0,
         "UPDATE_PAGE_TABLE entries 512..512 run past the table's 512"),
        (c.update_page_table(0x6000, 0, [1, 2])[:24], 0, "UPDATE_PAGE_TABLE of 36 bytes runs past the end at 0x18"),
        (bytes(8), 0, "NOP with length 0"),
        (raw(c.FENCE, 0, 0, 4), 0, "FENCE with length 0"),
        (raw(c.FENCE, 0, 4), 0, "FENCE length 4 dwords is shorter than its fixed 5"),
        (raw(c.WORK, 0, 1), 0, "WORK length 1 dwords is shorter than its fixed 3"),
        (raw(c.COPY, 0, 8), 0, "COPY length 8 dwords differs from its fixed 7"),
        (raw(c.NOP, 0, 4, 2), 0, "NOP of 16 bytes runs past the end at 0xc"),
        (c.fence(0, 0)[:16], 0, "FENCE of 20 bytes runs past the end at 0x10"),
        (c.work(1) + c.fence(0, 0)[:12], 12, "FENCE of 20 bytes runs past the end at 0x18"),
        (c.work(1) + b"\x00\x00", 12, "no room for a packet header"),
        (raw(c.WAIT, 3, 5), 0, "WAIT compare 3 is invalid"),
        (raw(c.WAIT, 7, 5), 0, "WAIT compare 3 is invalid"),
    ],
)
def test_command_errors(data, offset, reason):
    with pytest.raises(CommandError) as e:
        list(iter_commands(data))
    assert e.value.offset == offset
    assert reason in e.value.reason
    assert f"offset 0x{offset:x}" in str(e.value) and reason in str(e.value)
    assert isinstance(e.value, ValueError)


def test_decode_errors_at_an_offset():
    data = c.nop() + c.nop() + raw(0x0D, 0, 1)
    with pytest.raises(CommandError) as e:
        decode(data, 8)
    assert e.value.offset == 8 and "offset 0x8" in str(e.value)
    with pytest.raises(CommandError) as e:
        decode(data, -4)
    assert e.value.offset == -4


def test_end_limits_the_packet():
    data = c.fence(0, 0) + c.work(1)
    assert decode(data, 0, end=20).opcode == c.FENCE
    with pytest.raises(CommandError, match="runs past the end at 0x10") as e:
        decode(data, 0, end=16)
    assert e.value.offset == 0
    # iter_commands stops at end, and treats a packet crossing it as an error
    assert [x.opcode for x in iter_commands(data, 0, 20)] == [c.FENCE]
    assert [x.opcode for x in iter_commands(data, 20)] == [c.WORK]
    with pytest.raises(CommandError) as e:
        list(iter_commands(data, 20, 28))
    assert e.value.offset == 20


def test_a_valid_stream_then_an_error_yields_the_good_packets_first():
    data = c.work(1) + c.fence(8, 9) + raw(0x0D, 0, 1)
    got = []
    with pytest.raises(CommandError) as e:
        for cmd in iter_commands(data):
            got.append(cmd.opcode)
    assert got == [c.WORK, c.FENCE] and e.value.offset == 32


def test_unknown_flag_bits_are_kept():
    packet = raw(c.FENCE, 0xF1, 5)
    cmd = decode(packet)
    assert cmd.flags == 0xF1 and cmd.interrupt
    assert c.encode(cmd) == packet
    assert disassemble(packet) == ["0x0000  FENCE addr=0x0 value=0 +irq flags=0xf0"]


# ------------------------------------------------------------------------ disassembly


def test_disassembly_lines():
    cb = (
        CommandBuffer().nop().nop(3).work(1000).fill(0x2000, 4096, 0xDEADBEEF).copy(0x2000, 0x3000, 64)
        .fence(0x1000, 7, interrupt=True).fence(0x1000, 8).wait(0x1000, 7).wait(0x1000, 3, c.WAIT_EQ, 32)
        .wait(0x1000, 0, c.WAIT_NEQ).flip(0, 0x100000, 1).flip(1, 0x200000, 0, no_wait=True).timestamp(0x3000)
        .indirect(0x8000, 64).set_address_space(0x5000).set_address_space(0)
        .update_page_table(0x6000, 3, [0x7001, 0x8003]).update_page_table(0x6000, 0, range(1, 7))
        .flush_tlb(0, 0, 2**39).flush_tlb(0x5000, 0x1000, 0x2000)
    )
    assert disassemble(cb.data) == [
        "0x0000  NOP",
        "0x0004  NOP dwords=3",
        "0x0010  WORK duration_ns=1000",
        "0x001c  FILL dst=0x2000 size=4096 pattern=0xdeadbeef",
        "0x0034  COPY src=0x2000 dst=0x3000 size=64",
        "0x0050  FENCE addr=0x1000 value=7 +irq",
        "0x0064  FENCE addr=0x1000 value=8",
        "0x0078  WAIT addr=0x1000 value=7 cmp=geq",
        "0x008c  WAIT addr=0x1000 value=3 cmp=eq +u32",
        "0x00a0  WAIT addr=0x1000 value=0 cmp=neq",
        "0x00b4  FLIP source=0 surface=0x100000 interval=1",
        "0x00c8  FLIP source=1 surface=0x200000 interval=0 +nowait",
        "0x00dc  TIMESTAMP addr=0x3000",
        "0x00e8  INDIRECT addr=0x8000 size=64",
        "0x00f8  SET_ADDRESS_SPACE root=0x5000",
        "0x0104  SET_ADDRESS_SPACE root=0x0 (physical)",
        "0x0110  UPDATE_PAGE_TABLE table=0x6000 start=3 count=2 [0x7001 0x8003]",
        "0x0134  UPDATE_PAGE_TABLE table=0x6000 start=0 count=6 [0x1 0x2 0x3 0x4 +2 more]",
        "0x0178  FLUSH_TLB root=all start=0x0 end=0x8000000000",
        "0x0194  FLUSH_TLB root=0x5000 start=0x1000 end=0x2000",
    ]


def test_disassembly_base_and_errors():
    data = c.fence(0x1000, 7, interrupt=True) + raw(0x0D, 0, 1)
    assert disassemble(data[:20], base=0x10000) == ["0x10000  FENCE addr=0x1000 value=7 +irq"]
    with pytest.raises(CommandError) as e:
        disassemble(data, base=0x10000)
    assert e.value.offset == 20
    assert disassemble(data, base=0x10, strict=False) == [
        "0x0010  FENCE addr=0x1000 value=7 +irq",
        "0x0024  ?? unknown opcode 0x0d",
    ]
    assert disassemble(b"") == []


def test_wait_holds():
    assert c.wait_holds(c.WAIT_GEQ, 5, 5) and c.wait_holds(c.WAIT_GEQ, 6, 5) and not c.wait_holds(c.WAIT_GEQ, 4, 5)
    assert c.wait_holds(c.WAIT_EQ, 5, 5) and not c.wait_holds(c.WAIT_EQ, 6, 5)
    assert c.wait_holds(c.WAIT_NEQ, 6, 5) and not c.wait_holds(c.WAIT_NEQ, 5, 5)
    with pytest.raises(ValueError):
        c.wait_holds(3, 0, 0)


def test_package_reexports():
    import wddmsim.gpu as gpu

    assert gpu.PhysicalMemory and gpu.PAGE_SIZE == 4096 and gpu.CommandBuffer is CommandBuffer
    assert gpu.decode is decode and gpu.FENCE == 4
    assert all(hasattr(gpu, name) for name in gpu.__all__)


def test_the_worked_example_in_the_docs_is_true():
    from pathlib import Path

    doc = (Path(__file__).parents[1] / "docs" / "gpu-commands.md").read_text()
    cb = CommandBuffer().wait(0x1000, 3).copy(0x20000, 0x30000, 0x1000).fence(0x1000, 4, interrupt=True)
    d = cb.data
    dump = "\n".join(
        f"{i:04x}: " + " ".join(d[i + j : i + j + 4].hex() for j in range(0, 16, 4) if i + j < len(d))
        for i in range(0, len(d), 16)
    )
    assert f"gives {len(d)} bytes" in doc
    assert dump in doc
    assert "\n".join(disassemble(d)) in doc


def test_the_update_page_table_example_in_the_docs_is_true():
    from pathlib import Path

    doc = (Path(__file__).parents[1] / "docs" / "gpu-commands.md").read_text()
    packet = c.update_page_table(0x6000, 3, [0x7001, 0x8003])
    assert f"is {len(packet)} bytes" in doc
    expected = "0a000900 0060000000000000 03000000 02000000 0170000000000000 0380000000000000"
    assert expected in doc and packet == h(expected)
    assert disassemble(packet) == ["0x0000  UPDATE_PAGE_TABLE table=0x6000 start=3 count=2 [0x7001 0x8003]"]


@pytest.mark.parametrize("current, value, holds", [
    (5, 5, True), (6, 5, True), (4, 5, False),
    (0, 0xFFFF_FFFF, True),            # memory wrapped past the value
    (0xFFFF_FFFF, 0, False),           # the value is just past the wrap: not yet
    (0x7FFF_FFFF + 5, 5, True),        # less than 2**31 ahead
    (0x8000_0000 + 5, 5, False),       # 2**31 ahead reads as behind
])
def test_a_32_bit_geq_wait_counts_across_the_wrap(current, value, holds):
    assert c.wait_holds(c.WAIT_GEQ, current, value, 32) is holds


def test_64_bit_and_equality_waits_are_plain():
    assert c.wait_holds(c.WAIT_GEQ, 0, 0xFFFF_FFFF) is False
    assert c.wait_holds(c.WAIT_EQ, 0, 0x1_0000_0000, 32) is False
    assert c.wait_holds(c.WAIT_NEQ, 1, 2, 32) is True


def test_native_fence_packet_round_trips():
    """NATIVE_FENCE: CurrentValue address, value, MonitoredValue address (7 dwords)."""
    packet = c.native_fence(0x1000, 75, 0x2008)
    assert packet == struct.pack("<IQQQ", 0x0C | 7 << 16, 0x1000, 75, 0x2008)
    cmd = c.decode(packet)
    assert (cmd.name, cmd.addr, cmd.value, cmd.monitored, cmd.length) == ("NATIVE_FENCE", 0x1000, 75, 0x2008, 28)
    assert c.encode(cmd) == packet
    assert c.disassemble(packet) == ["0x0000  NATIVE_FENCE addr=0x1000 value=75 monitored=0x2008"]
    assert bytes(c.CommandBuffer().native_fence(0x1000, 75, 0x2008)) == packet
    assert c.decode(c.fence(0x1000, 1)).monitored is None


# -- decode_packet: a ring fetch's decode, memoized by the packet's bytes ------------------------


@given(st.integers(0, 2**64 - 1), st.integers(0, 2**64 - 1), st.booleans())
def test_decode_packet_of_an_encoded_fence_is_its_decode(addr, value, interrupt):
    data = c.fence(addr, value, interrupt=interrupt)
    assert c.decode_packet(data) == decode(data, 0)
    assert c.decode_packet(data).offset == 0


def test_decode_packet_follows_the_bytes_not_the_encoder():
    # The same length, other bytes: what is decoded is what is there.
    data = bytearray(c.fence(0x1000, 7, interrupt=True))
    data[12:20] = (9).to_bytes(8, "little")
    cmd = c.decode_packet(bytes(data))
    assert (cmd.opcode, cmd.addr, cmd.value, cmd.interrupt) == (c.FENCE, 0x1000, 9, True)
    assert c.decode_packet(c.indirect(0x2000, 64)) == decode(c.indirect(0x2000, 64))
    bad = bytes(data[:4]) + b"\0" * 8  # a FENCE header on 12 bytes: refused, and not remembered
    for _ in range(2):
        with pytest.raises(CommandError, match="runs past the end"):
            c.decode_packet(bad)
