"""Precompiled readers: a DDI structure's members, as the event log writes them, from its bytes.

The event log's ``DdiCall`` carries every member of the call's argument structure by its DDI name
(docs/events.md): scalars as integers, nested structures as objects, flag unions as
``{"Value": n, "<Bit>": 0/1, ...}``, PHYSICAL_ADDRESS as its integer. :func:`nest` builds that
object from the flat ``{path: value}`` of :func:`wddmsim.ddi.codec.values`; the shape depends only
on the structure, its architecture and its DDI version, never on the values.

:func:`args_reader` uses that to read the same object in one step: for one (structure,
architecture, version) it generates, once, a function that unpacks the bytes with one
``struct.Struct.unpack_from`` per run of non-overlapping storage units (unions' overlapping arms
take a second run), takes bitfields out of their storage unit with a shift and a mask, and returns
the object as one dictionary display, a :class:`Members` that also carries the object's JSON text
as the event log writes it (one ``%`` format of the values). What it returns is exactly what
``nest(codec.values(...))`` returns for the same bytes, and its text is ``json.dumps`` of that
(the tests hold them to each other on all-zero, all-ones and random bytes for every DDI structure,
on both architectures and at every DDI version where it exists).
"""

from __future__ import annotations

import ctypes
import json
import struct
from typing import Callable

from .layout import ctype, members
from .schema import Array, EnumType, Prim, Record, Typedef
from .versions import DdiVersion, ddi_version

_FORMATS = {(1, False): "B", (2, False): "H", (4, False): "I", (8, False): "Q",
            (1, True): "b", (2, True): "h", (4, True): "i", (8, True): "q"}


def nest(flat: dict) -> dict:
    """The logged object of a structure from ``{path: value}`` (every scalar member, flag unions by
    ``Value`` and by bit): top-level members by name, nested structures as objects, flag unions
    as ``{"Value": n, "<Bit>": b, ...}`` without their ``Reserved`` bits, a leaf union's
    ``QuadPart`` as the member's own value."""
    out: dict = {}
    for path, value in flat.items():
        head, _, rest = path.partition(".")
        if not rest:
            if head in out and isinstance(out[head], dict):
                continue
            out[head] = value
            continue
        if rest.rsplit(".", 1)[-1] == "Reserved":
            continue
        sub = out.get(head)
        if not isinstance(sub, dict):
            sub = out[head] = {} if not isinstance(sub, int) else {"Value": sub}
            if head in flat and "Value" not in sub:
                sub["Value"] = flat[head]
        if rest == "QuadPart":
            out[head] = value
            continue
        sub[rest] = value
    return out


class Members(dict):
    """A structure's logged members (a plain ``dict`` to every reader) that also carries ``json``,
    their JSON text as the event log writes it (compact separators, keys in order), built by the
    reader in the same step so that a JSON writer need not encode them again."""

    __slots__ = ("json",)


def _key(name: str) -> str:
    """A member name as a JSON string."""
    return json.dumps(name, ensure_ascii=False)


def _signed(t) -> bool:
    """Whether a scalar member reads as signed (as :func:`wddmsim.ddi.codec.decode` reads it)."""
    if isinstance(t, (EnumType, Record)):
        return True  # enumerations are MSVC ints; a leaf record (PHYSICAL_ADDRESS) is a LONGLONG
    if isinstance(t, Typedef):
        return t.base.signed
    if isinstance(t, Prim):
        return t.signed
    return False


def scalar_members(rec: Record, arch: str, version: DdiVersion) -> list[tuple]:
    """``(path, offset, size, bit_offset, bit_width, signed)`` of every member with an integer
    value, in member order: the keys of ``codec.values`` (arrays and plain nested structures have
    none; a flag union's whole storage reads unsigned as its ``Value``)."""
    out = []
    for ml in members(rec, arch, version):
        t = ml.type
        if isinstance(t, Array):
            continue
        if isinstance(t, Record) and not t.leaf:
            if t.flags:
                out.append((ml.path, ml.offset, ml.size, None, None, False))
            continue
        out.append((ml.path, ml.offset, ml.size, ml.bit_offset, ml.bit_width, _signed(t)))
    return out


