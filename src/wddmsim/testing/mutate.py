"""Broken inputs for fuzzing wddmsim: DDI structure buffers and scenario files, made the ways a
corrupt buffer or a hand-edited file is, and the decode path they are fed to. The test suite
(tests/test_fuzz_decode.py, tests/test_fuzz_toml.py) draws a bounded number of them through
Hypothesis; ``tools/fuzz.py`` draws many more. Every function is a pure function of its
:class:`random.Random`, so a failing input is made again from its seed.

* :func:`decodable`, :func:`decode_case`: every structure ``wddmsim decode`` takes, and what the
  command does with bytes (decoded with the structure rules' verdict, or refused with exit status 2).
* :func:`buffer_cases`, :func:`mutate_bytes`: all-zero, all-ones and wrong-length buffers; a valid
  buffer with bits flipped, bytes set to 0 or 0xFF, cut short, lengthened or replaced.
* :func:`mutate_toml`: scenario text broken one way (bytes flipped, cut at a random point, lines
  deleted or duplicated, values of another type, huge, negative, NaN or infinite numbers, unknown
  keys, tables written twice, bytes that are not UTF-8).
"""

from __future__ import annotations

import random
import re

__all__ = ["buffer_cases", "decodable", "decode_case", "mutate_bytes", "mutate_toml", "structure_size"]


# ------------------------------------------------------------------------------------ buffers


def buffer_cases(size: int) -> list[bytes]:
    """The fixed buffers every structure of ``size`` bytes is fed: all zero, all ones, and wrong
    lengths (empty, one byte short, one byte over, double)."""
    return [bytes(size), b"\xff" * size, b"", bytes(max(0, size - 1)), b"\xff" * (size + 1), bytes(2 * size)]


def decodable() -> list[tuple[str, str, str]]:
    """Every (structure, architecture, DDI version) ``wddmsim decode`` takes: each structure and
    union ``layout --list`` knows, on x86 and x64, at the version it appeared in and at the latest."""
    from ..ddi import layout, registry
    from ..ddi.schema import Record

    out = []
    for name in registry.NAMES:
        t = registry.lookup(name)
        if not isinstance(t, Record):
            continue
        for version in dict.fromkeys((registry.since(t), "latest")):
            out += [(t.name, arch, version) for arch in layout.ARCHES]
    return out


def structure_size(name: str, arch: str, version: str) -> int:
    """The size in bytes of structure ``name`` on ``arch`` at DDI ``version``."""
    import ctypes

    from ..ddi import layout, registry, versions

    return ctypes.sizeof(layout.ctype(registry.lookup(name), arch, versions.ddi_version(version)))


def decode_case(name: str, raw: bytes, arch: str, version: str) -> tuple[str, int | str]:
    """``raw`` through what ``wddmsim decode NAME HEX`` does (:func:`wddmsim.cli.structures.decode_bytes`,
    the members' text and JSON, the broken rules explained): ``("decoded", rules broken)``, or
    ``("refused", message)`` for the input error the CLI turns into exit status 2. Anything else
    raised is a crash and propagates."""
    from ..cli import structures as structcmd
    from ..ddi import registry, versions

    t = registry.lookup(name)
    try:
        fields, broken = structcmd.decode_bytes(t, raw, arch, versions.ddi_version(version), "fuzz")
    except structcmd.StructInputError as e:
        return "refused", e.message
    for f in fields:
        f.as_json()
    for v in broken:
        structcmd.rule_sentence(v.rule, v.name)
        if v.bugcheck is not None:
            structcmd.stop_name(v.bugcheck)
    return "decoded", len(broken)