def _source(rec: Record, arch: str, version: DdiVersion) -> tuple[str, dict]:
    """The generated reader's source and the names it uses."""
    scalars = scalar_members(rec, arch, version)
    # Storage units to unpack: a bitfield's unit reads unsigned; a plain member as it is signed.
    units: dict[tuple[int, int, bool], str] = {}
    for _, off, size, _, width, signed in scalars:
        units.setdefault((off, size, signed and width is None), "")
    lanes: list[list] = []  # each: [end, [(offset, size, signed), ...]]
    odd = []
    for key in sorted(units):
        off, size, signed = key
        if (size, signed) not in _FORMATS:
            odd.append(key)
            continue
        for lane in lanes:
            if lane[0] <= off:
                break
        else:
            lane = [0, []]
            lanes.append(lane)
        lane[0] = off + size
        lane[1].append(key)
    names: dict = {}
    lines = []
    n = 0
    for i, (_, keys) in enumerate(lanes):
        fmt, pos, targets = "<", 0, []
        for off, size, signed in keys:
            fmt += "x" * (off - pos) + _FORMATS[(size, signed)]
            pos = off + size
            units[(off, size, signed)] = f"v{n}"
            targets.append(f"v{n}")
            n += 1
        names[f"_u{i}"] = struct.Struct(fmt).unpack_from
        lines.append(f"    {', '.join(targets)}, = _u{i}(b)")
    if odd:
        lines.insert(0, "    b = bytes(b)")
        for off, size, signed in odd:
            units[(off, size, signed)] = f"v{n}"
            lines.append(f"    v{n} = int.from_bytes(b[{off}:{off + size}], 'little', signed={signed})")
            n += 1
    shape = nest({path: path for path, *_ in scalars})
    used: set[str] = set()

    def leaves(node) -> None:
        for v in node.values():
            leaves(v) if isinstance(v, dict) else used.add(v)

    leaves(shape)
    exprs = {}
    for path, off, size, bit_offset, width, signed in scalars:
        if path not in used:
            continue  # a Reserved bit: not logged
        var = units[(off, size, signed and width is None)]
        if width is None:
            exprs[path] = var
            continue
        mask = (1 << width) - 1
        e = f"({var} >> {bit_offset}) & {mask}" if bit_offset else f"{var} & {mask}"
        if signed:
            e = f"({e}) - ((({var} >> {bit_offset + width - 1}) & 1) << {width})"
        name = exprs[path] = f"x{len(exprs)}"
        lines.append(f"    {name} = {e}")
    order: list[str] = []

    def show(node) -> str:
        if isinstance(node, dict):
            return "{" + ", ".join(f"{k!r}: {show(v)}" for k, v in node.items()) + "}"
        return exprs[node]

    def text(node) -> str:
        if isinstance(node, dict):
            return "{" + ",".join(f"{_key(k)}:{text(v)}" for k, v in node.items()) + "}"
        order.append(exprs[node])
        return "%d"

    template = text(shape)
    lines.append(f"    m = _Members({show(shape)})")
    lines.append(f"    m.json = {template!r} % ({', '.join(order)}{',' if len(order) == 1 else ''})")
    lines.append("    return m")
    names["_Members"] = Members
    return "def read(b):\n" + "\n".join(lines) + "\n", names


_readers: dict[tuple[int, str, str], tuple[Record, Callable]] = {}


def args_reader(rec: Record, arch: str, version: DdiVersion | str) -> Callable[[object], dict]:
    """``read(buffer) -> dict``: the logged members of ``rec`` at ``arch``/``version`` from a
    buffer holding the structure (its bytes, or the ctypes instance itself), built once and
    cached. Equal to ``nest(codec.values(rec, bytes(buffer), arch, version))``."""
    version = ddi_version(version)
    key = (id(rec), arch, version.name)
    hit = _readers.get(key)
    if hit is not None:
        return hit[1]
    ctype(rec, arch, version)  # an unknown architecture fails here, as codec's reading does
    src, names = _source(rec, arch, version)
    ns = dict(names)
    exec(compile(src, f"<reader {rec.name} {arch} {version.name}>", "exec"), ns)  # noqa: S102 - generated above
    read = ns["read"]
    read.__doc__ = f"The logged members of {rec.name} ({arch}, {version.name}) from its bytes."
    read.size = ctypes.sizeof(ctype(rec, arch, version))
    _readers[key] = (rec, read)  # the record is held, so its id is not reused
    return read