def mutate_bytes(rng: random.Random, valid: bytes) -> bytes:
    """``valid`` changed one random way: bits flipped, bytes set to 0 or 0xFF, cut short,
    lengthened, or replaced by random bytes of the same or another length."""
    b = bytearray(valid)
    how = rng.randrange(7)
    if how == 0 and b:  # flip 1-8 bits
        for _ in range(rng.randint(1, 8)):
            i = rng.randrange(len(b) * 8)
            b[i // 8] ^= 1 << (i % 8)
    elif how == 1 and b:  # set a run of bytes to 0 or 0xFF
        i = rng.randrange(len(b))
        n = rng.randint(1, len(b) - i)
        b[i:i + n] = bytes([rng.choice((0, 0xFF))]) * n
    elif how == 2:  # cut short
        del b[rng.randint(0, max(0, len(b) - 1)):]
    elif how == 3:  # lengthened
        b += bytes(rng.getrandbits(8) for _ in range(rng.randint(1, 16)))
    elif how == 4:  # random bytes of the same length
        b = bytearray(rng.getrandbits(8) for _ in range(len(b)))
    elif how == 5:  # random bytes of a random length
        b = bytearray(rng.getrandbits(8) for _ in range(rng.randint(0, 2 * len(b) + 8)))
    else:  # random bytes in each aligned dword, the rest kept
        for i in range(0, len(b) - 3, 4):
            if rng.random() < 0.3:
                b[i:i + 4] = rng.getrandbits(32).to_bytes(4, "little")
    return bytes(b)


# --------------------------------------------------------------------------------------- TOML


_ODD_VALUES = ("1e400", "-1", "-9223372036854775808", "9223372036854775807", "nan", "inf", "-inf", "true",
               '"x"', "[]", "{}", '"-5ms"', '"1e9s"', '"999999999999 GiB"', "0", "1979-05-27T07:32:00Z", '""',
               "0.5", '"\\u0000"', "[1, 2]")


def mutate_toml(rng: random.Random, text: str) -> bytes:
    """Scenario text ``text`` broken one random way (see the module docstring); the result is
    bytes, since some ways make it invalid UTF-8."""
    lines = text.split("\n")
    how = rng.randrange(9)
    if how == 0:  # flip a few bytes
        b = bytearray(text.encode())
        for _ in range(rng.randint(1, 4)):
            if b:
                b[rng.randrange(len(b))] = rng.getrandbits(8)
        return bytes(b)
    if how == 1:  # cut at a random point
        b = text.encode()
        return b[:rng.randint(0, len(b))]
    if how == 2 and len(lines) > 1:  # delete lines
        for _ in range(rng.randint(1, 3)):
            if lines:
                del lines[rng.randrange(len(lines))]
    elif how == 3:  # a value of another type, or a huge, negative, NaN or infinite number
        assigned = [i for i, line in enumerate(lines) if re.match(r"\s*[A-Za-z_]\w*\s*=", line)]
        for _ in range(rng.randint(1, 3)):
            if assigned:
                i = rng.choice(assigned)
                key = lines[i].split("=", 1)[0]
                lines[i] = f"{key}= {rng.choice(_ODD_VALUES)}"
    elif how == 4:  # a value inside an inline table
        spots = [m for i, line in enumerate(lines) for m in [(i, x) for x in re.finditer(r"(\w+) = ([^,}]+)", line)]]
        if spots:
            i, m = rng.choice(spots)
            lines[i] = lines[i][:m.start(2)] + rng.choice(_ODD_VALUES) + lines[i][m.end(2):]
    elif how == 5:  # an unknown key in a random table
        i = rng.randrange(len(lines) + 1)
        lines.insert(i, f"{rng.choice(['colour', 'nodes', 'kind', 'zz_unknown', 'Seed'])} = 1")
    elif how == 6:  # a table written twice, or a line duplicated
        heads = [i for i, line in enumerate(lines) if line.startswith("[")]
        if heads:
            i = rng.choice(heads)
            lines.insert(rng.randrange(len(lines) + 1), lines[i].replace("[[", "[").replace("]]", "]"))
        elif lines:
            i = rng.randrange(len(lines))
            lines.insert(i, lines[i])
    elif how == 7:  # bytes that are not UTF-8
        b = bytearray(text.encode())
        b.insert(rng.randint(0, len(b)), rng.choice([0xFF, 0xC3, 0x80, 0xFE]))
        return bytes(b)
    else:  # a duplicated line
        if lines:
            i = rng.randrange(len(lines))
            lines.insert(i, lines[i])
    return "\n".join(lines).encode()
